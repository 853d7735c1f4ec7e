"""The planner's simulation panel: check the plan's counts against simulated developers, beside δ.

A view over :class:`~meter_dashboard.meter.check.PlanCheck` (a background job): who
the developer is, which meter, how many runs; Run / Cancel / progress from
:class:`~meter_dashboard.ui.simulation.SimulationControls`; then a table of each count
(naive, planned with Hoeffding, planned with the chosen bound) with its failure rate, its
interval and the verdict against δ, and a plot of the failure rate by step.  It computes
nothing: the job does, in a worker thread.
"""
from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Legend, LegendItem, Span
from bokeh.plotting import figure

from ..core import formatting as fmt
from ..core.html import render
from ..ui.inputs import NumberInput
from ..ui.simulation import SimulationControls
from ..ui.style import HTML
from .check import MAX_REPLICATES, PlanCheck

__all__ = ["PlanCheckPanel", "shown_interval"]

_ROW_COLORS = {"naive": "#D55E00", "hoeffding": "#0072B2", "planned": "#E69F00"}
#: What the check shows, before it runs (issue 24: the section leads with the point it makes).
_POINT = ("Against a developer who adapts to the signals, the naive count (one Hoeffding estimate, single_model) "
          "fails above δ, and the planned count holds at or below δ.")
_BEFORE_RUN = ("Run the check: each count of this plan (the naive one, the chosen meter's planned count under "
               "Hoeffding's bound and, with the exact bound, its exact count) is used by simulated developers for "
               "T steps; the table shows each failure rate with its interval beside δ.")


_INTRO = render("meter/templates/check_intro.html", point=_POINT)  # the same for everyone: built once


def _lead(rows, delta, meter) -> tuple[str, bool]:
    """The sentence leading the results: what this run showed (and whether it is an alarm)."""
    done = {row.key: row for row in rows if row.result is not None and row.result.replicates}
    naive = done.get("naive")
    planned = [row for key, row in done.items() if key != "naive"]
    if naive is None or not planned:
        return "", False
    failed = [row for row in planned if row.verdict != "within δ"]
    rate = f"{fmt.percent(naive.result.failure_rate)} of the runs"
    if failed:
        return (f"The planned count {fmt.integer(failed[0].labels)} failed in "
                f"{fmt.percent(failed[0].result.failure_rate)} of the runs, above δ = {fmt.number(delta)}: "
                "the plan does not keep its promise here.", True)
    held = ", ".join(fmt.integer(row.labels) for row in planned)
    planned_text = f"the {meter} meter's planned count ({held} labels)" if meter else f"the planned count ({held} labels)"
    if naive.verdict == "above δ":
        return (f"The naive count ({fmt.integer(naive.labels)} labels) failed in {rate}, above δ = "
                f"{fmt.number(delta)}; {planned_text} held at or below δ.", False)
    hint = (" The incremental meter's signal (the worst so far) tells the adversary less than the regular "
            "meter's: choose the regular meter to see the naive count fail." if meter == "incremental" else "")
    return (f"Here the naive count ({fmt.integer(naive.labels)} labels) also stayed within δ = {fmt.number(delta)} "
            f"({rate}); {planned_text} held.{hint}", False)


def shown_interval(ci) -> tuple:
    """The interval as shown: a bound within rounding of 0 (Wilson's lower end at no failures) is 0."""
    return tuple(0.0 if abs(v) < 1e-12 else float(v) for v in ci)


class PlanCheckPanel(pn.viewable.Viewer):
    """Run the Monte Carlo check of ``plan``'s current counts (a :class:`MeterPlan`).

    Parameters
    ----------
    plan : MeterPlan
    job : PlanCheck, optional
    """

    def __init__(self, plan, job: PlanCheck | None = None, **params):
        super().__init__(**params)
        self.plan = plan
        self.job = job or PlanCheck(meter="regular")  # the meter whose signals let the naive count fail
        j = self.job
        self.developer = pn.widgets.RadioButtonGroup.from_param(
            j.param.developer, options={"Adversary (boosting attack)": "adversary", "Honest hill-climber": "honest"},
            color="light", css_classes=["plan-check-developer"])
        self.meter = pn.widgets.RadioButtonGroup.from_param(
            j.param.meter, options={"Incremental meter": "incremental", "Regular meter": "regular"}, color="light",
            css_classes=["plan-check-meter"])
        # No fixed widths in the main column: a phone lays it out at its own width (issue 11 #11).
        self.replicates = NumberInput(j, "replicates", label=f"Runs per count (64 to {MAX_REPLICATES:,})",
                                      css_classes=["plan-check-replicates"])
        self.seed = NumberInput(j, "seed", label="Seed", css_classes=["plan-check-seed"])
        self.controls = SimulationControls(j, run_label="Run the check", css_prefix="plan-check",
                                           before_run=self._configure)
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["plan-check-table"])
        self.source = ColumnDataSource({"x": np.zeros(0), **{k: np.zeros(0) for k in _ROW_COLORS}})
        self.figure = self._figure()
        self.plot = pn.pane.Bokeh(self.figure, sizing_mode="stretch_width")
        self.plot_holder = pn.Column(sizing_mode="stretch_width")  # the plot appears with the first results
        j.param.watch(self._on_rows, ["rows"])
        j.param.watch(self._on_state, ["running"])
        self.on_plan()  # the planner calls it on every new result, inside its own batch of updates

    def _configure(self):
        r = self.plan.result
        if r is None:
            return
        self.job.configure(r, self.plan.ranges)

    def _figure(self):
        fig = figure(height=270, sizing_mode="stretch_width", x_axis_label="T (development steps)",
                     y_axis_label="failure rate so far", title="Failure rate by step (dashed: δ)",
                     tools="pan,wheel_zoom,reset,save", toolbar_location="above")
        items = []
        for key, color in _ROW_COLORS.items():
            line = fig.line("x", key, source=self.source, color=color, line_width=2.2)
            items.append(LegendItem(label={"naive": "naive", "hoeffding": "Hoeffding",
                                           "planned": "chosen bound"}[key], renderers=[line]))
        self.delta_line = Span(location=self.plan.delta, dimension="width", line_color="#888888",
                               line_dash="dashed", line_width=1.5)
        fig.add_layout(self.delta_line)
        fig.add_layout(Legend(items=items, location="center", click_policy="hide", background_fill_alpha=0.8,
                              ncols=3, label_text_font_size="12px", spacing=2, padding=4, margin=4), "below")
        fig.toolbar.logo = None
        return fig

    # ------------------------------------------------------------------ updates
    def on_plan(self, *_):
        """Called with every new plan: after a run, the table says once when the plan has changed since."""
        if self.job.running or not any(row.result is not None for row in self.job.rows):
            self.table.object = render("meter/templates/check.html", lead="", alarm=False, rows=[], delta=0,
                                       notes=[_BEFORE_RUN])
            return
        self._on_rows()

    def _on_state(self, *_):
        if not self.job.running:
            self._on_rows()

    def _stale(self) -> bool:
        r, s = self.plan.result, self.job.settings
        if r is None or not s:
            return False
        return (tuple(r.epsilon), r.delta, r.steps, tuple(float(x) for x in self.plan.ranges)) != (
            s["epsilon"], s["delta"], s["steps"], s["ranges"])

    def _on_rows(self, *_):
        rows, s = self.job.rows, self.job.settings
        if not rows:
            return
        with pn.io.hold():
            self.table.object = self._table(rows, s.get("delta", self.plan.delta), stale=self._stale())
            done = [row for row in rows if row.result is not None]
            if done:
                steps = np.arange(1, s["steps"] + 1)
                data = {"x": steps}
                for key in _ROW_COLORS:
                    row = next((x for x in done if x.key == key), None)
                    data[key] = (row.result.failed_by_step / max(row.result.replicates, 1) if row is not None
                                 else np.full(steps.shape, np.nan))
                self.source.data = data
                self.delta_line.location = s["delta"]
                top = max([s["delta"]] + [float(np.nanmax(v)) for k, v in data.items() if k != "x"
                                          and np.isfinite(v).any()])
                self.figure.y_range.start, self.figure.y_range.end = 0.0, min(1.0, 1.2 * top)
            self.plot_holder.objects = [self.plot] if done else []

    def _table(self, rows, delta, stale: bool = False) -> str:
        s = self.job.settings
        shown = [dict(key=row.key, title=row.title, labels=row.labels, verdict=row.verdict,
                      rate=None if row.result is None else row.result.failure_rate,
                      within=row.verdict == "within δ", partial=row.result is not None and row.result.cancelled,
                      interval="—" if row.result is None else fmt.interval(*shown_interval(row.result.ci)))
                 for row in rows]
        notes = []
        if s and any(r.result is not None for r in rows):
            notes.append(f"{s['developer']} developer, {s['meter']} meter, T = {fmt.integer(s['steps'])}, "
                         f"{s['replicates']:,} runs per count, seed {s['seed']}.")
        if stale:
            notes.append("These results are for an earlier plan: run the check again.")
        r = self.plan.result
        if r is not None and r.max_error_rate is not None:
            notes.append(f"The simulated models err about 50% (adversary) or 30% (honest): above the error-rate "
                         f"range a = {fmt.number(r.max_error_rate)}, so the range's count is checked outside its "
                         "assumption - what happens when the range is wrong.")
        if r is not None and (len(r.tenant_steps) > 1 or r.reverts):
            notes.append("The simulation runs one developer without reverts; tenants and reverts are not simulated.")
        lead, alarm = _lead(rows, delta, s.get("meter"))
        return render("meter/templates/check.html", lead=lead, alarm=alarm, rows=shown, delta=delta, notes=notes)

    def __panel__(self):
        intro = HTML(_INTRO, sizing_mode="stretch_width")
        return pn.Column(intro, pn.FlexBox(self.developer, self.meter, flex_wrap="wrap", gap="6px 12px", sizing_mode="stretch_width"),
                         pn.Row(self.replicates, self.seed, sizing_mode="stretch_width"), self.controls,
                         self.table, self.plot_holder, sizing_mode="stretch_width", css_classes=["plan-check"])
