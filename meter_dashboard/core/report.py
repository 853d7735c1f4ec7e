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
Each family builds its report with these few calls: the session replay's
(:func:`meter_dashboard.session.report.session_report`) and the planner's
(:func:`meter_dashboard.meter.report.plan_report`).

Example
-------
>>> report = Report("Plan", "ten steps")
>>> report.paragraph("38,005 labels support 10 steps.")
>>> "cdn.bokeh.org" in report.to_html()
False
"""
from __future__ import annotations

import base64
import html
import io
import os
from datetime import datetime, timezone

__all__ = ["Report", "REPORT_CSS", "result_report", "frame_rows", "csv_with_inputs"]

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

    def link(self, text: str, href: str) -> None:
        """A line with one link; only ``http(s)`` addresses become links (anything else stays text)."""
        if href.startswith(("http://", "https://")):
            self._blocks.append(("html", f'<p>{_esc(text)} <a href="{_esc(href)}">{_esc(href)}</a></p>'))
        else:
            self.paragraph(f"{text} {href}")

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

    def image(self, svg: str, alt: str) -> None:
        """An SVG picture (a slide), embedded as a ``data:`` image: it opens offline and runs no script."""
        data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        self._blocks.append(("html", f'<p class="md-plot"><img src="data:image/svg+xml;base64,{data}" alt="{_esc(alt)}" '
                                     'style="max-width: 100%; height: auto;"></p>'))

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


def frame_rows(frame) -> tuple:
    """A pandas DataFrame as (headers, rows, numeric flags): its index (when named) first, cells as text."""
    from .display import cell_text

    named = frame.index.name is not None
    headers = ([str(frame.index.name)] if named else []) + [str(c) for c in frame.columns]
    kinds = ([frame.index.dtype.kind] if named else []) + [frame[c].dtype.kind for c in frame.columns]
    rows = [([cell_text(i)] if named else []) + [cell_text(v) for v in row]
            for i, row in zip(frame.index, frame.itertuples(index=False))]
    return headers, rows, [k in "iuf" for k in kinds]


def result_report(result, *, title: str | None = None, subtitle: str = "", slide=None, frame=None,
                  link: str = "") -> Report:
    """The offline report of any page's result: its plain-words answer, inputs, slide picture and table.

    ``result`` has ``slide()`` and ``to_frame()`` (every family's result object); ``slide`` and
    ``frame`` replace them when the page shows something else (the ladder's δ, a page's own table).
    """
    made = slide if slide is not None else result.slide()
    report = Report(title or made.title, subtitle)
    report.paragraph(made.lead, css_class="md-sentence")
    if link:
        report.link("This page:", link)
    report.heading("Inputs")
    report.facts(made.inputs)
    report.heading("Chart")
    report.image(made.to_svg(), made.title)
    headers, rows, numeric = frame_rows(frame if frame is not None else result.to_frame())
    report.heading("Table")
    report.table(headers, rows, numeric=numeric)
    return report


def csv_with_inputs(pairs, frame, index: bool = True) -> str:
    """A table as CSV with the inputs first as ``# name: value`` lines (pandas reads it with ``comment="#"``)."""
    buf = io.StringIO()
    for name, value in pairs:
        buf.write(f"# {name}: {value}\n".replace("\r", " "))
    frame.to_csv(buf, index=index)
    return buf.getvalue()
