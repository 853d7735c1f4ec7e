"""Issue 29, outside a browser: every page's row of downloads is one model that makes the file a click asks for.

A :class:`~meter_dashboard.ui.exports.DownloadRow` holds every button of the row (its classes as the
pages' browser tests find them); a click's message (``{"kind": ...}``) gets back, through
``_send_msg``, the same bytes as the page's file function, with the file's name and type; a failure
gets back a message saying what failed and what to do, and the row keeps working; anything else is ignored.
"""
from __future__ import annotations

import asyncio
import base64
import html
import logging

import pytest
from bokeh.document import Document
from bokeh.models.css import StyleSheet

import meter_dashboard as md
from meter_dashboard.ui.exports import DownloadRow, Exports

#: The classes of every button of each page's row (what tests/ui find with ``.{class} button``).
CLASSES = {
    "planner": ["planner-csv", "planner-report", "planner-png", "planner-copy",
                "planner-slide-png md-export-slide-png", "planner-slide-svg md-export-slide-svg"],
    "session": ["session-report", "session-csv md-export-csv", "session-slide-png md-export-slide-png",
                "session-slide-svg md-export-slide-svg"],
    **{name: [f"{name}-csv md-export-csv", f"{name}-slide-png md-export-slide-png",
              f"{name}-slide-svg md-export-slide-svg", f"{name}-report md-export-report"]
       for name in ("ci", "ladder", "compare", "approve")},
}
VIEWS = {"planner": md.Planner, "session": md.Session, "ci": md.CI, "ladder": md.Ladder, "compare": md.Compare,
         "approve": md.Approve}


@pytest.fixture(scope="module")
def views():
    return {name: make() for name, make in VIEWS.items()}


def _row(view) -> DownloadRow:
    return view.share.row if isinstance(view, md.Planner) else view.exports.row


def _models(viewable) -> list:
    """The Bokeh models ``viewable`` puts into a document (stylesheets aside: they are shared by every widget)."""
    root = viewable.get_root(Document())
    return [m for m in root.references() if not isinstance(m, StyleSheet)]


def _click(row: DownloadRow, data) -> list:
    """What the row sends back to the browser for the message ``data``."""
    sent: list = []
    row._send_msg = sent.append  # the browser's side of the wire
    asyncio.run(row._handle_msg(data))
    return sent


@pytest.mark.parametrize("name", list(VIEWS))
def test_the_row_is_one_model_with_every_button_and_its_classes(views, name):
    row = _row(views[name])
    assert isinstance(row, DownloadRow)
    assert [spec["classes"] for spec in row.buttons] == CLASSES[name]
    models = _models(row)
    # the component and its state: one pair, however many buttons (four FileDownloads and a FlexBox were five)
    assert len(models) == 2, [type(m).__name__ for m in models]


def test_a_click_gets_back_the_pages_file_with_its_name_and_type(views):
    view = views["ci"]
    exports = view.exports
    expected = {"csv": asyncio.run(exports.csv_file()).getvalue().encode("utf-8"),
                "slide-svg": asyncio.run(exports.svg_file()).getvalue(),
                "report": asyncio.run(exports.report_file()).getvalue().encode("utf-8")}
    stem = exports.stem()
    types = {"csv": ("csv", "text/csv"), "slide-svg": ("svg", "image/svg+xml"), "report": ("html", "text/html")}
    for kind, content in expected.items():
        (msg,) = _click(exports.row, {"kind": kind})
        suffix, mime = types[kind]
        assert msg["kind"] == kind and msg["filename"] == f"{stem}.{suffix}" and msg["mime"] == mime
        assert base64.b64decode(msg["data"]) == content
    (msg,) = _click(exports.row, {"kind": "slide-png"})
    assert msg["mime"] == "image/png" and base64.b64decode(msg["data"])[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_planners_downloads_are_named_by_the_plan():
    planner = md.Planner(budget=20_000)
    stem = "meter-plan_T10_delta0.01_eps0.01-0.05_m5_budget20000"
    (msg,) = _click(planner.share.row, {"kind": "csv"})
    assert msg["filename"] == f"{stem}.csv" and base64.b64decode(msg["data"]).decode("utf-8") == \
        planner.share.csv_file().getvalue()
    (msg,) = _click(planner.share.row, {"kind": "report"})
    report = base64.b64decode(msg["data"]).decode("utf-8")
    assert msg["filename"] == f"{stem}.html" and html.escape(planner.plan.result.lead(), quote=True) in report
    # the plots and the summary are the browser's own actions: nothing to make on the server
    assert _click(planner.share.row, {"kind": "copy"}) == [] and _click(planner.share.row, {"kind": "png"}) == []
    assert {spec["client"] for spec in planner.share.row.buttons} == {"", "plots-png", "copy-summary"}
    assert '"copy-summary"' in type(planner.share.row)._esm and '"plots-png"' in type(planner.share.row)._esm


def test_the_session_report_is_its_own_file_and_waits_for_a_trace(views):
    session = views["session"]
    (msg,) = _click(session.exports.row, {"kind": "report"})
    assert msg["filename"] == "session-replay.html"
    report = base64.b64decode(msg["data"]).decode("utf-8")  # the replay's report (its plots' ids differ each time)
    assert report.startswith("<!DOCTYPE html>") and html.escape(session.model.result.lead(), quote=True) in report
    assert session.exports.row.disabled == []
    empty = md.Session(example=None)  # no trace yet: nothing to report
    assert empty.model.result is None and empty.exports.row.disabled == ["report"]
    empty.model.apply(empty.model.prepare_trace(session.model.trace, None))
    assert empty.model.result is not None and empty.exports.row.disabled == []


@pytest.mark.parametrize("data", [{"kind": "nothing"}, {"kind": ["csv"]}, {"kind": "__init__"}, "csv", None, 42,
                                  {"code": "alert(1)"}])
def test_anything_but_a_known_kind_is_ignored(data, caplog):
    exports = Exports("t", lambda: "t", csv=lambda: "a,b\n1,2\n")
    with caplog.at_level(logging.WARNING):
        assert _click(exports.row, data) == []
    assert "ignored a request" in caplog.text


def test_a_failure_says_what_failed_and_the_row_keeps_working(caplog):
    calls: list = []

    def csv():
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk full")
        return "a,b\n1,2\n"

    exports = Exports("t", lambda: "t_file", csv=csv)
    with caplog.at_level(logging.ERROR):
        (msg,) = _click(exports.row, {"kind": "csv"})
    assert msg["kind"] == "csv" and "data" not in msg
    assert msg["error"].startswith("Table (CSV) could not be made (OSError: disk full)") and "Try again" in msg["error"]
    assert "Table (CSV) failed" in caplog.text and "disk full" in caplog.text  # logged with its traceback
    (msg,) = _click(exports.row, {"kind": "csv"})
    assert msg["filename"] == "t_file.csv" and base64.b64decode(msg["data"]) == b"a,b\n1,2\n"


def test_the_row_keeps_the_height_its_lines_will_take_at_each_width():
    from meter_dashboard.ui.exports import _line_heights, _reserve_css

    four = ((180, 36),) * 4  # four buttons of at most 170 px (and their margins)
    assert _line_heights(four) == [(0, 144), (360, 72), (720, 36)]
    # the planner's: four of 200 px (two taller, "default"), then two slide buttons; the widest wins per line
    planner = ((210, 36), (210, 36), (210, 39), (210, 39), (180, 36), (180, 36))
    assert _line_heights(planner)[-1] == (1200, 39) and (840, 75) in _line_heights(planner)
    css = _reserve_css(four, False)
    assert "container-type: inline-size" in css and "@container (min-width: 720px) { :host > div:empty { min-height: 36px; } }" in css
    row = md.CI().exports.row
    assert _reserve_css(four, False) in row.stylesheets
    # among the session's controls: the first button's place, then the others'
    session = md.Session().exports.row
    assert "md-dl-inline" in session.css_classes
    widths = [spec["width"] for spec in session.buttons]
    inline = [s for s in session.stylesheets if "::before" in s][0]
    assert f"width: {widths[0]}px" in inline and f"width: {sum(widths[1:]) + 2 * 2 * 5}px" in inline
