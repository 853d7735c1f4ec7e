"""Certificates that find the maximum behind F with a handful of tail evaluations per n.

Notation of :mod:`meter_dashboard.bounds._binomial_max`: candidate ``j`` has ``p = j/n - eps``,
``q = 1 - p``, ``h = 1/n``, ``U_j = P_p(X >= j)``, ``L_j = P_p(X <= j - c)``, ``eta = (c - 1)/n - eps``
and ``k = j - c + 1`` (so ``k/n = p - eta``).  Exact identities (the fundamental theorem of
calculus in p, then ``d/dp P_p(X >= k) = n b_{n-1}(k - 1; p)``):

    U_{j+1} - U_j = b_n(j; p) (R_j - 1),     R_j = (1 - eps/q) avg_{t in [0, h]} exp(psi_j(t)),
    L_{j+1} - L_j = b_n(k; p) (1 - S_j),     S_j = (1 + eta/q) avg_{t in [0, h]} exp(phi_j(t)),

with ``psi_j(t) = j log(1 + t/p) + (n - j - 1) log(1 - t/q)`` and ``phi_j`` the same with ``k`` for
``j``.  Write ``Psi = log R`` and ``Phi = log S``; both are bracketed in closed form (``psi`` is
concave: chord below, tangent above).  Both make sense for real ``j = x`` (``b_n`` through
the gamma function), which gives three certificates, each a few elementary operations:

1. *Slopes*.  ``dPsi/dx = -h eps / (q (q - eps)) + E[d psi/dx]`` (a weighted mean over t) and
   ``d psi/dx <= t B(p)`` with ``B = (eps + h)/(q (q - h)) - (eps - h)/(p (p + h))`` (from
   ``log(1 + u) <= u`` and ``-log(1 - u) <= u/(1 - u)``), so ``Psi`` falls on ``[pa, pb]`` when
   ``eps/(qa (qa - eps)) > max(0, B(pb))``.  Likewise ``dPhi/dx >= h eta [1/(q (q + eta))
   + min(0, C)]`` with ``C = 1/(p (p + h)) - 1/(q (q - h))``, so ``Phi`` rises.  Then ``U`` and ``L``
   are each unimodal over the candidates, and where each rises or falls is read off the
   brackets of ``Psi`` and ``Phi`` by bisection (no tail is evaluated).
2. *Concavity*.  ``D(x) = b_n(x; p)(R(x) - 1)`` interpolates the increments of ``U``;
   ``D' = b [(log b)' (R - 1) + R Psi']``, and ``(log b)'(x) = log(p/q) + eps/p + eps/q +
   digamma(n - x + 1) - digamma(x + 1)`` is bounded on an interval by its midpoint value and
   a bound on ``(log b)''`` (``1/y + 1/(2 y^2) < trigamma(y) < 1/y + 1/y^2``, with the terms
   grouped so that their cancellation is kept).  ``D' <= 0`` throughout makes ``U`` concave
   there; the same for ``L`` with ``E(x) = b_n(k; p)(1 - S(x))``.  A sum of concave sequences
   is concave, so ``G = U + L`` is.
3. On the stretch between the last candidate where both tails certainly rise and the
   first where both certainly fall, ``G`` is concave (2.), so the first ``j`` with
   ``G_{j+1} <= G_j`` is its maximum: found by a bracketed secant search on the sign of
   ``G_{j+1} - G_j``, a few exact tail evaluations per n.

The three hold where the worst case is one flat peak (``sqrt(2) eps z < 1`` with ``z`` the
tails' normal quantile: every plan of moderate size); elsewhere the caller falls back to
branch and bound.

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019 (Thm 4).
.. [2] M. Abramowitz, I. A. Stegun, "Handbook of Mathematical Functions", 6.4.11-12 and
   6.3.18 (the asymptotic series of digamma and trigamma, enveloping for real y > 0).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import digamma

from ._binomial_batch import Batch, ranges
from ._types import BoolArray, FloatArray, FourInts, IntArray, Real

__all__ = ["psi_bracket", "phi_bracket", "middle", "peak_segments", "concave_max"]

_TOL = 1e-9  # a certified sign needs this margin (the closed forms are exact to ~1e-13)
_SLACK = 1e-9  # relative margin on the slope and concavity certificates


def _lem(x: ArrayLike) -> FloatArray:
    """``log(expm1(x) / x)`` (0 at 0), for |x| small or moderate (series below 0.05)."""
    x = np.asarray(x, dtype=float)
    x2 = x * x
    series = x / 2.0 + x2 / 24.0 - x2 * x2 / 2880.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        safe = np.where(np.abs(x) < 0.05, 1.0, np.minimum(x, 700.0))
        direct = np.log(np.expm1(safe) / safe)
    return np.where(np.abs(x) < 0.05, series, direct)


def _log1p_over(x: FloatArray) -> FloatArray:
    """``log1p(x) / x`` (1 at 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.abs(x) < 1e-8, 1.0 - x / 2.0, np.log1p(x) / np.where(x == 0, 1.0, x))


def psi_bracket(p: FloatArray, h: Real, eps: Real) -> tuple[FloatArray, FloatArray]:
    """``(low, high)`` of ``Psi = log R``: ``U_{j+1} - U_j`` has its sign.  ``p`` of candidate j."""
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        base = np.log1p(-eps / q)
        chord = (1.0 + eps / p) * _log1p_over(h / p) - (1.0 - eps / q - h / q) * _log1p_over(-h / q)
        return base + _lem(chord), base + _lem(eps / (p * q) + h / q)


def phi_bracket(p: FloatArray, h: Real, eta: Real) -> tuple[FloatArray, FloatArray]:
    """``(low, high)`` of ``Phi = log S``: ``L_{j+1} - L_j`` has the sign of ``-Phi``."""
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        base = np.log1p(eta / q)
        chord = (1.0 - eta / p) * _log1p_over(h / p) - (1.0 + eta / q - h / q) * _log1p_over(-h / q)
        return base + _lem(chord), base + _lem(-eta / (p * q) + h / q)


# --------------------------------------------------------------------------- 1. slopes
def _psi_slope_max(pa: FloatArray, pb: FloatArray, h: FloatArray, eps: FloatArray) -> FloatArray:
    """An upper bound on ``dPsi/dx`` over ``p`` in [pa, pb] (negative: U is unimodal there)."""
    qa, qb = 1.0 - pa, 1.0 - pb
    with np.errstate(divide="ignore", invalid="ignore"):
        b = (eps + h) / (qb * (qb - h)) - (eps - h) / (pb * (pb + h))
        main = eps / (qa * (qa - eps))
        slope = -h * (main - np.maximum(b, 0.0) - _SLACK * (main + np.abs(b)))
    ok = (eps > h) & (pa > 0) & (qb - eps >= h * 0.5) & (qb > h)
    return np.where(ok, slope, np.inf)


def _phi_slope_min(pa: FloatArray, pb: FloatArray, h: FloatArray, eta: FloatArray) -> FloatArray:
    """A lower bound on ``dPhi/dx`` over ``p`` in [pa, pb] (positive: L is unimodal there)."""
    qa, qb = 1.0 - pa, 1.0 - pb
    with np.errstate(divide="ignore", invalid="ignore"):
        cc = 1.0 / (pb * (pb + h)) - 1.0 / (qb * (qb - h))
        main = 1.0 / (qa * (qa + eta))
        slope = h * eta * (main + np.minimum(cc, 0.0) - _SLACK * (main + np.abs(cc)))
    ok = (eta > 0) & (pa > 0) & (qb > h)
    return np.where(ok, slope, -np.inf)


# --------------------------------------------------------------------------- 2. concavity
def _corner_max(lo1: FloatArray, hi1: FloatArray, lo2: FloatArray, hi2: FloatArray) -> FloatArray:
    return np.maximum(np.maximum(lo1 * lo2, lo1 * hi2), np.maximum(hi1 * lo2, hi1 * hi2))


def _log_pmf_slope(xm: FloatArray, n: FloatArray, h: FloatArray, pm: FloatArray, shift: FloatArray, width: FloatArray,
                   pa: FloatArray, pb: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Bounds on ``d/dx log b_n(x - s; p(x))`` over an interval of x of the given width.

    ``shift = eps`` for ``U`` (``b_n(x; p)``, ``x h = p + eps``), ``shift = -eta`` for ``L``
    (``b_n(k; p)``, ``k h = p - eta``).  Midpoint value plus a Lipschitz bound.
    """
    qm = 1.0 - pm
    k = n * (pm + shift)  # the pmf's argument at the midpoint
    value = np.log(pm / qm) + shift / pm + shift / qm + digamma(n - k + 1.0) - digamma(k + 1.0)
    qa, qb = 1.0 - pa, 1.0 - pb
    # (log b)'' = h/p - h s/p^2 - 1/(k+1) + h/q + h s/q^2 - 1/(n-k+1) - [trigamma - 1/y] terms
    s2 = shift * shift
    first = h * (h * np.maximum(np.abs(pa - shift), np.abs(pb - shift)) + s2) / (pa * pa * np.minimum(
        pa + shift + h, pb + shift + h))
    second = h * (h * np.maximum(np.abs(qa + shift), np.abs(qb + shift)) + s2) / (qb * qb * np.minimum(
        qb - shift + h, qa - shift + h))
    tails = (h / np.minimum(pa + shift + h, pb + shift + h)) ** 2 + (h / np.minimum(qb - shift + h, qa - shift + h)) ** 2
    lip = first + second + tails
    spread = lip * width / 2.0 + 1e-13 * (1.0 + np.abs(value))
    return value - spread, value + spread


def concave_u(xa: FloatArray, xb: FloatArray, n: FloatArray, eps: FloatArray, n_eps: FloatArray) -> BoolArray:
    """Whether ``U`` is concave on the candidates ``xa..xb`` (``D' <= 0`` on [xa, xb])."""
    h = 1.0 / n
    pa, pb = (xa - n_eps) / n, (xb - n_eps) / n
    slope = _psi_slope_max(pa, pb, h, eps)
    r_lo = np.expm1(psi_bracket(pb, h, eps)[0])  # Psi falls: its range is [Psi(xb), Psi(xa)]
    r_hi = np.expm1(psi_bracket(pa, h, eps)[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        d_lo, d_hi = _log_pmf_slope((xa + xb) / 2.0, n, h, (pa + pb) / 2.0, eps, xb - xa, pa, pb)
        cond = _corner_max(d_lo, d_hi, r_lo, r_hi) + (1.0 + r_lo) * slope
    return (slope < 0) & (cond < 0) & (pb < 1.0 - eps - h)


def concave_l(xa: FloatArray, xb: FloatArray, n: FloatArray, eta: FloatArray, n_eps: FloatArray,
              c: IntArray) -> BoolArray:
    """Whether ``L`` is concave on the candidates ``xa..xb`` (``E' <= 0`` on [xa, xb]; needs k >= 1)."""
    h = 1.0 / n
    pa, pb = (xa - n_eps) / n, (xb - n_eps) / n
    slope = _phi_slope_min(pa, pb, h, eta)
    s_lo = -np.expm1(phi_bracket(pb, h, eta)[1])  # Phi rises: 1 - S ranges over [1 - S(xb), 1 - S(xa)]
    s_hi = -np.expm1(phi_bracket(pa, h, eta)[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        d_lo, d_hi = _log_pmf_slope((xa + xb) / 2.0, n, h, (pa + pb) / 2.0, -eta, xb - xa, pa, pb)
        cond = _corner_max(d_lo, d_hi, s_lo, s_hi) - (1.0 - s_hi) * slope
    return (slope > 0) & (cond < 0) & (xa - c + 1 >= 1)


# --------------------------------------------------------------------------- 3. the stretch and its maximum
def _bisect(value: Callable[[IntArray, IntArray], FloatArray], rows: IntArray, lo: IntArray, hi: IntArray,
            last: bool) -> IntArray:
    """Per row, the largest (``last``) or smallest j in [lo, hi] found with ``value(rows, j) > 0``.

    ``lo - 1`` / ``hi + 1`` when none is found.  Whatever pattern the signs have, a returned
    j has ``value > 0``; the callers only rely on that (monotonicity does the rest).  The
    values are smooth in j, so after both ends the next point is interpolated between the
    two bracketing values (regula falsi), with a bisection step whenever the bracket did not
    halve: a handful of evaluations instead of twenty.
    """
    a, b = lo - 1, hi + 1  # sentinels: "true" at a (last) or at b (first)
    va, vb = np.full(lo.shape, np.nan), np.full(lo.shape, np.nan)
    slow = np.zeros(lo.shape, dtype=np.int64)
    for step in range(10_000):
        live = b - a > 1
        if not np.any(live):
            return a if last else b
        width = b - a
        if step < 2:  # the two ends first (hi, then lo)
            m = hi if step == 0 else lo
        else:
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                guess = np.round(a + (b - a) * va / (va - vb))
            usable = np.isfinite(guess) & (slow < 2)
            m = np.where(usable, guess, (a + b) // 2).astype(np.int64)
        m = np.clip(m, a + 1, np.maximum(b - 1, a + 1))
        v = np.full(m.shape, np.nan)
        v[live] = value(rows[live], m[live])
        t = v > 0
        if last:
            a, va = np.where(live & t, m, a), np.where(live & t, v, va)
            b, vb = np.where(live & ~t, m, b), np.where(live & ~t, v, vb)
        else:
            a, va = np.where(live & ~t, m, a), np.where(live & ~t, v, va)
            b, vb = np.where(live & t, m, b), np.where(live & t, v, vb)
        va, vb = np.where(np.isfinite(va), va, np.nan), np.where(np.isfinite(vb), vb, np.nan)
        slow = np.where((step >= 2) & (2 * (b - a) > width), slow + 1, 0)
    raise RuntimeError("bisection did not end")  # pragma: no cover (the bracket shrinks every step)


def middle(batch: Batch, rows: IntArray, first: IntArray,
           last: IntArray) -> tuple[IntArray, IntArray, FourInts, BoolArray, BoolArray]:
    """Where G rises, falls and may peak, per row: ``(ja, jb, runs, slopes_ok, flat)``.

    With certified slopes (``slopes_ok``), ``U`` rises on the increments up to ``runs[0]``
    and falls from ``runs[1]``, ``L`` likewise with ``runs[2]``, ``runs[3]`` (``L`` is 0 below
    ``k = 1``, then rises): ``G`` rises up to candidate ``ja`` and falls from ``jb``.  ``flat``:
    ``G`` is also concave on ``ja..jb``.  ``rows`` index the batch's range rows, ``first..last``
    their windows.
    """
    idx = batch.r_idx[rows]
    n = batch.n[idx].astype(float)
    h, eps = 1.0 / n, batch.e[idx]
    first = first + (batch.p(idx, first) <= 0)  # p = 0: G = 0 there
    top = np.maximum(last - 1, first)  # the last increment of the window

    def at(r: IntArray, j: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:  # (p, h, eta) of increment j
        i = batch.r_idx[r]
        return batch.p(i, j), 1.0 / batch.n[i], batch.eta[i]

    def at_u(r: IntArray, j: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:  # (p, h, eps) likewise
        i = batch.r_idx[r]
        return batch.p(i, j), 1.0 / batch.n[i], batch.e[i]

    ok = _psi_slope_max(batch.p(idx, first), batch.p(idx, last), h, eps) < 0
    a_u = _bisect(lambda r, j: psi_bracket(*at_u(r, j))[0] - _TOL, rows, first, top, True)
    b_u = _bisect(lambda r, j: -psi_bracket(*at_u(r, j))[1] - _TOL, rows, first, top, False)
    a_l, b_l = a_u, b_u
    if batch.use_l:
        c = batch.c[idx]
        start = np.maximum(first, c)  # increments with k = j - c + 1 >= 1 (below: L stays 0, then rises)
        ok &= (start > top) | (_phi_slope_min(batch.p(idx, start), batch.p(idx, last), h, batch.eta[idx]) > 0)
        a_l = _bisect(lambda r, j: np.where(j < batch.c[batch.r_idx[r]], np.inf, -phi_bracket(*at(r, j))[1] - _TOL),
                      rows, first, top, True)
        b_l = _bisect(lambda r, j: np.where(j >= batch.c[batch.r_idx[r]], phi_bracket(*at(r, j))[0] - _TOL, -np.inf),
                      rows, first, top, False)
    ja, jb = np.minimum(np.minimum(a_u, a_l) + 1, last), np.minimum(np.maximum(b_u, b_l), last)
    flat = ok & (jb - ja < 2)
    wide = ok & (jb - ja >= 2)
    if np.any(wide):
        xa, xb, i = ja[wide].astype(float), jb[wide].astype(float), idx[wide]
        good = concave_u(xa, xb, n[wide], eps[wide], batch.n_eps[i])
        if batch.use_l:
            good &= concave_l(xa, xb, n[wide], batch.eta[i], batch.n_eps[i], batch.c[i])
        flat[wide] = good
    ok &= first <= last
    return ja, jb, (a_u, b_u, a_l, b_l), ok, flat & ok


def peak_segments(batch: Batch, rows: IntArray, ja: IntArray, jb: IntArray, runs: tuple[IntArray, ...],
                  limit: int = 256) -> tuple[BoolArray, FourInts]:
    """Branch-and-bound segments ``(row, a, b, kind)`` for a middle that is not concave.

    Between U's rise and L's fall (or the reverse) the run where one tail falls and the
    other rises (kind 1: U falls; 2: U rises), bounded by its ends; the few candidates
    around each tail's turning point singly (kind 0).  ``None`` for rows where those
    exceed ``limit`` or the turning points are not ordered.
    """
    a_u, b_u, a_l, b_l = runs
    k1 = b_u <= a_l + 1  # U falls from b_u, L rises up to a_l + 1
    k2 = ~k1 & (b_l <= a_u + 1)
    run_a, run_b = np.where(k1, b_u, b_l), np.where(k1, a_l + 1, a_u + 1)
    usable = (k1 | k2) & ((run_a - ja) + (jb - run_b) <= limit)
    sel = np.flatnonzero(usable)
    left, right = run_a[sel] - ja[sel], jb[sel] - run_b[sel]
    single_row = np.concatenate([np.repeat(rows[sel], left), np.repeat(rows[sel], right)])
    single_j = np.concatenate([ranges(ja[sel], left), ranges(run_b[sel] + 1, right)])
    seg_row = np.concatenate([rows[sel], single_row])
    seg_a = np.concatenate([run_a[sel], single_j])
    seg_b = np.concatenate([run_b[sel], single_j])
    kind = np.concatenate([np.where(k1[sel], 1, 2), np.zeros(single_j.size, dtype=np.int64)])
    return usable, (seg_row, seg_a, seg_b, kind)


def concave_max(batch: Batch, idx: IntArray, ja: IntArray, jb: IntArray, guess: ArrayLike) -> None:
    """Evaluate the maximum of ``G`` over ``ja..jb`` for each row, ``G`` being concave there.

    The maximum is the first j with ``G_{j+1} <= G_j`` (or ``jb``).  A bracketed search on that
    sign, started at ``guess`` (where the maximum is expected): the first step evaluates two
    increments and extrapolates where they vanish (Newton on the increments); then secant
    steps on the relative increments between the last rising and the first falling one,
    extrapolation while only one sign is seen, bisection when the bracket does not halve.
    Every evaluation goes through ``batch.evaluate``, which keeps the best value.
    """
    lo, hi = ja.astype(np.int64), jb.astype(np.int64)
    single = lo >= hi
    if np.any(single):
        batch.evaluate(idx[single], lo[single])
    x_up, d_up = lo - 1, np.full(lo.shape, np.nan)  # the last increment seen rising, and its size
    x_dn, d_dn = hi, np.full(lo.shape, np.nan)  # the first seen falling
    m = np.clip(np.asarray(guess, dtype=np.int64), lo, np.maximum(hi - 2, lo))
    slow = np.zeros(lo.shape, dtype=np.int64)  # steps that did not halve the bracket
    first = True
    while True:
        live = lo < hi
        if not np.any(live):
            return
        width = hi - lo
        i, j = idx[live], m[live]
        count = 3 if first else 2
        top = jb[live] if first else j + 1  # never a candidate beyond the stretch (evaluate keeps every value)
        log_u, log_l = batch.evaluate(np.tile(i, count), np.concatenate([np.minimum(j + k, top) for k in range(count)]))
        g = np.logaddexp(log_u, log_l).reshape(count, -1)
        for k in range(count - 1):
            d = np.full(lo.shape, np.nan)
            d[live] = np.expm1(g[k + 1] - g[k])
            at = m + k
            inside = live & (at >= lo) & (at < hi) & (at + 1 <= jb)
            up, dn = inside & (d > 0), inside & ~(d > 0)
            lo, x_up, d_up = np.where(up, at + 1, lo), np.where(up, at, x_up), np.where(up, d, d_up)
            hi, x_dn, d_dn = np.where(dn, np.minimum(at, hi), hi), np.where(dn, at, x_dn), np.where(dn, d, d_dn)
            if k == 0:
                d0 = d
        both = np.isfinite(d_up) & np.isfinite(d_dn)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            secant = x_up + np.round(d_up / (d_up - d_dn) * (x_dn - x_up))
            newton = m + np.round(d0 / (d0 - d)) if first else np.full(lo.shape, np.nan)
        slow = np.where(both & (2 * (hi - lo) > width), slow + 1, 0)
        mid = (lo + hi) // 2
        step = np.where(both & np.isfinite(secant) & (slow < 2), secant, mid)
        step = np.where(~both & np.isfinite(newton), newton, step)
        m = np.clip(step.astype(np.int64), lo, np.maximum(hi - 1, lo))
        first = False
