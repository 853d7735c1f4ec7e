"""Replaying a development trace through the meter: the computation behind :func:`replay`.

For each step of a trace (ease.ml/meter, Hubis, Wu & Zhang 2019):

- the empirical overfitting ``|l(H, D_val) - l(H, D_test)|`` (Section 3.1);
- the regular signal ``I_t``: the range ``[r_(i-1), r_i)`` it falls into, 1-based, the
  last range closed at 1 (Section 3.1, Figure 2);
- the incremental signal, the worst signal so far (Section 4.4,
  ``I^(t) = max_{k <= t} I_k``), taken within the submitting tenant's chain (tenants
  work on separate chains, Section 5.2) and without the steps that were reverted
  before it (a revert goes back to the previous model, Section 5.3: the reverted step
  still shows its own signal, and stops counting from the next step on);
- the epsilon guaranteed for that signal: ``eps_i`` of the chosen meter's signal (with
  probability ``1 - delta``, ``|l(H, D_test) - l(H, D)| < eps_i``, Section 3.1);
- steps used, of the budget T and of each tenant's share.

Alarms (something to act on): steps came after the budget T (the meter's guarantee does
not cover them: draw a new test set and release the old one, Section 3.1 "Interaction
with Labelers"); a tenant went beyond their share, or is not in the plan; the plan counted
on a revert (fixed in advance) that did not happen; the test set is smaller than the chosen
meter needs (then the smallest eps_1 it does support at this delta and T, the planner's
inverse, is reported).  Notes (worth knowing): the last planned step was used (draw a new
test set before the next one) - using it is the plan, not an alarm; several tenants share a
single-chain budget; reverts the plan did not fix in advance; the test set's size is unknown.

Every per-step quantity is one vectorized pass over the trace: a million steps replay in
a fraction of a second.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..core.slide import SlideMixin
from ..core.formatting import strict_json
from ..core.validation import InputError, check_int
from ..meter.model import (
    ASSUMPTION,
    REVERT_CAVEAT,
    TENANT_CAVEAT,
    MeterPlan,
    PlanResult,
    plan,
    resize_ranges,
    validate_ranges,
)
from ..meter.stages import budget_answers, normalize
from .capacity import METER_TITLES, METERS, StepsLeft, bound_text, bound_words, steps_left, used_up_message
from .trace import Trace, read_trace

__all__ = ["replay", "ReplayResult", "Alarm", "StepsLeft", "steps_left", "bound_words", "METERS", "METER_TITLES",
           "MAX_BUDGET_STEPS", "READING_NOTES", "signal_of", "replay_defaults", "replay_with"]

#: The largest budget T a replay accepts (label counts stay exact 64-bit integers below it).
MAX_BUDGET_STEPS = 10**12
#: Steps listed by name in a message before "and N more".
_LISTED = 10


#: How to read a replay (the page's and the report's notes), with the paper's sections.
READING_NOTES = (
    "The empirical overfitting is |l(H, D_val) − l(H, D_test)|, the gap between a model's validation and test "
    "scores (Section 3.1). Its range is the signal: ranges are half-open [r_(i−1), r_i), the last one closed at 1.",
    "The regular meter reports each step's own signal; the incremental meter reports the worst signal so far "
    "(Section 4.4) — here within the submitting tenant's own chain, and a reverted step stops counting from the "
    "next step on (Section 5.3).",
    "ε guaranteed: with probability 1 − δ the test score is within ε_i of the model's score on the whole "
    "distribution, for the signal i the chosen meter reports — provided the test set has the labels the plan "
    "needs and the step is within the budget T.",
    ASSUMPTION,
    TENANT_CAVEAT,
    REVERT_CAVEAT,
    "When the budget T is used up, draw a new test set and release the old one to the developers (Section 3.1).",
)


def replay_defaults() -> dict:
    """The meter settings a replay uses when none are given: :class:`MeterPlan`'s own defaults.

    One definition for the page, the notebook and the CLI (``ranges``, ``epsilon``,
    ``delta``); T defaults to the trace's number of steps.
    """
    return {key: list(MeterPlan.param[key].default) if key != "delta" else MeterPlan.param[key].default
            for key in ("ranges", "epsilon", "delta")}


def signal_of(empirical_overfitting, ranges) -> np.ndarray:
    """1-based signal i with r_(i-1) <= x < r_i (the last range closed at 1).

    ``ranges`` are the m + 1 boundaries 0 = r_0 < ... < r_m = 1 (Section 3.1).
    """
    r = np.asarray(ranges, dtype=float)
    x = np.asarray(empirical_overfitting, dtype=float)
    m = r.size - 1
    return np.clip(np.searchsorted(r, x, side="right"), 1, m).astype(np.int64)


@dataclass(frozen=True)
class Alarm:
    """Something the team should act on (or, with ``level='note'``, know).

    Attributes
    ----------
    kind : str
        ``beyond_budget``, ``tenant_beyond_budget``, ``tenant_not_planned``, ``revert_not_taken``,
        ``test_set_too_small`` (alarms); ``budget_used_up`` and ``tenant_budget_used_up``
        (alarms when steps went beyond the budget, notes when the last planned step was
        simply used), ``shared_budget``, ``unplanned_reverts``, ``test_size_unknown`` (notes).
    message : str
        One plain sentence (or two) saying what happened and what to do.
    step : int or None
        The step number it happened at (None for the whole session).
    index : int or None
        0-based position of that step in the trace.
    level : {'alarm', 'note'}
    details : dict
        Numbers behind the message (JSON-ready).
    """

    kind: str
    message: str
    step: int | None = None
    index: int | None = None
    level: str = "alarm"
    details: dict = field(default_factory=dict)

    @strict_json
    def to_dict(self) -> dict:
        return {"kind": self.kind, "level": self.level, "step": self.step, "message": self.message,
                **({"details": self.details} if self.details else {})}


# ============================================================================ settings
@dataclass(frozen=True)
class _Settings:
    """A validated plan: ranges, the planner's result, and whether T was given (else: the trace's length, said)."""

    ranges: np.ndarray
    plan: PlanResult
    steps_given: bool = True

    @property
    def steps(self) -> int:
        return int(self.plan.steps)


def _settings_from(plan_arg, settings: dict, trace: Trace) -> _Settings:
    """Validated settings from a MeterPlan, a mapping of its parameters, or nothing."""
    if isinstance(plan_arg, MeterPlan):
        if settings:
            raise TypeError("give either a MeterPlan or settings, not both: " + ", ".join(sorted(settings)))
        plan_arg.validate()  # raises the InputError behind plan.error
        _check_budget(plan_arg.steps)
        result = plan_arg.result
        if plan_arg.bound != "hoeffding":  # the exact counts, complete (a page's plan may still be computing them)
            result = plan(list(plan_arg.epsilon), plan_arg.delta, plan_arg.steps, tenants=plan_arg.tenants,
                          tenant_steps=plan_arg.tenant_steps or None, reverts=plan_arg.reverts or None,
                          bound=plan_arg.bound, max_error_rate=plan_arg.max_error_rate)
        return _Settings(np.asarray(plan_arg.ranges, dtype=float), result)
    values = dict(plan_arg or {})
    values.update(settings)
    unknown = sorted(set(values) - set(MeterPlan.param) - {"signals"})
    if unknown:
        raise InputError("settings", "MeterPlan parameters (ranges, epsilon, delta, steps, tenants, "
                         "tenant_steps, reverts)", unknown[0])
    defaults = replay_defaults()
    eps = values.get("epsilon", defaults["epsilon"])
    eps = [eps] if np.ndim(eps) == 0 else list(eps)
    if "signals" in values:
        m = check_int("signals", values.pop("signals"), minimum=1, maximum=1000)
        if len(eps) == 1:
            eps = eps * m
        elif len(eps) != m:
            raise InputError("signals", f"the number of epsilon values ({len(eps)})", m)
    steps = _check_budget(values.get("steps", len(trace)))
    tenant_steps = values.get("tenant_steps") or None
    tenants = len(tenant_steps) if tenant_steps else values.get("tenants", 1)
    reverts = values.get("reverts")
    if not reverts and values.get("revert_budget"):  # MeterPlan's convention: B reverts at steps 1..B
        reverts = list(range(1, check_int("revert_budget", values["revert_budget"], minimum=0) + 1))
    bound = values.get("bound") or "hoeffding"
    rate = values.get("max_error_rate") if bound == "binomial" else None
    result = plan(eps, values.get("delta", defaults["delta"]), steps, tenants=tenants, tenant_steps=tenant_steps,
                  reverts=reverts or None, bound=bound, max_error_rate=rate)
    ranges = values.get("ranges")
    ranges = validate_ranges(resize_ranges(defaults["ranges"], len(eps)) if ranges is None else ranges, len(eps))
    return _Settings(np.asarray(ranges, dtype=float), result, steps_given="steps" in values)


def _check_budget(steps) -> int:
    return check_int("steps", steps, minimum=1, maximum=MAX_BUDGET_STEPS)


# ============================================================================ result object
@dataclass(frozen=True, eq=False)
class ReplayResult(SlideMixin):
    """What the meter would have said at every step of a trace.

    Per-step arrays (one entry per step, in trace order): ``empirical_overfitting``,
    ``signal`` (regular, 1-based), ``incremental_signal``, ``epsilon`` (eps of the chosen
    meter's signal), ``epsilon_regular``, ``epsilon_incremental``, ``steps_used``,
    ``tenant_steps_used``, ``tenant_budget`` (None where the plan sets no share),
    ``within_budget``; plus the session-wide ``labels_needed`` (both meters),
    ``test_size``, ``supported_epsilon`` (the eps vector the test set supports, scaled
    together, or None), ``alarms`` and ``notes``.

    References
    ----------
    Hubis, Wu & Zhang, "Quantitative Overfitting Management for Human-in-the-loop ML
    Application Development with ease.ml/meter" (2019), Sections 3.1-3.4, 4.4, 5.2-5.3.
    """

    _text_module = "meter_dashboard.session.text"  # lead() and slide(path)

    trace: Trace
    variant: str
    settings: dict
    empirical_overfitting: np.ndarray
    signal: np.ndarray
    incremental_signal: np.ndarray
    epsilon: np.ndarray
    epsilon_regular: np.ndarray
    epsilon_incremental: np.ndarray
    steps_used: np.ndarray
    tenant_steps_used: np.ndarray
    tenant_budget_array: np.ndarray
    within_budget: np.ndarray
    labels_needed: dict
    test_size: int | None
    supported_epsilon: tuple | None
    confidence: float | None
    alarms: tuple
    notes: tuple
    steps_left: StepsLeft | None = None

    # -- sizes and look-ups
    def __len__(self) -> int:
        return len(self.trace)

    @cached_property
    def tenant_budget(self) -> tuple:
        """Each step's tenant share (None where the plan sets none)."""
        return tuple(None if b < 0 else int(b) for b in self.tenant_budget_array.tolist())

    @property
    def signals(self) -> int:
        return len(self.settings["epsilon"])

    @property
    def budget(self) -> int:
        """T, the steps the test set was sized for."""
        return int(self.settings["steps"])

    @property
    def steps_given(self) -> bool:
        """False when T is the trace's number of steps because no T was given."""
        return bool(self.settings.get("steps_given", True))

    @property
    def bound_text(self) -> str:
        """The per-model bound the replay's counts use, said on every output (and why, when it is not the plan's)."""
        return bound_text(self.settings, self.variant)

    @property
    def shown_signal(self) -> np.ndarray:
        """The signal the chosen meter reports (regular or incremental)."""
        return self.incremental_signal if self.variant == "incremental" else self.signal

    @property
    def needed(self) -> int:
        """Labels the chosen meter needs for the plan."""
        return int(self.labels_needed[self.variant])

    @property
    def short_of_labels(self) -> bool:
        return self.test_size is not None and self.test_size < self.needed

    @cached_property
    def alarm_positions(self) -> np.ndarray:
        """Positions of the steps with an alarm, in order (for "next alarm")."""
        return np.asarray(sorted({a.index for a in self.alarms if a.index is not None}), dtype=np.int64)

    @cached_property
    def change_positions(self) -> np.ndarray:
        """Positions where the chosen meter's signal differs from the step before (for "next change")."""
        shown = self.shown_signal
        return np.flatnonzero(shown[1:] != shown[:-1]) + 1

    def index_of(self, step: int) -> int:
        """0-based position of step number ``step`` (InputError if the trace has no such step)."""
        steps = self.trace.steps
        step = int(step)
        i = int(np.searchsorted(steps, step)) if -(2**63) <= step < 2**63 else len(steps)
        if i >= len(steps) or steps[i] != step:
            raise InputError("step", f"a step of the trace ({int(steps[0])}..{int(steps[-1])})", step)
        return i

    def range_of(self, signal: int) -> tuple:
        r = self.settings["ranges"]
        return float(r[signal - 1]), float(r[signal])

    def alarms_until(self, index: int) -> list:
        """Alarms and notes that apply up to and including position ``index`` (session-wide ones too)."""
        return [a for a in self.alarms + self.notes if a.index is None or a.index <= index]

    def step(self, index: int) -> dict:
        """Everything about the step at 0-based position ``index`` (negative counts from the end)."""
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"step position {index} out of range for {n} steps")
        i = index % n
        t = self.trace
        sig, inc = int(self.signal[i]), int(self.incremental_signal[i])
        shown = inc if self.variant == "incremental" else sig
        budget = int(self.tenant_budget_array[i])
        return {
            "step": int(t.steps[i]),
            "position": i + 1,
            "tenant": t.tenants[i] or None,
            t.val_column: float(t.val[i]),
            t.test_column: float(t.test[i]),
            "empirical_overfitting": float(self.empirical_overfitting[i]),
            "signal": sig,
            "signal_range": list(self.range_of(sig)),
            "incremental_signal": inc,
            "incremental_range": list(self.range_of(inc)),
            "epsilon": float(self.epsilon[i]),
            "epsilon_regular": float(self.epsilon_regular[i]),
            "epsilon_incremental": float(self.epsilon_incremental[i]),
            "supported_epsilon": (float(self.supported_epsilon[shown - 1])
                                  if self.supported_epsilon is not None else None),
            "steps_used": int(self.steps_used[i]),
            "budget_steps": self.budget,
            "tenant_steps_used": int(self.tenant_steps_used[i]),
            "tenant_budget": None if budget < 0 else budget,
            "within_budget": bool(self.within_budget[i]),
            "reverted": bool(t.reverted[i]),
            "description": t.descriptions[i],
            "alarms": [a.kind for a in self.alarms if a.index == i],
        }

    @property
    def last(self) -> dict:
        return self.step(-1)

    def listed_positions(self, limit: int = 200, edge: int = 20, also=()) -> list:
        """Positions a printed summary lists: all up to ``limit`` steps; else the first and last ``edge``,
        every step with an alarm or a note, and ``also``."""
        n = len(self)
        if n <= limit:
            return list(range(n))
        keep = set(range(min(edge, n))) | set(range(max(n - edge, 0), n)) | {int(i) for i in also}
        keep |= {a.index for a in self.alarms + self.notes if a.index is not None}
        return sorted(keep)

    def _repr_html_(self) -> str:  # notebooks: the replay verb's table (long traces: first, last, alarms)
        from ..core.display import html_table

        t, s = self.trace, self.settings
        headers = ["step"] + (["tenant"] if t.has_tenants else []) + [t.val_column, t.test_column, "gap", "signal",
                                                                      "incremental", "ε", "used"]
        shown = self.listed_positions(200, 20)
        rows: list[list[object]] = []
        marked: list[int] = []
        for i in shown:
            d = self.step(i)
            if i in {a.index for a in self.alarms}:
                marked.append(len(rows))
            rows.append([d["step"]] + ([d["tenant"]] if t.has_tenants else [])
                        + [d[t.val_column], d[t.test_column], d["empirical_overfitting"], d["signal"],
                           d["incremental_signal"], d["epsilon"], f"{d['steps_used']}/{self.budget}"])
        caption = (f"{t.name}: {len(t):,} steps, {self.variant} meter; ranges "
                   f"{', '.join(f'{v:g}' for v in s['ranges'])}; ε = {', '.join(f'{v:g}' for v in s['epsilon'])}; "
                   f"δ = {s['delta']:g}; T = {s['steps']}")
        need = (f"Labels needed ({self.bound_text}): {self.variant} {self.labels_needed[self.variant]:,} (the meter you run), "
                + ", ".join(f"{k} {v:,}" for k, v in self.labels_needed.items() if k != self.variant)
                + (f"; the test set has {self.test_size:,}" if self.test_size is not None else ""))
        more = None if len(shown) == len(self) else f"{len(self) - len(shown):,} of {len(self):,} steps not shown"
        if self.steps_left is not None:
            need += ". Steps left: " + self.steps_left.sentence()
        return html_table(headers, rows, caption=caption, marked=marked, mark_note="alarm", sentence=need,
                          notes=[f"ALARM: {a.message}" for a in self.alarms] + [a.message for a in self.notes],
                          more=more)

    # -- exports
    def summary(self) -> dict:
        """JSON-ready: settings, trace summary, labels, alarms and notes (everything but the steps)."""
        t = self.trace
        return {
            "trace": {
                "name": t.name,
                "steps": len(t),
                "metric": t.metric,
                "synthetic": t.synthetic,
                "tenants": list(t.tenant_names) if t.has_tenants else [],
                "reverted_steps": t.revert_steps,
            },
            "settings": {**self.settings, "meter": self.variant},
            "meter": self.variant,
            "labels_needed": dict(self.labels_needed),
            "test_size": self.test_size,
            "supported_epsilon": list(self.supported_epsilon) if self.supported_epsilon is not None else None,
            "confidence": self.confidence,
            "steps_left": self.steps_left.to_dict() if self.steps_left is not None else None,
        }

    @strict_json
    def to_dict(self) -> dict:
        """JSON-ready: :meth:`summary`, one object per step (``steps``), alarms and notes."""
        return {**self.summary(), "steps": [self.step(i) for i in range(len(self))],
                "alarms": [a.to_dict() for a in self.alarms], "notes": [a.to_dict() for a in self.notes]}

    def to_columns(self) -> dict:
        """Every per-step quantity as one array (numpy) or tuple per name, in trace order.

        The columnar form of :meth:`to_dict`'s ``steps`` (the CLI's ``--format json``): memory
        and output stay proportional to the steps, with no Python object per step
        (``pandas.DataFrame(columns)`` is :meth:`to_frame`'s table).  ``tenant`` is None without
        tenants, ``tenant_budget`` is -1 where the plan sets no share, ``supported_epsilon``
        is None when the test set's size is unknown.
        """
        t = self.trace
        sup = None
        if self.supported_epsilon is not None:
            sup = np.asarray(self.supported_epsilon, dtype=float)[self.shown_signal - 1]
        return {
            "step": t.steps, "tenant": t.tenants if t.has_tenants else None, t.val_column: t.val, t.test_column: t.test, "empirical_overfitting": self.empirical_overfitting,
            "signal": self.signal, "incremental_signal": self.incremental_signal, "epsilon": self.epsilon,
            "epsilon_regular": self.epsilon_regular, "epsilon_incremental": self.epsilon_incremental,
            "supported_epsilon": sup, "steps_used": self.steps_used, "tenant_steps_used": self.tenant_steps_used,
            "tenant_budget": self.tenant_budget_array, "within_budget": self.within_budget, "reverted": t.reverted,
            "description": t.descriptions,
        }

    def to_frame(self):
        """A pandas DataFrame, one row per step (the step number as index)."""
        import pandas as pd

        t, n = self.trace, len(self)
        sup = self.to_columns()["supported_epsilon"]
        alarms = [[] for _ in range(n)]
        for a in self.alarms:
            if a.index is not None:
                alarms[a.index].append(a.kind)
        frame = pd.DataFrame({
            "step": t.steps, "position": np.arange(1, n + 1), "tenant": [x or None for x in t.tenants],
            t.val_column: t.val, t.test_column: t.test, "empirical_overfitting": self.empirical_overfitting,
            "signal": self.signal, "incremental_signal": self.incremental_signal, "epsilon": self.epsilon,
            "epsilon_regular": self.epsilon_regular, "epsilon_incremental": self.epsilon_incremental,
            "supported_epsilon": sup if sup is not None else [None] * n, "steps_used": self.steps_used,
            "budget_steps": self.budget, "tenant_steps_used": self.tenant_steps_used,
            "tenant_budget": list(self.tenant_budget),
            "within_budget": self.within_budget, "reverted": t.reverted, "description": list(t.descriptions),
            "alarms": alarms,
        })
        return frame.set_index("step")

    def __repr__(self) -> str:
        s = self.settings
        eps = ", ".join(f"{e:g}" for e in s["epsilon"])
        lines = [f"ReplayResult({self.trace.name!r}, {len(self)} steps, meter={self.variant}, "
                 f"epsilon=[{eps}], delta={s['delta']:g}, T={s['steps']})"]
        width = max(len(str(int(self.trace.steps[0]))), len(str(int(self.trace.steps[-1]))))
        tenants = self.trace.has_tenants
        n = len(self)
        shown = list(range(n)) if n <= 2 * _LISTED else list(range(_LISTED)) + [-1] + list(range(n - _LISTED, n))
        for i in shown:
            if i < 0:
                lines.append(f"  ... {n - 2 * _LISTED:,} more steps ...")
                continue
            flag = " reverted" if self.trace.reverted[i] else ""
            over = "" if self.within_budget[i] else "  (beyond budget)"
            who = f" {self.trace.tenants[i]:<8}" if tenants else ""
            lines.append(f"  step {int(self.trace.steps[i]):>{width}}{who}  gap {self.empirical_overfitting[i]:.4f}  "
                         f"signal {int(self.signal[i])}  incremental {int(self.incremental_signal[i])}  "
                         f"eps {self.epsilon[i]:g}{flag}{over}")
        need = f"  labels needed ({self.variant}, {self.bound_text}): {self.needed:,}"
        if self.test_size is not None:
            need += f"; test set: {self.test_size:,}"
        lines.append(need)
        if self.steps_left is not None:
            lines.append(f"  steps left: {self.steps_left.sentence()}")
        lines += [f"  ALARM: {a.message}" for a in self.alarms] + [f"  note: {a.message}" for a in self.notes]
        return "\n".join(lines)


# ============================================================================ the replay
def replay(trace, plan=None, *, variant: str = "incremental", test_size=None, **settings) -> ReplayResult:
    """What the meter would have reported at every step of ``trace``.

    Parameters
    ----------
    trace : Trace or anything :func:`~meter_dashboard.session.trace.read_trace` accepts
    plan : MeterPlan or mapping, optional
        The meter's settings: a :class:`~meter_dashboard.meter.model.MeterPlan` (the planner's
        model), or a mapping of its parameters (``ranges``, ``epsilon``, ``delta``,
        ``steps``, ``tenants``, ``tenant_steps``, ``reverts``).  Missing ones are
        :func:`replay_defaults`; ``steps`` defaults to the trace's length.
    variant : {'incremental', 'regular'}
        The meter the team runs: its signal's eps is ``epsilon`` per step, and its label
        count is checked against the test set.
    test_size : int, optional
        n = |D_test| (overrides the trace's own).
    **settings
        MeterPlan parameters, when ``plan`` is not a MeterPlan.

    Returns
    -------
    ReplayResult

    References
    ----------
    Hubis, Wu & Zhang (2019), ease.ml/meter: Section 3.1 (signals, ranges, the guarantee),
    Section 4.4 (the incremental meter), Section 5.2 (tenants), Section 5.3 (reverts).

    Examples
    --------
    >>> r = replay([{"step": 1, "val_accuracy": 0.90, "test_accuracy": 0.888},
    ...             {"step": 2, "val_accuracy": 0.92, "test_accuracy": 0.917}],
    ...            ranges=[0, 0.005, 0.01, 0.02, 0.05, 1], epsilon=[0.01, 0.02, 0.03, 0.04, 0.05],
    ...            delta=0.1)
    >>> r.signal.tolist(), r.incremental_signal.tolist(), r.epsilon.tolist()
    ([3, 1], [3, 3], [0.03, 0.03])
    """
    if variant not in METERS:
        raise InputError("meter", "'incremental' or 'regular'", variant)
    trace = read_trace(trace)
    if test_size is not None:
        trace = trace.with_test_size(test_size)
    return replay_with(trace, _settings_from(plan, settings, trace), variant)


def replay_with(trace: Trace, settings, variant: str, *, steps_given: bool | None = None) -> ReplayResult:
    """The replay of a read ``trace`` with validated settings (a MeterPlan, or what :func:`replay` builds).

    ``steps_given=False``: T is the trace's number of steps because nobody gave one (a mapping
    without ``steps`` says so itself); the outputs then say so instead of calling T a budget.
    """
    if isinstance(settings, (MeterPlan, Mapping)) or settings is None:
        settings = _settings_from(settings, {}, trace)
    ranges, result = settings.ranges, settings.plan
    given = settings.steps_given if steps_given is None else steps_given
    eps = np.asarray(result.epsilon, dtype=float)
    T = settings.steps
    labels = {v: int(result.labels[v]) for v in METERS}
    if any(v < 1 for v in labels.values()):  # a count is a positive integer or nothing is shown
        raise InputError("steps", "small enough for the label counts to be computed", T)
    bound = result.bound if variant not in result.refused else "hoeffding"
    sig = _signals(trace, ranges, eps, variant)
    bud = _budgets(trace, T, tuple(int(v) for v in result.tenant_steps), sig)
    title = METER_TITLES[variant]
    left = None
    if trace.test_size is not None:
        left = steps_left(trace.test_size, eps, float(result.delta), len(trace), steps=T, variant=variant,
                          tenants=len(result.tenant_steps), tenant_steps=list(bud["plan_tenants"]) if bud["multi"] else None,
                          reverts=[int(v) for v in result.reverts] or None, bound=bound,
                          max_error_rate=result.max_error_rate if bound == "binomial" else None, steps_given=given)
    found = _budget_alarms(trace, T, labels[variant], title, left) if given else [_steps_from_trace(T, left)]
    found += _tenant_alarms(trace, T, bud)
    found += _revert_alarms(trace, tuple(int(v) for v in result.reverts), bud["plan_position"])
    size_alarms, supported, confidence = _test_size_alarms(trace.test_size, variant, eps, result, bud, labels, bound)
    found += size_alarms
    alarms = sorted((a for a in found if a.level == "alarm"), key=lambda a: a.index if a.index is not None else -1)
    notes = [a for a in found if a.level == "note"]
    settings_dict = {
        "ranges": [float(v) for v in ranges],
        "epsilon": [float(v) for v in eps],
        "delta": float(result.delta),
        "steps": T,
        "steps_given": bool(given),
        "signals": int(eps.size),
        "tenant_steps": [int(v) for v in result.tenant_steps],
        "reverts": [int(v) for v in result.reverts],
        "bound": result.bound, "max_error_rate": result.max_error_rate,
        "bound_used": bound, "bound_refused": result.refused.get(variant),
    }
    return ReplayResult(
        trace=trace, variant=variant, settings=settings_dict, empirical_overfitting=sig["gap"], signal=sig["regular"],
        incremental_signal=sig["incremental"], epsilon=sig["shown"], epsilon_regular=sig["eps_regular"],
        epsilon_incremental=sig["eps_incremental"], steps_used=bud["used"], tenant_steps_used=sig["tenant_used"],
        tenant_budget_array=bud["tenant_budget"], within_budget=bud["within"], labels_needed=labels,
        test_size=trace.test_size, supported_epsilon=supported, confidence=confidence, alarms=tuple(alarms),
        notes=tuple(notes), steps_left=left,
    )


def _steps_from_trace(T: int, left: StepsLeft | None) -> Alarm:
    """The note saying that T is the trace's length, not a budget anybody set (and what the labels support)."""
    answer = "" if left is not None else " Give the test-set size n to learn how many steps its labels support."
    return Alarm("steps_from_trace",
                 f"No T was given: T = {T:,} is the trace's number of steps, so the labels needed are for the "
                 f"steps taken, not a budget of steps the test set supports.{answer}",
                 level="note", details={"steps": T, **(left.to_dict() if left is not None else {})})


# ============================================================================ signals and budgets
def _signals(trace: Trace, ranges, eps, variant: str) -> dict:
    """Per step: the gap, the regular and incremental signals (per tenant chain, reverts left out), eps.

    Chains are replayed together: the steps are grouped by tenant (a stable sort), and the
    worst-so-far is one running maximum over keys ``tenant * (m + 1) + signal``, which
    restarts at each tenant because every key of a later tenant exceeds the earlier ones.
    """
    x = trace.empirical_overfitting
    regular = signal_of(x, ranges)
    codes = trace.tenant_codes if len(trace.tenant_names) > 1 else np.zeros(len(trace), dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    chain = codes[order]
    width = eps.size + 1
    counted = np.where(trace.reverted[order], 0, regular[order]) + chain * width
    worst = np.maximum.accumulate(counted) - chain * width  # worst counted signal up to each step, per chain
    starts = np.flatnonzero(np.concatenate([[True], chain[1:] != chain[:-1]]))
    first = np.repeat(starts, np.diff(np.concatenate([starts, [chain.size]])))
    before = np.concatenate([[0], worst[:-1]])
    before[starts] = 0  # nothing came before the first step of a chain
    incremental = np.empty_like(regular)
    incremental[order] = np.maximum(before, regular[order])
    tenant_used = np.empty_like(regular)
    tenant_used[order] = np.arange(chain.size) - first + 1
    eps_regular, eps_incremental = eps[regular - 1], eps[incremental - 1]
    return {"gap": x, "regular": regular, "incremental": incremental, "codes": codes, "tenant_used": tenant_used,
            "eps_regular": eps_regular, "eps_incremental": eps_incremental,
            "shown": eps_incremental if variant == "incremental" else eps_regular}


def _budgets(trace: Trace, T: int, plan_tenants: tuple, sig: dict) -> dict:
    """Steps used of T, each step's tenant share and its position in the plan's convention.

    A step's "plan position" is where the plan's convention (tenant 1's chain first, then
    tenant 2's, ...) puts it; -1 for a tenant the plan does not know.
    """
    n = len(trace)
    codes, tenant_used = sig["codes"], sig["tenant_used"]
    used = np.arange(1, n + 1, dtype=np.int64)
    multi = len(plan_tenants) > 1
    if multi:
        shares = np.asarray(plan_tenants, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(shares)])
        known = codes < shares.size
        safe = np.minimum(codes, shares.size - 1)
        budget = np.where(known, shares[safe], -1)
        plan_position = np.where(known, offsets[safe] + tenant_used, -1)
    else:
        budget = np.full(n, T if len(trace.tenant_names) == 1 else -1, dtype=np.int64)
        plan_position = used.copy()
    within = (used <= T) & ((budget < 0) | (tenant_used <= budget))
    if multi:
        within &= budget >= 0
    return {"used": used, "tenant_budget": budget, "plan_position": plan_position, "within": within,
            "codes": codes, "multi": multi, "plan_tenants": plan_tenants}


def _at(trace: Trace, i) -> dict:
    return dict(step=int(trace.steps[i]), index=int(i))


def _listed(values) -> str:
    shown = ", ".join(str(v) for v in values[:_LISTED])
    return shown + (f" and {len(values) - _LISTED:,} more" if len(values) > _LISTED else "")


# ============================================================================ alarms, one group each
def _budget_alarms(trace: Trace, T: int, needed: int, title: str, left: StepsLeft | None) -> list:
    """The budget T: its last step used (a note, or an alarm when steps went on), steps beyond it.

    Both say what the labels support at the planned ε in the steps-left card's numbers (``left``).
    """
    n_steps = len(trace)
    out = []
    if n_steps >= T:
        i = T - 1
        beyond = n_steps > T
        out.append(Alarm(
            "budget_used_up", used_up_message(int(trace.steps[i]), T, needed, title, beyond, left),
            **_at(trace, i), level="alarm" if beyond else "note", details={"steps": T, "labels": needed}))
    if n_steps > T:
        first, last = int(trace.steps[T]), int(trace.steps[-1])
        k = n_steps - T
        span = f"Step {first}" if k == 1 else f"Steps {first}–{last} ({k:,} steps)"
        out.append(Alarm(
            "beyond_budget",
            f"{span} came after the budget of T = {T} steps: the meter's guarantee does not cover "
            f"{'its signal' if k == 1 else 'their signals'}{left.wider_plan() if left is not None else ''}.",
            **_at(trace, T), details={"steps": T, "beyond": k}))
    return out


def _tenant_alarms(trace: Trace, T: int, bud: dict) -> list:
    """Each tenant's share of T: used (note, or alarm when exceeded), exceeded, or not in the plan."""
    names, plan_tenants = trace.tenant_names, bud["plan_tenants"]
    if not bud["multi"]:
        if len(names) <= 1:
            return []
        return [Alarm(
            "shared_budget",
            f"The plan sizes the test set for one chain of T = {T} steps; that also covers these "
            f"{len(names)} tenants ({_listed(names)}), as long as they do not communicate and submit "
            f"T steps in all. A plan with tenant_steps needs fewer labels.",
            level="note", details={"tenants": list(names)})]
    out = []
    codes = bud["codes"]
    counts = np.bincount(codes, minlength=len(names))
    order = np.argsort(codes, kind="stable")  # each tenant's steps, in trace order, one after the other
    starts = np.concatenate([[0], np.cumsum(counts)])
    for j, name in enumerate(names):
        label = f"tenant {name}" if name else "the trace's only tenant"
        idx = order[starts[j]:starts[j + 1]]
        if j >= len(plan_tenants):
            out.append(Alarm(
                "tenant_not_planned",
                f"The plan shares T = {T} among {len(plan_tenants)} tenants, but {label} is tenant "
                f"{j + 1}: its {idx.size} step(s) are not covered (add it to tenant_steps).",
                **_at(trace, idx[0]), details={"tenant": name, "plan_tenants": len(plan_tenants)}))
            continue
        share = plan_tenants[j]
        if idx.size < share:
            continue
        exceeded = idx.size > share
        out.append(Alarm(
            "tenant_budget_used_up",
            f"Step {int(trace.steps[idx[share - 1]])} used the last of {label}'s share of {share} steps.",
            **_at(trace, idx[share - 1]), level="alarm" if exceeded else "note",
            details={"tenant": name, "tenant_steps": share}))
        if exceeded:
            out.append(Alarm(
                "tenant_beyond_budget",
                f"{label[0].upper() + label[1:]} submitted {idx.size - share} step(s) beyond their share of "
                f"{share}: the guarantee does not cover them.",
                **_at(trace, idx[share]), details={"tenant": name, "tenant_steps": share,
                                                    "beyond": int(idx.size - share)}))
    return out


def _revert_alarms(trace: Trace, plan_reverts: tuple, plan_position: np.ndarray) -> list:
    """Reverts fixed in advance that did not happen (alarm); reverts the plan did not fix (note)."""
    out = []
    reverted = trace.reverted
    if plan_reverts:
        order = np.argsort(plan_position, kind="stable")
        ordered = plan_position[order]
        wanted = np.asarray(plan_reverts, dtype=np.int64)
        where = np.minimum(np.searchsorted(ordered, wanted), ordered.size - 1)
        taken = set(plan_position[reverted & (plan_position > 0)].tolist())
        for p, k in zip(plan_reverts, where.tolist()):
            if ordered[k] == p and p not in taken:
                i = int(order[k])
                out.append(Alarm(
                    "revert_not_taken",
                    f"The plan counted on a revert at step position {p} (fixed in advance), but step "
                    f"{int(trace.steps[i])} was not reverted: the label count assumed that revert, so the guarantee "
                    f"does not cover this history. Replan without it (or with the reverts that happened).",
                    **_at(trace, i), details={"position": p}))
    planned = np.isin(plan_position, np.asarray(plan_reverts, dtype=np.int64)) & (plan_position > 0)
    unplanned = trace.steps[reverted & ~planned].tolist()
    if unplanned:
        out.append(Alarm(
            "unplanned_reverts",
            f"Reverted step(s) {_listed(unplanned)} were not fixed in advance in the plan: "
            f"still covered, but without the revert saving (Section 5.3).",
            level="note", details={"steps": unplanned}))
    return out


def _test_size_alarms(n, variant: str, eps, result: PlanResult, bud: dict, labels: dict, bound: str) -> tuple:
    """([alarm or note], supported eps vector, confidence) for a test set of ``n`` labels (the planner's inverse)."""
    needed, title = labels[variant], METER_TITLES[variant]
    if n is None:
        return [Alarm("test_size_unknown",
                      f"Give the test-set size n to check it against the {needed:,} labels the {title} needs.",
                      level="note", details={"labels": needed})], None, None
    delta, T = float(result.delta), int(result.steps)
    tenant_steps = list(bud["plan_tenants"]) if bud["multi"] else None
    reverts = [int(v) for v in result.reverts] or None
    _, eps1, conf = budget_answers(normalize(list(eps), delta, T, tenants=len(result.tenant_steps), reverts=reverts,
                                             tenant_steps=tenant_steps, budget=n, budget_variants=(variant,), bound=bound,
                                             max_error_rate=result.max_error_rate if bound == "binomial" else None), variant)
    eps1 = float("inf") if eps1 is None or not math.isfinite(eps1) else float(eps1)
    supported = tuple(float(v) for v in eps * (eps1 / eps[0])) if math.isfinite(eps1) else None
    confidence = float(conf) if conf is not None else 0.0
    if n >= needed:
        return [], supported, confidence
    if supported is None or eps1 >= 1:
        what = "no meaningful tolerance (ε₁ would have to be 1 or more)"
    else:
        what = (f"ε₁ ≥ {eps1:.4g} at δ = {delta:g} and T = {T} (the ε vector scaled together: "
                f"{', '.join(f'{v:.4g}' for v in supported)})")
    at_plan = (f"at the planned ε its confidence is {confidence:.3g} instead of {1 - delta:g}"
               if confidence > 0 else "at the planned ε the bound guarantees nothing")
    alarm = Alarm(
        "test_set_too_small",
        f"The test set has {n:,} labels; the {title} needs {needed:,} for ε = "
        f"{', '.join(f'{v:g}' for v in eps)}. It supports {what}; {at_plan}.",
        level="alarm",
        details={"test_size": n, "labels": needed, "supported_epsilon_1": eps1 if math.isfinite(eps1) else None,
                 "confidence": confidence})
    return [alarm], supported, confidence
