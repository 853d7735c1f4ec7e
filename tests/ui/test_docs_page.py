"""Issue 30 on /docs: numbered as written, a way back up on a phone, tables that fit."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.ui

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _docs(browser, server, width: int, theme: str = ""):
    context = browser.new_context(viewport={"width": width, "height": 844}, device_scale_factor=1)
    page = context.new_page()
    page.goto(server + "/docs" + ("?theme=dark" if theme else ""))
    return context, page


def test_the_contents_are_numbered_as_the_readme_is(browser, server):
    # the contents counted the subsections too: the sections' numbers skipped 5 and 14
    context, page = _docs(browser, server, 1440)
    try:
        sections = [line[3:] for line in README.splitlines() if line.startswith("## ")]
        subsections = [line[4:] for line in README.splitlines() if line.startswith("### ")]
        top = page.locator("nav.md-contents > ol > li")
        assert top.count() == len(sections) and subsections  # one numbered entry per section, nothing else
        assert [top.nth(i).locator("> a").inner_text() for i in range(top.count())] == sections
        # the subsections are nested under their section, in an unnumbered list
        nested = page.locator("nav.md-contents > ol > li > ul > li.md-contents-h3")
        assert [nested.nth(i).inner_text() for i in range(nested.count())] == subsections
        # the numbers a reader sees: 1..N, one per section (an <ol> counts every <li> child)
        numbers = page.evaluate("""() => [...document.querySelectorAll('nav.md-contents > ol > li')]
            .map(li => li.value || [...li.parentElement.children].indexOf(li) + 1)""")
        assert numbers == list(range(1, len(sections) + 1))
    finally:
        context.close()


def test_a_phone_has_a_way_back_to_the_top(browser, server):
    context, page = _docs(browser, server, 390)
    try:
        height = page.evaluate("() => document.documentElement.scrollHeight")
        assert height > 10_000  # the README is long on a phone
        page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_function("() => window.scrollY > 5000")
        top = page.locator("a.md-back-to-top")
        box = top.bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 844 and box["x"] + box["width"] <= 390
        top.click()  # the page's title back on screen, at its top
        page.wait_for_function("() => { const y = document.getElementById('top').getBoundingClientRect().top;"
                               " return y > -1 && y < 100; }")
        assert page.evaluate("() => window.scrollY") < 300
    finally:
        context.close()


@pytest.mark.parametrize("width", [1440, 390])
def test_every_table_fits_the_page(browser, server, width):
    # the security table was cut at the right on a phone
    for theme in ("", "dark"):
        context, page = _docs(browser, server, width, theme)
        try:
            overflow = page.evaluate("""() => [...document.querySelectorAll('article table')].map(t => {
                const box = t.parentElement;  // the table's own box
                const r = t.getBoundingClientRect();
                return {right: r.right, scroll: box.scrollWidth, client: box.clientWidth,
                        text: t.innerText.slice(0, 40)};
            }).filter(t => t.right > window.innerWidth + 0.5 || t.scroll > t.client + 1)""")
            assert overflow == [], f"tables wider than a {width} px page: {overflow}"
            assert page.locator("article table").count() >= 2  # the variants and the security model
            if width == 390:  # each cell names its column on a phone
                cell = page.locator("#security-model ~ div table td[data-label='may']").first
                assert "everything: create" in cell.inner_text()
                assert cell.evaluate("el => getComputedStyle(el, '::before').content") == '"may"'
                page.locator("#security-model").scroll_into_view_if_needed()
                page.screenshot(path=str(ARTIFACTS / f"docs-security-{theme or 'light'}-390.png"))
        finally:
            context.close()
