"""Closed-form upper bounds on ``log F(n, eps)``: the monotone envelope and the per-n bound (no tail sums).

Every candidate's tails are bounded by Zubkov-Serov (Theory Probab. Appl. 57(3), 2013) with
the threshold moved one label towards the mean: ``U_j = P(X >= j) <= Phi(-sqrt(2 n KL(p + e || p)))``
with ``e = eps - 1/n`` and ``L_j = P(X <= j - c) <= Phi(-sqrt(2 n KL(p - eta || p)))`` with
``eta = (c - 1)/n - eps`` (``c = ceil(2 n eps)``, so ``e <= eta < eps``); the KL term is
minimised over the candidates' range of p (convexity; where the minimum is inside, the
refinement of Pinsker's inequality ``KL >= V^2/2 + V^4/36 + V^6/288`` with ``V = 2|s|`` the L1
distance (Topsoe 2001; Fedotov, Harremoes, Topsoe 2003), i.e. ``2 s^2 + 4 s^4/9 + 2 s^6/9``:
at 8 million labels its quartic term alone tightens the exponent by about 0.04).  With a known range ``[0, a]`` the mirrored candidates (``p >= 1 - a``) swap the
roles: the upper tail gets ``eta`` and the lower one ``e``.

- :func:`log_envelope` uses ``e`` for both tails: it never increases with n (``e`` grows
  with n, and so does the minimum), so it certifies every n beyond a point at once;
- :func:`log_bound` uses the actual ``eta`` of each n (issue 18): the same bound without the
  sawtooth's worst case, so most n early in a period are settled without exact tails.

Both are capped by Hoeffding's factor.  Everything is vectorized over rows of (n, eps).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import cast

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr

from ._types import FloatArray, Real

__all__ = ["kl", "kl_slope", "kl_floor", "min_at_a", "log_envelope", "log_bound"]

_LOG2 = math.log(2.0)


def kl(x: ArrayLike, p: ArrayLike) -> FloatArray:
    """Bernoulli ``KL(x || p)`` elementwise (``inf`` outside the domain)."""
    x, p = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(p, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (np.where(x > 0, x * np.log(x / p), 0.0)
               + np.where(x < 1, (1 - x) * np.log((1 - x) / (1 - p)), 0.0))
    return np.where((x < 0) | (x > 1) | (p <= 0) | (p >= 1), np.inf, out)


def kl_slope(p: Real, shift: FloatArray) -> FloatArray:
    """``d/dp KL(p + shift || p)`` (nan outside the domain)."""
    x = p + shift
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.log(x / p) - np.log((1 - x) / (1 - p)) - shift / p - shift / (1 - p)
    return out


def kl_floor(shift: ArrayLike) -> FloatArray:
    """A lower bound on ``min_p KL(p + shift || p)`` for every p: ``2 s^2 + 4 s^4/9 + 2 s^6/9``.

    Topsoe's refinement of Pinsker's inequality, ``KL >= V^2/2 + V^4/36 + V^6/288`` for two
    distributions at L1 distance V (here ``V = 2|shift|``); the sharp bound's expansion goes
    on with positive terms, so it is tight to ``s^8``.

    References: F. Topsoe, "Bounds for entropy and divergence for distributions over a
    two-element set", J. Ineq. Pure Appl. Math. 2(2), 2001; A. A. Fedotov, P. Harremoes,
    F. Topsoe, "Refinements of Pinsker's inequality", IEEE Trans. Inf. Theory 49(6), 2003.
    """
    s2: FloatArray = np.square(np.asarray(shift, dtype=float))
    return s2 * (2.0 + s2 * (4.0 / 9.0 + s2 * (2.0 / 9.0)))


def min_at_a(a: float, shift: FloatArray, widest: FloatArray) -> FloatArray:
    """``min_{p in [.., a]} KL(p + shift || p)``, bounded below in O(1) and non-decreasing in ``|shift|``.

    ``p -> KL(p + shift || p)`` is convex and its minimiser moves monotonically with the
    shift; when it slopes down at ``a`` for both ``shift`` and ``widest`` (= eps, the largest
    shift of that sign), the minimum over the range is at ``a`` for every n; otherwise
    :func:`kl_floor`.
    """
    pinsker = kl_floor(shift)
    with np.errstate(invalid="ignore"):
        ok = (kl_slope(a, shift) <= 0) & (kl_slope(a, widest) <= 0)
    return np.where(ok & np.isfinite(kl(a + shift, a)), np.maximum(kl(a + shift, a), pinsker), pinsker)


def _tail(n: FloatArray, minimum: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore"):
        out: FloatArray = log_ndtr(-np.sqrt(2.0 * n * np.maximum(minimum, 0.0)))
    return out


def _finish(env: FloatArray, n: FloatArray, e: FloatArray, e_f: FloatArray, sides: str) -> FloatArray:
    hoeffding = -2.0 * n * e_f * e_f + (_LOG2 if sides == "two-sided" else 0.0)
    env = np.where(e > 0, env, 0.0)
    return np.minimum(np.minimum(env, hoeffding), 0.0)


def log_envelope(ns: ArrayLike, e_f: ArrayLike, a: Fraction | None, sides: str) -> FloatArray:
    """The envelope (non-increasing in n) for rows ``ns`` with tolerances ``e_f`` (floats, broadcast)."""
    n = np.asarray(ns, dtype=float)
    e_f = np.asarray(e_f, dtype=float)
    e = e_f - 1.0 / n
    if a is None:
        up = down = _tail(n, kl_floor(e))
    else:
        up = _tail(n, min_at_a(float(a), e, e_f))  # upper tail over p <= a (and p = a)
        down = _tail(n, min_at_a(float(a), -e, -e_f))  # lower tail over p <= a; mirrored: R2's upper tail
    env = {"two-sided": np.logaddexp(up, down), "upper": up, "lower": down if a is not None else up}[sides]
    return _finish(env, n, e, e_f, sides)


def log_bound(ns: ArrayLike, e_f: ArrayLike, eta: ArrayLike, a: Fraction | None, sides: str,
              shift_a: FloatArray | None = None) -> FloatArray:
    """The per-n bound: like :func:`log_envelope`, with each n's own ``eta`` for the lower threshold.

    At least as tight as the envelope (``eta >= e``); not monotone in n (it follows the sawtooth).
    With a range, ``shift_a = a - (floor(n (a - eps)) + 1)/n`` (in ``[e, eps)``) is the lower
    threshold's distance at the candidate ``p = a`` itself.  One-sided events have no lower
    threshold, so there it is the envelope.
    """
    if sides != "two-sided":
        return log_envelope(ns, e_f, a, sides)
    n = np.asarray(ns, dtype=float)
    e_f = np.asarray(e_f, dtype=float)
    e = e_f - 1.0 / n
    eta = cast(FloatArray, np.maximum(np.asarray(eta, dtype=float), e))
    if a is None:
        env = np.logaddexp(_tail(n, kl_floor(e)), _tail(n, kl_floor(eta)))
    else:
        af = float(a)
        up_e = _tail(n, min_at_a(af, e, e_f))
        first = np.logaddexp(up_e, _tail(n, min_at_a(af, -eta, -e_f)))  # breakpoints p_j <= a
        mirrored = np.logaddexp(_tail(n, min_at_a(af, -e, -e_f)), _tail(n, min_at_a(af, eta, e_f)))
        at_a = np.maximum(np.asarray(shift_a, dtype=float), e)
        point = np.logaddexp(up_e, _tail(n, min_at_a(af, -at_a, -e_f)))  # p = a (its own thresholds)
        env = np.maximum(np.maximum(first, mirrored), point)
    return _finish(env, n, e, e_f, sides)


def _convex_min(f_a: FloatArray, f_b: FloatArray, s_a: FloatArray, s_b: FloatArray, a: FloatArray,
                b: FloatArray) -> FloatArray:
    """A lower bound on the minimum over [a, b] of a convex function from its values and slopes at the ends.

    The function lies above both tangents, so its minimum is at least where they cross (or at
    an end, when the function is monotone on the piece).
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        cross = (f_b - f_a + s_a * a - s_b * b) / (s_a - s_b)
        low = f_a + s_a * (np.clip(cross, a, b) - a)
    return np.where(s_a >= 0, f_a, np.where(s_b <= 0, f_b, np.minimum(low, np.minimum(f_a, f_b))))


def log_joint_bound(ns: ArrayLike, e_f: ArrayLike, eta: ArrayLike, pieces: int = 16) -> FloatArray:
    """A tighter per-n bound for the two-sided event without a range: the two tails bounded at the same p.

    ``F(n) <= max_p [A(p) + B(p)]`` with ``A(p) = Phi(-sqrt(2 n KL(p + e || p)))`` and ``B(p) =
    Phi(-sqrt(2 n KL(p - eta || p)))`` (Zubkov-Serov at every candidate, whose two tails share
    its p), where :func:`log_bound` adds the two maxima: the tails peak at different p, which
    costs up to ``log 2`` at large n (0.1 at 8 million labels).  Left of ``A``'s minimiser
    and right of ``B``'s both terms only grow towards them, so the maximum is in between; that
    stretch is cut into ``pieces``, finer near its middle where the sum peaks (at 8 million
    labels 16 pieces leave 0.029 above ``log F``, the simple bound 0.092), and on each piece
    each KL term is bounded below by its tangents (convexity).  Rows where the stretch cannot
    be certified keep :func:`log_bound`.
    """
    n = np.asarray(ns, dtype=float)
    e_f = np.asarray(e_f, dtype=float)
    e = e_f - 1.0 / n
    eta = cast(FloatArray, np.maximum(np.asarray(eta, dtype=float), e))
    simple = log_bound(n, e_f, eta, None, "two-sided")
    left, right = 0.5 - 0.75 * e, 0.5 + 0.75 * eta  # the minimisers sit near 1/2 - e/2 and 1/2 + eta/2
    good = (e > 0) & (kl_slope(left, e) < 0) & (kl_slope(right, -eta) > 0) & (right + e < 1) & (left - eta > 0)
    u = np.linspace(-1.0, 1.0, pieces + 1)
    t = 0.5 + 0.5 * np.sign(u) * u * u  # any cover of [left, right] is valid; this one is dense in the middle
    p = left[:, None] + (right - left)[:, None] * t[None, :]
    e2, eta2, n2 = e[:, None], eta[:, None], n[:, None]
    ku, su = kl(p + e2, p), kl_slope(p, e2)
    kd, sd = kl(p - eta2, p), kl_slope(p, -eta2)
    low_u = _convex_min(ku[:, :-1], ku[:, 1:], su[:, :-1], su[:, 1:], p[:, :-1], p[:, 1:])
    low_d = _convex_min(kd[:, :-1], kd[:, 1:], sd[:, :-1], sd[:, 1:], p[:, :-1], p[:, 1:])
    joint = np.logaddexp(_tail(n2, low_u), _tail(n2, low_d)).max(axis=1)
    return np.where(good & np.isfinite(joint), np.minimum(joint, simple), simple)
