"""The /approve page: approve or deny model modifications on a reused test set.

:class:`Approve` is a ``pn.viewable.Viewer`` over an
:class:`~meter_dashboard.models.approve.ApproveModel` (the trace and the chosen procedure) and two
:class:`~meter_dashboard.models.approve.ApprovalSimulation` models (Section 3.1 and 3.2 of Feng et
al.).  Widgets come from the models' parameters, the layout is built once and updated in
place, and every number comes from the models.
"""
from __future__ import annotations

import math

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, Legend, LegendItem, Span, Whisker
from bokeh.plotting import figure

from ..models.approve import EXAMPLES, METHOD_LABELS, METHODS, ApprovalSimulation, ApproveModel
from .base import DashboardView
from .style import HTML, error_html, esc, headline_html

#: One colour per procedure (Okabe-Ito), the same in every plot and table.
METHOD_COLORS = {
    "naive": "#D55E00",
    "bonferroni": "#7f7f7f",
    "weighted-bonferroni": "#CC79A7",
    "bonf-srgp": "#56B4E9",
    "fs-srgp": "#0072B2",
    "pres-srgp": "#009E73",
}

METHOD_NOTES = {
    "naive": "Every test at level α, with no correction (the paper's BinaryThres). With many tests an "
             "overfitting developer gets bad modifications approved; shown as the cautionary baseline, "
             "<b>it does not control the error rate</b>.",
    "bonferroni": "Every one of the 2<sup>T</sup> − 1 tests the developer could possibly run (the whole tree of "
                  "approve/deny histories) gets α/(2<sup>T</sup> − 1). Valid whatever the developer does, but "
                  "extremely conservative.",
    "weighted-bonferroni": "Histories with at most 3 denials share α/2 equally and all other histories share "
                           "the other α/2 (Section 3), so a developer whose modifications are mostly approved "
                           "gets far larger levels than with plain Bonferroni.",
    "bonf-srgp": "Alpha recycling (Section 2.2): the start and every approved modification pass their share of "
                 "α on to the tests that may follow — 80% to the next test, 80% of the rest to the one after, "
                 "and so on (the edge weight is configurable). Level = weight × α.",
    "fs-srgp": "bonfSRGP's weights, but within a run of denials the tests form a flexible fixed sequence "
               "(Section 2.3, Eq. 4): because the earlier, correlated tests of the run were denied, a test may use "
               "a larger level. Thresholds come from multivariate normal probabilities with the correlations of "
               "the per-example loss differences, estimated from your trace.",
    "pres-srgp": "Adds the modifications of a procedure you committed to in advance (e.g. 'refit on all data "
                 "every week') as extra nodes that are never tested, approved or reported (Section 2.4, Eqs. 5–6). "
                 "The more your actual modifications resemble the plan, the larger the levels. 90% of α goes to "
                 "the plan's nodes (half to the first), 10% to your tests, recycled like bonfSRGP.",
}

def _num(x, digits: int = 3) -> str:
    x = float(x)
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    if abs(x) >= 1e-3 and abs(x) < 1e5:
        return f"{x:.{digits}g}"
    mantissa, exponent = f"{x:.{max(digits - 1, 1)}e}".split("e")
    return f"{mantissa}×10<sup>{int(exponent)}</sup>"


def _plain(x, digits: int = 3) -> str:
    """Like :func:`_num` without HTML (for plot labels)."""
    x = float(x)
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def _headlines(cards) -> str:
    return '<div class="approve-headlines">' + "".join(cards) + "</div>"


_METHOD_OPTIONS = {METHOD_LABELS[m] + ("" if m != "naive" else "  ⚠"): m for m in METHODS}
_EXAMPLE_OPTIONS = {"Refits on a data stream (15 modifications)": "refits",
                    "Overfitting developer (50 modifications)": "adversary",
                    "Uploaded file": "uploaded"}


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
        Any other :class:`~meter_dashboard.models.approve.ApproveModel` parameter (alpha, margin, ...).

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Approve("my_trace.csv", method="fs-srgp", alpha=0.05)  # doctest: +SKIP
    """

    title = "Approve"

    model = param.ClassSelector(class_=ApproveModel)
    fwer = param.ClassSelector(class_=ApprovalSimulation)
    power = param.ClassSelector(class_=ApprovalSimulation)

    def __init__(self, trace=None, method: str | None = None, *, prespecified=None, model=None, fwer=None,
                 power=None, sync_url: bool = False, **settings):
        if model is None:
            model_params = {k: v for k, v in settings.items() if k in ApproveModel.param}
            if method is not None:
                model_params["method"] = method
            if trace is not None:
                model = ApproveModel(trace=trace, prespecified=prespecified, **model_params)
            else:
                model = ApproveModel(**model_params)
        else:
            if trace is not None:
                model.load_trace(trace, prespecified=prespecified)
            if method is not None:
                model.method = method
        super().__init__(model=model, fwer=fwer or ApprovalSimulation(kind="fwer", replicates=20),
                         power=power or ApprovalSimulation(kind="power", replicates=10))
        doc = pn.state.curdoc
        self._doc = doc if doc is not None and doc.session_context is not None else None
        self._build_inputs()
        self._build_decisions()
        self._build_compare()
        self._build_simulation("fwer")
        self._build_simulation("power")
        self.model.param.watch(self._on_result, ["result", "comparison", "error"])
        self.model.param.watch(self._on_inputs, ["trace_error", "prespecified_error", "trace", "prespecified",
                                                 "example"])
        for kind in ("fwer", "power"):
            sim = getattr(self, kind)
            sim.param.watch(lambda *e, k=kind: self._on_sim_state(k), ["running", "progress", "status", "error"])
            sim.param.watch(lambda *e, k=kind: self._on_sim_result(k), ["result"])
        self._on_inputs()
        self._on_result()
        for kind in ("fwer", "power"):
            self._on_sim_state(kind)
            self._on_sim_result(kind)
        if sync_url and pn.state.location is not None:
            pn.state.location.sync(self.model, {"example": "example", "method": "method", "alpha": "alpha",
                                                "success_weight": "success_weight", "margin": "margin",
                                                "margin_step": "margin_step", "seed": "seed"})
        self._results = None
        self._sidebar = None

    # ------------------------------------------------------------------ inputs
    def _build_inputs(self):
        m = self.model
        self.example = pn.widgets.Select.from_param(m.param.example, name="Trace", options=_EXAMPLE_OPTIONS,
                                                    sizing_mode="stretch_width", css_classes=["approve-example"])
        self.example_note = HTML("", sizing_mode="stretch_width", css_classes=["approve-small"])
        self.upload = pn.widgets.FileInput(accept=".csv,text/csv", multiple=False, sizing_mode="stretch_width",
                                           css_classes=["approve-upload"])
        self.upload.param.watch(self._on_upload, "value")
        self.upload_error = HTML("", sizing_mode="stretch_width")
        self.pres_upload = pn.widgets.FileInput(accept=".csv,text/csv", multiple=False, sizing_mode="stretch_width",
                                                css_classes=["approve-pres-upload"])
        self.pres_upload.param.watch(self._on_pres_upload, "value")
        self.pres_error = HTML("", sizing_mode="stretch_width")
        self.method = pn.widgets.Select.from_param(m.param.method, name="Procedure", options=_METHOD_OPTIONS,
                                                   sizing_mode="stretch_width", css_classes=["approve-method"])
        self.alpha = pn.widgets.FloatInput.from_param(m.param.alpha, name="α (family-wise error rate)", start=1e-6,
                                                      end=0.999, step=0.01, sizing_mode="stretch_width",
                                                      css_classes=["approve-alpha"])
        self.success_weight = pn.widgets.FloatInput.from_param(m.param.success_weight,
                                                               name="Edge weight after an approval (SRGPs)",
                                                               start=0.0, end=1.0, step=0.05,
                                                               sizing_mode="stretch_width")
        self.margin = pn.widgets.FloatInput.from_param(m.param.margin, name="Margin δ₁ (loss units)", step=0.001,
                                                       sizing_mode="stretch_width", css_classes=["approve-margin"])
        self.margin_step = pn.widgets.FloatInput.from_param(m.param.margin_step, name="Margin step after an approval",
                                                            step=0.001, sizing_mode="stretch_width",
                                                            css_classes=["approve-margin-step"])
        self.seed = pn.widgets.IntInput.from_param(m.param.seed, name="Seed (MVN integration)", start=0,
                                                   sizing_mode="stretch_width")
        self.failure_threshold = pn.widgets.IntInput.from_param(m.param.failure_threshold,
                                                                name="wBonferroni: 'few denials' means at most",
                                                                start=0, sizing_mode="stretch_width")
        self.pres_share = pn.widgets.FloatInput.from_param(m.param.pres_share, name="presSRGP: α share of the plan",
                                                           start=0.0, end=1.0, step=0.05, sizing_mode="stretch_width")
        self.pres_first_share = pn.widgets.FloatInput.from_param(m.param.pres_first_share,
                                                                 name="presSRGP: first planned node's share",
                                                                 start=0.0, end=1.0, step=0.05,
                                                                 sizing_mode="stretch_width")
        self.max_conditioning = pn.widgets.IntInput.from_param(m.param.max_conditioning,
                                                               name="fs/presSRGP: earlier nodes conditioned on",
                                                               start=0, end=40, sizing_mode="stretch_width")
        self.error = HTML("", sizing_mode="stretch_width", css_classes=["approve-error"])

    def _on_upload(self, event):
        if not self.upload.value:
            return
        self.model.load_trace(self.upload.value, name=self.upload.filename or "uploaded file")

    def _on_pres_upload(self, event):
        if not self.pres_upload.value:
            return
        self.model.load_prespecified(self.pres_upload.value, name=self.pres_upload.filename or "uploaded file")

    def _on_inputs(self, *events):
        m = self.model
        self.upload_error.object = error_html(m.trace_error)
        self.pres_error.object = error_html(m.prespecified_error)
        t = m.trace
        if t is None:
            self.example_note.object = ""
            return
        desc = EXAMPLES[m.example][2] if m.example in EXAMPLES else "your file"
        pres = (f"prespecified plan: {esc(m.prespecified.source)} ({m.prespecified.modifications} modifications)"
                if m.prespecified is not None else "no prespecified plan (presSRGP unavailable)")
        self.example_note.object = (f"<b>{esc(t.source)}</b>: {t.modifications} modifications × {t.examples:,} "
                                    f"test examples — {esc(desc)}.<br>{pres}.")

    # ------------------------------------------------------------------ decisions
    def _build_decisions(self):
        self.headlines = HTML("", sizing_mode="stretch_width")
        self.sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        self.method_note = HTML("", sizing_mode="stretch_width", css_classes=["md-note"])
        self.table = HTML("", sizing_mode="stretch_width", css_classes=["approve-table"])
        self.decision_source = ColumnDataSource({"test": [], "p": [], "level": [], "name": [], "decision": [],
                                                 "color": [], "fill": []})
        fig = figure(height=340, sizing_mode="stretch_width", y_axis_type="log", x_axis_label="test (in order)",
                     y_axis_label="probability (log scale)", tools="pan,wheel_zoom,box_zoom,reset,save",
                     toolbar_location="above", title="p-value of each test against the level it was held to")
        level = fig.step("test", "level", source=self.decision_source, mode="center", line_width=2.5,
                         color="#0072B2")
        pts = fig.scatter("test", "p", source=self.decision_source, size=10, marker="circle", line_color="color",
                          fill_color="fill", line_width=2)
        fig.add_tools(HoverTool(renderers=[pts], tooltips=[("test", "@test: @name"), ("p-value", "@p{0.000e}"),
                                                           ("level", "@level{0.000e}"), ("", "@decision")]))
        fig.add_layout(Legend(items=[("level: approve when the p-value is at or below", [level]),
                                     ("p-value (filled: approved)", [pts])], location="center",
                              background_fill_alpha=0.85), "below")
        fig.toolbar.logo = None
        self.decision_fig = fig
        self.decision_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["approve-decision-plot"])

    def _on_result(self, *events):
        m = self.model
        self.error.object = error_html(m.error)
        r = m.result
        if r is None:
            return
        label = METHOD_LABELS[r.method]
        k = len(r.approved)
        guard = ("not controlled" if r.method == "naive" else f"≤ {r.alpha:g}")
        approved_idx = [i + 1 for i in range(k) if r.approved[i]]
        cards = [
            headline_html("Approved", f"{r.approvals} of {k}", label, css_class="approve-count"),
            headline_html("Error rate (FWER)", guard, "P(approving ≥ 1 unacceptable modification)",
                          css_class="approve-fwer"),
            headline_html("Level of test 1", _plain(r.levels[0]) if k else "—", f"T = {r.steps} tests planned",
                          css_class="approve-first-level"),
        ]
        if k:
            last = approved_idx[-1] if approved_idx else None
            cards.append(headline_html("Deployed now", r.names[last - 1] if last else m.trace.original_name,
                                       f"after test {k}" if last else "no modification approved",
                                       css_class="approve-deployed"))
        self.headlines.object = _headlines(cards)
        if approved_idx:
            shown = ", ".join(str(i) for i in approved_idx[:12]) + (" …" if len(approved_idx) > 12 else "")
            first_gain = r.estimates[approved_idx[-1] - 1]
            text = (f"<p><b>{esc(label)}</b> approves tests {shown}. Only these approve/deny bits are released to "
                    f"the developer. The last approved modification, <b>{esc(r.names[approved_idx[-1] - 1])}</b>, "
                    f"lowers the mean loss by {_num(first_gain)} on the test set (margin "
                    f"{_num(r.margins[approved_idx[-1] - 1])}).")
        else:
            text = f"<p><b>{esc(label)}</b> approves none of the {k} modifications; the original model stays."
        if r.method == "naive":
            text += (" <b>Warning:</b> the naive procedure tests everything at level α, so the chance of approving "
                     "at least one modification that is not really better grows with every test.")
        else:
            text += (f" Whatever path the developer takes through the {k} tests, the chance that any approved "
                     f"modification fails to beat its margin is at most α = {r.alpha:g}.")
        self.sentence.object = text + "</p>"
        self.method_note.object = (f'<div class="approve-method-note"><b>{esc(label)}.</b> '
                                   f"{METHOD_NOTES[r.method]}</div>")
        self.table.object = self._table_html(r)
        colors = ["#1d7a46" if a else "#8a99a8" for a in r.approved]
        self.decision_source.data = {
            "test": list(range(1, k + 1)), "p": np.maximum(r.p_values, 1e-300), "level": np.maximum(r.levels, 1e-300),
            "name": list(r.names), "decision": ["approved" if a else "denied" for a in r.approved],
            "color": colors, "fill": [c if a else "white" for c, a in zip(colors, r.approved)],
        }
        self.decision_fig.title.text = f"{label}: p-value of each test against the level it was held to"
        self._on_compare()

    def _table_html(self, r) -> str:
        rows = []
        fs = r.method in ("fs-srgp", "pres-srgp")
        for i in range(len(r.approved)):
            a = bool(r.approved[i])
            cls = ' class="approve-row-yes"' if a else ""
            decision = "✔ approved" if a else "denied"
            rows.append(
                f"<tr{cls}><td class='num'>{i + 1}</td><td>{esc(r.names[i])}</td>"
                f"<td class='num'>{_num(r.estimates[i])} ± {_num(r.standard_errors[i], 2)}</td>"
                f"<td class='num'>{_num(r.margins[i])}</td><td class='num'>{_num(r.z[i])}</td>"
                f"<td class='num'>{_num(r.p_values[i])}</td><td class='num'>{_num(r.weights[i])}</td>"
                f"<td class='num'>{_num(r.levels[i])}</td>"
                + (f"<td class='num'>{_num(r.z_thresholds[i])}</td>" if fs else "")
                + f"<td class='approve-decision {'approve-yes' if a else 'approve-no'}' data-test='{i + 1}' "
                f"data-approved='{str(a).lower()}'>{decision}</td></tr>")
        head = ("<tr><th>#</th><th>modification</th><th>loss improvement ± s.e.</th><th>margin δ</th><th>z</th>"
                "<th>p-value</th><th>weight w</th><th>level</th>" + ("<th>z to beat</th>" if fs else "")
                + "<th>decision</th></tr>")
        return f"<table class='md-table'><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"

    # ------------------------------------------------------------------ comparison
    def _build_compare(self):
        self.compare_methods = pn.widgets.MultiChoice.from_param(self.model.param.compare_methods,
                                                                 name="Procedures to compare",
                                                                 options={METHOD_LABELS[m]: m for m in METHODS},
                                                                 sizing_mode="stretch_width")
        self.compare_headlines = HTML("", sizing_mode="stretch_width")
        self.compare_table = HTML("", sizing_mode="stretch_width", css_classes=["approve-compare-table"])
        fig = figure(height=340, sizing_mode="stretch_width", y_axis_type="log", x_axis_label="test (in order)",
                     y_axis_label="level (log scale)", tools="pan,wheel_zoom,box_zoom,reset,save",
                     toolbar_location="above", title="Level each procedure held each test to (filled = approved)")
        self.compare_sources = {}
        items = []
        for m in METHODS:
            src = ColumnDataSource({"test": [], "level": [], "fill": [], "name": [], "decision": []})
            line = fig.line("test", "level", source=src, color=METHOD_COLORS[m], line_width=2)
            pts = fig.scatter("test", "level", source=src, color=METHOD_COLORS[m], fill_color="fill", size=8,
                              line_width=2)
            fig.add_tools(HoverTool(renderers=[pts], tooltips=[("procedure", METHOD_LABELS[m]),
                                                               ("test", "@test: @name"), ("level", "@level{0.000e}"),
                                                               ("", "@decision")]))
            self.compare_sources[m] = src
            items.append(LegendItem(label=METHOD_LABELS[m], renderers=[line, pts]))
        self.p_source = ColumnDataSource({"test": [], "p": []})
        p_pts = fig.scatter("test", "p", source=self.p_source, marker="x", size=10, color="#000000", line_width=2)
        items.append(LegendItem(label="p-value (margin of the chosen procedure)", renderers=[p_pts]))
        legend = Legend(items=items, location="center", click_policy="hide", background_fill_alpha=0.85)
        fig.add_layout(legend, "right")
        fig.toolbar.logo = None
        self.compare_fig = fig
        self.compare_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["approve-compare-plot"])

    def _on_compare(self):
        c = self.model.comparison
        r = self.model.result
        if c is None or r is None:
            return
        cards = []
        for m, res in c.results.items():
            guard = "FWER not controlled" if m == "naive" else f"FWER ≤ {res.alpha:g}"
            cards.append(headline_html(METHOD_LABELS[m], f"{res.approvals} of {len(res.approved)}", guard,
                                       css_class=f"approve-compare-count approve-compare-{m}"))
        for m, why in c.skipped.items():
            cards.append(headline_html(METHOD_LABELS[m], "—", why))
        self.compare_headlines.object = _headlines(cards)
        methods = list(c.results)
        head = "<tr><th>#</th><th>modification</th>" + "".join(
            f"<th class='approve-method md-text method-{m}'>{esc(METHOD_LABELS[m])}</th>"
            for m in methods) + "</tr>"
        rows = []
        for i, name in enumerate(c.names):
            cells = []
            for m in methods:
                res = c.results[m]
                a = bool(res.approved[i])
                cells.append(f"<td class='approve-decision approve-compare {'approve-yes' if a else 'approve-no'}' "
                             f"data-method='{m}' data-test='{i + 1}' data-approved='{str(a).lower()}'>"
                             f"{'✔' if a else '✗'} <span class='approve-small'>{_num(res.levels[i], 2)}</span></td>")
            rows.append(f"<tr><td class='num'>{i + 1}</td><td>{esc(name)}</td>{''.join(cells)}</tr>")
        total = "<tr><td></td><td><b>approved</b></td>" + "".join(
            f"<td class='approve-compare'><b>{c.results[m].approvals}</b></td>" for m in methods) + "</tr>"
        self.compare_table.object = (f"<table class='md-table'><thead>{head}</thead><tbody>{''.join(rows)}{total}"
                                     "</tbody></table>")
        for m, src in self.compare_sources.items():
            res = c.results.get(m)
            if res is None:
                src.data = {"test": [], "level": [], "fill": [], "name": [], "decision": []}
                continue
            k = len(res.approved)
            src.data = {"test": list(range(1, k + 1)), "level": np.maximum(res.levels, 1e-300),
                        "fill": [METHOD_COLORS[m] if a else "white" for a in res.approved], "name": list(res.names),
                        "decision": ["approved" if a else "denied" for a in res.approved]}
        self.p_source.data = {"test": list(range(1, len(r.p_values) + 1)), "p": np.maximum(r.p_values, 1e-300)}

    # ------------------------------------------------------------------ simulations
    def _build_simulation(self, kind: str):
        sim = getattr(self, kind)
        w = {}
        w["replicates"] = pn.widgets.IntInput.from_param(sim.param.replicates, name="Replicates", start=1, end=2000,
                                                         sizing_mode="stretch_width",
                                                         css_classes=[f"approve-{kind}-replicates"])
        w["steps"] = pn.widgets.IntInput.from_param(sim.param.steps, name="T (tests)", start=1, end=200,
                                                    sizing_mode="stretch_width", css_classes=[f"approve-{kind}-steps"])
        w["test_size"] = pn.widgets.IntInput.from_param(sim.param.test_size, name="Test examples", start=10,
                                                        sizing_mode="stretch_width")
        w["seed"] = pn.widgets.IntInput.from_param(sim.param.seed, name="Seed", start=0, sizing_mode="stretch_width")
        w["alpha"] = pn.widgets.FloatInput.from_param(sim.param.alpha, name="α", start=1e-6, end=0.999, step=0.01,
                                                      sizing_mode="stretch_width")
        w["run"] = pn.widgets.Button(label="Run simulation", color="primary", sizing_mode="stretch_width",
                                     css_classes=[f"approve-{kind}-run"])
        w["cancel"] = pn.widgets.Button(label="Cancel", color="warning", sizing_mode="stretch_width",
                                        disabled=True, css_classes=[f"approve-{kind}-cancel"])

        async def run(event, sim=sim):
            await sim.arun()

        w["run"].on_click(run)
        w["cancel"].on_click(lambda event, sim=sim: sim.cancel())
        w["progress"] = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width", bar_color="primary",
                                               css_classes=[f"approve-{kind}-progress"])
        w["status"] = HTML("", sizing_mode="stretch_width", css_classes=[f"approve-{kind}-status"])
        w["table"] = HTML("", sizing_mode="stretch_width", css_classes=[f"approve-{kind}-table"])
        if kind == "fwer":
            factors = [METHOD_LABELS[m] for m in METHODS]
            bar_src = ColumnDataSource({"label": [], "fwer": [], "lower": [], "upper": [], "color": []})
            fig = figure(height=320, sizing_mode="stretch_width", x_range=FactorRange(*factors),
                         y_axis_label="FWER",
                         tools="save,reset", toolbar_location="above",
                         title="Figure 3 (middle): error rate per procedure, ± 2 Monte Carlo standard errors")
            fig.vbar(x="label", top="fwer", width=0.7, source=bar_src, color="color")
            fig.add_layout(Whisker(source=bar_src, base="label", lower="lower", upper="upper", line_width=2))
            w["alpha_line"] = Span(location=sim.alpha, dimension="width", line_color="#000000", line_dash="dashed",
                                   line_width=2)
            fig.add_layout(w["alpha_line"])
            fig.y_range.start = 0
            fig.xaxis.major_label_orientation = 0.5
            fig.add_tools(HoverTool(tooltips=[("procedure", "@label"), ("FWER", "@fwer{0.000}"),
                                              ("± 2 s.e.", "@lower{0.000} – @upper{0.000}")]))
            fig.toolbar.logo = None
            w["bar_source"] = bar_src
            w["fig"] = fig
            curve = figure(height=320, sizing_mode="stretch_width", x_axis_label="test",
                           y_axis_label="AUC of the deployed model", tools="pan,wheel_zoom,box_zoom,reset,save",
                           toolbar_location="above",
                           title="Figure 3 (left): deployed model's AUC on the reused test set (dashed) and "
                                 "on fresh data (solid)")
        else:
            fig = figure(height=320, sizing_mode="stretch_width", x_axis_label="time point (new data arrives)",
                         y_axis_label="modifications approved so far", tools="pan,wheel_zoom,box_zoom,reset,save",
                         toolbar_location="above", title="Figure 4 (left): approvals over time, mean over replicates")
            fig.toolbar.logo = None
            w["fig"] = fig
            curve = figure(height=320, sizing_mode="stretch_width", x_axis_label="time point",
                           y_axis_label="AUC on fresh data", tools="pan,wheel_zoom,box_zoom,reset,save",
                           toolbar_location="above",
                           title="Figure 4 (right): fresh-data AUC of the most recently approved model")
        curve.toolbar.logo = None
        w["curve"] = curve
        w["curve_sources"] = {}
        w["line_sources"] = {}
        items = []
        curve_items = []
        for m in METHODS:
            src = ColumnDataSource({"x": [], "y": [], "y2": []})
            solid = curve.line("x", "y", source=src, color=METHOD_COLORS[m], line_width=2)
            renderers = [solid]
            if kind == "fwer":
                renderers.append(curve.line("x", "y2", source=src, color=METHOD_COLORS[m], line_width=1.5,
                                            line_dash="dashed"))
            w["curve_sources"][m] = src
            curve_items.append(LegendItem(label=METHOD_LABELS[m], renderers=renderers))
            if kind == "power":
                lsrc = ColumnDataSource({"x": [], "y": []})
                line = fig.line("x", "y", source=lsrc, color=METHOD_COLORS[m], line_width=2.5)
                w["line_sources"][m] = lsrc
                items.append(LegendItem(label=METHOD_LABELS[m], renderers=[line]))
        curve.add_layout(Legend(items=curve_items, location="center", click_policy="hide"), "right")
        if kind == "power":
            fig.add_layout(Legend(items=items, location="center", click_policy="hide"), "right")
        w["fig_pane"] = pn.pane.Bokeh(w["fig"], sizing_mode="stretch_width", css_classes=[f"approve-{kind}-plot"])
        w["curve_pane"] = pn.pane.Bokeh(curve, sizing_mode="stretch_width")
        setattr(self, f"_{kind}_widgets", w)

    def _on_sim_state(self, kind: str):
        sim = getattr(self, kind)
        w = getattr(self, f"_{kind}_widgets")
        w["progress"].value = int(round(100 * sim.progress))
        w["run"].disabled = sim.running
        w["cancel"].disabled = not sim.running
        w["status"].object = (error_html(sim.error) if sim.error else
                              f'<div class="md-note">{esc(sim.status)}</div>' if sim.status else "")

    def _on_sim_result(self, kind: str):
        sim = getattr(self, kind)
        w = getattr(self, f"_{kind}_widgets")
        res = sim.result
        if res is None:
            w["table"].object = ('<div class="md-note">Not run yet. Each replicate re-runs the developer against '
                                 "every procedure; fsSRGP and presSRGP take a few seconds per replicate.</div>")
            return
        methods = [m for m in res.methods if not math.isnan(res.fwer.get(m, math.nan))]
        rows = []
        for m in res.methods:
            f = res.fwer[m]
            e = res.fwer_error[m]
            if math.isnan(f):
                continue
            ok = f <= res.alpha + 2 * e
            verdict = ("—" if m == "naive" and kind == "power" else
                       ("✔ at or below α" if ok else "✗ above α"))
            rows.append(f"<tr><td class='md-text method-{m}'><b>{esc(METHOD_LABELS[m])}</b></td>"
                        f"<td class='num approve-sim-fwer' data-method='{m}'>{f:.3f}</td><td class='num'>± {e:.3f}</td>"
                        f"<td class='num'>{res.approvals[m]:.2f}</td><td>{verdict}</td></tr>")
        what = ("approving ≥ 1 modification (all are worse than the oracle)" if kind == "fwer" else
                "approving ≥ 1 modification whose fresh-data AUC gain is at most its margin")
        note = (f"<div class='md-note'>{res.completed} of {res.replicates} replicates"
                f"{' (cancelled)' if res.cancelled else ''}, seed {res.seed}, α = {res.alpha:g}. FWER = rate of "
                f"{what}; ± one Monte Carlo standard error √(p(1−p)/replicates).</div>")
        w["table"].object = (note + "<table class='md-table'><thead><tr><th>procedure</th><th>FWER</th>"
                             "<th>MC s.e.</th><th>mean approvals</th><th></th></tr></thead><tbody>"
                             + "".join(rows) + "</tbody></table>")
        data = {"label": [], "fwer": [], "lower": [], "upper": [], "color": []}
        for m in methods:
            data["label"].append(METHOD_LABELS[m])
            data["fwer"].append(res.fwer[m])
            data["lower"].append(max(res.fwer[m] - 2 * res.fwer_error[m], 0.0))
            data["upper"].append(min(res.fwer[m] + 2 * res.fwer_error[m], 1.0))
            data["color"].append(METHOD_COLORS[m])
        time = [int(t) for t in res.time]

        def update():
            if kind == "fwer":
                w["bar_source"].data = data
                w["alpha_line"].location = res.alpha
                for m, src in w["curve_sources"].items():
                    if m in methods:
                        src.data = {"x": time, "y": res.curves["holdout_auc"][m], "y2": res.curves["test_auc"][m]}
                    else:
                        src.data = {"x": [], "y": [], "y2": []}
            else:
                for m, src in w["line_sources"].items():
                    src.data = ({"x": time, "y": res.curves["approvals"][m]} if m in methods
                                else {"x": [], "y": []})
                for m, src in w["curve_sources"].items():
                    src.data = ({"x": time, "y": res.curves["holdout_auc"][m], "y2": res.curves["holdout_auc"][m]}
                                if m in methods else {"x": [], "y": [], "y2": []})

        doc = self._doc if self._doc is not None else pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            # a Bokeh source must change under the document lock; the simulation's result may
            # arrive from an async callback that does not hold it
            doc.add_next_tick_callback(update)
        else:
            update()

    # ------------------------------------------------------------------ layout
    def _simulation_section(self, kind: str):
        w = getattr(self, f"_{kind}_widgets")
        if kind == "fwer":
            title = "Error control: an adversarial developer (Section 3.1)"
            text = ("The original model is the oracle, so every modification is worse and every approval is an error. "
                    "The developer perturbs irrelevant coefficients by ±0.6 and, after an approval, keeps pushing in "
                    "the same direction — overfitting the 100 reused test examples. The naive procedure should land "
                    "far above α, every other procedure at or below it.")
        else:
            title = "Power: a developer refitting on a data stream (Section 3.2)"
            text = ("The developer refits a logistic regression as new data arrive (10 examples per time point) and "
                    "submits the refit; after a denial it waits one extra time point. Most modifications are real "
                    "improvements; the margin grows by 0.01 AUC after each approval. More approvals = more power.")
        settings = pn.Column(w["replicates"], w["seed"], w["steps"], w["test_size"], w["alpha"],
                             pn.Row(w["run"], w["cancel"]), w["progress"], w["status"], width=260)
        results = pn.Column(w["table"], w["fig_pane"], w["curve_pane"], sizing_mode="stretch_width")
        return pn.Column(HTML(f"<h2>{esc(title)}</h2><p class='md-note'>{esc(text)}</p>",
                                      sizing_mode="stretch_width"),
                         pn.Row(settings, results, sizing_mode="stretch_width"),
                         sizing_mode="stretch_width", css_classes=["approve-section", f"approve-{kind}"])

    def controls(self):
        if self._sidebar is None:
            advanced = pn.Card(self.failure_threshold, self.pres_share, self.pres_first_share, self.max_conditioning,
                               self.seed, title="Advanced", collapsed=True, sizing_mode="stretch_width")
            self._sidebar = pn.Column(
                HTML("<b>Modification trace</b>", margin=(8, 5, 0, 5)),
                self.example, self.example_note,
                HTML("<span class='approve-small'>Or upload a CSV: header of names; one row per test "
                             "example; first column the original model's per-example loss, then one column per "
                             "modification in the order tested.</span>", margin=(4, 5, 0, 5)),
                self.upload, self.upload_error,
                HTML("<span class='approve-small'>Prespecified plan (presSRGP), same shape:</span>",
                             margin=(4, 5, 0, 5)),
                self.pres_upload, self.pres_error,
                HTML("<b>Procedure</b>", margin=(12, 5, 0, 5)),
                self.method, self.alpha, self.success_weight, self.margin, self.margin_step, self.error, advanced,
                sizing_mode="stretch_width",
            )
        return self._sidebar

    def results(self):
        if self._results is None:
            intro = HTML(
                "<h2>Approve model modifications on a reused test set</h2>"
                "<p class='md-note'>A developer proposes modifications one after another; each is approved only "
                "if a one-sided test on the <i>same</i> test set shows it beats the original model by more than a "
                "margin δ. Only approve/deny is released. Feng et al., “Sequential algorithmic modification with "
                "test data reuse”: Bonferroni over the tree of possible histories, alpha recycling (SRGPs), "
                "correlation-aware fixed sequences and a prespecified plan keep the chance of approving "
                "<i>any</i> unacceptable modification below α.</p>",
                sizing_mode="stretch_width")
            decisions = pn.Column(self.headlines, self.sentence, self.method_note, self.table, self.decision_plot,
                                  sizing_mode="stretch_width", name="Decisions")
            compare = pn.Column(
                HTML("<p class='md-note'>Every procedure on the same trace, margins and α. ✔ approved, ✗ "
                             "denied; small numbers are the level each test was held to. The margin schedule "
                             "depends on each procedure's own approvals.</p>", sizing_mode="stretch_width"),
                self.compare_methods, self.compare_headlines, self.compare_table, self.compare_plot,
                sizing_mode="stretch_width", name="Compare procedures")
            simulations = pn.Column(self._simulation_section("fwer"), self._simulation_section("power"),
                                    sizing_mode="stretch_width", name="Simulations")
            notes = HTML(_notes_html(), sizing_mode="stretch_width", name="How it works")
            tabs = pn.Tabs(decisions, compare, simulations, notes, sizing_mode="stretch_width", dynamic=False,
                           css_classes=["approve-tabs"])
            self._results = pn.Column(intro, tabs, sizing_mode="stretch_width", css_classes=["approve-page"])
        return self._results


def _notes_html() -> str:
    items = "".join(f"<li><b>{esc(METHOD_LABELS[m])}</b> — {METHOD_NOTES[m]}</li>" for m in METHODS)
    return f"""
<div class="md-note approve-about">
<h3>The test behind each decision</h3>
<p>Test j asks whether modification j lowers the expected loss of the original model by more than the margin
δ<sub>j</sub> (Eq. 7): H<sub>j</sub>: E[loss<sub>0</sub> − loss<sub>j</sub>] ≤ δ<sub>j</sub>. It is a one-sided
z-test on the per-example differences: z = (mean − δ<sub>j</sub>) / (sd/√n), p = 1 − Φ(z); the modification is
approved when p ≤ its level. After an approval the margin grows by the margin step (Section 3.2 uses 0.01 AUC),
so each approval must improve on the last. Always comparing with the <i>original</i> model is the paper's choice.
The shipped examples use the AUC loss (1 − each example's AUC influence value), so improvements are AUC gains.</p>
<h3>Procedures</h3><ul>{items}</ul>
<h3>Choices where the paper is silent (documented in the code as well)</h3>
<ul>
<li>The start node carries weight 1 and counts as approved, so the first streak gets 0.8, 0.16, 0.032, …
(α = 0.1: levels 0.08, 0.016, 0.0032; after an approval at the first test, 0.064 for the next).</li>
<li>wBonferroni with T ≤ 4 has no history with more than 3 denials; then the first group gets all of α.</li>
<li>fsSRGP and presSRGP condition each threshold on at most 6 earlier nodes (configurable), chosen as those that
exclude the most probability. Conditioning on fewer nodes is conservative: by a union bound each threshold still
spends at most its share of α. Correlations are estimated from your per-example losses; statistics that are
identical are merged exactly.</li>
<li>Multivariate normal probabilities in three or more dimensions use scipy's randomized quasi-Monte Carlo
integration with a fixed seed (the Seed setting); they agree with independent computations to about 0.5% in
probability. One and two dimensions are integrated deterministically.</li>
<li>presSRGP: 90% of α on the plan's nodes (half to the first, the rest equally), 10% on your tests; the plan's
confidence regions bound how much its improvement could be <i>over</i>estimated (the orientation in which the
correlation with your modifications buys power). Nothing about the plan is ever released.</li>
<li>The simulations follow Section 3 with our simplifications: X ~ N(0, I); the power developer waits one time
point after a denial instead of running a power calculation; fresh-data AUCs use 2,000–4,000 examples.</li>
</ul>
<h3>Reading a static trace</h3>
<p>Replaying several procedures on one recorded trace shows what each would have said about the same
modifications. A real developer's next modification depends on the answers, which is why the simulations re-run
the developer for every procedure.</p>
</div>"""


def page():
    """The /approve page: (main, sidebar) for :func:`meter_dashboard.pages.build`."""
    return Approve(sync_url=True)
