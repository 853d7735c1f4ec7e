"""Issue 24 on the planner, in a real browser: say only what holds, and what a budget meeting needs.

Every expected number is computed here with the bounds (ease.ml/meter Sec. 5.1: ε = 0.01..0.05,
δ = 0.01, T = 10 -> 38,005 for the incremental meter, Cor 2), never read from the page.
"""
from __future__ import annotations

import csv
import io
import math
import re

import pytest
from playwright.sync_api import expect

from meter_dashboard.bounds import meter as M
from meter_dashboard.core import formatting as fmt
from tests.benchmarks.load.harness import SHOWS
from tests.ui.planner_actions import open_section, type_into

pytestmark = pytest.mark.ui

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]
PAPER = "/planner?epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.01&steps=10&signals=5"

#: The plot's models as the browser holds them (the curve over T is named "planner-curve").
CURVE = """() => {
  const fig = Bokeh.documents[0].get_model_by_name("planner-curve");
  const source = fig.renderers[0].data_source;
  const label = fig.center.find((m) => m.type === "Label");
  const legend = fig.below.find((m) => m.type === "Legend");
  return {x: Array.from(source.data.x), incremental: Array.from(source.data.incremental),
          budget: Array.from(source.data.budget), label: label.visible ? label.text : "",
          label_x: label.x, legend: legend.items.filter((i) => i.visible).map((i) => i.label.value)};
}"""


def text(page, selector: str) -> str:
    """What a person sees in ``selector``: the first response's copy of the answer, once replaced, is hidden."""
    return page.locator(selector).locator("visible=true").first.inner_text().strip()


def color(page, selector: str) -> str:
    return page.locator(selector).first.evaluate("(el) => getComputedStyle(el).color")


def test_a_budget_that_falls_short_says_by_how_much_in_the_alarm_colour(page, server, open_page, tmp_path):
    open_page(page, server, PAPER + "&budget=20000", ".label-count-incremental")
    needed = M.labels("incremental", EPS, 0.01, 10)
    eps1 = M.min_epsilon("incremental", 20_000, EPS, 0.01, 10)
    confidence = -math.expm1(M.failure_probability("incremental", 20_000, EPS, 10, log=True))
    expected = (f"20,000 labels: {needed - 20_000:,} short for T = 10 — at T = 10 they support "
                f"ε₁ ≥ {fmt.number(eps1, 3)}, or confidence {fmt.number(confidence, 3)}")
    assert expected == "20,000 labels: 18,005 short for T = 10 — at T = 10 they support ε₁ ≥ 0.0138, or confidence 0.634"
    expect(page.locator(".planner-shortfall").first).to_have_text(expected)
    assert color(page, ".planner-shortfall") == color(page, ".planner-alarm .md-headline-value")
    expect(page.locator(".planner-alarm .headline-budget-steps").first).to_have_text("18,005 short")
    assert "Guarantee with 38,005 labels".upper() in text(page, ".planner-answer").upper()
    # the budget on the curve over T: a line at 20,000 labels, naming the largest T (none here)
    curve = page.evaluate(CURVE)
    assert set(curve["budget"]) == {20_000} and curve["label"] == "budget 20,000: not even T = 1"
    # the report's title follows
    with page.expect_download(timeout=120_000) as info:
        page.locator(".planner-report button").first.click()
    path = tmp_path / "plan.html"
    info.value.save_as(str(path))
    html = path.read_text(encoding="utf-8")
    assert "<title>Test-set plan: 20,000 labels are 18,005 short for 10 development steps</title>" in html


def test_the_budget_line_marks_the_largest_t(page, server, open_page):
    open_page(page, server, PAPER + "&budget=45000", ".label-count-incremental")
    largest = M.max_steps("incremental", 45_000, EPS, 0.01)
    page.wait_for_function(f"() => ({CURVE})().label.includes('largest T')", timeout=20_000)
    curve = page.evaluate(CURVE)
    assert curve["label"] == f"budget 45,000: largest T = {largest:,}" and curve["label_x"] == largest
    index = curve["x"].index(largest)  # on the curve: the largest T fits, the next one does not
    assert curve["incremental"][index] <= 45_000 < curve["incremental"][index + 1]
    expect(page.locator(".headline-budget-steps").first).to_have_text(f"{largest:,} steps")
    assert page.locator(".planner-shortfall").count() == 0


def test_exact_bound_legend_coinciding_curves_and_no_ellipsis(page, server, open_page):
    open_page(page, server, PAPER + "&bound=binomial", ".label-count-incremental")
    expect(page.locator(".label-count-incremental").first).to_have_text("27,151", timeout=60_000)
    page.wait_for_function(f"() => ({CURVE})().legend.includes(\"dotted: Hoeffding (the paper's)\")",
                           timeout=60_000)
    legend = page.evaluate(CURVE)["legend"]
    assert "No adaptivity (= incremental)" in legend  # the two curves coincide here, and the legend says so
    answer = text(page, ".planner-answer")
    assert not re.search(r"of …|… exact|…\)", answer)  # no literal ellipsis standing for a number


def test_exact_count_headline_table_and_plot_change_together(page, server, open_page):
    open_page(page, server, PAPER + "&bound=binomial", ".label-count-incremental")
    expect(page.locator(".label-count-incremental").first).to_have_text("27,151", timeout=60_000)
    delta = 0.0137  # new to the server: nothing cached
    exact = M.labels("incremental", EPS, delta, 10, bound="binomial")
    hoeffding = M.labels("incremental", EPS, delta, 10)
    page.evaluate("""(exact) => {
      window.__frames = [];
      const find = (root, sel) => { const hit = root.querySelector(sel); if (hit) return hit;
        for (const n of root.querySelectorAll('*')) { if (n.shadowRoot) { const f = find(n.shadowRoot, sel);
          if (f) return f; } } return null; };
      const fig = Bokeh.documents[0].get_model_by_name("planner-curve");
      const step = () => {
        const head = find(document, ".headline-labels"), cell = find(document, ".label-count-incremental");
        const src = fig.renderers[0].data_source.data, i = Array.from(src.x).indexOf(10);
        window.__frames.push([head ? head.textContent : "", cell ? cell.textContent : "",
                              i < 0 ? null : src.incremental[i]]);
        if (window.__frames.length < 3000 && !(head && head.textContent === exact)) requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    }""", f"{exact:,}")
    type_into(page, "delta-input", str(delta))
    page.wait_for_function(SHOWS, arg=[".headline-labels", f"{exact:,}", "equals"], polling="raf", timeout=120_000)
    frames = page.evaluate("() => window.__frames")
    shown = [f for f in frames if f[0] == f"{exact:,}"]
    assert shown, frames[-3:]
    for head, cell, point in shown:  # the moment the headline is exact, the table and the curve are too
        assert cell == f"{exact:,}" and point == exact, (head, cell, point, hoeffding)


def test_steps_per_tenant_refused_changes_nothing_and_clearing_restores_the_tenants(page, server, open_page):
    open_page(page, server, PAPER, ".label-count-regular")
    type_into(page, "tenants-input", "3")
    three = f"{M.labels('regular', EPS, 0.01, 10, tenants=3):,}"
    expect(page.locator(".label-count-regular").first).to_have_text(three)
    type_into(page, "tenant-steps-input", "3,3,3")  # 9 steps, not T = 10: refused
    expect(page.locator(".md-input-message .md-error").first).to_contain_text("summing to T = 10")
    assert page.locator(".tenants-input input").first.input_value() == "3"
    assert text(page, ".label-count-regular") == three
    type_into(page, "tenant-steps-input", "5,5")
    expect(page.locator(".label-count-regular").first).to_have_text("63,261")  # Appendix B, Eqs. 9 and 29
    expect(page.locator(".tenants-input input").first).to_have_value("2")
    type_into(page, "tenant-steps-input", "")  # cleared: back to what the person typed
    expect(page.locator(".tenants-input input").first).to_have_value("3")
    expect(page.locator(".label-count-regular").first).to_have_text(three)


def test_the_session_link_carries_every_setting_including_the_bound(page, server, open_page):
    open_page(page, server, PAPER + "&bound=binomial&max_error_rate=0.1&budget=30000",
              ".label-count-incremental")
    href = page.locator(".share-link a").first.get_attribute("href")
    assert href.startswith("./session?")
    for part in ("epsilon=0.01,0.02,0.03,0.04,0.05", "delta=0.01", "steps=10", "budget=30000", "bound=binomial",
                 "max_error_rate=0.1"):
        assert part in href, (part, href)


def test_the_default_check_shows_the_naive_count_failing_and_leads_with_it(page, server, open_page):
    open_page(page, server, "/planner?epsilon=0.02,0.04,0.06&delta=0.1&steps=10&signals=3", ".label-count-regular")
    open_section(page, "check")
    expect(page.locator(".planner-check-section .md-sentence").first).to_contain_text("the naive count")
    page.locator(".plan-check-run button").first.click()  # the defaults, as a person finds them
    expect(page.locator(".plan-check-status").first).to_contain_text("done", timeout=120_000)
    lead = page.locator(".plan-check-lead").first
    expect(lead).to_contain_text("The naive count (3,745 labels) failed in")
    expect(lead).to_contain_text("above δ = 0.1; the regular meter's planned count")
    table = page.locator(".plan-check-table").first
    expect(table.locator("tr.plan-check-naive")).to_contain_text("above δ")
    expect(table.locator("tr.plan-check-hoeffding")).to_contain_text("within δ")


def test_meeting_artefacts_csv_png_summary_and_report_link(page, server, open_page, tmp_path):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_page(page, server, PAPER + "&budget=20000", ".label-count-incremental")
    stem = "meter-plan_T10_delta0.01_eps0.01-0.05_m5_budget20000"
    with page.expect_download(timeout=60_000) as info:
        page.locator(".planner-csv button").first.click()
    assert info.value.suggested_filename == f"{stem}.csv"
    data = (tmp_path / "plan.csv")
    info.value.save_as(str(data))
    lines = data.read_text(encoding="utf-8").splitlines()
    assert "# T (development steps): 10" in lines and "# Label budget: 20,000" in lines
    rows = {r["variant"]: r for r in csv.DictReader(io.StringIO("\n".join(l for l in lines if not l.startswith("#"))))}
    assert rows["incremental"]["labels"] == "38005" and len(rows) == 5
    with page.expect_download(timeout=60_000) as info:
        page.locator(".planner-png button").first.click()
    assert info.value.suggested_filename == f"{stem}_curve.png"
    png = tmp_path / "curve.png"
    info.value.save_as(str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page.locator(".planner-copy button").first.click()
    summary = page.evaluate("() => navigator.clipboard.readText()")
    for part in ("δ (failure probability): 0.01", "T (development steps): 10", "Label budget: 20,000",
                 "Incremental meter", "38,005", "100,033", "380,050", "26,492",
                 "38,005 labels support 10 development steps", "18,005 short", "Shared plan: http"):
        assert part in summary, (part, summary)
    with page.expect_download(timeout=120_000) as info:
        page.locator(".planner-report button").first.click()
    report = tmp_path / "plan.html"
    info.value.save_as(str(report))
    html = report.read_text(encoding="utf-8")
    assert re.search(r'<a href="http://127\.0\.0\.1:\d+/planner\?epsilon=0\.01,0\.02,0\.03,0\.04,0\.05&amp;[^"]*'
                     r'budget=20000', html), "the share link is inside the report"


@pytest.mark.parametrize("box,bad", [("delta-input", "1.5"), ("steps-input", "0"), ("budget-input", "x"),
                                     ("signals-input", "30")])
def test_every_refused_field_marks_the_results_stale_and_greys_them(page, server, open_page, box, bad):
    open_page(page, server, PAPER, ".label-count-incremental")
    type_into(page, box, bad)
    banner = page.locator(".md-stale").first
    expect(banner).to_have_text("Showing the last valid plan: fix the input marked beside it.")
    expect(page.locator(".planner-stale").first).to_be_visible()
    assert float(page.locator(".planner-stale").first.evaluate("(e) => getComputedStyle(e).opacity")) < 0.6
    assert text(page, ".label-count-incremental") == "38,005"  # the last valid numbers stay
    type_into(page, box, {"delta-input": "0.01", "steps-input": "10", "budget-input": "50000",
                          "signals-input": "5"}[box])
    expect(page.locator(".md-stale")).to_have_count(0)
    expect(page.locator(".planner-stale")).to_have_count(0)


def test_huge_valid_values_have_separators_and_an_epsilon_above_one_reads_none(page, server, open_page):
    open_page(page, server, PAPER + "&steps=1000000000&budget=50000", ".label-count-incremental")  # a budget given
    answer = text(page, ".planner-answer")
    assert "1,000,000,000 development steps" in answer and "1000000000" not in answer
    assert "1,000,000,000× fewer than resampling" in answer
    open_section(page, "whatif")
    expect(page.locator(".planner-whatif").locator("visible=true").first).to_contain_text("smallest ε₁", timeout=20_000)
    budget = text(page, ".planner-whatif")
    assert "smallest ε₁ at T = 1,000,000,000" in budget and "1000000000" not in budget
    assert M.min_epsilon("regular", 50_000, EPS, 0.01, 10**9) > 1
    expect(page.locator(".budget-epsilon-regular").first).to_have_text("none")
    expect(page.locator(".budget-epsilon-resampling").first).to_have_text("none")


def test_on_a_phone_the_answer_comes_first(browser, server, open_page):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    try:
        page = context.new_page()
        open_page(page, server, PAPER, ".label-count-incremental")
        answer = page.locator(".headline-labels").first.bounding_box()
        inputs = page.locator(".delta-input input").first.bounding_box()
        assert answer["y"] < 844 and answer["y"] < inputs["y"]
    finally:
        context.close()


def test_page_only_text_appears_only_when_served(page, server, open_page):
    import meter_dashboard as md

    open_page(page, server, PAPER, ".label-count-incremental")
    assert "the page URL holds it" in text(page, ".share-link")
    notebook = md.Planner(epsilon=EPS, delta=0.01, steps=10).headlines.object
    assert "page URL" not in notebook and "./session" not in notebook and "38,005" in notebook
