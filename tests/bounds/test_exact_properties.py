"""Hypothesis properties of the exact binomial count (issue 18), checked independently of the engine.

For random settings (every variant, one to three tolerances, delta, T, tenants, reverts, an
error-rate range) the count n of ``meter.labels(..., bound="binomial")`` must satisfy the union
bound ``sum_k S_k F(n, eps_k) < delta``, n - 1 must violate it, and so must every n' in
[n, n + 3 periods] satisfy it (period ``ceil(1/(2 eps_1))``: the sawtooth of F).  F is
evaluated here by brute force, every breakpoint with scipy.stats (not the engine's pruning,
tails or search), and the multiplicities S_k come from ``meter.log_tree_sizes`` (Thms 1-2, Cors
1-2, Appendix B, Eqs. 13-16 of ease.ml/meter; tested against enumerated histories in
test_meter.py).  Settings are kept small (tolerances >= 0.04) so that brute force is cheap.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from meter_dashboard.bounds import meter as M


def brute_log_factor(n: int, eps: float, a: float | None) -> float:
    """log F(n, eps): every upper breakpoint p_j = j/n - eps (and, with a range, the mirrored ones and p = a)."""
    e = Fraction(repr(eps))
    c = math.ceil(2 * n * e)
    j = np.arange(math.ceil(n * e), n + 1)
    p = (j - float(n * e)) / n
    if a is not None and a < 0.5:
        keep = (p <= a + 1e-12) | (p >= 1 - a - 1e-12)
        j, p = j[keep], p[keep]
    with np.errstate(divide="ignore"):
        g = np.logaddexp(stats.binom.logsf(j - 1, n, p), stats.binom.logcdf(j - c, n, p))
    best = float(np.where(p > 0, g, -np.inf).max()) if j.size else -math.inf
    if a is not None and a < 0.5:
        af = Fraction(repr(a))
        point = np.logaddexp(stats.binom.logsf(math.ceil(n * (af + e)) - 1, n, a),
                             stats.binom.logcdf(math.floor(n * (af - e)), n, a))
        best = max(best, float(point))
    return best


def union_terms(variant, eps, steps, kw):
    """(log S_k, eps_k) of the variant's union bound (resampling: one of its T fresh sets)."""
    if variant in M.ADAPTIVE_VARIANTS:
        return M.log_tree_sizes(variant, len(eps), steps, **kw).tolist(), list(eps)
    return [0.0 if variant == "single_model" else math.log(steps)], [eps[0]]


def log_union(n, logs, eps, a):
    return float(np.logaddexp.reduce([lg + brute_log_factor(n, e, a) for lg, e in zip(logs, eps)]))


tolerances = st.lists(st.sampled_from([0.04, 0.05, 0.06, 0.08, 0.1, 0.125, 0.15, 0.2]), min_size=1,
                      max_size=3).map(sorted)


@st.composite
def settings_(draw):
    variant = draw(st.sampled_from(M.VARIANTS))
    steps = draw(st.integers(1, 12))
    kw = {}
    if variant in M.ADAPTIVE_VARIANTS and steps >= 2:
        kind = draw(st.sampled_from(["none", "tenants", "reverts"]))
        if kind == "tenants":
            kw["tenants"] = draw(st.integers(2, min(3, steps)))
        elif kind == "reverts":
            kw["reverts"] = sorted(draw(st.lists(st.integers(2, steps), min_size=1, max_size=2)))
    a = draw(st.sampled_from([None, None, 0.05, 0.1, 0.25, 0.4]))
    return variant, draw(tolerances), draw(st.sampled_from([1e-4, 1e-3, 0.01, 0.05, 0.2])), steps, kw, a


@settings(max_examples=25, deadline=None)
@given(setting=settings_())
def test_count_satisfies_predecessor_fails_and_the_next_three_periods_hold(setting):
    variant, eps, delta, steps, kw, a = setting
    n = M.labels(variant, eps, delta, steps, bound="binomial", max_error_rate=a, **kw)
    per_set = n // steps if variant == "resampling" else n
    logs, row = union_terms(variant, eps, steps, kw)
    log_d = math.log(delta)
    if per_set > 1:
        assert log_union(per_set - 1, logs, row, a) >= log_d, "n - 1 must violate the union bound"
    period = math.ceil(1 / (2 * row[0]))
    for m in range(per_set, per_set + 3 * period + 1):
        assert log_union(m, logs, row, a) < log_d, f"{m} labels must satisfy the union bound"


@settings(max_examples=15, deadline=None)
@given(setting=settings_(), extra=st.integers(0, 6))
def test_a_curve_equals_its_points(setting, extra):
    """The bracketed search along T gives every point's own count (brackets change the work, not the answer)."""
    variant, eps, delta, steps, kw, a = setting
    kw.pop("tenants", None)
    if kw.get("reverts"):
        kw["reverts"] = [r for r in kw["reverts"] if r <= steps] or None
    ts = np.arange(steps, steps + extra + 1)
    curve = M.labels(variant, eps, delta, ts, bound="binomial", max_error_rate=a, **kw)
    points = [M.labels(variant, eps, delta, int(t), bound="binomial", max_error_rate=a, **kw) for t in ts]
    assert np.atleast_1d(curve).tolist() == points
