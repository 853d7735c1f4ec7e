"""Parts of a served page built when a person reaches them: scrolled to, or opened.

A served session costs the server CPU for every Bokeh model its first view holds (issue 29: the
view's models are most of a page's cost per person).  What lies below the fold is built when it
comes near the screen, what sits in a closed drawer when the drawer is opened:

- :class:`WhenSeen` holds the place of a part with a box of the part's height and one small
  component (:class:`SeenWatch`, Panel's documented ``JSComponent``) whose script watches, with the
  browser's ``IntersectionObserver``, whether the box is within :data:`AHEAD_PX` of the screen; the
  first time it is, the part is built and takes the box's place (same height: nothing on screen moves).
- :func:`on_screen` runs a callback once the page's widgets are in the browser: Panel's
  ``pn.state.onload`` while the page loads, the next tick once it has loaded (a served page's view
  is built after the browser connected: :mod:`meter_dashboard.app.pages`).

Outside a server (a notebook, a script, the tests of the views) everything is built at once: a
notebook cell shows the whole component, and code that reads a part finds it.
"""
from __future__ import annotations

from typing import Callable

import panel as pn
import param
from panel.custom import JSComponent

__all__ = ["AHEAD_PX", "SeenWatch", "WhenSeen", "on_screen", "served"]

#: A part is built when its place comes this close to the screen (a person scrolling finds it built).
AHEAD_PX = 240


def served() -> bool:
    """Whether this code runs for a served session (a browser's page), not a notebook or a script."""
    doc = pn.state.curdoc
    return doc is not None and doc.session_context is not None


def on_screen(callback: Callable[[], object]) -> None:
    """Run ``callback`` once this page's widgets are in the browser.

    Served: Panel's ``pn.state.onload`` while the session loads; once it has loaded (a view built
    by the page's builder after the browser connected), on the next tick, after the view's own
    message (``pn.state.execute(..., schedule=True)``).  In a notebook: ``pn.state.onload``.
    """
    if served() and pn.state.loaded:
        pn.state.execute(callback, schedule=True)
    else:
        pn.state.onload(callback)


class SeenWatch(JSComponent):
    """A box that says (``seen``) when it first comes within :data:`AHEAD_PX` of the screen."""

    seen = param.Boolean(default=False, doc="True once the box has come near the screen (never False again).")
    text = param.String(default="", doc="What the box says until its part is built.")

    _esm = f"""
export function render({{ model, el }}) {{
  const box = document.createElement("div");
  box.className = "md-when-seen";
  box.style.cssText = "height: 100%; display: flex; align-items: center; justify-content: center; " +
    "opacity: 0.7; font-size: 0.9em; border: 1px dashed rgba(128, 128, 128, 0.4); border-radius: 6px;";
  box.textContent = model.text;
  el.appendChild(box);
  const watch = new IntersectionObserver((entries) => {{
    if (entries.some((e) => e.isIntersecting)) {{
      watch.disconnect();
      model.seen = true;
    }}
  }}, {{ rootMargin: "{AHEAD_PX}px 0px {AHEAD_PX}px 0px" }});
  watch.observe(el);
  model.on("remove", () => watch.disconnect());
}}
"""


class WhenSeen(pn.viewable.Viewer):
    """A part of a served page built when it comes near the screen (in a notebook: at once).

    Parameters
    ----------
    build : callable
        Makes the part (a Panel object); called once.
    height : int
        The part's height in pixels: the box keeps its place, so nothing moves when it is built.
    text : str
        What the box says meanwhile (e.g. "The curve is drawn when you scroll to it").
    css_classes : list of str
        Classes of the column that holds the box, then the part.
    """

    built = param.Boolean(default=False, constant=True, doc="True once the part is built.")

    def __init__(self, build: Callable[[], object], *, height: int, text: str = "", css_classes=(), **params):
        super().__init__(**params)
        self._build = build
        self.part: object | None = None
        self.holder = pn.Column(sizing_mode="stretch_width", css_classes=["md-when-seen-holder", *css_classes],
                                margin=0)
        if served():
            self.watch = SeenWatch(text=text, height=height, sizing_mode="stretch_width", margin=0)
            self.watch.param.watch(self._on_seen, "seen")
            self.holder.objects = [self.watch]
        else:
            self.ensure()

    def ensure(self):
        """The part, built now if it was not yet."""
        if self.part is None:
            self.part = self._build()
            with param.edit_constant(self):
                self.param.update(built=True)
            self.holder.objects = [self.part]
        return self.part

    def _on_seen(self, event) -> None:
        if event.new:
            with pn.io.hold():
                self.ensure()

    def __panel__(self):
        return self.holder
