"""The five-colour meter of ease.ml/meter for one step, as a plain Bokeh figure (no Panel).

Shared by the session page, the /testsets page (through
:class:`meter_dashboard.ui.meter_gauge.MeterGauge`) and the session's HTML report, so all three
draw the same meter.
"""
from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Range1d
from bokeh.plotting import figure

from . import formatting as fmt
from .colors import ink, signal_colors

__all__ = ["GaugeFigure", "display_position"]

_GREY = "#8c8c8c"
_ROW_METER, _ROW_GAP, _ROW_EPS = 2.0, 1.0, 0.0
_ROW_LABELS = {_ROW_METER: "signal", _ROW_GAP: "empirical\noverfitting", _ROW_EPS: "ε\nguaranteed"}


def display_position(values, ranges) -> np.ndarray:
    """Where ``values`` sit on the gauge's piecewise-linear axis (each of the m segments is 1/m wide)."""
    r = np.asarray(ranges, dtype=float)
    m = r.size - 1
    v = np.clip(np.asarray(values, dtype=float), r[0], r[-1])
    i = np.clip(np.searchsorted(r, v, side="right") - 1, 0, m - 1)
    frac = (v - r[i]) / (r[i + 1] - r[i])
    return (i + frac) / m


def _fmt(v: float) -> str:
    return fmt.number(v)


class GaugeFigure:
    """The meter of Figures 1-2 for one step, as a Bokeh figure.

    One row of m coloured segments, one per signal, each covering its range of empirical
    overfitting [r_(i-1), r_i); below it a *solid* bar up to the current step's empirical
    overfitting, in its signal's colour, and a *grey* bar up to the bound eps_i the signal
    guarantees (Section 3.1: "the solid color bar" and "the gray color bar" of Figure 2).
    When the test set is too small, a hatched bar shows the eps its labels do support.
    The axis is piecewise linear: every segment gets the same width, every boundary is
    labelled.  Labels longer than the room on their right are placed to the left of
    their bar's end, so nothing is cut at phone width.
    """

    def __init__(self, height: int = 220, dark: bool = False):
        self.dark = dark
        self.ink, self.muted = ink(dark)
        self.segments = ColumnDataSource(dict(left=[], right=[], color=[], alpha=[], line_width=[], line_color=[],
                                              mid=[], number=[], number_color=[], range_text=[], eps_text=[]))
        self.bounds = ColumnDataSource(dict(x=[], text=[], align=[]))
        self.bars = ColumnDataSource(dict(left=[], right=[], y=[], color=[], height=[]))
        self.hatch = ColumnDataSource(dict(left=[], right=[], y=[], top=[]))
        self.texts = ColumnDataSource(dict(x=[], y=[], text=[], align=[], weight=[], baseline=[]))
        self.marks = ColumnDataSource(dict(x=[], y=[], text=[]))
        self.figure = self._build(height)

    def _build(self, height: int):
        fig = figure(height=height, sizing_mode="stretch_width", x_range=Range1d(-0.01, 1.01),
                     y_range=Range1d(-1.05, 2.95), tools="", toolbar_location=None, min_border_left=4,
                     min_border_right=4)
        fig.outline_line_color = None
        fig.grid.visible = False
        fig.xaxis.visible = False
        fig.yaxis.ticker = FixedTicker(ticks=list(_ROW_LABELS))
        fig.yaxis.major_label_overrides = dict(_ROW_LABELS)
        fig.yaxis.major_label_text_font_size = "11px"
        fig.yaxis.major_label_text_color = self.muted
        fig.yaxis.axis_line_color = None
        fig.yaxis.major_tick_line_color = None
        fig.yaxis.minor_tick_line_color = None
        seg = fig.quad(left="left", right="right", bottom=_ROW_METER - 0.38, top=_ROW_METER + 0.38,
                       fill_color="color", fill_alpha="alpha", line_color="line_color", line_width="line_width",
                       source=self.segments)
        fig.text(x="mid", y=_ROW_METER, text="number", text_align="center", text_baseline="middle",
                 text_font_size="15px", text_font_style="bold", text_color="number_color", source=self.segments)
        fig.text(x="x", y=_ROW_METER - 0.45, text="text", text_align="align", text_baseline="top",
                 text_font_size="10px", text_color=self.muted, source=self.bounds)
        fig.quad(left="left", right="right", bottom="y", top="height", fill_color="color", line_color=None,
                 source=self.bars)
        fig.quad(left="left", right="right", bottom="y", top="top", fill_color=None, line_color="#8a1c00",
                 line_dash="dashed", hatch_pattern="/", hatch_color="#c0583a", hatch_alpha=0.55, source=self.hatch)
        fig.text(x="x", y="y", text="text", text_align="align", text_baseline="baseline", text_font_size="12px",
                 text_font_style="weight", text_color=self.ink, source=self.texts)
        fig.text(x="x", y="y", text="text", text_align="center", text_baseline="bottom", text_font_size="11px",
                 text_color=self.ink, source=self.marks)
        fig.add_tools(HoverTool(renderers=[seg], tooltips=[("signal", "@number"), ("empirical overfitting", "@range_text"),
                                                           ("guarantees", "@eps_text")]))
        return fig

    def update(self, ranges, epsilon, empirical_overfitting=None, signal=None, incremental_signal=None,
               epsilon_shown=None, supported_epsilon=None, meter_name: str = "incremental meter") -> None:
        """Draw one step (all values as the model gives them; None leaves a bar out)."""
        r = [float(v) for v in ranges]
        eps = [float(v) for v in epsilon]
        m = len(r) - 1
        if m < 1 or len(eps) != m:
            return
        colors = signal_colors(m)
        sig, inc = signal, incremental_signal
        left = [i / m for i in range(m)]
        right = [(i + 1) / m for i in range(m)]
        alpha = [1.0 if sig == i + 1 else (0.55 if inc == i + 1 else 0.28) for i in range(m)]
        self.segments.data = dict(
            left=left, right=right, color=colors, alpha=alpha,
            number_color=["#111111" if a == 1.0 or not self.dark else self.ink for a in alpha],
            line_width=[3.0 if sig == i + 1 else (2.5 if inc == i + 1 else 0.5) for i in range(m)],
            line_color=["#111111" if i + 1 in (sig, inc) else "white" for i in range(m)],
            mid=[(a + b) / 2 for a, b in zip(left, right)], number=[str(i + 1) for i in range(m)],
            range_text=[f"[{_fmt(r[i])}, {_fmt(r[i + 1])}{']' if i == m - 1 else ')'}" for i in range(m)],
            eps_text=[f"ε{i + 1} = {_fmt(e)}" for i, e in enumerate(eps)])
        step = max(1, -(-m // 8))  # at most about 9 boundary labels: they must fit a phone's width
        shown = [i for i in range(m + 1) if i % step == 0 or i == m]
        self.bounds.data = dict(x=[i / m for i in shown], text=[_fmt(r[i]) for i in shown],
                                align=["left" if i == 0 else ("right" if i == m else "center") for i in shown])
        bars, texts, hatch = self._bars(r, colors, empirical_overfitting, sig, epsilon_shown, supported_epsilon,
                                        meter_name)
        marks = dict(x=[], y=[], text=[])
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
        self.bars.data, self.texts.data, self.marks.data, self.hatch.data = bars, texts, marks, hatch

    @staticmethod
    def _bars(r, colors, x, sig, shown, sup, meter_name) -> tuple:
        bars = dict(left=[], right=[], y=[], color=[], height=[])
        texts = dict(x=[], y=[], text=[], align=[], weight=[], baseline=[])
        hatch = dict(left=[], right=[], y=[], top=[])

        def label(end, y, text, weight):
            # right of the bar's end while there is room, else under the bar, ending where the bar ends
            right_side = end < 0.55
            texts["x"].append(end + 0.01 if right_side else end)
            texts["y"].append(y if right_side else y - 0.33)
            texts["text"].append(text)
            texts["align"].append("left" if right_side else "right")
            texts["baseline"].append("middle" if right_side else "top")
            texts["weight"].append(weight)

        if x is not None and sig is not None:
            pos = max(float(display_position([x], r)[0]), 0.004)
            bars["left"].append(0.0), bars["right"].append(pos), bars["y"].append(_ROW_GAP - 0.3)
            bars["height"].append(_ROW_GAP + 0.3), bars["color"].append(colors[sig - 1])
            label(pos, _ROW_GAP, f"{_fmt(x)} → signal {sig}", "bold")
        if shown is not None:
            pos = float(display_position([shown], r)[0])
            bars["left"].append(0.0), bars["right"].append(pos), bars["y"].append(_ROW_EPS - 0.3)
            bars["height"].append(_ROW_EPS + 0.3), bars["color"].append(_GREY)
            text, end = f"ε = {_fmt(shown)} ({meter_name})", pos
            if sup is not None and sup > shown:
                sup_pos = float(display_position([min(sup, 1.0)], r)[0])
                hatch["left"].append(pos), hatch["right"].append(sup_pos), hatch["y"].append(_ROW_EPS - 0.3)
                hatch["top"].append(_ROW_EPS + 0.3)
                text += f"\nthe test set's labels support only {_fmt(sup)}"
                end = sup_pos
            label(end, _ROW_EPS, text, "normal")
        return bars, texts, hatch
