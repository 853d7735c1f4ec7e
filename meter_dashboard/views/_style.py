"""Look and feel shared by every page: colours, number formatting, small building blocks.

Colours are the Okabe-Ito palette (distinguishable for colour-blind readers); the meter's
five signal colours run from calm to alarming.
"""
from __future__ import annotations

import html
import math

import panel as pn

#: Okabe-Ito, the palette for categorical series (one colour per variant/procedure).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]

#: Per meter variant, fixed so every plot and table agrees.
VARIANT_COLORS = {
    "single_model": "#999999",
    "no_adaptivity": "#009E73",
    "resampling": "#D55E00",
    "regular": "#0072B2",
    "incremental": "#E69F00",
}

#: Signal colours for an m-signal meter (sampled from calm blue-green to vermillion).
SIGNAL_COLORS = ["#009E73", "#56B4E9", "#F0E442", "#E69F00", "#D55E00", "#CC79A7", "#0072B2", "#000000"]

ACCENT = "#0072B2"

CSS = """
.md-headline { display:flex; flex-direction:column; padding:10px 16px; border-radius:8px;
  background:#f5f8fb; border:1px solid #dde5ee; min-width:150px; }
.md-headline .md-headline-label { font-size:12px; color:#4a5a6a; text-transform:uppercase; letter-spacing:.04em; }
.md-headline .md-headline-value { font-size:28px; font-weight:600; color:#0b2a45; font-variant-numeric: tabular-nums; }
.md-headline .md-headline-sub { font-size:12px; color:#4a5a6a; }
.md-error { color:#8a1c00; background:#fff1ec; border:1px solid #f3c2b0; border-radius:6px; padding:6px 10px; font-size:13px; }
.md-ok { color:#1d5e3a; font-size:13px; }
.md-note { color:#4a5a6a; font-size:13px; line-height:1.45; }
.md-sentence { font-size:16px; line-height:1.5; color:#0b2a45; }
table.md-table { border-collapse:collapse; font-size:14px; width:100%; }
table.md-table th { text-align:left; color:#4a5a6a; font-weight:600; border-bottom:2px solid #dde5ee; padding:6px 10px; }
table.md-table td { border-bottom:1px solid #eef2f6; padding:6px 10px; font-variant-numeric: tabular-nums; }
table.md-table td.num { text-align:right; }
table.md-table tr.md-recommended td { background:#fff8e6; font-weight:600; }
"""

def ensure_css() -> None:
    """Register the shared stylesheet for the current session (or the notebook).

    ``pn.config`` is session-aware: a value set while serving one browser session applies
    to that session only, so this checks the current config every time instead of
    remembering a process-wide flag (which left every session after the first unstyled).
    """
    if CSS not in pn.config.raw_css:
        pn.config.raw_css = list(pn.config.raw_css) + [CSS]


def fmt_int(value) -> str:
    """38005 -> '38,005'; inf -> '∞'; None -> '—'."""
    if value is None:
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    return f"{int(value):,}"


def fmt_float(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    return f"{value:.{digits}g}"


def esc(text) -> str:
    """HTML-escape anything a user typed or uploaded before it is shown."""
    return html.escape(str(text), quote=True)


def headline_html(label: str, value: str, sub: str = "", css_class: str = "") -> str:
    """A big-number card; ``css_class`` goes on the value (stable hook for tests)."""
    sub_html = f'<span class="md-headline-sub">{esc(sub)}</span>' if sub else ""
    return (
        f'<div class="md-headline"><span class="md-headline-label">{esc(label)}</span>'
        f'<span class="md-headline-value {esc(css_class)}">{esc(value)}</span>{sub_html}</div>'
    )


def error_html(message: str) -> str:
    """An inline message beside an input; empty string when there is nothing to say."""
    return f'<div class="md-error">{esc(message)}</div>' if message else ""
