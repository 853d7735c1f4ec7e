"""The ease.ml/ci page: how many labels a CI condition needs, and a commit trace replayed.

:class:`CI` is a ``pn.viewable.Viewer`` over a :class:`~meter_dashboard.ci.CIModel`:
inputs (the condition is validated as you type; every number gets a message beside it
naming the rule and the value, and the last good result stays), headline numbers, a table
of baseline and optimized counts per adaptivity, the clause breakdown, a Bokeh plot of
labels against steps (updated in place), and the replay of a commit trace with pass/fail
marks and new-testset alarms.  It computes nothing itself.

The view never touches the document from a model watcher: the watchers only note what
changed, and one refresh runs on the server's next tick with the document lock held (the
right context for raw Bokeh models), however the change arrived: a websocket event, a
priority change processed outside the lock (Enter in a text box), or a replay finished in
a worker thread.  Several changes from one action coalesce into one refresh.
"""
from __future__ import annotations

import contextlib
import functools
import math

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BasicTicker,
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    Legend,
    LegendItem,
    NumeralTickFormatter,
    Span,
)

from ..core import formatting as fmt
from ..core.html import Markup, render, snippet
from ..core.plots import figure
from ..core.validation import InputError, check_number, format_value
from ..core.report import csv_with_inputs, result_report
from ..ui.base import DashboardView
from ..ui.exports import Exports, lead_markup
from ..ui.inputs import NumberInput
from ..ui.sections import one_message
from ..ui.style import HTML, PALETTE, error_html, esc, headline_html, headlines_html, stale_html, swatch_html
from ..ui.upload import GuardedFileDropper
from ..ui.urlstate import UrlState
from . import (
    ADAPTIVITIES,
    ADAPTIVITY_TITLES,
    ASSUMPTIONS,
    MODES,
    PRESETS,
    RESULT_FALSE,
    RESULT_TRUE,
    TEXT_ROUNDING_NOTE,
    CIModel,
    delta_from_reliability,
)
from .grammar import VARIABLE_NAMES
from .inputs import BOUNDS, check_choice, check_steps, validate_difference_bound

#: One colour per adaptivity, shared by the plot and the tables.
ADAPTIVITY_COLORS = {"none": PALETTE[2], "full": PALETTE[0], "firstChange": PALETTE[1]}
#: Commits shown in the replay table (the rest are summarized; the plot shows all).
TABLE_ROWS = 200
#: Commits drawn in the replay plot (every k-th beyond this many).
PLOT_POINTS = 5000
# Bokeh titles do not wrap: short ones (a phone's page would widen), the rest in a caption above
_CURVE_TITLE = "Labels needed against steps H"
_CURVE_CAPTION = "One colour per adaptivity; solid: baseline, dashed: optimized."
_REPLAY_TITLE = "Replay of the commit trace"
_REPLAY_CAPTION = "n of each commit (green: pass, red: fail); the grey steps: o, the active model's accuracy."
#: URL keys of the page (each the model parameter of the same name).
URL_KEYS = ("condition", "reliability", "adaptivity", "mode", "steps", "bound")

_PRESET_PLACEHOLDER = "Choose a paper setting…"
_EXAMPLES = {
    "Example: 40 commits (n, o, d per commit)": "ci_commits.csv",
    "Example: 8 EmoContext-shaped models (predictions)": "ci_predictions.csv",
    "No trace": "",
}

def _html(text: str = "", **kwargs) -> HTML:
    """An HTML pane (with the dashboard's stylesheet) as wide as its column."""
    kwargs.setdefault("sizing_mode", "stretch_width")
    return HTML(text, **kwargs)


#: What a clause's truth or a commit's signal shows as: (class, label).
_BADGES = {"pass": ("pass", "✓ pass"), "fail": ("fail", "✗ fail"), RESULT_TRUE: ("pass", RESULT_TRUE),
           RESULT_FALSE: ("fail", RESULT_FALSE)}


# ============================================================================ numeric inputs
def _reliability_check(label: str):
    """The model's own reliability rule (exact 1 - reliability, bounded text), naming ``label``."""
    def check(text) -> float:
        try:
            delta_from_reliability(text)
            return check_number(label, text)
        except InputError as exc:
            raise exc.renamed(label) from None
    return check


def _renamed_check(check, label: str):
    """``check(value)`` with its messages naming ``label`` (what the page calls the input)."""
    def renamed(text):
        try:
            return check(text)
        except InputError as exc:
            raise exc.renamed(label) from None
    return renamed


def _exact_text(value) -> str:
    """A float as typed (``0.9999``, ``0.99999999``): never rounded to look like 1."""
    return "" if value is None else f"{float(value):.15g}"


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
        self._url_errors: list[str] = []
        self._build_widgets(trace)
        self._build_outputs()
        self._build_plots()
        self._doc = pn.state.curdoc if pn.state.curdoc is not None and pn.state.curdoc.session_context else None
        self._dirty: set = set()
        self._scheduled = False
        self.model.param.watch(lambda *_: self._refresh("result"), ["result", "error"])
        self.model.param.watch(lambda *_: self._refresh("curves"), ["curves"])
        self.model.param.watch(lambda *_: self._refresh("replay"), ["replay", "trace_error", "replaying"])
        self.model.param.watch(self._on_condition, ["condition"])
        self.model.exact.param.watch(lambda *_: self._refresh("exact"), ["running", "status", "error"])
        self.model.param.watch(lambda *_: self._refresh("exact"), ["curving"])
        if self._doc is not None:
            self.model.work_in_background()  # the exact curves off the event loop, point by point
        self._url = UrlState(keys=URL_KEYS) if sync_url else None
        if self._url is not None and self._url.active:
            self._read_url()
            self.model.param.watch(lambda *_: self._refresh("url"),
                                   ["result", "adaptivity", "mode", "steps", "reliability", "bound"])
        self._on_result()
        self._on_curves()
        self._on_replay()
        self._on_exact()

    def _refresh(self, part: str) -> None:
        """Note that ``part`` changed; refresh at once (notebooks) or on the session's next tick (served)."""
        self._dirty.add(part)
        if self._doc is None:
            self._flush()
        elif not self._scheduled:
            self._scheduled = True
            self._doc.add_next_tick_callback(self._flush)  # Bokeh runs it with the document lock

    def _flush(self) -> None:
        self._scheduled = False
        dirty, self._dirty = self._dirty, set()
        # every pane update makes Bokeh re-walk the document's models; frozen, it walks them once
        if "replay" in dirty:  # the plot's points in a message of their own, before the box shows and re-lays out
            with one_message(self._doc):  # (BokehJS applies new data asynchronously: see approvals.view._flush)
                self._replay_points()
        with self._doc.models.freeze() if self._doc is not None else contextlib.nullcontext(), one_message(self._doc):
            for part, show in (("result", self._on_result), ("curves", self._on_curves),
                               ("replay", functools.partial(self._on_replay, points=False)), ("exact", self._on_exact),
                               ("url", self._write_url)):
                if part in dirty:
                    show()

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
        self.grammar = _html(render("ci/templates/grammar.html", variables=list(VARIABLE_NAMES.items())),
                             margin=(0, 5))
        self.reliability = NumberInput(m, "reliability", label="Reliability (1 − δ)",
                                       check=_reliability_check("Reliability (1 − δ)"), format=_exact_text,
                                       css_classes=["ci-reliability"],
                                       message_classes=["ci-input-error", "ci-reliability-error"])
        self.adaptivity = pn.widgets.RadioButtonGroup.from_param(m.param.adaptivity, label="Adaptivity",
                                                                 color="light", sizing_mode="stretch_width")
        self.bound_choice = pn.widgets.RadioButtonGroup.from_param(m.param.bound, label="Bound", color="light",
                                                                   sizing_mode="stretch_width",
                                                                   css_classes=["ci-bound-choice"])
        self.exact_status = _html("", css_classes=["ci-exact-status"], margin=(0, 5))
        self.exact_cancel = pn.widgets.Button(label="Cancel", color="warning", width=90, visible=False,
                                              css_classes=["ci-exact-cancel"])
        self.exact_cancel.on_click(lambda event: self.model.exact.cancel())
        self.mode = pn.widgets.RadioButtonGroup.from_param(m.param.mode, label="Mode", color="light",
                                                           sizing_mode="stretch_width")
        steps_label = "Steps H (commits per test set)"
        self.steps = NumberInput(m, "steps", label=steps_label, check=_renamed_check(check_steps, steps_label),
                                 slider={"start": 1, "end": 128, "step": 1}, css_classes=["ci-steps"],
                                 message_classes=["ci-input-error", "ci-steps-error"])
        self.use_bound = pn.widgets.Checkbox(label="Known upper bound p on d (Pattern 2)",
                                             value=m.difference_bound is not None, css_classes=["ci-use-bound"])
        self._last_p = m.difference_bound or 0.1
        self.bound = NumberInput(m, "difference_bound", label="p (bound on d)", width=110, format=_exact_text,
                                 check=_renamed_check(validate_difference_bound, "p (bound on d)"),
                                 getter=lambda model: (self._last_p if model.difference_bound is None
                                                       else model.difference_bound),
                                 on_value=self._on_p, css_classes=["ci-bound"],
                                 message_classes=["ci-input-error", "ci-bound-error"])
        self.bound.text.disabled = m.difference_bound is None
        self.check_bound = pn.widgets.Checkbox.from_param(m.param.check_difference_bound,
                                                          label="check p on unlabeled data", margin=(30, 5, 5, 10))
        self.seconds = NumberInput(m, "seconds_per_label", label="Seconds per label", width=140,
                                   css_classes=["ci-seconds"], message_classes=["ci-input-error", "ci-seconds-error"])
        self.labelers = NumberInput(m, "labelers", label="Labelers", width=100, css_classes=["ci-labelers"],
                                    message_classes=["ci-input-error", "ci-labelers-error"])
        self.use_bound.param.watch(self._on_use_bound, "value")
        self.model.param.watch(self._on_model_bound, ["difference_bound"])
        self.other_errors = _html("", margin=(0, 5), css_classes=["ci-other-errors"])

        self.example = pn.widgets.Select(label="Commit trace", options=list(_EXAMPLES),
                                         value=next((k for k, v in _EXAMPLES.items() if v == trace), "No trace"),
                                         width=320)
        self.example.param.watch(self._on_example, "value")
        # bounded before it is complete: the browser refuses a file over the limit, the server counts chunks
        self.upload = GuardedFileDropper(parameter="commit trace", layout="compact", height=80, width=260,
                                         accepted_filetypes=[".csv", "text/csv", "text/plain"], checked=True,
                                         css_classes=["ci-upload"])
        self.upload.param.watch(self._on_upload, "value")
        self.upload.param.watch(lambda *_: self._refresh("replay"), "upload_error")
        self.alarm_on = pn.widgets.RadioButtonGroup.from_param(m.param.alarm_on, label="firstChange alarm on",
                                                               color="light", width=160)

    # ------------------------------------------------------------------ outputs
    def _build_outputs(self):
        self.lead = _html(css_classes=["ci-lead-pane"])
        self.exports = Exports("ci", self._file_stem, csv=self._csv_text, slide=self._slide, report=self._report)
        self.headlines = _html(css_classes=["ci-headlines"])
        self.sentence = _html(css_classes=["ci-sentence"])
        self.table = _html(css_classes=["ci-table"])
        self.clauses = _html(css_classes=["ci-clauses"])
        self.assumptions = _html(css_classes=["ci-assumptions"])
        self.replay_summary = _html(css_classes=["ci-replay-summary"])
        self.replay_table = _html(css_classes=["ci-replay"])
        self.trace_error = _html(margin=(0, 5), css_classes=["ci-trace-error"])

    def _build_plots(self):
        self.curve_source = ColumnDataSource({"x": [1], **{f"{a}_{k}": [1] for a in ADAPTIVITIES
                                                           for k in ("baseline", "optimized")}},
                                             name="ci-curves")
        self.reference_source = None  # Hoeffding's curves beside the exact ones: built when first needed
        fig = figure(height=360, y_axis_type="log", x_axis_label="H (commits per test set)",
                     y_axis_label="labels needed", title=_CURVE_TITLE)
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
        self._reference_renderers: list = []
        self.legend = Legend(items=items, location="top_left", click_policy="hide", background_fill_alpha=0.8)
        fig.add_layout(self.legend, "right")
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        self.y_ticker = FixedTicker(ticks=[1, 10, 100, 1000])
        fig.yaxis.ticker = self.y_ticker
        self.current_h = Span(location=self.model.steps, dimension="height", line_color="#888888", line_dash="dotted",
                              line_width=1)
        fig.add_layout(self.current_h)
        self.curve_fig = fig
        self.curve_caption = _html(f"<span class='md-note'>{_CURVE_CAPTION}</span>", margin=(10, 10, 0, 10),
                                   css_classes=["ci-curve-caption"])
        self.curve_pane = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["ci-curve"])
        self._build_replay_plot()

    def _build_replay_plot(self):
        self.replay_source = ColumnDataSource({"x": [], "n": [], "o": [], "color": [], "signal": [], "commit": []})
        rfig = figure(height=280, x_axis_label="commit", y_axis_label="accuracy", title=_REPLAY_TITLE)
        rfig.step("x", "o", source=self.replay_source, mode="center", color="#888888", line_width=1.5,
                  legend_label="o (active model)")
        rfig.scatter("x", "n", source=self.replay_source, color="color", size=9, legend_label="n (commit)")
        # the new-testset alarms of the chosen adaptivity: one glyph, its positions updated in place
        self.alarm_source = ColumnDataSource({"x": []})
        rfig.vspan(x="x", source=self.alarm_source, line_color=PALETTE[1], line_dash="dashed", line_width=2)
        rfig.add_tools(HoverTool(tooltips=[("commit", "@commit"), ("n", "@n{0.0000}"), ("o", "@o{0.0000}"),
                                           ("signal", "@signal")]))
        rfig.legend.location = "bottom_right"
        rfig.xaxis.ticker = BasicTicker(min_interval=1)
        self.replay_fig = rfig
        # Shown and hidden through a layout around it: toggling a Bokeh pane's own ``visible``
        # makes Panel copy the figure's stylesheet objects into a list of strings (TypeError).
        self.replay_box = pn.Column(_html(f'<span class="md-note">{_REPLAY_CAPTION}</span>', margin=(0, 10)),
                                    pn.pane.Bokeh(rfig, sizing_mode="stretch_width"), sizing_mode="stretch_width",
                                    css_classes=["ci-replay-plot"])

    # ------------------------------------------------------------------ layout
    def controls(self) -> pn.Column:
        """The input column (the sidebar of the served page)."""
        return pn.Column(
            self.preset,
            self.condition,
            self.condition_error,
            self.grammar,
            self.reliability,
            _html("<b>Adaptivity</b>", margin=(8, 5, 0, 5)),
            self.adaptivity,
            _html("<b>Mode</b>", margin=(8, 5, 0, 5)),
            self.mode,
            _html("<b>Bound</b> <span class='md-note'>per estimate: the paper's Hoeffding or the exact binomial "
                  "tail</span>", margin=(8, 5, 0, 5)),
            self.bound_choice,
            pn.Row(self.exact_status, self.exact_cancel, sizing_mode="stretch_width"),
            self.steps,
            _html("<b>Optimizations</b>", margin=(10, 5, 0, 5)),
            self.use_bound,
            pn.Row(self.bound, self.check_bound, sizing_mode="stretch_width"),
            _html("<b>Labeling effort</b>", margin=(10, 5, 0, 5)),
            pn.Row(self.seconds, self.labelers, sizing_mode="stretch_width"),
            self.other_errors,
            sizing_mode="stretch_width",
        )

    def results(self) -> pn.Column:
        """Headlines, tables, the plot, the replay and the assumptions (the main area)."""
        return pn.Column(
            self.lead,
            self.headlines,
            self.sentence,
            self.table,
            self.exports.row,
            self.clauses,
            self.curve_caption,
            self.curve_pane,
            _html('<h3 class="md-subtitle">Replay a commit trace</h3>'),
            # wraps onto several lines on a narrow screen (a phone) instead of widening the page
            pn.FlexBox(self.example,
                       pn.Column(_html("<span class='md-note'>or upload a CSV</span>", margin=(0, 5), width=260, sizing_mode="fixed"),
                                 self.upload, width=270),
                       pn.Column(_html("<span class='md-note'>firstChange alarm on</span>", margin=(0, 5), width=160, sizing_mode="fixed"),
                                 self.alarm_on, width=170),
                       flex_wrap="wrap", sizing_mode="stretch_width"),
            self.trace_error,
            self.replay_summary,
            self.replay_box,
            self.replay_table,
            self.assumptions,
            sizing_mode="stretch_width",
        )

    # ------------------------------------------------------------------ exports (built in a worker thread)
    def _file_stem(self) -> str:
        r = self.model.result
        return "ci" if r is None else f"ci_H{r.steps}_{r.adaptivity}_{r.mode}"

    def _csv_text(self) -> str | None:
        from .text import inputs

        r = self.model.result
        return None if r is None else csv_with_inputs(inputs(r), r.to_frame())

    def _slide(self):
        r = self.model.result
        return None if r is None else r.slide()

    def _report(self):
        r = self.model.result
        return None if r is None else result_report(r, subtitle="ease.ml/ci (Renggli et al., SysML 2019)")

    # ------------------------------------------------------------------ URL
    def _read_url(self) -> None:
        """Apply the page's URL keys; a bad value gets a message naming the key, the rule and the value."""
        url = self._url
        if url is None:  # not synced with a URL (a notebook)
            return
        values, errors = url_values(url.query())
        self._url_errors = ([url.refused] if url.refused else []) + errors
        if values:
            self.model.param.update(**values)

    def _write_url(self) -> None:
        """Keep the URL at the current valid settings (an invalid condition never reaches it)."""
        m = self.model
        if m.error or m.result is None or self._url is None:
            return
        self._url.write(dict(condition=m.condition, reliability=repr(m.reliability), adaptivity=m.adaptivity,
                             mode=m.mode, steps=str(m.steps), bound=m.bound))

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

    def _on_use_bound(self, event):
        self.bound.text.disabled = not event.new
        self.model.difference_bound = self._last_p if event.new and self.bound.valid else None

    def _on_p(self, value):
        self._last_p = value
        if self.use_bound.value and value != self.model.difference_bound:
            self.model.difference_bound = value

    def _on_model_bound(self, event):
        if event.new is not None:
            self._last_p = event.new
        self.use_bound.value = event.new is not None
        self.bound.text.disabled = event.new is None

    def _on_example(self, event):
        self.model.load_example(_EXAMPLES[event.new])

    async def _on_upload(self, event):
        for name, data in (event.new or {}).items():  # the latest file only
            data = data.encode("utf-8") if isinstance(data, str) else data
            if await self.model.load_trace_async(data, name=name):
                self.upload.accept()
            else:
                self.upload.refuse(self.model.trace_error)

    # ------------------------------------------------------------------ output handlers
    def _on_result(self, *_):
        self._show_errors()
        r = self.model.result
        if r is None:
            return
        banner = stale_html("condition") if self.model.error else ""
        self.headlines.object = banner + headline_cards(r)
        self.sentence.object = sentence_html(r)
        self.lead.object = lead_markup(r.lead(), "ci")
        self.table.object = _adaptivity_table(r)
        self.clauses.object = _clause_table(r)
        self.assumptions.object = _assumptions(r)
        self.current_h.location = r.steps

    def _show_errors(self):
        m = self.model
        err = m.error
        if err and m.error_column is not None:
            col = m.error_column
            pointer = snippet('<pre class="ci-pointer">{{ condition }}\n{{ pad }}^</pre>', condition=m.condition[:200],
                              pad=" " * min(col - 1, 200))
            self.condition_error.object = error_html(err) + str(pointer)
        else:
            self.condition_error.object = ""
        messages = ([err] if err and m.error_column is None else []) + self._url_errors
        self.other_errors.object = "".join(error_html(e) for e in messages)

    def _on_exact(self, *_):
        job, m = self.model.exact, self.model
        self.exact_cancel.visible = job.running
        if job.running:
            text = ("Searching the exact binomial counts… Hoeffding's are shown meanwhile."
                    if m.result is None or m.result.bound != "binomial" else "Updating the exact binomial counts…")
            self.exact_status.object = str(snippet('<span class="md-note">{{ text }}</span>', text=text))
        elif m.bound == "binomial" and job.status.startswith("cancelled"):
            self.exact_status.object = str(snippet('<span class="md-note">Search {{ status }}.</span>',
                                                   status=job.status))
        else:
            self.exact_status.object = ""
        self._show_caption()

    def _show_caption(self) -> None:
        c, m = self.model.curves, self.model
        caption = _CURVE_CAPTION
        if c.get("bound") == "binomial":
            known = "computing…" if m.curving else "done"
            caption += (f" Exact binomial counts at {c['computed']:,} of {c['planned']:,} values of H ({known}); "
                        "dotted: Hoeffding's counts (the paper's), for comparison.")
        caption = f'<span class="md-note">{esc(caption)}</span>'  # html.escape: a test reads its &#x27;
        if self.curve_caption.object != caption:
            self.curve_caption.object = caption

    @staticmethod
    def _curve_columns(x, c: dict) -> dict:
        """The plot's columns from curves ``c`` (the exact or Hoeffding's arrays) at the positions ``x`` selects."""
        data = {}
        for a in ADAPTIVITIES:
            data[f"{a}_baseline"] = np.asarray(c[a]["baseline"], dtype=float)[x]
            opt = c[a]["optimized"]
            optimized = np.asarray(opt, dtype=float)[x] if opt is not None else np.full(data[f"{a}_baseline"].shape,
                                                                                        np.nan)
            # a log axis cannot show 0 (conditions over d alone need no labels)
            data[f"{a}_optimized"] = np.where(optimized > 0, optimized, np.nan)
        return data

    def _on_curves(self, *_):
        c = self.model.curves
        if not c:
            return
        steps = np.asarray(c["steps"])
        exact = c.get("bound") == "binomial"
        every = np.ones(steps.shape, dtype=bool)
        known = every
        if exact:  # the exact counts computed so far: lines through them, Hoeffding's dotted beside
            known = np.zeros(steps.shape, dtype=bool)
            for a in ADAPTIVITIES:
                known |= np.isfinite(np.asarray(c[a]["baseline"], dtype=float))
        data = {"x": steps[known], **self._curve_columns(known, c)}
        self.curve_source.data = data
        self._show_reference(steps, c["hoeffding"] if exact else None)
        columns = [v for k, v in data.items() if k != "x"]
        if exact:
            columns += [v for k, v in self.reference_source.data.items() if k != "x"]
        self.y_ticker.ticks = _log_ticks(columns)
        has_opt = any(c[a]["optimized"] is not None for a in ADAPTIVITIES)
        for r in self._optimized_renderers:
            r.visible = has_opt
        self._show_caption()

    def _show_reference(self, steps, hoeffding: dict | None) -> None:
        """Hoeffding's curves, thin and dotted, beside the exact ones (the renderers are made on first use)."""
        if hoeffding is None:
            if self.reference_source is not None and len(self.reference_source.data["x"]):
                self.reference_source.data = {k: [] for k in self.reference_source.data}
            for r in self._reference_renderers:
                r.visible = False
            return
        data = {"x": steps, **self._curve_columns(np.ones(steps.shape, dtype=bool), hoeffding)}
        if self.reference_source is None:
            self.reference_source = ColumnDataSource(data, name="ci-curves-hoeffding")
            for a in ADAPTIVITIES:
                for k in ("baseline", "optimized"):
                    self._reference_renderers.append(self.curve_fig.line(
                        "x", f"{a}_{k}", source=self.reference_source, color=ADAPTIVITY_COLORS[a], line_width=1.2,
                        alpha=0.6, line_dash="dotted"))
            self.legend.items.append(LegendItem(label="dotted: Hoeffding (the paper's)",
                                                renderers=list(self._reference_renderers)))
        else:
            self.reference_source.data = data
        has_opt = any(hoeffding[a]["optimized"] is not None for a in ADAPTIVITIES)
        for i, r in enumerate(self._reference_renderers):
            r.visible = has_opt or i % 2 == 0

    def _on_replay(self, *_, points: bool = True):
        """The replay's summary, table and plot (``points=False``: not its sources, already sent)."""
        m = self.model
        rep = m.replay
        # a file refused while it arrived (too big, damaged) or when read (a bad cell): the newest message
        self.trace_error.object = error_html(self.upload.upload_error or m.trace_error)
        if points:
            self._replay_points()
        if m.replaying:
            self.replay_summary.object = str(snippet('<p class="md-note">Replaying {{ n | integer }} commits of '
                                                     '{{ source }}…</p>', n=len(m.trace),
                                                     source=m.trace.source or "the trace"))
            return
        if rep is None:
            self.replay_summary.object = render("ci/templates/no_trace.html")
            self.replay_table.object = ""
            self.replay_box.visible = False
            return
        self.replay_box.visible = True
        self.replay_summary.object = _replay_summary(rep, m)
        self.replay_table.object = _replay_table(rep)
        step = _plot_step(rep)
        self.replay_fig.title.text = _REPLAY_TITLE + (f" (every {step:,}th of {len(rep):,} commits shown)"
                                                      if step > 1 else "")

    def _replay_points(self) -> None:
        """The replay plot's sources (empty without a replay; unchanged while one is computed)."""
        m = self.model
        if m.replaying:
            return
        if m.replay is None:
            self.replay_source.data = {"x": [], "n": [], "o": [], "color": [], "signal": [], "commit": []}
            self.alarm_source.data = {"x": []}
            return
        self._plot_replay(m.replay, m.adaptivity)

    def _plot_replay(self, rep, adaptivity: str):
        """n per commit and o of the active model; at most :data:`PLOT_POINTS` commits (every k-th beyond)."""
        cols = rep.columns
        index = np.arange(0, len(rep), _plot_step(rep))
        passed = cols["passed"][index]
        self.replay_source.data = {
            "x": index + 1,
            "n": np.asarray(cols["n"], dtype=float)[index],
            "o": np.asarray(cols["o"], dtype=float)[index],
            "color": np.where(passed, PALETTE[2], PALETTE[5]),
            "signal": np.where(passed, "pass", "fail"),
            "commit": np.asarray(cols["commit"], dtype=str)[index],  # a str array: not walked for Bokeh models
        }
        alarms = np.asarray(rep.alarms(adaptivity), dtype=float)
        self.alarm_source.data = {"x": alarms[:: max(1, math.ceil(alarms.size / PLOT_POINTS))] + 0.5}


def _plot_step(rep) -> int:
    """The replay plot shows every k-th commit: at most :data:`PLOT_POINTS` points."""
    return max(1, math.ceil(len(rep) / PLOT_POINTS))


def _log_ticks(arrays) -> list:
    """Ticks at 1, 2, 5 x 10^k spanning the finite positive values (Bokeh's log ticker skips some)."""
    values = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return [1, 10, 100]
    lo, hi = math.floor(math.log10(values.min())), math.ceil(math.log10(values.max()))
    mantissas = [1, 2, 5] if hi - lo <= 4 else [1]
    return [m * 10**k for k in range(lo, hi + 1) for m in mantissas]


def url_values(query: dict) -> tuple[dict, list[str]]:
    """The page's settings in a URL query (raw text, checked) and a message per bad key (the first response too)."""
    checks = {"reliability": _reliability_check("reliability"), "steps": check_steps,
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


# ============================================================================ HTML builders
def sentence_html(r) -> str:
    """The result's sentence (the page, and its first response)."""
    return str(snippet('<p class="md-sentence">{{ text }}</p>', text=r.sentence()))


def headline_cards(r) -> str:
    """The headline numbers (the page, and its first response)."""
    sub = f"{r.adaptivity} adaptivity · {fmt.hours(r.labeler_hours)} of labeling"
    if r.bound == "binomial":
        hoeffding = r.hoeffding[r.adaptivity]["labels"]
        sub = f"exact binomial · Hoeffding: {fmt.integer(hoeffding)} · {fmt.hours(r.labeler_hours)}"
    cards = [headline_html("Labels · baseline", fmt.integer(r.labels), sub, "ci-labels")]
    if r.optimized is not None:
        sub = ("no labels: unlabeled examples suffice" if r.optimized == 0 else
               f"{r.saving:,.1f}× fewer · {fmt.hours(r.optimized_labeler_hours)}")
        cards.append(headline_html("Labels · optimized", fmt.integer(r.optimized), sub, "ci-optimized"))
        per = "—" if r.labels_per_commit is None else fmt.integer(r.labels_per_commit)
        per_sub = ("needs a clause n − o with a variance bound" if r.labels_per_commit is None
                   else f"active labeling · {fmt.hours(r.per_commit_hours)} per commit")
        cards.append(headline_html("Labels per commit", per, per_sub, "ci-labels-per-commit"))
        unl_sub = "for the clauses over d" if r.unlabeled else "none needed"
        if r.unlabeled and r.difference_bound is not None and "checked" in r.variance_source:
            unl_sub = "to check p and the clauses over d"
        cards.append(headline_html("Unlabeled examples", fmt.integer(r.unlabeled), unl_sub, "ci-unlabeled"))
    return headlines_html(cards)


def _assumptions(r) -> str:
    notes = list(ASSUMPTIONS)
    if r.variance_bound is not None:
        notes.append(f"Bennett's inequality for n − o uses the variance bound p = {r.variance_bound:g} "
                     f"from the {r.variance_source} (Sections 4.1–4.2).")
    notes += [n for n in r.notes if not n.startswith("Variance bound")]
    notes.append(TEXT_ROUNDING_NOTE)
    notes.append("Labels per commit with active labeling cover the whole H-step guarantee; the paper's 2,188 "
                 "(Section 4.1.2) is the same formula for a single commit (H = 1): ⌈2,188.85⌉ = 2,189.")
    return render("ci/templates/assumptions.html", notes=notes)


def _adaptivity_row(r, a: str) -> dict:
    v = r.by_adaptivity[a]
    row = {"name": a, "chosen": a == r.adaptivity, "labels": v["labels"],
           "swatch": Markup(swatch_html(f"palette-{PALETTE.index(ADAPTIVITY_COLORS[a])}")),
           "union": ADAPTIVITY_TITLES[a].split("(", 1)[1].rstrip(")")}
    if r.bound == "binomial":
        h = r.hoeffding[a]["labels"]
        row.update(hoeffding=h, fewer="—" if h is None or v["labels"] is None else fmt.percent(1 - v["labels"] / h))
    if r.optimized is not None:
        row.update(optimized=v["optimized"], per_commit=v["labels_per_commit"],
                   saving="—" if not v["optimized"] or v["labels"] is None else f"{v['labels'] / v['optimized']:,.1f}×")
    return row


def _adaptivity_table(r) -> str:
    return render("ci/templates/adaptivity_table.html", exact=r.bound == "binomial", optimized=r.optimized is not None,
                  rows=[_adaptivity_row(r, a) for a in ADAPTIVITIES])


_METHODS = {
    "hoeffding": "Hoeffding (Section 3.1)",
    "binomial": "exact binomial tail (Section 4.3)",
    "bennett": "Bennett with p (Section 4.1)",
    "unlabeled": "unlabeled examples (no labels)",
}


def _clause_table(r) -> str:
    clauses = [{"clause": c.clause, "baseline": c.baseline, "optimized": c.optimized,
                "tolerances": ", ".join(f"{k} ± {float(v):.4g}" for k, v in c.tolerances.items()),
                "how": _METHODS.get(c.method, c.method)} for c in r.clauses]
    return render("ci/templates/clause_table.html", adaptivity=r.adaptivity, optimized=r.optimized is not None,
                  clauses=clauses)


def _replay_summary(rep, m) -> str:
    alarms = []
    for a in ADAPTIVITIES:
        found = rep.alarms(a)
        alarms.append({"name": a, "count": len(found),
                       "after": ", ".join(str(x) for x in found[:12]) + (" …" if len(found) > 12 else "")})
    need = (rep.required.get("optimized") or rep.required.get("labels")) if rep.examples is not None else None
    return render("ci/templates/replay_summary.html",
                  source=m.trace.source if m.trace is not None and m.trace.source else "the trace", commits=len(rep),
                  passes=rep.passes, mode=rep.mode, alarms=alarms, adaptivity=m.adaptivity, examples=rep.examples,
                  need=need, warnings=list(rep.warnings))


def _replay_table(rep) -> str:
    shown = rep.head(TABLE_ROWS)
    return render("ci/templates/replay_table.html", clauses=rep.condition.split(" /\\ "), rows=shown,
                  has_dis=rep.columns["disagreements"] is not None, adaptivities=ADAPTIVITIES, badges=_BADGES,
                  shown=len(shown), total=len(rep))


def page():
    """The served CI page: controls in the sidebar, results in the main area, URL-synced."""
    return CI(sync_url=True)
