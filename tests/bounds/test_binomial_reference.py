"""The exact factor F(n, eps) against references that share none of its code or its reductions.

F(n, eps) = sup_p P(|X/n - p| >= eps) (issue 12; ease.ml/ci, ../shared/seeds/001_*, Section 4.3),
one-sided P(X/n - p >= eps) ("upper") or P(p - X/n >= eps) ("lower"), the supremum over
p in [0, 1] or, with a known error-rate range, [0, a].

The references take the supremum over *every* breakpoint of both kinds, upper ones
``j/n - eps`` and lower ones ``i/n + eps``, plus the range's end, and evaluate the failure
event there directly (thresholds ``ceil(n (p + eps))`` and ``floor(n (p - eps))``): no mirror
images, no candidate ranges, no pruning.  Why that set holds the supremum, for each event:

- upper: on ``(j/n - eps, (j+1)/n - eps]`` the event is ``X >= j + 1`` and its probability
  rises with p, so the supremum is at the right end, an upper breakpoint (or at ``a``);
- lower: on ``[i/n + eps, (i+1)/n + eps)`` the event is ``X <= i`` and its probability falls
  with p, so the supremum is at the left end, a lower breakpoint (below ``eps`` it is 0);
- two-sided: between consecutive breakpoints of either kind both thresholds are fixed and
  ``P(kl < X < ku)`` is unimodal in p (its derivative ``n [b_{n-1}(kl; p) - b_{n-1}(ku - 1; p)]``
  changes sign once), so the failure probability is quasi-convex and the supremum sits at
  an end; at an upper breakpoint the upper tail is inclusive, at a lower one the lower tail.

``test_no_p_beats_the_factor`` checks that argument itself on fine grids of p.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from meter_dashboard.bounds import binomial as B


# --------------------------------------------------------------------------- references
def _top(a, sides):
    """The largest p of the range (two-sided with a >= 1/2 too: that the engine treats it as
    unrestricted, by symmetry, is then checked rather than assumed)."""
    return 1 if a is None else a


def exact_failure(n: int, eps: Fraction, p: Fraction, sides: str) -> Fraction:
    """P_p(failure) as an exact rational, summing the binomial terms of the event."""
    ku, kl = math.ceil(n * (p + eps)), math.floor(n * (p - eps))
    total = Fraction(0)
    for x in range(n + 1):
        upper, lower = x >= ku, x <= kl
        if (sides == "upper" and upper) or (sides == "lower" and lower) or (sides == "two-sided" and (upper or lower)):
            total += math.comb(n, x) * p**x * (1 - p) ** (n - x)
    return total


def breakpoints(n: int, eps: Fraction, top: Fraction) -> list[Fraction]:
    points = {Fraction(0), top}
    for k in range(n + 1):
        points.update(p for p in (Fraction(k, n) - eps, Fraction(k, n) + eps) if 0 <= p <= top)
    return sorted(points)


def exact_factor(n: int, eps: str, a=None, sides: str = "two-sided") -> Fraction:
    e = Fraction(eps)
    top = _top(None if a is None else Fraction(a), sides)
    return max(exact_failure(n, e, p, sides) for p in breakpoints(n, e, top))


def scipy_log_factors(ns, eps: str, a=None, sides: str = "two-sided") -> np.ndarray:
    """log F for every n of ``ns`` at once: every breakpoint of both kinds, scipy's bdtr/bdtrc.

    Thresholds from exact rationals; values below 1e-280 come back as nan (bdtr underflows).
    """
    e = Fraction(eps)
    top = _top(None if a is None else Fraction(a), sides)
    rows, ps, kus, kls = [], [], [], []
    for n in ns:
        for p in breakpoints(int(n), e, top):
            rows.append(int(n))
            ps.append(float(p))
            kus.append(math.ceil(n * (p + e)))
            kls.append(math.floor(n * (p - e)))
    n_arr, p_arr = np.array(rows, dtype=np.int64), np.array(ps)
    ku, kl = np.array(kus, dtype=np.int64), np.array(kls, dtype=np.int64)
    up = np.where(ku <= 0, 1.0, np.where(ku > n_arr, 0.0, special.bdtrc(np.clip(ku - 1, 0, n_arr), n_arr, p_arr)))
    down = np.where(kl < 0, 0.0, special.bdtr(np.clip(kl, 0, n_arr), n_arr, p_arr))
    value = {"upper": up, "lower": down, "two-sided": np.minimum(up + down, 1.0)}[sides]
    order = np.unique(n_arr, return_index=True)[1]  # rows are grouped by n
    best = np.maximum.reduceat(value, order)
    with np.errstate(divide="ignore"):
        return np.where(best > 1e-280, np.log(best), np.nan)


# --------------------------------------------------------------------------- issue 12 regression
REGRESSION = [  # tiny eps, small n: n eps and 2 n eps whole numbers or just below (windows, brackets)
    (257, "0.001"), (300, "0.001"), (499, "0.001"), (500, "0.001"), (501, "0.001"), (999, "0.001"),
    (1000, "0.001"), (1001, "0.001"), (1999, "0.001"), (2000, "0.001"), (249, "0.004"), (250, "0.004"),
    (251, "0.004"), (499, "0.002"), (500, "0.002"), (399, "0.0025"), (400, "0.0025"), (800, "0.0025"),
    (257, "0.0001"), (5000, "0.0001"), (9999, "0.0001"), (10000, "0.0001"), (511, "0.00390625"),
    (512, "0.00390625"),
]


@pytest.mark.parametrize("sides", B.SIDES)
@pytest.mark.parametrize("a", [None, "0.3", "0.6", "0.999"])
@pytest.mark.parametrize("n,eps", REGRESSION)
def test_tiny_epsilon_regression(n, eps, a, sides):
    """Was log F(257, 0.001, upper) = -0.669 (a candidate window emptied by a bound that says
    nothing when n eps < 1) and one-sided ranges with a >= 1/2 were ignored; brute force:
    -0.2571 = 257 log(0.999), the worst case p = 0.999 with every label wrong."""
    want = scipy_log_factors([n], eps, a, sides)[0]
    got = B.log_tail_factor(n, eps, a, sides)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12), (got, want)  # bdtr: ~1e-12 relative


def test_the_reported_case():
    assert B.log_tail_factor(257, 0.001, None, "upper") == pytest.approx(257 * math.log(0.999), rel=1e-12)
    assert B.log_tail_factor(257, 0.001, 0.6, "upper") < B.log_tail_factor(257, 0.001, None, "upper") - 0.3
    assert B.log_tail_factor(2000, 0.05, 0.5, "lower") < B.log_tail_factor(2000, 0.05, None, "lower")
    assert B.log_tail_factor(2000, 0.05, 0.5) == B.log_tail_factor(2000, 0.05)  # two-sided: symmetric


# --------------------------------------------------------------------------- exact rationals, small n
@pytest.mark.parametrize("sides", B.SIDES)
@pytest.mark.parametrize("eps,a", [("0.1", None), ("0.05", "0.2"), ("0.3", None), ("0.02", "0.6"),
                                   ("0.125", "0.5"), ("0.25", "0.9")])
def test_factor_equals_exact_rational_supremum(eps, a, sides):
    for n in (1, 2, 3, 5, 8, 13, 24, 31):
        want = exact_factor(n, eps, a, sides)
        got = B.log_tail_factor(n, eps, a, sides)
        assert got == pytest.approx(math.log(want) if want > 0 else -math.inf, rel=1e-12, abs=1e-13)


@pytest.mark.parametrize("sides", B.SIDES)
@pytest.mark.parametrize("n,eps,a", [(37, "0.07", None), (29, "0.11", "0.3"), (23, "0.02", "0.7")])
def test_no_p_beats_the_factor(n, eps, a, sides):
    """The breakpoint argument itself: no p of a fine rational grid exceeds F."""
    e = Fraction(eps)
    top = _top(None if a is None else Fraction(a), sides)
    f = Fraction(B.tail_factor(n, eps, a, sides))
    for i in range(0, 1501):
        p = top * Fraction(i, 1500)
        assert exact_failure(n, e, p, sides) <= f * (1 + Fraction(1, 10**11)), p


# --------------------------------------------------------------------------- systematic grid
GRID_EPS = ["0.001", "0.0025", "0.01", "0.05", "0.125", "0.3"]


@pytest.mark.parametrize("sides", B.SIDES)
@pytest.mark.parametrize("a", [None, "0.05", "0.3", "0.5", "0.8"])
@pytest.mark.parametrize("eps", GRID_EPS)
def test_every_n_up_to_400(eps, a, sides):
    """Every n from 1 to 400 (the pruning starts above 256 candidates)."""
    ns = np.arange(1, 401)
    want = scipy_log_factors(ns, eps, a, sides)
    got = B.log_tail_factor(ns, eps, a, sides)
    ok = np.isnan(want) | np.isclose(got, want, rtol=1e-9, atol=1e-12)
    assert ok.all(), [(int(n), g, w) for n, g, w in zip(ns[~ok], got[~ok], want[~ok])][:5]


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 5000), eps=st.sampled_from(["0.0005", "0.001", "0.004", "0.01", "0.02", "0.05", "0.1",
                                                   "0.2", "0.35", "0.6"]),
       a=st.sampled_from([None, "0.02", "0.1", "0.3", "0.45", "0.5", "0.7", "0.95"]), sides=st.sampled_from(B.SIDES))
def test_random_n_against_every_breakpoint(n, eps, a, sides):
    want = scipy_log_factors([n], eps, a, sides)[0]
    if np.isnan(want):
        return  # below bdtr's range: see the deep-tail tests of test_binomial.py
    assert B.log_tail_factor(n, eps, a, sides) == pytest.approx(want, rel=1e-9, abs=1e-12)
