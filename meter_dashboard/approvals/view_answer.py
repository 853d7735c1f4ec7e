"""The /approve page's answer: the decisions of the chosen procedure, their exports and their plot.

:class:`ApproveDecisions` is the "Decisions" tab of :class:`~meter_dashboard.approvals.view.Approve`
and the page's lead: headline numbers, the sentence, the table of decisions and (below the fold,
built when it is scrolled to: :class:`~meter_dashboard.ui.lazy.WhenSeen`) the plot; *Download
table/slide/report* export the same result.
"""
from __future__ import annotations

from time import monotonic
from typing import Any

import panel as pn
import param

from ..core.report import csv_with_inputs, result_report
from ..ui.exports import Exports, lead_markup
from ..ui.lazy import WhenSeen
from ..ui.style import HTML, stale_html
from . import view_text as text
from .figures import DecisionFigure
from .model import EXAMPLES, METHOD_LABELS, ApproveModel
from .text import PACE, inputs, pending_lead, time_left

__all__ = ["ApproveDecisions", "PLOT_PLACE_PX"]

#: The plot's place on the page: the figure's height (``figures._figure``: 320 px; its pane has no margin in the
#: holder, measured in Chromium), so the box that holds it until it is scrolled to has its height and nothing
#: moves when it is drawn (tests/ui/test_approve_page.py checks both).
PLOT_PLACE_PX = 320


class ApproveDecisions(pn.viewable.Viewer):
    """The chosen procedure's decisions, redrawn in place with the page's next message when the result changes."""

    model = param.ClassSelector(class_=ApproveModel)

    def __init__(self, schedule, served: bool, **params):
        super().__init__(**params)
        self._schedule = schedule
        self.headlines = HTML("", sizing_mode="stretch_width", css_classes=["approve-headline-row"])
        self.stale = HTML("", sizing_mode="stretch_width")
        self.sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        self.lead = HTML("", sizing_mode="stretch_width", css_classes=["approve-lead-pane"])
        self.exports = Exports("approve", self._file_stem, csv=self._csv_text, slide=self._slide, report=self._report)
        self.method_note = HTML("", sizing_mode="stretch_width", css_classes=["md-note"])
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["approve-table"])
        # the plot sits below the table: on a served page it is built when it is scrolled to (at once in a notebook)
        self.decision_figure: DecisionFigure | None = None
        self.decision_source: Any = None
        self.decision_plot: Any = None
        self._served = served
        self._plot_wanted = False  # the plot's place has been seen: the figure is drawn with the first result
        self._plot_holder = pn.Column(sizing_mode="stretch_width", margin=0)
        self.plot_place = WhenSeen(self._show_decision_plot, height=PLOT_PLACE_PX,
                                   text="The plot of p-values and levels is drawn when you scroll to it.",
                                   css_classes=["approve-decision-plot-place"])
        # hidden until the first decisions: before them the table is empty and the place would be on screen
        self.plot_place.holder.visible = False
        self._layout = None
        #: the computation being waited for: (method, when it started, the result then), measured into text.PACE
        self._started: tuple[str, float, Any] | None = None
        self._follow_computation()

    # ------------------------------------------------------------------ exports (built in a worker thread)
    def _file_stem(self) -> str:
        r = self.model.result
        return "approve" if r is None else f"approve_{r.method}_alpha{r.alpha:g}_{len(r.names)}-modifications"

    def _csv_text(self) -> str | None:
        r = self.model.result
        return None if r is None else csv_with_inputs(inputs(r), r.to_frame(), index=False)

    def _slide(self):
        r = self.model.result
        return None if r is None else r.slide()

    def _report(self):
        r = self.model.result
        return None if r is None else result_report(r, subtitle="SRGP approvals of modifications")

    # ------------------------------------------------------------------ the plot
    def _build_decision_plot(self, result=None) -> None:
        figure = self.decision_figure = DecisionFigure()
        if result is not None:  # before the figure joins the page: it goes out with its points
            figure.set_data(result)
        self.decision_source = figure.source
        self.decision_plot = pn.pane.Bokeh(figure.figure, sizing_mode="stretch_width",
                                           css_classes=["approve-decision-plot"], visible=False)
        self._plot_holder.objects = [self.decision_plot]

    def _show_decision_plot(self):
        """The plot's place came near the screen (or a notebook, or an export, asked): the plot, with its points.

        The figure reaches the browser with its data (or with the first result to arrive): a figure first
        drawn from an empty source and filled by a later message could be drawn between the two, and BokehJS
        then reads the empty colour column (``RangeError: Offset is outside the bounds of the DataView``).
        """
        self._plot_wanted = True
        r = self.model.result
        if r is not None:
            self._draw_plot(r)
        elif not self._served and self.decision_figure is None:  # a notebook: the figure now, its points later
            self._build_decision_plot()
        return self._plot_holder

    # ------------------------------------------------------------------ drawing
    @param.depends("model.result", "model.busy", watch=True)
    def _result_changed(self) -> None:
        """What :meth:`draw_result` shows changed (and the comparison marks the chosen procedure)."""
        self._follow_computation()
        self._schedule("result", "comparison")

    def _follow_computation(self) -> None:
        """Time the chosen procedure's computations: from the first sight of the model busy to a new complete result
        of that procedure (recorded into ``text.PACE``); a pass that ends without one (a known result, a refused
        setting, the comparison only) is not a measurement."""
        m, r = self.model, self.model.result
        if self._started is not None:
            method, start, before = self._started
            if r is not None and r is not before and r.complete and r.method == method:
                PACE.record(method, r.decided, monotonic() - start)
                self._started = None
            elif not m.busy:
                self._started = None
        if self._started is None and m.busy:
            self._started = (m.method, monotonic(), r)

    def _left(self, r) -> str:
        """How long the rest of a partial result takes, at the pace of its decisions so far."""
        if self._started is None or r.complete:
            return ""
        return time_left(r.decided, len(r.names), monotonic() - self._started[1])

    def draw_points(self) -> None:
        """The plot's data source (its axes and visibility follow in :meth:`draw_result`)."""
        r = self.model.result
        if r is not None and self.decision_figure is not None:
            self.decision_figure.set_data(r)

    def _pending_lead(self) -> str:
        """The lead's place kept while computing (its own class: ``.approve-lead`` is the answer)."""
        m = self.model
        if m.trace is None:
            return ""
        # a shipped example's computing time is bounded (text.Pace); an uploaded trace's is not known before it runs
        known = m.example in EXAMPLES and PACE.known(m.method, m.max_conditioning)
        seconds = PACE.seconds(m.trace.modifications, m.method) if known else None
        return lead_markup(pending_lead(m.trace.modifications, METHOD_LABELS[m.method], m.alpha, seconds),
                           "approve-pending")

    def draw_result(self) -> None:
        r = self.model.result
        if r is None:
            self.headlines.object = '<div class="md-note"><span class="approve-pending">computing…</span></div>'
            self.lead.object = self._pending_lead()
            return
        for name, markup in text.decisions_html(r, self.model.trace.original_name, self.model.busy,
                                                 self._left(r)).items():
            getattr(self, name).object = markup  # lead, headlines, sentence, method_note, table
        self.plot_place.holder.visible = True  # under the table's rows (pending ones too): now in its place
        self._draw_plot(r)

    def _draw_plot(self, r) -> None:
        """The plot of ``r`` once its place has been seen (built with its points the first time)."""
        if self.decision_figure is None and self._plot_wanted:
            self._build_decision_plot(r)
        if self.decision_figure is not None:
            self.decision_figure.set_frame(r)  # its points: draw_points
            self.decision_plot.visible = True

    def draw_stale(self, refused: bool) -> None:
        """A refused change: the decisions on screen say they are the last valid ones."""
        self.stale.object = stale_html("decisions") if refused and self.model.result is not None else ""

    def __panel__(self):
        if self._layout is None:
            self._layout = pn.Column(self.headlines, self.stale, self.sentence, self.exports.row,
                                     self.method_note, self.table, self.plot_place, sizing_mode="stretch_width")
        return self._layout
