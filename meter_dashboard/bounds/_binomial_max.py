"""The exact maximum behind ``F(n, eps)``, computed for a batch of n at once.

The mathematics (candidates, the Zubkov-Serov window, the certified increment signs,
branch and bound) is described in :mod:`meter_dashboard.bounds.binomial`; this module is
its vectorized engine.  Everything works on flat arrays indexed by (n, candidate) so that
a whole band of test-set sizes costs a few dozen numpy calls instead of a few dozen per n.

Notation: candidate ``j`` has ``p_j = j/n - eps``, upper tail ``U_j = P_{p_j}(X >= j)``,
lower tail ``L_j = P_{p_j}(X <= j - c)`` with ``c = ceil(2 n eps)``; ``G_j = U_j + L_j``.
Increment ``j`` is the change from candidate ``j`` to ``j + 1``.  With
``eta = (c - 1)/n - eps`` (so that ``(j - c + 1)/n = p_j - eta``) and ``h = 1/n``:

- ``U_{j+1} - U_j`` has the sign of ``Psi_U = log1p(-eps/(1-p)) + log(avg_{[0,h]} e^psi)``
  with ``psi(t) = j log1p(t/p) + (n - j - 1) log1p(-t/(1-p))`` (concave in t);
- ``L_{j+1} - L_j`` has the sign of ``-Psi_L``, ``Psi_L`` the same with ``k = j - c + 1`` in
  place of ``j`` and ``log1p(eta/(1-p))`` as the first term.

A concave ``psi`` lies above its chords and below its tangents, which brackets the
average in closed form: for one piece, chord ``expm1(D)/D`` with ``D = psi(h)`` and tangent
``expm1(T)/T`` with ``T = h psi'(0)``; both are rewritten without cancellation below.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr, ndtri

from ._binomial_batch import Batch, rows_per_batch, unique
from ._binomial_concave import concave_max, middle, peak_segments
from ._types import BoolArray, FloatArray, FourInts, IntArray, Real, Signs

__all__ = ["log_tail_maxima", "increment_signs", "refined_signs", "box_signs"]

_TOL = 1e-9  # a certified sign needs this margin (the closed forms are exact to ~1e-13)
_BRUTE_FORCE = 256  # an n with at most this many candidates is evaluated in full
_PIECES = 8  # pieces of the refined chord/tangent bracket (ambiguity shrinks as 1/pieces^2)
_BOX_ROUNDS = 14
_BLOCK = 16_384  # n per batch (memory stays a few MiB)
_BRUTE_WINDOW = 16_384  # uncertified windows up to this many candidates are evaluated in full
_CHUNK = 1 << 20  # candidates per vectorized evaluation


def _lem(x: ArrayLike) -> FloatArray:
    """``log(expm1(x) / x)`` for any real x (0 at 0), without overflow or cancellation."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 0.05
    if np.all(small):  # the common case in the refined brackets: a series, exact to ~1e-14
        x2 = x * x
        series: FloatArray = x / 2.0 + x2 / 24.0 - x2 * x2 / 2880.0
        return series
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        safe = np.where(small, 1.0, x)
        out = np.where(safe > 700.0, safe + np.log1p(-np.exp(-np.abs(safe))) - np.log(np.abs(safe)),
                       np.log(np.expm1(np.minimum(safe, 700.0)) / safe))
    x2 = x * x
    return np.where(small, x / 2.0 + x2 / 24.0 - x2 * x2 / 2880.0, out)


def _log_sinhc(x: ArrayLike) -> FloatArray:
    """``log(sinh(x) / x)`` for x >= 0 (series below 0.05, asymptotic above 700)."""
    x = np.asarray(x, dtype=float)
    x2 = x * x
    series: FloatArray = x2 / 6.0 - x2 * x2 / 180.0
    if np.all(x < 0.05):
        return series
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        safe = np.clip(x, 0.05, 700.0)
        out = np.where(x > 700.0, x - np.log(2.0 * np.maximum(x, 1.0)), np.log(np.sinh(safe) / safe))
    return np.where(x < 0.05, series, out)


def _g(x: ArrayLike) -> FloatArray:
    """``log1p(x) / x`` (1 at 0): decreasing in x."""
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(np.abs(x) < 1e-8, 1.0 - x / 2.0, np.log1p(x) / np.where(x == 0, 1.0, x))
    return out


def _gt(x: ArrayLike) -> FloatArray:
    """``-log1p(-x) / x`` (1 at 0): increasing in x on [0, 1)."""
    return _g(-np.asarray(x, dtype=float))


# --------------------------------------------------------------------------- one increment
def increment_signs(p: FloatArray, h: FloatArray, eps: FloatArray, eta: FloatArray, k_positive: BoolArray,
                    valid: BoolArray) -> Signs:
    """Certified signs of the increments at ``p`` (arrays): ``(up_u, down_u, up_l, down_l)``.

    ``h = 1/n``; ``eta`` as in the module notes; ``k_positive`` says ``j - c + 1 >= 1`` (else
    ``L_j = 0``: the lower tail cannot fall); ``valid``: ``0 < p``, ``h/(1-p) < 1``, ``j < n``.
    One chord and one tangent per tail: exact inequalities, evaluated in closed form.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = 1.0 - p
        u, v = h / p, h / q
        gu, gv = _g(u), _gt(v)
        base = np.log1p(-eps / q)
        up_u = valid & (base + _lem((1.0 + eps / p) * gu - (1.0 - eps / q - v) * gv) > _TOL)
        down_u = valid & (base + _lem(eps / (p * q) + v) < -_TOL)
        base_l = np.log1p(eta / q)
        ok_l = valid & k_positive
        up_l = ok_l & (base_l + _lem(-eta / (p * q) + v) < -_TOL)
        down_l = ok_l & (base_l + _lem((1.0 - eta / p) * gu - (1.0 + eta / q - v) * gv) > _TOL)
    return up_u, down_u, up_l, down_l


def _log_avg_bracket(m: FloatArray, p: FloatArray, h: ArrayLike, pieces: int) -> tuple[FloatArray, FloatArray]:
    """Bracket ``log((1/h) int_0^h e^psi)`` for ``psi(t) = m log1p(t/p) + (n - m - 1) log1p(-t/(1-p))``.

    ``m`` and ``rest = n - m - 1`` come in through ``p, h`` and ``m``; chords below, midpoint
    tangents above, on ``pieces`` equal pieces.  Returns ``(low, high)``.
    """
    h = np.broadcast_to(np.asarray(h, dtype=float), np.shape(p))
    rest = 1.0 / h - m - 1.0
    t = (np.arange(pieces + 1) / pieces)[None, :] * h[:, None]
    mid = ((np.arange(pieces) + 0.5) / pieces)[None, :] * h[:, None]
    pp, qq, mm, rr = p[:, None], (1.0 - p)[:, None], m[:, None], rest[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        psi = mm * np.log1p(t / pp) + rr * np.log1p(-t / qq)
        d = np.diff(psi, axis=1)
        chords = psi[:, :-1] + _lem(d)  # log of the chord's average over one piece
        psi_m = mm * np.log1p(mid / pp) + rr * np.log1p(-mid / qq)
        slope = mm / (pp + mid) - rr / (qq - mid)
        tangents = psi_m + _log_sinhc(np.abs(slope * (h[:, None] / pieces) / 2.0))
    with np.errstate(invalid="ignore"):
        low = np.logaddexp.reduce(chords, axis=1) - math.log(pieces)
        high = np.logaddexp.reduce(tangents, axis=1) - math.log(pieces)
    return low, high


def refined_signs(j: ArrayLike, n: ArrayLike, eps: FloatArray, c: ArrayLike, p: ArrayLike) -> Signs:
    """Like :func:`increment_signs` with the ``_PIECES``-piece bracket (for the few undecided)."""
    j, n, c, p = (np.asarray(x, dtype=float) for x in (j, n, c, p))
    h = 1.0 / n
    valid = (p > 0) & (h / (1.0 - p) < 1) & (j <= n - 1)
    eta = (c - 1.0) / n - eps
    k = j - c + 1.0
    low_u, high_u = _log_avg_bracket(j, p, h, _PIECES)
    base = np.log1p(-eps / (1.0 - p))
    up_u = valid & (base + low_u > _TOL)
    down_u = valid & (base + high_u < -_TOL)
    low_l, high_l = _log_avg_bracket(k, p, h, _PIECES)
    with np.errstate(invalid="ignore"):
        base_l = np.log1p(eta / (1.0 - p))
    ok = valid & (k >= 1)
    up_l = (k <= 0) | (ok & (base_l + high_l < -_TOL))
    down_l = (k < 0) | (ok & (base_l + low_l > _TOL))
    return up_u, down_u, up_l, down_l


# --------------------------------------------------------------------------- boxes of p (shared by a batch)
def _inv_pq_range(pa: FloatArray, pb: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Range of ``1/(p(1-p))`` over [pa, pb] (elementwise)."""
    ends = np.stack([1.0 / (pa * (1.0 - pa)), 1.0 / (pb * (1.0 - pb))])
    low = np.where((pa <= 0.5) & (pb >= 0.5), 4.0, ends.min(axis=0))
    return low, ends.max(axis=0)


def box_signs(pa: FloatArray, pb: FloatArray, h_lo: Real, h_hi: Real, eps: Real, eta_lo: Real, eta_hi: Real) -> Signs:
    """Signs certified for every increment with ``p`` in [pa, pb] and every n of the batch.

    Interval versions of :func:`increment_signs`: each term of the chord and tangent
    expressions is monotone in ``p``, ``h = 1/n`` and ``eta`` with a known direction, so
    the worst end of each range bounds it.  Returns ``(up_u, down_u, up_l, down_l)``.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        qa, qb = 1.0 - pa, 1.0 - pb  # qa >= qb
        valid = (pa > 0) & (h_hi / qb < 1)
        inv_lo, inv_hi = _inv_pq_range(pa, pb)
        base_lo, base_hi = np.log1p(-eps / qb), np.log1p(-eps / qa)
        first_lo = (1.0 + eps / pb) * _g(h_hi / pa)
        fac_hi = 1.0 - (eps + h_lo) / qa
        second_hi = fac_hi * np.where(fac_hi >= 0, _gt(h_hi / qb), _gt(h_lo / qa))
        up_u = valid & (base_lo + _lem(first_lo - second_hi) > _TOL)
        down_u = valid & (base_hi + _lem(eps * inv_hi + h_hi / qb) < -_TOL)
        ok_l = valid & (eta_lo > 0) & (pa >= eta_hi + h_hi)
        base_l_lo, base_l_hi = np.log1p(eta_lo / qa), np.log1p(eta_hi / qb)
        up_l = ok_l & (base_l_hi + _lem(-eta_lo * inv_lo + h_hi / qb) < -_TOL)
        fac_b = 1.0 - eta_hi / pa
        first_l_lo = fac_b * np.where(fac_b >= 0, _g(h_hi / pa), _g(h_lo / pb))
        num_hi = eta_hi - h_lo
        fac_c = 1.0 + np.maximum(num_hi / qb, num_hi / qa)
        second_l_hi = fac_c * np.where(fac_c >= 0, _gt(h_hi / qb), _gt(h_lo / qa))
        down_l = ok_l & (base_l_lo + _lem(first_l_lo - second_l_hi) > _TOL)
    # k = n (p - eta) <= 0 for the whole box: L_j = 0, so L cannot fall (and is constant when k < 0)
    up_l = up_l | (pb <= eta_lo)
    down_l = down_l | (pb <= eta_lo - h_hi)
    return up_u, down_u, up_l, down_l


def _boxes(p_lo: float, p_hi: float, h_lo: float, h_hi: float, eps: float, eta_lo: float, eta_hi: float, use_l: bool,
           min_width: float) -> tuple[FloatArray, BoolArray, BoolArray, BoolArray, BoolArray]:
    """Boxes ``[edges[i], edges[i+1]]`` covering [p_lo, p_hi] with their certified signs.

    Boxes whose sign is undecided for a tail are halved (down to ``min_width``), so the
    undecided part shrinks to the few increments near each tail's turning point.
    Returns ``(edges, up_u, down_u, up_l, down_l)``.
    """
    pa = np.linspace(p_lo, p_hi, 33)[:-1]
    pb = np.append(pa[1:], p_hi)
    for _ in range(_BOX_ROUNDS + 1):
        up_u, down_u, up_l, down_l = box_signs(pa, pb, h_lo, h_hi, eps, eta_lo, eta_hi)
        if not use_l:
            up_l = down_l = np.ones_like(up_l)
        split = ~((up_u | down_u) & (up_l | down_l)) & (pb - pa > min_width)
        if not split.any():
            break
        mids = (pa + pb) / 2
        pa, pb = np.sort(np.concatenate([pa, mids[split]])), np.sort(np.concatenate([pb, mids[split]]))
    return np.append(pa, pb[-1]), up_u, down_u, up_l, down_l


# --------------------------------------------------------------------------- windows (Zubkov-Serov)
def _kl(x: FloatArray, p: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x > 0, x * np.log(x / p), 0.0) + np.where(x < 1, (1 - x) * np.log((1 - x) / (1 - p)), 0.0)
    return np.where((x < 0) | (x > 1) | (p <= 0) | (p >= 1), np.inf, out)


def _kl_slope(p: FloatArray, shift: FloatArray) -> FloatArray:
    x = p + shift
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / p) - np.log((1 - x) / (1 - p)) - shift / p - shift / (1 - p)


def _kl_curvature(p: FloatArray, shift: FloatArray) -> FloatArray:
    """``d^2/dp^2 KL(p + shift || p)`` (> 0: the function is convex)."""
    x = p + shift
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1.0 / x - 1.0 / p + 1.0 / (1.0 - x) - 1.0 / (1.0 - p)
                + shift / (p * p) - shift / ((1.0 - p) ** 2))


def _root_outside(x: FloatArray, shift: FloatArray, level: FloatArray, towards: float) -> FloatArray:
    """Newton steps on ``KL(p + shift || p) = level`` from a point where it exceeds ``level``.

    On a convex function Newton's iterates started outside the sublevel set move towards
    it and never enter it, so every iterate is a valid (outer) end.  ``towards`` = +1 on
    the left branch (decreasing), -1 on the right branch (increasing).
    """
    for _ in range(12):
        f, slope = _kl(x + shift, x), _kl_slope(x, shift)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = (level - f) / slope
        good = np.isfinite(step) & (towards * step > 0) & (f > level)
        x = np.where(good, x + step, x)
    return x


def _sublevel(shift: FloatArray, level: FloatArray, p_lo: FloatArray,
              p_hi: FloatArray) -> tuple[FloatArray, FloatArray]:
    """An interval ``[lo, hi]`` (per element) containing ``{p in [p_lo, p_hi]: KL(p + shift || p) <= level}``.

    Convexity makes the set an interval.  The minimiser is located by Newton on the slope;
    if even the tangent line there stays above ``level`` over the range, the set is empty
    (``lo > hi``).  Each end comes from Newton steps started outside the set (so the result
    never cuts the set), falling back to the range end where no outside start is found.
    """
    m = np.clip(0.5 - shift / 2.0, p_lo, p_hi)
    for _ in range(8):
        with np.errstate(divide="ignore", invalid="ignore"):
            step = _kl_slope(m, shift) / _kl_curvature(m, shift)
        m = np.clip(np.where(np.isfinite(step), m - step, m), p_lo, p_hi)
    f_m, s_m = _kl(m + shift, m), _kl_slope(m, shift)
    with np.errstate(invalid="ignore"):
        floor = f_m - np.abs(s_m) * np.maximum(m - p_lo, p_hi - m)
    empty = (floor > level) | (2.0 * shift * shift > level)
    ends = []
    for side, edge in ((1.0, p_lo), (-1.0, p_hi)):
        spread = np.sqrt(2.0 * np.maximum(level - f_m, 0.0) / np.maximum(_kl_curvature(m, shift), 1e-300))
        guess = m - side * (2.0 * spread + 1e-9)
        guess = np.clip(guess, np.minimum(p_lo, p_hi), np.maximum(p_lo, p_hi))
        for _ in range(6):  # move the start outwards until it is outside the set
            out = (_kl(guess + shift, guess) > level) & (side * _kl_slope(guess, shift) < 0)
            guess = np.where(out, guess, (guess + edge) / 2.0)
        out = (_kl(guess + shift, guess) > level) & (side * _kl_slope(guess, shift) < 0)
        end = _root_outside(guess, shift, level, side)
        ends.append(np.where(out, end, edge))
    return np.where(empty, 1.0, ends[0]), np.where(empty, 0.0, ends[1])


def _log_normal_isf(log_q: ArrayLike) -> FloatArray:
    """``w`` with ``log Phi(-w) = log_q`` (elementwise, log_q < log 1/2), far below 1e-300."""
    log_q = np.asarray(log_q, dtype=float)
    with np.errstate(under="ignore"):
        w = np.where(log_q > -600.0, -ndtri(np.exp(np.maximum(log_q, -600.0))), np.sqrt(-2.0 * log_q))
    deep = log_q <= -600.0
    if np.any(deep):
        x = w[deep]
        for _ in range(40):  # Newton on log Phi(-x) (concave, decreasing)
            lp = log_ndtr(-x)
            slope = -np.exp(-0.5 * x * x - lp) / math.sqrt(2.0 * math.pi)
            x = x - (lp - log_q[deep]) / slope
        w[deep] = x
    return w


# --------------------------------------------------------------------------- signs at single increments
def _signs(batch: Batch, idx: IntArray, j: IntArray, refine: bool = True) -> list[BoolArray]:
    """Certified increment signs at (idx, j): simple bracket, refined where undecided."""
    nf = batch.n[idx].astype(float)
    p = batch.p(idx, j)
    eps = batch.e[idx]
    k_pos = (j - batch.c[idx] + 1) >= 1
    valid = (p > 0) & (1.0 / nf / (1.0 - p) < 1) & (j <= batch.n[idx] - 1)
    out = list(increment_signs(p, 1.0 / nf, eps, batch.eta[idx], k_pos, valid))
    k_le0 = (j - batch.c[idx] + 1) <= 0
    out[2] = out[2] | k_le0
    out[3] = out[3] | ((j - batch.c[idx] + 1) < 0)
    if not batch.use_l:
        out[2] = out[3] = np.ones(j.size, dtype=bool)
    open_ = ~((out[0] | out[1]) & (out[2] | out[3]))
    if refine and np.any(open_):
        sub = refined_signs(j[open_], nf[open_], eps[open_], batch.c[idx][open_].astype(float), p[open_])
        for t in range(4):
            out[t][open_] = out[t][open_] | (sub[t] if (batch.use_l or t < 2) else True)
    return out


def _windows(batch: Batch) -> tuple[IntArray, IntArray]:
    """Per range row, the candidates whose Zubkov-Serov bound can exceed the best value so far."""
    i = batch.r_idx
    n = batch.n[i].astype(float)
    p_lo = np.clip(batch.p(i, batch.r_lo), 0.0, 1.0)
    p_hi = np.clip(batch.p(i, batch.r_hi), 0.0, 1.0)
    share = batch.best[i] - (math.log(2.0) if batch.use_l else 0.0)
    none = share >= math.log(0.5)  # every bound is at most 1/2 <= theta / 2: nothing can exceed theta
    level = _log_normal_isf(np.minimum(share, math.log(0.49))) ** 2 / (2.0 * n)
    # upper tail: (j - 1)/n = p_j + shift with shift = eps - 1/n; lower: (j - c + 1)/n = p_j - eta
    shifts = [(batch.e[i] - 1.0 / n, True)] + ([(-batch.eta[i], False)] if batch.use_l else [])
    lo_p, hi_p = np.full(i.size, np.inf), np.full(i.size, -np.inf)
    for shift, upper in shifts:
        lo, hi = _sublevel(shift, level, p_lo, p_hi)
        inapplicable = (shift <= 0) if upper else (shift >= 0)  # n eps < 1: the bound says nothing
        none = none & ~inapplicable  # ... and may exceed 1/2
        lo, hi = np.where(inapplicable, p_lo, lo), np.where(inapplicable, p_hi, hi)
        real = lo <= hi
        lo_p = np.where(real, np.minimum(lo_p, lo), lo_p)
        hi_p = np.where(real, np.maximum(hi_p, hi), hi_p)
    ne = batch.n_eps[i]
    with np.errstate(invalid="ignore"):
        first = np.floor(n * np.where(np.isfinite(lo_p), lo_p, 2.0) + ne) - 1
        last = np.ceil(n * np.where(np.isfinite(hi_p), hi_p, -2.0) + ne) + 1
    first = np.maximum(first, batch.r_lo).astype(np.int64)
    last = np.minimum(last, batch.r_hi).astype(np.int64)
    last = np.where(none, first - 1, last)
    return first, last


class _Classes:
    """Certified increment signs for a batch: from shared p-boxes, per increment where undecided."""

    def __init__(self, batch: Batch, first: IntArray, last: IntArray) -> None:
        self.batch = batch
        live = first <= last
        i = batch.r_idx[live]
        n = batch.n[i].astype(float)
        h = 1.0 / n
        p_lo = float(np.min(batch.p(i, first[live]))) - float(h.max())
        p_hi = float(np.max(batch.p(i, last[live])))
        self.edges, *self.box = _boxes(max(p_lo, 1e-12), min(p_hi, 1.0 - 1e-12), float(h.min()), float(h.max()),
                                       float(batch.e[i[0]]), float(batch.eta[i].min()), float(batch.eta[i].max()),
                                       batch.use_l, 0.5 * float(h.min()))
        up_u, down_u, up_l, down_l = self.box
        self.inc_box, self.dec_box = up_u & up_l, down_u & down_l

    def _box_of(self, p: FloatArray) -> tuple[IntArray, BoolArray]:
        k = np.clip(np.searchsorted(self.edges, p, side="right") - 1, 0, self.edges.size - 2)
        return k, (p >= self.edges[0]) & (p <= self.edges[-1])

    def signs(self, row: IntArray, j: IntArray) -> list[BoolArray]:
        """``(up_u, down_u, up_l, down_l)`` at increments (row, j); False outside the row's range."""
        batch = self.batch
        idx = batch.r_idx[row]
        inside = (j >= batch.r_lo[row]) & (j <= batch.r_hi[row] - 1)
        k, covered = self._box_of(batch.p(idx, j))
        out = [np.where(covered, b[k], False) for b in self.box]
        open_ = inside & ~((out[0] | out[1]) & (out[2] | out[3]))
        if np.any(open_):
            sub = _signs(batch, idx[open_], j[open_])
            for t in range(4):
                out[t][open_] = sub[t]
        return [o & inside for o in out]

    def segments(self, first: IntArray, last: IntArray) -> FourInts:
        """Runs and single candidates of the windows, for branch and bound: ``(row, a, b, kind)``.

        kind 0: a single candidate; 1: a run where U falls and L rises (values <= U_a + L_b);
        2: the reverse (<= U_b + L_a).  Built from runs of equally classified boxes mapped to
        increments (O(boxes) per n); undecided increments are classified one by one.  A
        candidate is dropped when a neighbour certainly has both tails at least as large (the
        chain of such neighbours ends at a kept candidate, or outside the window where every
        value is below the best one).
        """
        runs = self._increment_runs(first, last)
        if runs[0].size == 0:
            return (np.zeros(0, dtype=np.int64),) * 4
        row, x, y, cls = runs
        order = np.lexsort((x, row))
        row, x, y, cls = row[order], x[order], y[order], cls[order]
        # merge neighbouring runs of one decided class (undecided boxes come back one increment each);
        # undecided increments stay single, so every candidate next to one is looked at
        joins = np.concatenate([[False], (row[1:] == row[:-1]) & (x[1:] == y[:-1] + 1) & (cls[1:] == cls[:-1])
                                & (cls[1:] != _UNKNOWN)])
        if joins.any():
            ends = np.concatenate([np.flatnonzero(~joins)[1:] - 1, [joins.size - 1]])
            row, x, cls, y = row[~joins], x[~joins], cls[~joins], y[ends]
        key = self.batch.pack(row, x)

        def class_of(rr: IntArray, jj: IntArray) -> IntArray:  # class of increment jj of row rr (0: in no run)
            i = np.clip(np.searchsorted(key, self.batch.pack(rr, jj), side="right") - 1, 0, key.size - 1)
            return np.where((row[i] == rr) & (x[i] <= jj) & (jj <= y[i]), cls[i], 0)

        live = np.flatnonzero(first <= last)
        c_row = np.concatenate([row, row, live, live])
        c_j = np.concatenate([x, y + 1, first[live], last[live]])
        inside = (c_j >= first[c_row]) & (c_j <= last[c_row])
        c_row, c_j = self.batch.unpack(unique(self.batch.pack(c_row[inside], c_j[inside])))
        left, right = class_of(c_row, c_j - 1), class_of(c_row, c_j)
        kept = (right != _INC) & (left != _DEC)
        single = kept & ~np.isin(left, (_K1, _K2)) & ~np.isin(right, (_K1, _K2))
        k_run = np.isin(cls, (_K1, _K2))
        return (np.concatenate([row[k_run], c_row[single]]), np.concatenate([x[k_run], c_j[single]]),
                np.concatenate([y[k_run] + 1, c_j[single]]),
                np.concatenate([np.where(cls[k_run] == _K1, 1, 2), np.zeros(int(single.sum()), dtype=np.int64)]))

    def _increment_runs(self, first: IntArray, last: IntArray) -> tuple[IntArray, ...]:
        """Runs ``(row, x, y, class)`` of increments x..y with one class, covering each window."""
        batch = self.batch
        rows = np.flatnonzero(first <= last)
        if rows.size == 0:
            return (np.zeros(0, dtype=np.int64),) * 4
        joint = _joint(*self.box)
        cut = np.flatnonzero(np.diff(joint)) + 1
        starts, stops = np.concatenate([[0], cut]), np.concatenate([cut, [joint.size]])
        p_a, p_b, run_cls = self.edges[starts], self.edges[stops], joint[starts]
        n = batch.n[batch.r_idx[rows]].astype(float)[:, None]
        ne = batch.n_eps[batch.r_idx[rows]][:, None]
        lo = np.maximum(first[rows] - 1, batch.r_lo[rows])[:, None]
        hi = np.minimum(last[rows], batch.r_hi[rows] - 1)[:, None]
        jx = np.maximum(np.ceil(n * p_a[None, :] + ne), lo).astype(np.int64)
        jy = np.minimum(np.floor(n * p_b[None, :] + ne), hi).astype(np.int64)
        for i in range(1, jx.shape[1]):  # adjacent boxes share an edge: give it to one run only
            jx[:, i] = np.maximum(jx[:, i], jy[:, i - 1] + 1)
        jx[:, 0] = np.minimum(jx[:, 0], lo[:, 0])  # the first and last runs reach the window's ends
        jy[:, -1] = np.maximum(jy[:, -1], hi[:, 0])
        r2 = np.broadcast_to(rows[:, None], jx.shape)
        c2 = np.broadcast_to(run_cls[None, :], jx.shape)
        real = jx <= jy
        known = real & (c2 != _UNKNOWN)
        out = [r2[known], jx[known], jy[known], c2[known]]
        open_ = real & (c2 == _UNKNOWN)
        size = (jy - jx + 1)[open_]
        if size.size:
            o_row = np.repeat(r2[open_], size)
            o_j = np.repeat(jx[open_], size) + (np.arange(size.sum()) - np.repeat(np.cumsum(size) - size, size))
            o_cls = _joint(*self.signs(o_row, o_j))
            out = [np.concatenate([out[0], o_row]), np.concatenate([out[1], o_j]),
                   np.concatenate([out[2], o_j]), np.concatenate([out[3], o_cls])]
        return tuple(out)


_INC, _DEC, _K1, _K2, _UNKNOWN = 1, 2, 3, 4, 5


def _joint(up_u: BoolArray, down_u: BoolArray, up_l: BoolArray, down_l: BoolArray) -> IntArray:
    """One class per increment: both tails rise, both fall, U falls and L rises, the reverse, undecided."""
    return np.select([up_u & up_l, down_u & down_l, down_u & up_l, up_u & down_l],
                     [_INC, _DEC, _K1, _K2], _UNKNOWN)


def _branch_and_bound(batch: Batch, row: IntArray, a: IntArray, b: IntArray, kind: IntArray) -> None:
    """Evaluate singletons and run ends; halve runs whose bound exceeds their n's best value."""
    idx = batch.r_idx[row]
    values: dict[int, tuple[float, float]] = {}

    def fetch(ii: IntArray, jj: IntArray) -> tuple[FloatArray, FloatArray]:
        key = batch.pack(ii, jj)
        uniq = unique(key)
        inv = np.searchsorted(uniq, key)
        todo = np.array([k for k in uniq.tolist() if k not in values], dtype=np.int64)
        if todo.size:
            lu, ll = batch.evaluate(*batch.unpack(todo))
            values.update(zip(todo.tolist(), zip(lu.tolist(), ll.tolist())))
        got = np.array([values[k] for k in uniq.tolist()]).reshape(-1, 2)[inv]
        return got[:, 0], got[:, 1]

    ua, la = fetch(idx, a)
    ub, lb = fetch(idx, b)
    while idx.size:
        bound = np.where(kind == 1, np.logaddexp(ua, lb), np.logaddexp(ub, la))
        live = (kind > 0) & (b - a > 1) & (bound > batch.best[idx])
        if not np.any(live):
            return
        idx, a, b, kind = idx[live], a[live], b[live], kind[live]
        ua, la, ub, lb = ua[live], la[live], ub[live], lb[live]
        m = (a + b) // 2
        um, lm = fetch(idx, m)
        idx, kind = np.concatenate([idx, idx]), np.concatenate([kind, kind])
        a, b = np.concatenate([a, m]), np.concatenate([m, b])
        ua, la = np.concatenate([ua, um]), np.concatenate([la, lm])
        ub, lb = np.concatenate([um, ub]), np.concatenate([lm, lb])


def _brute_force(batch: Batch, rows: IntArray, first: IntArray | None = None, last: IntArray | None = None) -> None:
    """Evaluate every candidate of the rows (of their windows ``first..last`` if given), in chunks."""
    first = batch.r_lo[rows] if first is None else first
    last = batch.r_hi[rows] if last is None else last
    size = np.maximum(last - first + 1, 0)
    ends = np.cumsum(size)
    start = 0
    while start < rows.size:
        stop = max(int(np.searchsorted(ends, ends[start] - size[start] + _CHUNK, side="right")), start + 1)
        part = slice(start, stop)
        row = np.repeat(rows[part], size[part])
        j = np.repeat(first[part], size[part]) + (np.arange(size[part].sum()) - np.repeat(
            np.cumsum(size[part]) - size[part], size[part]))
        batch.evaluate(batch.r_idx[row], j)
        start = stop


def _eps_rows(eps: Fraction | Sequence[Fraction], size: int) -> list[Fraction]:
    """One exact tolerance per n: ``eps`` repeated, or the sequence given."""
    return [eps] * size if isinstance(eps, Fraction) else list(eps)


def log_tail_maxima(ns: ArrayLike, eps: Fraction | Sequence[Fraction], a: Fraction | None, sides: str) -> FloatArray:
    """``log F(n, eps)`` for every n of ``ns`` (validated inputs; see ``binomial.log_tail_factor``).

    ``eps`` is one exact Fraction, or one per n (a batch may mix tolerances: every term of a
    union bound, every tolerance a search tries).  Every n is settled by the certificates of
    :mod:`._binomial_concave` (a few tail evaluations each, all n at once) or, where they do
    not apply, by branch and bound on groups of similar n with one tolerance (which share the
    certification of monotone stretches).
    """
    ns = np.asarray(ns, dtype=np.int64)
    eps = _eps_rows(eps, ns.size)
    out = np.empty(ns.size)
    block = rows_per_batch(int(ns.max()) if ns.size else 1, _BLOCK)
    for start in range(0, ns.size, block):
        part = ns[start:start + block]
        out[start:start + part.size] = _block_maxima(part, eps[start:start + block], a, sides)
    return out


def _block_maxima(ns: IntArray, eps: Sequence[Fraction], a: Fraction | None, sides: str) -> FloatArray:
    batch = Batch(ns, eps, a, sides)
    sizes = batch.r_hi - batch.r_lo + 1
    per_n = np.bincount(batch.r_idx, weights=sizes, minlength=ns.size)
    small = per_n[batch.r_idx] <= _BRUTE_FORCE
    if np.any(small):
        _brute_force(batch, np.flatnonzero(small))
    if np.all(small):
        return batch.best
    batch.evaluate(*batch.seeds(np.flatnonzero(~small)))
    first, last = _windows(batch)
    rows = np.flatnonzero(~small & (first <= last))
    trend = _monotone(batch, rows, first[rows], last[rows])
    ends = np.where(trend > 0, last[rows], first[rows])
    batch.evaluate(batch.r_idx[rows[trend != 0]], ends[trend != 0])
    rows = rows[trend == 0]
    ja, jb, runs, ok, flat = middle(batch, rows, first[rows], last[rows])
    peak = np.round(batch.n[batch.r_idx[rows]] * 0.5 + batch.n_eps[batch.r_idx[rows]])  # p = 1/2: the usual peak
    concave_max(batch, batch.r_idx[rows[flat]], ja[flat], jb[flat], peak[flat])
    peaks = ok & ~flat
    usable, segments = peak_segments(batch, rows[peaks], ja[peaks], jb[peaks], tuple(r[peaks] for r in runs))
    if segments[0].size:
        _branch_and_bound(batch, *segments)
    settled = flat.copy()
    settled[np.flatnonzero(peaks)[usable]] = True
    rest = rows[~settled]
    narrow = last[rest] - first[rest] < _BRUTE_WINDOW  # cheaper to evaluate them all than to certify
    _brute_force(batch, rest[narrow], first[rest[narrow]], last[rest[narrow]])
    hard = np.unique(batch.r_idx[rest[~narrow]])
    if hard.size:
        _hard_groups(batch, hard, eps, a, sides)
    return batch.best


def _hard_groups(batch: Batch, hard: IntArray, eps: Sequence[Fraction], a: Fraction | None, sides: str) -> None:
    """Branch and bound over certified runs, in groups of one tolerance with n_max <= 1.02 n_min."""
    ns = batch.n
    by_eps: dict[Fraction, list[int]] = {}
    for i in hard.tolist():
        by_eps.setdefault(eps[i], []).append(i)
    for e, members in by_eps.items():
        order = np.array(sorted(members, key=lambda i: ns[i]), dtype=np.int64)
        start = 0
        while start < order.size:
            stop = int(np.searchsorted(ns[order], 1.02 * ns[order[start]], side="right"))
            group = order[start:stop]
            batch.best[group] = np.maximum(batch.best[group], _hard_maxima(ns[group], e, a, sides))
            start = stop


def _monotone(batch: Batch, rows: IntArray, first: IntArray, last: IntArray) -> IntArray:
    """+1 where both tails certainly rise over the whole window (G peaks at ``last``), -1 where
    both fall (at ``first``), 0 otherwise: one interval bound per row (:func:`box_signs`)."""
    idx = batch.r_idx[rows]
    h = 1.0 / batch.n[idx]
    up_u, down_u, up_l, down_l = box_signs(batch.p(idx, first), batch.p(idx, np.maximum(last - 1, first)), h, h,
                                           batch.e[idx], batch.eta[idx], batch.eta[idx])
    if not batch.use_l:
        up_l = down_l = np.ones(idx.size, dtype=bool)
    return np.where(up_u & up_l, 1, np.where(down_u & down_l, -1, 0))


def _hard_maxima(ns: IntArray, eps: Fraction, a: Fraction | None, sides: str) -> FloatArray:
    """Branch and bound over the certified monotone runs (the general case; one tolerance)."""
    batch = Batch(ns, eps, a, sides)
    batch.evaluate(*batch.seeds())
    first, last = _windows(batch)
    if np.any(first <= last):
        classes = _Classes(batch, first, last)
        _branch_and_bound(batch, *classes.segments(first, last))
    return batch.best


def log_tail_lower(ns: ArrayLike, eps: Fraction | Sequence[Fraction], a: Fraction | None, sides: str) -> FloatArray:
    """A cheap lower bound on ``log F(n, eps)`` for every n: the best of a few likely candidates.

    Exact values at real candidates (p near 1/2 -+ eps/2, the range ends near ``a``, and
    ``p = a``), so a union bound that already exceeds delta with them certainly fails.
    ``eps``: one Fraction or one per n.
    """
    ns = np.asarray(ns, dtype=np.int64)
    batch = Batch(ns, _eps_rows(eps, ns.size), a, sides)
    batch.evaluate(*batch.seeds())
    return batch.best
