"""The exact binomial engine of issue 18: batches, caches, curves, huge budgets, tails and the scipy-free start.

Every check is against an independent computation: exact integers or Decimal (log C(n, k),
deep tails), scipy.stats with every candidate evaluated (F), the one-at-a-time calls of the
same public functions (batches, curves), Hoeffding's closed forms (the order of the answers
at huge budgets), or the stored answers of issue 12's engine (``data/exact_binomial_curve.json``,
``tests/generators/generate_exact_grid.py --curve``).  References: ease.ml/meter (Hubis, Wu &
Zhang 2019: Thm 4, Cors 1-2, Eq. 2) and ease.ml/ci (Renggli et al. 2019, Section 4.3).
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import special, stats

from meter_dashboard.bounds import binomial as B
from meter_dashboard.bounds import meter as M
from meter_dashboard.bounds._binomial_envelope import kl, kl_floor
from meter_dashboard.bounds._binomial_max import log_tail_maxima
from meter_dashboard.bounds._numeric import log_binom
from meter_dashboard.bounds._tails import log_binom_pmf, log_binom_sf

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]
CURVE = json.loads((Path(__file__).parent / "data" / "exact_binomial_curve.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- scipy-free Hoeffding kernels
def _exact_log_comb(n: int, k: int) -> float:
    with localcontext() as ctx:
        ctx.prec = 50
        return float(Decimal(math.comb(n, k)).ln())


def test_log_binom_against_exact_integers_on_a_grid():
    """C(k + T - 1, k) of Cor 2 for T up to 100,000 and m up to 100, and generic (n, k): ~1e-15 relative."""
    rng = np.random.default_rng(18)
    pairs = [(int(k + t - 1), int(k)) for t, k in zip(rng.integers(1, 100_001, 400), rng.integers(1, 101, 400))]
    pairs += [(100_099, 100), (100_000, 50_000), (10**9, 7), (31, 15), (2, 1), (5, 0), (7, 7)]
    for n, k in pairs:
        exact = _exact_log_comb(n, k)
        assert abs(float(log_binom(n, k)) - exact) <= 4e-15 * max(1.0, exact), (n, k)
    got = log_binom(np.array([[10.0, 1e5 + 99]]), np.array([[3.0], [100.0]]))  # broadcasting
    assert got.shape == (2, 2) and got[1, 0] == -np.inf


def test_log_binom_matches_the_scipy_formula_it_replaced():
    """Issue 12's ``-log(n + 1) - betaln(n - k + 1, k + 1)``: the same to its own accuracy (~1e-11 relative)."""
    k = np.arange(1, 101, dtype=float)
    for t in (1, 2, 10, 999, 100_000):
        n = k + t - 1
        today = -np.log(n + 1.0) - special.betaln(n - k + 1.0, k + 1.0)
        np.testing.assert_allclose(log_binom(n, k), today, rtol=2e-10, atol=1e-12)


def test_tree_sizes_at_the_extremes_are_exact():
    """T = 100,000, m = 100: the incremental sizes against exact integers, the regular ones in closed form."""
    inc = M.log_tree_sizes("incremental", 100, 100_000)
    for k in (1, 2, 50, 100):
        assert inc[k - 1] == pytest.approx(_exact_log_comb(k + 100_000 - 1, k), rel=4e-15)
    reg = M.log_tree_sizes("regular", 100, 100_000)
    assert np.all(np.isfinite(reg)) and reg[0] == pytest.approx(100_000 * math.log(100) - math.log(99), rel=1e-15)


def test_hoeffding_path_imports_no_scipy():
    """Counts, curves and inverse answers under Hoeffding's bound, and the CLI's plan, never load scipy."""
    code = ("import sys, numpy as np, meter_dashboard.bounds.meter as m\n"
            "e = [0.01, 0.02, 0.03, 0.04, 0.05]\n"
            "m.all_labels(e, 0.01, 10); m.all_labels(e, 0.01, np.arange(1, 100), tenants=2, reverts=[3])\n"
            "m.max_steps('incremental', 60000, e, 0.01); m.min_epsilon('regular', 60000, e, 0.01, 10)\n"
            "m.failure_probability('regular', 60000, e, 10)\n"
            "print('scipy' in ' '.join(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
    cli = ("import runpy, sys\n"
           "sys.argv = ['meter_dashboard', 'plan', '--epsilon', '0.01,0.02,0.03,0.04,0.05', '--delta', '0.01',"
           " '--steps', '10', '--budget', '50000']\n"
           "try:\n    runpy.run_module('meter_dashboard', run_name='__main__')\nexcept SystemExit:\n    pass\n"
           "print('scipy' in ' '.join(sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", cli], capture_output=True, text=True, timeout=120)
    assert out.stderr.strip().splitlines()[-1] == "False" and "38,005" in out.stdout


# --------------------------------------------------------------------------- tails and bounds
@pytest.mark.parametrize("k,n,p", [(4_200_000, 8_000_000, 0.5), (10_600_000, 20_000_000, 0.5), (7000, 10_000, 0.3),
                                   (600_000_000, 10**9, 0.55)])
def test_deep_tails_by_the_continued_fraction_match_decimal(k, n, p):
    """Below 1e-280 (where betainc underflows): ``log P(X >= k) - log P(X = k)`` against the pmf ratios summed in Decimal.

    The pmf itself is Loader's (checked against exact integers in test_binomial.py); what
    the continued fraction computes is the tail's ratio to it.
    """
    with localcontext() as ctx:
        ctx.prec = 40
        pd, q = Decimal(p), 1 - Decimal(p)
        total, term, i = Decimal(1), Decimal(1), k
        while term > Decimal("1e-30") * total and i < n:
            term = term * (n - i) * pd / ((i + 1) * q)
            total += term
            i += 1
        ratio = float(total.ln())
    got = float(log_binom_sf(k, n, p))
    pmf = float(log_binom_pmf(k, n, p))
    assert got < -600 and got - pmf == pytest.approx(ratio, rel=1e-9, abs=1e-9)
    assert got == pytest.approx(pmf + ratio, rel=1e-13)


def test_kl_floor_is_below_the_minimum_over_p():
    """Topsoe's refinement of Pinsker: 2 s^2 + 4 s^4/9 + 2 s^6/9 <= min_p KL(p + s || p) (dense grid of p)."""
    p = np.linspace(1e-6, 1 - 1e-6, 400_001)
    for s in (0.003, 0.01, 0.05, 0.1, 0.3, -0.02, -0.2):
        ok = (p + s > 0) & (p + s < 1)
        assert kl_floor(s) <= kl(p[ok] + s, p[ok]).min() * (1 + 1e-9)  # KL in floats: ~1e-11 relative
        assert kl_floor(s) >= 2 * s * s


def _brute_log_factor(n: int, eps: str) -> float:
    e = Fraction(eps)
    c = math.ceil(2 * n * e)
    j = np.arange(math.ceil(n * e), n + 1)
    p = (j - float(n * e)) / n
    g = np.logaddexp(stats.binom.logsf(j - 1, n, p), stats.binom.logcdf(j - c, n, p))
    return float(np.where(p > 0, g, -np.inf).max())


def test_one_batch_mixes_tolerances_and_equals_single_calls():
    """Rows of (n, eps) with different eps in one batch: each equal to its own call and to brute force."""
    rng = np.random.default_rng(7)
    ns = rng.integers(50, 3000, 40)
    eps = [Fraction(int(x), 1000) for x in rng.integers(5, 300, 40)]
    for a, sides in ((None, "two-sided"), (Fraction(1, 10), "two-sided"), (Fraction(3, 10), "upper"),
                     (Fraction(1, 5), "lower")):
        mixed = log_tail_maxima(ns, eps, a, sides)
        alone = np.array([log_tail_maxima([n], e, a, sides)[0] for n, e in zip(ns, eps)])
        np.testing.assert_array_equal(mixed, alone)
    for n, e in list(zip(ns.tolist(), eps))[:12]:
        assert log_tail_maxima([n], e, None, "two-sided")[0] == pytest.approx(_brute_log_factor(n, str(e)), rel=1e-9)


def test_factors_of_huge_test_sets_have_room_in_their_keys():
    """Candidates j above 2**40 used to overflow the packed (row, j) keys (issue 23's IndexError)."""
    assert log_tail_maxima([2**40 + 3], Fraction(1, 10**7), None, "two-sided")[0] < 0
    assert B.log_factors([2**41], ["0.01"])[0] < -2 * 2**41 * 1e-4 + 1  # above EXACT_LABELS: the certified bound


# --------------------------------------------------------------------------- counts, caches, curves
def test_counts_in_one_batch_equal_counts_one_by_one():
    items = [([0.0], ["0.01"], 0.01), ([math.log(10)], ["0.01"], 0.01), (M.log_tree_sizes("regular", 5, 10),
             [str(e) for e in NONUNIFORM], 0.01), ([1.0, 2.0], ["0.05", "0.1"], 1e-6)]
    B.clear_cache()
    together = B.smallest_labels_batch(items)
    B.clear_cache()
    assert together == [B.smallest_labels(*item) for item in items] == [16_651, 27_151, 86_501, together[3]]


def test_clear_cache_forgets_factors_and_counts():
    B.smallest_labels([0.0], ["0.01"], 0.01)
    from meter_dashboard.bounds import _binomial_cache as store

    assert store.known([16_651], Fraction(1, 100), None, "two-sided")[0] < 0
    B.clear_cache()
    assert np.isnan(store.known([16_651], Fraction(1, 100), None, "two-sided")[0])
    assert store.recall(store.count_key([0.0], [Fraction(1, 100)], math.log(0.01), None, "two-sided")) is None


def test_exact_curve_equals_the_stored_curve_of_issue_12():
    """``plan --steps 1:1000 --bound binomial``'s numbers (regular: the first 150 steps; the rest is a benchmark)."""
    steps = np.arange(1, 1001)
    got = M.exact_curve(NONUNIFORM, 0.01, steps, variants=("single_model", "no_adaptivity", "resampling",
                                                           "incremental"))
    for v, values in got.items():
        assert values.tolist() == CURVE["labels"][v], v
    regular = M.exact_curve(NONUNIFORM, 0.01, steps[:150], variants=("regular",))["regular"]
    assert regular.tolist() == CURVE["labels"]["regular"][:150]


@pytest.mark.parametrize("kw", [dict(tenants=3), dict(reverts=[2, 5, 5]), dict(max_error_rate=0.15),
                                dict(tenants=2, reverts=[4])])
def test_exact_curve_equals_labels_point_by_point(kw):
    """The curve's conventions (tenants at most T, reverts once T reaches them) against one call per T."""
    eps, steps = [0.03, 0.05, 0.08], np.array([1, 2, 3, 4, 5, 7, 12, 20])
    got = M.exact_curve(eps, 0.02, steps, **kw)
    rate = kw.get("max_error_rate")
    for i, t in enumerate(steps.tolist()):
        rv = [r for r in kw.get("reverts", []) if r <= t] or None
        for v in ("no_adaptivity", "regular", "incremental"):
            assert got[v][i] == M.labels(v, eps, 0.02, t, tenants=min(kw.get("tenants", 1), t), reverts=rv,
                                         bound="binomial", max_error_rate=rate), (v, t)
        assert got["resampling"][i] == t * got["no_adaptivity"][i]
    assert np.all(got["single_model"] == M.labels("single_model", eps, 0.02, 1, bound="binomial", max_error_rate=rate))


def test_exact_curve_marks_refused_points():
    got = M.exact_curve([0.01] * 5, 0.01, np.array([10, 2600]), variants=("regular", "incremental"))
    assert got["regular"][0] == M.labels("regular", [0.01] * 5, 0.01, 10, bound="binomial")
    assert math.isnan(got["regular"][1]) and np.all(np.isfinite(got["incremental"]))


# --------------------------------------------------------------------------- inverse answers at huge budgets
@pytest.mark.parametrize("variant", M.VARIANTS)
def test_a_budget_beyond_any_use_gives_finite_or_infinite_answers(variant):
    """Issue 23: ``plan --epsilon 0.01 --delta 0.01 --steps 10 --budget 1e15 --bound binomial`` raised IndexError.

    Every answer is finite or inf, and at least as good as Hoeffding's (the exact factor is at
    most Hoeffding's), while above ``EXACT_LABELS`` the factor is its certified upper bound,
    so nothing claims more than is certain.
    """
    for n in (10**15, 2**40 + 1):
        for eps in ([0.01], NONUNIFORM):
            t_h = M.max_steps(variant, n, eps, 0.01)
            t_b = M.max_steps(variant, n, eps, 0.01, bound="binomial")
            assert t_b >= t_h and (t_b == math.inf or t_b == int(t_b))
            e_h = float(M.min_epsilon(variant, n, eps, 0.01, 10))
            e_b = float(M.min_epsilon(variant, n, eps, 0.01, 10, bound="binomial"))
            assert 0 < e_b <= e_h * (1 + 1e-8)
            log_h = float(M.failure_probability(variant, n, eps, 10, log=True))
            log_b = float(M.failure_probability(variant, n, eps, 10, log=True, bound="binomial"))
            assert math.isfinite(log_b) and log_b <= log_h


def test_the_reported_command_answers():
    out = subprocess.run([sys.executable, "-m", "meter_dashboard", "plan", "--epsilon", "0.01", "--delta", "0.01",
                          "--steps", "10", "--budget", "1000000000000000", "--bound", "binomial", "--format", "json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    payload = json.loads(out.stdout)
    assert payload["labels"]["incremental"] == 27_151


def test_resampling_largest_steps_beyond_the_old_scan():
    """Issue 12's engine scanned at most 4,096 T above Hoeffding's answer; here the answer is ~40,000 T above.

    Independent check: every T between Hoeffding's answer and the result fits (``T F(floor(n/T)) < delta``,
    each distinct per-set size's factor by the public exact function) and the next T does not.
    """
    n, eps, delta = 10**8, 0.1, 0.01
    t_h = M.max_steps("resampling", n, eps, delta)
    t_b = M.max_steps("resampling", n, eps, delta, bound="binomial")
    assert t_b - t_h > 4096
    ts = np.arange(t_h, t_b + 2)
    sizes = n // ts
    distinct = np.unique(sizes)
    f = dict(zip(distinct.tolist(), B.log_tail_factor(distinct, "0.1").tolist()))
    fits = np.log(ts) + np.array([f[s] for s in sizes.tolist()]) < math.log(delta)
    assert fits[:-1].all() and not fits[-1]
