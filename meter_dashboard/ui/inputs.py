"""Inputs that tell a person what is wrong, beside the input, and keep the last good state.

Every number box, slider and list a page offers goes through one of these components:

- :class:`NumberInput`: a text box (and optionally a slider) bound to one parameter of a
  model.  What the person types is parsed by a checker built from the parameter's own
  declaration (its type and bounds: :func:`checker_for`) or given explicitly; a valid value
  is written to the model, an invalid one is refused with a message beside the input that
  names the input, the rule and the value typed ("δ must be in (0, 1); got '1.5'"), and
  the model (so every result on the page) keeps its last valid value.
- :class:`ListInput`: the same for comma-separated lists (tenant steps, revert steps).
- :class:`LateMessage`: a message pane made (and put in its column) the first time there is
  something to say: most sessions never show one, and an empty pane still costs a Bokeh model.

Given ``field=`` (a name), an input is a field of a :class:`~meter_dashboard.ui.form.Form` instead of
Panel widgets of its own: its ``text`` is the form's :class:`~meter_dashboard.ui.form.Box` (the same
``value`` and ``disabled``), its message a :class:`~meter_dashboard.ui.form.Slot` under it, its slider
a range input of the form; :meth:`~_CheckedInput.field` is what the form draws.  Parsing, messages
and the model are the same either way.

Both follow the model: when the parameter changes elsewhere (a preset, a URL, another
input) the text shows the new value and any message about older text disappears.
Nothing typed is ever evaluated: text goes through the bounded parsers of
:mod:`meter_dashboard.core.validation` only.
"""
from __future__ import annotations

from collections.abc import Callable

import panel as pn
import param

from ..core.formatting import number
from ..core.validation import InputError, check_int, check_number, parse_int_list, parse_number_list
from .form import Box, Field, Slot
from .style import HTML, error_html

__all__ = ["checker_for", "NumberInput", "ListInput", "LateMessage"]


def checker_for(model: param.Parameterized, parameter: str, label: str) -> Callable:
    """A parser for ``model.param[parameter]`` from its declaration (type, bounds, None allowed).

    The messages name ``label``, the input as the page shows it.
    """
    p = model.param[parameter]
    low, high = p.bounds if p.bounds is not None else (None, None)
    inclusive = getattr(p, "inclusive_bounds", (True, True))
    integer = isinstance(p, param.Integer)

    def check(text):
        if p.allow_None and (text is None or str(text).strip() == ""):
            return None
        value = check_int(label, text) if integer else check_number(label, text)
        below = low is not None and (value < low or (value == low and not inclusive[0]))
        above = high is not None and (value > high or (value == high and not inclusive[1]))
        if below or above:
            raise InputError(label, _range_rule(low, high, inclusive, integer), text)
        return value

    return check


def _range_rule(low, high, inclusive, integer) -> str:
    kind = "a whole number" if integer else "a number"
    if low is not None and high is not None:
        left = "[" if inclusive[0] else "("
        right = "]" if inclusive[1] else ")"
        return f"{'a whole number ' if integer else ''}in {left}{low:g}, {high:g}{right}".strip()
    if low is not None:
        return f"{kind} {'>=' if inclusive[0] else '>'} {low:g}"
    return f"{kind} {'<=' if inclusive[1] else '<'} {high:g}"


class LateMessage:
    """A message pane made the first time there is something to say (or someone reads :attr:`pane`).

    :meth:`placed_in` names the column that shows it and where: right after one of its parts, right
    before one, or at its end; the pane goes in there when it is made (at once if it already was).  ``pane_params`` are the
    :class:`~meter_dashboard.ui.style.HTML` pane's (``css_classes``, ``margin``, ...).
    """

    def __init__(self, **pane_params):
        self._params = {"sizing_mode": "stretch_width", **pane_params}
        self._pane: HTML | None = None
        self._host: tuple | None = None  # (column, the part the pane follows, the part it precedes)

    @property
    def pane(self) -> HTML:
        """The message pane, made (and placed) now if it was not yet."""
        if self._pane is None:
            self._pane = HTML("", **self._params)
            self._place()
        return self._pane

    def show(self, html: str) -> None:
        """Show ``html`` ('' for no message): a pane is made only for a message."""
        if html or self._pane is not None:
            if self.pane.object != html:
                self.pane.object = html

    def placed_in(self, column, after=None, before=None) -> None:
        """``column`` shows the message right after ``after`` or before ``before`` (its objects), else at its end."""
        self._host = (column, after, before)
        self._place()

    def _place(self) -> None:
        if self._host is None or self._pane is None or self._pane in self._host[0].objects:
            return
        column, after, before = self._host
        if after is not None:
            column.insert(column.objects.index(after) + 1, self._pane)
        elif before is not None:
            column.insert(column.objects.index(before), self._pane)
        else:
            column.append(self._pane)


class _CheckedInput(pn.viewable.Viewer):
    """A text box bound to ``model.<parameter>`` through ``parse``, with its message pane."""

    def __init__(self, model: param.Parameterized, parameter: str, *, label: str, parse: Callable,
                 show: Callable, css_classes=(), message_classes=(), placeholder: str = "",
                 width: int | None = None, on_value: Callable | None = None, getter: Callable | None = None,
                 watch=None, description: str | None = None, field: str | None = None, **params):
        super().__init__(**params)
        self.model = model
        self.parameter = parameter
        self.label = label
        self._parse = parse
        self._show = show
        self._on_value = on_value
        self._getter = getter or (lambda m: getattr(m, parameter))
        self.message = ""
        sizing = {"width": width} if width else {"sizing_mode": "stretch_width"}
        if description is None and parameter in model.param:
            description = model.param[parameter].doc
        self.field_name = field
        self._message: LateMessage | Slot
        self.text: pn.widgets.TextInput | Box
        if field is not None:  # a field of a Form: its box, its message slot
            self.text = Box(value=show(self._getter(model)))
            self._message = Slot()
            self._field: dict = {"label": label, "description": description or "", "placeholder": placeholder,
                                 "classes": tuple(css_classes), "message_classes": tuple(message_classes),
                                 "width": width}
        else:
            self.text = pn.widgets.TextInput(label=label, value=show(self._getter(model)), placeholder=placeholder,
                                             css_classes=list(css_classes), description=description, **sizing)
            # made the first time there is something to say (most never need one)
            self._message = LateMessage(margin=(0, 5), min_width=0,
                                        css_classes=["md-input-message", *message_classes])
        self._layout: pn.Column | None = None
        self.text.param.watch(self._on_text, "value")
        model.param.watch(self._on_model, list(watch) if watch else [parameter])

    def field(self) -> Field:
        """What a :class:`~meter_dashboard.ui.form.Form` draws for this input (given ``field=``)."""
        if self.field_name is None:
            raise TypeError(f"{self.label!r} is a Panel widget, not a form field: make it with field=<name>")
        assert isinstance(self.text, Box) and isinstance(self._message, Slot)
        return Field(self.field_name, box=self.text, message=self._message, slider=self._slider_range(),
                     **self._field)

    def _slider_range(self) -> tuple | None:
        return None

    def _box_size(self) -> dict:
        if self.text.sizing_mode == "stretch_width":
            return {"sizing_mode": "stretch_width"}
        return {"width": self.text.width + 10}

    @property
    def valid(self) -> bool:
        """False while the text on screen is refused."""
        return not self.message

    @property
    def message_pane(self) -> HTML | Slot:
        """The message beside the box: made the first time there is one (or someone asks for it)."""
        return self._message.pane

    def parts(self) -> list:
        """The box (and its slider) for a column that holds them itself, with no column of their own.

        The column is told with :meth:`placed_in`; the message is then inserted right after the parts
        the first time there is one (a page with many inputs saves a Bokeh model per input).
        """
        return self._parts()

    def placed_in(self, column: pn.Column) -> None:
        """``column`` holds :meth:`parts` straight: the message goes in after them (unless the box has its own column)."""
        if self._layout is None:
            self._message.placed_in(column, after=self._parts()[-1])

    def _set_message(self, message: str) -> None:
        self.message = message
        self._message.show(error_html(message))

    def _parts(self) -> list:
        return [self.text]

    def _on_text(self, event) -> None:
        with pn.io.hold():  # everything the new value changes reaches the browser as one message
            self._apply_text(event)

    def _apply_text(self, event) -> None:
        try:
            value = self._parse(event.new)
        except InputError as exc:
            self._set_message(str(exc))
            return
        self._set_message("")
        if self._on_value is not None:
            try:
                self._on_value(value)
            except InputError as exc:
                self._set_message(str(exc))
        elif value != self._getter(self.model):
            setattr(self.model, self.parameter, value)

    def _on_model(self, event) -> None:
        shown = self._show(self._getter(self.model))
        self._set_message("")
        if self.text.value != shown:
            self.text.value = shown

    def __panel__(self):
        if self.field_name is not None:
            raise TypeError(f"{self.label!r} is a form field: its Form shows it")
        if self._layout is None:
            self._layout = pn.Column(*self._parts(), margin=0, **self._box_size())
            self._message.placed_in(self._layout)  # at its end, now or when first made
        return self._layout


class NumberInput(_CheckedInput):
    """A number typed (and optionally slid) into ``model.<parameter>``, refused with a message when wrong.

    Parameters
    ----------
    model, parameter
        Where the value lives.
    label : str
        What the page calls the input; messages name it.
    check : callable, optional
        ``check(text) -> value`` raising :class:`InputError`; by default
        :func:`checker_for` the parameter's declaration.
    slider : dict, optional
        ``{"start": .., "end": .., "step": ..}`` adds a slider (released values only are
        applied, so dragging stays smooth).
    format : callable, optional
        How a model value is written back into the box (default: 4 significant digits,
        whole numbers for integer parameters).
    """

    def __init__(self, model, parameter, *, label: str, check: Callable | None = None, slider: dict | None = None,
                 format: Callable | None = None, integer: bool | None = None, **kwargs):
        if integer is None:
            integer = isinstance(model.param[parameter], param.Integer)
        show = format or (lambda v: "" if v is None else (str(int(v)) if integer else number(v, 6)))
        super().__init__(model, parameter, label=label, parse=check or checker_for(model, parameter, label),
                         show=show, **kwargs)
        self.slider = None
        self._slider = slider
        if slider is not None and self.field_name is None:
            cls = pn.widgets.IntSlider if integer else pn.widgets.FloatSlider
            value = self._getter(model)
            self.slider = cls(start=slider["start"], end=slider["end"], step=slider.get("step", 1),
                              value=min(max(value, slider["start"]), slider["end"]), show_value=False,
                              sizing_mode="stretch_width", margin=(0, 10), css_classes=["md-slider"])
            self.slider.param.watch(self._on_slider, "value_throttled")

    def _slider_range(self) -> tuple | None:
        s = self._slider
        return None if s is None else (s["start"], s["end"], s.get("step", 1))

    def _on_slider(self, event) -> None:
        self.text.value = self._show(event.new)

    def _on_model(self, event) -> None:
        super()._on_model(event)
        value = self._getter(self.model)
        if self.slider is not None and value is not None:
            clamped = min(max(value, self.slider.start), self.slider.end)
            if self.slider.value != clamped:
                self.slider.value = clamped

    def _parts(self) -> list:
        return [self.text] + ([self.slider] if self.slider is not None else [])


class ListInput(_CheckedInput):
    """A comma-separated list typed into ``model.<parameter>`` (``"5,5"``, ``"1,2,3"``).

    ``kind`` is ``"int"`` (whole numbers, the default) or ``"float"``; an empty box is the
    empty list.  ``check(values)`` may add rules of its own (raise :class:`InputError`).
    """

    def __init__(self, model, parameter, *, label: str, kind: str = "int", check: Callable | None = None,
                 name_in_messages: str | None = None, **kwargs):
        parse_list = parse_int_list if kind == "int" else parse_number_list
        called = name_in_messages or label

        def parse(text):
            text = (text or "").strip()
            values = parse_list(called, text) if text else []
            return check(values) if check is not None else values

        def show(values):
            return ",".join(str(v) if kind == "int" else number(v, 6) for v in values or [])

        super().__init__(model, parameter, label=label, parse=parse, show=show, **kwargs)
