"""Parts the Ladder and P(A>B) pages share: sections, the page URL, updates from worker threads.

- :func:`section`: a titled block with its own inputs beside its results; below 760 px the
  results move under the inputs (dashboard.css), so a phone never scrolls sideways.
- :class:`UrlLink`: URL keys bound to a page's inputs.  On load each value is typed into
  its :class:`~meter_dashboard.ui.inputs.NumberInput` (so a bad value gets the same
  message beside the input as a bad value typed by hand, and the results keep their last
  valid state) or, for choices, checked against the parameter's options; afterwards the
  URL follows the models.  The query string is read with :func:`urllib.parse.parse_qsl`
  only (raw text, bounded by the inputs' own parsers): nothing in it is evaluated.
- :func:`held`: a decorator for a view's update methods: their changes (Panel panes and
  raw Bokeh models alike) go out as one batch through Panel's ``hold``, which is safe
  whether or not the callback holds the document lock (Panel runs some widget callbacks
  without it).
- :func:`document_dispatch`: a function that runs a callable on the session's next tick,
  under its document lock, for results that arrive from a worker thread or an ``await``
  (Bokeh models such as a ColumnDataSource may only change while the lock is held).
"""
from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode

import panel as pn
import param

from ..core.validation import InputError
from .inputs import NumberInput
from .style import HTML, Bar, esc

__all__ = ["section", "number_input", "held", "load_upload", "UrlLink", "document_dispatch", "MAX_QUERY_CHARS"]

#: Longer query strings are ignored (every value a page takes is short).
MAX_QUERY_CHARS = 4096


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


async def load_upload(model, data: bytes, name: str, dispatch: Callable) -> None:
    """Parse an upload with ``model.prepare`` in a worker thread, then ``apply_table`` (or ``fail``) via ``dispatch``."""
    try:
        table = await asyncio.to_thread(model.prepare, data, name)
    except InputError as exc:
        dispatch(lambda exc=exc: model.fail(exc))
        return
    dispatch(lambda: model.apply_table(table))


def document_dispatch() -> Callable[[Callable[[], None]], None]:
    """A function running a callable on this session's next tick, with its document lock held.

    Outside a served session (notebooks, scripts, tests) it calls the callable at once.
    """
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return lambda fn: fn()
    from panel.io.state import set_curdoc

    def dispatch(fn: Callable[[], None]) -> None:
        with set_curdoc(doc):
            pn.state.execute(fn, schedule=True)

    return dispatch


class UrlLink:
    """URL keys bound to inputs (``NumberInput``) or to choice parameters of models.

    Parameters
    ----------
    bindings : dict
        ``key -> (model, parameter, box)``: ``box`` is the page's NumberInput for that
        parameter (the URL value is typed into it) or None (a selector or boolean parameter,
        set directly when the value is one of its options).
    """

    def __init__(self, bindings: dict[str, tuple[param.Parameterized, str, object]]):
        self.bindings = bindings
        self._location = pn.state.location

    def query(self) -> dict[str, str]:
        """The page URL's query as raw strings (empty outside a served page or when absurdly long)."""
        search = getattr(self._location, "search", "") or ""
        if len(search) > MAX_QUERY_CHARS:
            return {}
        return dict(parse_qsl(search.lstrip("?"), keep_blank_values=True))

    def apply(self) -> list[str]:
        """Apply the URL's values; returns the messages of refused values that have no input beside them."""
        messages = []
        for key, value in self.query().items():
            if key not in self.bindings:
                continue
            model, name, box = self.bindings[key]
            if box is not None:
                box.text.value = value  # parsed, and refused beside the input, exactly like typed text
                continue
            try:
                setattr(model, name, _choice(model, name, key, value))
            except InputError as exc:
                messages.append(f"The link's {key} was not applied: {exc}")
        return messages

    def follow(self) -> None:
        """Keep the URL in step with the models from now on."""
        if self._location is None:
            return
        for key, (model, name, _) in self.bindings.items():
            model.param.watch(lambda event, key=key: self._write(key, event.new), name)

    def _write(self, key: str, value) -> None:
        query = self.query()
        query[key] = str(value).lower() if isinstance(value, bool) else str(value)
        self._location.search = "?" + urlencode(query)


def _choice(model: param.Parameterized, name: str, key: str, text: str):
    """``text`` as a value of the choice parameter ``model.<name>`` (Selector or Boolean)."""
    p = model.param[name]
    if isinstance(p, param.Boolean):
        lowered = text.strip().lower()
        if lowered not in ("true", "false"):
            raise InputError(key, "true or false", text)
        return lowered == "true"
    options = [str(o) for o in p.objects]
    if text not in options:
        raise InputError(key, "one of " + ", ".join(options), text)
    return p.objects[options.index(text)]
