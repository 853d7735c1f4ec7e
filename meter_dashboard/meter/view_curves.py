"""The planner page's plots (Panel): labels against T, and the second plot (labels against δ, ε₁, m or tenants).

:class:`CurvesSection` holds the curve over T (the first view's plot: its ranges follow the data
until the user zooms, then keep the zoom; the plan's T and the budget are drawn on it) and the second
plot, made the first time its section is opened.  Each update sends the columns that changed.
"""
from __future__ import annotations

import panel as pn
import param

from ..ui.style import HTML
from .figures import LabelsPlot
from .model import RECOMMENDED, SWEEPS, MeterPlan
from .view_inputs import TEXT

__all__ = ["CurvesSection", "CURVE_NOTE"]

_SWEEP_BUTTONS = {"δ": "delta", "ε₁": "epsilon", "m": "signals", "tenants": "tenants"}
_CURVE_TITLE = "Labels against T (Figs. 8–12)"
CURVE_NOTE = ("Resampling and single_model use ε₁; curves over T split tenants evenly and count a revert once T "
              "reaches its step.")


def _sweep_title(parameter: str, steps: int) -> str:
    """Short enough for a phone: the axis label says the rest."""
    return f"Labels against {SWEEPS[parameter].split(' ')[0]} (T = {steps})"


class CurvesSection(pn.viewable.Viewer):
    """The curve over T and the second plot of a plan."""

    plan = param.ClassSelector(class_=MeterPlan)

    def __init__(self, plan: MeterPlan, **params):
        super().__init__(plan=plan, **params)
        self.curve_plot: LabelsPlot | None = None
        self.curve_pane: pn.pane.Bokeh | None = None
        self.sweep_plot: LabelsPlot | None = None
        self.sweep_pane: pn.pane.Bokeh | None = None
        self._sweep_parameter = ""
        self._drawn: dict = {"curves": None, "sweep_curves": None}  # the plan's curves each plot shows
        self.holder = pn.Column(sizing_mode="stretch_width", css_classes=["planner-curve-holder"])

    def __panel__(self):
        return self.holder

    def build_curve(self, filled: bool) -> None:
        """The curve over T (the first view's plot): empty in a served page's first response, drawn on its first tick.

        Made with the page (a plot added to a shown page makes Bokeh walk the whole document again).
        """
        plot = self.curve_plot = LabelsPlot("T (development steps)",
                                            _CURVE_TITLE + ("" if filled else " · computing…"),
                                            marker=self.plan.steps, name="planner-curve", dark=pn.config.theme == "dark")
        pane = self.curve_pane = pn.pane.Bokeh(plot.figure, sizing_mode="stretch_width", css_classes=["planner-curve"])
        self.holder.objects = [pane]

    def draw_curve(self, result) -> None:
        """The first numbers on the curve (its title loses "computing…")."""
        assert self.curve_plot is not None, "the curve is built before it is drawn"
        if self.curve_plot.figure.title.text != _CURVE_TITLE:
            self.curve_plot.figure.title.text = _CURVE_TITLE
        self.on_curves()
        if result is not None:
            self.show_on_curve(result)

    def show_stale(self, stale: bool) -> None:
        if self.curve_pane is not None:
            styles = {"opacity": "0.45"} if stale else {}
            if self.curve_pane.styles != styles:
                self.curve_pane.styles = styles

    def show_on_curve(self, budget) -> None:
        """The plan's T and the budget's line (with the largest T it supports) on the curve over T."""
        p, plot = self.plan, self.curve_plot
        if plot is None:
            return
        plot.move_marker(p.result.steps)
        shown = budget.budget is not None and not budget.is_pending("budget", RECOMMENDED)
        plot.show_budget(budget.budget if shown else None,
                         budget.max_steps[RECOMMENDED] if shown else None,
                         x_end=float(p.curves["steps"][-1]) if p.curves else None)

    def on_curves(self) -> None:
        """The plan's curves over T, unless the plot shows them already (the model sets new curves anew)."""
        curves = self.plan.curves
        if curves and self.curve_plot is not None and self._drawn["curves"] is not curves:
            self._drawn["curves"] = curves
            self.curve_plot.update(curves, "steps")

    def on_sweep(self) -> None:
        """The plan's second curves, unless the plot shows them already; a new parameter makes a new plot."""
        s = self.plan.sweep_curves
        if not s or self.sweep_plot is None or self.sweep_pane is None or self._drawn["sweep_curves"] is s:
            return
        self._drawn["sweep_curves"] = s
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

    def build_sweep(self) -> pn.Column:
        """The second plot's section: which parameter, and the plot (the model computes its curves from now on)."""
        self.sweep = pn.widgets.RadioButtonGroup.from_param(self.plan.param.sweep_parameter, options=_SWEEP_BUTTONS,
                                                            color="light", css_classes=["sweep-select"])
        pane = self.ensure_sweep_plot()
        return pn.Column(pn.Row(HTML(TEXT["against"], margin=(12, 5)), self.sweep), pane,
                         sizing_mode="stretch_width", css_classes=["planner-sweep-section"])

    def ensure_sweep_plot(self) -> pn.pane.Bokeh:
        """The second plot's pane (made, and the model asked for its curves, the first time)."""
        if self.sweep_pane is not None:
            return self.sweep_pane
        self._sweep_parameter = self.plan.sweep_parameter
        self.sweep_plot = self._sweep_plot(self._sweep_parameter)
        pane = self.sweep_pane = pn.pane.Bokeh(self.sweep_plot.figure, sizing_mode="stretch_width")
        self.plan.with_sweep = True  # the model computes its curves from now on
        self.on_sweep()
        return pane

    def _sweep_plot(self, parameter: str) -> LabelsPlot:
        return LabelsPlot(SWEEPS[parameter], _sweep_title(parameter, self.plan.steps),
                          log_x=parameter in ("delta", "epsilon"), height=320, name="planner-sweep",
                          dark=pn.config.theme == "dark")
