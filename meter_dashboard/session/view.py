"""The session page: replay a development trace through the five-colour meter.

:class:`Session` is a :class:`~meter_dashboard.ui.base.DashboardView` over a
:class:`~meter_dashboard.session.model.SessionModel`, which holds the planner's
:class:`~meter_dashboard.meter.model.MeterPlan`.  It shows, for the step being replayed, the
regular and incremental signals, the eps they guarantee and the budget used; the meter
itself (:class:`~meter_dashboard.ui.meter_gauge.MeterGauge`); the history of scores
and signals (the paper's Figures 3a and 3c, decimated for long traces); the alarms; a
window of the step table; and a button that downloads the same replay as a
self-contained HTML report (:mod:`meter_dashboard.session.report`).  It computes nothing
itself: every number comes from the model, every text from
:mod:`~meter_dashboard.session.text`.

The sidebar — the trace, the upload area, the meter's summary and inputs — is
:class:`~meter_dashboard.session.view_inputs.SessionInputs`.

The first view is what a person reads first — the step, the guarantee that holds, the meter,
the sentence, what the signal means, the alarms, the steps — and only that is built when the
page opens; the history plots (Figures 3a, 3c) are built the first time they are opened.  What
is the same for everyone (the example traces, the notes) is read or rendered once per process.
A step moved patches what changed (one message per action).  The page's HTML comes from the
templates of :mod:`~meter_dashboard.session.view_html`; its state is in the URL through
:class:`~meter_dashboard.ui.urlstate.UrlState` (the planner's keys, the session's, the step).

Stable hooks for tests: CSS classes ``meter-signal``, ``meter-incremental-signal`` on the
current step's signals, ``meter-guaranteed`` on what the test set guarantees and
``meter-epsilon`` on the plan's eps_i; ``session-meaning`` on what the signal means;
``trace-error`` on a refused upload's message; ``trace-upload`` on the upload area;
``step-back``/``step-forward``/``play-button``/``first-step``/``last-step``/``next-alarm``/
``next-change`` on the replay buttons, ``play-speed`` on the speed; ``jump-input`` on "go to
step"; ``steps-note`` on where T comes from; ``session-report`` on the report button;
``session-history-toggle`` on the history's button.
"""
from __future__ import annotations

import functools
import io
from typing import TYPE_CHECKING

import panel as pn
import param
from bokeh.events import RangesUpdate

from ..core.html import render
from ..core.report import csv_with_inputs
from ..core.validation import InputError, check_int
from ..meter.model import MeterPlan
from ..ui.base import DashboardView, load_notebook_extensions
from ..ui.exports import Exports, lead_markup
from ..ui.inputs import NumberInput
from ..ui.meter_gauge import MeterGauge
from ..ui.sections import document_dispatch
from ..ui.style import HTML
from ..ui.urlstate import UrlState
from . import text, view_html
from .model import METER_TITLES, SessionModel
from .trace import EXAMPLES
from .view_inputs import Opened, SessionInputs

if TYPE_CHECKING:  # built when the history is first opened
    from .figures import ScorePlot, SignalPlot

__all__ = ["Session", "page", "SPEEDS"]

#: Play speeds: label -> milliseconds per step (a 200-step trace plays in 10 s at 20 steps/s).
SPEEDS = {"1 step/s": 1000, "2 steps/s": 500, "5 steps/s": 200, "10 steps/s": 100, "20 steps/s": 50}
_HISTORY = "History: scores and signals per step (Fig. 3a, 3c)"


class Session(SessionInputs, DashboardView):
    """Replay a development trace through the meter, step by step.

    Parameters
    ----------
    trace : path, bytes, file object, records, DataFrame or Trace, optional
        The trace to load; by default the shipped EmoContext example.
    model : SessionModel, optional
        The model to drive (its plan included).
    plan : MeterPlan, optional
        The meter's settings (for example the planner's own ``Planner.plan``); its T is kept.
    sync_url : bool
        Keep the plan and the session's choices in the page URL (served pages).
    **params
        MeterPlan parameters (``epsilon``, ``ranges``, ``delta``, ``steps``, ...) and
        SessionModel parameters (``variant``, ``example``, ``test_size``).

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Session(example="emocontext", delta=0.1)  # doctest: +SKIP
    """

    title = "Session replay"
    #: None at page load: the upload area's FilePond comes once the page is on screen (view_inputs).
    extensions = ()

    model = param.ClassSelector(class_=SessionModel)
    sync_url = param.Boolean(default=False)
    play_interval = param.Selector(default=1000, objects=list(SPEEDS.values()), doc="Milliseconds per step when playing.")

    def __init__(self, trace=None, *, model: SessionModel | None = None, plan: MeterPlan | None = None,
                 sync_url: bool = False, **params):
        plan_params = {k: params.pop(k) for k in list(params) if k in MeterPlan.param and k != "name"}
        model_params = {k: params.pop(k) for k in list(params) if k in ("variant", "example", "test_size")}
        if plan_params.get("tenant_steps") and "tenants" not in plan_params:
            plan_params["tenants"] = len(plan_params["tenant_steps"])
        if model is None:
            if plan is not None and plan_params:
                plan.param.update(**plan_params)
            if trace is None and "example" not in model_params:  # a served page: the link's example, read once
                model_params["example"] = _linked_example() if sync_url else "emocontext"
            model = SessionModel(trace=trace, plan=plan if plan is not None else (plan_params or None),
                                 **model_params)
        super().__init__(model=model, sync_url=sync_url, **params)
        self._play_callback = None
        self._url = None  # UrlState of a served page
        self._url_ready = False
        self.scores: ScorePlot | None = None  # the history plots, built when first opened
        self.signals: SignalPlot | None = None
        self._load = None  # the TraceLoad under way
        self._dark = pn.config.theme == "dark"
        if sync_url and pn.state.location is not None:
            self._init_url()  # the link's settings first: the page is then built and drawn once, as it is
        doc = pn.state.curdoc
        served = doc is not None and doc.session_context is not None
        self._build_inputs(served)
        self._build_replay_controls()
        self._build_outputs()
        m = self.model
        m.param.watch(self._on_result, ["result"])
        m.param.watch(self._on_position, ["position"])
        m.param.watch(self._on_status, ["error", "problems", "status", "example", "test_size", "variant"])
        m.param.watch(self._on_steps_note, ["steps_source", "trace"])
        m.param.watch(self._on_plan, ["variant", "steps_source", "bound", "max_error_rate", "test_size"])
        m.plan.param.watch(self._on_plan, ["result", "error", "steps", "tenant_steps"])
        if served:
            m.work_in_background(document_dispatch())  # long replays leave the event loop free for every session
        self.param.watch(self._on_speed, ["play_interval"])
        self._on_status()
        self._on_plan()
        self._on_result()

    def _build_replay_controls(self):
        buttons = (("◀◀ First", "first-step", self.model.first), ("◀ Back", "step-back", self.model.step_back),
                   ("Forward ▶", "step-forward", self.model.step_forward), ("Last ▶▶", "last-step", self.model.last))
        made = {}
        for label, css, action in buttons:
            made[css] = pn.widgets.Button(label=label, css_classes=[css], margin=(4, 4), **_fits(92))
            made[css].on_click(lambda event, action=action: self._stop_and(action))
        self.first_button, self.back_button = made["first-step"], made["step-back"]
        self.forward_button, self.last_button = made["step-forward"], made["last-step"]
        self.play_button = pn.widgets.Button(label="▶ Play", color="primary", margin=(4, 4), **_fits(92),
                                             css_classes=["play-button"])
        self.play_button.on_click(self._on_play)
        self.speed = pn.widgets.Select.from_param(self.param.play_interval, name="Speed", options=SPEEDS, description=None, **_fits(110),
                                                  margin=(4, 4), css_classes=["play-speed"])
        self.next_alarm_button = pn.widgets.Button(label="Next alarm »", margin=(4, 4), **_fits(110),
                                                   css_classes=["next-alarm"])
        self.next_alarm_button.on_click(lambda event: self._stop_and(self.model.next_alarm))
        self.next_change_button = pn.widgets.Button(label="Next change »", margin=(4, 4), **_fits(120),
                                                    css_classes=["next-change"])
        self.next_change_button.on_click(lambda event: self._stop_and(self.model.next_change))
        self.slider = pn.widgets.IntSlider(label="Position in the trace", start=1, end=2, value=1,
                                           sizing_mode="stretch_width", css_classes=["step-slider"])
        self.slider.param.watch(self._on_slider, "value_throttled")
        self.jump = _Fitted(self.model, "position", label="Go to step", check=self._position_of,
                                format=self._step_at, css_classes=["jump-input"],
                                message_classes=["jump-error"], on_value=self._jump_to)
        self.jump.text.description = None  # no tooltip: "Go to step" says it all (and saves a model)
        self.report_button = pn.widgets.FileDownload(callback=self._report_file, filename="session-replay.html",
                                                     label="⤓ Report (HTML)", color="light", **_fits(150),
                                                     margin=(4, 4), css_classes=["session-report"])
        self.exports = Exports("session", self._file_stem, csv=self._csv_text, slide=self._slide)
        self.lead = HTML("", sizing_mode="stretch_width", css_classes=["session-lead-pane"])

    def _position_of(self, typed) -> int:
        """The position of the step number typed into "Go to step" (a message beside the box when it is none)."""
        result = self.model.result
        if result is None:
            raise InputError("Go to step", "a step of a loaded trace", typed)
        step = check_int("Go to step", typed, minimum=0)
        try:
            return result.index_of(step)
        except InputError as exc:
            raise InputError("Go to step", exc.rule, typed) from None

    def _step_at(self, position) -> str:
        result = self.model.result
        if result is None or position is None:
            return ""
        return str(int(result.trace.steps[min(position, len(result) - 1)]))

    def _jump_to(self, position) -> None:
        if position != self.model.position:  # the box also follows the replay: that is not a jump
            self._stop()
            self.model.position = position

    # ------------------------------------------------------------------ outputs
    def _build_outputs(self):
        self.title = HTML("", sizing_mode="stretch_width", css_classes=["session-heading"])
        self.cards = HTML("", sizing_mode="stretch_width", css_classes=["session-cards"])
        # the sentence, what the signal means and the alarms: one pane, they change together
        self.sentence = HTML("", sizing_mode="stretch_width", css_classes=["session-sentence", "session-alarms"])
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["session-steps"])
        self.explain = HTML(view_html.notes_html(), sizing_mode="stretch_width", css_classes=["session-explain"])
        self.gauge = MeterGauge()
        self._history = Opened(_HISTORY, self._build_history, "session-history-toggle", margin=(10, 5, 4, 5))
        self.history_toggle = self._history.toggle

    def _build_history(self) -> pn.Column:
        """The plots of Figures 3a and 3c (Bokeh), built the first time the history is opened."""
        from .figures import ScorePlot, SignalPlot

        dark = pn.config.theme == "dark"
        self.scores, self.signals = ScorePlot(dark=dark), SignalPlot(dark=dark)
        for plot in (self.scores, self.signals):
            plot.figure.on_event(RangesUpdate, functools.partial(self._on_zoom, plot))
        self.score_pane = pn.pane.Bokeh(self.scores.figure, sizing_mode="stretch_width", css_classes=["session-scores"])
        self.signal_pane = pn.pane.Bokeh(self.signals.figure, sizing_mode="stretch_width",
                                         css_classes=["session-signals"])
        self._draw_history()
        return pn.Column(self.score_pane, self.signal_pane, sizing_mode="stretch_width", margin=0,
                         css_classes=["session-history"])

    def _draw_history(self) -> None:
        r = self.model.result
        if self.scores is None or self.signals is None or r is None:
            return
        self.scores.update(r)
        self.signals.update(r)
        step = r.step(min(self.model.position, len(r) - 1))["step"]
        self.scores.move_cursor(step)
        self.signals.move_cursor(step)

    # ------------------------------------------------------------------ layout
    def results(self) -> pn.Column:
        """Replay controls, headlines, meter, sentence, alarms, steps; the history when opened (the main area)."""
        # a Column laid out as a wrapping row: no template (pn.FlexBox costs ~200 ms per session), and its
        # minimum width is 0 (each control is at most its width: a phone wraps them, never scrolls)
        wrap = {"flex-direction": "row", "flex-wrap": "wrap", "align-items": "flex-end"}
        bar = pn.Column(self.first_button, self.back_button, self.play_button, self.forward_button, self.last_button,
                        self.jump, self.report_button, *self.exports.row.objects, self.speed,
                        self.next_alarm_button, self.next_change_button, styles=wrap, sizing_mode="stretch_width",
                        css_classes=["session-controls"])
        results = pn.Column(self.lead, self.title, bar, self.slider, self.cards, self.gauge, self.sentence, self.table,
                            *self._history.parts(), self.explain, sizing_mode="stretch_width")
        self._history.layout = results
        return results

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

    def _on_speed(self, event) -> None:
        if self._play_callback is not None:
            self._play_callback.period = event.new  # playing on, at the new speed

    def _tick(self):
        with pn.io.hold():
            moved = self.model.step_forward()
        if not moved:
            self._stop()

    def _stop(self):
        if self._play_callback is not None:
            self._play_callback.stop()
            self._play_callback = None
            self._update_url()  # the step reached goes into the link
        self.play_button.label = "▶ Play"

    def _on_slider(self, event):
        if event.new is not None and self.model.result is not None:
            self._stop()
            self.model.position = min(max(int(event.new) - 1, 0), len(self.model.result) - 1)

    def _on_zoom(self, plot, event) -> None:
        """Zooming a long trace's plot redraws the visible steps in more detail."""
        from .figures import LOD_POINTS

        if plot.result is not None and len(plot.result) > LOD_POINTS:
            plot.show_window(event.x0, event.x1)

    def _repr_mimebundle_(self, include=None, exclude=None):
        load_notebook_extensions(("filedropper",))  # a notebook builds the upload area at once
        return super()._repr_mimebundle_(include, exclude)

    def report(self):
        """The replay at the step shown, as a self-contained HTML report (``.save("session.html")`` in a notebook).

        Returns a :class:`meter_dashboard.core.report.Report` (None before a trace is loaded).
        """
        from .report import session_report

        m = self.model
        if m.result is None:
            return None
        note = text.steps_source_text(m.steps_origin, m.plan.steps).split(": ", 1)[1].rstrip(".")
        return session_report(m.result, position=m.position, steps_note=note)

    def _file_stem(self) -> str:
        r = self.model.result
        return "session-replay" if r is None else f"session-replay_{r.variant}_T{r.budget}"

    def _csv_text(self) -> str | None:
        r = self.model.result
        return None if r is None else csv_with_inputs(text.inputs(r), r.to_frame(), index=False)

    def _slide(self):
        r = self.model.result
        return None if r is None else r.slide()

    def _report_file(self):
        """The download button's file."""
        report = self.report()
        return io.StringIO(report.to_html() if report is not None else "")

    # ------------------------------------------------------------------ rendering
    def _on_result(self, *_):
        with pn.io.hold():
            self._render_result()

    def _render_result(self):
        r = self.model.result
        self.report_button.disabled = r is None
        if r is None:
            self.title.object = render("session/templates/note.html", text="Load a trace to replay it.")
            self.lead.object = ""
            return
        self.lead.object = lead_markup(r.lead(), "session")
        t = r.trace
        _set(self.title, view_html.title_html(r))
        self._draw_history()
        self.gauge.param.update(ranges=list(r.settings["ranges"]), epsilon=list(r.settings["epsilon"]),
                                meter_name=METER_TITLES[r.variant])
        self.slider.param.update(start=1, end=max(len(t), 2), disabled=len(t) < 2)
        self._render_position()

    def _on_position(self, *_):
        with pn.io.hold():
            self._render_position()
        if self._play_callback is None:
            self._update_url()

    def _render_position(self):
        """The step shown: each piece is replaced only when its content changed (one message in all)."""
        m = self.model
        r = m.result
        if r is None:
            return
        i = min(m.position, len(r) - 1)
        d = r.step(i)
        if self.slider.value != i + 1:
            self.slider.value = i + 1
        shown = self._step_at(i)
        if self.jump.text.value != shown:  # "Go to step" shows where the replay stands
            self.jump.text.value = shown
        if self.scores is not None and self.signals is not None:
            self.scores.move_cursor(d["step"])
            self.signals.move_cursor(d["step"])
        g = text.guarantee_at(r, i)
        self.gauge.param.update(empirical_overfitting=d["empirical_overfitting"], signal=d["signal"],
                                incremental_signal=d["incremental_signal"], epsilon_shown=d["epsilon"],
                                supported_epsilon=g.holds if g.state == "short" else None,
                                epsilon_note=text.gauge_note(g))
        self.back_button.disabled = self.first_button.disabled = i == 0
        self.forward_button.disabled = self.last_button.disabled = i >= len(r) - 1
        self.next_alarm_button.disabled = not m.has_next("alarm")
        self.next_change_button.disabled = not m.has_next("change")
        _set(self.cards, view_html.cards_html(r, i))
        _set(self.sentence, view_html.answer_html(r, i) + view_html.alarms_html(r, i))
        _set(self.table, view_html.steps_table_html(r, i))

    # ------------------------------------------------------------------ URL
    def _init_url(self):
        self._url = UrlState(SessionModel.QUERY_KEYS)
        query = self._url.query()
        applied = self.model.apply_link(query) if query else True
        problem = self._url.refused or ("" if applied else self.model.error)
        if self.model.trace is None:
            self.model.load_example("emocontext")
        if problem:
            self.model.refuse(problem)
        pn.state.onload(self._url_loaded)

    def _url_loaded(self):
        self._url_ready = True
        self._update_url()

    def _update_url(self, *_):
        if self._url is None or not self._url_ready or self.model.plan.error:
            return
        self._url.write(self.model.to_query())


class _Fitted(NumberInput):
    """"Go to step": at most 130 px wide, adding nothing to its row's minimum width (see :func:`_fits`)."""

    def __panel__(self):
        column = super().__panel__()
        column.max_width = 130
        return column


def _fits(width: int) -> dict:
    """A control of at most ``width`` px that adds nothing to its row's minimum width (a phone wraps the row)."""
    return {"sizing_mode": "stretch_width", "max_width": width}


def _set(pane, html: str) -> None:
    """Replace a pane's HTML only when it changed (an unchanged piece sends nothing)."""
    if pane.object != html:
        pane.object = html


def _linked_example() -> str:
    """The shipped example a served page's link names (the EmoContext trace when it names none, or a bad one)."""
    key = UrlState(["example"]).query().get("example")
    return key if key in EXAMPLES else "emocontext"


def page():
    """The served session page: inputs in the sidebar, the replay in the main area, URL-synced."""
    return Session(sync_url=True)
