"""Two plans side by side on the planner page: pin the plan on screen, change the inputs, compare (Panel).

:class:`PinSection` holds the "Pin this plan" and "Unpin" buttons and the comparison table
(:func:`meter_dashboard.meter.text.comparison`: the settings that differ, every variant's labels
with the difference, the effort and the budget's largest T).  The pinned plan is the model's
(:attr:`MeterPlan.pinned`, itself a :class:`MeterPlan`), so it travels in the page's link
(``compare=...``) and a notebook or the CLI (``--compare``) can do the same.  Its curve (the
recommended meter's) is drawn grey and dashed on the curve over T.
"""
from __future__ import annotations

import panel as pn

from html import escape as esc
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
    """The pin buttons and the comparison of ``planner``'s plan with its pinned plan (a Planner's part)."""

    def __init__(self, planner):
        self.planner = planner
        # at most 200 px wide and no minimum width (a fixed width would make a phone's page scroll sideways)
        self.pin_button = pn.widgets.Button(label="Pin this plan to compare", color="default",
                                            sizing_mode="stretch_width", max_width=200, margin=(4, 5),
                                            css_classes=["planner-pin"])
        self.pin_button.on_click(lambda _: self.planner.plan.pin())
        self.unpin_button: pn.widgets.Button | None = None  # made the first time a plan is pinned
        self.table: HTML | None = None
        self.buttons: pn.FlexBox | None = None  # the pin and unpin buttons side by side: made with the unpin button
        self.layout = pn.Column(self.pin_button, sizing_mode="stretch_width", css_classes=["planner-pin-section"])
        self._watched = None  # the pinned plan whose outputs are watched
        self._watcher = None
        planner.plan.param.watch(self._on_pinned, "pinned")
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
        if shown and self.table is None:
            self._build()
        if self.unpin_button is None or self.table is None:
            return
        if self.unpin_button.visible != shown:
            self.unpin_button.visible = shown
        label = "Pin this plan instead" if shown else "Pin this plan to compare"
        if self.pin_button.label != label:
            self.pin_button.label = label
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

    def _build(self) -> None:
        """The unpin button and the table (a page without a pinned plan holds neither)."""
        self.unpin_button = pn.widgets.Button(label="Unpin", color="default", width=120, margin=(4, 5),
                                              css_classes=["planner-unpin"])
        self.unpin_button.on_click(lambda _: self.planner.plan.unpin())
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["planner-comparison"])
        self.buttons = pn.FlexBox(self.pin_button, self.unpin_button, flex_wrap="wrap", sizing_mode="stretch_width")
        self.layout.objects = [self.buttons, self.table]

    def __panel__(self):
        return self.layout
