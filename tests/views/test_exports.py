"""Issue 30, outside a browser: every page leads with its plain-words answer and exports CSV, slide and report.

Each page's first pane is its result's ``lead()``; its downloads build, from the result shown,
the table as CSV (the inputs first), the slide as PNG and SVG, and the offline report.
"""
from __future__ import annotations

import asyncio
import io
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from PIL import Image

import meter_dashboard as md
from meter_dashboard.leaderboard import text as ladder_text
from meter_dashboard.ui.exports import lead_markup


def _views() -> dict:
    return {"session": md.Session(), "ci": md.CI(), "ladder": md.Ladder(), "compare": md.Compare(),
            "approve": md.Approve()}


@pytest.fixture(scope="module")
def views():
    return _views()


def _result(name, view):
    return view.replay.result if name == "ladder" else view.model.result


def _expected_lead(name, view):
    r = _result(name, view)
    return ladder_text.lead(r, view.replay.delta) if name == "ladder" else r.lead()


def _lead_pane(name, view):
    return view.replay_lead if name == "ladder" else view.lead


def _parent(layout, target):
    """The layout that holds ``target`` directly."""
    for child in getattr(layout, "objects", []):
        if child is target:
            return layout
        found = _parent(child, target)
        if found is not None:
            return found
    return None


def _run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("name", ["session", "ci", "ladder", "compare", "approve"])
def test_every_page_leads_with_its_answer_in_plain_words(views, name):
    view = views[name]
    view.results()
    pane = _lead_pane(name, view)
    assert pane.object == lead_markup(_expected_lead(name, view), name)
    if name in ("session", "ci", "approve"):  # the first thing in the main area
        assert view.results().objects[0] is pane
    else:  # the first thing of the answer, beside (on a phone above) the section's inputs
        column = _parent(view.results(), pane)
        assert f"{name}-results" in column.css_classes and pane in column.objects[:2]  # after a "stale" note


@pytest.mark.parametrize("name", ["session", "ci", "ladder", "compare", "approve"])
def test_every_page_exports_its_table_slide_and_report(views, name):
    view = views[name]
    exports = view.exports
    lead = _expected_lead(name, view)
    csv = _run(exports.csv_file()).getvalue()
    assert csv.startswith("# ")
    frame = pd.read_csv(io.StringIO(csv), comment="#")
    assert len(frame) == len(_result(name, view).to_frame())
    svg = _run(exports.svg_file()).getvalue().decode("utf-8")
    assert ET.fromstring(svg).find("{http://www.w3.org/2000/svg}desc").text == lead
    png = Image.open(_run(exports.png_file()))
    assert png.text["Description"] == lead
    assert exports.svg.filename.endswith(".svg") and exports.png.filename.endswith(".png")
    if name != "session":  # the session's report is its own (Report (HTML) beside these buttons)
        report = _run(exports.report_file()).getvalue()
        assert "data:image/svg+xml;base64," in report


def test_the_planner_leads_with_plain_words_and_offers_its_slide():
    planner = md.Planner()
    r = planner.plan.result
    html = planner.headlines.object
    assert '<p class="md-lead page-lead planner-lead">' + r.lead() + "</p>" in html
    svg = _run(planner.share.slides.svg_file()).getvalue().decode("utf-8")
    assert r.lead() in svg and planner.share.slides.svg.filename.startswith("meter-plan_T10")
