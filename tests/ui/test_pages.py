"""Every page in a browser: landing page, docs, per-page extensions, viewport, dark theme, phones (issue 11, 13)."""
from __future__ import annotations

import urllib.request

import pytest
from playwright.sync_api import expect

from meter_dashboard.app.pages import PAGES

pytestmark = pytest.mark.ui

READY = {
    "planner": ".label-count-incremental",
    "session": ".meter-signal",
    "ci": ".ci-headlines .md-headline-value",
    "ladder": ".ladder-score",
    "compare": ".compare-conclusion",
    "approve": ".approve-count",
    "testsets": ".testsets-intro",
}


def test_landing_page_lists_every_page_in_order(page, server, relevant_errors):
    page.goto(server + "/")
    cards = page.locator("a.card")
    expect(cards).to_have_count(len(PAGES))
    titles = [cards.nth(i).locator("b").inner_text() for i in range(len(PAGES))]
    assert titles == [p.title for p in PAGES.values()]  # planner first, not alphabetical
    assert "How many labelled test examples" in page.locator(".lead").inner_text()
    assert page.locator('meta[name="viewport"]').count() == 1
    assert page.console_errors == []  # no CDN logo, no missing thumbnails
    page.locator("a.card.landing-planner").click()
    page.locator(READY["planner"]).first.wait_for(state="visible", timeout=60_000)


def test_docs_page_is_the_readme_offline(server):
    with urllib.request.urlopen(server + "/docs", timeout=10) as response:
        html = response.read().decode("utf-8")
    assert response.status == 200
    assert "<h2>A worked example: the paper" in html and "38,005" in html
    assert "<script" not in html  # the README is rendered as text, never as markup it carries


@pytest.mark.parametrize("name", list(PAGES))
def test_each_page_loads_only_what_it_uses(page, server, name):
    urls = []
    page.on("request", lambda request: urls.append(request.url))
    page.goto(server + "/" + name)
    page.locator(READY[name]).first.wait_for(state="visible", timeout=60_000)
    assert page.locator('meta[name="viewport"]').count() == 1
    assert not [u for u in urls if "mathjax" in u], "no page needs MathJax (1.7 MiB)"
    assert not [u for u in urls if "fast-components" in u or "googleapis" in u]
    tabulator = [u for u in urls if "tabulator" in u]
    assert bool(tabulator) == (name == "planner"), "only the planner uses Tabulator"
    filepond = [u for u in urls if "filepond" in u.lower()]
    uploads = ("session", "ci", "ladder", "compare", "approve")  # every upload is a GuardedFileDropper (issue 15)
    assert bool(filepond) == (name in uploads), "only the upload pages use the file dropper"
    assert not [u for u in urls if not u.startswith((server, "blob:", "data:"))], "nothing from another host"


@pytest.mark.parametrize("name", list(PAGES))
def test_phone_width_has_no_horizontal_overflow(browser, server, open_page, name):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    try:
        page = context.new_page()
        open_page(page, server, "/" + name, READY[name])
        page.wait_for_timeout(1500)
        scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll <= inner + 1, f"/{name} is {scroll} px wide on a 390 px phone"
    finally:
        context.close()


def test_dark_theme_is_readable(page, server, open_page):
    open_page(page, server, "/planner?theme=dark", READY["planner"])
    colors = page.evaluate("""() => {
        const find = (root, sel) => { for (const e of root.querySelectorAll('*')) {
            if (e.matches(sel)) return e; if (e.shadowRoot) { const f = find(e.shadowRoot, sel); if (f) return f; } }
            return null; };
        const value = find(document, '.label-count-incremental');
        const sentence = find(document, '.md-sentence');
        return [getComputedStyle(value).color, getComputedStyle(sentence).color,
                getComputedStyle(document.documentElement).backgroundColor];
    }""")
    def brightness(rgb):
        r, g, b = [int(float(v)) for v in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3]]
        return (299 * r + 587 * g + 114 * b) / 1000
    assert brightness(colors[0]) > 180 and brightness(colors[1]) > 180, colors  # light text ...
    assert brightness(colors[2]) < 60, colors                                    # ... on a dark page
    toggle = page.locator(".md-theme-toggle button").first
    assert "Light" in toggle.inner_text()
    toggle.click()
    page.wait_for_url("**theme=default**", timeout=20_000)


def test_planner_numeric_boxes_explain_bad_values_and_keep_the_plan(page, server, open_page):
    # issue 11 #4: delta = 1.5, 0 or "abc" used to be ignored silently
    open_page(page, server, "/planner", READY["planner"])
    box = page.locator(".delta-input input").first
    for text, rule in [("1.5", "must be in (0, 1); got '1.5'"), ("0", "must be in (0, 1); got '0'"),
                       ("abc", "must be a number; got 'abc'")]:
        box.fill(text)
        box.press("Enter")
        expect(page.locator(".md-input-message .md-error").first).to_contain_text(rule, timeout=20_000)
        assert page.locator(".label-count-incremental").first.inner_text() == "38,005"
    box.fill("0.1")
    box.press("Enter")
    expect(page.locator(".label-count-incremental").first).not_to_have_text("38,005", timeout=20_000)
    expect(page.locator(".md-input-message .md-error")).to_have_count(0)


def test_planner_forgets_stale_messages_and_presets(page, server, open_page):
    # issue 11 #5
    open_page(page, server, "/planner", READY["planner"])
    tenant_box = page.locator(".tenant-steps-input input").first
    tenant_box.fill("5,x")
    tenant_box.press("Enter")
    expect(page.locator(".md-input-message .md-error").first).to_contain_text("tenant_steps")
    tenant_box.fill("5,5")
    tenant_box.press("Enter")
    expect(page.locator(".md-input-message .md-error")).to_have_count(0, timeout=20_000)
    expect(page.locator(".label-count-regular").first).to_have_text("63,261", timeout=20_000)  # Appendix B
    page.locator("select").first.select_option(label="Paper: three reverts (1, 2, 3)")
    expect(page.locator(".label-count-regular").first).to_have_text("75,892", timeout=20_000)  # Eqs. 13-16
    signals = page.locator(".signals-input input").first
    signals.fill("4")
    signals.press("Enter")
    expect(page.locator("select").first).to_have_value("Choose a paper setting…", timeout=20_000)
