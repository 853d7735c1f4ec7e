"""The planner page: live label counts for every meter variant.

:class:`Planner` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.models.plan.MeterPlan`.
It holds widgets made from the plan's parameters, a results table, headline numbers,
two Bokeh plots updated in place (their ranges follow the data until the user zooms,
then keep the zoom), the assumptions in words, downloads and URL sharing.  It computes
nothing itself: every number comes from the model.
"""
from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, Legend, NumeralTickFormatter, Span
from bokeh.plotting import figure

from .._validation import InputError, check_int
from ..models.plan import (
    ASSUMPTION,
    PRESETS,
    REVERT_CAVEAT,
    SWEEPS,
    TENANT_CAVEAT,
    TENANT_DISCREPANCY,
    VARIANT_NOTES,
    VARIANT_TITLES,
    VARIANTS,
    MeterPlan,
)
from . import formatting as fmt
from .base import DashboardView
from .inputs import ListInput, NumberInput
from .style import HTML, VARIANT_COLORS, error_html, esc, headline_html, headlines_html, stale_html, swatch_html

# Which inputs an engine/model error belongs beside.
_ERROR_GROUPS = {
    "meter": {"epsilon", "ranges", "signals"},
    "delta": {"delta"},
    "steps": {"steps"},
    "tenants": {"tenants", "tenant_steps"},
    "reverts": {"reverts"},
    "effort": {"seconds_per_label", "labelers", "cost_per_hour"},
    "budget": {"budget", "labels"},
}

_PRESET_PLACEHOLDER = "Choose a paper setting…"


def _table_height(rows: int) -> int:
    return min(34 + 30 * rows, 330)


def _meter_frame(plan: MeterPlan) -> pd.DataFrame:
    r = plan.ranges
    n = len(plan.epsilon)
    lower = [r[i] if i < len(r) else float("nan") for i in range(n)]
    upper = [r[i + 1] if i + 1 < len(r) else float("nan") for i in range(n)]
    return pd.DataFrame({"signal": list(range(1, n + 1)), "from": lower, "to": upper, "epsilon": list(plan.epsilon)})


class Planner(DashboardView):
    """Live label-count calculator for every ease.ml/meter variant.

    Parameters
    ----------
    plan : MeterPlan, optional
        The model to drive; by default a new one from the remaining keyword arguments
        (``epsilon``, ``delta``, ``steps``, ``tenants``, ``tenant_steps``, ``reverts``, ...).
    sync_url : bool
        Keep the plan in the page URL's query string (served pages; off in notebooks).

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Planner(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)  # doctest: +SKIP
    """

    title = "Planner"
    extensions = ("tabulator",)

    plan = param.ClassSelector(class_=MeterPlan)
    sync_url = param.Boolean(default=False)

    def __init__(self, plan: MeterPlan | None = None, sync_url: bool = False, **params):
        plan_params = {k: params.pop(k) for k in list(params) if k in MeterPlan.param and k != "name"}
        if plan is None:
            plan = MeterPlan(**plan_params)
        elif plan_params:
            plan.param.update(**plan_params)
        super().__init__(plan=plan, sync_url=sync_url, **params)
        self._input_errors: dict[str, str] = {}
        self._applying_preset = False
        self._build_widgets()
        self._build_outputs()
        self._build_plots()
        self.plan.param.watch(self._on_outputs, ["result", "error", "error_parameter", "curves", "sweep_curves"])
        self.plan.param.watch(self._on_meter_inputs, ["epsilon", "ranges"])
        self.plan.param.watch(self._on_inputs_changed, list(PRESETS[next(iter(PRESETS))]) + ["ranges"])
        self._on_result()
        self._on_curves()
        self._on_sweep()
        if sync_url and pn.state.location is not None:
            self._init_url()
            pn.state.onload(self._update_share)

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

        self.seconds = NumberInput(p, "seconds_per_label", label="Seconds per label", width=140)
        self.labelers = NumberInput(p, "labelers", label="Labelers", width=100)
        self.cost = NumberInput(p, "cost_per_hour", label="Cost per labeler-hour (optional)", placeholder="e.g. 25")
        self.budget = NumberInput(p, "budget", label="Label budget (what we have)", css_classes=["budget-input"])
        self.sweep = pn.widgets.RadioButtonGroup.from_param(p.param.sweep_parameter, label="Second plot against",
                                                            options=_SWEEP_BUTTONS,
                                                            color="light")
        self.other_errors = HTML("", sizing_mode="stretch_width", margin=(0, 5),
                                 css_classes=["error-other", "planner-error"])

        self.csv_download = pn.widgets.FileDownload(callback=self._csv, filename="meter-plan.csv",
                                                    label="Download table (CSV)", color="primary",
                                                    sizing_mode="stretch_width")
        self.share = HTML("", sizing_mode="stretch_width", css_classes=["share-link"])

    # ------------------------------------------------------------------ outputs
    def _build_outputs(self):
        self.headlines = HTML("", sizing_mode="stretch_width", css_classes=["planner-headlines"])
        self.sentence = HTML("", sizing_mode="stretch_width", css_classes=["planner-sentence"])
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["planner-table"])
        self.budget_answers = HTML("", sizing_mode="stretch_width", css_classes=["planner-budget"])
        self.assumptions = HTML("", sizing_mode="stretch_width", css_classes=["planner-assumptions"])

    def _build_plots(self):
        self.curve_source = ColumnDataSource({"x": [1]})
        fig = figure(height=360, sizing_mode="stretch_width", y_axis_type="log", x_axis_label="T (development steps)",
                     y_axis_label="labels needed", tools="pan,wheel_zoom,box_zoom,reset,save",
                     title="Labels against T (Figs. 8–12)", toolbar_location="above")
        self._add_lines(fig, self.curve_source)
        self.current_t = Span(location=self.plan.steps, dimension="height", line_color="#555", line_dash="dashed",
                              line_width=1)
        fig.add_layout(self.current_t)
        self.curve_fig = fig
        self.curve_pane = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["planner-curve"])
        self.sweep_source = ColumnDataSource({"x": [1]})
        self._sweep_parameter = self.plan.sweep_parameter
        self.sweep_pane = pn.pane.Bokeh(self._sweep_figure(self._sweep_parameter), sizing_mode="stretch_width")

    def _add_lines(self, fig, source):
        # Curves often coincide (no_adaptivity equals incremental for a non-uniform meter): the wide
        # incremental line is drawn first and no_adaptivity dashed on top, so both stay visible.
        drawn = {}
        for v in ("single_model", "resampling", "regular", "incremental", "no_adaptivity"):
            drawn[v] = fig.line("x", v, source=source, color=VARIANT_COLORS[v], **_LINE_STYLES[v])
        renderers = [(VARIANT_TITLES[v], [drawn[v]]) for v in VARIANTS]
        fig.add_tools(HoverTool(
            tooltips=[("x", "@x{0,0.[000000]}")] + [(VARIANT_TITLES[v], f"@{{{v}}}{{0,0}}") for v in VARIANTS],
            mode="vline"))
        legend = Legend(items=renderers, location="top_left", click_policy="hide", background_fill_alpha=0.8)
        fig.add_layout(legend, "right")
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.toolbar.logo = None

    def _sweep_figure(self, parameter: str):
        log_x = parameter in ("delta", "epsilon")
        fig = figure(height=320, sizing_mode="stretch_width", y_axis_type="log",
                     x_axis_type="log" if log_x else "linear", x_axis_label=SWEEPS[parameter],
                     y_axis_label="labels needed", tools="pan,wheel_zoom,box_zoom,reset,save",
                     title=_sweep_title(parameter, self.plan.steps),
                     toolbar_location="above")
        self._add_lines(fig, self.sweep_source)
        return fig

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
            HTML("<b>Labeling effort</b>", margin=(10, 5, 0, 5)),
            pn.Row(self.seconds, self.labelers, sizing_mode="stretch_width"),
            pn.Row(self.cost, sizing_mode="stretch_width"),
            self.budget,
            self.other_errors,
            sizing_mode="stretch_width",
        )

    def results(self) -> pn.Column:
        """Headlines, sentence, table, budget answers, plots and assumptions (the main area)."""
        return pn.Column(
            self.headlines,
            self.sentence,
            self.table,
            pn.Row(self.csv_download, self.share, sizing_mode="stretch_width"),
            self.budget_answers,
            self.curve_pane,
            pn.Row(HTML("<b>Second plot against</b>", margin=(12, 5)), self.sweep),
            self.sweep_pane,
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
        panes = {"meter": self.meter_error, "tenants": self.tenants_error, "reverts": self.reverts_error}
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
            if changed & {"result", "error", "error_parameter"}:
                self._on_result()
            if "curves" in changed:
                self._on_curves()
            if "sweep_curves" in changed:
                self._on_sweep()

    def _on_result(self, *_):
        self._render_errors()
        r = self.plan.result
        if r is None:
            return
        stale = bool(self.plan.error)
        rec = r.recommended
        effort = f"{fmt.hours(r.calendar_hours[rec])} with {r.labelers} labeler{'s' if r.labelers > 1 else ''}"
        if r.cost:
            effort += f" · cost {fmt.money(r.cost[rec], r.cost_per_hour)}"
        cards = [
            headline_html(f"{VARIANT_TITLES[rec]} · labels", fmt.integer(r.labels[rec]),
                          f"{r.savings[rec]:.1f}× fewer than resampling", "headline-labels"),
            headline_html("Labeling effort", fmt.hours(r.labeler_hours[rec]), effort),
            headline_html("Guarantee", f"1 − δ = {fmt.confidence(r.delta)}",
                          f"ε₁ = {fmt.number(r.epsilon[0])} … ε_m = {fmt.number(r.epsilon[-1])}, m = {r.signals}"),
        ]
        if r.budget is not None:
            t = r.max_steps[rec]
            cards.append(headline_html(f"Budget {fmt.integer(r.budget)} labels", fmt.steps_text(t) + " steps",
                                       f"the {VARIANT_TITLES[rec].lower()} supports", "headline-budget-steps"))
        self.headlines.object = (stale_html("plan") if stale else "") + headlines_html(cards)
        self.sentence.object = f'<p class="md-sentence">{esc(r.sentence())}</p>'
        self.table.object = _results_table(r)
        self.budget_answers.object = _budget_html(r)
        notes = [ASSUMPTION]
        if len(r.tenant_steps) > 1:
            notes.append(TENANT_CAVEAT)
        if r.reverts:
            notes.append(REVERT_CAVEAT)
        notes.append(TENANT_DISCREPANCY)
        notes.append("Resampling and single_model use ε₁; curves over T split tenants evenly and count a revert "
                     "once T reaches its step.")
        self.assumptions.object = ('<div class="md-note"><b>Assumptions</b><ul>' +
                                   "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul></div>")
        self.current_t.location = r.steps
        self._update_share()

    def _on_curves(self, *_):
        c = self.plan.curves
        if not c:
            return
        self.curve_source.data = {"x": np.asarray(c["steps"]), **{v: np.asarray(c[v]) for v in VARIANTS}}

    def _on_sweep(self, *_):
        s = self.plan.sweep_curves
        if not s:
            return
        data = {"x": np.asarray(s["x"]), **{v: np.asarray(s[v]) for v in VARIANTS}}
        if self._sweep_parameter != s["parameter"]:
            self._sweep_parameter = s["parameter"]
            self.sweep_source = ColumnDataSource(data)
            self.sweep_pane.object = self._sweep_figure(s["parameter"])
        else:
            self.sweep_source.data = data
            self.sweep_pane.object.title.text = _sweep_title(s['parameter'], self.plan.steps)

    def _csv(self):
        frame = self.plan.result.to_frame()
        buf = io.StringIO()
        frame.to_csv(buf)
        buf.seek(0)
        return buf

    # ------------------------------------------------------------------ URL
    def _init_url(self):
        loc = pn.state.location
        query = {k: v for k, v in (loc.query_params or {}).items() if k in MeterPlan.QUERY_KEYS}
        if query:
            try:
                self.plan.update_from_query(query)
            except InputError as exc:
                self._set_input_error("other", f"The link's settings were not applied: {exc}")
        self._url_ready = True
        self._update_share()

    def _update_share(self):
        query = self.plan.query_string()
        if getattr(self, "_url_ready", False) and not self.plan.error:
            loc = pn.state.location
            if loc is not None and loc.search != "?" + query:
                loc.search = "?" + query
        self.share.object = (f'<div class="md-note">Share this plan: the page URL holds it. '
                             f'<a href="./session?{esc(query)}">Replay a trace with this meter →</a></div>')


def _sweep_title(parameter: str, steps: int) -> str:
    """Short enough for a phone: the axis label says the rest."""
    return f"Labels against {SWEEPS[parameter].split(' ')[0]} (T = {steps})"


_LINE_STYLES = {
    "single_model": {"line_width": 1.8, "line_dash": "dotted"},
    "resampling": {"line_width": 1.8},
    "regular": {"line_width": 2.5},
    "incremental": {"line_width": 4.5, "line_alpha": 0.75},
    "no_adaptivity": {"line_width": 2.2, "line_dash": [6, 4]},
}

_SWEEP_BUTTONS = {"δ": "delta", "ε₁": "epsilon", "m": "signals", "tenants": "tenants"}




def _results_table(r) -> str:
    has_cost = r.cost is not None
    head = ("<tr><th>variant</th><th class='num'>labels</th><th class='num'>× fewer than resampling</th>"
            "<th class='num'>labeler-hours</th><th class='num'>calendar hours</th>"
            + (f"<th class='num'>cost (at {fmt.number(r.cost_per_hour)} per labeler-hour)</th>" if has_cost else "") + "<th>method</th></tr>")
    rows = []
    for v in VARIANTS:
        cls = ' class="md-recommended"' if v == r.recommended else ""
        swatch = swatch_html(f"variant-{v}")
        rows.append(
            f"<tr{cls}><td>{swatch}{esc(VARIANT_TITLES[v])}</td>"
            f'<td class="num label-count label-count-{v}">{fmt.integer(r.labels[v])}</td>'
            f'<td class="num">{r.savings[v]:,.2f}×</td>'
            f'<td class="num">{r.labeler_hours[v]:,.1f}</td>'
            f'<td class="num">{r.calendar_hours[v]:,.1f}</td>'
            + (f'<td class="num">{fmt.money(r.cost[v])}</td>' if has_cost else "")
            + f"<td class='md-plain'>{esc(VARIANT_NOTES[v])}</td></tr>"
        )
    return f'<table class="md-table planner-results">{head}{"".join(rows)}</table>'


def _budget_html(r) -> str:
    if r.budget is None:
        return ""
    rows = []
    for v in VARIANTS:
        conf = r.confidence[v]
        conf_text = fmt.confidence(1.0 - conf) if conf > 0 else "none"
        rows.append(f"<tr><td>{esc(VARIANT_TITLES[v])}</td>"
                    f'<td class="num budget-steps-{v}">{fmt.steps_text(r.max_steps[v])}</td>'
                    f'<td class="num budget-epsilon-{v}">{fmt.number(r.min_epsilon[v])}</td>'
                    f'<td class="num budget-confidence-{v}">{conf_text}</td></tr>')
    return (f'<div class="md-section"><b>What {fmt.integer(r.budget)} labels buy</b> '
            f'<span class="md-note">(inverse questions; ε vector scaled together)</span>'
            f'<table class="md-table"><tr><th>variant</th><th class="num">largest T</th>'
            f'<th class="num">smallest ε₁ at T = {r.steps}</th><th class="num">confidence at T = {r.steps}</th></tr>'
            + "".join(rows) + "</table></div>")


def page():
    """The served planner: controls in the sidebar, results in the main area, URL-synced."""
    return Planner(sync_url=True)
