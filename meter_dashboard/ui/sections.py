"""Parts the pages share: sections, batched updates, results that arrive from worker threads.

- :func:`section`: a titled block with its own inputs beside its results; below 760 px the
  results move under the inputs (dashboard.css), so a phone never scrolls sideways.
- :func:`held`: a decorator for a view's update methods: their changes (Panel panes and
  raw Bokeh models alike) go out as one batch through Panel's ``hold``, which is safe
  whether or not the callback holds the document lock (Panel runs some widget callbacks
  without it).
- :func:`one_message`: a context manager for code that runs under a session's document lock
  (a next-tick callback, ``with_locked_document``): its changes leave as one message, in order.
- :class:`~meter_dashboard.ui.inputs.LateMessage` (imported here for the pages): a message pane made
  (and put in its column) the first time there is something to say.
- :func:`document_dispatch`: a function that runs a callable on the session's next tick,
  under its document lock, for results that arrive from a worker thread or an ``await``
  (Bokeh models such as a ColumnDataSource may only change while the lock is held).
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

import panel as pn
import param

from .inputs import LateMessage, NumberInput
from .style import HTML, Bar, esc

__all__ = ["section", "number_input", "held", "one_message", "document_dispatch", "LateMessage"]


def section(title: str, intro: str, controls: list, results: list, prefix: str, css: str) -> pn.Column:
    """A titled block: ``controls`` (290 px column) beside ``results``; stacked below 760 px.

    ``intro`` is HTML written by the page (never user text).  Classes: ``<prefix>-section``
    and ``css`` on the block, ``<prefix>-body`` on the row, ``<prefix>-controls`` and
    ``<prefix>-results`` on its columns (dashboard.css, the page's section).
    """
    return pn.Column(
        HTML(f"<h2>{esc(title)}</h2><div class='md-note'>{intro}</div>", sizing_mode="stretch_width"),
        Bar(pn.Column(*controls, width=290, css_classes=[f"{prefix}-controls"]),
            pn.Column(*results, sizing_mode="stretch_width", css_classes=[f"{prefix}-results"]),
            sizing_mode="stretch_width", css_classes=[f"{prefix}-body"]),
        sizing_mode="stretch_width", css_classes=[f"{prefix}-section", css], margin=(0, 0, 24, 0),
    )


def number_input(model: param.Parameterized, parameter: str, label: str, css: str) -> NumberInput:
    """A :class:`NumberInput` with stable hooks: ``css`` on the box, ``<css>-message`` on its message."""
    return NumberInput(model, parameter, label=label, css_classes=[css], message_classes=[f"{css}-message"])


def held(method: Callable) -> Callable:
    """Run a view's update method inside ``pn.io.hold()``: one batch of changes, lock or no lock."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with pn.io.hold():
            return method(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def one_message(doc) -> Iterator[None]:
    """Changes made inside reach ``doc``'s browser as one message, after every message made before.

    For code that runs under the session's document lock (a next-tick callback, Bokeh's
    ``with_locked_document``); ``doc`` None (a notebook, a script) just runs the body.  This is
    Panel's ``hold`` with ``doc`` as the current document: Panel writes the changes as one PATCH-DOC,
    or queues it behind its own writes still waiting.  Not Bokeh's ``doc.hold()``/``doc.unhold()``:
    that sends each change as a message of its own through Bokeh's writer, which does not wait for
    Panel's queue, so a plot's data could reach the browser before the plot ("reference p1109
    isn't known" in the console, and the update lost).
    """
    if doc is None:
        yield
        return
    from panel.io.state import set_curdoc

    with set_curdoc(doc), pn.io.hold(doc):
        yield


def document_dispatch() -> Callable[[Callable[[], None]], None]:
    """How a model applies work done off the event loop: on this session's next tick, under its document lock.

    Each call runs inside ``pn.io.hold`` (its changes leave in one message).  Outside a served
    session (notebooks, scripts, tests) the callable runs at once.  Once the session is destroyed
    (its browser left) nothing runs: Bokeh has emptied its models.
    """
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        def direct(fn: Callable[[], None]) -> None:
            with pn.io.hold():
                fn()

        return direct
    from panel.io.state import set_curdoc

    def held_fn(fn: Callable[[], None]) -> None:
        with one_message(doc):
            fn()

    def dispatch(fn: Callable[[], None]) -> None:
        if doc.session_context is None:
            # the session was destroyed (its browser left): its models are emptied, and Panel would run
            # ``fn`` right here, in the caller's thread, against them; nobody is left to see it
            return
        with set_curdoc(doc):
            pn.state.execute(functools.partial(held_fn, fn), schedule=True)

    return dispatch

