"""Look and feel shared by every page and notebook component: colours, the stylesheet, HTML snippets.

One stylesheet, one path: ``dashboard.css`` (next to this module).  :class:`HTML` is Panel's HTML
pane carrying it in its class-level ``_stylesheets``; a served page fetches that file once by URL
(:func:`stylesheet_url`, the URL Panel serves component stylesheets at), a notebook receives it
inline.  The served documents outside Panel's components (the header bar, the landing page,
``/docs``: :mod:`meter_dashboard.app.documents`) link the same URL, and the served pages' widgets
that need the dashboard's rules (toggle groups, progress bars) receive it through
:class:`DashboardDesign`.  Nothing is written to ``pn.config.raw_css``; no ``<style>`` elsewhere.
Every piece of HTML the views build uses the classes of ``dashboard.css`` (no inline ``style=``
attributes), and the stylesheet's colours come from Panel's theme variables, so the dark theme
(``?theme=dark``) is readable too.

Colours (defined without Panel in :mod:`meter_dashboard.core.colors`, re-exported here) are the Okabe-Ito palette
(distinguishable for colour-blind readers); the meter's signal colours run from calm to alarming.  ``dashboard.css`` repeats the series colours as
``.md-swatch`` classes; tests/views/test_style.py keeps the two in step.
"""
from __future__ import annotations

import html
from pathlib import Path

import panel as pn
from panel.theme.base import Inherit
from panel.theme.native import Native, NativeDarkTheme, NativeDefaultTheme

from ..core.colors import ACCENT, PALETTE, SIGNAL_COLORS, VARIANT_COLORS, signal_colors

__all__ = [
    "ACCENT", "PALETTE", "SIGNAL_COLORS", "VARIANT_COLORS", "STYLESHEET", "HTML", "Bar", "stylesheet_url",
    "DashboardDesign",
    "esc", "headline_html", "headlines_html", "error_html", "stale_html", "swatch_html", "signal_colors",
]

#: The stylesheet file (also shipped as package data).
STYLESHEET = Path(__file__).with_name("dashboard.css")


class HTML(pn.pane.HTML):
    """Panel's HTML pane with the dashboard's stylesheet in its shadow root.

    Use it for every piece of HTML a view shows, so the classes of ``dashboard.css``
    apply (``md-headline``, ``md-table``, ``md-error``, ...).
    """

    _stylesheets = [*pn.pane.HTML._stylesheets, STYLESHEET.name]


class Bar(pn.Row):
    """A row carrying the dashboard's stylesheet (a page's body: ``css_classes=["md-body"]``)."""

    _stylesheets = [*pn.Row._stylesheets, STYLESHEET.name]


def stylesheet_url() -> str:
    """The URL (relative to the server) a served page fetches ``dashboard.css`` from: Panel's own for :class:`HTML`.

    The header bar, the landing page and ``/docs`` link it too, so a browser fetches the file once.
    """
    from panel.io.resources import component_resource_path

    return component_resource_path(HTML, "_stylesheets", STYLESHEET.name)


_URL = stylesheet_url()  # relative: the same file at the same URL under any prefix a proxy adds


class _DarkTheme(NativeDarkTheme):
    """Panel's native dark theme, plus sliders whose filled part is dark grey (their default ``bar_color`` is a
    light grey)."""

    modifiers = {**NativeDarkTheme.modifiers, pn.widgets.slider.ContinuousSlider: {"bar_color": "#4a5158"}}


class DashboardDesign(Native):
    """Panel's native design (the default) with every widget following the dark theme (served pages).

    Through Panel's documented design mechanism (``pn.extension(design=...)``; a design's
    ``modifiers`` per component class, a theme's per theme): toggle groups, progress bars, sliders, file
    droppers, tabs, buttons and toggles receive ``dashboard.css`` (the same URL as every component), whose
    rules make the chosen option the highlighted one, the tracks, bars, drop areas and the active tab follow
    the theme (light and dark, from Panel's theme variables), "light" buttons take the theme's surface
    colour (Panel draws them white in the dark theme too) and a warning button's label is readable
    (dark on amber).  (The dashboard's tables are its own components, ui/table.py, styled by the same file.)
    """

    modifiers = {
        **Native.modifiers,
        pn.widgets.RadioButtonGroup: {"stylesheets": [Inherit, _URL]},
        pn.widgets.CheckButtonGroup: {"stylesheets": [Inherit, _URL]},
        pn.indicators.Progress: {"stylesheets": [Inherit, _URL]},
        pn.widgets.slider.ContinuousSlider: {"stylesheets": [Inherit, _URL]},
        pn.widgets.FileDropper: {"stylesheets": [Inherit, _URL]},
        pn.Tabs: {"stylesheets": [Inherit, _URL]},
        pn.widgets.Button: {"stylesheets": [Inherit, _URL]},
        pn.widgets.Toggle: {"stylesheets": [Inherit, _URL]},
    }
    _themes = {"default": NativeDefaultTheme, "dark": _DarkTheme}


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


def headlines_html(cards, css_class: str = "") -> str:
    """A wrapping row of :func:`headline_html` cards."""
    return f'<div class="md-row {esc(css_class)}">' + "".join(cards) + "</div>"


def error_html(message: str) -> str:
    """An inline message beside an input; empty string when there is nothing to say."""
    return f'<div class="md-error">{esc(message)}</div>' if message else ""


def stale_html(what: str) -> str:
    """The banner over results that are the last valid ones while an input is wrong."""
    return (f'<div class="md-error md-stale">Showing the last valid {esc(what)}: fix the input marked '
            f'beside it.</div>')


def swatch_html(css_class: str) -> str:
    """A small colour square, e.g. ``swatch_html("variant-regular")`` (classes in ``dashboard.css``)."""
    return f'<span class="md-swatch {esc(css_class)}"></span>'
