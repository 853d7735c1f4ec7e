"""The P(A>B) page in a real browser (Playwright + Debian chromium)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

import meter_dashboard.models.compare as mc

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


def test_upload_good_and_bad_runs(page, server, open_page, tmp_path):
    open_page(page, server, "/compare", ".compare-conclusion")
    good = tmp_path / "runs.csv"
    good.write_text("a,b\n" + "\n".join(f"{0.9 + i / 1000:.3f},{0.8:.3f}" for i in range(30)) + "\n",
                    encoding="utf-8")
    page.locator(".compare-upload input[type=file]").first.set_input_files(str(good))
    expect(page.locator(".compare-p").first).to_have_text("1.000")
    expect(conclusion(page)).to_have_text("Significant and meaningful")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n0.9,0.8\n0.91,n/a\n", encoding="utf-8")
    page.locator(".compare-upload input[type=file]").first.set_input_files(str(bad))
    message = page.locator(".compare-error .md-error").first
    message.wait_for(state="visible")
    assert "line 3, column 2: b must be a finite number" in message.inner_text()
    assert page.locator(".compare-p").first.inner_text().strip() == "1.000"      # last good result kept
