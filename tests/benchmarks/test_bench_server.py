"""The served dashboard under load, as pytest-benchmark figures (issue 13); reported, never asserted.

Run with ``python -m pytest tests/benchmarks/test_bench_server.py --benchmark-enable``.  The
normal suite (``--benchmark-disable``) runs the light ones once as tests and skips the heavy
ones (head-of-line, many sessions, churn); ``python -m tests.benchmarks.load`` prints the whole
table of issue 13 with the same code.

Every figure has its floor beside it, measured the same way in the same run: the floor app
(one input, one HTML pane, a 1,000-point Bokeh line) served with the same settings.
"""
from __future__ import annotations

import asyncio
import threading

import pytest

from tests.benchmarks.load import churn, cost, head_of_line, sessions
from tests.benchmarks.load.harness import READY, Server, page_load
from tests.benchmarks.load.planner import QUERY, FloorDriver, PlannerDriver
from tests.benchmarks.load.protocol import Session


class _Loop:
    """One asyncio loop in a thread for the protocol clients (Playwright's sync API owns the main one)."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro, timeout: float = 3600):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def loop():
    runner = _Loop()
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def dashboard():
    with Server.dashboard("--session-lifetime", "5") as server:
        yield server


@pytest.fixture(scope="module")
def floor():
    with Server.floor() as server:
        yield server


def _heavy(benchmark):
    if benchmark.disabled:
        pytest.skip("a load run of minutes: python -m pytest tests/benchmarks --benchmark-enable")


# ---------------------------------------------------------------------- first load (browser)
@pytest.mark.parametrize("name", ["floor", "planner", "session", "approve"])
def test_bench_first_render(benchmark, browser, dashboard, floor, name):
    url = floor.base + "/floor" if name == "floor" else f"{dashboard.base}/{name}{QUERY if name == 'planner' else ''}"
    page_load(browser, url, READY[name])  # warm: the page's modules imported once
    loads = []

    def load():
        loads.append(page_load(browser, url, READY[name]))

    benchmark.pedantic(load, rounds=3, iterations=1)
    # the timed call lasts until the controls are live; the moment the number was on screen is apart
    benchmark.extra_info["number_seconds"] = loads[-1]["seconds"]
    benchmark.extra_info["live_seconds"] = loads[-1]["live_seconds"]
    benchmark.extra_info["http_bytes"] = loads[-1]["http_bytes"]
    benchmark.extra_info["ws_bytes"] = loads[-1]["ws_bytes"]
    benchmark.extra_info["uncompressed_http_bytes"] = loads[-1]["decoded_bytes"]


# ---------------------------------------------------------------------- change -> number (protocol)
@pytest.mark.parametrize("name", ["floor", "planner"])
def test_bench_change_to_number(benchmark, loop, dashboard, floor, name):
    """Server round trip of one change (no rendering): type, Enter, until the new number arrives."""
    if name == "floor":
        session = loop.run(Session.open(floor.base, "/floor"))
        driver = FloorDriver(session)
    else:
        session = loop.run(Session.open(dashboard.base, "/planner", QUERY))
        driver = PlannerDriver(session)
    for _ in range(3):
        loop.run(driver.change())
    server = floor if name == "floor" else dashboard
    cpu0 = server.cpu_seconds()
    benchmark.pedantic(lambda: loop.run(driver.change()), rounds=15, iterations=1)
    benchmark.extra_info["server_cpu_seconds_per_change"] = (server.cpu_seconds() - cpu0) / 15
    loop.run(session.close())


def test_bench_server_cpu_per_session(benchmark, loop, dashboard, floor):
    figures = {}

    def measure():
        figures.update(loop.run(cost.run(dashboard, floor, ["planner", "session", "approve"], 2, 5))["open"])

    benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update({f"cpu_seconds_per_open_{k}": v for k, v in figures.items()})


# ---------------------------------------------------------------------- heavy: head-of-line, many, churn
@pytest.mark.slow
@pytest.mark.parametrize("action", head_of_line.ACTIONS)
def test_bench_head_of_line(benchmark, loop, action):
    """A planner change while another person's long action runs (fresh server per action)."""
    _heavy(benchmark)
    results = {}

    def measure():
        with Server.dashboard() as server:
            results.update(loop.run(head_of_line.run(server.base, [action], alone=10, limit=300)))

    benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info["alone_p50"] = results["alone"]["p50"]
    benchmark.extra_info["during_p50"] = results[action]["during"]["p50"]
    benchmark.extra_info["during_max"] = results[action]["during"]["max"]
    benchmark.extra_info["action_seconds"] = results[action]["action_seconds"]


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 25, 50])
def test_bench_concurrent_sessions(benchmark, loop, n):
    """n planner sessions, each changing δ every second for 60 s."""
    _heavy(benchmark)
    results = []

    def measure():
        with Server.dashboard("--session-lifetime", "5") as server:
            results.extend(loop.run(sessions.run(server, [n], 60.0, expiry_wait=12.0)))

    benchmark.pedantic(measure, rounds=1, iterations=1)
    level = results[0]
    benchmark.extra_info.update({"p50": level["latency"]["p50"], "p95": level["latency"]["p95"],
                                 "errors": len(level["errors"]), "open_seconds": level["open_seconds"],
                                 "rss_mib_per_idle_session": level["rss_per_session"],
                                 "rss_mib_after_expiry_minus_idle": level["rss_after"] - level["rss_idle"]})


@pytest.mark.slow
def test_bench_open_close_100(benchmark, loop):
    _heavy(benchmark)
    results = {}

    def measure():
        with Server.dashboard("--session-lifetime", str(churn.LIFETIME)) as server:
            results.update(loop.run(churn.run(server, 100, ["planner"], wait=churn.LIFETIME * 2 + 3)))

    benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update({"rss_mib_growth": results["rss_after"] - results["rss_before"],
                                 "sessions_after": results["after"]["sessions"],
                                 "objects_growth": results["after"]["meter_dashboard_objects"]
                                 - results["before"]["meter_dashboard_objects"]})
