"""The five-colour meter of ease.ml/meter (Figures 1-2), drawn with Bokeh.

One row of m coloured segments, one per signal, each covering its range of empirical
overfitting [r_(i-1), r_i); below it a *solid* bar up to the current step's empirical
overfitting, in its signal's colour, and a *grey* bar up to the distributional bound
eps_i the signal guarantees (Section 3.1: "the solid color bar" and "the gray color
bar" of Figure 2).  When the test set is too small, a hatched bar shows the eps its
labels do support.  Panel's LinearGauge cannot draw two bars, hence a Bokeh figure.

Ranges are usually very uneven (0, 0.005, 0.01, 0.02, 0.05, 1), so the axis is
piecewise linear: every segment gets the same width, values are placed linearly
inside their segment, and every boundary is labelled with its value.  The colours are
the Okabe-Ito palette (distinguishable for colour-blind readers), and every segment
also carries its number, so colour is never the only cue.

The component computes nothing: it draws the numbers it is given.
"""
from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Range1d
from bokeh.plotting import figure

from .style import signal_colors

__all__ = ["MeterGauge", "signal_colors", "display_position"]

_GREY = "#8c8c8c"
_ROW_METER, _ROW_GAP, _ROW_EPS = 2.0, 1.0, 0.0
_ROW_LABELS = {_ROW_METER: "signal", _ROW_GAP: "empirical overfitting", _ROW_EPS: "ε guaranteed"}




def display_position(values, ranges) -> np.ndarray:
    """Where ``values`` sit on the gauge's piecewise-linear axis (each of the m segments is 1/m wide)."""
    r = np.asarray(ranges, dtype=float)
    m = r.size - 1
    v = np.clip(np.asarray(values, dtype=float), r[0], r[-1])
    i = np.clip(np.searchsorted(r, v, side="right") - 1, 0, m - 1)
    frac = (v - r[i]) / (r[i + 1] - r[i])
    return (i + frac) / m


def _fmt(v: float) -> str:
    return f"{v:.4g}"


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
        self._segments = ColumnDataSource(dict(left=[], right=[], color=[], alpha=[], line_width=[], line_color=[],
                                               mid=[], number=[], range_text=[], eps_text=[]))
        self._bounds = ColumnDataSource(dict(x=[], text=[], align=[]))
        self._bars = ColumnDataSource(dict(left=[], right=[], y=[], color=[], height=[]))
        self._hatch = ColumnDataSource(dict(left=[], right=[], y=[], top=[]))
        self._texts = ColumnDataSource(dict(x=[], y=[], text=[], align=[], weight=[]))
        self._marks = ColumnDataSource(dict(x=[], y=[], text=[]))
        self.figure = self._build_figure()
        self.pane = pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", css_classes=["meter-gauge"])
        self._update()

    def _build_figure(self):
        fig = figure(height=230, sizing_mode="stretch_width", x_range=Range1d(-0.005, 1.13),
                     y_range=Range1d(-0.6, 3.05), tools="", toolbar_location=None, min_border_left=10)
        fig.outline_line_color = None
        fig.grid.visible = False
        fig.xaxis.visible = False
        fig.yaxis.ticker = FixedTicker(ticks=list(_ROW_LABELS))
        fig.yaxis.major_label_overrides = {k: v for k, v in _ROW_LABELS.items()}
        fig.yaxis.major_label_text_font_size = "12px"
        fig.yaxis.major_label_text_color = "#4a5a6a"
        fig.yaxis.axis_line_color = None
        fig.yaxis.major_tick_line_color = None
        fig.yaxis.minor_tick_line_color = None
        seg = fig.quad(left="left", right="right", bottom=_ROW_METER - 0.38, top=_ROW_METER + 0.38,
                       fill_color="color", fill_alpha="alpha", line_color="line_color", line_width="line_width",
                       source=self._segments)
        fig.text(x="mid", y=_ROW_METER, text="number", text_align="center", text_baseline="middle",
                 text_font_size="15px", text_font_style="bold", text_color="#111111", source=self._segments)
        fig.text(x="x", y=_ROW_METER - 0.47, text="text", text_align="align", text_baseline="top",
                 text_font_size="11px", text_color="#4a5a6a", source=self._bounds)
        fig.quad(left="left", right="right", bottom="y", top="height", fill_color="color", line_color=None,
                 source=self._bars)
        fig.quad(left="left", right="right", bottom="y", top="top", fill_color=None, line_color="#8a1c00",
                 line_dash="dashed", hatch_pattern="/", hatch_color="#c0583a", hatch_alpha=0.55, source=self._hatch)
        fig.text(x="x", y="y", text="text", text_align="align", text_baseline="middle", text_font_size="13px",
                 text_font_style="weight", text_color="#0b2a45", source=self._texts)
        fig.text(x="x", y="y", text="text", text_align="center", text_baseline="bottom", text_font_size="11px",
                 text_color="#0b2a45", source=self._marks)
        fig.add_tools(HoverTool(renderers=[seg], tooltips=[("signal", "@number"), ("empirical overfitting", "@range_text"),
                                                           ("guarantees", "@eps_text")]))
        return fig

    @param.depends("ranges", "epsilon", "empirical_overfitting", "signal", "incremental_signal", "epsilon_shown",
                   "supported_epsilon", "meter_name", watch=True)
    def _update(self):
        r = [float(v) for v in self.ranges]
        eps = [float(v) for v in self.epsilon]
        m = len(r) - 1
        if m < 1 or len(eps) != m:
            return
        colors = signal_colors(m)
        sig, inc = self.signal, self.incremental_signal
        left = [i / m for i in range(m)]
        right = [(i + 1) / m for i in range(m)]
        alpha = [1.0 if sig == i + 1 else (0.55 if inc == i + 1 else 0.28) for i in range(m)]
        lw = [3.0 if sig == i + 1 else (2.5 if inc == i + 1 else 0.5) for i in range(m)]
        lc = ["#111111" if sig == i + 1 else ("#111111" if inc == i + 1 else "white") for i in range(m)]
        range_text = [f"[{_fmt(r[i])}, {_fmt(r[i + 1])}{']' if i == m - 1 else ')'}" for i in range(m)]
        self._segments.data = dict(left=left, right=right, color=colors, alpha=alpha, line_width=lw, line_color=lc,
                                   mid=[(a + b) / 2 for a, b in zip(left, right)], number=[str(i + 1) for i in range(m)],
                                   range_text=range_text, eps_text=[f"ε{i + 1} = {_fmt(e)}" for i, e in enumerate(eps)])
        self._bounds.data = dict(x=[i / m for i in range(m + 1)], text=[_fmt(v) for v in r],
                                 align=["left"] + ["center"] * (m - 1) + ["right"])

        bars = dict(left=[], right=[], y=[], color=[], height=[])
        texts = dict(x=[], y=[], text=[], align=[], weight=[])
        marks = dict(x=[], y=[], text=[])
        hatch = dict(left=[], right=[], y=[], top=[])
        x = self.empirical_overfitting
        if x is not None and sig is not None:
            pos = float(display_position([x], r)[0])
            bars["left"].append(0.0)
            bars["right"].append(max(pos, 0.004))
            bars["y"].append(_ROW_GAP - 0.3)
            bars["height"].append(_ROW_GAP + 0.3)
            bars["color"].append(colors[sig - 1])
            texts["x"].append(max(pos, 0.004) + 0.01)
            texts["y"].append(_ROW_GAP)
            texts["text"].append(f"{_fmt(x)}  → signal {sig}")
            texts["align"].append("left")
            texts["weight"].append("bold")
        shown = self.epsilon_shown
        if shown is not None:
            pos = float(display_position([shown], r)[0])
            bars["left"].append(0.0)
            bars["right"].append(pos)
            bars["y"].append(_ROW_EPS - 0.3)
            bars["height"].append(_ROW_EPS + 0.3)
            bars["color"].append(_GREY)
            label = f"ε = {_fmt(shown)} ({self.meter_name})"
            end = pos
            sup = self.supported_epsilon
            if sup is not None and sup > shown:
                sup_pos = float(display_position([min(sup, 1.0)], r)[0])
                hatch["left"].append(pos)
                hatch["right"].append(sup_pos)
                hatch["y"].append(_ROW_EPS - 0.3)
                hatch["top"].append(_ROW_EPS + 0.3)
                label += f"; the test set's labels support only {_fmt(sup)}"
                end = sup_pos
            texts["x"].append(min(end + 0.01, 0.98))
            texts["y"].append(_ROW_EPS)
            texts["text"].append(label)
            texts["align"].append("left" if end < 0.6 else "right")
            texts["weight"].append("normal")
            if end >= 0.6:  # keep the label on screen: put it left of the bar's end, above
                texts["x"][-1] = end - 0.01
                texts["y"][-1] = _ROW_EPS + 0.45
        if sig is not None:
            marks["x"].append((sig - 0.5) / m)
            marks["y"].append(_ROW_METER + 0.42)
            marks["text"].append("now" if inc in (None, sig) else "this step")
        if inc is not None and inc != sig:
            marks["x"].append((inc - 0.5) / m)
            marks["y"].append(_ROW_METER + 0.42)
            marks["text"].append("worst so far")
        elif inc is not None and sig is not None:
            marks["text"][-1] = "this step · worst so far"
        self._bars.data = bars
        self._texts.data = texts
        self._marks.data = marks
        self._hatch.data = hatch

    def __panel__(self):
        return self.pane
