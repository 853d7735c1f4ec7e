"""Normal probabilities behind the fsSRGP and presSRGP thresholds, in log space.

Every threshold of Feng et al.'s Eq. 4 (fsSRGP) and Eqs. 5-6 (presSRGP) solves
``P(Z_k <= b_k for the earlier nodes k, Z > b) = level`` for ``b``, with (Z_1..Z_m, Z)
standard normal with a known correlation matrix.  :class:`JointTail` evaluates the left
side for any ``b`` after preparing, once per root find, everything that does not depend
on ``b``: identical statistics merged, unconstrained ones dropped, the variable order, the
Cholesky factor and the integration points.

* One dimension: ``log(Phi(hi) - Phi(lo))`` in closed form (:func:`log_interval`).
* Two dimensions: a deterministic one-dimensional integral (:func:`log_box_2d`):
  Gauss-Legendre panels over the log-concave integrand ``phi(x) P(Y in box | x)``,
  refined around its kinks, summed in log space (relative accuracy in deep tails).
* Three and more: Genz's separation-of-variables method with randomly shifted
  quasi-Monte Carlo points (a Richtmyer lattice with the baker's transform), ``Z``
  integrated first so that tiny tail probabilities keep their relative accuracy.  The
  points are fixed by ``seed``, so the probability is a smooth deterministic function
  of ``b`` and root finds converge as on an exact function.

References
----------
.. [1] J. Feng et al., "Sequential algorithmic modification with test data reuse",
   UAI 2022, Sections 2.3 (Eq. 4) and 2.4 (Eqs. 5-6).
.. [2] A. Genz, "Numerical computation of multivariate normal probabilities",
   J. Comput. Graph. Stat. 1(2), 1992 (separation of variables, variable ordering).
.. [3] A. Genz, F. Bretz, *Computation of Multivariate Normal and t Probabilities*,
   Springer, 2009, Sections 4.1-4.2 (randomized lattice rules, the baker's transform).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import cast

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr, ndtr, ndtri

from .._types import FloatArray, IntArray, Real

__all__ = [
    "Z_FAR",
    "IDENTICAL",
    "QMC_POINTS",
    "QMC_TOLERANCE",
    "QMC_MAX_SCALE",
    "normal_sf",
    "normal_isf",
    "log_interval",
    "log_box_2d",
    "JointTail",
]

#: A standard normal quantile beyond which probabilities are treated as exactly 0/1.
Z_FAR = 38.0
#: Correlations this close to +-1 mean "the same statistic": the variables are merged.
IDENTICAL = 1.0 - 1e-9
#: Quasi-Monte Carlo points per probability from three dimensions on (lattice x shifts).
QMC_POINTS = (256, 4)
#: Relative standard error (from the spread of the shifts) above which the points grow fourfold.
QMC_TOLERANCE = 0.005
#: At most this many times the base points (deep tails of strongly correlated streaks).
QMC_MAX_SCALE = 4

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(12)
_PRIMES = np.array([2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83,
                    89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173, 179])


def normal_sf(z: float) -> float:
    """``1 - Phi(z)``, accurate in the upper tail."""
    return float(ndtr(-z))


def normal_isf(p: float) -> float:
    """``Phi^{-1}(1 - p)``: the z with upper-tail probability ``p`` (accurate for tiny ``p``)."""
    return float(-ndtri(p))


def log_interval(lo: ArrayLike, hi: ArrayLike) -> FloatArray:
    """``log(Phi(hi) - Phi(lo))`` without cancellation in either tail (vectorized).

    ``-inf`` where ``hi <= lo``.
    """
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if np.all(np.isneginf(lo)):
            below: FloatArray = log_ndtr(hi)
            return below
        if np.all(np.isposinf(hi)):
            above: FloatArray = log_ndtr(-lo)
            return above
        left = log_ndtr(hi) + np.log1p(-np.exp(log_ndtr(lo) - log_ndtr(hi)))  # both in the lower tail
        right = log_ndtr(-lo) + np.log1p(-np.exp(log_ndtr(-hi) - log_ndtr(-lo)))  # both in the upper tail
        middle = np.log1p(-(ndtr(lo) + ndtr(-hi)))
    out = np.where(hi <= 0, left, np.where(lo >= 0, right, middle))
    return np.where(hi > lo, out, -np.inf)


def _log_sum(values: FloatArray, log_weights: FloatArray) -> float:
    top = float(np.max(values))
    if not math.isfinite(top):
        return -math.inf
    return top + math.log(float(np.sum(np.exp(values - top + log_weights))))


def _panels(cuts: Sequence[float], fine_zones: Sequence[tuple[float, float]], coarse: float,
            fine: float) -> tuple[FloatArray, FloatArray]:
    """Gauss-Legendre nodes and log weights over the segments between ``cuts``."""
    nodes, weights = [], []
    for x0, x1 in zip(cuts[:-1], cuts[1:]):
        if not x1 > x0:
            continue
        mid = 0.5 * (x0 + x1)
        width = fine if any(a <= mid <= b for a, b in fine_zones) else coarse
        count = min(int(math.ceil((x1 - x0) / width)), 400)
        edges = np.linspace(x0, x1, count + 1)
        half = 0.5 * np.diff(edges)
        centre = 0.5 * (edges[1:] + edges[:-1])
        nodes.append((centre[:, None] + half[:, None] * _GL_X[None, :]).ravel())
        weights.append((half[:, None] * _GL_W[None, :]).ravel())
    if not nodes:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(nodes), np.log(np.concatenate(weights))


def log_box_2d(lo: ArrayLike, hi: ArrayLike, rho: float) -> float:
    """``log P(lo < (X, Y) < hi)`` for a standard bivariate normal with correlation ``rho``.

    Integrates ``phi(x) P(lo_Y < Y < hi_Y | X = x)`` over the variable with the smaller
    mass.  The integrand is log-concave (its logarithm has curvature at least 1), so all
    its mass lies within 10 of its mode; that window is covered by 12-point
    Gauss-Legendre panels of width 0.5, refined to a quarter of the conditional standard
    deviation near the kinks ``x = lo_Y / rho`` and ``hi_Y / rho``, and summed in log
    space.  Deterministic; relative accuracy about 1e-10, also in deep tails.
    """
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    rho = float(np.clip(rho, -1.0, 1.0))
    if abs(rho) >= IDENTICAL:
        raise ValueError("log_box_2d needs |rho| < 1; merge identical variables first")
    mass = log_interval(lo, hi)
    a, b = (0, 1) if mass[0] <= mass[1] else (1, 0)
    s = math.sqrt(1.0 - rho * rho)
    la, ha = max(float(lo[a]), -Z_FAR), min(float(hi[a]), Z_FAR)
    if not ha > la:
        return -math.inf
    lb, hb = float(lo[b]), float(hi[b])

    def g(x: FloatArray) -> FloatArray:
        return -0.5 * x * x - _LOG_SQRT_2PI + log_interval((lb - rho * x) / s, (hb - rho * x) / s)

    grid = np.linspace(la, ha, 257)
    values = g(grid)
    peak = int(np.argmax(values))
    if not math.isfinite(float(values[peak])):
        return -math.inf
    step = float(grid[1] - grid[0])
    wl, wh = max(la, float(grid[peak]) - step - 10.0), min(ha, float(grid[peak]) + step + 10.0)
    points = {wl, wh, float(grid[peak])}
    zones: list[tuple[float, float]] = []
    if rho != 0:
        width = s / abs(rho)
        for kink in (c / rho for c in (lb, hb) if math.isfinite(c)):
            zones.append((kink - 12 * width, kink + 12 * width))
            points.update((kink, kink - 12 * width, kink + 12 * width))
        fine = min(0.5, 0.25 * width)
    else:
        fine = 0.5
    cuts = sorted(min(max(c, wl), wh) for c in points)
    nodes, log_weights = _panels(cuts, zones, 0.5, fine)
    if nodes.size == 0:
        return -math.inf
    return _log_sum(g(nodes), log_weights)


@lru_cache(maxsize=64)
def _qmc_points(dimension: int, seed: int, scale: int = 1) -> FloatArray:
    """Randomly shifted Richtmyer points with the baker's transform, shape (dimension, N).

    Column ``i * shifts + s`` is point i of shift s (so the shifts' means can be compared).
    """
    count, shifts = QMC_POINTS
    count *= scale
    alpha = np.sqrt(_PRIMES[:dimension].astype(float))
    offsets = np.random.default_rng([seed, dimension]).random((shifts, dimension))
    i = np.arange(1, count + 1, dtype=float)
    x = np.mod(i[:, None, None] * alpha[None, None, :] + offsets[None, :, :], 1.0)
    u: FloatArray = np.abs(2.0 * x - 1.0).reshape(count * shifts, dimension).T
    u = np.clip(u, 1e-15, 1.0 - 1e-15)
    u.setflags(write=False)
    return u


def _sample(u: FloatArray, lo: FloatArray | None, hi: FloatArray | None, log_mass: Real) -> FloatArray:
    """``Phi^{-1}`` of ``u`` spread over ``(lo, hi)``: a normal truncated to the interval.

    ``lo``/``hi`` are arrays, or ``None`` for an infinite limit.
    """
    if lo is None:
        below: FloatArray = ndtri(np.maximum(u * np.exp(log_mass), 1e-300))
        return below
    if hi is None:
        above: FloatArray = -ndtri(np.maximum(u * np.exp(log_mass), 1e-300))
        return above
    mass = np.exp(log_mass)
    upper = lo >= 0  # sample from the upper side where the interval lies there
    y = np.where(upper, -ndtri(np.maximum(ndtr(-hi) + u * mass, 1e-300)),
                 ndtri(np.maximum(ndtr(lo) + u * mass, 1e-300)))
    out: FloatArray = np.clip(y, -Z_FAR, Z_FAR)
    return out


def _cholesky(c: FloatArray) -> FloatArray:
    """Lower Cholesky factor of a correlation matrix, positive semi-definite allowed."""
    try:
        return cast(FloatArray, np.linalg.cholesky(c))  # float64 in, float64 out (the stubs say floating)
    except np.linalg.LinAlgError:
        d = c.shape[0]
        low = np.zeros_like(c)
        for j in range(d):
            v = c[j, j] - low[j, :j] @ low[j, :j]
            low[j, j] = math.sqrt(v) if v > 1e-12 else 0.0
            if low[j, j] > 0:
                low[j + 1:, j] = (c[j + 1:, j] - low[j + 1:, :j] @ low[j, :j]) / low[j, j]
        return low


class JointTail:
    """``log P(Z_k <= b_k for every earlier node k, Z > b)`` for Z ~ N(0, corr), any ``b``.

    Parameters
    ----------
    prior_thresholds : sequence of float
        ``b_k`` of the earlier nodes (``inf``: no constraint).
    corr : array_like, shape (m + 1, m + 1)
        Correlations of (Z_1..Z_m, Z), the new node last.
    seed : int
        Seed of the quasi-Monte Carlo shifts (three dimensions and more).
    reference : float, optional
        A threshold near the expected root (e.g. the Bonferroni one): the earlier nodes
        are integrated in the order of how strongly they constrain ``Z`` there.

    Attributes
    ----------
    cap : float
        An upper limit on ``Z`` implied by an earlier node with the very same statistic
        (``inf`` when there is none): beyond it the probability is 0.
    dimension : int
        Variables left after merging and dropping.
    """

    def __init__(self, prior_thresholds: ArrayLike, corr: ArrayLike, *, seed: int = 0,
                 reference: float | None = None) -> None:
        b = np.asarray(prior_thresholds, dtype=float).ravel()
        m = b.size
        c = np.asarray(corr, dtype=float).reshape(m + 1, m + 1)
        self.seed = int(seed)
        lower, upper, r, keep = self._merge(b, c)
        self.z_lower = lower[-1]
        self.cap = upper[-1]
        lower, upper = lower[keep], upper[keep]
        r = r[keep]
        ref = float(reference) if reference is not None else 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            s2 = np.maximum(1.0 - r * r, 1e-300)
            score = (np.minimum(upper, Z_FAR) - r * ref) / np.sqrt(s2)
        order = np.argsort(score, kind="stable")
        self._lower, self._upper = lower[order], upper[order]
        self._r = r[order]
        idx = np.r_[keep[order], m]
        full = c[np.ix_(idx, idx)]
        full = full[np.r_[-1, np.arange(len(idx) - 1)]][:, np.r_[-1, np.arange(len(idx) - 1)]]
        self.dimension = 1 + len(order)
        self._chol = _cholesky(full) if self.dimension >= 3 else None
        self._scale: int | None = None  # points per shift, x QMC_POINTS[0]: chosen at the first integration

    @staticmethod
    def _merge(b: FloatArray, c: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, IntArray]:
        """Limits of every variable after merging statistics that are (numerically) identical."""
        m = b.size
        lower = np.full(m + 1, -np.inf)
        upper = np.r_[np.where(b >= Z_FAR, np.inf, b), np.inf]
        alive = np.isfinite(upper[:m]).tolist() + [True]
        for j in range(m + 1):  # merge j into an earlier identical survivor i (the new node is last)
            if not alive[j]:
                continue
            for i in range(j):
                if alive[i] and abs(c[i, j]) >= IDENTICAL:
                    target, other = (j, i) if j == m else (i, j)
                    sign = 1.0 if c[i, j] > 0 else -1.0
                    lo, hi = (lower[other], upper[other]) if sign > 0 else (-upper[other], -lower[other])
                    lower[target], upper[target] = max(lower[target], lo), min(upper[target], hi)
                    alive[other] = False
                    if target == j:
                        continue
                    break
        keep = np.flatnonzero(alive[:m])
        return lower, upper, c[:m, m], keep

    def log_probability(self, threshold: float) -> float:
        """``log P(Z_k <= b_k for every k, Z > threshold)`` (``-inf`` when it is 0)."""
        zl = max(float(threshold), self.z_lower)
        zl = -np.inf if zl <= -Z_FAR else zl
        zh = self.cap
        if not zh > zl or zl >= Z_FAR:
            return -math.inf
        if self.dimension == 1:
            return float(log_interval(zl, zh))
        if self.dimension == 2:
            return log_box_2d(np.array([zl, self._lower[0]]), np.array([zh, self._upper[0]]), float(self._r[0]))
        return self._log_qmc(zl, zh)

    def _log_qmc(self, zl: float, zh: float) -> float:
        """Genz's separation of variables on the shifted lattice, with as many points as the problem needs.

        At the first integration the spread of the shifts' estimates is checked: while the
        relative standard error exceeds :data:`QMC_TOLERANCE`, the number of points grows
        fourfold (at most :data:`QMC_MAX_SCALE` times).  The choice is then kept for every later
        ``b``, so the probability stays a smooth function of ``b`` during a root find.
        """
        if self._scale is None:
            scale = 1
            while True:
                value, error = self._log_qmc_points(zl, zh, scale)
                if error <= QMC_TOLERANCE or scale >= QMC_MAX_SCALE:
                    break
                scale *= 4
            self._scale = scale
            return value
        return self._log_qmc_points(zl, zh, self._scale)[0]

    def _log_qmc_points(self, zl: float, zh: float, scale: int) -> tuple[float, float]:
        """``(log P, relative standard error)`` on ``scale`` times the base number of points."""
        low = self._chol
        assert low is not None  # three dimensions and more (the only ones integrated here) have the factor
        d = self.dimension
        u = _qmc_points(d - 1, self.seed, scale)
        n = u.shape[1]
        log_mass = float(log_interval(zl, zh))
        if log_mass == -math.inf:
            return -math.inf, 0.0
        y = np.empty((d - 1, n))
        if zh == math.inf:
            y[0] = _sample(u[0], np.full(n, zl), None, log_mass)
        else:
            y[0] = _sample(u[0], np.full(n, zl), np.full(n, zh), np.full(n, log_mass))
        log_w = np.zeros(n)
        for k in range(1, d):
            mu = low[k, :k] @ y[:k]
            lk = low[k, k]
            lo_k, hi_k = self._lower[k - 1], self._upper[k - 1]
            last = k == d - 1
            if lk < 1e-8:  # determined by the earlier variables: an indicator
                log_w[(mu < lo_k) | (mu > hi_k)] = -np.inf
                if not last:
                    y[k] = 0.0
                continue
            a = None if lo_k == -math.inf else (lo_k - mu) / lk
            b = None if hi_k == math.inf else (hi_k - mu) / lk
            if a is None or b is None:  # one-sided: P = Phi(b) or Phi(-a), sampled without logs
                p = ndtr(b) if a is None else ndtr(-a)
                with np.errstate(divide="ignore"):
                    lp = np.log(p) if float(p.min()) > 1e-300 else (log_ndtr(b) if a is None else log_ndtr(-a))
                log_w += lp
                if not last:
                    y[k] = ndtri(np.maximum(u[k] * p, 1e-300)) if a is None else -ndtri(np.maximum(u[k] * p, 1e-300))
                continue
            lp = log_interval(a, b)
            log_w += lp
            if not last:
                y[k] = _sample(u[k], a, b, lp)
        top = float(np.max(log_w))
        if not math.isfinite(top):
            return -math.inf, 0.0
        w = np.exp(log_w - top).reshape(-1, QMC_POINTS[1]).mean(axis=0)  # one estimate per shift
        mean = float(w.mean())
        error = float(w.std(ddof=1)) / math.sqrt(w.size) / mean
        return log_mass + top + math.log(mean), error
