"""The served pages by name, Panel-free: what the header bar, the landing page, the CLI and the server list.

Each page is its view module (found without importing it) with a title and one line on what it answers.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass

__all__ = ["SITE_TITLE", "Page", "PAGES", "available_pages"]

SITE_TITLE = "meter-dashboard"


@dataclass(frozen=True)
class Page:
    """One served page: its title, the view module providing ``page()``, and one line on what it answers."""

    title: str
    module: str
    summary: str


#: name -> Page, in navigation order.  The URL of each page is /<name>.
PAGES = {
    "planner": Page("Planner", "meter_dashboard.meter.view",
                    "How many labels must the test set have for T more development steps within ε, with "
                    "probability 1 − δ — and what does a label budget buy?"),
    "session": Page("Session replay", "meter_dashboard.session.view",
                    "Replay a development history through the five-colour meter: signals, the distributional "
                    "bound, budget and alarms."),
    "ci": Page("ease.ml/ci", "meter_dashboard.ci.view",
               "Labels for a CI pass/fail condition such as n − o > 0.02 ± 0.01, and replay of a commit trace."),
    "ladder": Page("Ladder", "meter_dashboard.leaderboard.view",
                   "A leaderboard that stays honest under adaptive submissions, and the labels it needs."),
    "compare": Page("P(A>B)", "meter_dashboard.comparison.view",
                    "Is pipeline A really better than B across training runs? Significant, meaningful, or neither."),
    "approve": Page("Approve", "meter_dashboard.approvals.view",
                    "Approve model modifications on a reused test set with a controlled rate of bad approvals "
                    "(SRGP)."),
    "testsets": Page("Test sets", "meter_dashboard.testsets.view",
                     "Guarded test sets, live: developers submit predictions and see only the meter's signal or "
                     "pass/fail, while the budget is enforced."),
}


def available_pages() -> list[str]:
    """The page names whose view modules exist, in navigation order (found without importing them)."""
    return [name for name, spec in PAGES.items() if importlib.util.find_spec(spec.module) is not None]
