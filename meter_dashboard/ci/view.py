"""The ease.ml/ci page: how many labels a CI condition needs, and a commit trace replayed.

:class:`CI` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.ci.CIModel`, made of
sections over that same model, each in a module of its own:

- :class:`~.view_inputs.Inputs` (the sidebar): the condition, validated as you type, and every
  number and choice; a message beside each bad value, the last good result kept;
- :class:`~.view_answer.Answer`: the lead, headline numbers, the table per adaptivity, the clause
  breakdown, the assumptions and the exports; :class:`~.view_answer.Curves`: labels against H;
- :class:`~.view_replay.Replay`: a commit trace replayed, with pass/fail marks and new-testset alarms.

What each section shows is declared: its ``show`` methods name the model parameters they read with
``@param.depends`` (``watch=True`` only for side effects: a widget pushing a value into the model, the
model's value shown in a text box).  The page computes nothing itself, and never touches the document
from a model watcher: :class:`Refresh` watches what the show methods declare and only notes which are
due, and one refresh runs on the server's next tick with the document
lock held (the right context for raw Bokeh models), however the change arrived: a websocket event,
a priority change processed outside the lock (Enter in a text box), or a replay finished in a
worker thread.  Several changes from one action coalesce into one refresh.
"""
from __future__ import annotations

import contextlib

import panel as pn
import param

from ..core.validation import InputError, format_value
from ..ui.base import DashboardView
from ..ui.sections import one_message
from ..ui.style import error_html
from ..ui.urlstate import UrlState
from . import ADAPTIVITIES, MODES, CIModel
from .inputs import BOUNDS, check_choice, check_steps
from .view_answer import Answer, Curves
from .view_html import headline_cards, sentence_html
from .view_inputs import Inputs, reliability_check
from .view_replay import Replay

__all__ = ["CI", "page", "url_values", "headline_cards", "sentence_html", "error_html"]

#: URL keys of the page (each the model parameter of the same name).
URL_KEYS = ("condition", "reliability", "adaptivity", "mode", "steps", "bound")


def _declared(method) -> dict:
    """What ``method`` declares with ``@param.depends``: {the Parameterized that holds them: parameter names}."""
    owner = method.__self__
    found: dict = {}
    for dep in owner.param.method_dependencies(method.__name__):
        found.setdefault(dep.inst, []).append(dep.name)
    return found


class Refresh:
    """Runs a page's show methods when what they declare (``@param.depends``) changes: once per tick, one message.

    The watchers only note which methods are due.  Served, the due methods run on the session's next tick,
    under its document lock (however the change arrived: a websocket event, Enter in a text box processed
    outside the lock, a worker thread's result), in the order given, their changes leaving as one message
    (``first``: a message of their own, sent before); in a notebook they run at once.
    """

    def __init__(self, doc, shows: list, first: tuple | list = ()):
        self._doc = doc
        self._first, self._shows = list(first), list(shows)
        self._due: set = set()
        self._scheduled = False
        for show in self._first + self._shows:
            for owner, names in _declared(show).items():
                owner.param.watch(lambda *_, show=show: self.note(show), names)

    def note(self, show) -> None:
        """``show`` is due: run it at once (notebooks) or on the session's next tick (served)."""
        self._due.add(show)
        if self._doc is None:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            self._doc.add_next_tick_callback(self.flush)  # Bokeh runs it with the document lock

    def flush(self) -> None:
        self._scheduled = False
        due, self._due = self._due, set()
        first = [show for show in self._first if show in due]
        if first:
            with one_message(self._doc):
                for show in first:
                    show()
        # every pane update makes Bokeh re-walk the document's models; frozen, it walks them once
        with self._doc.models.freeze() if self._doc is not None else contextlib.nullcontext(), one_message(self._doc):
            for show in self._shows:
                if show in due:
                    show()


def _part(section: str, name: str) -> property:
    """``CI.<name>``: the pane or widget ``name`` of one of the page's sections (notebooks, tests)."""
    return property(lambda self: getattr(getattr(self, section), name), doc=f"``{section}.{name}``")


class CI(DashboardView):
    """ease.ml/ci label counts and trace replay (the ``/ci`` page; ``md.CI()`` in notebooks).

    Parameters
    ----------
    model : CIModel, optional
        The model to drive; by default a new one from the remaining keyword arguments
        (``condition``, ``reliability``, ``adaptivity``, ``mode``, ``steps``, ...).
    trace : str, optional
        A shipped example to replay (``'ci_commits.csv'``, ``'ci_predictions.csv'``) or ``''``.
    sync_url : bool
        Keep the main settings in the page URL (served pages; off in notebooks).

    References
    ----------
    Renggli et al. 2019 (ease.ml/ci), Sections 2-4, Figure 2.

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.CI(condition="n - o > 0.1 +/- 0.1", reliability=0.99)  # doctest: +SKIP
    """

    title = "ease.ml/ci"
    extensions = ("filedropper",)

    model = param.ClassSelector(class_=CIModel)
    sync_url = param.Boolean(default=False)

    condition, condition_error = _part("inputs", "condition"), _part("inputs", "condition_error")
    lead, headlines, sentence = _part("answer", "lead"), _part("answer", "headlines"), _part("answer", "sentence")
    table, exports = _part("answer", "table"), _part("answer", "exports")
    curve_source, curve_caption = _part("curves", "curve_source"), _part("curves", "curve_caption")
    example, upload, trace_error = _part("check", "example"), _part("check", "upload"), _part("check", "trace_error")
    replay_summary, replay_table = _part("check", "replay_summary"), _part("check", "replay_table")

    def __init__(self, model: CIModel | None = None, trace: str = "ci_commits.csv", sync_url: bool = False,
                 **params):
        model_params = {k: params.pop(k) for k in list(params) if k in CIModel.param and k != "name"}
        if model is None:
            model = CIModel(**model_params)
        elif model_params:
            model.param.update(**model_params)
        super().__init__(model=model, sync_url=sync_url, **params)
        if trace and self.model.trace is None:
            self.model.load_example(trace)
        self.inputs = Inputs(model=self.model)
        self.answer = Answer(model=self.model)
        self.curves = Curves(model=self.model)
        self.check = Replay(model=self.model, trace=trace)
        doc = pn.state.curdoc if pn.state.curdoc is not None and pn.state.curdoc.session_context else None
        if doc is not None:
            self.model.work_in_background()  # the exact curves off the event loop, point by point
        self._url = UrlState(keys=URL_KEYS) if sync_url else None
        synced = self._url is not None and self._url.active
        if synced:
            self._read_url()
        shows = [self.inputs.show_errors, self.answer.show, self.curves.show_steps, self.curves.show,
                 self.check.show, self.inputs.show_exact, self.curves.show_caption]
        # the replay plot's points in a message of their own, before the box shows and re-lays out
        # (BokehJS applies new data asynchronously: see approvals.view._flush)
        self._refresh = Refresh(doc, shows + ([self._write_url] if synced else []), first=[self.check.show_points])
        for show in [self.check.show_points, *shows]:
            show()

    # ------------------------------------------------------------------ layout
    def controls(self) -> pn.Column:
        """The input column (the sidebar of the served page)."""
        return self.inputs.__panel__()

    def results(self) -> pn.Column:
        """The lead, the numbers, the curves, the replay and the assumptions (the main area)."""
        # the sections' parts straight in one column (a column each would be a Bokeh model each, per session)
        return pn.Column(self.answer.lead, *self.answer.parts(), *self.curves.parts(), self.check,
                         self.answer.assumptions, sizing_mode="stretch_width")

    # ------------------------------------------------------------------ URL
    def _read_url(self) -> None:
        """Apply the page's URL keys; a bad value gets a message naming the key, the rule and the value."""
        url = self._url
        if url is None:  # not synced with a URL (a notebook)
            return
        values, errors = url_values(url.query())
        self.inputs.url_errors = ([url.refused] if url.refused else []) + errors
        if values:
            self.model.param.update(**values)

    @param.depends("model.result", "model.adaptivity", "model.mode", "model.steps", "model.reliability",
                   "model.bound")
    def _write_url(self) -> None:
        """Keep the URL at the current valid settings (an invalid condition never reaches it)."""
        m = self.model
        if m.error or m.result is None or self._url is None:
            return
        self._url.write(dict(condition=m.condition, reliability=repr(m.reliability), adaptivity=m.adaptivity,
                             mode=m.mode, steps=str(m.steps), bound=m.bound))


def url_values(query: dict) -> tuple[dict, list[str]]:
    """The page's settings in a URL query (raw text, checked) and a message per bad key (the first response too)."""
    checks = {"reliability": reliability_check("reliability"), "steps": check_steps,
              "adaptivity": lambda v: check_choice("adaptivity", v, ADAPTIVITIES),
              "mode": lambda v: check_choice("mode", v, MODES),
              "bound": lambda v: check_choice("bound", v, BOUNDS)}
    values, errors = {}, []
    for key, check in checks.items():
        if key in query:
            try:
                values[key] = check(query[key])
            except InputError as exc:
                errors.append(f"URL key {key} must be {exc.rule}; got {format_value(query[key])}")
    if "condition" in query:
        values["condition"] = query["condition"]  # the model checks it and shows where it is wrong
    return values, errors


def page():
    """The served CI page: controls in the sidebar, results in the main area, URL-synced."""
    return CI(sync_url=True)
