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

Nothing here imports scipy (the Hoeffding counts of every variant start without it, issue 18);
the exact binomial tails live in :mod:`meter_dashboard.bounds._tails`, reachable from here by
name (``log_binom_sf`` and its siblings) and imported on first use.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from ._types import FloatArray, IntArray

__all__ = [
    "log_binom",
    "log_factorial",
    "log_geometric_count",
    "solve_log_sum_exp",
    "smallest_integer_satisfying",
    "log_sum_exp",
    "log_binom_pmf",
    "log_binom_sf",
    "log_binom_cdf",
]

_TAILS = ("log_binom_pmf", "log_binom_sf", "log_binom_cdf")


def __getattr__(name: str) -> Callable[[ArrayLike, ArrayLike, ArrayLike], FloatArray]:  # the binomial tails (scipy)
    if name in _TAILS:  # load on first use only
        from . import _tails

        tail: Callable[[ArrayLike, ArrayLike, ArrayLike], FloatArray] = getattr(_tails, name)
        return tail
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_NEWTON_MAX_ITER = 200


_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)


def log_factorial(x: ArrayLike) -> FloatArray | float:
    """``log(x!) = lgamma(x + 1)`` elementwise for real x >= 0 (``math.lgamma``, no scipy)."""
    x = np.asarray(x, dtype=float)
    return np.asarray(_LGAMMA(x + 1.0), dtype=float) if x.ndim else math.lgamma(float(x) + 1.0)


def stirling_error(x: ArrayLike) -> FloatArray:
    """``log(x!) - [(x + 1/2) log x - x + log(2 pi)/2]`` for real x > 0 (Loader 2000; series above 15)."""
    x = np.asarray(x, dtype=float)
    out = np.empty(x.shape)
    small = x <= 15.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        xs = x[small]
        out[small] = log_factorial(xs) - (xs + 0.5) * np.log(xs) + xs - _HALF_LOG_2PI
        xl = x[~small]
        x2 = xl * xl
        out[~small] = (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - 1.0 / (1188 * x2)) / x2) / x2) / x2) / xl
    return out


def log_binom(n: ArrayLike, k: ArrayLike) -> FloatArray:
    """``log C(n, k)`` for real ``n >= k >= 0``; ``-inf`` where ``n < k``.

    With ``s = min(k, n - k)`` and ``b = max(k, n - k)``: Stirling's series for ``n!`` and
    ``b!`` in the form ``s log n - (b + 1/2) log1p(-s/n) - s + d(n) - d(b) - log(s!)`` (``d``
    the Stirling error), which keeps every digit when ``n >> k`` (where differences of
    ``lgamma`` cancel): ~1e-15 relative against exact integers, including ``C(k + T - 1, k)``
    at T = 100,000 and m = 100 (``tests/bounds/test_meter.py``).  Only ``math.lgamma`` and numpy.
    """
    n, k = np.broadcast_arrays(np.asarray(n, dtype=float), np.asarray(k, dtype=float))
    s, b = np.minimum(k, n - k), np.maximum(k, n - k)
    valid = s >= 0
    s_ok, b_ok, n_ok = np.where(valid, s, 0.0), np.where(valid, b, 1.0), np.where(valid, n, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (s_ok * np.log(n_ok) - (b_ok + 0.5) * np.log1p(-s_ok / n_ok) - s_ok
               + stirling_error(n_ok) - stirling_error(b_ok) - log_factorial(s_ok))
    out = np.where(s_ok == 0, 0.0, out)
    return np.where(valid, out, -np.inf)


def log_geometric_count(m: ArrayLike, t: ArrayLike) -> FloatArray:
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


def log_sum_exp(a: ArrayLike, axis: int = -1) -> FloatArray:
    """``log(sum(exp(a)))`` along ``axis``, shifted by the maximum so nothing overflows.

    All ``-inf`` gives ``-inf`` (no warning).  Same result as
    ``scipy.special.logsumexp`` (tested), without its per-call array-API overhead,
    which dominated the cost of one plan.
    """
    a = np.asarray(a, dtype=float)
    top = np.max(a, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", under="ignore", invalid="ignore"):
        out: FloatArray = np.log(np.sum(np.exp(a - shift), axis=axis, keepdims=True)) + shift
    return np.squeeze(out, axis=axis)


def _broadcast(a: ArrayLike, b: ArrayLike, log_target: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Broadcast terms (..., J), rates (..., J) and targets (...) to one batch shape."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    t = np.asarray(log_target, dtype=float)
    batch = np.broadcast_shapes(a.shape[:-1], b.shape[:-1], t.shape)
    width = np.broadcast_shapes(a.shape[-1:], b.shape[-1:])
    return (np.broadcast_to(a, batch + width), np.broadcast_to(b, batch + width), np.broadcast_to(t, batch))


def _g(a: FloatArray, b: FloatArray, x: FloatArray, log_target: FloatArray) -> FloatArray:
    return log_sum_exp(a - b * x[..., None]) - log_target


def solve_log_sum_exp(a: ArrayLike, b: ArrayLike, log_target: ArrayLike) -> FloatArray:
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
    x: FloatArray = np.max(starts, axis=-1)
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


def smallest_integer_satisfying(a: ArrayLike, b: ArrayLike, log_target: ArrayLike) -> IntArray:
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
