"""The planner page: live label counts for every meter variant.

:class:`Planner` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.meter.model.MeterPlan`,
assembled from sections over the same plan, each declaring (``@param.depends``) what it follows:
the inputs (:class:`~.view_inputs.PlannerInputs`: widgets made from the plan's parameters, the
per-model bound among them), the answer (:class:`~.view_answer.AnswerSection`: headline numbers,
the sentence, the table with Hoeffding's count beside the chosen bound's), the curves
(:class:`~.view_curves.CurvesSection`: Bokeh plots updated in place, their ranges following the data
until the user zooms, the label budget drawn on the curve over T), the budget
(:class:`~.view_answer.BudgetSection`), the check (:mod:`.view_check`), the pinned plan
(:mod:`.view_pin`) and the downloads and sharing (:class:`~.view_parts.Artefacts`).  The page itself
follows the plan's outputs and updates every section in one message.  It computes nothing itself:
every number comes from the model.

A page builds what its first view shows and nothing more: the second plot, the budget's
answers for every variant and the simulation check are sections built (and computed) the
first time someone opens them.  Served, the first response holds the header, the inputs and a
"computing…" state; the numbers and the plot replace it once the page is connected, so a
room opening one link at once sees the page at once.

On a served page, and in a Jupyter kernel, the model's slow work (exact binomial counts, the
budget answers under it, exact curve points) runs in the runtime's worker threads
(:meth:`MeterPlan.work_in_background`, :mod:`meter_dashboard.core.runtime`): Hoeffding's
numbers show at once, the rest streams in, and work for inputs changed meanwhile is dropped.
Elsewhere (a plain script) everything is computed before the constructor returns.  Each
update re-sends only the panes whose markup changed and the plot columns that changed, all
in one message (``pn.io.hold``).
"""
from __future__ import annotations

import asyncio
import importlib
import logging
from dataclasses import replace

import panel as pn
import param

from ..core.runtime import thread_pool
from ..core.validation import InputError
from ..ui.base import DashboardView
from ..ui.lazy import on_screen
from ..ui.sections import document_dispatch
from ..ui.urlstate import UrlState
from .model import RECOMMENDED, MeterPlan
from .stages import ORDER, quick_result, slow_items, with_items
from .view_answer import AnswerSection, BudgetSection
from .view_curves import CurvesSection
from .view_inputs import PlannerInputs
from .view_parts import Artefacts, OnDemand
from .view_pin import PinSection

log = logging.getLogger(__name__)

_URL_KEYS = set(MeterPlan.QUERY_KEYS) | set(MeterPlan.BOUND_QUERY_KEYS) | set(MeterPlan.PIN_QUERY_KEYS)
#: How long the page waits for a new plan's exact counts before it shows Hoeffding's with "computing…".
HOLD_SECONDS = 0.15
_LEAN = dict(with_sweep=False, budget_variants=[RECOMMENDED])  # the rest once its section is opened


def _warm_engine() -> None:
    """Load the exact engine's module in a worker thread, once per process, before a page first asks for it."""
    import sys

    if "meter_dashboard.bounds.binomial" not in sys.modules and not _WARMING:
        _WARMING.append(True)
        thread_pool().submit(importlib.import_module, "meter_dashboard.bounds.binomial")


_WARMING: list = []


def _served() -> bool:
    doc = pn.state.curdoc
    return doc is not None and doc.session_context is not None


def _in_event_loop() -> bool:
    """Whether this thread runs an asyncio loop (a Jupyter kernel executing a cell): updates can follow later."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _link_values(url: UrlState | None) -> tuple[dict, str]:
    """The plan's values from the page URL (raw text through the plan's own parser) and why not, if refused."""
    if url is None:
        return {}, ""
    query = url.query()
    if url.refused:
        return {}, url.refused
    if not query:
        return {}, ""
    try:
        return MeterPlan.parse_query(query), ""
    except InputError as exc:
        return {}, f"The link's settings were not applied: {exc}"


def _part(section: str, name: str, doc: str = "") -> property:
    """A part of one of the page's sections, reached on the page (``planner.delta``)."""
    return property(lambda self: getattr(getattr(self, section), name), doc=doc)


def _complete(plan: MeterPlan):
    """``plan``'s result with every part computed."""
    result = plan.result
    if result.complete and all(v is not None for v in (result.max_steps or {v: 0 for v in ORDER}).values()):
        return result
    full = replace(plan.inputs(), budget_variants=ORDER)
    return with_items(quick_result(full), [item for unit in slow_items(full) for item in unit])


def _report(plan: MeterPlan, result, job, link: str | None):
    """The report of ``plan`` (``result``: complete), with the curves shown once computed and the check run."""
    from .report import plan_report

    check = job.rows if job is not None and any(row.result is not None for row in job.rows) else None
    curves, sweep_curves = plan.curves, plan.sweep_curves
    if not sweep_curves or curves.get("computed", 0) < curves.get("planned", 0) or \
            sweep_curves.get("computed", 0) < sweep_curves.get("planned", 0):
        curves = sweep_curves = None  # the report computes its own
    return plan_report(result, curves=curves, sweep_curves=sweep_curves, ranges=plan.ranges, check=check,
                       check_settings=job.settings if job is not None else None, link=link)


def _make_plan(plan: MeterPlan | None, plan_params: dict, url: UrlState | None, background: bool):
    """The page's plan (a link's values applied) and the message about a refused link (or "")."""
    link_values, message = _link_values(url)
    plan_params.update(link_values)
    # the exact bound's slow work starts once it is off the loop (Hoeffding's plan is milliseconds)
    exact = {k: plan_params.pop(k) for k in ("bound", "max_error_rate") if background and k in plan_params}
    compare = plan_params.pop("pinned", None)  # a link's pinned plan: pinned once the plan exists
    if plan is None:
        try:
            plan = MeterPlan(**plan_params, **_LEAN)
        except InputError as exc:
            if url is None:
                raise
            message = f"The link's settings were not applied: {exc}"
            plan, exact = MeterPlan(**_LEAN), {}
    else:
        plan.param.update(**plan_params, **_LEAN)
    if background:
        # slow work leaves the event loop free: every session of a server, or a Jupyter kernel's cell
        plan.work_in_background(document_dispatch())
    if exact:
        plan.param.update(**exact)
    if isinstance(compare, str) and compare:
        try:
            plan.compare_with(compare)
        except InputError as exc:
            message = f"The link's pinned plan was not applied: {exc}"
    elif isinstance(compare, MeterPlan):
        plan.pinned = compare
    return plan, message


class Planner(DashboardView):
    """Live label-count calculator for every ease.ml/meter variant.

    Parameters
    ----------
    plan : MeterPlan, optional
        The model to drive; by default a new one from the remaining keyword arguments
        (``epsilon``, ``delta``, ``steps``, ``tenants``, ``tenant_steps``, ``reverts``,
        ``bound``, ``max_error_rate``, ...).  The page asks it for the second plot and every
        variant's budget answers only once those sections are opened.
    sync_url : bool
        Keep the plan in the page URL's query string (served pages; off in notebooks).

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Planner(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)  # doctest: +SKIP
    >>> md.Planner(bound="binomial", max_error_rate=0.1).report("plan.html")  # doctest: +SKIP
    """

    title = "Planner"

    plan = param.ClassSelector(class_=MeterPlan)
    sync_url = param.Boolean(default=False)

    def __init__(self, plan: MeterPlan | None = None, sync_url: bool = False, **params):
        plan_params = {k: params.pop(k) for k in list(params) if k in MeterPlan.param and k != "name"}
        served = _served()
        self._url = UrlState(keys=_URL_KEYS) if sync_url and served else None
        plan, link_message = _make_plan(plan, plan_params, self._url, served or _in_event_loop())
        self._closed = False  # the page's session was destroyed (its browser left)
        super().__init__(plan=plan, sync_url=sync_url, **params)
        self._filled = False
        self.check = None
        self._stale_shown = False
        self._behind = self._waited = False  # a render held for the exact counts; the hold is over
        self._hold_token: object | None = None
        self.inputs = PlannerInputs(plan, on_box=self._on_box, link_message=link_message)
        self.answer = AnswerSection(plan)
        self.curves = CurvesSection(plan)
        self.budget_section = BudgetSection(plan, refresh=self._on_result, closed=lambda: self._closed)
        self.sections = OnDemand({"whatif": self._build_whatif, "sweep": self.curves.build_sweep,
                                  "check": self._build_check})
        self.share = Artefacts(self)
        self.csv_download, self.report_download = self.share.csv, self.share.report
        self.pin = PinSection(self)
        self._update_url()  # before the page is connected: its first response carries the URL
        if served:
            self._first_response()
        else:
            self._fill()

    def _first_response(self) -> None:
        """Served: the numbers in the view's one message once connected (the builder's case), else "computing…"."""
        _warm_engine()
        pn.state.on_session_destroyed(self._on_session_destroyed)
        self.inputs.render_errors()
        if pn.state.loaded:
            self._fill()
            return
        self.answer.computing()
        self.curves.build_curve(self._filled)
        on_screen(self._fill)

    def _on_session_destroyed(self, context) -> None:
        """The browser left: the plan's background work stops and no timer touches the emptied plots."""
        self._closed = True
        self.plan.stop_work()
        log.debug("planner: session %s destroyed (its browser left); its background work stopped",
                  getattr(context, "id", "?"))

    preset = _part("inputs", "preset")
    signals = _part("inputs", "signals")
    meter_table = _part("inputs", "meter_table")
    uniform_epsilon = _part("inputs", "uniform_epsilon")
    reset_button = _part("inputs", "reset_button")
    delta = _part("inputs", "delta")
    steps = _part("inputs", "steps")
    tenants = _part("inputs", "tenants")
    tenant_steps = _part("inputs", "tenant_steps")
    revert_drawer = _part("inputs", "revert_drawer")
    effort = _part("inputs", "effort")
    budget = _part("inputs", "budget")
    bound = _part("inputs", "bound")
    max_error_rate = _part("inputs", "max_error_rate")
    bound_note = _part("inputs", "bound_note")
    seconds = _part("inputs", "seconds", "The seconds-per-label box (made when the effort drawer is first opened).")
    labelers = _part("inputs", "labelers", "The labelers box (made when the effort drawer is first opened).")
    reverts = _part("inputs", "reverts", "The revert-steps box (made when the reverts drawer is first opened).")
    headlines = table = _part("answer", "headlines", "The answer: cards, sentence and the table of every variant.")
    assumptions = _part("answer", "assumptions", "What the numbers assume.")
    curve_plot = _part("curves", "curve_plot", "The curve over T (a LabelsPlot).")
    sweep_plot = _part("curves", "sweep_plot", "The second plot (made when its section is first opened).")
    meter_error = property(lambda self: self.inputs.error_pane("meter"), doc="Messages about the meter table.")
    tenants_error = property(lambda self: self.inputs.error_pane("tenants"), doc="Messages about the tenants.")
    reverts_error = property(lambda self: self.inputs.error_pane("reverts"), doc="Messages about the reverts.")
    bound_error = property(lambda self: self.inputs.error_pane("bound"), doc="Messages about the bound.")
    other_errors = property(lambda self: self.inputs.error_pane("other"), doc="Messages about other inputs and links.")

    def controls(self) -> pn.Column:
        """The input column (the sidebar of the served page)."""
        return self.inputs.controls()

    def results(self) -> pn.Column:
        """Headlines, sentence, table, the curve, then sections opened on demand, and assumptions."""
        return pn.Column(self.answer, self.share.row, self.pin, self.curves, self.sections, self.answer.assumptions,
                         sizing_mode="stretch_width")

    @property
    def curve_source(self):
        """The labels-against-T plot's data (the chosen bound's counts)."""
        if self.curves.curve_plot is None:
            self._fill()
        return self.curves.curve_plot.source

    @property
    def sweep_source(self):
        """The second plot's data (the chosen bound's counts); the plot is made when first asked for."""
        self.curves.ensure_sweep_plot()
        return self.curves.sweep_plot.source

    def _build_whatif(self):
        pane = self.budget_section.build()
        self.budget_section.render(self.inputs.stale())
        return pane

    def _build_check(self):
        from .view_check import PlanCheckPanel

        self.check = PlanCheckPanel(self.plan)
        return pn.Column(self.check, sizing_mode="stretch_width", css_classes=["planner-check-section"])

    def _on_box(self, *_) -> None:
        if self._filled and self.inputs.stale() != self._stale_shown:
            with pn.io.hold():
                self._on_result()

    def _fill(self):
        """The numbers and the curve (served: on the page's first tick, replacing "computing…")."""
        if self._filled:
            return
        self._filled = True
        with pn.io.hold():
            if self.curves.curve_plot is None:
                self.curves.build_curve(self._filled)
            self._on_result()
            self.curves.draw_curve(self.plan.result)
            self.pin.render()

    @param.depends("plan.result", "plan.error", "plan.error_parameter", "plan.curves", "plan.sweep_curves",
                   "plan.work_error", watch=True)
    def _on_outputs(self):
        """One model change -> one batch of view updates (a single message to the browser).

        Under the exact bound a new plan's counts take milliseconds (issue 18): the page waits for
        them up to :data:`HOLD_SECONDS` and then shows the whole answer at once; only when they take
        longer do Hoeffding's counts and "computing…" show meanwhile.
        """
        if not self._filled:
            return
        r = self.plan.result
        if r is not None and not self.plan.error and r.is_pending("labels", RECOMMENDED) and not self._waited:
            self._hold_render()
            return
        self._behind = False
        with pn.io.hold():  # each part updates what changed since it last showed the plan
            self._on_result()
            self.curves.on_curves()
            self.curves.on_sweep()

    def _hold_render(self) -> None:
        self._behind = True
        token = self._hold_token = object()

        async def later():
            await asyncio.sleep(HOLD_SECONDS)
            if self._hold_token is token and self._behind and not self._closed:  # still waiting: show what there is
                self._waited = True
                try:
                    self._on_outputs()
                finally:
                    self._waited = False

        pn.state.execute(later)

    def _on_result(self, *_):
        """Every section shows the plan's result (each pane updated only when its markup changed)."""
        self.inputs.render_errors()
        r = self.plan.result
        if r is None:
            return
        budget = self.budget_section.shown(r)
        stale = self._stale_shown = self.inputs.stale()
        self.answer.render(r, budget=budget, stale=stale, share_query=self._session_query())
        self.curves.show_stale(stale)
        self.budget_section.render(stale, budget)
        if self.curves.curve_plot is not None:
            self.curves.show_on_curve(budget)
        if self.check is not None:
            self.check.on_plan()
        self.pin.render()
        self._update_url()

    @param.depends("plan.pinned", watch=True)
    def _on_pinned(self) -> None:
        self._update_url()

    def on_pinned_outputs(self) -> None:
        """The pinned plan changed or computed more: its table and curve follow (one message)."""
        if not self._filled or self._closed:
            return
        with pn.io.hold():
            self.pin.render()

    def complete_result(self):
        """The current result with every part computed (downloads wait for nothing on screen)."""
        return _complete(self.plan)

    def report(self, path=None, link: str | None = None):
        """The current plan as a self-contained HTML report (curves as shown); ``path`` writes it.

        ``link``: the page address holding the plan, shared inside the report (the page's button passes it).

        Returns the :class:`~meter_dashboard.core.report.Report` (or the path written).
        """
        built = _report(self.plan, self.complete_result(), self.check.job if self.check is not None else None, link)
        return built if path is None else built.save(path)

    def share_link(self) -> str | None:
        """The page's address holding this plan (served pages; None in a notebook)."""
        href = getattr(pn.state.location, "href", "") if self._url is not None else ""
        return f"{href.split('?')[0]}?{self.plan.query_string()}" if href else None

    def _csv(self):
        return self.share.csv_file()

    def _update_url(self):
        if self._url is not None and not self.plan.error:
            self._url.write(self.plan.to_query())

    def _session_query(self) -> str | None:
        """The plan (every setting, the bound included) for the link replaying a trace; None unless served.

        In a notebook there is no page URL and no session page: the note and the link are left out.
        """
        if self._url is None:
            return None
        return self.plan.query_string(pinned=False)


def page():
    """The served planner: controls in the sidebar, results in the main area, URL-synced."""
    return Planner(sync_url=True)
