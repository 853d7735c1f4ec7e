"""The exact binomial factor F(n, eps) against exact rationals, brute force and its properties.

References: ease.ml/ci (Renggli et al. 2019, ../shared/seeds/001_*, Section 4.3 "Tight numerical
bounds", Proposition 1 and Section 4.1.1 for Bennett); ease.ml/meter (../shared/seeds/000_*, Thm 4)
for Hoeffding's factor that F replaces; Zubkov & Serov (2013) for the normal-KL bounds the
pruning relies on (checked numerically below).
"""
from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from meter_dashboard.bounds import binomial as B
from meter_dashboard.bounds import ci
from meter_dashboard.bounds._numeric import log_binom_cdf, log_binom_pmf, log_binom_sf
from meter_dashboard.core.validation import InputError


# --------------------------------------------------------------------------- independent references
def exact_sf(k: int, n: int, p: Fraction) -> Fraction:
    """P(X >= k) for X ~ Bin(n, p), as an exact rational."""
    if k <= 0:
        return Fraction(1)
    return sum((math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)), Fraction(0))


def exact_cdf(k: int, n: int, p: Fraction) -> Fraction:
    if k < 0:
        return Fraction(0)
    return sum((math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(0, min(k, n) + 1)), Fraction(0))


def exact_factor(n: int, eps: Fraction, a: Fraction | None = None) -> Fraction:
    """F(n, eps) as an exact rational: every breakpoint (upper and lower) in [0, a] and p = a."""
    top = Fraction(1, 2) if a is None else min(a, Fraction(1, 2))
    points = set()
    for j in range(n + 1):
        for p in (Fraction(j, n) - eps, Fraction(j, n) + eps):
            if 0 <= p <= top:
                points.add(p)
    if a is not None:
        points.add(a)
    best = Fraction(0)
    for p in points:
        ku, kl = math.ceil(n * (p + eps)), math.floor(n * (p - eps))
        best = max(best, exact_sf(ku, n, p) + exact_cdf(kl, n, p))
    return best


def decimal_log_sf(k: int, n: int, p, prec: int = 40) -> float:
    """log P(X >= k) in Decimal: pmf by exact integer binomial, tail by pmf ratios."""
    with localcontext() as ctx:
        ctx.prec = prec
        p = Decimal(p)
        q = 1 - p
        term = Decimal(math.comb(n, k)) * p**k * q ** (n - k)
        total, i = term, k
        while i < n:
            term = term * (n - i) * p / ((i + 1) * q)
            total += term
            i += 1
            if term < total * Decimal("1e-30"):
                break
        return float(total.ln())


def brute_log_factor(n: int, eps: float, a=None, sides="two-sided") -> float:
    """Every candidate evaluated with scipy.stats (independent of the engine and of its tails)."""
    e = Fraction(str(eps))
    c = math.ceil(2 * n * e)
    j = np.arange(math.ceil(n * e), n + 1)
    p = (j - float(n * e)) / n
    unrestricted = a is None or (a >= 0.5 and sides == "two-sided")  # symmetric; one-sided events are not
    if not unrestricted:
        keep = (p <= a + 1e-15) | (p >= 1 - a - 1e-15) if sides == "two-sided" else (
            (p <= a + 1e-15) if sides == "upper" else (p >= 1 - a - 1e-15))
        j, p = j[keep], p[keep]
    log_u = stats.binom.logsf(j - 1, n, p)
    log_l = stats.binom.logcdf(j - c, n, p) if sides == "two-sided" else np.full(j.size, -np.inf)
    g = np.logaddexp(np.where(p > 0, log_u, -np.inf), np.where(p > 0, log_l, -np.inf))
    best = float(g.max()) if g.size else -np.inf
    if not unrestricted and sides != "lower":
        af = Fraction(str(a))
        ku, kl = math.ceil(n * (af + e)), math.floor(n * (af - e))
        point = stats.binom.logsf(ku - 1, n, a)
        if sides == "two-sided":
            point = np.logaddexp(point, stats.binom.logcdf(kl, n, a))
        best = max(best, float(point))
    return best


# --------------------------------------------------------------------------- log-space binomial numerics
def test_log_pmf_matches_exact_integers():
    for k, n, p in [(0, 10, "0.3"), (10, 10, "0.3"), (3, 10, "0.5"), (12_000, 40_000, "0.3"),
                    (24_000, 50_000, "0.49"), (25_001, 50_000, "0.5")]:
        with localcontext() as ctx:
            ctx.prec = 60
            exact = Decimal(math.comb(n, k)).ln() + k * Decimal(p).ln() + (n - k) * (1 - Decimal(p)).ln()
        assert float(log_binom_pmf(k, n, float(p))) == pytest.approx(float(exact), rel=1e-13, abs=1e-12)


def test_log_pmf_edges():
    assert log_binom_pmf(0, 5, 0.0) == 0.0 and log_binom_pmf(1, 5, 0.0) == -np.inf
    assert log_binom_pmf(5, 5, 1.0) == 0.0 and log_binom_pmf(-1, 5, 0.3) == -np.inf
    assert log_binom_pmf(6, 5, 0.3) == -np.inf


@pytest.mark.parametrize("k,n,p", [(60, 100, 0.3), (5200, 10_000, 0.5), (51_000, 100_000, 0.49), (70, 100, 0.2)])
def test_log_sf_matches_decimal(k, n, p):
    assert float(log_binom_sf(k, n, p)) == pytest.approx(decimal_log_sf(k, n, p), rel=1e-12)


@pytest.mark.parametrize("k,n,p", [(9000, 10_000, 0.5), (52_000, 100_000, 0.3), (2000, 2000, 0.1)])
def test_log_sf_deep_tail_finite_and_correct(k, n, p):
    """Values far below 1e-300 (betainc underflows) stay finite and correct in log space."""
    got = float(log_binom_sf(k, n, p))
    assert np.isfinite(got) and got < math.log(1e-300)
    assert got == pytest.approx(decimal_log_sf(k, n, p, prec=60), rel=1e-12)


def test_log_cdf_is_the_mirror_and_complements():
    k, n, p = 30, 100, 0.45
    assert float(log_binom_cdf(k, n, p)) == pytest.approx(float(log_binom_sf(n - k, n, 1 - p)))
    total = np.logaddexp(log_binom_cdf(k, n, p), log_binom_sf(k + 1, n, p))
    assert float(total) == pytest.approx(0.0, abs=1e-14)
    assert log_binom_sf(0, 10, 0.3) == 0.0 and log_binom_sf(11, 10, 0.3) == -np.inf
    assert log_binom_cdf(-1, 10, 0.3) == -np.inf and log_binom_cdf(10, 10, 0.3) == 0.0


def test_zubkov_serov_bounds_hold():
    """The window pruning rests on P(X <= k) <= Phi(sign(x - p) sqrt(2 n KL(x || p))), x = (k+1)/n."""
    rng = np.random.default_rng(0)
    for n in list(range(1, 60)) + rng.integers(60, 50_000, 40).tolist():
        k = np.arange(0, n)
        for p in rng.uniform(0.001, 0.999, 5):
            cdf = stats.binom.cdf(k, n, p)
            x = (k + 1) / n
            kl = special.xlogy(x, x / p) + special.xlogy(1 - x, (1 - x) / (1 - p))
            bound = special.ndtr(np.sign(x - p) * np.sqrt(2 * n * np.maximum(kl, 0)))
            assert np.all(cdf <= bound * (1 + 1e-12) + 1e-300)


# --------------------------------------------------------------------------- F(n, eps) exactly
@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 25, 40])
@pytest.mark.parametrize("eps,a", [("0.1", None), ("0.05", None), ("0.3", None), ("0.1", "0.2"), ("0.05", "0.3"),
                                   ("0.25", "0.1"), ("0.125", None)])
def test_factor_equals_exact_rational_supremum(n, eps, a):
    """F is the supremum over all p: every upper and lower breakpoint (and a) in exact arithmetic."""
    exact = exact_factor(n, Fraction(eps), None if a is None else Fraction(a))
    got = B.log_tail_factor(n, eps, a)
    assert got == pytest.approx(math.log(exact) if exact > 0 else -np.inf, rel=1e-12, abs=1e-13)


def test_factor_is_the_sup_over_a_grid_of_p():
    """No p on a fine rational grid exceeds F (the breakpoints hold the supremum)."""
    n, eps = 37, Fraction(7, 100)
    f = B.tail_factor(n, "0.07")
    for i in range(1, 2000):
        p = Fraction(i, 2000)
        g = exact_sf(math.ceil(n * (p + eps)), n, p) + exact_cdf(math.floor(n * (p - eps)), n, p)
        assert float(g) <= f * (1 + 1e-12)


@pytest.mark.parametrize("n,eps,a,sides", [
    (16_651, 0.01, None, "two-sided"), (16_650, 0.01, None, "two-sided"), (6051, 0.01, 0.1, "two-sided"),
    (86_501, 0.01, None, "two-sided"), (2266, 0.15, None, "two-sided"), (2597, 0.3, None, "two-sided"),
    (12_000, 0.02, 0.2, "upper"), (12_000, 0.02, 0.2, "lower"), (9000, 0.004, None, "upper"),
    (30_000, 0.05, 0.45, "two-sided"), (500, 0.5, None, "two-sided"), (300, 0.2, 0.3, "two-sided"),
])
def test_factor_matches_brute_force(n, eps, a, sides):
    """Every candidate evaluated with scipy.stats: the pruned maximum is the same."""
    assert B.log_tail_factor(n, eps, a, sides) == pytest.approx(brute_log_factor(n, eps, a, sides), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 6000), eps=st.sampled_from([0.001, 0.004, 0.01, 0.02, 0.03, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45]),
       a=st.sampled_from([None, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6]), sides=st.sampled_from(B.SIDES))
def test_factor_matches_brute_force_random(n, eps, a, sides):
    want = brute_log_factor(n, eps, a, sides)
    if not np.isfinite(want) or want < -700:  # scipy's logsf underflows there; see the deep-tail tests
        return
    assert B.log_tail_factor(n, eps, a, sides) == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_factor_deep_below_float_range():
    """eps = 0.9, error rate <= 0.3: the worst case is p = 0.1 with every label wrong, 0.1**777."""
    assert B.log_tail_factor(777, "0.9", "0.3") == pytest.approx(777 * math.log(0.1), rel=1e-13)
    assert B.tail_factor(777, "0.9", "0.3") == 0.0  # underflows as a float: use the log


def test_batches_equal_single_calls():
    ns = np.arange(16_640, 16_700)
    together = B.log_tail_factor(ns, "0.01")
    B.clear_cache()
    alone = np.array([B.log_tail_factor(int(n), "0.01") for n in ns[::7]])
    np.testing.assert_allclose(together[::7], alone, rtol=0, atol=0)


def test_sawtooth_and_decimal_epsilon():
    """2 n eps = 333 exactly at n = 16,650: the lower threshold is tight there (a sawtooth peak)."""
    f = B.tail_factor(np.arange(16_645, 16_656), 0.01)
    assert np.argmax(f) == 5  # n = 16,650
    assert B.exact_decimal("epsilon", 0.1) == Fraction(1, 10)
    assert B.tail_factor(100, "0.1") == B.tail_factor(100, 0.1)


# --------------------------------------------------------------------------- properties
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 20_000), eps=st.sampled_from(["0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.35"]),
       sides=st.sampled_from(B.SIDES))
def test_factor_at_most_hoeffding(n, eps, sides):
    assert B.log_tail_factor(n, eps, sides=sides) <= B.log_hoeffding_factor(n, float(eps), sides) + 1e-12


@settings(max_examples=40, deadline=None)
@given(n=st.integers(20, 20_000), eps=st.sampled_from(["0.01", "0.02", "0.05", "0.1"]),
       rates=st.lists(st.sampled_from(["0.02", "0.05", "0.1", "0.2", "0.3", "0.45"]), min_size=2, max_size=2))
def test_restricted_factor_grows_with_the_range(n, eps, rates):
    small, big = sorted(rates, key=float)
    f_small, f_big, f_all = (B.log_tail_factor(n, eps, small), B.log_tail_factor(n, eps, big),
                             B.log_tail_factor(n, eps))
    assert f_small <= f_big + 1e-12 <= f_all + 2e-12


@settings(max_examples=40, deadline=None)
@given(n=st.integers(20, 20_000), eps=st.sampled_from(["0.01", "0.03", "0.1"]),
       a=st.sampled_from([None, "0.05", "0.1", "0.3"]))
def test_restricted_factor_below_bennett(n, eps, a):
    """With error rates at most a, Bennett with variance a(1-a) bounds the same event ([2] Prop. 1)."""
    if a is None:
        return
    v = float(a) * (1 - float(a))
    assert B.log_tail_factor(n, eps, a) <= B.log_bennett_factor(n, float(eps), v) + 1e-12


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30_000), eps=st.sampled_from(["0.01", "0.02", "0.05", "0.2"]),
       a=st.sampled_from([None, "0.05", "0.1", "0.3"]), sides=st.sampled_from(B.SIDES))
def test_envelope_bounds_factor_and_never_rises(n, eps, a, sides):
    env = B.log_tail_envelope(np.arange(n, n + 40), eps, a, sides)
    assert np.all(np.diff(env) <= 1e-12)
    assert B.log_tail_factor(n, eps, a, sides) <= env[0] + 1e-12


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 20_000), eps=st.sampled_from(["0.01", "0.05", "0.2"]), a=st.sampled_from([None, "0.1"]))
def test_one_sided_factors_bracket_the_two_sided(n, eps, a):
    two = B.log_tail_factor(n, eps, a)
    up, down = B.log_tail_factor(n, eps, a, "upper"), B.log_tail_factor(n, eps, a, "lower")
    assert max(up, down) <= two + 1e-12 and two <= np.logaddexp(up, down) + 1e-12


def test_kl_minimiser_moves_left_as_the_shift_grows():
    """The envelope's O(1) minimum relies on it: where KL(p + e || p) slopes down at a for e = eps,
    it also does for every smaller e (checked on a grid)."""
    from scipy.optimize import minimize_scalar
    prev = 1.0
    for e in np.linspace(0.001, 0.9, 300):
        res = minimize_scalar(lambda p: special.xlogy(p + e, (p + e) / p) + special.xlogy(1 - p - e, (1 - p - e) / (1 - p)),
                              bounds=(1e-9, 1 - e - 1e-9), method="bounded", options={"xatol": 1e-12})
        assert res.x <= prev + 1e-7
        prev = res.x


# --------------------------------------------------------------------------- counts
def test_smallest_labels_one_model():
    """Thm 4's setting (eps = delta = 0.01): Hoeffding 26,492; exact 16,651; known error rate <= 0.1: 6,051."""
    assert B.smallest_labels([0.0], ["0.01"], 0.01) == 16_651
    assert B.smallest_labels([0.0], ["0.01"], 0.01, "0.1") == 6051
    assert B.log_failure(16_651, [0.0], "0.01") < math.log(0.01) <= B.log_failure(16_650, [0.0], "0.01")


def test_smallest_labels_merges_equal_tolerances():
    assert B.smallest_labels([math.log(3), math.log(7)], ["0.05", "0.05"], 0.01) == \
        B.smallest_labels([math.log(10)], ["0.05"], 0.01)


@pytest.mark.parametrize("log_counts,eps,delta", [([0.0], ["0.15"], 0.05), ([math.log(10)], ["0.2"], 0.1),
                                                  ([1.0, 2.0], ["0.2", "0.25"], 0.05)])
def test_smallest_labels_against_exact_rationals(log_counts, eps, delta):
    """Small counts decided entirely in exact arithmetic: n and every n' up to three periods above
    satisfy, n - 1 does not."""
    n = B.smallest_labels(log_counts, eps, delta)
    counts = [Fraction(math.exp(lc)) for lc in log_counts]  # the same real numbers as the engine's

    def lhs(m):
        return sum(c * exact_factor(m, Fraction(e)) for c, e in zip(counts, eps))

    assert lhs(n - 1) >= Fraction(delta)
    period = math.ceil(1 / (2 * min(float(e) for e in eps)))
    for m in range(n, n + 3 * period):
        assert lhs(m) < Fraction(delta), m


# --------------------------------------------------------------------------- Bennett and Bernstein
def test_bennett_reproduces_ease_ml_ci_section_4_1_1():
    """p = 0.1, reliability 0.9999, one accuracy point, 32 steps, delta/2 for the test:
    29,048 (non-adaptive) and 67,706 (fully adaptive) labels, as bounds.ci.bennett_labels."""
    for adaptivity, expected in (("none", 29_048), ("full", 67_706)):
        log_s = ci.log_histories(adaptivity, 32)
        assert B.variance_labels(0.01, 1e-4 / 2, 0.1, log_count=log_s) == expected
        assert ci.bennett_labels(0.01, 0.1, 1e-4 / 2, log_s) == expected


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(1e-3, 0.3), v=st.floats(1e-3, 0.25), delta=st.floats(1e-9, 0.5), log_s=st.floats(0, 50))
def test_bernstein_never_beats_bennett(eps, v, delta, log_s):
    assert B.bernstein_rate(eps, v) <= B.bennett_rate(eps, v) * (1 + 1e-12)
    assert B.variance_labels(eps, delta, v, log_count=log_s, method="bernstein") >= \
        B.variance_labels(eps, delta, v, log_count=log_s)


def test_variance_labels_exact_and_vectorized():
    n = B.variance_labels(np.array([0.01, 0.02]), 0.01, 0.09, log_count=np.log(10))
    for e, count in zip([0.01, 0.02], n):
        rate = B.bennett_rate(e, 0.09)
        assert math.log(20) - count * rate < math.log(0.01) <= math.log(20) - (count - 1) * rate


def test_pattern_two_exact_beats_bennett_and_bernstein():
    """Accuracy at least 0.9 (error <= 0.1), one model, eps = delta = 0.01: exact < Bennett < Bernstein."""
    exact = B.smallest_labels([0.0], ["0.01"], 0.01, "0.1")
    bennett = B.variance_labels(0.01, 0.01, 0.09)
    bernstein = B.variance_labels(0.01, 0.01, 0.09, method="bernstein")
    assert exact < bennett < bernstein < 26_492


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("call,fragment", [
    (lambda: B.log_tail_factor(0, 0.1), "labels must be a whole number >= 1"),
    (lambda: B.log_tail_factor(10, 0.0), "epsilon must be in (0, 1)"),
    (lambda: B.log_tail_factor(10, "1e400"), "epsilon must be"),
    (lambda: B.log_tail_factor(10, 0.1, 1.5), "max_error_rate must be in (0, 1)"),
    (lambda: B.log_tail_factor(10, 0.1, sides="both"), "sides must be one of"),
    (lambda: B.smallest_labels([0.0], [0.1, 0.2], 0.1), "epsilon must be one tolerance per count"),
    (lambda: B.smallest_labels([0.0], [0.1], 1.0), "delta must be in (0, 1)"),
    (lambda: B.variance_labels(0.1, 0.1, -1.0), "variance must be finite numbers > 0"),
    (lambda: B.variance_labels(0.1, 0.1, 0.1, method="chernoff"), "method must be"),
])
def test_bad_input(call, fragment):
    with pytest.raises(InputError) as info:
        call()
    assert fragment in str(info.value)
