"""The planner page's answer and budget sections (Panel): the numbers, and what the label budget buys.

- :class:`AnswerSection` - one pane for the answer (cards, sentence, the table of every variant, the
  progress and the downloads' summary: what changes together shares a pane) and one for what the
  numbers assume.
- :class:`BudgetSection` - what the budget buys under every variant, built (and computed) the first time
  its section is opened; while the exact bound's answers compute, the last ones stay on screen.
"""
from __future__ import annotations

import asyncio

import panel as pn
import param

from ..ui.style import HTML
from . import view_html as markup
from .model import MeterPlan
from .result import TENANT_DISCREPANCY
from .stages import ORDER
from .text import file_stem, plan_inputs, summary_text
from .view_curves import CURVE_NOTE

__all__ = ["AnswerSection", "BudgetSection"]


class AnswerSection(pn.viewable.Viewer):
    """The answer of a plan and what it assumes, as two panes updated in place."""

    plan = param.ClassSelector(class_=MeterPlan)

    def __init__(self, plan: MeterPlan, **params):
        super().__init__(plan=plan, **params)
        # the answer in one pane: cards, sentence, table (and what the range assumes) change together
        self.headlines = HTML("", sizing_mode="stretch_width", css_classes=["planner-headlines", "planner-table"])
        self.assumptions = HTML("", sizing_mode="stretch_width", css_classes=["planner-assumptions"])

    def __panel__(self):
        return self.headlines

    def computing(self) -> None:
        """A served page's first response: "computing…" (the numbers follow once the page is connected)."""
        self.headlines.object = markup.computing()

    def render(self, r, *, budget, stale: bool, share_query: str | None) -> None:
        """The answer for result ``r`` (``budget``: the result whose budget answers show)."""
        p = self.plan
        self.headlines.object = markup.answer(r, stale=stale, budget_from=budget, curves=p.curves,
                                              sweep=p.sweep_curves, work_error=p.work_error, share_query=share_query,
                                              summary=summary_text(r, plan_inputs(r, p.ranges)), stem=file_stem(r))
        self.assumptions.object = markup.assumptions_html(self._notes(r))

    @staticmethod
    def _notes(r) -> list:
        notes = list(r.notes) + [n for n in r.bound_notes() if n not in r.notes]
        return notes + [TENANT_DISCREPANCY, CURVE_NOTE]


class BudgetSection(pn.viewable.Viewer):
    """What the budget buys under every variant (built when opened).

    ``refresh()`` re-renders the page's answer (one message); ``closed()`` says the page's browser left.
    """

    plan = param.ClassSelector(class_=MeterPlan)

    def __init__(self, plan: MeterPlan, refresh, closed, **params):
        super().__init__(plan=plan, **params)
        self.pane: HTML | None = None
        self._refresh, self._closed = refresh, closed
        self._result = None  # the last result whose budget answers are on screen
        self._timer = False
        self._overdue = None  # the plan (its Hoeffding counts) whose answers are late: show "computing…"

    def __panel__(self):
        return self.build()

    def build(self) -> HTML:
        if self.pane is None:
            self.pane = HTML("", sizing_mode="stretch_width", css_classes=["planner-budget", "planner-whatif-section"])
            self.plan.budget_variants = list(ORDER)  # every variant's answers from now on
        return self.pane

    def render(self, stale: bool, budget=None) -> None:
        if self.pane is not None and self.plan.result is not None:
            self.pane.object = markup.budget_html(budget or self.shown(self.plan.result), stale=stale)

    def shown(self, r):
        """The result whose budget answers to show: ``r``, or while its answers are computing the last ones shown.

        Under the exact bound the answers take a while: keeping the last ones on screen meanwhile
        spares a message and a flicker; if they take longer than 0.3 s, "computing…" shows.
        """
        waiting = r.budget is not None and any(r.is_pending("budget", v) for v in ORDER)
        last = self._result
        overdue = self._overdue is r.hoeffding_labels  # shared by every partial result of one plan
        if waiting and last is not None and last.budget == r.budget and not overdue:
            self._flag_later()
            return last
        if not waiting:
            self._result = r
        return r

    def _flag_later(self, seconds: float = 0.3) -> None:
        if self._timer:
            return
        self._timer = True

        async def later():
            await asyncio.sleep(seconds)
            self._timer = False
            r = self.plan.result
            if not self._closed() and r is not None and r.budget is not None and \
                    any(r.is_pending("budget", v) for v in ORDER):
                self._overdue = r.hoeffding_labels
                with pn.io.hold():
                    self._refresh()

        pn.state.execute(later)

