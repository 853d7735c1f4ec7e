"""The session page's exports: the replay as a self-contained HTML report, its table as CSV, its slide.

:class:`SessionExports` is a section of :class:`~meter_dashboard.session.view.Session`: every file is built,
when asked for, from the :class:`~meter_dashboard.session.model.SessionModel`'s replay at the step shown
(:mod:`meter_dashboard.session.report`, :func:`meter_dashboard.session.text.inputs`, ``result.slide()``).
"""
from __future__ import annotations

import io

import panel as pn
import param

from ..core.report import csv_with_inputs
from ..ui.exports import Exports, RowButton
from . import text
from .model import SessionModel

__all__ = ["SessionExports"]


class SessionExports(pn.viewable.Viewer):
    """The report button (``session-report``) and the page's CSV and slide downloads."""

    model = param.ClassSelector(class_=SessionModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.report_button = RowButton("report", "⤓ Report (HTML)", ["session-report"], callback=self._report_file,
                                       filename="session-replay.html")
        # one row, as wide as its buttons, among the replay controls (they wrap on a phone)
        self.exports = Exports("session", self._file_stem, csv=self._csv_text, slide=self._slide,
                               before=[self.report_button], fit=True)
        self._on_result()

    def buttons(self) -> list:
        """The row of the report button, then the CSV and slide buttons (for the replay controls' row)."""
        return [self.exports.row]

    def __panel__(self):
        return pn.Row(*self.buttons(), sizing_mode="stretch_width")

    @param.depends("model.result", watch=True)
    def _on_result(self) -> None:
        self.exports.row.disabled = ["report"] if self.model.result is None else []

    def report(self):
        """The replay at the step shown, as a :class:`meter_dashboard.core.report.Report` (None before a trace)."""
        from .report import session_report

        m = self.model
        if m.result is None:
            return None
        note = text.steps_source_text(m.steps_origin, m.plan.steps).split(": ", 1)[1].rstrip(".")
        return session_report(m.result, position=m.position, steps_note=note)

    def _file_stem(self) -> str:
        r = self.model.result
        return "session-replay" if r is None else f"session-replay_{r.variant}_T{r.budget}"

    def _csv_text(self) -> str | None:
        r = self.model.result
        return None if r is None else csv_with_inputs(text.inputs(r), r.to_frame(), index=False)

    def _slide(self):
        r = self.model.result
        return None if r is None else r.slide()

    def _report_file(self):
        """The download button's file."""
        report = self.report()
        return io.StringIO(report.to_html() if report is not None else "")
