"""The dashboard's colours, without Panel: the pages, the Bokeh figures and the HTML reports share them.

Colours are the Okabe-Ito palette (distinguishable for colour-blind readers); the meter's
signal colours run from calm to alarming.  :mod:`meter_dashboard.ui.style` re-exports
them next to the stylesheet (``dashboard.css`` repeats them as ``.md-swatch`` classes).
"""
from __future__ import annotations

from bokeh.palettes import cividis

__all__ = ["ACCENT", "PALETTE", "SIGNAL_COLORS", "VARIANT_COLORS", "ink", "signal_colors"]

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

#: Signal colours for an m-signal meter (calm blue-green to vermillion).
SIGNAL_COLORS = ["#009E73", "#56B4E9", "#F0E442", "#E69F00", "#D55E00", "#CC79A7", "#0072B2", "#000000"]

ACCENT = "#0072B2"


def signal_colors(m: int) -> list:
    """m colours from calm to alarming: Okabe-Ito up to 8 signals, cividis beyond."""
    if m <= len(SIGNAL_COLORS):
        return SIGNAL_COLORS[:m]
    return list(cividis(m))


def ink(dark: bool = False) -> tuple:
    """(text, muted text) colours readable on the light or the dark theme."""
    return ("#e8eef4", "#aab6c2") if dark else ("#0b2a45", "#4a5a6a")
