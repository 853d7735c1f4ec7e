"""The /ci page's check of a commit trace: a shipped example or an upload, replayed under the condition.

:class:`Replay` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.ci.CIModel`: the
trace's source (an example, a dropped CSV, which firstChange signal raises the alarm), a refused
file named beside it, the replay's summary, a plot of n per commit with pass/fail colours, o of
the active model and the new-testset alarms (its sources updated in place), and a table of the
first :data:`~.view_html.TABLE_ROWS` commits.
"""
from __future__ import annotations

import math

import numpy as np
import panel as pn
import param
from bokeh.core.properties import field, value
from bokeh.models import BasicTicker, ColumnDataSource, HoverTool, Legend, LegendItem, Scatter, Step, VSpan

from ..core.html import render, snippet
from ..core.plots import figure, glyph
from ..ui.form import Box, Field, Form, Note
from ..ui.lazy import WhenSeen
from ..ui.style import PALETTE, error_html
from ..ui.upload import GuardedFileDropper
from . import CIModel
from .view_html import html_pane, replay_summary_html, replay_table_html
from .view_inputs import choice_field

__all__ = ["Replay", "EXAMPLES"]

#: Commits drawn in the replay plot (every k-th beyond this many).
PLOT_POINTS = 5000
#: The replay plot's height with its caption (px): below the fold of a served page at 1440×900, it is built
#: when it comes near the screen, in a box of this height (ui.lazy.WhenSeen).
PLOT_HEIGHT = 299
_REPLAY_TITLE = "Replay of the commit trace"
_REPLAY_CAPTION = "n of each commit (green: pass, red: fail); the grey steps: o, the active model's accuracy."
#: The trace menu: label -> shipped file ('' for none).
EXAMPLES = {
    "Example: 40 commits (n, o, d per commit)": "ci_commits.csv",
    "Example: 8 EmoContext-shaped models (predictions)": "ci_predictions.csv",
    "No trace": "",
}
_POINTS = ("x", "n", "o", "color", "signal", "commit")


def _plot_step(rep) -> int:
    """The replay plot shows every k-th commit: at most :data:`PLOT_POINTS` points."""
    return max(1, math.ceil(len(rep) / PLOT_POINTS))


def _note(text: str, width: int):
    return html_pane(f"<span class='md-note'>{text}</span>", margin=(0, 5), width=width, sizing_mode="fixed")


class Replay(pn.viewable.Viewer):
    """A commit trace replayed: pass/fail per commit, new-testset alarms, the labels it would need."""

    model = param.ClassSelector(class_=CIModel)
    trace = param.String(default="ci_commits.csv", doc="The shipped example first shown ('' for none).")
    upload = param.ClassSelector(class_=GuardedFileDropper, doc="The drop area of a CSV (made by the section).")

    def __init__(self, **params):
        super().__init__(**params)
        self._build_sources()
        self.trace_error = html_pane(margin=(0, 5), css_classes=["ci-trace-error"])
        self.replay_summary = html_pane(css_classes=["ci-replay-summary"])
        self.replay_table = html_pane(css_classes=["ci-replay"])
        self._build_plot()
        self._layout = self._build_layout()

    def __panel__(self) -> pn.Column:
        return self._layout

    def _build_sources(self) -> None:
        m = self.model
        # the trace menu and the alarm's buttons: a form each (one Bokeh model), beside the drop area
        self.example = Box(value=next((k for k, v in EXAMPLES.items() if v == self.trace), "No trace"))
        self.example.param.watch(self._on_example, "value")
        self.example_form = Form([Field("example", "Commit trace", self.example, kind="select",
                                        options=[(k, k) for k in EXAMPLES], classes=("ci-example",))],
                                 prefix="ci-trace", width=340, sizing_mode="fixed", css_classes=["ci-example-form"])
        # bounded before it is complete: the browser refuses a file over the limit, the server counts chunks
        self.upload = GuardedFileDropper(parameter="commit trace", layout="compact", height=80, width=260,
                                         accepted_filetypes=[".csv", "text/csv", "text/plain"], checked=True,
                                         css_classes=["ci-upload"])
        self.upload.param.watch(self._on_upload, "value")
        self.alarm_form = Form([Note("<span class='md-note'>firstChange alarm on</span>"),
                                choice_field(m, "alarm_on", "firstChange alarm on", "ci-alarm-on")],
                               prefix="ci-alarm", width=180, sizing_mode="fixed", css_classes=["ci-alarm-form"])
        self.alarm_on = self.alarm_form.box("alarm_on")

    def _build_plot(self) -> None:
        """The plot's sources (they follow the model at once); the plot itself when first seen (:meth:`_plot`)."""
        self.replay_source = ColumnDataSource({k: [] for k in _POINTS})
        # the new-testset alarms of the chosen adaptivity: one glyph, its positions updated in place
        self.alarm_source = ColumnDataSource({"x": []})
        self.replay_fig = None
        self.replay_box: pn.Column | None = None
        self._title = _REPLAY_TITLE
        self.plot_seen = WhenSeen(self._plot, height=PLOT_HEIGHT, text="The replay is drawn when you scroll to it")

    def _plot(self) -> pn.Column:
        """The replay plot over the sources, with its caption: made the first time it comes near the screen."""
        rfig = figure(height=280, x_axis_label="commit", y_axis_label="accuracy", title=self._title)
        o = glyph(rfig, self.replay_source, Step(x="x", y="o", mode="center", line_color="#888888", line_width=1.5))
        n = glyph(rfig, self.replay_source, Scatter(x="x", y="n", size=9, fill_color=field("color"),
                                                    line_color=field("color"), hatch_color=field("color")))
        glyph(rfig, self.alarm_source, VSpan(x="x", line_color=PALETTE[1], line_dash="dashed", line_width=2))
        rfig.add_layout(Legend(items=[LegendItem(label=value("o (active model)"), renderers=[o]),
                                      LegendItem(label=value("n (commit)"), renderers=[n])]))
        rfig.xaxis.major_label_policy = rfig.yaxis[0].major_label_policy  # stateless: one model for both axes
        rfig.add_tools(HoverTool(tooltips=[("commit", "@commit"), ("n", "@n{0.0000}"), ("o", "@o{0.0000}"),
                                           ("signal", "@signal")]))
        rfig.legend.location = "bottom_right"
        rfig.xaxis.ticker = BasicTicker(min_interval=1)
        self.replay_fig = rfig
        # Shown and hidden through a layout around it: toggling a Bokeh pane's own ``visible``
        # makes Panel copy the figure's stylesheet objects into a list of strings (TypeError).
        self.replay_box = pn.Column(html_pane(f'<span class="md-note">{_REPLAY_CAPTION}</span>', margin=(0, 10)),
                                    pn.pane.Bokeh(rfig, sizing_mode="stretch_width"), sizing_mode="stretch_width",
                                    css_classes=["ci-replay-plot"])  # hidden with its place (_show_plot)
        return self.replay_box

    def _build_layout(self) -> pn.Column:
        # the sources wrap onto several lines on a narrow screen (a phone) instead of widening the page
        sources = pn.FlexBox(self.example_form, pn.Column(_note("or upload a CSV", 260), self.upload, width=270),
                             self.alarm_form, flex_wrap="wrap", sizing_mode="stretch_width")
        return pn.Column(html_pane('<h3 class="md-subtitle">Replay a commit trace</h3>'), sources, self.trace_error,
                         self.replay_summary, self.plot_seen, self.replay_table, sizing_mode="stretch_width")

    # ------------------------------------------------------------------ what a person did
    def _on_example(self, event):
        self.model.load_example(EXAMPLES[event.new])

    async def _on_upload(self, event):
        for name, data in (event.new or {}).items():  # the latest file only
            data = data.encode("utf-8") if isinstance(data, str) else data
            if await self.model.load_trace_async(data, name=name):
                self.upload.accept()
            else:
                self.upload.refuse(self.model.trace_error)

    # ------------------------------------------------------------------ what the model says
    @param.depends("model.replay", "model.trace_error", "model.replaying", "upload.upload_error")
    def show(self) -> None:
        """The replay's summary, table, plot title and box (its points: :meth:`show_points`)."""
        m = self.model
        rep = m.replay
        # a file refused while it arrived (too big, damaged) or when read (a bad cell): the newest message
        self.trace_error.object = error_html(self.upload.upload_error or m.trace_error)
        if m.replaying:
            self.replay_summary.object = str(snippet('<p class="md-note">Replaying {{ n | integer }} commits of '
                                                     '{{ source }}…</p>', n=len(m.trace),
                                                     source=m.trace.source or "the trace"))
            return
        if rep is None:
            self.replay_summary.object = render("ci/templates/no_trace.html")
            self.replay_table.object = ""
            self._show_plot(False)
            return
        self._show_plot(True)
        self.replay_summary.object = replay_summary_html(rep, m)
        self.replay_table.object = replay_table_html(rep)
        step = _plot_step(rep)
        self._title = _REPLAY_TITLE + (f" (every {step:,}th of {len(rep):,} commits shown)" if step > 1 else "")
        if self.replay_fig is not None:
            self.replay_fig.title.text = self._title

    def _show_plot(self, visible: bool) -> None:
        self.plot_seen.holder.visible = visible
        if self.replay_box is not None:
            self.replay_box.visible = visible

    @param.depends("model.replay", "model.replaying")
    def show_points(self) -> None:
        """The replay plot's sources (empty without a replay; unchanged while one is computed)."""
        m = self.model
        if m.replaying:
            return
        if m.replay is None:
            self.replay_source.data = {k: [] for k in _POINTS}
            self.alarm_source.data = {"x": []}
            return
        self._plot_replay(m.replay, m.adaptivity)

    def _plot_replay(self, rep, adaptivity: str):
        """n per commit and o of the active model; at most :data:`PLOT_POINTS` commits (every k-th beyond)."""
        cols = rep.columns
        index = np.arange(0, len(rep), _plot_step(rep))
        passed = cols["passed"][index]
        self.replay_source.data = {
            "x": index + 1,
            "n": np.asarray(cols["n"], dtype=float)[index],
            "o": np.asarray(cols["o"], dtype=float)[index],
            "color": np.where(passed, PALETTE[2], PALETTE[5]),
            "signal": np.where(passed, "pass", "fail"),
            "commit": np.asarray(cols["commit"], dtype=str)[index],  # a str array: not walked for Bokeh models
        }
        alarms = np.asarray(rep.alarms(adaptivity), dtype=float)
        self.alarm_source.data = {"x": alarms[:: max(1, math.ceil(alarms.size / PLOT_POINTS))] + 0.5}
