"""The five-colour meter of ease.ml/meter for one step: its layout (no Panel), drawn as HTML or a Bokeh figure.

:func:`gauge_layout` computes what the meter shows — the m segments, the boundary labels, the
solid bar of the empirical overfitting, the grey bar of the ε guaranteed, the hatched part
when the test set's labels support less, and every caption — as plain values on a 0-1 axis
(:func:`display_position`).  Two drawings share it: the pages' HTML meter
(:mod:`meter_dashboard.ui.meter_gauge`, template ``ui/templates/meter_gauge.html``: no Bokeh
model at all) and :class:`GaugeFigure`, the Bokeh figure of the session's HTML report.
"""
from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Range1d
from bokeh.plotting import figure

from . import formatting as fmt
from .colors import ink, signal_colors

__all__ = ["GaugeFigure", "display_position", "gauge_layout"]

_GREY = "#8c8c8c"
_ROW_METER, _ROW_GAP, _ROW_EPS = 2.0, 1.0, 0.0
_ROW_LABELS = {_ROW_METER: "signal", _ROW_GAP: "empirical\noverfitting", _ROW_EPS: "ε\nguaranteed"}
#: A caption whose bar ends right of this (on the 0-1 axis) is placed under the bar, ending where it ends.
_RIGHT_SIDE = 0.55


def display_position(values, ranges) -> np.ndarray:
    """Where ``values`` sit on the gauge's piecewise-linear axis (each of the m segments is 1/m wide)."""
    r = np.asarray(ranges, dtype=float)
    m = r.size - 1
    v = np.clip(np.asarray(values, dtype=float), r[0], r[-1])
    i = np.clip(np.searchsorted(r, v, side="right") - 1, 0, m - 1)
    frac = (v - r[i]) / (r[i + 1] - r[i])
    return (i + frac) / m


def _segments(r: list, eps: list, sig, inc, colors: list) -> list:
    m = len(r) - 1
    out = []
    for i in range(m):
        k = i + 1
        out.append(dict(number=str(k), left=i / m, right=k / m, color=colors[i], current=sig == k,
                        worst=inc == k and sig != k,
                        range_text=f"[{fmt.number(r[i])}, {fmt.number(r[k])}{']' if k == m else ')'}",
                        eps_text=f"ε{k} = {fmt.number(eps[i])}"))
    return out


def _marks(m: int, sig, inc) -> list:
    marks = []
    if sig is not None:
        marks.append(dict(x=(sig - 0.5) / m, text="now" if inc in (None, sig) else "this step"))
    if inc is not None and inc != sig:
        marks.append(dict(x=(inc - 0.5) / m, text="worst so far"))
    elif inc is not None and sig is not None:
        marks[-1]["text"] = "this step · worst so far"
    return marks


def gauge_layout(ranges, epsilon, empirical_overfitting=None, signal=None, incremental_signal=None,
                 epsilon_shown=None, supported_epsilon=None, meter_name: str = "incremental meter",
                 epsilon_note: str | None = None) -> dict | None:
    """What the meter shows for one step, on a 0-1 axis (None when ranges and ε do not fit together).

    ``epsilon_shown`` is the plan's ε_i for the signal reported (the grey bar);
    ``supported_epsilon`` the ε its labels do support when larger (hatched, from the grey bar's
    end); ``epsilon_note`` replaces the caption under the ε row (e.g. when no bound holds).
    Returns ``{"segments", "bounds", "marks", "gap", "eps", "hatch"}``: ``gap`` and ``eps`` are
    ``{"end", "color", "text", "label_end", "right_side"}`` or None, ``hatch`` ``{"start", "end"}`` or None.
    """
    r = [float(v) for v in ranges]
    eps = [float(v) for v in epsilon]
    m = len(r) - 1
    if m < 1 or len(eps) != m:
        return None
    colors = signal_colors(m)
    sig, inc = signal, incremental_signal
    step = max(1, -(-m // 8))  # at most about 9 boundary labels: they must fit a phone's width
    bounds = [dict(x=i / m, text=fmt.number(r[i]), align="left" if i == 0 else ("right" if i == m else "center"))
              for i in range(m + 1) if i % step == 0 or i == m]
    gap = eps_bar = hatch = None
    if empirical_overfitting is not None and sig is not None:
        end = max(float(display_position([empirical_overfitting], r)[0]), 0.004)
        gap = dict(end=end, color=colors[sig - 1], text=f"{fmt.number(empirical_overfitting)} → signal {sig}",
                   label_end=end, right_side=end < _RIGHT_SIDE)
    if epsilon_shown is not None:
        end = float(display_position([epsilon_shown], r)[0])
        text, label_end = f"ε = {fmt.number(epsilon_shown)} ({meter_name})", end
        if supported_epsilon is not None and supported_epsilon > epsilon_shown:
            label_end = float(display_position([min(supported_epsilon, 1.0)], r)[0])
            hatch = dict(start=end, end=label_end)
            text += f"\nthe test set's labels support only {fmt.number(supported_epsilon)}"
        if epsilon_note:
            text = f"ε = {fmt.number(epsilon_shown)} planned ({meter_name})\n{epsilon_note}"
        eps_bar = dict(end=end, color=_GREY, text=text, label_end=label_end, right_side=label_end < _RIGHT_SIDE)
    return dict(segments=_segments(r, eps, sig, inc, colors), bounds=bounds, marks=_marks(m, sig, inc), gap=gap,
                eps=eps_bar, hatch=hatch)


class GaugeFigure:
    """The meter of Figures 1-2 for one step, as a Bokeh figure (the session's HTML report).

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
               epsilon_shown=None, supported_epsilon=None, meter_name: str = "incremental meter",
               epsilon_note: str | None = None) -> None:
        """Draw one step (all values as the model gives them; None leaves a bar out)."""
        layout = gauge_layout(ranges, epsilon, empirical_overfitting, signal, incremental_signal, epsilon_shown,
                              supported_epsilon, meter_name, epsilon_note)
        if layout is None:
            return
        segs = layout["segments"]
        alpha = [1.0 if s["current"] else (0.55 if s["worst"] else 0.28) for s in segs]
        self.segments.data = dict(
            left=[s["left"] for s in segs], right=[s["right"] for s in segs], color=[s["color"] for s in segs],
            alpha=alpha, number_color=["#111111" if a == 1.0 or not self.dark else self.ink for a in alpha],
            line_width=[3.0 if s["current"] else (2.5 if s["worst"] else 0.5) for s in segs],
            line_color=["#111111" if s["current"] or s["worst"] else "white" for s in segs],
            mid=[(s["left"] + s["right"]) / 2 for s in segs], number=[s["number"] for s in segs],
            range_text=[s["range_text"] for s in segs], eps_text=[s["eps_text"] for s in segs])
        self.bounds.data = {k: [b[k] for b in layout["bounds"]] for k in ("x", "text", "align")}
        self.bars.data, self.texts.data, self.hatch.data = self._bars(layout)
        marks = layout["marks"]
        self.marks.data = dict(x=[k["x"] for k in marks], y=[_ROW_METER + 0.42] * len(marks),
                               text=[k["text"] for k in marks])

    @staticmethod
    def _bars(layout: dict) -> tuple:
        bars: dict[str, list] = dict(left=[], right=[], y=[], color=[], height=[])
        texts: dict[str, list] = dict(x=[], y=[], text=[], align=[], weight=[], baseline=[])
        hatch: dict[str, list] = dict(left=[], right=[], y=[], top=[])
        for row, key, weight in ((_ROW_GAP, "gap", "bold"), (_ROW_EPS, "eps", "normal")):
            bar = layout[key]
            if bar is None:
                continue
            for column, item in (("left", 0.0), ("right", bar["end"]), ("y", row - 0.3), ("height", row + 0.3),
                                 ("color", bar["color"])):
                bars[column].append(item)
            end = bar["label_end"]
            # right of the bar's end while there is room, else under the bar, ending where the bar ends
            texts["x"].append(end + 0.01 if bar["right_side"] else end)
            texts["y"].append(row if bar["right_side"] else row - 0.33)
            texts["text"].append(bar["text"])
            texts["align"].append("left" if bar["right_side"] else "right")
            texts["baseline"].append("middle" if bar["right_side"] else "top")
            texts["weight"].append(weight)
        if layout["hatch"] is not None:
            h = layout["hatch"]
            hatch = dict(left=[h["start"]], right=[h["end"]], y=[_ROW_EPS - 0.3], top=[_ROW_EPS + 0.3])
        return bars, texts, hatch
