"""The /ci page's inputs: the condition (validated as you type), the numbers and the choices.

:class:`Inputs` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.ci.CIModel`: a preset
menu, the condition with its message and a caret under the column at fault, reliability,
adaptivity, mode, the bound (and the exact search's status, with a Cancel button), H, the
difference bound p, and the labeling effort.  Every number gets a message beside it naming the
rule and the value; the model keeps the last good result.
"""
from __future__ import annotations

import panel as pn
import param

from ..core.html import render, snippet
from ..core.validation import InputError, check_number
from ..ui.inputs import NumberInput
from ..ui.sections import LateMessage
from ..ui.style import error_html
from . import PRESETS, CIModel, delta_from_reliability
from .grammar import VARIABLE_NAMES
from .inputs import check_steps, validate_difference_bound
from .view_html import html_pane

__all__ = ["Inputs", "reliability_check"]

_PRESET_PLACEHOLDER = "Choose a paper setting…"
_STEPS_LABEL = "Steps H (commits per test set)"


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


def _title(text: str, margin=(8, 5, 0, 5)):
    return html_pane(text, margin=margin)


class Inputs(pn.viewable.Viewer):
    """What a team chose: the condition and every number and choice of the model (the page's sidebar)."""

    model = param.ClassSelector(class_=CIModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.url_errors: list[str] = []
        self._build_condition()
        self._build_choices()
        self._build_numbers()
        self._layout = self._build_layout()

    def __panel__(self) -> pn.Column:
        return self._layout

    # ------------------------------------------------------------------ widgets
    def _build_condition(self) -> None:
        m = self.model
        self.preset = pn.widgets.Select(label="Paper settings", options=[_PRESET_PLACEHOLDER] + list(PRESETS),
                                        value=_PRESET_PLACEHOLDER, sizing_mode="stretch_width")
        self.preset.param.watch(self._on_preset, "value")
        self.condition = pn.widgets.TextInput(label="Condition", value=m.condition, value_input=m.condition,
                                              placeholder="n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01",
                                              sizing_mode="stretch_width", css_classes=["ci-condition"])
        self.condition.param.watch(self._on_typed, "value_input")
        # the messages are made the first time there is one (most sessions never show one)
        self._condition_error = LateMessage(css_classes=["ci-condition-error"], margin=(0, 5))
        self.grammar = html_pane(render("ci/templates/grammar.html", variables=list(VARIABLE_NAMES.items())),
                                 margin=(0, 5))
        self.reliability = NumberInput(m, "reliability", label="Reliability (1 − δ)",
                                       check=reliability_check("Reliability (1 − δ)"), format=_exact_text,
                                       css_classes=["ci-reliability"],
                                       message_classes=["ci-input-error", "ci-reliability-error"])

    def _build_choices(self) -> None:
        m = self.model
        self.adaptivity = pn.widgets.RadioButtonGroup.from_param(m.param.adaptivity, label="Adaptivity",
                                                                 color="light", sizing_mode="stretch_width")
        self.bound_choice = pn.widgets.RadioButtonGroup.from_param(m.param.bound, label="Bound", color="light",
                                                                   sizing_mode="stretch_width",
                                                                   css_classes=["ci-bound-choice"])
        self.exact_status = html_pane("", css_classes=["ci-exact-status"], margin=(0, 5))
        self.exact_cancel = pn.widgets.Button(label="Cancel", color="warning", width=90, visible=False,
                                              css_classes=["ci-exact-cancel"])
        self.exact_cancel.on_click(lambda event: self.model.exact.cancel())
        # the exact search's status and Cancel go on the page the first time there is a search to show
        self._exact_row: pn.Row | None = None
        self.mode = pn.widgets.RadioButtonGroup.from_param(m.param.mode, label="Mode", color="light",
                                                           sizing_mode="stretch_width")

    def _build_numbers(self) -> None:
        m = self.model
        self.steps = NumberInput(m, "steps", label=_STEPS_LABEL, check=_renamed_check(check_steps, _STEPS_LABEL),
                                 slider={"start": 1, "end": 128, "step": 1}, css_classes=["ci-steps"],
                                 message_classes=["ci-input-error", "ci-steps-error"])
        self.use_bound = pn.widgets.Checkbox(label="Known upper bound p on d (Pattern 2)",
                                             value=m.difference_bound is not None, css_classes=["ci-use-bound"])
        self._last_p = m.difference_bound or 0.1
        self.bound = NumberInput(m, "difference_bound", label="p (bound on d)", width=110, format=_exact_text,
                                 check=_renamed_check(validate_difference_bound, "p (bound on d)"),
                                 getter=lambda model: (self._last_p if model.difference_bound is None
                                                       else model.difference_bound),
                                 on_value=self._on_p, css_classes=["ci-bound"],
                                 message_classes=["ci-input-error", "ci-bound-error"])
        self.bound.text.disabled = m.difference_bound is None
        self.check_bound = pn.widgets.Checkbox.from_param(m.param.check_difference_bound,
                                                          label="check p on unlabeled data", margin=(30, 5, 5, 10))
        self.seconds = NumberInput(m, "seconds_per_label", label="Seconds per label", width=140,
                                   css_classes=["ci-seconds"], message_classes=["ci-input-error", "ci-seconds-error"])
        self.labelers = NumberInput(m, "labelers", label="Labelers", width=100, css_classes=["ci-labelers"],
                                    message_classes=["ci-input-error", "ci-labelers-error"])
        self.use_bound.param.watch(self._on_use_bound, "value")
        self._other_errors = LateMessage(margin=(0, 5), css_classes=["ci-other-errors"])

    @property
    def condition_error(self):
        """The condition's message pane (made the first time there is a message, or when asked for)."""
        return self._condition_error.pane

    @property
    def other_errors(self):
        """The other messages' pane (URL keys, a condition with no column): made when first needed."""
        return self._other_errors.pane

    def _build_layout(self) -> pn.Column:
        layout = pn.Column(
            self.preset, self.condition, self.grammar, *self.reliability.parts(),
            _title("<b>Adaptivity</b>"), self.adaptivity,
            _title("<b>Mode</b>"), self.mode,
            _title("<b>Bound</b> <span class='md-note'>per estimate: the paper's Hoeffding or the exact binomial "
                   "tail</span>"),
            self.bound_choice,
            *self.steps.parts(),
            _title("<b>Optimizations</b>", margin=(10, 5, 0, 5)), self.use_bound,
            pn.Row(self.bound, self.check_bound, sizing_mode="stretch_width"),
            _title("<b>Labeling effort</b>", margin=(10, 5, 0, 5)),
            pn.Row(self.seconds, self.labelers, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )
        # the two boxes sit straight in the column (no column of their own); a message goes in under them
        self.reliability.placed_in(layout)
        self.steps.placed_in(layout)
        self._condition_error.placed_in(layout, self.condition)
        self._other_errors.placed_in(layout)
        return layout

    def _show_exact_row(self) -> None:
        """The exact search's status and Cancel, under the bound's choice (once; kept after)."""
        if self._exact_row is None:
            self._exact_row = pn.Row(self.exact_status, self.exact_cancel, sizing_mode="stretch_width")
            self._layout.insert(self._layout.objects.index(self.bound_choice) + 1, self._exact_row)

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
        if self.condition.value_input != new:
            self.condition.param.update(value=new, value_input=new)

    def _on_use_bound(self, event):
        self.bound.text.disabled = not event.new
        self.model.difference_bound = self._last_p if event.new and self.bound.valid else None

    def _on_p(self, value):
        self._last_p = value
        if self.use_bound.value and value != self.model.difference_bound:
            self.model.difference_bound = value

    @param.depends("model.difference_bound", watch=True)
    def _on_model_bound(self):
        """A bound p set elsewhere (a preset, a notebook) ticks the box and enables p."""
        new = self.model.difference_bound
        if new is not None:
            self._last_p = new
        self.use_bound.value = new is not None
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
            self._condition_error.show(error_html(err) + str(pointer))
        else:
            self._condition_error.show("")
        messages = ([err] if err and m.error_column is None else []) + self.url_errors
        self._other_errors.show("".join(error_html(e) for e in messages))

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
