"""Algorithm 1 of Feng et al. online: test one modification after another on a reused test set.

:class:`ApprovalProcedure` holds the state of one procedure along the observed path of the
tree (weights, the current streak of denials, the margin) and decides each modification
from its per-example improvements; :func:`run_procedure` runs it over a whole trace.

References
----------
.. [1] J. Feng et al., "Sequential algorithmic modification with test data reuse",
   UAI 2022: Algorithm 1 and Eqs. 1-2 (Section 2), bonfSRGP (2.2), fsSRGP (2.3, Eq. 4),
   presSRGP (2.4, Eqs. 5-6), the hypotheses of Eq. 7 and wBonferroni (Section 3).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
from numpy.typing import ArrayLike

from ...core.validation import InputError, check_int, check_probability, raw
from .._types import BoolArray, FloatArray
from .levels import (
    ALPHA,
    FAILURE_THRESHOLD,
    MARGIN,
    MARGIN_STEP,
    MAX_CONDITIONING,
    MAX_STEPS,
    PRES_FIRST_SHARE,
    PRES_SHARE,
    SUCCESS_WEIGHT,
    bonferroni_level,
    edge_weight,
    normalize_method,
    weighted_bonferroni_group_sizes,
)
from .normal import normal_isf, normal_sf
from .thresholds import sequential_threshold

__all__ = ["improvement_statistics", "correlation", "Decision", "ApprovalProcedure", "run_procedure",
           "collect_decisions"]


def improvement_statistics(improvement: ArrayLike, margin: float = 0.0) -> tuple[float, float, float, float]:
    """One-sided z-test of ``H: E[d] <= margin`` from per-example improvements ``d`` (Eq. 7).

    Returns ``(estimate, standard_error, z, p_value)`` with estimate = mean(d),
    standard_error = sd(d) / sqrt(n) (sample sd, ddof 1), z = (estimate - margin) / se,
    p = 1 - Phi(z).  A zero standard error gives z = +inf (p = 0) when the estimate
    exceeds the margin and z = -inf (p = 1) otherwise.

    References
    ----------
    Feng et al., Section 3, Eq. 7 (tested on per-example differences).
    """
    d = np.asarray(improvement, dtype=float).ravel()
    if d.size < 2:
        raise InputError("improvement", "at least 2 per-example values", d.tolist())
    estimate = float(np.mean(d))
    se = float(np.std(d, ddof=1)) / math.sqrt(d.size)
    gap = estimate - float(margin)
    if se > 0 and math.isfinite(se):
        z = gap / se
    else:
        z = math.inf if gap > 0 else -math.inf
    return estimate, se, z, normal_sf(z)


def correlation(vectors: Sequence[ArrayLike]) -> FloatArray:
    """Sample correlation matrix of per-example vectors; zero-variance ones uncorrelated."""
    m = np.vstack([np.asarray(v, dtype=float) for v in vectors])
    centered = m - m.mean(axis=1, keepdims=True)
    norms = np.sqrt(np.einsum("ij,ij->i", centered, centered))
    ok = norms > 1e-300 * max(1.0, float(np.max(np.abs(m))) if m.size else 1.0)
    unit = np.zeros_like(centered)
    unit[ok] = centered[ok] / norms[ok, None]
    corr = unit @ unit.T
    np.fill_diagonal(corr, 1.0)
    out: FloatArray = np.clip(corr, -1.0, 1.0)
    return out


def _finite(name: str, value: float | str) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(name, "a number", value) from None
    if not math.isfinite(out):
        raise InputError(name, "a finite number", value)
    return out


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
    conditioned_on: tuple[int, ...] = ()  #: earlier tests (negative: prespecified nodes) its threshold used


class Decisions(TypedDict):
    """:func:`collect_decisions`: one entry per decision, in order."""

    approved: BoolArray
    levels: FloatArray
    weights: FloatArray
    z: FloatArray
    z_thresholds: FloatArray
    p_values: FloatArray
    margins: FloatArray
    estimates: FloatArray
    standard_errors: FloatArray
    conditioned_on: list[tuple[int, ...]]


def _prespecified_matrix(prespecified: ArrayLike | None, steps: int) -> FloatArray:
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
    return pres[:, :steps]


class ApprovalProcedure:
    """Algorithm 1, online: feed the per-example improvements of one modification at a time.

    Parameters
    ----------
    method : str
        One of :data:`~meter_dashboard.bounds.srgp.METHODS`.
    steps : int
        T, the number of tests the procedure is planned for (the size of the tree), at
        most :data:`~meter_dashboard.bounds.srgp.MAX_STEPS`.
    alpha : float
        The FWER to control (0.1 in the paper).
    success_weight : float
        s, the first edge weight of the SRGPs (0.8 in Section 3).
    margin, margin_step : float
        delta_1 and the step added to delta after each approval (Eq. 7; 0 and 0.01 in
        Section 3).
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

    References
    ----------
    Feng et al., Algorithm 1 (Section 2), Sections 2.2-2.4 and 3.
    """

    def __init__(self, method: str, steps: int, alpha: float = ALPHA, *, success_weight: float = SUCCESS_WEIGHT,
                 margin: float = MARGIN, margin_step: float = MARGIN_STEP,
                 failure_threshold: int = FAILURE_THRESHOLD, prespecified: ArrayLike | None = None,
                 pres_share: float = PRES_SHARE, pres_first_share: float = PRES_FIRST_SHARE,
                 max_conditioning: int = MAX_CONDITIONING, seed: int = 0) -> None:
        self.method = normalize_method(method)
        self.steps = check_int("steps", steps, minimum=1, maximum=MAX_STEPS)
        self.alpha = check_probability("alpha", alpha)
        self.success_weight = check_probability("success_weight", success_weight, closed=True)
        self.margin = _finite("margin", margin)
        self.margin_step = _finite("margin_step", margin_step)
        self.failure_threshold = check_int("failure_threshold", failure_threshold, minimum=0)
        self.pres_share = check_probability("pres_share", pres_share, closed=True)
        self.pres_first_share = check_probability("pres_first_share", pres_first_share, closed=True)
        self.max_conditioning = check_int("max_conditioning", max_conditioning, minimum=0, maximum=40)
        self.seed = check_int("seed", seed, minimum=0)
        self.decisions: list[Decision] = []
        self._failures = 0
        # SRGP state: weight of the last approved node (the start node carries 1), the
        # number of tests its streak may hold, and the position in that streak.
        self._parent_weight = 1.0 - self.pres_share if self.method == "pres-srgp" else 1.0
        self._streak_count = self.steps
        self._streak_position = 0
        self._streak: list[tuple[FloatArray, float]] = []  # fsSRGP: (improvements, b) of failed tests
        self._group_sizes: tuple[int, int] | None = None
        self._pres: FloatArray | None = None
        self._pres_thresholds: list[float] = []
        self.pres_weights = np.zeros(0)
        if self.method == "pres-srgp":
            self._pres = _prespecified_matrix(prespecified, self.steps)
            count = self._pres.shape[1]
            if count == 1:
                self.pres_weights = np.array([self.pres_share])
            else:
                rest = self.pres_share * (1 - self.pres_first_share) / (count - 1)
                self.pres_weights = np.r_[self.pres_share * self.pres_first_share, np.full(count - 1, rest)]

    # -- state --------------------------------------------------------------------
    @property
    def step(self) -> int:
        """The number of tests done so far."""
        return len(self.decisions)

    @property
    def next_margin(self) -> float:
        """delta of the next test (Eq. 7)."""
        return self.margin

    def next_weight(self) -> float:
        """The node weight w (share of alpha) of the next test."""
        if self.method == "naive":
            return 1.0
        if self.method == "bonferroni":
            return bonferroni_level(self.alpha, self.steps) / self.alpha
        if self.method == "weighted-bonferroni":
            if self._group_sizes is None:
                self._group_sizes = weighted_bonferroni_group_sizes(self.steps, self.failure_threshold)
            low, high = self._group_sizes
            if high == 0:
                return 1.0 / low
            group = low if self._failures <= self.failure_threshold else high
            return math.exp(math.log(0.5) - math.log(group))
        if self.step >= self.steps:
            return 0.0
        # SRGPs: weight = parent weight x edge weight to this position of the streak
        return float(self._parent_weight * edge_weight(self._streak_position, self._streak_count,
                                                       self.success_weight))

    def next_level(self) -> float:
        """The level of the next test for the Bonferroni-type procedures (``w alpha``)."""
        return self.next_weight() * self.alpha

    @property
    def prespecified_thresholds(self) -> FloatArray:
        """z_t of the prespecified nodes computed so far (Eq. 5)."""
        return np.asarray(self._pres_thresholds, dtype=float)

    # -- testing -------------------------------------------------------------------
    def test(self, improvement: ArrayLike) -> Decision:
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
        used: tuple[int, ...] = ()
        if self.method in ("fs-srgp", "pres-srgp"):
            b, used = self._threshold(d, level_w)
            level = normal_sf(b) if level_w > 0 else 0.0
            approved = bool(level_w > 0 and z >= b and z > -math.inf)
        else:
            level = level_w
            b = normal_isf(level) if level > 0 else math.inf
            approved = bool(level > 0 and p <= level)
        decision = Decision(step=t, approved=approved, level=level, weight=weight, z=z, z_threshold=b,
                            p_value=p, margin=margin, estimate=estimate, standard_error=se,
                            conditioned_on=tuple(int(u) for u in used))
        self.decisions.append(decision)
        self._update(approved, weight, d, b)
        return decision

    def _threshold(self, d: FloatArray, level: float) -> tuple[float, tuple[int, ...]]:
        if level <= 0:
            return math.inf, ()
        if self.method == "fs-srgp":
            return self._fs_threshold(d, level)
        return self._pres_threshold(d, level)

    def _fs_threshold(self, d: FloatArray, level: float) -> tuple[float, tuple[int, ...]]:
        """Eq. 4: a flexible fixed-sequence test within the current streak of denials."""
        if not self._streak:
            return normal_isf(level), ()
        vectors = [v for v, _ in self._streak] + [d]
        priors = np.array([b for _, b in self._streak])
        b, used = sequential_threshold(level, priors, correlation(vectors), seed=self.seed,
                                       max_conditioning=self.max_conditioning)
        first = self.step + 1 - len(self._streak)  # report the conditioning set as test numbers
        return b, tuple(first + int(u) for u in used)

    def _pres_threshold(self, d: FloatArray, level: float) -> tuple[float, tuple[int, ...]]:
        """Eq. 5 for each new prespecified node 1..t, then Eq. 6 for the test."""
        assert self._pres is not None  # pres-srgp only: __init__ read the prespecified matrix
        count = min(self.step + 1, self._pres.shape[1])
        while len(self._pres_thresholds) < count:
            k = len(self._pres_thresholds)
            w = self.pres_weights[k] * self.alpha
            if k == 0:
                zk = normal_isf(w) if w > 0 else math.inf
            else:
                corr = correlation([self._pres[:, i] for i in range(k + 1)])
                zk, _ = sequential_threshold(w, np.array(self._pres_thresholds), corr, seed=self.seed,
                                             max_conditioning=self.max_conditioning)
            self._pres_thresholds.append(zk)
        corr = correlation([self._pres[:, i] for i in range(count)] + [d])
        b, used = sequential_threshold(level, np.array(self._pres_thresholds[:count]), corr,
                                       seed=self.seed, max_conditioning=self.max_conditioning)
        return b, tuple(-(int(u) + 1) for u in used)  # negative = prespecified node number

    def _update(self, approved: bool, weight: float, d: FloatArray, b: float) -> None:
        if approved:
            self.margin = self.margin + self.margin_step
            self._parent_weight = weight
            self._streak_count = self.steps - self.step
            self._streak_position = 0
            self._streak = []
        else:
            self._failures += 1
            self._streak_position += 1
            if self.method == "fs-srgp":
                self._streak.append((d, b))


def collect_decisions(decisions: Sequence[Decision]) -> Decisions:
    """The decisions as arrays: ``approved``, ``levels``, ``weights``, ``z``, ... (one entry each)."""
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


def run_procedure(improvements: ArrayLike, method: str, *, alpha: float = ALPHA, steps: int | None = None,
                  prespecified: ArrayLike | None = None, on_decision: Callable[[Decision], None] | None = None,
                  **options: Any) -> Decisions:
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
    on_decision : callable, optional
        Called with each :class:`Decision` as soon as it is made (to stream results);
        whatever it raises stops the run and propagates.

    Returns
    -------
    dict of arrays
        ``approved``, ``levels``, ``weights``, ``z``, ``z_thresholds``, ``p_values``,
        ``margins``, ``estimates``, ``standard_errors`` (one entry per modification) and
        ``conditioned_on`` (tuples).

    References
    ----------
    Feng et al., Algorithm 1.
    """
    d = np.asarray(improvements, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    count = d.shape[1]
    proc = ApprovalProcedure(method, steps if steps is not None else max(count, 1), alpha,
                             prespecified=prespecified, **options)
    for j in range(count):
        decision = proc.test(d[:, j])
        if on_decision is not None:
            on_decision(decision)
    return collect_decisions(proc.decisions)
