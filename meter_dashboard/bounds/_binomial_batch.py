"""The per-n constants of a batch of exact factors ``F(n, eps)``: one row per (n, eps) pair.

A batch holds test-set sizes ``n`` and, for each, its own tolerance ``eps`` (an exact
rational): a whole curve, every term of a union bound and every tolerance a search tries
share one vectorized evaluation (issue 18; the mathematics is in
:mod:`meter_dashboard.bounds.binomial` and :mod:`meter_dashboard.bounds._binomial_max`).

Per row: ``c = ceil(2 n eps)`` and the candidate ranges exactly (integer arithmetic on the
exact rationals, in int64 where it cannot overflow, else Python integers), ``n eps`` and
``eta = (c - 1)/n - eps`` correctly rounded, and ``e = eps`` as a float.  Candidates are
addressed by ``(row, j)`` keys packed in one int64 (:meth:`Batch.pack`), with as many bits
for ``j`` as the largest n needs.
"""
from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TypedDict, Union

import numpy as np
from numpy.typing import ArrayLike

from ._tails import log_binom_cdf, log_binom_sf
from ._types import ExactInts, FloatArray, IntArray

__all__ = ["Batch", "exact_parts", "rows_per_batch", "unique", "ranges"]

_EXACT = 2**53  # integers below this are exact as floats (and their quotients correctly rounded)
_SAFE = 2**62
#: the tolerances of a batch: one Fraction, one per row, or their (numerators, denominators) already
Tolerances = Union[Fraction, Sequence[Fraction], tuple[ExactInts, ExactInts]]


def unique(keys: ArrayLike) -> IntArray:
    """Sorted distinct values of an int64 array (sorting: numpy's hash-based ``unique`` is slow here)."""
    keys = np.sort(np.asarray(keys, dtype=np.int64))
    out: IntArray = keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if keys.size else keys
    return out


def ranges(starts: ArrayLike, sizes: ArrayLike) -> IntArray:
    """Concatenated ``start, start + 1, ..., start + size - 1`` for each pair."""
    sizes = np.maximum(np.asarray(sizes, dtype=np.int64), 0)
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    out: IntArray = np.repeat(np.asarray(starts, dtype=np.int64), sizes) + offsets
    return out


def _shift(n_max: int) -> int:
    return max(40, int(n_max).bit_length() + 1)


def rows_per_batch(n_max: int, wanted: int) -> int:
    """At most ``wanted`` rows, few enough that (range row, candidate) keys fit in an int64."""
    return max(1, min(wanted, int(2 ** (61 - _shift(n_max)) // 2)))


def _fractions(eps: Tolerances, size: int) -> tuple[ExactInts, ExactInts]:
    """``(numerators, denominators)`` as int64 arrays, or object arrays of Python ints when large.

    ``eps``: one Fraction, a sequence of Fractions, or a pair of such arrays already.
    """
    if isinstance(eps, tuple) and len(eps) == 2 and isinstance(eps[0], np.ndarray):
        return eps
    if isinstance(eps, Fraction):
        num, den = [eps.numerator], [eps.denominator]
        big = max(abs(eps.numerator), eps.denominator) >= _EXACT
        arrays = (np.array(num, dtype=object if big else np.int64), np.array(den, dtype=object if big else np.int64))
        return np.broadcast_to(arrays[0], (size,)), np.broadcast_to(arrays[1], (size,))
    num = [e.numerator for e in eps]
    den = [e.denominator for e in eps]
    big = max(max(map(abs, num), default=0), max(den, default=1)) >= _EXACT
    kind = object if big else np.int64
    return np.array(num, dtype=kind), np.array(den, dtype=kind)


def _exact_ints(n: IntArray, num: ExactInts, den: ExactInts,
                a: Fraction | None) -> tuple[ExactInts, ExactInts, ExactInts]:
    """``(n, num, den)`` as arrays in which the products below cannot overflow (object dtype where needed)."""
    scale = 4 * (1 if a is None else 2 * (abs(a.numerator) + a.denominator))
    if num.dtype != object and (n.size == 0 or int(n.max()) * max(int(np.abs(num).max()), int(den.max())) * scale
                                < _SAFE):
        return n, num, den
    return n.astype(object), num.astype(object), den.astype(object)


def _to_int64(values: ExactInts) -> IntArray:
    return np.asarray(values, dtype=np.int64) if values.dtype != object else np.array(values.tolist(), dtype=np.int64)


def _floor_div(top: ExactInts, bottom: ExactInts | int) -> IntArray:
    return _to_int64(top // bottom)


def _ceil_div(top: ExactInts, bottom: ExactInts | int) -> IntArray:
    return _to_int64(-((-top) // bottom))


def _ratio(top: ExactInts, bottom: ExactInts) -> FloatArray:
    """``top / bottom`` correctly rounded (floats when both are exact, else Python's int division)."""
    if top.dtype != object and (top.size == 0 or (np.abs(top).max() < _EXACT and bottom.max() < _EXACT)):
        out: FloatArray = top.astype(float) / bottom.astype(float)
        return out
    return np.array([int(t) / int(b) for t, b in zip(top.tolist(), bottom.tolist())], dtype=float)


class ExactParts(TypedDict, total=False):
    """:func:`exact_parts`: ``e``, ``n_eps``, ``eta`` floats, the rest exact integers (the last four with ``a``)."""

    e: FloatArray
    c: IntArray
    n_eps: FloatArray
    eta: FloatArray
    lo: IntArray
    r1_hi: IntArray
    up_a: IntArray
    r2_lo: IntArray
    low_a: IntArray


def exact_parts(ns: ArrayLike, eps: Tolerances, a: Fraction | None) -> ExactParts:
    """Exact per-row constants of (n, eps) rows: ``c = ceil(2 n eps)``, the candidate ranges, ``p = a``'s thresholds.

    Integer results (``c``, ``lo = ceil(n eps)``; with ``a``: ``r1_hi = floor(n (a + eps))``,
    ``r2_lo = ceil(n (1 - a + eps))``, ``up_a = ceil(n (a + eps))``, ``low_a = floor(n (a - eps))``)
    are exact; ``n_eps``, ``eta = (c - 1)/n - eps`` and ``e = eps`` are correctly rounded floats.
    """
    n = np.asarray(ns, dtype=np.int64)
    num, den = _fractions(eps, n.size)
    out: ExactParts = {"e": _ratio(num, den) if num.dtype == object else num.astype(float) / den.astype(float)}
    nn, num, den = _exact_ints(n, num, den, a)
    prod = nn * num
    out["c"] = c = _ceil_div(2 * prod, den)
    out["n_eps"] = _ratio(prod, den)
    c_n: ExactInts = c.astype(object) if nn.dtype == object else c  # c in nn's dtype
    out["eta"] = _ratio((c_n - 1) * den - prod, nn * den)
    out["lo"] = _ceil_div(prod, den)
    if a is not None:
        an, ad = a.numerator, a.denominator
        top = nn * (an * den + num * ad)  # n (a + eps) = top / (ad den)
        out["r1_hi"] = np.minimum(n, _floor_div(top, ad * den))
        out["up_a"] = _ceil_div(top, ad * den)
        out["r2_lo"] = np.maximum(out["lo"], _ceil_div(nn * ((ad - an) * den + num * ad), ad * den))
        out["low_a"] = _floor_div(nn * (an * den - num * ad), ad * den)
    return out


class Batch:
    """Per-row constants: ranges of candidates, c, n eps, eta, eps (parallel arrays), and the best value so far.

    ``eps`` is one exact Fraction for every row, or one per row; ``a`` (the largest error
    rate, or None) and ``sides`` are shared by the batch.
    """

    def __init__(self, ns: ArrayLike, eps: Fraction | Sequence[Fraction], a: Fraction | None, sides: str) -> None:
        self.a, self.sides = a, sides
        self.use_l = sides == "two-sided"
        n = self.n = np.asarray(ns, dtype=np.int64)
        self.shift = _shift(int(n.max()) if n.size else 1)
        parts = exact_parts(n, eps, a)
        self.e, self.c, self.n_eps, self.eta = parts["e"], parts["c"], parts["n_eps"], parts["eta"]
        lo, idx = parts["lo"], np.arange(n.size, dtype=np.int64)
        if a is None:
            spans = [(lo, n)]
        else:
            r1, r2 = (lo, parts["r1_hi"]), (parts["r2_lo"], n)
            spans = {"two-sided": [r1, r2], "upper": [r1], "lower": [r2]}[sides]
        keep = [x <= y for x, y in spans]
        self.r_idx = np.concatenate([idx[k] for k in keep])
        self.r_lo = np.concatenate([x[k] for (x, _), k in zip(spans, keep)])
        self.r_hi = np.concatenate([y[k] for (_, y), k in zip(spans, keep)])
        self.best = np.full(n.size, -np.inf)
        if a is not None and sides != "lower":  # p = a itself, with its own thresholds
            nf, af = n.astype(float), float(a)
            log_u = log_binom_sf(parts["up_a"].astype(float), nf, af)
            log_l = (log_binom_cdf(parts["low_a"].astype(float), nf, af) if self.use_l
                     else np.full(n.size, -np.inf))
            self.best = np.logaddexp(log_u, log_l)

    # ------------------------------------------------------------------ keys
    def pack(self, rows: ArrayLike, j: ArrayLike) -> IntArray:
        """One int64 key per (row, candidate), ordered by row then candidate."""
        return np.asarray(rows, dtype=np.int64) * (1 << self.shift) + np.asarray(j, dtype=np.int64)

    def unpack(self, keys: IntArray) -> tuple[IntArray, IntArray]:
        return keys >> self.shift, keys & ((1 << self.shift) - 1)

    # ------------------------------------------------------------------ values
    def p(self, idx: IntArray, j: ArrayLike) -> FloatArray:
        out: FloatArray = (np.asarray(j, dtype=float) - self.n_eps[idx]) / self.n[idx]
        return out

    def evaluate(self, idx: ArrayLike, j: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Exact ``(log U_j, log L_j)`` for the batch members ``idx`` at candidates ``j``; updates best."""
        idx = np.asarray(idx, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        if idx.size == 0:
            return np.zeros(0), np.zeros(0)
        nf = self.n[idx].astype(float)
        p = np.clip(self.p(idx, j), 0.0, 1.0)
        log_u = np.where(p > 0, log_binom_sf(j.astype(float), nf, p), -np.inf)
        if self.use_l:
            log_l = np.where(p > 0, log_binom_cdf((j - self.c[idx]).astype(float), nf, p), -np.inf)
        else:
            log_l = np.full(idx.size, -np.inf)
        np.maximum.at(self.best, idx, np.logaddexp(log_u, log_l))
        return log_u, log_l

    def seeds(self, rows: IntArray | None = None) -> tuple[IntArray, IntArray]:
        """Candidates near the likely maximum: j near p = 1/2 - eps/2, 1/2, 1/2 + eps/2 (clipped to each range).

        Two-sided without a range the failure probability is symmetric about p = 1/2 and peaks
        there: that candidate alone.
        """
        rows = np.arange(self.r_idx.size) if rows is None else rows
        i = self.r_idx[rows]
        e = self.e[i]
        n, ne = self.n[i].astype(float), self.n_eps[i]
        spots = (0.5,) if (self.a is None and self.use_l) else (0.5 - e / 2, 0.5, 0.5 + e / 2)
        js = [np.clip(np.round(n * p + ne), self.r_lo[rows], self.r_hi[rows]) for p in spots]
        return self.unpack(unique(np.concatenate([self.pack(i, j) for j in js])))
