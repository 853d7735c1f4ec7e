"""The exact binomial count of many union bounds at once (issue 18).

A *problem* is one union bound ``sum_k S_k F(n, eps_k) < delta``, given as ``w_k = log S_k -
log delta`` and exact tolerances ``eps_k`` (distinct, every ``S_k > 0``); its count is the
smallest n from which every larger n satisfies it (``binomial.smallest_labels``).  All the
problems of a call are solved together, so each step is one vectorized evaluation and the
exact factors of all of them are one batch (rows of (n, eps), :mod:`._binomial_cache`):

1. Hoeffding's count bounds the answer from above (``F`` is at most Hoeffding's factor);
   the monotone envelope (:func:`._binomial_envelope.log_envelope`) certifies every n from
   ``hi`` on, found by a few vectorized grids.
2. Below ``hi`` the sum is a sawtooth of period about ``1/(2 eps_1)``, so the last violation
   is searched in windows of a few periods, top down: in a window every n is first bounded
   by the per-n bound (:func:`._binomial_envelope.log_bound`: the sawtooth's own lower
   threshold, so n early in a period are settled), and only the rest gets exact factors,
   largest term first, until each n is decided.  The largest violating n of the highest
   window that has one is the answer's predecessor (every n above it is decided).
3. Problems that bound each other (``w`` elementwise smaller or equal, same tolerances: a
   curve over T, where the multiplicities grow) bracket each other's answers: a problem
   between two solved ones starts from the lower one's last violation and stops at the
   upper one's count, and when the two counts agree it is solved without any work
   (:func:`solve_sequence`, coarse to fine).

Counts are cached per problem (:func:`._binomial_cache.recall`).
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _binomial_cache as cache
from ._binomial_batch import exact_parts
from ._binomial_envelope import log_bound, log_envelope, log_joint_bound
from ._numeric import log_sum_exp, smallest_integer_satisfying
from ._types import BoolArray, ExactInts, FloatArray, IntArray

__all__ = ["Problem", "solve", "solve_sequence", "violated", "violated_rows", "EXACT_LABELS"]

_LOG2 = math.log(2.0)
#: Exact factors are computed for test sets up to this many labels; above, a row the closed-form
#: bound does not settle counts as failing (conservative: the inverse answers at such budgets).
EXACT_LABELS = 10**10
_WINDOW_PERIODS = 3.5  # the first window: the envelope certifies from about three periods above the answer
_TWO_PHASES = 4096  # rows in a window from which the period ends are decided first
_JOINT_Z2 = 200.0  # 4 n e^2 above which the two tails' bounds are taken at one p (below, the gain is nil)
_GRID = 65


class Problem:
    """One union bound: ``w = log S - log delta`` per term, exact ``eps`` per term (distinct), and ``log delta``."""

    __slots__ = ("w", "eps", "log_delta", "key")

    def __init__(self, logs: ArrayLike, eps: Sequence[Fraction], log_delta: float, a: Fraction | None,
                 sides: str) -> None:
        self.w = np.asarray(logs, dtype=float) - log_delta
        self.eps = list(eps)
        self.log_delta = float(log_delta)
        self.key = cache.count_key(logs, self.eps, log_delta, a, sides)

    def below(self, other: "Problem") -> bool:
        """Whether this union bound is at most ``other``'s at every n (so its count is at most ``other``'s)."""
        return (self.w.shape == other.w.shape and self.key[1] == other.key[1]
                and bool(np.all(self.w <= other.w)))


#: per problem and term: the tolerances as Fractions (an object array), their numerators and denominators
Fractions = Sequence[ExactInts]


def _padded(problems: Sequence[Problem]) -> tuple[FloatArray, FloatArray, NDArray[np.object_], ExactInts, ExactInts]:
    """``(W (P, K) with -inf padding, eps floats (P, K), eps as Fractions, numerators, denominators (P, K))``."""
    width = max(p.w.size for p in problems)
    w = np.full((len(problems), width), -np.inf)
    e = np.ones((len(problems), width))
    frac = np.full((len(problems), width), Fraction(1), dtype=object)
    for i, p in enumerate(problems):
        w[i, :p.w.size] = p.w
        e[i, :p.w.size] = [float(x) for x in p.eps]
        frac[i, :p.w.size] = p.eps
    num = np.array([[x.numerator for x in row] for row in frac], dtype=object)
    den = np.array([[x.denominator for x in row] for row in frac], dtype=object)
    if max(np.abs(num).max(), den.max()) < 2**53:
        num, den = num.astype(np.int64), den.astype(np.int64)
    return w, e, frac, num, den


def _envelope_start(w: FloatArray, e: FloatArray, a: Fraction | None, sides: str) -> IntArray:
    """Per problem, ``hi``: every n >= hi satisfies the bound with every term at its envelope."""
    factor = _LOG2 if sides == "two-sided" else 0.0
    top = smallest_integer_satisfying(w + factor, 2.0 * e * e, np.zeros(w.shape[0])).astype(np.int64) + 2
    lo, hi = np.zeros(w.shape[0], dtype=np.int64), np.maximum(top, 1)
    t = np.linspace(0.0, 1.0, _GRID)
    while np.any(hi - lo > 1):
        grid = np.round(lo[:, None] + (hi - lo)[:, None] * t[None, :]).astype(np.int64)
        grid = np.clip(grid, lo[:, None] + 1, np.maximum(hi[:, None] - 1, lo[:, None] + 1))
        env = log_envelope(grid[:, :, None], e[:, None, :], a, sides)
        ok = log_sum_exp(w[:, None, :] + env) < 0.0
        live = (hi - lo > 1)[:, None]
        failing = np.where(~ok & live, grid, -1).max(axis=1)
        passing = np.where(ok & live, grid, np.iinfo(np.int64).max).min(axis=1)
        lo = np.maximum(lo, failing)
        hi = np.minimum(hi, passing)
    return hi


def _tighter_start(w: FloatArray, e: FloatArray, hi: IntArray, a: Fraction | None, sides: str) -> IntArray:
    """``hi`` moved down where the largest term's two tails, bounded at one p with the envelope's shift, allow it.

    Two-sided without a range: :func:`._binomial_envelope.log_joint_bound` with ``eta = e``
    bounds ``F(n')`` for every ``n' >= n`` (for each p both tails only fall as n grows), so any
    n where the union bound holds with it certifies everything above: the smallest such n on
    two grids below ``hi`` is the new start (the envelope's ``hi`` is up to twenty periods
    high at millions of labels).
    """
    if a is not None or sides != "two-sided":
        return hi
    k = np.argmax(w, axis=1)
    rows = np.flatnonzero(4.0 * hi * e[np.arange(w.shape[0]), k] ** 2 > _JOINT_Z2)
    if not rows.size:
        return hi
    out: IntArray = hi.copy()
    out[rows] = _joint_start(w[rows], e[rows], hi[rows], k[rows], sides)
    return out


def _joint_start(w: FloatArray, e: FloatArray, hi: IntArray, k: IntArray, sides: str) -> IntArray:
    rows = np.arange(w.shape[0])
    span = np.maximum(np.ceil(40.0 / (2.0 * e.min(axis=1))), 64).astype(np.int64)
    lo = np.maximum(hi - span, 1)
    for _ in range(2):
        grid = np.round(lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, 17)[None, :]).astype(np.int64)
        grid = np.maximum(grid, 1)
        terms = w[:, None, :] + log_envelope(grid[:, :, None], e[:, None, :], None, sides)
        joint = log_joint_bound(grid.ravel(), np.repeat(e[rows, k], grid.shape[1]), np.zeros(grid.size))
        terms[rows, :, k] = np.minimum(terms[rows, :, k], w[rows, k][:, None] + joint.reshape(grid.shape))
        ok = log_sum_exp(terms) < 0.0
        first_ok = np.where(ok, grid, np.iinfo(np.int64).max).min(axis=1)
        below = np.where(~ok & (grid < first_ok[:, None]), grid, 0).max(axis=1)
        hi = np.minimum(hi, first_ok)
        lo = np.maximum(below, np.where(first_ok < np.iinfo(np.int64).max, below, lo))
    return hi


def _decide(rows_p: IntArray, ns: IntArray, w: FloatArray, fractions: Fractions, a: Fraction | None,
            sides: str) -> BoolArray:
    """For rows (problem, n): is ``sum_k S_k F(n, eps_k) >= delta`` (a violation)?  Exact factors only where needed.

    Every term starts at its per-n bound; the largest term still bounded is made exact, row by
    row, until the bounds settle the row (``fractions = (Fractions, numerators, denominators)``
    per problem and term).
    """
    frac, num, den = fractions
    width = w.shape[1]
    if ns.size == 0:
        return np.zeros(0, dtype=bool)
    bound = np.full((ns.size, width), -np.inf)
    e_rows, eta_rows = np.zeros(bound.shape), np.zeros(bound.shape)
    # per problem, at its smallest n: the envelope (never rising in n) bounds every term at all its rows;
    # only the largest term gets each row's own bound
    problems = np.unique(rows_p)
    n_min = np.full(w.shape[0], np.iinfo(np.int64).max)
    np.minimum.at(n_min, rows_p, ns)
    e_f = np.array([[float(x) for x in row] for row in frac[problems]])
    env = w[problems] + log_envelope(n_min[problems][:, None], e_f, a, sides)
    main = np.zeros(w.shape[0], dtype=np.int64)
    main[problems] = np.argmax(env, axis=1)
    flat_env = np.full(w.shape, -np.inf)
    flat_env[problems] = env
    for k in range(width):
        sel = np.flatnonzero(np.isfinite(w[rows_p, k]))
        minor = sel[main[rows_p[sel]] != k]
        bound[minor, k] = flat_env[rows_p[minor], k]
        sel = sel[main[rows_p[sel]] == k]
        if not sel.size:
            continue
        parts = exact_parts(ns[sel], (num[rows_p[sel], k], den[rows_p[sel], k]), a)
        shift_a = None if a is None else float(a) - (parts["low_a"] + 1.0) / ns[sel]
        bound[sel, k] = w[rows_p[sel], k] + log_bound(ns[sel], parts["e"], parts["eta"], a, sides, shift_a)
        e_rows[sel, k], eta_rows[sel, k] = parts["e"], parts["eta"]
    if a is None and sides == "two-sided":  # the largest term of unsettled rows: its tails at one p
        rows = np.flatnonzero(log_sum_exp(bound) >= 0.0)
        k = np.argmax(bound[rows], axis=1)
        deep = 4.0 * ns[rows] * e_rows[rows, k] ** 2 > _JOINT_Z2  # where the tails' peaks are apart
        rows, k = rows[deep], k[deep]
        if rows.size:
            joint = log_joint_bound(ns[rows], e_rows[rows, k], eta_rows[rows, k])
            bound[rows, k] = np.minimum(bound[rows, k], w[rows_p[rows], k] + joint)
    exact = ~np.isfinite(w[rows_p])  # padding counts as exact (it is 0)
    violated = np.zeros(ns.size, dtype=bool)
    open_ = np.ones(ns.size, dtype=bool)
    while open_.any():
        total = log_sum_exp(bound)
        lower = log_sum_exp(np.where(exact, bound, -np.inf))
        full = exact.all(axis=1)
        bad = open_ & ((lower >= 0.0) | (full & (total >= 0.0)))
        violated |= bad
        open_ &= ~bad & (total >= 0.0)
        huge = open_ & (ns > EXACT_LABELS)  # beyond the exact factors: not certified, so failing
        violated |= huge
        open_ &= ~huge
        rows = np.flatnonzero(open_)
        if not rows.size:
            break
        k = np.argmax(np.where(exact[rows], -np.inf, bound[rows]), axis=1)  # the largest term still bounded
        bound[rows, k] = w[rows_p[rows], k] + cache.factors(ns[rows], list(frac[rows_p[rows], k]), a, sides)
        exact[rows, k] = True
    return violated


def violated(problem: Problem, ns: ArrayLike, a: Fraction | None, sides: str) -> BoolArray:
    """For each n of ``ns``: does ``problem``'s union bound fail at exactly n (``>= delta``)?"""
    ns = np.asarray(ns, dtype=np.int64)
    return violated_rows([problem], np.zeros(ns.size, dtype=np.int64), ns, a, sides)


def violated_rows(problems: Sequence[Problem], rows_p: ArrayLike, ns: ArrayLike, a: Fraction | None,
                  sides: str) -> BoolArray:
    """For rows (problem index, n): does that union bound fail at exactly n?  One batch of exact factors.

    Above :data:`EXACT_LABELS` labels a row the closed-form bound cannot settle counts as failing.
    """
    w, _, *fractions = _padded(problems)
    return _decide(np.asarray(rows_p, dtype=np.int64), np.asarray(ns, dtype=np.int64), w, fractions, a, sides)


def solve(problems: Sequence[Problem], a: Fraction | None, sides: str, floors: Sequence[int] | None = None,
          uppers: Sequence[int] | None = None) -> list[int]:
    """The count of each problem; ``floors[i]`` a known violating n (or 0), ``uppers[i]`` an n from which all satisfy."""
    out: list[int | None] = [cache.recall(p.key) for p in problems]
    todo = [i for i, v in enumerate(out) if v is None]
    if not todo:
        return cast(list[int], out)  # every count known
    sub = [problems[i] for i in todo]
    w, e, *fractions = _padded(sub)
    upper = _tighter_start(w, e, _envelope_start(w, e, a, sides), a, sides)
    floor = np.zeros(len(sub), dtype=np.int64)
    if floors is not None:
        floor = np.maximum(floor, np.array([floors[i] for i in todo], dtype=np.int64))
    if uppers is not None:
        upper = np.minimum(upper, np.array([uppers[i] for i in todo], dtype=np.int64))
    period = 1.0 / (2.0 * e.min(axis=1))
    answer = np.zeros(len(sub), dtype=np.int64)
    live = np.ones(len(sub), dtype=bool)
    round_ = 0
    while live.any():
        width = np.ceil(_WINDOW_PERIODS * period * 2 ** round_).astype(np.int64) + 16
        start = np.maximum(floor + 1, upper - width)
        idx = np.flatnonzero(live & (start < upper))
        done_now = live & (start >= upper)  # nothing left between the known violation and ``upper``
        answer[done_now], live[done_now] = floor[done_now] + 1, False
        if idx.size:
            last = _last_violations(idx, start, upper, w, fractions, a, sides)
            hit = idx[last[idx] >= 0]
            answer[hit], live[hit] = last[hit] + 1, False
            rest = idx[last[idx] < 0]
            upper[rest] = start[rest]
        round_ += 1
    for i, value in zip(todo, answer.tolist()):
        out[i] = int(value)
        cache.remember(problems[i].key, int(value))
    return cast(list[int], out)  # every count filled in


def _rows(idx: IntArray, lo: IntArray, hi: IntArray) -> tuple[IntArray, IntArray]:
    """Rows (problem, n) for every n in [lo[i], hi[i]) of the problems ``idx``."""
    size = np.maximum(hi[idx] - lo[idx], 0)
    rows_p = np.repeat(idx, size)
    return rows_p, np.repeat(lo[idx], size) + (np.arange(size.sum()) - np.repeat(np.cumsum(size) - size, size))


def _last_violations(idx: IntArray, start: IntArray, upper: IntArray, w: FloatArray, fractions: Fractions,
                     a: Fraction | None, sides: str) -> IntArray:
    """Per problem of ``idx``, the largest violating n in [start, upper) (or -1), every n above it decided.

    The sum peaks at the ends of the sawtooth's periods (the last n before ``2 n eps_1``
    passes a whole number: the lower threshold moves one label away), so those are decided
    first; then only the n above the highest violating end need deciding.  The order saves
    the n below the answer; it is not needed for correctness (every n above is decided).
    """
    last = np.full(w.shape[0], -1, dtype=np.int64)
    rows_p, ns = _rows(idx, start, upper)
    if ns.size < _TWO_PHASES:  # a small batch: one call costs less than the n it would save
        bad = _decide(rows_p, ns, w, fractions, a, sides)
        np.maximum.at(last, rows_p[bad], ns[bad])
        return last
    frac, num, den = fractions
    k = np.argmin(np.where(np.isfinite(w), 1.0, 2.0) * np.array([[float(x) for x in r] for r in frac]), axis=1)
    pair = (num[rows_p, k[rows_p]], den[rows_p, k[rows_p]])
    ends = exact_parts(ns + 1, pair, None)["c"] > exact_parts(ns, pair, None)["c"]
    bad = _decide(rows_p[ends], ns[ends], w, fractions, a, sides)
    np.maximum.at(last, rows_p[ends][bad], ns[ends][bad])
    rest = ~ends & (ns > last[rows_p])
    bad = _decide(rows_p[rest], ns[rest], w, fractions, a, sides)
    np.maximum.at(last, rows_p[rest][bad], ns[rest][bad])
    return last


def _brackets(problems: Sequence[Problem], solved: dict[int, int], order: list[int], i: int) -> tuple[int, int]:
    """(known violation, n from which all satisfy) for problem i from its nearest solved neighbours.

    ``order`` is the sorted list of solved indices.
    """
    at = bisect.bisect_left(order, i)
    left = order[at - 1] if at > 0 else None
    right = order[at] if at < len(order) else None
    floor = solved[left] - 1 if left is not None and problems[left].below(problems[i]) else 0
    upper = (solved[right] if right is not None and problems[i].below(problems[right])
             else np.iinfo(np.int64).max)
    return max(floor, 0), upper


def solve_sequence(problems: Sequence[Problem], a: Fraction | None, sides: str) -> list[int]:
    """Counts of problems along a sequence (a curve), coarse to fine, each level bracketed by the solved ones."""
    size = len(problems)
    solved: dict[int, int] = {}
    step = 1 << max(0, (size - 1).bit_length())
    while len(solved) < size:
        level = sorted({min(i, size - 1) for i in range(0, size + step, step)} - set(solved))
        floors, uppers, work = [], [], []
        order = sorted(solved)
        for i in level:
            floor, upper = _brackets(problems, solved, order, i)
            if floor + 1 >= upper:  # the neighbours agree: nothing to search
                solved[i] = floor + 1
                continue
            floors.append(floor)
            uppers.append(upper)
            work.append(i)
        if work:
            got = solve([problems[i] for i in work], a, sides, floors, uppers)
            solved.update(zip(work, got))
        step = max(step // 2, 1)
    return [solved[i] for i in range(size)]
