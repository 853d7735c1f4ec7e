"""The five-colour meter of ease.ml/meter (Figures 1-2) as a Panel component.

One row of m coloured segments, one per signal, each covering its range of empirical
overfitting [r_(i-1), r_i); below it a *solid* bar up to the current step's empirical
overfitting, in its signal's colour, and a *grey* bar up to the distributional bound
eps_i the signal guarantees (Section 3.1: "the solid color bar" and "the gray color
bar" of Figure 2).  When the test set is too small, a hatched bar shows the eps its
labels do support.  Panel's LinearGauge cannot draw two bars, hence a Bokeh figure:
:class:`~meter_dashboard.core.gauge.GaugeFigure`, which the HTML report draws
too.  The axis is piecewise linear (every segment the same width, every boundary
labelled); the colours are the Okabe-Ito palette and every segment carries its number,
so colour is never the only cue.  Labels stay inside the figure at phone width.

The component computes nothing: it draws the numbers it is given.
"""
from __future__ import annotations

import panel as pn
import param

from ..core.colors import signal_colors
from ..core.gauge import GaugeFigure, display_position

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
        The eps_i guaranteed for the signal the meter reports (the grey bar).
    supported_epsilon : float or None
        The eps_i the test set's labels actually support, when larger (hatched bar).
    """

    ranges = param.List(default=[0.0, 0.005, 0.01, 0.02, 0.05, 1.0])
    epsilon = param.List(default=[0.01, 0.02, 0.03, 0.04, 0.05])
    empirical_overfitting = param.Number(default=None, allow_None=True)
    signal = param.Integer(default=None, allow_None=True)
    incremental_signal = param.Integer(default=None, allow_None=True)
    epsilon_shown = param.Number(default=None, allow_None=True)
    supported_epsilon = param.Number(default=None, allow_None=True)
    meter_name = param.String(default="incremental meter")

    def __init__(self, **params):
        super().__init__(**params)
        self._gauge = GaugeFigure(dark=pn.config.theme == "dark")
        self._segments, self._bounds, self._bars = self._gauge.segments, self._gauge.bounds, self._gauge.bars
        self._hatch, self._texts, self._marks = self._gauge.hatch, self._gauge.texts, self._gauge.marks
        self.figure = self._gauge.figure
        self.pane = pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", css_classes=["meter-gauge"])
        self._update()

    @param.depends("ranges", "epsilon", "empirical_overfitting", "signal", "incremental_signal", "epsilon_shown",
                   "supported_epsilon", "meter_name", watch=True)
    def _update(self):
        self._gauge.update(self.ranges, self.epsilon, self.empirical_overfitting, self.signal,
                           self.incremental_signal, self.epsilon_shown, self.supported_epsilon, self.meter_name)

    def __panel__(self):
        return self.pane
