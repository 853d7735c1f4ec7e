"""The session page's sidebar: the trace (example, upload, n) and the meter (a summary; its inputs when opened).

:class:`SessionInputs` is the section of :class:`~meter_dashboard.session.view.Session` that reads
what a person gives (a ``pn.viewable.Viewer`` declared over the page's SessionModel).  What a first view
needs is built when the page opens: the example, the
test set's size, a one-paragraph summary of the meter with the link to the planner, and the meter's
inputs (ε, ranges, δ, T, tenants, reverts, the meter) in the ``<details>`` drawer "Change the meter".
The inputs are two :class:`~meter_dashboard.ui.form.Form` components (one Bokeh model each, issue 29)
around the upload area; a closed drawer costs the browser nothing.  The upload area is built when
first wanted (issue 19):

- the upload area (Panel's ``FileDropper``, FilePond in the browser) once the page is on
  screen: on a served page the browser then fetches FilePond's scripts (``jscallback`` on a
  hidden toggle, started by ``ui.lazy.on_screen``) and says when they are in, so FilePond never
  delays the answer; in a notebook it is built at once.

Uploads are bounded chunk by chunk (:class:`~meter_dashboard.ui.upload.GuardedFileDropper`)
and read and replayed in a worker thread (:class:`~meter_dashboard.session.model.TraceLoad`).
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import panel as pn
import param

from ..core.files import MAX_UPLOAD_BYTES, human_bytes
from ..core.html import render
from ..core.validation import InputError, check_int
from ..meter.model import resize_ranges
from ..ui.form import Action, Box, Drawer, Field, Form, Note, Row, Slot, linked
from ..ui.inputs import ListInput, NumberInput
from ..ui.lazy import on_screen
from ..ui.style import stale_html
from ..ui.upload import GuardedFileDropper
from . import text, view_html
from .model import MAX_BUDGET_STEPS, METER_TITLES, SessionModel, TraceLoad
from .replay import bound_words
from .trace import EXAMPLES

__all__ = ["SessionInputs", "Opened", "UPLOADED"]

#: The example selector's entry for a trace that came from a file.
UPLOADED = "(uploaded file)"
_SETTINGS = "Change the meter (ε, ranges, δ, T, tenants, reverts)"
_TRACE_HEAD = "<b>Trace</b> — the team's development history"
#: The example select's options (title: value), the same for everyone.
_EXAMPLE_OPTIONS = {**{info.title: key for key, info in EXAMPLES.items()}, UPLOADED: UPLOADED}
_VARIANTS = {"Incremental meter": "incremental", "Regular meter": "regular"}

#: Fetch FilePond's scripts (once per browser page), then tell the server (the toggle's value).
_LOAD_FILEPOND = """
if (cb_obj.label !== "load" || cb_obj.active) { return; }
const sources = %s;
const load = (src) => new Promise((done, fail) => {
  const s = document.createElement("script");
  s.src = src; s.onload = done; s.onerror = () => fail(new Error(src));
  document.head.appendChild(s);
});
(async () => {
  if (window.FilePond === undefined) { for (const src of sources) { await load(src); } }
  cb_obj.active = true;
})().catch((e) => console.warn("the upload area could not load FilePond:", e.message));
"""


class Opened:
    """A part of the page built the first time its toggle is opened, then shown and hidden (issue 19).

    ``build()`` returns the part (a Panel layout); it goes under the toggle in :attr:`layout`, the
    column holding the toggle (set once the page is laid out).
    """

    def __init__(self, title: str, build, css: str, margin=(4, 5)):
        self.title, self._build = title, build
        self.toggle = pn.widgets.Toggle(label=f"▸ {title}", value=False, color="light", sizing_mode="stretch_width",
                                        margin=margin, css_classes=[css])
        self.toggle.param.watch(self._on_toggle, "value")
        self.body: Any = None
        self.layout: Any = None

    def _on_toggle(self, event) -> None:
        with pn.io.hold():
            if event.new and self.body is None:
                self.body = self._build()
                if self.layout is not None:
                    self.layout.insert(self.layout.objects.index(self.toggle) + 1, self.body)
            if self.body is not None:
                self.body.visible = event.new
            self.toggle.label = f"{'▾' if event.new else '▸'} {self.title}"

    def parts(self) -> list:
        """The toggle, and the part once built (for laying out)."""
        return [self.toggle] + ([self.body] if self.body is not None else [])


class SessionInputs(pn.viewable.Viewer):
    """The sidebar of :class:`~meter_dashboard.session.view.Session`: the trace and the meter's inputs.

    Declared over the :class:`~meter_dashboard.session.model.SessionModel` (``@param.depends``); ``on_stop``
    stops a replay that is playing (a new trace), ``on_change`` puts what changed into the page's link.
    """

    model = param.ClassSelector(class_=SessionModel)

    # parts built when first needed
    upload: Any
    load_progress: Any
    _filepond: Any
    _sidebar: Any

    def __init__(self, served: bool = False, on_stop: Callable[[], None] = lambda: None,
                 on_change: Callable[[], None] = lambda: None, **params):
        super().__init__(**params)
        self._stop, self._update_url = on_stop, on_change
        self._load: Any = None  # the TraceLoad under way
        self._build_inputs(served)
        self.model.plan.param.watch(self._on_plan, ["result", "error", "steps", "tenant_steps"])
        self._on_status()
        self._on_plan()

    def __panel__(self):
        return self.controls()

    # ------------------------------------------------------------------ building
    def _build_inputs(self, served: bool) -> None:
        m = self.model
        current = m.example if m.example is not None else (UPLOADED if m.trace is not None else None)
        self.example = Box(value=current or next(iter(_EXAMPLE_OPTIONS.values())))
        self.example.param.watch(self._on_example, "value")
        self.upload = self.load_progress = None  # built once the page is on screen (see _build_upload)
        self._sidebar = None  # the sidebar's column, once laid out
        # what a trace file holds, then why a trace was refused or what was loaded: one slot (issue 19)
        self.trace_error = Slot(object=_upload_help())
        self.trace_status = self.upload_help = self.trace_error
        self.test_size = NumberInput(m, "test_size", label="Test-set size n (labels)", placeholder="e.g. 5509",
                                     css_classes=["test-size-input"], message_classes=["test-size-message"],
                                     field="test_size")
        self.meter_summary = Slot()
        self.planner_link = self.meter_summary  # the summary carries the link to the planner
        self._build_settings()
        self._build_forms()
        if served:
            self._filepond = pn.widgets.Toggle(label="", value=False, visible=False, css_classes=["filepond-ready"])
            self._filepond.jscallback(label=_LOAD_FILEPOND % json.dumps(_filepond_scripts()))
            self._filepond.param.watch(self._on_filepond, "value")
            on_screen(self._start_filepond)
        else:
            self._filepond = None
            self._build_upload()

    def _build_forms(self) -> None:
        """The sidebar's two forms, around the upload area (a form cannot hold FilePond)."""
        example = Field("example", "Example trace", self.example, kind="select", classes=("example-select",),
                        options=[(title, key) for title, key in _EXAMPLE_OPTIONS.items()])
        self.trace_form = Form([Note(_TRACE_HEAD, classes=("session-trace-head",)), example],
                               prefix="session-trace", css_classes=["session-trace-form"])
        settings = Drawer("settings", _SETTINGS, [
            self.variant_field, self.epsilon.field(), self.ranges.field(),
            Row([self.delta.field(), self.steps.field()]),
            Note(slot=self.steps_note, classes=("steps-note",), name="steps-note"),
            Action("follow", "T = the trace's steps", self.model.follow_trace, classes=("follow-trace",), hidden=True),
            self.tenant_steps.field(), self.reverts.field(),
            Note(slot=self.plan_error, classes=("plan-error",), name="plan-error")], classes=("meter-settings",))
        self.form = Form([
            Note(slot=self.trace_error, classes=("trace-error", "trace-status", "upload-help"), name="trace"),
            self.test_size.field(),
            Note(slot=self.meter_summary, classes=("meter-summary", "planner-link", "md-form-head"), name="summary"),
            settings], prefix="session", css_classes=["session-form"])
        self.settings_toggle = self.form.drawer("settings")

    def _on_filepond(self, event) -> None:
        if event.new:
            self._build_upload()

    def _start_filepond(self) -> None:
        """The page is on screen: the browser may fetch FilePond now (see _LOAD_FILEPOND)."""
        self._filepond.label = "load"

    def _build_upload(self) -> None:
        """The upload area (Panel's FileDropper with the page's limits), in place of its placeholder."""
        if self.upload is not None:
            return
        self.upload = GuardedFileDropper(
            parameter="trace", max_bytes=MAX_UPLOAD_BYTES, layout="compact", sizing_mode="stretch_width", height=90,
            accepted_filetypes=[".csv", ".json", "text/csv", "application/json", "text/plain"],
            css_classes=["trace-upload"], checked=True)
        self.upload.param.watch(self._on_upload, "value")
        self.upload.param.watch(self._on_upload_refused, "upload_error")
        self.load_progress = pn.indicators.Progress(value=0, max=100, visible=False, sizing_mode="stretch_width",
                                                    css_classes=["trace-progress"], margin=(0, 10))
        if self._sidebar is not None and self._filepond in self._sidebar.objects:  # in place of the hidden toggle
            k = self._sidebar.objects.index(self._filepond)
            self._sidebar[k:k + 1] = [self.upload, self.load_progress]

    def open_settings(self) -> None:
        """Show the meter's inputs (the drawer "Change the meter")."""
        self.settings_toggle.open()

    def _build_settings(self) -> None:
        """The meter's inputs, bound to the planner's model the session holds (shown once the drawer is opened)."""
        m, p = self.model, self.model.plan
        self.variant = linked(m, "variant", offered=_VARIANTS.values())
        self.variant_field = Field("variant", "Meter", self.variant, kind="buttons", classes=("variant-input",),
                                   options=list(_VARIANTS.items()))
        self.epsilon = ListInput(p, "epsilon", label="ε per signal (ε₁ ≤ … ≤ ε_m)", kind="float",
                                 on_value=lambda eps: _set_epsilon(self.model.plan, eps), css_classes=["epsilon-input"],
                                 field="epsilon")
        self.ranges = ListInput(p, "ranges", label="Range boundaries 0 = r₀ < … < r_m = 1", kind="float",
                                css_classes=["ranges-input"], field="ranges")
        self.delta = NumberInput(p, "delta", label="δ (failure probability)", css_classes=["delta-input"],
                                 message_classes=["delta-message"], field="delta")
        self.steps = NumberInput(p, "steps", label="T (budget of steps)", css_classes=["steps-input"],
                                 check=_check_steps, message_classes=["steps-message"], field="steps")
        self.steps_note = Slot()
        self.tenant_steps = ListInput(p, "tenant_steps", label="Steps per tenant (optional)", placeholder="e.g. 12,8",
                                      on_value=lambda v: self.model.plan.param.update(
                                          tenant_steps=v, tenants=max(1, len(v))), css_classes=["tenant-steps-input"],
                                      field="tenant_steps")
        self.reverts = ListInput(p, "reverts", label="Revert steps fixed in advance (optional)", placeholder="e.g. 9",
                                 on_value=lambda v: self.model.plan.param.update(
                                     reverts=v, revert_budget=len(v)), css_classes=["reverts-input"], field="reverts")
        self.plan_error = Slot()

    def controls(self) -> pn.Column:
        """Trace and meter inputs (the sidebar of the served page): two forms around the upload area."""
        if self._sidebar is None:
            upload = [self._filepond] if self.upload is None else [self.upload, self.load_progress]
            self._sidebar = pn.Column(self.trace_form, *upload, self.form, sizing_mode="stretch_width")
        return self._sidebar

    # ------------------------------------------------------------------ the trace
    def _on_example(self, event):
        if event.new == UPLOADED or event.new == self.model.example:
            return
        self._stop()
        with pn.io.hold():
            self.model.load_example(event.new)

    def _on_upload_refused(self, event):
        if event.new:
            self.model.refuse(event.new)

    def _on_upload(self, event):
        for name, data in (event.new or {}).items():
            if isinstance(data, str):
                data = data.encode("utf-8")
            self._stop()
            self._start_load(data, name)

    def _start_load(self, data: bytes, name: str) -> None:
        """Read and replay the upload in a worker thread (served), or right here (notebook, tests)."""
        if self._load is not None:
            self._load.cancel()  # a newer file wins
        job = TraceLoad(self.model, data, name=name, max_bytes=MAX_UPLOAD_BYTES)
        self._load = job
        job.param.watch(self._on_load_progress, ["progress", "status", "running"])
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            async def run():
                await self._run_load(job)

            pn.state.execute(run)
        else:
            job.run()
            self._finish_load(job)

    async def _run_load(self, job) -> None:
        await job.arun()
        self._finish_load(job)

    def _finish_load(self, job) -> None:
        if job is not self._load:
            return  # a newer upload replaced it
        self._load = None
        with pn.io.hold():
            self.load_progress.visible = False
            if job.error:
                self.model.refuse(job.error, job.problems)
            elif job.prepared is not None:
                self.model.apply(job.prepared)

    def _on_load_progress(self, *_):
        job = self._load
        if job is None:
            return
        self.load_progress.visible = job.running
        self.load_progress.value = int(round(100 * job.progress))
        if job.running and job.status:
            self._trace_message(view_html.status_html(job.status.capitalize()))

    @param.depends("model.error", "model.problems", "model.status", "model.example", "model.test_size",
                   "model.variant", watch=True)
    def _on_status(self, *_):
        m = self.model
        self._trace_message(view_html.refusal_html(m.error, m.problems) or view_html.status_html(m.status))
        if self.upload is not None and (self.upload.value or self.upload.upload_error):
            if m.error:  # the file in the drop area: refused (the list of bad cells is beside it) or read
                self.upload.refuse()
            else:
                self.upload.accept()
        wanted = m.example if m.example is not None else (UPLOADED if m.trace is not None else None)
        if wanted is not None and self.example.value != wanted:
            self.example.value = wanted
        self._update_url()

    def _trace_message(self, html: str) -> None:
        """Under what a trace file holds: why the last one was refused, or what was loaded."""
        text = _upload_help() + html
        self.trace_error.show(text)

    # ------------------------------------------------------------------ the plan
    @param.depends("model.variant", "model.steps_source", "model.bound", "model.max_error_rate", "model.test_size",
                   watch=True)
    def _on_plan(self, *_):
        m = self.model
        self.meter_summary.show(render(
            "session/templates/meter_summary.html", meter=METER_TITLES[m.variant], plan=m.plan,
            steps_text=text.steps_source_text(m.steps_origin, m.plan.steps),
            query=urlencode(m.planner_query(), safe=","), bound=bound_words(m.bound, m.max_error_rate)))
        self.plan_error.show((view_html.error_html(m.plan.error) + stale_html("replay")) if m.plan.error else "")
        self._on_steps_note()
        self._update_url()

    @param.depends("model.steps_source", "model.trace", watch=True)
    def _on_steps_note(self, *_):
        m = self.model
        origin = m.steps_origin
        self.steps_note.show(render("session/templates/note.html", text=text.steps_source_text(origin, m.plan.steps)))
        self.form.show_action("follow", m.trace is not None and origin not in ("trace", "tenant_steps")
                              and m.plan.steps != len(m.trace))
        self.form.set_label("follow", f"T = the trace's {len(m.trace):,} steps" if m.trace is not None
                            else "T = the trace's steps")


def _check_steps(value) -> int:
    """T as typed into its box: a whole number from 1 to the session's largest budget of steps."""
    steps = check_int("T (budget of steps)", value, minimum=1)
    if steps > MAX_BUDGET_STEPS:
        raise InputError("T (budget of steps)", f"a whole number of at most {MAX_BUDGET_STEPS:,}", value)
    return steps


def _set_epsilon(plan, eps) -> None:
    """ε per signal into ``plan``, with as many ranges as signals (the ranges resized when the count changes)."""
    values = {"epsilon": eps}
    if len(eps) != len(plan.ranges) - 1:
        values["ranges"] = resize_ranges(plan.ranges, len(eps))
    plan.param.update(**values)


@functools.lru_cache(maxsize=1)
def _upload_help() -> str:
    """What a trace file holds (the same for everyone: rendered once per process)."""
    return render("session/templates/upload_help.html", limit=human_bytes(MAX_UPLOAD_BYTES))


@functools.lru_cache(maxsize=1)
def _filepond_scripts() -> list:
    """FilePond's scripts as a served page lists them (relative to the page, in Panel's order)."""
    from panel.models.file_dropper import FileDropper  # the Bokeh model: its scripts as the page would list them

    return list(FileDropper.__javascript__)
