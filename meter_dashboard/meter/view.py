"""The planner page: live label counts for every meter variant.

:class:`Planner` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.meter.model.MeterPlan`.
It holds widgets made from the plan's parameters (the per-model bound among them), headline
numbers with the sentence, a results table with Hoeffding's count beside the chosen bound's,
the curve over T (a Bokeh plot updated in place: its ranges follow the data until the user
zooms, then keep the zoom) with the label budget drawn on it, downloads (CSV, the HTML
report) and URL sharing.  It computes nothing itself: every number comes from the model.

A page builds what its first view shows and nothing more: the second plot, the budget's
answers for every variant and the simulation check are sections built (and computed) the
first time someone opens them.  Served, the first response holds the header, the inputs and a
"computing…" state; the numbers and the plot replace it once the page is connected, so a
room opening one link at once sees the page at once.

On a served page, and in a Jupyter kernel, the model's slow work (exact binomial counts, the
budget answers under it, exact curve points) runs in the runtime's worker threads
(:meth:`MeterPlan.work_in_background`, :mod:`meter_dashboard.core.runtime`): Hoeffding's
numbers show at once, the rest streams in, and work for inputs changed meanwhile is dropped.
Elsewhere (a plain script) everything is computed before the constructor returns.  Each
update re-sends only the panes whose markup changed and the plot columns that changed, all
in one message (``pn.io.hold``).
"""
from __future__ import annotations

import asyncio
import importlib
import logging
from dataclasses import replace

import pandas as pd
import panel as pn
import param

from ..core.html import render
from ..core.runtime import thread_pool
from ..core.validation import InputError, check_int, check_probability
from ..ui.base import DashboardView
from ..ui.inputs import ListInput, NumberInput
from ..ui.sections import document_dispatch
from ..ui.style import HTML, error_html
from ..ui.urlstate import UrlState
from . import view_html as markup
from .figures import LabelsPlot
from .model import PRESETS, RECOMMENDED, SWEEPS, MeterPlan
from .result import TENANT_DISCREPANCY
from .stages import ORDER, quick_result, slow_items, with_items
from .text import file_stem, plan_inputs, summary_text
from .view_parts import Artefacts, Drawer, OnDemand
from .view_pin import PinSection

log = logging.getLogger(__name__)

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
_SWEEP_BUTTONS = {"δ": "delta", "ε₁": "epsilon", "m": "signals", "tenants": "tenants"}
_URL_KEYS = set(MeterPlan.QUERY_KEYS) | set(MeterPlan.BOUND_QUERY_KEYS) | set(MeterPlan.PIN_QUERY_KEYS)
#: Text identical for every session (rendered once per process).
_TEXT = {part: render("meter/templates/sidebar.html", part=part)
         for part in ("meter", "bound", "binomial", "hoeffding", "against")}
_EFFORT = ("seconds_per_label", "labelers", "cost_per_hour")
#: How long the page waits for a new plan's exact counts before it shows Hoeffding's with "computing…".
HOLD_SECONDS = 0.15
_CURVE_TITLE = "Labels against T (Figs. 8–12)"
_CURVE_NOTE = ("Resampling and single_model use ε₁; curves over T split tenants evenly and count a revert once T "
               "reaches its step.")


def _warm_engine() -> None:
    """Load the exact engine's module in a worker thread, once per process, before a page first asks for it."""
    import sys

    if "meter_dashboard.bounds.binomial" not in sys.modules and not _WARMING:
        _WARMING.append(True)
        thread_pool().submit(importlib.import_module, "meter_dashboard.bounds.binomial")


_WARMING: list = []


def _served() -> bool:
    doc = pn.state.curdoc
    return doc is not None and doc.session_context is not None


def _in_event_loop() -> bool:
    """Whether this thread runs an asyncio loop (a Jupyter kernel executing a cell): updates can follow later."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _table_height(rows: int) -> int:
    return min(34 + 30 * rows, 330)


def _meter_frame(plan: MeterPlan) -> pd.DataFrame:
    r = plan.ranges
    n = len(plan.epsilon)
    lower = [r[i] if i < len(r) else float("nan") for i in range(n)]
    upper = [r[i + 1] if i + 1 < len(r) else float("nan") for i in range(n)]
    return pd.DataFrame({"signal": list(range(1, n + 1)), "from": lower, "to": upper, "epsilon": list(plan.epsilon)})


def _sweep_title(parameter: str, steps: int) -> str:
    """Short enough for a phone: the axis label says the rest."""
    return f"Labels against {SWEEPS[parameter].split(' ')[0]} (T = {steps})"


class Planner(DashboardView):
    """Live label-count calculator for every ease.ml/meter variant.

    Parameters
    ----------
    plan : MeterPlan, optional
        The model to drive; by default a new one from the remaining keyword arguments
        (``epsilon``, ``delta``, ``steps``, ``tenants``, ``tenant_steps``, ``reverts``,
        ``bound``, ``max_error_rate``, ...).  The page asks it for the second plot and every
        variant's budget answers only once those sections are opened.
    sync_url : bool
        Keep the plan in the page URL's query string (served pages; off in notebooks).

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Planner(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)  # doctest: +SKIP
    >>> md.Planner(bound="binomial", max_error_rate=0.1).report("plan.html")  # doctest: +SKIP
    """

    title = "Planner"
    extensions = ("tabulator",)

    plan = param.ClassSelector(class_=MeterPlan)
    sync_url = param.Boolean(default=False)

    def __init__(self, plan: MeterPlan | None = None, sync_url: bool = False, **params):
        plan_params = {k: params.pop(k) for k in list(params) if k in MeterPlan.param and k != "name"}
        served = _served()
        self._url = UrlState(keys=_URL_KEYS) if sync_url and served else None
        link_message = ""
        if self._url is not None:
            link_values, link_message = self._link_values()
            plan_params.update(link_values)
        background = served or _in_event_loop()
        # the exact bound's slow work starts once it is off the loop (Hoeffding's plan is milliseconds)
        exact = {k: plan_params.pop(k) for k in ("bound", "max_error_rate") if background and k in plan_params}
        compare = plan_params.pop("pinned", None)  # a link's pinned plan: pinned once the plan exists
        lean = dict(with_sweep=False, budget_variants=[RECOMMENDED])  # the rest once its section is opened
        if plan is None:
            try:
                plan = MeterPlan(**plan_params, **lean)
            except InputError as exc:
                if self._url is None:
                    raise
                link_message = f"The link's settings were not applied: {exc}"
                plan, exact = MeterPlan(**lean), {}
        else:
            plan.param.update(**plan_params, **lean)
        self._closed = False  # the page's session was destroyed (its browser left)
        if background:
            # slow work leaves the event loop free: every session of a server, or a Jupyter kernel's cell
            plan.work_in_background(document_dispatch())
        if exact:
            plan.param.update(**exact)
        if isinstance(compare, str) and compare:
            try:
                plan.compare_with(compare)
            except InputError as exc:
                link_message = f"The link's pinned plan was not applied: {exc}"
        elif isinstance(compare, MeterPlan):
            plan.pinned = compare
        super().__init__(plan=plan, sync_url=sync_url, **params)
        self._input_errors: dict[str, str] = {}
        if link_message:
            self._input_errors["other"] = link_message
        self._applying_preset = False
        self._budget_result = None  # the last result whose budget answers are on screen
        self._budget_timer = False
        self._budget_overdue = None  # the plan (its Hoeffding counts) whose answers are late: show "computing…"
        self._filled = False
        self.check = self.sweep_plot = self._whatif = None
        self._controls = None
        self._error_panes: dict = {}
        self._stale_shown = False
        self._behind = self._waited = False  # a render held for the exact counts; the hold is over
        self._hold_token: object | None = None
        self._typed_tenants = plan.tenants
        self._build_widgets()
        self._build_outputs()
        self.pin = PinSection(self)
        self._watch_boxes(self._boxes())
        self.plan.param.watch(self._on_outputs, ["result", "error", "error_parameter", "curves", "sweep_curves",
                                                 "work_error"])
        self.plan.param.watch(self._on_meter_inputs, ["epsilon", "ranges"])
        self.plan.param.watch(self._on_bound_inputs, ["bound"])
        self.plan.param.watch(lambda *_: self._update_url(), ["pinned"])
        self.plan.param.watch(self._open_drawers, ["reverts", "revert_budget", *_EFFORT])
        self.plan.param.watch(self._on_inputs_changed, list(PRESETS[next(iter(PRESETS))]) + ["ranges"])
        self._on_bound_inputs()
        self._update_url()  # before the page is connected: its first response carries the URL
        if served:
            _warm_engine()
            # the first response: header, inputs and "computing…"; the numbers follow once the page is connected
            self.headlines.object = markup.computing()
            self._build_curve()
            self._render_errors()
            pn.state.onload(self._fill)
            pn.state.on_session_destroyed(self._on_session_destroyed)
        else:
            self._fill()

    def _on_session_destroyed(self, context) -> None:
        """The browser left: the plan's background work stops and no timer touches the emptied plots."""
        self._closed = True
        self.plan.stop_work()
        log.debug("planner: session %s destroyed (its browser left); its background work stopped",
                  getattr(context, "id", "?"))

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
            editors={"signal": None, "from": None,
                     "to": {"type": "number", "step": 0.001, "min": 0, "max": 1},
                     "epsilon": {"type": "number", "step": 0.001, "min": 0.0001, "max": 0.999}},
            formatters={"from": {"type": "money", "precision": 4, "symbol": ""},
                        "to": {"type": "money", "precision": 4, "symbol": ""},
                        "epsilon": {"type": "money", "precision": 4, "symbol": ""}},
            titles={"signal": "#", "from": "from", "to": "to", "epsilon": "ε"},
            widths={"signal": 48},
            css_classes=["meter-table"], layout="fit_columns",
        )
        self.meter_table.on_edit(self._on_table_edit)

        self.uniform_epsilon = NumberInput(p, "epsilon", label="Same ε for every signal",
                                           getter=lambda plan: plan.uniform_epsilon,
                                           check=lambda text: check_probability("Same ε for every signal", text),
                                           on_value=p.set_uniform_epsilon, placeholder="differs per signal",
                                           css_classes=["uniform-epsilon-input"])
        self.reset_button = pn.widgets.Button(label="Reset to defaults", color="light", sizing_mode="stretch_width",
                                       margin=(8, 5, 2, 5), css_classes=["planner-reset"])
        self.reset_button.on_click(lambda _: self.plan.reset())
        self.delta = NumberInput(p, "delta", label="δ (failure probability)", css_classes=["delta-input"],
                                 slider={"start": 0.001, "end": 0.2, "step": 0.001})
        self.steps = NumberInput(p, "steps", label="T (development steps)", css_classes=["steps-input"],
                                 slider={"start": 1, "end": 200, "step": 1})
        self.tenants = NumberInput(p, "tenants", label="Tenants", width=110, css_classes=["tenants-input"])
        self.tenant_steps = ListInput(p, "tenant_steps", label="Steps per tenant (optional)", placeholder="e.g. 5,5",
                                      name_in_messages="tenant_steps", on_value=self._set_tenant_steps,
                                      css_classes=["tenant-steps-input"])
        self.revert_drawer = Drawer("Reverts fixed in advance", self._build_reverts, "planner-reverts")
        self._build_bound_widgets()

        # below the first view: built when opened (a link or preset that sets them opens them)
        self.effort = Drawer("Labeling effort and cost", self._build_effort, "planner-effort")
        self.budget = NumberInput(p, "budget", label="Label budget (what we have, optional)", placeholder="e.g. 50000",
                                  css_classes=["budget-input"])

        self.share = Artefacts(self)
        self.csv_download, self.report_download = self.share.csv, self.share.report

    def _build_bound_widgets(self):
        p = self.plan
        self.bound = pn.widgets.RadioButtonGroup.from_param(p.param.bound, options=_BOUND_BUTTONS, color="light",
                                                            sizing_mode="stretch_width", css_classes=["bound-select"])
        self.max_error_rate = NumberInput(p, "max_error_rate", label="Error-rate range a (optional)",
                                          placeholder="e.g. 0.1", css_classes=["max-error-rate-input"],
                                          message_classes=["error-bound"])
        self.bound_note = HTML("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["planner-bound-note"])

    # ------------------------------------------------------------------ outputs
    def _build_outputs(self):
        # the answer in one pane: cards, sentence, table (and what the range assumes) change together
        self.headlines = self.table = HTML("", sizing_mode="stretch_width",
                                           css_classes=["planner-headlines", "planner-table"])
        self.assumptions = HTML("", sizing_mode="stretch_width", css_classes=["planner-assumptions"])
        self.curve_plot = None
        self.curve_holder = pn.Column(sizing_mode="stretch_width", css_classes=["planner-curve-holder"])
        self.sections = OnDemand({"whatif": self._build_whatif, "sweep": self._build_sweep,
                                  "check": self._build_check})

    def _build_curve(self):
        """The curve over T (the first view's plot): empty in a served page's first response, drawn on its first tick.

        Made with the page (a plot added to a shown page makes Bokeh walk the whole document again).
        """
        self.curve_plot = LabelsPlot("T (development steps)", _CURVE_TITLE + ("" if self._filled else " · computing…"),
                                     marker=self.plan.steps, name="planner-curve", dark=pn.config.theme == "dark")
        self.curve_pane = pn.pane.Bokeh(self.curve_plot.figure, sizing_mode="stretch_width",
                                        css_classes=["planner-curve"])
        self.curve_holder.objects = [self.curve_pane]

    def _draw_curve(self):
        if self.curve_plot.figure.title.text != _CURVE_TITLE:
            self.curve_plot.figure.title.text = _CURVE_TITLE
        self._on_curves()
        if self.plan.result is not None:
            self._show_on_curve(self.plan.result)
        self.pin.render()

    def _build_whatif(self):
        self._whatif = HTML("", sizing_mode="stretch_width", css_classes=["planner-budget", "planner-whatif-section"])
        self.plan.budget_variants = list(ORDER)  # every variant's answers from now on
        self._render_whatif()
        return self._whatif

    def _build_sweep(self):
        self.sweep = pn.widgets.RadioButtonGroup.from_param(self.plan.param.sweep_parameter, options=_SWEEP_BUTTONS,
                                                            color="light", css_classes=["sweep-select"])
        self._ensure_sweep_plot()
        return pn.Column(pn.Row(HTML(_TEXT["against"], margin=(12, 5)), self.sweep), self.sweep_pane,
                         sizing_mode="stretch_width", css_classes=["planner-sweep-section"])

    def _ensure_sweep_plot(self):
        if self.sweep_plot is not None:
            return
        self._sweep_parameter = self.plan.sweep_parameter
        self.sweep_plot = self._sweep_plot(self._sweep_parameter)
        self.sweep_pane = pn.pane.Bokeh(self.sweep_plot.figure, sizing_mode="stretch_width")
        self.plan.with_sweep = True  # the model computes its curves from now on
        self._on_sweep()

    def _build_check(self):
        from .view_check import PlanCheckPanel

        self.check = PlanCheckPanel(self.plan)
        return pn.Column(self.check, sizing_mode="stretch_width", css_classes=["planner-check-section"])

    def _sweep_plot(self, parameter: str) -> LabelsPlot:
        return LabelsPlot(SWEEPS[parameter], _sweep_title(parameter, self.plan.steps),
                          log_x=parameter in ("delta", "epsilon"), height=320, name="planner-sweep",
                          dark=pn.config.theme == "dark")

    @property
    def curve_source(self):
        """The labels-against-T plot's data (the chosen bound's counts)."""
        if self.curve_plot is None:
            self._fill()
        return self.curve_plot.source

    @property
    def sweep_source(self):
        """The second plot's data (the chosen bound's counts); the plot is made when first asked for."""
        self._ensure_sweep_plot()
        return self.sweep_plot.source

    # ------------------------------------------------------------------ layout
    def controls(self) -> pn.Column:
        """The input column (the sidebar of the served page)."""
        if self._controls is not None:
            return self._controls
        tenants = pn.Row(self.tenants, self.tenant_steps, sizing_mode="stretch_width")
        # an error pane appears after its anchor the first time it has something to say
        self._anchors = {"meter": self.meter_table, "tenants": tenants, "reverts": self.revert_drawer.body,
                         "bound": self.bound_note, "other": self.preset}  # a refused link: seen first
        self._controls = pn.Column(
            self.preset,
            HTML(_TEXT["meter"], margin=(10, 5, 0, 5)),
            pn.Row(self.signals, self.uniform_epsilon, sizing_mode="stretch_width"),
            self.meter_table,
            self.delta,
            self.steps,
            self.budget,
            tenants,
            self.revert_drawer.toggle,
            self.revert_drawer.body,
            HTML(_TEXT["bound"], margin=(10, 5, 0, 5)),
            self.bound,
            self.max_error_rate,
            self.bound_note,
            self.effort.toggle,
            self.effort.body,
            self.reset_button,
            sizing_mode="stretch_width",
        )
        self._open_drawers()
        for group in list(self._error_panes):
            self._place_error(group)
        return self._controls

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

    def _open_drawers(self, *_) -> None:
        """A drawer whose inputs hold something other than their defaults is open (a link, a preset)."""
        p = self.plan
        if p.reverts or p.revert_budget:
            self.revert_drawer.open()
        if any(getattr(p, k) != p.param[k].default for k in _EFFORT):
            self.effort.open()

    def _error_pane(self, group: str) -> HTML:
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
        index = len(column.objects) if anchor is None else column.objects.index(anchor) + 1
        column.insert(index, pane)

    meter_error = property(lambda self: self._error_pane("meter"), doc="Messages about the meter table.")
    tenants_error = property(lambda self: self._error_pane("tenants"), doc="Messages about the tenants.")
    reverts_error = property(lambda self: self._error_pane("reverts"), doc="Messages about the reverts.")
    bound_error = property(lambda self: self._error_pane("bound"), doc="Messages about the bound.")
    other_errors = property(lambda self: self._error_pane("other"), doc="Messages about other inputs and links.")

    def results(self) -> pn.Column:
        """Headlines, sentence, table, the curve, then sections opened on demand, and assumptions."""
        return pn.Column(
            self.headlines,
            self.share.row,
            self.pin,
            self.curve_holder,
            self.sections,
            self.assumptions,
            sizing_mode="stretch_width",
        )

    # ------------------------------------------------------------------ input handlers
    def _on_preset(self, event):
        if event.new == _PRESET_PLACEHOLDER:
            return
        self._applying_preset = True
        try:
            self.plan.apply_preset(event.new)
        finally:
            self._applying_preset = False

    def _on_inputs_changed(self, *_):
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

    def _on_meter_inputs(self, *_):
        frame = _meter_frame(self.plan)
        if not frame.equals(self.meter_table.value):
            self.meter_table.value = frame
        self.meter_table.height = _table_height(len(frame))

    def _on_bound_inputs(self, *_):
        exact = self.plan.bound == "binomial"
        self.max_error_rate.text.disabled = not exact
        self.bound_note.object = _TEXT["binomial" if exact else "hoeffding"]

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

    def _set_input_error(self, group: str, message: str):
        self._input_errors[group] = message
        self._render_errors()
        self._on_box()

    def _boxes(self) -> list:
        """Every input box built so far (drawers add theirs when opened)."""
        names = ("signals", "uniform_epsilon", "delta", "steps", "budget", "tenants", "tenant_steps", "max_error_rate", "revert_budget",
                 "reverts", "seconds", "labelers", "cost")
        return [getattr(self, n) for n in names if hasattr(self, n)]

    def _watch_boxes(self, boxes) -> None:
        """After a box took (or refused) what was typed, the results say whether they are still valid."""
        for box in boxes:
            box.text.param.watch(self._on_box, "value")

    def _stale(self) -> bool:
        """The results on screen are the last valid ones: the plan or a box refused what was typed."""
        return bool(self.plan.error or self._input_errors.get("meter") or not all(b.valid for b in self._boxes()))

    def _on_box(self, *_) -> None:
        if self._filled and self._stale() != self._stale_shown:
            with pn.io.hold():
                self._on_result()

    def _render_errors(self):
        """Each pane shows the one current message about its inputs (never an outdated second one)."""
        model_group = next((g for g, names in _ERROR_GROUPS.items() if self.plan.error_parameter in names), "other")
        groups = ("meter", "tenants", "reverts", "bound")
        for group in (*groups, "other"):
            message = self._input_errors.get(group, "")
            if self.plan.error and (model_group == group or (group == "other" and model_group not in groups)):
                message = self.plan.error
            if message or group in self._error_panes:
                self._error_pane(group).object = error_html(message)

    # ------------------------------------------------------------------ output handlers
    def _fill(self):
        """The numbers and the curve (served: on the page's first tick, replacing "computing…")."""
        if self._filled:
            return
        self._filled = True
        with pn.io.hold():
            if self.curve_plot is None:
                self._build_curve()
            self._on_result()
            self._draw_curve()

    def _on_outputs(self, *events):
        """One model change -> one batch of view updates (a single message to the browser).

        Under the exact bound a new plan's counts take milliseconds (issue 18): the page waits for
        them up to :data:`HOLD_SECONDS` and then shows the whole answer at once; only when they take
        longer do Hoeffding's counts and "computing…" show meanwhile.
        """
        if not self._filled:
            return
        r, changed = self.plan.result, {e.name for e in events}
        if r is not None and not self.plan.error and r.is_pending("labels", RECOMMENDED) and not self._waited:
            self._hold_render()
            return
        everything, self._behind = self._behind, False  # after a hold every part is brought up to date
        with pn.io.hold():
            if everything or changed & {"result", "error", "error_parameter", "work_error", "curves",
                                        "sweep_curves"}:
                self._on_result()
            if everything or "curves" in changed:
                self._on_curves()
            if everything or "sweep_curves" in changed:
                self._on_sweep()

    def _hold_render(self) -> None:
        self._behind = True
        token = self._hold_token = object()

        async def later():
            await asyncio.sleep(HOLD_SECONDS)
            if self._hold_token is token and self._behind and not self._closed:  # still waiting: show what there is
                self._waited = True
                try:
                    self._on_outputs()
                finally:
                    self._waited = False

        pn.state.execute(later)

    def _on_result(self, *_):
        self._render_errors()
        r = self.plan.result
        if r is None:
            return
        # Few panes, each updated only when its markup changed (param compares the new text with the old):
        # a pane update costs the server far more than its bytes, so what changes together shares a pane.
        budget = self._budget_shown(r)
        p = self.plan
        stale = self._stale()
        self._stale_shown = stale
        self.headlines.object = markup.answer(r, stale=stale, budget_from=budget, curves=p.curves,
                                              sweep=p.sweep_curves, work_error=p.work_error,
                                              share_query=self._session_query(),
                                              summary=summary_text(r, plan_inputs(r, p.ranges)),
                                              stem=file_stem(r))
        if self.curve_plot is not None:
            styles = {"opacity": "0.45"} if stale else {}
            if self.curve_pane.styles != styles:
                self.curve_pane.styles = styles
        self._render_whatif(budget)
        self.assumptions.object = markup.assumptions_html(self._notes(r))
        if self.curve_plot is not None:
            self._show_on_curve(budget)
        if self.check is not None:
            self.check.on_plan()
        self.pin.render()
        self._update_url()

    def _show_on_curve(self, budget) -> None:
        """The plan's T and the budget's line (with the largest T it supports) on the curve over T."""
        p = self.plan
        self.curve_plot.move_marker(p.result.steps)
        shown = budget.budget is not None and not budget.is_pending("budget", RECOMMENDED)
        self.curve_plot.show_budget(budget.budget if shown else None,
                                    budget.max_steps[RECOMMENDED] if shown else None,
                                    x_end=float(p.curves["steps"][-1]) if p.curves else None)

    def on_pinned_outputs(self) -> None:
        """The pinned plan changed or computed more: its table and curve follow (one message)."""
        if not self._filled or self._closed:
            return
        with pn.io.hold():
            self.pin.render()

    def _render_whatif(self, budget=None):
        if self._whatif is not None and self.plan.result is not None:
            self._whatif.object = markup.budget_html(budget or self._budget_shown(self.plan.result),
                                                     stale=self._stale())

    @staticmethod
    def _notes(r) -> list:
        notes = list(r.notes) + [n for n in r.bound_notes() if n not in r.notes]
        return notes + [TENANT_DISCREPANCY, _CURVE_NOTE]

    def _budget_shown(self, r):
        """The result whose budget answers to show: ``r``, or while its answers are computing the last ones shown.

        Under the exact bound the answers take a while: keeping the last ones on screen meanwhile
        spares a message and a flicker; if they take longer than 0.3 s, "computing…" shows.
        """
        waiting = r.budget is not None and any(r.is_pending("budget", v) for v in ORDER)
        last = self._budget_result
        overdue = self._budget_overdue is r.hoeffding_labels  # shared by every partial result of one plan
        if waiting and last is not None and last.budget == r.budget and not overdue:
            self._flag_budget_later()
            return last
        if not waiting:
            self._budget_result = r
        return r

    def _flag_budget_later(self, seconds: float = 0.3) -> None:
        if self._budget_timer:
            return
        self._budget_timer = True

        async def later():
            await asyncio.sleep(seconds)
            self._budget_timer = False
            r = self.plan.result
            if not self._closed and r is not None and r.budget is not None and any(r.is_pending("budget", v) for v in ORDER):
                self._budget_overdue = r.hoeffding_labels
                with pn.io.hold():
                    self._on_result()

        pn.state.execute(later)

    def _on_curves(self, *_):
        if self.plan.curves and self.curve_plot is not None:
            self.curve_plot.update(self.plan.curves, "steps")

    def _on_sweep(self, *_):
        s = self.plan.sweep_curves
        if not s or self.sweep_plot is None:
            return
        if self._sweep_parameter != s["parameter"]:
            self._sweep_parameter = s["parameter"]
            self.sweep_plot = self._sweep_plot(s["parameter"])
            self.sweep_plot.update(s, "x")
            self.sweep_pane.object = self.sweep_plot.figure
        else:
            self.sweep_plot.update(s, "x")
            title = _sweep_title(s["parameter"], self.plan.steps)
            if self.sweep_plot.figure.title.text != title:
                self.sweep_plot.figure.title.text = title

    def complete_result(self):
        """The current result with every part computed (downloads wait for nothing on screen)."""
        result = self.plan.result
        if result.complete and all(v is not None for v in (result.max_steps or {v: 0 for v in ORDER}).values()):
            return result
        full = replace(self.plan.inputs(), budget_variants=ORDER)
        return with_items(quick_result(full), [item for unit in slow_items(full) for item in unit])

    # ------------------------------------------------------------------ the report
    def report(self, path=None, link: str | None = None):
        """The current plan as a self-contained HTML report (curves as shown); ``path`` writes it.

        ``link``: the page address holding the plan, shared inside the report (the page's button passes it).

        Returns the :class:`~meter_dashboard.core.report.Report` (or the path written).
        """
        job = self.check.job if self.check is not None else None
        check = job.rows if job is not None and any(row.result is not None for row in job.rows) else None
        from .report import plan_report

        result, curves, sweep_curves = self.complete_result(), self.plan.curves, self.plan.sweep_curves
        if not sweep_curves or curves.get("computed", 0) < curves.get("planned", 0) or \
                sweep_curves.get("computed", 0) < sweep_curves.get("planned", 0):
            curves = sweep_curves = None  # the report computes its own
        built = plan_report(result, curves=curves, sweep_curves=sweep_curves, ranges=self.plan.ranges, check=check,
                            check_settings=job.settings if job is not None else None, link=link)
        return built if path is None else built.save(path)

    # ------------------------------------------------------------------ URL
    def share_link(self) -> str | None:
        """The page's address holding this plan (served pages; None in a notebook)."""
        href = getattr(pn.state.location, "href", "") if self._url is not None else ""
        return f"{href.split('?')[0]}?{self.plan.query_string()}" if href else None

    def _csv(self):
        return self.share.csv_file()

    def _link_values(self) -> tuple[dict, str]:
        """The plan's values from the page URL (raw text through the plan's own parser) and why not, if refused."""
        url = self._url
        if url is None:
            return {}, ""
        query = url.query()
        if url.refused:
            return {}, url.refused
        if not query:
            return {}, ""
        try:
            return MeterPlan.parse_query(query), ""
        except InputError as exc:
            return {}, f"The link's settings were not applied: {exc}"

    def _update_url(self):
        if self._url is not None and not self.plan.error:
            self._url.write(self.plan.to_query())

    def _session_query(self) -> str | None:
        """The plan (every setting, the bound included) for the link replaying a trace; None unless served.

        In a notebook there is no page URL and no session page: the note and the link are left out.
        """
        if self._url is None:
            return None
        return self.plan.query_string(pinned=False)


def page():
    """The served planner: controls in the sidebar, results in the main area, URL-synced."""
    return Planner(sync_url=True)
