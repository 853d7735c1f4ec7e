"""The /approve page: approve or deny model modifications on a reused test set.

:class:`Approve` is a :class:`~meter_dashboard.ui.base.DashboardView` over an
:class:`~meter_dashboard.approvals.model.ApproveModel` (the trace and the chosen procedure) and
two :class:`~meter_dashboard.approvals.model.ApprovalSimulation` jobs (Feng et al., Sections
3.1 and 3.2).  It computes nothing: on a server the model works in the background (the
chosen procedure first, decision by decision; the comparison of all procedures only while
its tab is open), and every model change is drawn once per tick under one document hold.
The page is four sections: the inputs (:mod:`.view_inputs`), the decisions and their exports
(:mod:`.view_answer`), the comparison (:mod:`.view_compare`) and the simulations
(:mod:`.view_simulations`); words and tables come from :mod:`.view_text`, figures from :mod:`.figures`.
"""
from __future__ import annotations

import panel as pn
import param
from panel.io.state import set_curdoc

from ..ui.base import DashboardView
from ..ui.sections import one_message
from ..ui.style import HTML
from ..ui.urlstate import UrlState
from . import view_text as text
from .figures import METHOD_COLORS
from .model import ApprovalSimulation, ApproveModel
from .view_answer import ApproveDecisions
from .view_compare import ApproveComparison
from .view_inputs import ApproveInputs
from .view_simulations import KINDS, ApproveSimulations

__all__ = ["Approve", "METHOD_COLORS", "page"]

_TABS = ("Decisions", "Compare procedures", "Simulations", "How it works")


class _Part:
    """An attribute of one of the page's sections, read through the page (notebooks, tests: ``view.alpha``)."""

    def __init__(self, section: str):
        self.section = section

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, page, owner=None):
        return self if page is None else getattr(getattr(page, self.section), self.name)


class Approve(DashboardView):
    """Approve/deny each modification of a trace, compare procedures, run the Section 3 simulations.

    Parameters
    ----------
    trace : path, bytes, DataFrame or array, optional
        Per-example losses: the original model first, then the modifications in test order
        (default: the shipped 'refits' example).
    method : str, optional
        The procedure (``naive``, ``bonferroni``, ``weighted-bonferroni``, ``bonf-srgp``,
        ``fs-srgp``, ``pres-srgp``).
    prespecified : path, bytes, DataFrame or array, optional
        The prespecified procedure's modifications (presSRGP).
    model, fwer, power : models, optional
        Drive existing models instead of new ones.
    sync_url : bool
        Keep the procedure's settings in the page URL (served pages).
    **settings
        Any other :class:`~meter_dashboard.approvals.model.ApproveModel` parameter (alpha, margin, ...).

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Approve("my_trace.csv", method="fs-srgp", alpha=0.05)  # doctest: +SKIP

    References
    ----------
    Feng et al., "Sequential algorithmic modification with test data reuse", Algorithm 1,
    Sections 2-3.
    """

    title = "Approve"
    extensions = ("filedropper",)

    model = param.ClassSelector(class_=ApproveModel)
    fwer = param.ClassSelector(class_=ApprovalSimulation)
    power = param.ClassSelector(class_=ApprovalSimulation)

    # the sections' parts, read through the page
    example, upload, pres_upload, error, advanced = (_Part("inputs") for _ in range(5))
    alpha, success_weight, margin, margin_step = (_Part("inputs") for _ in range(4))
    seed, failure_threshold, pres_share, pres_first_share, max_conditioning = (_Part("inputs") for _ in range(5))
    headlines, stale, sentence, lead, exports, table = (_Part("decisions") for _ in range(6))
    decision_figure, decision_source, decision_plot, _show_decision_plot = (_Part("decisions") for _ in range(4))
    compare_methods, compare_headlines, compare_table, compare_plot = (_Part("comparison") for _ in range(4))
    _fwer_widgets, _power_widgets = (_Part("simulations") for _ in range(2))

    def __init__(self, trace=None, method: str | None = None, *, prespecified=None, model=None, fwer=None,
                 power=None, sync_url: bool = False, **settings):
        doc = pn.state.curdoc
        self._doc = doc if doc is not None and doc.session_context is not None else None
        model = self._approve_model(model, trace, method, prespecified, settings)
        super().__init__(model=model, fwer=fwer or ApprovalSimulation(kind="fwer", replicates=20),
                         power=power or ApprovalSimulation(kind="power", replicates=10))
        self._dirty: set = set()
        self._flush_pending = False
        self._url_errors: list[str] = []
        url = UrlState(keys=ApproveModel.QUERY_KEYS) if sync_url and self._doc is not None else None
        if url is not None:  # the link's settings, applied before the URL follows the settings
            query = url.query()
            self._url_errors = ([url.refused] if url.refused else []) + (
                self.model.update_from_query(query) if query else [])
        self._url = url
        served = self._doc is not None
        self.inputs = ApproveInputs(self._schedule, model=self.model)
        self.decisions = ApproveDecisions(self._schedule, served, model=self.model)
        self.comparison = ApproveComparison(self._schedule, model=self.model)
        self.simulations = ApproveSimulations(self._schedule, fwer=self.fwer, power=self.power)
        self._tabs_built: dict = {}
        if not served:  # a notebook: everything at once (the tabs switch without a server)
            for name in _TABS[1:3]:
                self._tab(name)
        self._dirty = {"inputs", "result", "comparison", "sim-fwer", "sim-power"}
        self._flush()

    def _approve_model(self, model, trace, method, prespecified, settings) -> ApproveModel:
        """The model given (with the trace and method given, if any), or a new one."""
        if model is None:
            model_params = {k: v for k, v in settings.items() if k in ApproveModel.param}
            if method is not None:
                model_params["method"] = method
            # served: compute in the background on the server's loop, and compare procedures only while
            # that tab is open
            served = self._doc is not None
            return ApproveModel(trace=trace, prespecified=prespecified, background=served, compare_active=not served,
                                **model_params)
        if trace is not None:
            model.load_trace(trace, prespecified=prespecified)
        if method is not None:
            model.method = method
        return model

    @param.depends(*(f"model.{key}" for key in ApproveModel.QUERY_KEYS), watch=True)
    def _link_changed(self) -> None:
        """A setting in the link changed: the page URL follows (served pages with ``sync_url``)."""
        if getattr(self, "_url", None) is not None:
            self._schedule("url")

    # ------------------------------------------------------------------ drawing
    def _schedule(self, *parts) -> None:
        """Redraw ``parts`` once per tick, under one document hold (one message per update)."""
        self._dirty.update(parts)
        if self._doc is None:
            self._flush()
        elif not self._flush_pending:
            self._flush_pending = True
            with set_curdoc(self._doc):
                pn.state.execute(self._flush, schedule=True)

    def _flush(self) -> None:
        self._flush_pending = False
        parts, self._dirty = self._dirty, set()
        # two messages (we run under the doc lock): the plots' new points first, then everything else.
        # BokehJS applies a source's new data asynchronously; a plot re-laid out by the same message (a
        # title, a range, a pane shown) can be painted in between, with the points new and their colours
        # old (RangeError: Offset is outside the bounds of the DataView). A message of its own is applied
        # in full before the next one.
        with one_message(self._doc):
            self._draw_points(parts)
        with one_message(self._doc):
            self._draw(parts)

    def _draw_points(self, parts) -> None:
        """The plots' data sources (their axes, titles and visibility follow in :meth:`_draw`)."""
        if "result" in parts:
            self.decisions.draw_points()
        if "comparison" in parts:
            self.comparison.draw_points()
        for kind in KINDS:
            if f"sim-{kind}" in parts:
                self.simulations.draw_points(kind)

    def _draw(self, parts) -> None:
        if "inputs" in parts:
            self.inputs.draw(self._url_errors)
            self.decisions.draw_stale(self.inputs.refused())
        if "result" in parts:
            self.decisions.draw_result()
        if "comparison" in parts:
            self.comparison.draw()
        for kind in KINDS:
            if f"sim-{kind}" in parts:
                self.simulations.draw(kind)
        if "url" in parts and self._url is not None:
            self._url.write(self.model.to_query())

    # ------------------------------------------------------------------ layout
    def _tab(self, name: str):
        """The content of tab ``name``, built on first use."""
        if name not in self._tabs_built:
            if name == "Compare procedures":
                self._tabs_built[name] = self.comparison.__panel__()
                self._dirty.add("comparison")
            elif name == "Simulations":
                self._tabs_built[name] = self.simulations.__panel__()
                self._dirty.update({"sim-fwer", "sim-power"})
            elif name == "How it works":
                self._tabs_built[name] = HTML(text.notes_html(), sizing_mode="stretch_width")
            else:
                self._tabs_built[name] = self.decisions.__panel__()
        return self._tabs_built[name]

    def controls(self):
        return self.inputs.__panel__()

    def results(self):
        if getattr(self, "_results", None) is None:
            self._holders = [pn.Column(self._tab(name) if name in self._tabs_built or name in ("Decisions",
                                                                                            "How it works")
                                       else HTML("<p class='md-note'>Loading…</p>"), sizing_mode="stretch_width")
                             for name in _TABS]
            self.tabs = pn.Tabs(*zip(_TABS, self._holders), dynamic=True, sizing_mode="stretch_width",
                                css_classes=["approve-tabs"])
            if self._doc is not None:
                self.tabs.param.watch(self._on_tab, "active")
            self._results = pn.Column(self.lead, HTML(text.intro_html(), sizing_mode="stretch_width"), self.tabs,
                                      sizing_mode="stretch_width", css_classes=["approve-page"])
        return self._results

    def _on_tab(self, event):
        """A tab is built the first time it opens; the comparison is computed only while its tab is open."""
        name = _TABS[event.new]
        holder = self._holders[event.new]
        if name not in self._tabs_built:
            holder.objects = [self._tab(name)]
            self._schedule()
        self.model.compare_active = name == "Compare procedures"


def page():
    """The /approve page component for :func:`meter_dashboard.app.pages.build`."""
    return Approve(sync_url=True)
