"""Results in a notebook: the CLI's table as HTML, the inputs as its caption, the recommendation marked.

Every result type's ``_repr_html_`` goes through :func:`html_table`, so a notebook shows what the
CLI prints: the same columns, numbers formatted by the same rules (:func:`cell_text`: thousands
separators, four significant digits, "—" for a missing or non-finite value), the inputs that
produced it as the caption, and the row the result recommends (or the decision it reached)
marked with ★ and the class ``md-marked``. Panel-free; nothing here imports more than ``html``.
"""
from __future__ import annotations

import html
import math
from collections.abc import Sequence
from .formatting import LARGE, scientific

__all__ = ["cell_text", "html_table", "is_number", "MARK"]

#: what marks the recommended row (the CLI marks it with "*")
MARK = "★"


def is_number(value) -> bool:
    """A number to right-align (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) or type(value).__module__ == "numpy" \
        and getattr(value, "dtype", None) is not None and value.dtype.kind in "iuf"


def cell_text(value) -> str:
    """One table cell as the CLI prints it."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "—"
        return f"{value:.4g}" if abs(value) < LARGE else scientific(value, 3)  # 1.96×10⁹, as on the page
    if value is None:
        return "—"
    return str(value)


def html_table(headers: Sequence[str], rows: Sequence[Sequence], *, caption: str, marked: Sequence[int] = (),
               mark_note: str = "recommended", sentence: str | None = None, notes: Sequence[str] = (),
               more: str | None = None) -> str:
    """The table as HTML: ``caption`` (the inputs) above, rows ``marked`` with ★, then the sentence and notes.

    ``more`` says what was left out (a long replay shows its first and last steps).
    """
    marked_rows = set(marked)
    numeric = [bool(rows) and all(is_number(r[i]) or r[i] is None for r in rows) for i in range(len(headers))]
    head = "".join(f'<th style="text-align:{"right" if n else "left"}">{html.escape(str(h))}</th>'
                   for h, n in zip(headers, numeric))
    body = []
    for k, row in enumerate(rows):
        cells = []
        for i, value in enumerate(row):
            text = html.escape(cell_text(value))
            if i == 0 and k in marked_rows:
                text = f'{text} <span class="md-mark" title="{html.escape(mark_note)}">{MARK} {html.escape(mark_note)}</span>'
            cells.append(f'<td style="text-align:{"right" if numeric[i] else "left"}">{text}</td>')
        style = ' class="md-marked" style="font-weight:bold"' if k in marked_rows else ""
        body.append(f"<tr{style}>{''.join(cells)}</tr>")
    parts = [f'<table class="md-result"><caption style="caption-side:top;text-align:left">'
             f"{html.escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"]
    if more:
        parts.append(f'<p class="md-more">{html.escape(more)}</p>')
    if sentence:
        parts.append(f'<p class="md-sentence">{html.escape(sentence)}</p>')
    parts += [f'<p class="md-note">note: {html.escape(n)}</p>' for n in notes]
    return '<div class="md-result-display">' + "".join(parts) + "</div>"
