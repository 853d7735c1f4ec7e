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
  size it implies.
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
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize_scalar

from .._validation import InputError, check_int, check_probability
from ._numeric import smallest_integer_satisfying

__all__ = [
    "TIE_TOLERANCE",
    "LADDER_VARIANTS",
    "round_to_multiple",
    "replay",
    "LadderReplay",
    "LadderState",
    "log_failure_bound",
    "failure_probability",
    "labels",
    "best_step",
    "leaderboard_error",
    "AttackCurves",
    "iter_boosting_attack",
    "boosting_attack",
    "boosting_reference",
]

#: Two losses closer than this count as equal (a tie at the threshold is not an improvement).
TIE_TOLERANCE = 1e-9

#: The two Ladders: Algorithm 1 with a fixed step, Algorithm 2 without parameters.
LADDER_VARIANTS = ("fixed_step", "parameter_free")


def _as_fraction(step) -> Fraction:
    """The step as an exact rational: the decimal a person typed (``0.1`` is 1/10), or ``1/n`` itself."""
    if isinstance(step, Fraction):
        return step
    return Fraction(repr(float(step)))


def round_to_multiple(x, step):
    """``[x]_eta``: ``x`` rounded to the nearest integer multiple of ``step``.

    Halves round up; ``x / step`` within :data:`TIE_TOLERANCE` (relative) of a half
    counts as the half (``0.25 / 0.1`` is ``2.4999999999999996`` in binary).  The
    multiple ``index * step`` is formed in exact rational arithmetic (the step as the
    decimal it was written as, or a :class:`fractions.Fraction` such as ``1/n``) and
    then converted, so ``[0.3]_0.1`` is ``0.3``, not ``0.30000000000000004``, and
    ``[1/26]_{1/26}`` is exactly ``1/26``.

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
    q = x / float(exact)
    index = np.floor(q + 0.5 + TIE_TOLERANCE * np.maximum(1.0, np.abs(q)))
    if x.ndim == 0:
        return float(int(index) * exact)
    return np.array([float(int(i) * exact) for i in index.ravel()]).reshape(x.shape)


# --------------------------------------------------------------------------- the mechanism
class LadderState:
    """The Ladder's memory between rounds: the last released score (and loss vector).

    ``step=None`` is Algorithm 2 (parameter-free), a float is Algorithm 1 with that eta.
    :meth:`submit` plays one round and updates the state; :meth:`peek` answers what
    would be released without changing it.
    """

    __slots__ = ("step", "n", "score", "best_losses")

    def __init__(self, n: int, step: float | None = None):
        self.step = step
        self.n = int(n)
        self.score = math.inf  # R_0 = infinity
        self.best_losses = np.zeros(self.n)  # l_0 = (0, ..., 0)  (Algorithm 2 only)

    def threshold(self, losses: np.ndarray | None = None) -> float:
        """The value ``R_S(f_t)`` must beat: ``R_{t-1} - eta`` or ``R_{t-1} - s / sqrt(n)``."""
        if self.step is not None:
            return self.score - self.step
        diff = np.asarray(losses, dtype=float) - self.best_losses
        s = float(np.std(diff, ddof=1))  # the sample standard deviation SD(l_t - l_{t-1})
        return self.score - s / math.sqrt(self.n)

    def peek(self, loss: float, losses: np.ndarray | None = None) -> tuple[float, bool, float]:
        """``(released score, improved?, threshold)`` if this submission came next."""
        threshold = self.threshold(losses)
        improved = loss < threshold - TIE_TOLERANCE * max(1.0, abs(threshold)) if math.isfinite(threshold) else True
        if not improved:
            return self.score, False, threshold
        multiple = self.step if self.step is not None else Fraction(1, self.n)
        return float(round_to_multiple(loss, multiple)), True, threshold

    def submit(self, loss: float, losses: np.ndarray | None = None) -> tuple[float, bool, float]:
        """Play one round (steps 3-9 of Algorithm 1 or 3-10 of Algorithm 2) and return it."""
        score, improved, threshold = self.peek(loss, losses)
        if improved:
            self.score = score
            if self.step is None:
                self.best_losses = np.asarray(losses, dtype=float)
        return score, improved, threshold


class LadderReplay(NamedTuple):
    """What a leaderboard shows for each submission, in order (arrays of length k)."""

    naive: np.ndarray  #: R_S(f_t), the exact empirical loss (what a naive board shows)
    best_naive: np.ndarray  #: min_{i <= t} R_S(f_i), a naive board's best-so-far
    scores: np.ndarray  #: R_t, the score the Ladder releases after round t
    improved: np.ndarray  #: True where the Ladder released a new score at round t
    thresholds: np.ndarray  #: what R_S(f_t) had to beat (inf in round 1)


def _check_step(step) -> float | None:
    if step is None:
        return None
    try:
        value = float(step)
    except (TypeError, ValueError):
        raise InputError("step", "a number in (0, 1] (or omitted for the parameter-free Ladder)", step) from None
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise InputError("step", "a number in (0, 1] (or omitted for the parameter-free Ladder)", step)
    return value


def replay(losses, step: float | None = None) -> LadderReplay:
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
    """
    arr = np.asarray(losses, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InputError("losses", "a table with one row per test example and one column per submission",
                         list(arr.shape))
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise InputError("losses", "numbers in [0, 1]", arr[~((arr >= 0) & (arr <= 1))][:8].tolist())
    step = _check_step(step)
    n, k = arr.shape
    if step is None and n < 2:
        raise InputError("losses", "at least 2 test examples for the parameter-free Ladder (it needs a standard "
                         "deviation)", n)
    naive = arr.mean(axis=0)
    state = LadderState(n, step)
    scores = np.empty(k)
    improved = np.zeros(k, dtype=bool)
    thresholds = np.empty(k)
    for t in range(k):
        scores[t], improved[t], thresholds[t] = state.submit(float(naive[t]), arr[:, t] if step is None else None)
    return LadderReplay(naive=naive, best_naive=np.minimum.accumulate(naive), scores=scores,
                        improved=improved, thresholds=thresholds)


# --------------------------------------------------------------------------- Lemma 4
def _check_bound_args(epsilon, step, submissions):
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


def _log_count(step, submissions):
    """(1/eta + 2) log(4k/eta) + 1: the log of e * 2|F| in Lemma 4 [1]_."""
    return (1.0 / step + 2.0) * np.log(4.0 * submissions / step) + 1.0


def log_failure_bound(labels, epsilon, step, submissions):
    """Log of Lemma 4's right side: ``-2 eps^2 n + (1/eta + 2) log(4k/eta) + 1``.

    Lemma 4 [1]_: for the Ladder with step eta and k adaptively chosen submissions,
    ``Pr[|min_{i<=t} R_D(f_i) - R_t| > eps + eta] <= exp(-2 eps^2 n + (1/eta + 2)
    log(4t/eta) + 1)`` for every t <= k (the tree of possible submissions is counted
    with k).  Broadcasts over all arguments.
    """
    eps, eta, k = _check_bound_args(epsilon, step, submissions)
    n = np.asarray(labels, dtype=float)
    return -2.0 * eps**2 * n + _log_count(eta, k)


def failure_probability(labels, epsilon, step, submissions):
    """Lemma 4's bound on the probability that the leaderboard error exceeds eps + eta.

    ``min(1, exp(log_failure_bound(...)))``; the guarantee holds with confidence
    ``1 - failure_probability``.
    """
    with np.errstate(over="ignore"):
        out = np.minimum(1.0, np.exp(log_failure_bound(labels, epsilon, step, submissions)))
    return float(out) if np.ndim(out) == 0 else out


def labels(epsilon, step, submissions, delta):
    """Test labels for k submissions with leaderboard error at most eps + eta w.p. 1 - delta.

    The smallest integer ``n`` with ``exp(-2 eps^2 n + (1/eta + 2) log(4k/eta) + 1) <
    delta`` (Lemma 4 [1]_; ``n`` satisfies the strict inequality, ``n - 1`` does not).
    Broadcasts over all arguments.

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
    a = np.asarray(_log_count(eta, k), dtype=float)[..., None]
    b = np.asarray(2.0 * eps**2, dtype=float)[..., None]
    n = smallest_integer_satisfying(a, b, np.log(d))
    n = np.maximum(n, 1)
    return int(n) if n.ndim == 0 else n


def _real_labels(step, total_error, log_k, log_inv_delta):
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
    A log-spaced grid of 4,000 steps in (0, total) locates the basin; a bounded Brent
    search between the grid neighbours polishes eta to 1e-12 relative.  With
    eta = O(n^{-1/3} log^{1/3}(kn)) Lemma 4 gives Theorem 3 [1]_.
    """
    tau = check_probability("total_error", total_error)
    k = check_int("submissions", submissions, minimum=1)
    d = check_probability("delta", delta)
    log_k, log_inv_delta = math.log(k), -math.log(d)
    grid = np.geomspace(tau * 1e-6, tau * (1 - 1e-9), 4000)
    values = ((1.0 / grid + 2.0) * (math.log(4.0) + log_k - np.log(grid)) + 1.0 + log_inv_delta) / (
        2.0 * (tau - grid) ** 2)
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(_real_labels, bounds=(lo, hi), args=(tau, log_k, log_inv_delta), method="bounded",
                          options={"xatol": 1e-12 * tau})
    eta = float(res.x) if res.fun <= values[i] else float(grid[i])
    eps = tau - eta
    return eta, eps, labels(eps, eta, k, d)


def leaderboard_error(labels: int, submissions: int, delta: float) -> tuple[float, float, float]:
    """The smallest leaderboard error eps + eta that ``labels`` guarantee (Lemma 4 inverted).

    For each eta the smallest eps with ``exp(-2 eps^2 n + (1/eta + 2) log(4k/eta) + 1)
    <= delta`` is ``sqrt(((1/eta + 2) log(4k/eta) + 1 + log(1/delta)) / (2n))``; the
    total is minimized over eta.

    Returns
    -------
    (total, step, epsilon) : (float, float, float)
        Values of ``total`` >= 1 mean the test set guarantees nothing useful.
    """
    n = check_int("labels", labels, minimum=1)
    k = check_int("submissions", submissions, minimum=1)
    d = check_probability("delta", delta)
    log_k, log_inv_delta = math.log(k), -math.log(d)

    def total(eta):
        eta = np.asarray(eta, dtype=float)
        return eta + np.sqrt(((1.0 / eta + 2.0) * (math.log(4.0) + log_k - np.log(eta)) + 1.0 + log_inv_delta)
                             / (2.0 * n))

    grid = np.geomspace(1e-6, 1.0, 4000)
    values = total(grid)
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(lambda e: float(total(e)), bounds=(lo, hi), method="bounded", options={"xatol": 1e-13})
    eta = float(res.x) if res.fun <= values[i] else float(grid[i])
    best = float(total(eta))
    return best, eta, best - eta


# --------------------------------------------------------------------------- Section 5
class AttackCurves(NamedTuple):
    """The boosting attack's published and true losses, per trial and per k.

    Arrays have shape (trials, K) for k = 1..K; entries not computed yet (a cancelled
    run) are NaN.
    """

    submissions: np.ndarray  #: k = 1..K
    naive_public: np.ndarray  #: the naive board's score for the attacker's final submission
    ladder_public: np.ndarray  #: the Ladder's published score after the attacker's final submission
    naive_holdout: np.ndarray  #: the naive attacker's final submission on a fresh holdout
    ladder_holdout: np.ndarray  #: the Ladder attacker's final submission on a fresh holdout
    naive_selected: np.ndarray  #: how many submissions looked better than chance on the naive board
    ladder_selected: np.ndarray  #: ... on the Ladder
    done: int  #: (trial, k) cells computed so far
    total: int  #: trials * K


def _check_attack_args(labels, submissions, trials, step):
    n = check_int("labels", labels, minimum=2, maximum=10**7)
    k = check_int("submissions", submissions, minimum=1, maximum=100_000)
    r = check_int("trials", trials, minimum=1, maximum=1000)
    return n, k, r, _check_step(step)


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
    shape = (n_trials, big_k)
    out = {name: np.full(shape, np.nan) for name in
           ("naive_public", "ladder_public", "naive_holdout", "ladder_holdout", "naive_selected", "ladder_selected")}
    ks = np.arange(1, big_k + 1)
    done = 0

    def snapshot():
        return AttackCurves(submissions=ks, done=done, total=n_trials * big_k,
                            **{key: value.copy() for key, value in out.items()})

    children = np.random.SeedSequence(seed).spawn(n_trials)
    for trial, child in enumerate(children):
        rng = np.random.default_rng(child)
        y = rng.integers(0, 2, size=2 * n, dtype=np.int8)  # test labels, then holdout labels
        coin = rng.integers(0, 2, size=2 * n, dtype=np.int8)  # tie breaker of the majority vote
        votes_naive = np.zeros(2 * n, dtype=np.int32)
        votes_ladder = np.zeros(2 * n, dtype=np.int32)
        kept_naive = kept_ladder = 0
        state = LadderState(n, step)
        for i in range(big_k):
            u = rng.integers(0, 2, size=2 * n, dtype=np.int8)
            wrong = (u != y)
            test_losses = wrong[:n].astype(float)
            loss = float(test_losses.mean())
            signed = 2 * u.astype(np.int32) - 1
            if loss <= 0.5:  # the naive board shows the exact loss
                votes_naive += signed
                kept_naive += 1
            released, improved, _ = state.submit(loss, test_losses if step is None else None)
            if improved and released <= 0.5:
                votes_ladder += signed
                kept_ladder += 1
            for name, votes in (("naive", votes_naive), ("ladder", votes_ladder)):
                final = np.where(votes > 0, 1, np.where(votes < 0, 0, coin)).astype(np.int8)
                final_wrong = final != y
                public_loss = float(final_wrong[:n].mean())
                out[f"{name}_holdout"][trial, i] = float(final_wrong[n:].mean())
                if name == "naive":
                    out["naive_public"][trial, i] = public_loss
                else:
                    score, _, _ = state.peek(public_loss, final_wrong[:n].astype(float) if step is None else None)
                    out["ladder_public"][trial, i] = score
            out["naive_selected"][trial, i] = kept_naive
            out["ladder_selected"][trial, i] = kept_ladder
            done += 1
            if (i + 1) % chunk == 0 and done < n_trials * big_k:
                yield snapshot()
    yield snapshot()


def boosting_attack(labels: int, submissions: int, *, step: float | None = None, seed: int = 0, trials: int = 1,
                    progress: Callable[[int, int], object] | None = None) -> AttackCurves:
    """Run :func:`iter_boosting_attack` to the end (or until ``progress`` returns False).

    ``progress(done, total)`` is called after every chunk; returning ``False`` stops
    the run early and returns the partial curves (NaN where not computed).
    """
    curves = None
    for curves in iter_boosting_attack(labels, submissions, step=step, seed=seed, trials=trials):
        if progress is not None and progress(curves.done, curves.total) is False:
            break
    return curves


def boosting_reference(labels, submissions):
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
