"""Issue 30 on the planner, in a real browser: the chart shows the answer it states, no budget nobody
entered, labels inside the plot, one number format, two plans side by side, and a browser that leaves.

Every expected number is computed here with the bounds, never read from the page.
"""
from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from meter_dashboard.bounds import meter as M
from meter_dashboard.core import formatting as fmt
from meter_dashboard.meter.figures import BUDGET_COLOR
from tests.conftest import ARTIFACTS, serve
from tests.ui.planner_actions import type_into

pytestmark = pytest.mark.ui

UNIFORM = [0.02] * 5
MEETING = "/planner?delta=0.05&budget=30000"

#: The curve over T as the browser holds it: data, the budget's label and mark, the frame's y range and size.
CURVE = """() => {
  const fig = Bokeh.documents[0].get_model_by_name("planner-curve");
  const source = fig.renderers[0].data_source;
  const label = fig.center.find((m) => m.type === "Label");
  const spans = fig.center.filter((m) => m.type === "Span");
  const legend = fig.below.find((m) => m.type === "Legend");
  const view = [...Bokeh.index.query((v) => v.model.id === fig.id)][0];
  return {x: Array.from(source.data.x), incremental: Array.from(source.data.incremental),
          label: label.visible ? label.text : "", label_x: label.x, label_y: label.y,
          baseline: label.text_baseline, y_offset: label.y_offset, font: label.text_font_size,
          marks: spans.map((s) => ({location: s.location, visible: s.visible, color: s.line_color})),
          y_start: fig.y_range.start, y_end: fig.y_range.end,
          frame_height: view.frame.bbox.height,
          legend: legend.items.filter((i) => i.visible).map((i) => i.label.value)};
}"""


def query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query, keep_blank_values=True).items()}


def curve(page) -> dict:
    return page.evaluate(CURVE)


def budget_mark(c: dict):
    """The vertical line marking the budget's largest T (in the budget's colour; the plan's T is grey)."""
    marks = [m for m in c["marks"] if m["color"] == BUDGET_COLOR]
    return marks[0] if marks else None


def label_box_inside(c: dict) -> bool:
    """The budget label's box (12 px text at y = budget, on the side its baseline says) inside the frame."""
    import math

    lo, hi = math.log10(c["y_start"]), math.log10(c["y_end"])
    line = (math.log10(c["label_y"]) - lo) / (hi - lo) * c["frame_height"]  # px above the frame's bottom
    size = float(c["font"].rstrip("px"))
    if c["baseline"] == "bottom":  # text above the line
        bottom, top = line + c["y_offset"], line + c["y_offset"] + size + 2
    else:  # "top": text under the line
        bottom, top = line + c["y_offset"] - size - 2, line + c["y_offset"]
    return 0 <= bottom and top <= c["frame_height"]


# ---------------------------------------------------------------- row 1: the chart shows what the card says
def test_one_uniform_epsilon_box_and_the_chart_reaches_the_steps_the_card_states(page, server, open_page):
    open_page(page, server, MEETING, ".label-count-incremental")
    type_into(page, "uniform-epsilon-input", "0.02")  # one box, not five cells
    largest = M.max_steps("incremental", 30_000, UNIFORM, 0.05)
    assert largest == 148
    expect(page.locator(".headline-budget-steps").first).to_contain_text(f"{largest:,} steps")
    page.wait_for_function("() => new URLSearchParams(location.search).get('epsilon') === '0.02,0.02,0.02,0.02,0.02'")
    expect(page.locator(".meter-table tbody tr")).to_have_count(5)
    expect(page.get_by_role("textbox", name="ε of signal 5", exact=True)).to_have_value("0.0200")  # the table redrawn
    page.wait_for_function(f"() => ({CURVE})().label.includes('largest T = {largest}')")
    c = curve(page)
    assert max(c["x"]) >= largest and largest in c["x"], "the axis reaches the largest T the card states"
    mark = budget_mark(c)
    assert mark is not None and mark["visible"] and mark["location"] == largest
    assert c["label"] == f"budget 30,000: largest T = {largest}" and c["label_x"] == largest
    index = c["x"].index(largest)
    assert c["incremental"][index] <= 30_000 < c["incremental"][index + 1]


def test_the_exact_bound_s_largest_t_is_reached_too(page, server, open_page):
    open_page(page, server, MEETING + "&epsilon=0.02&signals=5&bound=binomial", ".label-count-incremental")
    largest = M.max_steps("incremental", 30_000, UNIFORM, 0.05, bound="binomial")
    assert largest > M.max_steps("incremental", 30_000, UNIFORM, 0.05)  # beyond Hoeffding's axis
    expect(page.locator(".headline-budget-steps").first).to_contain_text(f"{largest:,} steps", timeout=120_000)
    page.wait_for_function(f"() => Math.max(...({CURVE})().x) >= {largest}", timeout=120_000)
    page.wait_for_function(f"() => ({CURVE})().label.includes('largest T = {largest:,}')", timeout=60_000)
    mark = budget_mark(curve(page))
    assert mark is not None and mark["visible"] and mark["location"] == largest


def test_reset_puts_every_input_back(page, server, open_page):
    open_page(page, server, MEETING + "&epsilon=0.02&signals=5&steps=40", ".label-count-incremental")
    expect(page.locator(".uniform-epsilon-input input").first).to_have_value("0.02")
    page.locator(".planner-reset button").first.click()
    page.wait_for_function("() => !new URLSearchParams(location.search).has('budget')")
    q = query(page)
    assert q["epsilon"] == "0.01,0.02,0.03,0.04,0.05" and q["delta"] == "0.01" and q["steps"] == "10"
    expect(page.locator(".uniform-epsilon-input input").first).to_have_value("")  # the ε differ per signal
    expect(page.locator(".budget-input input").first).to_have_value("")
    assert page.locator(".headline-budget-steps").count() == 0


# ---------------------------------------------------------------- row 2: no budget nobody entered
def test_no_budget_is_shown_that_nobody_entered(page, server, open_page):
    open_page(page, server, "/planner?epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.01&steps=10", ".label-count-incremental")
    expect(page.locator(".label-count-incremental").first).to_have_text(f"{M.labels('incremental', [0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 10):,}")
    expect(page.locator(".budget-input input").first).to_have_value("")
    assert page.locator(".headline-budget-steps").count() == 0
    assert "50,000" not in page.locator(".planner-answer").first.inner_text()
    c = curve(page)
    assert c["label"] == "" and "budget" not in query(page)
    # a budget typed is a budget shown, and carried by the link
    type_into(page, "budget-input", "45000")
    expect(page.locator(".headline-budget-steps").first).to_be_visible()
    page.wait_for_function("() => new URLSearchParams(location.search).get('budget') === '45000'")
    type_into(page, "budget-input", "")  # emptied: gone again
    page.wait_for_function("() => !new URLSearchParams(location.search).has('budget')")
    expect(page.locator(".headline-budget-steps")).to_have_count(0)


# ---------------------------------------------------------------- row 3: labels inside the plot
@pytest.mark.parametrize("plan,budget", [("", 20_000), ("epsilon=0.02&signals=5&delta=0.05&", 30_000),
                                         ("epsilon=0.02&signals=5&delta=0.05&", 10**9)])
def test_the_budget_label_stays_inside_the_plot(page, server, open_page, plan, budget):
    open_page(page, server, f"/planner?{plan}budget={budget}", ".label-count-incremental")
    page.wait_for_function(f"() => ({CURVE})().label.startsWith('budget {budget:,}')")
    page.wait_for_timeout(500)  # the plot laid out
    c = curve(page)
    assert label_box_inside(c), c
    if budget == 20_000:
        assert c["label"] == "budget 20,000: not even T = 1" and c["baseline"] == "bottom"  # above its line


# ---------------------------------------------------------------- row 4: one number format
def test_huge_and_tiny_numbers_read_the_same_everywhere(page, server, open_page):
    open_page(page, server, "/planner?epsilon=0.01&signals=5&delta=1e-300&steps=1000000", ".label-count-incremental")
    answer = page.locator(".planner-answer").first
    expect(answer).to_contain_text("with probability 1 − 10⁻³⁰⁰ every signal")
    text = answer.inner_text()
    assert "with probability 1 every" not in text and "1,959,122,777.8" not in text
    hours = M.labels("resampling", [0.01] * 5, 1e-300, 10**6) * 2 / 3600
    assert fmt.amount(hours) == "1.96×10⁹"
    assert "1.96×10⁹" in text  # the resampling row's labeler-hours
    c = curve(page)
    assert max(c["x"]) >= 10**6, "the x axis reaches T = 1,000,000"


# ---------------------------------------------------------------- row 5: two plans side by side
def test_a_pinned_plan_is_compared_and_survives_a_reload_of_its_link(page, server, open_page):
    open_page(page, server, "/planner?epsilon=0.02&signals=5&delta=0.05&budget=30000", ".label-count-incremental")
    page.locator(".planner-pin button").first.click()
    expect(page.locator(".planner-unpin").first).to_be_visible()
    type_into(page, "delta-input", "0.01")
    pinned, current = M.labels("incremental", UNIFORM, 0.05, 10), M.labels("incremental", UNIFORM, 0.01, 10)
    row = f"Incremental meter (recommended): labels {pinned:,} {current:,} +{current - pinned:,}"
    table = page.locator(".planner-comparison-table").first
    expect(table).to_contain_text("0.05  (confidence 1 − δ = 0.95)")
    page.wait_for_function("() => new URLSearchParams(location.search).get('delta') === '0.01'")

    def rows():
        return [re.sub(r"\s+", " ", t).strip() for t in table.locator("tr").all_inner_texts()]

    assert row in rows()
    assert f"Incremental meter: largest T the budget supports 148 {M.max_steps('incremental', 30_000, UNIFORM, 0.01)}" \
        in rows()
    link = page.url
    assert "compare" in query(page) and "delta=0.05" in query(page)["compare"]
    page.wait_for_function(f"() => ({CURVE})().legend.includes('pinned plan: incremental meter')")
    before = rows()
    page.goto(link)  # the link, opened again (a colleague, a reload)
    page.locator(".planner-comparison-table").first.wait_for(timeout=60_000)
    table = page.locator(".planner-comparison-table").first
    expect(table).to_contain_text(f"{current - pinned:,}")
    assert rows() == before
    page.wait_for_function(f"() => ({CURVE})().legend.includes('pinned plan: incremental meter')")
    expect(page.locator(".delta-input input").first).to_have_value("0.01")
    page.locator(".planner-unpin button").first.click()
    page.wait_for_function("() => !new URLSearchParams(location.search).has('compare')")
    expect(page.locator(".planner-comparison-table")).to_have_count(0)


# ---------------------------------------------------------------- row 6: a person leaves mid-computation
@pytest.fixture(scope="module")
def short_sessions():
    """A server destroying a session one second after its browser left (the suite's waits 15 s)."""
    yield from serve(SHORT_LOG, "--session-lifetime", "1")


SHORT_LOG = "server-short-sessions.log"


def test_a_browser_closed_while_the_planner_computes_leaves_no_traceback(browser, short_sessions, open_page):
    server = short_sessions
    log = ARTIFACTS / SHORT_LOG
    start = log.stat().st_size
    context = browser.new_context()
    page = context.new_page()
    # the exact bound over T = 1..400 with a budget: exact points arrive for half a minute after the first answer
    open_page(page, server, "/planner?epsilon=0.02&signals=5&delta=0.05&steps=200&budget=30000&bound=binomial",
              ".label-count-incremental")
    expect(page.locator(".headline-budget-steps").first).to_have_text(re.compile("short|steps"),
                                                                                        timeout=120_000)
    built = re.findall(r"page planner built for session (\S+)", log.read_text(errors="replace")[start:])
    assert built, "the server log names the page's session"
    context.close()  # the person leaves while the curve's exact points are still computing
    left = f"session {built[-1]} destroyed"  # the planner's debug line when the server destroys the session
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        seen = log.read_text(errors="replace")[start:]
        if left in seen or "Traceback" in seen:
            break
        time.sleep(0.5)
    assert left in log.read_text(errors="replace")[start:], "the server destroyed the session"
    time.sleep(10)  # work that would still be delivered to the destroyed page
    tail = log.read_text(errors="replace")[start:]
    # no traceback at all: a write Panel had in flight when the browser left is one quiet line (serving.quiet_closed_writes)
    assert "UnsetValueError" not in tail and "Traceback" not in tail and "never retrieved" not in tail, tail[-3000:]


def test_the_comparison_fits_a_phone(browser, server, open_page):
    context = browser.new_context(viewport={"width": 390, "height": 900})
    page = context.new_page()
    try:
        open_page(page, server, "/planner?epsilon=0.02&signals=5&delta=0.01&budget=30000&compare=delta%3D0.05",
                  ".planner-comparison-table")
        pinned, current = M.labels("incremental", UNIFORM, 0.05, 10), M.labels("incremental", UNIFORM, 0.01, 10)
        expect(page.locator(".planner-comparison-table").first).to_contain_text(f"+{current - pinned:,}")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scrolling
    finally:
        context.close()
