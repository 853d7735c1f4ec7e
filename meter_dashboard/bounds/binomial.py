"""Exact binomial tails for 0/1 losses, and variance-aware (Bennett, Bernstein) factors.

Every count in ease.ml/meter multiplies the number of possible submissions by
Hoeffding's factor ``2 exp(-2 n eps^2)``, a bound on the chance that one model's test
accuracy on ``n`` i.i.d. labels misses its true accuracy by ``eps`` or more.  For 0/1
losses the test error is ``X / n`` with ``X ~ Binomial(n, p)`` (``p`` = the model's true
error rate), so the exact worst case is

    F(n, eps) = sup_p P(|X/n - p| >= eps),

and, when every model the team could submit is known to err at most ``a`` (accuracy at
least ``1 - a``), the supremum runs over ``p`` in ``[0, a]`` only.  ``F`` is at most
Hoeffding's factor for every ``n`` (Hoeffding bounds each tail by ``exp(-2 n eps^2)``),
and usually much smaller: ease.ml/ci asks for this "tight numerical bound" itself
(Renggli et al. 2019, Section 4.3, following Langford 2005).

The supremum is a finite maximum.  Between consecutive *breakpoints* (the ``p`` where a
threshold ``n(p +- eps)`` crosses an integer) both thresholds are fixed, the failure
probability is ``1 - P(kl < X < ku)``, and ``P(kl < X < ku)`` is unimodal in ``p``, so the
failure probability is quasi-convex there and its supremum sits on a breakpoint, where
the inclusive threshold applies.  With ``p_j = j/n - eps`` (the *upper* breakpoints) and
``c = ceil(2 n eps)``:

    F(n, eps) = max_{j = ceil(n eps)..n} P_{p_j}(X >= j) + P_{p_j}(X <= j - c),

the lower breakpoints ``i/n + eps`` being the mirror images ``1 - p_{n-i}`` (``X <-> n - X``).
With a known range ``[0, a]``: the upper breakpoints ``p_j <= a``, the lower ones
``i/n + eps <= a`` (mirrored: ``p_j >= 1 - a``), and ``p = a`` itself.  ``eps`` and ``a`` are
exact decimals (:func:`exact_decimal`), so ``2 n eps`` is an exact rational and the
ceilings are exact.

Fast and exact (see :func:`log_tail_factor`): the maximum over ``j`` is not found by
evaluating every ``j``.  Three rigorous arguments discard almost all of them:

1. *Zubkov-Serov*: for every integer ``k``,
   ``P(X <= k) <= Phi(sign((k+1)/n - p) sqrt(2 n KL((k+1)/n || p)))`` (Zubkov & Serov 2013);
   with the joint convexity of KL this bounds every candidate outside a window around
   the worst ``p`` below the best value found.
2. *Monotone tails*: ``U_j = P_{p_j}(X >= j)`` and ``L_j = P_{p_j}(X <= j - c)`` change from
   ``j`` to ``j + 1`` by ``int_{p_j}^{p_j + 1/n} n b_{n-1}(k; q) dq - b_n(k; p_j)`` (up to
   sign, ``k = j`` or ``j - c + 1``).  The integrand is log-concave in ``q``, so chord and
   tangent bracket the integral in closed form, and the sign of each increment is
   certified from elementary functions (no tail sums).  A candidate whose two tails
   both grow towards a neighbour is dominated by it.
3. *Branch and bound*: on a run where one tail falls and the other rises,
   ``U_j + L_j <= U_a + L_b``; runs are halved until their bound falls below the best value.

Only a few dozen exact tail evaluations remain, each accurate in log space
(:func:`~meter_dashboard.bounds._tails.log_binom_sf`), so ``F`` stays finite and correct
far below 1e-300.  Results are cached per ``(n, eps, a, sides)``, shared by every variant,
T, delta and inverse question, and one batch may mix tolerances (issue 18).

Counts (:func:`smallest_labels`, :func:`smallest_labels_batch`) search many union bounds at
once (:mod:`._binomial_search`): Hoeffding's count and the monotone envelope bound the answer
from above, windows of a few sawtooth periods below it are decided with a per-n closed-form
bound first and exact factors only where it cannot tell, and along a curve each count
brackets its neighbours'.  This module loads scipy; Hoeffding's counts never import it.

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.  Thm 4
   (Eq. 21) and Thms 1-2: the per-model factor this module replaces.
.. [2] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Section 4.3 (tight numerical bounds), Proposition 1
   (Bennett), Sections 4.1-4.2 (Patterns 1 and 2: a variance bound).
.. [3] J. Langford. "Tutorial on Practical Prediction Theory for Classification", JMLR 6, 2005.
.. [4] A. M. Zubkov, A. A. Serov. "A complete proof of universal inequalities for the
   distribution function of the binomial law", Theory Probab. Appl. 57(3), 2013.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Union, cast

import numpy as np
from numpy.typing import ArrayLike

from ..core.validation import InputError, check_int, parse_exact_decimal
from . import _binomial_cache as _store
from ._binomial_batch import exact_parts
from ._binomial_envelope import log_bound, log_envelope
from ._binomial_search import EXACT_LABELS, Problem, solve, solve_sequence, violated, violated_rows
from ._numeric import log_sum_exp, smallest_integer_satisfying
from ._types import BoolArray, FloatArray, IntArray, Real

__all__ = [
    "SIDES",
    "exact_decimal",
    "log_tail_factor",
    "tail_factor",
    "log_tail_envelope",
    "log_failure",
    "satisfies",
    "smallest_labels",
    "smallest_labels_batch",
    "smallest_scale",
    "largest_resampling_steps",
    "log_factors",
    "log_failures",
    "EXACT_LABELS",
    "log_hoeffding_factor",
    "bennett_rate",
    "bernstein_rate",
    "log_bennett_factor",
    "log_bernstein_factor",
    "variance_labels",
    "clear_cache",
]

#: Which deviations fail: ``|X/n - p| >= eps``, ``X/n - p >= eps`` or ``p - X/n >= eps``.
SIDES = ("two-sided", "upper", "lower")

_LOG2 = math.log(2.0)
#: a decimal given as text, a float (its shortest repr) or an exact Fraction
Exact = Union[float, str, Fraction]


# --------------------------------------------------------------------------- inputs
def exact_decimal(name: str, value: Exact) -> Fraction:
    """``value`` as the exact decimal it is written as: ``0.01`` is 1/100, not the nearest float.

    Floats go through their shortest repr (``str(0.1) == '0.1'``), so ``2 n eps`` is an
    exact rational and ``ceil(2 n eps)`` is exact even when ``2 n eps`` is a whole number.
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (np.floating, float)):
        value = repr(float(value))
    return parse_exact_decimal(name, value)


def _check_sides(sides: str) -> str:
    if sides not in SIDES:
        raise InputError("sides", "one of " + ", ".join(SIDES), sides)
    return sides


_PARSED: dict[str, Fraction] = {}  # text -> Fraction: a curve asks for the same tolerances thousands of times
# tolerance texts -> (distinct Fractions, the terms each one merges)
_UNIONS: dict[tuple[str, ...], tuple[list[Fraction], list[list[int]]]] = {}


def _check_epsilon(epsilon: Exact) -> Fraction:
    if isinstance(epsilon, str) and epsilon in _PARSED:
        return _PARSED[epsilon]
    eps = exact_decimal("epsilon", epsilon)
    if isinstance(epsilon, str) and 0 < eps < 1 and len(_PARSED) < 10_000:
        _PARSED[epsilon] = eps
    if not 0 < eps < 1:
        raise InputError("epsilon", "in (0, 1)", float(eps))
    return eps


def _check_rate(max_error_rate: Exact | None, sides: str) -> Fraction | None:
    """``None`` (no range) or an exact ``a`` in (0, 1).

    Two-sided, ``a >= 1/2`` is the unrestricted case (the failure probability is symmetric
    under ``p <-> 1 - p``, so its supremum over [0, 1/2] is the one over [0, 1]).  One-sided
    events have no such symmetry: the lower tail peaks near ``p = (1 + eps)/2`` and, for
    ``n eps < 1``, the upper one at ``p = 1 - eps``, so every ``a < 1`` restricts them.
    """
    if max_error_rate is None:
        return None
    a = exact_decimal("max_error_rate", max_error_rate)
    if not 0 < a < 1:
        raise InputError("max_error_rate", "in (0, 1) (the largest true error rate any model can have)",
                         float(a))
    return None if a >= Fraction(1, 2) and sides == "two-sided" else a


# --------------------------------------------------------------------------- exact factors
def _factors(ns: ArrayLike, eps: Fraction, a: Fraction | None, sides: str) -> FloatArray:
    """Exact ``log F(n, eps)`` for every n of ``ns`` (cached per process, the missing ones in one batch)."""
    return _store.factors(ns, eps, a, sides)


def log_tail_factor(n: ArrayLike, epsilon: Exact, max_error_rate: Exact | None = None,
                    sides: str = "two-sided") -> float | FloatArray:
    """``log F(n, eps)``: the log of the exact worst-case chance that one model's test error misses.

    ``F(n, eps) = sup_p P(|X/n - p| >= eps)`` with ``X ~ Binomial(n, p)``: the exact
    replacement for Hoeffding's per-model factor ``2 exp(-2 n eps^2)`` (Thm 4 of [1]_,
    Section 4.3 of [2]_), always at most it.

    Parameters
    ----------
    n : int or array_like of int
        Test-set size (labels), >= 1.  Pass neighbouring sizes together: they share work.
    epsilon : float, str or Fraction
        The tolerance, in (0, 1), taken as the exact decimal it is written as.
    max_error_rate : float, str or Fraction, optional
        ``a``: the supremum runs over true error rates ``p`` in ``[0, a]`` only (every
        model the team could submit errs at most ``a``).  Two-sided, ``a >= 1/2`` changes nothing.
    sides : {'two-sided', 'upper', 'lower'}
        The failure event: ``|X/n - p| >= eps`` (the meter's), ``X/n - p >= eps`` or
        ``p - X/n >= eps``.

    Returns
    -------
    float or ndarray
        ``log F`` (finite however small F is; 0 when F = 1).

    Notes
    -----
    Exact: a maximum over finitely many breakpoints, found with rigorous pruning (module
    notes) and computed from tails accurate to ~1e-13 relative.  Cached per argument set.
    Test sets above :data:`EXACT_LABELS` labels are refused (``labels``): the inverse
    questions use the closed-form upper bound there (:func:`log_factors`).

    Examples
    --------
    >>> round(math.exp(log_tail_factor(16_651, 0.01)), 6)  # below 0.01: one model, delta = 0.01
    0.009862
    """
    eps, sides = _check_epsilon(epsilon), _check_sides(sides)
    a = _check_rate(max_error_rate, sides)
    arr = np.asarray(n)
    ns = np.array([check_int("labels", v, minimum=1) for v in arr.ravel().tolist()], dtype=np.int64)
    if ns.size and int(ns.max()) > EXACT_LABELS:
        raise InputError("labels", f"at most {EXACT_LABELS:.0e} for the exact factor (log_factors gives its "
                                   "certified upper bound beyond)", int(ns.max()))
    out = _factors(ns, eps, a, sides)
    return float(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)


def log_factors(ns: ArrayLike, epsilons: Exact | Sequence[Exact], max_error_rate: Exact | None = None,
                sides: str = "two-sided") -> FloatArray:
    """``log F(n_i, eps_i)`` for rows (n_i, eps_i), one batch (cached); one epsilon may serve every row.

    Exact up to :data:`EXACT_LABELS` labels; above, the certified closed-form upper bound
    (Zubkov-Serov with each n's own thresholds, :mod:`._binomial_envelope`), so answers built
    on it are conservative there (a budget beyond what the exact bound is computed for).
    """
    sides = _check_sides(sides)
    a = _check_rate(max_error_rate, sides)
    ns = np.atleast_1d(np.asarray(ns)).astype(np.int64)
    items = np.atleast_1d(np.asarray(epsilons, dtype=object)).ravel().tolist()
    eps = [_check_epsilon(e) for e in (items * ns.size if len(items) == 1 else items)]
    if len(eps) != ns.size or np.any(ns < 1):
        raise InputError("labels", "whole numbers >= 1, one per tolerance", ns.tolist())
    out = np.empty(ns.size)
    huge = ns > EXACT_LABELS
    if np.any(~huge):
        keep = np.flatnonzero(~huge)
        out[keep] = _store.factors(ns[keep], [eps[i] for i in keep.tolist()], a, sides)
    if np.any(huge):
        big = np.flatnonzero(huge)
        parts = exact_parts(ns[big], [eps[i] for i in big.tolist()], a)
        shift_a = None if a is None else float(a) - (parts["low_a"] + 1.0) / ns[big]
        out[big] = log_bound(ns[big], parts["e"], parts["eta"], a, sides, shift_a)
    return out


def tail_factor(n: ArrayLike, epsilon: Exact, max_error_rate: Exact | None = None,
                sides: str = "two-sided") -> float | FloatArray:
    """``F(n, eps)`` itself (see :func:`log_tail_factor`; may underflow to 0.0 where the log does not)."""
    with np.errstate(under="ignore"):
        return np.exp(log_tail_factor(n, epsilon, max_error_rate, sides))


def clear_cache() -> None:
    """Forget every cached exact factor and count (for benchmarks of a cold start)."""
    _store.clear()


# --------------------------------------------------------------------------- a monotone envelope in n
def _log_envelope(ns: ArrayLike, eps: Fraction, a: Fraction | None, sides: str) -> FloatArray:
    return log_envelope(ns, float(eps), a, sides)


def log_tail_envelope(n: ArrayLike, epsilon: Exact, max_error_rate: Exact | None = None,
                      sides: str = "two-sided") -> float | FloatArray:
    """An upper bound on ``log F(n, eps)`` that never increases with n (closed form, no tail sums).

    Each candidate's tails are bounded by Zubkov-Serov [4]_ with the threshold moved one
    label towards the mean, ``Phi(-sqrt(2 n KL(p +- e || p)))`` with ``e = eps - 1/n``; the
    KL term is minimised over the candidates' range of p (convexity; Topsoe's refinement of
    Pinsker's inequality, ``2 e^2 + 4 e^4/9 + 2 e^6/9``, where the minimum is inside).  ``e`` grows with n and so does that minimum, so the
    envelope falls as n grows; it is also capped by Hoeffding's factor.  It certifies every
    n beyond a point at once (:func:`smallest_labels`).
    """
    eps, sides = _check_epsilon(epsilon), _check_sides(sides)
    a = _check_rate(max_error_rate, sides)
    arr = np.asarray(n)
    ns = np.array([check_int("labels", v, minimum=1) for v in np.atleast_1d(arr).ravel().tolist()])
    out = _log_envelope(ns, eps, a, sides)
    return float(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)


# --------------------------------------------------------------------------- union bounds and counts
def _prepare_union(log_counts: ArrayLike, epsilon: Exact | Sequence[Exact], max_error_rate: Exact | None,
                   sides: str) -> tuple[FloatArray, list[Fraction], Fraction | None, str]:
    logs = np.atleast_1d(np.asarray(log_counts, dtype=float))
    if isinstance(epsilon, list) and len(epsilon) == logs.size and all(isinstance(e, str) for e in epsilon):
        key = tuple(epsilon)  # a curve repeats one tolerance list: parse and merge it once
        known = _UNIONS.get(key)
        if known is not None and not np.any(np.isnan(logs)) and not np.any(logs == np.inf):
            eps, groups = known
            summed = [logs[g[0]] if len(g) == 1 else np.logaddexp.reduce(logs[g]) for g in groups]
            sides = _check_sides(sides)
            return np.array(summed, dtype=float), eps, _check_rate(max_error_rate, sides), sides
    eps_items = np.atleast_1d(np.asarray(epsilon, dtype=object)).ravel().tolist()
    if len(eps_items) == 1 and logs.size > 1:
        eps_items = eps_items * logs.size
    if len(eps_items) != logs.size:
        raise InputError("epsilon", f"one tolerance per count ({logs.size})", eps_items)
    if np.any(np.isnan(logs)) or np.any(logs == np.inf):
        raise InputError("log_counts", "finite logs of submission counts (or -inf for none)", logs.tolist())
    eps = [_check_epsilon(e) for e in eps_items]
    merged: dict[Fraction, float] = {}  # terms with the same tolerance share F: add their counts
    for lg, e in zip(logs.tolist(), eps):
        merged[e] = np.logaddexp(merged.get(e, -np.inf), lg)
    if isinstance(epsilon, list) and len(epsilon) == logs.size and all(isinstance(e, str) for e in epsilon):
        if len(_UNIONS) < 1000:
            _UNIONS[tuple(epsilon)] = (list(merged), [[i for i, x in enumerate(eps) if x == e] for e in merged])
    eps = list(merged)
    sides = _check_sides(sides)
    return np.array([merged[e] for e in eps], dtype=float), eps, _check_rate(max_error_rate, sides), sides


def log_failure(n: int, log_counts: ArrayLike, epsilon: Exact | Sequence[Exact], max_error_rate: Exact | None = None,
                sides: str = "two-sided") -> float:
    """``log sum_k S_k F(n, eps_k)``: the union bound's failure probability at exactly ``n`` labels.

    ``log_counts[k] = log S_k`` (how many possible submissions are checked against
    ``eps_k``: the multiplicities of Thms 1-2 of [1]_, 0 for one model); one epsilon may
    serve every k.  Values >= 0 mean no guarantee.  This is what the inverse questions use
    (the confidence of a given budget, the largest T, the smallest eps).
    """
    n = check_int("labels", n, minimum=1)
    return float(log_failures([n], [(log_counts, epsilon)], max_error_rate, sides)[0])


def log_failures(ns: ArrayLike, items: Sequence[tuple[ArrayLike, Exact | Sequence[Exact]]],
                 max_error_rate: Exact | None = None, sides: str = "two-sided") -> FloatArray:
    """:func:`log_failure` for rows: ``items[i] = (log_counts, epsilon)`` at ``ns[i]`` labels, one batch of factors.

    Above :data:`EXACT_LABELS` labels the factors are their certified upper bound
    (:func:`log_factors`): the failure probability returned is then an upper bound.
    """
    ns = [check_int("labels", v, minimum=1) for v in np.atleast_1d(np.asarray(ns, dtype=object)).tolist()]
    rows_n: list[int] = []
    rows_e: list[Fraction] = []
    spans: list[list[float]] = []
    for n, (log_counts, epsilon) in zip(ns, items):
        logs, eps, _, _ = _prepare_union(log_counts, epsilon, max_error_rate, sides)
        live = [(lg, e) for lg, e in zip(logs.tolist(), eps) if lg > -math.inf]
        spans.append([lg for lg, _ in live])
        rows_n.extend([n] * len(live))
        rows_e.extend(e for _, e in live)
    values = (np.asarray(log_factors(np.array(rows_n, dtype=np.int64), rows_e, max_error_rate, sides))
              if rows_n else np.empty(0))
    out, at = np.empty(len(spans)), 0
    for i, span in enumerate(spans):
        terms = [lg + float(values[at + k]) for k, lg in enumerate(span)]
        at += len(span)
        out[i] = float(log_sum_exp(np.array(terms))) if terms else -math.inf
    return out


def satisfies(n: int, log_counts: ArrayLike, epsilon: Exact | Sequence[Exact], delta: float,
              max_error_rate: Exact | None = None, sides: str = "two-sided") -> bool:
    """Whether ``sum_k S_k F(n, eps_k) < delta`` at exactly ``n`` labels (exact F only where needed).

    Same as ``log_failure(...) < log(delta)``, but terms whose closed-form bound
    (:func:`log_tail_envelope`, with n's own lower threshold) already settles the question
    are not computed exactly.
    """
    n = check_int("labels", n, minimum=1)
    problem = _problem(log_counts, epsilon, delta, max_error_rate, sides)
    if isinstance(problem, int):
        return True
    sides = _check_sides(sides)
    return not bool(violated(problem, np.array([n], dtype=np.int64), _check_rate(max_error_rate, sides), sides)[0])


def _log_delta(delta: float) -> float:
    delta = float(delta)
    if not 0 < delta < 1:
        raise InputError("delta", "in (0, 1)", delta)
    return math.log(delta)


def _problem(log_counts: ArrayLike, epsilon: Exact | Sequence[Exact], delta: float, max_error_rate: Exact | None,
             sides: str) -> Problem | int:
    """The union bound as a search problem (validated), or 1 when no term is left (every n satisfies)."""
    logs, eps, a, sides = _prepare_union(log_counts, epsilon, max_error_rate, sides)
    log_delta = _log_delta(delta)
    live = logs > -math.inf
    if not np.any(live):
        return 1
    return Problem(logs[live], [e for e, keep in zip(eps, live.tolist()) if keep], log_delta, a, sides)


def smallest_labels(log_counts: ArrayLike, epsilon: Exact | Sequence[Exact], delta: float,
                    max_error_rate: Exact | None = None, sides: str = "two-sided") -> int:
    """The smallest n such that every n' >= n satisfies ``sum_k S_k F(n', eps_k) < delta``.

    The sum is not monotone in n (a sawtooth with period about ``1/(2 eps_1)``: each time
    ``2 n eps`` passes a whole number the lower tail's threshold moves by one label), so
    the answer is one past the *last* violating n, and a larger test set never breaks the
    guarantee.  Found exactly: Hoeffding's count bounds it from above (``F`` is at most
    Hoeffding's factor); the envelope of :func:`log_tail_envelope` (non-increasing in n)
    certifies every n from a point on at once; below that point the n are decided with the
    exact F (:func:`log_tail_factor`), in batches from the top, until the first violation.

    Parameters
    ----------
    log_counts : array_like
        ``log S_k`` (see :func:`log_failure`).
    epsilon : array_like
        ``eps_k``, exact decimals in (0, 1); one value serves every k.
    delta : float
        In (0, 1).
    max_error_rate, sides
        As in :func:`log_tail_factor`.

    Returns
    -------
    int
        ``n`` (a Python int): n and every larger n satisfy the inequality; n - 1 does not
        (or n = 1).

    Examples
    --------
    One model, eps = delta = 0.01 (Hoeffding: 26,492 labels, Thm 4 of [1]_):

    >>> smallest_labels([0.0], [0.01], 0.01)
    16651
    """
    problem = _problem(log_counts, epsilon, delta, max_error_rate, sides)
    if isinstance(problem, int):
        return problem
    a = _check_rate(max_error_rate, _check_sides(sides))
    return int(solve([problem], a, sides)[0])


def smallest_labels_batch(items: Sequence[tuple[ArrayLike, Exact | Sequence[Exact], float]],
                          max_error_rate: Exact | None = None, sides: str = "two-sided",
                          sequence: bool = False) -> list[int]:
    """:func:`smallest_labels` of many union bounds, solved together (one batch of exact factors per step).

    ``items`` are ``(log_counts, epsilon, delta)`` triples.  With ``sequence=True`` they are
    a curve (say over T): neighbours whose union bounds bound each other (same tolerances,
    every ``log S_k - log delta`` at most the other's) bracket each other's counts, so the
    search is coarse to fine and a point between two equal counts costs nothing.  The result
    never depends on ``sequence``, only the work does.

    Returns
    -------
    list of int
    """
    sides = _check_sides(sides)
    a = _check_rate(max_error_rate, sides)
    problems = [_problem(logs, eps, delta, max_error_rate, sides) for logs, eps, delta in items]
    hard = [i for i, p in enumerate(problems) if not isinstance(p, int)]
    out = [p if isinstance(p, int) else None for p in problems]
    if hard:
        got = (solve_sequence if sequence else solve)([p for p in problems if not isinstance(p, int)], a, sides)
        for i, v in zip(hard, got):
            out[i] = int(v)
    return cast(list[int], out)  # every count filled in


class _ScaleQuestions:
    """``ok(s)``: does ``eps_k = s r_k`` satisfy the union bound at n?  Answered from the decided bracket.

    The condition is monotone in s (F falls as eps grows), so every scale at or above the
    smallest one seen to hold holds, and every scale at or below the largest one seen to
    fail fails; a scale in between is decided with a grid of scales across the bracket, all
    in one batch of exact factors (:func:`_binomial_search.violated_rows`).
    """

    def __init__(self, n: int, log_counts: ArrayLike, ratios: Iterable[float], delta: float,
                 max_error_rate: Exact | None, sides: str, grid: int) -> None:
        self.n, self.log_counts, self.delta = n, log_counts, delta
        self.ratios = [float(r) for r in ratios]
        self.rate, self.sides, self.grid = max_error_rate, sides, grid
        self.a = _check_rate(max_error_rate, sides)
        self.good, self.bad = math.inf, 0.0
        logs = np.atleast_1d(np.asarray(log_counts, dtype=float))
        self.logs = logs.tolist() if logs.size == len(self.ratios) else logs.tolist() * len(self.ratios)
        self.log_delta = _log_delta(delta)

    def _problem(self, s: float) -> Problem | int:
        """:func:`_problem` for ``eps_k = s r_k`` without its generic checks (the terms are known valid)."""
        merged: dict[Fraction, float] = {}
        for lg, r in zip(self.logs, self.ratios):
            e = exact_decimal("epsilon", repr(r * s))
            merged[e] = float(np.logaddexp(merged.get(e, -np.inf), lg))
        live = [(e, lg) for e, lg in merged.items() if lg > -math.inf]
        if not live:
            return 1
        return Problem(np.array([lg for _, lg in live]), [e for e, _ in live], self.log_delta, self.a, self.sides)

    def _fail(self, scales: Sequence[float]) -> BoolArray:
        problems = [self._problem(s) for s in scales]
        out = np.zeros(len(scales), dtype=bool)
        hard = [i for i, p in enumerate(problems) if not isinstance(p, int)]
        if hard:
            out[hard] = violated_rows([p for p in problems if not isinstance(p, int)], np.arange(len(hard)),
                                      np.full(len(hard), self.n, dtype=np.int64), self.a, self.sides)
        return out

    def __call__(self, s: float) -> bool:
        if s >= self.good:
            return True
        if s <= self.bad:
            return False
        lo = self.bad if self.bad > 0 else s / 2.0
        hi = self.good if math.isfinite(self.good) else s
        scales = sorted({s, lo, *np.linspace(lo, hi, self.grid + 2)[1:-1].tolist()} - {self.bad, self.good})
        fail = self._fail(scales)
        holds = [x for x, f in zip(scales, fail.tolist()) if not f]
        fails = [x for x, f in zip(scales, fail.tolist()) if f]
        if holds and fails and min(holds) < max(fails):  # not monotone in floats: decide s alone, trust nothing
            return not bool(self._fail([s])[0])
        self.good = min([self.good] + holds)
        self.bad = max([self.bad] + fails)
        return s >= self.good


def smallest_scale(n: int, log_counts: ArrayLike, ratios: Iterable[float], delta: float, hi: float,
                   max_error_rate: Exact | None = None, sides: str = "two-sided", grid: int = 48) -> float:
    """The smallest s with ``sum_k S_k F(n, s r_k) < delta``, to 1e-8 relative (``inf`` when no tolerance below 1 works).

    The bisection of issue 12's engine, with the same scales and so the same float answer:
    start at ``hi`` (a scale that holds: Hoeffding's answer; capped at ``0.999999 / max r``),
    halve until a scale fails, then bisect to 1e-8 relative.  ``s r_k`` enters as the exact
    decimal of its float (``repr``).  Each question is answered from the bracket of scales
    already decided; one inside the bracket is decided with a grid of ``grid`` scales across
    it in one batch (issue 18: five or six batches instead of thirty sequential decisions).
    Above :data:`EXACT_LABELS` labels the answer is conservative (at least the exact one).
    """
    ok = _ScaleQuestions(check_int("labels", n, minimum=1), log_counts, ratios, delta, max_error_rate,
                         _check_sides(sides), grid)
    top = 0.999999 / max(ok.ratios)
    hi = min(hi, top)
    if not ok(hi):
        return math.inf
    lo = hi / 2.0
    while ok(lo) and lo > 1e-12:
        hi, lo = lo, lo / 2.0
    while hi - lo > 1e-8 * hi:
        mid = (lo + hi) / 2.0
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _resampling_skip(n: int, eps: float, log_d: float, start: int, max_error_rate: Exact | None) -> int:
    """The largest per-set size m from which on the runs may fail: above it the envelope certifies every run.

    Runs with a larger m hold T <= n // m sets; ``log(n // m) + envelope(m) < log delta`` (both
    monotone in m) certifies the whole run without exact factors, so the search starts below.
    """
    e = _check_epsilon(repr(eps))
    a = _check_rate(max_error_rate, "two-sided")
    lo, hi = 0, n // (start + 1)  # certified above hi?  found by bisection on the monotone condition

    def certified(m: int) -> bool:
        return m >= 1 and math.log(n // m) + float(log_envelope(np.array([m]), float(e), a, "two-sided")[0]) < log_d

    if not certified(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if certified(mid) else (mid, hi)
    return lo


def largest_resampling_steps(n: int, eps: float, delta: float, start: int, max_error_rate: Exact | None = None,
                             cap: int = 10**12) -> int | float:
    """Resampling's largest T with every T' <= T fitting: T fresh sets of floor(n / T) labels, ``T F(set) < delta``.

    Every T up to ``start`` (Hoeffding's answer) fits.  Above it the per-set size m takes
    each value on a run of T, and on a run ``log T + log F(m) < log delta`` holds up to a
    threshold: the first T that fails is found run by run, the factors of 256 runs per batch
    (issue 18; issue 12's engine scanned at most 4,096 T, too few for budgets of billions).
    A T beyond ``cap`` is reported as ``inf``.
    """
    log_d = math.log(delta)
    m = _resampling_skip(n, eps, log_d, start, max_error_rate)
    while m >= 1:
        sizes = np.arange(m, max(m - 256, 0), -1, dtype=np.int64)
        log_f = log_factors(sizes, [repr(eps)], max_error_rate)
        for size, f in zip(sizes.tolist(), log_f.tolist()):
            first, last = max(n // (size + 1) + 1, start + 1), n // size  # the T with floor(n / T) = size
            if first > cap:
                return math.inf
            def fits(t: int, f: float = f) -> bool:  # the float test of issue 12's scan, exactly
                return bool(np.log(np.array([float(t)]))[0] + f < log_d)

            t = min(max(first, math.ceil(math.exp(min(log_d - f, 700.0))) - 1), last + 1)
            while t > first and not fits(t - 1):
                t -= 1
            while t <= last and fits(t):
                t += 1
            if t <= last:
                return t - 1 if t - 1 <= cap else math.inf
        m = int(sizes[-1]) - 1
    return n  # T = n + 1 leaves no label per set



# --------------------------------------------------------------------------- Hoeffding, Bennett, Bernstein
def _positive(name: str, value: ArrayLike) -> FloatArray:
    arr = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise InputError(name, "finite numbers > 0", arr.tolist() if arr.ndim else float(arr))
    return arr


def _sides_term(sides: str) -> float:
    return _LOG2 if _check_sides(sides) == "two-sided" else 0.0


def log_hoeffding_factor(n: ArrayLike, epsilon: ArrayLike, sides: str = "two-sided") -> Real:
    """``log(2 exp(-2 n eps^2))`` (two-sided; ``exp(-2 n eps^2)`` one-sided): Thm 3-4 of [1]_."""
    n = _positive("labels", n)
    eps = _positive("epsilon", epsilon)
    return _sides_term(sides) - 2.0 * n * eps * eps


def _bennett_h(u: ArrayLike) -> FloatArray:
    u = np.asarray(u, dtype=float)
    with np.errstate(invalid="ignore"):
        series = u * u / 2 - u**3 / 6 + u**4 / 12 - u**5 / 20
        direct = (1.0 + u) * np.log1p(u) - u
    out: FloatArray = np.where(np.abs(u) < 1e-4, series, direct)
    return out


def bennett_rate(epsilon: ArrayLike, variance: ArrayLike, bound: ArrayLike = 1.0) -> Real:
    """Bennett's exponent per example, ``(v / b^2) h(b eps / v)`` with ``h(u) = (1+u) ln(1+u) - u``.

    For i.i.d. X_i with ``|X_i - E X_i| <= b`` (or ``|X_i| <= b`` as in [2]_, Proposition 1)
    and ``E[X_i^2] <= v``: ``P(|mean - E| > eps) <= 2 exp(-n rate)``.  In ease.ml/ci's Pattern 1
    (Section 4.1) ``X_i = n_i - o_i``, ``b = 1`` and ``v = p``, the bound on how often the new
    and old models disagree; for a 0/1 loss whose error rate is at most ``a < 1/2`` (Pattern
    2), ``v = a (1 - a)``.
    """
    eps, v, b = _positive("epsilon", epsilon), _positive("variance", variance), _positive("bound", bound)
    out = (v / b**2) * _bennett_h(b * eps / v)
    return float(out) if out.ndim == 0 else out


def bernstein_rate(epsilon: ArrayLike, variance: ArrayLike, bound: ArrayLike = 1.0) -> Real:
    """Bernstein's exponent per example, ``eps^2 / (2 (v + b eps / 3))`` (same assumptions as Bennett).

    Always at most :func:`bennett_rate` (Bernstein is Bennett with ``h(u) >= u^2 / (2 (1 + u/3))``).
    """
    eps, v, b = _positive("epsilon", epsilon), _positive("variance", variance), _positive("bound", bound)
    out = eps * eps / (2.0 * (v + b * eps / 3.0))
    return float(out) if out.ndim == 0 else out


def log_bennett_factor(n: ArrayLike, epsilon: ArrayLike, variance: ArrayLike, bound: ArrayLike = 1.0,
                       sides: str = "two-sided") -> Real:
    """``log(2 exp(-n (v/b^2) h(b eps / v)))``: Bennett's per-model factor ([2]_, Proposition 1)."""
    return _sides_term(sides) - _positive("labels", n) * bennett_rate(epsilon, variance, bound)


def log_bernstein_factor(n: ArrayLike, epsilon: ArrayLike, variance: ArrayLike, bound: ArrayLike = 1.0,
                         sides: str = "two-sided") -> Real:
    """``log(2 exp(-n eps^2 / (2 (v + b eps / 3))))``: Bernstein's per-model factor."""
    return _sides_term(sides) - _positive("labels", n) * bernstein_rate(epsilon, variance, bound)


def variance_labels(epsilon: ArrayLike, delta: ArrayLike, variance: ArrayLike, *, bound: ArrayLike = 1.0,
                    log_count: ArrayLike = 0.0, method: str = "bennett", sides: str = "two-sided") -> int | IntArray:
    """Smallest integer n with ``S * factor(n) < delta`` for Bennett's or Bernstein's factor.

    ``log_count = log S`` (histories, clauses and terms sharing delta, as in
    ``bounds.ci.clause_log_count``).  Vectorized over every argument.  With ``method =
    'bennett'``, ``sides='two-sided'``, ``bound=1`` this is ``bounds.ci.bennett_labels``
    ([2]_, Section 4.1.1: 29,048 labels for p = 0.1, 32 non-adaptive steps).

    Returns
    -------
    int or ndarray of int64
    """
    if method not in ("bennett", "bernstein"):
        raise InputError("method", "'bennett' or 'bernstein'", method)
    rate = (bennett_rate if method == "bennett" else bernstein_rate)(epsilon, variance, bound)
    d = np.asarray(delta, dtype=float)
    if np.any(~((d > 0) & (d < 1))):
        raise InputError("delta", "in (0, 1)", d.tolist() if d.ndim else float(d))
    a = _sides_term(sides) + np.asarray(log_count, dtype=float)
    a, r, t = np.broadcast_arrays(a, np.asarray(rate, dtype=float), np.log(d))
    n = smallest_integer_satisfying(a[..., None], r[..., None], t)
    n = np.maximum(n, 0)
    return int(n) if n.ndim == 0 else n
