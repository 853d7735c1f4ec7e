"""Label counts for every ease.ml/meter variant (Hubis, Wu & Zhang, 2019).

Symbols (the paper's, mapped once): ``n`` = labels = |D_test|; ``m`` = signals;
``T`` = steps; ``k`` = signal index 1..m; ``epsilon[k-1]`` = eps_k, the bound on the
distributional overfitting guaranteed with signal k; ``delta`` = 1 - confidence;
``tenants`` = the l developers whose chains are T_1..T_l steps long (sum T);
``reverts`` = revert ("time travel") steps t_1 <= ... <= t_B, t'_i = t_i - (i - 1).

Every count is the smallest integer ``n`` that satisfies the paper's strict inequality
(``n`` satisfies it, ``n - 1`` does not).  Everything is computed in log space and is
vectorized: ``steps`` and ``delta`` may be arrays and ``epsilon`` an array of shape
(..., m); all broadcast together, so a curve over T is one call.

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.
   Thm 4 (Eq. 21), Eq. 1, Eq. 2 / Eq. 19, Thm 1 / Cor 1 (Eqs. 3, 5), Thm 2 / Cor 2
   (Eqs. 4, 6, 27), Appendix B (Eqs. 29-30 and the unequal-T_i form), Eqs. 13-16.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._validation import InputError, check_int, check_non_decreasing, check_probability
from .effort import labeling_hours  # re-exported: one implementation for every family
from ._numeric import (
    log_binom,
    log_geometric_count,
    log_sum_exp,
    smallest_integer_satisfying,
    solve_log_sum_exp,
)

__all__ = [
    "VARIANTS",
    "ADAPTIVE_VARIANTS",
    "labels",
    "all_labels",
    "log_tree_sizes",
    "failure_probability",
    "max_steps",
    "min_epsilon",
    "labeling_hours",
    "validate_epsilon",
    "validate_reverts",
    "split_steps",
    "STEPS_CAP",
]

#: Variant names, in the order the paper introduces them.
VARIANTS = ("single_model", "no_adaptivity", "resampling", "regular", "incremental")
#: The meters proper: their counts depend on the signals, tenants and reverts.
ADAPTIVE_VARIANTS = ("regular", "incremental")

#: ``max_steps`` searches T up to this many steps and reports ``math.inf`` beyond.
STEPS_CAP = 10**12

_LOG2 = math.log(2.0)


# --------------------------------------------------------------------------- validation
def validate_epsilon(epsilon) -> np.ndarray:
    """The tolerance vector as a float array (..., m): every eps_k in (0, 1), non-decreasing."""
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    if eps.size == 0:
        raise InputError("epsilon", "at least one tolerance", list(eps))
    if np.any(~np.isfinite(eps)) or np.any(eps <= 0) or np.any(eps >= 1):
        bad = eps[~((eps > 0) & (eps < 1))]
        raise InputError("epsilon", "tolerances in (0, 1)", bad.tolist() if bad.size else eps.tolist())
    if eps.ndim == 1:
        check_non_decreasing("epsilon", eps.tolist(), "non-decreasing (eps_1 <= eps_2 <= ... <= eps_m)")
    elif np.any(np.diff(eps, axis=-1) < 0):
        raise InputError("epsilon", "non-decreasing along its last axis (eps_1 <= ... <= eps_m)", eps.tolist())
    return eps


def _validate_delta(delta) -> np.ndarray:
    d = np.asarray(delta, dtype=float)
    if d.ndim == 0:
        check_probability("delta", float(d))
    elif np.any(~((d > 0) & (d < 1))):
        raise InputError("delta", "in (0, 1)", d[~((d > 0) & (d < 1))].tolist())
    return d


def _validate_steps(steps) -> np.ndarray:
    t = np.asarray(steps)
    if t.ndim == 0:
        check_int("steps", t.item(), minimum=1)
        return t.astype(float)
    tf = t.astype(float)
    if np.any(~np.isfinite(tf)) or np.any(tf < 1) or np.any(tf != np.floor(tf)):
        raise InputError("steps", "whole numbers >= 1", t[(tf < 1) | (tf != np.floor(tf))].tolist())
    return tf


def validate_reverts(reverts: Sequence[int] | None, steps: int | None = None) -> np.ndarray:
    """Revert steps t_1 <= ... <= t_B as an int array, checked against Eqs. 13-16.

    Each shifted position t'_i = t_i - (i - 1) must be >= 1 (a revert undoes a submission
    that exists), B <= T, and t_B <= T when ``steps`` is given.
    """
    if reverts is None:
        return np.zeros(0, dtype=np.int64)
    items = np.atleast_1d(np.asarray(reverts, dtype=object)).tolist()
    t = np.asarray([check_int("reverts", v, minimum=1) for v in items], dtype=np.int64)
    if t.size == 0:
        return t
    check_non_decreasing("reverts", t.tolist(), "non-decreasing step numbers (t_1 <= t_2 <= ... <= t_B)")
    shifted = t - np.arange(t.size)
    if np.any(shifted < 1):
        i = int(np.argmax(shifted < 1))
        raise InputError(
            "reverts",
            f"positions with t'_i = t_i - (i - 1) >= 1 (revert {i + 1} at step {int(t[i])} "
            f"would undo a submission that does not exist)",
            t.tolist(),
        )
    if steps is not None:
        if t.size > steps:
            raise InputError("reverts", f"at most steps = {steps} reverts (B <= T)", t.tolist())
        if t[-1] > steps:
            raise InputError("reverts", f"steps within 1..{steps} (t_B <= T)", t.tolist())
    return t


def split_steps(steps, tenants: int) -> np.ndarray:
    """Split T steps evenly among ``tenants``: shape (..., l), the first T mod l get one more."""
    t = np.asarray(steps, dtype=float)
    base = np.floor(t / tenants)
    extra = t - base * tenants
    idx = np.arange(tenants)
    return base[..., None] + (idx < extra[..., None])


def _chains(steps, tenants, tenant_steps):
    """Chain lengths (..., l) from either explicit tenant steps or an even split."""
    if tenant_steps is not None:
        ts = np.asarray([check_int("tenant_steps", v, minimum=0) for v in tenant_steps], dtype=float)
        if ts.size == 0:
            raise InputError("tenant_steps", "at least one tenant's steps", list(tenant_steps))
        if np.any(ts < 1):
            raise InputError("tenant_steps", "whole numbers >= 1 (each tenant submits at least once)", list(tenant_steps))
        t = np.asarray(steps, dtype=float)
        if np.any(t != ts.sum()):
            shown = int(t) if t.ndim == 0 else t.tolist()
            raise InputError("tenant_steps", f"steps per tenant summing to steps = {shown}", [int(v) for v in ts])
        return np.broadcast_to(ts, t.shape + ts.shape)
    tenants = check_int("tenants", tenants, minimum=1)
    return split_steps(steps, tenants)


# --------------------------------------------------------------------------- tree sizes
def log_tree_sizes(meter: str, signals: int, steps, *, tenants: int = 1, tenant_steps=None, reverts=None):
    """Log of the number of possible submissions counted against each eps_k.

    Returns ``log S_k`` with shape ``steps.shape + (m,)`` where, summed over the
    tenants' chains (Appendix B) with the chain's reverts (Eqs. 13, 15):

    - regular (Cor 1, Eq. 13): S_k = sum_i [(m**(T_i - B_i) - 1)/(m - 1) + sum_j m**(t'_j - 1)]
      (the same for every k: each signal labels 1/m of the perfect m-ary tree);
    - incremental (Cor 2, Eq. 15): S_k = sum_i [C(k + T_i - B_i - 1, k) + sum_j C(k + t'_j - 2, k - 1)].

    Reverts are global step numbers; with several tenants (who submit one after the
    other, tenant 1 first) each revert belongs to the chain containing its step and is
    shifted within that chain.  For arrays of ``steps`` (curves), reverts after T are
    not counted at that T.  Revert savings hold only when the revert steps are fixed
    in advance.
    """
    if meter not in ADAPTIVE_VARIANTS:
        raise InputError("meter", "'regular' or 'incremental'", meter)
    m = check_int("signals", signals, minimum=1)
    t = np.asarray(steps, dtype=float)
    chains = _chains(t, tenants, tenant_steps)  # (..., l)
    revert_steps = validate_reverts(reverts)
    starts = np.cumsum(chains, axis=-1) - chains  # (..., l)
    ends = starts + chains
    k = np.arange(1, m + 1, dtype=float)

    if revert_steps.size:
        r = revert_steps.astype(float)  # (B,)
        inside = (r > starts[..., None]) & (r <= ends[..., None])  # (..., l, B)
        rank = np.cumsum(inside, axis=-1) - 1
        shifted = np.where(inside, r - starts[..., None] - rank, np.nan)
        if np.any(inside & (shifted < 1)):
            raise InputError(
                "reverts",
                "positions with t'_i >= 1 inside each tenant's chain of steps",
                revert_steps.tolist(),
            )
        b_chain = inside.sum(axis=-1)  # (..., l)
    else:
        inside = None
        b_chain = np.zeros_like(chains)
    remaining = chains - b_chain

    if meter == "regular":
        main = log_geometric_count(m, remaining)  # (..., l)
        if inside is not None:
            with np.errstate(invalid="ignore"):
                rev = np.where(inside, (shifted - 1.0) * math.log(m), -np.inf)
            main = np.logaddexp(main, log_sum_exp(rev, axis=-1))
        per_chain = main[..., None] + np.zeros(m)  # (..., l, m)
    else:
        per_chain = log_binom(k + remaining[..., None] - 1.0, k)  # (..., l, m)
        if inside is not None:
            with np.errstate(invalid="ignore"):
                terms = log_binom(k + shifted[..., None] - 2.0, k - 1.0)  # (..., l, B, m)
            terms = np.where(inside[..., None], terms, -np.inf)
            per_chain = np.logaddexp(per_chain, log_sum_exp(terms, axis=-2))
    return log_sum_exp(per_chain, axis=-2)  # (..., m)


# --------------------------------------------------------------------------- coefficients
def _union_terms(variant, eps, steps, tenants, tenant_steps, reverts):
    """(a, b_unit, repeat): the union bound sum_j exp(a_j - b_unit_j * n) < delta.

    ``repeat`` is the number of fresh test sets (T for resampling, else 1).
    """
    first = eps[..., :1]
    if variant == "single_model":  # Thm 4: 2 exp(-2 n eps^2) < delta
        a = np.full(np.broadcast_shapes(first.shape, steps.shape + (1,)), _LOG2)
        return a, 2.0 * first**2, 1.0
    if variant in ("no_adaptivity", "resampling"):  # Eq. 1: 2T exp(-2 n eps^2) < delta
        a = (_LOG2 + np.log(steps))[..., None]
        return a, 2.0 * first**2, (steps if variant == "resampling" else 1.0)
    if variant in ADAPTIVE_VARIANTS:
        log_sizes = log_tree_sizes(
            variant, eps.shape[-1], steps, tenants=tenants, tenant_steps=tenant_steps, reverts=reverts
        )
        return _LOG2 + log_sizes, 2.0 * eps**2, 1.0
    raise InputError("variant", "one of " + ", ".join(VARIANTS), variant)


def _prepare(epsilon, delta, steps, signals):
    eps = validate_epsilon(epsilon)
    if signals is not None:
        m = check_int("signals", signals, minimum=1)
        if eps.shape[-1] == 1:
            eps = np.repeat(eps, m, axis=-1)
        elif eps.shape[-1] != m:
            raise InputError("signals", f"the number of tolerances given ({eps.shape[-1]}) or omitted", m)
    d = _validate_delta(delta)
    t = _validate_steps(steps)
    return eps, d, t


def labels(variant: str, epsilon, delta, steps, *, signals: int | None = None, tenants: int = 1,
           tenant_steps=None, reverts=None):
    """The number of test labels ``variant`` needs.

    Parameters
    ----------
    variant : {'single_model', 'no_adaptivity', 'resampling', 'regular', 'incremental'}
    epsilon : array_like, shape (..., m)
        Tolerances eps_1 <= ... <= eps_m in (0, 1).  One value with ``signals=m`` is the
        uniform meter.  ``single_model``, ``no_adaptivity`` and ``resampling`` use eps_1.
    delta : float or array_like
        Failure probability in (0, 1); the guarantee holds with probability 1 - delta.
    steps : int or array_like of int
        T, the development steps (submissions) the test set must support.
    signals : int, optional
        m, when a single epsilon is given.
    tenants : int, default 1
        l tenants who split T evenly (Appendix B).  Ignored when ``tenant_steps`` is given.
    tenant_steps : sequence of int, optional
        T_1..T_l, summing to ``steps`` (Appendix B, unequal form).
    reverts : sequence of int, optional
        Revert steps t_1 <= ... <= t_B fixed in advance (Eqs. 13-16).

    Returns
    -------
    int or ndarray of int64
        Shape: the broadcast of ``steps``, ``delta`` and ``epsilon[..., 0]``.

    Notes
    -----
    - single_model (Thm 4, Eq. 21): 2 exp(-2 n eps_1^2) < delta.
    - no_adaptivity (Eq. 1): 2 T exp(-2 n eps_1^2) < delta.
    - resampling (Eq. 2 / Eq. 19): T fresh test sets, each of the no_adaptivity size.
    - regular (Thm 1, Cor 1, Eq. 5): sum_k 2 (m^T - 1)/(m - 1) exp(-2 n eps_k^2) < delta.
    - incremental (Thm 2, Cor 2, Eq. 6): sum_k 2 C(k + T - 1, k) exp(-2 n eps_k^2) < delta.
    - tenants and reverts: see :func:`log_tree_sizes`.

    Examples
    --------
    >>> labels("incremental", [0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 10)
    38005
    >>> labels("regular", 0.01, 0.01, 10, signals=5)
    108080
    """
    eps, d, t = _prepare(epsilon, delta, steps, signals)
    if reverts is not None and t.ndim == 0:
        validate_reverts(reverts, int(t))
    a, b, repeat = _union_terms(variant, eps, t, tenants, tenant_steps, reverts)
    n = smallest_integer_satisfying(a, b, np.log(d))
    total = (n * np.asarray(repeat, dtype=np.int64)) if variant == "resampling" else n
    total = np.asarray(total, dtype=np.int64)
    return int(total) if total.ndim == 0 else total


def all_labels(epsilon, delta, steps, *, variants=VARIANTS, **kwargs) -> dict:
    """``{variant: labels(variant, ...)}`` for several variants, solved in one batch.

    Same arguments as :func:`labels`.  The union-bound terms of every variant are padded
    to a common width and stacked, so the whole table (or every curve at once) is one
    vectorized root solve instead of one per variant.
    """
    signals = kwargs.pop("signals", None)
    tenants = kwargs.pop("tenants", 1)
    tenant_steps = kwargs.pop("tenant_steps", None)
    reverts = kwargs.pop("reverts", None)
    if kwargs:
        raise TypeError(f"unexpected arguments: {', '.join(kwargs)}")
    eps, d, t = _prepare(epsilon, delta, steps, signals)
    if reverts is not None and t.ndim == 0:
        validate_reverts(reverts, int(t))
    parts = [_union_terms(v, eps, t, tenants, tenant_steps, reverts) for v in variants]
    width = max(a.shape[-1] for a, _, _ in parts)
    shape = np.broadcast_shapes(d.shape, *(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]) for a, b, _ in parts))
    a_all = np.full((len(parts),) + shape + (width,), -np.inf)
    b_all = np.ones((len(parts),) + shape + (width,))
    for i, (a, b, _) in enumerate(parts):
        j = a.shape[-1]
        a_all[i, ..., :j] = np.broadcast_to(a, shape + (j,))
        b_all[i, ..., :j] = np.broadcast_to(b, shape + (j,))
    n = smallest_integer_satisfying(a_all, b_all, np.log(d))
    out = {}
    for i, (v, (_, _, repeat)) in enumerate(zip(variants, parts)):
        total = np.asarray(n[i] * (np.asarray(repeat).astype(np.int64) if v == "resampling" else 1), dtype=np.int64)
        out[v] = int(total) if total.ndim == 0 else total
    return out


# --------------------------------------------------------------------------- inverse questions
def failure_probability(variant: str, n, epsilon, steps, *, signals=None, tenants=1, tenant_steps=None,
                        reverts=None, log: bool = False):
    """The delta a test set of ``n`` labels guarantees: the union bound's left side.

    Returns delta (or ``log(delta)`` when ``log=True``); values >= 1 mean no guarantee.
    For resampling, ``n`` is the total split into T equal test sets (floor(n / T) each).
    The confidence is ``1 - delta``.
    """
    eps, _, t = _prepare(epsilon, 0.5, steps, signals)
    n = np.asarray(n, dtype=float)
    if np.any(n < 0):
        raise InputError("labels", "a whole number >= 0", n.tolist())
    a, b, repeat = _union_terms(variant, eps, t, tenants, tenant_steps, reverts)
    per_set = np.floor(n / repeat) if variant == "resampling" else n
    log_delta = log_sum_exp(a - b * np.asarray(per_set)[..., None])
    if log:
        return log_delta
    with np.errstate(over="ignore"):
        return np.exp(log_delta)


def min_epsilon(variant: str, n, epsilon, delta, steps, *, signals=None, tenants=1, tenant_steps=None,
                reverts=None):
    """The smallest eps_1 a budget of ``n`` labels supports, the eps vector scaled together.

    The shape of the tolerance vector is kept (eps_k / eps_1 fixed); returns the infimum
    eps_1* such that every eps_1 > eps_1* satisfies the strict inequality.  Values >= 1
    mean the budget supports no meaningful tolerance.
    """
    eps, d, t = _prepare(epsilon, delta, steps, signals)
    n = np.asarray(n, dtype=float)
    if np.any(n < 1):
        raise InputError("labels", "a whole number >= 1", n.tolist())
    a, b, repeat = _union_terms(variant, eps, t, tenants, tenant_steps, reverts)
    per_set = np.floor(n / repeat) if variant == "resampling" else n
    per_set = np.asarray(per_set, dtype=float)
    if np.any(per_set < 1):
        return np.inf if per_set.ndim == 0 else np.where(per_set < 1, np.inf, np.nan)
    # Unknown u = s**2 where eps = s * eps_base: sum exp(a - (b n) u) < delta.
    u = solve_log_sum_exp(a, b * per_set[..., None], np.log(d))
    return eps[..., 0] * np.sqrt(u)


def max_steps(variant: str, n, epsilon, delta, *, signals=None, tenants: int = 1, reverts=None):
    """The largest T whose label count fits in a budget of ``n`` labels.

    Tenants split every T evenly; reverts keep their fixed steps and count only once T
    reaches them.  Returns 0 when even T = 1 does not fit, ``math.inf`` when T beyond
    :data:`STEPS_CAP` still fits.  ``single_model`` supports one model: 1 or 0.
    """
    n = check_int("labels", n, minimum=0)

    def need(ts):
        return labels(variant, epsilon, delta, np.asarray(ts, dtype=float), signals=signals,
                      tenants=tenants, reverts=reverts)

    if variant == "single_model":
        return 1 if need(np.array([1]))[0] <= n else 0
    # Bracket by powers of two, then narrow with vectorized grids (3 or 4 evaluations).
    powers = 2.0 ** np.arange(0, int(math.log2(STEPS_CAP)) + 2)
    fits = need(powers) <= n
    if not fits[0]:
        return 0
    if fits.all():
        return math.inf
    hi_idx = int(np.argmin(fits))
    lo, hi = int(powers[hi_idx - 1]), int(powers[hi_idx])  # need(lo) <= n < need(hi)
    while hi - lo > 1:
        grid = np.unique(np.linspace(lo, hi, num=min(hi - lo + 1, 2049)).round())
        ok = need(grid) <= n
        last_ok = int(np.flatnonzero(ok)[-1])
        lo, hi = int(grid[last_ok]), int(grid[last_ok + 1])
    return lo
