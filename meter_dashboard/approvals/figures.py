"""The Bokeh figures of the /approve page and how each one follows its model output.

Every figure has explicit ranges (``Range1d``/``FactorRange``) that the update functions
set from the data, so a figure never asks BokehJS to find ranges in empty data (the
"could not set initial ranges" warnings).  Colours: one per procedure (Okabe-Ito), the
same as the ``.md-text.method-*`` classes of ``dashboard.css``.
"""
from __future__ import annotations

import math

import numpy as np
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, Legend, LegendItem, Range1d, Span, Whisker

from ..core.plots import figure
from .model import METHOD_LABELS, METHODS

__all__ = ["METHOD_COLORS", "DecisionFigure", "CompareFigure", "SimulationFigures"]

#: One colour per procedure (Okabe-Ito), the same in every plot and table.
METHOD_COLORS = {
    "naive": "#D55E00",
    "bonferroni": "#7f7f7f",
    "weighted-bonferroni": "#CC79A7",
    "bonf-srgp": "#56B4E9",
    "fs-srgp": "#0072B2",
    "pres-srgp": "#009E73",
}
_APPROVED, _DENIED = "#1d7a46", "#8a99a8"
_FLOOR = 1e-300  # probabilities are drawn on a log axis


def _figure(title: str, x_label: str, y_label: str, **kwargs):
    # titles stay short (<= ~40 characters): a Bokeh title does not wrap and would widen a phone's page
    return figure(height=320, x_axis_label=x_label, y_axis_label=y_label, title=title,
                  x_range=kwargs.pop("x_range", Range1d(0.5, 1.5)), y_range=kwargs.pop("y_range", Range1d(0, 1)),
                  **kwargs)


def _log_range(rng: Range1d, values) -> None:
    """Fit a log axis to positive ``values`` with half a decade of room."""
    v = np.asarray([x for x in np.ravel(values) if x > 0 and math.isfinite(x)])
    if v.size == 0:
        rng.start, rng.end = 1e-3, 1.0
        return
    lo, hi = math.log10(max(float(v.min()), _FLOOR)), math.log10(float(v.max()))
    rng.start, rng.end = 10 ** (lo - 0.5), 10 ** (max(hi, lo + 1) + 0.5)


def _linear_range(rng: Range1d, values, floor=None) -> None:
    v = np.asarray([x for x in np.ravel(values) if math.isfinite(x)])
    if v.size == 0:
        rng.start, rng.end = 0.0, 1.0
        return
    lo, hi = float(v.min()), float(v.max())
    pad = 0.05 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1.0)
    rng.start, rng.end = (lo - pad) if floor is None else floor, hi + pad


class DecisionFigure:
    """p-value of each test against the level it was held to (one procedure)."""

    def __init__(self):
        self.source = ColumnDataSource({"test": [], "p": [], "level": [], "name": [], "decision": [], "color": [],
                                        "fill": []})
        fig = _figure("p-value and level per test", "test (in order)",
                      "probability (log scale)", y_axis_type="log", y_range=Range1d(1e-3, 1.0))
        level = fig.step("test", "level", source=self.source, mode="center", line_width=2.5,
                         color=METHOD_COLORS["fs-srgp"])
        pts = fig.scatter("test", "p", source=self.source, size=10, marker="circle", line_color="color",
                          fill_color="fill", line_width=2)
        fig.add_tools(HoverTool(renderers=[pts], tooltips=[("test", "@test: @name"), ("p-value", "@p{0.000e}"),
                                                           ("level", "@level{0.000e}"), ("", "@decision")]))
        fig.add_layout(Legend(items=[("level: approve when the p-value is at or below", [level]),
                                     ("p-value (filled: approved)", [pts])], location="center",
                              background_fill_alpha=0.85), "below")
        self.figure = fig

    def update(self, result) -> None:
        """Points, then axes and title (a served page sends the points in a message of their own)."""
        self.set_data(result)
        self.set_frame(result)

    def set_data(self, result) -> None:
        k = result.decided
        colors = [_APPROVED if a else _DENIED for a in result.approved]
        self.source.data = {
            "test": list(range(1, k + 1)), "p": self._p(result), "level": np.maximum(result.levels, _FLOOR),
            "name": list(result.names[:k]), "decision": ["approved" if a else "denied" for a in result.approved],
            "color": colors, "fill": [c if a else "white" for c, a in zip(colors, result.approved)],
        }

    def set_frame(self, result) -> None:
        self.figure.x_range.start, self.figure.x_range.end = 0.5, max(len(result.names), 1) + 0.5
        _log_range(self.figure.y_range, np.r_[self._p(result), np.maximum(result.levels, _FLOOR)])
        self.figure.title.text = f"{METHOD_LABELS[result.method]}: p-value and level per test"  # short: fits a phone

    @staticmethod
    def _p(result):
        return np.maximum(result.p_values, _FLOOR)


class CompareFigure:
    """Level each procedure held each test to, with the chosen procedure's p-values."""

    def __init__(self):
        fig = _figure("Level per test (filled = approved)", "test (in order)",
                      "level (log scale)", y_axis_type="log", y_range=Range1d(1e-3, 1.0))
        self.sources, items = {}, []
        for m in METHODS:
            src = ColumnDataSource({"test": [], "level": [], "fill": [], "name": [], "decision": []})
            line = fig.line("test", "level", source=src, color=METHOD_COLORS[m], line_width=2)
            pts = fig.scatter("test", "level", source=src, color=METHOD_COLORS[m], fill_color="fill", size=8,
                              line_width=2)
            fig.add_tools(HoverTool(renderers=[pts], tooltips=[("procedure", METHOD_LABELS[m]),
                                                               ("test", "@test: @name"),
                                                               ("level", "@level{0.000e}"), ("", "@decision")]))
            self.sources[m] = src
            items.append(LegendItem(label=METHOD_LABELS[m], renderers=[line, pts]))
        self.p_source = ColumnDataSource({"test": [], "p": []})
        p_pts = fig.scatter("test", "p", source=self.p_source, marker="x", size=10, color="#7f7f7f", line_width=2)
        items.append(LegendItem(label="p-value (margin of the chosen procedure)", renderers=[p_pts]))
        fig.add_layout(Legend(items=items, location="center", click_policy="hide", background_fill_alpha=0.85),
                       "right")
        self.figure = fig

    def update(self, comparison, result) -> None:
        """Points, then axes (a served page sends the points in a message of their own)."""
        self.set_data(comparison, result)
        self.set_frame(comparison, result)

    def set_data(self, comparison, result) -> None:
        for m, src in self.sources.items():
            res = comparison.results.get(m)
            if res is None:
                src.data = {"test": [], "level": [], "fill": [], "name": [], "decision": []}
                continue
            src.data = {"test": list(range(1, res.decided + 1)), "level": np.maximum(res.levels, _FLOOR),
                        "fill": [METHOD_COLORS[m] if a else "white" for a in res.approved],
                        "name": list(res.names[:res.decided]),
                        "decision": ["approved" if a else "denied" for a in res.approved]}
        p = self._p(result)
        self.p_source.data = {"test": list(range(1, len(p) + 1)), "p": p}

    def set_frame(self, comparison, result) -> None:
        values = [np.maximum(res.levels, _FLOOR) for m in self.sources if (res := comparison.results.get(m)) is not None]
        p = self._p(result)
        self.figure.x_range.start, self.figure.x_range.end = 0.5, max(len(comparison.names), 1) + 0.5
        _log_range(self.figure.y_range, np.concatenate(values + [p]) if values else p)

    @staticmethod
    def _p(result):
        return np.maximum(result.p_values, _FLOOR) if result is not None else np.zeros(0)


class SimulationFigures:
    """Figure 3 (FWER per procedure, AUC curves) or Figure 4 (approvals and AUC over time)."""

    def __init__(self, kind: str, alpha: float):
        self.kind = kind
        self.curve_sources: dict[str, ColumnDataSource] = {}
        self.line_sources: dict[str, ColumnDataSource] = {}
        if kind == "fwer":
            self.bar_source = ColumnDataSource({"label": [], "fwer": [], "lower": [], "upper": [], "color": []})
            fig = _figure("Fig. 3 (middle): FWER ± 2 s.e.", "",
                          "FWER", x_range=FactorRange(*[METHOD_LABELS[m] for m in METHODS]), tools="save,reset")
            fig.vbar(x="label", top="fwer", width=0.7, source=self.bar_source, color="color")
            fig.add_layout(Whisker(source=self.bar_source, base="label", lower="lower", upper="upper", line_width=2))
            self.alpha_line = Span(location=alpha, dimension="width", line_color="#7f7f7f", line_dash="dashed",
                                   line_width=2)
            fig.add_layout(self.alpha_line)
            fig.xaxis.major_label_orientation = 0.5
            fig.add_tools(HoverTool(tooltips=[("procedure", "@label"), ("FWER", "@fwer{0.000}"),
                                              ("± 2 s.e.", "@lower{0.000} – @upper{0.000}")]))
            curve = _figure("Fig. 3 (left): AUC, reused (dashed) vs fresh", "test",
                            "AUC of the deployed model")
        else:
            fig = _figure("Fig. 4 (left): approvals over time (mean)",
                          "time point (new data arrive)", "modifications approved so far")
            curve = _figure("Fig. 4 (right): fresh AUC of the last approved", "time point",
                            "AUC on fresh data")
        self.figure, self.curve = fig, curve
        self._legends(kind)

    def _legends(self, kind: str) -> None:
        items, curve_items = [], []
        for m in METHODS:
            src = ColumnDataSource({"x": [], "y": [], "y2": []})
            renderers = [self.curve.line("x", "y", source=src, color=METHOD_COLORS[m], line_width=2)]
            if kind == "fwer":
                renderers.append(self.curve.line("x", "y2", source=src, color=METHOD_COLORS[m], line_width=1.5,
                                                 line_dash="dashed"))
            self.curve_sources[m] = src
            curve_items.append(LegendItem(label=METHOD_LABELS[m], renderers=renderers))
            if kind == "power":
                lsrc = ColumnDataSource({"x": [], "y": []})
                line = self.figure.line("x", "y", source=lsrc, color=METHOD_COLORS[m], line_width=2.5)
                self.line_sources[m] = lsrc
                items.append(LegendItem(label=METHOD_LABELS[m], renderers=[line]))
        self.curve.add_layout(Legend(items=curve_items, location="center", click_policy="hide"), "right")
        if kind == "power":
            self.figure.add_layout(Legend(items=items, location="center", click_policy="hide"), "right")

    def update(self, res) -> None:
        """Points, then axes (a served page sends the points in a message of their own)."""
        self.set_data(res)
        self.set_frame(res)

    def _shown(self, res) -> tuple[list, dict]:
        methods = [m for m in res.methods if not math.isnan(res.fwer.get(m, math.nan))]
        second = "test_auc" if self.kind == "fwer" else "holdout_auc"
        return methods, {m: (res.curves["holdout_auc"][m], res.curves[second][m]) for m in methods}

    def set_data(self, res) -> None:
        methods, shown = self._shown(res)
        time = [int(t) for t in res.time]
        empty: dict[str, list] = {"x": [], "y": [], "y2": []}
        if self.kind == "fwer":
            self.bar_source.data = {
                "label": [METHOD_LABELS[m] for m in methods], "fwer": [res.fwer[m] for m in methods],
                "lower": [max(res.fwer[m] - 2 * res.fwer_error[m], 0.0) for m in methods],
                "upper": [min(res.fwer[m] + 2 * res.fwer_error[m], 1.0) for m in methods],
                "color": [METHOD_COLORS[m] for m in methods]}
        else:
            for m, src in self.line_sources.items():
                src.data = {"x": time, "y": res.curves["approvals"][m]} if m in methods else {"x": [], "y": []}
        for m, src in self.curve_sources.items():
            src.data = {"x": time, "y": shown[m][0], "y2": shown[m][1]} if m in shown else dict(empty)

    def set_frame(self, res) -> None:
        methods, shown = self._shown(res)
        if self.kind == "fwer":
            self.alpha_line.location = res.alpha
            _linear_range(self.figure.y_range, [res.alpha * 1.2] + [min(res.fwer[m] + 2 * res.fwer_error[m], 1.0)
                                                                    for m in methods], floor=0.0)
        else:
            _linear_range(self.figure.y_range, np.concatenate([res.curves["approvals"][m] for m in methods] + [[0.0]]),
                          floor=0.0)
        for fig in (self.figure, self.curve):
            if not isinstance(fig.x_range, FactorRange):
                fig.x_range.start, fig.x_range.end = 0.5, max(len(res.time), 1) + 0.5
        _linear_range(self.curve.y_range, np.concatenate([np.r_[a, b] for a, b in shown.values()] or [[0.5, 1.0]]))
