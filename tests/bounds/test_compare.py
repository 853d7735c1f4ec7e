"""P(A>B): Eq. 9, percentile bootstrap, the decision, Noether's sample size, random pairing.

Source: Bouthillier et al., Accounting for Variance in Machine Learning Benchmarks (MLSys 2021),
../shared/seeds/002_*: Section 4.1, Appendix C.3-C.6.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, norm

import meter_dashboard.comparison.model as mc
from meter_dashboard.bounds import compare as C
from meter_dashboard.core.validation import InputError
from tests.generators import generate_compare


# --------------------------------------------------------------------------- Noether (Appendix C.3)
def test_noether_29_runs_at_the_recommended_setting():
    # Appendix C.3 / Figure C.1 red star: alpha = beta = 0.05, gamma = 0.75 -> 29 trainings.
    assert C.noether_runs(0.05, 0.05, 0.75) == 29
    assert mc.sample_size().runs == 29


def test_noether_formula_by_hand():
    # N >= ((Phi^-1(0.95) - Phi^-1(0.05)) / (sqrt(6) (1/2 - 0.75)))^2 = (2 * 1.6448536269514722)^2 / 0.375
    z = 1.6448536269514722
    assert C.noether_real(0.05, 0.05, 0.75) == pytest.approx((2 * z) ** 2 / 0.375)
    assert C.noether_real(0.05, 0.05, 0.75) == pytest.approx(28.859130177, rel=1e-9)


def test_noether_below_055_is_impractical():
    # Appendix C.3: "requiring more than 700 trainings below 0.55"
    assert C.noether_runs(0.05, 0.05, 0.55) > 700
    assert C.noether_runs(0.05, 0.05, 0.549) > 700


@settings(max_examples=100, deadline=None)
@given(st.floats(0.001, 0.49), st.floats(0.001, 0.49), st.floats(0.501, 0.999))
def test_noether_is_the_smallest_integer_at_or_above_the_bound(alpha, beta, gamma):
    n = C.noether_runs(alpha, beta, gamma)
    real = ((norm.ppf(1 - alpha) - norm.ppf(beta)) / (math.sqrt(6) * (0.5 - gamma))) ** 2
    assert n >= real * (1 - 1e-9)
    assert n - 1 < real or n == 1


def test_noether_curve_is_vectorized_and_decreasing_in_gamma():
    g, runs = mc.sample_size_curve(0.05, 0.05)
    assert g.shape == runs.shape
    assert np.all(np.diff(runs) <= 0)
    assert runs[g.tolist().index(0.75)] == 29
    assert C.noether_runs(0.05, 0.2, 0.75) < 29        # weaker power, fewer runs
    assert C.noether_runs(0.01, 0.05, 0.75) > 29        # fewer false positives, more runs


@pytest.mark.parametrize("kwargs,parameter", [
    ({"gamma": 0.5}, "gamma"), ({"gamma": 1.0}, "gamma"), ({"gamma": 0.3}, "gamma"),
    ({"alpha": 0.0}, "alpha"), ({"alpha": 0.6}, "alpha"), ({"beta": 0.5}, "beta"),
])
def test_noether_refuses_bad_rates(kwargs, parameter):
    with pytest.raises(InputError) as info:
        C.noether_runs(**kwargs)
    assert info.value.parameter == parameter


# --------------------------------------------------------------------------- P(A>B) and the bootstrap
def test_p_a_gt_b_counts_strict_wins():
    # Eq. 9: (1/N) sum I{a_i > b_i}; the tie in pair 3 is not a win.
    assert C.p_a_gt_b([1, 2, 3, 4], [0, 3, 3, 1]) == 0.5
    assert C.p_a_gt_b([1, 1], [1, 1]) == 0.0


def test_bootstrap_replicates_are_binomial_like_resampling_the_pairs():
    # Resampling N pairs with replacement: the win count is Binomial(N, p_hat).  Compare with explicit
    # resampling of pair indices.
    rng = np.random.default_rng(3)
    a = rng.normal(0.1, 1, 25)
    b = rng.normal(0.0, 1, 25)
    wins = a > b
    reps = C.bootstrap_distribution(a, b, 200_000, seed=1)
    idx = rng.integers(0, 25, size=(200_000, 25))
    explicit = wins[idx].mean(axis=1)
    p = wins.mean()
    assert reps.mean() == pytest.approx(p, abs=0.002)
    assert reps.var() == pytest.approx(p * (1 - p) / 25, rel=0.02)
    for q in (0.025, 0.25, 0.5, 0.75, 0.975):
        assert np.quantile(reps, q) == pytest.approx(np.quantile(explicit, q), abs=1 / 25 + 1e-12)


def test_bootstrap_ci_converges_to_binomial_quantiles():
    a = np.r_[np.ones(24), np.zeros(6)]       # 24 wins of 30
    b = np.full(30, 0.5)
    lo, hi = C.bootstrap_ci(a, b, alpha=0.05, resamples=400_000, seed=0)
    assert lo == pytest.approx(binom.ppf(0.025, 30, 0.8) / 30, abs=1 / 30)
    assert hi == pytest.approx(binom.ppf(0.975, 30, 0.8) / 30, abs=1 / 30)


def test_bootstrap_is_seeded():
    a, b = np.arange(10.0), np.arange(10.0)[::-1]
    assert C.bootstrap_ci(a, b, seed=4) == C.bootstrap_ci(a, b, seed=4)
    assert not np.array_equal(C.bootstrap_distribution(a, b, 1000, 4), C.bootstrap_distribution(a, b, 1000, 5))


# --------------------------------------------------------------------------- the decision (Appendix C.6)
@pytest.mark.parametrize("lower,upper,gamma,expected", [
    (0.5, 0.9, 0.75, "not_significant"),               # lower <= 0.5 (boundary)
    (0.3, 0.99, 0.75, "not_significant"),
    (0.51, 0.75, 0.75, "significant_not_meaningful"),   # upper <= gamma (boundary)
    (0.55, 0.70, 0.75, "significant_not_meaningful"),
    (0.51, 0.76, 0.75, "significant_and_meaningful"),
    (0.8, 0.95, 0.9, "significant_and_meaningful"),
])
def test_decision(lower, upper, gamma, expected):
    assert C.decide(lower, upper, gamma) == expected


def test_compare_on_constructed_samples():
    n = 30
    always = mc.compare(np.arange(n) + 1.0, np.arange(n) * 1.0)      # A wins every run
    assert always.p_a_gt_b == 1.0 and always.ci == (1.0, 1.0)
    assert always.conclusion == "significant_and_meaningful" and always.meaningful and always.significant
    never = mc.compare(np.zeros(n), np.ones(n))
    assert never.p_a_gt_b == 0.0 and never.conclusion == "not_significant" and not never.significant
    half = mc.compare(np.r_[np.ones(15), np.zeros(15)], np.full(30, 0.5))
    assert half.p_a_gt_b == 0.5 and half.conclusion == "not_significant"
    # 400 runs, 240 wins: P = 0.6, interval about 0.6 +- 1.96 sqrt(0.24/400) = [0.552, 0.648]
    many = mc.compare(np.r_[np.ones(240), np.zeros(160)], np.full(400, 0.5), seed=2)
    assert many.p_a_gt_b == 0.6
    assert many.ci[0] == pytest.approx(0.552, abs=0.01) and many.ci[1] == pytest.approx(0.648, abs=0.01)
    assert many.conclusion == "significant_not_meaningful" and many.significant and not many.meaningful
    assert mc.compare(np.r_[np.ones(240), np.zeros(160)], np.full(400, 0.5), seed=2, gamma=0.6).meaningful


def test_compare_result_object():
    r = mc.compare([3, 2, 5, 1], [1, 2, 4, 0], resamples=500, seed=1)
    d = r.to_dict()
    for key in ("p_a_gt_b", "ci", "significant", "meaningful", "conclusion", "runs", "runs_needed"):
        assert key in d
    assert d["p_a_gt_b"] == 0.75 and d["ties"] == 1 and d["runs"] == 4 and d["runs_needed"] == 29
    assert len(d["ci"]) == 2 and d["ci"][0] <= d["p_a_gt_b"] <= d["ci"][1]
    assert r.to_frame()["a_wins"].tolist() == [True, False, True, True]
    assert "P(A>B)=0.75" in repr(r)


# --------------------------------------------------------------------------- random pairing (Appendix C.4)
def test_pair_at_random_is_seeded_and_keeps_the_runs():
    a, b = np.arange(10.0), np.arange(100.0, 107.0)
    pa, pb = C.pair_at_random(a, b, seed=3)
    assert pa.size == pb.size == 7
    assert set(pa) <= set(a) and sorted(pb) == sorted(b)
    qa, qb = C.pair_at_random(a, b, seed=3)
    assert np.array_equal(pa, qa) and np.array_equal(pb, qb)
    ra, _ = C.pair_at_random(a, b, seed=4)
    assert not np.array_equal(pa, ra)


def test_unpaired_compare_pairs_at_random_and_reports_left_out_runs():
    a, b = np.arange(20.0) + 0.5, np.arange(25.0)
    r = mc.compare(a, b, paired=False, seed=0)
    assert not r.paired and r.runs == 20 and r.dropped == 5 and (r.runs_a, r.runs_b) == (20, 25)
    with pytest.raises(InputError, match="as many runs"):
        mc.compare(a, b, paired=True)


@pytest.mark.parametrize("kwargs,parameter", [
    ({"gamma": 0.4}, "gamma"), ({"alpha": 0.7}, "alpha"), ({"resamples": 0}, "resamples"), ({"seed": -1}, "seed"),
])
def test_compare_refuses_bad_settings(kwargs, parameter):
    with pytest.raises(InputError) as info:
        mc.compare([1, 2, 3], [0, 1, 2], **kwargs)
    assert info.value.parameter == parameter


def test_compare_refuses_too_few_or_non_finite_runs():
    with pytest.raises(InputError, match="at least 2"):
        mc.compare([1.0], [0.0])
    with pytest.raises(InputError) as info:
        mc.compare([1.0, np.inf, 2.0], [0.0, 1.0, 1.0])
    assert info.value.location == "run 2"


# --------------------------------------------------------------------------- files
def test_parse_runs_reads_columns_a_and_b_in_any_position_and_case():
    t = mc.parse_runs("run,B,A,note\n1,0.5,0.6,x\n2,0.4,0.7,y\n")
    assert t.a.tolist() == [0.6, 0.7] and t.b.tolist() == [0.5, 0.4] and t.complete_rows


def test_parse_runs_with_empty_cells_is_not_paired():
    t = mc.parse_runs("a,b\n1,2\n3,4\n5,\n")
    assert t.a.size == 3 and t.b.size == 2 and not t.complete_rows


@pytest.mark.parametrize("text,parameter,where", [
    ("x,b\n1,2\n3,4\n", "header", "line 1"),
    ("a,b\n1,2\n3,oops\n", "b", "line 3, column 2"),
    ("a,b\n1,2\ninf,4\n", "a", "line 3, column 1"),
    ("a,b\n1,2\n", "column a", None),
    ("", "runs file", None),
])
def test_bad_runs_files_say_where(text, parameter, where):
    with pytest.raises(InputError) as info:
        mc.parse_runs(text)
    assert info.value.parameter == parameter
    if where:
        assert info.value.location == where


def test_shipped_examples_show_all_three_conclusions():
    # Generated by tests/generators/generate_compare.py to illustrate each case (seed 0 bootstrap).
    paired = mc.load_example("compare_paired.csv")
    assert paired.complete_rows and paired.a.size == 30
    assert mc.compare(paired.a, paired.b).conclusion == "significant_and_meaningful"
    many = mc.load_example("compare_many_runs.csv")
    assert mc.compare(many.a, many.b).conclusion == "significant_not_meaningful"
    unpaired = mc.load_example("compare_unpaired.csv")
    assert not unpaired.complete_rows and (unpaired.a.size, unpaired.b.size) == (20, 25)
    assert mc.compare(unpaired.a, unpaired.b, paired=False).conclusion == "not_significant"


def test_compare_generator_reproduces_the_shipped_files(tmp_path, monkeypatch):
    monkeypatch.setattr(generate_compare, "HERE", tmp_path)
    generate_compare.main()
    for name in mc.COMPARE_EXAMPLES:
        assert (tmp_path / name).read_bytes() == mc.example_path(name).read_bytes()


# --------------------------------------------------------------------------- the bootstrap as counts
@settings(max_examples=200, deadline=None)
@given(st.integers(1, 80).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))), st.integers(1, 5000),
       st.integers(0, 2**31), st.lists(st.floats(0, 1), min_size=1, max_size=5))
def test_quantiles_from_counts_are_numpys_quantiles_of_the_replicates(case, resamples, seed, qs):
    runs, wins = case
    counts = C.bootstrap_counts(wins, runs, resamples, seed)
    assert counts.sum() == resamples and counts.size == runs + 1
    sample = np.repeat(np.arange(runs + 1) / runs, counts)
    assert C.quantiles_from_counts(counts, qs).tolist() == np.quantile(sample, qs).tolist()


def test_bootstrap_counts_follow_the_binomial():
    # Appendix C.5: a replicate's win count is Binomial(N, p): with K = 10^6 the shares match the pmf
    counts = C.bootstrap_counts(24, 30, 1_000_000, seed=0)
    pmf = binom.pmf(np.arange(31), 30, 0.8)
    assert np.max(np.abs(counts / 1e6 - pmf)) < 0.002
    assert C.bootstrap_counts(0, 30, 500).tolist() == [500] + [0] * 30          # p = 0: every replicate 0
    assert C.bootstrap_counts(30, 30, 500)[-1] == 500


def test_many_resamples_cost_nothing_and_huge_ones_are_refused():
    # issue 15: --resamples 1e10 is refused; up to 1e9 the histogram is drawn at once
    assert C.bootstrap_counts(26, 30, C.MAX_RESAMPLES).sum() == C.MAX_RESAMPLES
    with pytest.raises(InputError) as info:
        C.bootstrap_counts(26, 30, 10**10)
    assert info.value.parameter == "resamples"


def test_the_interval_of_a_million_runs_is_quick_and_centred():
    counts = C.bootstrap_counts(600_000, 1_000_000, 10_000, seed=1)
    lo, hi = C.quantiles_from_counts(counts, [0.025, 0.975])
    se = math.sqrt(0.6 * 0.4 / 1e6)
    assert lo == pytest.approx(0.6 - 1.96 * se, abs=2e-4) and hi == pytest.approx(0.6 + 1.96 * se, abs=2e-4)


@pytest.mark.parametrize("gamma", [0.5000000000001, 0.50000000001])
def test_noether_refuses_a_gamma_whose_count_would_be_astronomical(gamma):
    # issue 15: a runs count is exact or refused; (z / (sqrt 6 * 1e-13))^2 is about 1.8e26
    with pytest.raises(InputError) as info:
        C.noether_runs(0.05, 0.05, gamma)
    assert info.value.parameter == "gamma" and repr(gamma) in str(info.value)
    assert C.noether_runs(0.05, 0.05, 0.5 + 1e-6) > 10**12                     # still exact below the limit
