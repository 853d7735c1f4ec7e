"""The answer in the first response (issue 29): each page's number for the link, before any JavaScript.

- A plain HTTP client reads each page's first response and finds the number the live page later
  shows (the planner under Hoeffding's and the exact bound, the session's example, /ci, /ladder,
  /compare): the live view's pane, reached through Bokeh's protocol, shows the same text.
- The head carries the answer: title, ``og:`` and ``twitter:`` tags; a bad link previews the page's
  message, escaped; never a 500.
- In a browser: the page does not jump while the live view takes over (Chromium's layout-shift
  score), the header and the answer paint with every script held back, and without JavaScript the
  answer and its settings are an accessible table with a line saying the controls need JavaScript.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import html
import re
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from meter_dashboard.bounds import meter as M
from tests.benchmarks.load.planner import QUERY
from tests.benchmarks.load.protocol import Session

pytestmark = pytest.mark.ui

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]
EXACT = QUERY + "&bound=binomial"

#: (path, css class of the number, the number when it is known in advance)
CASES = [
    ("/planner" + QUERY, "label-count-incremental", "38,005"),  # Cor 2, Sec 5.1
    ("/planner" + EXACT, "label-count-incremental", f"{M.labels('incremental', EPS, 0.01, 10, bound='binomial'):,}"),
    ("/planner" + EXACT, "hoeffding-count-incremental", "38,005"),
    ("/session", "meter-signal", None),
    ("/session?example=synthetic_overfitting", "meter-signal", None),
    ("/ci", "ci-labels", None),
    ("/ladder", "ladder-releases", None),
    ("/compare", "compare-p", None),
]


def _get(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=60) as response:
        assert response.status == 200
        body = response.read()
        return body.decode("utf-8"), body


def value_of(markup: str, css_class: str) -> str | None:
    """The text of the first element with ``css_class`` (as the protocol client reads a live pane)."""
    match = re.search(r'class="[^"]*\b' + re.escape(css_class) + r'\b[^"]*"[^>]*>([^<]*)<', markup)
    return html.unescape(match.group(1)).strip() if match else None


def first_answer(server: str, path: str, css_class: str) -> tuple[str, bytes]:
    """The number in the first response; an exact count computed in a worker thread is asked again (its cache)."""
    for _ in range(40):
        page, body = _get(server + path)
        value = value_of(page, css_class)
        if value and "computing" not in page.split('class="md-first', 1)[1].split("md-boot", 1)[0]:
            return value, body
        asyncio.run(asyncio.sleep(0.5))
    raise AssertionError(f"{path}: no {css_class} in the first response")


def live_value(server: str, path: str, body: bytes, css_class: str, expected: str) -> None:
    async def scenario():
        page = path.split("?")[0]
        session = await Session.connect(server, page, body)
        try:
            pane = await session.wait_text_id(css_class, timeout=90)
            await session.wait_value(pane, css_class, expected, timeout=90)
        finally:
            await session.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(lambda: asyncio.run(scenario())).result()


@pytest.mark.parametrize("path, css_class, known", CASES, ids=[f"{p}-{c}" for p, c, _ in CASES])
def test_the_first_response_has_the_number_the_live_page_shows(server, path, css_class, known):
    value, body = first_answer(server, path, css_class)
    assert re.fullmatch(r"[\d,.]+", value), f"{path}: {css_class} shows {value!r}, not a number"
    if known is not None:
        assert value == known
    live_value(server, path, body, css_class, value)  # the live view, through Bokeh's protocol: the same text


def test_the_exact_count_is_not_hoeffdings(server):
    exact, _ = first_answer(server, "/planner" + EXACT, "label-count-incremental")
    assert int(exact.replace(",", "")) < 38_005


def _head(page: str) -> str:
    return page.split("</head>")[0]


def _meta(head: str, attribute: str, name: str) -> str:
    match = re.search(rf'<meta {attribute}="{re.escape(name)}" content="([^"]*)">', head)
    assert match, f"no {name} in the head"
    return html.unescape(match.group(1))


def test_the_link_previews_its_answer(server):
    head = _head(_get(server + "/planner" + QUERY)[0])
    headline = "38,005 labels — 10 steps within ε 0.01–0.05, probability 0.99 (incremental meter)"
    assert _meta(head, "property", "og:title") == headline
    assert html.unescape(re.search(r"<title>([^<]*)</title>", head).group(1)).startswith(headline)
    assert _meta(head, "property", "og:description") == ("With 38,005 labelled examples we can test 10 model versions, "
                                                         "each reported accuracy within 1–5 points of the truth, 99 "
                                                         "times in 100.")
    assert _meta(head, "property", "og:url").endswith("/planner" + QUERY)
    assert _meta(head, "name", "twitter:card") == "summary"
    exact = f"{M.labels('incremental', EPS, 0.01, 10, bound='binomial'):,}"
    head = _head(_get(server + "/planner" + EXACT)[0])
    for _ in range(40):  # the exact count: asked again until the worker thread has it
        if "computing" not in _meta(head, "property", "og:title"):
            break
        asyncio.run(asyncio.sleep(0.5))
        head = _head(_get(server + "/planner" + EXACT)[0])
    assert _meta(head, "property", "og:title").startswith(f"{exact} labels — ")
    assert "Hoeffding 38,005" in _meta(head, "property", "og:title")


@pytest.mark.parametrize("path, message", [
    ("/planner?steps=abc", "The link's settings were not applied: steps must be a whole number; got 'abc'"),
    ("/planner?epsilon=%3Cscript%3Ealert(1)%3C/script%3E", "epsilon must be a comma-separated list of numbers"),
    ("/session?step=zzz", "step must be a whole number; got 'zzz'"),
    ("/ci?reliability=2", "URL key reliability must be a number in (0, 1)"),
    ("/ladder?step=-1", "The link's step was not applied"),
    ("/compare?gamma=x", "The link's gamma was not applied"),
    ("/planner?steps=" + "9" * 5000, "its query has 5,007 characters"),
])
def test_a_bad_link_gets_the_pages_message_in_the_first_response_and_its_preview(server, path, message):
    page, _ = _get(server + path)  # 200, never a 500
    assert message in _meta(_head(page), "property", "og:description")
    first = page.split('class="md-document md-first', 1)[1]
    assert message in html.unescape(first.split("md-first-inputs")[0])
    assert "<script>alert" not in page


def test_scripts_come_after_the_answer(server):
    page, _ = _get(server + "/planner" + QUERY)
    assert not re.search(r"<script[^>]*\bsrc=", _head(page)), "no script in <head> holds the first paint back"
    body = page.split("<body", 1)[1]
    assert body.index("label-count-incremental") < body.index("<script type=\"text/javascript\" src=")


#: Chromium's layout-shift score since navigation, as Web Vitals counts it (shifts after a person's input excluded)
COUNT_SHIFTS = """window.__shift = 0; new PerformanceObserver((list) => {
  for (const e of list.getEntries()) { if (!e.hadRecentInput) window.__shift += e.value; }
}).observe({type: "layout-shift", buffered: true});"""


def test_no_layout_shift_while_the_live_view_takes_over(browser, server):
    for path in ("/planner" + QUERY, "/planner" + EXACT, "/session", "/ci", "/ladder", "/compare",
                 "/approve?example=adversary"):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.add_init_script(COUNT_SHIFTS)
            page.goto(server + path, wait_until="commit")
            expect(page.locator(".md-first")).to_have_count(0, timeout=90_000)  # the live view took over
            page.wait_for_timeout(1500)  # whatever settles after
            assert page.evaluate("window.__shift") <= 0.05, path
        finally:
            context.close()


def test_the_header_and_the_answer_paint_with_the_scripts_held_back(browser, server):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.route(re.compile(r".*\.js(\?.*)?$"), lambda route: None)  # every script request left unanswered
        page.goto(server + "/planner" + QUERY, wait_until="commit")
        expect(page.locator("header.md-header")).to_be_visible(timeout=30_000)
        expect(page.locator(".md-first .label-count-incremental")).to_have_text("38,005", timeout=30_000)
        expect(page.locator(".md-first .md-sentence").first).to_contain_text("38,005 labels support")
        assert page.evaluate("typeof window.Bokeh") == "undefined"  # no script ran
    finally:
        context.close()


def test_without_javascript_the_answer_and_its_settings_are_a_table(browser, server):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        page.goto(server + "/planner?epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.05&steps=20")
        expect(page.locator(".md-noscript")).to_contain_text("needs JavaScript")
        settings = page.get_by_role("table", name="Planner: the link's settings")
        expect(settings).to_be_visible()
        expect(settings.get_by_role("rowheader", name="T (development steps)")).to_be_visible()
        expect(settings).to_contain_text("0.05 (confidence 1 − δ = 0.95)")
        expect(page.locator(".md-first .label-count-incremental")).to_have_text(
            f"{M.labels('incremental', EPS, 0.05, 20):,}")
        expect(page.locator(".md-first .md-boot")).to_be_hidden()  # no spinner that never ends
    finally:
        context.close()


def test_the_first_answer_never_fails_the_page(server):
    for path in ("/planner?bound=nope", "/session?example=nope", "/compare?resamples=100000000", "/approve",
                 "/testsets"):
        try:
            page, _ = _get(server + path)
        except urllib.error.HTTPError as exc:  # pragma: no cover - the failure this test is about
            raise AssertionError(f"{path}: {exc.code}") from exc
        assert 'class="md-header"' in page and "md-first" in page


def test_the_first_answer_is_readable_in_the_dark_theme(browser, server):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        page.goto(server + "/session?theme=dark")
        for css in (".md-first .md-sentence", ".md-first-settings td", ".md-first-settings caption"):
            rgb = page.locator(css).first.evaluate("e => getComputedStyle(e).color")
            channels = [int(c) for c in re.findall(r"\d+", rgb)[:3]]
            assert sum(channels) / 3 > 150, f"{css}: {rgb} on the dark background"
    finally:
        context.close()
