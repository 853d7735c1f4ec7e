"""The ease.ml/ci page: how many labels a CI condition needs, and a commit trace replayed.

:class:`CI` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.models.ci.CIModel`:
widgets made from the model's parameters (the condition is validated as you type),
headline numbers, a table of baseline and optimized counts per adaptivity, the clause
breakdown, a Bokeh plot of labels against steps (updated in place), and the replay of a
commit trace with pass/fail marks and new-testset alarms.  It computes nothing itself.
"""
from __future__ import annotations

import math

import numpy as np
import panel as pn
import param
from bokeh.models import BasicTicker, ColumnDataSource, FixedTicker, HoverTool, Legend, NumeralTickFormatter, Span
from bokeh.plotting import figure

from ..models.ci import (
    ADAPTIVITIES,
    ADAPTIVITY_TITLES,
    ASSUMPTIONS,
    PRESETS,
    RESULT_FALSE,
    RESULT_TRUE,
    TEXT_ROUNDING_NOTE,
    CIModel,
    example_trace,
)
from ..models.ci_grammar import VARIABLE_NAMES
from . import formatting as fmt
from .base import DashboardView
from .style import HTML, PALETTE, error_html, esc, headline_html, swatch_html

#: One colour per adaptivity, shared by the plot and the tables.
ADAPTIVITY_COLORS = {"none": PALETTE[2], "full": PALETTE[0], "firstChange": PALETTE[1]}

_PRESET_PLACEHOLDER = "Choose a paper setting…"
_EXAMPLES = {
    "Example: 40 commits (n, o, d per commit)": "ci_commits.csv",
    "Example: 8 EmoContext-shaped models (predictions)": "ci_predictions.csv",
    "No trace": "",
}

def _html(text: str = "", **kwargs) -> HTML:
    """An HTML pane that carries the shared stylesheet into its shadow root."""
    kwargs.setdefault("sizing_mode", "stretch_width")
    return HTML(text, **kwargs)


def _badge(truth_or_signal: str) -> str:
    key = {"pass": "pass", "fail": "fail", RESULT_TRUE: "pass", RESULT_FALSE: "fail"}.get(truth_or_signal, "unknown")
    label = {"pass": "✓ pass", "fail": "✗ fail"}.get(truth_or_signal, truth_or_signal)
    return f'<span class="ci-badge ci-{key}">{esc(label)}</span>'


def _hours(h) -> str:
    if h is None:
        return "—"
    return f"{h:,.1f} h" if h >= 1 else f"{h * 60:,.0f} min"


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

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.CI(condition="n - o > 0.1 +/- 0.1", reliability=0.99)  # doctest: +SKIP
    """

    title = "ease.ml/ci"

    model = param.ClassSelector(class_=CIModel)
    sync_url = param.Boolean(default=False)

    def __init__(self, model: CIModel | None = None, trace: str = "ci_commits.csv", sync_url: bool = False,
                 **params):
        model_params = {k: params.pop(k) for k in list(params) if k in CIModel.param and k != "name"}
        if model is None:
            model = CIModel(**model_params)
        elif model_params:
            model.param.update(**model_params)
        super().__init__(model=model, sync_url=sync_url, **params)
        if trace and self.model.trace is None:
            self.model.trace = example_trace(trace)
        self._build_widgets(trace)
        self._build_outputs()
        self._build_plots()
        self.model.param.watch(self._on_result, ["result", "error"])
        self.model.param.watch(self._on_curves, ["curves"])
        self.model.param.watch(self._on_replay, ["replay", "trace_error"])
        self.model.param.watch(self._on_condition, ["condition"])
        self._on_result()
        self._on_curves()
        self._on_replay()
        if sync_url and pn.state.location is not None:
            pn.state.location.sync(self.model, {"condition": "condition", "reliability": "reliability",
                                                "adaptivity": "adaptivity", "mode": "mode", "steps": "steps"})

    # ------------------------------------------------------------------ widgets
    def _build_widgets(self, trace: str):
        m = self.model
        self.preset = pn.widgets.Select(label="Paper settings", options=[_PRESET_PLACEHOLDER] + list(PRESETS),
                                        value=_PRESET_PLACEHOLDER, sizing_mode="stretch_width")
        self.preset.param.watch(self._on_preset, "value")
        self.condition = pn.widgets.TextInput(label="Condition", value=m.condition, value_input=m.condition,
                                              placeholder="n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01",
                                              sizing_mode="stretch_width", css_classes=["ci-condition"])
        self.condition.param.watch(self._on_typed, "value_input")
        self.condition_error = _html("", css_classes=["ci-condition-error"], margin=(0, 5))
        self.grammar = _html(
            '<div class="md-note ci-grammar">' + "; ".join(
                f"<code>{v}</code> {esc(t)}" for v, t in VARIABLE_NAMES.items())
            + ". Combine with <code>+</code> <code>-</code> and constant factors <code>1.1 * o</code>; compare with "
              "<code>&gt;</code> or <code>&lt;</code>, a threshold and <code>+/-</code> tolerance; join clauses "
              "with <code>/\\</code>.</div>", margin=(0, 5))
        self.reliability = pn.widgets.FloatInput.from_param(m.param.reliability, label="Reliability (1 − δ)",
                                                            start=0.5, end=0.9999999, step=0.0001,
                                                            format="0.[0000000]", sizing_mode="stretch_width")
        self.adaptivity = pn.widgets.RadioButtonGroup.from_param(m.param.adaptivity, label="Adaptivity",
                                                                 color="light", sizing_mode="stretch_width")
        self.mode = pn.widgets.RadioButtonGroup.from_param(m.param.mode, label="Mode", color="light",
                                                           sizing_mode="stretch_width")
        self.steps = pn.widgets.EditableIntSlider.from_param(m.param.steps, label="Steps H (commits per test set)",
                                                             start=1, end=128, fixed_start=1, fixed_end=100_000,
                                                             throttled=True, sizing_mode="stretch_width")
        self.use_bound = pn.widgets.Checkbox(label="Known upper bound p on d (Pattern 2)",
                                             value=m.difference_bound is not None)
        self.bound = pn.widgets.FloatInput(label="p (bound on d)", value=m.difference_bound or 0.1, start=0.0001,
                                           end=1.0, step=0.01, width=110, disabled=m.difference_bound is None)
        self.check_bound = pn.widgets.Checkbox.from_param(m.param.check_difference_bound,
                                                          label="check p on unlabeled data",
                                                          margin=(30, 5, 5, 10))
        self.use_bound.param.watch(self._on_bound, "value")
        self.bound.param.watch(self._on_bound, "value")
        self.model.param.watch(self._on_model_bound, ["difference_bound"])
        self.seconds = pn.widgets.FloatInput.from_param(m.param.seconds_per_label, label="Seconds per label",
                                                        start=0.01, step=0.5, width=140)
        self.labelers = pn.widgets.IntInput.from_param(m.param.labelers, label="Labelers", start=1, width=100)
        self.other_errors = _html("", margin=(0, 5))

        self.example = pn.widgets.Select(label="Commit trace", options=list(_EXAMPLES),
                                         value=next((k for k, v in _EXAMPLES.items() if v == trace), "No trace"),
                                         width=330)
        self.example.param.watch(self._on_example, "value")
        self.upload = pn.widgets.FileInput(accept=".csv", multiple=False, width=260)
        self.upload.param.watch(self._on_upload, "value")
        self.alarm_on = pn.widgets.RadioButtonGroup.from_param(m.param.alarm_on, label="firstChange alarm on",
                                                               color="light", width=160)

    # ------------------------------------------------------------------ outputs
    def _build_outputs(self):
        self.headlines = _html(css_classes=["ci-headlines"])
        self.sentence = _html(css_classes=["ci-sentence"])
        self.table = _html(css_classes=["ci-table"])
        self.clauses = _html(css_classes=["ci-clauses"])
        self.assumptions = _html(css_classes=["ci-assumptions"])
        self.replay_summary = _html(css_classes=["ci-replay-summary"])
        self.replay_table = _html(css_classes=["ci-replay"])
        self.trace_error = _html(margin=(0, 5))

    def _build_plots(self):
        self.curve_source = ColumnDataSource({"x": [1], **{f"{a}_{k}": [1] for a in ADAPTIVITIES
                                                           for k in ("baseline", "optimized")}})
        fig = figure(height=360, sizing_mode="stretch_width", y_axis_type="log", x_axis_label="H (commits per test set)",
                     y_axis_label="labels needed", tools="pan,wheel_zoom,box_zoom,reset,save",
                     title="Labels needed against steps, per adaptivity (solid: baseline, dashed: optimized)",
                     toolbar_location="above")
        items = []
        self._optimized_renderers = []
        for a in ADAPTIVITIES:
            color = ADAPTIVITY_COLORS[a]
            # none and firstChange need the same count (Section 3.4): none is drawn wide and pale beneath
            width, alpha = (6, 0.45) if a == "none" else (2.4, 1.0)
            base = fig.line("x", f"{a}_baseline", source=self.curve_source, color=color, line_width=width,
                            alpha=alpha)
            opt = fig.line("x", f"{a}_optimized", source=self.curve_source, color=color, line_width=width,
                           alpha=alpha, line_dash="dashed")
            self._optimized_renderers.append(opt)
            items.append((f"{a} · baseline", [base]))
            items.append((f"{a} · optimized", [opt]))
        fig.add_tools(HoverTool(tooltips=[("H", "@x")] + [(f"{a} baseline", f"@{{{a}_baseline}}{{0,0}}")
                                                          for a in ADAPTIVITIES]
                                + [(f"{a} optimized", f"@{{{a}_optimized}}{{0,0}}") for a in ADAPTIVITIES],
                                mode="vline"))
        self.legend = Legend(items=items, location="top_left", click_policy="hide", background_fill_alpha=0.8)
        fig.add_layout(self.legend, "right")
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        self.y_ticker = FixedTicker(ticks=[1, 10, 100, 1000])
        fig.yaxis.ticker = self.y_ticker
        fig.toolbar.logo = None
        self.current_h = Span(location=self.model.steps, dimension="height", line_color="#555", line_dash="dotted",
                              line_width=1)
        fig.add_layout(self.current_h)
        self.curve_fig = fig
        self.curve_pane = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["ci-curve"])

        self.replay_source = ColumnDataSource({"x": [], "n": [], "o": [], "color": [], "signal": [], "commit": []})
        rfig = figure(height=280, sizing_mode="stretch_width", x_axis_label="commit", y_axis_label="accuracy",
                      tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above",
                      title="Replay: n per commit (green: pass, red: fail), o of the active model")
        rfig.step("x", "o", source=self.replay_source, mode="center", color="#555", line_width=1.5,
                  legend_label="o (active model)")
        rfig.scatter("x", "n", source=self.replay_source, color="color", size=9, legend_label="n (commit)")
        rfig.add_tools(HoverTool(tooltips=[("commit", "@commit"), ("n", "@n{0.0000}"), ("o", "@o{0.0000}"),
                                           ("signal", "@signal")]))
        rfig.legend.location = "bottom_right"
        rfig.xaxis.ticker = BasicTicker(min_interval=1)
        rfig.toolbar.logo = None
        self._alarm_spans = []
        self.replay_fig = rfig
        self.replay_pane = pn.pane.Bokeh(rfig, sizing_mode="stretch_width", css_classes=["ci-replay-plot"])

    # ------------------------------------------------------------------ layout
    def controls(self) -> pn.Column:
        """The input column (the sidebar of the served page)."""
        return pn.Column(
            self.preset,
            self.condition,
            self.condition_error,
            self.grammar,
            self.reliability,
            HTML("<b>Adaptivity</b>", margin=(8, 5, 0, 5)),
            self.adaptivity,
            HTML("<b>Mode</b>", margin=(8, 5, 0, 5)),
            self.mode,
            self.steps,
            HTML("<b>Optimizations</b>", margin=(10, 5, 0, 5)),
            self.use_bound,
            pn.Row(self.bound, self.check_bound, sizing_mode="stretch_width"),
            HTML("<b>Labeling effort</b>", margin=(10, 5, 0, 5)),
            pn.Row(self.seconds, self.labelers, sizing_mode="stretch_width"),
            self.other_errors,
            sizing_mode="stretch_width",
        )

    def results(self) -> pn.Column:
        """Headlines, tables, the plot, the replay and the assumptions (the main area)."""
        return pn.Column(
            self.headlines,
            self.sentence,
            self.table,
            self.clauses,
            self.curve_pane,
            HTML("<h3 class='md-subtitle'>Replay a commit trace</h3>"),
            pn.Row(self.example, pn.Column(HTML("<span class='md-note'>or upload a CSV</span>",
                                                        margin=(0, 5)), self.upload),
                   pn.Column(HTML("<span class='md-note'>firstChange alarm on</span>", margin=(0, 5)),
                             self.alarm_on)),
            self.trace_error,
            self.replay_summary,
            self.replay_pane,
            self.replay_table,
            self.assumptions,
            sizing_mode="stretch_width",
        )


    # ------------------------------------------------------------------ input handlers
    def _on_preset(self, event):
        if event.new == _PRESET_PLACEHOLDER:
            return
        self.model.apply_preset(event.new)

    def _on_typed(self, event):
        if event.new != self.model.condition:
            self.model.condition = event.new

    def _on_condition(self, event):
        if self.condition.value_input != event.new:
            self.condition.param.update(value=event.new, value_input=event.new)

    def _on_bound(self, *_):
        self.bound.disabled = not self.use_bound.value
        value = self.bound.value if self.use_bound.value else None
        if value is not None and not (0 < value <= 1):
            self.other_errors.object = error_html(f"p must be in (0, 1]; got {value:g}")
            return
        self.other_errors.object = ""
        if value != self.model.difference_bound:
            self.model.difference_bound = value

    def _on_model_bound(self, event):
        p = event.new
        self.use_bound.value = p is not None
        if p is not None and self.bound.value != p:
            self.bound.value = p

    def _on_example(self, event):
        name = _EXAMPLES[event.new]
        self.model.trace = example_trace(name) if name else None
        self.model.trace_error = ""

    def _on_upload(self, event):
        if event.new:
            self.model.load_trace(event.new, name=self.upload.filename or "upload.csv")

    # ------------------------------------------------------------------ output handlers
    def _on_result(self, *_):
        m = self.model
        err = m.error
        pointer = ""
        if err and m.error_column is not None:
            col = m.error_column
            text = m.condition
            pointer = f'<pre class="ci-pointer">{esc(text)}\n{" " * (col - 1)}^</pre>'
        self.condition_error.object = (error_html(err) + pointer) if err and m.error_column is not None else (
            "" if not err else "")
        self.other_errors.object = error_html(err) if err and m.error_column is None else ""
        r = m.result
        if r is None:
            return
        banner = ('<div class="md-error md-stale">Showing the last valid condition: fix the '
                  'input marked in the sidebar.</div>') if err else ""
        cards = [headline_html("Labels · baseline", fmt.integer(r.labels),
                               f"{r.adaptivity} adaptivity · {_hours(r.labeler_hours)} of labeling", "ci-labels")]
        if r.optimized is not None:
            saving = r.saving
            sub = ("no labels: unlabeled examples suffice" if r.optimized == 0 else
                   f"{saving:,.1f}× fewer · {_hours(r.optimized_labeler_hours)}")
            cards.append(headline_html("Labels · optimized", fmt.integer(r.optimized), sub, "ci-optimized"))
            per = "—" if r.labels_per_commit is None else fmt.integer(r.labels_per_commit)
            per_sub = ("needs a clause n − o with a variance bound" if r.labels_per_commit is None
                       else f"active labeling · {_hours(r.per_commit_hours)} per commit")
            cards.append(headline_html("Labels per commit", per, per_sub, "ci-labels-per-commit"))
            unl_sub = "for the clauses over d" if r.unlabeled else "none needed"
            if r.unlabeled and r.difference_bound is not None and "checked" in r.variance_source:
                unl_sub = "to check p and the clauses over d"
            cards.append(headline_html("Unlabeled examples", fmt.integer(r.unlabeled), unl_sub, "ci-unlabeled"))
        self.headlines.object = banner + '<div class="md-row">' + "".join(cards) + "</div>"
        self.sentence.object = f'<p class="md-sentence">{esc(r.sentence())}</p>'
        self.table.object = _adaptivity_table(r)
        self.clauses.object = _clause_table(r)
        notes = list(ASSUMPTIONS)
        if r.variance_bound is not None:
            notes.append(f"Bennett's inequality for n − o uses the variance bound p = {r.variance_bound:g} "
                         f"from the {r.variance_source} (Sections 4.1–4.2).")
        notes += [n for n in r.notes if not n.startswith("Variance bound")]
        notes.append(TEXT_ROUNDING_NOTE)
        notes.append("Labels per commit with active labeling cover the whole H-step guarantee; the paper's 2,188 "
                     "(Section 4.1.2) is the same formula for a single commit (H = 1): ⌈2,188.85⌉ = 2,189.")
        self.assumptions.object = ('<div class="md-note"><b>Assumptions and notes</b><ul>'
                                   + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul></div>")
        self.current_h.location = r.steps

    def _on_curves(self, *_):
        c = self.model.curves
        if not c:
            return
        data = {"x": np.asarray(c["steps"])}
        has_opt = False
        for a in ADAPTIVITIES:
            data[f"{a}_baseline"] = np.asarray(c[a]["baseline"], dtype=float)
            opt = c[a]["optimized"]
            has_opt = has_opt or opt is not None
            data[f"{a}_optimized"] = (np.asarray(opt, dtype=float) if opt is not None
                                      else np.full(len(data["x"]), np.nan))
        for a in ADAPTIVITIES:  # a log axis cannot show 0 (conditions over d alone need no labels)
            data[f"{a}_optimized"] = np.where(data[f"{a}_optimized"] > 0, data[f"{a}_optimized"], np.nan)
        self.curve_source.data = data
        self.y_ticker.ticks = _log_ticks([v for k, v in data.items() if k != "x"])
        for r in self._optimized_renderers:
            r.visible = has_opt

    def _on_replay(self, *_):
        m = self.model
        self.trace_error.object = error_html(m.trace_error)
        rep = m.replay
        for span in self._alarm_spans:
            span.visible = False
        if rep is None:
            self.replay_summary.object = ('<p class="md-note">No trace loaded. Choose an example or upload a CSV with '
                                          'columns <code>commit,n,o,d</code> (one row per commit) or '
                                          '<code>label,&lt;model&gt;,…</code> (one row per test example; the first '
                                          'model is the deployed one).</p>')
            self.replay_table.object = ""
            self.replay_source.data = {"x": [], "n": [], "o": [], "color": [], "signal": [], "commit": []}
            self.replay_pane.visible = False
            return
        self.replay_pane.visible = True
        self.replay_summary.object = _replay_summary(rep, m)
        self.replay_table.object = _replay_table(rep)
        rows = rep.rows
        self.replay_source.data = {
            "x": list(range(1, len(rows) + 1)),
            "n": [np.nan if r["n"] is None else r["n"] for r in rows],
            "o": [np.nan if r["o"] is None else r["o"] for r in rows],
            "color": [PALETTE[2] if r["signal"] == "pass" else PALETTE[5] for r in rows],
            "signal": [r["signal"] for r in rows],
            "commit": [r["commit"] for r in rows],
        }
        alarms = rep.alarms(m.adaptivity)
        while len(self._alarm_spans) < len(alarms):
            span = Span(location=0, dimension="height", line_color=PALETTE[1], line_dash="dashed", line_width=2)
            self.replay_fig.add_layout(span)
            self._alarm_spans.append(span)
        for span, at in zip(self._alarm_spans, alarms):
            span.location = at + 0.5
            span.visible = True


def _log_ticks(arrays) -> list:
    """Ticks at 1, 2, 5 x 10^k spanning the finite positive values (Bokeh's log ticker skips some)."""
    values = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return [1, 10, 100]
    lo, hi = math.floor(math.log10(values.min())), math.ceil(math.log10(values.max()))
    mantissas = [1, 2, 5] if hi - lo <= 4 else [1]
    return [m * 10**k for k in range(lo, hi + 1) for m in mantissas]


# ============================================================================ HTML builders
def _adaptivity_table(r) -> str:
    optimized = r.optimized is not None
    head = ("<tr><th>adaptivity</th><th class='num'>labels (baseline)</th>"
            + ("<th class='num'>optimized</th><th class='num'>saving</th><th class='num'>labels per commit</th>"
               if optimized else "")
            + "<th>union bound over</th></tr>")
    rows = []
    for a in ADAPTIVITIES:
        v = r.by_adaptivity[a]
        cls = ' class="md-recommended"' if a == r.adaptivity else ""
        swatch = swatch_html(f"palette-{PALETTE.index(ADAPTIVITY_COLORS[a])}")
        cells = [f"<td>{swatch}{esc(a)}</td>", f'<td class="num ci-count-{a}">{fmt.integer(v["labels"])}</td>']
        if optimized:
            saving = "—" if not v["optimized"] else f"{v['labels'] / v['optimized']:,.1f}×"
            cells.append(f'<td class="num ci-optimized-{a}">{fmt.integer(v["optimized"])}</td>')
            cells.append(f'<td class="num">{saving}</td>')
            cells.append(f'<td class="num">{fmt.integer(v["labels_per_commit"])}</td>')
        cells.append(f"<td class='md-plain'>{esc(ADAPTIVITY_TITLES[a].split('(', 1)[1].rstrip(')'))}</td>")
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    return f'<table class="md-table ci-adaptivity-table">{head}{"".join(rows)}</table>'


_METHODS = {
    "hoeffding": "Hoeffding (Section 3.1)",
    "bennett": "Bennett with p (Section 4.1)",
    "unlabeled": "unlabeled examples (no labels)",
}


def _clause_table(r) -> str:
    optimized = r.optimized is not None
    head = ("<tr><th>clause</th><th>tolerance per estimate</th><th class='num'>baseline</th>"
            + ("<th class='num'>optimized</th><th>how</th>" if optimized else "") + "</tr>")
    rows = []
    for c in r.clauses:
        tol = ", ".join(f"{esc(k)} ± {float(v):.4g}" for k, v in c.tolerances.items())
        cells = [f"<td><code>{esc(c.clause)}</code></td>", f"<td>{tol}</td>",
                 f'<td class="num">{fmt.integer(c.baseline)}</td>']
        if optimized:
            cells.append(f'<td class="num">{fmt.integer(c.optimized)}</td>')
            cells.append(f"<td>{esc(_METHODS.get(c.method, c.method))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="md-section"><b>Per clause</b> <span class="md-note">({esc(r.adaptivity)} adaptivity; '
            f'δ split equally across the clauses and the terms of each sum)</span>'
            f'<table class="md-table ci-clause-table">{head}{"".join(rows)}</table></div>')


def _replay_summary(rep, m) -> str:
    source = m.trace.source if m.trace is not None and m.trace.source else "the trace"
    parts = [f"<b>{esc(source)}</b>: <b>{len(rep.rows)}</b> commits, <b>{rep.passes}</b> passed ({esc(rep.mode)})."]
    for a in ADAPTIVITIES:
        alarms = rep.alarms(a)
        if alarms:
            text = ", ".join(str(x) for x in alarms[:12]) + (" …" if len(alarms) > 12 else "")
            parts.append(f"New-testset alarm ({esc(a)}): after commit{'s' if len(alarms) != 1 else ''} {esc(text)}.")
        else:
            parts.append(f"New-testset alarm ({esc(a)}): none yet.")
    parts.append(f"Dashed lines in the plot: the alarms of the chosen adaptivity ({esc(m.adaptivity)}).")
    if rep.examples is not None:
        need = rep.required.get("optimized") or rep.required.get("labels")
        parts.append(f"The trace has {rep.examples:,} test examples; the plan needs {fmt.integer(need)} labels.")
    warnings = "".join(f'<div class="md-error">{esc(w)}</div>' for w in rep.warnings)
    return f'<div class="md-note ci-replay-summary-text">{" ".join(parts)}</div>{warnings}'


def _replay_table(rep) -> str:
    clauses = rep.condition.split(" /\\ ")
    has_dis = any(r["disagreements"] is not None for r in rep.rows)
    head = ("<tr><th>#</th><th>commit</th><th class='num'>n</th><th class='num'>o</th><th class='num'>d</th>"
            + "".join(f"<th title='{esc(c)}'>clause {i + 1}</th>" for i, c in enumerate(clauses))
            + "<th>signal</th><th>active model</th>"
            + ("<th class='num'>labels (active)</th>" if has_dis else "")
            + "".join(f"<th>alarm · {esc(a)}</th>" for a in ADAPTIVITIES) + "</tr>")
    rows = []
    for i, r in enumerate(rep.rows):
        def num(v):
            return "—" if v is None else f"{v:.4f}"
        cells = [f"<td>{i + 1}</td>", f"<td>{esc(r['commit'])}</td>",
                 f'<td class="num">{num(r["n"])}</td>', f'<td class="num">{num(r["o"])}</td>',
                 f'<td class="num">{num(r["d"])}</td>']
        cells += [f"<td>{_badge(t)}</td>" for t in r["clauses"]]
        cells.append(f'<td class="ci-signal">{_badge(r["signal"])}</td>')
        cells.append(f"<td class='md-nowrap'>{esc(r['active'])}</td>")
        if has_dis:
            cells.append(f'<td class="num">{fmt.integer(r["disagreements"])}</td>')
        for a in ADAPTIVITIES:
            alarm = '<span class="ci-badge ci-alarm">new test set</span>' if r[f"alarm_{a}"] else ""
            cells.append(f"<td>{alarm}<span class='md-note'> #{r[f'testset_{a}']}</span></td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    legend = ('<div class="md-note">Clauses: ' + "; ".join(f"{i + 1}: <code>{esc(c)}</code>"
                                                            for i, c in enumerate(clauses))
              + ". #k is the test set a commit was evaluated on.</div>")
    return (f'{legend}<div class="ci-scroll"><table class="md-table ci-replay-table">{head}{"".join(rows)}'
            f"</table></div>")


def page():
    """The served CI page: controls in the sidebar, results in the main area, URL-synced."""
    return CI(sync_url=True)
