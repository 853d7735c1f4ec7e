"""What a meeting takes away from any page: the table as CSV, the slide as PNG and SVG, the offline report.

:class:`Exports` is one row of download buttons over three functions of the page (each returns
``None`` while the page has no answer yet): ``csv()`` the table as text, ``slide()`` a
:class:`~meter_dashboard.core.slide.Slide`, ``report()`` a :class:`~meter_dashboard.core.report.Report`.
Each file is built in a worker thread (:func:`~meter_dashboard.core.runtime.in_thread`): drawing a
PNG or inlining Bokeh into a report takes longer than the event loop may wait.  Files are named by
``stem()`` (the page and its inputs).

The row is ONE Bokeh model (issue 29: every widget of a page costs the server CPU for every person
who opens it): :class:`DownloadRow`, Panel's documented ``JSComponent``, draws the buttons itself
(real ``<button>`` elements, each in an element carrying the classes the page's tests and
stylesheet know, e.g. ``ci-csv md-export-csv``).  A click asks the server for the file
(``model.send_msg``); the server builds it as before and sends it back (``_send_msg``: base64, the
file's name and type); the browser saves it (a Blob's object URL and an ``<a download>``).  A
button may instead run one of the component's own browser actions (:attr:`DownloadRow.client`
names them; the planner copies its summary and saves its plots so).
"""
from __future__ import annotations

import base64
import functools
import inspect
import io
import logging
import mimetypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import param
from panel.custom import JSComponent

from ..core.runtime import in_thread
from ..core.slide import slide_bytes
from .style import esc

__all__ = ["Exports", "DownloadRow", "RowButton", "row_esm", "lead_markup"]

log = logging.getLogger(__name__)

#: A label's width per character at the buttons' 12 px (Arial, Helvetica and Liberation Sans share their metrics).
_CHAR_PX = 6.4
#: A button's height (the "light" ones; "default" ones are taller), and its margin around it.
_HEIGHT = {"default": 31}
_LIGHT_HEIGHT, _MARGIN_X, _MARGIN_Y = 28, 5, 4

#: What the browser is told a file is (by the file name's suffix).
_MIME = {"csv": "text/csv", "png": "image/png", "svg": "image/svg+xml", "html": "text/html"}


@dataclass
class RowButton:
    """One button of a :class:`DownloadRow`.

    ``kind`` names it in the row's messages; ``classes`` are the classes of the element holding it;
    ``callback`` makes its file (an ``io.StringIO``/``io.BytesIO``, or a coroutine giving one), named
    ``filename`` once made; ``client`` names a browser action of the row instead (no server round trip).
    ``width``: a fixed width (px; by default one that fits the label); ``max_width``: a width up to this
    that a phone's row wraps.
    """

    kind: str
    label: str
    classes: list[str]
    callback: Callable | None = None
    filename: str = ""
    color: str = "light"
    width: int | None = None
    max_width: int | None = None
    client: str = ""
    spec: dict = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.width is None and self.max_width is None:
            self.width = round(len(self.label) * _CHAR_PX) + 12  # the label at 12 px, and 6 px each side
        self.spec = {"kind": self.kind, "label": self.label, "classes": " ".join(self.classes),
                     "color": self.color, "width": self.width, "max_width": self.max_width, "client": self.client}


#: The row's script; ``{client}`` is a JavaScript object of the row's browser actions (name -> function).
_ESM = r"""
const CLIENT = __CLIENT__;

function save(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}

function bytes(data) {
  const text = atob(data);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

export function render({ model, el }) {
  const row = document.createElement("div");
  row.className = "md-dl-row";
  const note = document.createElement("span");
  note.className = "md-dl-note";
  note.setAttribute("role", "status");
  note.hidden = true;
  const buttons = new Map();
  const busy = (button, on) => {
    button.classList.toggle("md-dl-busy", on);
    if (on) { button.setAttribute("aria-busy", "true"); button.setAttribute("aria-disabled", "true"); }
    else { button.removeAttribute("aria-busy"); button.removeAttribute("aria-disabled"); }
  };
  const press = (spec, button) => {
    if (button.classList.contains("md-dl-busy")) return;
    note.hidden = true;
    if (spec.client) {
      const action = CLIENT[spec.client];
      if (action) action();
      return;
    }
    busy(button, true);
    model.send_msg({ kind: spec.kind });
  };
  const draw = () => {
    row.replaceChildren();
    buttons.clear();
    for (const spec of model.buttons) {
      const cell = document.createElement("div");
      cell.className = "md-dl " + spec.classes;
      if (spec.width) cell.style.flex = `0 0 ${spec.width}px`;
      else if (spec.max_width) cell.style.flex = `0 1 ${spec.max_width}px`;
      else cell.classList.add("md-dl-fit");
      const button = document.createElement("button");
      button.type = "button";
      button.className = `md-dl-button md-dl-${spec.color}`;
      button.textContent = spec.label;
      button.disabled = model.disabled.includes(spec.kind);
      button.addEventListener("click", () => press(spec, button));
      cell.appendChild(button);
      row.appendChild(cell);
      buttons.set(spec.kind, button);
    }
    row.appendChild(note);
  };
  model.on("msg:custom", (msg) => {
    const button = buttons.get(msg.kind);
    if (button === undefined) return;
    busy(button, false);
    if (msg.error) {
      note.textContent = msg.error;
      note.hidden = false;
      return;
    }
    save(new Blob([bytes(msg.data)], { type: msg.mime }), msg.filename);
  });
  model.on("change:disabled", () => {
    for (const [kind, button] of buttons) button.disabled = model.disabled.includes(kind);
  });
  model.on("change:buttons", draw);
  draw();
  el.appendChild(row);
}
"""

#: The row's look: Panel's "light" and "default" buttons, in the theme's colours (light and dark).
_CSS = """
/* among other controls (``fit``): the buttons are items of the parent's wrapping row, as separate widgets were */
:host(.md-dl-inline), :host(.md-dl-inline) > div, :host(.md-dl-inline) .md-dl-row { display: contents !important; }
:host(.md-dl-inline) .md-dl { align-self: flex-start; }
.md-dl-row { display: flex; flex-wrap: wrap; align-items: flex-start; }
.md-dl { margin: 4px 5px; min-width: 0; }
.md-dl-fit { flex: 0 0 auto; }
.md-dl-button { width: 100%; height: 28px; padding: 0 6px; border-radius: 4px; cursor: pointer;
  font: 400 12px Helvetica, Arial, sans-serif; text-align: center; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; background-color: var(--panel-surface-color, #f3f3f3);
  color: var(--panel-on-surface-color, #1a1d21); border: 1px solid transparent; }
.md-dl-default { height: 31px; padding: 0 12px;
  border-color: var(--panel-border-color, #e0e0e0); color: var(--panel-on-background-color, #212529); }
.md-dl-button:hover { background-image: linear-gradient(rgba(128, 128, 128, 0.12), rgba(128, 128, 128, 0.12)); }
.md-dl-button:active { transform: scale(0.98); }
.md-dl-button:focus-visible { outline: 2px solid var(--panel-primary-color, #0072b5); outline-offset: 1px; }
.md-dl-button[disabled] { cursor: not-allowed; opacity: 0.65; background-image: none; }
.md-dl-busy { cursor: progress; opacity: 0.65; }
.md-dl-note { align-self: center; margin: 4px 5px; padding: 4px 8px; font-size: 13px; border-radius: 6px;
  color: var(--danger-text-color, #b02a37); background: var(--danger-bg-subtle, #f8d7da);
  border: 1px solid var(--danger-border-subtle, #f1aeb5); }
.md-dl-note[hidden] { display: none; }
"""


def _line_heights(items: tuple) -> list[tuple[int, int]]:
    """(width from which, height) of a wrapping row of ``items`` ((basis px, height px) each), widest last."""
    out: list[tuple[int, int]] = []
    for width in range(0, sum(b for b, _ in items) + 1):
        total, line, used = 0, 0, 0
        for basis, height in items:
            if used and used + basis > width:  # flex-wrap: the next line when the basis does not fit
                total, line, used = total + line, 0, 0
            line, used = max(line, height), used + basis
        total += line
        if not out or out[-1][1] != total:
            out.append((width, total))
    return out


@functools.lru_cache(maxsize=64)
def _reserve_css(items: tuple, inline: bool) -> str:
    """CSS keeping the row's place before its script has drawn it (the script arrives a frame or more after
    the page's other parts: nothing may move when it does).  ``items``: (basis px, height px) per button.

    A row of its own is as tall as its lines will be at its width (container queries); among other
    controls (``inline``), two boxes as wide as the first button and as the others take their places.
    """
    empty = ":host > div:empty"
    if inline:
        (first, _), rest = items[0], items[1:]
        others = sum(b for b, _ in rest) - 2 * _MARGIN_X
        box = (f"content: ''; display: block; flex: 0 0 auto; height: {_LIGHT_HEIGHT}px; "
               f"margin: {_MARGIN_Y}px {_MARGIN_X}px; align-self: flex-start;")
        return (f"{empty}::before {{ {box} width: {first - 2 * _MARGIN_X}px; }}\n"
                f"{empty}::after {{ {box} width: {others}px; }}\n")
    rules = [":host { container-type: inline-size; }"]
    for width, height in _line_heights(items):
        rule = f"{empty} {{ min-height: {height}px; }}"
        rules.append(f"@container (min-width: {width}px) {{ {rule} }}" if width else rule)
    return "\n".join(rules) + "\n"


def row_esm(client: str = "{}") -> str:
    """The row's script with ``client`` (JavaScript: an object of functions) as its browser actions."""
    return _ESM.replace("__CLIENT__", client)


class DownloadRow(JSComponent):
    """A row of download buttons as one model; the server makes a file when its button is pressed.

    ``items`` (:class:`RowButton`) are the buttons, in order.  A subclass gives browser actions by
    setting ``_esm = row_esm("{ name: () => {...} }")``; a button with ``client="name"`` runs one.
    """

    buttons = param.List(default=[], doc="Each button as the browser draws it (RowButton.spec).")
    disabled = param.List(default=[], doc="The kinds whose buttons cannot be pressed (e.g. nothing to export yet).")

    _esm = row_esm()
    _stylesheets = [_CSS]

    def __init__(self, items: Sequence[RowButton] = (), *, inline: bool = False, **params):
        places = tuple(((item.width or item.max_width or 0) + 2 * _MARGIN_X,
                        _HEIGHT.get(item.color, _LIGHT_HEIGHT) + 2 * _MARGIN_Y) for item in items)
        if inline:
            params["css_classes"] = [*params.get("css_classes", []), "md-dl-inline"]
        if places:
            params["stylesheets"] = [*params.get("stylesheets", []), _reserve_css(places, inline)]
        super().__init__(buttons=[item.spec for item in items], **params)
        self.items = {item.kind: item for item in items}

    async def _handle_msg(self, data) -> None:
        """A button pressed in the browser (``{"kind": ...}``): make its file and send it back."""
        kind = data.get("kind") if isinstance(data, dict) else None
        item = self.items.get(kind) if isinstance(kind, str) else None
        if item is None or item.callback is None:
            log.warning("download row: ignored a request for %s (not one of %s)", repr(kind)[:80], sorted(self.items))
            return
        try:
            made = item.callback()
            if inspect.isawaitable(made):
                made = await made
            raw = made.getvalue()
            data_bytes = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
        except Exception as exc:  # the row keeps working; the person is told what failed
            log.exception("download row: %s failed", item.label)
            self._send_msg({"kind": kind, "error": f"{item.label.lstrip('⤓ ')} could not be made "
                                                   f"({type(exc).__name__}: {str(exc)[:160]}). "
                                                   "Try again; if it fails again, reload the page."})
            return
        suffix = item.filename.rsplit(".", 1)[-1]
        mime = _MIME.get(suffix) or mimetypes.guess_type(item.filename)[0] or "application/octet-stream"
        self._send_msg({"kind": kind, "filename": item.filename, "mime": mime,
                        "data": base64.b64encode(data_bytes).decode("ascii")})


class Exports:
    """The downloads of one page: ``prefix`` names their CSS classes (``{prefix}-csv``, ``{prefix}-slide-png`` …).

    ``csv``, ``slide`` and ``report`` are callables (any may be None: no such button); ``before``: a
    page's own buttons ahead of these; ``fit``: buttons as wide as their labels, each an item of the
    wrapping row that holds ``row`` (among other controls); ``row`` (a :class:`DownloadRow`) goes into the
    page.  The buttons are ``.csv``, ``.png``, ``.svg`` and ``.report`` (:class:`RowButton`; ``.filename`` once made).
    """

    def __init__(self, prefix: str, stem: Callable[[], str], *, csv: Callable | None = None,
                 slide: Callable | None = None, report: Callable | None = None,
                 before: Sequence[RowButton] = (), row_class: type[DownloadRow] = DownloadRow, fit: bool = False):
        self.stem = stem
        self._csv, self._slide, self._report = csv, slide, report
        buttons = list(before)

        def button(kind: str, label: str, callback, suffix: str) -> RowButton:
            # at most 170 px, adding nothing to its row's minimum width: a phone wraps the row, never scrolls sideways
            made = RowButton(kind, label, [f"{prefix}-{kind}", f"md-export-{kind}"], callback=callback,
                             filename=f"{prefix}.{suffix}", max_width=None if fit else 170)
            buttons.append(made)
            return made

        if csv is not None:
            self.csv = button("csv", "⤓ Table (CSV)", self.csv_file, "csv")
        if slide is not None:
            self.png = button("slide-png", "⤓ Slide (PNG)", self.png_file, "png")
            self.svg = button("slide-svg", "⤓ Slide (SVG)", self.svg_file, "svg")
        if report is not None:
            self.report = button("report", "⤓ Report (HTML)", self.report_file, "html")
        self.row = row_class(buttons, css_classes=[f"{prefix}-exports", "md-exports"], inline=fit,
                             sizing_mode=None if fit else "stretch_width")

    def _named(self, button: RowButton, suffix: str) -> None:
        button.filename = f"{self.stem()}.{suffix}"  # the row sends the name with the file

    async def csv_file(self) -> io.StringIO:
        self._named(self.csv, "csv")
        make = self._csv
        text = None if make is None else await in_thread(make)
        return io.StringIO(text or "")

    async def _slide_file(self, kind: str) -> io.BytesIO:
        self._named(self.png if kind == "png" else self.svg, kind)
        make = self._slide

        def build() -> bytes:
            made = None if make is None else make()
            return b"" if made is None else slide_bytes(made, kind)

        return io.BytesIO(await in_thread(build))

    async def png_file(self) -> io.BytesIO:
        return await self._slide_file("png")

    async def svg_file(self) -> io.BytesIO:
        return await self._slide_file("svg")

    async def report_file(self) -> io.StringIO:
        self._named(self.report, "html")
        make = self._report

        def build() -> str:
            made = None if make is None else make()
            return "" if made is None else made.to_html()

        return io.StringIO(await in_thread(build))


def lead_markup(text: str, prefix: str) -> str:
    """The page's first sentence in plain words (``text.lead``), as the page shows it first."""
    return f'<p class="md-lead page-lead {esc(prefix)}-lead">{esc(text)}</p>' if text else ""
