"""The planner page's inputs (Panel): the widgets made from the plan's parameters, and their messages.

:class:`PlannerInputs` is the sidebar of the planner page: the preset box, the meter table (signals,
ranges and ε), δ, T, the budget, the tenants, the reverts and the labeling effort (drawers built when
opened), the bound and its error-rate range.  Each box refuses bad text with its own message; what
the plan itself refuses shows beside the inputs it concerns, one current message per group.
"""
from __future__ import annotations

import pandas as pd
import panel as pn
import param

from ..core.html import render
from ..core.validation import InputError, check_int, check_probability
from ..ui.inputs import ListInput, NumberInput
from ..ui.style import HTML, error_html
from .model import PRESETS, MeterPlan
from .view_parts import Drawer

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
#: The boxes the sidebar column holds straight (not in a row beside another box).
_IN_COLUMN = ("delta", "steps", "budget", "max_error_rate")
_TABLE_EDITORS = {"signal": None, "from": None, "to": {"type": "number", "step": 0.001, "min": 0, "max": 1},
                  "epsilon": {"type": "number", "step": 0.001, "min": 0.0001, "max": 0.999}}
_MONEY = {"type": "money", "precision": 4, "symbol": ""}


def _table_height(rows: int) -> int:
    return min(34 + 30 * rows, 330)


def _meter_frame(plan: MeterPlan) -> pd.DataFrame:
    r = plan.ranges
    n = len(plan.epsilon)
    lower = [r[i] if i < len(r) else float("nan") for i in range(n)]
    upper = [r[i + 1] if i + 1 < len(r) else float("nan") for i in range(n)]
    return pd.DataFrame({"signal": list(range(1, n + 1)), "from": lower, "to": upper, "epsilon": list(plan.epsilon)})


class PlannerInputs(pn.viewable.Viewer):
    """The inputs of ``planner`` (a :class:`~meter_dashboard.meter.view.Planner`), over its plan.

    ``on_box`` is called after a box took (or refused) what was typed: the answer says whether it is
    still valid.
    """

    plan = param.ClassSelector(class_=MeterPlan)

    def __init__(self, plan: MeterPlan, on_box, link_message: str = "", **params):
        super().__init__(plan=plan, **params)
        self._on_box = on_box
        self.input_errors: dict[str, str] = {"other": link_message} if link_message else {}
        self._applying_preset = False
        self._controls: pn.Column | None = None
        self._error_panes: dict = {}
        self._typed_tenants = plan.tenants
        self._build_widgets()
        self._build_bound_widgets()
        self._watch_boxes(self._boxes())
        self._on_bound_inputs()

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
            editors=_TABLE_EDITORS, formatters={"from": _MONEY, "to": _MONEY, "epsilon": _MONEY},
            titles={"signal": "#", "from": "from", "to": "to", "epsilon": "ε"}, widths={"signal": 48},
            css_classes=["meter-table"], layout="fit_columns")
        self.meter_table.on_edit(self._on_table_edit)
        self.uniform_epsilon = NumberInput(p, "epsilon", label="Same ε for every signal",
                                           getter=lambda plan: plan.uniform_epsilon,
                                           check=lambda text: check_probability("Same ε for every signal", text),
                                           on_value=p.set_uniform_epsilon, placeholder="differs per signal",
                                           css_classes=["uniform-epsilon-input"])
        self.reset_button = pn.widgets.Button(label="Reset to defaults", color="light", sizing_mode="stretch_width",
                                              margin=(8, 5, 2, 5), css_classes=["planner-reset"])
        self.reset_button.on_click(lambda _: self.plan.reset())
        self._build_plan_boxes()

    def _build_plan_boxes(self):
        p = self.plan
        self.delta = NumberInput(p, "delta", label="δ (failure probability)", css_classes=["delta-input"],
                                 slider={"start": 0.001, "end": 0.2, "step": 0.001})
        self.steps = NumberInput(p, "steps", label="T (development steps)", css_classes=["steps-input"],
                                 slider={"start": 1, "end": 200, "step": 1})
        self.tenants = NumberInput(p, "tenants", label="Tenants", width=110, css_classes=["tenants-input"])
        self.tenant_steps = ListInput(p, "tenant_steps", label="Steps per tenant (optional)", placeholder="e.g. 5,5",
                                      name_in_messages="tenant_steps", on_value=self._set_tenant_steps,
                                      css_classes=["tenant-steps-input"])
        self.revert_drawer = Drawer("Reverts fixed in advance", self._build_reverts, "planner-reverts")
        # below the first view: built when opened (a link or preset that sets them opens them)
        self.effort = Drawer("Labeling effort and cost", self._build_effort, "planner-effort")
        self.budget = NumberInput(p, "budget", label="Label budget (what we have, optional)", placeholder="e.g. 50000",
                                  css_classes=["budget-input"])

    def _build_bound_widgets(self):
        p = self.plan
        self.bound = pn.widgets.RadioButtonGroup.from_param(p.param.bound, options=_BOUND_BUTTONS, color="light",
                                                            sizing_mode="stretch_width", css_classes=["bound-select"])
        self.max_error_rate = NumberInput(p, "max_error_rate", label="Error-rate range a (optional)",
                                          placeholder="e.g. 0.1", css_classes=["max-error-rate-input"],
                                          message_classes=["error-bound"])
        self.bound_note = HTML("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["planner-bound-note"])

    def _build_effort(self) -> list:
        p = self.plan
        self.seconds = NumberInput(p, "seconds_per_label", label="Seconds per label", width=140)
        self.labelers = NumberInput(p, "labelers", label="Labelers", width=100)
        self.cost = NumberInput(p, "cost_per_hour", label="Cost per labeler-hour (optional)", placeholder="e.g. 25")
        self._watch_boxes([self.seconds, self.labelers, self.cost])
        return [pn.Row(self.seconds, self.labelers, sizing_mode="stretch_width"), self.cost]

    def _build_reverts(self) -> list:
        p = self.plan
        self.revert_budget = NumberInput(p, "revert_budget", label="Reverts B", width=110,
                                         css_classes=["revert-budget-input"])
        self.reverts = ListInput(p, "reverts", label="Revert steps (fixed in advance)", placeholder="e.g. 1,2,3",
                                 name_in_messages="reverts", on_value=self._set_reverts,
                                 css_classes=["reverts-input"], message_classes=["error-reverts"])
        self._watch_boxes([self.revert_budget, self.reverts])
        return [pn.Row(self.revert_budget, self.reverts, sizing_mode="stretch_width")]

    # ------------------------------------------------------------------ layout
    def controls(self) -> pn.Column:
        """The input column (the sidebar of the served page)."""
        if self._controls is not None:
            return self._controls
        tenants = pn.Row(self.tenants, self.tenant_steps, sizing_mode="stretch_width")
        # an error pane appears after its anchor the first time it has something to say
        self._anchors = {"meter": self.meter_table, "tenants": tenants, "reverts": self.revert_drawer,
                         "bound": self.bound_note, "other": self.preset}  # a refused link: seen first
        self._controls = pn.Column(
            self.preset, HTML(TEXT["meter"], margin=(10, 5, 0, 5)),
            pn.Row(self.signals, self.uniform_epsilon, sizing_mode="stretch_width"), self.meter_table,
            *self.delta.parts(), *self.steps.parts(), *self.budget.parts(), tenants, self.revert_drawer.toggle,
            HTML(TEXT["bound"], margin=(10, 5, 0, 5)), self.bound, *self.max_error_rate.parts(), self.bound_note,
            self.effort.toggle, self.reset_button, sizing_mode="stretch_width",
        )
        for drawer in (self.revert_drawer, self.effort):  # a drawer's body goes in under its toggle when opened
            drawer.placed_in(self._controls)
        for box in _IN_COLUMN:  # boxes held by the column itself (no column each): messages go in after them
            getattr(self, box).placed_in(self._controls)
        self._open_drawers()
        for group in list(self._error_panes):
            self._place_error(group)
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
    def error_pane(self, group: str) -> HTML:
        """The message pane of ``group`` (``error-<group>``), made and placed when first needed."""
        pane = self._error_panes.get(group)
        if pane is None:
            pane = self._error_panes[group] = HTML("", sizing_mode="stretch_width", margin=(0, 5),
                                                   css_classes=[f"error-{group}", "planner-error"])
            self._place_error(group)
        return pane

    def _place_error(self, group: str) -> None:
        column, pane = self._controls, self._error_panes[group]
        if column is None or pane in column.objects:
            return
        anchor = self._anchors[group]
        anchor = anchor.last if isinstance(anchor, Drawer) else anchor  # under the drawer's body once it is made
        index = len(column.objects) if anchor is None else column.objects.index(anchor) + 1
        column.insert(index, pane)

    def render_errors(self):
        """Each pane shows the one current message about its inputs (never an outdated second one)."""
        model_group = next((g for g, names in _ERROR_GROUPS.items() if self.plan.error_parameter in names), "other")
        groups = ("meter", "tenants", "reverts", "bound")
        for group in (*groups, "other"):
            message = self.input_errors.get(group, "")
            if self.plan.error and (model_group == group or (group == "other" and model_group not in groups)):
                message = self.plan.error
            if message or group in self._error_panes:
                self.error_pane(group).object = error_html(message)

    def _set_input_error(self, group: str, message: str):
        self.input_errors[group] = message
        self.render_errors()
        self._on_box()

    def _boxes(self) -> list:
        """Every input box built so far (drawers add theirs when opened)."""
        return [getattr(self, n) for n in _BOXES if hasattr(self, n)]

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

    @param.depends("plan.epsilon", "plan.ranges", watch=True)
    def _on_meter_inputs(self):
        frame = _meter_frame(self.plan)
        if not frame.equals(self.meter_table.value):
            self.meter_table.value = frame
        self.meter_table.height = _table_height(len(frame))

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
