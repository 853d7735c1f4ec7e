"""Shared fixtures: one dashboard server per test session, Debian's chromium via Playwright.

Used by the browser tests (tests/ui) and the browser-latency benchmarks (tests/benchmarks).

- ``server``: base URL (``http://127.0.0.1:PORT``) of ``meter-dashboard serve`` serving every page.
- ``browser``: headless chromium (``/usr/bin/chromium``), never a downloaded browser.
- ``page``: a fresh page; ``page.console_errors`` collects console errors and page errors;
  a screenshot is kept in ``tests/ui/artifacts/`` when a test fails.
- ``open_page`` fixture: ``open_page(page, server, path, selector)`` navigates and waits until
  Panel has rendered; ``relevant_errors`` filters console errors worth failing for.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("METER_DASHBOARD_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "ui" / "artifacts"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/ui" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.ui)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server():
    yield from serve("server.log")


def serve(log_name: str, *options: str, program: tuple = ("-m", "meter_dashboard")):
    """Start ``meter-dashboard serve`` (its log in ``tests/ui/artifacts/<log_name>``), yield its URL, stop it.

    ``program``: how Python runs the command line (e.g. ``("-c", "<a setting changed>; <the CLI's main()>")``)."""
    port = _free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = open(ARTIFACTS / log_name, "w")
    proc = subprocess.Popen(
        [sys.executable, *program, "serve", "--port", str(port), "--address", "127.0.0.1",
         "--no-show", "--allow-websocket-origin", f"127.0.0.1:{port}", "--log-level", "debug", *options],
        stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the teardown ends its worker processes too
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"dashboard server exited with {proc.returncode}; see tests/ui/artifacts/{log_name}")
        try:
            with urllib.request.urlopen(base + "/", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("dashboard server did not start within 90 s")
        time.sleep(0.3)
    yield base
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):  # what outlived it: the simulations' worker processes
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


#: The command line with /approve's first responses never waiting for the decisions (``APPROVE_SECONDS = 0``): what a
#: person opening a link gets when its decisions take longer than the first response waits.
NOT_WAITING = ("-c", "import sys; import meter_dashboard.app.first_answer as f; f.APPROVE_SECONDS = 0.0; "
                     "from meter_dashboard.cli import main; sys.exit(main())")


@pytest.fixture(scope="module")
def server_not_waiting():
    """A server whose /approve first responses say what is computed (the decisions are not waited for)."""
    yield from serve("server-not-waiting.log", program=NOT_WAITING)


@pytest.fixture(scope="module")
def browser():
    """Headless chromium for one test module.

    Module scope, not session: Playwright's sync API keeps an asyncio loop running in
    the main thread while it is open, which would break later tests that call
    ``asyncio.run`` (the models' async simulations)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.console_errors = []
    pg.on("console", lambda msg: pg.console_errors.append(msg.text) if msg.type == "error" else None)
    pg.on("pageerror", lambda exc: pg.console_errors.append(str(exc)))
    pg.set_default_timeout(20_000)
    yield pg
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        try:
            pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
        except Exception:  # noqa: BLE001 - best effort
            pass
    context.close()


def _open_page(page, server: str, path: str, ready_selector: str | None = None):
    """Go to ``server + path`` and wait until Panel rendered (and ``ready_selector`` shows)."""
    page.goto(server + path, wait_until="domcontentloaded")
    page.wait_for_function("() => window.Bokeh !== undefined && Bokeh.documents && Bokeh.documents.length > 0",
                           timeout=60_000)
    if ready_selector:
        page.locator(ready_selector).first.wait_for(state="visible", timeout=60_000)
        # the first response's answer (issue 29) has given way to the live view, which now holds the selector
        page.locator(".md-first[data-live]").wait_for(state="detached", timeout=60_000)
    return page


def _relevant_errors(errors):
    """Console errors that come from the page (not from blocked network fetches of fonts)."""
    return [e for e in errors if "net::ERR" not in e and "favicon" not in e]


@pytest.fixture
def open_page():
    """``open_page(page, server, "/planner?delta=0.1", ".label-count-regular")``."""
    return _open_page


@pytest.fixture
def relevant_errors():
    """``relevant_errors(page.console_errors)``: errors worth failing a test for."""
    return _relevant_errors
