"""Replaying a development trace through the meter: what it would have told the team, and when.

Two ways in, one computation:

- :func:`replay` - a function for scripts, notebooks and the CLI, returning a
  :class:`ReplayResult` (readable repr, ``to_dict()``, ``to_frame()``).
- :class:`SessionModel` - a ``param.Parameterized`` model (no widgets) for the session
  page and notebooks.  It *holds* the planner's :class:`~meter_dashboard.models.plan.MeterPlan`
  (one source of truth for ranges, epsilon, delta, steps, tenants and reverts), the
  loaded :class:`~meter_dashboard.models.trace.Trace` and the replay position.

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

Alarms: the budget T is used up (draw a new test set, release the old one to the
developers, Section 3.1 "Interaction with Labelers"); steps beyond it are not covered;
a tenant used up their share; the plan counted on a revert (fixed in advance) that did
not happen; and the test set is smaller than the chosen meter needs (then the smallest
eps_1 it does support at this delta and T, the planner's inverse, is reported).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import param

from .._validation import InputError, check_int
from ..bounds import meter as _meter
from .plan import MeterPlan, PRESETS, resize_ranges
from .trace import EXAMPLES, Trace, load_example, read_trace

__all__ = ["replay", "ReplayResult", "Alarm", "SessionModel", "METERS", "DEFAULT_PRESET", "signal_of"]

#: The meters a session can replay for (the adaptive variants: one signal per step).
METERS = ("incremental", "regular")

#: The plan a session starts from when nothing else is given: the paper's Figure 3 settings.
DEFAULT_PRESET = "Paper: δ = 0.1 (Fig. 3)"

METER_TITLES = {"regular": "regular meter", "incremental": "incremental meter"}


# ============================================================================ small pieces
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
        ``budget_used_up``, ``beyond_budget``, ``tenant_budget_used_up``,
        ``tenant_beyond_budget``, ``tenant_not_planned``, ``revert_not_taken``,
        ``test_set_too_small`` (alarms); ``shared_budget``, ``unplanned_reverts``,
        ``test_size_unknown`` (notes).
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

    def to_dict(self) -> dict:
        return {"kind": self.kind, "level": self.level, "step": self.step, "message": self.message,
                **({"details": self.details} if self.details else {})}


def _plan_from(plan, settings: dict, trace: Trace) -> MeterPlan:
    """A valid MeterPlan from a MeterPlan, a mapping of its parameters, or nothing."""
    if isinstance(plan, MeterPlan):
        if settings:
            raise TypeError("give either a MeterPlan or settings, not both: "
                            + ", ".join(sorted(settings)))
        plan.validate()  # raises the InputError behind plan.error
        return plan
    values = dict(plan or {})
    values.update(settings)
    unknown = sorted(set(values) - set(MeterPlan.param) - {"signals"})
    if unknown:
        raise InputError("settings", "MeterPlan parameters (ranges, epsilon, delta, steps, tenants, "
                         "tenant_steps, reverts)", unknown[0])
    if "signals" in values:
        m = check_int("signals", values.pop("signals"), minimum=1, maximum=1000)
        eps = values.get("epsilon")
        if eps is not None and np.ndim(eps) == 0:
            values["epsilon"] = [float(eps)] * m
        elif eps is not None and len(eps) == 1:
            values["epsilon"] = [float(eps[0])] * m
        elif eps is not None and len(eps) != m:
            raise InputError("signals", f"the number of epsilon values ({len(eps)})", m)
        if "ranges" not in values and values.get("epsilon") is not None:
            values["ranges"] = resize_ranges(MeterPlan.param.ranges.default, m)
    values.setdefault("steps", len(trace))
    return MeterPlan(**values)


# ============================================================================ result object
@dataclass(frozen=True, eq=False)
class ReplayResult:
    """What the meter would have said at every step of a trace.

    Per-step arrays (one entry per step, in trace order): ``empirical_overfitting``,
    ``signal`` (regular, 1-based), ``incremental_signal``, ``epsilon`` (eps of the chosen
    meter's signal), ``epsilon_regular``, ``epsilon_incremental``, ``steps_used``,
    ``tenant_steps_used``, ``tenant_budget`` (None where the plan sets no share),
    ``within_budget``; plus the session-wide ``labels_needed`` (both meters),
    ``test_size``, ``supported_epsilon`` (the eps vector the test set supports, scaled
    together, or None), ``alarms`` and ``notes``.
    """

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
    tenant_budget: tuple
    within_budget: np.ndarray
    labels_needed: dict
    test_size: int | None
    supported_epsilon: tuple | None
    confidence: float | None
    alarms: tuple
    notes: tuple

    # -- sizes and look-ups
    def __len__(self) -> int:
        return len(self.trace)

    @property
    def signals(self) -> int:
        return len(self.settings["epsilon"])

    @property
    def budget(self) -> int:
        """T, the steps the test set was sized for."""
        return int(self.settings["steps"])

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

    def index_of(self, step: int) -> int:
        """0-based position of step number ``step`` (InputError if the trace has no such step)."""
        hits = np.flatnonzero(self.trace.steps == int(step))
        if hits.size == 0:
            raise InputError("step", f"a step of the trace ({int(self.trace.steps[0])}..{int(self.trace.steps[-1])})",
                             step)
        return int(hits[0])

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
        out = {
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
            "tenant_budget": self.tenant_budget[i],
            "within_budget": bool(self.within_budget[i]),
            "reverted": bool(t.reverted[i]),
            "description": t.descriptions[i],
            "alarms": [a.kind for a in self.alarms if a.index == i],
        }
        return out

    @property
    def last(self) -> dict:
        return self.step(-1)

    # -- exports
    def to_dict(self) -> dict:
        """JSON-ready: settings, trace summary, labels, one object per step, alarms and notes."""
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
            "steps": [self.step(i) for i in range(len(self))],
            "alarms": [a.to_dict() for a in self.alarms],
            "notes": [a.to_dict() for a in self.notes],
        }

    def to_frame(self):
        """A pandas DataFrame, one row per step (the step number as index)."""
        import pandas as pd

        rows = [self.step(i) for i in range(len(self))]
        frame = pd.DataFrame(rows).set_index("step")
        return frame.drop(columns=["signal_range", "incremental_range"])

    def __repr__(self) -> str:
        s = self.settings
        eps = ", ".join(f"{e:g}" for e in s["epsilon"])
        head = (f"ReplayResult({self.trace.name!r}, {len(self)} steps, meter={self.variant}, "
                f"epsilon=[{eps}], delta={s['delta']:g}, T={s['steps']})")
        lines = [head]
        width = max(len(str(int(v))) for v in self.trace.steps)
        tenants = self.trace.has_tenants
        for i in range(len(self)):
            flag = " reverted" if self.trace.reverted[i] else ""
            over = "" if self.within_budget[i] else "  (beyond budget)"
            who = f" {self.trace.tenants[i]:<8}" if tenants else ""
            lines.append(f"  step {int(self.trace.steps[i]):>{width}}{who}  gap {self.empirical_overfitting[i]:.4f}  "
                         f"signal {int(self.signal[i])}  incremental {int(self.incremental_signal[i])}  "
                         f"eps {self.epsilon[i]:g}{flag}{over}")
        need = f"  labels needed ({self.variant}): {self.needed:,}"
        if self.test_size is not None:
            need += f"; test set: {self.test_size:,}"
        lines.append(need)
        for a in self.alarms:
            lines.append(f"  ALARM: {a.message}")
        for a in self.notes:
            lines.append(f"  note: {a.message}")
        return "\n".join(lines)


# ============================================================================ the replay
def replay(trace, plan=None, *, variant: str = "incremental", test_size=None, **settings) -> ReplayResult:
    """What the meter would have reported at every step of ``trace``.

    Parameters
    ----------
    trace : Trace or anything :func:`~meter_dashboard.models.trace.read_trace` accepts
    plan : MeterPlan or mapping, optional
        The meter's settings: a :class:`~meter_dashboard.models.plan.MeterPlan` (the planner's
        model), or a mapping of its parameters (``ranges``, ``epsilon``, ``delta``,
        ``steps``, ``tenants``, ``tenant_steps``, ``reverts``).  ``steps`` defaults to
        the trace's length.
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
    meter_plan = _plan_from(plan, settings, trace)
    return _replay(trace, meter_plan, variant)


def _replay(trace: Trace, plan: MeterPlan, variant: str) -> ReplayResult:
    result = plan.result
    ranges = np.asarray(plan.ranges, dtype=float)
    eps = np.asarray(plan.epsilon, dtype=float)
    delta = float(plan.delta)
    T = int(plan.steps)
    plan_tenants = tuple(int(v) for v in result.tenant_steps)
    plan_reverts = tuple(int(v) for v in plan.reverts)
    n_steps = len(trace)
    steps = trace.steps

    x = trace.empirical_overfitting
    sig = signal_of(x, ranges)

    # -- chains (the trace's tenants, in order of first submission) and the incremental signal
    names = trace.tenant_names
    if len(names) > 1:
        lookup = {name: j for j, name in enumerate(names)}
        codes = np.fromiter((lookup[t] for t in trace.tenants), dtype=np.int64, count=n_steps)
    else:
        codes = np.zeros(n_steps, dtype=np.int64)
    inc = np.empty(n_steps, dtype=np.int64)
    tenant_used = np.empty(n_steps, dtype=np.int64)
    for j in range(len(names)):
        idx = np.flatnonzero(codes == j)
        s = sig[idx]
        counted = np.where(trace.reverted[idx], 0, s)
        before = np.concatenate([[0], np.maximum.accumulate(counted)[:-1]])
        inc[idx] = np.maximum(before, s)
        tenant_used[idx] = np.arange(1, idx.size + 1)

    used = np.arange(1, n_steps + 1)
    eps_reg = eps[sig - 1]
    eps_inc = eps[inc - 1]
    eps_shown = eps_inc if variant == "incremental" else eps_reg

    # -- budgets: T overall; each tenant's share when the plan has several tenants.  A step's
    #    "plan position" is where the plan's convention (tenant 1's chain first) puts it.
    multi_plan = len(plan_tenants) > 1
    if multi_plan:
        shares = np.asarray(plan_tenants, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(shares)])
        known = codes < shares.size
        safe = np.minimum(codes, shares.size - 1)
        budget_arr = np.where(known, shares[safe], -1)
        plan_position = np.where(known, offsets[safe] + tenant_used, -1)
    else:
        budget_arr = np.full(n_steps, T if len(names) == 1 else -1, dtype=np.int64)
        plan_position = used.copy()
    tenant_budget = tuple(None if b < 0 else int(b) for b in budget_arr.tolist())
    within = (used <= T) & ((budget_arr < 0) | (tenant_used <= budget_arr))
    if multi_plan:
        within &= budget_arr >= 0

    labels_needed = {v: int(result.labels[v]) for v in METERS}
    needed = labels_needed[variant]
    alarms: list[Alarm] = []
    notes: list[Alarm] = []
    title = METER_TITLES[variant]

    def at(i):
        return dict(step=int(steps[i]), index=int(i))

    # budget T
    if n_steps >= T:
        i = T - 1
        alarms.append(Alarm(
            "budget_used_up",
            f"Step {int(steps[i])} used the last of the T = {T} steps this test set supports: draw a new test "
            f"set ({needed:,} labels for the {title}) and release the old one to the developers for development.",
            **at(i), details={"steps": T, "labels": needed}))
    if n_steps > T:
        first, last = int(steps[T]), int(steps[-1])
        k = n_steps - T
        span = f"Step {first}" if k == 1 else f"Steps {first}–{last} ({k} steps)"
        alarms.append(Alarm(
            "beyond_budget",
            f"{span} came after the budget of T = {T} steps: the meter's guarantee does not cover "
            f"{'its signal' if k == 1 else 'their signals'}.",
            **at(T), details={"steps": T, "beyond": k}))

    # tenants
    if multi_plan:
        for j, name in enumerate(names):
            label = f"tenant {name}" if name else "the trace's only tenant"
            idx = np.flatnonzero(codes == j)
            if j >= len(plan_tenants):
                alarms.append(Alarm(
                    "tenant_not_planned",
                    f"The plan shares T = {T} among {len(plan_tenants)} tenants, but {label} is tenant "
                    f"{j + 1}: its {idx.size} step(s) are not covered (add it to tenant_steps).",
                    **at(idx[0]), details={"tenant": name, "plan_tenants": len(plan_tenants)}))
                continue
            share = plan_tenants[j]
            if idx.size >= share:
                alarms.append(Alarm(
                    "tenant_budget_used_up",
                    f"Step {int(steps[idx[share - 1]])} used the last of {label}'s share of {share} steps.",
                    **at(idx[share - 1]), details={"tenant": name, "tenant_steps": share}))
            if idx.size > share:
                alarms.append(Alarm(
                    "tenant_beyond_budget",
                    f"{label[0].upper() + label[1:]} submitted {idx.size - share} step(s) beyond their share of "
                    f"{share}: the guarantee does not cover them.",
                    **at(idx[share]), details={"tenant": name, "tenant_steps": share, "beyond": int(idx.size - share)}))
    elif len(names) > 1:
        notes.append(Alarm(
            "shared_budget",
            f"The plan sizes the test set for one chain of T = {T} steps; that also covers these "
            f"{len(names)} tenants ({', '.join(names)}), as long as they do not communicate and submit "
            f"T steps in all. A plan with tenant_steps needs fewer labels.",
            level="note", details={"tenants": list(names)}))

    # reverts fixed in advance
    reverted = trace.reverted
    revert_positions = set(plan_position[reverted & (plan_position > 0)].tolist())
    for p in plan_reverts:
        hits = np.flatnonzero(plan_position == p)
        if hits.size and p not in revert_positions:
            i = int(hits[0])
            alarms.append(Alarm(
                "revert_not_taken",
                f"The plan counted on a revert at step position {p} (fixed in advance), but step "
                f"{int(steps[i])} was not reverted: the label count assumed that revert, so the guarantee does "
                f"not cover this history. Replan without it (or with the reverts that happened).",
                **at(i), details={"position": p}))
    planned = np.isin(plan_position, np.asarray(plan_reverts, dtype=np.int64)) & (plan_position > 0)
    unplanned = steps[reverted & ~planned].tolist()
    if unplanned:
        notes.append(Alarm(
            "unplanned_reverts",
            f"Reverted step(s) {', '.join(str(s) for s in unplanned)} were not fixed in advance in the plan: "
            f"still covered, but without the revert saving (Section 5.3).",
            level="note", details={"steps": unplanned}))

    # the test set's size
    n = trace.test_size
    supported = confidence = None
    if n is None:
        notes.append(Alarm(
            "test_size_unknown",
            f"Give the test-set size n to check it against the {needed:,} labels the {title} needs.",
            level="note", details={"labels": needed}))
    else:
        kw = dict(tenant_steps=list(plan_tenants) if multi_plan else None, reverts=list(plan_reverts) or None)
        eps1 = float(_meter.min_epsilon(variant, n, eps, delta, T, **kw))
        supported = tuple(float(v) for v in eps * (eps1 / eps[0])) if math.isfinite(eps1) else None
        log_d = float(_meter.failure_probability(variant, n, eps, T, log=True, **kw))
        confidence = float(-np.expm1(log_d)) if log_d < 0 else 0.0
        if n < needed:
            if supported is None or eps1 >= 1:
                what = "no meaningful tolerance (ε₁ would have to be 1 or more)"
            else:
                what = (f"ε₁ ≥ {eps1:.4g} at δ = {delta:g} and T = {T} (the ε vector scaled together: "
                        f"{', '.join(f'{v:.3g}' for v in supported)})")
            at_plan = (f"at the planned ε its confidence is {confidence:.3g} instead of {1 - delta:g}"
                       if confidence > 0 else "at the planned ε the bound guarantees nothing")
            alarms.append(Alarm(
                "test_set_too_small",
                f"The test set has {n:,} labels; the {title} needs {needed:,} for ε = "
                f"{', '.join(f'{v:g}' for v in eps)}. It supports {what}; {at_plan}.",
                level="alarm",
                details={"test_size": n, "labels": needed, "supported_epsilon_1": eps1 if math.isfinite(eps1) else None,
                         "confidence": confidence}))

    alarms.sort(key=lambda a: (a.index if a.index is not None else -1))
    settings = {
        "ranges": [float(v) for v in ranges],
        "epsilon": [float(v) for v in eps],
        "delta": delta,
        "steps": T,
        "signals": int(eps.size),
        "tenant_steps": list(plan_tenants),
        "reverts": list(plan_reverts),
    }
    return ReplayResult(
        trace=trace, variant=variant, settings=settings, empirical_overfitting=x, signal=sig,
        incremental_signal=inc, epsilon=eps_shown, epsilon_regular=eps_reg, epsilon_incremental=eps_inc,
        steps_used=used, tenant_steps_used=tenant_used, tenant_budget=tuple(tenant_budget),
        within_budget=within, labels_needed=labels_needed, test_size=n, supported_epsilon=supported,
        confidence=confidence, alarms=tuple(alarms), notes=tuple(notes),
    )


# ============================================================================ the param model
class SessionModel(param.Parameterized):
    """A replay session: the team's plan, a loaded trace, and where the replay stands.

    The plan is the planner's own :class:`~meter_dashboard.models.plan.MeterPlan` (held, not
    copied): change ``session.plan.delta`` and the replay follows.  Loading a bad trace
    sets :attr:`error` and keeps the previous trace and replay; an invalid plan keeps the
    last replay (the plan's own ``error`` says why).

    Examples
    --------
    >>> s = SessionModel(example="emocontext")
    >>> s.current["step"], s.current["signal"], s.current["incremental_signal"]
    (8, 3, 3)
    """

    plan = param.ClassSelector(class_=MeterPlan, doc="The meter's settings (the planner's model).")
    variant = param.Selector(default="incremental", objects=list(METERS),
                             doc="The meter the team runs: its eps and label count are the ones checked.")
    trace = param.ClassSelector(class_=Trace, default=None, allow_None=True, doc="The loaded trace.")
    example = param.Selector(default=None, objects=[None, *EXAMPLES], allow_None=True,
                             doc="The shipped example currently loaded (None for an uploaded trace).")
    test_size = param.Integer(default=None, allow_None=True, bounds=(1, None),
                              doc="n = |D_test|: the labels the test set has (a JSON trace may carry it).")
    position = param.Integer(default=0, bounds=(0, None), doc="0-based position of the step shown.")

    result = param.Parameter(default=None, doc="The ReplayResult of the current trace and plan.")
    error = param.String(default="", doc="Why the last trace could not be loaded ('' when it could).")
    status = param.String(default="", doc="What was loaded last, in a few words.")

    def __init__(self, trace=None, plan=None, **params):
        example = params.pop("example", None)
        if plan is None:
            plan = MeterPlan(**PRESETS[DEFAULT_PRESET])
        elif isinstance(plan, Mapping):
            plan = MeterPlan(**plan)
        self._n_from_trace = False
        super().__init__(plan=plan, **params)
        if trace is not None:
            self._set_trace(read_trace(trace), example=None)  # a bad trace raises here
        elif example is not None:
            self._set_trace(load_example(example), example=example)

    # -- loading
    def load(self, source, *, name: str | None = None, format: str | None = None) -> bool:
        """Load a trace (path, bytes, file object, records, DataFrame or Trace).

        Returns True on success.  On failure :attr:`error` holds the message and the
        current trace (and its replay) stay.
        """
        try:
            trace = read_trace(source, name=name, format=format)
        except InputError as exc:
            self.error = str(exc)
            return False
        self._set_trace(trace, example=None)
        return True

    def load_example(self, key: str) -> bool:
        """Load a shipped example (see :data:`meter_dashboard.models.trace.EXAMPLES`)."""
        try:
            trace = load_example(key)
        except InputError as exc:
            self.error = str(exc)
            return False
        self._set_trace(trace, example=key)
        return True

    def _set_trace(self, trace: Trace, example) -> None:
        n = self.test_size
        from_trace = self._n_from_trace
        if trace.test_size is not None:
            n, from_trace = trace.test_size, True
        elif from_trace:  # the previous n described the previous trace's test set
            n, from_trace = None, False
        result = None if self.plan.error else _replay(trace.with_test_size(n), self.plan, self.variant)
        kind = "synthetic example" if trace.synthetic else ("example" if example else "trace")
        self._n_from_trace = from_trace
        self.param.position.bounds = (0, max(len(trace) - 1, 0))
        self._loading = True
        try:
            self.param.update(trace=trace, example=example, test_size=n, result=result, error="",
                              position=len(trace) - 1,  # where the team stands now
                              status=f"Loaded {kind} {trace.name!r}: {len(trace)} steps.")
        finally:
            self._loading = False

    # -- the replay
    @param.depends("plan.result", "variant", "test_size", watch=True)
    def _replay(self):
        if self.trace is None or self.plan.error or getattr(self, "_loading", False):
            return
        result = _replay(self.trace.with_test_size(self.test_size), self.plan, self.variant)
        self.result = result

    @property
    def current(self) -> dict | None:
        """The step shown (a dict, see :meth:`ReplayResult.step`)."""
        if self.result is None:
            return None
        return self.result.step(min(self.position, len(self.result) - 1))

    # -- moving through the replay
    def step_forward(self) -> bool:
        """Show the next step; False at the last one."""
        if self.result is None or self.position >= len(self.result) - 1:
            return False
        self.position += 1
        return True

    def step_back(self) -> bool:
        """Show the previous step; False at the first one."""
        if self.result is None or self.position <= 0:
            return False
        self.position -= 1
        return True

    def first(self) -> None:
        if self.result is not None:
            self.position = 0

    def last(self) -> None:
        if self.result is not None:
            self.position = len(self.result) - 1

    def jump_to_step(self, step: int) -> None:
        """Show step number ``step`` (InputError if the trace has no such step)."""
        if self.result is None:
            raise InputError("step", "a step of a loaded trace", step)
        self.position = self.result.index_of(check_int("step", step, minimum=0))

    # -- URL state (the planner's keys plus the session's own)
    SESSION_KEYS = ("meter", "example", "test_size")

    def to_query(self) -> dict:
        """The plan's query keys plus ``meter``, ``example`` and ``test_size``."""
        q = self.plan.to_query()
        if self.variant != "incremental":
            q["meter"] = self.variant
        if self.example is not None:
            q["example"] = self.example
        if self.test_size is not None and not (self._n_from_trace and self.example is not None):
            q["test_size"] = str(self.test_size)
        return q

    def update_from_query(self, query) -> None:
        """Apply a URL query: plan keys to the plan, then meter/example/test_size.

        Raises :class:`InputError` (and changes nothing) when a value is invalid.
        """
        from urllib.parse import parse_qsl

        if isinstance(query, str):
            query = dict(parse_qsl(query.lstrip("?"), keep_blank_values=True))
        q = {k: (v[-1] if isinstance(v, list) else v) for k, v in query.items()}
        q = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in q.items()}
        plan_values = MeterPlan.parse_query(q)
        meter = q.get("meter", None)
        if meter is not None and meter not in METERS:
            raise InputError("meter", "'incremental' or 'regular'", meter)
        example = q.get("example") or None
        if example is not None and example not in EXAMPLES:
            raise InputError("example", "one of " + ", ".join(EXAMPLES), example)
        n = check_int("test_size", q["test_size"], minimum=1) if q.get("test_size") else None
        if plan_values:
            self.plan.param.update(**plan_values)
        if meter is not None:
            self.variant = meter
        if example is not None and example != self.example:
            self.load_example(example)
        if n is not None:
            self._n_from_trace = False
            self.test_size = n
