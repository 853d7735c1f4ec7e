"""The /approve page: approve or deny model modifications on a reused test set.

:class:`Approve` is a :class:`~meter_dashboard.ui.base.DashboardView` over an
:class:`~meter_dashboard.approvals.model.ApproveModel` (the trace and the chosen procedure) and
two :class:`~meter_dashboard.approvals.model.ApprovalSimulation` jobs (Feng et al., Sections
3.1 and 3.2).  It computes nothing: on a server the model works in the background (the
chosen procedure first, decision by decision; the comparison of all procedures only while
its tab is open), and every model change is drawn once per tick under one document hold.
Words and tables come from :mod:`.view_text`, figures from :mod:`.figures`.
"""
from __future__ import annotations

import functools
from typing import Any

import panel as pn
import param
from panel.io.state import set_curdoc

from ..core.files import MAX_UPLOAD_BYTES, human_bytes
from ..core.html import snippet
from ..core.report import csv_with_inputs, result_report
from ..ui.base import DashboardView
from ..ui.exports import Exports, lead_markup
from ..ui.inputs import NumberInput
from ..ui.sections import one_message
from ..ui.simulation import SimulationControls
from ..ui.style import HTML, error_html, stale_html
from ..ui.upload import GuardedFileDropper
from ..ui.urlstate import UrlState
from . import view_text as text
from .figures import METHOD_COLORS, CompareFigure, DecisionFigure, SimulationFigures
from .model import METHOD_LABELS, METHODS, ApprovalSimulation, ApproveModel
from .text import inputs

__all__ = ["Approve", "METHOD_COLORS", "page"]

_METHOD_OPTIONS = {METHOD_LABELS[m] + ("" if m != "naive" else "  ⚠"): m for m in METHODS}
_EXAMPLE_OPTIONS = {"Refits on a data stream (15 modifications)": "refits",
                    "Overfitting developer (50 modifications)": "adversary",
                    "Uploaded file": "uploaded"}
_TABS = ("Decisions", "Compare procedures", "Simulations", "How it works")


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

    def __init__(self, trace=None, method: str | None = None, *, prespecified=None, model=None, fwer=None,
                 power=None, sync_url: bool = False, **settings):
        doc = pn.state.curdoc
        self._doc = doc if doc is not None and doc.session_context is not None else None
        served = self._doc is not None
        if model is None:
            model_params = {k: v for k, v in settings.items() if k in ApproveModel.param}
            if method is not None:
                model_params["method"] = method
            # served: compute in the background on the server's loop, and compare procedures only while
            # that tab is open
            model = ApproveModel(trace=trace, prespecified=prespecified, background=served, compare_active=not served,
                                 **model_params)
        else:
            if trace is not None:
                model.load_trace(trace, prespecified=prespecified)
            if method is not None:
                model.method = method
        super().__init__(model=model, fwer=fwer or ApprovalSimulation(kind="fwer", replicates=20),
                         power=power or ApprovalSimulation(kind="power", replicates=10))
        self._dirty: set = set()
        self._flush_pending = False
        self._url_errors: list[str] = []
        self._url = UrlState(keys=ApproveModel.QUERY_KEYS) if sync_url and served else None
        if self._url is not None:
            query = self._url.query()
            self._url_errors = ([self._url.refused] if self._url.refused else []) + (
                self.model.update_from_query(query) if query else [])
        self._build_inputs()
        self._build_results()
        self.model.param.watch(lambda *e: self._schedule("result", "comparison"), ["result", "busy"])
        self.model.param.watch(lambda *e: self._schedule("comparison"), ["comparison"])
        self.model.param.watch(lambda *e: self._schedule("inputs"), ["error", "trace_error", "prespecified_error",
                                                                     "trace", "prespecified", "example"])
        if self._url is not None:
            self.model.param.watch(lambda *e: self._schedule("url"), list(ApproveModel.QUERY_KEYS))
        for kind in ("fwer", "power"):
            getattr(self, kind).param.watch(lambda *e, k=kind: self._schedule(f"sim-{k}"), ["result"])
        self._dirty = {"inputs", "result", "comparison", "sim-fwer", "sim-power"}
        self._flush()

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
            if "inputs" in parts:
                self._draw_inputs()
            if "result" in parts:
                self._draw_result()
            if "comparison" in parts:
                self._draw_comparison()
            for kind in ("fwer", "power"):
                if f"sim-{kind}" in parts:
                    self._draw_simulation(kind)
            if "url" in parts and self._url is not None:
                self._url.write(self.model.to_query())

    def _draw_points(self, parts) -> None:
        """The plots' data sources (their axes, titles and visibility follow in the ``_draw_*`` methods)."""
        r, c = self.model.result, self.model.comparison
        if "result" in parts and r is not None and self.decision_figure is not None:
            self.decision_figure.set_data(r)
        if "comparison" in parts and self._comparison_drawn():
            self.compare_figure.set_data(c, r)
        for kind in ("fwer", "power"):
            if f"sim-{kind}" in parts and self._simulation_drawn(kind):
                self._widgets(kind)["figures"].set_data(getattr(self, kind).result)

    def _comparison_drawn(self) -> bool:
        """Whether the Compare tab shows its procedures (else nothing, or a note that it computes when open)."""
        c = self.model.comparison
        return (c is not None and "Compare procedures" in self._tabs_built
                and bool(self.model.compare_active or c.results))

    def _simulation_drawn(self, kind: str) -> bool:
        """Whether the ``kind`` simulation's plots show a completed run."""
        res = getattr(self, kind).result
        return "Simulations" in self._tabs_built and res is not None and res.completed

    # ------------------------------------------------------------------ inputs
    def _build_inputs(self):
        m = self.model
        self.example = pn.widgets.Select.from_param(m.param.example, name="Trace", options=_EXAMPLE_OPTIONS,
                                                    sizing_mode="stretch_width", css_classes=["approve-example"])
        self.example_note = HTML("", sizing_mode="stretch_width", css_classes=["approve-small"])
        # uploads bounded before they are sent (a file over the limit never reaches the websocket)
        self.upload = GuardedFileDropper(parameter="trace", max_bytes=MAX_UPLOAD_BYTES, layout="compact", height=80,
                                         checked=True,
                                         accepted_filetypes=[".csv", "text/csv", "text/plain"],
                                         sizing_mode="stretch_width", css_classes=["approve-upload"])
        self.upload.param.watch(self._on_upload, "value")
        self.upload.param.watch(self._on_upload_refused, "upload_error")
        self.upload_error = HTML("", sizing_mode="stretch_width")
        self.pres_upload = GuardedFileDropper(parameter="prespecified", max_bytes=MAX_UPLOAD_BYTES, layout="compact",
                                              height=80, checked=True, accepted_filetypes=[".csv", "text/csv", "text/plain"],
                                              sizing_mode="stretch_width", css_classes=["approve-pres-upload"])
        self.pres_upload.param.watch(self._on_pres_upload, "value")
        self.pres_upload.param.watch(self._on_upload_refused, "upload_error")
        self.pres_error = HTML("", sizing_mode="stretch_width")
        self.method = pn.widgets.Select.from_param(m.param.method, name="Procedure", options=_METHOD_OPTIONS,
                                                   sizing_mode="stretch_width", css_classes=["approve-method"])
        self.alpha = NumberInput(m, "alpha", label="α (family-wise error rate)", css_classes=["approve-alpha"])
        self.success_weight = NumberInput(m, "success_weight", label="Edge weight after an approval (SRGPs)",
                                          css_classes=["approve-success-weight"])
        self.margin = NumberInput(m, "margin", label="Margin δ₁ (loss units)", css_classes=["approve-margin"])
        self.margin_step = NumberInput(m, "margin_step", label="Margin step after an approval",
                                       css_classes=["approve-margin-step"])
        self.error = HTML("", sizing_mode="stretch_width", css_classes=["approve-error"])
        self._numbers = [self.alpha, self.success_weight, self.margin, self.margin_step]
        self._watch_numbers(self._numbers)
        # the advanced settings are built when their card is first opened (or at once in a notebook)
        # (a placeholder keeps the closed card's look: an empty card is drawn without its frame)
        self.advanced = pn.Card(pn.Spacer(height=0, margin=0), title="Advanced", collapsed=True,
                                sizing_mode="stretch_width")
        if self._doc is None:
            self._build_advanced()
        else:
            self.advanced.param.watch(self._on_advanced, "collapsed")

    def _watch_numbers(self, boxes) -> None:
        for box in boxes:  # a refused number: the results say they are the last valid ones
            box.message_pane.param.watch(lambda *e: self._schedule("inputs"), "object")

    def _build_advanced(self) -> None:
        m = self.model
        self.seed = NumberInput(m, "seed", label="Seed (MVN integration)", css_classes=["approve-seed"])
        self.failure_threshold = NumberInput(m, "failure_threshold", label="wBonferroni: 'few denials' means at most")
        self.pres_share = NumberInput(m, "pres_share", label="presSRGP: α share of the plan")
        self.pres_first_share = NumberInput(m, "pres_first_share", label="presSRGP: first planned node's share")
        self.max_conditioning = NumberInput(m, "max_conditioning", label="fs/presSRGP: earlier nodes conditioned on")
        boxes = [self.failure_threshold, self.pres_share, self.pres_first_share, self.max_conditioning, self.seed]
        self._numbers += boxes
        self._watch_numbers(boxes)
        self.advanced.objects = boxes

    def _on_advanced(self, event) -> None:
        if not event.new and len(self._numbers) == 4:
            self._build_advanced()

    async def _on_upload(self, event):
        m = self.model
        for name, data in (event.new or {}).items():  # the latest file only: read in a worker thread
            await self.upload.load(data, name, m.read_trace, m.use_trace, m.fail_trace)

    async def _on_pres_upload(self, event):
        m = self.model
        for name, data in (event.new or {}).items():
            await self.pres_upload.load(data, name, functools.partial(m.read_trace, parameter="prespecified"),
                                        m.use_prespecified, m.fail_prespecified)

    def _on_upload_refused(self, event):
        self._schedule("inputs")

    def _draw_inputs(self):
        m = self.model
        # a file refused while it arrived (too big) or when read (a bad cell): the newest message
        self.upload_error.object = error_html(self.upload.upload_error or m.trace_error)
        self.pres_error.object = error_html(self.pres_upload.upload_error or m.prespecified_error)
        self.example_note.object = text.trace_note(m)
        messages = [m.error] if m.error else []
        messages += [f"Link: {e}" for e in self._url_errors]
        self.error.object = "".join(error_html(x) for x in messages)
        refused = m.error or any(not box.valid for box in self._numbers)
        self.stale.object = stale_html("decisions") if refused and m.result is not None else ""

    # ------------------------------------------------------------------ results
    def _build_results(self):
        """What the first view needs: the decisions.  The other tabs are built when first opened (served)."""
        self.headlines = HTML("", sizing_mode="stretch_width", css_classes=["approve-headline-row"])
        self.stale = HTML("", sizing_mode="stretch_width")
        self.sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        self.lead = HTML("", sizing_mode="stretch_width", css_classes=["approve-lead-pane"])
        self.exports = Exports("approve", self._file_stem, csv=self._csv_text, slide=self._slide, report=self._report)
        self.method_note = HTML("", sizing_mode="stretch_width", css_classes=["md-note"])
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["approve-table"])
        # the plot sits below the table: on a served page it is built once the page has been shown
        self.decision_figure = self.decision_source = self.decision_plot = None
        self._plot_wanted = self._doc is None  # served: once the page is on screen (_show_decision_plot)
        self._plot_holder = pn.Column(sizing_mode="stretch_width", margin=0)
        if self._doc is None:
            self._build_decision_plot()
        else:
            pn.state.onload(self._show_decision_plot)
        self._tabs_built: dict = {}
        if self._doc is None:  # a notebook: everything at once (the tabs switch without a server)
            for name in _TABS[1:3]:
                self._tab(name)

    # ------------------------------------------------------------------ exports (built in a worker thread)
    def _file_stem(self) -> str:
        r = self.model.result
        return "approve" if r is None else f"approve_{r.method}_alpha{r.alpha:g}_{len(r.names)}-modifications"

    def _csv_text(self) -> str | None:
        r = self.model.result
        return None if r is None else csv_with_inputs(inputs(r), r.to_frame(), index=False)

    def _slide(self):
        r = self.model.result
        return None if r is None else r.slide()

    def _report(self):
        r = self.model.result
        return None if r is None else result_report(r, subtitle="SRGP approvals of modifications")

    def _build_decision_plot(self, result=None) -> None:
        self.decision_figure = DecisionFigure()
        if result is not None:  # before the figure joins the page: it goes out with its points
            self.decision_figure.set_data(result)
        self.decision_source = self.decision_figure.source
        self.decision_plot = pn.pane.Bokeh(self.decision_figure.figure, sizing_mode="stretch_width",
                                           css_classes=["approve-decision-plot"], visible=False)
        self._plot_holder.objects = [self.decision_plot]

    def _show_decision_plot(self) -> None:
        """Once the page is on screen: the plot, with its points (or with the first result to arrive).

        The figure reaches the browser with its data: a figure first drawn from an empty source and
        filled by a later message could be drawn between the two, and BokehJS then reads the empty
        colour column (``RangeError: Offset is outside the bounds of the DataView``).
        """
        self._plot_wanted = True
        if self.decision_plot is None and self.model.result is not None:
            with pn.io.hold():
                self._draw_result()

    def _tab(self, name: str):
        """The content of tab ``name``, built on first use."""
        if name not in self._tabs_built:
            if name == "Compare procedures":
                self._tabs_built[name] = self._build_compare()
                self._dirty.add("comparison")
            elif name == "Simulations":
                self._fwer_widgets = self._build_simulation("fwer")
                self._power_widgets = self._build_simulation("power")
                self._tabs_built[name] = pn.Column(self._simulation_section("fwer"), self._simulation_section("power"),
                                                   sizing_mode="stretch_width")
                self._dirty.update({"sim-fwer", "sim-power"})
            elif name == "How it works":
                self._tabs_built[name] = HTML(text.notes_html(), sizing_mode="stretch_width")
            else:
                self._tabs_built[name] = pn.Column(self.headlines, self.stale, self.sentence, self.exports.row,
                                                   self.method_note, self.table, self._plot_holder,
                                                   sizing_mode="stretch_width")
        return self._tabs_built[name]

    def _build_compare(self):
        self.compare_methods = pn.widgets.MultiChoice.from_param(self.model.param.compare_methods,
                                                                 name="Procedures to compare",
                                                                 options={METHOD_LABELS[m]: m for m in METHODS},
                                                                 sizing_mode="stretch_width")
        self.compare_headlines = HTML("", sizing_mode="stretch_width")
        self.compare_table = HTML("", sizing_mode="stretch_width", css_classes=["approve-compare-table"])
        self.compare_figure = CompareFigure()
        self.compare_plot = pn.pane.Bokeh(self.compare_figure.figure, sizing_mode="stretch_width",
                                          css_classes=["approve-compare-plot"], visible=False)
        return pn.Column(
            HTML("<p class='md-note'>Every procedure on the same trace, margins and α. ✔ approved, ✗ denied; small "
                 "numbers are the level each test was held to. The margin schedule depends on each procedure's own "
                 "approvals.</p>", sizing_mode="stretch_width"),
            self.compare_methods, self.compare_headlines, self.compare_table, self.compare_plot,
            sizing_mode="stretch_width")

    def _draw_result(self):
        r = self.model.result
        if r is None:
            self.headlines.object = '<div class="md-note"><span class="approve-pending">computing…</span></div>'
            self.lead.object = ""
            return
        self.lead.object = lead_markup(r.lead(), "approve")
        self.headlines.object = text.headlines(r, self.model.trace.original_name, self.model.busy)
        self.sentence.object = text.sentence(r)
        self.method_note.object = text.method_note(r.method)
        self.table.object = text.decision_table(r)
        if self.decision_figure is None and self._plot_wanted:
            self._build_decision_plot(r)
        if self.decision_figure is not None:
            self.decision_figure.set_frame(r)  # its points: _draw_points
            self.decision_plot.visible = True

    def _draw_comparison(self):
        c, r = self.model.comparison, self.model.result
        if c is None or "Compare procedures" not in self._tabs_built:
            return
        if not self._comparison_drawn():
            self.compare_headlines.object = ('<div class="md-note">The comparison is computed when this tab is '
                                             'open.</div>')
            return
        self.compare_headlines.object = text.compare_headlines(c)
        self.compare_table.object = text.compare_table(c)
        self.compare_figure.set_frame(c, r)  # its points: _draw_points
        self.compare_plot.visible = bool(c.results)

    # ------------------------------------------------------------------ simulations
    def _build_simulation(self, kind: str) -> dict:
        sim = getattr(self, kind)
        w: dict[str, Any] = {
            "replicates": NumberInput(sim, "replicates", label="Replicates", css_classes=[f"approve-{kind}-replicates"]),
            "seed": NumberInput(sim, "seed", label="Seed", css_classes=[f"approve-{kind}-seed"]),
            "steps": NumberInput(sim, "steps", label="T (tests)", css_classes=[f"approve-{kind}-steps"]),
            "test_size": NumberInput(sim, "test_size", label="Test examples",
                                     css_classes=[f"approve-{kind}-test-size"]),
            "alpha": NumberInput(sim, "alpha", label="α", css_classes=[f"approve-{kind}-alpha"]),
            "controls": SimulationControls(sim, run_label="Run simulation", css_prefix=f"approve-{kind}"),
            "table": HTML("", sizing_mode="stretch_width", css_classes=[f"approve-{kind}-table"]),
            "figures": SimulationFigures(kind, sim.alpha),
        }
        if kind == "fwer":
            w["bar_source"] = w["figures"].bar_source
        w["plots"] = pn.Column(pn.pane.Bokeh(w["figures"].figure, sizing_mode="stretch_width",
                                             css_classes=[f"approve-{kind}-plot"]),
                               pn.pane.Bokeh(w["figures"].curve, sizing_mode="stretch_width"),
                               sizing_mode="stretch_width", visible=False, css_classes=[f"approve-{kind}-plots"])
        return w

    def _widgets(self, kind: str) -> dict:
        return self._fwer_widgets if kind == "fwer" else self._power_widgets

    def _draw_simulation(self, kind: str):
        if "Simulations" not in self._tabs_built:
            return
        w, res = self._widgets(kind), getattr(self, kind).result
        w["table"].object = text.simulation_table(kind, res)
        if self._simulation_drawn(kind):
            w["figures"].set_frame(res)  # its points: _draw_points
            w["plots"].visible = True

    def _simulation_section(self, kind: str):
        w = self._widgets(kind)
        title, words = text.SIMULATION_TEXT[kind]
        settings = pn.Column(w["replicates"], w["seed"], w["steps"], w["test_size"], w["alpha"], w["controls"],
                             width=260)
        results = pn.Column(w["table"], w["plots"], sizing_mode="stretch_width")
        return pn.Column(HTML(str(snippet("<h2>{{ title }}</h2><p class='md-note'>{{ words }}</p>", title=title,
                                          words=words)), sizing_mode="stretch_width"),
                         pn.Row(settings, results, sizing_mode="stretch_width"),
                         sizing_mode="stretch_width", css_classes=["approve-section", f"approve-{kind}"])

    # ------------------------------------------------------------------ layout
    def controls(self):
        if getattr(self, "_controls", None) is None:
            self._controls = pn.Column(
                HTML("<b>Modification trace</b>", margin=(8, 5, 0, 5)),
                self.example, self.example_note,
                HTML(str(snippet("<span class='approve-small'>Or upload a CSV: header of names; one row per test "
                                 "example; first column the original model's per-example loss, then one column per "
                                 "modification in the order tested. Up to {{ limit }}.</span>",
                                 limit=human_bytes(MAX_UPLOAD_BYTES))), margin=(4, 5, 0, 5)),
                self.upload, self.upload_error,
                HTML("<span class='approve-small'>Prespecified plan (presSRGP), same shape:</span>",
                     margin=(4, 5, 0, 5)),
                self.pres_upload, self.pres_error,
                HTML("<b>Procedure</b>", margin=(12, 5, 0, 5)),
                self.method, self.alpha, self.success_weight, self.margin, self.margin_step, self.error, self.advanced,
                sizing_mode="stretch_width",
            )
        return self._controls

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
