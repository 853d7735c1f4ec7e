"""The P(A>B) page in a real browser (Playwright + Debian chromium)."""
from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

import meter_dashboard.comparison.model as mc
from tests.ui.table_pages import MALFORMED, MALFORMED_IDS, VIEWPORTS, drop, refused_upload, shown_at

pytestmark = pytest.mark.ui


def conclusion(page):
    return page.locator(".compare-conclusion").first


def test_default_comparison(page, server, open_page, relevant_errors):
    open_page(page, server, "/compare", ".compare-conclusion")
    runs = mc.load_example()
    expected = mc.compare(runs.a, runs.b)
    assert conclusion(page).inner_text().strip() == "Significant and meaningful"
    assert page.locator(".compare-p").first.inner_text().strip() == f"{expected.p_a_gt_b:.3f}"
    lo, hi = expected.ci
    assert page.locator(".compare-ci").first.inner_text().strip() == f"[{lo:.3f}, {hi:.3f}]"
    assert page.locator(".compare-runs-needed").first.inner_text().strip() == "29"   # Appendix C.3
    assert relevant_errors(page.console_errors) == []


def test_gamma_from_the_url_and_from_the_input(page, server, open_page, relevant_errors):
    open_page(page, server, "/compare?gamma=0.97", ".compare-conclusion")
    expect(conclusion(page)).to_have_text("Significant, not meaningful")
    box = page.locator(".compare-gamma input").first
    box.fill("0.75")
    box.press("Enter")
    expect(conclusion(page)).to_have_text("Significant and meaningful")
    page.wait_for_function("() => !window.location.search.includes('gamma=0.97')")
    assert relevant_errors(page.console_errors) == []


def test_unpaired_example_is_paired_at_random(page, server, open_page):
    open_page(page, server, "/compare?example=compare_unpaired.csv", ".compare-conclusion")
    expect(conclusion(page)).to_have_text("Not significant")
    assert not page.locator(".compare-paired input").first.is_checked()
    assert "paired at random" in page.locator(".compare-runs").first.evaluate(
        "e => e.parentElement.innerText")


def test_the_paired_checkbox_pairs_the_runs_at_random_and_back(page, server, open_page, relevant_errors):
    open_page(page, server, "/compare", ".compare-conclusion")
    box = page.get_by_label("Paired runs (same seeds/split)")
    expect(box).to_be_checked()
    runs = page.locator(".compare-runs").first
    box.uncheck()
    expect(runs.locator("xpath=..")).to_contain_text("paired at random", timeout=20_000)
    page.wait_for_function("() => window.location.search.includes('paired=false')")
    box.check()
    expect(runs.locator("xpath=..")).not_to_contain_text("paired at random", timeout=20_000)
    assert relevant_errors(page.console_errors) == []


def test_upload_good_and_bad_runs(page, server, open_page, tmp_path):
    open_page(page, server, "/compare", ".compare-conclusion")
    drop(page, "compare", tmp_path / "runs.csv",
         "a,b\n" + "\n".join(f"{0.9 + i / 1000:.3f},{0.8:.3f}" for i in range(30)) + "\n")
    expect(page.locator(".compare-p").first).to_have_text("1.000")
    expect(conclusion(page)).to_have_text("Significant and meaningful")
    drop(page, "compare", tmp_path / "bad.csv", "a,b\n0.9,0.8\n0.91,n/a\n")
    message = page.locator(".compare-error .md-error").first
    message.wait_for(state="visible")
    assert "line 3, column 2: b must be a finite number" in message.inner_text()
    assert page.locator(".compare-p").first.inner_text().strip() == "1.000"      # last good result kept


# --------------------------------------------------------------------------- issue 11 #4, #13; issue 15
def test_out_of_range_gamma_is_refused_beside_the_input(page, server, open_page, relevant_errors):
    # issue 11 #4: "γ = 0.4 on /compare: the box shows the typed value, the results silently stay"
    open_page(page, server, "/compare", ".compare-conclusion")
    before = page.locator(".compare-ci").first.inner_text()
    box = page.locator(".compare-gamma input").first
    box.fill("0.4")
    box.press("Enter")
    expect(page.locator(".compare-gamma-message .md-error").first).to_have_text(
        "γ (meaningful threshold) must be in (0.5, 1); got '0.4'")
    expect(page.locator(".compare-stale .md-stale").first).to_contain_text("Showing the last valid comparison")
    assert conclusion(page).inner_text().strip() == "Significant and meaningful"
    assert page.locator(".compare-ci").first.inner_text() == before
    box.fill("0.97")
    box.press("Enter")
    expect(conclusion(page)).to_have_text("Significant, not meaningful")
    expect(page.locator(".compare-gamma-message .md-error")).to_have_count(0)
    assert relevant_errors(page.console_errors) == []


def test_bad_values_in_the_link_get_messages_and_the_page_stays_alive(page, server, open_page, relevant_errors):
    open_page(page, server, "/compare?gamma=0.3&resamples=1e10&example=../../etc/passwd&paired=maybe",
              ".compare-conclusion")
    expect(page.locator(".compare-gamma-message .md-error").first).to_have_text(
        "γ (meaningful threshold) must be in (0.5, 1); got '0.3'")
    expect(page.locator(".compare-resamples-message .md-error").first).to_contain_text(
        "Bootstrap resamples must be a whole number in [100, 1e+06]; got '1e10'")
    links = page.locator(".compare-link-message .md-error")
    expect(links).to_have_count(2)
    assert "example" in links.nth(0).inner_text() and "paired" in links.nth(1).inner_text()
    assert conclusion(page).inner_text().strip() == "Significant and meaningful"
    assert relevant_errors(page.console_errors) == []


@pytest.mark.parametrize("content,needle", MALFORMED["compare"], ids=MALFORMED_IDS)
def test_malformed_uploads_are_named_by_line_and_column(page, server, open_page, tmp_path, content, needle):
    open_page(page, server, "/compare", ".compare-conclusion")
    refused_upload(page, "compare", tmp_path, content, needle)
    assert conclusion(page).inner_text().strip() == "Significant and meaningful"


def test_many_runs_are_compared_off_the_event_loop(page, server, open_page, tmp_path):
    # 150,000 pairs each side (300,000 runs, above OFFLOAD_RUNS): parsed and compared in worker threads
    rng = np.random.default_rng(5)
    a = np.round(rng.normal(0.9, 0.01, 150_000), 4)
    b = np.round(a - 0.001 + rng.normal(0, 0.002, 150_000), 4)
    f = tmp_path / "many.csv"
    f.write_text("a,b\n" + "\n".join(f"{x:.4f},{y:.4f}" for x, y in zip(a, b)) + "\n", encoding="utf-8")
    open_page(page, server, "/compare", ".compare-conclusion")
    page.locator(".compare-upload input[type=file]").first.set_input_files(str(f))
    runs = mc.read_runs(str(f))
    expected = mc.compare(runs.a, runs.b)
    expect(page.locator(".compare-p").first).to_have_text(f"{expected.p_a_gt_b:.3f}", timeout=60_000)
    expect(page.locator(".compare-runs").first).to_have_text("150,000")


@VIEWPORTS
def test_no_console_warnings_and_no_sideways_scroll(browser, server, open_page, viewport, query):
    width, messages = shown_at(browser, server, open_page, viewport, query, "compare", ".compare-conclusion")
    assert width[0] <= width[1], f"the page scrolls sideways: {width}"
    assert [m for m in messages if m[0] in ("warning", "error")] == []
