"""The dashboard's Bokeh figure defaults, without Panel: the pages' plots and the /approve figures share them.

- :func:`figure`: as wide as its column, the same five tools above it, no Bokeh logo;
- :func:`legend`: a legend whose entries hide their series when clicked;
- :func:`renderer`: a glyph drawn without the selection and mute copies ``figure.line`` makes;
- :data:`GREY` (reference series readable on the light and the dark theme) and :data:`LOG_TICKS`
  (1-2-5 ticks for log axes of counts).
"""
from __future__ import annotations

import bokeh.plotting
from bokeh.models import GlyphRenderer, Legend

__all__ = ["TOOLS", "GREY", "LOG_TICKS", "figure", "legend", "renderer"]

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


def renderer(fig, source, glyph, view=None) -> GlyphRenderer:
    """A glyph renderer without the selection/mute copies ``figure.line`` makes (nothing here selects).

    Renderers of one source share its view (every row shown): two models fewer each.
    """
    made = GlyphRenderer(data_source=source, glyph=glyph, **({"view": view} if view is not None else {}))
    fig.renderers.append(made)
    return made
