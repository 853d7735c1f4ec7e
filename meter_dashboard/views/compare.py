"""The P(A>B) page: is pipeline A really better than B, and how many runs does it take?

:class:`Compare` is a ``pn.viewable.Viewer`` over a
:class:`~meter_dashboard.models.compare.CompareModel`: widgets from the model's parameters,
headline numbers, the bootstrap distribution against 0.5 and gamma, the runs
themselves, and Noether's runs-needed curve (Bouthillier et al. 2021, Figure C.1).
It computes nothing itself.
"""
from __future__ import annotations

import io

import numpy as np
import panel as pn
import param
from bokeh.models import (BoxAnnotation, ColumnDataSource, HoverTool, Label, Legend, FixedTicker, NumeralTickFormatter,
                          Slope, Span)
from bokeh.plotting import figure

from ..models.compare import COMPARE_EXAMPLES, CompareModel
from . import formatting as fmt
from .base import DashboardView
from .style import HTML, PALETTE, error_html, esc, headline_html

BLUE, ORANGE, GREEN, VERMILLION = PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[5]
GREY = "#777777"
#: 1-2-5 ticks for log axes of counts (Bokeh shows the ones inside the range).
_LOG_TICKS = [m * 10**e for e in range(0, 13) for m in (1, 2, 5)]

_TITLES = {
    "not_significant": "Not significant",
    "significant_not_meaningful": "Significant, not meaningful",
    "significant_and_meaningful": "Significant and meaningful",
}
_COLORS = {"not_significant": "#6b7785", "significant_not_meaningful": "#b26b00",
           "significant_and_meaningful": "#1d7a46"}

def _conclusion_card(conclusion: str) -> str:
    return (f'<div class="md-headline compare-verdict-{esc(conclusion)}">'
            f'<span class="md-headline-label">Conclusion</span>'
            f'<span class="md-headline-value compare-conclusion {esc(conclusion)}" '
            f'data-conclusion="{esc(conclusion)}">{esc(_TITLES[conclusion])}</span>'
            f'<span class="md-headline-sub">A vs B, threshold γ</span></div>')


class Compare(DashboardView):
    """P(A>B) with its percentile-bootstrap interval, the decision, and the runs needed.

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
        self._build_widgets()
        self._build_plots()
        self.model.param.watch(self._on_result, ["result", "error"])
        self.model.param.watch(self._on_size, ["size", "result", "error"])
        self._on_result()
        self._on_size()
        if sync_url and pn.state.location is not None:
            pn.state.location.sync(self.model, {"example": "example", "paired": "paired", "gamma": "gamma",
                                                "alpha": "alpha", "beta": "beta", "resamples": "resamples",
                                                "seed": "seed"})

    # ------------------------------------------------------------------ widgets
    def _build_widgets(self):
        m = self.model
        self.example = pn.widgets.Select.from_param(m.param.example, name="Runs file", sizing_mode="stretch_width",
                                                    css_classes=["compare-example"])
        self.upload = pn.widgets.FileInput(accept=".csv,text/csv", sizing_mode="stretch_width", multiple=False,
                                           css_classes=["compare-upload"])
        self.upload.param.watch(self._on_upload, "value")
        self.paired = pn.widgets.Checkbox.from_param(m.param.paired, name="Rows are paired runs (same seeds/split)",
                                                     css_classes=["compare-paired"])
        self.gamma = pn.widgets.FloatInput.from_param(m.param.gamma, name="γ (meaningful threshold)", start=0.501,
                                                      end=0.999, step=0.01, sizing_mode="stretch_width",
                                                      css_classes=["compare-gamma"])
        self.alpha = pn.widgets.FloatInput.from_param(m.param.alpha, name="α (interval level 1 − α)", start=0.001,
                                                      end=0.499, step=0.01, sizing_mode="stretch_width")
        self.beta = pn.widgets.FloatInput.from_param(m.param.beta, name="β (false negatives)", start=0.001,
                                                     end=0.499, step=0.01, sizing_mode="stretch_width")
        self.resamples = pn.widgets.IntInput.from_param(m.param.resamples, name="Bootstrap resamples", start=100,
                                                        end=1_000_000, step=1000, sizing_mode="stretch_width")
        self.seed = pn.widgets.IntInput.from_param(m.param.seed, name="Seed", start=0, sizing_mode="stretch_width")
        self.error = HTML("", sizing_mode="stretch_width", css_classes=["compare-error"])
        self.download = pn.widgets.FileDownload(callback=self._pairs_csv, filename="compare-pairs.csv",
                                                label="Download the pairs (CSV)", button_type="primary",
                                                sizing_mode="stretch_width")
        self.headlines = HTML("", sizing_mode="stretch_width")
        self.sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        self.size_headlines = HTML("", sizing_mode="stretch_width")
        self.size_sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])

    def _on_upload(self, event):
        if event.new:
            self.model.load(event.new, self.upload.filename or "uploaded file")

    def _pairs_csv(self):
        buf = io.StringIO()
        if self.model.result is not None:
            self.model.result.to_frame().to_csv(buf, index=False)
        buf.seek(0)
        return buf

    # ------------------------------------------------------------------ plots
    def _build_plots(self):
        # Bootstrap distribution of P(A>B) against 0.5 and gamma.
        self.hist_source = ColumnDataSource({"left": [], "right": [], "count": []})
        fig = figure(height=300, sizing_mode="stretch_width", x_range=(0, 1), x_axis_label="P(A>B)",
                     y_axis_label="share of bootstrap resamples", tools="pan,wheel_zoom,box_zoom,reset,save",
                     toolbar_location="above", title="Bootstrap distribution of P(A>B)")
        self.region_low = BoxAnnotation(right=0.5, fill_color="#6b7785", fill_alpha=0.07)
        self.region_mid = BoxAnnotation(left=0.5, right=0.75, fill_color="#e69f00", fill_alpha=0.08)
        self.region_high = BoxAnnotation(left=0.75, fill_color="#009e73", fill_alpha=0.08)
        for box in (self.region_low, self.region_mid, self.region_high):
            fig.add_layout(box)
        bars = fig.quad(left="left", right="right", bottom=0, top="count", source=self.hist_source, color=BLUE,
                        alpha=0.55, line_color="white")
        self.ci_box = BoxAnnotation(left=0.4, right=0.6, fill_color=BLUE, fill_alpha=0.12, line_color=BLUE,
                                    line_dash="dashed")
        fig.add_layout(self.ci_box)
        self.estimate = Span(location=0.5, dimension="height", line_color=BLUE, line_width=3)
        self.half = Span(location=0.5, dimension="height", line_color="#333", line_dash="dotted", line_width=1.5)
        self.gamma_line = Span(location=0.75, dimension="height", line_color=GREEN, line_dash="dashed", line_width=2)
        for span in (self.estimate, self.half, self.gamma_line):
            fig.add_layout(span)
        self.gamma_label = Label(x=0.75, y=5, y_units="screen", text="γ", text_color=GREEN, x_offset=4)
        fig.add_layout(Label(x=0.5, y=5, y_units="screen", text="chance", text_color="#333", x_offset=4))
        fig.add_layout(self.gamma_label)
        fig.add_tools(HoverTool(renderers=[bars], tooltips=[("P(A>B)", "@left{0.000}–@right{0.000}"),
                                                           ("share", "@count{0.0%}")]))
        fig.yaxis.formatter = NumeralTickFormatter(format="0%")
        fig.toolbar.logo = None
        self.hist_fig = fig
        self.hist_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["compare-bootstrap-plot"])

        # The runs: A against B, wins above the diagonal.
        self.runs_source = ColumnDataSource({"a": [], "b": [], "color": [], "outcome": [], "run": []})
        fig = figure(height=300, sizing_mode="stretch_width", x_axis_label="B's performance (higher is better)",
                     y_axis_label="A's performance", tools="pan,wheel_zoom,box_zoom,reset,save",
                     toolbar_location="above", title="The runs: above the diagonal A wins")
        pts = fig.scatter("b", "a", source=self.runs_source, color="color", size=9, alpha=0.8,
                          legend_field="outcome")
        fig.add_layout(Slope(gradient=1, y_intercept=0, line_color="#333", line_dash="dotted"))
        fig.add_tools(HoverTool(renderers=[pts], tooltips=[("pair", "@run"), ("A", "@a{0.0000}"),
                                                           ("B", "@b{0.0000}")]))
        fig.legend.location = "bottom_right"
        fig.toolbar.logo = None
        self.runs_fig = fig
        self.runs_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["compare-runs-plot"])

        # Noether's runs needed against gamma (Figure C.1).
        self.curve_source = ColumnDataSource({"gamma": [], "runs": []})
        self.star_source = ColumnDataSource({"gamma": [], "runs": []})
        fig = figure(height=300, sizing_mode="stretch_width", x_axis_label="threshold γ", y_axis_type="log",
                     y_axis_label="runs needed", tools="pan,wheel_zoom,box_zoom,reset,save",
                     toolbar_location="above", title="Runs needed to detect P(A>B) > γ (Noether)")
        line = fig.line("gamma", "runs", source=self.curve_source, color=BLUE, line_width=2.5)
        star = fig.scatter("gamma", "runs", source=self.star_source, marker="star", size=18, color=VERMILLION)
        self.have_source = ColumnDataSource({"gamma": [], "runs": []})
        have = fig.line("gamma", "runs", source=self.have_source, color=GREY, line_dash="dashed", line_width=1.5)
        fig.add_tools(HoverTool(renderers=[line], mode="vline", tooltips=[("γ", "@gamma{0.00}"),
                                                                          ("runs", "@runs{0,0}")]))
        fig.add_layout(Legend(items=[("runs needed", [line]), ("your γ", [star]),
                                     ("runs you have", [have])],
                              location="top_right", background_fill_alpha=0.85))
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.yaxis.ticker = FixedTicker(ticks=_LOG_TICKS)
        fig.toolbar.logo = None
        self.curve_fig = fig
        self.curve_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["compare-size-plot"])

    # ------------------------------------------------------------------ updates
    def _on_result(self, *events):
        m = self.model
        self.error.object = error_html(m.error)
        res = m.result
        if res is None:
            return
        lo, hi = res.ci
        pairing = ("paired runs" if res.paired else "runs paired at random (seed "
                   f"{res.seed})" + (f", {res.dropped} left out" if res.dropped else ""))
        self.headlines.object = '<div class="compare-headlines">' + "".join([
            headline_html("P(A>B)", f"{res.p_a_gt_b:.3f}", f"A won {res.wins} of {res.runs}"
                          + (f" ({res.ties} ties)" if res.ties else ""), css_class="compare-p"),
            headline_html(f"{100 * (1 - res.alpha):g}% interval", f"[{lo:.3f}, {hi:.3f}]",
                          f"percentile bootstrap, {res.resamples:,} resamples", css_class="compare-ci"),
            _conclusion_card(res.conclusion),
            headline_html("Runs", fmt.integer(res.runs), pairing, css_class="compare-runs"),
        ]) + "</div>"
        short = res.runs < res.runs_needed
        self.sentence.object = (
            f"<p>{esc(res.sentence)} A beat B in {res.wins} of {res.runs} {esc(pairing)}: P(A>B) = "
            f"{res.p_a_gt_b:.3f}, and resampling the pairs puts it in [{lo:.3f}, {hi:.3f}] with "
            f"{100 * (1 - res.alpha):g}% confidence. The interval is compared with 0.5 (chance) for significance and "
            f"with γ = {res.gamma:g} for a meaningful improvement (Bouthillier et al. 2021, Appendix C.6)."
            + (f" With {res.runs} runs the test may miss a real improvement: Noether asks for {res.runs_needed}."
               if short else "")
            + "</p>")
        # Bootstrap histogram (shares of resamples per distinct value of P).
        values, counts = np.unique(res.replicates, return_counts=True)
        width = 1.0 / res.runs
        self.hist_source.data = {"left": values - width / 2, "right": values + width / 2,
                                 "count": counts / counts.sum()}
        self.ci_box.left, self.ci_box.right = lo - width / 2, hi + width / 2
        self.estimate.location = res.p_a_gt_b
        self.gamma_line.location = res.gamma
        self.gamma_label.x = res.gamma
        self.region_mid.right = res.gamma
        self.region_high.left = res.gamma
        win = res.a > res.b
        tie = res.a == res.b
        self.runs_source.data = {
            "a": res.a, "b": res.b, "run": np.arange(1, res.runs + 1),
            "color": np.where(win, GREEN, np.where(tie, GREY, VERMILLION)),
            "outcome": np.where(win, "A wins", np.where(tie, "tie", "B wins")).tolist(),
        }

    def _on_size(self, *events):
        m = self.model
        size = m.size
        if size is None:
            return
        have = m.result.runs if m.result is not None else None
        self.size_headlines.object = '<div class="compare-headlines">' + "".join([
            headline_html("Runs needed", fmt.integer(size.runs),
                          f"α = {size.alpha:g}, β = {size.beta:g}, γ = {size.gamma:g}", css_class="compare-runs-needed"),
            headline_html("Runs you have", fmt.integer(have) if have is not None else "—",
                          "enough" if have is not None and have >= size.runs else "fewer than needed"),
        ]) + "</div>"
        self.size_sentence.object = (
            f"<p>To detect P(A>B) &gt; γ = {size.gamma:g} with at most {100 * size.alpha:g}% false positives and "
            f"{100 * size.beta:g}% false negatives, Noether's rule for the Mann–Whitney test asks for "
            f"N ≥ ((z<sub>1−α</sub> − z<sub>β</sub>) / (√6 (½ − γ)))² = {size.real:.2f}, so <b>{size.runs}</b> runs "
            f"of each pipeline. Thresholds close to 0.5 get expensive fast: the paper recommends γ = 0.75 "
            f"(29 runs at α = β = 0.05).</p>")
        gammas, runs = m.curve()
        self.curve_source.data = {"gamma": gammas, "runs": runs}
        self.star_source.data = {"gamma": [size.gamma], "runs": [size.runs]}
        self.have_source.data = ({"gamma": [gammas[0], gammas[-1]], "runs": [have, have]} if have is not None
                                 else {"gamma": [], "runs": []})

    # ------------------------------------------------------------------ layout
    @staticmethod
    def _section(title, intro, controls, results, css):
        return pn.Column(
            HTML(f"<h2>{esc(title)}</h2><div class='md-note'>{intro}</div>", sizing_mode="stretch_width"),
            pn.Row(pn.Column(*controls, width=290), pn.Column(*results, sizing_mode="stretch_width"),
                   sizing_mode="stretch_width"),
            sizing_mode="stretch_width", css_classes=["compare-section", css], margin=(0, 0, 24, 0),
        )

    def results(self):
        if not hasattr(self, "_results"):
            compare = self._section(
                "Is pipeline A better than B?",
                "One performance value per run of each pipeline (higher is better): CSV with columns a and b. "
                "P(A>B) is the share of runs in which A beats B (Bouthillier et al. 2021, Eq. 9); ties count as "
                "not beating. Unpaired runs are paired at random (Appendix C.4).",
                [self.example, self.upload, self.paired, self.gamma, self.alpha, self.resamples, self.seed,
                 self.error, self.download],
                [self.headlines, self.sentence, pn.Row(self.hist_plot, self.runs_plot, sizing_mode="stretch_width"),
                 HTML("<div class='md-note'>Left: how P(A&gt;B) varies when the pairs are resampled — "
                              "solid line the estimate, blue band the interval, dotted line chance (0.5), dashed "
                              "green line γ; background: not significant (grey), not meaningful (orange), "
                              "meaningful (green). Right: each pair of runs.</div>", sizing_mode="stretch_width")],
                "compare-main",
            )
            size = self._section(
                "How many runs do you need?",
                "Appendix C.3: Noether's sample size for detecting P(A>B) &gt; γ reliably.",
                [self.beta, HTML("<div class='md-note'>α and γ are shared with the comparison above."
                                         "</div>")],
                [self.size_headlines, self.size_sentence, self.curve_plot],
                "compare-size",
            )
            self._results = pn.Column(compare, size, sizing_mode="stretch_width", css_classes=["compare-page"])
        return self._results


def page():
    """The served P(A>B) page (URL-synced settings)."""
    return Compare(sync_url=True)


__all__ = ["Compare", "page", "COMPARE_EXAMPLES"]
