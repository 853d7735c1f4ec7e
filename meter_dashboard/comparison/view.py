"""The P(A>B) page: is pipeline A really better than B, and how many runs does it take?

:class:`Compare` is a :class:`~meter_dashboard.ui.base.DashboardView` over a
:class:`~meter_dashboard.comparison.model.CompareModel`: number inputs
(:class:`~meter_dashboard.ui.inputs.NumberInput`: a bad value is refused beside the input
and the results keep their last valid state, with a banner saying so) drawn, with the runs
file's select and the messages, by :class:`~meter_dashboard.ui.form.Form` components (one
Bokeh model each, issue 29), headline numbers,
the bootstrap distribution against 0.5 and gamma, the runs themselves, and Noether's
runs-needed curve (Bouthillier et al. 2021, Figure C.1).  It computes nothing itself;
uploads are parsed in a worker thread and comparisons of many runs are computed in one.

P(A>B) and its interval are shown with three decimals: a share of runs, read against 0.5
and gamma.
"""
from __future__ import annotations


import numpy as np
import panel as pn
import param
from bokeh.models import (
    BoxAnnotation,
    BoxZoomTool,
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    Label,
    Legend,
    LegendItem,
    Node,
    NumeralTickFormatter,
    Quad,
    Scatter,
    Slope,
    Span,
)
from bokeh.core.properties import field

from ..core import colors
from ..core import formatting as fmt
from ..core.plots import GREY, LOG_TICKS, figure, glyph
from ..core.plots import line as plain_line
from ..core.html import render
from ..core.report import result_report
from ..ui.base import DashboardView
from ..ui.parts import PageSection
from ..ui.exports import Exports, lead_markup
from ..ui.form import Field, Form, Note, Slot, linked
from ..ui.inputs import NumberInput
from ..ui.sections import document_dispatch, held, section
from ..ui.urlstate import UrlLink
from ..ui.style import HTML, PALETTE, Bar, error_html, headline_html, headlines_html, stale_html
from ..ui.upload import TableUpload
from .model import COMPARE_EXAMPLES, CompareModel
from .text import inputs

__all__ = ["Compare", "page", "COMPARE_EXAMPLES"]

BLUE, GREEN, VERMILLION = PALETTE[0], PALETTE[2], PALETTE[5]
#: The height an empty HTML pane takes (its default margins, 5 px above and below).
_EMPTY_PANE_PX = 10
#: Pairs drawn in the scatter plot (evenly spread over all pairs when there are more).
MAX_POINTS = 5000

_TITLES = {
    "not_significant": "Not significant",
    "significant_not_meaningful": "Significant, not meaningful",
    "significant_and_meaningful": "Significant and meaningful",
}


def _visuals(color, alpha: float = 1.0) -> dict:
    """Fill and line of one colour and alpha (what ``fig.scatter(color=..., alpha=...)`` sets)."""
    return {"fill_color": color, "line_color": color, "hatch_color": color, "fill_alpha": alpha, "line_alpha": alpha,
            "hatch_alpha": alpha}


def _share_label_policy(fig) -> None:
    """Both axes label every tick with one (stateless) policy model: a Bokeh model fewer, the plot unchanged."""
    fig.xaxis.major_label_policy = fig.yaxis[0].major_label_policy


def _share_box_parts(fig, boxes: list) -> None:
    """The plot's shaded boxes (and its box-zoom overlay) share what is the same for all (stateless models).

    Their interaction handles (never shown: no box is editable) and the frame's edges the open sides
    extend to: 14 Bokeh models fewer for the bootstrap plot, the plot unchanged.
    """
    overlay = fig.select_one(BoxZoomTool).overlay
    handles = overlay.handles
    edges: dict = {}
    for box in boxes:
        box.handles = handles
        for side in ("left", "right", "top", "bottom"):
            edge = getattr(box, side)
            if isinstance(edge, Node):
                setattr(box, side, edges.setdefault((edge.target, edge.symbol), edge))


def _share_selection_policy(sources: list) -> None:
    """The plots' sources share one selection policy (stateless): a Bokeh model each fewer, nothing changes."""
    for source in sources[1:]:
        source.selection_policy = sources[0].selection_policy


def _ink() -> str:
    """Text and reference-line colour that reads on the page's theme."""
    return colors.ink(pn.config.theme == "dark")[0]


def _share(value: float) -> str:
    """P(A>B) or an interval end: a share of runs, three decimals."""
    return f"{value:.3f}"


def _conclusion_card(conclusion: str) -> str:
    return render("comparison/templates/conclusion.html", conclusion=conclusion, title=_TITLES[conclusion])


def result_html(res) -> tuple[str, str]:
    """(headline cards, sentence) of a comparison: the page, and its first response."""
    lo, hi = res.ci
    pairing = ("paired runs" if res.paired else f"runs paired at random (seed {res.seed})"
               + (f", {fmt.integer(res.dropped)} left out" if res.dropped else ""))
    cards = headlines_html([
        headline_html("P(A>B)", _share(res.p_a_gt_b), f"A won {fmt.integer(res.wins)} of {fmt.integer(res.runs)}"
                      + (f" ({fmt.integer(res.ties)} ties)" if res.ties else ""), css_class="compare-p"),
        headline_html(f"{fmt.percent(1 - res.alpha)} interval", f"[{_share(lo)}, {_share(hi)}]",
                      f"percentile bootstrap, {fmt.integer(res.resamples)} resamples", css_class="compare-ci"),
        _conclusion_card(res.conclusion),
        headline_html("Runs", fmt.integer(res.runs), pairing, css_class="compare-runs"),
    ], "compare-headlines")
    return cards, render("comparison/templates/sentence.html", res=res, pairing=pairing, share=_share)


def _number(model: CompareModel, key: str, label: str) -> NumberInput:
    """A number box of a form: ``compare-<key>`` on its field, ``compare-<key>-message`` on its message."""
    return NumberInput(model, key, label=label, css_classes=[f"compare-{key}"],
                       message_classes=[f"compare-{key}-message"], field=key)


class CompareInputs(PageSection):
    """The runs and the settings: a shipped example or an upload, the pairing, the number inputs, what went wrong.

    Two :class:`~meter_dashboard.ui.form.Form` components (one Bokeh model each, issue 29) around the drop
    area and the pairing checkbox: the runs file's select above them, the numbers and the message under.
    """

    model = param.ClassSelector(class_=CompareModel)

    def __init__(self, model: CompareModel, dispatch, **params):
        super().__init__(model=model, **params)
        m = model
        self.example = linked(m, "example")
        self.table_file = TableUpload(m, dispatch, parameter="runs file", css="compare-upload")
        self.upload = self.table_file.dropper
        self.paired = linked(m, "paired", offered=[True, False], shown=lambda on: "true" if on else "false",
                             parsed=lambda text: text == "true")
        self.boxes = {
            "gamma": _number(m, "gamma", "γ (meaningful threshold)"),
            "alpha": _number(m, "alpha", "α (interval level 1 − α)"),
            "beta": _number(m, "beta", "β (false negatives)"),
            "resamples": _number(m, "resamples", "Bootstrap resamples"),
            "seed": _number(m, "seed", "Seed"),
        }
        self.error = Slot()
        examples = [(name, name) for name in m.param.example.objects]
        self.file_form = Form([Field("example", "Runs file", self.example, kind="select", classes=("compare-example",),
                                     description=m.param.example.doc or "", options=examples)],
                              prefix="compare-file", css_classes=["compare-file-form"])
        self.form = Form([Field("paired", "Paired runs (same seeds/split)", self.paired, kind="checkbox",
                                classes=("compare-paired",), description=m.param.paired.doc or ""),
                          *(self.boxes[key].field() for key in ("gamma", "alpha", "resamples", "seed")),
                          Note(slot=self.error, classes=("compare-error",), name="error")],
                         prefix="compare", css_classes=["compare-form"])
        self._show()

    @param.depends("model.error", "model.busy", watch=True)
    @held
    def _show(self) -> None:
        """Why the last runs or settings were refused, and whether new runs are being compared."""
        m = self.model
        self.error.show(error_html(m.error) + ('<div class="md-note">Comparing the new runs…</div>' if m.busy
                                               else ""))

    def parts(self) -> list:
        """The comparison's inputs, in the order shown (β is the runs-needed section's), straight in one column."""
        return [self.file_form, self.upload, self.form]


class CompareAnswer(PageSection):
    """The answer in words and numbers: a stale banner, the lead sentence, the headline cards and the sentence."""

    model = param.ClassSelector(class_=CompareModel)

    def __init__(self, model: CompareModel, boxes: dict, **params):
        super().__init__(model=model, **params)
        self._boxes = boxes
        self.stale = HTML("", sizing_mode="stretch_width", css_classes=["compare-stale"])
        self.lead = HTML("", sizing_mode="stretch_width", css_classes=["compare-lead-pane"])
        self.headlines = HTML("", sizing_mode="stretch_width")
        self.sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        # the boxes' refusals are not the model's parameters: the banner follows them through a bound side
        # effect on their text (checked first; watching their message panes would make one per box)
        pn.bind(self._show_stale, *(box.text.param.value for box in boxes.values()), watch=True)
        self._show_stale()
        self._show()

    @param.depends("model.error", "model.result", watch=True)
    @held
    def _show_stale(self, *messages) -> None:
        """A banner while the results shown are the last valid ones (a refused input or file)."""
        bad = bool(self.model.error) or not all(box.valid for box in self._boxes.values())
        self.stale.object = stale_html("comparison") if bad and self.model.result is not None else ""

    @param.depends("model.result", watch=True)
    @held
    def _show(self) -> None:
        """The lead sentence, the headline cards and the sentence of the result (the last ones while none)."""
        res = self.model.result
        if res is None:
            self.lead.object = ""
            return
        self.headlines.object, self.sentence.object = result_html(res)
        self.lead.object = lead_markup(res.lead(), "compare")

    def parts(self) -> list:
        return [self.stale, self.lead, self.headlines, self.sentence]


class CompareFigures(PageSection):
    """The bootstrap distribution of P(A>B) against 0.5 and γ, and the runs themselves."""

    model = param.ClassSelector(class_=CompareModel)

    def __init__(self, model: CompareModel, **params):
        super().__init__(model=model, **params)
        self._build_histogram()
        self._build_runs()
        self._on_result()

    def _build_runs(self):
        self.runs_source = ColumnDataSource({"a": [], "b": [], "color": [], "outcome": [], "run": []})
        fig = figure(height=300, x_axis_label="B's performance (higher is better)", y_axis_label="A's performance",
                      title="The runs: above the diagonal A wins")
        pts = glyph(fig, self.runs_source, Scatter(x="b", y="a", size=9, **_visuals(field("color"), 0.8)))
        fig.add_layout(Legend(items=[LegendItem(label=field("outcome"), renderers=[pts])]))
        fig.add_layout(Slope(gradient=1, y_intercept=0, line_color=_ink(), line_dash="dotted"))
        fig.add_tools(HoverTool(renderers=[pts], tooltips=[("pair", "@run"), ("A", "@a{0.0000}"),
                                                           ("B", "@b{0.0000}")]))
        fig.legend.location = "bottom_right"
        fig.xaxis.formatter = fig.yaxis[0].formatter  # stateless: one model for both axes
        _share_label_policy(fig)
        self.runs_fig = fig
        self.runs_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["compare-runs-plot"])

    def _build_histogram(self):
        """Bootstrap distribution of P(A>B) against 0.5 and gamma."""
        ink = _ink()
        self.hist_source = ColumnDataSource({"left": [], "right": [], "count": []})
        fig = figure(height=300, x_range=(0, 1), x_axis_label="P(A>B)", y_axis_label="share of bootstrap resamples",
                      title="Bootstrap distribution of P(A>B)")
        self.region_low = BoxAnnotation(right=0.5, fill_color=GREY, fill_alpha=0.08)
        self.region_mid = BoxAnnotation(left=0.5, right=0.75, fill_color=PALETTE[1], fill_alpha=0.08)
        self.region_high = BoxAnnotation(left=0.75, fill_color=GREEN, fill_alpha=0.08)
        for box in (self.region_low, self.region_mid, self.region_high):
            fig.add_layout(box)
        bars = glyph(fig, self.hist_source, Quad(left="left", right="right", bottom=0, top="count",
                                                 **_visuals(BLUE, 0.55)))
        self.ci_box = BoxAnnotation(left=0.4, right=0.6, fill_color=BLUE, fill_alpha=0.12, line_color=BLUE,
                                    line_dash="dashed")
        fig.add_layout(self.ci_box)
        self.estimate = Span(location=0.5, dimension="height", line_color=BLUE, line_width=3)
        self.half = Span(location=0.5, dimension="height", line_color=ink, line_dash="dotted", line_width=1.5)
        self.gamma_line = Span(location=0.75, dimension="height", line_color=GREEN, line_dash="dashed", line_width=2)
        for span in (self.estimate, self.half, self.gamma_line):
            fig.add_layout(span)
        self.gamma_label = Label(x=0.75, y=5, y_units="screen", text="γ", text_color=GREEN, x_offset=4)
        fig.add_layout(Label(x=0.5, y=5, y_units="screen", text="chance", text_color=ink, x_offset=4))
        fig.add_layout(self.gamma_label)
        fig.add_tools(HoverTool(renderers=[bars], tooltips=[("P(A>B)", "@left{0.000}–@right{0.000}"),
                                                           ("share", "@count{0.0%}")]))
        fig.yaxis.formatter = NumeralTickFormatter(format="0%")
        _share_label_policy(fig)
        _share_box_parts(fig, [self.region_low, self.region_mid, self.region_high, self.ci_box])
        self.hist_fig = fig
        self.hist_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["compare-bootstrap-plot"])

    @param.depends("model.result", watch=True)
    @held
    def _on_result(self):
        """The plots follow the result in place (their data sources change, never the figures)."""
        res = self.model.result
        if res is None:
            return
        self._update_histogram(res)
        self._update_runs(res)

    def _update_histogram(self, res):
        wins = np.flatnonzero(res.counts)
        width = 1.0 / res.runs
        values = wins / res.runs
        self.hist_source.data = {"left": values - width / 2, "right": values + width / 2,
                                 "count": res.counts[wins] / res.resamples}
        lo, hi = res.ci
        self.ci_box.left, self.ci_box.right = lo - width / 2, hi + width / 2
        self.estimate.location = res.p_a_gt_b
        self.gamma_line.location = res.gamma
        self.gamma_label.x = res.gamma
        self.region_mid.right = res.gamma
        self.region_high.left = res.gamma

    def _update_runs(self, res):
        shown = np.arange(res.runs)
        if res.runs > MAX_POINTS:
            shown = np.unique(np.linspace(0, res.runs - 1, MAX_POINTS).astype(int))
        a, b = res.a[shown], res.b[shown]
        win, tie = a > b, a == b
        self.runs_source.data = {
            "a": a, "b": b, "run": shown + 1,
            "color": np.where(win, GREEN, np.where(tie, GREY, VERMILLION)),
            "outcome": np.where(win, "A wins", np.where(tie, "tie", "B wins")).tolist(),
        }
        self.runs_fig.title.text = ("The runs: above the diagonal A wins" if shown.size == res.runs else
                                    f"{fmt.integer(shown.size)} of the {fmt.integer(res.runs)} pairs: above the "
                                    "diagonal A wins")

    def parts(self) -> list:
        return [
            Bar(*(pn.Column(plot, sizing_mode="stretch_width", css_classes=["compare-plot"])
                  for plot in (self.hist_plot, self.runs_plot)),
                sizing_mode="stretch_width", css_classes=["compare-plots"]),
            HTML("<div class='md-note'>Left: how P(A&gt;B) varies when the pairs are resampled — solid line the "
                 "estimate, blue band the interval, dotted line chance (0.5), dashed green line γ; background: "
                 "not significant (grey), not meaningful (orange), meaningful (green). Right: each pair of "
                 "runs.</div>", sizing_mode="stretch_width")]


class RunsNeeded(PageSection):
    """Noether's runs needed for α, β and γ (Appendix C.3): cards, a sentence and the curve of Figure C.1."""

    model = param.ClassSelector(class_=CompareModel)

    def __init__(self, model: CompareModel, beta, **params):
        super().__init__(model=model, **params)
        self.beta = beta
        # β's box and the shared-settings note: one form (one Bokeh model)
        shared = Note("<div class='md-note'>α and γ are shared with the comparison above.</div>")
        self.form = Form([beta.field(), shared], prefix="compare-size", css_classes=["compare-size-form"])
        self.size_headlines = HTML("", sizing_mode="stretch_width")
        self.size_sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        self._build_curve()
        self._on_size()

    def _build_curve(self):
        """Noether's runs needed against gamma (Figure C.1)."""
        gammas, runs = self.model.curve()
        self.curve_source = ColumnDataSource({"gamma": gammas, "runs": runs})
        self.star_source = ColumnDataSource({"gamma": [], "runs": []})
        self.have_source = ColumnDataSource({"gamma": [], "runs": []})
        fig = figure(height=300, x_axis_label="threshold γ", y_axis_type="log", y_axis_label="runs needed",
                      title="Runs needed to detect P(A>B) > γ (Noether)")
        line = plain_line(fig, self.curve_source, "gamma", "runs", line_color=BLUE, line_width=2.5)
        star = glyph(fig, self.star_source, Scatter(x="gamma", y="runs", marker="star", size=18,
                                                    **_visuals(VERMILLION)))
        have = plain_line(fig, self.have_source, "gamma", "runs", line_color=GREY, line_dash="dashed", line_width=1.5)
        fig.add_tools(HoverTool(renderers=[line], mode="vline", tooltips=[("γ", "@gamma{0.00}"),
                                                                          ("runs", "@runs{0,0}")]))
        fig.add_layout(Legend(items=[("runs needed", [line]), ("your γ", [star]), ("runs you have", [have])],
                              location="top_right", background_fill_alpha=0.85))
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.yaxis.ticker = FixedTicker(ticks=LOG_TICKS)
        _share_label_policy(fig)
        self.curve_fig = fig
        self.curve_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["compare-size-plot"])

    def _have(self) -> int | None:
        return self.model.result.runs if self.model.result is not None else None

    def cards_text(self) -> str:
        """The runs needed and the runs you have, as headline cards."""
        size, have = self.model.size, self._have()
        if size is None:
            return ""
        return headlines_html([
            headline_html("Runs needed", fmt.integer(size.runs),
                          f"α = {fmt.number(size.alpha)}, β = {fmt.number(size.beta)}, γ = {fmt.number(size.gamma)}",
                          css_class="compare-runs-needed"),
            headline_html("Runs you have", fmt.integer(have) if have is not None else "—",
                          "enough" if have is not None and have >= size.runs else "fewer than needed"),
        ], "compare-headlines")

    @param.depends("model.size", "model.result", watch=True)
    @held
    def _on_size(self):
        """The cards, the sentence, the curve, your γ and the runs you have, in place."""
        m = self.model
        size, have = m.size, self._have()
        self.size_headlines.object = self.cards_text()
        if size is None:
            self.size_sentence.object = ""
            return
        self.size_sentence.object = render("comparison/templates/size_sentence.html", size=size)
        gammas, runs = m.curve()
        self.curve_source.data = {"gamma": gammas, "runs": runs}
        self.star_source.data = {"gamma": [size.gamma], "runs": [size.runs]}
        self.have_source.data = ({"gamma": [gammas[0], gammas[-1]], "runs": [have, have]} if have is not None
                                 else {"gamma": [], "runs": []})

    def layout(self):
        return section(
            "How many runs do you need?",
            "Appendix C.3: Noether's sample size for detecting P(A&gt;B) &gt; γ reliably.",
            [self.form], [self.size_headlines, self.size_sentence, self.curve_plot], "compare", "compare-size")


class Compare(DashboardView):
    """P(A>B) with its percentile-bootstrap interval, the decision, and the runs needed.

    The page is four sections over one :class:`CompareModel`: :class:`CompareInputs`,
    :class:`CompareAnswer`, :class:`CompareFigures` and :class:`RunsNeeded`, with the exports.

    Parameters
    ----------
    runs : path, bytes or (a, b), optional
        Runs to compare (default: the shipped paired example).
    model : CompareModel, optional
        Drive an existing model instead of a new one.
    sync_url : bool
        Keep the settings in the page URL (served pages).
    **params
        Model parameters: ``gamma``, ``alpha``, ``beta``, ``resamples``, ``seed``, ``paired``.

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Compare("runs.csv", gamma=0.75)  # doctest: +SKIP
    """

    title = "P(A>B)"
    extensions = ("filedropper",)

    model = param.ClassSelector(class_=CompareModel)

    def __init__(self, runs=None, *, model: CompareModel | None = None, sync_url: bool = False, **params):
        model_params = {k: params.pop(k) for k in list(params) if k in CompareModel.param and k != "name"}
        if model is None:
            model = CompareModel(runs, **model_params)
        else:
            if runs is not None:
                model.load(runs)
            if model_params:
                model.param.update(**model_params)
        super().__init__(model=model, **params)
        self._dispatch = document_dispatch()
        served = pn.state.curdoc is not None and pn.state.curdoc.session_context is not None
        self.model.param.update(offload=served)
        self.model.dispatch = self._dispatch
        self._build_sections()
        self.link_message = HTML("", sizing_mode="stretch_width", css_classes=["compare-link-message"])
        link = UrlLink({"example": (self.model, "example", None), "paired": (self.model, "paired", None),
                        **{key: (self.model, key, box) for key, box in self.inputs.items()}})
        if sync_url and pn.state.location is not None:
            self.link_message.object = "".join(error_html(m) for m in link.apply())
            link.follow()

    def _build_sections(self):
        m = self.model
        self.settings = CompareInputs(m, self._dispatch)
        self.answer = CompareAnswer(m, self.settings.boxes)
        self.figures = CompareFigures(m)
        self.runs_needed = RunsNeeded(m, self.settings.boxes["beta"])
        self.inputs, self.table_file, self.upload = self.settings.boxes, self.settings.table_file, self.settings.upload
        self.headlines, self.lead = self.answer.headlines, self.answer.lead
        self.curve_source = self.runs_needed.curve_source
        figures, needed = self.figures, self.runs_needed
        _share_selection_policy([figures.hist_source, figures.runs_source, needed.curve_source, needed.star_source,
                                 needed.have_source])
        self.exports = Exports("compare", self._file_stem, csv=self._pairs_csv, slide=self._slide, report=self._report)

    def _file_stem(self) -> str:
        res = self.model.result
        return "compare" if res is None else f"compare_{res.runs}-runs_gamma{res.gamma:g}_alpha{res.alpha:g}"

    def _pairs_csv(self) -> str | None:
        """The pairs used (a, b, a > b), with the inputs as ``# name: value`` lines."""
        return self.table_file.result_csv(inputs)

    def _slide(self):
        res = self.model.result
        return None if res is None else res.slide()

    def _report(self):
        res = self.model.result
        return None if res is None else result_report(res, subtitle="P(A>B) (Bouthillier et al., MLSys 2021)")

    # ------------------------------------------------------------------ layout
    def results(self):
        if getattr(self, "_results", None) is None:
            compare = section(
                "Is pipeline A better than B?",
                "One performance value per run of each pipeline (higher is better): CSV with columns a and b. "
                "P(A>B) is the share of runs in which A beats B (Bouthillier et al. 2021, Eq. 9); ties count as "
                "not beating. Unpaired runs are paired at random (Appendix C.4).",
                self.settings.parts(), [*self.answer.parts(), self.exports.row, *self.figures.parts()],
                "compare", "compare-main")
            # the link's message only when the link had something refused (most links have none); without it,
            # the section keeps the place the empty pane took (its margins: 10 px), so nothing moves
            link = [self.link_message] if self.link_message.object else []
            if not link:
                compare.margin = (_EMPTY_PANE_PX, 0, 24, 0)
            self._results = pn.Column(*link, compare, self.runs_needed.__panel__(),
                                      sizing_mode="stretch_width", css_classes=["compare-page"])
        return self._results


def page():
    """The served P(A>B) page (URL-synced settings)."""
    return Compare(sync_url=True)
