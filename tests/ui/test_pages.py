"""Every page in a browser: landing page, docs, header bar, first response, per-page extensions, viewport,
dark theme, phones (issues 11, 13, 21, 24)."""
from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from meter_dashboard.app.first_answer import ANSWERS
from meter_dashboard.app.pages import PAGES
from meter_dashboard.bounds import meter as M
from tests.ui.planner_actions import open_section

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


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        return response.read().decode("utf-8")


def _header_links(page) -> list[tuple[str, str]]:
    links = page.locator("header.md-header nav a")
    return [(links.nth(i).inner_text(), links.nth(i).get_attribute("href")) for i in range(links.count())]


def _bar(names_and_titles) -> list[tuple[str, str]]:
    """The header bar every page carries: home, the pages in order, Docs (links relative to the server)."""
    return [("meter-dashboard", "./"), *[(p.title, f"./{n}") for n, p in names_and_titles], ("Docs", "./docs")]


def test_landing_page_lists_every_page_in_order(page, server, relevant_errors):
    page.goto(server + "/")
    cards = page.locator("a.md-card")
    expect(cards).to_have_count(len(PAGES))
    titles = [cards.nth(i).locator("b").inner_text() for i in range(len(PAGES))]
    assert titles == [p.title for p in PAGES.values()]  # planner first, not alphabetical
    assert "How many labelled test examples" in page.locator(".md-lead").inner_text()
    assert page.locator('meta[name="viewport"]').count() == 1
    assert _header_links(page) == _bar(PAGES.items())  # the same bar as every page, Docs included
    assert page.console_errors == []  # no CDN logo, no missing thumbnails
    page.locator("a.md-card.landing-planner").click()
    page.locator(READY["planner"]).first.wait_for(state="visible", timeout=60_000)


def test_landing_page_starts_with_the_papers_example(page, server):
    # issue 24: "start here" into the paper's example (ease.ml/meter Secs. 4-5: eps 0.01..0.05, delta 0.01, T 10)
    incremental = M.labels("incremental", [0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 10)
    assert incremental == 38_005  # the README's worked example
    page.goto(server + "/")
    start = page.locator("a.md-start")
    expect(start).to_contain_text("Start here: the paper's example")
    expect(start).to_contain_text(f"the incremental meter needs {incremental:,} labels")
    assert start.bounding_box()["y"] < page.locator("a.md-card").first.bounding_box()["y"]  # before the pages
    start.click()
    expect(page.locator(".label-count-incremental").first).to_have_text("38,005", timeout=60_000)
    expect(page.locator(".label-count-regular").first).to_have_text("100,033")
    assert "epsilon=0.01,0.02,0.03,0.04,0.05" in page.url and "delta=0.01" in page.url and "steps=10" in page.url


def test_docs_page_is_the_readme_offline(server):
    html = _get(server + "/docs")
    assert re.search(r'<h2 id="[^"]+">A worked example: the paper', html) and "38,005" in html
    assert "<script" not in html.split('<article class="md-readme">')[1].split("</article>")[0]  # README as text
    assert "<!--" not in html and "&lt;!--" not in html  # issue 24: no raw comments shown as text
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert not [h for h in hrefs if re.match(r"https?://(localhost|127\.0\.0\.1)", h)], "links relative to the server"
    assert '<a href="./planner">/planner</a>' in html  # the README's "open http://localhost:5006/planner"
    # a contents list whose every entry jumps to a heading of the page, one per section of the README
    targets = re.findall(r'<li class="md-contents-h[23]"><a href="#([^"]+)">', html)
    ids = set(re.findall(r'<h[23] id="([^"]+)"', html))
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    sections = [line for line in readme.splitlines() if line.startswith("## ")]
    assert len(targets) >= len(sections) and set(targets) <= ids
    # a link to each page, with what it answers
    for name, spec in PAGES.items():
        assert f'<a href="./{name}">{spec.title.replace(">", "&gt;")}</a>' in html


def test_docs_fits_a_phone_and_names_this_server(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    try:
        page = context.new_page()
        page.goto(server + "/docs")
        scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll <= inner + 1, f"/docs is {scroll} px wide on a 390 px phone"
        origins = page.locator(".md-origin")
        assert origins.count() >= 3  # the curl, CLI and notebook examples that name the server
        assert {origins.nth(i).inner_text() for i in range(origins.count())} == {server}
        assert _header_links(page) == _bar(PAGES.items())
        page.locator(".md-contents a", has_text="Serving a team").click()
        assert page.url.endswith("#serving-a-team")
        # on screen: scrolled to the top, where the browser may leave it a fraction of a pixel above (seen: -0.44)
        assert -1 < page.locator("#serving-a-team").bounding_box()["y"] < 844
    finally:
        context.close()


@pytest.mark.parametrize("name", list(PAGES))
def test_first_response_shows_the_header_and_the_answer_or_what_it_computes(server, name):
    # issues 24 and 29: the first response is the header bar and the page's answer for the link (or, for a
    # page without one, what it is computing), before any JavaScript; the live view takes over once connected
    html = _get(f"{server}/{name}")
    bar = html.split('<header class="md-header">')[1].split("</header>")[0]
    hrefs = re.findall(r'<a href="([^"]+)"', bar)
    assert hrefs == ["./", *[f"./{n}" for n in PAGES], "./docs"]
    assert f'class="md-nav-link md-nav-current" aria-current="page">{PAGES[name].title.replace(">", "&gt;")}<' in bar
    first = html.split('class="md-document md-first', 1)[1]
    if name in ANSWERS:
        assert 'class="md-first-main"' in first and "loading the page's controls" in first
    else:
        assert re.search(r'class="md-boot"[^>]*>.*(building the page and computing its numbers|computing the)',
                         first, re.S)
        assert READY[name].split()[-1].lstrip(".") not in html  # no view yet: the numbers follow


def test_the_page_replaces_its_loading_state(browser, server):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1440, "height": 600})
    try:  # what a visitor sees while the JavaScript and the numbers are on their way
        page = context.new_page()
        page.goto(server + "/planner")
        expect(page.locator("header.md-header")).to_be_visible()
        expect(page.locator(".md-first .label-count-incremental")).to_have_text("38,005")  # the answer, no script
    finally:
        context.close()
    context = browser.new_context(viewport={"width": 1440, "height": 600})
    try:
        page = context.new_page()
        page.goto(server + "/planner")
        page.locator(READY["planner"]).first.wait_for(state="visible", timeout=60_000)
        expect(page.locator(".md-first")).to_have_count(0, timeout=60_000)  # the live view took its place
        expect(page.locator(".md-boot")).to_have_count(0)
        expect(page.locator("header.md-header")).to_be_visible()
    finally:
        context.close()


@pytest.mark.parametrize("name", list(PAGES))
def test_each_page_loads_only_what_it_uses(page, server, name):
    urls = []
    page.on("request", lambda request: urls.append(request.url))
    page.goto(server + "/" + name)
    page.locator(READY[name]).first.wait_for(state="visible", timeout=60_000)
    assert page.locator('meta[name="viewport"]').count() == 1
    assert not [u for u in urls if "mathjax" in u], "no page needs MathJax (1.7 MiB)"
    assert not [u for u in urls if "fast-components" in u or "googleapis" in u]
    assert not [u for u in urls if "tabulator" in u.lower()], "no page loads Tabulator (the ε table is ui/table.py's)"
    uploads = ("session", "ci", "ladder", "compare", "approve")  # every upload is a GuardedFileDropper (issue 15)
    if name == "session":  # its upload area is built once the answer is on screen (issue 19: first view light)
        expect(page.locator(".trace-upload .filepond--root").first).to_be_attached(timeout=30_000)
    filepond = [u for u in urls if "filepond" in u.lower()]
    assert bool(filepond) == (name in uploads), "only the upload pages use the file dropper"
    assert not [u for u in urls if not u.startswith((server, "blob:", "data:"))], "nothing from another host"
    assert _header_links(page) == _bar(PAGES.items())  # issue 24: a Docs link in every page's bar
    assert page.evaluate(LOW_CONTRAST) == []  # the light theme too (a warning button was white on amber)
    assert page.locator("header.md-header a.md-nav-current").inner_text() == PAGES[name].title


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


def brightness(rgb: str) -> float:
    """Perceived brightness (0-255) of a CSS ``rgb(...)``/``rgba(...)`` colour."""
    r, g, b = [int(float(v)) for v in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3]]
    return (299 * r + 587 * g + 114 * b) / 1000


#: Every element (through Panel's shadow roots) with a visible, opaque, bright background larger than
#: 300 px², except the ones bright on purpose: the header's switch, signal and series colours (the meter's
#: segments included), icon masks.
BRIGHT_AREAS = """() => {
  const out = [];
  const on_purpose = ['md-theme-toggle', 'md-signal', 'md-swatch', 'md-gauge', 'bk-icon', 'md-badge'];
  const lum = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(',').map(Number); if (p.length === 4 && p[3] < 0.5) return null;
    return (299 * p[0] + 587 * p[1] + 114 * p[2]) / 1000; };
  const walk = (root) => { for (const el of root.querySelectorAll('*')) {
      const r = el.getBoundingClientRect(), s = getComputedStyle(el);
      const cls = typeof el.className === 'string' ? el.className : '';
      const b = lum(s.backgroundColor);
      if (r.width * r.height > 300 && s.visibility !== 'hidden' && b !== null && b > 170
          && !on_purpose.some(c => cls.includes(c)))
        out.push(`${el.tagName}.${cls.slice(0, 60)} ${s.backgroundColor} ${Math.round(r.width)}x${Math.round(r.height)}`);
      if (el.shadowRoot) walk(el.shadowRoot); } };
  walk(document); return out; }"""


#: Every element with text of its own whose colour against its background (the first opaque one up the tree,
#: through shadow roots) has a WCAG contrast ratio below 3 — unreadable in a meeting room's projector.
LOW_CONTRAST = r"""() => {
  const rgba = (c) => { let m = c.match(/rgba?\(([^)]+)\)/);
    if (m) { const p = m[1].split(',').map(Number); return [p[0], p[1], p[2], p.length === 4 ? p[3] : 1]; }
    m = c.match(/color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: \/ ([\d.e-]+))?\)/);
    if (m) return [255 * m[1], 255 * m[2], 255 * m[3], m[4] === undefined ? 1 : Number(m[4])];
    return null; };
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  const L = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const up = (e) => e.parentElement || (e.getRootNode() && e.getRootNode().host) || null;
  const bg = (e) => { for (let n = e; n; n = up(n)) { const c = rgba(getComputedStyle(n).backgroundColor);
      if (c && c[3] >= 0.5) return c; } const h = rgba(getComputedStyle(document.documentElement).backgroundColor); return (h && h[3] >= 0.5) ? h : [255, 255, 255, 1]; };
  const out = [];
  const walk = (root) => { for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      const text = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent.trim()).join('');
      if (!text) continue;
      const r = el.getBoundingClientRect(), s = getComputedStyle(el);
      if (r.width === 0 || r.height === 0 || s.visibility === 'hidden' || parseFloat(s.opacity) < 0.3) continue;
      let fg = rgba(s.color); const b = bg(el);
      if (!fg) continue;
      fg = [0, 1, 2].map(i => fg[3] * fg[i] + (1 - fg[3]) * b[i]);
      const l1 = L(fg), l2 = L(b), ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      if (ratio < 3) out.push(`${el.tagName}.${(typeof el.className === 'string' ? el.className : '').slice(0, 50)} "${text.slice(0, 30)}" ${s.color} on ${b} = ${ratio.toFixed(2)}`);
  } };
  walk(document); return out; }"""


def test_dark_theme_is_readable(page, server, open_page):
    open_page(page, server, "/planner?theme=dark&delta=0.05", READY["planner"])
    colors = page.evaluate("""() => {
        const find = (root, sel) => { for (const e of root.querySelectorAll('*')) {
            if (e.matches(sel)) return e; if (e.shadowRoot) { const f = find(e.shadowRoot, sel); if (f) return f; } }
            return null; };
        const value = find(document, '.label-count-incremental');
        const sentence = find(document, '.md-sentence');
        return [getComputedStyle(value).color, getComputedStyle(sentence).color,
                getComputedStyle(document.documentElement).backgroundColor];
    }""")
    assert brightness(colors[0]) > 180 and brightness(colors[1]) > 180, colors  # light text ...
    assert brightness(colors[2]) < 60, colors                                    # ... on a dark page
    assert all(href.endswith("?theme=dark") for _, href in _header_links(page))  # the theme survives navigation
    toggle = page.locator("header.md-header a.md-theme-toggle")
    assert "Light" in toggle.inner_text()
    toggle.click()
    page.wait_for_url("**theme=default**", timeout=20_000)
    assert "delta=0.05" in page.url  # the same plan, in the other theme
    expect(page.locator("header.md-header a.md-theme-toggle")).to_contain_text("Dark")


@pytest.mark.parametrize("name", list(PAGES))
def test_dark_theme_themes_every_widget(page, server, open_page, name):
    # issue 24: in dark mode the ε table (a Tabulator) stayed white; now no widget keeps a light area
    open_page(page, server, f"/{name}?theme=dark", READY[name])
    page.wait_for_timeout(1500)
    assert page.evaluate(BRIGHT_AREAS) == []
    assert page.evaluate(LOW_CONTRAST) == []  # e.g. the active tab's label was dark on dark
    if name == "planner":  # the ε table itself: dark cells, light text (read-only cells and the boxes alike)
        for cell in (page.locator(".meter-table tbody td").first, page.locator(".meter-table .md-cell-input").first):
            assert brightness(cell.evaluate("""e => { for (let x = e; x; x = x.parentElement || x.getRootNode().host) {
                const bg = getComputedStyle(x).backgroundColor;
                if (bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent') return bg; } return 'rgb(255, 255, 255)'; }""")) < 130
            assert brightness(cell.evaluate("e => getComputedStyle(e).color")) > 180


@pytest.mark.parametrize("theme", ["default", "dark"])
def test_the_chosen_option_of_a_toggle_group_is_the_highlighted_one(page, server, open_page, theme):
    # issue 24: in dark mode the bound toggle lit up the inactive option ("Exact binomial" looked chosen)
    open_page(page, server, f"/planner?theme={theme}", READY["planner"])
    accent = "rgb(0, 114, 181)"  # Panel's primary colour, the dashboard's accent

    def looks(group):
        # a Panel toggle group marks its chosen button "bk-active"; a form's option buttons (ui/form.py) aria-pressed
        return [(b.inner_text(), "bk-active" in b.get_attribute("class") or b.get_attribute("aria-pressed") == "true",
                 b.evaluate("e => getComputedStyle(e).backgroundColor")) for b in group.all()]

    def check(group, chosen: int):
        shown = looks(group)
        assert [active for _, active, _ in shown] == [k == chosen for k in range(len(shown))]
        for k, (_, _, color) in enumerate(shown):
            if k == chosen:
                assert color == accent, shown
            else:
                assert color != accent and ((brightness(color) < 90) if theme == "dark" else (brightness(color) > 200))

    bound = page.locator(".bound-select button")
    assert [t for t, _, _ in looks(bound)] == ["Hoeffding (paper)", "Exact binomial"]
    check(bound, 0)  # the numbers are Hoeffding's: that option is the lit one
    open_section(page, "check")  # built the first time it is opened (issue 19)
    developer = page.locator(".plan-check-developer button")  # a choice that computes nothing until "Run"
    check(developer, 0)
    developer.nth(1).click()
    expect(developer.nth(1)).to_have_class(re.compile("bk-active"))
    check(developer, 1)


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
