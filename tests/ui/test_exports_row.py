"""Issue 29 in a browser: a page's row of downloads (one model) saves every file, from the mouse and the keyboard.

The CI page (1440×900) saves its table, slide (PNG, SVG) and report, each named by the page's
inputs and not empty; a button focused with the keyboard saves its file on Enter; while a file is
made its button says it is busy, and says so no more once saved.  The planner's row copies the
summary for the minutes (a browser action of the same row).
"""
from __future__ import annotations

import pytest

import meter_dashboard as md

pytestmark = pytest.mark.ui

KINDS = {"csv": ".csv", "slide-png": ".png", "slide-svg": ".svg", "report": ".html"}


@pytest.fixture
def desk(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.console_errors = []
    page.on("pageerror", lambda exc: page.console_errors.append(str(exc)))
    yield page
    context.close()


def test_every_button_of_the_row_saves_its_named_file(desk, server, open_page, relevant_errors):
    open_page(desk, server, "/ci", ".ci-lead")
    stem = md.CI().exports.stem()
    row = desk.locator(".ci-exports").first
    assert row.locator("button").count() == 4  # one model holds the row's four buttons
    for kind, suffix in KINDS.items():
        button = desk.locator(f".ci-{kind}.md-export-{kind} button").first
        assert button.get_attribute("type") == "button"
        with desk.expect_download(timeout=60_000) as info:
            button.click()
        assert info.value.suggested_filename == stem + suffix
        assert len(open(info.value.path(), "rb").read()) > 100
        assert button.get_attribute("aria-busy") is None and button.is_enabled()
    assert relevant_errors(desk.console_errors) == []


def test_a_focused_button_saves_its_file_on_enter(desk, server, open_page):
    open_page(desk, server, "/ci", ".ci-lead")
    button = desk.locator(".ci-csv button").first
    button.focus()
    assert button.evaluate("(b) => b.getRootNode().activeElement === b")
    with desk.expect_download(timeout=60_000) as info:
        desk.keyboard.press("Enter")
    text = open(info.value.path(), encoding="utf-8").read()
    assert info.value.suggested_filename.endswith(".csv") and text.startswith("# ")


def test_the_button_is_busy_while_its_file_is_made(desk, server, open_page):
    open_page(desk, server, "/ci", ".ci-lead")
    button = desk.locator(".ci-report button").first
    # the moment of the click, seen from the page: the button says it is busy until the file arrives
    busy = button.evaluate("""(b) => { b.click(); return [b.getAttribute("aria-busy"), b.getAttribute("aria-disabled")]; }""")
    assert busy == ["true", "true"]
    desk.wait_for_function("""(b) => b.getAttribute("aria-busy") === null""", arg=button.element_handle(),
                           timeout=60_000)


def test_the_planner_row_copies_the_summary(desk, server, open_page):
    open_page(desk, server, "/planner?epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.01&steps=10&budget=20000",
              ".label-count-incremental")
    desk.locator(".planner-copy button").first.click()
    desk.wait_for_function("() => navigator.clipboard.readText().then((t) => t.includes('Shared plan: http'))",
                           timeout=10_000)
    summary = desk.evaluate("() => navigator.clipboard.readText()")
    assert "38,005" in summary and "T (development steps): 10" in summary


#: Drawn vs kept: the row's script arrives a frame or more after the page's other parts, so the row keeps its place
#: beforehand (its stylesheet): emptied again, the row must take the same room, and what follows it stay put.
PLACE = """([host, after]) => {
  const inner = host.shadowRoot.querySelector(".md-dl-row").parentElement, drawn = [...inner.childNodes];
  const where = () => [host.getBoundingClientRect().height, after.getBoundingClientRect().x,
                       after.getBoundingClientRect().y].map(Math.round);
  const shown = where();
  inner.replaceChildren();
  const kept = where();
  inner.replaceChildren(...drawn);
  return [shown, kept];
}"""


@pytest.mark.parametrize("width", [1440, 390])
@pytest.mark.parametrize("name, query, ready, after", [
    ("ci", "", ".ci-lead", ".ci-clauses"),
    ("planner", "?epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.01&steps=10", ".label-count-incremental", ".planner-pin"),
    ("session", "", ".session-lead", ".next-alarm"),
])
def test_the_row_keeps_its_place_until_its_script_draws_it(browser, server, open_page, name, query, ready, after,
                                                            width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        open_page(page, server, f"/{name}{query}", ready)
        host = page.locator(f".{name}-csv button").first.evaluate_handle("(b) => b.getRootNode().host")
        follower = page.locator(after).first.element_handle()
        shown, kept = page.evaluate(PLACE, [host, follower])
        assert kept == shown, (name, width, shown, kept)
    finally:
        context.close()
