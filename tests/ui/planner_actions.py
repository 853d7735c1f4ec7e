"""What a person does on the planner page, for its browser tests: open a section or a drawer, type a value.

The planner builds its less-used parts the first time they are opened (issue 19): the budget's
answers per variant, the second plot and the simulation check (toggles under the curve).  The
reverts and the labeling effort are drawers of the sidebar's form (closed ``<details>``).
"""
from __future__ import annotations

from playwright.sync_api import expect

#: section -> the text of its toggle
SECTIONS = {"whatif": "What the budget buys", "sweep": "Second plot", "check": "Check by simulation"}
#: drawer -> its css class
DRAWERS = {"reverts": "planner-reverts", "effort": "planner-effort"}


def open_section(page, section: str) -> None:
    """Click the section's toggle (under the curve) and wait for its content."""
    page.locator(".planner-open button", has_text=SECTIONS[section]).first.click()
    expect(page.locator(f".planner-{section}-section").first).to_be_visible(timeout=20_000)


def open_drawer(page, drawer: str) -> None:
    """Open a drawer of the sidebar (the reverts, the labeling effort): its title is a ``<summary>``."""
    page.locator(f".{DRAWERS[drawer]}-toggle").first.click()
    expect(page.locator(f".{DRAWERS[drawer]}").first).to_be_visible(timeout=20_000)


def type_into(page, css: str, text: str) -> None:
    """Type ``text`` into the input with class ``css`` and press Enter."""
    box = page.locator(f".{css} input").first
    box.fill(text)
    box.press("Enter")
