"""Browser latency of the planner, measured with Playwright in Debian chromium (reported, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_planner_browser.py --benchmark-enable
- first render: navigation until the regular count is on screen;
- round trip: type a new δ and press Enter until the new regular count is on screen.
"""
from __future__ import annotations

import itertools

from playwright.sync_api import expect

from meter_dashboard.bounds import meter as M
from tests.benchmarks.load.harness import SHOWS

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]


URL = "/planner?epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.01&steps=10"


def test_planner_first_render(benchmark, page, server, open_page):
    def render():
        open_page(page, server, URL, ".label-count-regular")

    benchmark.pedantic(render, rounds=3, iterations=1)
    expect(page.locator(".label-count-regular").first).to_have_text("100,033")


def test_planner_round_trip_delta_to_number(benchmark, page, server, open_page):
    open_page(page, server, URL, ".label-count-regular")
    deltas = itertools.cycle(["0.05", "0.02", "0.1", "0.01"])
    box = page.locator(".delta-input input").first
    cell = page.locator(".label-count-regular").first
    expect(cell).to_have_text("100,033")

    def change():
        value = next(deltas)
        expected = f"{M.labels('regular', NONUNIFORM, float(value), 10):,}"
        box.fill(value)
        box.press("Enter")
        page.wait_for_function(SHOWS, arg=[".label-count-regular", expected, "equals"], polling="raf", timeout=20_000)

    benchmark.pedantic(change, rounds=12, iterations=1)


# ---------------------------------------------------------------- the exact binomial bound (issue 12)
EXACT_URL = URL + "&bound=binomial"


def _exact_round_trip(page, server, open_page, selector: str, expected_of):
    """Type a new δ (never seen before: nothing cached) and wait until ``selector`` shows ``expected_of(δ)``."""
    open_page(page, server, EXACT_URL, ".label-count-regular")
    expect(page.locator(".label-count-regular").first).to_have_text("86,501", timeout=60_000)
    deltas = (f"{0.011 + 0.0007 * i:.4f}" for i in itertools.count())
    box = page.locator(".delta-input input").first

    def change():
        value = next(deltas)
        box.fill(value)
        box.press("Enter")
        page.wait_for_function(SHOWS, arg=[selector, expected_of(float(value)), "equals"], polling="raf",
                               timeout=60_000)

    return change


def test_planner_exact_round_trip_delta_to_hoeffding_count(benchmark, page, server, open_page):
    """The server's first answer under the exact bound: Hoeffding's count beside "computing…"."""
    change = _exact_round_trip(page, server, open_page, ".hoeffding-count-regular",
                               lambda d: f"{M.labels('regular', NONUNIFORM, d, 10):,}")
    benchmark.pedantic(change, rounds=8, iterations=1)


def test_planner_exact_round_trip_delta_to_exact_count(benchmark, page, server, open_page):
    """Until the exact count (computed in a worker thread) replaces "computing…"."""
    change = _exact_round_trip(page, server, open_page, ".label-count-regular",
                               lambda d: f"{M.labels('regular', NONUNIFORM, d, 10, bound='binomial'):,}")
    benchmark.pedantic(change, rounds=8, iterations=1)
