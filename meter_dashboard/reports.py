"""Self-contained HTML reports to take out of a meeting (Bokeh, never Panel).

A report is one HTML file: the inputs, the headline sentence, the alarms, a table, the
assumptions and the plots.  Bokeh's JavaScript and CSS are inlined
(``bokeh.resources.INLINE``), so the file opens offline, in a mail client's browser or
an air-gapped meeting room, with no request to any server.  The CLI
(``meter-dashboard replay ... --report session.html``), the session page's button and
notebooks build the same file.

The small public API, for every family of results:

- :class:`Report` - a title, then blocks in order: :meth:`Report.heading`,
  :meth:`Report.paragraph`, :meth:`Report.facts` (a two-column table of inputs),
  :meth:`Report.table`, :meth:`Report.items` (a bullet list), :meth:`Report.callout`
  (alarms, notes), :meth:`Report.figure` (any Bokeh model); then :meth:`Report.to_html`
  or :meth:`Report.save`.  Every text is escaped; nothing is evaluated.
- :func:`session_report` - the report of a replayed session (a
  :class:`~meter_dashboard.models.session.ReplayResult`).  A plan report
  (``plan_report(result)``) is the same few calls over a ``PlanResult``.

Example
-------
>>> from meter_dashboard.models.session import replay
>>> from meter_dashboard.models.trace import load_example
>>> html = session_report(replay(load_example("emocontext"), delta=0.1)).to_html()
>>> "cdn.bokeh.org" in html, "25,376" in html
(False, True)
"""
from __future__ import annotations

import html
import os
from datetime import datetime, timezone

__all__ = ["Report", "session_report", "REPORT_CSS"]

#: The report's whole stylesheet (system fonts only: nothing is fetched).
REPORT_CSS = """
body { font-family: 'Helvetica Neue', Arial, 'DejaVu Sans', sans-serif; color: #0b2a45; margin: 0; background: #fff; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 2px solid #dde5ee; }
p, li { font-size: 14px; line-height: 1.5; } .md-sub { color: #4a5a6a; font-size: 13px; margin: 0 0 12px; }
.md-sentence { font-size: 17px; line-height: 1.5; background: #f5f8fb; border: 1px solid #dde5ee;
  border-radius: 8px; padding: 12px 16px; }
.md-badge { display: inline-block; font-size: 11px; font-weight: 700; padding: 2px 7px; border-radius: 10px;
  background: #fff3cd; color: #7a5200; border: 1px solid #f0d58c; margin-left: 6px; vertical-align: middle; }
.md-callout { border-radius: 6px; padding: 7px 11px; font-size: 13px; margin: 5px 0; }
.md-callout.alarm { color: #8a1c00; background: #fff1ec; border: 1px solid #f3c2b0; }
.md-callout.note { color: #34495e; background: #f5f8fb; border: 1px solid #dde5ee; }
table { border-collapse: collapse; font-size: 13px; width: 100%; font-variant-numeric: tabular-nums; }
th { text-align: left; color: #4a5a6a; border-bottom: 2px solid #dde5ee; padding: 5px 8px; }
td { border-bottom: 1px solid #eef2f6; padding: 5px 8px; vertical-align: top; }
td.num, th.num { text-align: right; } tr.md-highlight td { background: #e8f1fb; font-weight: 600; }
tr.md-gap td { color: #4a5a6a; text-align: center; } table.md-facts td:first-child { color: #4a5a6a; width: 34%; }
.md-plot { margin: 12px 0; } .md-scroll { overflow-x: auto; }
footer { color: #4a5a6a; font-size: 12px; margin-top: 32px; }
@media print { .md-plot { break-inside: avoid; } }
"""


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


class Report:
    """A self-contained HTML report, built block by block.

    Parameters
    ----------
    title : str
    subtitle : str, optional
        One line under the title (where the numbers come from, when).

    Examples
    --------
    >>> r = Report("Plan", "for the team")
    >>> r.paragraph("With 38,005 labels ...", css_class="md-sentence")
    >>> r.facts([("ε", "0.01, 0.02"), ("δ", "0.01")])
    >>> "38,005" in r.to_html()
    True
    """

    def __init__(self, title: str, subtitle: str = ""):
        self.title = title
        self.subtitle = subtitle
        self._blocks: list = []  # ("html", markup) or ("figure", bokeh model)

    # -- blocks
    def heading(self, text: str) -> None:
        self._blocks.append(("html", f"<h2>{_esc(text)}</h2>"))

    def paragraph(self, text: str, css_class: str | None = None, badge: str | None = None) -> None:
        cls = f' class="{_esc(css_class)}"' if css_class else ""
        tail = f'<span class="md-badge">{_esc(badge)}</span>' if badge else ""
        self._blocks.append(("html", f"<p{cls}>{_esc(text)}{tail}</p>"))

    def callout(self, label: str, text: str, level: str = "note") -> None:
        """An alarm (``level='alarm'``) or a note, in its colours."""
        level = "alarm" if level == "alarm" else "note"
        self._blocks.append(("html", f'<div class="md-callout {level}"><b>{_esc(label)}:</b> {_esc(text)}</div>'))

    def facts(self, pairs) -> None:
        """A two-column table of (name, value) pairs: the inputs."""
        rows = "".join(f"<tr><td>{_esc(k)}</td><td>{_esc(v)}</td></tr>" for k, v in pairs)
        self._blocks.append(("html", f'<table class="md-facts">{rows}</table>'))

    def items(self, texts) -> None:
        self._blocks.append(("html", "<ul>" + "".join(f"<li>{_esc(t)}</li>" for t in texts) + "</ul>"))

    def table(self, headers, rows, *, numeric=None, highlight=None, caption: str | None = None) -> None:
        """A table; ``numeric`` flags right-aligned columns, ``highlight`` row positions to stress.

        A row that is ``None`` is drawn as "…" (rows left out).
        """
        numeric = numeric or [False] * len(headers)
        highlight = set(highlight or ())
        head = "".join(f'<th class="{"num" if n else ""}">{_esc(h)}</th>' for h, n in zip(headers, numeric))
        body = []
        for k, row in enumerate(rows):
            if row is None:
                body.append(f'<tr class="md-gap"><td colspan="{len(headers)}">…</td></tr>')
                continue
            cells = "".join(f'<td class="{"num" if n else ""}">{_esc(c)}</td>' for c, n in zip(row, numeric))
            body.append(f'<tr class="{"md-highlight" if k in highlight else ""}">{cells}</tr>')
        cap = f'<p class="md-sub">{_esc(caption)}</p>' if caption else ""
        self._blocks.append(("html", f'{cap}<div class="md-scroll"><table><thead><tr>{head}</tr></thead>'
                                     f'<tbody>{"".join(body)}</tbody></table></div>'))

    def figure(self, model) -> None:
        """A Bokeh figure or layout (drawn from the data it holds; no server needed)."""
        self._blocks.append(("figure", model))

    # -- output
    def to_html(self) -> str:
        """The whole report as one HTML document (Bokeh inlined: it opens offline)."""
        from bokeh.embed import components
        from bokeh.resources import Resources

        # Bokeh's INLINE resources, its core only (no widgets, GL or MathJax: 1.3 MB), and only the inlined
        # code: an imported Panel registers extension files by relative URL, which a mailed file cannot load.
        inline = Resources(mode="inline", components=["bokeh"])
        bokeh_js = "".join(f"<script>\n{code}\n</script>\n" for code in inline.js_raw)

        figures = {f"plot{k}": block for k, (kind, block) in enumerate(self._blocks) if kind == "figure"}
        script, divs = components(figures) if figures else ("", {})
        parts = []
        for k, (kind, block) in enumerate(self._blocks):
            parts.append(f'<div class="md-plot">{divs[f"plot{k}"]}</div>' if kind == "figure" else block)
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        sub = f'<p class="md-sub">{_esc(self.subtitle)}</p>' if self.subtitle else ""
        return (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_esc(self.title)}</title>\n<style>{REPORT_CSS}</style>\n"
            f"{bokeh_js}{script}\n</head>\n<body>\n<main>\n<h1>{_esc(self.title)}</h1>\n{sub}\n"
            + "\n".join(parts)
            + f"\n<footer>Made by meter-dashboard on {stamp}. Self-contained: it needs no network.</footer>\n"
              "</main>\n</body>\n</html>\n"
        )

    def save(self, path) -> str:
        """Write the report to ``path`` (UTF-8); returns the path."""
        path = os.fspath(path)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_html())
        return path


# ============================================================================ the session report
_TABLE_ROWS = 200
_EDGE_ROWS = 20


def session_report(result, *, position: int | None = None, steps_note: str = "", title: str | None = None) -> Report:
    """The report of a replayed session: inputs, sentence, alarms, plots, steps, assumptions.

    Parameters
    ----------
    result : ReplayResult
        From :func:`meter_dashboard.models.session.replay` or ``SessionModel.result``.
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
    from .models.session_replay import METER_TITLES
    from .views import session_text as text
    from .views.session_figures import GaugeFigure, ScorePlot, SignalPlot

    t = result.trace
    i = len(result) - 1 if position is None else min(max(int(position), 0), len(result) - 1)
    d = result.step(i)
    report = Report(title or f"Session replay: {t.name}",
                    f"{len(t):,} steps · {t.metric} · the {METER_TITLES[result.variant]} (ease.ml/meter)")
    report.paragraph(text.sentence(result, i), css_class="md-sentence", badge="SYNTHETIC" if t.synthetic else None)
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
                 d["incremental_signal"], d["epsilon"], d["supported_epsilon"] if result.short_of_labels else None,
                 METER_TITLES[result.variant])
    report.figure(gauge.figure)
    report.heading("History")
    for plot in (ScorePlot(), SignalPlot()):
        plot.update(result)
        plot.move_cursor(d["step"])
        report.figure(plot.figure)
    report.heading("Steps")
    _steps_table(report, result, i)
    report.heading("Assumptions and how to read this report")
    report.items(text.READING_NOTES)
    return report


def _steps_table(report: Report, result, current: int) -> None:
    from .views import session_text as text

    n = len(result)
    shown = result.listed_positions(_TABLE_ROWS, _EDGE_ROWS, also=[current])
    headers = text.step_headers(result)
    tenants = result.trace.has_tenants
    numeric = [True] + ([False] if tenants else []) + [True] * 7 + [False]
    rows, highlight = [], []
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
