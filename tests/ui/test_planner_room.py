"""A room opening the planner link at once (issues 19 and 24): the page at once, the numbers right after.

- The first response of a session (plain HTML) holds the header and the answer (issue 29); the view then
  arrives with its inputs and a "computing…" state, no numbers; the numbers replace it.
- Ten people open the link at once (ten browser contexts): each sees the header and the inputs,
  then the paper's count (Cor 2, Sec 5.1: 38,005).
- A change is one message: δ typed once brings one PATCH-DOC with the answer's markup and the
  curve's changed columns (not its x column), nothing rebuilt.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json

import pytest
from playwright.sync_api import expect
from tornado.httpclient import AsyncHTTPClient

from meter_dashboard.bounds import meter as M
from tests.benchmarks.load.harness import free_port
from tests.benchmarks.load.planner import QUERY
from tests.benchmarks.load.protocol import Session

pytestmark = pytest.mark.ui

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]


def css_classes(node) -> set:
    """Every css class of every model in a serialized document."""
    found, stack = set(), [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            classes = item.get("attributes", {}).get("css_classes") if item.get("type") == "object" else None
            found.update(classes or [])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def run_async(scenario):
    """``asyncio.run(scenario())`` in a worker thread (Playwright's sync API owns this thread's loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(scenario())).result()


class Recording(Session):
    """A protocol session that keeps every PATCH-DOC it receives."""

    patches: list

    async def _receive(self):
        header, metadata, content = await super()._receive()
        if header.get("msgtype") == "PATCH-DOC":
            self.__dict__.setdefault("patches", []).append(content)
        return header, metadata, content


def test_the_first_response_has_header_and_answer_then_the_view_carries_the_numbers(server):
    async def scenario():
        response = await AsyncHTTPClient().fetch(server + "/planner" + QUERY, request_timeout=60)
        session = await Session.connect(server, "/planner", response.body)
        first = list(session.texts.values())  # the view as it arrived
        inputs = css_classes(session.doc) | {c for m in session.models.values()
                                             for c in m.get("attributes", {}).get("css_classes") or []}
        pane = await session.wait_text_id("label-count-incremental", timeout=60)
        await session.wait_value(pane, "label-count-incremental", "38,005", timeout=60)
        await session.close()
        return response.body.decode("utf-8"), first, inputs, list(session.models.values())

    page, first, inputs, session_models = run_async(scenario)
    # the header and the answer are plain HTML in the first response, before any JavaScript ran (issue 29)
    assert "md-nav" in page and ">Planner<" in page and 'label-count-incremental">38,005<' in page
    markup = " ".join(first)
    # the view is built once the browser connected, so it arrives with its numbers in its one message
    assert 'label-count-incremental">38,005<' in markup.replace("&quot;", '"').replace("&gt;", ">").replace("&lt;", "<")
    assert {"planner-form", "meter-table"} <= inputs  # the inputs: the sidebar's forms (ui/form.py) and the table
    forms = " ".join(m["attributes"]["markup"] for m in session_models if "markup" in m.get("attributes", {}))
    assert all(f"md-field {box}" in forms for box in ("delta-input", "steps-input", "budget-input"))


def test_ten_people_open_the_link_at_once(browser, server):
    contexts = [browser.new_context(viewport={"width": 1200, "height": 900}) for _ in range(10)]
    try:
        pages = [context.new_page() for context in contexts]
        for page in pages:  # all ten requests leave before any page is looked at
            page.goto(server + "/planner" + QUERY, wait_until="commit")
        for page in pages:
            expect(page.locator(".md-nav").first).to_be_visible(timeout=60_000)
            expect(page.locator(".delta-input input").first).to_be_visible(timeout=60_000)
        for page in pages:
            expect(page.locator(".label-count-incremental").first).to_have_text("38,005", timeout=60_000)
    finally:
        for context in contexts:
            context.close()


def test_a_change_is_one_message_with_only_what_changed(server):
    async def scenario():
        session = await Recording.open(server, "/planner", QUERY)
        pane = await session.wait_text_id("label-count-regular", timeout=60)
        await session.wait_value(pane, "label-count-regular", "100,033", timeout=60)
        await asyncio.sleep(0.5)
        session.__dict__["patches"] = []
        expected = f"{M.labels('regular', NONUNIFORM, 0.05, 10):,}"
        await session.change("delta-input", "0.05", pane, "label-count-regular", expected, timeout=60)
        await asyncio.sleep(1.0)  # anything sent late would be a second message
        patches = list(session.__dict__["patches"])
        await session.close()
        return patches

    patches = run_async(scenario)
    assert len(patches) == 1, [json.dumps(p)[:300] for p in patches]
    events = patches[0]["events"]
    data = [e for e in events if e["kind"] == "ColumnDataChanged"]
    assert len(data) == 1 and set(data[0]["cols"]) == set(M.VARIANTS)  # the counts travel, x does not
    assert not any(e["kind"] == "ModelChanged" and e["attr"] in ("children", "objects", "renderers")
                   for e in events)  # nothing rebuilt


def test_views_are_built_once_the_room_has_its_first_responses():
    """While pages are still being requested (first responses, a few ms each), no view (hundreds of ms, holding
    the loop) is built: the builder waits until the requests stop, or at most ARRIVAL_WAIT_SECONDS."""
    from meter_dashboard.app import pages

    async def scenario():
        pages._arrived()
        waiting = asyncio.ensure_future(pages._after_arrivals())
        for _ in range(6):  # people keep arriving, each before the last has been quiet for long
            await asyncio.sleep(pages.ARRIVAL_QUIET_SECONDS / 3)
            assert not waiting.done()
            pages._arrived()
        await asyncio.wait_for(waiting, timeout=pages.ARRIVAL_QUIET_SECONDS * 20)  # the requests stopped
        pages.ARRIVAL_WAIT_SECONDS, wait = 0.3, pages.ARRIVAL_WAIT_SECONDS
        try:  # arrivals that never stop hold a view back at most ARRIVAL_WAIT_SECONDS
            waiting = asyncio.ensure_future(pages._after_arrivals())
            while not waiting.done():
                pages._arrived()
                await asyncio.sleep(0.01)
        finally:
            pages.ARRIVAL_WAIT_SECONDS = wait

    run_async(scenario)


def test_the_pages_are_imported_before_serving_and_before_processes_fork(monkeypatch):
    import importlib

    import panel as pn

    from meter_dashboard.app import pages

    imported, served, collector = [], {}, []
    real = importlib.import_module
    monkeypatch.setattr(pages.gc, "freeze", lambda: collector.append("freeze"))  # not this test process's collector
    monkeypatch.setattr(pages.gc, "set_threshold", lambda *t: collector.append(t))
    monkeypatch.setattr(importlib, "import_module", lambda name, *a: imported.append(name) or real(name, *a))
    monkeypatch.setattr(pn, "serve", lambda apps, **options: served.update(options, apps=apps))
    pages.serve(port=free_port(), show=False, pages=["planner", "ci"], num_procs=2)
    assert served["num_procs"] == 2 and set(served["apps"]) == {"planner", "ci"}
    assert {pages.PAGES["planner"].module, pages.PAGES["ci"].module} <= set(imported)
    imported.clear()
    pages.serve(port=free_port(), show=False, pages=["planner"], num_procs=1)  # one process: before serving too
    assert pages.PAGES["planner"].module in imported
    assert collector == ["freeze", (20_000, 20, 20)] * 2  # then what is loaded is frozen out of the collector's walks
