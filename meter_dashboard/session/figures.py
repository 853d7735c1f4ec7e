"""The session's figures in plain Bokeh (no Panel): the page and the HTML report draw the same plots.

- :class:`ScorePlot` - validation and test score per step (ease.ml/meter Figure 3a);
- :class:`SignalPlot` - the regular and the incremental signal per step (Figure 3c);
and the meter for one step is :class:`meter_dashboard.core.gauge.GaugeFigure` (Figures 1-2).

Plot data go to the browser as binary numpy arrays.  Long traces are decimated for
display: the steps are cut into buckets (about two per pixel of a wide screen) and each
bucket keeps the steps holding its minimum and maximum of every plotted series, so spikes
stay visible and a million steps become a few thousand points (:func:`decimate`).  Zooming
in re-decimates the visible window (:meth:`ScorePlot.show_window`).

The figures compute nothing about the meter: they draw a :class:`ReplayResult`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from bokeh.models import BoxAnnotation, ColumnDataSource, FixedTicker, HoverTool, Legend, Range1d, Span
from bokeh.plotting import figure

from ..core.colors import PALETTE, ink, signal_colors

if TYPE_CHECKING:
    from .replay import ReplayResult

__all__ = ["ScorePlot", "SignalPlot", "decimate", "LOD_POINTS", "LOD_BUCKETS"]

#: Traces up to this many steps are drawn point by point (with hover details per step).
LOD_POINTS = 4000
#: Buckets of a decimated plot (each keeps its extreme steps).
LOD_BUCKETS = 1500
#: Tenant hand-overs drawn as dotted lines (more would hide the data).
_MAX_HANDOVERS = 60


def decimate(series, start: int = 0, stop: int | None = None, buckets: int = LOD_BUCKETS) -> np.ndarray:
    """Positions to draw in ``[start, stop)``: all of them, or each bucket's extreme steps.

    Every bucket of consecutive steps keeps the first step, and the steps of the minimum
    and the maximum of each array in ``series``: at most ``1 + 2 * len(series)`` per bucket,
    in order.  Vectorized (one reshape), so a million steps take milliseconds.
    """
    n = len(series[0])
    stop = n if stop is None else min(stop, n)
    start = max(0, min(start, stop))
    count = stop - start
    if count <= 2 * buckets:
        return np.arange(start, stop)
    size = -(-count // buckets)
    full = count // size  # whole buckets; the rest (fewer than ``size`` steps) is one more bucket
    base = start + np.arange(full) * size
    keep = [start + np.arange(0, count, size), np.array([stop - 1])]
    for values in series:
        values = np.asarray(values[start:stop])
        block = values[: full * size].reshape(full, size)
        keep += [base + np.argmin(block, axis=1), base + np.argmax(block, axis=1)]
        if full * size < count:
            tail = values[full * size:]
            keep += [np.array([start + full * size + np.argmin(tail), start + full * size + np.argmax(tail)])]
    return np.unique(np.concatenate(keep))


def _window(steps: np.ndarray, x0, x1) -> tuple:
    """Positions [start, stop) of the steps between x0 and x1 (the visible window)."""
    if x0 is None or x1 is None:
        return 0, steps.size
    return int(np.searchsorted(steps, x0, side="left")), int(np.searchsorted(steps, x1, side="right"))


def _new_figure(title: str, y_label: str, height: int, **kw):  # colours: the document's theme
    fig = figure(height=height, sizing_mode="stretch_width", title=title, x_axis_label="development step",
                 y_axis_label=y_label, tools="pan,xwheel_zoom,box_zoom,reset,save", toolbar_location="right",
                 min_border_left=40, **kw)
    fig.toolbar.logo = None
    fig.title.text_font_size = "13px"
    return fig


class _StepPlot:
    """What the two history plots share: a cursor, the budget, tenant hand-overs, decimation."""

    def __init__(self, fig, dark: bool = False):
        self.figure = fig
        self.ink, self.muted = ink(dark)
        self.cursor = Span(location=0, dimension="height", line_color=self.ink, line_width=2, line_alpha=0.5)
        self.beyond = BoxAnnotation(left=None, fill_color="#d55e00", fill_alpha=0.08, visible=False)
        fig.add_layout(self.cursor)
        fig.add_layout(self.beyond)
        self.handovers = ColumnDataSource(dict(x=np.zeros(0), name=[], y=np.zeros(0)))
        fig.vspan(x="x", source=self.handovers, line_color=self.muted, line_dash="dotted", line_width=1.5)
        self.result: ReplayResult | None = None
        self.decimated = False

    def _budget(self, result):
        steps, T = result.trace.steps, result.budget
        beyond = len(steps) > T
        edge = (float(steps[T - 1]) + float(steps[T])) / 2 if beyond else None
        self.beyond.visible = beyond
        if beyond:
            self.beyond.left = edge
        return edge

    def _handovers(self, result, y: float) -> None:
        t = result.trace
        if not t.has_tenants:
            self.handovers.data = dict(x=np.zeros(0), name=[], y=np.zeros(0))
            return
        codes = t.tenant_codes
        starts = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]]))
        if starts.size > _MAX_HANDOVERS:
            starts = starts[:0]
        self.handovers.data = dict(x=t.steps[starts].astype(float) - 0.5, name=[t.tenants[i] for i in starts],
                                   y=np.full(starts.size, y))

    def move_cursor(self, step) -> None:
        self.cursor.location = float(step)

    def show_window(self, x0=None, x1=None) -> None:
        """Redraw the visible window ``[x0, x1]`` (None: everything) at full detail or decimated."""
        if self.result is not None:
            self._draw(*_window(self.result.trace.steps, x0, x1))

    def _draw(self, start: int, stop: int) -> None:
        """Draw steps ``start`` to ``stop`` (each plot draws its own columns)."""
        raise NotImplementedError


class ScorePlot(_StepPlot):
    """Validation and test score per step, reverted steps crossed (Figure 3a)."""

    def __init__(self, height: int = 280, dark: bool = False):
        fig = _new_figure("Validation and test score (Fig. 3a)", "accuracy", height)
        super().__init__(fig, dark)
        self.source = ColumnDataSource(dict(step=np.zeros(0), val=np.zeros(0), test=np.zeros(0), gap=np.zeros(0)))
        self.detail = ColumnDataSource(dict(step=np.zeros(0), tenant=[], reverted=[]))
        self.reverts = ColumnDataSource(dict(step=np.zeros(0), val=np.zeros(0), test=np.zeros(0)))
        val = fig.line("step", "val", source=self.source, color=PALETTE[0], line_width=2.2)
        self.val_dots = fig.scatter("step", "val", source=self.source, color=PALETTE[0], size=6)
        test = fig.line("step", "test", source=self.source, color=PALETTE[1], line_width=2.2, line_dash="dashed")
        self.test_dots = fig.scatter("step", "test", source=self.source, color=PALETTE[1], size=6, marker="square")
        rev = fig.scatter("step", "val", source=self.reverts, size=13, marker="x", color="#8a1c00", line_width=2.5)
        fig.scatter("step", "test", source=self.reverts, size=13, marker="x", color="#8a1c00", line_width=2.5)
        self.legend = Legend(items=[("validation", [val, self.val_dots]), ("test", [test, self.test_dots]),
                                    ("reverted", [rev])],
                             location="top_left", orientation="horizontal", border_line_color=None)
        fig.add_layout(self.legend, "above")
        fig.add_tools(HoverTool(renderers=[self.val_dots, self.test_dots], tooltips=[
            ("step", "@step{0,0}"), ("validation", "@val{0.0000}"), ("test", "@test{0.0000}"),
            ("|val − test|", "@gap{0.0000}")]))

    def update(self, result) -> None:
        """Draw ``result`` (a ReplayResult): every step, or decimated for long traces."""
        same = self.result is not None and self.result.trace is result.trace
        self.result = result
        self._budget(result)
        if same:
            return  # scores depend on the trace only: a new plan moves nothing here
        t = result.trace
        self.figure.yaxis.axis_label = t.metric
        self._handovers(result, 1.0)
        rv = np.flatnonzero(t.reverted)
        if rv.size > LOD_POINTS:
            rv = rv[np.linspace(0, rv.size - 1, LOD_POINTS).astype(int)]
        self.reverts.data = dict(step=t.steps[rv].astype(float), val=t.val[rv], test=t.test[rv])
        self.legend.items[2].visible = bool(rv.size)
        self._draw(0, len(t))

    def _draw(self, start: int, stop: int) -> None:
        r = self.result
        if r is None:
            return
        t = r.trace
        idx = decimate([t.val, t.test], start, stop)
        self.decimated = idx.size < stop - start
        self.source.data = dict(step=t.steps[idx].astype(float), val=t.val[idx], test=t.test[idx],
                                gap=r.empirical_overfitting[idx])
        self.val_dots.visible = self.test_dots.visible = idx.size <= LOD_POINTS


class SignalPlot(_StepPlot):
    """The regular signal of each step and the incremental signal, worst so far (Figure 3c)."""

    def __init__(self, height: int = 260, dark: bool = False):
        fig = _new_figure("Signals per step (Fig. 3c)", "signal", height,
                          y_range=Range1d(0.5, 5.5))
        super().__init__(fig, dark)
        # the signals' ranges as one glyph (one row per signal), not a model per band
        self.bands = ColumnDataSource(dict(y0=np.zeros(0), y1=np.zeros(0), color=[]))
        fig.hstrip(y0="y0", y1="y1", fill_color="color", fill_alpha=0.16, line_color=None, source=self.bands,
                   level="underlay")
        self.source = ColumnDataSource(dict(step=np.zeros(0), signal=np.zeros(0, dtype=np.int32),
                                            incremental=np.zeros(0, dtype=np.int32), gap=np.zeros(0)))
        reg = fig.scatter("step", "signal", source=self.source, size=8, color=PALETTE[0])
        inc = fig.step("step", "incremental", source=self.source, mode="center", color=PALETTE[5], line_width=3)
        self.inc_dots = fig.scatter("step", "incremental", source=self.source, size=5, color=PALETTE[5])
        fig.add_layout(Legend(items=[("regular", [reg]), ("incremental (worst so far)", [inc, self.inc_dots])],
                              location="top_left", orientation="horizontal", border_line_color=None), "above")
        fig.add_tools(HoverTool(renderers=[reg], tooltips=[("step", "@step{0,0}"), ("gap", "@gap{0.0000}"),
                                                           ("regular", "@signal"), ("incremental", "@incremental")]))
        fig.text(x="x", y="y", text="name", source=self.handovers, x_offset=4, text_font_size="11px",
                 text_color=self.muted, text_baseline="top")
        self.budget = Span(location=0, dimension="height", line_color="#8a1c00", line_dash="dashed", line_width=1.5,
                           visible=False)
        fig.add_layout(self.budget)
        self.ticker = FixedTicker(ticks=list(range(1, 6)))  # one ticker, updated in place (a new model would
        fig.yaxis.ticker = self.ticker                      # make Bokeh walk the whole document's model graph)

    def update(self, result) -> None:
        """Draw ``result``: bands in the signals' colours, both signals, the budget T."""
        key = (id(result.trace), tuple(result.settings["ranges"]), result.variant)
        same = self.result is not None and getattr(self, "_key", None) == key
        self.result, self._key = result, key
        m = result.signals
        colors = signal_colors(m)
        if list(self.bands.data["color"]) != colors:
            self.bands.data = dict(y0=np.arange(m) + 0.5, y1=np.arange(m) + 1.5, color=colors)
        if (self.figure.y_range.start, self.figure.y_range.end) != (0.5, m + 0.5):
            self.figure.y_range.start, self.figure.y_range.end = 0.5, m + 0.5
        ticks = list(range(1, m + 1)) if m <= 20 else list(range(1, m + 1, max(1, m // 10)))
        if self.ticker.ticks != ticks:
            self.ticker.ticks = ticks
        edge = self._budget(result)
        self.budget.visible = edge is not None
        if edge is not None:
            self.budget.location = edge
        if not same:  # the signals depend on the trace and the ranges only
            self._handovers(result, m + 0.45)
            self._draw(0, len(result))

    def _draw(self, start: int, stop: int) -> None:
        r = self.result
        if r is None:
            return
        idx = decimate([r.signal, r.incremental_signal], start, stop)
        self.decimated = idx.size < stop - start
        self.source.data = dict(step=r.trace.steps[idx].astype(float), signal=r.signal[idx].astype(np.int32),
                                incremental=r.incremental_signal[idx].astype(np.int32),
                                gap=r.empirical_overfitting[idx])
        self.inc_dots.visible = idx.size <= LOD_POINTS
