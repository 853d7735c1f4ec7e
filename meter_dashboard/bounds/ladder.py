"""The Ladder: a leaderboard that releases a score only when it improves significantly.

Symbols (the lecture notes' [1], after Blum & Hardt [2], mapped once): ``n`` = test
examples (labels) = |S|; ``k`` = ``submissions``; ``t`` = round (submission index,
1-based in the papers, 0-based in arrays); ``R_S(f_t)`` = the empirical loss of
submission t (the mean of its per-example losses ``l_t``); ``R_t`` = the score the
Ladder releases after round t; ``eta`` = ``step``; ``epsilon`` = the statistical part
of the leaderboard error; ``delta`` = 1 - confidence.

What lives here (pure numpy/scipy, no files, no Panel):

- :func:`replay`: the scores Algorithm 1 (fixed step eta) or Algorithm 2 (parameter
  free) releases for a given sequence of submissions, beside the naive leaderboard's
  exact empirical losses.
- :func:`labels`, :func:`failure_probability`, :func:`best_step`,
  :func:`leaderboard_error`: Lemma 4's bound on the leaderboard error and the test-set
  size it implies; :func:`satisfies_lemma4` checks a count in exact decimal arithmetic
  and :func:`exact_labels` returns only a count that passed that check.
- :func:`iter_boosting_attack` / :func:`boosting_attack`: a seeded simulation of the
  boosting attack of Section 5 against a naive leaderboard and against the Ladder.

Floating point and ties
-----------------------
The Ladder's test is a strict inequality (``R_S(f_t) < R_{t-1} - eta``).  Scores and
thresholds are sums of decimal fractions, which binary floating point cannot hold
exactly (``0.3 - 0.1 != 0.2``), so two values within :data:`TIE_TOLERANCE` (1e-9 on the
loss scale, far below the 1/n resolution of any test set smaller than 10**9 examples)
count as equal: a submission exactly at the threshold is a tie and is *not* released.
Rounding to the nearest multiple uses the same tolerance and rounds halves up (to the
larger, more conservative loss).

Counts
------
A label count is shown only when it is exact: Lemma 4's counts are refused above
:data:`MAX_LABELS` (10**15, where binary floating point can no longer tell n from n - 1)
with an :class:`~meter_dashboard.core.validation.InputError` naming the input that made the
count explode (a tiny step or epsilon), and :func:`exact_labels` checks the inequality for
n and n - 1 in 60-digit decimal arithmetic before a count is returned.

References
----------
.. [1] Lecture notes, COMS 6998-4 Fall 2017, "Leaderboards" (November 29, 2017):
   Definition 2 (leaderboard error), Algorithm 1 (Ladder mechanism), Lemma 4,
   Algorithm 2 (parameter-free Ladder), Section 5 (boosting attack, Theorem 6).
.. [2] A. Blum, M. Hardt. "The Ladder: A Reliable Leaderboard for Machine Learning
   Competitions". ICML 2015.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.validation import InputError, check_int, check_probability
from ._types import BoolArray, FloatArray, IntArray, Real

__all__ = [
    "TIE_TOLERANCE",
    "MAX_LABELS",
    "LADDER_VARIANTS",
    "check_step",
    "check_losses",
    "round_to_multiple",
    "replay",
    "LadderReplay",
    "LadderState",
    "log_failure_bound",
    "failure_probability",
    "labels",
    "satisfies_lemma4",
    "exact_labels",
    "best_step",
    "leaderboard_error",
    "AttackCurves",
    "iter_boosting_attack",
    "boosting_attack",
    "boosting_reference",
]

#: Two losses closer than this count as equal (a tie at the threshold is not an improvement).
TIE_TOLERANCE = 1e-9

#: The largest label count reported: beyond it a binary float cannot tell n from n - 1, so a
#: larger count is refused (naming the input that made it explode) instead of shown wrong.
MAX_LABELS = 10**15

#: The two Ladders: Algorithm 1 with a fixed step, Algorithm 2 without parameters.
LADDER_VARIANTS = ("fixed_step", "parameter_free")

#: Candidate submissions tested at once by the vectorized replay (times n: at most 4M losses).
_BLOCK_CELLS = 1 << 22
_BLOCK_MAX = 4096


def _as_fraction(step: float | Fraction) -> Fraction:
    """The step as an exact rational: the decimal a person typed (``0.1`` is 1/10), or ``1/n`` itself."""
    if isinstance(step, Fraction):
        return step
    return Fraction(repr(float(step)))


def check_step(step: float | str | None, name: str = "step") -> float | None:
    """The Ladder's step eta as a float in (0, 1]; ``None`` (the parameter-free Ladder) passes through."""
    if step is None:
        return None
    rule = "a number in (0, 1] (or omitted for the parameter-free Ladder)"
    try:
        value = float(step)
    except (TypeError, ValueError, OverflowError):
        raise InputError(name, rule, step) from None
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise InputError(name, rule, step)
    return value


def round_to_multiple(x: ArrayLike, step: float | Fraction) -> float | FloatArray:
    """``[x]_eta``: ``x`` rounded to the nearest integer multiple of ``step``.

    Halves round up; ``x / step`` within :data:`TIE_TOLERANCE` (relative) of a half
    counts as the half (``0.25 / 0.1`` is ``2.4999999999999996`` in binary).  The
    multiple ``index * step`` is formed in exact rational arithmetic (the step as the
    decimal it was written as, or a :class:`fractions.Fraction` such as ``1/n``) and
    then converted, so ``[0.3]_0.1`` is ``0.3``, not ``0.30000000000000004``, and
    ``[1/26]_{1/26}`` is exactly ``1/26``.  A step below the float resolution of ``x``
    (``x / step`` beyond 2**52) leaves ``x`` as it is: it is already a multiple as far as
    a float can tell.

    Parameters
    ----------
    x : float or array_like
    step : float or Fraction
        The multiple, ``eta`` in Algorithm 1 or ``Fraction(1, n)`` in Algorithm 2 [1]_.

    Returns
    -------
    float or ndarray
    """
    exact = _as_fraction(step)
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        q = x / float(exact)
        index = np.floor(q + 0.5 + TIE_TOLERANCE * np.maximum(1.0, np.abs(q)))
    resolvable = np.isfinite(index) & (np.abs(q) < 2.0**52)
    values = [float(int(i) * exact) if ok else float(v)
              for i, ok, v in zip(index.ravel(), resolvable.ravel(), x.ravel())]
    if x.ndim == 0:
        return values[0]
    return np.array(values).reshape(x.shape)


# --------------------------------------------------------------------------- the mechanism
def _improves(loss: Real, threshold: Real) -> bool | np.bool_ | BoolArray:
    """The Ladder's strict test ``loss < threshold`` with ties (within TIE_TOLERANCE) not improving.

    Works on floats and on arrays; an infinite threshold (round 1) always improves.
    """
    if np.ndim(threshold) == 0 and not math.isfinite(threshold):
        return True if np.ndim(loss) == 0 else np.ones(np.shape(loss), dtype=bool)
    return loss < threshold - TIE_TOLERANCE * np.maximum(1.0, np.abs(threshold))


class LadderState:
    """The Ladder's memory between rounds: the last released score (and loss vector).

    ``step=None`` is Algorithm 2 (parameter-free), a float is Algorithm 1 with that eta.
    :meth:`submit` plays one round and updates the state; :meth:`peek` answers what
    would be released without changing it.
    """

    __slots__ = ("step", "n", "score", "best_losses")

    def __init__(self, n: int, step: float | None = None) -> None:
        self.step = step
        self.n = int(n)
        self.score = math.inf  # R_0 = infinity
        self.best_losses = np.zeros(self.n)  # l_0 = (0, ..., 0)  (Algorithm 2 only)

    def threshold(self, losses: FloatArray | None = None) -> float:
        """The value ``R_S(f_t)`` must beat: ``R_{t-1} - eta`` or ``R_{t-1} - s / sqrt(n)``."""
        if self.step is not None:
            return self.score - self.step
        diff = np.asarray(losses, dtype=float) - self.best_losses
        s = float(np.std(diff, ddof=1))  # the sample standard deviation SD(l_t - l_{t-1})
        return self.score - s / math.sqrt(self.n)

    def multiple(self) -> float | Fraction:
        """What released scores are rounded to: eta, or exactly 1/n."""
        return self.step if self.step is not None else Fraction(1, self.n)

    def peek(self, loss: float, losses: FloatArray | None = None) -> tuple[float, bool, float]:
        """``(released score, improved?, threshold)`` if this submission came next."""
        threshold = self.threshold(losses)
        if not bool(_improves(loss, threshold)):
            return self.score, False, threshold
        return float(round_to_multiple(loss, self.multiple())), True, threshold

    def submit(self, loss: float, losses: FloatArray | None = None) -> tuple[float, bool, float]:
        """Play one round (steps 3-9 of Algorithm 1 or 3-10 of Algorithm 2) and return it."""
        score, improved, threshold = self.peek(loss, losses)
        if improved:
            self.score = score
            if self.step is None:
                self.best_losses = np.asarray(losses, dtype=float)
        return score, improved, threshold


class LadderReplay(NamedTuple):
    """What a leaderboard shows for each submission, in order (arrays of length k)."""

    naive: FloatArray  #: R_S(f_t), the exact empirical loss (what a naive board shows)
    best_naive: FloatArray  #: min_{i <= t} R_S(f_i), a naive board's best-so-far
    scores: FloatArray  #: R_t, the score the Ladder releases after round t
    improved: BoolArray  #: True where the Ladder released a new score at round t
    thresholds: FloatArray  #: what R_S(f_t) had to beat (inf in round 1)


def check_losses(losses: ArrayLike) -> FloatArray:
    """Per-example losses as a float array (n, k) of numbers in [0, 1] (a 1-d array is one submission)."""
    arr = np.asarray(losses, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InputError("losses", "a table with one row per test example and one column per submission",
                         list(arr.shape))
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise InputError("losses", "numbers in [0, 1]", arr[~((arr >= 0) & (arr <= 1))][:8].tolist())
    return arr


def _next_release(start: int, k: int, block: int, hits: Callable[[int, int], ArrayLike]) -> int:
    """The first round ``t >= start`` where ``hits(lo, hi)`` (rounds lo..hi-1) is True; ``k`` if none.

    Blocks grow from 16 rounds to ``block`` (a release right away costs little, a long run
    of withheld submissions costs a few vectorized passes).
    """
    size, lo = 16, start
    while lo < k:
        hi = min(k, lo + min(size, block))
        found = np.flatnonzero(hits(lo, hi))
        if found.size:
            return lo + int(found[0])
        lo, size = hi, size * 2
    return k


def _replay_rounds(naive: FloatArray, thresholds_of: Callable[[float, int, int], FloatArray],
                   release: Callable[[int], float], block: int) -> tuple[FloatArray, BoolArray, FloatArray]:
    """Scores, release flags and thresholds of k rounds, one vectorized search per release.

    ``thresholds_of(score, lo, hi)`` gives the thresholds of rounds lo..hi-1 against the
    current score; ``release(t)`` records round t as the new best (Algorithm 2 keeps its
    loss vector) and returns the rounded score.
    """
    k = naive.size
    scores, thresholds = np.empty(k), np.empty(k)
    improved = np.zeros(k, dtype=bool)
    score, t = math.inf, 0
    while t < k:
        if math.isinf(score):
            j = t
            thresholds[t] = math.inf
        else:
            def hits(lo: int, hi: int, score: float = score) -> bool | np.bool_ | BoolArray:
                thresholds[lo:hi] = thresholds_of(score, lo, hi)
                return _improves(naive[lo:hi], thresholds[lo:hi])

            j = _next_release(t, k, block, hits)
        scores[t:j] = score
        if j < k:
            score = release(j)
            scores[j], improved[j] = score, True
        t = j + 1
    return scores, improved, thresholds


def replay(losses: ArrayLike, step: float | None = None) -> LadderReplay:
    """Replay a leaderboard: the scores the Ladder releases, beside the naive ones.

    Parameters
    ----------
    losses : array_like, shape (n, k)
        Per-example losses in [0, 1]: one row per test example, one column per
        submission, in the order they were submitted.
    step : float, optional
        eta in (0, 1] for the Ladder mechanism (Algorithm 1 [1]_): a submission is
        released when ``R_S(f_t) < R_{t-1} - eta``, as ``[R_S(f_t)]_eta``.  Omitted:
        the parameter-free Ladder (Algorithm 2 [1]_): released when
        ``R_S(f_t) < R_{t-1} - s / sqrt(n)`` with ``s`` the sample standard deviation
        of ``l_t - l_best`` (``l_best`` the loss vector of the last released
        submission, zeros at first), as ``[R_S(f_t)]_{1/n}``.

    Returns
    -------
    LadderReplay
        ``naive``, ``best_naive``, ``scores``, ``improved``, ``thresholds``.

    Notes
    -----
    A submission exactly at the threshold (within :data:`TIE_TOLERANCE`) is not
    released: the inequality is strict.  With 0/1 losses, a submission that fixes one
    example and breaks none sits *exactly* at the parameter-free threshold (its paired
    t-statistic is 1 for every n), so the parameter-free Ladder never releases a
    one-example improvement.

    The rounds between two releases are tested together (numpy over a block of
    submissions), so the cost is one pass over the losses plus a little per release;
    the decisions are those of :class:`LadderState` played round by round (tested).
    """
    arr = check_losses(losses)
    step = check_step(step)
    n, k = arr.shape
    if step is None and n < 2:
        raise InputError("losses", "at least 2 test examples for the parameter-free Ladder (it needs a standard "
                         "deviation)", n)
    naive = arr.mean(axis=0)
    if step is not None:
        scores, improved, thresholds = _replay_rounds(
            naive, lambda score, lo, hi: np.full(hi - lo, score - step),
            lambda t: float(round_to_multiple(naive[t], step)), _BLOCK_MAX)
    else:
        rows = np.ascontiguousarray(arr.T)  # one contiguous row per submission: np.std as in LadderState
        best = {"losses": np.zeros(n)}
        root_n, one_over_n = math.sqrt(n), Fraction(1, n)

        def thresholds_of(score: float, lo: int, hi: int) -> FloatArray:
            out: FloatArray = score - np.std(rows[lo:hi] - best["losses"], axis=1, ddof=1) / root_n
            return out

        def release(t: int) -> float:
            best["losses"] = rows[t]
            return float(round_to_multiple(naive[t], one_over_n))

        block = max(1, min(_BLOCK_MAX, _BLOCK_CELLS // n))
        scores, improved, thresholds = _replay_rounds(naive, thresholds_of, release, block)
    return LadderReplay(naive=naive, best_naive=np.minimum.accumulate(naive), scores=scores,
                        improved=improved, thresholds=thresholds)


# --------------------------------------------------------------------------- Lemma 4
def _check_bound_args(epsilon: ArrayLike, step: ArrayLike,
                      submissions: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    eps = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(eps)) or np.any(eps <= 0) or np.any(eps >= 1):
        raise InputError("epsilon", "in (0, 1)", eps.tolist())
    eta = np.asarray(step, dtype=float)
    if np.any(~np.isfinite(eta)) or np.any(eta <= 0) or np.any(eta > 1):
        raise InputError("step", "in (0, 1]", eta.tolist())
    k = np.asarray(submissions, dtype=float)
    if np.any(~np.isfinite(k)) or np.any(k < 1) or np.any(k != np.floor(k)):
        raise InputError("submissions", "a whole number >= 1", k.tolist())
    return eps, eta, k


def _log_count(step: FloatArray, submissions: FloatArray) -> FloatArray:
    """(1/eta + 2) log(4k/eta) + 1: the log of e * 2|F| in Lemma 4 [1]_."""
    with np.errstate(over="ignore"):
        out: FloatArray = (1.0 / step + 2.0) * np.log(4.0 * submissions / step) + 1.0
    return out


def log_failure_bound(labels: ArrayLike, epsilon: ArrayLike, step: ArrayLike,
                      submissions: ArrayLike) -> float | FloatArray:
    """Log of Lemma 4's right side: ``-2 eps^2 n + (1/eta + 2) log(4k/eta) + 1``.

    Lemma 4 [1]_: for the Ladder with step eta and k adaptively chosen submissions,
    ``Pr[|min_{i<=t} R_D(f_i) - R_t| > eps + eta] <= exp(-2 eps^2 n + (1/eta + 2)
    log(4t/eta) + 1)`` for every t <= k (the tree of possible submissions is counted
    with k).  Broadcasts over all arguments.
    """
    eps, eta, k = _check_bound_args(epsilon, step, submissions)
    n = np.asarray(labels, dtype=float)
    out: float | FloatArray = -2.0 * eps**2 * n + _log_count(eta, k)
    return out


def failure_probability(labels: ArrayLike, epsilon: ArrayLike, step: ArrayLike,
                        submissions: ArrayLike) -> float | FloatArray:
    """Lemma 4's bound on the probability that the leaderboard error exceeds eps + eta.

    ``min(1, exp(log_failure_bound(...)))``; the guarantee holds with confidence
    ``1 - failure_probability``.
    """
    with np.errstate(over="ignore"):
        out = np.minimum(1.0, np.exp(log_failure_bound(labels, epsilon, step, submissions)))
    return float(out) if np.ndim(out) == 0 else out


def _refuse_huge_counts(real: FloatArray, eps: FloatArray, eta: FloatArray, k: FloatArray,
                        log_delta: FloatArray) -> None:
    """Refuse counts above :data:`MAX_LABELS`, naming the input that made them explode.

    Even the coarsest step (eta = 1) needs ``(3 log 4k + 1 + log 1/delta) / (2 eps^2)``
    labels: when that alone passes the limit, epsilon is to blame; otherwise the step.
    """
    too_big = ~(np.isfinite(real) & (real <= MAX_LABELS))
    if not np.any(too_big):
        return
    real, eps, eta, k, log_delta = (np.broadcast_to(v, too_big.shape) for v in (real, eps, eta, k, log_delta))
    i = tuple(np.argwhere(too_big)[0])
    about = f"about {real[i]:.3g}" if np.isfinite(real[i]) else "more than 1e308"
    log_coarsest = math.log(3.0 * math.log(4.0 * float(k[i])) + 1.0 - float(log_delta[i])) - math.log(2.0) \
        - 2.0 * math.log(float(eps[i]))  # in logs: eps**2 may underflow
    name = "epsilon" if log_coarsest > math.log(MAX_LABELS) else "step"
    value = float(eps[i]) if name == "epsilon" else float(eta[i])
    raise InputError(name, f"large enough that Lemma 4's label count stays below {MAX_LABELS:.0e} "
                     f"(with these settings it would be {about})", value)


def labels(epsilon: ArrayLike, step: ArrayLike, submissions: ArrayLike, delta: ArrayLike) -> int | IntArray:
    """Test labels for k submissions with leaderboard error at most eps + eta w.p. 1 - delta.

    The smallest integer ``n`` with ``exp(-2 eps^2 n + (1/eta + 2) log(4k/eta) + 1) <
    delta`` (Lemma 4 [1]_; ``n`` satisfies the strict inequality, ``n - 1`` does not).
    Broadcasts over all arguments.  Counts above :data:`MAX_LABELS` are refused with an
    :class:`InputError` naming ``epsilon`` or ``step``.  For one count to show, prefer
    :func:`exact_labels` (checked in decimal arithmetic).

    Parameters
    ----------
    epsilon : float or array_like
        eps in (0, 1), the statistical part of the leaderboard error.
    step : float or array_like
        eta in (0, 1], the Ladder's step (the rounding part of the error).
    submissions : int or array_like
        k >= 1.
    delta : float or array_like
        Failure probability in (0, 1).

    Returns
    -------
    int or ndarray of int64

    Examples
    --------
    >>> labels(0.05, 0.05, 100, 0.05)   # (22 log(8000) + 1 + log 20) / (2 * 0.05**2)
    40343
    """
    eps, eta, k = _check_bound_args(epsilon, step, submissions)
    d = np.asarray(delta, dtype=float)
    if np.any(~((d > 0) & (d < 1))):
        raise InputError("delta", "in (0, 1)", d.tolist())
    a = np.asarray(_log_count(eta, k), dtype=float)
    b = np.asarray(2.0 * eps**2, dtype=float)
    with np.errstate(over="ignore", divide="ignore"):
        real = (a - np.log(d)) / b
    log_d = np.log(d)
    _refuse_huge_counts(real, eps, eta, k, log_d)
    # One term: the root is (a - log delta) / b in closed form; then whole labels until n satisfies the
    # strict inequality and n - 1 does not (floating point can misplace the floor by one).
    n = np.floor(real) + 1.0
    for _ in range(4):
        low = a - b * n >= log_d
        n = np.where(low, n + 1.0, n)
        high = a - b * (n - 1.0) < log_d
        n = np.where(high, n - 1.0, n)
        if not (np.any(low) or np.any(high)):
            break
    n = np.maximum(n, 1.0).astype(np.int64)
    return int(n) if n.ndim == 0 else n


def satisfies_lemma4(labels: int, epsilon: float, step: float, submissions: int, delta: float) -> bool:
    """Whether ``labels`` satisfy Lemma 4's strict inequality, decided in 60-digit decimals.

    ``exp(-2 eps^2 n + (1/eta + 2) log(4k/eta) + 1) < delta`` [1]_ with the inputs taken
    as the exact binary floats (and ints) given; :mod:`decimal` computes the logarithms
    correctly rounded to 60 digits, so the answer is certain unless the two sides agree
    to 50 digits, which is refused (an :class:`InputError` naming epsilon).
    """
    with localcontext() as ctx:
        ctx.prec = 60
        e, h, d = Decimal(float(epsilon)), Decimal(float(step)), Decimal(float(delta))
        n, k = Decimal(int(labels)), Decimal(int(submissions))
        log_count = (1 / h + 2) * (4 * k / h).ln() + 1
        margin = d.ln() - (log_count - 2 * e * e * n)
        scale = max(Decimal(1), abs(log_count), abs(2 * e * e * n))
        if abs(margin) <= scale * Decimal(10) ** -50:
            raise InputError("epsilon", "a value for which Lemma 4's inequality is decidable at 60 digits", epsilon)
        return margin > 0


def exact_labels(epsilon: float, step: float, submissions: int, delta: float) -> int:
    """:func:`labels` for one setting, certified: ``n`` satisfies Lemma 4 and ``n - 1`` does not.

    The float solve of :func:`labels` is checked (and, if floating point misplaced it,
    moved by whole labels) with :func:`satisfies_lemma4`, so the count returned is a
    positive integer that provably satisfies Lemma 4's strict inequality [1]_ and is the
    smallest one that does.
    """
    n = int(labels(epsilon, step, submissions, delta))
    for _ in range(64):
        if satisfies_lemma4(n, epsilon, step, submissions, delta):
            break
        n += 1
    for _ in range(64):
        if n > 1 and satisfies_lemma4(n - 1, epsilon, step, submissions, delta):
            n -= 1
        else:
            break
    if not satisfies_lemma4(n, epsilon, step, submissions, delta) or (
            n > 1 and satisfies_lemma4(n - 1, epsilon, step, submissions, delta)):
        raise InputError("epsilon", "a setting whose label count can be certified", epsilon)  # pragma: no cover
    return n


def _golden_minimum(f: Callable[[float], float], lo: float, hi: float, xtol: float) -> tuple[float, float]:
    """(x, f(x)) at the minimum of a unimodal ``f`` on [lo, hi], to within ``xtol`` (golden-section search)."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(200):
        if b - a <= xtol:
            break
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    x = (a + b) / 2.0
    return x, f(x)


def _real_labels(step: float, total_error: float, log_k: float, log_inv_delta: float) -> float:
    """The real root n(eta) of Lemma 4 with eps = total - eta (for minimizing over eta)."""
    eps = total_error - step
    return ((1.0 / step + 2.0) * (math.log(4.0) + log_k - math.log(step)) + 1.0 + log_inv_delta) / (2.0 * eps * eps)


def best_step(total_error: float, submissions: int, delta: float) -> tuple[float, float, int]:
    """The step eta that minimizes Lemma 4's labels for a target leaderboard error.

    Splits ``total_error`` = eps + eta between the statistical part eps and the
    Ladder's step eta so that the label count of :func:`labels` is smallest.

    Parameters
    ----------
    total_error : float
        eps + eta in (0, 1).
    submissions : int
        k >= 1.
    delta : float
        Failure probability in (0, 1).

    Returns
    -------
    (step, epsilon, labels) : (float, float, int)
        The minimizing eta, eps = total - eta, and the labels at that split.  The
        integer count is the minimum over every split (the count is
        ``floor(n_real) + 1`` and ``n_real`` is minimized).

    Notes
    -----
    A log-spaced grid of 4,000 steps in (0, total) locates the basin; a golden-section
    search between the grid neighbours polishes eta to 1e-12 relative.  With
    eta = O(n^{-1/3} log^{1/3}(kn)) Lemma 4 gives Theorem 3 [1]_.  A total error so
    small that every split needs more than :data:`MAX_LABELS` labels is refused (an
    :class:`InputError` naming ``total_error``): any split has eta and eps below the
    total, so ``((1/total + 2) log(4k/total) + 1 + log 1/delta) / (2 total^2)`` is a
    lower bound on every count.
    """
    tau = check_probability("total_error", total_error)
    k = check_int("submissions", submissions, minimum=1)
    d = check_probability("delta", delta)
    log_k, log_inv_delta = math.log(k), -math.log(d)
    floor_count = math.inf if tau < 1e-100 else (  # below 1e-100 the 1/(2 tau^2) factor alone is beyond any limit
        ((1.0 / tau + 2.0) * (math.log(4.0) + log_k - math.log(tau)) + 1.0 + log_inv_delta) / (2.0 * tau * tau))
    if not floor_count <= MAX_LABELS:
        raise InputError("total_error", f"large enough that Lemma 4's label count stays below {MAX_LABELS:.0e} "
                         "(every split would need more than "
                         + (f"{floor_count:.3g})" if math.isfinite(floor_count) else "1e308)"), total_error)
    grid = np.geomspace(tau * 1e-6, tau * (1 - 1e-9), 4000)
    values = ((1.0 / grid + 2.0) * (math.log(4.0) + log_k - np.log(grid)) + 1.0 + log_inv_delta) / (
        2.0 * (tau - grid) ** 2)
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    x, fx = _golden_minimum(lambda e: _real_labels(e, tau, log_k, log_inv_delta), lo, hi, 1e-12 * tau)
    eta = float(x) if fx <= values[i] else float(grid[i])
    eps = tau - eta
    try:
        n = int(labels(eps, eta, k, d))
    except InputError as exc:
        raise InputError("total_error", exc.rule, total_error) from None
    return eta, eps, n


def leaderboard_error(labels: int, submissions: int, delta: float) -> tuple[float, float, float]:
    """The smallest leaderboard error eps + eta that ``labels`` guarantee (Lemma 4 inverted).

    For each eta the smallest eps with ``exp(-2 eps^2 n + (1/eta + 2) log(4k/eta) + 1)
    <= delta`` is ``sqrt(((1/eta + 2) log(4k/eta) + 1 + log(1/delta)) / (2n))``; the
    total is minimized over eta [1]_.

    Returns
    -------
    (total, step, epsilon) : (float, float, float)
        Values of ``total`` >= 1 mean the test set guarantees nothing useful.
    """
    n = check_int("labels", labels, minimum=1)
    k = check_int("submissions", submissions, minimum=1)
    d = check_probability("delta", delta)
    log_k, log_inv_delta = math.log(k), -math.log(d)

    def total(eta: ArrayLike) -> FloatArray:
        eta = np.asarray(eta, dtype=float)
        out: FloatArray = eta + np.sqrt(((1.0 / eta + 2.0) * (math.log(4.0) + log_k - np.log(eta)) + 1.0
                                         + log_inv_delta) / (2.0 * n))
        return out

    grid = np.geomspace(1e-6, 1.0, 4000)
    values = total(grid)
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    x, fx = _golden_minimum(lambda e: float(total(e)), lo, hi, 1e-13)
    eta = float(x) if fx <= values[i] else float(grid[i])
    best = float(total(eta))
    return best, eta, best - eta


# --------------------------------------------------------------------------- Section 5
class AttackCurves(NamedTuple):
    """The boosting attack's published and true losses, per trial and per k.

    Arrays have shape (trials, K) for k = 1..K; entries not computed yet (a cancelled
    run) are NaN.
    """

    submissions: IntArray  #: k = 1..K
    naive_public: FloatArray  #: the naive board's score for the attacker's final submission
    ladder_public: FloatArray  #: the Ladder's published score after the attacker's final submission
    naive_holdout: FloatArray  #: the naive attacker's final submission on a fresh holdout
    ladder_holdout: FloatArray  #: the Ladder attacker's final submission on a fresh holdout
    naive_selected: FloatArray  #: how many submissions looked better than chance on the naive board
    ladder_selected: FloatArray  #: ... on the Ladder
    done: int  #: (trial, k) cells computed so far
    total: int  #: trials * K


#: The per-round records of :class:`AttackCurves`, in the order :func:`_attack_rounds` yields them.
_ATTACK_FIELDS = ("naive_public", "ladder_public", "naive_holdout", "ladder_holdout", "naive_selected",
                  "ladder_selected")


def _check_attack_args(labels: int, submissions: int, trials: int,
                       step: float | None) -> tuple[int, int, int, float | None]:
    n = check_int("labels", labels, minimum=2, maximum=10**7)
    k = check_int("submissions", submissions, minimum=1, maximum=100_000)
    r = check_int("trials", trials, minimum=1, maximum=1000)
    return n, k, r, check_step(step)


class _Attacker:
    """One attacker's memory against one board: the votes of the kept labelings and their count."""

    __slots__ = ("votes", "kept")

    def __init__(self, size: int) -> None:
        self.votes = np.zeros(size, dtype=np.int32)
        self.kept = 0

    def keep(self, signed: NDArray[np.int32]) -> None:
        self.votes += signed
        self.kept += 1

    def vote_is_wrong(self, coin: NDArray[np.int8], y: NDArray[np.int8]) -> BoolArray:
        """Where the majority vote u* (ties and no votes: the coin) differs from the labels."""
        final = np.where(self.votes > 0, 1, np.where(self.votes < 0, 0, coin)).astype(np.int8)
        wrong: BoolArray = final != y
        return wrong


def _attack_rounds(rng: np.random.Generator, n: int, rounds: int,
                   step: float | None) -> Iterator[tuple[float, float, float, float, int, int]]:
    """One trial of the boosting attack: per round, the values of :data:`_ATTACK_FIELDS`.

    Random streams, in order: the 2n labels (test then holdout), the 2n tie-breaking
    coins, then one 2n-labeling per round.
    """
    y = rng.integers(0, 2, size=2 * n, dtype=np.int8)  # test labels, then holdout labels
    coin = rng.integers(0, 2, size=2 * n, dtype=np.int8)  # tie breaker of the majority vote
    naive, ladder = _Attacker(2 * n), _Attacker(2 * n)
    state = LadderState(n, step)
    for _ in range(rounds):
        u = rng.integers(0, 2, size=2 * n, dtype=np.int8)
        test_losses = (u != y)[:n].astype(float)
        loss = float(test_losses.mean())
        signed = 2 * u.astype(np.int32) - 1
        if loss <= 0.5:  # the naive board shows the exact loss
            naive.keep(signed)
        released, improved, _ = state.submit(loss, test_losses if step is None else None)
        if improved and released <= 0.5:
            ladder.keep(signed)
        naive_wrong = naive.vote_is_wrong(coin, y)
        ladder_wrong = ladder.vote_is_wrong(coin, y)
        ladder_score, _, _ = state.peek(float(ladder_wrong[:n].mean()),
                                        ladder_wrong[:n].astype(float) if step is None else None)
        yield (float(naive_wrong[:n].mean()), ladder_score, float(naive_wrong[n:].mean()),
               float(ladder_wrong[n:].mean()), naive.kept, ladder.kept)


def iter_boosting_attack(labels: int, submissions: int, *, step: float | None = None, seed: int = 0,
                         trials: int = 1, chunk: int = 10) -> Iterator[AttackCurves]:
    """Run the boosting attack of Section 5 [1]_, yielding partial curves as it goes.

    The attacker faces a test set of ``n = labels`` examples with uniformly random
    binary labels ``y`` (0/1 loss) and, for each k = 1..K:

    1. submits k uniformly random labelings u_1..u_k (the same stream for every k, so
       the attack with k submissions is the first k rounds of the attack with K);
    2. observes the leaderboard's feedback for each;
    3. keeps those that looked better than chance: on the naive board, exact loss
       ``<= 1/2``; on the Ladder, the rounds where the Ladder released a new score and
       that score is ``<= 1/2`` (a round that is not released only repeats the old
       score, which says nothing about the submission);
    4. submits u* = the coordinate-wise majority vote of the kept labelings (ties and
       an empty set are broken by a fixed random coin per example).

    Recorded per k: the score the naive board publishes for u* (its exact loss on the
    test set), the score the Ladder publishes after u* (step ``step``, or the
    parameter-free Ladder when ``None``), and the losses of both attackers' u* on a
    fresh holdout of ``n`` more examples the attacker labelled but never got feedback
    on (the truth, about 1/2).  Theorem 6: against an accurate board the published
    score falls to ``1/2 - Omega(sqrt(k/n))``.

    Parameters
    ----------
    labels : int
        n, the test-set size (>= 2).
    submissions : int
        K, the largest number of random labelings.
    step : float, optional
        The Ladder's eta; ``None`` is the parameter-free Ladder.
    seed : int
        Seed of numpy's PCG64; trial i uses the i-th child of ``SeedSequence(seed)``,
        so results depend only on (labels, submissions, step, seed, trial).
    trials : int
        Independent repetitions.
    chunk : int
        Rounds between yields (for progress bars and cancellation).

    Yields
    ------
    AttackCurves
        The curves so far, after every ``chunk`` rounds and once at the end.
    """
    n, big_k, n_trials, step = _check_attack_args(labels, submissions, trials, step)
    seed = check_int("seed", seed, minimum=0)
    chunk = max(1, int(chunk))
    out = {name: np.full((n_trials, big_k), np.nan) for name in _ATTACK_FIELDS}
    ks = np.arange(1, big_k + 1)
    total, done = n_trials * big_k, 0
    for trial, child in enumerate(np.random.SeedSequence(seed).spawn(n_trials)):
        for i, values in enumerate(_attack_rounds(np.random.default_rng(child), n, big_k, step)):
            for name, value in zip(_ATTACK_FIELDS, values):
                out[name][trial, i] = value
            done += 1
            if (i + 1) % chunk == 0 and done < total:
                yield AttackCurves(submissions=ks, done=done, total=total,
                                   **{key: value.copy() for key, value in out.items()})
    yield AttackCurves(submissions=ks, done=done, total=total, **{key: value.copy() for key, value in out.items()})


def boosting_attack(labels: int, submissions: int, *, step: float | None = None, seed: int = 0, trials: int = 1,
                    progress: Callable[[int, int], object] | None = None) -> AttackCurves:
    """Run :func:`iter_boosting_attack` to the end (or until ``progress`` returns False).

    ``progress(done, total)`` is called after every chunk; returning ``False`` stops
    the run early and returns the partial curves (NaN where not computed).  See
    :func:`iter_boosting_attack` for the attack (Section 5 [1]_).
    """
    curves = None
    for curves in iter_boosting_attack(labels, submissions, step=step, seed=seed, trials=trials):
        if progress is not None and progress(curves.done, curves.total) is False:
            break
    assert curves is not None  # iter_boosting_attack always yields (at least its final curves)
    return curves


def boosting_reference(labels: float, submissions: ArrayLike) -> float | FloatArray:
    """A guide for the naive board's drift: ``1/2 - sqrt(k / (2n)) / pi``.

    Heuristic expectation of the attack's published loss against an exact board
    (normal approximation; not from the notes): a random labeling kept because its
    loss is <= 1/2 agrees with y on each example with probability about
    ``1/2 + 1/sqrt(2 pi n)``; the majority of about k/2 such votes is right with
    probability about ``1/2 + sqrt(k/2) / (pi sqrt(n))``.  It has Theorem 6's
    ``1/2 - Omega(sqrt(k/n))`` shape [1]_.
    """
    k = np.asarray(submissions, dtype=float)
    return 0.5 - np.sqrt(k / (2.0 * float(labels))) / math.pi
