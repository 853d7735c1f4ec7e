"""P(A>B): is pipeline A really better than pipeline B across runs?

Symbols (Bouthillier et al. [1], mapped once): ``a[i]``, ``b[i]`` = the performance of
pipelines A and B in run i (higher is better; a run = one seed/data split), ``N`` =
``runs`` = the number of pairs (the paper's k in Eq. 9, N in Appendix C.3); ``gamma``
= the threshold of a meaningful improvement (H1: P(A>B) = gamma); ``alpha`` = the
confidence interval's error rate (CI level 1 - alpha) and the false-positive rate of
the sample-size rule; ``beta`` = its false-negative rate; ``K`` = ``resamples``.

Pure numpy/scipy: no files, no Panel.

References
----------
.. [1] X. Bouthillier, P. Delaunay, M. Bronzi, et al. "Accounting for Variance in
   Machine Learning Benchmarks". MLSys 2021. Section 4.1 (Eq. 9, the decision),
   Appendix C.3 (Noether's sample size, Figure C.1), C.4 (computing P(A>B), random
   pairing), C.5 (percentile bootstrap), C.6 (the three conclusions).
.. [2] G. E. Noether. "Sample size determination for some common nonparametric
   tests". JASA 82(398), 1987.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, ndtri, xlog1py, xlogy

from ..core.validation import InputError, check_int, check_probability, raw
from ._types import FloatArray, IntArray

__all__ = [
    "CONCLUSIONS",
    "MAX_RUNS",
    "MAX_RESAMPLES",
    "p_a_gt_b",
    "bootstrap_distribution",
    "bootstrap_counts",
    "quantiles_from_counts",
    "bootstrap_ci",
    "decide",
    "noether_runs",
    "noether_real",
    "pair_at_random",
    "validate_runs",
    "check_gamma",
]

#: The three conclusions of Appendix C.6, in order of strength.
CONCLUSIONS = ("not_significant", "significant_not_meaningful", "significant_and_meaningful")

#: The largest number of runs Noether's rule reports; a gamma so close to 0.5 that more
#: would be needed is refused (a count is exact or not shown).
MAX_RUNS = 10**15

#: The most bootstrap resamples drawn at once (the counts are drawn, not the replicates).
MAX_RESAMPLES = 10**9

#: Win counts further than this many standard deviations from the mean have probability
#: below 1e-300 under Binomial(N, p): the bootstrap leaves them out.
_TAIL_SDS = 40.0


def check_gamma(gamma: float | str) -> float:
    """gamma as a float in (0.5, 1): a meaningful P(A>B) is more than a coin flip."""
    try:
        value = float(gamma)
    except (TypeError, ValueError):
        raise InputError("gamma", "a number in (0.5, 1)", gamma) from None
    if not (0.5 < value < 1.0):
        raise InputError("gamma", "a number in (0.5, 1)", gamma)
    return value


def validate_runs(a: ArrayLike, b: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Two equally long 1-d float arrays of finite performances, at least 2 pairs."""
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.size != b.size:
        raise InputError("runs", "pairs: as many runs of A as of B (pair unpaired runs at random)",
                         f"{a.size} runs of A and {b.size} of B")
    if a.size < 2:
        raise InputError("runs", "at least 2 pairs of runs", a.size)
    for name, arr in (("a", a), ("b", b)):
        if not np.all(np.isfinite(arr)):
            bad = int(np.argmax(~np.isfinite(arr)))
            raise InputError(name, "finite numbers", arr[bad].item(), location=f"run {bad + 1}")
    return a, b


def p_a_gt_b(a: ArrayLike, b: ArrayLike) -> float:
    """P(A>B), the proportion of runs in which A beats B (Eq. 9 [1]_).

    ``(1/N) sum_i I{a_i > b_i}``; a tie counts as *not* A > B (the indicator is
    strict).
    """
    a, b = validate_runs(a, b)
    return float(np.mean(a > b))


def bootstrap_distribution(a: ArrayLike, b: ArrayLike, resamples: int = 10_000, seed: int = 0) -> FloatArray:
    """K percentile-bootstrap replicates of P(A>B) (Appendix C.5 [1]_).

    Each replicate resamples the N pairs with replacement and recomputes P(A>B).
    Only whether each pair is a win matters, and a pair drawn uniformly from the N is
    a win with probability p = P(A>B); so a replicate's win count is exactly
    Binomial(N, p), which is what is drawn (one draw per replicate instead of N).

    Parameters
    ----------
    a, b : array_like, shape (N,)
        Paired performances (higher is better).
    resamples : int
        K >= 1.
    seed : int
        Seed of numpy's PCG64 generator.

    Returns
    -------
    ndarray, shape (K,)
    """
    a, b = validate_runs(a, b)
    k = check_int("resamples", resamples, minimum=1, maximum=10**8)
    seed = check_int("seed", seed, minimum=0)
    n = a.size
    wins = int(np.sum(a > b))
    rng = np.random.default_rng(seed)
    out: FloatArray = rng.binomial(n, wins / n, size=k) / n
    return out


def _binomial_window(runs: int, wins: int) -> tuple[int, FloatArray]:
    """(first win count, probabilities) of Binomial(N, wins/N) over the counts that can occur (>= 1e-300)."""
    p = wins / runs
    sd = math.sqrt(runs * p * (1.0 - p))
    lo = max(0, int(math.floor(runs * p - _TAIL_SDS * sd - 1)))
    hi = min(runs, int(math.ceil(runs * p + _TAIL_SDS * sd + 1)))
    k = np.arange(lo, hi + 1, dtype=float)
    log_pmf = (gammaln(runs + 1.0) - gammaln(k + 1.0) - gammaln(runs - k + 1.0) + xlogy(k, p)
               + xlog1py(runs - k, -p))
    pmf = np.exp(log_pmf - log_pmf.max())
    return lo, pmf / pmf.sum()


def bootstrap_counts(wins: int, runs: int, resamples: int = 10_000, seed: int = 0) -> IntArray:
    """How many of K bootstrap replicates of P(A>B) have each win count 0..N (Appendix C.5 [1]_).

    Each replicate resamples the N pairs with replacement; a resampled pair is a win
    with probability p = wins/N, so a replicate's win count is Binomial(N, p) and the
    K replicates' histogram is Multinomial(K, Binomial(N, p) probabilities), which is
    what is drawn: one multinomial draw over the possible win counts instead of K
    replicates, so the cost does not grow with K.  (Counts further than 40 standard
    deviations from Np have probability below 1e-300 and are left at zero.)

    Parameters
    ----------
    wins : int
        Pairs in which A beats B.
    runs : int
        N >= 1, the number of pairs.
    resamples : int
        K in [1, :data:`MAX_RESAMPLES`].
    seed : int
        Seed of numpy's PCG64 generator.

    Returns
    -------
    ndarray of int64, shape (N + 1,)
        ``counts[w]`` replicates have P(A>B) = w/N; they sum to K.
    """
    runs = check_int("runs", runs, minimum=1)
    wins = check_int("wins", wins, minimum=0, maximum=runs)
    k = check_int("resamples", resamples, minimum=1, maximum=MAX_RESAMPLES)
    seed = check_int("seed", seed, minimum=0)
    counts = np.zeros(runs + 1, dtype=np.int64)
    lo, pmf = _binomial_window(runs, wins)
    counts[lo:lo + pmf.size] = np.random.default_rng(seed).multinomial(k, pmf)
    return counts


def quantiles_from_counts(counts: ArrayLike, quantiles: ArrayLike) -> FloatArray:
    """Quantiles of the sample that has ``counts[w]`` copies of ``w / N`` (N = len(counts) - 1).

    The same definition as ``np.quantile(sample, q)`` (linear interpolation between the
    order statistics at positions (K - 1) q), computed from the counts without building
    the K values.
    """
    counts = np.asarray(counts, dtype=np.int64)
    runs = counts.size - 1
    total = int(counts.sum())
    cumulative = np.cumsum(counts)
    position = (total - 1) * np.asarray(quantiles, dtype=float)
    below = np.floor(position)
    fraction = position - below
    a = np.searchsorted(cumulative, below, side="right") / runs
    b = np.searchsorted(cumulative, np.minimum(below + 1, total - 1), side="right") / runs
    out: FloatArray = np.where(fraction >= 0.5, b - (b - a) * (1.0 - fraction), a + (b - a) * fraction)
    return out


def bootstrap_ci(a: ArrayLike, b: ArrayLike, alpha: float = 0.05, resamples: int = 10_000,
                 seed: int = 0) -> tuple[float, float]:
    """The percentile-bootstrap confidence interval of P(A>B) at level 1 - alpha.

    The alpha/2 and 1 - alpha/2 percentiles of K bootstrap replicates (Appendix C.5 [1]_;
    numpy's default linear interpolation between order statistics), from
    :func:`bootstrap_counts`.
    """
    alpha = check_probability("alpha", alpha)
    a, b = validate_runs(a, b)
    counts = bootstrap_counts(int(np.sum(a > b)), a.size, resamples, seed)
    lower, upper = quantiles_from_counts(counts, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lower), float(upper)


def decide(lower: float, upper: float, gamma: float = 0.75) -> str:
    """The conclusion of Appendix C.6 [1]_ from a confidence interval [lower, upper].

    - ``lower <= 0.5``: ``"not_significant"`` (noise alone could explain it);
    - else ``upper <= gamma``: ``"significant_not_meaningful"``;
    - else: ``"significant_and_meaningful"`` (A is better than B).
    """
    gamma = check_gamma(gamma)
    if lower <= 0.5:
        return CONCLUSIONS[0]
    if upper <= gamma:
        return CONCLUSIONS[1]
    return CONCLUSIONS[2]


def _check_rate(name: str, value: object) -> float:
    value = check_probability(name, value)
    if value >= 0.5:
        raise InputError(name, "in (0, 0.5)", value)
    return value


def noether_real(alpha: ArrayLike = 0.05, beta: ArrayLike = 0.05, gamma: ArrayLike = 0.75) -> float | FloatArray:
    """Noether's bound before rounding: ``((z_{1-alpha} - z_beta) / (sqrt(6) (1/2 - gamma)))^2``.

    Appendix C.3 [1]_ (Noether [2]_), with ``z_q = Phi^{-1}(q)``.  Broadcasts.
    """
    alpha = np.asarray(alpha, dtype=float)
    beta = np.asarray(beta, dtype=float)
    gamma = np.asarray(gamma, dtype=float)
    if alpha.ndim == 0:
        _check_rate("alpha", float(alpha))
    elif np.any(~((alpha > 0) & (alpha < 0.5))):
        raise InputError("alpha", "in (0, 0.5)", alpha.tolist())
    if beta.ndim == 0:
        _check_rate("beta", float(beta))
    elif np.any(~((beta > 0) & (beta < 0.5))):
        raise InputError("beta", "in (0, 0.5)", beta.tolist())
    if gamma.ndim == 0:
        check_gamma(float(gamma))
    elif np.any(~((gamma > 0.5) & (gamma < 1))):
        raise InputError("gamma", "numbers in (0.5, 1)", gamma.tolist())
    z = -ndtri(alpha) - ndtri(beta)  # Phi^{-1}(1 - alpha) - Phi^{-1}(beta), accurate in the tails
    out: float | FloatArray = (z / (math.sqrt(6.0) * (0.5 - gamma))) ** 2
    return out


def noether_runs(alpha: ArrayLike = 0.05, beta: ArrayLike = 0.05, gamma: ArrayLike = 0.75) -> int | IntArray:
    """Runs needed to detect P(A>B) > gamma reliably: the smallest integer N >= Noether's bound.

    Appendix C.3 [1]_: ``N >= ((Phi^{-1}(1 - alpha) - Phi^{-1}(beta)) /
    (sqrt(6) (1/2 - gamma)))^2``.  A bound within 1e-9 (relative) above an integer
    counts as that integer (binary rounding of the quantiles).  Broadcasts.  A gamma so
    close to 0.5 that more than :data:`MAX_RUNS` runs would be needed is refused with an
    :class:`InputError` naming gamma.

    Examples
    --------
    >>> noether_runs(0.05, 0.05, 0.75)   # Appendix C.3, Figure C.1's red star
    29
    """
    real = np.asarray(noether_real(alpha, beta, gamma))
    too_many = ~(real <= MAX_RUNS)
    if np.any(too_many):
        g = np.broadcast_to(np.asarray(gamma, dtype=float), real.shape)[too_many].ravel()[0]
        r = real[too_many].ravel()[0]
        raise InputError("gamma", f"far enough from 0.5 that the runs needed stay below {MAX_RUNS:.0e} "
                         f"(this one would need about {r:.3g})", raw(repr(float(g))))
    n = np.ceil(real * (1.0 - 1e-9)).astype(np.int64)
    n = np.maximum(n, 1)
    return int(n) if n.ndim == 0 else n


def pair_at_random(a: ArrayLike, b: ArrayLike, seed: int = 0) -> tuple[FloatArray, FloatArray]:
    """Pair unpaired runs at random (Appendix C.4 [1]_).

    Both samples are shuffled (seeded) and the i-th of each form pair i; with unequal
    counts the extra runs of the larger sample (the last ones after shuffling) are
    left out, so ``min(len(a), len(b))`` pairs result.  The generator is seeded with
    ``[seed, 1]``, a stream independent of the bootstrap's (seeded with ``seed``).
    """
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    seed = check_int("seed", seed, minimum=0)
    rng = np.random.default_rng([seed, 1])
    a = a[rng.permutation(a.size)]
    b = b[rng.permutation(b.size)]
    n = min(a.size, b.size)
    return a[:n], b[:n]
