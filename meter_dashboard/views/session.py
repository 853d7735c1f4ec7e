"""The session page: replay a development trace through the five-colour meter.

:class:`Session` is a ``pn.viewable.Viewer`` over a
:class:`~meter_dashboard.models.session.SessionModel`, which holds the planner's
:class:`~meter_dashboard.models.plan.MeterPlan`.  It shows, for the step being replayed, the
regular and incremental signals, the eps they guarantee and the budget used; the meter
itself (:class:`~meter_dashboard.views.meter_gauge.MeterGauge`); the history of scores
and signals (the paper's Figures 3a and 3c); the alarms; and a window of the step table.
It computes nothing itself: every number comes from the model.

Stable hooks for tests: CSS classes ``meter-signal``, ``meter-incremental-signal`` and
``meter-epsilon`` on the values of the current step's regular signal, incremental
signal and eps_i; ``trace-error`` on a refused upload's message; ``trace-upload`` on the
upload area; ``step-back``/``step-forward``/``play-button``/``first-step``/``last-step``
on the replay buttons; ``jump-input`` on "go to step".
"""
from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import numpy as np
import panel as pn
import param
from bokeh.models import BoxAnnotation, ColumnDataSource, HoverTool, Legend, Range1d, Span
from bokeh.plotting import figure

from .._validation import InputError, parse_int_list, parse_number_list
from ..models.plan import ASSUMPTION, REVERT_CAVEAT, TENANT_CAVEAT, MeterPlan, resize_ranges
from ..models.session import METER_TITLES, METERS, SessionModel
from ..models.trace import EXAMPLES, MAX_TRACE_BYTES
from . import formatting as fmt
from .base import DashboardView
from .style import HTML, PALETTE, SIGNAL_COLORS, error_html, esc, headline_html
from .meter_gauge import MeterGauge
from .style import signal_colors

__all__ = ["Session", "page"]

_UPLOADED = "(uploaded file)"
_TABLE_WINDOW = 6  # rows shown before and after the current step
_SESSION_QUERY_KEYS = set(MeterPlan.QUERY_KEYS) | set(SessionModel.SESSION_KEYS)

def _nums(values) -> str:
    return ",".join(f"{float(v):g}" for v in values)


def _ints(values) -> str:
    return ",".join(str(int(v)) for v in values)


class Session(DashboardView):
    """Replay a development trace through the meter, step by step.

    Parameters
    ----------
    trace : path, bytes, file object, records, DataFrame or Trace, optional
        The trace to load; by default the shipped EmoContext example.
    model : SessionModel, optional
        The model to drive (its plan included).
    plan : MeterPlan, optional
        The meter's settings (for example the planner's own ``Planner.plan``).
    sync_url : bool
        Keep the plan and the session's choices in the page URL (served pages).
    **params
        MeterPlan parameters (``epsilon``, ``ranges``, ``delta``, ``steps``, ...) and
        SessionModel parameters (``variant``, ``example``, ``test_size``).

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Session(example="emocontext", delta=0.1, steps=8)  # doctest: +SKIP
    """

    title = "Session replay"
    extensions = ("filedropper",)

    model = param.ClassSelector(class_=SessionModel)
    sync_url = param.Boolean(default=False)
    play_interval = param.Integer(default=900, bounds=(100, 10_000), doc="Milliseconds per step when playing.")

    def __init__(self, trace=None, *, model: SessionModel | None = None, plan: MeterPlan | None = None,
                 sync_url: bool = False, **params):
        plan_params = {k: params.pop(k) for k in list(params) if k in MeterPlan.param and k != "name"}
        model_params = {k: params.pop(k) for k in list(params) if k in ("variant", "example", "test_size")}
        if plan_params.get("tenant_steps") and "tenants" not in plan_params:
            plan_params["tenants"] = len(plan_params["tenant_steps"])
        if model is None:
            if plan is None and plan_params:
                plan = MeterPlan(**{**_default_plan_values(), **plan_params})
            elif plan is not None and plan_params:
                plan.param.update(**plan_params)
            if trace is None and "example" not in model_params and not sync_url:
                model_params["example"] = "emocontext"
            model = SessionModel(trace=trace, plan=plan, **model_params)
        super().__init__(model=model, sync_url=sync_url, **params)
        self._play_callback = None
        self._seen_uploads: dict = {}
        self._text_errors: dict = {}
        self._url_ready = False
        self._build_widgets()
        self._build_outputs()
        self.gauge = MeterGauge()
        self._build_history()
        m = self.model
        m.param.watch(self._on_result, ["result"])
        m.param.watch(self._on_position, ["position"])
        m.param.watch(self._on_status, ["error", "status", "example", "test_size", "variant"])
        m.plan.param.watch(self._on_plan_inputs, ["epsilon", "ranges", "tenant_steps", "reverts", "error"])
        m.plan.param.watch(self._on_plan_link, ["result", "error"])
        if sync_url and pn.state.location is not None:
            self._init_url()
        self._on_status()
        self._on_plan_inputs()
        self._on_plan_link()
        self._on_result()

    # ------------------------------------------------------------------ widgets
    def _build_widgets(self):
        m, p = self.model, self.model.plan
        options = {info.title: key for key, info in EXAMPLES.items()}
        options[_UPLOADED] = _UPLOADED
        current = m.example if m.example is not None else (_UPLOADED if m.trace is not None else None)
        self.example = pn.widgets.Select(label="Example trace", options=options, value=current or list(options.values())[0],
                                         sizing_mode="stretch_width", css_classes=["example-select"])
        self.example.param.watch(self._on_example, "value")
        self.upload = pn.widgets.FileDropper(
            accepted_filetypes=[".csv", ".json", "text/csv", "application/json", "text/plain"],
            multiple=False, chunk_size=512 * 1024, max_file_size=f"{2 * MAX_TRACE_BYTES // (1024 * 1024)}MB",
            layout="compact", sizing_mode="stretch_width", height=90, css_classes=["trace-upload"],
        )
        self.upload.param.watch(self._on_upload, "value")
        self.upload_help = HTML(
            '<div class="md-note">CSV or JSON, one row per development step: <code>step</code>, '
            '<code>val_accuracy</code>, <code>test_accuracy</code> (or <code>val_loss</code>, <code>test_loss</code>), '
            'all in [0, 1]; optional <code>tenant</code>, <code>reverted</code> (true/false), '
            f'<code>description</code>. Up to {MAX_TRACE_BYTES // (1024 * 1024)} MiB. A JSON trace may carry '
            '<code>"test_size"</code>.</div>', sizing_mode="stretch_width", margin=(0, 5))
        self.trace_error = HTML("", sizing_mode="stretch_width", css_classes=["trace-error"], margin=(0, 5))
        self.trace_status = HTML("", sizing_mode="stretch_width", css_classes=["trace-status"], margin=(0, 5))
        self.test_size = pn.widgets.IntInput.from_param(m.param.test_size, label="Test-set size n (labels)",
                                                        start=1, placeholder="e.g. 5509", sizing_mode="stretch_width",
                                                        css_classes=["test-size-input"])

        self.variant = pn.widgets.RadioButtonGroup.from_param(
            m.param.variant, label="Meter", options={"Incremental meter": "incremental", "Regular meter": "regular"},
            color="light", sizing_mode="stretch_width", css_classes=["variant-input"])
        self.epsilon = pn.widgets.TextInput(label="ε per signal (ε₁ ≤ … ≤ ε_m)", value=_nums(p.epsilon),
                                            sizing_mode="stretch_width", css_classes=["epsilon-input"])
        self.epsilon.param.watch(self._on_epsilon_text, "value")
        self.ranges = pn.widgets.TextInput(label="Range boundaries 0 = r₀ < … < r_m = 1", value=_nums(p.ranges),
                                           sizing_mode="stretch_width", css_classes=["ranges-input"])
        self.ranges.param.watch(self._on_ranges_text, "value")
        self.delta = pn.widgets.FloatInput.from_param(p.param.delta, label="δ (failure probability)", step=0.01,
                                                      start=1e-12, end=0.999999, sizing_mode="stretch_width",
                                                      css_classes=["delta-input"])
        self.steps = pn.widgets.IntInput.from_param(p.param.steps, label="T (budget of steps)", start=1,
                                                    sizing_mode="stretch_width", css_classes=["steps-input"])
        self.tenant_steps = pn.widgets.TextInput(label="Steps per tenant (optional)", placeholder="e.g. 12,8",
                                                 value=_ints(p.tenant_steps), sizing_mode="stretch_width",
                                                 css_classes=["tenant-steps-input"])
        self.tenant_steps.param.watch(self._on_tenant_steps_text, "value")
        self.reverts = pn.widgets.TextInput(label="Revert steps fixed in advance (optional)", placeholder="e.g. 9",
                                            value=_ints(p.reverts), sizing_mode="stretch_width",
                                            css_classes=["reverts-input"])
        self.reverts.param.watch(self._on_reverts_text, "value")
        self.plan_error = HTML("", sizing_mode="stretch_width", css_classes=["plan-error"], margin=(0, 5))
        self.planner_link = HTML("", sizing_mode="stretch_width", css_classes=["planner-link"], margin=(0, 5))

        # replay controls
        self.first_button = pn.widgets.Button(label="◀◀ First", width=95, css_classes=["first-step"])
        self.back_button = pn.widgets.Button(label="◀ Back", width=90, css_classes=["step-back"])
        self.play_button = pn.widgets.Button(label="▶ Play", width=100, color="primary", css_classes=["play-button"])
        self.forward_button = pn.widgets.Button(label="Forward ▶", width=100, css_classes=["step-forward"])
        self.last_button = pn.widgets.Button(label="Last ▶▶", width=95, css_classes=["last-step"])
        self.first_button.on_click(lambda e: self._stop_and(self.model.first))
        self.back_button.on_click(lambda e: self._stop_and(self.model.step_back))
        self.forward_button.on_click(lambda e: self._stop_and(self.model.step_forward))
        self.last_button.on_click(lambda e: self._stop_and(self.model.last))
        self.play_button.on_click(self._on_play)
        self.slider = pn.widgets.IntSlider(label="Position in the trace", start=1, end=2, value=1,
                                           sizing_mode="stretch_width", css_classes=["step-slider"])
        self.slider.param.watch(self._on_slider, "value")
        self.jump = pn.widgets.IntInput(label="Go to step", value=None, placeholder="step", width=110,
                                        css_classes=["jump-input"])
        self.jump.param.watch(self._on_jump, "value")
        self.jump_error = HTML("", sizing_mode="stretch_width", css_classes=["jump-error"], margin=(0, 5))

    # ------------------------------------------------------------------ outputs
    def _build_outputs(self):
        self.title = HTML("", sizing_mode="stretch_width", css_classes=["session-title"])
        self.cards = HTML("", sizing_mode="stretch_width", css_classes=["session-cards"])
        self.sentence = HTML("", sizing_mode="stretch_width", css_classes=["session-sentence"])
        self.alarms = HTML("", sizing_mode="stretch_width", css_classes=["session-alarms"])
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["session-steps"])
        self.explain = HTML(_explanation(), sizing_mode="stretch_width", css_classes=["session-explain"])

    def _build_history(self):
        self.score_source = ColumnDataSource(dict(step=[], val=[], test=[], tenant=[], gap=[], reverted=[]))
        self.revert_source = ColumnDataSource(dict(step=[], val=[], test=[]))
        fig = figure(height=280, sizing_mode="stretch_width", title="Validation and test score per step (Fig. 3a)",
                     x_axis_label="development step", y_axis_label="accuracy", tools="pan,wheel_zoom,box_zoom,reset,save",
                     toolbar_location="above")
        val = fig.line("step", "val", source=self.score_source, color=PALETTE[0], line_width=2.2)
        val_dots = fig.scatter("step", "val", source=self.score_source, color=PALETTE[0], size=7)
        test = fig.line("step", "test", source=self.score_source, color=PALETTE[1], line_width=2.2, line_dash="dashed")
        test_dots = fig.scatter("step", "test", source=self.score_source, color=PALETTE[1], size=7, marker="square")
        rev = fig.scatter("step", "val", source=self.revert_source, size=15, marker="x", color="#8a1c00", line_width=2.5)
        fig.scatter("step", "test", source=self.revert_source, size=15, marker="x", color="#8a1c00", line_width=2.5)
        self.score_legend = Legend(items=[("validation", [val, val_dots]), ("test", [test, test_dots]),
                                          ("reverted", [rev])],
                                   location="top_left", orientation="horizontal", border_line_color=None)
        fig.add_layout(self.score_legend, "above")
        fig.add_tools(HoverTool(renderers=[val_dots, test_dots], tooltips=[
            ("step", "@step"), ("tenant", "@tenant"), ("validation", "@val{0.0000}"), ("test", "@test{0.0000}"),
            ("|val − test|", "@gap{0.0000}"), ("reverted", "@reverted")]))
        fig.toolbar.logo = None
        self.score_cursor = Span(location=0, dimension="height", line_color="#0b2a45", line_width=2, line_alpha=0.5)
        self.score_beyond = BoxAnnotation(left=None, fill_color="#d55e00", fill_alpha=0.08, visible=False)
        fig.add_layout(self.score_cursor)
        fig.add_layout(self.score_beyond)
        self.score_fig = fig

        self.signal_source = ColumnDataSource(dict(step=[], signal=[], incremental=[], tenant=[], gap=[]))
        sig = figure(height=260, sizing_mode="stretch_width", title="Signal per step: regular and incremental meter (Fig. 3c)",
                     x_axis_label="development step", y_axis_label="signal", y_range=Range1d(0.5, 5.5),
                     tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above")
        self.signal_bands = [BoxAnnotation(bottom=i + 0.5, top=i + 1.5, fill_alpha=0.16, fill_color="#ffffff",
                                           level="underlay") for i in range(60)]
        for band in self.signal_bands:
            sig.add_layout(band)
        reg = sig.scatter("step", "signal", source=self.signal_source, size=9, color=PALETTE[0])
        inc = sig.step("step", "incremental", source=self.signal_source, mode="center", color=PALETTE[5], line_width=3)
        inc_dots = sig.scatter("step", "incremental", source=self.signal_source, size=5, color=PALETTE[5])
        sig.add_layout(Legend(items=[("regular", [reg]), ("incremental (worst so far)", [inc, inc_dots])],
                              location="top_left", orientation="horizontal", border_line_color=None), "above")
        sig.add_tools(HoverTool(renderers=[reg], tooltips=[("step", "@step"), ("tenant", "@tenant"),
                                                           ("gap", "@gap{0.0000}"), ("regular", "@signal"),
                                                           ("incremental", "@incremental")]))
        self.handover_source = ColumnDataSource(dict(x=[], name=[], y=[]))
        for f in (fig, sig):
            f.vspan(x="x", source=self.handover_source, line_color="#4a5a6a", line_dash="dotted", line_width=1.5)
        sig.text(x="x", y="y", text="name", source=self.handover_source, x_offset=4, text_font_size="11px",
                 text_color="#4a5a6a", text_baseline="top")
        sig.yaxis.ticker = list(range(1, 6))
        sig.toolbar.logo = None
        self.signal_cursor = Span(location=0, dimension="height", line_color="#0b2a45", line_width=2, line_alpha=0.5)
        self.signal_budget = Span(location=0, dimension="height", line_color="#8a1c00", line_dash="dashed", line_width=1.5,
                                  visible=False)
        self.signal_beyond = BoxAnnotation(left=None, fill_color="#d55e00", fill_alpha=0.08, visible=False)
        sig.add_layout(self.signal_cursor)
        sig.add_layout(self.signal_budget)
        sig.add_layout(self.signal_beyond)
        self.signal_fig = sig
        self.score_pane = pn.pane.Bokeh(self.score_fig, sizing_mode="stretch_width", css_classes=["session-scores"])
        self.signal_pane = pn.pane.Bokeh(self.signal_fig, sizing_mode="stretch_width", css_classes=["session-signals"])

    # ------------------------------------------------------------------ layout
    def controls(self) -> pn.Column:
        """Trace and meter inputs (the sidebar of the served page)."""
        return pn.Column(
            HTML("<b>Trace</b> — the team's development history", margin=(5, 5, 0, 5)),
            self.example,
            self.upload,
            self.upload_help,
            self.trace_error,
            self.trace_status,
            self.test_size,
            HTML("<b>Meter</b> — the plan's settings, shared with the planner", margin=(12, 5, 0, 5)),
            self.variant,
            self.epsilon,
            self.ranges,
            pn.Row(self.delta, self.steps, sizing_mode="stretch_width"),
            self.tenant_steps,
            self.reverts,
            self.plan_error,
            self.planner_link,
            sizing_mode="stretch_width",
        )

    def results(self) -> pn.Column:
        """Replay controls, headlines, meter, alarms, history and steps (the main area)."""
        return pn.Column(
            self.title,
            pn.Row(self.first_button, self.back_button, self.play_button, self.forward_button, self.last_button,
                   self.jump, sizing_mode="stretch_width"),
            self.jump_error,
            self.slider,
            self.cards,
            self.gauge,
            self.sentence,
            self.alarms,
            self.score_pane,
            self.signal_pane,
            self.table,
            self.explain,
            sizing_mode="stretch_width",
        )


    # ------------------------------------------------------------------ trace inputs
    def _on_example(self, event):
        if event.new == _UPLOADED or event.new == self.model.example:
            return
        self._stop()
        with pn.io.hold():
            self.model.load_example(event.new)

    def _on_upload(self, event):
        for name, data in (event.new or {}).items():
            if self._seen_uploads.get(name) is data:
                continue
            self._seen_uploads[name] = data
            self._stop()
            if isinstance(data, str):  # FileDropper decodes text/* files; the model reads bytes
                data = data.encode("utf-8")
            with pn.io.hold():  # one batch of changes: a click right after sees the new trace everywhere
                self.model.load(data, name=name)

    def _on_status(self, *_):
        m = self.model
        self.trace_error.object = (f'<div class="md-error">{esc(m.error)}</div>'
                                   if m.error else "")
        self.trace_status.object = f'<div class="md-ok">{esc(m.status)}</div>' if m.status and not m.error else ""
        wanted = m.example if m.example is not None else (_UPLOADED if m.trace is not None else None)
        if wanted is not None and self.example.value != wanted:
            self.example.value = wanted
        self._update_url()

    # ------------------------------------------------------------------ meter inputs
    def _on_epsilon_text(self, event):
        try:
            eps = parse_number_list("epsilon", event.new)
        except InputError as exc:
            return self._set_text_error("epsilon", str(exc))
        self._set_text_error("epsilon", "")
        p = self.model.plan
        values = {"epsilon": eps}
        if len(eps) != len(p.ranges) - 1:
            values["ranges"] = resize_ranges(p.ranges, len(eps))
        p.param.update(**values)

    def _on_ranges_text(self, event):
        try:
            ranges = parse_number_list("ranges", event.new)
        except InputError as exc:
            return self._set_text_error("ranges", str(exc))
        self._set_text_error("ranges", "")
        self.model.plan.ranges = ranges

    def _on_tenant_steps_text(self, event):
        text = event.new.strip()
        try:
            values = parse_int_list("tenant_steps", text) if text else []
        except InputError as exc:
            return self._set_text_error("tenant_steps", str(exc))
        self._set_text_error("tenant_steps", "")
        p = self.model.plan
        with param.parameterized.batch_call_watchers(p):
            p.param.update(tenant_steps=values, tenants=max(1, len(values)) if values else 1)

    def _on_reverts_text(self, event):
        text = event.new.strip()
        try:
            values = parse_int_list("reverts", text) if text else []
        except InputError as exc:
            return self._set_text_error("reverts", str(exc))
        self._set_text_error("reverts", "")
        p = self.model.plan
        with param.parameterized.batch_call_watchers(p):
            p.param.update(reverts=values, revert_budget=len(values))

    def _set_text_error(self, key, message):
        self._text_errors[key] = message
        self._render_plan_error()

    def _render_plan_error(self):
        messages = [m for m in self._text_errors.values() if m]
        if self.model.plan.error:
            messages.append(self.model.plan.error + " — showing the replay for the last valid meter.")
        self.plan_error.object = error_html(" · ".join(messages))

    def _on_plan_inputs(self, *_):
        p = self.model.plan
        for widget, key, text in ((self.epsilon, "epsilon", _nums(p.epsilon)), (self.ranges, "ranges", _nums(p.ranges)),
                                  (self.tenant_steps, "tenant_steps", _ints(p.tenant_steps)),
                                  (self.reverts, "reverts", _ints(p.reverts))):
            if self._text_errors.get(key):
                continue
            try:
                same = key in ("epsilon", "ranges") and parse_number_list(key, widget.value) == [float(v) for v in text.split(",")]
            except (InputError, ValueError):
                same = False
            if not same and widget.value.replace(" ", "") != text:
                widget.value = text
        self._render_plan_error()

    def _on_plan_link(self, *_):
        query = self.model.plan.query_string()
        self.planner_link.object = (f'<div class="md-note"><a class="planner-link-a" '
                                    f'href="./planner?{esc(query)}">Open this meter in the planner →</a></div>')
        self._render_plan_error()
        self._update_url()

    # ------------------------------------------------------------------ replay controls
    def _stop_and(self, action):
        self._stop()
        with pn.io.hold():
            action()

    def _on_play(self, _event=None):
        if self._play_callback is not None:
            self._stop()
            return
        m = self.model
        if m.result is None:
            return
        if m.position >= len(m.result) - 1:
            m.first()
        self.play_button.label = "❚❚ Pause"
        self._play_callback = pn.state.add_periodic_callback(self._tick, period=self.play_interval)

    def _tick(self):
        with pn.io.hold():
            moved = self.model.step_forward()
        if not moved:
            self._stop()

    def _stop(self):
        if self._play_callback is not None:
            self._play_callback.stop()
            self._play_callback = None
        self.play_button.label = "▶ Play"

    def _on_slider(self, event):
        if getattr(self, "_moving_slider", False):
            return
        if event.new is not None and self.model.result is not None:
            self._stop()
            self.model.position = min(max(int(event.new) - 1, 0), len(self.model.result) - 1)

    def _on_jump(self, event):
        if event.new is None:
            return
        try:
            self._stop()
            self.model.jump_to_step(event.new)
        except InputError as exc:
            self.jump_error.object = error_html(str(exc))
            return
        self.jump_error.object = ""

    # ------------------------------------------------------------------ rendering
    def _on_result(self, *_):
        with pn.io.hold():
            self._render_result()

    def _render_result(self):
        r = self.model.result
        if r is None:
            self.title.object = '<div class="md-note">Load a trace to replay it.</div>'
            return
        t = r.trace
        badge = '<span class="session-badge">SYNTHETIC</span>' if t.synthetic else ""
        prov = f'<div class="md-note">{esc(t.provenance)}</div>' if t.provenance else ""
        self.title.object = (f'<div class="session-title">{esc(t.name)}{badge}</div>'
                             f'<div class="md-note">{len(t)} steps · {esc(t.metric)} · '
                             f'{"tenants " + esc(", ".join(t.tenant_names)) if t.has_tenants else "one developer"}'
                             f'{" · reverted: " + esc(", ".join(map(str, t.revert_steps))) if t.reverted.any() else ""}'
                             f'</div>{prov}')
        steps = t.steps.tolist()
        self.score_source.data = dict(step=steps, val=t.val.tolist(), test=t.test.tolist(),
                                      tenant=[x or "—" for x in t.tenants], gap=r.empirical_overfitting.tolist(),
                                      reverted=["yes" if v else "no" for v in t.reverted])
        rv = np.flatnonzero(t.reverted)
        self.revert_source.data = dict(step=t.steps[rv].tolist(), val=t.val[rv].tolist(), test=t.test[rv].tolist())
        self.score_legend.items[2].visible = bool(rv.size)
        self.score_fig.yaxis.axis_label = t.metric
        self.signal_source.data = dict(step=steps, signal=r.signal.tolist(), incremental=r.incremental_signal.tolist(),
                                       tenant=[x or "—" for x in t.tenants], gap=r.empirical_overfitting.tolist())
        m = r.signals
        starts = [i for i in range(len(t)) if t.has_tenants and (i == 0 or t.tenants[i] != t.tenants[i - 1])]
        self.handover_source.data = dict(x=[steps[i] - 0.5 if i else steps[i] - 0.5 for i in starts],
                                         name=[t.tenants[i] for i in starts], y=[m + 0.45] * len(starts))
        colors = signal_colors(m)
        for i, band in enumerate(self.signal_bands):
            band.visible = i < m
            if i < m:
                band.fill_color = colors[i]
        self.signal_fig.y_range.start, self.signal_fig.y_range.end = 0.5, m + 0.5
        self.signal_fig.yaxis.ticker = list(range(1, m + 1)) if m <= 20 else list(range(1, m + 1, max(1, m // 10)))
        T = r.budget
        beyond = len(t) > T
        edge = (steps[T - 1] + steps[T]) / 2 if beyond else None
        for box in (self.score_beyond, self.signal_beyond):
            box.visible = beyond
            if beyond:
                box.left = edge
        self.signal_budget.visible = beyond
        if beyond:
            self.signal_budget.location = edge
        self.gauge.param.update(ranges=list(r.settings["ranges"]), epsilon=list(r.settings["epsilon"]),
                                meter_name=METER_TITLES[r.variant])
        self._moving_slider = True
        try:
            self.slider.param.update(start=1, end=max(len(t), 2), disabled=len(t) < 2)
        finally:
            self._moving_slider = False
        self._on_position()

    def _on_position(self, *_):
        with pn.io.hold():
            self._render_position()

    def _render_position(self):
        m = self.model
        r = m.result
        if r is None:
            return
        i = min(m.position, len(r) - 1)
        d = r.step(i)
        t = r.trace
        if self.slider.value != i + 1:
            self._moving_slider = True
            try:
                self.slider.value = i + 1
            finally:
                self._moving_slider = False
        self.score_cursor.location = d["step"]
        self.signal_cursor.location = d["step"]
        sup = d["supported_epsilon"] if r.short_of_labels else None
        self.gauge.param.update(empirical_overfitting=d["empirical_overfitting"], signal=d["signal"],
                                incremental_signal=d["incremental_signal"], epsilon_shown=d["epsilon"],
                                supported_epsilon=sup)
        self.back_button.disabled = i == 0
        self.forward_button.disabled = i >= len(r) - 1
        self.first_button.disabled = i == 0
        self.last_button.disabled = i >= len(r) - 1

        who = f"{d['tenant']} · " if d["tenant"] else ""
        tenant_part = ""
        if d["tenant"] and d["tenant_budget"] is not None:
            tenant_part = f" · {d['tenant']}: {d['tenant_steps_used']} of {d['tenant_budget']}"
        elif d["tenant"]:
            tenant_part = f" · {d['tenant']}: {d['tenant_steps_used']} steps"
        used_sub = f"of T = {r.budget}{tenant_part}" + ("" if d["within_budget"] else " · beyond budget")
        lo, hi = d["signal_range"]
        ilo, ihi = d["incremental_range"]
        shown_signal = d["incremental_signal"] if r.variant == "incremental" else d["signal"]
        close = "]" if hi == 1.0 else ")"
        iclose = "]" if ihi == 1.0 else ")"
        eps_sub = f"ε{_sub(shown_signal)} of the {r.variant} meter, prob. {1 - r.settings['delta']:.6g}"
        cards = [
            headline_html("Step", str(d["step"]), f"{who}position {d['position']} of {len(r)}"
                          + (" · reverted" if d["reverted"] else ""), "session-step"),
            headline_html("Steps used", f"{d['steps_used']} / {r.budget}", used_sub, "session-used"),
            headline_html("Empirical overfitting", f"{d['empirical_overfitting']:.4f}",
                          f"|{d[t.val_column]:.4f} − {d[t.test_column]:.4f}|", "session-gap"),
            headline_html("Regular signal", str(d["signal"]), f"this step: [{lo:g}, {hi:g}{close}", "meter-signal"),
            headline_html("Incremental signal", str(d["incremental_signal"]),
                          f"worst so far{' (' + d['tenant'] + ')' if d['tenant'] else ''}: [{ilo:g}, {ihi:g}{iclose}",
                          "meter-incremental-signal"),
            headline_html("Guaranteed bound", f"{d['epsilon']:g}", eps_sub, "meter-epsilon"),
        ]
        self.cards.object = '<div class="session-card-row">' + "".join(cards) + "</div>"
        self.sentence.object = _sentence(r, d)
        self.alarms.object = _alarms_html(r, i)
        self.table.object = _steps_table(r, i)

    # ------------------------------------------------------------------ URL
    def _init_url(self):
        loc = pn.state.location
        query = dict(parse_qsl((loc.search or "").lstrip("?"), keep_blank_values=True))
        query = {k: v for k, v in query.items() if k in _SESSION_QUERY_KEYS}
        problem = ""
        try:
            self.model.update_from_query(query)
        except InputError as exc:
            problem = f"The link's settings were not applied: {exc}"
        if self.model.trace is None:
            self.model.load_example("emocontext")
        if problem:
            self.model.error = problem
        pn.state.onload(self._url_loaded)

    def _url_loaded(self):
        self._url_ready = True
        self._update_url()

    def _update_url(self, *_):
        if not (self.sync_url and self._url_ready) or self.model.plan.error:
            return
        loc = pn.state.location
        if loc is None:
            return
        search = "?" + urlencode(self.model.to_query(), safe=",")
        if loc.search != search:
            loc.search = search


# ============================================================================ helpers
def _sub(k: int) -> str:
    """3 -> '₃' (subscript digits for ε_i)."""
    return str(k).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def _default_plan_values() -> dict:
    from ..models.plan import PRESETS
    from ..models.session import DEFAULT_PRESET

    return dict(PRESETS[DEFAULT_PRESET])


def _sentence(r, d) -> str:
    delta = r.settings["delta"]
    shown = d["incremental_signal"] if r.variant == "incremental" else d["signal"]
    lo, hi = d["incremental_range"] if r.variant == "incremental" else d["signal_range"]
    text = (f"At step {d['step']} the {METER_TITLES[r.variant]} shows signal {shown}: "
            f"{'the worst validation–test gap so far' if r.variant == 'incremental' else 'the validation–test gap'} "
            f"lies in [{lo:g}, {hi:g}{']' if hi == 1.0 else ')'}, and with probability {1 - delta:.6g} the test "
            f"score is within {d['epsilon']:g} of the model's true score")
    if r.short_of_labels and d["supported_epsilon"] is not None:
        text += (f" — if the test set had the {r.needed:,} labels the plan needs. With its "
                 f"{r.test_size:,} labels the bound is only {d['supported_epsilon']:.3g}")
    text += "."
    if not d["within_budget"]:
        text += " This step is beyond the budget: the guarantee does not cover it."
    need = (f'<div class="md-note session-needed">Labels needed for this plan: incremental meter {fmt.integer(r.labels_needed["incremental"])}, '
            f'regular meter {fmt.integer(r.labels_needed["regular"])}'
            + (f"; the test set has {fmt.integer(r.test_size)}." if r.test_size is not None else
               "; enter the test-set size n to check it.") + "</div>")
    return f'<p class="md-sentence">{esc(text)}</p>{need}'


def _alarms_html(r, index: int) -> str:
    items = r.alarms_until(index)
    if not items:
        return '<div class="md-ok">No alarms up to this step.</div>'
    out = []
    for a in items:
        cls = "session-alarm" if a.level == "alarm" else "session-note"
        head = "Alarm" if a.level == "alarm" else "Note"
        where = f" (step {a.step})" if a.step is not None else ""
        out.append(f'<div class="{cls} alarm-{esc(a.kind)}"><b>{head}{where}:</b> {esc(a.message)}</div>')
    return "".join(out)


def _steps_table(r, index: int) -> str:
    t = r.trace
    n = len(r)
    lo = max(0, index - _TABLE_WINDOW)
    hi = min(n, index + _TABLE_WINDOW + 1)
    colors = signal_colors(r.signals)
    tenants = t.has_tenants
    head = ("<tr><th class='num'>step</th>" + ("<th>tenant</th>" if tenants else "")
            + f"<th class='num'>{esc(t.val_column)}</th><th class='num'>{esc(t.test_column)}</th>"
            "<th class='num'>gap</th><th>regular</th><th>incremental</th><th class='num'>ε</th>"
            "<th class='num'>used</th><th>note</th></tr>")

    def swatch(k):
        color_class = f" signal-{k - 1}" if len(colors) <= len(SIGNAL_COLORS) else ""
        return f'<span class="md-signal{color_class}">{k}</span>'

    rows = []
    for i in range(lo, hi):
        d = r.step(i)
        cls = []
        if i == index:
            cls.append("session-current")
        if not d["within_budget"]:
            cls.append("session-beyond")
        notes = []
        if d["reverted"]:
            notes.append("reverted")
        if not d["within_budget"]:
            notes.append("beyond budget")
        if d["description"]:
            notes.append(d["description"])
        rows.append(
            f'<tr class="{" ".join(cls)}"><td class="num">{d["step"]}</td>'
            + (f"<td>{esc(d['tenant'] or '—')}</td>" if tenants else "")
            + f'<td class="num">{d[t.val_column]:.4f}</td><td class="num">{d[t.test_column]:.4f}</td>'
            f'<td class="num">{d["empirical_overfitting"]:.4f}</td><td>{swatch(d["signal"])}</td>'
            f'<td>{swatch(d["incremental_signal"])}</td><td class="num">{d["epsilon"]:g}</td>'
            f'<td class="num">{d["steps_used"]}/{r.budget}</td><td class="md-plain">{esc(" · ".join(notes))}</td></tr>')
    caption = (f'<div class="md-note md-spaced">Steps {int(t.steps[lo])}–{int(t.steps[hi - 1])} of '
               f'{n} (the current step highlighted)</div>')
    return caption + f'<table class="md-table session-table">{head}{"".join(rows)}</table>'


def _explanation() -> str:
    points = [
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
    ]
    return ('<div class="md-note md-section"><b>How to read this page</b><ul>'
            + "".join(f"<li>{esc(p)}</li>" for p in points) + "</ul></div>")


def page():
    """The served session page: inputs in the sidebar, the replay in the main area, URL-synced."""
    return Session(sync_url=True)
