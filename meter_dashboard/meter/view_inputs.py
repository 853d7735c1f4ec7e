"""The planner page's inputs (Panel): the widgets made from the plan's parameters, and their messages.

:class:`PlannerInputs` is the sidebar of the planner page: the preset box, the meter table (signals,
ranges and ε), δ, T, the budget, the tenants, the reverts and the labeling effort (drawers, closed
unless a link sets them), the bound and its error-rate range: two :class:`~meter_dashboard.ui.form.Form`
components (one Bokeh model each) around the meter table.  Each box refuses bad text with its own
message; what the plan itself refuses shows beside the inputs it concerns, one current message per group.
"""
from __future__ import annotations

import panel as pn
import param

from ..core.html import render
from ..core.validation import InputError, check_int, check_probability
from ..ui.form import Action, Box, Drawer, Field, Form, Note, Row, Slot, linked
from ..ui.inputs import ListInput, NumberInput
from ..ui.style import error_html
from ..ui.table import NumberTable
from .model import PRESETS, MeterPlan

__all__ = ["PlannerInputs", "TEXT"]

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
#: The groups whose messages show beside their inputs ("other": under the presets).
_ERROR_GROUPS_SHOWN = ("meter", "tenants", "reverts", "bound")
_PRESET_PLACEHOLDER = "Choose a paper setting…"
_BOUND_BUTTONS = {"Hoeffding (paper)": "hoeffding", "Exact binomial": "binomial"}
#: Text identical for every session (rendered once per process).
TEXT = {part: render("meter/templates/sidebar.html", part=part)
        for part in ("meter", "bound", "binomial", "hoeffding", "against")}
_EFFORT = ("seconds_per_label", "labelers", "cost_per_hour")
#: What a preset sets: a change to any of them not made by the preset box clears the box.
_PRESET_KEYS = (*PRESETS[next(iter(PRESETS))], "ranges")
_BOXES = ("signals", "uniform_epsilon", "delta", "steps", "budget", "tenants", "tenant_steps", "max_error_rate",
          "revert_budget", "reverts", "seconds", "labelers", "cost")
#: The meter table's columns: the signal and its range's lower end read-only, its upper end and ε typed.
_TABLE_COLUMNS = [{"key": "signal", "title": "#", "editable": False, "digits": None},
                  {"key": "from", "title": "from", "editable": False, "digits": 4},
                  {"key": "to", "title": "to", "editable": True, "digits": 4},
                  {"key": "epsilon", "title": "ε", "editable": True, "digits": 4}]


def _meter_rows(plan: MeterPlan) -> list[list]:
    """One row per signal: its number, its range (from, to; None where the ranges are short) and its ε."""
    r = plan.ranges
    return [[i + 1, r[i] if i < len(r) else None, r[i + 1] if i + 1 < len(r) else None, eps]
            for i, eps in enumerate(plan.epsilon)]


class PlannerInputs(pn.viewable.Viewer):
    """The inputs of ``planner`` (a :class:`~meter_dashboard.meter.view.Planner`), over its plan.

    ``on_box`` is called after a box took (or refused) what was typed: the answer says whether it is
    still valid.  The sidebar is two :class:`~meter_dashboard.ui.form.Form` components around the
    meter table, a :class:`~meter_dashboard.ui.table.NumberTable` (issue 29: one model each, where twenty
    Panel widgets and a Tabulator cost a session 90 ms of server CPU); the drawers (reverts, labeling effort) are ``<details>`` of the second, costing nothing closed.
    """

    plan = param.ClassSelector(class_=MeterPlan)

    def __init__(self, plan: MeterPlan, on_box, link_message: str = "", **params):
        super().__init__(plan=plan, **params)
        self._on_box = on_box
        self.input_errors: dict[str, str] = {"other": link_message} if link_message else {}
        self._applying_preset = False
        self._controls: pn.Column | None = None
        self._error_panes = {group: Slot() for group in (*_ERROR_GROUPS_SHOWN, "other")}
        self._typed_tenants = plan.tenants
        self._build_widgets()
        self._build_bound_widgets()
        self._build_forms()
        self._watch_boxes(self._boxes())
        self._on_bound_inputs()
        self._open_drawers()

    # ------------------------------------------------------------------ widgets
    def _build_widgets(self):
        p = self.plan
        self.preset = Box(value=_PRESET_PLACEHOLDER)
        self.preset.param.watch(self._on_preset, "value")
        self.signals = NumberInput(p, "epsilon", label="Signals m", integer=True, getter=lambda plan: plan.signals,
                                   check=lambda text: check_int("Signals m", text, minimum=1, maximum=20),
                                   on_value=p.set_signals, width=110, css_classes=["signals-input"],
                                   description="m: how many signals the meter reports (1 to 20).", field="signals")
        self.meter_table = NumberTable(_TABLE_COLUMNS, _meter_rows(p), caption="Signals: their ranges and ε",
                                       row_label="signal", on_edit=self._on_table_edit,
                                       on_refused=self._on_table_refused, css_classes=["meter-table"])
        self.uniform_epsilon = NumberInput(p, "epsilon", label="Same ε for every signal",
                                           getter=lambda plan: plan.uniform_epsilon,
                                           check=lambda text: check_probability("Same ε for every signal", text),
                                           on_value=p.set_uniform_epsilon, placeholder="differs per signal",
                                           css_classes=["uniform-epsilon-input"], field="uniform_epsilon")
        self._build_plan_boxes()

    def _build_plan_boxes(self):
        p = self.plan
        self.delta = NumberInput(p, "delta", label="δ (failure probability)", css_classes=["delta-input"],
                                 slider={"start": 0.001, "end": 0.2, "step": 0.001}, field="delta")
        self.steps = NumberInput(p, "steps", label="T (development steps)", css_classes=["steps-input"],
                                 slider={"start": 1, "end": 200, "step": 1}, field="steps")
        self.tenants = NumberInput(p, "tenants", label="Tenants", width=110, css_classes=["tenants-input"],
                                   field="tenants")
        self.tenant_steps = ListInput(p, "tenant_steps", label="Steps per tenant (optional)", placeholder="e.g. 5,5",
                                      name_in_messages="tenant_steps", on_value=self._set_tenant_steps,
                                      css_classes=["tenant-steps-input"], field="tenant_steps")
        self.budget = NumberInput(p, "budget", label="Label budget (what we have, optional)", placeholder="e.g. 50000",
                                  css_classes=["budget-input"], field="budget")
        # in the drawers (closed unless a link or a preset sets them)
        self.revert_budget = NumberInput(p, "revert_budget", label="Reverts B", width=110,
                                         css_classes=["revert-budget-input"], field="revert_budget")
        self.reverts = ListInput(p, "reverts", label="Revert steps (fixed in advance)", placeholder="e.g. 1,2,3",
                                 name_in_messages="reverts", on_value=self._set_reverts,
                                 css_classes=["reverts-input"], message_classes=["error-reverts"], field="reverts")
        self.seconds = NumberInput(p, "seconds_per_label", label="Seconds per label", width=140, field="seconds")
        self.labelers = NumberInput(p, "labelers", label="Labelers", width=100, field="labelers")
        self.cost = NumberInput(p, "cost_per_hour", label="Cost per labeler-hour (optional)", placeholder="e.g. 25",
                                field="cost")

    def _build_bound_widgets(self):
        p = self.plan
        self.bound = linked(p, "bound", offered=_BOUND_BUTTONS.values())
        self.max_error_rate = NumberInput(p, "max_error_rate", label="Error-rate range a (optional)",
                                          placeholder="e.g. 0.1", css_classes=["max-error-rate-input"],
                                          message_classes=["error-bound"], field="max_error_rate")
        self.bound_note = Slot()

    def _build_forms(self):
        errors = self._error_panes

        def error(group):
            return Note(slot=errors[group], classes=(f"error-{group}", "planner-error"), name=f"error-{group}")

        preset = Field("preset", "Presets", self.preset, kind="select", classes=("planner-preset",),
                       options=[(name, name) for name in (_PRESET_PLACEHOLDER, *PRESETS)])
        self.top = Form([preset, error("other"), Note(TEXT["meter"], classes=("md-form-head",)),
                         Row([self.signals.field(), self.uniform_epsilon.field()])],
                        prefix="planner-top", css_classes=["planner-form-top"])
        bound = Field("bound", "Bound", self.bound, kind="buttons", classes=("bound-select",),
                      options=[(label, value) for label, value in _BOUND_BUTTONS.items()])
        reverts = Drawer("reverts", "Reverts fixed in advance", [Row([self.revert_budget.field(), self.reverts.field()])],
                         classes=("planner-reverts",))
        effort = Drawer("effort", "Labeling effort and cost",
                        [Row([self.seconds.field(), self.labelers.field()]), self.cost.field()],
                        classes=("planner-effort",))
        self.form = Form([
            error("meter"), self.delta.field(), self.steps.field(), self.budget.field(),
            Row([self.tenants.field(), self.tenant_steps.field()]), error("tenants"), reverts, error("reverts"),
            Note(TEXT["bound"], classes=("md-form-head",)), bound, self.max_error_rate.field(),
            Note(slot=self.bound_note, classes=("planner-bound-note",), name="bound-note"), error("bound"),
            effort, Action("reset", "Reset to defaults", self.plan.reset, classes=("planner-reset",)),
        ], prefix="planner", css_classes=["planner-form"])
        self.revert_drawer = self.form.drawer("reverts")
        self.effort = self.form.drawer("effort")

    # ------------------------------------------------------------------ layout
    def controls(self) -> pn.Column:
        """The input column (the sidebar of the served page): two forms around the meter table."""
        if self._controls is None:
            self._controls = pn.Column(self.top, self.meter_table, self.form, sizing_mode="stretch_width")
        return self._controls

    def __panel__(self):
        return self.controls()

    @param.depends(*(f"plan.{k}" for k in ("reverts", "revert_budget", *_EFFORT)), watch=True)
    def _open_drawers(self) -> None:
        """A drawer whose inputs hold something other than their defaults is open (a link, a preset)."""
        p = self.plan
        if p.reverts or p.revert_budget:
            self.revert_drawer.open()
        if any(getattr(p, k) != p.param[k].default for k in _EFFORT):
            self.effort.open()

    # ------------------------------------------------------------------ messages
    def error_pane(self, group: str) -> Slot:
        """Where the messages of ``group`` show (``error-<group>``): hidden while empty."""
        return self._error_panes[group]

    def render_errors(self):
        """Each pane shows the one current message about its inputs (never an outdated second one)."""
        model_group = next((g for g, names in _ERROR_GROUPS.items() if self.plan.error_parameter in names), "other")
        for group in (*_ERROR_GROUPS_SHOWN, "other"):
            message = self.input_errors.get(group, "")
            if self.plan.error and (model_group == group or (group == "other" and model_group not in _ERROR_GROUPS_SHOWN)):
                message = self.plan.error
            self._error_panes[group].show(error_html(message))

    def _set_input_error(self, group: str, message: str):
        self.input_errors[group] = message
        self.render_errors()
        self._on_box()

    def _boxes(self) -> list:
        """Every input box."""
        return [getattr(self, n) for n in _BOXES]

    def _watch_boxes(self, boxes) -> None:
        """After a box took (or refused) what was typed, the results say whether they are still valid."""
        for box in boxes:
            box.text.param.watch(self._on_box, "value")

    def stale(self) -> bool:
        """The results on screen are the last valid ones: the plan or a box refused what was typed."""
        return bool(self.plan.error or self.input_errors.get("meter") or not all(b.valid for b in self._boxes()))

    # ------------------------------------------------------------------ input handlers
    def _on_preset(self, event):
        if event.new == _PRESET_PLACEHOLDER:
            return
        self._applying_preset = True
        try:
            self.plan.apply_preset(event.new)
        finally:
            self._applying_preset = False

    @param.depends(*(f"plan.{k}" for k in _PRESET_KEYS), watch=True)
    def _on_inputs_changed(self):
        """Any change not made by the preset box means the plan is no longer that preset (issue 11 #5)."""
        if not self._applying_preset and self.preset.value != _PRESET_PLACEHOLDER:
            self.preset.value = _PRESET_PLACEHOLDER

    def _on_table_edit(self, row: int, key: str, value: float):
        """A number typed in the meter table: the upper end of a signal's range ("to") or its ε."""
        shown = self.meter_table.rows
        to = [value if i == row and key == "to" else r[2] for i, r in enumerate(shown)]
        eps = [value if i == row and key == "epsilon" else r[3] for i, r in enumerate(shown)]
        self._set_input_error("meter", "")
        self.plan.param.update(ranges=[0.0] + to, epsilon=eps)

    def _on_table_refused(self, row: int, key: str, error: InputError):
        self._set_input_error("meter", f"ranges and ε must be numbers ({error})")

    @param.depends("plan.epsilon", "plan.ranges", watch=True)
    def _on_meter_inputs(self):
        """New signals, ranges or ε (m, a preset, a link, the same-ε box): the table shows them, a refused cell too."""
        rows = _meter_rows(self.plan)
        if rows != self.meter_table.rows:
            self.meter_table.rows = rows
            if self.input_errors.get("meter"):
                self._set_input_error("meter", "")

    @param.depends("plan.bound", watch=True)
    def _on_bound_inputs(self):
        exact = self.plan.bound == "binomial"
        self.max_error_rate.text.disabled = not exact
        self.bound_note.object = TEXT["binomial" if exact else "hoeffding"]

    def _set_tenant_steps(self, values):
        """Steps per tenant set the tenants; a refused list changes nothing, an empty one restores the tenants typed."""
        p = self.plan
        if values:
            if sum(values) != p.steps:
                raise InputError("tenant_steps", f"steps per tenant summing to T = {p.steps:,}", ",".join(map(str, values)))
            if not p.tenant_steps:
                self._typed_tenants = p.tenants  # what the person typed before the list took over
            with param.parameterized.batch_call_watchers(p):
                p.param.update(tenants=len(values), tenant_steps=values)
            return
        with param.parameterized.batch_call_watchers(p):
            p.param.update(tenant_steps=[], tenants=self._typed_tenants if p.tenant_steps else p.tenants)

    def _set_reverts(self, values):
        with param.parameterized.batch_call_watchers(self.plan):
            self.plan.reverts = values
            self.plan.revert_budget = len(values)
