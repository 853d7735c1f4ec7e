"""The self-contained HTML report of a replayed session (Bokeh, never Panel).

Built with :class:`meter_dashboard.core.report.Report`: the inputs, the headline sentence, the
alarms, the meter and history plots, the steps and the assumptions.  The CLI
(``meter-dashboard replay ... --report session.html``), the session page's button and
notebooks (``md.session_report(result)``) build the same file.

Example
-------
>>> from meter_dashboard.session.model import replay
>>> from meter_dashboard.session.trace import load_example
>>> html = session_report(replay(load_example("emocontext"), delta=0.1)).to_html()
>>> "cdn.bokeh.org" in html, "25,376" in html
(False, True)
"""
from __future__ import annotations

from ..core.report import Report

__all__ = ["session_report"]

_TABLE_ROWS = 200
_EDGE_ROWS = 20


def session_report(result, *, position: int | None = None, steps_note: str = "", title: str | None = None) -> Report:
    """The report of a replayed session: inputs, sentence, alarms, plots, steps, assumptions.

    Parameters
    ----------
    result : ReplayResult
        From :func:`meter_dashboard.session.model.replay` or ``SessionModel.result``.
    position : int, optional
        0-based step the sentence and the meter describe (default: the last).
    steps_note : str
        Where T came from (e.g. ``"the trace's length"``), shown beside T.
    title : str, optional

    Returns
    -------
    Report

    References
    ----------
    Hubis, Wu & Zhang (2019), ease.ml/meter: Sections 3.1-3.4 and Figures 1-3 (the meter, its
    signals and the EmoContext case study).
    """
    from . import text
    from ..core import formatting as fmt
    from ..core.gauge import GaugeFigure
    from .figures import ScorePlot, SignalPlot
    from .replay import METER_TITLES

    from ..core.validation import InputError, check_instance, check_int
    from .replay import ReplayResult

    check_instance("result", result, ReplayResult, "a ReplayResult (what md.replay returns)")
    t = result.trace
    i = len(result) - 1 if position is None else min(max(check_int("position", position), 0), len(result) - 1)
    if title is not None and not isinstance(title, str):
        raise InputError("title", "a text", title)
    if not isinstance(steps_note, str):
        raise InputError("steps_note", "a text", steps_note)
    d = result.step(i)
    report = Report(title or f"Session replay: {t.name}",
                    f"{len(t):,} steps · {t.metric} · the {METER_TITLES[result.variant]} (ease.ml/meter)")
    g = text.guarantee_at(result, i)
    report.paragraph(result.lead(), css_class="md-sentence")  # the answer in plain words, first (as on the page)
    report.paragraph(text.sentence(result, i), css_class="md-sentence", badge="SYNTHETIC" if t.synthetic else None)
    planned = f"{g.planned_label} {fmt.number(g.planned)}" + (f" {g.planned_note}" if g.planned_note else "")
    report.callout(f"Guaranteed bound at step {d['step']:,}", f"{g.value} — {g.note}"
                   + ("" if g.state in ("holds", "unchecked") else f"; {planned}"), "alarm" if g.alarm else "note")
    report.paragraph(f"What signal {g.signal} means: "
                     + text.signal_meaning(g.signal, result.settings["ranges"], g.holds, g.delta))
    report.paragraph("Steps left: " + text.steps_left_text(result), css_class="session-steps-answer")
    report.paragraph(text.needed_text(result))
    if t.provenance:
        report.paragraph(t.provenance, css_class="md-sub")
    report.heading("Inputs")
    report.facts(text.inputs(result, steps_note))
    report.heading("Alarms and notes")
    found = list(result.alarms) + list(result.notes)
    if not found:
        report.paragraph("No alarms.")
    for a in found:
        report.callout(("Alarm" if a.level == "alarm" else "Note") + (f" (step {a.step:,})" if a.step is not None else ""),
                       a.message, a.level)
    report.heading(f"The meter at step {d['step']:,}")
    gauge = GaugeFigure()
    gauge.update(result.settings["ranges"], result.settings["epsilon"], d["empirical_overfitting"], d["signal"],
                 d["incremental_signal"], d["epsilon"], g.holds if g.state == "short" else None,
                 METER_TITLES[result.variant], text.gauge_note(g) or None)
    report.figure(gauge.figure)
    report.heading("History")
    for plot in (ScorePlot(), SignalPlot()):
        plot.update(result)
        plot.move_cursor(d["step"])
        report.figure(plot.figure)
    report.heading("Steps")
    _steps_table(report, result, i)
    report.heading("What each signal means")
    report.items(text.signal_meanings(result.settings["ranges"], result.settings["epsilon"], result.settings["delta"]))
    report.heading("Assumptions and how to read this report")
    report.items(text.READING_NOTES)
    return report


def _steps_table(report: Report, result, current: int) -> None:
    from . import text

    n = len(result)
    shown = result.listed_positions(_TABLE_ROWS, _EDGE_ROWS, also=[current])
    headers = text.step_headers(result)
    tenants = result.trace.has_tenants
    numeric = [True] + ([False] if tenants else []) + [True] * 7 + [False]
    rows: list[list[object] | None] = []  # None: rows left out ("…")
    highlight: list[int] = []
    for k, i in enumerate(shown):
        if k and i != shown[k - 1] + 1:
            rows.append(None)
        if i == current:
            highlight.append(len(rows))
        c = text.step_row(result, i)
        rows.append([c["step"]] + ([c["tenant"]] if tenants else []) + [
            c["val"], c["test"], c["gap"], c["signal"], c["incremental"], c["epsilon"], c["used"], c["note"]])
    caption = f"All {n:,} steps." if len(shown) == n else (
        f"{len(shown):,} of {n:,} steps: the first and last {_EDGE_ROWS}, the step described and every step "
        "with an alarm or note (meter-dashboard replay --format json lists every step).")
    report.table(headers, rows, numeric=numeric, highlight=highlight, caption=caption)
