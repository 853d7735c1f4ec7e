"""The planner's first view builds only what a person sees (issue 29), in a real browser at 1440×900."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.ui.planner_actions import open_drawer

pytestmark = pytest.mark.ui


@pytest.fixture
def screen(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def test_closed_drawers_show_their_boxes_right_under_their_title_when_opened(screen, server, open_page):
    page = open_page(screen, server, "/planner", ".label-count-regular")
    for drawer in ("planner-reverts", "planner-effort"):
        expect(page.locator(f".{drawer}-toggle").first).to_be_visible()
        expect(page.locator(f".{drawer}").first).to_be_hidden()  # a closed <details>
    open_drawer(page, "effort")
    expect(page.locator(".planner-effort").first.get_by_text("Seconds per label")).to_be_visible()
    expect(page.locator(".planner-effort-toggle").first).to_have_attribute("class", re.compile("md-drawer-toggle"))
    toggle = page.locator(".planner-effort-toggle").first.bounding_box()
    body = page.locator(".planner-effort").first.bounding_box()
    assert 0 <= body["y"] - (toggle["y"] + toggle["height"]) < 12  # right under its toggle
    expect(page.locator(".planner-reverts").first).to_be_hidden()
    seconds = page.get_by_label("Seconds per label")  # a labelled box: reached by its label
    seconds.fill("30")
    seconds.press("Enter")
    expect(page.locator(".label-count-incremental").first).to_have_text("38,005")
    page.wait_for_function("() => new URLSearchParams(location.search).get('seconds_per_label') === '30'")


def test_a_box_held_by_the_sidebar_shows_its_message_right_under_it(screen, server, open_page):
    page = open_page(screen, server, "/planner", ".label-count-regular")
    box = page.locator(".delta-input input").first
    box.fill("1.5")
    box.press("Enter")
    message = page.locator(".md-input-message .md-error").first
    expect(message).to_contain_text("must be in (0, 1); got '1.5'")
    slider = page.locator(".md-slider").first.bounding_box()  # δ's slider: the sidebar's first
    shown = message.bounding_box()
    below = page.locator(".steps-input").first.bounding_box()
    assert slider["y"] + slider["height"] <= shown["y"] + 1 and shown["y"] + shown["height"] <= below["y"] + 1


def test_a_number_typed_in_a_box_moves_its_slider_and_a_slid_one_shows_in_the_box(screen, server, open_page):
    page = open_page(screen, server, "/planner", ".label-count-regular")
    box = page.locator(".delta-input input").first
    slider = page.locator("input.md-slider[data-field=delta]").first
    box.fill("0.1")
    box.press("Enter")
    expect(slider).to_have_value("0.1")
    box.fill("1.5")  # refused beside the box: the slider stays where the plan is
    box.press("Enter")
    expect(page.locator(".md-input-message .md-error").first).to_contain_text("got '1.5'")
    expect(slider).to_have_value("0.1")
    expect(page.locator(".label-count-incremental").first).not_to_have_text("38,005")
    slider.fill("0.05")  # a range input: sets the value and fires input and change, as a drag released there
    expect(box).to_have_value("0.05")
    page.wait_for_function("() => new URLSearchParams(location.search).get('delta') === '0.05'")
