"""The change every load script times: a new δ in the planner until the new regular count shows.

The same change is made on the floor app (a new number until its count shows), so the two
figures compare like with like.  Over the Bokeh protocol (:mod:`.protocol`) or in a browser.
"""
from __future__ import annotations

import itertools
import time

from meter_dashboard.bounds import meter as M

from .floor_app import answer
from .harness import SHOWS

EPSILON = [0.01, 0.02, 0.03, 0.04, 0.05]
QUERY = "?epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.01&steps=10"
DELTAS = ["0.05", "0.02", "0.1", "0.01"]
FLOOR_VALUES = ["0.05", "0.02", "0.1", "0.01"]

_COUNTS = {d: f"{M.labels('regular', EPSILON, float(d), 10):,}" for d in DELTAS}


def expected(delta: str) -> str:
    """The regular count the planner shows for ``delta`` (computed here, not read from the page)."""
    return _COUNTS[delta]


# ---------------------------------------------------------------------- Bokeh protocol
class PlannerDriver:
    """One protocol session on the planner, changing δ through :data:`DELTAS` in turn."""

    def __init__(self, session, start: int = 0):
        self.session = session
        self.pane = None  # the page's first response says "computing…": the numbers arrive once it is connected
        self.values = itertools.cycle(DELTAS[start % len(DELTAS):] + DELTAS[:start % len(DELTAS)])

    async def change(self, timeout: float = 60) -> float:
        if self.pane is None:
            self.pane = await self.session.wait_text_id("label-count-regular", timeout=timeout)
        delta = next(self.values)
        return await self.session.change("delta-input", delta, self.pane, "label-count-regular", expected(delta),
                                         timeout=timeout)


class FloorDriver:
    """One protocol session on the floor app."""

    def __init__(self, session):
        self.session = session
        self.pane = session.text_id("floor-count")
        self.values = itertools.cycle(FLOOR_VALUES)

    async def change(self, timeout: float = 60) -> float:
        value = next(self.values)
        return await self.session.change("floor-input", value, self.pane, "floor-count", answer(value),
                                         timeout=timeout)


# ---------------------------------------------------------------------- browser
def browser_change(page, kind: str, value: str) -> float:
    """Seconds from typing ``value`` (and Enter) until the new count is on screen (polled every frame)."""
    if kind == "planner":
        box, cell, text = ".delta-input input", ".label-count-regular", expected(value)
    else:
        box, cell, text = ".floor-input input", ".floor-count", answer(value)
    field = page.locator(box).first
    start = time.perf_counter()
    field.fill(value)
    field.press("Enter")
    page.wait_for_function(SHOWS, arg=[cell, text, "equals"], polling="raf", timeout=60_000)
    return time.perf_counter() - start
