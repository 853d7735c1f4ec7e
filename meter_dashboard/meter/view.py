"""The planner page: live label counts for every meter variant.

:class:`Planner` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.meter.model.MeterPlan`.
It holds widgets made from the plan's parameters (the per-model bound among them), a results
table with Hoeffding's count beside the chosen bound's, headline numbers, two Bokeh plots
updated in place (their ranges follow the data until the user zooms, then keep the zoom),
the simulation check, the assumptions in words, downloads (CSV, the HTML report) and URL
sharing.  It computes nothing itself: every number comes from the model.

On a served page, and in a Jupyter kernel, the model's slow work (exact binomial counts, the
budget answers, exact curve points) runs in the runtime's worker threads
(:meth:`MeterPlan.work_in_background`, :mod:`meter_dashboard.core.runtime`): Hoeffding's numbers show at once, the rest streams in, and work for inputs changed meanwhile
is dropped.  Elsewhere (a plain script) everything is computed before the constructor returns.  Each update
re-sends only the panes whose markup changed, all in one message (``pn.io.hold``).
"""
from __future__ import annotations

import asyncio
import io
import logging

import pandas as pd
import panel as pn
import param

from ..core.runtime import in_thread
from ..core.validation import InputError, check_int
from ..ui.base import DashboardView
from ..ui.inputs import ListInput, NumberInput
from ..ui.sections import document_dispatch
from ..ui.urlstate import UrlState
from ..ui.style import HTML, error_html, esc
from . import view_html as markup
from .figures import LabelsPlot
from .model import PRESETS, SWEEPS, TENANT_DISCREPANCY, MeterPlan
from .stages import slow_items, with_items
from .view_check import PlanCheckPanel

log = logging.getLogger(__name__)

# Which inputs an engine/model error belongs beside.
_ERROR_GROUPS = {
    "meter": {"epsilon", "ranges", "signals"},
    "delta": {"delta"},
    "steps": {"steps"},
    "tenants": {"tenants", "tenant_steps"},
    "reverts": {"reverts"},
    "bound": {"bound", "max_error_rate"},
    "effort": {"seconds_per_label", "labelers", "cost_per_hour"},
    "budget": {"budget", "labels"},
}

_PRESET_PLACEHOLDER = "Choose a paper setting…"
_BOUND_BUTTONS = {"Hoeffding (paper)": "hoeffding", "Exact binomial": "binomial"}
_SWEEP_BUTTONS = {"δ": "delta", "ε₁": "epsilon", "m": "signals", "tenants": "tenants"}
_URL_KEYS = set(MeterPlan.QUERY_KEYS) | set(MeterPlan.BOUND_QUERY_KEYS)


def _served() -> bool:
    doc = pn.state.curdoc
    return doc is not None and doc.session_context is not None


def _in_event_loop() -> bool:
    """Whether this thread runs an asyncio loop (a Jupyter kernel executing a cell): updates can follow later."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _table_height(rows: int) -> int:
    return min(34 + 30 * rows, 330)


def _meter_frame(plan: MeterPlan) -> pd.DataFrame:
    r = plan.ranges
    n = len(plan.epsilon)
    lower = [r[i] if i < len(r) else float("nan") for i in range(n)]
    upper = [r[i + 1] if i + 1 < len(r) else float("nan") for i in range(n)]
    return pd.DataFrame({"signal": list(range(1, n + 1)), "from": lower, "to": upper, "epsilon": list(plan.epsilon)})


def _sweep_title(parameter: str, steps: int) -> str:
    """Short enough for a phone: the axis label says the rest."""
    return f"Labels against {SWEEPS[parameter].split(' ')[0]} (T = {steps})"


class Planner(DashboardView):
    """Live label-count calculator for every ease.ml/meter variant.

    Parameters
    ----------
    plan : MeterPlan, optional
        The model to drive; by default a new one from the remaining keyword arguments
        (``epsilon``, ``delta``, ``steps``, ``tenants``, ``tenant_steps``, ``reverts``,
        ``bound``, ``max_error_rate``, ...).
    sync_url : bool
        Keep the plan in the page URL's query string (served pages; off in notebooks).

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Planner(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)  # doctest: +SKIP
    >>> md.Planner(bound="binomial", max_error_rate=0.1).report("plan.html")  # doctest: +SKIP
    """

    title = "Planner"
    extensions = ("tabulator",)

    plan = param.ClassSelector(class_=MeterPlan)
    sync_url = param.Boolean(default=False)

    def __init__(self, plan: MeterPlan | None = None, sync_url: bool = False, **params):
        plan_params = {k: params.pop(k) for k in list(params) if k in MeterPlan.param and k != "name"}
        background = _served() or _in_event_loop()
        # the exact bound's slow work starts once it is off the loop (Hoeffding's plan is milliseconds)
        exact = {k: plan_params.pop(k) for k in ("bound", "max_error_rate") if background and k in plan_params}
        if plan is None:
            plan = MeterPlan(**plan_params)
        elif plan_params:
            plan.param.update(**plan_params)
        if background:
            # slow work leaves the event loop free: every session of a server, or a Jupyter kernel's cell
            plan.work_in_background(document_dispatch())
        if exact:
            plan.param.update(**exact)
        super().__init__(plan=plan, sync_url=sync_url, **params)
        self._input_errors: dict[str, str] = {}
        self._applying_preset = False
        self._budget_result = None  # the last result whose budget answers are on screen
        self._budget_timer = False
        self._budget_overdue = None  # the plan (its Hoeffding counts) whose answers are late: show "computing…"
        self._build_widgets()
        self._build_outputs()
        self._build_plots()
        self.check = PlanCheckPanel(self.plan)
        self.plan.param.watch(self._on_outputs, ["result", "error", "error_parameter", "curves", "sweep_curves",
                                                 "work_error"])
        self.plan.param.watch(self._on_meter_inputs, ["epsilon", "ranges"])
        self.plan.param.watch(self._on_bound_inputs, ["bound"])
        self.plan.param.watch(self._on_inputs_changed, list(PRESETS[next(iter(PRESETS))]) + ["ranges"])
        self._on_bound_inputs()
        self._on_result()
        self._on_curves()
        self._on_sweep()
        if sync_url and pn.state.location is not None:
            self._init_url()
            pn.state.onload(self._update_url)

    # ------------------------------------------------------------------ widgets
    def _build_widgets(self):
        p = self.plan
        self.preset = pn.widgets.Select(label="Presets", options=[_PRESET_PLACEHOLDER] + list(PRESETS),
                                        value=_PRESET_PLACEHOLDER, sizing_mode="stretch_width")
        self.preset.param.watch(self._on_preset, "value")

        self.signals = NumberInput(p, "epsilon", label="Signals m", integer=True, getter=lambda plan: plan.signals,
                                   check=lambda text: check_int("Signals m", text, minimum=1, maximum=20),
                                   on_value=p.set_signals, width=110, css_classes=["signals-input"],
                                   description="m: how many signals the meter reports (1 to 20).")
        self.meter_table = pn.widgets.Tabulator(
            _meter_frame(p), show_index=False, sizing_mode="stretch_width", height=_table_height(p.signals),
            editors={"signal": None, "from": None,
                     "to": {"type": "number", "step": 0.001, "min": 0, "max": 1},
                     "epsilon": {"type": "number", "step": 0.001, "min": 0.0001, "max": 0.999}},
            formatters={"from": {"type": "money", "precision": 4, "symbol": ""},
                        "to": {"type": "money", "precision": 4, "symbol": ""},
                        "epsilon": {"type": "money", "precision": 4, "symbol": ""}},
            titles={"signal": "#", "from": "from", "to": "to", "epsilon": "ε"},
            widths={"signal": 48},
            css_classes=["meter-table"], layout="fit_columns",
        )
        self.meter_table.on_edit(self._on_table_edit)
        self.meter_error = HTML("", css_classes=["error-meter", "planner-error"], sizing_mode="stretch_width",
                                margin=(0, 5))

        self.delta = NumberInput(p, "delta", label="δ (failure probability)", css_classes=["delta-input"],
                                 slider={"start": 0.001, "end": 0.2, "step": 0.001})
        self.steps = NumberInput(p, "steps", label="T (development steps)", css_classes=["steps-input"],
                                 slider={"start": 1, "end": 200, "step": 1})
        self.tenants = NumberInput(p, "tenants", label="Tenants", width=110, css_classes=["tenants-input"])
        self.tenant_steps = ListInput(p, "tenant_steps", label="Steps per tenant (optional)", placeholder="e.g. 5,5",
                                      name_in_messages="tenant_steps", on_value=self._set_tenant_steps,
                                      css_classes=["tenant-steps-input"])
        self.tenants_error = HTML("", sizing_mode="stretch_width", margin=(0, 5),
                                  css_classes=["error-tenants", "planner-error"])
        self.revert_budget = NumberInput(p, "revert_budget", label="Reverts B", width=110,
                                         css_classes=["revert-budget-input"])
        self.reverts = ListInput(p, "reverts", label="Revert steps (fixed in advance)", placeholder="e.g. 1,2,3",
                                 name_in_messages="reverts", on_value=self._set_reverts,
                                 css_classes=["reverts-input"], message_classes=["error-reverts"])
        self.reverts_error = HTML("", sizing_mode="stretch_width", margin=(0, 5),
                                  css_classes=["error-reverts", "planner-error"])
        self._build_bound_widgets()

        self.seconds = NumberInput(p, "seconds_per_label", label="Seconds per label", width=140)
        self.labelers = NumberInput(p, "labelers", label="Labelers", width=100)
        self.cost = NumberInput(p, "cost_per_hour", label="Cost per labeler-hour (optional)", placeholder="e.g. 25")
        self.budget = NumberInput(p, "budget", label="Label budget (what we have)", css_classes=["budget-input"])
        self.sweep = pn.widgets.RadioButtonGroup.from_param(p.param.sweep_parameter, label="Second plot against",
                                                            options=_SWEEP_BUTTONS, color="light")
        self.other_errors = HTML("", sizing_mode="stretch_width", margin=(0, 5),
                                 css_classes=["error-other", "planner-error"])

        self.csv_download = pn.widgets.FileDownload(callback=self._csv, filename="meter-plan.csv",
                                                    label="Download table (CSV)", color="primary",
                                                    sizing_mode="stretch_width")
        self.report_download = pn.widgets.FileDownload(callback=self._report_file, filename="meter-plan.html",
                                                       label="Download report (HTML)", color="primary",
                                                       sizing_mode="stretch_width", css_classes=["planner-report"])

    def _build_bound_widgets(self):
        p = self.plan
        self.bound = pn.widgets.RadioButtonGroup.from_param(p.param.bound, options=_BOUND_BUTTONS, color="light",
                                                            sizing_mode="stretch_width", css_classes=["bound-select"])
        self.max_error_rate = NumberInput(p, "max_error_rate", label="Error-rate range a (optional)",
                                          placeholder="e.g. 0.1", css_classes=["max-error-rate-input"],
                                          message_classes=["error-bound"])
        self.bound_note = HTML("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["planner-bound-note"])
        self.bound_error = HTML("", sizing_mode="stretch_width", margin=(0, 5),
                                css_classes=["error-bound", "planner-error"])

    # ------------------------------------------------------------------ outputs
    def _build_outputs(self):
        self.headlines = HTML("", sizing_mode="stretch_width", css_classes=["planner-headlines"])
        self.progress = HTML("", sizing_mode="stretch_width", css_classes=["planner-progress-pane"])
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["planner-table"])
        self.range_check = HTML("", sizing_mode="stretch_width", css_classes=["planner-range-check"])
        self.budget_answers = HTML("", sizing_mode="stretch_width", css_classes=["planner-budget"])
        self.assumptions = HTML("", sizing_mode="stretch_width", css_classes=["planner-assumptions"])

    def _build_plots(self):
        self.curve_plot = LabelsPlot("T (development steps)", "Labels against T (Figs. 8–12)",
                                     marker=self.plan.steps)
        self.curve_pane = pn.pane.Bokeh(self.curve_plot.figure, sizing_mode="stretch_width",
                                        css_classes=["planner-curve"])
        self._sweep_parameter = self.plan.sweep_parameter
        self.sweep_plot = self._sweep_plot(self._sweep_parameter)
        self.sweep_pane = pn.pane.Bokeh(self.sweep_plot.figure, sizing_mode="stretch_width")

    def _sweep_plot(self, parameter: str) -> LabelsPlot:
        return LabelsPlot(SWEEPS[parameter], _sweep_title(parameter, self.plan.steps),
                          log_x=parameter in ("delta", "epsilon"), height=320)

    @property
    def curve_source(self):
        """The labels-against-T plot's data (the chosen bound's counts)."""
        return self.curve_plot.source

    @property
    def sweep_source(self):
        """The second plot's data (the chosen bound's counts)."""
        return self.sweep_plot.source

    # ------------------------------------------------------------------ layout
    def controls(self) -> pn.Column:
        """The input column (the sidebar of the served page)."""
        return pn.Column(
            self.preset,
            HTML("<b>Meter</b> — ranges of empirical overfitting and the ε each signal guarantees",
                 margin=(10, 5, 0, 5)),
            self.signals,
            self.meter_table,
            self.meter_error,
            self.delta,
            self.steps,
            pn.Row(self.tenants, self.tenant_steps, sizing_mode="stretch_width"),
            self.tenants_error,
            pn.Row(self.revert_budget, self.reverts, sizing_mode="stretch_width"),
            self.reverts_error,
            HTML("<b>Per-model bound</b> — Hoeffding's (the paper's) or exact binomial tails (0/1 losses)",
                 margin=(10, 5, 0, 5)),
            self.bound,
            self.max_error_rate,
            self.bound_note,
            self.bound_error,
            HTML("<b>Labeling effort</b>", margin=(10, 5, 0, 5)),
            pn.Row(self.seconds, self.labelers, sizing_mode="stretch_width"),
            pn.Row(self.cost, sizing_mode="stretch_width"),
            self.budget,
            self.other_errors,
            sizing_mode="stretch_width",
        )

    def results(self) -> pn.Column:
        """Headlines, sentence, table, budget answers, plots, the check and assumptions (the main area)."""
        return pn.Column(
            self.headlines,
            self.progress,
            self.table,
            pn.Row(self.csv_download, self.report_download, sizing_mode="stretch_width"),
            self.range_check,
            self.budget_answers,
            self.curve_pane,
            pn.Row(HTML("<b>Second plot against</b>", margin=(12, 5)), self.sweep),
            self.sweep_pane,
            self.check,
            self.assumptions,
            sizing_mode="stretch_width",
        )

    # ------------------------------------------------------------------ input handlers
    def _on_preset(self, event):
        if event.new == _PRESET_PLACEHOLDER:
            return
        self._applying_preset = True
        try:
            self.plan.apply_preset(event.new)
        finally:
            self._applying_preset = False

    def _on_inputs_changed(self, *_):
        """Any change not made by the preset box means the plan is no longer that preset (issue 11 #5)."""
        if not self._applying_preset and self.preset.value != _PRESET_PLACEHOLDER:
            self.preset.value = _PRESET_PLACEHOLDER

    def _on_table_edit(self, event):
        frame = self.meter_table.value
        try:
            to = [float(v) for v in frame["to"]]
            eps = [float(v) for v in frame["epsilon"]]
        except (TypeError, ValueError):
            self._set_input_error("meter", "ranges and ε must be numbers")
            return
        self._set_input_error("meter", "")
        self.plan.param.update(ranges=[0.0] + to, epsilon=eps)

    def _on_meter_inputs(self, *_):
        frame = _meter_frame(self.plan)
        if not frame.equals(self.meter_table.value):
            self.meter_table.value = frame
        self.meter_table.height = _table_height(len(frame))

    def _on_bound_inputs(self, *_):
        exact = self.plan.bound == "binomial"
        self.max_error_rate.text.disabled = not exact
        self.bound_note.object = (
            '<div class="md-note">Exact binomial tails need accuracy-like 0/1 losses. The error-rate range '
            "a must hold for <b>every</b> model the developer might submit, bad ones included (accuracy ≥ 1 − a); "
            "leave it empty when unsure.</div>" if exact else
            '<div class="md-note">The paper\'s bound (every published number). Choose exact binomial for fewer '
            "labels with the same guarantee (0/1 losses).</div>")

    def _set_tenant_steps(self, values):
        with param.parameterized.batch_call_watchers(self.plan):
            if values:
                self.plan.tenants = len(values)
            self.plan.tenant_steps = values

    def _set_reverts(self, values):
        with param.parameterized.batch_call_watchers(self.plan):
            self.plan.reverts = values
            self.plan.revert_budget = len(values)

    def _set_input_error(self, group: str, message: str):
        self._input_errors[group] = message
        self._render_errors()

    def _render_errors(self):
        """Each pane shows the one current message about its inputs (never an outdated second one)."""
        model_group = next((g for g, names in _ERROR_GROUPS.items() if self.plan.error_parameter in names), "other")
        panes = {"meter": self.meter_error, "tenants": self.tenants_error, "reverts": self.reverts_error,
                 "bound": self.bound_error}
        for group, pane in list(panes.items()) + [("other", self.other_errors)]:
            message = self._input_errors.get(group, "")
            if self.plan.error and (model_group == group or (group == "other" and model_group not in panes)):
                message = self.plan.error
            pane.object = error_html(message)

    # ------------------------------------------------------------------ output handlers
    def _on_outputs(self, *events):
        """One model change -> one batch of view updates (a single message to the browser)."""
        changed = {e.name for e in events}
        with pn.io.hold():
            if changed & {"result", "error", "error_parameter", "work_error"}:
                self._on_result()
            if "curves" in changed:
                self._on_curves()
            if "sweep_curves" in changed:
                self._on_sweep()
            if changed & {"result", "curves", "sweep_curves", "work_error"}:
                self._on_progress()

    def _on_result(self, *_):
        self._render_errors()
        r = self.plan.result
        if r is None:
            return
        # Few panes, each updated only when its markup changed (param compares the new text with the old):
        # a pane update costs the server far more than its bytes, so what changes together shares a pane.
        budget = self._budget_shown(r)
        self.headlines.object = (markup.headlines(r, stale=bool(self.plan.error), budget_from=budget)
                                 + f'<p class="md-sentence">{esc(r.sentence())}</p>')
        self.table.object = markup.results_table(r) + self._share_html()
        self.range_check.object = markup.range_check_html(r)
        self.budget_answers.object = markup.budget_html(budget)
        notes = list(r.notes) + [n for n in r.bound_notes() if n not in r.notes]
        notes.append(TENANT_DISCREPANCY)
        notes.append("Resampling and single_model use ε₁; curves over T split tenants evenly and count a revert "
                     "once T reaches its step.")
        self.assumptions.object = markup.assumptions_html(notes)
        self.curve_plot.move_marker(r.steps)
        self.check.on_plan()
        self._update_url()

    def _budget_shown(self, r):
        """The result whose budget answers to show: ``r``, or while its answers are computing the last ones shown.

        Hoeffding's answers come back within milliseconds: keeping the last ones on screen meanwhile
        spares a message and a flicker; if they take longer (the exact bound), "computing…" shows.
        """
        waiting = r.budget is not None and any(r.is_pending("budget", v) for v in r.labels)
        last = self._budget_result
        overdue = self._budget_overdue is r.hoeffding_labels  # shared by every partial result of one plan
        if waiting and last is not None and last.budget == r.budget and not overdue:
            self._flag_budget_later()
            return last
        if not waiting:
            self._budget_result = r
        return r

    def _flag_budget_later(self, seconds: float = 0.3) -> None:
        if self._budget_timer:
            return
        self._budget_timer = True

        async def later():
            await asyncio.sleep(seconds)
            self._budget_timer = False
            r = self.plan.result
            if r is not None and r.budget is not None and any(r.is_pending("budget", v) for v in r.labels):
                self._budget_overdue = r.hoeffding_labels
                with pn.io.hold():
                    self._on_result()

        pn.state.execute(later)

    def _on_progress(self):
        self.progress.object = markup.progress_html(self.plan.result, self.plan.curves, self.plan.sweep_curves,
                                                    self.plan.work_error)

    def _on_curves(self, *_):
        if self.plan.curves:
            self.curve_plot.update(self.plan.curves, "steps")

    def _on_sweep(self, *_):
        s = self.plan.sweep_curves
        if not s:
            return
        if self._sweep_parameter != s["parameter"]:
            self._sweep_parameter = s["parameter"]
            self.sweep_plot = self._sweep_plot(s["parameter"])
            self.sweep_plot.update(s, "x")
            self.sweep_pane.object = self.sweep_plot.figure
        else:
            self.sweep_plot.update(s, "x")
            self.sweep_plot.figure.title.text = _sweep_title(s["parameter"], self.plan.steps)

    def _csv(self):
        frame = self.plan.result.to_frame()
        buf = io.StringIO()
        frame.to_csv(buf)
        buf.seek(0)
        return buf

    # ------------------------------------------------------------------ the report
    def report(self, path=None):
        """The current plan as a self-contained HTML report (curves as shown); ``path`` writes it.

        Returns the :class:`~meter_dashboard.core.report.Report` (or the path written).
        """
        check = self.check.job.rows if any(row.result is not None for row in self.check.job.rows) else None
        from .report import plan_report

        result, curves, sweep_curves = self.plan.result, self.plan.curves, self.plan.sweep_curves
        if not result.complete:  # still computing in the background: the report waits for nothing
            result = with_items(result, [item for unit in slow_items(self.plan.inputs()) for item in unit])
        if curves.get("computed", 0) < curves.get("planned", 0) or \
                sweep_curves.get("computed", 0) < sweep_curves.get("planned", 0):
            curves = sweep_curves = None  # the report computes its own
        built = plan_report(result, curves=curves, sweep_curves=sweep_curves, ranges=self.plan.ranges, check=check,
                            check_settings=self.check.job.settings)
        return built if path is None else built.save(path)

    async def _report_file(self):
        """The report, built in a worker thread (inlining Bokeh takes longer than the event loop may wait)."""
        html = await in_thread(lambda: self.report().to_html())
        return io.StringIO(html)

    # ------------------------------------------------------------------ URL
    def _init_url(self):
        self._url = UrlState(keys=_URL_KEYS)
        query = self._url.query()  # raw text: the plan's own parser bounds and checks every value
        if self._url.refused:
            self._set_input_error("other", self._url.refused)
        if query:
            try:
                self.plan.update_from_query(query)
            except InputError as exc:
                self._set_input_error("other", f"The link's settings were not applied: {exc}")
        self._url_ready = True
        self._update_url()

    def _update_url(self):
        if getattr(self, "_url_ready", False) and not self.plan.error:
            self._url.write(self.plan.to_query())

    def _share_html(self) -> str:
        """The sharing note under the table, with a link replaying a trace through this meter."""
        session_query = "&".join(part for part in self.plan.query_string().split("&")
                                 if part.split("=")[0] not in MeterPlan.BOUND_QUERY_KEYS)
        return (f'<div class="md-note share-link">Share this plan: the page URL holds it. '
                f'<a href="./session?{esc(session_query)}">Replay a trace with this meter →</a></div>')


def page():
    """The served planner: controls in the sidebar, results in the main area, URL-synced."""
    return Planner(sync_url=True)
