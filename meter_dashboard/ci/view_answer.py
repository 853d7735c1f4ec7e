"""The /ci page's answer: the sizes a condition needs, their curves against H, and the exports.

- :class:`Answer`: the lead in plain words, the headline numbers, the sentence, the table per
  adaptivity, the clause breakdown, the assumptions, and the CSV / slide / report downloads.
- :class:`Curves`: a Bokeh plot of labels against H per adaptivity (baseline solid, optimized
  dashed; under the exact binomial bound, the exact counts computed so far with Hoeffding's
  dotted beside them), its sources updated in place.

Both are ``pn.viewable.Viewer`` sections over a :class:`~meter_dashboard.ci.CIModel`; they
compute nothing themselves.
"""
from __future__ import annotations

import math

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Legend, LegendItem, NumeralTickFormatter, Span

from ..core.plots import figure, line
from ..core.report import csv_with_inputs, result_report
from ..ui.exports import Exports, lead_markup
from ..ui.style import esc, stale_html
from . import ADAPTIVITIES, CIModel
from .view_html import (
    ADAPTIVITY_COLORS,
    adaptivity_table_html,
    assumptions_html,
    clause_table_html,
    headline_cards,
    html_pane,
    sentence_html,
)

__all__ = ["Answer", "Curves"]

# Bokeh titles do not wrap: short ones (a phone's page would widen), the rest in a caption above
_CURVE_TITLE = "Labels needed against steps H"
_CURVE_CAPTION = "One colour per adaptivity; solid: baseline, dashed: optimized."


class Answer(pn.viewable.Viewer):
    """The sizes: lead, headlines, sentence, tables, assumptions and the exports of the result shown."""

    model = param.ClassSelector(class_=CIModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.lead = html_pane(css_classes=["ci-lead-pane"])
        self.exports = Exports("ci", self._file_stem, csv=self._csv_text, slide=self._slide, report=self._report)
        self.headlines = html_pane(css_classes=["ci-headlines"])
        self.sentence = html_pane(css_classes=["ci-sentence"])
        self.table = html_pane(css_classes=["ci-table"])
        self.clauses = html_pane(css_classes=["ci-clauses"])
        self.assumptions = html_pane(css_classes=["ci-assumptions"])
        self._layout: pn.Column | None = None

    def parts(self) -> list:
        """The numbers, in order, for a column that holds them straight (the page's: no column of their own)."""
        return [self.headlines, self.sentence, self.table, self.exports.row, self.clauses]

    def __panel__(self) -> pn.Column:
        """The numbers (the page puts :attr:`lead` above them and :attr:`assumptions` at its end)."""
        if self._layout is None:
            self._layout = pn.Column(*self.parts(), sizing_mode="stretch_width")
        return self._layout

    @param.depends("model.result", "model.error")
    def show(self) -> None:
        """The last valid result (a banner when the inputs are invalid now)."""
        r = self.model.result
        if r is None:
            return
        banner = stale_html("condition") if self.model.error else ""
        self.headlines.object = banner + headline_cards(r)
        self.sentence.object = sentence_html(r)
        self.lead.object = lead_markup(r.lead(), "ci")
        self.table.object = adaptivity_table_html(r)
        self.clauses.object = clause_table_html(r)
        self.assumptions.object = assumptions_html(r)

    # ------------------------------------------------------------------ exports (built in a worker thread)
    def _file_stem(self) -> str:
        r = self.model.result
        return "ci" if r is None else f"ci_H{r.steps}_{r.adaptivity}_{r.mode}"

    def _csv_text(self) -> str | None:
        from .text import inputs

        r = self.model.result
        return None if r is None else csv_with_inputs(inputs(r), r.to_frame())

    def _slide(self):
        r = self.model.result
        return None if r is None else r.slide()

    def _report(self):
        r = self.model.result
        return None if r is None else result_report(r, subtitle="ease.ml/ci (Renggli et al., SysML 2019)")


def _curve_columns(x, c: dict) -> dict:
    """The plot's columns from curves ``c`` (the exact or Hoeffding's arrays) at the positions ``x`` selects."""
    data = {}
    for a in ADAPTIVITIES:
        data[f"{a}_baseline"] = np.asarray(c[a]["baseline"], dtype=float)[x]
        opt = c[a]["optimized"]
        optimized = np.asarray(opt, dtype=float)[x] if opt is not None else np.full(data[f"{a}_baseline"].shape,
                                                                                    np.nan)
        # a log axis cannot show 0 (conditions over d alone need no labels)
        data[f"{a}_optimized"] = np.where(optimized > 0, optimized, np.nan)
    return data


def _line(fig, source, y: str, **visuals):
    """A line of ``y`` against ``x``: its glyph only (:func:`~meter_dashboard.core.plots.line`)."""
    return line(fig, source, "x", y, **visuals)


def _log_ticks(arrays) -> list:
    """Ticks at 1, 2, 5 x 10^k spanning the finite positive values (Bokeh's log ticker skips some)."""
    values = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return [1, 10, 100]
    lo, hi = math.floor(math.log10(values.min())), math.ceil(math.log10(values.max()))
    mantissas = [1, 2, 5] if hi - lo <= 4 else [1]
    return [m * 10**k for k in range(lo, hi + 1) for m in mantissas]


class Curves(pn.viewable.Viewer):
    """Labels against H, one colour per adaptivity; the chosen H marked; the caption says what is exact."""

    model = param.ClassSelector(class_=CIModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.curve_source = ColumnDataSource({"x": [1], **{f"{a}_{k}": [1] for a in ADAPTIVITIES
                                                           for k in ("baseline", "optimized")}},
                                             name="ci-curves")
        self.reference_source = None  # Hoeffding's curves beside the exact ones: built when first needed
        self._reference_renderers: list = []
        self.curve_fig = self._build_figure()
        self.curve_caption = html_pane(f"<span class='md-note'>{_CURVE_CAPTION}</span>", margin=(10, 10, 0, 10),
                                       css_classes=["ci-curve-caption"])
        self.curve_pane = pn.pane.Bokeh(self.curve_fig, sizing_mode="stretch_width", css_classes=["ci-curve"])
        self._layout: pn.Column | None = None

    def parts(self) -> list:
        """The caption and the plot, for a column that holds them straight (the page's)."""
        return [self.curve_caption, self.curve_pane]

    def __panel__(self) -> pn.Column:
        if self._layout is None:
            self._layout = pn.Column(*self.parts(), sizing_mode="stretch_width")
        return self._layout

    def _build_figure(self):
        fig = figure(height=360, y_axis_type="log", x_axis_label="H (commits per test set)",
                     y_axis_label="labels needed", title=_CURVE_TITLE)
        items = []
        self._optimized_renderers = []
        for a in ADAPTIVITIES:
            color = ADAPTIVITY_COLORS[a]
            # none and firstChange need the same count (Section 3.4): none is drawn wide and pale beneath
            width, alpha = (6, 0.45) if a == "none" else (2.4, 1.0)
            base = _line(fig, self.curve_source, f"{a}_baseline", line_color=color, line_width=width, line_alpha=alpha)
            opt = _line(fig, self.curve_source, f"{a}_optimized", line_color=color, line_width=width,
                        line_alpha=alpha, line_dash="dashed")
            self._optimized_renderers.append(opt)
            items += [(f"{a} · baseline", [base]), (f"{a} · optimized", [opt])]
        fig.add_tools(HoverTool(tooltips=[("H", "@x")] + [(f"{a} {k}", f"@{{{a}_{k}}}{{0,0}}")
                                                          for k in ("baseline", "optimized") for a in ADAPTIVITIES],
                                mode="vline"))
        self.legend = Legend(items=items, location="top_left", click_policy="hide", background_fill_alpha=0.8)
        fig.add_layout(self.legend, "right")
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.xaxis.major_label_policy = fig.yaxis[0].major_label_policy  # stateless: one model for both axes
        self.y_ticker = FixedTicker(ticks=[1, 10, 100, 1000])
        fig.yaxis.ticker = self.y_ticker
        self.current_h = Span(location=self.model.steps, dimension="height", line_color="#888888", line_dash="dotted",
                              line_width=1)
        fig.add_layout(self.current_h)
        return fig

    @param.depends("model.result")
    def show_steps(self) -> None:
        """The chosen H, marked on the plot (the last valid result's)."""
        r = self.model.result
        if r is not None:
            self.current_h.location = r.steps

    @param.depends("model.curves", "model.curving")
    def show_caption(self) -> None:
        """What the lines are; under the binomial bound, how many values of H are exact so far."""
        c, m = self.model.curves, self.model
        caption = _CURVE_CAPTION
        if c.get("bound") == "binomial":
            known = "computing…" if m.curving else "done"
            caption += (f" Exact binomial counts at {c['computed']:,} of {c['planned']:,} values of H ({known}); "
                        "dotted: Hoeffding's counts (the paper's), for comparison.")
        caption = f'<span class="md-note">{esc(caption)}</span>'  # html.escape: a test reads its &#x27;
        if self.curve_caption.object != caption:
            self.curve_caption.object = caption

    @param.depends("model.curves")
    def show(self) -> None:
        """The curves' sources, ticks and renderers (updated in place), then the caption."""
        c = self.model.curves
        if not c:
            return
        steps = np.asarray(c["steps"])
        exact = c.get("bound") == "binomial"
        known = np.ones(steps.shape, dtype=bool)
        if exact:  # the exact counts computed so far: lines through them, Hoeffding's dotted beside
            known = np.zeros(steps.shape, dtype=bool)
            for a in ADAPTIVITIES:
                known |= np.isfinite(np.asarray(c[a]["baseline"], dtype=float))
        data = {"x": steps[known], **_curve_columns(known, c)}
        self.curve_source.data = data
        self._show_reference(steps, c["hoeffding"] if exact else None)
        columns = [v for k, v in data.items() if k != "x"]
        if exact:
            columns += [v for k, v in self.reference_source.data.items() if k != "x"]
        self.y_ticker.ticks = _log_ticks(columns)
        has_opt = any(c[a]["optimized"] is not None for a in ADAPTIVITIES)
        for r in self._optimized_renderers:
            r.visible = has_opt
        self.show_caption()

    def _show_reference(self, steps, hoeffding: dict | None) -> None:
        """Hoeffding's curves, thin and dotted, beside the exact ones (the renderers are made on first use)."""
        if hoeffding is None:
            if self.reference_source is not None and len(self.reference_source.data["x"]):
                self.reference_source.data = {k: [] for k in self.reference_source.data}
            for r in self._reference_renderers:
                r.visible = False
            return
        data = {"x": steps, **_curve_columns(np.ones(steps.shape, dtype=bool), hoeffding)}
        if self.reference_source is None:
            self._add_reference(data)
        else:
            self.reference_source.data = data
        has_opt = any(hoeffding[a]["optimized"] is not None for a in ADAPTIVITIES)
        for i, r in enumerate(self._reference_renderers):
            r.visible = has_opt or i % 2 == 0

    def _add_reference(self, data: dict) -> None:
        """The dotted renderers of Hoeffding's curves and their legend entry (once per page)."""
        self.reference_source = ColumnDataSource(data, name="ci-curves-hoeffding")
        for a in ADAPTIVITIES:
            for k in ("baseline", "optimized"):
                self._reference_renderers.append(_line(
                    self.curve_fig, self.reference_source, f"{a}_{k}", line_color=ADAPTIVITY_COLORS[a],
                    line_width=1.2, line_alpha=0.6, line_dash="dotted"))
        self.legend.items.append(LegendItem(label="dotted: Hoeffding (the paper's)",
                                            renderers=list(self._reference_renderers)))
