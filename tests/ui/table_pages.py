"""What the browser tests of the table pages (/compare, /ladder) do alike: drop a file, refuse it, look at the page.

Helpers for the page tests, not tests: :func:`drop`, :func:`refused_upload`, the malformed tables, and
:func:`shown_at` (a page at a phone's or a desktop's size, light or dark, with its console), and
:func:`reveal` (scroll to the parts a served page builds when they come near the screen).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS

#: The four malformed tables every table page is given (issue 15), ids of :data:`MALFORMED`'s rows.
MALFORMED_IDS = ["cr-only line ends", "200,000-character cell", "nan", "inf"]
#: Per page: (the file, what its refusal says) for each of :data:`MALFORMED_IDS`.
MALFORMED = {
    "compare": [
        ("a,b\r0.9,0.8\r0.91,x\r", "line 3, column 2: b must be a finite number"),   # CR-only line ends
        ("a,b\n0.9,0.8\n0.91," + "9" * 200_000 + "\n", "line 3, column 2: cell must be at most 131,072 characters"),
        ("a,b\n0.9,0.8\nnan,0.8\n", "line 3, column 1: a must be a finite number"),
        ("a,b\n0.9,0.8\n0.91,-inf\n", "line 3, column 2: b must be a finite number"),
    ],
    "ladder": [
        ("a,b\r0,1\r1,x\r", "line 3, column 2 (b): loss must be a number in [0, 1]; got 'x'"),   # CR-only line ends
        ("a,b\n0,1\n1," + "7" * 200_000 + "\n", "line 3, column 2: cell must be at most 131,072 characters long"),
        ("a,b\n0,1\n1,nan\n", "line 3, column 2 (b): loss must be a number in [0, 1]; got 'nan'"),
        ("a,b\n0,1\ninf,0\n", "line 3, column 1 (a): loss must be a number in [0, 1]; got 'inf'"),
    ],
}


def drop(page, prefix: str, path: Path, content: str | bytes) -> Path:
    """Write ``content`` (text as UTF-8) to ``path`` and drop it on ``.{prefix}-upload``; returns ``path``."""
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    page.locator(f".{prefix}-upload input[type=file]").first.set_input_files(str(path))
    return path


def refused_upload(page, prefix: str, tmp_path: Path, content: str, needle: str) -> None:
    """Drop ``content`` as bad.csv on ``.{prefix}-upload``: ``.{prefix}-error`` names what is wrong (``needle``)."""
    drop(page, prefix, tmp_path / "bad.csv", content)
    expect(page.locator(f".{prefix}-error .md-error").first).to_contain_text(needle)


#: (viewport, query) each page is looked at with: a phone, a dark desktop, a light desktop.
VIEWPORTS = pytest.mark.parametrize("viewport,query", [((390, 844), ""), ((1440, 900), "?theme=dark"),
                                                       ((1440, 900), "")], ids=["phone", "dark", "desktop"])


def shown_at(browser, server, open_page, viewport, query: str, name: str, ready: str, shown=None):
    """Open ``/{name}{query}`` at ``viewport`` until ``ready`` (then ``shown(page)``), screenshot it into ARTIFACTS.

    Returns ([document width, window width], the console's (type, text) messages).
    """
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    pg = context.new_page()
    messages: list = []
    pg.on("console", lambda msg: messages.append((msg.type, msg.text)))
    try:
        open_page(pg, server, f"/{name}" + query, ready)
        if shown is not None:
            shown(pg)
        pg.wait_for_timeout(1000)
        width = pg.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        pg.screenshot(path=str(ARTIFACTS / f"{name}_{viewport[0]}{'_dark' if query else ''}.png"), full_page=True)
    finally:
        context.close()
    return width, messages


def reveal(page, selector: str, timeout: int = 60_000) -> None:
    """Scroll down, part after part built when seen (``ui.lazy.WhenSeen``), until ``selector`` shows.

    What a served page builds when scrolled to is not there after load; a test of it scrolls to it first,
    as a person does.
    """
    holders = page.locator(".md-when-seen-holder")
    for i in range(holders.count()):
        if page.locator(selector).count():
            break
        holders.nth(i).scroll_into_view_if_needed()
        page.wait_for_timeout(300)
    page.locator(selector).first.wait_for(state="visible", timeout=timeout)
