"""Numerical kernels shared by every bound: log-space counting and monotone root solves.

Every union bound in these papers has the form

    sum_j  exp(a_j - b_j * x)  <  target          (b_j > 0)

where ``a_j`` is the log of a (possibly astronomically large) count of possible
submissions times a constant, ``b_j`` a positive rate, and ``x`` the unknown (the number
of labels ``n`` with ``b_j = 2 eps_j**2``, or the squared scale of the epsilons with
``b_j = 2 n eps_j**2``).  The left side is convex and strictly decreasing in ``x``, so
Newton's method started left of the root converges monotonically to it, without
bracketing, and vectorized over any batch of problems at once.  We never leave log
space: counts like m**T for T = 100,000 are represented by their logarithms.
"""
from __future__ import annotations

import numpy as np
from scipy.special import betainc, betaln, gammaln

__all__ = [
    "log_binom",
    "log_geometric_count",
    "solve_log_sum_exp",
    "smallest_integer_satisfying",
    "log_sum_exp",
    "log_binom_pmf",
    "log_binom_sf",
    "log_binom_cdf",
]

_NEWTON_MAX_ITER = 200


def log_binom(n, k):
    """``log C(n, k)`` for real ``n >= k >= 0``; ``-inf`` where ``n < k``.

    Uses ``C(n, k) = 1 / ((n + 1) * B(n - k + 1, k + 1))`` with scipy's ``betaln``,
    which stays accurate when ``n >> k`` (where differences of ``gammaln`` cancel).
    """
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -np.log(n + 1.0) - betaln(n - k + 1.0, k + 1.0)
    return np.where(n - k + 1.0 > 0, out, -np.inf)


def log_geometric_count(m, t):
    """``log((m**t - 1) / (m - 1))`` = log(1 + m + ... + m**(t-1)); ``-inf`` at ``t = 0``.

    For ``m = 1`` the sum is ``t``.  Written as ``t*log m + log1p(-m**-t) - log(m-1)`` so
    it neither overflows for huge ``t`` nor loses the ``-1`` for small ``t``.
    """
    t = np.asarray(t, dtype=float)
    m = np.asarray(m, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        general = t * np.log(m) + np.log1p(-np.power(m, -t)) - np.log(m - 1.0)
        ones = np.log(t)
    out = np.where(m == 1.0, ones, general)
    return np.where(t > 0, out, -np.inf)


def log_sum_exp(a, axis=-1):
    """``log(sum(exp(a)))`` along ``axis``, shifted by the maximum so nothing overflows.

    All ``-inf`` gives ``-inf`` (no warning).  Same result as
    ``scipy.special.logsumexp`` (tested), without its per-call array-API overhead,
    which dominated the cost of one plan.
    """
    a = np.asarray(a, dtype=float)
    top = np.max(a, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", under="ignore", invalid="ignore"):
        out = np.log(np.sum(np.exp(a - shift), axis=axis, keepdims=True)) + shift
    return np.squeeze(out, axis=axis)


def _broadcast(a, b, log_target):
    """Broadcast terms (..., J), rates (..., J) and targets (...) to one batch shape."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    t = np.asarray(log_target, dtype=float)
    batch = np.broadcast_shapes(a.shape[:-1], b.shape[:-1], t.shape)
    width = np.broadcast_shapes(a.shape[-1:], b.shape[-1:])
    return (np.broadcast_to(a, batch + width), np.broadcast_to(b, batch + width), np.broadcast_to(t, batch))


def _g(a, b, x, log_target):
    return log_sum_exp(a - b * x[..., None]) - log_target


def solve_log_sum_exp(a, b, log_target):
    """The root ``x`` of ``logsumexp_j(a_j - b_j x) = log_target``, batched.

    Parameters
    ----------
    a, b : array_like, shape (..., J)
        Log-coefficients (``-inf`` terms are ignored) and positive rates.
    log_target : array_like, broadcastable to shape (...)
        The log of the right-hand side (e.g. ``log(delta)``).

    Returns
    -------
    ndarray, shape (...)
        The unique real root.  The left side is convex and strictly decreasing, so
        Newton's method from ``x0 = max_j (a_j - log_target) / b_j`` (a point where the
        left side is at least the target) increases monotonically to the root.
    """
    a, b, log_target = _broadcast(a, b, log_target)
    finite = np.isfinite(a)
    with np.errstate(invalid="ignore"):
        starts = np.where(finite, (a - log_target[..., None]) / b, -np.inf)
    x = np.max(starts, axis=-1)
    for _ in range(_NEWTON_MAX_ITER):
        z = a - b * x[..., None]
        lse = log_sum_exp(z)
        g = lse - log_target
        with np.errstate(invalid="ignore", over="ignore"):
            weights = np.exp(z - lse[..., None])
        slope = np.sum(np.where(finite, weights * b, 0.0), axis=-1)
        step = g / slope
        x = x + step
        if np.all(np.abs(step) <= 1e-12 * np.maximum(1.0, np.abs(x))):
            break
    return x


def smallest_integer_satisfying(a, b, log_target):
    """Smallest integer ``n`` with ``logsumexp_j(a_j - b_j n) < log_target`` (strict).

    Solves for the real root first (:func:`solve_log_sum_exp`), then makes the integer
    exact: the result satisfies the strict inequality and ``n - 1`` does not.

    Returns
    -------
    ndarray of int64, shape (...)
    """
    a, b, log_target = _broadcast(a, b, log_target)
    root = solve_log_sum_exp(a, b, log_target)
    n = np.floor(root) + 1.0
    # Exactness: nudge by whole labels until n satisfies and n - 1 does not.  Newton
    # lands within rounding of the root, so this runs once or twice.
    for _ in range(64):
        too_small = _g(a, b, n, log_target) >= 0
        n = np.where(too_small, n + 1.0, n)
        if not np.any(too_small):
            break
    for _ in range(64):
        too_big = _g(a, b, n - 1.0, log_target) < 0
        n = np.where(too_big, n - 1.0, n)
        if not np.any(too_big):
            break
    return n.astype(np.int64)


# --------------------------------------------------------------------------- binomial tails
_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)
#: Below this value ``scipy.special.betainc`` is replaced by the log-space series.
_BETAINC_FLOOR = 1e-280
_SERIES_CHUNK = 512


def _stirling_error(m):
    """``log(m!) - [(m + 1/2) log m - m + log(2 pi)/2]`` for integers m >= 1 (Loader 2000)."""
    m = np.asarray(m, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        small = gammaln(m + 1.0) - (m + 0.5) * np.log(m) + m - _HALF_LOG_2PI
        m2 = m * m
        series = (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - 1.0 / (1188 * m2)) / m2) / m2) / m2) / m
    return np.where(m > 15, series, small)


def _deviance(x, mean):
    """``x log(x / mean) + mean - x`` without cancellation (Loader's bd0), elementwise, x, mean > 0."""
    x = np.asarray(x, dtype=float)
    mean = np.asarray(mean, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = x * np.log(x / mean) + mean - x
        v = (x - mean) / (x + mean)
        v2 = v * v
        total = (x - mean) * v
        term = 2.0 * x * v
        for j in range(1, 40):  # |v| < 0.1 in this branch: 1e-40 after 20 terms
            term = term * v2
            total = total + term / (2 * j + 1)
    return np.where(np.abs(x - mean) < 0.1 * (x + mean), total, direct)


def log_binom_pmf(k, n, p):
    """``log P(X = k)`` for X ~ Binomial(n, p), accurate to ~1e-15 relative at any n.

    Uses Loader's saddle-point form (the one behind R's ``dbinom``): Stirling errors and a
    deviance computed without cancellation, so ``log C(n, k) p^k (1-p)^(n-k)`` keeps its
    digits even when every ``lgamma`` term is ~1e8.  ``-inf`` outside the support.

    References
    ----------
    .. [1] C. Loader, "Fast and Accurate Computation of Binomial Probabilities", 2000.
    """
    k, n, p = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(n, dtype=float),
                                  np.asarray(p, dtype=float))
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = (_stirling_error(n) - _stirling_error(k) - _stirling_error(n - k)
                 - _deviance(k, n * p) - _deviance(n - k, n * q)
                 + 0.5 * np.log(n / (2.0 * np.pi * k * (n - k))))
        at_zero = n * np.log1p(-p)
        at_n = n * np.log(p)
    out = np.where(k == 0, at_zero, np.where(k == n, at_n, inner))
    out = np.where((p == 0.0), np.where(k == 0, 0.0, -np.inf), out)
    out = np.where((p == 1.0), np.where(k == n, 0.0, -np.inf), out)
    out = np.where((k < 0) | (k > n), -np.inf, out)
    return out


def _log_upper_series(k, n, p):
    """``log P(X >= k)`` as ``log pmf(k) + log sum_i prod_l r_{k+l}`` for k > n p (ratios < 1).

    ``r_x = (n - x) p / ((x + 1)(1 - p))`` decreases in x, so after summing terms the rest is
    at most ``last * r / (1 - r)``; terms are summed until that is below 1e-17 of the sum.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    total = np.ones_like(k)
    last = np.ones_like(k)
    x = k.copy()
    active = np.ones(k.shape, dtype=bool)
    odds = p / (1.0 - p)
    while np.any(active):
        steps = np.arange(_SERIES_CHUNK, dtype=float)
        xs = x[active][:, None] + steps[None, :]
        nn = n[active][:, None]
        ratios = np.clip((nn - xs) * odds[active][:, None] / (xs + 1.0), 0.0, None)
        terms = last[active][:, None] * np.cumprod(ratios, axis=1)
        total[active] += terms.sum(axis=1)
        last[active] = terms[:, -1]
        x[active] += _SERIES_CHUNK
        r_next = np.clip((n - x) * odds / (x + 1.0), 0.0, None)
        with np.errstate(divide="ignore", invalid="ignore"):
            rest = np.where(r_next < 1.0, last * r_next / (1.0 - r_next), np.inf)
        active = active & (rest > 1e-17 * total) & (x < n)
    return log_binom_pmf(k, n, p) + np.log(total)


def log_binom_sf(k, n, p):
    """``log P(X >= k)`` for X ~ Binomial(n, p), finite and accurate deep in the tail.

    ``scipy.special.betainc`` (``P(X >= k) = I_p(k, n - k + 1)``) where the value is at
    least 1e-280; below, where it would lose digits or underflow to 0, the exact series
    of pmf ratios in log space (:func:`log_binom_pmf`), so values like 1e-5000 stay finite
    and correct.  Values above 1/2 use the complement (``log1p``).
    """
    k, n, p = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(n, dtype=float),
                                  np.asarray(p, dtype=float))
    shape = k.shape
    k, n, p = k.ravel(), n.ravel(), p.ravel()
    inner = (k > 0) & (k <= n) & (p > 0.0) & (p < 1.0)
    with np.errstate(divide="ignore", under="ignore", invalid="ignore"):
        value = betainc(np.where(inner, k, 1.0), np.where(inner, n - k + 1.0, 1.0), np.where(inner, p, 0.5))
        out = np.log(value)
        high = inner & (value > 0.5)
        if np.any(high):
            out[high] = np.log1p(-betainc(n[high] - k[high] + 1.0, k[high], 1.0 - p[high]))
        deep = inner & (value < _BETAINC_FLOOR)
        if np.any(deep):
            out[deep] = _log_upper_series(k[deep], n[deep], p[deep])
    if not np.all(inner):
        edge = np.where((k <= 0) | (p >= 1.0), 0.0, -np.inf)
        out = np.where(inner, out, np.where(k > n, -np.inf, edge))
    return out.reshape(shape)


def log_binom_cdf(k, n, p):
    """``log P(X <= k)`` for X ~ Binomial(n, p): ``log P(n - X >= n - k)`` with n - X ~ Bin(n, 1 - p)."""
    k, n, p = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(n, dtype=float),
                                  np.asarray(p, dtype=float))
    return log_binom_sf(n - k, n, 1.0 - p)
