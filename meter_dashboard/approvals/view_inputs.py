"""The /approve page's inputs: the trace (an example or an upload, with its prespecified plan) and the procedure.

:class:`ApproveInputs` is the sidebar of :class:`~meter_dashboard.approvals.view.Approve`: three
:class:`~meter_dashboard.ui.form.Form` components (one Bokeh model each, issue 29) around the two
file drop areas, made from the :class:`~meter_dashboard.approvals.model.ApproveModel` parameters;
the refusals of files and numbers; and the advanced settings, a drawer of the last form (a closed
``<details>``: it costs nothing until opened).
"""
from __future__ import annotations

import functools

import panel as pn
import param

from ..core.files import MAX_UPLOAD_BYTES, human_bytes
from ..core.html import snippet
from ..ui.form import Drawer, Field, Form, Note, Slot, linked
from ..ui.inputs import NumberInput
from ..ui.style import error_html
from ..ui.upload import GuardedFileDropper
from . import view_text as text
from .model import METHOD_LABELS, METHODS, ApproveModel

__all__ = ["ApproveInputs"]

_METHOD_OPTIONS = {METHOD_LABELS[m] + ("" if m != "naive" else "  ⚠"): m for m in METHODS}
_EXAMPLE_OPTIONS = {**{label: key for key, label in text.EXAMPLE_LABELS.items()}, "Uploaded file": "uploaded"}
#: The fixed notes of the sidebar (the same for every session: made once per process).
_UPLOAD_INTRO = str(snippet("<span class='approve-small'>Or upload a CSV: header of names; one row per test example; "
                            "first column the original model's per-example loss, then one column per modification "
                            "in the order tested. Up to {{ limit }}.</span>", limit=human_bytes(MAX_UPLOAD_BYTES)))
_PRES_INTRO = "<span class='approve-small'>Prespecified plan (presSRGP), same shape:</span>"


def _dropper(parameter: str, css: str) -> GuardedFileDropper:
    """A CSV drop zone bounded before the file is sent (a file over the limit never reaches the websocket)."""
    return GuardedFileDropper(parameter=parameter, max_bytes=MAX_UPLOAD_BYTES, layout="compact", height=80,
                              checked=True, accepted_filetypes=[".csv", "text/csv", "text/plain"],
                              sizing_mode="stretch_width", css_classes=[css])


class ApproveInputs(pn.viewable.Viewer):
    """The trace and the procedure's settings; ``schedule("inputs")`` redraws the messages on a change."""

    model = param.ClassSelector(class_=ApproveModel)

    def __init__(self, schedule, **params):
        super().__init__(**params)
        self._schedule = schedule
        self._layout = None
        self._build_trace()
        self._build_procedure()
        self._build_forms()

    def _build_trace(self) -> None:
        m = self.model
        self.example = linked(m, "example", offered=_EXAMPLE_OPTIONS.values())
        self.example_note = Slot()
        self.upload = _dropper("trace", "approve-upload")
        self.upload.param.watch(self._on_upload, "value")
        self.upload.param.watch(self._on_upload_refused, "upload_error")
        self.upload_error = Slot()
        self.pres_upload = _dropper("prespecified", "approve-pres-upload")
        self.pres_upload.param.watch(self._on_pres_upload, "value")
        self.pres_upload.param.watch(self._on_upload_refused, "upload_error")
        self.pres_error = Slot()

    def _build_procedure(self) -> None:
        m = self.model
        self.method = linked(m, "method", offered=_METHOD_OPTIONS.values())
        self.alpha = NumberInput(m, "alpha", label="α (family-wise error rate)", css_classes=["approve-alpha"],
                                 field="alpha")
        self.success_weight = NumberInput(m, "success_weight", label="Edge weight after an approval (SRGPs)",
                                          css_classes=["approve-success-weight"], field="success_weight")
        self.margin = NumberInput(m, "margin", label="Margin δ₁ (loss units)", css_classes=["approve-margin"],
                                  field="margin")
        self.margin_step = NumberInput(m, "margin_step", label="Margin step after an approval",
                                       css_classes=["approve-margin-step"], field="margin_step")
        self.error = Slot()
        # the advanced settings: a drawer of the procedure's form, closed (a closed <details> costs nothing)
        self.seed = NumberInput(m, "seed", label="Seed (MVN integration)", css_classes=["approve-seed"], field="seed")
        self.failure_threshold = NumberInput(m, "failure_threshold", label="wBonferroni: 'few denials' means at most",
                                             field="failure_threshold")
        self.pres_share = NumberInput(m, "pres_share", label="presSRGP: α share of the plan", field="pres_share")
        self.pres_first_share = NumberInput(m, "pres_first_share", label="presSRGP: first planned node's share",
                                            field="pres_first_share")
        self.max_conditioning = NumberInput(m, "max_conditioning", label="fs/presSRGP: earlier nodes conditioned on",
                                            field="max_conditioning")
        self._numbers = [self.alpha, self.success_weight, self.margin, self.margin_step]
        self._advanced = [self.failure_threshold, self.pres_share, self.pres_first_share, self.max_conditioning,
                          self.seed]
        self._watch_numbers(self._numbers + self._advanced)

    def _build_forms(self) -> None:
        """Three forms (one Bokeh model each) around the two drop areas, in the order the page shows them."""
        m = self.model
        example = Field("example", "Trace", self.example, kind="select", classes=("approve-example",),
                        description=m.param.example.doc or "", options=list(_EXAMPLE_OPTIONS.items()))
        self.trace_form = Form([Note("<b>Modification trace</b>", classes=("md-form-head",)), example,
                                Note(slot=self.example_note, classes=("approve-small",), name="example-note"),
                                Note(_UPLOAD_INTRO, classes=("md-form-head",))],
                               prefix="approve-trace", css_classes=["approve-trace-form"])
        self.upload_form = Form([Note(slot=self.upload_error, name="upload-error"),
                                 Note(_PRES_INTRO, classes=("md-form-head",))],
                                prefix="approve-upload", css_classes=["approve-upload-form"])
        method = Field("method", "Procedure", self.method, kind="select", classes=("approve-method",),
                       description=m.param.method.doc or "", options=list(_METHOD_OPTIONS.items()))
        advanced = Drawer("advanced", "Advanced", [box.field() for box in self._advanced],
                          classes=("approve-advanced",))
        numbers = [box.field() for box in self._numbers]
        self.form = Form([Note(slot=self.pres_error, name="pres-error"),
                          Note("<b>Procedure</b>", classes=("md-form-head",)), method, *numbers,
                          Note(slot=self.error, classes=("approve-error",), name="error"), advanced],
                         prefix="approve", css_classes=["approve-form"])
        self.advanced = self.form.drawer("advanced")

    def _watch_numbers(self, boxes) -> None:
        """A number typed (after its box has checked it): the results say whether they are the last valid ones.

        The box's text is watched (it changes whenever its message does: a refusal keeps the refused
        text, a model change writes its value).
        """
        for box in boxes:
            box.text.param.watch(lambda *e: self._schedule("inputs"), "value")

    async def _on_upload(self, event):
        m = self.model
        for name, data in (event.new or {}).items():  # the latest file only: read in a worker thread
            await self.upload.load(data, name, m.read_trace, m.use_trace, m.fail_trace)

    async def _on_pres_upload(self, event):
        m = self.model
        for name, data in (event.new or {}).items():
            await self.pres_upload.load(data, name, functools.partial(m.read_trace, parameter="prespecified"),
                                        m.use_prespecified, m.fail_prespecified)

    def _on_upload_refused(self, event):
        self._schedule("inputs")

    @param.depends("model.error", "model.trace_error", "model.prespecified_error", "model.trace", "model.prespecified",
                   "model.example", watch=True)
    def _messages_changed(self) -> None:
        """What :meth:`draw` shows changed: redrawn with the page's next message."""
        self._schedule("inputs")

    def refused(self) -> bool:
        """The last change was refused (the model's error, or a number box's): the results are the last valid ones."""
        return bool(self.model.error) or any(not box.valid for box in self._numbers + self._advanced)

    def draw(self, url_errors) -> None:
        """The messages: refused files (the newest message), the model's error and the link's refusals."""
        m = self.model
        # a file refused while it arrived (too big) or when read (a bad cell): the newest message
        self.upload_error.show(error_html(self.upload.upload_error or m.trace_error))
        self.pres_error.show(error_html(self.pres_upload.upload_error or m.prespecified_error))
        self.example_note.show(text.trace_note(m))
        self.error.show("".join(error_html(x) for x in text.messages(m.error, url_errors)))

    def __panel__(self):
        if self._layout is None:
            self._layout = pn.Column(self.trace_form, self.upload, self.upload_form, self.pres_upload, self.form,
                                     sizing_mode="stretch_width")
        return self._layout
