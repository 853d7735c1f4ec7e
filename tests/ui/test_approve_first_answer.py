"""/approve's first answer (issue 29), served: the link's decisions in the first response, the same in the live page.

- A plain HTTP client reads the first response of ``/approve?example=...`` and finds the approvals count the live
  page later shows (through Bokeh's protocol), the lead, and a link preview carrying the decision.
- In a browser the live view takes the answer's place with the same count and no layout shift.
- A server that never waits for the decisions (``APPROVE_SECONDS = 0``: a computation slower than the budget)
  says what it computes and for how long, the live view takes over without a jump, and the next request for the
  link gets the decisions computed meanwhile (the first response was not kept as "computing").
"""
from __future__ import annotations

import html
import re
import time

import pytest
from playwright.sync_api import expect

from tests.ui.test_first_answer import COUNT_SHIFTS, _get, _head, _meta, live_value, value_of

pytestmark = pytest.mark.ui

#: (link, the approvals count): the shipped examples' decisions (tests/views/test_approve_first_answer.py checks
#: them against the procedures in-process; here the served pages show them)
LINKS = [("/approve?example=adversary", "0 of 50"), ("/approve?example=refits&method=naive", "8 of 15")]


def first_answer(server: str, path: str, css_class: str = "approve-count") -> tuple[str, bytes]:
    """The approvals count in the link's first response, asked again while the first request's computation runs."""
    for _ in range(60):
        page, body = _get(server + path)
        value = value_of(page, css_class)
        if value:
            return value, body
        time.sleep(0.5)  # not asyncio: a browser test's Playwright loop may be running in this thread
    raise AssertionError(f"{path}: no {css_class} in the first response")


@pytest.mark.parametrize("path, count", LINKS)
def test_the_first_response_has_the_decisions_the_live_page_shows(server, path, count):
    value, body = first_answer(server, path, "approve-count")  # asked again while the first computes them
    assert value == count
    page = body.decode("utf-8")
    first = html.unescape(page.split("class=\"md-first-body", 1)[1].split("class=\"md-boot", 1)[0])
    assert f"We can ship {count} modifications" in first and "data-approved=" in first
    head = _head(page)
    assert _meta(head, "property", "og:title").startswith(f"{count} modifications approved (")
    assert _meta(head, "property", "og:description").startswith(f"We can ship {count} modifications")
    live_value(server, path, body, "approve-count", count)  # the live view, through Bokeh's protocol: the same


def test_a_bad_method_in_the_link_gets_the_pages_message(server):
    page, _ = _get(server + "/approve?example=adversary&method=%3Cb%3Enope")
    message = "Link: method must be one of naive, bonferroni, weighted-bonferroni, bonf-srgp, fs-srgp, pres-srgp"
    assert _meta(_head(page), "property", "og:description").startswith(message)
    assert "<b>nope" not in page


def test_the_live_page_takes_the_answers_place_with_the_same_count_and_no_jump(browser, server):
    path, count = LINKS[0]
    first_answer(server, path, "approve-count")  # the decisions are known: the first response carries them
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.add_init_script(COUNT_SHIFTS)
        page.goto(server + path, wait_until="commit")
        expect(page.locator(".md-first .approve-count")).to_have_text(count, timeout=30_000)
        expect(page.locator(".md-first")).to_have_count(0, timeout=90_000)  # the live view took over
        expect(page.locator(".approve-count").first).to_have_text(count)
        expect(page.locator(".approve-lead").first).to_contain_text(f"We can ship {count} modifications")
        page.wait_for_timeout(1500)  # whatever settles after
        assert page.evaluate("window.__shift") <= 0.05
    finally:
        context.close()


def test_decisions_not_known_in_time_say_what_is_computed_then_come_with_the_next_request(server_not_waiting):
    path = "/approve?example=adversary&method=pres-srgp"
    page, _ = _get(server_not_waiting + path)
    assert re.search(r"computing the approvals of the 50 modifications on the link&#39;s trace with presSRGP "
                     r"\((under 1 s|up to \d+ s) of computing on this server\)", page)
    assert "class=\"md-first-body" not in page and "approve-count" not in page
    value, _ = first_answer(server_not_waiting, path, "approve-count")  # asked again: the computation went on meanwhile
    assert value == "0 of 50"


def test_the_approve_page_does_not_jump_while_it_computes_its_decisions(browser, server_not_waiting):
    """/approve without its decisions in the first response (not known in time): its live view is laid out out of
    sight, under the sentence saying what it computes, until its lead (the decisions so far, or all of them) is on
    screen."""
    server = server_not_waiting
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.add_init_script(COUNT_SHIFTS)
        page.goto(server + "/approve?example=adversary", wait_until="commit")
        expect(page.locator(".md-boot").first).to_contain_text("computing the approvals", timeout=30_000)
        expect(page.locator(".approve-lead").first).to_contain_text("We can ship", timeout=120_000)
        expect(page.locator(".md-first")).to_have_count(0)
        page.wait_for_timeout(1500)  # whatever settles after
        assert page.evaluate("window.__shift") <= 0.05
    finally:
        context.close()
