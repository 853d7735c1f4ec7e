"""Issue 30 in a browser: every page leads with its answer in plain words, exports its table, slide and report,
and on a phone shows the answer first with its columns on screen.

The expected sentences come from the library functions (the page's defaults: the shipped examples); the
slide is downloaded from the page and read back (its SVG text, its PNG's text chunks).
"""
from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from importlib.resources import files

import pandas as pd
import pytest
from PIL import Image

import meter_dashboard as md
from meter_dashboard.comparison.model import load_example as compare_example
from meter_dashboard.leaderboard import text as ladder_text
from meter_dashboard.leaderboard.model import load_example as ladder_example
from meter_dashboard.session.trace import load_example as session_example

pytestmark = pytest.mark.ui

PAGES = ["planner", "session", "ci", "ladder", "compare", "approve"]


def expected_lead(name: str) -> str:
    """The page's first sentence for its default inputs, from the library (no page involved)."""
    if name == "planner":
        return md.plan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10).lead()
    if name == "session":
        return md.replay(session_example("emocontext")).lead()
    if name == "ci":
        return md.ci_labels().lead()
    if name == "ladder":
        return ladder_text.lead(md.ladder(ladder_example()), 0.05)
    if name == "compare":
        runs = compare_example()
        return md.compare(runs.a, runs.b).lead()
    trace = md.read_modification_trace(files("meter_dashboard") / "data" / "approve_refits.csv")
    return md.approve(trace, "fs-srgp").lead()


def lead(page, name):
    return page.locator(f".{name}-lead").first


def download(page, css: str) -> bytes:
    with page.expect_download(timeout=60_000) as info:
        page.locator(f".{css} button, .{css} a").first.click()
    return open(info.value.path(), "rb").read()


@pytest.mark.parametrize("name", PAGES)
def test_every_page_leads_with_plain_words_and_its_slide_holds_title_and_answer(page, server, open_page, name,
                                                                                relevant_errors):
    open_page(page, server, f"/{name}", f".{name}-lead")
    words = expected_lead(name)
    assert lead(page, name).inner_text().strip() == words
    svg = download(page, f"{name}-slide-svg").decode("utf-8")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    visible = " ".join(t.text or "" for t in root.iter(ns + "text"))
    title = root.find(ns + "title").text
    assert root.find(ns + "desc").text == words and words in visible and title in visible
    png = Image.open(io.BytesIO(download(page, f"{name}-slide-png")))
    assert png.size == (1280, 720) and png.text["Title"] == title and png.text["Description"] == words
    assert relevant_errors(page.console_errors) == []


@pytest.mark.parametrize("name", ["ci", "ladder", "compare", "approve"])
def test_every_page_exports_its_table_and_its_offline_report(page, server, open_page, name):
    open_page(page, server, f"/{name}", f".{name}-lead")
    csv = download(page, f"{name}-csv").decode("utf-8")
    frame = pd.read_csv(io.StringIO(csv), comment="#")
    assert csv.startswith("# ") and len(frame) > 0
    report = download(page, f"{name}-report").decode("utf-8")
    assert "data:image/svg+xml;base64," in report and "<script src" not in report
    import html

    assert html.escape(expected_lead(name), quote=True) in report


@pytest.mark.parametrize("name", PAGES)
def test_on_a_phone_the_answer_comes_first_with_its_columns_on_screen(browser, server, open_page, name):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    page = context.new_page()
    try:
        open_page(page, server, f"/{name}", f".{name}-lead")
        page.wait_for_timeout(500)
        answer = lead(page, name).bounding_box()
        inputs = page.locator(".md-sidebar, .ladder-controls, .compare-controls").first.bounding_box()
        assert answer["y"] < inputs["y"], f"/{name}: the inputs (y={inputs['y']}) come before the answer"
        assert answer["x"] >= 0 and answer["x"] + answer["width"] <= 390
        scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll <= inner + 1, f"/{name} is {scroll} px wide on a 390 px phone"
        # every visible cell of every table on the page ends inside the screen: nothing scrolls sideways
        cells = page.evaluate("""() => {
          const out = [];
          const walk = (root) => { for (const e of root.querySelectorAll('th, td')) {
              const r = e.getBoundingClientRect();
              if (r.width > 0 && r.height > 0) out.push([e.textContent.trim().slice(0, 30), r.right]); }
            for (const e of root.querySelectorAll('*')) if (e.shadowRoot) walk(e.shadowRoot); };
          walk(document); return out; }""")
        off = [c for c in cells if c[1] > 391]
        assert off == [], f"/{name}: cells off screen on a phone: {off[:5]}"
        if name == "ci":  # the cell: labels per commit
            per_commit = [c for c in cells if c[0] == "labels per commit"]
            assert per_commit and all(right <= 391 for _, right in per_commit)
    finally:
        context.close()
