"""The session page's answer: the lead, the step's cards, the meter, the sentence and alarms, the steps, the history.

:class:`Answer` is a section of :class:`~meter_dashboard.session.view.Session`: what the replay says at
the step shown, declared over the model's ``result`` and ``position`` (``@param.depends``), every text
from :mod:`~meter_dashboard.session.text` through the templates of :mod:`~meter_dashboard.session.view_html`.
A step moved replaces only the panes whose HTML changed (each change of the model arrives inside one
``pn.io.hold``: one message in all); the history plots (Figures 3a, 3c) are built the first time they are opened.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import panel as pn
import param
from bokeh.events import RangesUpdate

from ..core.html import render
from ..ui.exports import lead_markup
from ..ui.meter_gauge import MeterGauge
from ..ui.style import HTML
from . import text, view_html
from .model import METER_TITLES, SessionModel
from .view_inputs import Opened

if TYPE_CHECKING:  # built when the history is first opened
    from .figures import ScorePlot, SignalPlot

__all__ = ["Answer"]

_HISTORY = "History: scores and signals per step (Fig. 3a, 3c)"


class Answer(pn.viewable.Viewer):
    """What the replay says at the step shown (the main area below the controls)."""

    model = param.ClassSelector(class_=SessionModel)

    def __init__(self, **params):
        super().__init__(**params)
        self.scores: ScorePlot | None = None  # the history plots, built when first opened
        self.signals: SignalPlot | None = None
        self.lead = HTML("", sizing_mode="stretch_width", css_classes=["session-lead-pane"])
        self.title = HTML("", sizing_mode="stretch_width", css_classes=["session-heading"])
        self.cards = HTML("", sizing_mode="stretch_width", css_classes=["session-cards"])
        # the sentence, what the signal means and the alarms: one pane, they change together
        self.sentence = HTML("", sizing_mode="stretch_width", css_classes=["session-sentence", "session-alarms"])
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["session-steps"])
        self.explain = HTML(view_html.notes_html(), sizing_mode="stretch_width", css_classes=["session-explain"])
        self.gauge = MeterGauge()
        self.history = Opened(_HISTORY, self._build_history, "session-history-toggle", margin=(10, 5, 4, 5))
        self._shown: object = None  # the replay whose lead, title and meter are on screen
        self._refresh()

    def head(self) -> list:
        """What comes above the replay controls: the lead and the trace's title."""
        return [self.lead, self.title]

    def body(self) -> list:
        """What comes below them: cards, meter, sentence and alarms, steps, history, notes."""
        return [self.cards, self.gauge, self.sentence, self.table, *self.history.parts(), self.explain]

    def __panel__(self):
        column = pn.Column(*self.head(), *self.body(), sizing_mode="stretch_width")
        self.history.layout = column
        return column

    # ------------------------------------------------------------------ the history
    def _build_history(self) -> pn.Column:
        """The plots of Figures 3a and 3c (Bokeh), built the first time the history is opened."""
        from .figures import ScorePlot, SignalPlot

        dark = pn.config.theme == "dark"
        self.scores, self.signals = ScorePlot(dark=dark), SignalPlot(dark=dark)
        for plot in (self.scores, self.signals):
            plot.figure.on_event(RangesUpdate, functools.partial(self._on_zoom, plot))
        self.score_pane = pn.pane.Bokeh(self.scores.figure, sizing_mode="stretch_width", css_classes=["session-scores"])
        self.signal_pane = pn.pane.Bokeh(self.signals.figure, sizing_mode="stretch_width",
                                         css_classes=["session-signals"])
        self._draw_history()
        return pn.Column(self.score_pane, self.signal_pane, sizing_mode="stretch_width", margin=0,
                         css_classes=["session-history"])

    def _draw_history(self) -> None:
        r = self.model.result
        if self.scores is None or self.signals is None or r is None:
            return
        self.scores.update(r)
        self.signals.update(r)
        step = r.step(min(self.model.position, len(r) - 1))["step"]
        self.scores.move_cursor(step)
        self.signals.move_cursor(step)

    def _on_zoom(self, plot, event) -> None:
        """Zooming a long trace's plot redraws the visible steps in more detail."""
        from .figures import LOD_POINTS

        if plot.result is not None and len(plot.result) > LOD_POINTS:
            plot.show_window(event.x0, event.x1)

    # ------------------------------------------------------------------ rendering
    @param.depends("model.result", "model.position", watch=True)
    def _refresh(self) -> None:
        """The replay's lead, title and meter when it is new; the step shown in every case."""
        r = self.model.result
        if r is not self._shown:
            self._shown = r
            if not self._show_result():
                return
        if r is not None:
            self._show_position(min(self.model.position, len(r) - 1))

    def _show_result(self) -> bool:
        """The replay's lead, title, meter and history (False: no trace loaded, and the page says so)."""
        r = self.model.result
        if r is None:
            self.title.object = render("session/templates/note.html", text="Load a trace to replay it.")
            self.lead.object = ""
            return False
        self.lead.object = lead_markup(r.lead(), "session")
        _set(self.title, view_html.title_html(r))
        self._draw_history()
        self.gauge.param.update(ranges=list(r.settings["ranges"]), epsilon=list(r.settings["epsilon"]),
                                meter_name=METER_TITLES[r.variant])
        return True

    def _show_position(self, i: int) -> None:
        """The step at position ``i``: each piece is replaced only when its content changed."""
        r = self.model.result
        d = r.step(i)
        if self.scores is not None and self.signals is not None:
            self.scores.move_cursor(d["step"])
            self.signals.move_cursor(d["step"])
        g = text.guarantee_at(r, i)
        self.gauge.param.update(empirical_overfitting=d["empirical_overfitting"], signal=d["signal"],
                                incremental_signal=d["incremental_signal"], epsilon_shown=d["epsilon"],
                                supported_epsilon=g.holds if g.state == "short" else None,
                                epsilon_note=text.gauge_note(g))
        _set(self.cards, view_html.cards_html(r, i))
        _set(self.sentence, view_html.answer_html(r, i) + view_html.alarms_html(r, i))
        _set(self.table, view_html.steps_table_html(r, i))


def _set(pane, html: str) -> None:
    """Replace a pane's HTML only when it changed (an unchanged piece sends nothing)."""
    if pane.object != html:
        pane.object = html
