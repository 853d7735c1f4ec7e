"""Issue 30, dark mode: every text at WCAG AA (computed from the rendered colours), every widget themed."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS
from tests.ui.contrast import low_contrast, texts
from tests.ui.test_pages import READY

pytestmark = pytest.mark.ui

from meter_dashboard.approvals.model import METHOD_LABELS


def _run_fwer_simulation(page):
    page.get_by_text("Simulations", exact=True).first.click()
    for selector, value in ((".approve-fwer-replicates input", "2"), (".approve-fwer-steps input", "6")):
        box = page.locator(selector).first
        box.fill(value)
        box.press("Enter")
    page.locator(".approve-fwer-run button").first.click()
    expect(page.locator("td.approve-sim-fwer")).to_have_count(6, timeout=120_000)


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_the_procedures_names_are_readable_on_the_simulations_tab(page, server, open_page, theme):
    # "fsSRGP" on the Simulations tab was #0072B2 on the dark page: 3.6:1
    open_page(page, server, "/approve" + ("?theme=dark" if theme == "dark" else ""),
              "td.approve-decision:not(.approve-compare)")
    _run_fwer_simulation(page)
    found = texts(page)
    names = [t for t in found if t["text"] in METHOD_LABELS.values() and "method-" in t["cls"]]
    assert {t["text"] for t in names} >= set(METHOD_LABELS.values()), names  # each procedure's name, coloured
    assert all(t["ratio"] >= 4.5 for t in names), names
    fs = next(t for t in names if t["text"] == "fsSRGP")
    assert fs["ratio"] >= 4.5 and (fs["background"] != "rgb(255,255,255)") == (theme == "dark")
    assert low_contrast(page) == []
    page.screenshot(path=str(ARTIFACTS / f"approve-simulations-{theme}.png"), full_page=False)


#: The first opaque background behind an element (its own, its ancestors', across shadow roots), else the canvas.
_SURFACE = """el => { for (let x = el.parentElement || el.getRootNode().host; x; x = x.parentElement || x.getRootNode().host) {
    const c = getComputedStyle(x).backgroundColor; if (c !== 'rgba(0, 0, 0, 0)') return c; }
  return 'rgb(255, 255, 255)'; }"""


def _ratio(one: str, other: str) -> float:
    """WCAG contrast ratio of two CSS ``rgb(...)`` colours."""
    def lum(colour):
        parts = [float(v) / 255 for v in colour[colour.index("(") + 1:colour.index(")")].split(",")[:3]]
        r, g, b = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in parts]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    a, b = sorted((lum(one), lum(other)), reverse=True)
    return (a + 0.05) / (b + 0.05)


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_the_epsilon_table_follows_the_theme(page, server, open_page, theme):
    # the planner's ε table kept the table library's grey stripes in the dark theme
    open_page(page, server, "/planner" + ("?theme=dark" if theme == "dark" else ""), ".label-count-incremental")
    table = page.locator(".meter-table table").first
    table.wait_for()
    rows = page.locator(".meter-table tbody tr")
    expect(rows).to_have_count(5)
    colours = {rows.nth(i).evaluate("el => getComputedStyle(el).backgroundColor") for i in range(5)}
    assert len(colours) == 1, f"striped rows: {colours}"  # one surface, no stripes
    page_bg = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    page_bg = "rgb(255, 255, 255)" if page_bg == "rgba(0, 0, 0, 0)" else page_bg  # the canvas
    card = page.locator(".md-headline").first.evaluate("el => getComputedStyle(el).backgroundColor")
    assert colours <= {page_bg, card, "rgba(0, 0, 0, 0)"}, (colours, page_bg, card)  # the page's own surfaces
    header = page.locator(".meter-table thead th").first.evaluate("el => getComputedStyle(el).backgroundColor")
    assert header in {page_bg, card, "rgba(0, 0, 0, 0)"}, header
    cells = [t for t in texts(page) if t["text"] in ("0.0100", "0.0500", "ε", "#", "from")]
    assert len(cells) >= 5 and all(t["ratio"] >= 4.5 for t in cells), cells
    # the editable cells' text is a box's value (not a text node): its colour on the row's surface
    box = page.get_by_role("textbox", name="ε of signal 1", exact=True)
    assert box.evaluate("el => getComputedStyle(el).backgroundColor") == "rgba(0, 0, 0, 0)"  # the row shows through
    ink = box.evaluate("el => getComputedStyle(el).color")
    assert _ratio(ink, box.evaluate(_SURFACE)) >= 4.5, (ink, box.evaluate(_SURFACE))
    assert low_contrast(page) == []
    page.screenshot(path=str(ARTIFACTS / f"planner-epsilon-table-{theme}.png"), full_page=False)


@pytest.mark.parametrize("theme", ["dark", "default"])
@pytest.mark.parametrize("name", [*READY, "docs", ""])
def test_every_text_of_every_page_reads_at_wcag_aa(page, server, open_page, name, theme):
    # e.g. /ci's "new test set" badge: the theme's warning ink on its warning background was 3.9:1
    path = f"/{name}?theme={theme}"
    if name in READY:
        open_page(page, server, path, READY[name])
        page.wait_for_timeout(1500)  # what arrives after the first view
    else:
        page.goto(server + path)
    assert low_contrast(page) == []
