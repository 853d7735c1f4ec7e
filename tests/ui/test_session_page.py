"""The session page in a real browser (Playwright + Debian chromium)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from meter_dashboard.bounds import meter
from meter_dashboard.models.session import replay
from meter_dashboard.models.trace import example_path, load_example

pytestmark = pytest.mark.ui

FIG3 = dict(ranges=[0, 0.005, 0.01, 0.02, 0.05, 1], epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.1, steps=8)


def text(page, selector: str) -> str:
    return page.locator(selector).first.inner_text().strip()


def expect_text(page, selector: str, value: str):
    expect(page.locator(selector).first).to_have_text(value, timeout=20_000)


def test_upload_a_shipped_trace_step_back_then_a_malformed_file(page, server, open_page, relevant_errors, tmp_path):
    open_page(page, server, "/session", ".meter-signal")
    expect_text(page, ".session-step", "8")  # the EmoContext example, its last step

    # upload the shipped synthetic trace (JSON) through the upload area
    shipped = tmp_path / "synthetic_overfitting_trace.json"
    shipped.write_bytes(example_path("synthetic_overfitting").read_bytes())
    page.locator(".trace-upload input[type=file]").first.set_input_files(str(shipped))
    expect(page.locator(".session-title").first).to_contain_text("synthetic_overfitting_trace.json", timeout=30_000)
    expect_text(page, ".session-step", "20")  # after a load the page shows the last step

    expected = replay(load_example("synthetic_overfitting"), **FIG3)  # the page's default meter (Fig. 3)
    last, before = expected.step(-1), expected.step(-2)
    assert text(page, ".meter-signal") == str(last["signal"]) == "4"
    assert text(page, ".meter-incremental-signal") == str(last["incremental_signal"]) == "4"
    assert text(page, ".meter-epsilon") == f"{last['epsilon']:g}" == "0.04"

    # one step back: step 19 has regular signal 3, the incremental meter still shows Bob's worst, 4
    page.locator(".step-back button").first.click()
    expect_text(page, ".session-step", "19")
    assert text(page, ".meter-signal") == str(before["signal"]) == "3"
    assert text(page, ".meter-incremental-signal") == str(before["incremental_signal"]) == "4"
    assert text(page, ".meter-epsilon") == f"{before['epsilon']:g}"

    # a malformed file: the message names row and column, and the previous trace stays on screen
    bad = tmp_path / "bad.csv"
    bad.write_text("step,val_accuracy,test_accuracy\n1,0.90,0.88\n2,0.91,1.7\n")
    page.locator(".trace-upload input[type=file]").first.set_input_files(str(bad))
    message = page.locator(".trace-error .md-error").first
    expect(message).to_have_text("row 3, column 3 (test_accuracy): test_accuracy must be a number in [0, 1]; "
                                 "got '1.7'", timeout=30_000)
    assert text(page, ".session-step") == "19"
    assert text(page, ".meter-signal") == "3" and text(page, ".meter-incremental-signal") == "4"
    expect(page.locator(".session-title").first).to_contain_text("synthetic_overfitting_trace.json")
    assert relevant_errors(page.console_errors) == []


def test_url_carries_the_planners_meter_and_links_back(page, server, open_page, relevant_errors):
    url = "/session?epsilon=0.01&signals=5&delta=0.1&steps=8&example=emocontext"
    open_page(page, server, url, ".meter-signal")
    expect_text(page, ".session-step", "8")
    # uniform eps = 0.01: every signal guarantees 0.01 (Section 3.3's setting)
    assert text(page, ".meter-epsilon") == "0.01"
    assert "incremental meter 50,776" in text(page, ".session-needed")  # Section 3.3: "50K labels"
    href = page.locator(".planner-link a").first.get_attribute("href")
    assert href.startswith("./planner?") and "epsilon=0.01,0.01,0.01,0.01,0.01" in href and "delta=0.1" in href
    # changing delta on this page writes the planner's keys back into the URL
    box = page.locator(".delta-input input").first
    box.fill("0.01")
    box.press("Enter")
    page.wait_for_function("() => window.location.search.includes('delta=0.01&')")
    needed = meter.labels("incremental", [0.01] * 5, 0.01, 8)
    expect(page.locator(".session-needed").first).to_contain_text(f"incremental meter {needed:,}")
    assert relevant_errors(page.console_errors) == []


def test_replay_controls_and_jump(page, server, open_page, relevant_errors):
    open_page(page, server, "/session?example=emocontext", ".meter-signal")
    expect_text(page, ".session-step", "8")
    page.locator(".first-step button").first.click()
    expect_text(page, ".session-step", "1")
    assert text(page, ".meter-signal") == "2" and text(page, ".meter-epsilon") == "0.02"  # gap 0.0078
    page.locator(".step-forward button").first.click()
    expect_text(page, ".session-step", "2")
    assert text(page, ".meter-signal") == "1" and text(page, ".meter-incremental-signal") == "2"  # gap 0.0030
    jump = page.locator(".jump-input input").first
    jump.fill("5")
    jump.press("Enter")
    expect_text(page, ".session-step", "5")
    assert text(page, ".meter-signal") == "3"  # gap 0.0105
    page.locator(".play-button button").first.click()
    expect_text(page, ".session-step", "8")  # playing runs to the last step, then stops
    expect(page.locator(".play-button button").first).to_contain_text("Play")
    assert relevant_errors(page.console_errors) == []
