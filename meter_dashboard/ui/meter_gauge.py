"""The five-colour meter of ease.ml/meter (Figures 1-2) as a Panel component, drawn in HTML.

One row of m coloured segments, one per signal, each covering its range of empirical
overfitting [r_(i-1), r_i); below it a *solid* bar up to the current step's empirical
overfitting, in its signal's colour, and a *grey* bar up to the distributional bound
eps_i the signal guarantees (Section 3.1: "the solid color bar" and "the gray color
bar" of Figure 2).  When the test set is too small, a hatched bar shows the eps its
labels do support.  The layout is :func:`meter_dashboard.core.gauge.gauge_layout` (the same
as the HTML report's Bokeh figure); here it is one HTML pane from the template
``ui/templates/meter_gauge.html`` — no Bokeh model, no canvas: a page opens faster and a
step changes one string.  The axis is piecewise linear (every segment the same width, every
boundary labelled); the colours are the Okabe-Ito palette and every segment carries its
number, so colour is never the only cue.  Everything stays inside the pane at phone width.

The component computes nothing: it draws the numbers it is given.
"""
from __future__ import annotations

import panel as pn
import param

from ..core import formatting as fmt
from ..core.colors import signal_colors
from ..core.gauge import display_position, gauge_layout
from ..core.html import render
from .style import HTML

__all__ = ["MeterGauge", "signal_colors", "display_position"]


class MeterGauge(pn.viewable.Viewer):
    """The meter of Figures 1-2 for one step.

    Parameters
    ----------
    ranges : list of float
        m + 1 boundaries 0 = r_0 < ... < r_m = 1.
    epsilon : list of float
        eps_1 <= ... <= eps_m.
    empirical_overfitting : float or None
        The current step's |val - test| (the solid bar).
    signal, incremental_signal : int or None
        1-based: the regular signal (highlighted segment) and the worst so far (outlined).
    epsilon_shown : float or None
        The eps_i the plan promises for the signal the meter reports (the grey bar).
    supported_epsilon : float or None
        The eps_i the test set's labels actually support, when larger (hatched bar).
    epsilon_note : str
        A caption replacing the ε row's (e.g. "none guaranteed: beyond the budget").
    """

    ranges = param.List(default=[0.0, 0.005, 0.01, 0.02, 0.05, 1.0])
    epsilon = param.List(default=[0.01, 0.02, 0.03, 0.04, 0.05])
    empirical_overfitting = param.Number(default=None, allow_None=True)
    signal = param.Integer(default=None, allow_None=True)
    incremental_signal = param.Integer(default=None, allow_None=True)
    epsilon_shown = param.Number(default=None, allow_None=True)
    supported_epsilon = param.Number(default=None, allow_None=True)
    meter_name = param.String(default="incremental meter")
    epsilon_note = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        self.layout = None
        self.pane = HTML("", sizing_mode="stretch_width", css_classes=["meter-gauge"], margin=(4, 5))
        self._update()

    @param.depends("ranges", "epsilon", "empirical_overfitting", "signal", "incremental_signal", "epsilon_shown",
                   "supported_epsilon", "meter_name", "epsilon_note", watch=True)
    def _update(self):
        self.layout = gauge_layout(self.ranges, self.epsilon, self.empirical_overfitting, self.signal,
                                   self.incremental_signal, self.epsilon_shown, self.supported_epsilon,
                                   self.meter_name, self.epsilon_note or None)
        html = "" if self.layout is None else render("ui/templates/meter_gauge.html", g=self.layout,
                                                     aria=self._description())
        if self.pane.object != html:  # a step that changes nothing here sends nothing
            self.pane.object = html

    def _description(self) -> str:
        """The meter in words (for screen readers)."""
        words = [f"meter of {len(self.epsilon)} signals"]
        if self.signal is not None:
            words.append(f"signal {self.signal}")
        if self.incremental_signal is not None:
            words.append(f"worst so far {self.incremental_signal}")
        if self.empirical_overfitting is not None:
            words.append(f"empirical overfitting {fmt.number(self.empirical_overfitting)}")
        if self.epsilon_shown is not None:
            words.append(f"ε {fmt.number(self.epsilon_shown)}")
        return ", ".join(words)

    def __panel__(self):
        return self.pane
