"""The one way a page keeps its state in the URL: read once when the page opens, written as it changes.

Every page goes through :class:`UrlState`: it reads the raw query strings of ``pn.state.location``
(bounded: a query longer than :data:`MAX_QUERY_CHARS` is not read at all, and said so) and hands
them to the model's own bounded parser (``update_from_query``, or :class:`UrlLink` for inputs and
choices), and writes the model's ``to_query()`` back with ``Location.update_query`` when it changes.

Why not ``pn.state.location.sync``: it parses every value with Panel's ``parse_query`` first —
``int()`` of a digit string of any length (over 4,300 digits it raises while the page opens) and
``ast.literal_eval`` of any value that starts with a bracket — before our limits apply.  Here the
URL stays text until the model's parser, which bounds size and cost before converting anything.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode

import panel as pn
import param

from ..core.validation import InputError

__all__ = ["UrlState", "UrlLink", "MAX_QUERY_CHARS", "choice_value"]

#: A query string longer than this is ignored as a whole (a shared link is a few hundred characters).
MAX_QUERY_CHARS = 4096


class UrlState:
    """The page URL's query as raw strings, read within bounds; the page's keys written back on change.

    Parameters
    ----------
    keys : iterable of str, optional
        The keys this page owns: others in the URL are left as they are when writing.
    """

    def __init__(self, keys: Iterable[str] | None = None):
        doc = pn.state.curdoc
        served = doc is not None and doc.session_context is not None
        self._location = pn.state.location if served else None
        self.keys = set(keys) if keys is not None else None
        #: Why the URL was not read ('' when it was, or there is none).
        self.refused = ""

    @property
    def active(self) -> bool:
        """A served page with a URL (notebooks and scripts have none)."""
        return self._location is not None

    def query(self) -> dict[str, str]:
        """The URL's query as raw strings (the page's keys only, when given); empty when absent or too long."""
        search = (getattr(self._location, "search", "") or "") if self._location is not None else ""
        if len(search) > MAX_QUERY_CHARS:
            self.refused = (f"The link's settings were not applied: its query has {len(search):,} characters "
                            f"(at most {MAX_QUERY_CHARS:,}).")
            return {}
        pairs = parse_qsl(search.lstrip("?"), keep_blank_values=True)
        return {k: v for k, v in pairs if self.keys is None or k in self.keys}

    def write(self, query: dict[str, str]) -> None:
        """Replace this page's keys in the URL with ``query`` (keys of other owners stay)."""
        if self._location is None:
            return
        others = dict(parse_qsl((self._location.search or "").lstrip("?"), keep_blank_values=True))
        others = {k: v for k, v in others.items() if self.keys is not None and k not in self.keys}
        current = {**{k: str(v) for k, v in query.items()}, **others}
        search = "?" + urlencode(current, safe=",") if current else ""
        if (self._location.search or "") != search:
            self._location.search = search

    def follow(self, parameterized: param.Parameterized, names: list[str], to_query: Callable[[], dict]) -> None:
        """Write ``to_query()`` whenever one of ``names`` of ``parameterized`` changes."""
        if self._location is None:
            return
        parameterized.param.watch(lambda *events: self.write(to_query()), names)


class UrlLink:
    """URL keys bound to inputs (``NumberInput``) or to choice parameters of models.

    On load each value is typed into its :class:`~meter_dashboard.ui.inputs.NumberInput` (so a
    bad value gets the same message beside the input as a bad value typed by hand, and the
    results keep their last valid state) or, for choices, checked against the parameter's
    options; afterwards the URL follows the models.

    Parameters
    ----------
    bindings : dict
        ``key -> (model, parameter, box)``: ``box`` is the page's NumberInput for that
        parameter (the URL value is typed into it) or None (a selector or boolean parameter,
        set directly when the value is one of its options).
    """

    def __init__(self, bindings: dict[str, tuple[param.Parameterized, str, Any]]):
        self.bindings = bindings
        self.url = UrlState(keys=bindings)

    def query(self) -> dict[str, str]:
        """The page URL's query as raw strings (empty outside a served page or when absurdly long)."""
        return self.url.query()

    def apply(self) -> list[str]:
        """Apply the URL's values; returns the messages of refused values that have no input beside them."""
        messages = []
        query = self.query()
        if self.url.refused:
            messages.append(self.url.refused)
        for key, value in query.items():
            model, name, box = self.bindings[key]
            if box is not None:
                box.text.value = value  # parsed, and refused beside the input, exactly like typed text
                continue
            try:
                setattr(model, name, choice_value(model, name, key, value))
            except InputError as exc:
                messages.append(f"The link's {key} was not applied: {exc}")
        return messages

    def follow(self) -> None:
        """Keep the URL in step with the models from now on."""
        for key, (model, name, _) in self.bindings.items():
            model.param.watch(lambda event, key=key: self._write(key, event.new), name)

    def _write(self, key: str, value) -> None:
        self.url.write({**self.query(), key: str(value).lower() if isinstance(value, bool) else str(value)})


def choice_value(model: param.Parameterized, name: str, key: str, text: str):
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
