"""A column of inputs as ONE Bokeh model: boxes, sliders, choices, drawers, notes and messages.

Every Panel widget costs the server CPU for every person who opens a page (its Bokeh models built,
serialised and sent: a text box with its "?" description about 6 ms, issue 29).  A page's sidebar of
twenty inputs so costs more than its answer.  :class:`Form`, Panel's documented ``JSComponent``, draws
the same inputs itself as plain, accessible HTML (``<label for>``, ``<input>``, ``<select>``,
``<input type="range">``, ``<details>``, pressed-state buttons) and costs the server one model.

What the server knows of each input is a :class:`Box`: its text (or chosen option) and whether it is
disabled.  What a person types, picks or slides arrives in the box's ``value`` (the browser sends one
message naming the input when its text changes: Enter, leaving the box, releasing the slider), exactly as
a Panel ``TextInput``'s ``value`` would: the checked inputs of :mod:`meter_dashboard.ui.inputs` parse it
and refuse bad text with a message beside the box.  Setting ``box.value`` on the server shows it in
the browser.  :class:`Slot` is a place for server-made HTML (a message, a note), hidden while empty.

The layout is a sequence of items: :class:`Field` (a text box, a select, or a group of option
buttons), :class:`Note`, :class:`Row`, :class:`Drawer` (a ``<details>`` whose body is the items under
it; a closed drawer costs nothing) and :class:`Action` (a button).  The markup is made on the server
from the items, every label and text escaped; the browser only fills it.  Nothing a person types is
run or inserted as HTML: values are set as ``.value``, only server-made HTML goes into slots.  A value
from the browser for an unknown input, a disabled one, an option not offered, or text longer than
:data:`MAX_TEXT` is ignored and logged (the box shows its value again); so is a message naming no action.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import param
from panel.custom import JSComponent

from .style import STYLESHEET, esc

__all__ = ["Form", "Box", "Slot", "Field", "Note", "Row", "Drawer", "Action", "MAX_TEXT", "linked"]

log = logging.getLogger(__name__)

#: The longest text the server takes from a box (a number or a list of steps is far shorter).
MAX_TEXT = 2000


class Box(param.Parameterized):
    """What one input shows: ``value`` (its text, or the chosen option's value) and whether it is ``disabled``."""

    value = param.String(default="", doc="The box's text (a choice: the chosen option's value).")
    disabled = param.Boolean(default=False, doc="Greyed out; the browser sends nothing from it.")


def linked(model: param.Parameterized, parameter: str, *, offered=None, shown=str, parsed=str) -> Box:
    """A box showing ``shown(model.<parameter>)``, kept equal to it both ways (a select's, option buttons').

    What the browser picks goes back as ``parsed(text)`` if it is one of ``offered`` (by default the
    parameter's own ``objects``, if it has them); any other value, even one set on the server, leaves the
    model alone and the box shows the model's value again.
    """
    box = Box(value=shown(getattr(model, parameter)))
    if offered is None:
        offered = getattr(model.param[parameter], "objects", None) or None
    allowed = None if offered is None else list(offered)

    def to_model(event) -> None:
        value = parsed(event.new)
        if allowed is not None and value not in allowed:
            box.value = shown(getattr(model, parameter))
        elif getattr(model, parameter) != value:
            setattr(model, parameter, value)

    box.param.watch(to_model, "value")
    model.param.watch(lambda event: box.param.update(value=shown(event.new)), parameter)
    return box


class Slot(param.Parameterized):
    """A place for server-made HTML in a :class:`Form` (a message, a note): hidden while ``object`` is empty."""

    object = param.String(default="", doc="The HTML shown (made by the server, every user text escaped).")

    @property
    def pane(self) -> Slot:
        """The slot itself (what :class:`~meter_dashboard.ui.inputs.LateMessage` calls its pane)."""
        return self

    def show(self, html: str) -> None:
        """Show ``html`` ('' hides the slot)."""
        if self.object != html:
            self.object = html


@dataclass
class Field:
    """One input: ``kind`` "text" (a box, with a ``slider`` (start, end, step) under it if given), "select"
    or "buttons" (``options``: (label, value) pairs; one chosen), or "toggles" (any of ``options`` pressed; the
    value is the pressed options' values joined by commas, in the options' order), or "checkbox" (its value
    "true" or "false").  A ``live`` text box also sends its text while it is typed, once typing pauses for
    0.25 s (not only on Enter or when the box is left).  ``classes`` go on the element holding the label and
    the box; ``message`` (a :class:`Slot`) shows under it; ``width`` fixes its width in px (in a :class:`Row`)."""

    name: str
    label: str
    box: Box
    kind: str = "text"
    message: Slot | None = None
    description: str = ""
    placeholder: str = ""
    classes: Sequence[str] = ()
    message_classes: Sequence[str] = ()
    width: int | None = None
    slider: tuple | None = None
    options: Sequence[tuple[str, str]] = ()
    live: bool = False


@dataclass
class Note:
    """HTML made by the server: ``html`` fixed, or the live ``slot`` (shown when not empty)."""

    html: str = ""
    classes: Sequence[str] = ()
    slot: Slot | None = None
    name: str = ""


@dataclass
class Row:
    """Items side by side (they wrap on a narrow screen)."""

    items: Sequence = ()


@dataclass
class Drawer:
    """A ``<details>`` titled ``title``: ``items`` under it, shown once opened.  ``classes`` go on its body,
    ``<classes>-toggle`` on its title."""

    name: str
    title: str
    items: Sequence = ()
    classes: Sequence[str] = ()


@dataclass
class Action:
    """A button: pressing it calls ``callback()`` on the server.  ``color`` "light" (the surface) or "default"
    (the page's background, framed); ``hidden`` at first (:meth:`Form.show_action`)."""

    name: str
    label: str
    callback: Callable[[], None]
    classes: Sequence[str] = ()
    color: str = "light"
    hidden: bool = False


class DrawerState:
    """A :class:`Drawer` of a form: :meth:`open` it from the server; :attr:`is_open` follows the browser."""

    def __init__(self, form: Form, name: str):
        self._form, self.name = form, name

    @property
    def is_open(self) -> bool:
        return self.name in self._form.opened

    def open(self) -> None:
        if not self.is_open:
            self._form.opened = [*self._form.opened, self.name]


_ESM = r"""
function setValue(box, value) {
  if (box.type === "checkbox") {
    box.checked = value === "true";
  } else if (box.type === "range") {
    // a slider shows only a number within its range (text out of it is refused beside the box)
    const number = Number(value);
    const inside = value !== "" && Number.isFinite(number) && number >= Number(box.min) && number <= Number(box.max);
    if (inside && String(box.value) !== String(number)) box.value = number;
  } else if (box.value !== value) {
    box.value = value;
  }
}

export function render({ model, el }) {
  el.innerHTML = model.markup;  // made by the server from the page's own items, every text escaped
  const root = el.querySelector(".md-form");
  const MULTIPLE = model.multiple;
  for (const wrap of root.querySelectorAll("[data-width]")) wrap.style.flex = `0 0 ${Number(wrap.dataset.width)}px`;
  const boxes = (name) => root.querySelectorAll(`[data-field="${CSS.escape(name)}"]`);
  // what the server last said each input shows: only a value the server changed is written into a box
  let last = {};
  // what a person typed, picked or slid goes to the server as one message naming one input
  const put = (name, value) => {
    last[name] = String(value);
    model.send_msg({ kind: "value", name, value: String(value) });
  };
  const read = (box) => (box.type === "checkbox" ? String(box.checked) : box.value);
  const commit = (box) => {
    const value = read(box);
    if (box.disabled || last[box.dataset.field] === value) return;
    for (const other of boxes(box.dataset.field)) if (other !== box) setValue(other, value);  // its slider
    put(box.dataset.field, value);
  };
  for (const box of root.querySelectorAll("input[data-field], select[data-field]")) {
    if (box.type === "range") {
      // dragging shows the value in the box; releasing sends it (as a Panel slider's value_throttled)
      box.addEventListener("input", () => {
        for (const other of boxes(box.dataset.field)) if (other !== box) setValue(other, box.value);
      });
      box.addEventListener("change", () => commit(box));
    } else {
      box.addEventListener("change", () => commit(box));
      box.addEventListener("keydown", (event) => { if (event.key === "Enter") commit(box); });
      if (box.dataset.live) {  // checked as it is typed: sent once typing pauses
        let pause;
        box.addEventListener("input", () => { clearTimeout(pause); pause = setTimeout(() => commit(box), 250); });
      }
    }
  }
  for (const button of root.querySelectorAll("button[data-choice]")) {
    button.addEventListener("click", () => {
      if (button.disabled) return;
      const name = button.dataset.choice;
      if (!MULTIPLE.includes(name)) {
        if (last[name] !== button.dataset.value) { put(name, button.dataset.value); press(name, last[name]); }
        return;
      }
      // toggles: this option pressed or released, the others as they are (in the options' order)
      const pressed = [...root.querySelectorAll(`button[data-choice="${CSS.escape(name)}"]`)]
        .filter((b) => (b === button) !== (b.getAttribute("aria-pressed") === "true")).map((b) => b.dataset.value);
      put(name, pressed.join(","));
      press(name, last[name]);
    });
  }
  for (const button of root.querySelectorAll("button[data-action]")) {
    button.addEventListener("click", () => model.send_msg({ kind: "action", name: button.dataset.action }));
  }
  for (const drawer of root.querySelectorAll("details[data-drawer]")) {
    drawer.addEventListener("toggle", () => {
      const name = drawer.dataset.drawer;
      if (drawer.open !== model.opened.includes(name)) {
        model.opened = drawer.open ? [...model.opened, name] : model.opened.filter((n) => n !== name);
      }
    });
  }
  // option buttons: the ones of ``value`` pressed (toggles: its comma-separated values)
  function press(name, value) {
    const chosen = MULTIPLE.includes(name) ? value.split(",") : [value];
    for (const button of root.querySelectorAll(`button[data-choice="${CSS.escape(name)}"]`)) {
      const on = chosen.includes(button.dataset.value);
      button.setAttribute("aria-pressed", String(on));
      button.classList.toggle("md-active", on);
    }
  }
  // only the inputs whose value the server changed are written: a box someone is typing in keeps their text
  const values = () => {
    for (const [name, value] of Object.entries(model.values)) {
      if (last[name] === value) continue;
      for (const box of boxes(name)) setValue(box, value);
      press(name, value);
    }
    last = { ...model.values };
  };
  const disabled = () => {
    for (const box of root.querySelectorAll("[data-field], button[data-choice]")) {
      box.disabled = model.disabled.includes(box.dataset.field || box.dataset.choice);
    }
  };
  const slots = () => {
    for (const slot of root.querySelectorAll("[data-slot]")) {
      const html = model.slots[slot.dataset.slot] || "";
      if (slot.innerHTML !== html) slot.innerHTML = html;  // server-made HTML, user text escaped
      slot.hidden = !html;
    }
  };
  const opened = () => {
    for (const drawer of root.querySelectorAll("details[data-drawer]")) {
      drawer.open = model.opened.includes(drawer.dataset.drawer);
    }
  };
  const labels = () => {
    for (const button of root.querySelectorAll("button[data-action]")) {
      const label = model.labels[button.dataset.action];
      if (label !== undefined && button.textContent !== label) button.textContent = label;
    }
  };
  const hidden = () => {
    for (const holder of root.querySelectorAll("[data-holds]")) holder.hidden = model.hidden.includes(holder.dataset.holds);
  };
  values(); disabled(); slots(); opened(); labels(); hidden();
  model.on("change:labels", labels);
  model.on("change:hidden", hidden);
  model.on("change:values", () => values());
  model.on("change:disabled", disabled);
  model.on("change:slots", slots);
  model.on("change:opened", opened);
}
"""


def _classes(*names) -> str:
    return esc(" ".join(n for n in names if n))


class Form(JSComponent):
    """``items`` (:class:`Field`, :class:`Note`, :class:`Row`, :class:`Drawer`, :class:`Action`) as one model.

    ``prefix`` makes the element ids unique on a page (two forms may share a shadow root in a notebook).
    """

    markup = param.String(default="", constant=True, doc="The form's HTML, made once from its items.")
    values = param.Dict(default={}, doc="What the server last told the browser each input shows, by name.")
    disabled = param.List(default=[], doc="The names of the disabled inputs.")
    slots = param.Dict(default={}, doc="Each slot's HTML, by name.")
    opened = param.List(default=[], doc="The names of the open drawers.")
    multiple = param.List(default=[], constant=True, doc="The names of the fields of kind 'toggles'.")
    labels = param.Dict(default={}, doc="The actions' labels, by name.")
    hidden = param.List(default=[], doc="The names of the hidden actions.")

    _esm = _ESM
    _stylesheets = [STYLESHEET.name]

    def __init__(self, items: Sequence, *, prefix: str = "f", **params):
        self._boxes: dict[str, Box] = {}
        self._options: dict[str, set[str]] = {}
        self._multiple: set[str] = set()  # "toggles": any of the options
        self._slots: dict[str, Slot] = {}
        self._actions: dict[str, Callable[[], None]] = {}
        self._drawers: dict[str, DrawerState] = {}
        self._hidden: list[str] = []
        self._labels: dict[str, str] = {}
        self._prefix = prefix
        markup = f'<div class="md-form">{self._markup(items)}</div>'
        params.setdefault("sizing_mode", "stretch_width")
        params.setdefault("margin", 0)
        params.setdefault("hidden", self._hidden)
        params.setdefault("labels", self._labels)
        self._shown = {n: b.value for n, b in self._boxes.items()}  # what the browser shows (as far as the server knows)
        super().__init__(markup=markup, multiple=sorted(self._multiple), values=dict(self._shown),
                         disabled=[n for n, b in self._boxes.items() if b.disabled],
                         slots={n: s.object for n, s in self._slots.items()}, **params)
        for name, box in self._boxes.items():
            box.param.watch(lambda event, name=name: self._on_box(name, event), ["value", "disabled"])
        for name, slot in self._slots.items():
            slot.param.watch(lambda event, name=name: self._on_slot(name, event), "object")

    # ------------------------------------------------------------------ server side
    def drawer(self, name: str) -> DrawerState:
        """The drawer ``name`` (open it with ``.open()``)."""
        return self._drawers[name]

    def set_label(self, action: str, label: str) -> None:
        """Show ``label`` on the button of ``action``."""
        if self.labels.get(action) != label:
            self.labels = {**self.labels, action: label}

    def show_action(self, action: str, shown: bool = True) -> None:
        """Show (or hide) the button of ``action``."""
        if (action not in self.hidden) != shown:
            self.hidden = [n for n in self.hidden if n != action] + ([] if shown else [action])

    def box(self, name: str) -> Box:
        return self._boxes[name]

    def _on_box(self, name: str, event) -> None:
        if event.name == "value" and self._shown.get(name) != event.new:
            self._push(name, event.new)
        elif event.name == "disabled":
            others = [n for n in self.disabled if n != name]
            self.disabled = others + [name] if event.new else others

    def _on_slot(self, name: str, event) -> None:
        if self.slots.get(name) != event.new:
            self.slots = {**self.slots, name: event.new}

    def type(self, name: str, text: str) -> None:
        """What the form's script sends when a person commits ``text`` in input ``name`` (notebooks, tests)."""
        self._handle_msg({"kind": "value", "name": name, "value": text})

    def _take(self, name, value) -> None:
        """A person's value for input ``name``: its box takes it, or it is refused and the box's value shown again."""
        box = self._boxes.get(name) if isinstance(name, str) else None
        if box is None:
            log.warning("form: ignored a value for %.40r: no input of this form has that name", name)
            return
        reason = ""
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            reason = f"not text of at most {MAX_TEXT} characters"
        elif box.disabled:
            reason = "disabled"
        elif name in self._options and not self._offered(name, value):
            reason = "not one of its options"
        if reason:
            log.warning("form: ignored a value for %s (%s)", name, reason)
            self._push(name, box.value)  # the browser shows the box's value again
            return
        self._shown[name] = value  # what the browser shows now: no need to send it back
        box.value = value

    def _push(self, name: str, value: str) -> None:
        """Tell the browser input ``name`` shows ``value`` (sent even when the property looks unchanged)."""
        self._shown[name] = value
        shown = dict(self._shown)
        if shown == self.values:
            self.param.trigger("values")
        else:
            self.values = shown

    def _offered(self, name: str, value: str) -> bool:
        chosen = (value.split(",") if value else []) if name in self._multiple else [value]
        return all(v in self._options[name] for v in chosen)

    @param.depends("opened", watch=True)
    def _on_opened(self) -> None:
        known = [n for n in dict.fromkeys(self.opened) if n in self._drawers]
        if known != self.opened:
            log.warning("form: ignored drawers this form does not have: %.120r", self.opened)
            self.opened = known

    def _handle_msg(self, msg) -> None:
        """What the browser sends: a person's value for one input, or a pressed action."""
        kind = msg.get("kind") if isinstance(msg, dict) else None
        if kind == "value":
            self._take(msg.get("name"), msg.get("value"))
        elif kind == "action" and msg.get("name") in self._actions:
            self._actions[msg["name"]]()
        else:
            log.warning("form: ignored a message naming no input or action of this form: %.120r", msg)

    # ------------------------------------------------------------------ markup
    def _markup(self, items) -> str:
        return "".join(self._item(item) for item in items)

    def _item(self, item) -> str:
        if isinstance(item, Field):
            return self._field(item)
        if isinstance(item, Note):
            return self._note(item)
        if isinstance(item, Row):
            return f'<div class="md-form-row">{self._markup(item.items)}</div>'
        if isinstance(item, Drawer):
            self._drawers[item.name] = DrawerState(self, item.name)
            css = " ".join(item.classes)
            toggles = " ".join(f"{c}-toggle" for c in item.classes)
            return (f'<details class="md-drawer" data-drawer="{esc(item.name)}">'
                    f'<summary class="{_classes("md-drawer-toggle", toggles)}">{esc(item.title)}</summary>'
                    f'<div class="{_classes("md-drawer-body", css)}">{self._markup(item.items)}</div></details>')
        if isinstance(item, Action):
            self._actions[item.name] = item.callback
            self._labels[item.name] = item.label
            if item.hidden:
                self._hidden.append(item.name)
            hidden = " hidden" if item.hidden else ""
            return (f'<div class="{_classes("md-action", *item.classes)}" data-holds="{esc(item.name)}"{hidden}>'
                    f'<button type="button" class="{_classes("md-button", f"md-button-{item.color}")}" '
                    f'data-action="{esc(item.name)}">{esc(item.label)}</button></div>')
        raise TypeError(f"a form item must be a Field, Note, Row, Drawer or Action; got {type(item).__name__}")

    def _note(self, item: Note) -> str:
        if item.slot is None:
            return f'<div class="{_classes("md-form-note", *item.classes)}">{item.html}</div>'
        name = item.name or f"note-{len(self._slots)}"
        self._slots[name] = item.slot
        return f'<div class="{_classes("md-form-note", *item.classes)}" data-slot="{esc(name)}" hidden></div>'

    def _field(self, item: Field) -> str:
        name, ident = item.name, f"{self._prefix}-{item.name}"
        self._boxes[name] = item.box
        described = []
        help_html = ""
        if item.description:
            described.append(f"{ident}-help")
            help_html = (f'<span class="md-help" aria-hidden="true" data-tip="{esc(item.description)}">'
                         f'?</span><span class="md-hidden" id="{ident}-help">{esc(item.description)}</span>')
        message_html = ""
        if item.message is not None:
            self._slots[f"{name}:message"] = item.message
            described.append(f"{ident}-msg")
            message_html = (f'<div class="{_classes("md-input-message", *item.message_classes)}" id="{ident}-msg" '
                            f'data-slot="{esc(name)}:message" role="status" hidden></div>')
        aria = f' aria-describedby="{" ".join(described)}"' if described else ""
        head, control = self._control(item, ident, aria, help_html)
        slider = ""
        if item.slider is not None:
            start, end, step = item.slider
            slider = (f'<input class="md-slider" type="range" min="{start}" max="{end}" step="{step}" '
                      f'data-field="{esc(name)}" aria-label="{esc(item.label)}: slider">')
        width = f' data-width="{int(item.width)}"' if item.width else ""
        return (f'<div class="md-field-wrap"{width}><div class="{_classes("md-field", *item.classes)}">{head}{control}'
                f'</div>{slider}{message_html}</div>')

    def _control(self, item: Field, ident: str, aria: str, help_html: str) -> tuple[str, str]:
        """The label (none for option buttons: the group is labelled) and the control of ``item``."""
        name, label = item.name, esc(item.label)
        if item.kind in ("buttons", "toggles"):
            if any("," in value for _, value in item.options):
                raise ValueError(f"the options of {name!r} must not contain commas")
            self._options[name] = {value for _, value in item.options}
            if item.kind == "toggles":
                self._multiple.add(name)
            buttons = "".join(f'<button type="button" class="md-choice" data-choice="{esc(name)}" '
                              f'data-value="{esc(value)}" aria-pressed="false">{esc(text)}</button>'
                              for text, value in item.options)
            control = f'<div class="md-choices" role="group" aria-label="{label}"{aria}>{buttons}</div>'
            head = ""
        elif item.kind == "select":
            self._options[name] = {value for _, value in item.options}
            options = "".join(f'<option value="{esc(value)}">{esc(text)}</option>' for text, value in item.options)
            control = f'<select class="md-input" id="{ident}" data-field="{esc(name)}"{aria}>{options}</select>'
            head = f'<label class="md-label" for="{ident}">{label}{help_html}</label>'
        elif item.kind == "text":
            placeholder = f' placeholder="{esc(item.placeholder)}"' if item.placeholder else ""
            live = ' data-live="1"' if item.live else ""
            control = (f'<input class="md-input" type="text" id="{ident}" data-field="{esc(name)}" autocomplete="off" '
                       f'spellcheck="false"{placeholder}{live}{aria}>')
            head = f'<label class="md-label" for="{ident}">{label}{help_html}</label>'
        elif item.kind == "checkbox":
            self._options[name] = {"true", "false"}
            control = ""
            head = (f'<label class="md-check" for="{ident}"><input type="checkbox" id="{ident}" '
                    f'data-field="{esc(name)}"{aria}><span>{label} {help_html}</span></label>')
        else:
            raise ValueError("a field's kind must be 'text', 'select', 'buttons', 'toggles' or 'checkbox'; "
                             f"got {item.kind!r}")
        return head, control
