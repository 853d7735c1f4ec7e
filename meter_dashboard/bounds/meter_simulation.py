"""Checking any meter plan by simulation: developers against a test set of n labels for T steps.

ease.ml/meter's counts are union bounds (Thms 1-2, Cor 1-2 of [1]_): with probability
``1 - delta`` no released model's test accuracy misses its true accuracy by the tolerance
``eps_k`` of the signal it was released with.  This module estimates that probability by
Monte Carlo for any plan (test-set size, T, the meter's ranges and tolerances, regular or
incremental meter), for two developers:

``adversary``
    The boosting attack of the Ladder notes ([2]_, Section 5) turned against the meter.
    Steps 1..T-1 submit random classifiers (true accuracy exactly 1/2); each one's
    validation score is set to ``1/2 - r_{m-1}`` (``r`` the range boundaries), so the top
    signal comes back exactly when its test accuracy is at least 1/2: the signal reveals
    the sign of the test error.  A probe released with the top signal votes with its
    predictions, any other with its predictions flipped.  Step T submits the majority
    vote (ties broken by a fixed fair coin per example), whose true accuracy is still
    exactly 1/2 but whose test accuracy has drifted up by about ``sqrt(T/n)/pi``; its
    validation score is chosen to maximise the chance that the signal it gets back has a
    tolerance its test accuracy misses (e.g. ``1/2 + eps_1 + r_1``: signal 1 exactly when
    the test accuracy lies in ``(1/2 + eps_1, 1/2 + eps_1 + 2 r_1)``).  With the incremental
    meter a release only informs while it can still change, and the adversary uses only
    those.
``honest``
    A hill-climber: a model of true accuracy q is correct on an example with latent
    difficulty ``u`` when ``u < q`` (so its test accuracy is the fraction of the n test
    difficulties below q and its true accuracy is exactly q).  Each step proposes
    ``q + N(0.005, 0.01^2)``, measures it on a validation set of its own, submits it, and
    keeps it when its validation accuracy improved and its signal is in the lower half of
    the meter.  Adaptive (its path depends on the signals) but not trying to overfit.

A replicate fails when some released model has ``|test - true| >= eps`` of the signal it
was released with (the incremental meter's released signal is the worst so far).  The
estimate comes with a Wilson or Clopper-Pearson interval.  Replicates run in blocks of
:data:`BLOCK` (vectorized), each block with its own child seed, so results depend only on
the arguments and ``seed``; :func:`iter_simulate` yields after every block (progress,
cancellation: the page runs it in a worker thread).

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.  Section 3.1
   (ranges, signals), Definition 1, Thms 1-2 and Cor 1-2 (the guarantee checked here).
.. [2] Lecture notes on A. Blum, M. Hardt, "The Ladder: A reliable leaderboard for machine
   learning competitions", ICML 2015.  Section 5 (boosting attack, Theorem 6).
.. [3] E. B. Wilson, "Probable inference, the law of succession, and statistical
   inference", JASA 22, 1927; C. J. Clopper, E. S. Pearson, Biometrika 26, 1934.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import betaincinv, ndtr, ndtri

from ..core.validation import InputError, check_int, check_probability
from ._types import BoolArray, FloatArray, IntArray, Real

__all__ = [
    "BLOCK",
    "DEVELOPERS",
    "METERS",
    "INTERVALS",
    "SimulationResult",
    "default_ranges",
    "signal_of",
    "proportion_interval",
    "iter_simulate",
    "simulate",
]

#: Replicates simulated together (vectorized) with one child seed.
BLOCK = 64
DEVELOPERS = ("adversary", "honest")
METERS = ("regular", "incremental")
INTERVALS = ("wilson", "clopper-pearson")
_MAX_CELLS = 4 * 10**9  # replicates * steps * labels: beyond this a run would take minutes


@dataclass(frozen=True)
class SimulationResult:
    """What a (possibly partial) simulation found.

    Attributes
    ----------
    failures, replicates : int
        Replicates in which some released model missed its signal's tolerance, out of those run.
    failure_rate : float
        ``failures / replicates`` (nan before the first block).
    ci : tuple of float
        The interval for the failure probability at ``confidence``.
    failed_by_step : ndarray of int
        Replicates failed at or before step t = 1..T (a failure curve over T).
    total : int
        Replicates asked for; ``cancelled`` when the run stopped before them.
    """

    failures: int
    replicates: int
    failure_rate: float
    ci: tuple[float, float]
    confidence: float
    interval: str
    failed_by_step: IntArray
    labels: int
    steps: int
    meter: str
    developer: str
    epsilon: tuple[float, ...]
    ranges: tuple[float, ...]
    seed: int
    total: int
    cancelled: bool = False
    delta: float | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return self.replicates

    def below(self, delta: float | None = None) -> bool:
        """Whether the data are consistent with a failure probability of at most delta (CI reaches it)."""
        d = self.delta if delta is None else delta
        if d is None:
            raise InputError("delta", "given (this result was simulated without one: pass below(delta))", d)
        return self.ci[0] <= d


# --------------------------------------------------------------------------- small pieces
def default_ranges(m: int) -> list[float]:
    """The planner's default boundaries for m signals: 0, 0.005, 0.01, 0.02, 0.05, then doubling, 1."""
    m = check_int("signals", m, minimum=1)
    inner = [0.005, 0.01, 0.02, 0.05]
    while len(inner) < m - 1:
        last = inner[-1]
        inner.append(last * 2 if last * 2 < 1 else (last + 1) / 2)
    return [0.0] + inner[: m - 1] + [1.0]


def signal_of(gap: ArrayLike, ranges: ArrayLike) -> IntArray:
    """1-based signal i with ``r_(i-1) <= gap < r_i`` (the last range closed at 1), Section 3.1 of [1]_."""
    r = np.asarray(ranges, dtype=float)
    return np.clip(np.searchsorted(r, np.asarray(gap, dtype=float), side="right"), 1, r.size - 1)


def proportion_interval(successes: int, trials: int, confidence: float = 0.95,
                        method: str = "wilson") -> tuple[float, float]:
    """Two-sided interval for a binomial proportion: Wilson score or Clopper-Pearson (exact) [3]_."""
    if method not in INTERVALS:
        raise InputError("interval", "one of " + ", ".join(INTERVALS), method)
    if trials == 0:
        return (0.0, 1.0)
    alpha = 1.0 - confidence
    if method == "clopper-pearson":
        lo = 0.0 if successes == 0 else float(betaincinv(successes, trials - successes + 1, alpha / 2))
        hi = 1.0 if successes == trials else float(betaincinv(successes + 1, trials - successes, 1 - alpha / 2))
        return (lo, hi)
    z = float(ndtri(1 - alpha / 2))
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _check(labels: int, epsilon: ArrayLike, steps: int, ranges: ArrayLike | None, meter: str, developer: str,
           replicates: int, confidence: float,
           interval: str) -> tuple[int, FloatArray, int, FloatArray, int, float]:
    n = check_int("labels", labels, minimum=1, maximum=10**8)
    t = check_int("steps", steps, minimum=1, maximum=10_000)
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    if eps.ndim != 1 or eps.size == 0 or np.any(~((eps > 0) & (eps < 1))) or np.any(np.diff(eps) < 0):
        raise InputError("epsilon", "non-decreasing tolerances in (0, 1)", eps.tolist())
    r = np.asarray(default_ranges(eps.size) if ranges is None else ranges, dtype=float)
    if r.size != eps.size + 1 or r[0] != 0 or r[-1] != 1 or np.any(np.diff(r) <= 0):
        raise InputError("ranges", f"m + 1 = {eps.size + 1} increasing boundaries from 0 to 1", r.tolist())
    if meter not in METERS:
        raise InputError("meter", "one of " + ", ".join(METERS), meter)
    if developer not in DEVELOPERS:
        raise InputError("developer", "one of " + ", ".join(DEVELOPERS), developer)
    reps = check_int("replicates", replicates, minimum=1, maximum=10**6)
    if reps * t * n > _MAX_CELLS:
        raise InputError("replicates", f"at most {_MAX_CELLS:.0e} / (steps x labels) = {_MAX_CELLS // (t * n):,} "
                                       "for this plan", reps)
    conf = check_probability("confidence", confidence)
    if interval not in INTERVALS:
        raise InputError("interval", "one of " + ", ".join(INTERVALS), interval)
    return n, eps, t, r, reps, conf


# --------------------------------------------------------------------------- one block of replicates
class _Meter:
    """The meter's responses for a block of replicates (regular, or incremental: worst so far)."""

    def __init__(self, kind: str, eps: FloatArray, ranges: FloatArray, size: int) -> None:
        self.kind, self.eps, self.ranges = kind, eps, ranges
        self.level = np.zeros(size, dtype=np.int64)  # incremental: the worst signal released so far

    def release(self, validation: FloatArray, test: FloatArray) -> IntArray:
        """Signals released for models with these validation and test accuracies."""
        signal = signal_of(np.abs(validation - test), self.ranges)
        if self.kind == "incremental":
            signal = np.maximum(signal, self.level)
            self.level = signal
        return signal

    def fails(self, signal: IntArray, test: FloatArray, truth: Real) -> BoolArray:
        """Whether each release breaks the guarantee: ``|test - true| >= eps`` of its signal."""
        return np.abs(test - truth) >= self.eps[signal - 1]


def _random_bits(rng: np.random.Generator, rows: int, cols: int) -> NDArray[np.uint8]:
    """A (rows, cols) array of fair 0/1 bits (uint8), from random bytes."""
    raw = np.frombuffer(rng.bytes(rows * ((cols + 7) // 8)), dtype=np.uint8).reshape(rows, -1)
    return np.unpackbits(raw, axis=1, count=cols)


def _attack_score(informative: IntArray, n: int, eps: FloatArray, ranges: FloatArray) -> FloatArray:
    """The validation score that gives the final model the best chance of a missed tolerance.

    With k informative probes, each signed vote is right with probability about
    ``1/2 + sqrt(1/(2 pi n))``, so the majority's test accuracy is about
    ``Phi(sqrt(2 k / (pi n)))`` (true accuracy 1/2).  For every score v on a grid, the
    probability (normal approximation) that the released signal s has
    ``|test - 1/2| >= eps_s`` is summed over s; the best v is returned (per replicate).
    """
    mu = ndtr(np.sqrt(2.0 * informative / (math.pi * n)))[:, None, None]
    sd = np.sqrt(mu * (1.0 - mu) / n)
    v = np.linspace(0.5, 1.0, 501)[None, :, None]
    lo_r, hi_r = ranges[:-1][None, None, :], ranges[1:][None, None, :]
    fail_at = 0.5 + eps[None, None, :]  # failing test accuracies (the upper side: the drift is upwards)

    def mass(a: FloatArray, b: FloatArray) -> FloatArray:  # P(a <= test < b), b >= a, on the failing side
        a = np.maximum(a, fail_at)
        return np.where(b > a, ndtr((b - mu) / sd) - ndtr((a - mu) / sd), 0.0)

    total = (mass(v + lo_r, v + hi_r) + mass(v - hi_r, v - lo_r)).sum(axis=2)
    best: FloatArray = v[0, :, 0][np.argmax(total, axis=1)]
    return best


def _adversary_block(rng: np.random.Generator, n: int, steps: int, meter: _Meter, size: int) -> IntArray:
    """Failure step (1-based, 0 = never) of each replicate under the boosting attack."""
    eps, r = meter.eps, meter.ranges
    m = eps.size
    failed_at = np.zeros(size, dtype=np.int64)
    votes = np.zeros((size, n), dtype=np.int32)
    counted = np.zeros(size, dtype=np.int64)
    coin = _random_bits(rng, size, n).astype(np.int8) * 2 - 1  # the majority's tie breaker
    probe_score = 0.5 - r[m - 1] if m > 1 else 0.5
    for t in range(1, steps):
        bits = _random_bits(rng, size, n)
        test = bits.mean(axis=1)
        before = meter.level.copy()
        signal = meter.release(np.full(size, probe_score), test)
        bad = meter.fails(signal, test, 0.5) & (failed_at == 0)
        failed_at[bad] = t
        informative = (before < m) if meter.kind == "incremental" else np.ones(size, dtype=bool)
        weight = np.where(informative & (m > 1), np.where(signal == m, 1, -1), 0).astype(np.int32)
        votes += (2 * bits.astype(np.int32) - 1) * weight[:, None]
        counted += weight != 0
    majority = np.where(votes > 0, 1, np.where(votes < 0, -1, coin))
    test = (majority > 0).mean(axis=1)
    signal = meter.release(_attack_score(counted, n, eps, r), test)
    bad = meter.fails(signal, test, 0.5) & (failed_at == 0)
    failed_at[bad] = steps
    return failed_at


def _honest_block(rng: np.random.Generator, n: int, steps: int, meter: _Meter, size: int, start: float = 0.7,
                  validation: int | None = None) -> IntArray:
    """Failure step of each replicate for the hill-climber (coupled difficulties: exact true accuracies)."""
    offsets = np.arange(size, dtype=float)
    test_u = (np.sort(rng.random((size, n)), axis=1) + offsets[:, None]).ravel()  # row i lives in [i, i + 1)
    val_u = (np.sort(rng.random((size, validation or n)), axis=1) + offsets[:, None]).ravel()

    def accuracy(flat: FloatArray, q: FloatArray) -> FloatArray:  # per replicate: the share of difficulties below q
        per_row = flat.size // size
        return (np.searchsorted(flat, q + offsets) - offsets * per_row) / per_row

    q = np.full(size, float(start))
    best_val = accuracy(val_u, q)
    failed_at = np.zeros(size, dtype=np.int64)
    half = (meter.eps.size + 1) // 2
    for t in range(1, steps + 1):
        proposal = np.clip(q + rng.normal(0.005, 0.01, size), 0.05, 0.99)
        val, test = accuracy(val_u, proposal), accuracy(test_u, proposal)
        signal = meter.release(val, test)
        bad = meter.fails(signal, test, proposal) & (failed_at == 0)
        failed_at[bad] = t
        keep = (val > best_val) & (signal <= half)
        q = np.where(keep, proposal, q)
        best_val = np.where(keep, val, best_val)
    return failed_at


# --------------------------------------------------------------------------- the run
def iter_simulate(labels: int, epsilon: ArrayLike, steps: int, *, ranges: ArrayLike | None = None,
                  meter: str = "regular", developer: str = "adversary",
                  replicates: int = 1000, seed: int = 0, confidence: float = 0.95, interval: str = "wilson",
                  delta: float | None = None) -> Iterator[SimulationResult]:
    """Simulate block by block, yielding the result so far after each :data:`BLOCK` replicates.

    Parameters
    ----------
    labels : int
        n, the test-set size of the plan to check.
    epsilon : array_like
        The meter's tolerances eps_1 <= ... <= eps_m.
    steps : int
        T, submissions per replicate.
    ranges : array_like, optional
        The m + 1 boundaries ``0 = r_0 < r_1 < ... < r_m = 1`` of the empirical-overfitting
        ranges (Section 3.1 of [1]_); default :func:`default_ranges`.
    meter : {'regular', 'incremental'}
    developer : {'adversary', 'honest'}
        See the module notes.
    replicates : int
        Independent runs (a multiple of :data:`BLOCK` wastes nothing).
    seed : int
        Block b uses ``SeedSequence(seed).spawn(...)[b]``: results depend only on the arguments.
    confidence, interval
        The interval reported for the failure probability (``'wilson'`` or ``'clopper-pearson'``).
    delta : float, optional
        The plan's delta, kept in the result for comparison (:meth:`SimulationResult.below`).

    Yields
    ------
    SimulationResult
        Cumulative; stop iterating to cancel (the last yielded result stands).
    """
    n, eps, t, r, reps, conf = _check(labels, epsilon, steps, ranges, meter, developer, replicates, confidence,
                                      interval)
    seed = check_int("seed", seed, minimum=0)
    if delta is not None:
        delta = check_probability("delta", delta)
    blocks = -(-reps // BLOCK)
    children = np.random.SeedSequence(seed).spawn(blocks)
    failed_by_step = np.zeros(t, dtype=np.int64)
    done = failures = 0
    for b, child in enumerate(children):
        size = min(BLOCK, reps - done)
        rng = np.random.default_rng(child)
        state = _Meter(meter, eps, r, size)
        block = _adversary_block if developer == "adversary" else _honest_block
        failed_at = block(rng, n, t, state, size)
        failed_by_step += np.bincount(failed_at[failed_at > 0] - 1, minlength=t)[:t].cumsum()
        failures += int(np.count_nonzero(failed_at))
        done += size
        yield _result(failures, done, conf, interval, failed_by_step, n, t, meter, developer, eps, r, seed, reps,
                      delta, cancelled=done < reps)


def _result(failures: int, done: int, conf: float, interval: str, by_step: IntArray, n: int, t: int, meter: str,
            developer: str, eps: FloatArray, r: FloatArray, seed: int, total: int, delta: float | None,
            cancelled: bool) -> SimulationResult:
    return SimulationResult(
        failures=failures, replicates=done, failure_rate=failures / done if done else math.nan,
        ci=proportion_interval(failures, done, conf, interval), confidence=conf, interval=interval,
        failed_by_step=by_step.copy(), labels=n, steps=t, meter=meter, developer=developer,
        epsilon=tuple(float(e) for e in eps), ranges=tuple(float(x) for x in r), seed=seed, total=total,
        cancelled=cancelled, delta=delta)


class _Cancel(Protocol):
    """Anything with ``is_set()`` (a ``threading.Event``)."""

    def is_set(self) -> bool: ...


def simulate(labels: int, epsilon: ArrayLike, steps: int, *, progress: Callable[[int, int], object] | None = None,
             cancel: _Cancel | None = None, **kwargs: Any) -> SimulationResult:
    """Run :func:`iter_simulate` to the end, or until cancelled.

    ``progress(done, total)`` is called after every block; returning ``False`` stops the
    run.  ``cancel`` may be anything with ``is_set()`` (a ``threading.Event``), checked
    between blocks.  A stopped run returns the replicates done so far with
    ``cancelled=True``.

    Examples
    --------
    The naive count for m = 3, eps = (0.02, 0.04, 0.06), delta = 0.1 (one Hoeffding estimate,
    3,745 labels) against the adversary over T = 10 steps of the regular meter:

    >>> r = simulate(3745, [0.02, 0.04, 0.06], 10, replicates=256, seed=1)
    >>> r.failure_rate > 0.1
    True
    """
    result = None
    for result in iter_simulate(labels, epsilon, steps, **kwargs):
        stop = cancel is not None and cancel.is_set()
        if progress is not None and progress(result.replicates, result.total) is False:
            stop = True
        if stop and result.replicates < result.total:
            return SimulationResult(**{**result.__dict__, "cancelled": True})
    assert result is not None  # iter_simulate always yields (at least one block)
    return result
