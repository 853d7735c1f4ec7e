"""ease.ml/ci sample sizes: every published number, exactness, properties, extremes.

Source: Renggli et al., "Continuous Integration of Machine Learning Models with ease.ml/ci",
SysML 2019 (shared/seeds/001_*).  Each expected value cites where it is printed.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from meter_dashboard.bounds import ci as b
from meter_dashboard.ci import ci_curves, ci_labels
from meter_dashboard.core.validation import InputError

# --------------------------------------------------------------------------- Figure 2
# Figure 2 ("Number of samples required by different conditions, H = 32 steps"), verbatim:
# reliability, epsilon, F1/F4 none, F1/F4 full, F2/F3 none, F2/F3 full.
# F1 = "n > c +/- eps", F4 = "d < c +/- eps" (one variable); F2 = "n - o > c +/- eps" (full),
# F3 = the same condition with firstChange, whose count is the non-adaptive one (Section 3.4).
FIGURE_2 = [
    (0.99, 0.1, 404, 1340, 1753, 5496),
    (0.99, 0.05, 1615, 5358, 7012, 21984),
    (0.99, 0.025, 6457, 21429, 28045, 87933),
    (0.99, 0.01, 40355, 133930, 175282, 549581),
    (0.999, 0.1, 519, 1455, 2214, 5957),
    (0.999, 0.05, 2075, 5818, 8854, 23826),
    (0.999, 0.025, 8299, 23271, 35414, 95302),
    (0.999, 0.01, 51868, 145443, 221333, 595633),
    (0.9999, 0.1, 634, 1570, 2674, 6417),
    (0.9999, 0.05, 2536, 6279, 10696, 25668),
    (0.9999, 0.025, 10141, 25113, 42782, 102670),
    (0.9999, 0.01, 63381, 156956, 267385, 641684),
    (0.99999, 0.1, 749, 1685, 3135, 6878),
    (0.99999, 0.05, 2996, 6739, 12538, 27510),
    (0.99999, 0.025, 11983, 26955, 50150, 110038),
    (0.99999, 0.01, 74894, 168469, 313437, 687736),
]


@pytest.mark.parametrize("reliability,eps,f1_none,f1_full,f2_none,f2_full", FIGURE_2,
                         ids=[f"fig2-{r}-{e}" for r, e, *_ in FIGURE_2])
def test_figure_2_every_cell(reliability, eps, f1_none, f1_full, f2_none, f2_full):
    # Figure 2, H = 32
    for cond in (f"n > 0.8 +/- {eps}", f"d < 0.1 +/- {eps}"):  # F1 and F4 share the columns
        assert ci_labels(cond, reliability, "none", 32).labels == f1_none
        assert ci_labels(cond, reliability, "full", 32).labels == f1_full
    assert ci_labels(f"n - o > 0.02 +/- {eps}", reliability, "none", 32).labels == f2_none
    assert ci_labels(f"n - o > 0.02 +/- {eps}", reliability, "full", 32).labels == f2_full
    # F3: firstChange has the non-adaptive count (Section 3.4)
    assert ci_labels(f"n - o > 0.1 +/- {eps}", reliability, "firstChange", 32).labels == f2_none


def test_figure_2_in_one_vectorized_call_per_column():
    rel = np.array([r for r, *_ in FIGURE_2])
    eps = np.array([e for _, e, *_ in FIGURE_2])
    delta = 1 - rel
    one = b.clause_log_count("none", 32, 1, 1)
    assert b.hoeffding_labels(1.0, eps, delta, one).tolist() == [row[2] for row in FIGURE_2]
    full = b.clause_log_count("full", 32, 1, 1)
    assert b.hoeffding_labels(1.0, eps, delta, full).tolist() == [row[3] for row in FIGURE_2]
    two = b.clause_log_count("none", 32, 1, 2)  # n - o: W = 2, delta/2 per estimate
    assert b.hoeffding_labels(2.0, eps, delta, two).tolist() == [row[4] for row in FIGURE_2]
    two_full = b.clause_log_count("full", 32, 1, 2)
    assert b.hoeffding_labels(2.0, eps, delta, two_full).tolist() == [row[5] for row in FIGURE_2]


# --------------------------------------------------------------------------- text numbers
def test_section_3_3_6279_and_156955():
    # Section 3.3: F :- n > 0.8 +/- 0.05, H = 32, delta = 0.0001: n(F, eps, delta/2^H) = 6,279
    assert ci_labels("n > 0.8 +/- 0.05", 0.9999, "full", 32).labels == 6279
    # "if eps = 0.01, this blows up to 156,955": the real-valued bound (H ln 2 - ln delta)/(2 eps^2)
    # is 156,955.25; the text truncates it, the integer count is Figure 2's own 156,956.
    real = b.hoeffding_bound(1.0, 0.01, 1e-4, b.log_histories("full", 32))
    assert real == pytest.approx(156_955.2507, abs=1e-3)
    assert math.floor(real) == 156_955
    assert ci_labels("n > 0.8 +/- 0.01", 0.9999, "full", 32).labels == 156_956  # Figure 2, 0.9999/0.01
    # 6,279 is the ceiling of 6,278.21 (the text uses the integer count there)
    assert b.hoeffding_bound(1.0, 0.05, 1e-4, b.log_histories("full", 32)) == pytest.approx(6278.21, abs=0.01)


def test_public_calculator_5496():
    # the public ease.ml/ci calculator: n - o > 0.1 +/- 0.1, reliability 0.99, full, 32 steps
    assert ci_labels("n - o > 0.1 +/- 0.1", 0.99, "full", 32).labels == 5496


def test_introduction_46k_63k_156k():
    # Section 1: eps = 0.01, delta = 0.0001: "more than 46K labels" (one model),
    # "63K labels for 32 models in a non-adaptive fashion and 156K labels in a fully adaptive fashion"
    assert b.variable_labels(1.0, 0.01, 1e-4) == 46_052
    assert ci_labels("n > 0.5 +/- 0.01", 0.9999, "none", 32).labels == 63_381
    assert ci_labels("n > 0.5 +/- 0.01", 0.9999, "full", 32).labels == 156_956


def test_section_3_1_example_is_the_minimax_over_the_tolerance_split():
    # Section 3.1: F :- n - 1.1 * o > 0.01 +/- 0.01 /\ d < 0.1 +/- 0.01 (one model)
    # n(F) = min_{e1 + e2 = eps} max{-ln(d/4)/(2 e1^2), -1.1^2 ln(d/4)/(2 e2^2), -ln(d/2)/(2 eps^2)}
    delta, eps = 1e-4, 0.01

    def worst(e1):
        e2 = eps - e1
        return max(-math.log(delta / 4) / (2 * e1**2), -(1.1**2) * math.log(delta / 4) / (2 * e2**2),
                   -math.log(delta / 2) / (2 * eps**2))

    best = minimize_scalar(worst, bounds=(1e-6, eps - 1e-6), method="bounded", options={"xatol": 1e-12})
    res = ci_labels("n - 1.1 * o > 0.01 +/- 0.01 /\\ d < 0.1 +/- 0.01", 0.9999, "none", 1)
    assert res.labels == math.ceil(best.fun)
    # the optimal split gives the estimates tolerances in proportion to their coefficients
    assert float(res.clauses[0].tolerances["n"]) == pytest.approx(eps / 2.1)
    assert math.isclose(best.x, eps / 2.1, rel_tol=1e-4)


def test_section_5_2_44268_and_58k():
    # Section 5.2: eps = 0.02, delta = 0.002, H = 7 non-adaptive: r_v^2 (ln H - ln(delta/2))/(2 eps^2)
    # "n > ... = 44,268": the real bound is 44,268.33, so the smallest integer is 44,269.
    real = b.hoeffding_bound(2.0, 0.02, 0.002, b.clause_log_count("none", 7, 1, 2))
    assert real == pytest.approx(44_268.33, abs=0.01) and math.floor(real) == 44_268
    assert ci_labels("n - o > 0.02 +/- 0.02", 0.998, "none", 7).labels == 44_269
    # "This number even grows to up to 58K in the fully adaptive case!"
    assert ci_labels("n - o > 0.02 +/- 0.02", 0.998, "full", 7).labels == 58_799


# --------------------------------------------------------------------------- Section 4
def test_section_4_1_1_29k_and_67k():
    # Section 4.1.1: p = 0.1, 1 - delta = 0.9999, d < 0.1, one accuracy point:
    # "29K samples for 32 non-adaptive steps and 67K samples for 32 fully-adaptive steps".
    # Bennett (Prop. 1, two-sided 2 exp(-n p h(eps/p))) with delta/2 for the filter on d:
    cond = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"
    none = ci_labels(cond, 0.9999, "none", 32)
    full = ci_labels(cond, 0.9999, "full", 32)
    assert none.optimized == 29_048 and round(none.optimized, -3) == 29_000
    assert full.optimized == 67_706 and 67_000 <= full.optimized < 68_000
    assert b.bennett_bound(0.01, 0.1, 1e-4 / 2, b.log_histories("none", 32)) == pytest.approx(29_047.30, abs=0.01)
    # "10x fewer than the baseline (Figure 2)"
    assert 9 < none.labels / none.optimized < 11 and 9 < full.labels / full.optimized < 11


def test_section_4_1_2_active_labeling_2188():
    # Section 4.1.2: n = -ln(delta/4) / (p h(eps/p)) * p; p = 0.1, 1 - delta = 0.9999: "n = 2188".
    # The printed formula has no union over steps (one commit): the real value is 2,188.85 (the text
    # truncates it); the smallest integer count is 2,189.
    real = 0.1 * b.bennett_bound(0.01, 0.1, 1e-4 / 2, 0.0)
    assert real == pytest.approx(2188.846, abs=1e-3) and math.floor(real) == 2188
    res = ci_labels("n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01", 0.9999, "none", 1)
    assert res.labels_per_commit == 2189
    # for the whole 32-step guarantee, each commit needs p times the 32-step test set
    assert ci_labels("n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01", 0.9999, "full", 32).labels_per_commit == 6771


def test_figure_5_pattern_2_with_a_known_bound():
    # Figure 5: reliability 0.998, p = 0.1 known ("no more than 10% difference"), H = 7:
    # "n - o > 0.02 +/- 0.02" (# Samples = 4713, counted over 7 non-adaptive steps) and
    # "n - o > 0.018 +/- 0.022" adaptive (# Samples = 5204).  All of delta goes to the test.
    kw = dict(difference_bound=0.1, check_difference_bound=False)
    assert ci_labels("n - o > 0.02 +/- 0.02", 0.998, "none", 7, **kw).optimized == 4713
    assert ci_labels("n - o > 0.018 +/- 0.022", 0.998, "full", 7, **kw).optimized == 5204
    # Checking p on unlabeled data (Section 4.2) costs half of delta: more labels, 2x2 tolerance for d
    checked = ci_labels("n - o > 0.02 +/- 0.02", 0.998, "none", 7, difference_bound=0.1)
    assert checked.optimized > 4713
    assert checked.unlabeled == b.hoeffding_labels(1.0, 0.04, 0.002, b.log_histories("none", 7) + math.log(2))


def test_pattern_2_unlabeled_set_is_16x_smaller():
    # Section 4.2: "the first testset will be 16x smaller than testing n - o directly up to eps = D"
    d = 0.01
    direct = b.hoeffding_bound(2.0, d, 1e-4)  # n - o has range 2
    first = b.hoeffding_bound(1.0, 2 * d, 1e-4)  # d has range 1, tolerance 2D
    assert direct / first == pytest.approx(16.0)


def test_fn_free_bound_from_a_d_clause_is_a_plus_2b():
    # Pattern 1: a passing d < A +/- B guarantees d < A (fp-free) or d < A + 2B (fn-free)
    cond = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"
    assert ci_labels(cond, 0.9999, "none", 32, "fp-free").variance_bound == pytest.approx(0.1)
    fn = ci_labels(cond, 0.9999, "none", 32, "fn-free")
    assert fn.variance_bound == pytest.approx(0.12)
    assert fn.optimized == b.bennett_labels(0.01, 0.12, 1e-4 / 2, b.log_histories("none", 32))


def test_conditions_over_d_alone_need_no_labels():
    # Technical Observation 2: d needs no labels, only unlabeled examples
    res = ci_labels("d < 0.1 +/- 0.01", 0.9999, "full", 32)
    assert res.labels == 156_956 and res.optimized == 0 and res.unlabeled == 156_956
    assert res.labels_per_commit == 0


def test_no_optimization_key_without_d_clause_or_bound():
    res = ci_labels("n - o > 0.02 +/- 0.01", 0.9999, "full", 32)
    assert res.optimized is None and res.labels_per_commit is None
    assert "optimized" not in res.to_dict()


def test_active_labeling_needs_every_labeled_clause_to_be_a_difference():
    res = ci_labels("n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01 /\\ n > 0.8 +/- 0.01", 0.9999, "none", 32)
    assert res.optimized is not None and res.labels_per_commit is None


def test_bennett_never_worse_than_hoeffding_in_the_optimized_plan():
    # with a useless bound (p = 1) the optimized plan keeps Hoeffding for n - o
    res = ci_labels("n - o > 0.02 +/- 0.05", 0.99, "none", 32, difference_bound=1.0, check_difference_bound=False)
    assert res.optimized <= res.labels
    assert res.clauses[0].method == "hoeffding"


def test_a_loose_checked_bound_falls_back_to_the_baseline_plan():
    # checking p = 1 costs half of delta and buys nothing: the baseline plan is chosen instead
    res = ci_labels("n - o > 0.02 +/- 0.125", 0.5, "full", 1, difference_bound=1.0)
    assert res.optimized == res.labels == 267
    assert res.unlabeled == 0 and res.labels_per_commit is None
    assert any("optimized plan is the baseline plan" in n for n in res.notes)


# --------------------------------------------------------------------------- exactness
def _hoeffding_ok(n, weight, eps, delta, log_count):
    return log_count - 2 * n * eps**2 / weight**2 < math.log(delta)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.001, 0.5), delta=st.floats(1e-12, 0.5), steps=st.integers(1, 200),
       weight=st.sampled_from([1.0, 2.0, 2.1, 3.0]), adaptivity=st.sampled_from(b.ADAPTIVITIES))
def test_counts_are_exact_smallest_integers(eps, delta, steps, weight, adaptivity):
    log_count = float(b.clause_log_count(adaptivity, steps, 1, 2))
    n = b.hoeffding_labels(weight, eps, delta, log_count)
    assert _hoeffding_ok(n, weight, eps, delta, log_count)
    assert n == 0 or not _hoeffding_ok(n - 1, weight, eps, delta, log_count)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.001, 0.2), p=st.floats(0.01, 1.0), delta=st.floats(1e-10, 0.5), steps=st.integers(1, 100))
def test_bennett_counts_are_exact(eps, p, delta, steps):
    log_s = float(b.log_histories("none", steps))
    n = b.bennett_labels(eps, p, delta, log_s)
    rate = p * ((1 + eps / p) * math.log1p(eps / p) - eps / p)

    def ok(k):
        return math.log(2) + log_s - k * rate < math.log(delta)

    assert ok(n) and (n == 0 or not ok(n - 1))


# --------------------------------------------------------------------------- properties
CONDITIONS = ["n > 0.8 +/- {e}", "n - o > 0.02 +/- {e}", "n - 1.1 * o > 0.01 +/- {e} /\\ d < 0.1 +/- {e}",
              "n - o > 0.02 +/- {e} /\\ d < 0.1 +/- 0.01", "2 * n - o - d > 0.5 +/- {e}"]


@settings(max_examples=25, deadline=None)
@given(template=st.sampled_from(CONDITIONS), e1=st.floats(0.002, 0.2), e2=st.floats(0.002, 0.2),
       rel=st.sampled_from([0.9, 0.99, 0.999, 0.9999]), steps=st.integers(1, 64),
       adaptivity=st.sampled_from(b.ADAPTIVITIES))
def test_labels_fall_as_the_tolerance_grows(template, e1, e2, rel, steps, adaptivity):
    lo, hi = sorted((round(e1, 4), round(e2, 4)))
    small = ci_labels(template.format(e=lo), rel, adaptivity, steps)
    large = ci_labels(template.format(e=hi), rel, adaptivity, steps)
    assert large.labels <= small.labels
    if small.optimized is not None:
        assert large.optimized <= small.optimized


@settings(max_examples=25, deadline=None)
@given(template=st.sampled_from(CONDITIONS), eps=st.floats(0.002, 0.2), r1=st.floats(0.5, 0.99999),
       r2=st.floats(0.5, 0.99999), steps=st.integers(1, 64), adaptivity=st.sampled_from(b.ADAPTIVITIES))
def test_labels_fall_as_delta_grows(template, eps, r1, r2, steps, adaptivity):
    cond = template.format(e=round(eps, 4))
    strict, loose = sorted((r1, r2), reverse=True)  # higher reliability = smaller delta
    assert ci_labels(cond, loose, adaptivity, steps).labels <= ci_labels(cond, strict, adaptivity, steps).labels


@settings(max_examples=25, deadline=None)
@given(template=st.sampled_from(CONDITIONS), eps=st.floats(0.002, 0.2), rel=st.floats(0.5, 0.99999),
       steps=st.integers(1, 64), p=st.none() | st.floats(0.01, 1.0))
def test_full_needs_at_least_none_and_first_change_equals_none(template, eps, rel, steps, p):
    res = ci_labels(template.format(e=round(eps, 4)), rel, "full", steps, difference_bound=p)
    by = res.by_adaptivity
    assert by["full"]["labels"] >= by["none"]["labels"]
    assert by["firstChange"] == by["none"]
    if res.optimized is not None:
        assert by["full"]["optimized"] >= by["none"]["optimized"]
        assert res.optimized <= res.labels  # the plan never costs more than the baseline


def test_labels_grow_with_steps_linearly_for_full_and_logarithmically_for_none():
    curves = ci_curves("n - o > 0.02 +/- 0.01", 0.9999, np.arange(1, 129))
    none, full = curves["none"]["baseline"], curves["full"]["baseline"]
    assert np.all(np.diff(none) >= 0) and np.all(np.diff(full) > 0)
    # full: each extra step adds ln 2 * W^2 / (2 eps^2) = ln2 * 4 / 0.0002 labels (within rounding)
    assert np.all(np.abs(np.diff(full) - math.log(2) * 4 / 2e-4) <= 1)
    assert none[-1] < full[-1] / 5


def test_curves_match_scalar_calls():
    cond = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"
    steps = np.array([1, 7, 32, 100])
    curves = ci_curves(cond, 0.999, steps)
    for i, h in enumerate(steps):
        for a in b.ADAPTIVITIES:
            r = ci_labels(cond, 0.999, a, int(h))
            assert curves[a]["baseline"][i] == r.labels
            assert curves[a]["optimized"][i] == r.optimized
            per = curves[a]["labels_per_commit"][i]
            assert (np.isnan(per) and r.labels_per_commit is None) or per == r.labels_per_commit


# --------------------------------------------------------------------------- extremes
def test_extreme_steps_and_delta_stay_finite():
    # 2^H for H = 10^6 stays in log space
    n = ci_labels("n > 0.5 +/- 0.01", 0.9999, "full", 1_000_000).labels
    assert n == math.ceil((1_000_000 * math.log(2) + math.log(1e4)) / 2e-4)
    assert b.hoeffding_labels(1.0, 0.01, 1e-300, 0.0) == math.ceil(-math.log(1e-300) / 2e-4)
    assert b.bennett_h(1e-9) == pytest.approx(5e-19, rel=1e-6)
    # huge tolerance: a handful of labels, never negative
    assert ci_labels("n > 0.5 +/- 5", 0.6, "none", 1).labels >= 0


@pytest.mark.parametrize("call,parameter", [
    (lambda: b.log_histories("sometimes", 3), "adaptivity"),
    (lambda: b.log_histories("none", 0), "steps"),
    (lambda: b.hoeffding_labels(1.0, 0.0, 0.1), "epsilon"),
    (lambda: b.hoeffding_labels(1.0, 0.1, 1.5), "delta"),
    (lambda: b.bennett_rate(0.01, 0.0), "difference_bound"),
    (lambda: ci_labels("n > 0.5 +/- 0.1", 1.0), "reliability"),
    (lambda: ci_labels("n > 0.5 +/- 0.1", "high"), "reliability"),
    (lambda: ci_labels("n > 0.5 +/- 0.1", 0.99, "full", 0), "steps"),
    (lambda: ci_labels("n > 0.5 +/- 0.1", 0.99, "full", 3, "fp"), "mode"),
    (lambda: ci_labels("n > 0.5 +/- 0.1", 0.99, "full", 3, difference_bound=1.5), "difference_bound"),
])
def test_bad_inputs_name_the_parameter(call, parameter):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.parameter == parameter


# --------------------------------------------------------------------------- exact binomial tails (issue 12)
from fractions import Fraction  # noqa: E402


def _exact_upper_tail_sup(n: int, t: Fraction) -> Fraction:
    """sup_p P(X/n - p >= t), X ~ Binomial(n, p), in exact rationals.

    For p in (j/n - t - 1/n, j/n - t] the event is X >= j and P(X >= j) grows with p, so the
    supremum is the maximum over the breakpoints p_j = j/n - t in [0, 1] (an independent
    derivation, computed with Python fractions: no floats, no scipy).
    """
    best = Fraction(0)
    for j in range(n + 1):
        p = Fraction(j, n) - t
        if p < 0 or p > 1:
            continue
        q = 1 - p
        tail = sum(Fraction(math.comb(n, x)) * p**x * q ** (n - x) for x in range(j, n + 1))
        best = max(best, tail)
    return best


@pytest.mark.parametrize("eps,delta,log_count", [
    ("0.1", Fraction(1, 20), 0.0),
    ("0.15", Fraction(1, 100), math.log(4)),
    ("0.2", Fraction(1, 1000), math.log(2) * 3),
])
def test_binomial_count_against_exact_rationals(eps, delta, log_count):
    """n satisfies, n - 1 does not, and every larger n (two sawtooth periods on) satisfies, in exact arithmetic."""
    n = b.binomial_labels(eps, float(delta), log_count)
    t = Fraction(eps)
    count = Fraction(math.exp(log_count)).limit_denominator(10**12)  # exp(log S) for S = 1, 4, 8

    def ok(m):
        return count * _exact_upper_tail_sup(m, t) < delta

    assert ok(n) and not ok(n - 1)
    period = int(2 / float(t)) + 1
    assert all(ok(m) for m in range(n, n + 2 * period))
    assert n <= b.hoeffding_labels(1.0, float(t), float(delta), log_count)


@settings(max_examples=25, deadline=None)
@given(eps=st.sampled_from(["0.05", "0.1", "0.02", "0.03"]), rel=st.sampled_from([0.9, 0.99, 0.999, 0.9999]),
       steps=st.integers(1, 40), adaptivity=st.sampled_from(b.ADAPTIVITIES), terms=st.integers(1, 3))
def test_binomial_never_needs_more_than_hoeffding(eps, rel, steps, adaptivity, terms):
    log_count = b.clause_log_count(adaptivity, steps, 1, terms)
    assert b.binomial_labels(eps, 1 - rel, log_count) <= b.hoeffding_labels(1.0, float(eps), 1 - rel, log_count)


def test_binomial_count_grows_as_delta_falls_and_steps_grow():
    counts = [b.binomial_labels("0.05", d, b.clause_log_count("full", 32, 1, 1)) for d in (1e-2, 1e-3, 1e-4)]
    assert counts == sorted(counts) and counts[0] < counts[-1]
    steps = [b.binomial_labels("0.05", 1e-4, b.clause_log_count("full", h, 1, 1)) for h in (1, 8, 32)]
    assert steps == sorted(steps) and steps[0] < steps[-1]


def test_binomial_refuses_settings_too_large_to_search():
    with pytest.raises(InputError) as info:
        b.binomial_labels("0.0001", 1e-4, b.clause_log_count("full", 32, 1, 1))
    assert info.value.parameter == "bound" and "10,000,000" in str(info.value)


def test_ci_labels_with_the_binomial_bound():
    r = ci_labels("n > 0.8 +/- 0.05", 0.9999, "full", 32, bound="binomial")
    assert r.bound == "binomial" and r.hoeffding["full"]["labels"] == 6279  # Section 3.3 (Hoeffding)
    assert r.labels == b.binomial_labels("0.05", 1e-4, b.clause_log_count("full", 32, 1, 1)) < 6279
    for a in b.ADAPTIVITIES:
        assert r.by_adaptivity[a]["labels"] <= r.hoeffding[a]["labels"]
    p1 = ci_labels("n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01", 0.9999, "none", 32, bound="binomial")
    assert p1.optimized == 29_048 and p1.clauses[0].method == "bennett"  # Bennett stays the smaller (Pattern 1)
    assert p1.labels < p1.hoeffding["none"]["labels"] == 281_248
    assert "exact binomial" in p1.sentence() and p1.to_dict()["bound"] == "binomial"
    assert "bound" not in ci_labels("n > 0.8 +/- 0.05").to_dict()  # the paper's output is unchanged
