"""Label counts for every ease.ml/meter variant (Hubis, Wu & Zhang, 2019).

Symbols (the paper's, mapped once): ``n`` = labels = |D_test|; ``m`` = signals;
``T`` = steps; ``k`` = signal index 1..m; ``epsilon[k-1]`` = eps_k, the bound on the
distributional overfitting guaranteed with signal k; ``delta`` = 1 - confidence;
``tenants`` = the l developers whose chains are T_1..T_l steps long (sum T);
``reverts`` = revert ("time travel") steps t_1 <= ... <= t_B, t'_i = t_i - (i - 1).

Every count is the smallest integer ``n`` that satisfies the paper's strict inequality
(``n`` satisfies it, ``n - 1`` does not), as a Python int (or int64 array): checked in
float64 and re-decided in Decimal when too close to call; counts above
:data:`LABELS_CAP` are refused with an ``InputError`` naming ``steps`` or ``epsilon``.
Everything is computed in log space and is vectorized: ``steps`` and ``delta`` may be
arrays and ``epsilon`` an array of shape (..., m); all broadcast together, so a curve
over T is one call (each variant solved with its own number of terms, in chunks).

``bound='binomial'`` replaces each per-model factor ``2 exp(-2 n eps_k^2)`` by the exact
binomial tail ``F(n, eps_k)`` (optionally with ``max_error_rate``), keeping every
multiplicity; see :mod:`meter_dashboard.bounds.binomial`.  That sum is a sawtooth in n,
so its count is the smallest n from which every larger n satisfies the inequality
(n - 1 does not); its inverse questions use F at exactly the given n (above
``binomial.EXACT_LABELS`` labels, F's certified closed-form upper bound: conservative
answers).  Every variant of one setting is one search, a curve over T one bracketed search
per variant (:func:`exact_curve`).  The exact bound's module (and scipy) is imported on first
use only: Hoeffding's counts, curves and inverse answers never load scipy.

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.
   Thm 4 (Eq. 21), Eq. 1, Eq. 2 / Eq. 19, Thm 1 / Cor 1 (Eqs. 3, 5), Thm 2 / Cor 2
   (Eqs. 4, 6, 27), Appendix B (Eqs. 29-30 and the unequal-T_i form), Eqs. 13-16.
.. [2] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Section 4.3 (tight numerical bounds).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
from numpy.typing import ArrayLike

from ..core.validation import InputError, check_int, check_non_decreasing, check_probability
from ._meter_exact import decimal_log_counts, exact_count, float_is_certain
from ._numeric import log_binom, log_geometric_count, log_sum_exp, smallest_integer_satisfying, solve_log_sum_exp
from ._types import BoolArray, FloatArray, IntArray
from .effort import labeling_hours

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
    "BOUNDS",
    "LABELS_CAP",
    "BINOMIAL_LABELS_CAP",
    "exact_curve",
]

#: Variant names, in the order the paper introduces them.
VARIANTS = ("single_model", "no_adaptivity", "resampling", "regular", "incremental")
#: The meters proper: their counts depend on the signals, tenants and reverts.
ADAPTIVE_VARIANTS = ("regular", "incremental")

#: ``max_steps`` searches T up to this many steps and reports ``math.inf`` beyond.
STEPS_CAP = 10**12
#: The per-model factor: Hoeffding's ``2 exp(-2 n eps^2)`` (the paper's) or the exact binomial tail.
BOUNDS = ("hoeffding", "binomial")
#: Counts above this many labels are refused (InputError naming steps or epsilon), never wrapped.
LABELS_CAP = 10**15
#: The exact binomial count is certified up to this many labels (above, use Hoeffding).
BINOMIAL_LABELS_CAP = 2 * 10**7
#: Batch elements x terms per chunk when solving long curves (memory stays linear and small).
_CHUNK_CELLS = 1 << 18

_LOG2 = math.log(2.0)
#: tenant steps T_1..T_l or revert steps t_1..t_B (None: not given)
_Ints = Sequence[int] | None
_Items = list[tuple[FloatArray, list[str], float]]  # (log S_k, eps_k as exact decimals, delta) per element
_Fits = Callable[[ArrayLike], BoolArray]  # fits(T) for an array of T


# --------------------------------------------------------------------------- validation
def validate_epsilon(epsilon: ArrayLike) -> FloatArray:
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


def _validate_delta(delta: ArrayLike) -> FloatArray:
    d = np.asarray(delta, dtype=float)
    if d.ndim == 0:
        check_probability("delta", float(d))
    elif np.any(~((d > 0) & (d < 1))):
        raise InputError("delta", "in (0, 1)", d[~((d > 0) & (d < 1))].tolist())
    return d


def _validate_steps(steps: ArrayLike) -> FloatArray:
    t = np.asarray(steps)
    if t.ndim == 0:
        check_int("steps", t.item(), minimum=1)
        return t.astype(float)
    tf = t.astype(float)
    if np.any(~np.isfinite(tf)) or np.any(tf < 1) or np.any(tf != np.floor(tf)):
        raise InputError("steps", "whole numbers >= 1", t[(tf < 1) | (tf != np.floor(tf))].tolist())
    return tf


def validate_reverts(reverts: Sequence[int] | None, steps: int | None = None) -> IntArray:
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


def split_steps(steps: ArrayLike, tenants: int) -> FloatArray:
    """Split T steps evenly among ``tenants``: shape (..., l), the first T mod l get one more."""
    t = np.asarray(steps, dtype=float)
    base: FloatArray = np.floor(t / tenants)
    extra = t - base * tenants
    idx = np.arange(tenants)
    return base[..., None] + (idx < extra[..., None])


def _chains(steps: ArrayLike, tenants: int, tenant_steps: _Ints) -> FloatArray:
    """Chain lengths (..., l) from either explicit tenant steps or an even split."""
    if tenant_steps is not None:
        ts = np.asarray([check_int("tenant_steps", v, minimum=0) for v in tenant_steps], dtype=float)
        if ts.size == 0:
            raise InputError("tenant_steps", "at least one tenant's steps", list(tenant_steps))
        if np.any(ts < 1):
            raise InputError("tenant_steps", "whole numbers >= 1 (each tenant submits at least once)", list(tenant_steps))
        t = np.asarray(steps, dtype=float)
        if np.any(t != ts.sum()):
            shown = int(t.reshape(-1)[0]) if t.size == 1 else t.tolist()
            raise InputError("tenant_steps", f"steps per tenant summing to steps = {shown}", [int(v) for v in ts])
        return np.broadcast_to(ts, t.shape + ts.shape)
    tenants = check_int("tenants", tenants, minimum=1)
    return split_steps(steps, tenants)


# --------------------------------------------------------------------------- tree sizes
def log_tree_sizes(meter: str, signals: int, steps: ArrayLike, *, tenants: int = 1,
                   tenant_steps: Sequence[int] | None = None, reverts: Sequence[int] | None = None) -> FloatArray:
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
def _union_terms(variant: str, eps: FloatArray, steps: FloatArray, tenants: int, tenant_steps: _Ints,
                 reverts: _Ints) -> tuple[FloatArray, FloatArray, float | FloatArray]:
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


def _prepare(epsilon: ArrayLike, delta: ArrayLike, steps: ArrayLike,
             signals: int | None) -> tuple[FloatArray, FloatArray, FloatArray]:
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


def _check_bound(bound: str, max_error_rate: float | None) -> tuple[str, float | None]:
    """``(bound, a)`` checked: ``max_error_rate`` belongs to the binomial bound only."""
    if bound not in BOUNDS:
        raise InputError("bound", "one of " + ", ".join(repr(b) for b in BOUNDS), bound)
    if max_error_rate is None:
        return bound, None
    if bound != "binomial":
        raise InputError("max_error_rate", "left empty unless bound='binomial' (Hoeffding's factor cannot use it)",
                         max_error_rate)
    return bound, check_probability("max_error_rate", max_error_rate)


def _flat(eps: FloatArray, d: FloatArray, t: FloatArray) -> tuple[tuple[int, ...], FloatArray, FloatArray, FloatArray]:
    """The broadcast batch of (epsilon rows, delta, steps), flattened: ``(shape, eps (N, m), d (N,), t (N,))``."""
    shape = np.broadcast_shapes(eps.shape[:-1], d.shape, t.shape)
    m = eps.shape[-1]
    return (shape, np.broadcast_to(eps, shape + (m,)).reshape(-1, m),
            np.broadcast_to(d, shape).reshape(-1), np.broadcast_to(t, shape).reshape(-1))


def _chunks(size: int, width: int) -> list[slice]:
    step = max(64, _CHUNK_CELLS // max(width, 1))
    return [slice(i, min(i + step, size)) for i in range(0, size, step)]


def _refuse(variant: str, eps_row: FloatArray, delta: float, steps: float, need: float) -> NoReturn:
    """The InputError for a count above :data:`LABELS_CAP`, naming the input that drives it."""
    e1 = float(eps_row[0])
    # one model alone (no steps involved) needs log(2/delta) / (2 eps^2): compared in logs (eps^2 may underflow)
    log_alone = math.log(math.log(2.0 / delta)) - math.log(2.0) - 2.0 * math.log(e1)
    shown = f"about {need:.3g}" if math.isfinite(need) else "more than any test set"
    if isinstance(steps, (int, np.integer)) and abs(int(steps)) >= 10**20:
        steps = float(steps)  # echo a huge whole number in scientific form
    if not log_alone < math.log(LABELS_CAP):
        least = math.sqrt(math.log(2.0 / delta) / (2.0 * LABELS_CAP))
        raise InputError("epsilon", f"at least {least:.3g} for a count of at most {LABELS_CAP:.0e} labels "
                                    f"(this one would need {shown})", e1)
    raise InputError("steps", f"small enough that the {variant} count stays at most {LABELS_CAP:.0e} labels "
                              f"(this one would need {shown})", steps)


def _certify(variant: str, a: FloatArray, b: FloatArray, log_d: FloatArray, n: IntArray, eps: FloatArray,
             d: FloatArray, t: FloatArray, tenants: int, tenant_steps: _Ints, reverts: _Ints,
             exact_steps: int | None) -> IntArray:
    """Make float-solved counts exact: counts whose float check is too close to call go to Decimal."""
    def g(x: FloatArray) -> FloatArray:
        return log_sum_exp(a - b * x[:, None]) - log_d

    nf = n.astype(float)
    scale = np.max(np.where(np.isfinite(a), np.abs(a) + b * nf[:, None], 0.0), axis=-1) + np.abs(log_d)
    now, before = g(nf), g(nf - 1.0)
    for i in np.flatnonzero(~np.array([float_is_certain(x, y, z) for x, y, z in zip(now, before, scale)])):
        steps_i = exact_steps if exact_steps is not None else int(round(float(t[i])))
        logs = decimal_log_counts(variant, eps.shape[-1], steps_i, tenants, tenant_steps, reverts)
        row = eps[i] if variant in ADAPTIVE_VARIANTS else eps[i][:1]
        n[i] = exact_count(logs, row.tolist(), float(d[i]), int(n[i]))
    return n


def _hoeffding_counts(variant: str, eps: FloatArray, d: FloatArray, t: FloatArray, tenants: int, tenant_steps: _Ints,
                      reverts: _Ints, exact_steps: int | None = None, refuse: bool = True) -> IntArray:
    """Hoeffding counts over the batch, chunk by chunk with each variant's own width.

    Exact (float, re-decided in Decimal when too close to call); counts above
    :data:`LABELS_CAP` raise (or, with ``refuse=False``, come back as ``LABELS_CAP + 1``).
    """
    shape, eps_f, d_f, t_f = _flat(eps, d, t)
    out = np.empty(eps_f.shape[0], dtype=np.int64)
    width = eps.shape[-1] * (int(tenants) if tenant_steps is None else len(tenant_steps))
    for sl in _chunks(out.size, width):
        a, b, repeat = _union_terms(variant, eps_f[sl], t_f[sl], tenants, tenant_steps, reverts)
        a, b = np.broadcast_arrays(a, b)
        log_d = np.log(d_f[sl])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            floor = np.max(np.where(np.isfinite(a), (a - log_d[:, None]) / b, -np.inf), axis=-1)
            sets = np.broadcast_to(np.asarray(repeat, dtype=float), floor.shape)
            too_big = ~(floor * sets < LABELS_CAP)  # the root is at least ``floor``
        n = np.full(floor.shape, LABELS_CAP + 1, dtype=np.int64)
        fine = ~too_big
        if np.any(too_big) and refuse:
            i = int(np.flatnonzero(too_big)[0])
            steps_shown = exact_steps if exact_steps is not None else float(t_f[sl][i])
            _refuse(variant, eps_f[sl][i], float(d_f[sl][i]), steps_shown, float(floor[i] * sets[i]))
        if np.any(fine):
            got = smallest_integer_satisfying(a[fine], b[fine], log_d[fine])
            got = _certify(variant, a[fine], b[fine], log_d[fine], got, eps_f[sl][fine], d_f[sl][fine],
                           t_f[sl][fine], tenants, tenant_steps, reverts, exact_steps)
            if variant == "resampling":
                got = got * sets[fine].astype(np.int64)
            n[fine] = np.where(got > LABELS_CAP, LABELS_CAP + 1, got)
            if refuse and np.any(got > LABELS_CAP):
                i = int(np.flatnonzero(fine)[np.argmax(got > LABELS_CAP)])
                _refuse(variant, eps_f[sl][i], float(d_f[sl][i]), exact_steps or float(t_f[sl][i]), float(n[i]))
        out[sl] = n
    return out.reshape(shape)


def _binomial_items(variant: str, eps_f: FloatArray, d_f: FloatArray, t_f: FloatArray, tenants: int,
                    tenant_steps: _Ints, reverts: _Ints) -> tuple[_Items, IntArray]:
    """Per element of a flat batch: ``(log S_k, eps_k as exact decimals, delta)`` and the fresh sets per element."""
    a, _, repeat = _union_terms(variant, eps_f, t_f, tenants, tenant_steps, reverts)
    logs = np.broadcast_to(a, (t_f.size, a.shape[-1])) - _LOG2
    cols = eps_f if variant in ADAPTIVE_VARIANTS else eps_f[:, :1]
    text: dict[float, str] = {}
    rows = [[text.setdefault(e, repr(e)) for e in row] for row in cols.tolist()]
    repeats = np.broadcast_to(np.asarray(repeat, dtype=float), t_f.shape).astype(np.int64)
    return [(logs[i], rows[i], float(d_f[i])) for i in range(t_f.size)], repeats


def _binomial_cap(variant: str, eps: FloatArray, d: FloatArray, t: FloatArray, tenants: int,
                  tenant_steps: _Ints, reverts: _Ints, exact_steps: int | None) -> None:
    """Refuse (``bound``) when Hoeffding's count of some element exceeds :data:`BINOMIAL_LABELS_CAP`."""
    top = _hoeffding_counts(variant, eps, d, t, tenants, tenant_steps, reverts, exact_steps)
    if np.any(np.asarray(top) > BINOMIAL_LABELS_CAP * (np.asarray(t) if variant == "resampling" else 1)):
        raise InputError("bound", f"'hoeffding' for counts above {BINOMIAL_LABELS_CAP:.0e} labels (the exact binomial "
                                  f"count is certified up to there; Hoeffding's needs {int(np.max(top)):,})", "binomial")


def _binomial_counts(variant: str, eps: FloatArray, d: FloatArray, t: FloatArray, tenants: int, tenant_steps: _Ints,
                     reverts: _Ints, rate: float | None, exact_steps: int | None = None) -> IntArray:
    """Exact binomial counts of the whole batch, solved together (a curve coarse to fine, each below Hoeffding's)."""
    return _binomial_all((variant,), eps, d, t, tenants, tenant_steps, reverts, rate, exact_steps)[variant]


def _binomial_all(variants: Sequence[str], eps: FloatArray, d: FloatArray, t: FloatArray, tenants: int,
                  tenant_steps: _Ints, reverts: _Ints, rate: float | None,
                  exact_steps: int | None = None) -> dict[str, IntArray]:
    """Exact counts of several variants: one batch for one setting, a bracketed sequence per variant for curves."""
    for v in variants:
        _binomial_cap(v, eps, d, t, tenants, tenant_steps, reverts, exact_steps)
    shape, eps_f, d_f, t_f = _flat(eps, d, t)
    parts = {v: _binomial_items(v, eps_f, d_f, t_f, tenants, tenant_steps, reverts) for v in variants}
    from .binomial import smallest_labels_batch as solve
    if t_f.size == 1:  # one setting: every variant's union bound in one batch
        got = solve([parts[v][0][0] for v in variants], rate)
        counts = {v: np.array([n]) for v, n in zip(variants, got)}
    else:
        counts = {v: np.array(solve(parts[v][0], rate, sequence=True)) for v in variants}
    return {v: (counts[v] * parts[v][1]).astype(np.int64).reshape(shape) for v in variants}


def _counts(variant: str, eps: FloatArray, d: FloatArray, t: FloatArray, tenants: int, tenant_steps: _Ints,
            reverts: _Ints, bound: str, rate: float | None, exact_steps: int | None = None) -> IntArray:
    if variant not in VARIANTS:
        raise InputError("variant", "one of " + ", ".join(VARIANTS), variant)
    if bound == "binomial":
        return _binomial_counts(variant, eps, d, t, tenants, tenant_steps, reverts, rate, exact_steps)
    return _hoeffding_counts(variant, eps, d, t, tenants, tenant_steps, reverts, exact_steps)


def _as_result(n: ArrayLike) -> int | IntArray:
    n = np.asarray(n, dtype=np.int64)
    return int(n) if n.ndim == 0 else n


def labels(variant: str, epsilon: ArrayLike, delta: ArrayLike, steps: ArrayLike, *, signals: int | None = None,
           tenants: int = 1, tenant_steps: Sequence[int] | None = None, reverts: Sequence[int] | None = None,
           bound: str = "hoeffding", max_error_rate: float | None = None) -> int | IntArray:
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
    bound : {'hoeffding', 'binomial'}, default 'hoeffding'
        The per-model factor inside the union bound: the paper's ``2 exp(-2 n eps_k^2)``, or
        the exact binomial tail ``F(n, eps_k)`` of :mod:`meter_dashboard.bounds.binomial`
        (0/1 losses).  The multiplicities (Thms 1-2, tenants, reverts) are the same.
    max_error_rate : float, optional
        With ``bound='binomial'``: every model the team could submit errs at most this
        (accuracy at least 1 - a); the worst case runs over error rates in [0, a] only.

    Returns
    -------
    int or ndarray of int64
        Shape: the broadcast of ``steps``, ``delta`` and ``epsilon[..., 0]``.  Exact: ``n``
        satisfies the inequality and ``n - 1`` does not (float checks too close to call are
        re-decided in Decimal).  With ``bound='binomial'`` (not monotone in n): n and every
        larger count satisfy it, n - 1 does not.  Counts above :data:`LABELS_CAP` are refused
        with an :class:`InputError` naming ``steps`` or ``epsilon``.

    Notes
    -----
    - single_model (Thm 4, Eq. 21): 2 exp(-2 n eps_1^2) < delta.
    - no_adaptivity (Eq. 1): 2 T exp(-2 n eps_1^2) < delta.
    - resampling (Eq. 2 / Eq. 19): T fresh test sets, each of the no_adaptivity size.
    - regular (Thm 1, Cor 1, Eq. 5): sum_k 2 (m^T - 1)/(m - 1) exp(-2 n eps_k^2) < delta.
    - incremental (Thm 2, Cor 2, Eq. 6): sum_k 2 C(k + T - 1, k) exp(-2 n eps_k^2) < delta.
    - tenants and reverts: see :func:`log_tree_sizes`.
    - binomial: each ``2 exp(-2 n eps_k^2)`` becomes ``F(n, eps_k)``; the event is
      ``|test - true| >= eps_k`` (Renggli et al. 2019, Section 4.3).

    Examples
    --------
    >>> labels("incremental", [0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 10)
    38005
    >>> labels("regular", 0.01, 0.01, 10, signals=5)
    108080
    >>> labels("single_model", 0.01, 0.01, 10, bound="binomial")
    16651
    """
    bound, rate = _check_bound(bound, max_error_rate)
    eps, d, t = _prepare(epsilon, delta, steps, signals)
    exact_steps = check_int("steps", steps, minimum=1) if np.ndim(steps) == 0 else None
    if reverts is not None and t.ndim == 0:
        validate_reverts(reverts, int(t))
    return _as_result(_counts(variant, eps, d, t, tenants, tenant_steps, reverts, bound, rate, exact_steps))


def all_labels(epsilon: ArrayLike, delta: ArrayLike, steps: ArrayLike, *, variants: Sequence[str] = VARIANTS,
               **kwargs: Any) -> dict[str, int | IntArray]:
    """``{variant: labels(variant, ...)}`` for several variants.

    Same arguments as :func:`labels`.  Each variant is solved with its own number of terms
    (one for the baselines, m for the meters) and long curves in chunks, so memory stays
    linear in T * m and small (T = 100,000 steps at m = 50 is a few tens of MiB).
    """
    signals = kwargs.pop("signals", None)
    tenants = kwargs.pop("tenants", 1)
    tenant_steps = kwargs.pop("tenant_steps", None)
    reverts = kwargs.pop("reverts", None)
    bound, rate = _check_bound(kwargs.pop("bound", "hoeffding"), kwargs.pop("max_error_rate", None))
    if kwargs:
        raise TypeError(f"unexpected arguments: {', '.join(kwargs)}")
    eps, d, t = _prepare(epsilon, delta, steps, signals)
    exact_steps = check_int("steps", steps, minimum=1) if np.ndim(steps) == 0 else None
    if reverts is not None and t.ndim == 0:
        validate_reverts(reverts, int(t))
    if bound == "binomial":
        for v in variants:
            if v not in VARIANTS:
                raise InputError("variant", "one of " + ", ".join(VARIANTS), v)
        counts = _binomial_all(tuple(variants), eps, d, t, tenants, tenant_steps, reverts, rate, exact_steps)
        return {v: _as_result(counts[v]) for v in variants}
    return {v: _as_result(_counts(v, eps, d, t, tenants, tenant_steps, reverts, bound, rate, exact_steps))
            for v in variants}


# --------------------------------------------------------------------------- inverse questions
def _log_counts_row(variant: str, eps_row: FloatArray, steps: float, tenants: int, tenant_steps: _Ints,
                    reverts: _Ints) -> tuple[FloatArray, list[str], int]:
    """``(log S_k, eps_k)`` for one element: the union bound's terms without Hoeffding's factor 2."""
    a, _, repeat = _union_terms(variant, eps_row[None, :], np.array([float(steps)]), tenants, tenant_steps, reverts)
    logs = np.broadcast_to(a, (1, a.shape[-1]))[0] - _LOG2
    row = eps_row if variant in ADAPTIVE_VARIANTS else eps_row[:1]
    return logs, [repr(float(e)) for e in row], int(np.asarray(repeat).reshape(-1)[0])


def _binomial_log_failure(variant: str, n: ArrayLike, eps: FloatArray, t: FloatArray, tenants: int,
                          tenant_steps: _Ints, reverts: _Ints, rate: float | None) -> FloatArray:
    """``log sum_k S_k F(n_set, eps_k)`` per element, every factor in one batch (no set at all: ``log sum S_k``)."""
    from .binomial import log_failures
    n = np.asarray(n, dtype=float)
    shape, eps_f, n_f, t_f = _flat(eps, n, t)  # n broadcasts like delta
    items, repeats = _binomial_items(variant, eps_f, n_f, t_f, tenants, tenant_steps, reverts)
    per_set = (n_f // repeats).astype(np.int64) if variant == "resampling" else n_f.astype(np.int64)
    out = np.empty(t_f.size)
    empty = per_set < 1
    for i in np.flatnonzero(empty).tolist():
        out[i] = float(log_sum_exp(items[i][0]))
    live = np.flatnonzero(~empty)
    if live.size:
        out[live] = log_failures(per_set[live], [items[i][:2] for i in live.tolist()], rate)
    return out.reshape(shape)


def failure_probability(variant: str, n: ArrayLike, epsilon: ArrayLike, steps: ArrayLike, *,
                        signals: int | None = None, tenants: int = 1, tenant_steps: Sequence[int] | None = None,
                        reverts: Sequence[int] | None = None, log: bool = False, bound: str = "hoeffding",
                        max_error_rate: float | None = None) -> float | FloatArray:
    """The delta a test set of ``n`` labels guarantees: the union bound's left side.

    Returns delta (or ``log(delta)`` when ``log=True``); values >= 1 mean no guarantee.
    For resampling, ``n`` is the total split into T equal test sets (floor(n / T) each).
    The confidence is ``1 - delta``.  With ``bound='binomial'`` the exact factor ``F`` at
    exactly this n (:func:`meter_dashboard.bounds.binomial.log_failure`).
    """
    bound, rate = _check_bound(bound, max_error_rate)
    eps, _, t = _prepare(epsilon, 0.5, steps, signals)
    n = np.asarray(n, dtype=float)
    if np.any(n < 0) or np.any(~np.isfinite(n)):
        raise InputError("labels", "a whole number >= 0", n.tolist())
    if bound == "binomial":
        log_delta = _binomial_log_failure(variant, n, eps, t, tenants, tenant_steps, reverts, rate)
    else:
        a, b, repeat = _union_terms(variant, eps, t, tenants, tenant_steps, reverts)
        per_set = np.floor(n / repeat) if variant == "resampling" else n
        log_delta = log_sum_exp(a - b * np.asarray(per_set)[..., None])
    if log:
        return log_delta
    with np.errstate(over="ignore"):
        return np.exp(log_delta)


def min_epsilon(variant: str, n: ArrayLike, epsilon: ArrayLike, delta: ArrayLike, steps: ArrayLike, *,
                signals: int | None = None, tenants: int = 1, tenant_steps: Sequence[int] | None = None,
                reverts: Sequence[int] | None = None, bound: str = "hoeffding",
                max_error_rate: float | None = None) -> float | FloatArray:
    """The smallest eps_1 a budget of ``n`` labels supports, the eps vector scaled together.

    The shape of the tolerance vector is kept (eps_k / eps_1 fixed); returns the infimum
    eps_1* such that every eps_1 > eps_1* satisfies the strict inequality.  Values >= 1
    mean the budget supports no meaningful tolerance.  With ``bound='binomial'`` the exact
    factor at exactly this n, found by bisection to 1e-8 relative (``inf`` when no
    tolerance below 1 works).
    """
    bound, rate = _check_bound(bound, max_error_rate)
    eps, d, t = _prepare(epsilon, delta, steps, signals)
    n = np.asarray(n, dtype=float)
    if np.any(n < 1):
        raise InputError("labels", "a whole number >= 1", n.tolist())
    ratios = eps / eps[..., :1]  # the vector's shape: eps_k / eps_1 (no underflow for tiny eps)
    a, b, repeat = _union_terms(variant, ratios, t, tenants, tenant_steps, reverts)
    per_set = np.floor(n / repeat) if variant == "resampling" else n
    per_set = np.asarray(per_set, dtype=float)
    if np.any(per_set < 1):
        return np.inf if per_set.ndim == 0 else np.where(per_set < 1, np.inf, np.nan)
    # Unknown u = s**2 where eps = s * ratios: sum exp(a - (b n) u) < delta.
    u = solve_log_sum_exp(a, b * per_set[..., None], np.log(d))
    hoeffding = np.sqrt(u)
    if bound == "hoeffding":
        return hoeffding
    from .binomial import smallest_scale

    shape = np.broadcast_shapes(hoeffding.shape, ratios.shape[:-1], d.shape, t.shape)
    ratio_f = np.broadcast_to(ratios, shape + ratios.shape[-1:]).reshape(-1, ratios.shape[-1])
    d_f, t_f = np.broadcast_to(d, shape).reshape(-1), np.broadcast_to(t, shape).reshape(-1)
    scale = np.broadcast_to(hoeffding, shape).reshape(-1)
    sets = np.broadcast_to(per_set, shape).reshape(-1)
    out = np.empty(t_f.size)
    for i in range(t_f.size):
        logs, _, _ = _log_counts_row(variant, ratio_f[i], t_f[i], tenants, tenant_steps, reverts)
        row = ratio_f[i] if variant in ADAPTIVE_VARIANTS else ratio_f[i][:1]
        out[i] = smallest_scale(int(sets[i]), logs, row, math.exp(math.log(d_f[i])),
                                float(scale[i]) * (1 + 1e-9), rate)
    return out.reshape(shape) if shape else float(out[0])


def _fits_binomial(variant: str, n: int, eps_row: FloatArray, delta: float, tenants: int, reverts: _Ints,
                   rate: float | None) -> _Fits:
    """``fits(T)`` for arrays of T: ``sum_k S_k(T) F(n_set, eps_k) < delta`` with the exact F (one batch)."""
    from .binomial import log_factors
    log_d = math.log(delta)
    row = eps_row if variant in ADAPTIVE_VARIANTS else eps_row[:1]
    if variant != "resampling":
        log_f = log_factors(np.full(len(row), n), [repr(float(e)) for e in row], rate)

        def fits(ts: ArrayLike) -> BoolArray:
            ts = np.asarray(ts, dtype=float)
            a, _, _ = _union_terms(variant, np.broadcast_to(eps_row, ts.shape + eps_row.shape), ts, tenants, None,
                                   reverts)
            terms = np.broadcast_to(a, ts.shape + (a.shape[-1],)) - _LOG2 + log_f
            return log_sum_exp(terms) < log_d
        return fits

    def fits_resampling(ts: ArrayLike) -> BoolArray:
        ts = np.asarray(ts, dtype=float)
        per_set = np.floor(n / ts).astype(np.int64)
        ok = per_set >= 1
        out = np.zeros(ts.shape, dtype=bool)
        if np.any(ok):
            f = log_factors(per_set[ok], [repr(float(row[0]))], rate)
            out[ok] = np.log(ts[ok]) + f < log_d
        return out
    return fits_resampling


def max_steps(variant: str, n: int, epsilon: ArrayLike, delta: ArrayLike, *, signals: int | None = None,
              tenants: int = 1, reverts: Sequence[int] | None = None, bound: str = "hoeffding",
              max_error_rate: float | None = None) -> int | float:
    """The largest T whose label count fits in a budget of ``n`` labels.

    Tenants split every T evenly; reverts keep their fixed steps and count only once T
    reaches them.  Returns 0 when even T = 1 does not fit, ``math.inf`` when T beyond
    :data:`STEPS_CAP` still fits.  ``single_model`` supports one model: 1 or 0.  With
    ``bound='binomial'``: the largest T such that every T' <= T keeps the union bound below
    delta with the exact factor at exactly n labels (the sum grows with T, except for
    resampling, whose per-set size floor(n / T) is searched upwards from Hoeffding's answer,
    one per-set size at a time).  Above ``binomial.EXACT_LABELS`` labels per set the answer
    is conservative (the factor's closed-form upper bound).
    """
    bound, rate = _check_bound(bound, max_error_rate)
    n = check_int("labels", n, minimum=0)
    if bound == "binomial":
        eps, d, _ = _prepare(epsilon, delta, 1, signals)
        if eps.ndim != 1 or d.ndim != 0:
            raise InputError("epsilon", "one tolerance vector (with one delta) for max_steps", eps.tolist())
        if n < 1:
            return 0
        start = max_steps(variant, n, epsilon, delta, signals=signals, tenants=tenants, reverts=reverts)
        if start == math.inf or (variant == "single_model" and start == 1):
            return start  # the exact factor is at most Hoeffding's: whatever fits Hoeffding fits it
        if variant == "resampling" and start:
            from .binomial import largest_resampling_steps
            return largest_resampling_steps(n, float(eps[0]), float(d), int(start), rate, STEPS_CAP)
        fits = _fits_binomial(variant, n, eps, float(d), tenants, reverts, rate)
        return _largest_fitting(variant, fits, start)
    return _largest_fitting(variant, _fits_hoeffding(variant, n, epsilon, delta, signals, tenants, reverts), 0)


def _fits_hoeffding(variant: str, n: int, epsilon: ArrayLike, delta: ArrayLike, signals: int | None, tenants: int,
                    reverts: _Ints) -> _Fits:
    eps, d, _ = _prepare(epsilon, delta, 1, signals)

    def fits(ts: ArrayLike) -> BoolArray:
        ts = np.asarray(ts, dtype=float)
        need = _hoeffding_counts(variant, eps, d, ts, tenants, None, reverts, refuse=False)
        return need <= n
    return fits


def _largest_fitting(variant: str, fits: _Fits, start: int | float) -> int | float:
    """The largest T with ``fits(T)`` (and every smaller T), searched by powers of two then grids."""
    if variant == "single_model":
        return 1 if fits(np.array([1]))[0] else 0
    if start and start != math.inf and variant == "resampling":  # non-monotone: scan up from a known fit
        t = int(start)
        for _ in range(64):
            ts = np.arange(t + 1, t + 65)
            ok = fits(ts)
            if not ok.all():
                return int(t + np.argmin(ok))
            t += 64
        return t
    powers = 2.0 ** np.arange(0, int(math.log2(STEPS_CAP)) + 2)
    ok = fits(powers)
    if not ok[0]:
        return 0
    if ok.all():
        return math.inf
    hi_idx = int(np.argmin(ok))
    lo, hi = int(powers[hi_idx - 1]), int(powers[hi_idx])  # fits(lo) and not fits(hi)
    while hi - lo > 1:
        grid = np.unique(np.linspace(lo, hi, num=min(hi - lo + 1, 2049)).round())
        good = fits(grid)
        last_ok = int(np.flatnonzero(good)[-1])
        lo, hi = int(grid[last_ok]), int(grid[last_ok + 1])
    return lo


# --------------------------------------------------------------------------- exact curves
def exact_curve(epsilon: ArrayLike, delta: float, steps: ArrayLike, *, tenants: int = 1,
                reverts: Sequence[int] | None = None, variants: Sequence[str] = VARIANTS,
                max_error_rate: float | None = None) -> dict[str, FloatArray]:
    """Every variant's exact binomial count at each T of ``steps``: ``{variant: float array}``, NaN where refused.

    The planner's curves and ``plan --steps A:B --bound binomial`` (issue 18): at each T,
    tenants split T evenly (at most T of them), reverts count once T reaches them,
    single_model is one model (T = 1) and resampling is T fresh no_adaptivity sets (Eq. 2);
    a count the exact bound refuses (above :data:`BINOMIAL_LABELS_CAP`) is NaN.  Each
    variant's curve is one bracketed search, coarse to fine over T (each T's count is at
    least the smaller T's and at most the larger T's), so points between two equal counts
    cost nothing and the exact factors of a region are computed once.  Equal, point for
    point, to :func:`labels` at that T.
    """
    bound, rate = _check_bound("binomial", max_error_rate)
    eps = validate_epsilon(epsilon)
    if eps.ndim != 1:
        raise InputError("epsilon", "one tolerance vector for a curve", eps.tolist())
    d = float(check_probability("delta", delta))
    ts = np.atleast_1d(_validate_steps(steps)).astype(np.int64)
    rv = validate_reverts(reverts) if reverts is not None else np.zeros(0, dtype=np.int64)
    tenants = check_int("tenants", tenants, minimum=1)
    out = {v: np.full(ts.shape, np.nan) for v in variants}
    groups: dict[tuple[int, tuple[int, ...]], list[int]] = {}  # T's that share the tenants and reverts in effect
    for i, t in enumerate(ts.tolist()):
        groups.setdefault((min(tenants, t), tuple(r for r in rv.tolist() if r <= t)), []).append(i)
    wanted = [v for v in variants if v not in ("single_model", "resampling")]
    if "resampling" in variants and "no_adaptivity" not in wanted:
        wanted.append("no_adaptivity")
    for (l, kept), where in groups.items():
        sel = np.array(where)
        for v in wanted:
            out.setdefault(v, np.full(ts.shape, np.nan))[sel] = _exact_points(v, eps, d, ts[sel], l, list(kept) or None,
                                                                              rate)
    if "single_model" in variants:
        out["single_model"][:] = _exact_points("single_model", eps, d, np.array([1]), 1, None, rate)[0]
    if "resampling" in variants:
        out["resampling"] = out["no_adaptivity"] * ts
    return {v: out[v] for v in variants}


def _exact_points(variant: str, eps: FloatArray, d: float, ts: IntArray, tenants: int, reverts: _Ints,
                  rate: float | None) -> FloatArray:
    """Exact counts at each T (NaN where Hoeffding's count is above the exact bound's cap), one bracketed search."""
    from .binomial import smallest_labels_batch
    eps_f = np.broadcast_to(eps, ts.shape + eps.shape).reshape(-1, eps.size)
    d_f, t_f = np.full(ts.size, d), ts.astype(float)
    top = _hoeffding_counts(variant, eps_f, d_f, t_f, tenants, None, reverts, refuse=False)
    fine = np.asarray(top) <= BINOMIAL_LABELS_CAP
    out = np.full(ts.size, np.nan)
    if np.any(fine):
        items, _ = _binomial_items(variant, eps_f[fine], d_f[fine], t_f[fine], tenants, None, reverts)
        out[fine] = smallest_labels_batch(items, rate, sequence=True)
    return out
