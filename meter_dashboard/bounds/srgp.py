"""Approving model modifications on a reused test set: Bonferroni and the SRGP family.

Feng, Pennello, Petrick, Sahiner, Pirracchio & Gossmann, "Sequential algorithmic
modification with test data reuse" (the paper, ``seeds/004``).  A developer proposes
modifications f_1, ..., f_T one after another; test j releases a single bit (approved or
not), so every possible history is a node of a binary tree with 2**T - 1 nodes, and the
family-wise error rate (FWER) of approving at least one unacceptable modification must
stay at or below ``alpha`` whatever path the (adaptive) developer takes.

Symbols (the paper's, mapped once): ``T`` = ``steps`` (the number of tests allowed);
``j``/``t`` = test index 1..T; ``w`` = node weight (share of alpha); ``g`` = edge weights
from an approved node to the streak of tests after it; ``c`` = significance level (the
p-value threshold) a test is held to; ``delta_j`` = ``margin`` of test j (Eq. 7).

The hypothesis tested at step j (Eq. 7, written for a per-example loss) is

    H_j : E[loss_0 - loss_j] <= delta_j      (modification j improves by at most delta_j)

tested with a one-sided z-test on the per-example improvements ``d_i = loss_0,i -
loss_j,i``: ``z_j = (mean(d) - delta_j) / (sd(d) / sqrt(n))`` and ``p_j = 1 - Phi(z_j)``;
the modification is approved when ``p_j <= c_j``.  After an approval the next margin is
``delta_{j+1} = delta_j + margin_step`` (Section 3.2 uses 0.01 on the AUC scale).

Procedures (``METHODS``; the paper's names in brackets):

``naive`` [BinaryThres]
    every test at level alpha: no multiplicity control (the cautionary baseline of 3.1).
``bonferroni`` [Bonferroni]
    every node of the tree at alpha / (2**T - 1).
``weighted-bonferroni`` [wBonferroni]
    Section 3: the nodes whose history has at most ``failure_threshold`` (3) denials
    share half of alpha equally, the others share the other half equally.  With
    T <= failure_threshold + 1 there are no "other" nodes and the first group gets all
    of alpha (our choice; the paper does not treat that case).
``bonf-srgp`` [bonfSRGP]
    Section 2.2 with Algorithm 1.  The start node carries weight 1 (treated as approved,
    our reading of Algorithm 1's initialisation).  After an approval of a node with
    weight w, the streak of tests that would follow it (until the next approval) gets
    w * g_1, w * g_2, ... with g_1 = s, g_i = s (1 - s)**(i - 1) and the last edge taking
    what is left, s = ``success_weight`` (0.8 in Section 3).  Level c = w * alpha.  With
    alpha = 0.1: 0.08, 0.016, 0.0032 after the start; 0.064 right after an approval at
    the first test.
``fs-srgp`` [fsSRGP]
    Section 2.3: the same node weights, but within a streak of failures the tests form a
    flexible fixed-sequence test.  The z-threshold b_j solves the simplified form of
    Eq. 4, ``P(Z_k <= b_k for the earlier failed tests k of the streak, Z_j > b_j) =
    w_j alpha`` with (Z_k, Z_j) standard normal with the correlations of the per-example
    improvements (estimated from the data, as in the paper); c_j = 1 - Phi(b_j) >= w_j
    alpha.  On approval the node's weight w (not c) is recycled per Eq. 1.
``pres-srgp`` [presSRGP]
    Section 2.4: the prespecified procedure's modifications are extra nodes that are
    never tested, approved nor reported.  Node t gets a critical value z_t (Eq. 5) and
    test j is held to b_j (Eq. 6) with ``P(xi_k < z_k for k <= j, Z_j > b_j) = w_j
    alpha``, where xi_k is the standardized error of the prespecified improvement k.
    The adaptive tree starts with weight ``1 - pres_share`` (then recycles like
    bonfSRGP); the prespecified nodes share ``pres_share`` (default 0.9): the first gets
    ``pres_first_share`` (0.5) of it, the others equal parts of the rest.  The paper
    leaves these weights to the developer; the defaults are our choice.

Choices where the paper is silent or ambiguous (documented here and on the page):

* Sign convention of Eqs. 5-6.  We write every statistic so that *large* means "better
  than the margin", and a prespecified node's confidence region is ``xi_k < z_k`` (its
  improvement is not overestimated by more than z_k standard errors).  This is the
  orientation in which correlation between adaptive and prespecified modifications buys
  power, which is the point of Section 2.4.
* Conditioning sets.  The thresholds condition on at most ``max_conditioning`` earlier
  nodes (default 6), picked deterministically as those most likely to exclude a large
  Z_j (smallest ``(b_k - r_kj b) / sqrt(1 - r_kj**2)`` at the Bonferroni threshold b).
  Conditioning on fewer nodes never raises the error rate: the error of a streak is
  ``sum_j P(first rejection at j) <= sum_j P(Z_K <= b_K, Z_j > b_j)`` for *any* subset
  K of the earlier nodes, so every threshold still spends at most its w_j alpha.  The
  same union bound shows the simplified form of Eq. 4 keeps the streak's error at
  ``sum_j w_j alpha`` whatever the sign of the correlations.
* Multivariate normal probabilities.  Below three dimensions we integrate one dimension
  numerically in log space (deterministic, accurate to tiny tails).  From three
  dimensions on we call ``scipy.stats.multivariate_normal.cdf``, which is a randomized
  quasi-Monte Carlo method; it is seeded (``seed``) so results are reproducible, and
  agrees with independent integrations to about 0.5 % relative error in the
  probability (a few 1e-4 on the z scale).
* A column whose improvements have zero variance has no z-statistic: it is approved when
  its (exact) improvement exceeds the margin and denied otherwise, and it is treated as
  uncorrelated with the other columns.

References
----------
.. [1] J. Feng, G. Pennello, N. Petrick, B. Sahiner, R. Pirracchio, A. Gossmann.
   "Sequential algorithmic modification with test data reuse", UAI 2022.
   Section 2 (Algorithm 1, Eqs. 1-2), 2.2, 2.3 (Eq. 4), 2.4 (Eqs. 5-6), 3 (Eq. 7, the
   0.8 edge weights, wBonferroni), 3.1 and 3.2 (the simulations).
.. [2] F. Bretz, W. Maurer, W. Brannath, M. Posch. "A graphical approach to sequentially
   rejective multiple test procedures", Stat. Med. 28(4), 2009.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate, optimize, stats
from scipy.special import expit, log_ndtr, ndtr

from .._validation import InputError, check_int, check_probability, raw

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "normalize_method",
    "edge_weights",
    "log_tree_size",
    "bonferroni_level",
    "weighted_bonferroni_group_sizes",
    "weighted_bonferroni_level",
    "improvement_statistics",
    "joint_tail_probability",
    "sequential_threshold",
    "Decision",
    "ApprovalProcedure",
    "run_procedure",
    "auc_influence",
    "fit_logistic",
    "simulate_fwer",
    "simulate_power",
    "SimulationResult",
    "SimulationCancelled",
    "MAX_CONDITIONING",
]

#: Procedure names used everywhere (code, CLI, URL, CSS), in the paper's order.
METHODS = ("naive", "bonferroni", "weighted-bonferroni", "bonf-srgp", "fs-srgp", "pres-srgp")

#: The paper's names (Figures 3-4).
METHOD_LABELS = {
    "naive": "BinaryThres (naive)",
    "bonferroni": "Bonferroni",
    "weighted-bonferroni": "wBonferroni",
    "bonf-srgp": "bonfSRGP",
    "fs-srgp": "fsSRGP",
    "pres-srgp": "presSRGP",
}

_ALIASES = {
    "binarythres": "naive",
    "binary-thres": "naive",
    "wbonferroni": "weighted-bonferroni",
    "bonfsrgp": "bonf-srgp",
    "fssrgp": "fs-srgp",
    "pressrgp": "pres-srgp",
}

#: Default number of earlier nodes a fixed-sequence / prespecified threshold conditions on.
MAX_CONDITIONING = 6
#: Quasi-Monte Carlo points per dimension for scipy's multivariate normal cdf.
_MAXPTS_PER_DIM = 100
#: A standard normal quantile beyond which probabilities are treated as exactly 0/1.
_Z_FAR = 38.0


def normalize_method(method: str) -> str:
    """The canonical procedure name (accepts ``fs_srgp``, ``fsSRGP``, ``BinaryThres``...)."""
    key = str(method).strip().lower().replace("_", "-").replace(" ", "-")
    key = _ALIASES.get(key.replace("-", ""), _ALIASES.get(key, key))
    if key not in METHODS:
        raise InputError("method", "one of " + ", ".join(METHODS), method)
    return key


# --------------------------------------------------------------------------- weights
def edge_weights(count: int, success_weight: float = 0.8) -> np.ndarray:
    """Edge weights g_1..g_count from an approved node to the streak of tests after it.

    Section 3: the first edge gets ``s = success_weight``, each later edge ``s`` times
    what is left, and the last edge takes the rest, so they sum to one:
    ``g_i = s (1 - s)**(i - 1)`` for i < count and ``g_count = (1 - s)**(count - 1)``.

    >>> edge_weights(3).round(3).tolist()
    [0.8, 0.16, 0.04]
    """
    count = check_int("count", count, minimum=0)
    s = check_probability("success_weight", success_weight, closed=True)
    if count == 0:
        return np.zeros(0)
    i = np.arange(1, count + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = np.power(1.0 - s, i - 1.0)
    g = s * rest
    g[-1] = rest[-1]
    return g


def log_tree_size(steps: int) -> float:
    """``log(2**T - 1)``: the number of nodes (possible tests) in the binary tree."""
    steps = check_int("steps", steps, minimum=1)
    return steps * math.log(2.0) + math.log1p(-(2.0 ** -steps)) if steps < 1075 else steps * math.log(2.0)


def bonferroni_level(alpha: float, steps: int) -> float:
    """``alpha / (2**T - 1)``: Bonferroni over the whole tree (Section 2)."""
    alpha = check_probability("alpha", alpha)
    return math.exp(math.log(alpha) - log_tree_size(steps))


def weighted_bonferroni_group_sizes(steps: int, failure_threshold: int = 3) -> tuple[int, int]:
    """Numbers of tree nodes with at most / more than ``failure_threshold`` denials.

    A node at step t has a history of t - 1 bits; those with at most k zeros number
    ``sum_i<=k C(t - 1, i)``.  Summed over t = 1..T (hockey stick identity):
    ``sum_{i=0..k} C(T, i + 1)``.  Exact integers.
    """
    steps = check_int("steps", steps, minimum=1)
    k = check_int("failure_threshold", failure_threshold, minimum=0)
    low = sum(math.comb(steps, i + 1) for i in range(min(k, steps - 1) + 1))
    high = (1 << steps) - 1 - low
    return low, high


def weighted_bonferroni_level(alpha: float, steps: int, failures: int, failure_threshold: int = 3) -> float:
    """Level of a node whose history has ``failures`` denials (Section 3's wBonferroni).

    ``0.5 alpha / N_low`` for at most ``failure_threshold`` denials, ``0.5 alpha / N_high``
    for more; ``alpha / N_low`` when there are no nodes with more (T <= threshold + 1).
    """
    alpha = check_probability("alpha", alpha)
    low, high = weighted_bonferroni_group_sizes(steps, failure_threshold)
    if high == 0:
        return alpha / low
    group = low if failures <= failure_threshold else high
    return math.exp(math.log(0.5 * alpha) - math.log(group))


# --------------------------------------------------------------------------- statistics
def _std(d: np.ndarray) -> float:
    return float(np.std(d, ddof=1)) if d.size > 1 else 0.0


def improvement_statistics(improvement, margin: float = 0.0) -> tuple[float, float, float, float]:
    """One-sided z-test of ``H: E[d] <= margin`` from per-example improvements ``d``.

    Returns ``(estimate, standard_error, z, p_value)`` with estimate = mean(d),
    standard_error = sd(d) / sqrt(n) (sample sd, ddof 1), z = (estimate - margin) / se,
    p = 1 - Phi(z).  A zero standard error gives z = +inf (p = 0) when the estimate
    exceeds the margin and z = -inf (p = 1) otherwise.
    """
    d = np.asarray(improvement, dtype=float).ravel()
    if d.size < 2:
        raise InputError("improvement", "at least 2 per-example values", d.tolist())
    estimate = float(np.mean(d))
    se = _std(d) / math.sqrt(d.size)
    gap = estimate - float(margin)
    if se > 0 and math.isfinite(se):
        z = gap / se
    else:
        z = math.inf if gap > 0 else -math.inf
    return estimate, se, z, float(stats.norm.sf(z))


def _correlation(vectors: Sequence[np.ndarray]) -> np.ndarray:
    """Sample correlation matrix of per-example vectors; zero-variance ones uncorrelated."""
    m = np.vstack([np.asarray(v, dtype=float) for v in vectors])
    centered = m - m.mean(axis=1, keepdims=True)
    norms = np.sqrt(np.einsum("ij,ij->i", centered, centered))
    ok = norms > 1e-300 * max(1.0, float(np.max(np.abs(m))) if m.size else 1.0)
    unit = np.zeros_like(centered)
    unit[ok] = centered[ok] / norms[ok, None]
    corr = unit @ unit.T
    np.fill_diagonal(corr, 1.0)
    return np.clip(corr, -1.0, 1.0)


# --------------------------------------------------------------------------- MVN probabilities
#: Correlations this close to +-1 mean "the same statistic": the variables are merged.
_IDENTICAL = 1.0 - 1e-9


def _log_interval(lo, hi):
    """``log(Phi(hi) - Phi(lo))`` without cancellation in either tail (vectorized)."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        left = log_ndtr(hi) + np.log1p(-np.exp(log_ndtr(lo) - log_ndtr(hi)))  # both in the lower tail
        right = log_ndtr(-lo) + np.log1p(-np.exp(log_ndtr(-hi) - log_ndtr(-lo)))  # both in the upper tail
        middle = np.log1p(-(ndtr(lo) + ndtr(-hi)))
    out = np.where(hi <= 0, left, np.where(lo >= 0, right, middle))
    return np.where(hi > lo, out, -np.inf)


def _merge_identical(lower, upper, corr):
    """Merge variables whose correlation is (numerically) +-1 into one, intersecting limits.

    Two identical statistics (e.g. a modification equal to the prespecified one) make the
    covariance singular; as one variable the probability is exact and smooth.
    """
    d = lower.size
    rep = np.arange(d)
    sign = np.ones(d)
    for j in range(d):
        for i in range(j):
            if rep[i] == i and abs(corr[i, j]) >= _IDENTICAL:
                rep[j] = i
                sign[j] = 1.0 if corr[i, j] > 0 else -1.0
                break
    keep = np.flatnonzero(rep == np.arange(d))
    lo = lower.copy()
    hi = upper.copy()
    for j in np.flatnonzero(rep != np.arange(d)):
        i = rep[j]
        a, b = (lower[j], upper[j]) if sign[j] > 0 else (-upper[j], -lower[j])
        lo[i] = max(lo[i], a)
        hi[i] = min(hi[i], b)
    return lo[keep], hi[keep], corr[np.ix_(keep, keep)]


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _log_interval_scalar(lo: float, hi: float) -> float:
    """Scalar :func:`_log_interval` (fast inside quadrature)."""
    if not hi > lo:
        return -math.inf
    if hi <= 0:
        a, b = float(log_ndtr(hi)), float(log_ndtr(lo))
        return a + math.log1p(-math.exp(b - a)) if b > -math.inf else a
    if lo >= 0:
        a, b = float(log_ndtr(-lo)), float(log_ndtr(-hi))
        return a + math.log1p(-math.exp(b - a)) if b > -math.inf else a
    return math.log1p(-(float(ndtr(lo)) + float(ndtr(-hi))))


def _log_box_2d(lo, hi, rho) -> float:
    """``log P(lo < (X, Y) < hi)`` for a standard bivariate normal, |rho| < 1.

    One-dimensional integral over the variable with the smaller mass of phi(a) times the
    conditional probability of the other, in log space and split at the integrand's kinks,
    so tiny tails keep their relative accuracy.
    """
    mass = _log_interval(lo, hi)
    a, b = (0, 1) if mass[0] <= mass[1] else (1, 0)
    s = math.sqrt(1.0 - rho * rho)
    la, ha = max(float(lo[a]), -_Z_FAR), min(float(hi[a]), _Z_FAR)
    if not ha > la:
        return -math.inf
    lb, hb = float(lo[b]), float(hi[b])

    def g(x: float) -> float:
        return -0.5 * x * x - _LOG_SQRT_2PI + _log_interval_scalar((lb - rho * x) / s, (hb - rho * x) / s)

    cuts = [la, ha]
    if rho != 0:
        cuts += [c / rho for c in (lb, hb) if math.isfinite(c)]
    grid = np.linspace(la, ha, 257)
    values = -0.5 * grid * grid - _LOG_SQRT_2PI + _log_interval((lb - rho * grid) / s, (hb - rho * grid) / s)
    peak = int(np.argmax(values))
    anchor = float(values[peak])
    if not math.isfinite(anchor):
        return -math.inf
    cuts.append(float(grid[peak]))
    cuts = sorted({min(max(c, la), ha) for c in cuts})
    total = 0.0
    for x0, x1 in zip(cuts[:-1], cuts[1:]):
        if x1 > x0:
            part, _ = integrate.quad(lambda x: math.exp(g(x) - anchor), x0, x1, epsabs=0.0, epsrel=1e-10, limit=200)
            total += part
    return anchor + math.log(total) if total > 0 else -math.inf


def _log_box_probability(lower, upper, corr, seed: int = 0) -> float:
    """``log P(lower < Z < upper)`` for Z ~ N(0, corr) (a correlation matrix).

    Identical variables are merged, unconstrained ones dropped, variables whose interval
    lies in the upper tail are flipped (so Genz's method sees lower-tail limits and keeps
    its relative accuracy).  One and two dimensions are integrated deterministically;
    three and more use ``scipy.stats.multivariate_normal.cdf`` (randomized quasi-Monte
    Carlo) seeded with ``seed``.
    """
    lo = np.asarray(lower, dtype=float).copy()
    hi = np.asarray(upper, dtype=float).copy()
    c = np.asarray(corr, dtype=float)
    lo, hi, c = _merge_identical(lo, hi, c)
    lo = np.where(lo <= -_Z_FAR, -np.inf, lo)
    hi = np.where(hi >= _Z_FAR, np.inf, hi)
    if np.any(hi <= lo):
        return -math.inf
    active = np.flatnonzero(np.isfinite(lo) | np.isfinite(hi))
    lo, hi, c = lo[active], hi[active], c[np.ix_(active, active)]
    d = lo.size
    if d == 0:
        return 0.0
    flip = lo > 0  # upper-tail interval: look at -Z instead
    sign = np.where(flip, -1.0, 1.0)
    lo, hi = np.where(flip, -hi, lo), np.where(flip, -lo, hi)
    c = c * sign[:, None] * sign[None, :]
    if d == 1:
        return float(_log_interval(lo[0], hi[0]))
    if d == 2:
        return _log_box_2d(lo, hi, float(np.clip(c[0, 1], -1.0, 1.0)))
    value = stats.multivariate_normal.cdf(
        hi, mean=np.zeros(d), cov=c, allow_singular=True, lower_limit=lo,
        maxpts=_MAXPTS_PER_DIM * d, abseps=0.0, releps=0.0, rng=np.random.default_rng(seed),
    )
    value = float(value)
    return math.log(value) if value > 0 else -math.inf


def joint_tail_probability(threshold: float, prior_thresholds, corr, *, seed: int = 0,
                           log: bool = False) -> float:
    """``P(Z_k <= b_k for every earlier node k, Z_last > threshold)``, Z ~ N(0, corr).

    This is the left side of the simplified Eq. 4 (fsSRGP) and of Eqs. 5-6 (presSRGP)
    for one-sided z-tests.  ``corr`` is the correlation matrix of (Z_1..Z_m, Z_last).
    One and two dimensions are integrated deterministically; three or more use
    ``scipy.stats.multivariate_normal.cdf`` (randomized quasi-Monte Carlo, Genz's method
    with variable prioritization), seeded with ``seed``.
    """
    b = np.asarray(prior_thresholds, dtype=float).ravel()
    m = b.size
    lower = np.r_[np.full(m, -np.inf), float(threshold)]
    upper = np.r_[b, np.inf]
    out = _log_box_probability(lower, upper, np.asarray(corr, dtype=float).reshape(m + 1, m + 1), seed)
    return out if log else (math.exp(out) if out > -math.inf else 0.0)


def _select_conditioning(prior_thresholds: np.ndarray, r: np.ndarray, level: float, cap: int) -> np.ndarray:
    """Indices of at most ``cap`` earlier nodes to condition on (most informative first).

    Score = ``(b_k - r_k b) / sqrt(1 - r_k**2)`` at the Bonferroni threshold b: the
    conditional z of ``Z_k <= b_k`` given ``Z_j = b``; small scores cut away the most
    probability.  Deterministic given the thresholds and correlations.
    """
    finite = np.flatnonzero(prior_thresholds < _Z_FAR)
    if finite.size <= cap:
        return finite
    if cap <= 0:
        return finite[:0]
    b = float(stats.norm.isf(level))
    rk = r[finite]
    bk = prior_thresholds[finite]
    s2 = 1.0 - rk * rk
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(s2 > 1e-14, (bk - rk * b) / np.sqrt(np.maximum(s2, 1e-300)),
                         np.where(rk * b > bk, -np.inf, np.inf))
    order = np.argsort(score, kind="stable")[:cap]
    return np.sort(finite[order])


def sequential_threshold(level: float, prior_thresholds=(), corr=None, *, seed: int = 0,
                         max_conditioning: int = MAX_CONDITIONING) -> tuple[float, np.ndarray]:
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
        Condition on at most this many earlier nodes (see the module notes: fewer is
        conservative).

    Returns
    -------
    threshold : float
        ``b`` (``inf`` when ``level`` is 0, ``-inf`` when even ``b = -inf`` spends less).
    used : ndarray of int
        Indices of the earlier nodes conditioned on.
    """
    level = float(level)
    b_prior = np.asarray(prior_thresholds, dtype=float).ravel()
    if level <= 0:
        return math.inf, np.zeros(0, dtype=int)
    b_bonf = float(stats.norm.isf(min(level, 1.0)))
    if b_prior.size == 0:
        return b_bonf, np.zeros(0, dtype=int)
    c = np.asarray(corr, dtype=float)
    used = _select_conditioning(b_prior, c[:-1, -1], level, max_conditioning)
    if used.size == 0:
        return b_bonf, used
    idx = np.r_[used, b_prior.size]
    sub = c[np.ix_(idx, idx)]
    bk = b_prior[used]
    log_level = math.log(level)

    def h(x):
        return joint_tail_probability(x, bk, sub, seed=seed, log=True) - log_level

    hi = b_bonf  # P(Z_K <= b_K, Z > b) <= P(Z > b) = level
    # P(Z_K <= b_K, Z > b) >= P(Z > b) - sum_k P(Z_k > b_k): a point where it is >= level
    spill = level + float(np.sum(stats.norm.sf(bk)))
    lo = float(stats.norm.isf(spill)) if spill < 1.0 else -_Z_FAR
    lo = max(min(lo, hi), -_Z_FAR)
    # An earlier node with the very same statistic caps b: beyond its b_k nothing is left.
    same = sub[:-1, -1] >= _IDENTICAL
    cap = float(np.min(bk[same])) if np.any(same) else math.inf
    if cap < hi:
        if cap <= lo:
            lo = cap - 1.0
        # Solve in x = log(cap - b): near the cap the probability is ~ (cap - b) phi(cap),
        # so h is smooth (nearly linear) in x.  At gap 1.25 level it is below the level.
        def hx(x):
            return h(cap - math.exp(x))

        # Gaps below ~1e-9 are not resolved in double precision (the slab's probability
        # loses its digits): a root there is returned as the cap itself, where the
        # probability is 0 <= level (conservative by less than 1e-9 on the z scale).
        min_gap = 1e-9 * max(1.0, abs(cap))
        x_hi = math.log(cap - lo)
        x_lo = math.log(max(1.25 * level, min_gap))
        if x_lo >= x_hi:
            return lo, used
        if hx(x_hi) <= 0:
            return (lo if lo > -_Z_FAR + 1 else -math.inf), used
        if hx(x_lo) >= 0:
            return cap, used
        root = optimize.brentq(hx, x_lo, x_hi, xtol=1e-9, rtol=1e-9, maxiter=100)
        return float(cap - math.exp(root)), used
    h_hi = h(hi)
    if h_hi >= 0:
        return hi, used
    h_lo = h(lo)
    if h_lo <= 0:
        if lo <= -_Z_FAR:
            return -math.inf, used
        return lo, used
    root = optimize.brentq(h, lo, hi, xtol=1e-6, rtol=1e-9, maxiter=100)
    return float(root), used


# --------------------------------------------------------------------------- procedures
@dataclass(frozen=True)
class Decision:
    """The outcome of one test (one node of the tree along the observed path)."""

    step: int
    approved: bool
    level: float
    weight: float
    z: float
    z_threshold: float
    p_value: float
    margin: float
    estimate: float
    standard_error: float
    conditioned_on: tuple = ()


class ApprovalProcedure:
    """Algorithm 1, online: feed the per-example improvements of one modification at a time.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    steps : int
        T, the number of tests the procedure is planned for (the size of the tree).
    alpha : float
        The FWER to control (0.1 in the paper).
    success_weight : float
        s, the first edge weight of the SRGPs (0.8 in Section 3).
    margin, margin_step : float
        delta_1 and the step added to delta after each approval (Eq. 7, Section 3.2).
    failure_threshold : int
        wBonferroni's split between "few" and "many" denials (3 in Section 3).
    prespecified : array_like, shape (n, P), optional
        Per-example improvements of the prespecified procedure's modifications
        (presSRGP only; required there).
    pres_share, pres_first_share : float
        presSRGP: share of alpha on the prespecified nodes and the first node's share of it.
    max_conditioning : int
        fsSRGP/presSRGP: earlier nodes a threshold conditions on, at most.
    seed : int
        Seed of the quasi-Monte Carlo multivariate normal integration.

    Examples
    --------
    >>> proc = ApprovalProcedure("bonf-srgp", steps=3, alpha=0.1)
    >>> round(proc.next_level(), 6)
    0.08
    """

    def __init__(self, method: str, steps: int, alpha: float = 0.1, *, success_weight: float = 0.8,
                 margin: float = 0.0, margin_step: float = 0.0, failure_threshold: int = 3,
                 prespecified=None, pres_share: float = 0.9, pres_first_share: float = 0.5,
                 max_conditioning: int = MAX_CONDITIONING, seed: int = 0):
        self.method = normalize_method(method)
        self.steps = check_int("steps", steps, minimum=1)
        self.alpha = check_probability("alpha", alpha)
        self.success_weight = check_probability("success_weight", success_weight, closed=True)
        self.margin = _finite("margin", margin)
        self.margin_step = _finite("margin_step", margin_step)
        self.failure_threshold = check_int("failure_threshold", failure_threshold, minimum=0)
        self.pres_share = check_probability("pres_share", pres_share, closed=True)
        self.pres_first_share = check_probability("pres_first_share", pres_first_share, closed=True)
        self.max_conditioning = check_int("max_conditioning", max_conditioning, minimum=0)
        self.seed = check_int("seed", seed, minimum=0)
        self.decisions: list[Decision] = []
        self._failures = 0
        # SRGP state: weight of the last approved node (the start node carries 1) and
        # the edge weights to its streak.
        start = 1.0 - self.pres_share if self.method == "pres-srgp" else 1.0
        self._parent_weight = start
        self._edges = edge_weights(self.steps, self.success_weight)
        self._streak_position = 0
        self._streak: list[tuple[np.ndarray, float]] = []  # fsSRGP: (improvements, b) of failed tests
        self._pres = None
        self._pres_thresholds: list[float] = []
        if self.method == "pres-srgp":
            if prespecified is None:
                raise InputError("prespecified", "per-example improvements of the prespecified "
                                 "modifications (required by pres-srgp)", raw("nothing"))
            pres = np.asarray(prespecified, dtype=float)
            if pres.ndim == 1:
                pres = pres[:, None]
            if pres.ndim != 2 or pres.shape[1] < 1 or pres.shape[0] < 2:
                raise InputError("prespecified", "a matrix with one column per prespecified modification "
                                 "and at least 2 rows", list(pres.shape))
            if not np.all(np.isfinite(pres)):
                raise InputError("prespecified", "finite numbers", "non-finite values")
            self._pres = pres[:, : self.steps]
            count = self._pres.shape[1]
            if count == 1:
                weights = np.array([self.pres_share])
            else:
                weights = np.r_[self.pres_share * self.pres_first_share,
                                np.full(count - 1, self.pres_share * (1 - self.pres_first_share) / (count - 1))]
            self.pres_weights = weights
        else:
            self.pres_weights = np.zeros(0)

    # -- state --------------------------------------------------------------------
    @property
    def step(self) -> int:
        """The number of tests done so far."""
        return len(self.decisions)

    @property
    def next_margin(self) -> float:
        return self.margin

    def next_weight(self) -> float:
        """The node weight w (share of alpha) of the next test."""
        t = self.step + 1
        if self.method == "naive":
            return 1.0
        if self.method == "bonferroni":
            return bonferroni_level(self.alpha, self.steps) / self.alpha
        if self.method == "weighted-bonferroni":
            return weighted_bonferroni_level(self.alpha, self.steps, self._failures, self.failure_threshold) / self.alpha
        # SRGPs: weight = parent weight x edge weight to this position of the streak
        if t > self.steps:
            return 0.0
        return float(self._parent_weight * self._edges[self._streak_position])

    def next_level(self) -> float:
        """The level of the next test for the Bonferroni-type procedures (``w alpha``)."""
        return self.next_weight() * self.alpha

    # -- testing -------------------------------------------------------------------
    def test(self, improvement) -> Decision:
        """Test the next modification given its per-example improvements ``loss_0 - loss_j``."""
        t = self.step + 1
        if t > self.steps:
            raise InputError("modifications", f"at most steps = {self.steps} tests", t)
        d = np.asarray(improvement, dtype=float).ravel()
        if self._pres is not None and d.size != self._pres.shape[0]:
            raise InputError("improvement", f"{self._pres.shape[0]} values (one per test example, "
                             "as in the prespecified trace)", d.size)
        margin = self.margin
        estimate, se, z, p = improvement_statistics(d, margin)
        weight = self.next_weight()
        level_w = weight * self.alpha
        used: tuple = ()
        if self.method in ("fs-srgp", "pres-srgp"):
            b, used = self._threshold(d, level_w)
            level = float(stats.norm.sf(b)) if level_w > 0 else 0.0
            approved = bool(level_w > 0 and z >= b and z > -math.inf)
        else:
            level = level_w
            b = float(stats.norm.isf(level)) if level > 0 else math.inf
            approved = bool(level > 0 and p <= level)
        decision = Decision(step=t, approved=approved, level=level, weight=weight, z=z, z_threshold=b,
                            p_value=p, margin=margin, estimate=estimate, standard_error=se,
                            conditioned_on=tuple(int(u) for u in used))
        self.decisions.append(decision)
        self._update(approved, weight, d, b)
        return decision

    def _threshold(self, d: np.ndarray, level: float):
        if level <= 0:
            return math.inf, ()
        if self.method == "fs-srgp":
            if not self._streak:
                return float(stats.norm.isf(level)), ()
            vectors = [v for v, _ in self._streak] + [d]
            priors = np.array([b for _, b in self._streak])
            corr = _correlation(vectors)
            b, used = sequential_threshold(level, priors, corr, seed=self.seed,
                                           max_conditioning=self.max_conditioning)
            # report the conditioning set as test numbers
            first = self.step + 1 - len(self._streak)
            return b, tuple(first + int(u) for u in used)
        # presSRGP: prespecified nodes 1..t (Eq. 5 for each new one), then Eq. 6
        t = self.step + 1
        count = min(t, self._pres.shape[1])
        while len(self._pres_thresholds) < count:
            k = len(self._pres_thresholds)
            w = self.pres_weights[k] * self.alpha
            if k == 0:
                zk = float(stats.norm.isf(w)) if w > 0 else math.inf
            else:
                corr = _correlation([self._pres[:, i] for i in range(k + 1)])
                zk, _ = sequential_threshold(w, np.array(self._pres_thresholds), corr, seed=self.seed,
                                             max_conditioning=self.max_conditioning)
            self._pres_thresholds.append(zk)
        vectors = [self._pres[:, i] for i in range(count)] + [d]
        corr = _correlation(vectors)
        b, used = sequential_threshold(level, np.array(self._pres_thresholds[:count]), corr,
                                       seed=self.seed, max_conditioning=self.max_conditioning)
        return b, tuple(-(int(u) + 1) for u in used)  # negative = prespecified node number

    def _update(self, approved: bool, weight: float, d: np.ndarray, b: float) -> None:
        if approved:
            self.margin = self.margin + self.margin_step
            remaining = self.steps - self.step
            self._parent_weight = weight
            self._edges = edge_weights(remaining, self.success_weight) if remaining > 0 else np.zeros(0)
            self._streak_position = 0
            self._streak = []
        else:
            self._failures += 1
            self._streak_position += 1
            if self.method == "fs-srgp":
                self._streak.append((d, b))

    @property
    def prespecified_thresholds(self) -> np.ndarray:
        """z_t of the prespecified nodes computed so far (Eq. 5)."""
        return np.asarray(self._pres_thresholds, dtype=float)


def _finite(name: str, value) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(name, "a number", value) from None
    if not math.isfinite(out):
        raise InputError(name, "a finite number", value)
    return out


def run_procedure(improvements, method: str, *, alpha: float = 0.1, steps: int | None = None,
                  prespecified=None, **options) -> dict:
    """Run a procedure over a whole trace of modifications, in the order tested.

    Parameters
    ----------
    improvements : array_like, shape (n, T)
        Per-example improvements ``loss_0 - loss_j`` of each modification (columns in
        test order).
    method, alpha, prespecified, options
        As for :class:`ApprovalProcedure`.
    steps : int, optional
        T of the tree; defaults to the number of modifications.

    Returns
    -------
    dict of arrays
        ``approved``, ``levels``, ``weights``, ``z``, ``z_thresholds``, ``p_values``,
        ``margins``, ``estimates``, ``standard_errors`` (one entry per modification) and
        ``conditioned_on`` (tuples).
    """
    d = np.asarray(improvements, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    count = d.shape[1]
    proc = ApprovalProcedure(method, steps if steps is not None else max(count, 1), alpha,
                             prespecified=prespecified, **options)
    for j in range(count):
        proc.test(d[:, j])
    return _collect(proc.decisions)


def _collect(decisions: Sequence[Decision]) -> dict:
    return {
        "approved": np.array([x.approved for x in decisions], dtype=bool),
        "levels": np.array([x.level for x in decisions], dtype=float),
        "weights": np.array([x.weight for x in decisions], dtype=float),
        "z": np.array([x.z for x in decisions], dtype=float),
        "z_thresholds": np.array([x.z_threshold for x in decisions], dtype=float),
        "p_values": np.array([x.p_value for x in decisions], dtype=float),
        "margins": np.array([x.margin for x in decisions], dtype=float),
        "estimates": np.array([x.estimate for x in decisions], dtype=float),
        "standard_errors": np.array([x.standard_error for x in decisions], dtype=float),
        "conditioned_on": [x.conditioned_on for x in decisions],
    }


# --------------------------------------------------------------------------- simulations (Section 3)
class SimulationCancelled(Exception):
    """Raised inside a simulation when ``should_stop()`` says so (partial results kept)."""


def auc_influence(scores, labels) -> np.ndarray:
    """Per-example influence values of the empirical AUC; their mean is the AUC.

    For a positive example ``(F0(s_i) - AUC) / p1 + AUC`` and for a negative one
    ``(S1(s_i) - AUC) / p0 + AUC``, with F0 the fraction of negatives scored below
    (ties count half), S1 the fraction of positives scored above, p1/p0 the class
    fractions.  Differences of these between two models are the per-example
    "improvements" a one-sided z-test on the AUC uses (the DeLong-type variance).
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels).astype(bool)
    n = s.size
    n1 = int(y.sum())
    n0 = n - n1
    if n1 == 0 or n0 == 0:
        raise InputError("labels", "both classes present", f"{n1} positives, {n0} negatives")
    neg = np.sort(s[~y])
    pos = np.sort(s[y])
    below = np.searchsorted(neg, s, "left")
    not_above = np.searchsorted(neg, s, "right")
    f0 = (below + 0.5 * (not_above - below)) / n0
    above = n1 - np.searchsorted(pos, s, "right")
    not_below = n1 - np.searchsorted(pos, s, "left")
    s1 = (above + 0.5 * (not_below - above)) / n1
    auc = float(np.mean(f0[y]))
    return np.where(y, (f0 - auc) * (n / n1), (s1 - auc) * (n / n0)) + auc


def fit_logistic(x, y, penalty: float = 1.0, max_iter: int = 50) -> np.ndarray:
    """Ridge-penalized logistic regression by Newton's method (intercept unpenalized).

    Minimizes ``-loglik + penalty/2 |beta|^2``; returns ``[intercept, beta...]``.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n, p = x.shape
    xa = np.column_stack([np.ones(n), x])
    beta = np.zeros(p + 1)
    pen = np.full(p + 1, float(penalty))
    pen[0] = 1e-8
    for _ in range(max_iter):
        mu = expit(xa @ beta)
        w = mu * (1.0 - mu)
        grad = xa.T @ (y - mu) - pen * beta
        hess = (xa * w[:, None]).T @ xa
        hess[np.diag_indices_from(hess)] += pen
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-8:
            break
    return beta


def _draw(rng, n, coef, intercept=0.0):
    while True:
        x = rng.standard_normal((n, coef.size))
        y = rng.random(n) < expit(intercept + x @ coef)
        if 0 < y.sum() < n:
            return x, y


def _true_coefficients(features: int, relevant: int = 6, size: float = 0.75) -> np.ndarray:
    beta = np.zeros(features)
    beta[:relevant] = size
    return beta


@dataclass
class SimulationResult:
    """Per-procedure summaries of a simulation (means over completed replicates)."""

    kind: str
    methods: tuple
    replicates: int
    completed: int
    alpha: float
    seed: int
    cancelled: bool = False
    fwer: dict = field(default_factory=dict)  # method -> fraction of replicates with a bad approval
    fwer_error: dict = field(default_factory=dict)  # method -> Monte Carlo standard error
    approvals: dict = field(default_factory=dict)  # method -> mean number of approvals
    curves: dict = field(default_factory=dict)  # name -> method -> array over time
    time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    settings: dict = field(default_factory=dict)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        parts = ", ".join(f"{m}: {self.fwer.get(m, float('nan')):.3f}" for m in self.methods)
        return (f"SimulationResult(kind={self.kind!r}, completed={self.completed}/{self.replicates}, "
                f"alpha={self.alpha}, fwer={{{parts}}})")


def _summarize(kind, methods, replicates, alpha, seed, flags, counts, curves, time, settings, cancelled):
    completed = len(next(iter(flags.values()))) if flags else 0
    result = SimulationResult(kind=kind, methods=tuple(methods), replicates=replicates, completed=completed,
                              alpha=alpha, seed=seed, cancelled=cancelled, time=np.asarray(time), settings=settings)
    for m in methods:
        f = np.asarray(flags[m], dtype=float)
        if f.size:
            p = float(f.mean())
            result.fwer[m] = p
            result.fwer_error[m] = math.sqrt(max(p * (1 - p), 0.0) / f.size)
            result.approvals[m] = float(np.mean(counts[m]))
        else:
            result.fwer[m] = math.nan
            result.fwer_error[m] = math.nan
            result.approvals[m] = math.nan
    for name, per_method in curves.items():
        result.curves[name] = {m: (np.nanmean(np.vstack(v), axis=0) if v else np.full(len(time), np.nan))
                               for m, v in per_method.items()}
    return result


def _check_methods(methods):
    out = [normalize_method(m) for m in methods]
    if not out:
        raise InputError("methods", "at least one procedure", list(methods))
    return out


def simulate_fwer(methods: Sequence[str] = METHODS, *, replicates: int = 100, steps: int = 50,
                  test_size: int = 100, features: int = 100, perturbation: float = 0.6,
                  alpha: float = 0.1, margin: float = 0.0, margin_step: float = 0.01, seed: int = 0,
                  holdout_size: int = 2000, progress: Callable | None = None,
                  should_stop: Callable | None = None, **procedure_options) -> SimulationResult:
    """Section 3.1: an adversarial developer overfitting a reused test set.

    Each replicate draws X ~ N(0, I_features) and Y from a logistic model whose first six
    coefficients are 0.75 (the rest 0); the reusable test set has ``test_size`` (100)
    examples and the initial model is the oracle, so every modification is worse than the
    original and every approval is an error.  The developer perturbs the coefficients of
    the irrelevant variables one at a time by +-``perturbation`` (0.6): candidates
    (x7, +), (x7, -), (x8, +), ...; after an approval it keeps perturbing that coefficient
    in the same direction until a denial, then moves to the next variable.  The
    prespecified procedure (presSRGP) at step t (t = 0, 1, ...) sets the coefficient of
    variable 7 + floor(t/2) to +0.6 for even t and -0.6 for odd t.  Tests are one-sided
    z-tests of Eq. 7 on the AUC (per-example AUC influence values), delta starting at
    ``margin`` and growing by ``margin_step`` (0.01) after each approval.

    Returns a :class:`SimulationResult` with, per procedure, the FWER (fraction of
    replicates approving at least one modification) and its Monte Carlo standard error,
    the mean number of approvals, and curves over the steps: ``test_auc`` and
    ``holdout_auc`` of the most recently approved model (Figure 3, left).

    ``progress(fraction, message)`` is called after every replicate and procedure;
    ``should_stop()`` is polled between tests: when it returns true the simulation stops
    and returns what the completed replicates give (``cancelled=True``).
    """
    methods = _check_methods(methods)
    replicates = check_int("replicates", replicates, minimum=1)
    steps = check_int("steps", steps, minimum=1)
    test_size = check_int("test_size", test_size, minimum=10)
    features = check_int("features", features, minimum=7)
    if 2 * (features - 6) < steps:
        raise InputError("steps", f"at most 2 x (features - 6) = {2 * (features - 6)} (the developer's candidates)", steps)
    seed = check_int("seed", seed, minimum=0)
    beta = _true_coefficients(features)
    flags = {m: [] for m in methods}
    counts = {m: [] for m in methods}
    curves = {"test_auc": {m: [] for m in methods}, "holdout_auc": {m: [] for m in methods}}
    total = replicates * len(methods)
    done = 0
    cancelled = False
    try:
        for r in range(replicates):
            rng = np.random.default_rng([seed, r])
            x, y = _draw(rng, test_size, beta)
            xh, yh = _draw(rng, holdout_size, beta)
            orig = auc_influence(x @ beta, y)
            orig_holdout = float(np.mean(auc_influence(xh @ beta, yh)))
            pres = np.empty((test_size, steps))
            for t in range(steps):
                coef = beta.copy()
                coef[6 + t // 2] = perturbation if t % 2 == 0 else -perturbation
                pres[:, t] = auc_influence(x @ coef, y) - orig
            candidates = [(6 + t // 2, 1.0 if t % 2 == 0 else -1.0) for t in range(2 * (features - 6))]
            replicate = {}
            for m in methods:
                if should_stop is not None and should_stop():
                    raise SimulationCancelled
                proc = ApprovalProcedure(m, steps, alpha, margin=margin, margin_step=margin_step,
                                         prespecified=pres if m == "pres-srgp" else None, seed=seed,
                                         **procedure_options)
                current = beta.copy()
                current_test = float(np.mean(orig))
                current_holdout = orig_holdout
                queue = 0
                skip: set = set()
                cont = None
                test_auc = np.empty(steps)
                holdout_auc = np.empty(steps)
                approvals = 0
                for t in range(steps):
                    if should_stop is not None and should_stop():
                        raise SimulationCancelled
                    if cont is None:
                        while candidates[queue][0] in skip:
                            queue += 1
                        v, sign = candidates[queue]
                        queue += 1
                    else:
                        v, sign = cont
                    coef = current.copy()
                    coef[v] += sign * perturbation
                    infl = auc_influence(x @ coef, y)
                    decision = proc.test(infl - orig)
                    if decision.approved:
                        approvals += 1
                        current = coef
                        current_test = float(np.mean(infl))
                        current_holdout = float(np.mean(auc_influence(xh @ coef, yh)))
                        cont = (v, sign)
                        skip.add(v)
                    else:
                        cont = None
                    test_auc[t] = current_test
                    holdout_auc[t] = current_holdout
                replicate[m] = (approvals, test_auc, holdout_auc)
                done += 1
                if progress is not None:
                    progress(done / total, f"replicate {r + 1} of {replicates}: {METHOD_LABELS[m]}")
            for m, (approvals, test_auc, holdout_auc) in replicate.items():
                flags[m].append(approvals > 0)
                counts[m].append(approvals)
                curves["test_auc"][m].append(test_auc)
                curves["holdout_auc"][m].append(holdout_auc)
    except SimulationCancelled:
        cancelled = True
    settings = dict(steps=steps, test_size=test_size, features=features, perturbation=perturbation,
                    margin=margin, margin_step=margin_step, holdout_size=holdout_size, **procedure_options)
    return _summarize("fwer", methods, replicates, alpha, seed, flags, counts, curves,
                      np.arange(1, steps + 1), settings, cancelled)


def simulate_power(methods: Sequence[str] = METHODS, *, replicates: int = 20, steps: int = 15,
                   test_size: int = 800, features: int = 20, initial_size: int = 40, batch: int = 10,
                   penalty: float = 1.0, alpha: float = 0.1, margin: float = 0.0, margin_step: float = 0.01,
                   seed: int = 0, holdout_size: int = 4000, progress: Callable | None = None,
                   should_stop: Callable | None = None, **procedure_options) -> SimulationResult:
    """Section 3.2: a developer refitting on a growing i.i.d. stream (mostly good modifications).

    Same data model as :func:`simulate_fwer` (first six of ``features`` coefficients 0.75).
    The initial model is a ridge logistic regression fit on ``initial_size`` examples; at
    each time point ``batch`` new examples arrive.  The prespecified procedure refits on
    all data at time points 1..T and would submit each refit.  The adaptive developer
    submits its refit at time 1 and then at the next time point after an approval, but
    waits one extra time point after a denial (it wants more data before trying again),
    so its modifications drift from the prespecified ones; at most T = ``steps`` tests
    within 2T time points.  (The paper's developer gates submissions by a power
    calculation; this fixed rule is our simplification.)  Tests are Eq. 7 on the AUC
    with delta growing by ``margin_step`` after each approval.

    Returns a :class:`SimulationResult` whose curves over the time points are
    ``approvals`` (cumulative number approved, Figure 4 left) and ``holdout_auc`` (AUC of
    the most recently approved model on a large held-out sample, Figure 4 right);
    ``fwer`` counts replicates approving a modification whose held-out AUC gain was at
    most its margin (estimated on ``holdout_size`` examples).
    """
    methods = _check_methods(methods)
    replicates = check_int("replicates", replicates, minimum=1)
    steps = check_int("steps", steps, minimum=1)
    test_size = check_int("test_size", test_size, minimum=10)
    features = check_int("features", features, minimum=6)
    initial_size = check_int("initial_size", initial_size, minimum=10)
    batch = check_int("batch", batch, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    beta = _true_coefficients(features)
    horizon = 2 * steps
    flags = {m: [] for m in methods}
    counts = {m: [] for m in methods}
    curves = {"approvals": {m: [] for m in methods}, "holdout_auc": {m: [] for m in methods}}
    total = replicates * len(methods)
    done = 0
    cancelled = False
    try:
        for r in range(replicates):
            rng = np.random.default_rng([seed, r, 1])
            x, y = _draw(rng, test_size, beta)
            xh, yh = _draw(rng, holdout_size, beta)
            xs, ys = _draw(rng, initial_size + batch * horizon, beta)
            fits = {}

            def model(time_point):
                if time_point not in fits:
                    if should_stop is not None and should_stop():
                        raise SimulationCancelled
                    size = initial_size + batch * time_point
                    fits[time_point] = fit_logistic(xs[:size], ys[:size], penalty)
                return fits[time_point]

            def scores(coef, data):
                return coef[0] + data @ coef[1:]

            orig_coef = model(0)
            orig = auc_influence(scores(orig_coef, x), y)
            holdout_cache = {}

            def holdout(time_point):
                if time_point not in holdout_cache:
                    holdout_cache[time_point] = float(np.mean(auc_influence(scores(model(time_point), xh), yh)))
                return holdout_cache[time_point]

            pres = np.column_stack([auc_influence(scores(model(t), x), y) - orig for t in range(1, steps + 1)])
            replicate = {}
            for m in methods:
                if should_stop is not None and should_stop():
                    raise SimulationCancelled
                proc = ApprovalProcedure(m, steps, alpha, margin=margin, margin_step=margin_step,
                                         prespecified=pres if m == "pres-srgp" else None, seed=seed,
                                         **procedure_options)
                approved_at = np.zeros(horizon, dtype=int)
                bad = False
                time_point = 1
                for _ in range(steps):
                    if time_point > horizon:
                        break
                    if should_stop is not None and should_stop():
                        raise SimulationCancelled
                    d = auc_influence(scores(model(time_point), x), y) - orig
                    margin_now = proc.next_margin
                    if proc.test(d).approved:
                        approved_at[time_point - 1] += 1
                        bad = bad or (holdout(time_point) - holdout(0)) <= margin_now
                        time_point += 1
                    else:
                        time_point += 2
                # the held-out AUC of the most recently approved model at each time point
                auc_curve = np.empty(horizon)
                level = holdout(0)
                for k in range(horizon):
                    if approved_at[k]:
                        level = holdout(k + 1)
                    auc_curve[k] = level
                replicate[m] = (bad, int(approved_at.sum()), np.cumsum(approved_at).astype(float), auc_curve)
                done += 1
                if progress is not None:
                    progress(done / total, f"replicate {r + 1} of {replicates}: {METHOD_LABELS[m]}")
            for m, (bad, n_approved, cumulative, auc_curve) in replicate.items():
                flags[m].append(bad)
                counts[m].append(n_approved)
                curves["approvals"][m].append(cumulative)
                curves["holdout_auc"][m].append(auc_curve)
    except SimulationCancelled:
        cancelled = True
    settings = dict(steps=steps, test_size=test_size, features=features, initial_size=initial_size,
                    batch=batch, penalty=penalty, margin=margin, margin_step=margin_step,
                    holdout_size=holdout_size, **procedure_options)
    return _summarize("power", methods, replicates, alpha, seed, flags, counts, curves,
                      np.arange(1, horizon + 1), settings, cancelled)
