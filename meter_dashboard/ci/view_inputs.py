"""The /ci page's inputs: the condition (validated as you type), the numbers and the choices.

:class:`Inputs` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.ci.CIModel`: a preset
menu, the condition with its message and a caret under the column at fault, reliability,
adaptivity, mode, the bound (and the exact search's status, with a Cancel button), H, the
difference bound p, and the labeling effort.  Every number gets a message beside it naming the
rule and the value; the model keeps the last good result.

Everything is drawn by two :class:`~meter_dashboard.ui.form.Form` components (one Bokeh model
each, issue 29): the preset menu, the condition (a live box: checked as it is typed, sent once
typing pauses) and its message to the bound's choice, then H to the labeling effort; the exact
search's row goes between the two the first time there is a search.
"""
from __future__ import annotations

import panel as pn
import param

from ..core.html import render, snippet
from ..core.validation import InputError, check_number
from ..ui.form import Box, Field, Form, Note, Row, Slot, linked
from ..ui.inputs import NumberInput
from ..ui.style import error_html
from . import PRESETS, CIModel, delta_from_reliability
from .grammar import VARIABLE_NAMES
from .inputs import check_steps, validate_difference_bound
from .view_html import html_pane

__all__ = ["Inputs", "reliability_check", "choice_field"]

_PRESET_PLACEHOLDER = "Choose a paper setting…"
_STEPS_LABEL = "Steps H (commits per test set)"
#: A toggle's value when pressed (a form field of kind "toggles" with one option).
ON = "on"
#: The grammar note under the condition (the same for every session: made once per process).
_GRAMMAR = str(render("ci/templates/grammar.html", variables=list(VARIABLE_NAMES.items())))
_BOUND_HEAD = ("<b>Bound</b> <span class='md-note'>per estimate: the paper's Hoeffding or the exact binomial "
               "tail</span>")


def reliability_check(label: str):
    """The model's own reliability rule (exact 1 - reliability, bounded text), naming ``label``."""
    def check(text) -> float:
        try:
            delta_from_reliability(text)
            return check_number(label, text)
        except InputError as exc:
            raise exc.renamed(label) from None
    return check


def _renamed_check(check, label: str):
    """``check(value)`` with its messages naming ``label`` (what the page calls the input)."""
    def renamed(text):
        try:
            return check(text)
        except InputError as exc:
            raise exc.renamed(label) from None
    return renamed


def _exact_text(value) -> str:
    """A float as typed (``0.9999``, ``0.99999999``): never rounded to look like 1."""
    return "" if value is None else f"{float(value):.15g}"


def _pressed(value) -> str:
    return ON if value else ""


def _is_pressed(text: str) -> bool:
    return text == ON


def choice_field(model: CIModel, parameter: str, label: str, css: str = "") -> Field:
    """Option buttons for ``model.<parameter>`` (one of its objects), as the model's own words."""
    options = [(str(v), str(v)) for v in model.param[parameter].objects]
    return Field(parameter, label, linked(model, parameter), kind="buttons", options=options,
                 classes=(css,) if css else ())


def _toggle(name: str, label: str, box: Box, css: str = "") -> Field:
    """One on/off toggle (a field of kind "toggles" with one option): ``box.value`` is :data:`ON` or ''."""
    return Field(name, label, box, kind="toggles", options=[(label, ON)], classes=(css,) if css else ())


def _head(html: str) -> Note:
    return Note(html, classes=("md-form-head",))


class Inputs(pn.viewable.Viewer):
    """What a team chose: the condition and every number and choice of the model (the page's sidebar)."""

    model = param.ClassSelector(class_=CIModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.url_errors: list[str] = []
        self._build_condition()
        self._build_choices()
        self._build_numbers()
        self._build_forms()
        self._layout = pn.Column(self.form, self.numbers_form, sizing_mode="stretch_width")

    def __panel__(self) -> pn.Column:
        return self._layout

    # ------------------------------------------------------------------ widgets
    def _build_condition(self) -> None:
        m = self.model
        self.preset = Box(value=_PRESET_PLACEHOLDER)
        self.preset.param.watch(self._on_preset, "value")
        self.condition = Box(value=m.condition)
        self.condition.param.watch(self._on_typed, "value")
        self.condition_error = Slot()
        self.reliability = NumberInput(m, "reliability", label="Reliability (1 − δ)",
                                       check=reliability_check("Reliability (1 − δ)"), format=_exact_text,
                                       css_classes=["ci-reliability"], field="reliability",
                                       message_classes=["ci-input-error", "ci-reliability-error"])

    def _build_choices(self) -> None:
        self.exact_status = html_pane("", css_classes=["ci-exact-status"], margin=(0, 5))
        self.exact_cancel = pn.widgets.Button(label="Cancel", color="warning", width=90, visible=False,
                                              css_classes=["ci-exact-cancel"])
        self.exact_cancel.on_click(lambda event: self.model.exact.cancel())
        # the exact search's status and Cancel go on the page the first time there is a search to show
        self._exact_row: pn.Row | None = None

    def _build_numbers(self) -> None:
        m = self.model
        self.steps = NumberInput(m, "steps", label=_STEPS_LABEL, check=_renamed_check(check_steps, _STEPS_LABEL),
                                 slider={"start": 1, "end": 128, "step": 1}, css_classes=["ci-steps"], field="steps",
                                 message_classes=["ci-input-error", "ci-steps-error"])
        self.use_bound = Box(value=_pressed(m.difference_bound is not None))
        self._last_p = m.difference_bound or 0.1
        self.bound = NumberInput(m, "difference_bound", label="p (bound on d)", width=110, format=_exact_text,
                                 check=_renamed_check(validate_difference_bound, "p (bound on d)"),
                                 getter=lambda model: (self._last_p if model.difference_bound is None
                                                       else model.difference_bound),
                                 on_value=self._on_p, css_classes=["ci-bound"], field="difference_bound",
                                 message_classes=["ci-input-error", "ci-bound-error"])
        self.bound.text.disabled = m.difference_bound is None
        self.check_bound = linked(m, "check_difference_bound", shown=_pressed, parsed=_is_pressed)
        self.seconds = NumberInput(m, "seconds_per_label", label="Seconds per label", width=140, field="seconds",
                                   css_classes=["ci-seconds"], message_classes=["ci-input-error", "ci-seconds-error"])
        self.labelers = NumberInput(m, "labelers", label="Labelers", width=100, css_classes=["ci-labelers"],
                                    field="labelers", message_classes=["ci-input-error", "ci-labelers-error"])
        self.use_bound.param.watch(self._on_use_bound, "value")
        self.other_errors = Slot()

    def _build_forms(self) -> None:
        """Two forms (one Bokeh model each), in the order the page shows them."""
        m = self.model
        preset = Field("preset", "Paper settings", self.preset, kind="select", classes=("ci-preset",),
                       options=[(name, name) for name in (_PRESET_PLACEHOLDER, *PRESETS)])
        condition = Field("condition", "Condition", self.condition, classes=("ci-condition",), live=True,
                          placeholder="n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01")
        self.form = Form([
            preset, condition,
            Note(slot=self.condition_error, classes=("ci-condition-error",), name="condition-error"),
            Note(_GRAMMAR), self.reliability.field(),
            _head("<b>Adaptivity</b>"), choice_field(m, "adaptivity", "Adaptivity"),
            _head("<b>Mode</b>"), choice_field(m, "mode", "Mode"),
            _head(_BOUND_HEAD), choice_field(m, "bound", "Bound", "ci-bound-choice"),
        ], prefix="ci", css_classes=["ci-form"])
        # the choices' boxes (``.value``, as the button groups they replace)
        self.adaptivity, self.mode, self.bound_choice = (self.form.box(n) for n in ("adaptivity", "mode", "bound"))
        self.numbers_form = Form([
            self.steps.field(), _head("<b>Optimizations</b>"),
            _toggle("use_bound", "Known upper bound p on d (Pattern 2)", self.use_bound, "ci-use-bound"),
            Row([self.bound.field(), _toggle("check_bound", "check p on unlabeled data", self.check_bound,
                                             "ci-check-bound")]),
            _head("<b>Labeling effort</b>"), Row([self.seconds.field(), self.labelers.field()]),
            Note(slot=self.other_errors, classes=("ci-other-errors",), name="other-errors"),
        ], prefix="ci-numbers", css_classes=["ci-form-numbers"])

    def _show_exact_row(self) -> None:
        """The exact search's status and Cancel, under the bound's choice (once; kept after)."""
        if self._exact_row is None:
            self._exact_row = pn.Row(self.exact_status, self.exact_cancel, sizing_mode="stretch_width")
            self._layout.insert(self._layout.objects.index(self.form) + 1, self._exact_row)

    # ------------------------------------------------------------------ what a person did
    def _on_preset(self, event):
        if event.new == _PRESET_PLACEHOLDER:
            return
        self.model.apply_preset(event.new)

    def _on_typed(self, event):
        if event.new != self.model.condition:
            self.model.condition = event.new

    @param.depends("model.condition", watch=True)
    def _on_condition(self):
        """A condition set elsewhere (a preset, the URL, a notebook) shows in the box."""
        new = self.model.condition
        if self.condition.value != new:
            self.condition.value = new

    def _on_use_bound(self, event):
        used = _is_pressed(event.new)
        self.bound.text.disabled = not used
        self.model.difference_bound = self._last_p if used and self.bound.valid else None

    def _on_p(self, value):
        self._last_p = value
        if _is_pressed(self.use_bound.value) and value != self.model.difference_bound:
            self.model.difference_bound = value

    @param.depends("model.difference_bound", watch=True)
    def _on_model_bound(self):
        """A bound p set elsewhere (a preset, a notebook) ticks the box and enables p."""
        new = self.model.difference_bound
        if new is not None:
            self._last_p = new
        self.use_bound.value = _pressed(new is not None)
        self.bound.text.disabled = new is None

    # ------------------------------------------------------------------ what the model says
    @param.depends("model.error", "model.error_column", "model.condition")
    def show_errors(self) -> None:
        """The condition's message (a caret under its column) and every other message (URL keys too)."""
        m = self.model
        err = m.error
        if err and m.error_column is not None:
            col = m.error_column
            pointer = snippet('<pre class="ci-pointer">{{ condition }}\n{{ pad }}^</pre>', condition=m.condition[:200],
                              pad=" " * min(col - 1, 200))
            self.condition_error.show(error_html(err) + str(pointer))
        else:
            self.condition_error.show("")
        messages = ([err] if err and m.error_column is None else []) + self.url_errors
        self.other_errors.show("".join(error_html(e) for e in messages))

    @param.depends("model.exact.running", "model.exact.status", "model.exact.error", "model.result", "model.bound")
    def show_exact(self) -> None:
        """The exact binomial search: running (with Cancel), cancelled, or nothing to say."""
        job, m = self.model.exact, self.model
        if job.running or (m.bound == "binomial" and job.status.startswith("cancelled")):
            self._show_exact_row()
        self.exact_cancel.visible = job.running
        if job.running:
            text = ("Searching the exact binomial counts… Hoeffding's are shown meanwhile."
                    if m.result is None or m.result.bound != "binomial" else "Updating the exact binomial counts…")
            self.exact_status.object = str(snippet('<span class="md-note">{{ text }}</span>', text=text))
        elif m.bound == "binomial" and job.status.startswith("cancelled"):
            self.exact_status.object = str(snippet('<span class="md-note">Search {{ status }}.</span>',
                                                   status=job.status))
        else:
            self.exact_status.object = ""
