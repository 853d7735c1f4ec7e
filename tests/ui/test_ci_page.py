"""The ease.ml/ci page in a real browser (Playwright + Debian chromium)."""
from __future__ import annotations

from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.ui


def labels(page):
    return page.locator(".ci-labels").first


def test_editing_the_condition_updates_the_count(page, server, open_page, relevant_errors):
    open_page(page, server, "/ci", ".ci-labels")
    # default: Pattern 1 (Section 4.1.1), reliability 0.9999, full adaptivity, 32 steps
    expect(labels(page)).to_have_text("655,547")
    expect(page.locator(".ci-optimized").first).to_have_text("67,706")  # "67K samples" (Section 4.1.1)
    box = page.locator(".ci-condition input").first
    box.fill("n - o > 0.1 +/- 0.1")
    expect(labels(page)).to_have_text("6,417", timeout=20_000)  # Figure 2: F2 full, 0.9999, 0.1
    # live validation: the message names the column, the last good count stays
    box.fill("n - o > 0.1 +/-")
    message = page.locator(".ci-condition-error .md-error").first
    expect(message).to_contain_text("column 16: condition must be well-formed", timeout=20_000)
    expect(page.locator(".ci-condition-error .ci-pointer").first).to_be_visible()
    expect(labels(page)).to_have_text("6,417")
    box.fill("n - o > 0.1 +/- 0.05")
    expect(labels(page)).to_have_text("25,668", timeout=20_000)  # Figure 2: F2 full, 0.9999, 0.05
    expect(message).to_be_hidden()
    page.wait_for_function("() => decodeURIComponent(window.location.search).includes('0.05')")
    # the replay of the shipped trace is on the page, with a pass/fail mark per commit (this condition
    # asks for +15 points: every commit fails)
    expect(page.locator(".ci-replay-table .ci-signal .ci-fail").first).to_be_visible()
    assert page.locator(".ci-replay-table .ci-signal .ci-pass").count() == 0
    assert relevant_errors(page.console_errors) == []


def test_url_settings_and_adaptivity(page, server, open_page, relevant_errors):
    query = urlencode({"condition": "n - o > 0.1 +/- 0.1", "reliability": "0.99", "adaptivity": "full"})
    open_page(page, server, "/ci?" + query, ".ci-labels")
    expect(labels(page)).to_have_text("5,496", timeout=20_000)  # the public calculator's example
    page.get_by_role("button", name="none", exact=True).first.click()
    expect(labels(page)).to_have_text("1,753", timeout=20_000)  # Figure 2: F2 none, 0.99, 0.1
    assert relevant_errors(page.console_errors) == []


# --------------------------------------------------------------------------- issue 11 #1, #2, #4; issue 15
from pathlib import Path  # noqa: E402

from tests.ui.table_pages import reveal  # noqa: E402

SERVER_LOG = Path(__file__).parent / "artifacts" / "server.log"

CURVE_AT = """(h) => { for (const m of Bokeh.documents[0].all_models) {
    if (m.data != null && m.data.full_baseline !== undefined) {
        const i = Array.from(m.data.x).indexOf(h); return i < 0 ? null : m.data.full_baseline[i]; } } return null; }"""
REPLAY_POINTS = """() => { for (const m of Bokeh.documents[0].all_models) {
    if (m.data != null && m.data.signal !== undefined && m.data.commit !== undefined) {
        return Array.from(m.data.commit).length; } } return null; }"""


WORDS = ("Error", "ERROR", "Exception")


class ServerErrors:
    """Tracebacks the server logged while a test ran (tests/ui/artifacts/server.log)."""

    def __init__(self):
        self.start = SERVER_LOG.stat().st_size if SERVER_LOG.exists() else 0

    def new(self) -> list:
        if not SERVER_LOG.exists():
            return []
        with open(SERVER_LOG, encoding="utf-8", errors="replace") as fh:
            fh.seek(self.start)
            text = fh.read()
        closed = ("WebSocketClosedError", "StreamClosedError")  # a browser page closed by an earlier test
        return [line for line in text.splitlines() if line[:1].strip() and any(w in line for w in WORDS)
                and not any(c in line for c in closed)]


def type_and_enter(page, text: str) -> None:
    """Type ``text`` and press Enter in the same instant, as a fast typist does: the browser sends the
    value and the typed text together, and Panel processes Enter's value change as a priority change
    outside the document lock (where the page once raised '_pending_writes should be non-None')."""
    page.locator(".ci-condition input").first.evaluate(
        """(el, text) => { el.value = text;
            el.dispatchEvent(new Event('input', {bubbles: true}));
            el.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
            el.dispatchEvent(new KeyboardEvent('keyup', {key: 'Enter', bubbles: true}));
            el.dispatchEvent(new Event('change', {bubbles: true})); }""", text)


def query(page) -> str:
    from urllib.parse import unquote_plus

    return unquote_plus(page.evaluate("() => window.location.search"))


def test_enter_in_the_condition_box_updates_everything(page, server, open_page, relevant_errors):
    """Issue 11 #1: Enter once raised '_pending_writes should be non-None'; the plot and replay went stale."""
    errors = ServerErrors()
    open_page(page, server, "/ci", ".ci-labels")
    page.wait_for_function(f"() => ({CURVE_AT})(32) === 655547")
    type_and_enter(page, "n > 0.8 +/- 0.05")
    expect(labels(page)).to_have_text("6,279", timeout=20_000)  # Section 3.3 / Figure 2 F1 full
    expect(page.locator(".ci-count-none").first).to_have_text("2,536")  # Figure 2, F1 none, 0.9999, 0.05
    page.wait_for_function(f"() => ({CURVE_AT})(32) === 6279", timeout=20_000)  # the labels-vs-steps plot
    legend = page.locator(".ci-replay .md-note").first  # the replay's clause legend follows the condition
    expect(legend).to_contain_text("1: n > 0.8 +/- 0.05", timeout=20_000)
    assert page.locator(".ci-replay-table th", has_text="clause 2").count() == 0
    page.wait_for_function("() => decodeURIComponent(window.location.search.replace(/\\+/g, ' '))"
                           ".includes('condition=n > 0.8 +/- 0.05')", timeout=20_000)
    assert errors.new() == [] and relevant_errors(page.console_errors) == []


def test_url_holds_only_valid_conditions(page, server, open_page, relevant_errors):
    """Issue 11 #1: after a typo then a fix, the URL holds the fix, never the invalid text."""
    errors = ServerErrors()
    open_page(page, server, "/ci?condition=n+-+o+%3E+0.1+%2B%2F-+0.1", ".ci-labels")
    expect(labels(page)).to_have_text("6,417", timeout=20_000)  # Figure 2: F2 full, 0.9999, 0.1
    type_and_enter(page, "n - o > 0.1 +/- ")
    expect(page.locator(".ci-condition-error .md-error").first).to_contain_text("column 17", timeout=20_000)
    assert "+/- 0.1" in query(page) and "+/- &" not in query(page)
    type_and_enter(page, "n - o > 0.1 +/- 0.05")
    expect(labels(page)).to_have_text("25,668", timeout=20_000)  # Figure 2: F2 full, 0.9999, 0.05
    page.wait_for_function("() => window.location.search.includes('0.05')", timeout=20_000)
    assert "condition=n - o > 0.1 +/- 0.05" in query(page)
    assert errors.new() == [] and relevant_errors(page.console_errors) == []


def test_no_trace_then_an_example(page, server, open_page, relevant_errors):
    """Issue 11 #2: 'No trace' then an example once kept 'No trace loaded' and a TypeError on the server."""
    errors = ServerErrors()
    open_page(page, server, "/ci", ".ci-replay-table")
    trace = page.get_by_label("Commit trace")
    trace.select_option(label="No trace")
    expect(page.locator(".ci-replay-summary").first).to_contain_text("No trace loaded", timeout=20_000)
    trace.select_option(label="Example: 8 EmoContext-shaped models (predictions)")
    summary = page.locator(".ci-replay-summary").first
    expect(summary).to_contain_text("ci_predictions.csv: 7 commits", timeout=20_000)
    expect(page.locator(".ci-replay-table").first).to_contain_text("iteration_8")
    reveal(page, ".ci-replay-plot")                       # below the fold: built when scrolled to
    expect(page.locator(".ci-replay-plot").first).to_be_visible()
    expect(page.locator(".ci-replay-plot canvas").first).to_be_visible()
    page.wait_for_function(f"() => ({REPLAY_POINTS})() === 7", timeout=20_000)
    trace.select_option(label="Example: 40 commits (n, o, d per commit)")
    expect(summary).to_contain_text("ci_commits.csv: 40 commits", timeout=20_000)
    page.wait_for_function(f"() => ({REPLAY_POINTS})() === 40", timeout=20_000)
    assert errors.new() == [] and relevant_errors(page.console_errors) == []


@pytest.mark.parametrize("css,value,message", [
    ("ci-reliability", "1.5", "Reliability (1 − δ) must be a number in (0, 1), such as 0.9999; got '1.5'"),
    ("ci-reliability", "0", "Reliability (1 − δ) must be a number in (0, 1), such as 0.9999, of at least 1e-15; "
                            "got '0'"),
    ("ci-reliability", "abc", "Reliability (1 − δ) must be a number in (0, 1), such as 0.9999; got 'abc'"),
    ("ci-steps", "0", "Steps H (commits per test set) must be a whole number in [1, 1000000000]; got '0'"),
    ("ci-steps", "2.5", "Steps H (commits per test set) must be a whole number; got '2.5'"),
    ("ci-seconds", "-1", "Seconds per label must be a number > 0; got '-1'"),
    ("ci-labelers", "0", "Labelers must be a whole number >= 1; got '0'"),
])
def test_out_of_range_numbers_get_a_message_and_keep_the_result(page, server, open_page, relevant_errors, css,
                                                                value, message):
    """Issue 11 #4: out-of-range numbers were silently ignored."""
    errors = ServerErrors()
    open_page(page, server, "/ci", ".ci-labels")
    expect(labels(page)).to_have_text("655,547")
    box = page.locator(f".{css} input").first
    box.fill(value)
    box.press("Enter")
    error = page.locator(f".ci-input-error .md-error", has_text=message.split(" must be")[0]).first
    expect(error).to_have_text(message, timeout=20_000)
    expect(labels(page)).to_have_text("655,547")  # the last good result stays
    assert "Labeling" not in labels(page).inner_text()
    box.fill({"ci-reliability": "0.99", "ci-steps": "32", "ci-seconds": "2", "ci-labelers": "1"}[css])
    box.press("Enter")
    expect(error).to_be_hidden(timeout=20_000)
    assert errors.new() == [] and relevant_errors(page.console_errors) == []


def test_difference_bound_out_of_range(page, server, open_page, relevant_errors):
    open_page(page, server, "/ci?condition=n+-+o+%3E+0.018+%2B%2F-+0.022&reliability=0.998&steps=7", ".ci-labels")
    expect(labels(page)).to_have_text("48,595", timeout=20_000)
    page.locator(".ci-use-bound button").first.click()  # a toggle of the form (a checkbox before issue 29)
    expect(page.locator(".ci-optimized").first).to_be_visible(timeout=20_000)
    box = page.locator(".ci-bound input").first
    box.fill("2")
    box.press("Enter")
    expect(page.locator(".ci-bound-error .md-error").first).to_have_text(
        "p (bound on d) must be a number in (0, 1]; got '2'", timeout=20_000)
    assert relevant_errors(page.console_errors) == []


def test_a_huge_number_in_the_url_is_refused_at_once(page, server, open_page, relevant_errors):
    """Issue 15: GET /ci?condition=n > 1e30000000 +/- 0.1 froze the server for 42 s."""
    import time

    start = time.monotonic()
    open_page(page, server, "/ci?condition=n+%3E+1e30000000+%2B%2F-+0.1&reliability=1e-400&steps=0", ".ci-labels")
    message = page.locator(".ci-condition-error .md-error").first
    expect(message).to_contain_text("column 5: condition must be well-formed: expected a decimal number between "
                                    "1e-30 and 1e30 in size, found '1e30000000'", timeout=20_000)
    assert time.monotonic() - start < 15
    other = page.locator(".ci-other-errors").first
    expect(other).to_contain_text("URL key reliability must be a number in (0, 1), such as 0.9999, of at least "
                                  "1e-15; got '1e-400'")
    expect(other).to_contain_text("URL key steps must be a whole number in [1, 1000000000]; got '0'")
    expect(labels(page)).to_have_text("655,547")  # the defaults, shown as the last valid condition
    assert relevant_errors(page.console_errors) == []


def test_binomial_bound_on_the_page(page, server, open_page, relevant_errors):
    """Issue 12: the bound selector; Hoeffding's counts at once, the exact ones beside them when found."""
    errors = ServerErrors()
    open_page(page, server, "/ci?condition=n+%3E+0.8+%2B%2F-+0.05", ".ci-labels")
    expect(labels(page)).to_have_text("6,279", timeout=20_000)
    page.locator(".ci-bound-choice").get_by_role("button", name="binomial", exact=True).first.click()
    expect(page.locator(".ci-hoeffding-full").first).to_have_text("6,279", timeout=60_000)
    from meter_dashboard.bounds import ci as b

    exact = b.binomial_labels("0.05", 1e-4, b.clause_log_count("full", 32, 1, 1))
    expect(labels(page)).to_have_text(f"{exact:,}")
    page.wait_for_function("() => window.location.search.includes('bound=binomial')", timeout=20_000)
    assert errors.new() == [] and relevant_errors(page.console_errors) == []


# --------------------------------------------------------------------------- issue 24: exact curves
CURVES_AT = """([name, h]) => { for (const m of Bokeh.documents[0].all_models) {
    if (m.name === name) { const i = Array.from(m.data.x).indexOf(h);
        return i < 0 ? null : [m.data.none_baseline[i], m.data.full_baseline[i]]; } } return null; }"""
LEGEND = """() => { const out = []; for (const m of Bokeh.documents[0].all_models) {
    if (m.label !== undefined && m.renderers !== undefined) out.push(m.label.value ?? m.label); } return out; }"""


def test_exact_curves_under_the_binomial_bound(page, server, open_page, relevant_errors):
    """The curves show the exact counts the cards and the table show, Hoeffding's dotted beside them, labelled."""
    from meter_dashboard.bounds import ci as b

    open_page(page, server, "/ci?condition=n+%3E+0.8+%2B%2F-+0.05&bound=binomial", ".ci-labels")
    exact = b.binomial_labels("0.05", 1e-4, b.clause_log_count("full", 32, 1, 1))       # 5,704 (Figure 2, F1)
    expect(labels(page)).to_have_text(f"{exact:,}", timeout=60_000)
    caption = page.locator(".ci-curve-caption").first
    expect(caption).to_contain_text("Exact binomial counts at 25 of 25 values of H (done)", timeout=120_000)
    expect(caption).to_contain_text("dotted: Hoeffding's counts")
    none = b.binomial_labels("0.05", 1e-4, b.clause_log_count("none", 32, 1, 1))
    assert page.evaluate(CURVES_AT, ["ci-curves", 32]) == [none, exact]           # the curve meets the card
    assert page.evaluate(CURVES_AT, ["ci-curves-hoeffding", 32]) == [
        b.hoeffding_labels(1.0, 0.05, 1e-4, b.clause_log_count("none", 32, 1, 1)), 6279]
    assert page.evaluate(CURVES_AT, ["ci-curves", 64])[1] == b.binomial_labels("0.05", 1e-4,
                                                                               b.clause_log_count("full", 64, 1, 1))
    assert "dotted: Hoeffding (the paper's)" in page.evaluate(LEGEND)
    page.locator(".ci-bound-choice").get_by_role("button", name="hoeffding", exact=True).first.click()
    expect(labels(page)).to_have_text("6,279", timeout=20_000)
    page.wait_for_function("(h) => { for (const m of Bokeh.documents[0].all_models) { if (m.name === 'ci-curves') {"
                           " const i = Array.from(m.data.x).indexOf(h); return m.data.full_baseline[i] === 6279; } }"
                           " return false; }", arg=32)
    assert relevant_errors(page.console_errors) == []


def test_an_absurdly_long_link_is_refused_as_a_whole(page, server, open_page, relevant_errors):
    """Issue 21: the URL goes through ui/urlstate (bounded before any parsing), not a hand-made parse_qsl."""
    condition = "n > 0.8 +/- 0.05" + " " * 5000
    open_page(page, server, "/ci?" + urlencode({"condition": condition, "steps": "10"}), ".ci-labels")
    other = page.locator(".ci-other-errors").first
    expect(other).to_contain_text("The link's settings were not applied: its query has", timeout=20_000)
    expect(other).to_contain_text("(at most 4,096)")
    expect(labels(page)).to_have_text("655,547")  # the defaults: nothing of the link was applied
    assert relevant_errors(page.console_errors) == []


def test_the_replay_plot_below_the_fold_is_built_when_scrolled_to(browser, server, open_page, relevant_errors):
    """Issue 29: at 1440×900 the replay plot is below the fold: built (with the trace's 40 points) when scrolled to."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = context.new_page()
    errors: list = []
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        open_page(pg, server, "/ci", ".ci-replay-table")
        pg.wait_for_timeout(1500)
        assert pg.locator(".ci-replay-plot").count() == 0 and pg.evaluate(f"({REPLAY_POINTS})()") is None
        table_top = pg.locator(".ci-replay").first.bounding_box()["y"]
        reveal(pg, ".ci-replay-plot")
        expect(pg.locator(".ci-replay-plot canvas").first).to_be_visible()
        pg.wait_for_function(f"() => ({REPLAY_POINTS})() === 40", timeout=20_000)
        pg.evaluate("window.scrollTo(0, 0)")
        assert abs(pg.locator(".ci-replay").first.bounding_box()["y"] - table_top) <= 4  # the box held its place
        assert relevant_errors(errors) == []
    finally:
        context.close()
