"""The planner's plots in plain Bokeh (no Panel): the page shows them, the HTML report embeds them.

:class:`LabelsPlot` draws labels needed against T (ease.ml/meter Figs. 8-12) or against a
swept parameter, one line per variant in the variant colours.  Under Hoeffding's bound
that is the whole plot; under the exact binomial bound the exact counts are drawn solid
with a dot at every computed value (they arrive a few at a time on a served page) and
Hoeffding's curves stay beside them, thin and faint, so the saving is visible.  Each
legend entry hides a variant's three renderers together.  Sources are updated in place,
so a user's zoom survives every update.
"""
from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource, HoverTool, Legend, LegendItem, NumeralTickFormatter, Span
from bokeh.plotting import figure

from ..bounds.meter import VARIANTS
from .result import VARIANT_TITLES

__all__ = ["LabelsPlot", "VARIANT_LINE_COLORS", "LINE_STYLES"]

#: Per variant (the Okabe-Ito colours of views/style.py and dashboard.css; kept Panel-free here).
VARIANT_LINE_COLORS = {
    "single_model": "#999999",
    "no_adaptivity": "#009E73",
    "resampling": "#D55E00",
    "regular": "#0072B2",
    "incremental": "#E69F00",
}

# Curves often coincide (no_adaptivity equals incremental for a non-uniform meter): the wide
# incremental line is drawn first and no_adaptivity dashed on top, so both stay visible.
LINE_STYLES = {
    "single_model": {"line_width": 1.8, "line_dash": "dotted"},
    "resampling": {"line_width": 1.8},
    "regular": {"line_width": 2.5},
    "incremental": {"line_width": 4.5, "line_alpha": 0.75},
    "no_adaptivity": {"line_width": 2.2, "line_dash": [6, 4]},
}
_DRAW_ORDER = ("single_model", "resampling", "regular", "incremental", "no_adaptivity")


def _empty() -> dict:
    return {"x": np.zeros(0), **{v: np.zeros(0) for v in VARIANTS}}


class LabelsPlot:
    """Labels needed against ``x``, every variant; the chosen bound solid, Hoeffding's faint beside it.

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

    References
    ----------
    Hubis, Wu & Zhang (2019), ease.ml/meter, Figs. 8-12 (labels against T, log scale).
    """

    def __init__(self, x_label: str, title: str, *, log_x: bool = False, marker=None, height: int = 360,
                 width: int = 900, sizing_mode: str | None = "stretch_width"):
        self.source = ColumnDataSource(_empty())
        self.reference = ColumnDataSource(_empty())
        self._has_reference = False
        size = {"sizing_mode": sizing_mode} if sizing_mode else {"width": width}
        fig = figure(height=height, y_axis_type="log", x_axis_type="log" if log_x else "linear",
                     x_axis_label=x_label, y_axis_label="labels needed", title=title,
                     tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above", **size)
        items = {v: [] for v in VARIANTS}
        for v in _DRAW_ORDER:
            color = VARIANT_LINE_COLORS[v]
            items[v].append(fig.line("x", v, source=self.source, color=color, **LINE_STYLES[v]))
            ref = fig.line("x", v, source=self.reference, color=color, line_width=1.2, line_alpha=0.45,
                           line_dash=[2, 3])
            # always visible (a legend greys out an entry with a hidden renderer): size 0 under Hoeffding
            dots = fig.scatter("x", v, source=self.source, color=color, size=0)
            items[v] += [ref, dots]
        self._dots = [r for v in VARIANTS for r in items[v][2:]]
        fig.add_tools(HoverTool(
            renderers=[items[v][0] for v in VARIANTS],
            tooltips=[("x", "@x{0,0.[000000]}")] + [(VARIANT_TITLES[v], f"@{{{v}}}{{0,0}}") for v in VARIANTS],
            mode="vline"))
        # below the plot in two columns: on a phone a legend beside it would take half the width
        legend = Legend(items=[LegendItem(label=VARIANT_TITLES[v], renderers=items[v]) for v in VARIANTS],
                        location="center", click_policy="hide", background_fill_alpha=0.8, ncols=2,
                        label_text_font_size="12px", spacing=2, padding=4, margin=4)
        fig.add_layout(legend, "below")
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.toolbar.logo = None
        self.marker = None
        if marker is not None:
            self.marker = Span(location=marker, dimension="height", line_color="#888888", line_dash="dashed",
                               line_width=1)
            fig.add_layout(self.marker)
        self.figure = fig

    def update(self, curves: dict, key: str = "steps") -> None:
        """Show ``curves`` (a :class:`~meter_dashboard.meter.model.MeterPlan`'s ``curves`` or ``sweep_curves``)."""
        x = np.asarray(curves[key])
        exact = curves.get("bound", "hoeffding") != "hoeffding"
        if exact:
            values = {v: np.asarray(curves[v], dtype=float) for v in VARIANTS}
            known = np.zeros(x.shape, dtype=bool)
            for v in VARIANTS:
                known |= np.isfinite(values[v])
            self.source.data = {"x": x[known], **{v: values[v][known] for v in VARIANTS}}
            self.reference.data = {"x": x, **{v: np.asarray(curves["hoeffding"][v]) for v in VARIANTS}}
            self._has_reference = True
        else:
            columns = {v: np.asarray(curves[v]) for v in VARIANTS}
            if np.array_equal(np.asarray(self.source.data["x"]), x):
                self.source.data.update(columns)  # the same x: only the counts travel
            else:
                self.source.data = {"x": x, **columns}
            if self._has_reference:
                self.reference.data = _empty()
                self._has_reference = False
        for r in self._dots:
            r.glyph.size = 5 if exact else 0

    def move_marker(self, value) -> None:
        if self.marker is not None:
            self.marker.location = value
