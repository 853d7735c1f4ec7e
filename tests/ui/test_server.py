"""The server ``meter-dashboard serve`` starts: where it listens, gzip, bytes per page, session cleanup,
websocket limit, several processes (issues 13 and 15 #6).

Figures (latency under load, memory per session) are measured by tests/benchmarks/load, not here.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gzip
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect
from tornado.websocket import WebSocketClosedError

from meter_dashboard.core.serving import websocket_limit
from tests.benchmarks.load.harness import READY, Server, free_port, page_load
from tests.benchmarks.load.planner import QUERY
from tests.benchmarks.load.protocol import Session

pytestmark = pytest.mark.ui

MAX_PAGE_BYTES = 2 * 1024 * 1024  # issue 13: first load, cold cache, on the wire


def run_async(scenario):
    """``asyncio.run(scenario())`` in a worker thread (Playwright's sync API owns this thread's loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(scenario())).result()


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for name, width in (("tcp", 8), ("tcp6", 32)):
        path = Path("/proc/net") / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                if width == 8:
                    found.add(".".join(str(b) for b in reversed(bytes.fromhex(address))))
                else:
                    found.add("::1" if address == "0" * 24 + "01000000" else
                              "::" if address == "0" * 32 else address)
    return found


def test_listens_on_this_machine_only_by_default():
    port = free_port()
    server = Server([sys.executable, "-m", "meter_dashboard", "serve", "--port", str(port), "--no-show"],
                    port, "/docs")
    with server:
        assert listening_addresses(port) == {"127.0.0.1"}
    assert "warning" not in server.log_path.read_text()


def test_every_interface_is_a_choice_with_a_warning():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "meter_dashboard", "serve", "--port", str(port), "--no-show",
                             "--address", "0.0.0.0"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        first = proc.stderr.readline().strip()
        deadline = time.monotonic() + 90
        while listening_addresses(port) != {"0.0.0.0"} and time.monotonic() < deadline:
            time.sleep(0.3)
        assert listening_addresses(port) == {"0.0.0.0"}
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert first.startswith("meter-dashboard serve: warning: listening on every network interface")
    assert "no login" in first


def _get(url: str, encoding: str | None):
    request = urllib.request.Request(url, headers={"Accept-Encoding": encoding} if encoding else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.headers, response.read()


@pytest.mark.parametrize("path", ["/static/js/bokeh.min.js", "/planner", "/docs"])
def test_responses_are_gzipped_for_browsers_that_accept_it(server, path):
    headers, body = _get(server + path, "gzip")
    assert headers["Content-Encoding"] == "gzip"
    plain_headers, plain = _get(server + path, None)
    assert plain_headers["Content-Encoding"] is None
    if path.startswith("/static"):  # the pages themselves carry a new session token each time
        assert gzip.decompress(body) == plain
        assert len(body) < 0.4 * len(plain)
        again_headers, again = _get(server + path, "gzip")  # compressed once per process: the same bytes again
        assert again == body and again_headers["Content-Encoding"] == "gzip"
        assert int(again_headers["Content-Length"]) == len(body)


@pytest.mark.parametrize("name", list(READY)[:-1])
def test_first_load_is_at_most_2_mib_on_the_wire(browser, server, name):
    load = page_load(browser, f"{server}/{name}", READY[name])
    assert load["http_bytes"] + load["ws_bytes"] <= MAX_PAGE_BYTES, load
    assert load["decoded_bytes"] > 2 * load["http_bytes"]  # what gzip saved


@pytest.fixture(scope="module")
def stats_server():
    """The dashboard with /_perf/stats, sessions destroyed 1 s after their browser left."""
    with Server.dashboard("--session-lifetime", "1") as server:
        yield server


def test_sessions_are_destroyed_and_freed_once_the_browser_left(stats_server):
    async def scenario():
        baseline = stats_server.stats()
        session = await Session.open(stats_server.base, "/planner", QUERY)
        opened = stats_server.stats()
        await session.close()
        deadline = time.monotonic() + 30
        while (after := stats_server.stats())["sessions"] > baseline["sessions"] and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        return baseline, opened, after

    baseline, opened, after = run_async(scenario)
    planner = "meter_dashboard.meter.view.Planner"
    assert opened["sessions"] == baseline["sessions"] + 1
    assert opened["classes"].get(planner, 0) == baseline["classes"].get(planner, 0) + 1
    assert after["sessions"] == baseline["sessions"]
    assert after["documents"] == baseline["documents"]
    assert after["classes"].get(planner, 0) == baseline["classes"].get(planner, 0)
    assert after["classes"].get("meter_dashboard.meter.model.MeterPlan", 0) == \
        baseline["classes"].get("meter_dashboard.meter.model.MeterPlan", 0)
    assert after["panel_views"] == baseline["panel_views"]
    with urllib.request.urlopen(stats_server.base + "/docs", timeout=30) as response:  # routes compose
        assert response.status == 200


def test_a_websocket_message_over_the_limit_closes_only_that_connection(stats_server):
    limit = websocket_limit()

    async def scenario():
        big = await Session.open(stats_server.base, "/planner", QUERY)
        other = await Session.open(stats_server.base, "/planner", QUERY)
        padding = "x" * (limit - 1000)  # a valid patch just under the limit is answered
        reply = await other.request("PATCH-DOC", {"events": [], "padding": padding}, timeout=120)
        try:  # the same patch just over the limit ends that connection
            await big.request("PATCH-DOC", {"events": [], "padding": padding + "x" * 2000}, timeout=120)
        except (ConnectionError, WebSocketClosedError):
            pass
        seconds = await other.change("delta-input", "0.05", await other.wait_text_id("label-count-regular"),
                                     "label-count-regular", "91,985")
        await other.close()
        await big.close()
        return reply, big.ws.close_code, list(big.errors), seconds

    reply, close_code, errors, seconds = run_async(scenario)
    assert reply == {}  # Bokeh's OK
    assert errors and errors[0].startswith("connection lost")
    assert close_code in (1009, None)  # "message too big" (Tornado may drop the stream before the frame)
    assert seconds < 60  # the other session still answers


def test_several_processes_share_the_port(browser):
    with Server.dashboard("--num-procs", "2", stats=False) as server:
        deadline = time.monotonic() + 30
        while len(server.pids()) < 3 and time.monotonic() < deadline:  # the parent and two workers
            time.sleep(0.3)
        assert len(server.pids()) == 3
        context = browser.new_context()
        try:
            for _ in range(4):  # the page and its websocket may reach different processes
                page = context.new_page()
                page.goto(server.base + "/planner" + QUERY)
                expect(page.locator(".label-count-regular").first).to_have_text("100,033", timeout=120_000)
                page.close()
        finally:
            context.close()


def test_what_a_view_sends_right_after_it_is_built_is_not_overtaken_by_the_page(server):
    # /approve draws its answer on the next tick when the result is cached (every open after the first):
    # the page's own message must reach the browser first, or the answer is lost ("computing…" for good)
    async def scenario():
        found = []
        for _ in range(3):
            session = await Session.open(server, "/approve", "", timeout=120)
            pane = await session.wait_text_id("approve-count", timeout=60)
            found.append(session.value_in(pane, "approve-count"))
            await session.close()
        return found

    counts = run_async(scenario)
    assert len(counts) == 3 and len(set(counts)) == 1 and counts[0]  # the same answer each time


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (its children, theirs, ...), from Linux's /proc."""
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            with contextlib.suppress(OSError):
                for child in (task / "children").read_text().split():
                    found.add(int(child))
                    todo.append(int(child))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended (waiting for its parent to collect it)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from Linux's /proc")
def test_kill_stops_the_forks_and_their_worker_processes():
    """``kill PID`` (SIGTERM) on ``serve --num-procs 2``: every process it started ends, exit status 143."""
    with Server.dashboard("--num-procs", "2", stats=False) as server:
        deadline = time.monotonic() + 60
        while len(server.pids()) < 3 and time.monotonic() < deadline:  # the parent and two forks
            time.sleep(0.3)

        async def open_approve():  # an /approve session starts its process's SRGP worker processes
            for _ in range(2):  # the two connections may land on either fork
                session = await Session.open(server.base, "/approve", "", timeout=120)
                await session.wait_text_id("approve-count", timeout=60)
                await session.close()

        run_async(open_approve)
        deadline = time.monotonic() + 60
        while len(_descendants(server.proc.pid)) < 4 and time.monotonic() < deadline:  # forks + worker processes
            time.sleep(0.3)
        started = _descendants(server.proc.pid)
        assert len(started) >= 4, started  # two forks, and at least one fork's fork server and worker
        server.proc.send_signal(signal.SIGTERM)  # the first process only, as `kill PID` does
        assert server.proc.wait(timeout=60) == 143
        deadline = time.monotonic() + 60
        while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert {pid: _command(pid) for pid in started if _alive(pid)} == {}


def _command(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    return "?"


def test_the_debug_log_traces_each_page(server):
    """The suite's server runs with ``--log-level debug``: each page's queueing and build are logged, timestamped."""
    from tests.conftest import ARTIFACTS

    async def scenario():
        session = await Session.open(server, "/ladder", "", timeout=120)
        await session.close()

    run_async(scenario)
    log = (ARTIFACTS / "server.log").read_text(encoding="utf-8", errors="replace")
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} DEBUG meter_dashboard\.app\.pages: "
    assert re.search(stamp + r"page ladder queued for building \(\d+ waiting\)", log)
    assert re.search(stamp + r"page ladder built for session \S+", log)


def test_a_served_page_skips_panels_ide_signatures():
    """``pn.extension()`` rewrites the signature of every Panel class for IDEs unless told not to; a served page's
    build tells it (server CPU per session opened), a notebook's does not."""
    import types
    import weakref

    import panel as pn
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from meter_dashboard.app import pages

    class _Session:  # the parts of a Bokeh session context a page reads
        id = "test"
        server_context = None
        request = types.SimpleNamespace(arguments={}, cookies={}, headers={}, query="", protocol="http",
                                        host="localhost:5006", path="/planner")

    doc, session = Document(), _Session()
    doc._session_context = weakref.ref(session)
    with set_curdoc(doc):
        pages.build("planner")
        assert pn.config.apply_signatures is False
    pages.build("planner")  # a notebook: Panel's default
    assert pn.config.apply_signatures is True
