"""Parts the pages share: sections, batched updates, results that arrive from worker threads.

- :func:`section`: a titled block with its own inputs beside its results; below 760 px the
  results move under the inputs (dashboard.css), so a phone never scrolls sideways.
- :func:`held`: a decorator for a view's update methods: their changes (Panel panes and
  raw Bokeh models alike) go out as one batch through Panel's ``hold``, which is safe
  whether or not the callback holds the document lock (Panel runs some widget callbacks
  without it).
- :func:`one_message`: a context manager for code that runs under a session's document lock
  (a next-tick callback, ``with_locked_document``): its changes leave as one message, in order.
- :class:`LateMessage`: a message pane made (and put in its column) the first time there is
  something to say: most sessions never show one, and an empty pane still costs a Bokeh model.
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

from .inputs import NumberInput
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


class LateMessage:
    """A message pane made the first time there is something to say (or someone reads :attr:`pane`).

    :meth:`placed_in` names the column that shows it and where: right after one of its parts, right
    before one, or at its end; the pane goes in there when it is made (at once if it already was).  ``pane_params`` are the
    :class:`~meter_dashboard.ui.style.HTML` pane's (``css_classes``, ``margin``, ...).
    """

    def __init__(self, **pane_params):
        self._params = {"sizing_mode": "stretch_width", **pane_params}
        self._pane: HTML | None = None
        self._host: tuple | None = None  # (column, the part the pane follows, the part it precedes)

    @property
    def pane(self) -> HTML:
        """The message pane, made (and placed) now if it was not yet."""
        if self._pane is None:
            self._pane = HTML("", **self._params)
            self._place()
        return self._pane

    def show(self, html: str) -> None:
        """Show ``html`` ('' for no message): a pane is made only for a message."""
        if html or self._pane is not None:
            if self.pane.object != html:
                self.pane.object = html

    def placed_in(self, column, after=None, before=None) -> None:
        """``column`` shows the message right after ``after`` or before ``before`` (its objects), else at its end."""
        self._host = (column, after, before)
        self._place()

    def _place(self) -> None:
        if self._host is None or self._pane is None or self._pane in self._host[0].objects:
            return
        column, after, before = self._host
        if after is not None:
            column.insert(column.objects.index(after) + 1, self._pane)
        elif before is not None:
            column.insert(column.objects.index(before), self._pane)
        else:
            column.append(self._pane)
