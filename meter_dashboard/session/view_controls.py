"""The session page's replay controls: first, back, play, forward, last, go to step, speed, next alarm or change.

:class:`ReplayControls` is a section of :class:`~meter_dashboard.session.view.Session`: it moves the
:class:`~meter_dashboard.session.model.SessionModel`'s position and shows where the replay stands (the
slider, "Go to step", which buttons can move), declared over the model's ``result`` and ``position``
(``@param.depends``).  It computes nothing: the model says where a step is.  Every change of the model
arrives inside one ``pn.io.hold`` (a widget's event, a play tick, a finished load), so the section's
changes leave in the same message as the rest of the page's.
"""
from __future__ import annotations

from collections.abc import Callable

import panel as pn
import param

from ..core.validation import InputError, check_int
from ..ui.inputs import NumberInput
from .model import SessionModel

__all__ = ["ReplayControls", "SPEEDS", "fits"]

#: Play speeds: label -> milliseconds per step (a 200-step trace plays in 10 s at 20 steps/s).
SPEEDS = {"1 step/s": 1000, "2 steps/s": 500, "5 steps/s": 200, "10 steps/s": 100, "20 steps/s": 50}


class ReplayControls(pn.viewable.Viewer):
    """The buttons, slider and "Go to step" that move the replay (``on_stop``: called when playing stops)."""

    model = param.ClassSelector(class_=SessionModel)
    play_interval = param.Selector(default=1000, objects=list(SPEEDS.values()), doc="Milliseconds per step when playing.")

    def __init__(self, on_stop: Callable[[], None] | None = None, **params):
        super().__init__(**params)
        self._play_callback = None
        self._on_stopped = on_stop
        self._build_buttons()
        self.slider = pn.widgets.IntSlider(label="Position in the trace", start=1, end=2, value=1,
                                           sizing_mode="stretch_width", css_classes=["step-slider"])
        self.slider.param.watch(self._on_slider, "value_throttled")
        self.jump = _Fitted(self.model, "position", label="Go to step", check=self._position_of,
                            format=self.step_at, css_classes=["jump-input"],
                            message_classes=["jump-error"], on_value=self._jump_to)
        self.jump.text.description = None  # no tooltip: "Go to step" says it all (and saves a model)
        self._length: int | None = None  # the trace's length the slider shows
        self._refresh()

    def _build_buttons(self) -> None:
        buttons = (("◀◀ First", "first-step", self.model.first), ("◀ Back", "step-back", self.model.step_back),
                   ("Forward ▶", "step-forward", self.model.step_forward), ("Last ▶▶", "last-step", self.model.last),
                   ("Next alarm »", "next-alarm", self.model.next_alarm),
                   ("Next change »", "next-change", self.model.next_change))
        widths = {"next-alarm": 110, "next-change": 120}
        made = {}
        for label, css, action in buttons:
            made[css] = pn.widgets.Button(label=label, css_classes=[css], margin=(4, 4), **fits(widths.get(css, 92)))
            made[css].on_click(lambda event, action=action: self.stop_and(action))
        self.first_button, self.back_button = made["first-step"], made["step-back"]
        self.forward_button, self.last_button = made["step-forward"], made["last-step"]
        self.next_alarm_button, self.next_change_button = made["next-alarm"], made["next-change"]
        self.play_button = pn.widgets.Button(label="▶ Play", color="primary", margin=(4, 4), **fits(92),
                                             css_classes=["play-button"])
        self.play_button.on_click(self._on_play)
        self.speed = pn.widgets.Select.from_param(self.param.play_interval, name="Speed", options=SPEEDS,
                                                  description=None, **fits(110), margin=(4, 4),
                                                  css_classes=["play-speed"])

    def bar(self, *extra) -> pn.Column:
        """The controls in a row that wraps (``extra``: the page's report and export buttons, after "Go to step")."""
        # a Column laid out as a wrapping row: no template (pn.FlexBox costs ~200 ms per session), and its
        # minimum width is 0 (each control is at most its width: a phone wraps them, never scrolls)
        wrap = {"flex-direction": "row", "flex-wrap": "wrap", "align-items": "flex-end"}
        return pn.Column(self.first_button, self.back_button, self.play_button, self.forward_button, self.last_button,
                         self.jump, *extra, self.speed, self.next_alarm_button, self.next_change_button,
                         styles=wrap, sizing_mode="stretch_width", css_classes=["session-controls"])

    def __panel__(self):
        return pn.Column(self.bar(), self.slider, sizing_mode="stretch_width")

    @property
    def playing(self) -> bool:
        return self._play_callback is not None

    # ------------------------------------------------------------------ go to step
    def _position_of(self, typed) -> int:
        """The position of the step number typed into "Go to step" (a message beside the box when it is none)."""
        result = self.model.result
        if result is None:
            raise InputError("Go to step", "a step of a loaded trace", typed)
        step = check_int("Go to step", typed, minimum=0)
        try:
            return result.index_of(step)
        except InputError as exc:
            raise InputError("Go to step", exc.rule, typed) from None

    def step_at(self, position) -> str:
        """The step number at ``position`` ('' before a trace is loaded)."""
        result = self.model.result
        if result is None or position is None:
            return ""
        return str(int(result.trace.steps[min(position, len(result) - 1)]))

    def _jump_to(self, position) -> None:
        if position != self.model.position:  # the box also follows the replay: that is not a jump
            self.stop()
            self.model.position = position

    # ------------------------------------------------------------------ playing
    def stop_and(self, action):
        self.stop()
        with pn.io.hold():
            action()

    def _on_play(self, _event=None):
        if self._play_callback is not None:
            self.stop()
            return
        m = self.model
        if m.result is None:
            return
        if m.position >= len(m.result) - 1:
            m.first()
        self.play_button.label = "❚❚ Pause"
        self._play_callback = pn.state.add_periodic_callback(self._tick, period=self.play_interval)

    @param.depends("play_interval", watch=True)
    def _on_speed(self) -> None:
        if self._play_callback is not None:
            self._play_callback.period = self.play_interval  # playing on, at the new speed

    def _tick(self):
        with pn.io.hold():
            moved = self.model.step_forward()
        if not moved:
            self.stop()

    def stop(self):
        """Stop playing (the page's ``on_stop`` then puts the step reached into the link)."""
        if self._play_callback is not None:
            self._play_callback.stop()
            self._play_callback = None
            if self._on_stopped is not None:
                self._on_stopped()
        self.play_button.label = "▶ Play"

    def _on_slider(self, event):
        if event.new is not None and self.model.result is not None:
            self.stop()
            self.model.position = min(max(int(event.new) - 1, 0), len(self.model.result) - 1)

    # ------------------------------------------------------------------ where the replay stands
    @param.depends("model.result", "model.position", watch=True)
    def _refresh(self) -> None:
        """Slider, "Go to step" and the buttons for the step shown (only what changed is sent)."""
        r = self.model.result
        if r is None:
            return
        if len(r) != self._length:
            self._length = len(r)
            self.slider.param.update(start=1, end=max(len(r), 2), disabled=len(r) < 2)
        i = min(self.model.position, len(r) - 1)
        if self.slider.value != i + 1:
            self.slider.value = i + 1
        shown = self.step_at(i)
        if self.jump.text.value != shown:  # "Go to step" shows where the replay stands
            self.jump.text.value = shown
        m = self.model
        self.back_button.disabled = self.first_button.disabled = i == 0
        self.forward_button.disabled = self.last_button.disabled = i >= len(r) - 1
        self.next_alarm_button.disabled = not m.has_next("alarm")
        self.next_change_button.disabled = not m.has_next("change")


class _Fitted(NumberInput):
    """"Go to step": at most 130 px wide, adding nothing to its row's minimum width (see :func:`fits`)."""

    def __panel__(self):
        column = super().__panel__()
        column.max_width = 130
        return column


def fits(width: int) -> dict:
    """A control of at most ``width`` px that adds nothing to its row's minimum width (a phone wraps the row)."""
    return {"sizing_mode": "stretch_width", "max_width": width}
