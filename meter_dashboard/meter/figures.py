"""The planner's plots in plain Bokeh (no Panel): the page shows them, the HTML report embeds them.

:class:`LabelsPlot` draws labels needed against T (ease.ml/meter Figs. 8-12) or against a
swept parameter, one line per variant in the variant colours.  Under Hoeffding's bound
that is the whole plot (five renderers: a page builds no more than it shows).  Under the
exact binomial bound the exact counts are drawn solid with a dot at every computed value
(they arrive a few at a time on a served page) and Hoeffding's curves stay beside them,
dotted and faint, so the saving is visible; those renderers are made the first time an
exact curve is shown.  Each legend entry hides a variant's renderers together; curves that
coincide say so in the legend.  A label budget is drawn as a horizontal line, the largest T it supports marked on it (a dotted
vertical line; the curve over T reaches it) and named in a label kept inside the plot.  Sources are updated in place (only the columns that changed
travel), so a user's zoom survives every update.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from bokeh.core.properties import value
from bokeh.models import (
    CDSView,
    ColumnDataSource,
    GlyphRenderer,
    HoverTool,
    Label,
    Legend,
    LegendItem,
    Line,
    NumeralTickFormatter,
    Scatter,
    Span,
)
from bokeh.plotting import figure

from ..bounds.meter import VARIANTS
from ..core.colors import VARIANT_COLORS
from ..core.formatting import integer
from ..core.plots import glyph
from .result import VARIANT_TITLES
from .text import steps_shown

__all__ = ["LabelsPlot", "LINE_STYLES", "HOEFFDING_LEGEND", "BUDGET_COLOR", "PINNED_COLOR"]

# Curves often coincide (no_adaptivity equals incremental for a non-uniform meter): the wide
# incremental line is drawn first and no_adaptivity dashed on top, so both stay visible.
LINE_STYLES: dict[str, dict[str, Any]] = {
    "single_model": {"line_width": 1.8, "line_dash": "dotted"},
    "resampling": {"line_width": 1.8},
    "regular": {"line_width": 2.5},
    "incremental": {"line_width": 4.5, "line_alpha": 0.75},
    "no_adaptivity": {"line_width": 2.2, "line_dash": [6, 4]},
}
_DRAW_ORDER = ("single_model", "resampling", "regular", "incremental", "no_adaptivity")
#: The legend entry of Hoeffding's curves drawn beside exact ones.
HOEFFDING_LEGEND = "dotted: Hoeffding (the paper's)"
#: The budget line (the alarm colour of the page when the budget falls short).
BUDGET_COLOR = "#B02A37"
#: A pinned plan's curve (grey: the current plan keeps the variant colours).
PINNED_COLOR = "#6C757D"


def _empty() -> dict:
    return {"x": np.zeros(0), **{v: np.zeros(0) for v in VARIANTS}, "budget": np.zeros(0)}


def coinciding(columns: dict) -> dict:
    """variant -> the earlier-drawn variant whose curve is the same at every shown point (coinciding lines)."""
    same = {}
    order = [v for v in _DRAW_ORDER if v in columns]
    for i, v in enumerate(order):
        a = np.asarray(columns[v], dtype=float)
        if a.size == 0:
            continue
        for w in order[:i]:
            if w not in same and np.array_equal(a, np.asarray(columns[w], dtype=float), equal_nan=True):
                same[v] = w
                break
    return same


#: The plot background of the dark theme (Panel's dark Bokeh theme): the budget label's box on a dark page.
DARK_PLOT_BACKGROUND = "#2b3035"


class LabelsPlot:
    """Labels needed against ``x``, every variant; the chosen bound solid, Hoeffding's dotted beside it.

    Parameters
    ----------
    x_label, title : str
    log_x : bool
        A log x axis (the δ and ε sweeps).
    marker : float, optional
        Where a dashed vertical line marks the plan's own value (its T).
    height : int
    sizing_mode : str, optional
        ``"stretch_width"`` on the page; a report uses a fixed ``width``.
    name : str, optional
        The figure's name (the page's "Download plots (PNG)" finds its plots by it).

    References
    ----------
    Hubis, Wu & Zhang (2019), ease.ml/meter, Figs. 8-12 (labels against T, log scale).
    """

    def __init__(self, x_label: str, title: str, *, log_x: bool = False, marker=None, height: int = 360,
                 width: int = 900, sizing_mode: str | None = "stretch_width", name: str | None = None,
                 dark: bool = False):
        self.source = ColumnDataSource(_empty())
        self.reference: ColumnDataSource | None = None  # Hoeffding's curves beside exact ones: made on first use
        self._has_reference = False
        size = {"sizing_mode": sizing_mode} if sizing_mode else {"width": width}
        fig = figure(height=height, y_axis_type="log", x_axis_type="log" if log_x else "linear",
                     x_axis_label=x_label, y_axis_label="labels needed", title=title,
                     tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above", name=name, **size)
        self.view = CDSView()
        self.lines = {v: glyph(fig, self.source, Line(x="x", y=v, line_color=VARIANT_COLORS[v], **LINE_STYLES[v]),
                                view=self.view) for v in _DRAW_ORDER}
        self._dots: list = []
        fig.add_tools(HoverTool(
            renderers=[self.lines[v] for v in VARIANTS],
            tooltips=[("x", "@x{0,0.[000000]}")] + [(VARIANT_TITLES[v], f"@{{{v}}}{{0,0}}") for v in VARIANTS],
            mode="vline"))
        # below the plot in two columns: on a phone a legend beside it would take half the width
        self.labels = {v: VARIANT_TITLES[v] for v in VARIANTS}  # as shown (coinciding curves say so)
        self.items = {v: LegendItem(label=self.labels[v], renderers=[self.lines[v]]) for v in VARIANTS}
        self.legend = Legend(items=list(self.items.values()), location="center", click_policy="hide",
                             background_fill_alpha=0.8, ncols=2, label_text_font_size="12px", spacing=2, padding=4,
                             margin=4)
        fig.add_layout(self.legend, "below")
        # the axes share what is the same for both (stateless models): two Bokeh models fewer per plot
        counts = NumeralTickFormatter(format="0,0")
        fig.yaxis.formatter = counts
        if not log_x:
            fig.xaxis.formatter = counts  # T = 100,000, never 1.000e+5
        fig.xaxis.major_label_policy = fig.yaxis[0].major_label_policy  # every tick labelled, on both axes
        fig.toolbar.logo = None
        self.marker = None
        if marker is not None:
            self.marker = Span(location=marker, dimension="height", line_color="#888888", line_dash="dashed",
                               line_width=1)
            fig.add_layout(self.marker)
        # the label budget: a line of the data (so the axes include it), its label naming the largest T;
        # made now, hidden until there is a budget (adding to a shown figure costs far more)
        self.pinned: GlyphRenderer | None = None  # a pinned plan's curve: made when a plan is first pinned
        self.pinned_item: LegendItem | None = None
        self.budget = None
        self.budget_line = glyph(fig, self.source, Line(x="x", y="budget", line_color=BUDGET_COLOR,
                                                            line_dash="dashed", line_width=1.5), view=self.view)
        self.budget_label = Label(x=1, y=1, text="", text_font_size="12px", text_color=BUDGET_COLOR,
                                  text_baseline="bottom", visible=False,
                                  background_fill_color=DARK_PLOT_BACKGROUND if dark else "white",
                                  background_fill_alpha=0.7)
        fig.add_layout(self.budget_label)
        # the largest T the budget supports, marked where the budget line meets the curve
        self.budget_mark = Span(location=1, dimension="height", line_color=BUDGET_COLOR, line_dash="dotted",
                                line_width=1.5, visible=False)
        fig.add_layout(self.budget_mark)
        self.figure = fig

    # ------------------------------------------------------------------ exact curves
    def _exact_renderers(self) -> None:
        """Hoeffding's dotted reference lines and the exact counts' dots (the first exact curve makes them)."""
        if self.reference is not None:
            return
        self.reference = ColumnDataSource(_empty())
        reference_view = CDSView()
        hoeffding = []
        for v in _DRAW_ORDER:
            color = VARIANT_COLORS[v]
            ref = glyph(self.figure, self.reference, Line(x="x", y=v, line_color=color, line_width=1.2,
                                                               line_alpha=0.45, line_dash=[2, 3]), view=reference_view)
            dots = glyph(self.figure, self.source, Scatter(x="x", y=v, fill_color=color, line_color=color,
                                                               size=5), view=self.view)
            self.items[v].renderers = [*self.items[v].renderers, dots]
            self._dots.append(dots)
            hoeffding.append(ref)
        self.hoeffding_item = LegendItem(label=HOEFFDING_LEGEND, renderers=hoeffding)
        self.legend.items = [*self.legend.items, self.hoeffding_item]

    def update(self, curves: dict, key: str = "steps") -> None:
        """Show ``curves`` (a :class:`~meter_dashboard.meter.model.MeterPlan`'s ``curves`` or ``sweep_curves``)."""
        x = np.asarray(curves[key])
        exact = curves.get("bound", "hoeffding") != "hoeffding"
        if exact:
            self._exact_renderers()
            values = {v: np.asarray(curves[v], dtype=float) for v in VARIANTS}
            known = np.zeros(x.shape, dtype=bool)
            for v in VARIANTS:
                known |= np.isfinite(values[v])
            columns = {v: values[v][known] for v in VARIANTS}
            self._set(self.source, x[known], {**columns, "budget": self._budget_column(int(known.sum()))})
            self._set(self.reference, x, {v: np.asarray(curves["hoeffding"][v]) for v in VARIANTS})
            self._has_reference = True
        else:
            columns = {v: np.asarray(curves[v]) for v in VARIANTS}
            self._set(self.source, x, {**columns, "budget": self._budget_column(len(x))})
            if self._has_reference and self.reference is not None:
                self.reference.data = _empty()
                self._has_reference = False
        for r in self._dots:
            r.visible = exact
        if self.reference is not None:
            self.hoeffding_item.visible = exact
        self._label_coinciding(columns)

    @staticmethod
    def _set(source, x, columns: dict) -> None:
        """Only what changed travels: the same x sends the changed columns, nothing when none changed."""
        old = source.data
        if len(old["x"]) == len(x) and np.array_equal(np.asarray(old["x"]), x):
            changed = {k: v for k, v in columns.items() if not np.array_equal(np.asarray(old[k]), v, equal_nan=True)}
            if changed:
                source.data.update(changed)
        else:
            source.data = {"x": x, **columns}

    def _label_coinciding(self, columns: dict) -> None:
        same = coinciding(columns)
        for v, item in self.items.items():
            label = VARIANT_TITLES[v] + (f" (= {VARIANT_TITLES[same[v]].split()[0].lower()})" if v in same else "")
            if self.labels[v] != label:
                self.labels[v] = label
                item.label = value(label)  # a plain string set later would name a data column

    # ------------------------------------------------------------------ a pinned plan
    def show_pinned(self, x=None, y=None, label: str = "") -> None:
        """A pinned plan's curve (the recommended meter's), grey and dashed beside the current ones; None hides it.

        Its renderer and legend entry are made the first time a plan is pinned.
        """
        if x is None:
            if self.pinned is not None and self.pinned_item is not None and self.pinned.visible:
                self.pinned.visible = self.pinned_item.visible = False
            return
        x, y = np.asarray(x), np.asarray(y, dtype=float)
        known = np.isfinite(y)
        if self.pinned is None:
            source = ColumnDataSource({"x": x[known], "y": y[known]})
            self.pinned = glyph(self.figure, source, Line(x="x", y="y", line_color=PINNED_COLOR, line_width=3,
                                                              line_dash=[10, 5], line_alpha=0.9))
            self.pinned_item = LegendItem(label=value(label), renderers=[self.pinned])
            self.legend.items = [*self.legend.items, self.pinned_item]
            return
        assert self.pinned_item is not None  # made with the renderer
        self._set(self.pinned.data_source, x[known], {"y": y[known]})
        if not self.pinned.visible:
            self.pinned.visible = self.pinned_item.visible = True
        if self.pinned_item.label != value(label):
            self.pinned_item.label = value(label)

    # ------------------------------------------------------------------ marks
    def move_marker(self, location) -> None:
        if self.marker is not None and self.marker.location != location:
            self.marker.location = location

    def _label_below(self, budget) -> bool:
        """Whether the budget's label goes under its line: only when the line is the top of the plot.

        The line is part of the data, so the y axis reaches it: at the bottom of the plot (a budget
        below every curve) a label under it would be cut by the x axis, at the top one above it by
        the title; the label always sits on the side of the line that is inside the plot.
        """
        shown = [np.asarray(self.source.data[v], dtype=float) for v in VARIANTS if len(self.source.data[v])]
        values = np.concatenate(shown) if shown else np.zeros(0)
        values = values[np.isfinite(values) & (values > 0)]
        return bool(values.size) and float(budget) >= float(values.max())

    def _budget_column(self, size: int) -> np.ndarray:
        return np.full(size, np.nan if self.budget is None else float(self.budget))

    def show_budget(self, budget, largest_t, x_end=None) -> None:
        """A horizontal line at ``budget`` labels, marking the largest T it supports (``None`` hides it)."""
        if budget != self.budget:
            self.budget = budget
            self._set(self.source, np.asarray(self.source.data["x"]),
                      {"budget": self._budget_column(len(self.source.data["x"]))})
        if budget is None:
            for mark in (self.budget_label, self.budget_mark):
                if mark.visible:
                    mark.visible = False
            return
        if largest_t is None:
            where, text = 1, f"budget {integer(budget)}"
        elif largest_t >= 1:
            where = largest_t if x_end is None else min(largest_t, x_end)
            shown = steps_shown(largest_t)  # "> 10¹²" beyond the search
            text = f"budget {integer(budget)}: largest T {shown if shown.startswith('>') else '= ' + shown}"
        else:
            where, text = 1, f"budget {integer(budget)}: not even T = 1"
        marked = largest_t is not None and largest_t >= 1 and (x_end is None or largest_t <= x_end)
        mark = {"location": where, "visible": marked}
        mark = {k: v for k, v in mark.items() if getattr(self.budget_mark, k) != v}
        if mark:
            self.budget_mark.update(**mark)
        below = self._label_below(budget)
        right = bool(x_end) and where >= 0.6 * x_end
        values = {"x": where, "y": budget, "text": text, "x_offset": -4 if right else 4,
                  "text_align": "right" if right else "left", "text_baseline": "top" if below else "bottom",
                  "y_offset": -3 if below else 0, "visible": True}
        values = {k: v for k, v in values.items() if getattr(self.budget_label, k) != v}
        if values:
            self.budget_label.update(**values)
