"""The ease.ml/ci param model: what a team chose, and everything derived from it, live.

:class:`CIModel` (no widgets, no Panel) holds the inputs of :class:`~.inputs.CIInputs`
and recomputes the plan, the curves and the replay of a commit trace when they change.
Derived outputs are read-only (``constant=True``; only the model sets them, inside
``param.edit_constant``).  Invalid input sets :attr:`CIModel.error` and keeps the last
good results.

Cost on a server: the plan and Hoeffding's curves take milliseconds.  A trace replay small
enough (:data:`SYNC_REPLAY_CELLS`) runs at once; a larger one runs in a worker thread (an
``async`` step scheduled by ``param``'s executor, which Panel points at the server's
event loop), with :attr:`CIModel.replaying` set meanwhile, and a result overtaken by a
newer input is dropped.  Under the exact binomial bound the table's counts are one
background search (:class:`~.exact.ExactCounts`) and the curves' exact counts another,
:attr:`CIModel.exact_points` values of H computed one after another through the runtime
(:class:`~meter_dashboard.core.runtime.Latest`: off the loop once :meth:`CIModel.work_in_background`
is called, newest inputs winning), Hoeffding's curves kept beside them.  Without a running
event loop (scripts, the CLI, tests) every step completes before the assignment returns.

References
----------
.. [1] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Sections 2.2 (the script), 3-4 (the counts), 3.2-3.5
   (evaluation and alarms), Figure 2, Figure 5.
"""
from __future__ import annotations

import time

import numpy as np
import param

from ..core.runtime import Latest, in_thread, running_loop
from ..core.validation import InputError
from .exact import ExactCounts
from .grammar import ConditionError, parse_condition
from .inputs import ADAPTIVITIES, DEFAULT_CONDITION, CIInputs
from .plan import ci_curves, ci_exact_point, ci_labels, exact_curve_order
from .replay import replay_ci
from .trace import CITrace, example_trace, read_ci_trace

__all__ = ["PRESETS", "SYNC_REPLAY_CELLS", "CIModel"]

def _preset(condition: str, reliability: float = 0.9999, adaptivity: str = "full", mode: str = "fp-free",
            steps: int = 32, p: float | None = None) -> dict:
    """One of the paper's settings as CIModel parameter values (p: a difference bound known in advance)."""
    values = dict(condition=condition, reliability=reliability, adaptivity=adaptivity, mode=mode, steps=steps,
                  difference_bound=p)
    if p is not None:
        values["check_difference_bound"] = False
    return values


#: The paper's settings, by where they appear (name -> CIModel parameter values).
PRESETS = {
    "Pattern 1, Section 4.1.1 (about 67K labels, 6,771 per commit)": _preset(DEFAULT_CONDITION),
    "Section 2.2 script: n - o > 0.02 +/- 0.01, full": _preset("n - o > 0.02 +/- 0.01"),
    "Section 3.3: n > 0.8 +/- 0.05, full (6,279)": _preset("n > 0.8 +/- 0.05", mode="fn-free"),
    "Public calculator: n - o > 0.1 +/- 0.1, 0.99, full (5,496)": _preset("n - o > 0.1 +/- 0.1", 0.99),
    "F3 milestones: n - o > 0.1 +/- 0.01, firstChange": _preset("n - o > 0.1 +/- 0.01", adaptivity="firstChange"),
    "F4 no big changes: d < 0.1 +/- 0.01, fn-free": _preset("d < 0.1 +/- 0.01", mode="fn-free"),
    "Figure 5 adaptive: n - o > 0.018 +/- 0.022, p = 0.1 known (5,204)": _preset(
        "n - o > 0.018 +/- 0.022", 0.998, steps=7, p=0.1),
    "Figure 5 non-adaptive: n - o > 0.02 +/- 0.02, p = 0.1 known (4,713)": _preset(
        "n - o > 0.02 +/- 0.02", 0.998, adaptivity="none", steps=7, p=0.1),
}

#: Seconds of exact curve work gathered into one update of the curves (fewer, larger messages to a page).
CURVE_BATCH_SECONDS = 0.25

#: A trace whose replay touches at most this many cells (commits, or examples x models) is
#: replayed at once (well under 50 ms); a larger one in a worker thread.
SYNC_REPLAY_CELLS = 200_000


def _cells(trace: CITrace) -> int:
    if trace.kind == "predictions":
        return len(trace.labels) * (len(trace) + 1)
    return 20 * len(trace)


class CIModel(CIInputs):
    """What a team chose for its ease.ml/ci test, and everything derived from it, live.

    Inputs are the parameters of :class:`~.inputs.CIInputs` plus :attr:`trace`.
    :attr:`result` (a :class:`~.plan.CIResult`), :attr:`curves` and :attr:`replay` are
    recomputed when an input changes; they and the error fields are read-only.  A
    condition that does not parse (or another invalid combination) sets :attr:`error`
    (and :attr:`error_column` for the condition) and keeps the previous results.

    References
    ----------
    Renggli et al. 2019, Sections 2.2-4 (see :mod:`meter_dashboard.ci`).

    Examples
    --------
    >>> m = CIModel(condition="n - o > 0.1 +/- 0.1", reliability=0.99, adaptivity="full", steps=32)
    >>> m.result.labels
    5496
    >>> m.condition = "n - o >> 0.1"
    >>> m.error.split(":")[0], m.result.labels
    ('column 8', 5496)
    """

    trace = param.Parameter(default=None, doc="The CITrace to replay (None: no replay).")

    # ---- derived (read-only: set by the model only)
    parsed = param.Parameter(default=None, constant=True, doc="The last valid parsed Condition.")
    result = param.Parameter(default=None, constant=True, doc="The last valid CIResult.")
    curves = param.Dict(default={}, constant=True, doc=(
        "{'steps': H array, adaptivity: {'baseline', 'optimized'} arrays, 'bound': the bound drawn}; under the "
        "binomial bound the arrays hold the exact counts computed so far (NaN elsewhere), 'hoeffding' the paper's "
        "counts at every H, 'computed' and 'planned' how many values of H are (to be) exact."))
    replay = param.Parameter(default=None, constant=True,
                             doc="The CIReplay of the trace under the current condition.")
    replaying = param.Boolean(default=False, constant=True, doc="A large trace is being replayed in a worker.")
    error = param.String(default="", constant=True, doc="Why the current inputs are not valid ('' when they are).")
    error_column = param.Integer(default=None, allow_None=True, constant=True,
                                 doc="The condition's column at fault, if any.")
    trace_error = param.String(default="", constant=True,
                               doc="Why the last trace could not be read or replayed.")
    exact = param.ClassSelector(class_=ExactCounts, constant=True,
                                doc="The search of the exact binomial counts (bound='binomial'): status, cancel.")
    exact_points = param.Integer(default=24, bounds=(2, 400), doc=(
        "How many values of H get an exact binomial count on the curves (each is a search; Hoeffding's curves "
        "are drawn at every H)."))
    curving = param.Boolean(default=False, constant=True, doc="The exact curves are being computed.")

    def __init__(self, **params):
        params.setdefault("exact", ExactCounts())
        super().__init__(**params)
        self._last_error = None
        self._latest = Latest()  # replays of large traces, the newest inputs winning
        # the exact curves, point by point; off the loop once a page or kernel calls work_in_background
        self._curve_work = Latest(on_busy=lambda busy: self._set(curving=busy))
        self._curve_key = None
        self.exact.param.watch(self._on_exact, ["running"])
        self._recompute()
        if self.error:
            raise self._last_error

    # ------------------------------------------------------------------ traces
    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)

    def load_trace(self, source, name: str = "") -> bool:
        """Read a trace (path, CSV text/bytes, DataFrame); on error set :attr:`trace_error`, keep the old one."""
        try:
            trace = read_ci_trace(source)
        except (InputError, OSError, UnicodeDecodeError) as exc:
            return self._refuse_trace(exc, name)
        return self._use_trace(trace, name)

    async def load_trace_async(self, source, name: str = "") -> bool:
        """:meth:`load_trace` with the reading (up to 10 MiB of CSV) in a worker thread."""
        try:
            trace = await in_thread(read_ci_trace, source)
        except (InputError, OSError, UnicodeDecodeError) as exc:
            return self._refuse_trace(exc, name)
        return self._use_trace(trace, name)

    def _refuse_trace(self, exc: Exception, name: str) -> bool:
        if isinstance(exc, InputError):
            self._set(trace_error=f"{name + ': ' if name else ''}{exc}")
        else:
            self._set(trace_error=f"cannot read {name or 'the trace'}: {exc}")
        return False

    def _use_trace(self, trace: CITrace, name: str) -> bool:
        self.trace = trace.named(name) if name else trace
        return True

    def load_example(self, name: str) -> None:
        """Replay a shipped example (``'ci_commits.csv'``, ``'ci_predictions.csv'``), or no trace for ``''``."""
        self.trace = example_trace(name) if name else None

    def apply_preset(self, name: str) -> None:
        """Load one of :data:`PRESETS` (the paper's settings)."""
        if name not in PRESETS:
            raise InputError("preset", "one of " + ", ".join(PRESETS), name)
        values = {"check_difference_bound": True, **PRESETS[name]}
        self.param.update(**values)

    def curve_axis(self) -> np.ndarray:
        """The H values of the curves: 1..max(64, 2H) (at most 4,096; 400 log-spaced points past 512)."""
        top = int(min(max(64, 2 * self.steps), 4096))
        if top <= 512:
            return np.arange(1, top + 1)
        return np.unique(np.round(np.geomspace(1, top, 400)).astype(int))

    # ------------------------------------------------------------------ derived values
    def _settings(self, cond) -> dict:
        return dict(condition=cond, reliability=self.reliability, adaptivity=self.adaptivity, steps=self.steps,
                    mode=self.mode, difference_bound=self.difference_bound,
                    check_difference_bound=self.check_difference_bound, seconds_per_label=self.seconds_per_label,
                    labelers=self.labelers)

    @param.depends("condition", "reliability", "adaptivity", "mode", "steps", "difference_bound",
                   "check_difference_bound", "seconds_per_label", "labelers", "bound", "exact_points", watch=True)
    def _recompute(self):
        try:
            cond = parse_condition(self.condition)
            result = ci_labels(**self._settings(cond))
            axis = self.curve_axis()
            key = (cond.canonical(), self.reliability, self.mode, self.difference_bound, self.check_difference_bound,
                   int(axis[-1]), self.bound, self.exact_points)
            curves = self.curves if key == self._curve_key and self.curves else self._hoeffding_curves(cond, axis)
        except InputError as exc:
            self._last_error = exc
            self._set(error=str(exc), error_column=exc.column if isinstance(exc, ConditionError) else None)
            return
        self._set(parsed=cond, result=result, curves=curves, error="", error_column=None)
        if key != self._curve_key:
            self._curve_key = key
            self._start_exact_curves(cond, axis)
        if self.bound == "binomial":  # Hoeffding's counts now, the exact ones when the search ends
            self._search_exact(self._settings(cond))

    # ------------------------------------------------------------------ the curves
    def _hoeffding_curves(self, cond, axis) -> dict:
        """Hoeffding's curves at every H; under the binomial bound, the exact ones still to compute (NaN)."""
        curves = ci_curves(cond, self.reliability, axis, self.mode, difference_bound=self.difference_bound,
                           check_difference_bound=self.check_difference_bound)
        if self.bound == "hoeffding":
            return {**curves, "steps": axis, "bound": "hoeffding"}
        exact = {a: {**c, "baseline": np.full(axis.shape, np.nan),
                     "optimized": None if c["optimized"] is None else np.full(axis.shape, np.nan)}
                 for a, c in curves.items()}
        return {**exact, "steps": axis, "bound": "binomial", "hoeffding": curves, "computed": 0,
                "planned": len(self._exact_order(axis))}

    def _exact_order(self, axis) -> list[int]:
        """The indices of ``axis`` that get exact counts, the chosen H first."""
        return exact_curve_order(axis.size, int(np.argmin(np.abs(axis - self.steps))), self.exact_points)

    def _start_exact_curves(self, cond, axis) -> None:
        """Compute the exact curves' points (newest inputs win); nothing to do under Hoeffding's bound."""
        work = self._curve_work
        if self.bound != "binomial":
            work.cancel()
            return
        order = self._exact_order(axis)
        settings = dict(condition=cond, reliability=self.reliability, mode=self.mode,
                        difference_bound=self.difference_bound, check_difference_bound=self.check_difference_bound)

        def points(stopped):
            batch, started = {}, time.perf_counter()
            for i in order:
                if stopped():
                    return
                batch[i] = ci_exact_point(steps=int(axis[i]), **settings)
                if time.perf_counter() - started >= CURVE_BATCH_SECONDS:
                    yield batch
                    batch, started = {}, time.perf_counter()
            if batch:
                yield batch

        work.stream(points, self._add_exact_points, on_error=lambda exc: self._set(error=f"The exact curves "
                                                                                      f"stopped: {exc}"))

    def _add_exact_points(self, batch: dict) -> None:
        """Fold a batch of exact points ({index: ci_exact_point}) into :attr:`curves` (a new dict: watchers see it)."""
        curves = dict(self.curves)
        if curves.get("bound") != "binomial":
            return
        for a in ADAPTIVITIES:
            entry = dict(curves[a])
            for key in ("baseline", "optimized"):
                if entry[key] is None:
                    continue
                values = np.array(entry[key], dtype=float)
                for i, point in batch.items():
                    values[i] = point[a][key]
                entry[key] = values
            curves[a] = entry
        curves["computed"] = curves["computed"] + len(batch)
        self._set(curves=curves)

    def work_in_background(self, dispatch=None) -> None:
        """Compute the exact curves off the event loop from now on (a served page, a Jupyter kernel).

        ``dispatch(fn)`` runs ``fn`` where the model lives (a page: the session's next tick under
        its document lock); Hoeffding's curves are published at once, the exact points as they come.
        """
        self._curve_work.background = True
        if dispatch is not None:
            self._curve_work.dispatch = dispatch

    # ------------------------------------------------------------------ the exact binomial counts
    def _search_exact(self, settings: dict) -> None:
        self._wanted = settings
        if self.exact.running:
            self.exact.cancel()  # restarted with the wanted settings when it stops (_on_exact)
            return
        self.exact.start(settings)
        param.parameterized.async_executor(self.exact.arun)  # at once without an event loop

    def _on_exact(self, event) -> None:
        if event.new:  # started
            return
        wanted = getattr(self, "_wanted", None)
        if self.bound != "binomial" or wanted is None or self.parsed is None:
            return
        if self.exact.settings != wanted:
            self._search_exact(wanted)
        elif self.exact.error:
            self._set(error=self.exact.error, error_column=None)
        elif self.exact.result is not None and self.exact.status.startswith("exact"):
            self._set(result=self.exact.result)

    def _replay_arguments(self) -> dict:
        return dict(mode=self.mode, steps=self.steps, reliability=self.reliability, adaptivity=self.adaptivity,
                    difference_bound=self.difference_bound, check_difference_bound=self.check_difference_bound,
                    alarm_on=self.alarm_on, plan=self.result)

    @param.depends("trace", "alarm_on", "result", watch=True, on_init=False)
    def _replay(self):
        latest = self._latest
        if self.trace is None or self.parsed is None:
            latest.cancel()
            self._set(replay=None, trace_error="", replaying=False)
            return
        condition, trace, arguments = self.parsed, self.trace, self._replay_arguments()
        latest.background = _cells(trace) > SYNC_REPLAY_CELLS  # a large trace: off the loop when one runs
        if latest.background and running_loop() is not None:
            self._set(replaying=True)
        latest.compute(lambda: replay_ci(condition, trace, **arguments), self._replayed)

    def _replayed(self, outcome) -> None:
        if isinstance(outcome, InputError):
            self._set(trace_error=str(outcome), replay=None, replaying=False)
        else:
            self._set(replay=outcome, trace_error="", replaying=False)

    async def settled(self) -> None:
        """Wait until the background replay and exact curves of the current inputs are done (tests, notebooks)."""
        await self._latest.settled()
        await self._curve_work.settled()
