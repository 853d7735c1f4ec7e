"""A small table of numbers, some of them editable, as ONE Bokeh model (the planner's signals, ranges and ε).

Panel's ``Tabulator`` costs the server 21 Bokeh models and about 13 ms per session opened (issue 29),
and every page that shows one loads the library's 400 KB of JavaScript and CSS.  :class:`NumberTable`,
Panel's documented ``JSComponent`` like :class:`~meter_dashboard.ui.form.Form`, draws a plain ``<table>``:
a caption and ``<th scope="col">`` headers made on the server (every title escaped), one ``<tr>`` per row
of ``rows`` whose first cell is the row's header, editable columns as ``<input type="text"
inputmode="decimal">`` boxes labelled "<title> of <row_label> <n>", the others plain text.  Numbers are
shown with each column's ``digits`` decimals.

A person's edit (Enter, or leaving a box whose text changed) reaches the server as the table's ``edit``
property, set by the browser: ``{"row": i, "column": key, "text": "...", "n": count}``.  The server parses
the text with :func:`~meter_dashboard.core.validation.check_number` (``float()`` on at most
:data:`~meter_dashboard.core.validation.MAX_NUMBER_CHARS` characters, never evaluated) and calls
``on_edit(row, key, number)``, or ``on_refused(row, key, error)`` for text that is no number; ``rows``
(the server's values) stay the last good ones and the refused box is marked invalid until the next
change.  An edit of a row or column the table does not have, or of a read-only column, is ignored and
logged.  The browser adds and removes rows when ``rows`` changes and rewrites only the boxes whose value
changed: a box someone is typing in keeps their text.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

import param
from panel.custom import JSComponent

from ..core.validation import MAX_NUMBER_CHARS, InputError, check_number, raw
from .style import STYLESHEET, esc

__all__ = ["NumberTable"]

log = logging.getLogger(__name__)

#: Longer text from the browser is refused without being echoed (a box takes at most MAX_NUMBER_CHARS).
_MAX_ECHO = 100

_ESM = r"""
const show = (value, digits) =>
  value === null || value === undefined ? "" : (digits === null || digits === undefined ? String(value)
                                                                                       : Number(value).toFixed(digits));

export function render({ model, el }) {
  el.innerHTML = model.markup;  // made by the server: the caption and the column titles, escaped
  const body = el.querySelector("tbody");
  const columns = model.columns;
  let shown = [];  // the text each cell last showed of the server's rows
  const commit = (box) => {
    if (box.value === box.dataset.sent) return;
    box.dataset.sent = box.value;
    const n = (model.edit && Number.isInteger(model.edit.n) ? model.edit.n : 0) + 1;
    model.edit = { row: Number(box.dataset.row), column: box.dataset.column, text: box.value, n };
  };
  const addRow = (i) => {
    const tr = document.createElement("tr");
    columns.forEach((column, j) => {
      const cell = document.createElement(j === 0 ? "th" : "td");
      if (j === 0) cell.setAttribute("scope", "row");
      if (column.editable) {
        const box = document.createElement("input");
        box.type = "text";
        box.inputMode = "decimal";
        box.maxLength = model.max_chars;
        box.autocomplete = "off";
        box.spellcheck = false;
        box.className = "md-cell-input";
        box.dataset.row = String(i);
        box.dataset.column = column.key;
        box.setAttribute("aria-label", `${column.title} of ${model.row_label} ${i + 1}`);
        box.addEventListener("change", () => commit(box));
        box.addEventListener("keydown", (event) => { if (event.key === "Enter") commit(box); });
        cell.append(box);
      }
      tr.append(cell);
    });
    body.append(tr);
  };
  const write = (i, j, text) => {
    const cell = body.rows[i].cells[j];
    const box = cell.querySelector("input");
    if (box === null) { cell.textContent = text; return; }
    box.value = text;  // a value, never HTML
    box.dataset.sent = text;
  };
  const rows = () => {
    while (body.rows.length > model.rows.length) body.lastElementChild.remove();
    while (body.rows.length < model.rows.length) addRow(body.rows.length);
    shown = model.rows.map((row, i) => columns.map((column, j) => {
      const text = show(row[j], column.digits);
      if (!shown[i] || shown[i][j] !== text) write(i, j, text);  // only the cells whose value changed
      return text;
    }));
    invalid();
  };
  const invalid = () => {
    const typing = el.getRootNode().activeElement;
    for (const box of body.querySelectorAll("input")) {
      const i = Number(box.dataset.row), j = columns.findIndex((c) => c.key === box.dataset.column);
      const bad = model.invalid.includes(`${i}:${box.dataset.column}`);
      // refused text: the last good value again (unless the person is typing there)
      if (!bad && box.getAttribute("aria-invalid") === "true" && box !== typing && shown[i]) write(i, j, shown[i][j]);
      box.setAttribute("aria-invalid", String(bad));
    }
  };
  rows();
  model.on("change:rows", rows);
  model.on("change:invalid", invalid);
}
"""


class NumberTable(JSComponent):
    """``rows`` of numbers under ``columns`` (dicts: ``key``, ``title``, ``editable``, ``digits``) as one model.

    ``caption`` names the table for screen readers; ``row_label`` names a row in the boxes' labels
    ("ε of signal 2").  ``on_edit(row, key, number)`` takes a number a person typed (the caller sets
    ``rows`` to what it accepted); ``on_refused(row, key, error)`` is told of text that is no number.
    """

    markup = param.String(default="", constant=True, doc="The table's caption and header, made once.")
    columns = param.List(default=[], constant=True, doc="Each column: key, title, editable, digits.")
    rows = param.List(default=[], doc="The server's values, one list per row, in the columns' order.")
    row_label = param.String(default="row", constant=True, doc="What a row is called in the boxes' labels.")
    max_chars = param.Integer(default=MAX_NUMBER_CHARS, constant=True, doc="The longest text a box takes.")
    edit = param.Dict(default={}, doc="The last edit the browser sent: row, column, text, n (a count).")
    invalid = param.List(default=[], doc="The boxes showing refused text, as 'row:key'.")

    _esm = _ESM
    _stylesheets = [STYLESHEET.name]

    def __init__(self, columns: list[dict], rows: list[list], *, caption: str, row_label: str = "row",
                 on_edit: Callable[[int, str, float], None], on_refused: Callable[[int, str, InputError], None],
                 **params):
        columns = [{"key": str(c["key"]), "title": str(c["title"]), "editable": bool(c.get("editable", False)),
                    "digits": c.get("digits")} for c in columns]
        head = "".join(f'<th scope="col">{esc(c["title"])}</th>' for c in columns)
        markup = (f'<div class="md-number-table"><table><caption class="md-hidden">{esc(caption)}</caption>'
                  f'<thead><tr>{head}</tr></thead><tbody></tbody></table></div>')
        self._on_edit, self._on_refused = on_edit, on_refused
        params.setdefault("sizing_mode", "stretch_width")
        params.setdefault("margin", (5, 10))
        super().__init__(markup=markup, columns=columns, rows=[list(r) for r in rows], row_label=row_label, **params)

    @param.depends("rows", watch=True)
    def _on_rows(self) -> None:
        if self.invalid:
            self.invalid = []  # new values: a refused box shows its value again

    @param.depends("edit", watch=True)
    def _on_browser_edit(self) -> None:
        """What a person typed in a box (the browser sets ``edit``): parsed, never evaluated."""
        edit = self.edit
        row, key, text = edit.get("row"), edit.get("column"), edit.get("text")
        editable = {c["key"] for c in self.columns if c["editable"]}
        if not (isinstance(row, int) and not isinstance(row, bool) and 0 <= row < len(self.rows)
                and key in editable and isinstance(text, str)):
            log.warning("number table: ignored an edit of no editable cell of this table: %.120r", edit)
            return
        title = next(c["title"] for c in self.columns if c["key"] == key)
        where = f"{self.row_label} {row + 1}"
        try:
            if len(text) > _MAX_ECHO:
                raise InputError(title, f"a number of at most {MAX_NUMBER_CHARS} characters",
                                 raw(f"{len(text):,} characters"), location=where)
            number = check_number(title, text, location=where)
        except InputError as error:
            self.invalid = [f"{row}:{key}"]
            self._on_refused(row, key, error)
            return
        if self.invalid:
            self.invalid = []
        self._on_edit(row, key, number)
