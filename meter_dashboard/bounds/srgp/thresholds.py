"""The z-thresholds of fsSRGP (Eq. 4) and presSRGP (Eqs. 5-6): root finds over normal tails.

A threshold ``b`` solves ``P(Z_k <= b_k for the earlier nodes k, Z > b) = level``.  One
:class:`~meter_dashboard.bounds.srgp.normal.JointTail` is prepared per root find (the
merged variables, their order, the Cholesky factor and the integration points are shared
by every evaluation), the root is found by Brent's method on a bracket that is known in
closed form, and solved thresholds are cached: the same streak, level and correlations
(the same trace and alpha) never integrate twice.

References
----------
.. [1] J. Feng et al., "Sequential algorithmic modification with test data reuse",
   UAI 2022, Sections 2.3 (Eq. 4) and 2.4 (Eqs. 5-6).
.. [2] R. P. Brent, *Algorithms for Minimization without Derivatives*, Prentice-Hall,
   1973, Chapter 4 (the zero finder).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr, ndtri_exp

from .._types import FloatArray, IntArray
from .levels import MAX_CONDITIONING
from .normal import IDENTICAL, Z_FAR, JointTail, normal_isf

__all__ = ["find_root", "select_conditioning", "sequential_threshold", "joint_tail_probability"]

_EPS = np.finfo(float).eps


def find_root(f: Callable[[float], float], a: float, b: float, *, fa: float | None = None,
              fb: float | None = None, xtol: float = 1e-9, rtol: float = 4 * _EPS, maxiter: int = 100) -> float:
    """A zero of ``f`` in ``[a, b]`` (``f(a)`` and ``f(b)`` of opposite signs), Brent's method.

    Inverse quadratic interpolation and secant steps, falling back to bisection, so it
    converges at least as fast as bisection and superlinearly on smooth functions.
    """
    fa = f(a) if fa is None else fa
    fb = f(b) if fb is None else fb
    if fa == 0:
        return a
    if fb == 0:
        return b
    if (fa > 0) == (fb > 0):
        raise ValueError("f(a) and f(b) must have opposite signs")
    c, fc = a, fa
    d = e = b - a
    for _ in range(maxiter):
        if (fb > 0) == (fc > 0):
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 2.0 * _EPS * abs(b) + 0.5 * (xtol + rtol * abs(b))
        m = 0.5 * (c - b)
        if abs(m) <= tol or fb == 0:
            return b
        if abs(e) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:
                p, q = 2.0 * m * s, 1.0 - s
            else:
                q, r = fa / fc, fb / fc
                p = s * (2.0 * m * q * (q - r) - (b - a) * (r - 1.0))
                q = (q - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0:
                q = -q
            else:
                p = -p
            if 2.0 * p < min(3.0 * m * q - abs(tol * q), abs(e * q)):
                e, d = d, p / q
            else:
                d = e = m
        else:
            d = e = m
        a, fa = b, fb
        b += d if abs(d) > tol else (tol if m > 0 else -tol)
        fb = f(b)
    return b


def select_conditioning(prior_thresholds: FloatArray, r: FloatArray, level: float, cap: int) -> IntArray:
    """Indices of at most ``cap`` earlier nodes to condition on (most informative first).

    Score = ``(b_k - r_k b) / sqrt(1 - r_k**2)`` at the Bonferroni threshold b: the
    conditional z of ``Z_k <= b_k`` given ``Z_j = b``; small scores cut away the most
    probability.  Deterministic given the thresholds and correlations.  Conditioning on
    fewer nodes never raises the error rate (a union bound; see the package notes).
    """
    finite = np.flatnonzero(prior_thresholds < Z_FAR)
    if finite.size <= cap:
        return finite
    if cap <= 0:
        return finite[:0]
    b = normal_isf(level)
    rk = r[finite]
    bk = prior_thresholds[finite]
    s2 = 1.0 - rk * rk
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(s2 > 1e-14, (bk - rk * b) / np.sqrt(np.maximum(s2, 1e-300)),
                         np.where(rk * b > bk, -np.inf, np.inf))
    order = np.argsort(score, kind="stable")[:cap]
    return np.sort(finite[order])


def joint_tail_probability(threshold: float, prior_thresholds: ArrayLike, corr: ArrayLike, *, seed: int = 0,
                           log: bool = False) -> float:
    """``P(Z_k <= b_k for every earlier node k, Z_last > threshold)``, Z ~ N(0, corr).

    The left side of the simplified Eq. 4 (fsSRGP) and of Eqs. 5-6 (presSRGP) for
    one-sided z-tests.  ``corr`` is the correlation matrix of (Z_1..Z_m, Z_last).  One and
    two dimensions are integrated deterministically, three or more by randomized
    quasi-Monte Carlo seeded with ``seed`` (see :mod:`.normal`).

    References
    ----------
    Feng et al., Section 2.3, Eq. 4 and Section 2.4, Eqs. 5-6.
    """
    b = np.asarray(prior_thresholds, dtype=float).ravel()
    tail = JointTail(b, np.asarray(corr, dtype=float).reshape(b.size + 1, b.size + 1), seed=seed,
                     reference=threshold)
    out = tail.log_probability(float(threshold))
    return out if log else (math.exp(out) if out > -math.inf else 0.0)


def sequential_threshold(level: float, prior_thresholds: ArrayLike = (), corr: ArrayLike | None = None, *,
                         seed: int = 0, max_conditioning: int = MAX_CONDITIONING) -> tuple[float, IntArray]:
    """The z-threshold ``b`` with ``P(Z_k <= b_k for earlier k, Z > b) = level``.

    Solves the simplified Eq. 4 (fsSRGP, earlier failed tests of the streak) and Eqs. 5-6
    (presSRGP, earlier prespecified nodes) for one-sided z-tests.  With no earlier nodes it
    is the plain ``Phi^{-1}(1 - level)``.

    Parameters
    ----------
    level : float
        The alpha this node may spend, ``w alpha``.
    prior_thresholds : sequence of float
        z-thresholds b_k of the earlier nodes (``inf`` for nodes that spend nothing).
    corr : array_like, shape (m + 1, m + 1)
        Correlations of (Z_1..Z_m, Z) with the new node last.
    seed : int
        Seed of the quasi-Monte Carlo integration (three dimensions and more).
    max_conditioning : int
        Condition on at most this many earlier nodes (fewer is conservative).

    Returns
    -------
    threshold : float
        ``b`` (``inf`` when ``level`` is 0, ``-inf`` when even ``b = -inf`` spends less).
    used : ndarray of int
        Indices of the earlier nodes conditioned on.

    References
    ----------
    Feng et al., Section 2.3 (Eq. 4) and Section 2.4 (Eqs. 5-6).
    """
    level = float(level)
    b_prior = np.asarray(prior_thresholds, dtype=float).ravel()
    if level <= 0:
        return math.inf, np.zeros(0, dtype=int)
    b_bonf = normal_isf(min(level, 1.0))
    if b_prior.size == 0:
        return b_bonf, np.zeros(0, dtype=int)
    c = np.asarray(corr, dtype=float)
    used = select_conditioning(b_prior, c[:-1, -1], level, max_conditioning)
    if used.size == 0:
        return b_bonf, used
    idx = np.r_[used, b_prior.size]
    sub = np.ascontiguousarray(c[np.ix_(idx, idx)])
    bk = np.ascontiguousarray(b_prior[used])
    b = _cached_threshold(level, bk.tobytes(), sub.tobytes(), int(seed))
    return b, used


@lru_cache(maxsize=4096)
def _cached_threshold(level: float, thresholds: bytes, corr: bytes, seed: int) -> float:
    """The root of one threshold problem, cached by its exact inputs (floats and bytes only)."""
    bk = np.frombuffer(thresholds, dtype=float)
    sub = np.frombuffer(corr, dtype=float).reshape(bk.size + 1, bk.size + 1)
    hi = normal_isf(min(level, 1.0))  # P(Z_K <= b_K, Z > b) <= P(Z > b) = level
    tail = JointTail(bk, sub, seed=seed, reference=hi)
    log_level = math.log(level)

    def h(x: float) -> float:
        return tail.log_probability(x) - log_level

    # P(Z_K <= b_K, Z > b) >= P(Z > b) - sum_k P(Z_k > b_k): a point where it is >= level
    spill = level + float(np.sum(ndtr(-bk)))
    lo = normal_isf(spill) if spill < 1.0 else -Z_FAR
    lo = max(min(lo, hi), -Z_FAR)
    same = sub[:-1, -1] >= IDENTICAL
    cap = float(np.min(bk[same])) if np.any(same) else math.inf
    if cap < hi:
        return _threshold_below_cap(h, cap, lo, level)
    return _threshold_by_secant(tail, hi, lo)


def _threshold_by_secant(tail: JointTail, target: float, lo: float) -> float:
    """Root of ``q(b) = target`` in ``[lo, target]``, with ``q(b)`` the z-value of the probability.

    ``q(b) = Phi^{-1}(1 - P(Z_K <= b_K, Z > b))`` is nearly ``b`` plus a slowly varying
    term, so a secant step from the Bonferroni threshold (slope 1) lands next to the root
    and Brent's method finishes in a step or two: three or four integrations per
    threshold instead of ten.  ``q(target) >= target`` and ``q(lo) <= target`` by the
    bounds on the bracket.
    """
    def f(x: float) -> float:
        log_p = tail.log_probability(x)
        return min(-float(ndtri_exp(log_p)), 2 * Z_FAR) - target if log_p > -math.inf else 2 * Z_FAR

    hi, f_hi = target, f(target)
    if f_hi <= 0:
        return hi
    f_lo = None
    guess = max(hi - f_hi, lo)
    for _ in range(3):  # secant steps towards the root until it is bracketed
        f_guess = f(guess)
        if f_guess <= 0:
            lo, f_lo = guess, f_guess
            break
        slope = (f_hi - f_guess) / (hi - guess) if hi > guess else 1.0
        hi, f_hi = guess, f_guess
        if guess <= lo:
            break
        guess = max(hi - f_hi / max(slope, 1e-3), lo)
    if f_lo is None:
        if hi <= lo:
            return -math.inf if lo <= -Z_FAR else lo
        f_lo = f(lo)
        if f_lo > 0:
            return -math.inf if lo <= -Z_FAR else lo
    return float(find_root(f, lo, hi, fa=f_lo, fb=f_hi, xtol=1e-7, rtol=1e-10))


def _threshold_below_cap(h: Callable[[float], float], cap: float, lo: float, level: float) -> float:
    """An earlier node with the very same statistic caps ``b``: beyond its ``b_k`` nothing is left.

    Solved in ``x = log(cap - b)``: near the cap the probability is about
    ``(cap - b) phi(cap)``, so ``h`` is smooth (nearly linear) in x.  At gap
    ``1.25 level`` it is below the level.  Gaps below ~1e-9 are not resolved in double
    precision: a root there is returned as the cap itself, where the probability is
    0 <= level (conservative by less than 1e-9 on the z scale).
    """
    if cap <= lo:
        lo = cap - 1.0

    def hx(x: float) -> float:
        return h(cap - math.exp(x))

    min_gap = 1e-9 * max(1.0, abs(cap))
    x_hi = math.log(cap - lo)
    x_lo = math.log(max(1.25 * level, min_gap))
    if x_lo >= x_hi:
        return lo
    f_hi = hx(x_hi)
    if f_hi <= 0:
        return lo if lo > -Z_FAR + 1 else -math.inf
    f_lo = hx(x_lo)
    if f_lo >= 0:
        return cap
    root = find_root(hx, x_lo, x_hi, fa=f_lo, fb=f_hi, xtol=1e-9, rtol=1e-9)
    return float(cap - math.exp(root))
