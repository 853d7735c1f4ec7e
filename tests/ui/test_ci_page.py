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
