"""The dashboard's Bokeh figure defaults, without Panel: the pages' plots and the /approve figures share them.

- :func:`figure`: as wide as its column, the same five tools above it, no Bokeh logo;
- :func:`legend`: a legend whose entries hide their series when clicked;
- :func:`glyph` and :func:`line`: a series drawn with its glyph model only (fewer Bokeh models per session);
- :data:`GREY` (reference series readable on the light and the dark theme) and :data:`LOG_TICKS`
  (1-2-5 ticks for log axes of counts).
"""
from __future__ import annotations

import bokeh.plotting
from bokeh.models import AllIndices, CDSView, GlyphRenderer, Legend, Line
from bokeh.models.glyph import Glyph

__all__ = ["TOOLS", "GREY", "LOG_TICKS", "figure", "glyph", "legend", "line"]

#: The tools of every plot (the toolbar sits above it).
TOOLS = "pan,wheel_zoom,box_zoom,reset,save"
#: A reference series (naive scores, "what you have"): readable on the light and the dark theme.
GREY = "#888888"
#: 1-2-5 ticks for log axes of counts (Bokeh shows the ones inside the range).
LOG_TICKS = [m * 10**e for e in range(0, 16) for m in (1, 2, 5)]


def figure(**kwargs):
    """A Bokeh figure with the dashboard's defaults; keywords go to :func:`bokeh.plotting.figure`."""
    kwargs.setdefault("sizing_mode", "stretch_width")
    kwargs.setdefault("tools", TOOLS)
    kwargs.setdefault("toolbar_location", "above")
    fig = bokeh.plotting.figure(**kwargs)
    fig.toolbar.logo = None
    return fig


def legend(fig, items, location: str, alpha: float = 0.8, place: str = "center", **kwargs) -> Legend:
    """Add a legend of ``items`` (``[(label, [renderers])]``) whose entries hide their series when clicked."""
    box = Legend(items=items, location=location, click_policy="hide", background_fill_alpha=alpha, **kwargs)
    fig.add_layout(box, place)
    return box


def glyph(fig, source, model: Glyph, **kwargs) -> GlyphRenderer:
    """Draw ``model`` (a glyph: ``Line(...)``, ``Scatter(...)``, ``Quad(...)``) from ``source`` on ``fig``.

    ``fig.line(...)`` and the like also make a glyph for unselected points and one for a muted series:
    two Bokeh models more per series, which a plot with no selection tool and no "mute" legend never
    shows.  Here the series is its glyph alone (BokehJS derives those looks itself if ever needed), so
    the plot looks and behaves the same with fewer models for each session to build and send.  The
    series of one plot share their view's filter (every row: stateless), one model for all.
    """
    shown = next((r.view.filter for r in fig.renderers if isinstance(r, GlyphRenderer)
                  and isinstance(r.view.filter, AllIndices)), None)
    kwargs.setdefault("view", CDSView(filter=shown or AllIndices()))
    return fig.add_glyph(source, model, **kwargs)


def line(fig, source, x: str, y: str, **visuals) -> GlyphRenderer:
    """A line of column ``y`` against column ``x`` (``line_color=...``, ``line_dash=...``): :func:`glyph`."""
    return glyph(fig, source, Line(x=x, y=y, **visuals))
