"""The /approve page's comparison: every chosen procedure on the same trace, side by side.

:class:`ApproveComparison` is the "Compare procedures" tab of
:class:`~meter_dashboard.approvals.view.Approve`, built the first time it opens (on a server
the comparison is computed only while it is open).
"""
from __future__ import annotations

import panel as pn
import param

from ..ui.style import HTML
from . import view_text as text
from .figures import CompareFigure
from .model import METHOD_LABELS, METHODS, ApproveModel

__all__ = ["ApproveComparison"]

_INTRO = ("<p class='md-note'>Every procedure on the same trace, margins and α. ✔ approved, ✗ denied; small "
          "numbers are the level each test was held to. The margin schedule depends on each procedure's own "
          "approvals.</p>")


class ApproveComparison(pn.viewable.Viewer):
    """The procedures compared: a table and a plot of every procedure's decisions (built on first view)."""

    model = param.ClassSelector(class_=ApproveModel)

    def __init__(self, schedule, **params):
        super().__init__(**params)
        self._schedule = schedule
        self._layout = None

    @param.depends("model.comparison", watch=True)
    def _comparison_changed(self) -> None:
        """What :meth:`draw` shows changed: redrawn with the page's next message."""
        self._schedule("comparison")

    @property
    def built(self) -> bool:
        """The tab has been opened (its widgets exist)."""
        return self._layout is not None

    def __panel__(self):
        if self._layout is None:
            self.compare_methods = pn.widgets.MultiChoice.from_param(self.model.param.compare_methods,
                                                                     name="Procedures to compare",
                                                                     options={METHOD_LABELS[m]: m for m in METHODS},
                                                                     sizing_mode="stretch_width")
            self.compare_headlines = HTML("", sizing_mode="stretch_width")
            self.compare_table = HTML("", sizing_mode="stretch_width", css_classes=["approve-compare-table"])
            self.compare_figure = CompareFigure()
            self.compare_plot = pn.pane.Bokeh(self.compare_figure.figure, sizing_mode="stretch_width",
                                              css_classes=["approve-compare-plot"], visible=False)
            self._layout = pn.Column(HTML(_INTRO, sizing_mode="stretch_width"), self.compare_methods,
                                     self.compare_headlines, self.compare_table, self.compare_plot,
                                     sizing_mode="stretch_width")
        return self._layout

    def shown(self) -> bool:
        """Whether the tab shows its procedures (else nothing, or a note that it computes when open)."""
        c = self.model.comparison
        return c is not None and self.built and bool(self.model.compare_active or c.results)

    def draw_points(self) -> None:
        """The plot's data sources (its axes and visibility follow in :meth:`draw`)."""
        if self.shown():
            self.compare_figure.set_data(self.model.comparison, self.model.result)

    def draw(self) -> None:
        c, r = self.model.comparison, self.model.result
        if c is None or not self.built:
            return
        if not self.shown():
            self.compare_headlines.object = ('<div class="md-note">The comparison is computed when this tab is '
                                             'open.</div>')
            return
        self.compare_headlines.object = text.compare_headlines(c)
        self.compare_table.object = text.compare_table(c)
        self.compare_figure.set_frame(c, r)  # its points: draw_points
        self.compare_plot.visible = bool(c.results)
