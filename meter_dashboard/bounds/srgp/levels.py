"""Procedure names, the paper's default settings, and the Bonferroni-type node weights.

Feng et al. (seeds/004), Section 2 (the tree of 2**T - 1 possible tests), Section 2.2
(bonfSRGP's edge weights) and Section 3 (wBonferroni; the 0.8 edge weights; alpha = 0.1;
the margin growing by 0.01 after each approval, Eq. 7).
"""
from __future__ import annotations

import math

import numpy as np

from ...core.validation import InputError, check_int, check_probability
from .._types import FloatArray

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "ALPHA",
    "SUCCESS_WEIGHT",
    "MARGIN",
    "MARGIN_STEP",
    "FAILURE_THRESHOLD",
    "PRES_SHARE",
    "PRES_FIRST_SHARE",
    "MAX_CONDITIONING",
    "MAX_STEPS",
    "normalize_method",
    "edge_weights",
    "edge_weight",
    "log_tree_size",
    "bonferroni_level",
    "weighted_bonferroni_group_sizes",
    "weighted_bonferroni_level",
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

# The paper's settings (Section 3), the defaults of every layer (the param model reads them).
#: FWER controlled in every experiment of Section 3.
ALPHA = 0.1
#: First edge weight of the SRGPs; each later edge gets this share of what is left.
SUCCESS_WEIGHT = 0.8
#: delta_1 of Eq. 7.
MARGIN = 0.0
#: Eq. 7's schedule: delta_{j+1} = delta_j + 0.01 after each approval, "to ensure the model
#: performance tends to improve with each approval" (Section 3, used in 3.1, 3.2 and 4).
MARGIN_STEP = 0.01
#: wBonferroni: histories with at most this many denials share half of alpha (Section 3).
FAILURE_THRESHOLD = 3
#: presSRGP: share of alpha on the prespecified nodes, and the first node's share of it
#: (the paper leaves them to the developer; our defaults).
PRES_SHARE = 0.9
PRES_FIRST_SHARE = 0.5
#: fsSRGP/presSRGP: earlier nodes a threshold conditions on, at most (our default).
MAX_CONDITIONING = 6
#: The largest number of tests a procedure is planned for.  The SRGP weights after 450
#: denials in a row are below 1e-300 and Bonferroni's levels underflow from T = 1075 on,
#: so larger trees change nothing but the cost; bounding T bounds time and memory.
MAX_STEPS = 10_000


def normalize_method(method: str) -> str:
    """The canonical procedure name (accepts ``fs_srgp``, ``fsSRGP``, ``BinaryThres``...)."""
    key = str(method).strip().lower().replace("_", "-").replace(" ", "-")
    key = _ALIASES.get(key.replace("-", ""), _ALIASES.get(key, key))
    if key not in METHODS:
        raise InputError("method", "one of " + ", ".join(METHODS), method)
    return key


def edge_weight(position: int, count: int, success_weight: float = SUCCESS_WEIGHT) -> float:
    """Edge weight ``g_{position+1}`` of a streak of ``count`` tests (``position`` from 0).

    ``s (1 - s)**position`` before the last edge, ``(1 - s)**(count - 1)`` on it: one
    number in O(1), so a procedure planned for many tests never builds the whole vector.
    """
    if not 0 <= position < count:
        return 0.0
    rest = (1.0 - success_weight) ** position
    return rest if position == count - 1 else success_weight * rest


def edge_weights(count: int, success_weight: float = SUCCESS_WEIGHT) -> FloatArray:
    """Edge weights g_1..g_count from an approved node to the streak of tests after it.

    Section 3: the first edge gets ``s = success_weight``, each later edge ``s`` times
    what is left, and the last edge takes the rest, so they sum to one:
    ``g_i = s (1 - s)**(i - 1)`` for i < count and ``g_count = (1 - s)**(count - 1)``.

    >>> edge_weights(3).round(3).tolist()
    [0.8, 0.16, 0.04]

    References
    ----------
    Feng et al., Section 2.2 and Section 3 (the 0.8 edge weights).
    """
    count = check_int("count", count, minimum=0, maximum=MAX_STEPS)
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
    """``log(2**T - 1)``: the number of nodes (possible tests) in the binary tree (Section 2)."""
    steps = check_int("steps", steps, minimum=1)
    return steps * math.log(2.0) + math.log1p(-(2.0 ** -steps)) if steps < 1075 else steps * math.log(2.0)


def bonferroni_level(alpha: float, steps: int) -> float:
    """``alpha / (2**T - 1)``: Bonferroni over the whole tree (Section 2)."""
    alpha = check_probability("alpha", alpha)
    return math.exp(math.log(alpha) - log_tree_size(steps))


def weighted_bonferroni_group_sizes(steps: int, failure_threshold: int = FAILURE_THRESHOLD) -> tuple[int, int]:
    """Numbers of tree nodes with at most / more than ``failure_threshold`` denials.

    A node at step t has a history of t - 1 bits; those with at most k zeros number
    ``sum_i<=k C(t - 1, i)``.  Summed over t = 1..T (hockey stick identity):
    ``sum_{i=0..k} C(T, i + 1)``.  Exact integers.
    """
    steps = check_int("steps", steps, minimum=1, maximum=MAX_STEPS)
    k = check_int("failure_threshold", failure_threshold, minimum=0)
    low = sum(math.comb(steps, i + 1) for i in range(min(k, steps - 1) + 1))
    high = (1 << steps) - 1 - low
    return low, high


def weighted_bonferroni_level(alpha: float, steps: int, failures: int,
                              failure_threshold: int = FAILURE_THRESHOLD) -> float:
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
