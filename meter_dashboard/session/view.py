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

import panel as pn
import param

from ..meter.model import MeterPlan
from ..ui.base import DashboardView, load_notebook_extensions
from ..ui.lazy import on_screen
from ..ui.sections import document_dispatch
from ..ui.urlstate import UrlState
from .model import SessionModel
from .trace import EXAMPLES
from .view_answer import Answer
from .view_controls import SPEEDS, ReplayControls
from .view_exports import SessionExports
from .view_inputs import SessionInputs

__all__ = ["Session", "page", "SPEEDS"]


class Session(DashboardView):
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

    def __init__(self, trace=None, *, model: SessionModel | None = None, plan: MeterPlan | None = None,
                 sync_url: bool = False, **params):
        model = _model(trace, model, plan, sync_url, params)
        super().__init__(model=model, sync_url=sync_url, **params)
        self._url = None  # UrlState of a served page
        self._url_ready = False
        self._dark = pn.config.theme == "dark"
        if sync_url and pn.state.location is not None:
            self._init_url()  # the link's settings first: the page is then built and drawn once, as it is
        doc = pn.state.curdoc
        served = doc is not None and doc.session_context is not None
        self.inputs = SessionInputs(model=model, served=served, on_stop=self._stop, on_change=self._update_url)
        self.controls_section = ReplayControls(model=model, on_stop=self._update_url)
        self.answer = Answer(model=model)
        self._build_exports()
        if served:
            model.work_in_background(document_dispatch())  # long replays leave the event loop free for every session

    def _build_exports(self):
        self.title = self.answer.title  # the heading pane, as before (the class's title names the page)
        self.exports_section = SessionExports(model=self.model)
        self.report_button, self.exports = self.exports_section.report_button, self.exports_section.exports

    # ------------------------------------------------------------------ the sections' parts, by their old names
    def __getattr__(self, name):
        for section in ("inputs", "controls_section", "answer"):
            if name in _PARTS[section] and section in self.__dict__:
                return getattr(self.__dict__[section], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def history_toggle(self):
        return self.answer.history.toggle

    def _stop(self):
        self.controls_section.stop()

    def controls(self) -> pn.Column:
        """Trace and meter inputs (the sidebar of the served page)."""
        return self.inputs.controls()

    def open_settings(self) -> None:
        """Show the meter's inputs (built the first time)."""
        self.inputs.open_settings()

    # ------------------------------------------------------------------ layout
    def results(self) -> pn.Column:
        """Replay controls, headlines, meter, sentence, alarms, steps; the history when opened (the main area)."""
        controls = self.controls_section
        bar = controls.bar(*self.exports_section.buttons())
        results = pn.Column(*self.answer.head(), bar, controls.slider, *self.answer.body(),
                            sizing_mode="stretch_width")
        self.answer.history.layout = results
        return results

    def _repr_mimebundle_(self, include=None, exclude=None):
        load_notebook_extensions(("filedropper",))  # a notebook builds the upload area at once
        return super()._repr_mimebundle_(include, exclude)

    def report(self):
        """The replay at the step shown, as a self-contained HTML report (``.save("session.html")`` in a notebook).

        Returns a :class:`meter_dashboard.core.report.Report` (None before a trace is loaded).
        """
        return self.exports_section.report()

    def _report_file(self):
        """The report button's file."""
        return self.exports_section._report_file()

    # ------------------------------------------------------------------ what the sections do not show
    @param.depends("model.position", watch=True)
    def _on_position(self) -> None:
        if self._url_ready and not self.controls_section.playing:
            self._update_url()  # the step shown goes into the link (a play puts in the step it stops at)

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
        on_screen(self._url_loaded)

    def _url_loaded(self):
        self._url_ready = True
        self._update_url()

    def _update_url(self, *_):
        if self._url is None or not self._url_ready or self.model.plan.error:
            return
        self._url.write(self.model.to_query())


#: The parts of each section a page (and its tests) reach by their old names: ``view.cards``, ``view.jump``.
_PARTS = {
    "inputs": frozenset({"example", "upload", "load_progress", "trace_error", "trace_status", "upload_help",
                         "test_size", "meter_summary", "planner_link", "settings_toggle", "steps_note",
                         "plan_error", "variant", "epsilon", "ranges", "delta", "steps",
                         "tenant_steps", "reverts", "_on_upload"}),
    "controls_section": frozenset({"first_button", "back_button", "forward_button", "last_button", "play_button",
                                   "speed", "next_alarm_button", "next_change_button", "slider", "jump"}),
    "answer": frozenset({"lead", "title", "cards", "sentence", "table", "explain", "gauge", "scores", "signals"}),
}


def _model(trace, model: SessionModel | None, plan: MeterPlan | None, sync_url: bool, params: dict) -> SessionModel:
    """The model a Session drives: ``model``, or one from the MeterPlan and SessionModel parameters in ``params``.

    Those parameters are taken out of ``params`` either way (what is left is the view's own).
    """
    plan_params = {k: params.pop(k) for k in list(params) if k in MeterPlan.param and k != "name"}
    model_params = {k: params.pop(k) for k in list(params) if k in ("variant", "example", "test_size")}
    if model is not None:
        return model
    if plan_params.get("tenant_steps") and "tenants" not in plan_params:
        plan_params["tenants"] = len(plan_params["tenant_steps"])
    if plan is not None and plan_params:
        plan.param.update(**plan_params)
    if trace is None and "example" not in model_params:  # a served page: the link's example, read once
        model_params["example"] = _linked_example() if sync_url else "emocontext"
    return SessionModel(trace=trace, plan=plan if plan is not None else (plan_params or None), **model_params)


def _linked_example() -> str:
    """The shipped example a served page's link names (the EmoContext trace when it names none, or a bad one)."""
    key = UrlState(["example"]).query().get("example")
    return key if key in EXAMPLES else "emocontext"


def page():
    """The served session page: inputs in the sidebar, the replay in the main area, URL-synced."""
    return Session(sync_url=True)
