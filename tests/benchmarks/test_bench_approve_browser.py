"""Browser figures of /approve (issue 11 #9, issue 13), Playwright in Debian chromium: reported, never asserted.

Run with:  python -m pytest tests/benchmarks/test_bench_approve_browser.py --benchmark-enable
- first render: navigation until the first decision count is on screen (15 and 50 tests);
- alpha change: type a new alpha until the first answer (the level of test 1) and until every decision;
- head of line: another user's planner change, alone, while /approve recomputes presSRGP on 50 tests, and
  while an /approve simulation runs.
"""
from __future__ import annotations

import itertools

import pytest

from meter_dashboard.bounds import meter as M
from meter_dashboard.core import formatting as fmt
from tests.benchmarks.load.harness import SHOWS

_COMPLETE = """([n]) => {
  let decided = 0, pending = false;
  const walk = (root) => {
    decided += root.querySelectorAll('td.approve-decision:not(.approve-compare)').length;
    if (root.querySelector('.approve-pending')) pending = true;
    for (const node of root.querySelectorAll('*')) if (node.shadowRoot) walk(node.shadowRoot);
  };
  walk(document);
  return decided >= n && !pending;
}"""
_EXAMPLES = {"refits": 15, "adversary": 50}
_PLANNER = "/planner?epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.01&steps=10"


def _wait(page, selector, text=None):
    page.wait_for_function(SHOWS, arg=[selector, text, "equals"], polling="raf", timeout=120_000)


@pytest.mark.parametrize("example", list(_EXAMPLES))
def test_approve_first_number(benchmark, page, server, example):
    url = f"{server}/approve?example={example}"
    page.goto(url)
    _wait(page, ".approve-count")  # warm: the server has imported everything once

    def render():
        page.goto(url)
        _wait(page, ".approve-count")

    benchmark.pedantic(render, rounds=5, iterations=1)


def _alpha_change(page, server, example, until_complete):
    page.goto(f"{server}/approve?example={example}")
    _wait(page, ".approve-count")
    page.wait_for_function(_COMPLETE, arg=[_EXAMPLES[example]], polling="raf", timeout=120_000)
    box = page.locator(".approve-alpha input").first
    alphas = itertools.cycle(["0.05", "0.2", "0.07", "0.1", "0.15", "0.03", "0.04", "0.06", "0.08", "0.09"])

    def change():
        alpha = next(alphas)
        box.fill(alpha)
        box.press("Enter")
        _wait(page, ".approve-first-level", fmt.number(0.8 * float(alpha)))
        if until_complete:
            page.wait_for_function(_COMPLETE, arg=[_EXAMPLES[example]], polling="raf", timeout=120_000)
        else:  # let it finish before the next round, outside the measurement
            page.wait_for_timeout(0)
        return alpha

    return change


@pytest.mark.parametrize("example", list(_EXAMPLES))
def test_approve_alpha_change_first_answer(benchmark, page, server, example):
    change = _alpha_change(page, server, example, until_complete=False)

    def measured():
        change()

    benchmark.pedantic(measured, rounds=8, iterations=1,
                       teardown=lambda: page.wait_for_function(_COMPLETE, arg=[_EXAMPLES[example]],
                                                                polling="raf", timeout=120_000))


@pytest.mark.parametrize("example", list(_EXAMPLES))
def test_approve_alpha_change_all_decisions(benchmark, page, server, example):
    benchmark.pedantic(_alpha_change(page, server, example, until_complete=True), rounds=8, iterations=1)


def _planner_changer(page, server):
    page.goto(server + _PLANNER)
    _wait(page, ".label-count-regular", "100,033")
    box = page.locator(".delta-input input").first
    deltas = itertools.cycle(["0.05", "0.02", "0.1", "0.01"])

    def change():
        value = next(deltas)
        box.fill(value)
        box.press("Enter")
        expected = M.labels("regular", [0.01, 0.02, 0.03, 0.04, 0.05], float(value), 10)
        _wait(page, ".label-count-regular", f"{expected:,}")

    return change


@pytest.mark.parametrize("other", ["idle", "approve-recomputes", "approve-simulates"])
def test_planner_change_while_approve_works(benchmark, browser, page, server, other):
    change = _planner_changer(page, server)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    approve = context.new_page()
    approve.goto(f"{server}/approve?example=adversary&method=pres-srgp")
    _wait(approve, ".approve-count")
    approve.wait_for_function(_COMPLETE, arg=[50], polling="raf", timeout=120_000)
    alphas = itertools.cycle(["0.05", "0.2", "0.07", "0.1", "0.15", "0.03", "0.04", "0.06", "0.08", "0.09", "0.11"])
    if other == "approve-simulates":
        approve.get_by_text("Simulations", exact=True).first.click()
        box = approve.locator(".approve-fwer-replicates input").first
        box.fill("500")
        box.press("Enter")
        approve.locator(".approve-fwer-run button").first.click()
        approve.wait_for_timeout(2000)

    def setup():
        if other == "approve-recomputes":  # another user's alpha change: presSRGP on 50 tests starts over
            box = approve.locator(".approve-alpha input").first
            box.fill(next(alphas))
            box.press("Enter")
            approve.wait_for_timeout(30)

    def teardown():
        if other == "approve-recomputes":
            approve.wait_for_function(_COMPLETE, arg=[50], polling="raf", timeout=120_000)

    benchmark.pedantic(change, setup=setup, teardown=teardown, rounds=8, iterations=1)
    if other == "approve-simulates":
        approve.locator(".approve-fwer-cancel button").first.click()
    context.close()
