"""The planner in a real browser (Playwright + Debian chromium)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from meter_dashboard.bounds import meter as M
from tests.ui.planner_actions import open_drawer, type_into

pytestmark = pytest.mark.ui

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]
PAPER_URL = "/planner?epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.01&steps=10&signals=5"


def count(page, variant: str) -> str:
    return page.locator(f".label-count-{variant}").first.inner_text().strip()


def wait_count(page, variant: str, text: str):
    expect(page.locator(f".label-count-{variant}").first).to_have_text(text, timeout=20_000)


def set_delta(page, value: str):
    box = page.locator(".delta-input input").first
    box.fill(value)
    box.press("Enter")


def test_url_with_the_papers_nonuniform_settings(page, server, open_page, relevant_errors):
    open_page(page, server, PAPER_URL, ".label-count-regular")
    assert count(page, "regular") == "100,033"       # Cor 1, Sec 5.1
    assert count(page, "incremental") == "38,005"    # Cor 2, Sec 5.1
    assert count(page, "resampling") == "380,050"    # Eq. 2
    assert count(page, "single_model") == "26,492"   # Thm 4
    assert "38,005 labels support 10 development steps" in page.locator(".md-sentence").first.inner_text()
    assert relevant_errors(page.console_errors) == []
    assert page.console_errors == []  # not even blocked network requests


def test_changing_delta_updates_every_count(page, server, open_page, relevant_errors):
    open_page(page, server, PAPER_URL, ".label-count-regular")
    set_delta(page, "0.05")
    expected = M.all_labels(NONUNIFORM, 0.05, 10)
    wait_count(page, "regular", f"{expected['regular']:,}")
    for variant in M.VARIANTS:
        assert count(page, variant) == f"{expected[variant]:,}", variant
    page.wait_for_function("() => window.location.search.includes('delta=0.05')")
    assert relevant_errors(page.console_errors) == []


def test_decreasing_epsilon_shows_message_and_keeps_numbers(page, server, open_page, relevant_errors):
    open_page(page, server, PAPER_URL, ".label-count-regular")
    editor = page.get_by_role("textbox", name="ε of signal 1", exact=True)
    editor.fill("0.09")
    editor.press("Enter")
    message = page.locator(".error-meter .md-error").first
    message.wait_for(state="visible")
    assert "epsilon must be non-decreasing" in message.inner_text()
    assert count(page, "regular") == "100,033"
    assert count(page, "incremental") == "38,005"
    assert relevant_errors(page.console_errors) == []


def test_editing_epsilon_in_the_table_changes_the_counts_and_bad_text_keeps_them(page, server, open_page,
                                                                             relevant_errors):
    # the ε table is ui/table.py's NumberTable: a box per editable cell, what is typed parsed on the server
    open_page(page, server, PAPER_URL, ".label-count-regular")
    box = page.get_by_role("textbox", name="ε of signal 5", exact=True)
    expect(box).to_have_value("0.0500")
    box.fill("0.1")
    box.press("Enter")
    expected = M.all_labels([0.01, 0.02, 0.03, 0.04, 0.1], 0.01, 10)
    wait_count(page, "incremental", f"{expected['incremental']:,}")
    assert count(page, "regular") == f"{expected['regular']:,}"
    expect(box).to_have_value("0.1000")  # the server's value, four decimals
    box.fill("0.1x")
    box.press("Tab")  # leaving the box commits it too
    message = page.locator(".error-meter .md-error").first
    expect(message).to_contain_text("ranges and ε must be numbers")
    expect(message).to_contain_text("signal 5: ε must be a number; got '0.1x'")
    expect(box).to_have_attribute("aria-invalid", "true")
    assert count(page, "incremental") == f"{expected['incremental']:,}"  # the last good plan's numbers
    type_into(page, "signals-input", "7")  # the rows follow m; the refused box shows its value again
    expect(page.locator(".meter-table tbody tr")).to_have_count(7)
    expect(box).to_have_value("0.1000")
    expect(box).to_have_attribute("aria-invalid", "false")
    expect(page.locator(".error-meter .md-error")).to_have_count(0)  # its message went with it
    expect(page.get_by_role("textbox", name="ε of signal 7", exact=True)).to_be_visible()
    assert relevant_errors(page.console_errors) == []


def test_bad_revert_steps_message_beside_input(page, server, open_page):
    open_page(page, server, PAPER_URL, ".label-count-regular")
    open_drawer(page, "reverts")
    box = page.locator(".reverts-input input").first
    box.fill("1,2,x")
    box.press("Enter")
    message = page.locator(".error-reverts .md-error").first
    message.wait_for(state="visible")
    assert "reverts must be a comma-separated list" in message.inner_text()
    box.fill("1,2,3")
    box.press("Enter")
    wait_count(page, "regular", "75,892")  # Eqs. 13-14
    assert "fixed in advance" in page.locator(".planner-assumptions .md-note").first.inner_text()


def test_sessions_are_independent(browser, server, open_page):
    ctx_a, ctx_b = browser.new_context(), browser.new_context()
    try:
        a, b = ctx_a.new_page(), ctx_b.new_page()
        open_page(a, server, PAPER_URL, ".label-count-regular")
        open_page(b, server, PAPER_URL, ".label-count-regular")
        set_delta(a, "0.1")
        wait_count(a, "regular", f"{M.labels('regular', NONUNIFORM, 0.1, 10):,}")
        b.wait_for_timeout(500)
        assert count(b, "regular") == "100,033"
    finally:
        ctx_a.close()
        ctx_b.close()


def test_bad_url_value_is_explained_and_defaults_stay(page, server, open_page):
    open_page(page, server, "/planner?delta=7", ".label-count-regular")
    message = page.locator(".error-other .md-error").first
    message.wait_for(state="visible")
    assert "delta must be in (0, 1); got '7'" in message.inner_text()
    assert count(page, "regular") == "100,033"
