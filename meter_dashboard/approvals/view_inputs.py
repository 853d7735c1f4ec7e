"""The /approve page's inputs: the trace (an example or an upload, with its prespecified plan) and the procedure.

:class:`ApproveInputs` is the sidebar of :class:`~meter_dashboard.approvals.view.Approve`: widgets
made from the :class:`~meter_dashboard.approvals.model.ApproveModel` parameters, the refusals of
files and numbers, and the advanced settings (built when their card first opens on a server).
"""
from __future__ import annotations

import functools

import panel as pn
import param

from ..core.files import MAX_UPLOAD_BYTES, human_bytes
from ..core.html import snippet
from ..ui.inputs import NumberInput
from ..ui.style import HTML, error_html
from ..ui.upload import GuardedFileDropper
from . import view_text as text
from .model import METHOD_LABELS, METHODS, ApproveModel

__all__ = ["ApproveInputs"]

_METHOD_OPTIONS = {METHOD_LABELS[m] + ("" if m != "naive" else "  ⚠"): m for m in METHODS}
_EXAMPLE_OPTIONS = {**{label: key for key, label in text.EXAMPLE_LABELS.items()}, "Uploaded file": "uploaded"}


def _dropper(parameter: str, css: str) -> GuardedFileDropper:
    """A CSV drop zone bounded before the file is sent (a file over the limit never reaches the websocket)."""
    return GuardedFileDropper(parameter=parameter, max_bytes=MAX_UPLOAD_BYTES, layout="compact", height=80,
                              checked=True, accepted_filetypes=[".csv", "text/csv", "text/plain"],
                              sizing_mode="stretch_width", css_classes=[css])


class ApproveInputs(pn.viewable.Viewer):
    """The trace and the procedure's settings; ``schedule("inputs")`` redraws the messages on a change."""

    model = param.ClassSelector(class_=ApproveModel)

    def __init__(self, schedule, served: bool, **params):
        super().__init__(**params)
        self._schedule = schedule
        self._served = served
        self._layout = None
        self._build_trace()
        self._build_procedure()

    def _build_trace(self) -> None:
        m = self.model
        self.example = pn.widgets.Select.from_param(m.param.example, name="Trace", options=_EXAMPLE_OPTIONS,
                                                    sizing_mode="stretch_width", css_classes=["approve-example"])
        self.example_note = HTML("", sizing_mode="stretch_width", css_classes=["approve-small"])
        self.upload = _dropper("trace", "approve-upload")
        self.upload.param.watch(self._on_upload, "value")
        self.upload.param.watch(self._on_upload_refused, "upload_error")
        self.upload_error = HTML("", sizing_mode="stretch_width")
        self.pres_upload = _dropper("prespecified", "approve-pres-upload")
        self.pres_upload.param.watch(self._on_pres_upload, "value")
        self.pres_upload.param.watch(self._on_upload_refused, "upload_error")
        self.pres_error = HTML("", sizing_mode="stretch_width")

    def _build_procedure(self) -> None:
        m = self.model
        self.method = pn.widgets.Select.from_param(m.param.method, name="Procedure", options=_METHOD_OPTIONS,
                                                   sizing_mode="stretch_width", css_classes=["approve-method"])
        self.alpha = NumberInput(m, "alpha", label="α (family-wise error rate)", css_classes=["approve-alpha"])
        self.success_weight = NumberInput(m, "success_weight", label="Edge weight after an approval (SRGPs)",
                                          css_classes=["approve-success-weight"])
        self.margin = NumberInput(m, "margin", label="Margin δ₁ (loss units)", css_classes=["approve-margin"])
        self.margin_step = NumberInput(m, "margin_step", label="Margin step after an approval",
                                       css_classes=["approve-margin-step"])
        self.error = HTML("", sizing_mode="stretch_width", css_classes=["approve-error"])
        self._numbers = [self.alpha, self.success_weight, self.margin, self.margin_step]
        self._watch_numbers(self._numbers)
        # the advanced settings are built when their card is first opened (or at once in a notebook)
        # (a placeholder keeps the closed card's look: an empty card is drawn without its frame)
        self.advanced = pn.Card(pn.Spacer(height=0, margin=0), title="Advanced", collapsed=True,
                                sizing_mode="stretch_width")
        if not self._served:
            self._build_advanced()
        else:
            self.advanced.param.watch(self._on_advanced, "collapsed")

    def _watch_numbers(self, boxes) -> None:
        """A number typed (after its box has checked it): the results say whether they are the last valid ones.

        The box's text is watched, not its message: a box makes its message pane only once it has
        something to say, so the first document carries no empty message panes.  (The text changes
        whenever the message does: a refusal keeps the refused text, a model change writes its value.)
        """
        for box in boxes:
            box.text.param.watch(lambda *e: self._schedule("inputs"), "value")

    def _build_advanced(self) -> None:
        m = self.model
        self.seed = NumberInput(m, "seed", label="Seed (MVN integration)", css_classes=["approve-seed"])
        self.failure_threshold = NumberInput(m, "failure_threshold", label="wBonferroni: 'few denials' means at most")
        self.pres_share = NumberInput(m, "pres_share", label="presSRGP: α share of the plan")
        self.pres_first_share = NumberInput(m, "pres_first_share", label="presSRGP: first planned node's share")
        self.max_conditioning = NumberInput(m, "max_conditioning", label="fs/presSRGP: earlier nodes conditioned on")
        boxes = [self.failure_threshold, self.pres_share, self.pres_first_share, self.max_conditioning, self.seed]
        self._numbers += boxes
        self._watch_numbers(boxes)
        self.advanced.objects = boxes

    def _on_advanced(self, event) -> None:
        if not event.new and len(self._numbers) == 4:
            self._build_advanced()

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
        return bool(self.model.error) or any(not box.valid for box in self._numbers)

    def draw(self, url_errors) -> None:
        """The messages: refused files (the newest message), the model's error and the link's refusals."""
        m = self.model
        # a file refused while it arrived (too big) or when read (a bad cell): the newest message
        self.upload_error.object = error_html(self.upload.upload_error or m.trace_error)
        self.pres_error.object = error_html(self.pres_upload.upload_error or m.prespecified_error)
        self.example_note.object = text.trace_note(m)
        self.error.object = "".join(error_html(x) for x in text.messages(m.error, url_errors))

    def __panel__(self):
        if self._layout is None:
            self._layout = pn.Column(
                HTML("<b>Modification trace</b>", margin=(8, 5, 0, 5)),
                self.example, self.example_note,
                HTML(str(snippet("<span class='approve-small'>Or upload a CSV: header of names; one row per test "
                                 "example; first column the original model's per-example loss, then one column per "
                                 "modification in the order tested. Up to {{ limit }}.</span>",
                                 limit=human_bytes(MAX_UPLOAD_BYTES))), margin=(4, 5, 0, 5)),
                self.upload, self.upload_error,
                HTML("<span class='approve-small'>Prespecified plan (presSRGP), same shape:</span>",
                     margin=(4, 5, 0, 5)),
                self.pres_upload, self.pres_error,
                HTML("<b>Procedure</b>", margin=(12, 5, 0, 5)),
                self.method, self.alpha, self.success_weight, self.margin, self.margin_step, self.error, self.advanced,
                sizing_mode="stretch_width",
            )
        return self._layout
