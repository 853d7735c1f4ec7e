"""Sample sizes for ease.ml/ci conditions (Renggli et al., SysML 2019), in pure numpy/scipy.

Symbols (the paper's, mapped once): ``H`` = ``steps`` (the commits one test set must
support); ``delta`` = 1 - reliability; ``epsilon`` = a clause's error tolerance (the
number after ``+/-``); ``p`` = an upper bound on d, the fraction of predictions in which
the new and old models differ; ``S`` = the number of *histories* the union bound runs
over: ``H`` for adaptivity ``none`` (Section 3.2) and ``firstChange`` (Section 3.4), and
``2**H`` for ``full`` (Section 3.3).  Everything stays in log space (``log S = H log 2``).

Baseline (Section 3.1).  The paper's estimator for one variable is Hoeffding's
inequality, one-sided, ``n(v, r, eps, delta) = -r**2 ln(delta) / (2 eps**2)``; its
recursion scales the tolerance by constant factors (rule 1, ``eps / |c|``), splits it
between the terms of a sum or difference (rule 2, ``eps_1 + eps_2 = eps``, ``delta / 2``
each) and splits delta across the k clauses of a conjunction (rule 3, ``delta / k``).
For a clause whose left side is ``sum_v a_v v`` over m variables (n, o, d with range
r_v = 1) the optimal split ``eps_v = eps |a_v| r_v / W`` with ``W = sum_v |a_v| r_v``
makes every term need the same count, so the recursion has the closed form

    n_clause = W**2 (ln S + ln(k m) - ln delta) / (2 eps**2),

i.e. the smallest integer n with ``S k m exp(-2 n eps**2 / W**2) < delta``.  The paper's
example ``n - 1.1 o > 0.01 +/- 0.01 /\\ d < 0.1 +/- 0.01`` gives
``min_{eps_1 + eps_2 = eps} max(-ln(delta/4)/(2 eps_1**2), -1.1**2 ln(delta/4)/(2 eps_2**2),
-ln(delta/2)/(2 eps**2))`` = ``max(2.1**2 ln(4/delta), ln(2/delta)) / (2 eps**2)``.
A condition needs the largest count over its clauses.  This reproduces every cell of
Figure 2 (H = 32) as the *ceiling* of the real-valued bound.

Optimizations (Section 4).  Bennett's inequality (Proposition 1) for the per-example
difference ``X_i = n_i - o_i`` (``|X_i| <= 1``, ``E[X_i**2] <= d <= p``) gives
``Pr[|mean - E| > eps] <= 2 exp(-n p h(eps / p))`` with ``h(u) = (1 + u) ln(1 + u) - u``;
the count is the smallest n with ``2 S exp(-n p h(eps/p)) < delta_share``.  With active
labeling only the ~p n examples where the two models disagree need labels.

Every integer count is the smallest integer satisfying the strict inequality (``n``
satisfies it, ``n - 1`` does not); the ``*_bound`` functions return the real-valued
right-hand sides the paper's text sometimes quotes truncated (156,955 in Section 3.3 is
the real bound 156,955.25, whose integer count is Figure 2's 156,956).

References
----------
.. [1] C. Renggli, B. Karlas, B. Ding, F. Liu, K. Schawinski, W. Wu, C. Zhang.
   "Continuous Integration of Machine Learning Models with ease.ml/ci: Towards a
   Rigorous Yet Practical Treatment", SysML 2019.  Sections 3.1-3.4, 4.1-4.2,
   Proposition 1, Figure 2, Appendix A.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..core.validation import InputError, raw
from ._types import FloatArray, IntArray

if TYPE_CHECKING:
    from .binomial import Exact

__all__ = [
    "ADAPTIVITIES",
    "MODES",
    "MAX_LABELS",
    "log_histories",
    "hoeffding_bound",
    "hoeffding_labels",
    "clause_log_count",
    "bennett_h",
    "bennett_rate",
    "bennett_bound",
    "bennett_labels",
    "active_labels",
    "variable_labels",
    "BOUNDS",
    "MAX_EXACT_LABELS",
    "binomial_labels",
]

#: The per-estimate factor of every count: Hoeffding's (the paper's) or the exact binomial tail.
BOUNDS = ("hoeffding", "binomial")
#: The exact binomial count is searched only where Hoeffding's count is at most this many labels
#: (beyond, the exact search takes minutes); larger settings are refused for the binomial bound.
MAX_EXACT_LABELS = 10_000_000

#: Adaptivity flags of an ease.ml/ci script (Section 2.2).
ADAPTIVITIES = ("none", "full", "firstChange")
#: How an Unknown clause maps to a signal (Appendix A.2).
MODES = ("fp-free", "fn-free")

#: The largest count returned: beyond 2**53 a float no longer holds every integer, so the
#: smallest n could not be told from its neighbours.  Larger counts are refused, never printed wrong.
MAX_LABELS = 2**53

_LOG2 = math.log(2.0)


def _check_adaptivity(adaptivity: str) -> str:
    if adaptivity not in ADAPTIVITIES:
        raise InputError("adaptivity", "one of " + ", ".join(ADAPTIVITIES), adaptivity)
    return adaptivity


def log_histories(adaptivity: str, steps: ArrayLike) -> float | FloatArray:
    """``log S``: the log of the number of histories the union bound covers.

    - ``none`` (Section 3.2): the H models are fixed in advance, ``S = H``.
    - ``full`` (Section 3.3): a deterministic developer's next model depends only on the
      past pass/fail bits, ``S = 2**H``; returned as ``H log 2`` (no overflow).
    - ``firstChange`` (Section 3.4): the test set is retired at the first pass, so the
      developer only ever sees a run of fails: ``S = H``, the non-adaptive count.

    Parameters
    ----------
    adaptivity : {'none', 'full', 'firstChange'}
    steps : int or array_like of int
        H >= 1.

    Returns
    -------
    float or ndarray

    References
    ----------
    Renggli et al. 2019, Sections 3.2 (none), 3.3 (full: 2**H histories), 3.4 (firstChange).
    """
    _check_adaptivity(adaptivity)
    h = np.asarray(steps, dtype=float)
    if np.any(~np.isfinite(h)) or np.any(h < 1) or np.any(h != np.floor(h)):
        raise InputError("steps", "whole numbers >= 1", h.tolist())
    out = h * _LOG2 if adaptivity == "full" else np.log(h)
    return float(out) if out.ndim == 0 else out


def clause_log_count(adaptivity: str, steps: ArrayLike, clauses: int, terms: ArrayLike) -> float | FloatArray:
    """``log(S k m)``: a term's share of delta is ``delta / (S k m)`` (rules 2 and 3, Section 3.1).

    ``clauses`` is k (delta is split across the clauses of the conjunction) and ``terms``
    is m (the estimates in the clause's sum; the paper's binary rule 2 gives delta/2 to
    each side of ``EXP1 + EXP2``; for m terms the union bound gives delta/m each).

    References
    ----------
    Renggli et al. 2019, Section 3.1 (rules 2 and 3 of the recursion) and Figure 2, whose every cell
    it reproduces through :func:`hoeffding_labels`.
    """
    if clauses < 1:
        raise InputError("clauses", "a whole number >= 1", clauses)
    terms = np.asarray(terms, dtype=float)
    if np.any(terms < 1):
        raise InputError("terms", "whole numbers >= 1", terms.tolist())
    out: float | FloatArray = log_histories(adaptivity, steps) + math.log(clauses) + np.log(terms)
    return out


def _as_positive(name: str, value: ArrayLike) -> FloatArray:
    arr = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise InputError(name, "finite numbers > 0", arr.tolist() if arr.ndim else float(arr))
    return arr


def _log_delta(delta: ArrayLike) -> float | FloatArray:
    d = np.asarray(delta, dtype=float)
    if np.any(~((d > 0) & (d < 1))):
        raise InputError("delta", "in (0, 1)", d.tolist() if d.ndim else float(d))
    out: float | FloatArray = np.log(d)
    return out


def _smallest(log_count: ArrayLike, rate: ArrayLike, log_delta: ArrayLike) -> int | IntArray:
    """Smallest integer n >= 0 with ``log_count - rate * n < log_delta``, batched.

    One exponential term, so the real root ``(log_count - log_delta) / rate`` is closed form;
    the integer is then made exact (n satisfies the strict inequality, n - 1 does not).
    A root above :data:`MAX_LABELS` raises :class:`InputError` (parameter ``labels``).
    """
    a, r, t = np.broadcast_arrays(np.asarray(log_count, dtype=float), np.asarray(rate, dtype=float),
                                  np.asarray(log_delta, dtype=float))
    with np.errstate(over="ignore", invalid="ignore"):
        real = (a - t) / r
    if not np.all(real <= MAX_LABELS):  # also catches inf and NaN
        worst = np.nanmax(np.where(np.isnan(real), np.inf, real))
        raise InputError("labels", f"at most {MAX_LABELS:,} (the count these settings need is not exact beyond)",
                         raw(f"{worst:.3g} labels needed"))
    n = np.maximum(np.floor(real) + 1.0, 0.0)
    for _ in range(8):  # rounding can misplace the floor by one label at most; loop for safety
        too_small = a - r * n >= t
        too_big = (n >= 1) & (a - r * (n - 1.0) < t)
        if not (np.any(too_small) or np.any(too_big)):
            break
        n = n + too_small - too_big
    n = n.astype(np.int64)
    return int(n) if n.ndim == 0 else n


def _result(x: ArrayLike) -> float | FloatArray:
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


# --------------------------------------------------------------------------- Hoeffding
def hoeffding_bound(weight: ArrayLike, epsilon: ArrayLike, delta: ArrayLike,
                    log_count: ArrayLike = 0.0) -> float | FloatArray:
    """The real-valued Hoeffding count ``W**2 (log_count - ln delta) / (2 eps**2)``.

    With ``weight = r`` (a variable's range) and ``log_count = 0`` this is the paper's
    single-variable estimator ``n(v, r, eps, delta) = -r**2 ln(delta) / (2 eps**2)``
    (Section 3.1); ``log_count = log(S k m)`` (:func:`clause_log_count`) gives a clause
    of a condition under an adaptivity.

    References
    ----------
    Renggli et al. 2019, Section 3.1 (the single-variable estimator and its recursion).
    """
    w = _as_positive("weight", weight)
    eps = _as_positive("epsilon", epsilon)
    return _result(w**2 * (np.asarray(log_count, dtype=float) - _log_delta(delta)) / (2.0 * eps**2))


def hoeffding_labels(weight: ArrayLike, epsilon: ArrayLike, delta: ArrayLike,
                     log_count: ArrayLike = 0.0) -> int | IntArray:
    """Smallest integer n with ``exp(log_count) exp(-2 n eps**2 / W**2) < delta`` (one-sided Hoeffding).

    Parameters
    ----------
    weight : float or array_like
        ``W = sum_v |a_v| r_v`` of the clause's left side (1 for a single variable).
    epsilon : float or array_like
        The clause's error tolerance.
    delta : float or array_like
        The failure probability to share out.
    log_count : float or array_like
        ``log(S k m)``: how many events share delta (:func:`clause_log_count`).

    Returns
    -------
    int or ndarray of int64

    References
    ----------
    Renggli et al. 2019, Section 3.1 and Figure 2.

    Examples
    --------
    Figure 2, F1 (``n > c +/- 0.05``), reliability 0.9999, full adaptivity, H = 32:

    >>> hoeffding_labels(1.0, 0.05, 1e-4, clause_log_count("full", 32, 1, 1))
    6279
    """
    w = _as_positive("weight", weight)
    eps = _as_positive("epsilon", epsilon)
    return _smallest(log_count, 2.0 * eps**2 / w**2, _log_delta(delta))


def variable_labels(value_range: ArrayLike, epsilon: ArrayLike, delta: ArrayLike) -> int | IntArray:
    """The paper's single-variable estimator n(v, r_v, eps, delta) as an integer (Section 3.1).

    >>> variable_labels(1.0, 0.01, 1e-4)  # "more than 46K labels" (Section 1)
    46052

    References
    ----------
    Renggli et al. 2019, Section 3.1 (n(v, r, eps, delta)) and Section 1 ("more than 46K labels").
    """
    return hoeffding_labels(value_range, epsilon, delta, 0.0)


# --------------------------------------------------------------------------- Bennett
def bennett_h(u: ArrayLike) -> float | FloatArray:
    """``h(u) = (1 + u) ln(1 + u) - u`` (Proposition 1), accurate for small u.

    References
    ----------
    Renggli et al. 2019, Proposition 1 (Bennett's inequality).
    """
    u = np.asarray(u, dtype=float)
    with np.errstate(invalid="ignore"):
        # (1+u) log1p(u) - u loses digits for tiny u; use the series there.
        direct = (1.0 + u) * np.log1p(u) - u
        series = u**2 / 2 - u**3 / 6 + u**4 / 12 - u**5 / 20
    out = np.where(np.abs(u) < 1e-4, series, direct)
    return float(out) if out.ndim == 0 else out


def bennett_rate(epsilon: ArrayLike, p: ArrayLike) -> float | FloatArray:
    """``p h(eps / p)``: the exponent per example of Bennett's bound for |X| <= 1, E[X^2] <= p.

    References
    ----------
    Renggli et al. 2019, Proposition 1 and Section 4.1.1.
    """
    eps = _as_positive("epsilon", epsilon)
    p = np.asarray(p, dtype=float)
    if np.any(~((p > 0) & (p <= 1))):
        raise InputError("difference_bound", "in (0, 1]", p.tolist() if p.ndim else float(p))
    return _result(p * bennett_h(eps / p))


def bennett_bound(epsilon: ArrayLike, p: ArrayLike, delta: ArrayLike, log_count: ArrayLike = 0.0) -> float | FloatArray:
    """Real-valued ``(ln 2 + log_count - ln delta) / (p h(eps / p))`` (Section 4.1.1).

    References
    ----------
    Renggli et al. 2019, Section 4.1.1.
    """
    return _result((_LOG2 + np.asarray(log_count, dtype=float) - _log_delta(delta)) / bennett_rate(epsilon, p))


def bennett_labels(epsilon: ArrayLike, p: ArrayLike, delta: ArrayLike, log_count: ArrayLike = 0.0) -> int | IntArray:
    """Smallest integer n with ``2 exp(log_count) exp(-n p h(eps / p)) < delta`` (Prop. 1, Section 4.1.1).

    Parameters
    ----------
    epsilon : float or array_like
        Tolerance on ``n - o`` (the clause's tolerance divided by |a| for ``a (n - o)``).
    p : float or array_like
        Upper bound on d, hence on ``E[(n_i - o_i)**2]``; in (0, 1].
    delta : float or array_like
        The failure probability this test may use (half of it when a filter on d takes
        the other half, Section 4.1.1).
    log_count : float or array_like
        ``log S`` plus the log of the number of clauses sharing ``delta``.

    References
    ----------
    Renggli et al. 2019, Proposition 1 and Section 4.1.1 (Pattern 1, hierarchical testing).

    Examples
    --------
    Section 4.1.1: p = 0.1, reliability 0.9999, one accuracy point, 32 steps; the filter on
    d takes delta/2, so the test of n - o gets delta/2 (about 29K and 67K labels):

    >>> bennett_labels(0.01, 0.1, 1e-4 / 2, log_histories("none", 32))
    29048
    >>> bennett_labels(0.01, 0.1, 1e-4 / 2, log_histories("full", 32))
    67706
    """
    return _smallest(_LOG2 + np.asarray(log_count, dtype=float), bennett_rate(epsilon, p), _log_delta(delta))


def active_labels(p: ArrayLike, n: ArrayLike) -> int | IntArray:
    """Labels per commit with active labeling: ``ceil(p n)`` (Section 4.1.2).

    Only the examples where the new and old models disagree (at most a fraction p of
    the n test examples) need labels to estimate ``n - o``.

    References
    ----------
    Renggli et al. 2019, Section 4.1.2 (active labeling).
    """
    p = np.asarray(p, dtype=float)
    n = np.asarray(n, dtype=float)
    out = np.ceil(np.round(p * n, 9)).astype(np.int64)
    return int(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------- exact binomial tail
def binomial_labels(epsilon: Exact, delta: float, log_count: float = 0.0) -> int:
    """Smallest n from which on every n' satisfies ``exp(log_count) F(n', eps) < delta`` (exact binomial).

    ``F(n, eps) = sup_p P(X/n - p >= eps)`` with ``X ~ Binomial(n, p)``: the exact worst-case
    chance that one estimate (a fraction of n labelled examples: n, o or d) exceeds its true
    value by its share ``eps`` of a clause's tolerance, on the side that would flip the
    decision.  It replaces the one-sided Hoeffding factor ``exp(-2 n eps**2)`` of
    :func:`hoeffding_labels` (the same union bound over ``exp(log_count)`` events) and is
    never larger, so the count is never larger either.  ``F`` is not monotone in n (a
    sawtooth); the count is the smallest n such that *every* larger test set satisfies the
    inequality (:func:`meter_dashboard.bounds.binomial.smallest_labels`).

    Parameters
    ----------
    epsilon : float, str or Fraction
        The estimate's tolerance share ``eps / W``, taken as the exact number it is (a
        :class:`~fractions.Fraction` such as 0.01/3 stays exact).
    delta : float
        The failure probability to share out, in (0, 1).
    log_count : float
        ``log(S k m)`` (:func:`clause_log_count`).

    Returns
    -------
    int

    Raises
    ------
    InputError
        ``bound`` when Hoeffding's count for the same settings exceeds
        :data:`MAX_EXACT_LABELS` (the exact search would take minutes).

    References
    ----------
    Renggli et al. 2019, Section 4.3 ("tight numerical bounds", following Langford 2005)
    and Section 3.1 (the estimator it tightens).

    Examples
    --------
    Figure 2, F1 (``n > c +/- 0.05``), reliability 0.9999, full adaptivity, H = 32
    (Hoeffding: 6,279):

    >>> binomial_labels(0.05, 1e-4, clause_log_count("full", 32, 1, 1))
    5704
    """
    from fractions import Fraction

    from . import binomial

    eps = epsilon if isinstance(epsilon, Fraction) else binomial.exact_decimal("epsilon", epsilon)
    if eps <= 0:
        raise InputError("epsilon", "> 0", float(eps))
    hoeffding = hoeffding_labels(1.0, float(eps), delta, log_count)
    if eps >= 1:  # X/n - p >= 1 cannot happen: every n >= 1 satisfies the inequality
        return 1
    if hoeffding > MAX_EXACT_LABELS:
        raise InputError("bound", f"hoeffding for settings that need more than {MAX_EXACT_LABELS:,} labels (the "
                         "exact binomial search would take minutes)", raw(f"binomial, where Hoeffding needs "
                                                                          f"{hoeffding:,}"))
    return int(binomial.smallest_labels([float(log_count)], [eps], float(delta), sides="upper"))
