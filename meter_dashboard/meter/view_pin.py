"""Two plans side by side on the planner page: pin the plan on screen, change the inputs, compare (Panel).

:class:`PinSection` holds the "Pin this plan" and "Unpin" buttons (one form) and the comparison table
(:func:`meter_dashboard.meter.text.comparison`: the settings that differ, every variant's labels
with the difference, the effort and the budget's largest T).  The pinned plan is the model's
(:attr:`MeterPlan.pinned`, itself a :class:`MeterPlan`), so it travels in the page's link
(``compare=...``) and a notebook or the CLI (``--compare``) can do the same.  Its curve (the
recommended meter's) is drawn grey and dashed on the curve over T.
"""
from __future__ import annotations

import panel as pn

from html import escape as esc
from ..ui.form import Action, Form, Row
from ..ui.style import HTML
from .result import RECOMMENDED, VARIANT_TITLES
from .text import comparison

__all__ = ["PinSection", "comparison_html"]


def comparison_html(headers: list, rows: list) -> str:
    """The comparison table (text cells) as the page's markup."""
    head = "".join(f'<th class="{"num" if i else ""}">{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f'<td class="{"num" if i else ""}">{esc(c)}</td>' for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    return (f'<div class="md-section planner-comparison-table"><b>The pinned plan beside the current one</b>'
            f'<div class="md-scroll-x"><table class="md-table"><tr>{head}</tr>{body}</table></div></div>')


class PinSection:
    """The pin buttons and the comparison of ``planner``'s plan with its pinned plan (a Planner's part).

    The buttons are one :class:`~meter_dashboard.ui.form.Form` (one model; "Unpin" hidden until a plan is
    pinned); the comparison table is made the first time a plan is pinned.
    """

    def __init__(self, planner):
        self.planner = planner
        plan = planner.plan
        # the pin button at most 200 px wide and no minimum width (a fixed width would make a phone's page scroll)
        self.buttons = Form([Row([
            Action("pin", "Pin this plan to compare", lambda: self.planner.plan.pin(), classes=("planner-pin",),
                   color="default"),
            Action("unpin", "Unpin", lambda: self.planner.plan.unpin(), classes=("planner-unpin",), color="default",
                   hidden=True),
        ])], prefix="planner-pin", css_classes=["planner-pin-buttons"])
        self.table: HTML | None = None
        self.layout = pn.Column(self.buttons, sizing_mode="stretch_width", css_classes=["planner-pin-section"])
        self._watched = None  # the pinned plan whose outputs are watched
        self._watcher = None
        plan.param.watch(self._on_pinned, "pinned")
        self._on_pinned()

    def _on_pinned(self, *_) -> None:
        pinned = self.planner.plan.pinned
        if self._watched is not None and self._watcher is not None:
            self._watched.param.unwatch(self._watcher)
        self._watched, self._watcher = pinned, None
        if pinned is not None:
            self._watcher = pinned.param.watch(lambda *_: self.planner.on_pinned_outputs(), ["result", "curves"])
        self.planner.on_pinned_outputs()

    def render(self) -> None:
        """The buttons, the table and the pinned curve as the plans are now (one message, the caller's hold)."""
        plan = self.planner.plan
        pinned = plan.pinned
        shown = pinned is not None and pinned.result is not None and plan.result is not None
        if shown and self.table is None:  # a page without a pinned plan holds no table
            self.table = HTML("", sizing_mode="stretch_width", css_classes=["planner-comparison"])
            self.layout.append(self.table)
        self.buttons.show_action("unpin", shown)
        self.buttons.set_label("pin", "Pin this plan instead" if shown else "Pin this plan to compare")
        if self.table is None:
            return
        markup = comparison_html(*comparison(pinned.result, plan.result, pinned.ranges, plan.ranges)) if shown else ""
        if self.table.object != markup:
            self.table.object = markup
        if self.table.visible != shown:
            self.table.visible = shown
        plot = self.planner.curve_plot
        if plot is None:
            return
        if shown and pinned.curves:
            plot.show_pinned(pinned.curves["steps"], pinned.curves[RECOMMENDED],
                             f"pinned plan: {VARIANT_TITLES[RECOMMENDED].lower()}")
        else:
            plot.show_pinned(None)

    def __panel__(self):
        return self.layout
