"""How a plan is computed: the quick part first, then the slow parts one unit at a time.

Hoeffding's counts of every variant take milliseconds; the exact binomial counts, the
answers a label budget gives (largest T, smallest eps_1) and every exact point of a curve
take from milliseconds to seconds each.  So a plan is computed in two parts:

- :func:`quick_result`: Hoeffding's counts, the effort, the notes and (under Hoeffding's
  bound) the budget answers, as a :class:`~meter_dashboard.meter.result.PlanResult` whose
  ``pending`` names what is still to come (the exact bound's counts and budget answers);
- :func:`slow_items`: a generator of ``(kind, variant, value)`` items, cheapest and most
  looked-at first (the recommended variant's exact count, then the others), each one
  unit of work; :func:`with_items` folds them into the result.

:func:`meter_dashboard.meter.model.plan` runs both to the end.  A served planner runs
:func:`slow_items` in a worker thread and shows each item as it arrives (stale ones are
dropped when the inputs change meanwhile), so nothing holds the event loop.

Every part is cached per process with ``functools.lru_cache`` (bounded; the values are
shared read-only): the quick result of a setting, its budget answers, every exact count
(:func:`exact_labels`, the curves' points).  Everyone opening the same shared link, and
anyone returning to an earlier setting, gets the numbers without computing them again.

The bounds computed here are those of ease.ml/meter, ease.ml/ci (Section 4.3, tight numerical
bounds) and Langford's tutorial (exact binomial tails): see the References of
:mod:`meter_dashboard.meter.model`.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..bounds import meter as meter_bounds
from ..bounds.meter import VARIANTS
from ..core.validation import (InputError, check_int, check_positive, check_probability, parse_int_list,
                               parse_number_list)
from .defaults import MAX_BUDGET
from .result import (
    ASSUMPTION,
    BINOMIAL_ASSUMPTION,
    RECOMMENDED,
    REVERT_CAVEAT,
    TENANT_CAVEAT,
    PlanResult,
    range_caveat,
)

__all__ = ["PlanInputs", "normalize", "check_bound", "quick_result", "slow_items", "with_items", "exact_labels",
           "budget_answers", "chosen_count", "chosen_counts", "coarse_to_fine", "clear_cache", "cache_info", "BOUNDS", "ORDER"]

BOUNDS = meter_bounds.BOUNDS
#: The order exact work is done in: what the page headlines first.
ORDER = (RECOMMENDED, "regular", "single_model", "no_adaptivity", "resampling")


@dataclass(frozen=True)
class PlanInputs:
    """One plan's inputs, validated (hashable: caches key on it)."""

    epsilon: tuple
    delta: float
    steps: int
    tenant_count: int
    tenant_steps: tuple
    reverts: tuple
    budget: int | None = None
    seconds_per_label: float = 2.0
    labelers: int = 1
    cost_per_hour: float | None = None
    bound: str = "hoeffding"
    max_error_rate: float | None = None
    #: whose budget answers to compute (a page asks for the headlined variant's until its table is opened)
    budget_variants: tuple = ORDER

    @property
    def count_kw(self) -> dict:
        """Keyword arguments of the bounds' count functions (tenants as steps per tenant)."""
        return dict(tenant_steps=list(self.tenant_steps) if len(self.tenant_steps) > 1 else None,
                    reverts=list(self.reverts) or None)

    @property
    def bound_kw(self) -> dict:
        return dict(bound=self.bound, max_error_rate=self.max_error_rate)


def check_bound(bound, max_error_rate):
    """``(bound, a)`` validated: a known bound; ``a`` in (0, 1/2) and only with the binomial bound."""
    if bound not in BOUNDS:
        raise InputError("bound", "one of " + ", ".join(BOUNDS), bound)
    if max_error_rate is None or (isinstance(max_error_rate, str) and not max_error_rate.strip()):
        return bound, None
    a = check_probability("max_error_rate", max_error_rate)
    if a >= 0.5:
        raise InputError("max_error_rate", "below 0.5 (an error rate of 1/2 or more is no restriction)", max_error_rate)
    if bound != "binomial":
        raise InputError("max_error_rate", "left empty unless the bound is 'binomial' (Hoeffding's cannot use it)",
                         max_error_rate)
    return bound, a


def normalize(epsilon, delta, steps, *, signals=None, tenants=1, tenant_steps=None, reverts=None, budget=None,
              seconds_per_label=2.0, labelers=1, cost_per_hour=None, bound="hoeffding",
              max_error_rate=None, budget_variants=ORDER) -> PlanInputs:
    """Every input checked (``InputError`` naming it) and put in canonical form."""
    delta = check_probability("delta", delta)
    eps = parse_number_list("epsilon", epsilon)  # text or a flat list of real numbers
    if signals is not None:
        m = check_int("signals", signals, minimum=1, maximum=1000)
        if len(eps) == 1:
            eps = eps * m
        elif len(eps) != m:
            raise InputError("signals", f"the number of epsilon values ({len(eps)}) when several are given", m)
    vector = meter_bounds.validate_epsilon(eps)
    steps = check_int("steps", steps, minimum=1)
    tenant_steps = None if tenant_steps is None else parse_int_list("tenant_steps", tenant_steps)
    if tenant_steps:
        ts = tuple(check_int("tenant_steps", v, minimum=1) for v in tenant_steps)
        if sum(ts) != steps:
            raise InputError("tenant_steps", f"steps per tenant summing to steps = {steps}", list(ts))
        tenant_count = len(ts)
    else:
        tenant_count = check_int("tenants", tenants, minimum=1)
        if tenant_count > steps:
            raise InputError("tenants", f"at most steps = {steps} tenants (each submits at least once)", tenant_count)
        ts = tuple(int(v) for v in meter_bounds.split_steps(steps, tenant_count))
    reverts = None if reverts is None else parse_int_list("reverts", reverts)
    rv = tuple(int(v) for v in meter_bounds.validate_reverts(reverts, steps))
    bound, rate = check_bound(bound, max_error_rate)
    if cost_per_hour is not None:
        cost_per_hour = check_positive("cost_per_hour", cost_per_hour, allow_zero=True)
    return PlanInputs(
        epsilon=tuple(float(e) for e in vector), delta=delta, steps=steps, tenant_count=tenant_count, tenant_steps=ts,
        reverts=rv, budget=check_int("budget", budget, minimum=1, maximum=MAX_BUDGET) if budget is not None else None,
        seconds_per_label=check_positive("seconds_per_label", seconds_per_label),
        labelers=check_int("labelers", labelers, minimum=1), cost_per_hour=cost_per_hour, bound=bound,
        max_error_rate=rate, budget_variants=tuple(v for v in ORDER if v in budget_variants))


# ============================================================================ the quick part
def _effort(counts: dict, seconds_per_label: float, labelers: int, cost_per_hour) -> dict:
    """savings, labeler/calendar hours and cost for ``counts`` (PlanResult fields)."""
    work, calendar = meter_bounds.labeling_hours(np.array([counts[v] for v in VARIANTS]), seconds_per_label, labelers)
    hours = {v: float(h) for v, h in zip(VARIANTS, work)}
    cost = {v: hours[v] * cost_per_hour for v in VARIANTS} if cost_per_hour is not None else None
    return dict(savings={v: counts["resampling"] / counts[v] for v in VARIANTS}, labeler_hours=hours,
                calendar_hours={v: float(h) for v, h in zip(VARIANTS, calendar)}, cost=cost)


def _static_notes(inputs: PlanInputs) -> list[str]:
    notes = [ASSUMPTION if inputs.bound == "hoeffding" else BINOMIAL_ASSUMPTION]
    if inputs.max_error_rate is not None:
        notes.append(range_caveat(inputs.max_error_rate))
    if len(inputs.tenant_steps) > 1:
        notes.append(TENANT_CAVEAT)
    if inputs.reverts:
        notes.append(REVERT_CAVEAT)
    if inputs.budget is not None and inputs.tenant_count > 1 and len(set(inputs.tenant_steps)) > 1:
        notes.append("Largest T splits every T evenly among the tenants.")
    if inputs.budget is not None and inputs.bound == "binomial":
        from ..bounds.binomial import EXACT_LABELS  # the exact path loads scipy anyway

        if inputs.budget > EXACT_LABELS:
            notes.append(f"The budget ({inputs.budget:,} labels) is beyond {EXACT_LABELS:,} labels, where the exact "
                         "tails are replaced by their certified upper bound: the budget's answers are conservative "
                         "(the confidence at least, the largest T and the smallest ε₁ at worst what is shown).")
    return notes


def quick_result(inputs: PlanInputs) -> PlanResult:
    """Hoeffding's counts of every variant (milliseconds) with ``pending`` naming the rest; cached per process.

    Under Hoeffding's bound the budget answers are part of it (milliseconds too); under the
    exact bound they and the exact counts are pending (:func:`slow_items`).
    """
    result = _quick_result(inputs)
    if inputs.bound == "hoeffding" and inputs.budget is not None:
        result = with_items(result, [("budget", v, budget_answers(inputs, v)) for v in inputs.budget_variants])
    return result


@functools.lru_cache(maxsize=256)
def _quick_result(inputs: PlanInputs) -> PlanResult:
    counts = {v: int(n)  # one setting: Python ints
              for v, n in meter_bounds.all_labels(list(inputs.epsilon), inputs.delta, inputs.steps,
                                                  **inputs.count_kw).items()}
    pending = set()
    if inputs.bound != "hoeffding":
        pending |= {f"labels.{v}" for v in VARIANTS}
        if inputs.max_error_rate is not None:
            pending |= {f"unrestricted.{v}" for v in VARIANTS}
    if inputs.budget is not None:
        pending |= {f"budget.{v}" for v in inputs.budget_variants}
    empty: dict[str, float | None] | None = {v: None for v in VARIANTS} if inputs.budget is not None else None
    return PlanResult(
        epsilon=inputs.epsilon, delta=inputs.delta, steps=inputs.steps, tenant_steps=inputs.tenant_steps,
        reverts=inputs.reverts, labels=dict(counts), hoeffding_labels=dict(counts),
        **_effort(counts, inputs.seconds_per_label, inputs.labelers, inputs.cost_per_hour),
        seconds_per_label=inputs.seconds_per_label, labelers=inputs.labelers, cost_per_hour=inputs.cost_per_hour,
        budget=inputs.budget, max_steps=empty, min_epsilon=dict(empty) if empty else None,
        confidence=dict(empty) if empty else None, notes=tuple(_static_notes(inputs)), bound=inputs.bound,
        max_error_rate=inputs.max_error_rate,
        unrestricted_labels={} if inputs.max_error_rate is not None else None,
        unrestricted_confidence={} if inputs.max_error_rate is not None else None,
        pending=frozenset(pending))


# ============================================================================ the slow part
def _confidence(log_delta: float) -> float:
    return float(-np.expm1(log_delta)) if log_delta < 0 else 0.0


def budget_answers(inputs: PlanInputs, variant: str) -> tuple:
    """(largest T, smallest eps_1, confidence at T) for the budget, under the chosen bound; cached per process.

    A count the exact bound refuses gives ``(None, nan, None)``.
    """
    try:
        return _budget_answers(_budget_key(inputs), variant)
    except InputError:
        if inputs.bound == "hoeffding":
            raise
        return None, math.nan, None


def budget_key(inputs: PlanInputs) -> PlanInputs:
    """The inputs the budget answers depend on (effort and the variants asked for do not matter)."""
    return replace(inputs, seconds_per_label=2.0, labelers=1, cost_per_hour=None, budget_variants=ORDER)


_budget_key = budget_key


@functools.lru_cache(maxsize=1024)
def _budget_answers(inputs: PlanInputs, variant: str) -> tuple:
    eps, n = list(inputs.epsilon), inputs.budget
    assert n is not None  # asked only with a budget
    kw = inputs.count_kw
    t = meter_bounds.max_steps(variant, n, eps, inputs.delta, tenants=inputs.tenant_count, reverts=kw["reverts"],
                         **inputs.bound_kw)
    e1 = float(meter_bounds.min_epsilon(variant, n, eps, inputs.delta, inputs.steps, **kw, **inputs.bound_kw))
    log_d = float(meter_bounds.failure_probability(variant, n, eps, inputs.steps, log=True, **kw, **inputs.bound_kw))
    return t, e1, _confidence(log_d)


def slow_items(inputs: PlanInputs, stop=lambda: False, planned: dict | None = None) -> Iterator[list]:
    """Lists of ``(kind, variant, value)`` items, one unit of work per list, until done or ``stop()``.

    kinds: ``"labels"`` (the chosen bound's count, or the InputError refusing it),
    ``"unrestricted"`` (``(count without the range, confidence the planned count delivers
    without it)``), ``"budget"`` (``(largest T, smallest eps_1, confidence)``, exact bound only:
    Hoeffding's are part of :func:`quick_result`).  ``planned``: the exact counts when already known
    (:func:`chosen_counts`; their unit is then not yielded again).
    """
    if inputs.bound != "hoeffding" and planned is None:  # every variant in one search of the engine (milliseconds)
        planned = chosen_counts(inputs)
        yield [("labels", v, planned[v]) for v in ORDER]
    planned = planned or {}
    if inputs.max_error_rate is not None and not stop():
        without = chosen_counts(replace(inputs, max_error_rate=None))
        yield [("unrestricted", v, _without_range(inputs, v, planned[v], without[v])) for v in ORDER]
    if inputs.budget is not None and inputs.bound != "hoeffding":  # Hoeffding's are in the quick result
        for v in inputs.budget_variants:
            if stop():
                return
            yield [("budget", v, budget_answers(inputs, v))]


def chosen_counts(inputs: PlanInputs) -> dict:
    """Every variant's count under the chosen bound (an InputError where it refuses one); cached per process."""
    key = _budget_key(replace(inputs, budget=None))
    try:
        return dict(_chosen_counts(key))
    except InputError:  # one variant refused: each on its own, the refusal named
        return {v: chosen_count(inputs, v) for v in ORDER}


@functools.lru_cache(maxsize=1024)
def _chosen_counts(inputs: PlanInputs) -> tuple:
    counts = meter_bounds.all_labels(list(inputs.epsilon), inputs.delta, inputs.steps, **inputs.count_kw,
                                     **inputs.bound_kw)
    return tuple((v, int(counts[v])) for v in ORDER)


def chosen_count(inputs: PlanInputs, variant: str):
    """The chosen bound's count of ``variant`` (or the InputError refusing it); cached per process."""
    try:
        return _chosen_count(_budget_key(replace(inputs, budget=None)), variant)
    except InputError as exc:
        return exc


@functools.lru_cache(maxsize=1024)
def _chosen_count(inputs: PlanInputs, variant: str) -> int:
    return int(meter_bounds.labels(variant, list(inputs.epsilon), inputs.delta, inputs.steps, **inputs.count_kw,
                                   **inputs.bound_kw))  # one setting: a Python int


def _without_range(inputs: PlanInputs, variant: str, planned, without) -> tuple:
    """(the binomial count without the error-rate range, the confidence ``planned`` labels give without it)."""
    if isinstance(planned, InputError):
        return None, None
    eps, kw = list(inputs.epsilon), inputs.count_kw
    log_d = float(meter_bounds.failure_probability(variant, planned, eps, inputs.steps, log=True, **kw, bound="binomial"))
    return (None if isinstance(without, InputError) else without), _confidence(log_d)


def with_items(result: PlanResult, items) -> PlanResult:
    """``result`` with ``items`` (from the lists :func:`slow_items` yields) filled in; effort follows the counts."""
    labels, refused = dict(result.labels), dict(result.refused)
    unrestricted = dict(result.unrestricted_labels) if result.unrestricted_labels is not None else None
    delivered = dict(result.unrestricted_confidence) if result.unrestricted_confidence is not None else None
    budget: dict[str, dict[str, Any] | None] = {k: dict(getattr(result, k)) if getattr(result, k) is not None else None
                                                 for k in ("max_steps", "min_epsilon", "confidence")}
    pending = set(result.pending)
    counts_changed = False
    for kind, v, value in items:
        pending.discard(f"{kind}.{v}")
        if kind == "labels":
            if isinstance(value, InputError):
                refused[v] = value.rule
                labels[v] = result.hoeffding_labels[v]
            else:
                labels[v] = int(value)
            counts_changed = True
        elif kind == "unrestricted":
            assert unrestricted is not None and delivered is not None  # items of plans with max_error_rate
            unrestricted[v], delivered[v] = value
        elif kind == "budget":
            steps_, eps1, conf = budget["max_steps"], budget["min_epsilon"], budget["confidence"]
            assert steps_ is not None and eps1 is not None and conf is not None  # items of plans with a budget
            steps_[v], eps1[v], conf[v] = value
    changes: dict[str, Any] = dict(labels=labels, refused=refused, unrestricted_labels=unrestricted,
                                   unrestricted_confidence=delivered, pending=frozenset(pending), **budget)
    if counts_changed:
        changes.update(_effort(labels, result.seconds_per_label, result.labelers, result.cost_per_hour))
    updated = replace(result, **changes)
    if not pending:
        extra = [n for n in updated.bound_notes() if n not in updated.notes]
        updated = replace(updated, notes=tuple(updated.notes) + tuple(extra))
    return updated


# ============================================================================ exact curve points
#: Exact counts a process keeps (a few integers each).
_CACHE_SIZE = 50_000


def cache_info() -> dict:
    """Hits, misses and sizes of the per-process caches (benchmarks report them)."""
    return {cached.__name__.lstrip("_"): cached.cache_info()._asdict()
            for cached in (_quick_result, _budget_answers, _chosen_count, _chosen_counts, exact_labels)}


def clear_cache() -> None:
    """Forget every cached result and exact count (benchmarks measure cold runs; memory is bounded anyway)."""
    for cached in (_quick_result, _budget_answers, _chosen_count, _chosen_counts, exact_labels):
        cached.cache_clear()


@functools.lru_cache(maxsize=_CACHE_SIZE)
def exact_labels(variant: str, epsilon: tuple, delta: float, steps: int, tenants: int = 1, reverts: tuple = (),
                 bound: str = "binomial", max_error_rate=None):
    """One count under ``bound`` (cached per process), or None when the bound refuses it.

    ``tenants`` split ``steps`` evenly and reverts count once ``steps`` reaches them (the
    curves' conventions).
    """
    rv = [r for r in reverts if r <= steps] or None
    try:
        return meter_bounds.labels(variant, list(epsilon), delta, int(steps), tenants=min(tenants, int(steps)),
                                   reverts=rv, bound=bound, max_error_rate=max_error_rate)
    except InputError:
        return None


def coarse_to_fine(size: int, limit: int | None = None, first=()) -> list[int]:
    """Indices 0..size-1 in an order that covers the range evenly at every prefix (ends, middle, quarters...).

    ``first`` indices come first; at most ``limit`` indices in all.
    """
    order = list(dict.fromkeys(int(i) for i in first if 0 <= i < size))
    seen = set(order)
    candidates = [0, size - 1]
    level = 1
    while len(seen) < size and (limit is None or len(order) < limit):
        for i in candidates:
            if i not in seen:
                seen.add(i)
                order.append(i)
        level *= 2
        candidates = [round(k * (size - 1) / level) for k in range(1, level, 2)]
        if level > 2 * size:
            candidates = [i for i in range(size) if i not in seen]
    return order[:limit] if limit is not None else order
