"""A replay session: the team's plan, a loaded trace, and where the replay stands.

Two ways in, one computation (:mod:`meter_dashboard.session.replay`):

- :func:`replay` - a function for scripts, notebooks and the CLI, returning a
  :class:`ReplayResult` (readable repr, ``to_dict()``, ``to_columns()``, ``to_frame()``).
- :class:`SessionModel` - a ``param.Parameterized`` model (no widgets) for the session
  page and notebooks.  It *holds* the planner's :class:`~meter_dashboard.meter.model.MeterPlan`
  (one source of truth for ranges, epsilon, delta, steps, tenants and reverts), the
  loaded :class:`~meter_dashboard.session.trace.Trace` and the replay position.

Defaults are defined once: the meter settings are :class:`MeterPlan`'s parameter defaults
(:func:`replay_defaults`) and T is the trace's number of steps - on the page, in a notebook
and on the command line.  On the page T follows each loaded trace until the URL, the person
or a given plan fixes it (:attr:`SessionModel.steps_source` says which); while it follows the
trace every output says so, and with the test set's size n the replay answers how many steps
its labels support (:class:`~meter_dashboard.session.replay.StepsLeft`).  The per-model bound
is the plan's (:attr:`SessionModel.bound`, from the planner's link): the counts, the steps left
and the guarantee use it.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl

import numpy as np
import param

from ..core.files import MAX_FILE_BYTES, human_bytes
from ..core.runtime import BackgroundJob, Latest
from ..core.validation import InputError, check_int
from ..meter.model import BOUNDS, MeterPlan
from ..meter.stages import check_bound
from .replay import (
    MAX_BUDGET_STEPS,
    METER_TITLES,
    METERS,
    Alarm,
    ReplayResult,
    replay,
    replay_defaults,
    replay_with,
    signal_of,
)
from .trace import EXAMPLES, Trace, load_example, read_trace
from .trace_formats import TraceProblems

__all__ = ["replay", "ReplayResult", "Alarm", "SessionModel", "PreparedTrace", "TraceLoad", "problems_of", "METERS",
           "METER_TITLES", "MAX_BUDGET_STEPS", "BACKGROUND_STEPS", "STEPS_SOURCES", "signal_of", "replay_defaults"]

#: Traces longer than this are replayed by the model's runner (a worker thread on a served page).
BACKGROUND_STEPS = 20_000

#: Where T comes from: the loaded trace's length, the page's link, the person, the plan given,
#: or the steps per tenant (their sum).
STEPS_SOURCES = {
    "trace": "the loaded trace's number of steps (T follows each new trace)",
    "link": "the link (kept for every trace)",
    "user": "set by you (kept for every trace)",
    "plan": "the plan's T (kept for every trace)",
    "tenant_steps": "the sum of the steps per tenant",
}


@dataclass(frozen=True)
class PreparedTrace:
    """A trace read (and replayed) away from the page's event loop, ready for :meth:`SessionModel.apply`."""

    trace: Trace
    example: str | None
    result: ReplayResult | None
    plan_key: tuple | None


class SessionModel(param.Parameterized):
    """A replay session: the team's plan, a loaded trace, and where the replay stands.

    The plan is the planner's own :class:`~meter_dashboard.meter.model.MeterPlan` (held, not
    copied): change ``session.plan.delta`` and the replay follows.  Loading a bad trace
    sets :attr:`error` and keeps the previous trace and replay; an invalid plan keeps the
    last replay (the plan's own ``error`` says why).  :attr:`result`, :attr:`trace`,
    :attr:`error`, :attr:`status` and :attr:`steps_source` are outputs (read-only).

    Parameters
    ----------
    trace : anything :func:`~meter_dashboard.session.trace.read_trace` accepts, optional
    plan : MeterPlan or mapping, optional
        A MeterPlan (its T is kept) or a mapping of its parameters (T follows the trace
        unless the mapping gives ``steps``).  Default: :func:`replay_defaults`.

    References
    ----------
    Hubis, Wu & Zhang (2019), ease.ml/meter, Sections 3.1-3.4 and Figures 1-3.

    Examples
    --------
    >>> s = SessionModel(example="emocontext")
    >>> s.current["step"], s.current["signal"], s.current["incremental_signal"], s.plan.steps
    (8, 3, 3, 8)
    """

    plan = param.ClassSelector(class_=MeterPlan, doc="The meter's settings (the planner's model).")
    variant = param.Selector(default="incremental", objects=list(METERS),
                             doc="The meter the team runs: its eps and label count are the ones checked.")
    example = param.Selector(default=None, objects=[None, *EXAMPLES], allow_None=True, constant=True,
                             doc="The shipped example currently loaded (None for an uploaded trace).")
    test_size = param.Integer(default=None, allow_None=True, bounds=(1, None),
                              doc="n = |D_test|: the labels the test set has (a JSON trace may carry it).")
    bound = param.Selector(default="hoeffding", objects=list(BOUNDS), doc=(
        "The per-model bound of the replay's counts: the plan's ('hoeffding', the paper's, or 'binomial', exact "
        "binomial tails for 0/1 losses)."))
    max_error_rate = param.Number(default=None, allow_None=True, bounds=(0, 0.5), inclusive_bounds=(False, False),
                                  doc="With the binomial bound: every model submitted errs at most this (or None).")
    position = param.Integer(default=0, bounds=(0, None), doc="0-based position of the step shown.")

    # ---- outputs (read-only)
    trace = param.ClassSelector(class_=Trace, default=None, allow_None=True, constant=True, doc="The loaded trace.")
    result = param.Parameter(default=None, constant=True, doc="The ReplayResult of the current trace and plan.")
    error = param.String(default="", constant=True, doc="Why the last trace or link was refused ('' when it was not).")
    problems = param.List(default=[], constant=True, doc=(
        "The bad cells of the last refused trace, one message each (up to MAX_PROBLEMS; [] for a single problem)."))
    status = param.String(default="", constant=True, doc="What was loaded last, in a few words.")
    steps_source = param.Selector(default="trace", objects=list(STEPS_SOURCES), constant=True,
                                  doc="Where T comes from (see STEPS_SOURCES).")

    def __init__(self, trace=None, plan=None, **params):
        example = params.pop("example", None)
        # the trace first: a plan whose T follows it is made with that T (its counts computed once)
        loaded = read_trace(trace) if trace is not None else (load_example(example) if example is not None else None)
        follow = {"steps": max(len(loaded), 1)} if loaded is not None else {}
        source = "plan" if isinstance(plan, MeterPlan) else "trace"
        if isinstance(plan, MeterPlan) and plan.bound != "hoeffding":  # the plan's bound, replayed
            params.setdefault("bound", plan.bound)
            params.setdefault("max_error_rate", plan.max_error_rate)
        if isinstance(plan, Mapping):
            source = "plan" if "steps" in plan or plan.get("tenant_steps") else "trace"
            plan = dict(plan)
            for key in ("bound", "max_error_rate"):  # the session's (the held plan stays quick: Hoeffding's)
                if key in plan:
                    params.setdefault(key, plan.pop(key))
            plan = MeterPlan(**{**replay_defaults(), **(follow if source == "trace" else {}), **plan})
        elif plan is None:
            plan = MeterPlan(**replay_defaults(), **follow)
        self._n_from_trace = False
        self._quiet = 0  # > 0 while the model changes the plan or loads a trace itself
        self._background = False
        #: long replays of the newest settings (off the loop once a page calls :meth:`work_in_background`)
        self._latest = Latest()
        if params.get("bound", "hoeffding") != "binomial":
            params["max_error_rate"] = None
        check_bound(params.get("bound", "hoeffding"), params.get("max_error_rate"))
        super().__init__(plan=plan, **params)
        self._set(steps_source=source)
        if loaded is not None:
            self.apply(self.prepare_trace(loaded, None if trace is not None else example))

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)

    # -- loading: prepare (anywhere, e.g. a worker thread) then apply (where the model lives)
    def prepare(self, source, *, name: str | None = None, format: str | None = None,
                max_bytes: int = MAX_FILE_BYTES) -> PreparedTrace:
        """Read ``source`` and replay it with the current plan; changes nothing (thread-safe).

        Raises :class:`InputError` for a bad trace.  Hand the result to :meth:`apply`.
        """
        return self._prepared(read_trace(source, name=name, format=format, max_bytes=max_bytes), None)

    def prepare_example(self, key: str) -> PreparedTrace:
        """:meth:`prepare` for a shipped example (see :data:`meter_dashboard.session.trace.EXAMPLES`)."""
        return self._prepared(load_example(key), key)

    def prepare_trace(self, trace: Trace, example: str | None = None) -> PreparedTrace:
        """:meth:`prepare` for a trace already read (replayed with the current plan; changes nothing)."""
        return self._prepared(trace, example)

    def _plan_key(self, steps=None) -> tuple:
        p = self.plan
        return (id(p), tuple(p.ranges), tuple(p.epsilon), p.delta, p.steps if steps is None else steps, p.tenants,
                tuple(p.tenant_steps), tuple(p.reverts), self.variant, self.bound, self.max_error_rate)

    def replay_values(self, steps: int | None = None) -> dict:
        """The settings a replay uses (plain values: a worker thread may use them while the plan changes)."""
        values = {k: getattr(self.plan, k) for k in ("ranges", "epsilon", "delta", "steps", "tenants",
                                                     "tenant_steps", "reverts")}
        if steps is not None:
            values["steps"] = steps
        values["bound"] = self.bound
        values["max_error_rate"] = self.max_error_rate if self.bound == "binomial" else None
        return values

    @property
    def steps_given(self) -> bool:
        """False while T follows the trace (nobody gave one): the replay then says T is the trace's length."""
        return self.steps_origin != "trace"

    def _prepared(self, trace: Trace, example) -> PreparedTrace:
        key = self._plan_key(steps=self._steps_for(trace))
        n, _ = self._test_size_for(trace)
        result = None
        if not self.plan.error:
            try:
                result = replay_with(trace.with_test_size(n), self.replay_values(key[4]), self.variant,
                                     steps_given=self.steps_given)
            except InputError:
                result = None  # the plan cannot take this trace's T: apply() shows the plan's message
        return PreparedTrace(trace=trace, example=example, result=result, plan_key=key)

    def _steps_for(self, trace: Trace) -> int:
        """T for ``trace``: its length when T follows the trace, else the plan's."""
        if self.steps_source == "trace" and not self.plan.tenant_steps:
            return max(len(trace), 1)
        return int(self.plan.steps)

    def _test_size_for(self, trace: Trace) -> tuple:
        """(n, whether it came from the trace): a trace's own n wins; a typed n stays across traces."""
        if trace.test_size is not None:
            return trace.test_size, True
        if self._n_from_trace:  # the previous n described the previous trace's test set
            return None, False
        return self.test_size, False

    def apply(self, prepared: PreparedTrace) -> bool:
        """Show a prepared trace: T follows it (unless fixed), the replay, the last step."""
        trace = prepared.trace
        n, from_trace = self._test_size_for(trace)
        kind = "synthetic example" if trace.synthetic else ("example" if prepared.example else "trace")
        self._quiet += 1
        self._latest.cancel()  # a replay under way belongs to the trace shown before
        try:
            if self._steps_for(trace) != self.plan.steps:
                self.plan.steps = self._steps_for(trace)  # the plan recomputes its counts
            result = prepared.result if prepared.plan_key == self._plan_key() else None
            if result is None and not self.plan.error:
                result = replay_with(trace.with_test_size(n), self.replay_values(), self.variant,
                                     steps_given=self.steps_given)
            self._n_from_trace = from_trace
            self.param.position.bounds = (0, max(len(trace) - 1, 0))
            with param.edit_constant(self):
                self.param.update(trace=trace, example=prepared.example, test_size=n, result=result, error="", problems=[],
                                  position=len(trace) - 1,  # where the team stands now
                                  status=f"Loaded {kind} {trace.name!r}: {len(trace):,} steps.")
        finally:
            self._quiet -= 1
        return True

    def load(self, source, *, name: str | None = None, format: str | None = None,
             max_bytes: int = MAX_FILE_BYTES) -> bool:
        """Load a trace (path, bytes, file object, records, DataFrame or Trace).

        Returns True on success.  On failure :attr:`error` holds the message and the
        current trace (and its replay) stay.
        """
        try:
            prepared = self.prepare(source, name=name, format=format, max_bytes=max_bytes)
        except InputError as exc:
            self.refuse(str(exc), problems_of(exc))
            return False
        return self.apply(prepared)

    def load_example(self, key: str) -> bool:
        """Load a shipped example (see :data:`meter_dashboard.session.trace.EXAMPLES`)."""
        try:
            prepared = self.prepare_example(key)
        except InputError as exc:
            self.refuse(str(exc))
            return False
        return self.apply(prepared)

    def refuse(self, message: str, problems=()) -> None:
        """Record why an input (an upload, a link) was refused (``problems``: its bad cells); the trace and replay stay."""
        self._set(error=message, problems=list(problems))

    # -- T: follows the trace until fixed
    @property
    def steps_origin(self) -> str:
        """Where the current T comes from: :attr:`steps_source`, or ``'tenant_steps'`` when they fix it."""
        return "tenant_steps" if self.plan.tenant_steps else self.steps_source

    def follow_trace(self) -> None:
        """Let T follow the loaded trace's length again (and set it now)."""
        self._set(steps_source="trace")
        if self.trace is not None and not self.plan.tenant_steps and self.plan.steps != len(self.trace):
            self._quiet += 1
            try:
                self.plan.steps = len(self.trace)
            finally:
                self._quiet -= 1
            self._replay()

    @param.depends("plan.steps", watch=True)
    def _steps_typed(self):
        if not self._quiet and self.steps_source == "trace":
            self._set(steps_source="user")

    @param.depends("plan", watch=True)
    def _plan_given(self):
        self._set(steps_source="plan")

    # -- the replay
    # the ranges too: a change of ranges alone leaves the counts (and a plan without a budget its cached result) as they were
    @param.depends("plan.result", "plan.ranges", "variant", "test_size", "bound", "max_error_rate", "steps_source",
                   watch=True)
    def _replay(self):
        if self.trace is None or self.plan.error or self._quiet:
            return
        trace, variant, given = self.trace.with_test_size(self.test_size), self.variant, self.steps_given
        latest = self._latest
        # long traces and the exact bound's counts (up to seconds) go to a worker on a served page
        latest.background = self._background and (len(trace) > BACKGROUND_STEPS or self.bound != "hoeffding")
        values = self.replay_values()  # plain values: the plan may change meanwhile
        # a T the replay cannot take gives an InputError: the last replay stays and the page says why
        latest.compute(lambda: replay_with(trace, values, variant, steps_given=given), self._replayed)

    def work_in_background(self, dispatch=None) -> None:
        """Replay long traces off the event loop from now on (a served page); ``dispatch`` applies the result."""
        self._background = True
        if dispatch is not None:
            self._latest.dispatch = dispatch

    async def settled(self) -> None:
        """Wait until a background replay of the current settings is done (tests, notebooks)."""
        await self._latest.settled()

    def _replayed(self, result) -> None:
        if isinstance(result, InputError):
            self.refuse(str(result))
        elif result is not None:
            self._set(result=result)

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

    def next_alarm(self) -> bool:
        """Show the next step with an alarm (after the one shown); False when there is none."""
        return self.result is not None and self._move_to_next(self.result.alarm_positions)

    def next_change(self) -> bool:
        """Show the next step whose signal (the chosen meter's) differs from the one before; False when none."""
        return self.result is not None and self._move_to_next(self.result.change_positions)

    def has_next(self, kind: str) -> bool:
        """Whether :meth:`next_alarm` (``kind='alarm'``) or :meth:`next_change` (``'change'``) would move."""
        if self.result is None:
            return False
        positions = self.result.alarm_positions if kind == "alarm" else self.result.change_positions
        return bool(positions.size) and int(positions[-1]) > self.position

    def _move_to_next(self, positions: np.ndarray) -> bool:
        k = int(np.searchsorted(positions, self.position, side="right"))
        if k >= positions.size:
            return False
        self.position = int(positions[k])
        return True

    def jump_to_step(self, step: int) -> None:
        """Show step number ``step`` (InputError if the trace has no such step)."""
        if self.result is None:
            raise InputError("step", "a step of a loaded trace", step)
        self.position = self.result.index_of(check_int("step", step, minimum=0))

    # -- URL state (the planner's keys plus the session's own)
    SESSION_KEYS = ("meter", "example", "test_size", "step")
    #: The planner's keys for the per-model bound: the session replays with it and passes it back.
    BOUND_KEYS = MeterPlan.BOUND_QUERY_KEYS
    QUERY_KEYS = (*MeterPlan.QUERY_KEYS, *BOUND_KEYS, *SESSION_KEYS)

    def to_query(self) -> dict:
        """The plan's query keys, the bound, ``meter``, ``example``, ``test_size``, ``step``.

        ``steps`` is left out while T follows the trace, so a link keeps following it; ``step``
        is left out at the last step (where a loaded trace opens).
        """
        q = {**self.plan.to_query(), **self.bound_query()}
        if self.steps_origin == "trace":
            q.pop("steps", None)
        if self.variant != "incremental":
            q["meter"] = self.variant
        if self.example is not None:
            q["example"] = self.example
        if self.test_size is not None and not (self._n_from_trace and self.example is not None):
            q["test_size"] = str(self.test_size)
        if self.result is not None and self.position < len(self.result) - 1:
            q["step"] = str(int(self.result.trace.steps[self.position]))
        return q

    def bound_query(self) -> dict:
        """``bound`` and ``max_error_rate`` as the planner's link spells them ({} for Hoeffding's, the default)."""
        if self.bound == "hoeffding":
            return {}
        q = {"bound": self.bound}
        if self.max_error_rate is not None:
            q["max_error_rate"] = f"{self.max_error_rate:g}"
        return q

    def planner_query(self) -> dict:
        """The query of the planner link: every setting, the bound, and the test set's n as the planner's budget."""
        q = {**self.plan.to_query(), **self.bound_query()}
        if self.test_size is not None:
            q["budget"] = str(self.test_size)
        return q

    def update_from_query(self, query) -> None:
        """Apply a URL query: plan keys to the plan, the bound, then meter/example/test_size, then the step shown.

        A ``steps`` key fixes T for every trace loaded afterwards.  The planner's ``bound`` and
        ``max_error_rate`` set the replay's bound (a link without them keeps it).  Raises
        :class:`InputError` (and changes nothing) when a value is invalid; a ``step`` the trace
        does not have raises after the rest was applied.
        """
        if isinstance(query, str):
            query = dict(parse_qsl(query.lstrip("?"), keep_blank_values=True))
        q = {k: (v[-1] if isinstance(v, list) else v) for k, v in query.items()}
        q = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in q.items()}
        plan_values = MeterPlan.parse_query({k: v for k, v in q.items() if k not in self.BOUND_KEYS})
        if "steps" in plan_values:
            plan_values["steps"] = check_int("steps", plan_values["steps"], minimum=1, maximum=MAX_BUDGET_STEPS)
        meter = q.get("meter", None)
        if meter is not None and meter not in METERS:
            raise InputError("meter", "'incremental' or 'regular'", meter)
        example = q.get("example") or None
        if example is not None and example not in EXAMPLES:
            raise InputError("example", "one of " + ", ".join(EXAMPLES), example)
        n = check_int("test_size", q["test_size"], minimum=1) if q.get("test_size") else None
        if n is None and plan_values.get("budget") is not None:  # the planner's link: its budget is the labels we have
            n = int(plan_values["budget"])
        bound = self._bound_of(q) if any(k in q for k in self.BOUND_KEYS) else None
        step = check_int("step", q["step"], minimum=0) if q.get("step") else None
        if plan_values:
            self._quiet += "steps" in plan_values
            try:
                self.plan.param.update(**plan_values)
            finally:
                self._quiet -= "steps" in plan_values
            if "steps" in plan_values:
                self._set(steps_source="link")
        if bound is not None:
            self.param.update(**bound)
        if meter is not None:
            self.variant = meter
        if example is not None and example != self.example:
            self.load_example(example)
        if n is not None:
            self._n_from_trace = False
            self.test_size = n
        if "steps" in plan_values and self.trace is not None:
            self._replay()
        if step is not None and self.result is not None:
            try:
                self.position = self.result.index_of(step)
            except InputError as exc:
                raise InputError("step", exc.rule, q["step"]) from None

    def _bound_of(self, q: dict) -> dict:
        """``bound`` and ``max_error_rate`` of a link, validated by the planner's own parser."""
        values = MeterPlan.parse_query({k: q[k] for k in self.BOUND_KEYS if k in q})
        bound = values.get("bound", self.bound)
        rate = values.get("max_error_rate", self.max_error_rate) if bound == "binomial" else None
        check_bound(bound, rate)
        return {"bound": bound, "max_error_rate": rate}

    def apply_link(self, query) -> bool:
        """:meth:`update_from_query` that records a refused link in :attr:`error` instead of raising."""
        try:
            self.update_from_query(query)
        except InputError as exc:
            self.refuse(f"The link's settings were not applied: {exc}")
            return False
        return True


def problems_of(exc: InputError) -> list:
    """The bad cells a refusal names, one message each ([] when it names one problem)."""
    return [str(p) for p in exc.problems] if isinstance(exc, TraceProblems) else []


class TraceLoad(BackgroundJob):
    """Reading and replaying an upload in a worker thread, with progress and cancel.

    ``await TraceLoad(model, data, name=...).arun()`` keeps the server's event loop free
    while a large trace is parsed and replayed; then :meth:`SessionModel.apply` its
    :attr:`prepared` (on the loop), or show its :attr:`error`.
    """

    prepared = param.Parameter(default=None, constant=True, doc="The PreparedTrace once the work is done.")
    problems = param.List(default=[], constant=True, doc="The bad cells of a refused trace (see SessionModel.problems).")

    def __init__(self, model: SessionModel, source, *, name: str | None = None, max_bytes: int = MAX_FILE_BYTES,
                 **params):
        super().__init__(**params)
        self._model, self._source, self._name, self._max_bytes = model, source, name, max_bytes

    def work(self, report, should_stop):
        size = len(self._source) if isinstance(self._source, (bytes, bytearray, str)) else None
        report(0.05, f"reading {self._name or 'the trace'}" + (f" ({human_bytes(size)})" if size else "") + "…")
        try:
            trace = read_trace(self._source, name=self._name, max_bytes=self._max_bytes)
        except InputError as exc:
            self._set(problems=problems_of(exc))
            raise
        self._source = None  # the bytes are not needed any more
        if should_stop():
            return None
        report(0.6, f"replaying {len(trace):,} steps…")
        return self._model.prepare_trace(trace)

    def finish(self, result, cancelled: bool) -> str:
        self._set(prepared=None if cancelled else result)
        return "cancelled" if cancelled or result is None else f"read {len(result.trace):,} steps"
