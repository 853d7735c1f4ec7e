"""The Ladder page: replay a leaderboard, size its test set, watch the boosting attack.

:class:`Ladder` is a ``pn.viewable.Viewer`` over three models from
:mod:`meter_dashboard.models.ladder` (:class:`~meter_dashboard.models.ladder.LadderReplayModel`,
:class:`~meter_dashboard.models.ladder.LadderSizeModel`,
:class:`~meter_dashboard.models.ladder.BoostingAttackModel`).  Widgets come from the models'
parameters, the layout is built once and updated in place, and every number comes from
the models.
"""
from __future__ import annotations

import io
import math

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, Legend, FixedTicker, NumeralTickFormatter, Span
from bokeh.plotting import figure

from ..models.ladder import (
    BoostingAttackModel,
    LadderReplayModel,
    LadderSizeModel,
)
from . import formatting as fmt
from .base import DashboardView
from .style import HTML, PALETTE, error_html, esc, headline_html

BLUE, ORANGE, GREEN, PINK, SKY, VERMILLION = PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3], PALETTE[4], PALETTE[5]
GREY = "#777777"
#: 1-2-5 ticks for log axes of counts (Bokeh shows the ones inside the range).
_LOG_TICKS = [m * 10**e for e in range(0, 13) for m in (1, 2, 5)]

_VARIANT_LABELS = {"parameter_free": "Parameter-free (Algorithm 2)", "fixed_step": "Fixed step η (Algorithm 1)"}

def _fmt(x, digits=4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}f}".rstrip("0").rstrip(".") if abs(x) < 10 else f"{x:,.0f}"


def _headlines(cards) -> str:
    return '<div class="ladder-headlines">' + "".join(cards) + "</div>"


class Ladder(DashboardView):
    """Leaderboards with the Ladder: replay, label bound and boosting attack.

    Parameters
    ----------
    losses : path, bytes, DataFrame or array, optional
        A per-example loss table to replay (default: the shipped example).
    step : float, optional
        Replay with the fixed-step Ladder of this eta (default: parameter-free).
    replay, size, attack : models, optional
        Drive existing models instead of new ones.
    sync_url : bool
        Keep the replay's and bound's settings in the page URL (served pages).
    run_attack : bool
        Run the boosting attack once when shown (default True).

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Ladder("my_losses.csv", step=0.01)  # doctest: +SKIP
    """

    title = "Ladder"

    replay = param.ClassSelector(class_=LadderReplayModel)
    size = param.ClassSelector(class_=LadderSizeModel)
    attack = param.ClassSelector(class_=BoostingAttackModel)

    def __init__(self, losses=None, step: float | None = None, *, replay=None, size=None, attack=None,
                 sync_url: bool = False, run_attack: bool = True, **params):
        if replay is None:
            replay = LadderReplayModel(losses)
        elif losses is not None:
            replay.load(losses)
        if step is not None:
            replay.param.update(variant="fixed_step", step=float(step))
        super().__init__(replay=replay, size=size or LadderSizeModel(), attack=attack or BoostingAttackModel(),
                         **params)
        self._build_replay()
        self._build_size()
        self._build_attack()
        self.replay.param.watch(self._on_replay, ["result", "error", "delta"])
        self.size.param.watch(self._on_size, ["size", "best", "error"])
        self.attack.param.watch(self._on_attack_result, ["result"])
        self.attack.param.watch(self._on_attack_state, ["running", "progress", "status", "error"])
        self.replay.param.watch(self._on_variant, ["variant"])
        self.attack.param.watch(self._on_variant, ["variant"])
        self._on_variant()
        self._on_replay()
        self._on_size()
        self._on_attack_result()
        self._on_attack_state()
        if sync_url and pn.state.location is not None:
            pn.state.location.sync(self.replay, {"variant": "variant", "step": "step"})
            pn.state.location.sync(self.size, {"epsilon": "epsilon", "step": "size_step",
                                               "submissions": "submissions", "delta": "delta"})
        if run_attack:
            if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
                pn.state.onload(self._run_attack)
            else:
                self.attack.run()

    # ------------------------------------------------------------------ replay
    def _build_replay(self):
        r = self.replay
        self.example = pn.widgets.Select.from_param(r.param.example, name="Loss file", sizing_mode="stretch_width",
                                                    css_classes=["ladder-example"])
        self.upload = pn.widgets.FileInput(accept=".csv,text/csv", sizing_mode="stretch_width", multiple=False,
                                           css_classes=["ladder-upload"])
        self.upload.param.watch(self._on_upload, "value")
        self.variant = pn.widgets.RadioBoxGroup.from_param(r.param.variant, options=_VARIANT_LABELS_INV,
                                                           name="Ladder", inline=False, css_classes=["ladder-variant"])
        self.step = pn.widgets.FloatInput.from_param(r.param.step, name="Step η", start=1e-6, end=1.0,
                                                     step=0.005, sizing_mode="stretch_width", css_classes=["ladder-step"])
        self.delta = pn.widgets.FloatInput.from_param(r.param.delta, name="δ for the error guarantee", start=1e-6,
                                                      end=0.999, step=0.01, sizing_mode="stretch_width")
        self.replay_error = HTML("", sizing_mode="stretch_width", css_classes=["ladder-error"])
        self.download = pn.widgets.FileDownload(callback=self._replay_csv, filename="ladder-replay.csv",
                                                label="Download the replay (CSV)", button_type="primary",
                                                sizing_mode="stretch_width")
        self.replay_headlines = HTML("", sizing_mode="stretch_width")
        self.replay_sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        self.replay_table = HTML("", sizing_mode="stretch_width", css_classes=["ladder-table"],
                                         max_height=520, styles={"overflow-y": "auto"})
        self.replay_source = ColumnDataSource(self._replay_data())
        fig = figure(height=330, sizing_mode="stretch_width", x_axis_label="submission (in order)",
                     y_axis_label="loss (lower is better)", tools="pan,wheel_zoom,box_zoom,reset,save",
                     toolbar_location="above", title="What each leaderboard publishes")
        naive = fig.scatter("x", "naive", source=self.replay_source, size=8, color=GREY, alpha=0.8)
        best = fig.step("x", "best", source=self.replay_source, mode="after", color=GREY, line_dash="dashed",
                        line_width=1.5)
        ladder = fig.step("x", "score", source=self.replay_source, mode="after", color=BLUE, line_width=3)
        released = fig.scatter("x", "released", source=self.replay_source, size=10, color=BLUE, marker="diamond")
        fig.add_tools(HoverTool(renderers=[naive], tooltips=[("submission", "@name"), ("naive loss", "@naive{0.0000}"),
                                                             ("Ladder score", "@score{0.0000}")]))
        fig.add_layout(Legend(items=[("naive: exact loss", [naive]), ("naive: best so far", [best]),
                                     ("Ladder: released score", [ladder, released])],
                              location="top_right", background_fill_alpha=0.8, click_policy="hide"))
        fig.toolbar.logo = None
        self.replay_fig = fig
        self.replay_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["ladder-replay-plot"])

    def _replay_data(self) -> dict:
        res = self.replay.result
        if res is None:
            return {"x": [], "name": [], "naive": [], "best": [], "score": [], "released": []}
        x = np.arange(1, res.submissions + 1)
        return {"x": x, "name": list(res.names), "naive": res.naive, "best": res.best_naive, "score": res.scores,
                "released": np.where(res.improved, res.scores, np.nan)}

    def _on_upload(self, event):
        if event.new:
            self.replay.load(event.new, self.upload.filename or "uploaded file")

    def _replay_csv(self):
        buf = io.StringIO()
        if self.replay.result is not None:
            self.replay.result.to_frame().to_csv(buf, index=False)
        buf.seek(0)
        return buf

    def _on_replay(self, *events):
        r = self.replay
        self.replay_error.object = error_html(r.error)
        res = r.result
        if res is None:
            return
        self.replay_source.data = self._replay_data()
        k = res.submissions
        if k <= 25:
            self.replay_fig.xaxis.ticker = list(range(1, k + 1))
            self.replay_fig.xaxis.major_label_overrides = {i + 1: str(n)[:18] for i, n in enumerate(res.names)}
            self.replay_fig.xaxis.major_label_orientation = 0.7
        else:
            self.replay_fig.xaxis.major_label_overrides = {}
            self.replay_fig.xaxis.major_label_orientation = 0
        guarantee = r.guarantee()
        how = ("parameter-free Ladder" if res.step is None else f"Ladder with step η = {res.step:g}")
        best_ladder = float(res.scores[-1])
        best_naive = float(res.best_naive[-1])
        cards = [
            headline_html("Submissions", fmt.integer(k), f"on {res.examples:,} test examples"),
            headline_html("Scores released", fmt.integer(res.releases), how, css_class="ladder-releases"),
            headline_html("Ladder's best score", _fmt(best_ladder), "what the board shows now",
                          css_class="ladder-best"),
            headline_html("Naive best loss", _fmt(best_naive), "exact empirical minimum"),
        ]
        if guarantee is not None:
            total, eta, eps = guarantee
            if total < 1:
                cards.append(headline_html("Leaderboard error ≤", _fmt(total, 3),
                                           f"Lemma 4, confidence {1 - r.delta:.3g} (η = {eta:.3g})",
                                           css_class="ladder-guarantee"))
            else:
                cards.append(headline_html("Leaderboard error ≤", "—",
                                           "Lemma 4: too few labels for a useful bound", css_class="ladder-guarantee"))
        self.replay_headlines.object = _headlines(cards)
        withheld = k - res.releases
        self.replay_sentence.object = (
            f"<p>The {how} published a new score for <b>{res.releases}</b> of {k} submissions. The other "
            f"{withheld} did not beat the previous score by "
            + ("the step η" if res.step is not None else "one standard error of the paired loss differences")
            + ", so the board kept showing the old score: a team learns nothing from them about the test set. "
            "A naive board would have shown every exact loss.</p>")
        self.replay_table.object = self._table_html(res)

    def _table_html(self, res) -> str:
        rows = []
        for i in range(res.submissions):
            released = bool(res.improved[i])
            thr = res.thresholds[i]
            cls = ' class="ladder-released"' if released else ""
            score_cls = "num ladder-score" + ("" if released else " ladder-stale")
            rows.append(
                f"<tr{cls}><td class='num'>{i + 1}</td><td>{esc(res.names[i])}</td>"
                f"<td class='num'>{_fmt(float(res.naive[i]))}</td><td class='num'>{_fmt(float(res.best_naive[i]))}</td>"
                f"<td class='num'>{'—' if not math.isfinite(thr) else _fmt(float(thr))}</td>"
                f"<td class='{score_cls}'>{_fmt(float(res.scores[i]))}</td>"
                f"<td>{'✔ new score' if released else 'unchanged'}</td></tr>")
        return ("<table class='md-table'><thead><tr><th>#</th><th>submission</th><th>naive loss</th>"
                "<th>naive best</th><th>threshold to beat</th><th>Ladder score</th><th>released?</th></tr></thead>"
                "<tbody>" + "".join(rows) + "</tbody></table>")

    def _on_variant(self, *events):
        self.step.visible = self.replay.variant == "fixed_step"
        self.attack_step.visible = self.attack.variant == "fixed_step"

    # ------------------------------------------------------------------ label bound
    def _build_size(self):
        s = self.size
        self.size_epsilon = pn.widgets.FloatInput.from_param(s.param.epsilon, name="ε (statistical error)",
                                                             start=1e-6, end=0.999, step=0.005,
                                                             sizing_mode="stretch_width", css_classes=["size-epsilon"])
        self.size_step = pn.widgets.FloatInput.from_param(s.param.step, name="η (the Ladder's step)", start=1e-6,
                                                          end=1.0, step=0.005, sizing_mode="stretch_width")
        self.size_submissions = pn.widgets.IntInput.from_param(s.param.submissions, name="k (submissions)", start=1,
                                                               sizing_mode="stretch_width",
                                                               css_classes=["size-submissions"])
        self.size_delta = pn.widgets.FloatInput.from_param(s.param.delta, name="δ (failure probability)",
                                                           start=1e-9, end=0.999, step=0.01,
                                                           sizing_mode="stretch_width")
        self.size_error = HTML("", sizing_mode="stretch_width")
        self.size_headlines = HTML("", sizing_mode="stretch_width")
        self.size_sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        self.size_source = ColumnDataSource({"eta": [], "labels": []})
        self.size_points = ColumnDataSource({"eta": [], "labels": [], "what": [], "color": []})
        fig = figure(height=300, sizing_mode="stretch_width", x_axis_label="step η (ε = total error − η)",
                     y_axis_label="labels needed", y_axis_type="log", tools="pan,wheel_zoom,box_zoom,reset,save",
                     toolbar_location="above", title="Splitting the same leaderboard error between ε and η")
        line = fig.line("eta", "labels", source=self.size_source, color=BLUE, line_width=2.5)
        pts = fig.scatter("eta", "labels", source=self.size_points, color="color", size=12, marker="diamond",
                          legend_field="what")
        fig.add_tools(HoverTool(renderers=[line, pts], tooltips=[("η", "@eta{0.0000}"), ("labels", "@labels{0,0}")]))
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.yaxis.ticker = FixedTicker(ticks=_LOG_TICKS)
        fig.legend.location = "top_center"
        fig.toolbar.logo = None
        self.size_fig = fig
        self.size_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width")

    def _on_size(self, *events):
        s = self.size
        self.size_error.object = error_html(s.error)
        size, best = s.size, s.best
        if size is None or best is None:
            return
        self.size_headlines.object = _headlines([
            headline_html("Labels needed", fmt.integer(size.labels),
                          f"ε = {size.epsilon:g}, η = {size.step:g}, k = {size.submissions:,}, δ = {size.delta:g}",
                          css_class="ladder-labels"),
            headline_html("With the best step", fmt.integer(best.labels),
                          f"η = {best.step:.4f}, ε = {best.epsilon:.4f} (same total {best.total_error:g})",
                          css_class="ladder-best-labels"),
        ])
        saved = size.labels - best.labels
        self.size_sentence.object = (
            f"<p>With <b>{size.labels:,}</b> test labels, the Ladder's published scores stay within "
            f"ε + η = {size.total_error:g} of the best true loss so far, for all {size.submissions:,} submissions, "
            f"with probability at least {1 - size.delta:g} (Lemma 4: "
            f"exp(−2ε²n + (1/η + 2)·log(4k/η) + 1) &lt; δ). "
            + (f"Splitting the same total as η = {best.step:.3f} and ε = {best.epsilon:.3f} needs "
               f"{saved:,} fewer labels." if saved > 0 else "Your split is already the cheapest.")
            + " The bound holds however adaptively the submissions are chosen; it is a worst case, so real "
            "leaderboards often do better.</p>")
        eta, labels = s.curve()
        self.size_source.data = {"eta": eta, "labels": labels}
        self.size_points.data = {"eta": [size.step, best.step], "labels": [size.labels, best.labels],
                                 "what": ["your η", "best η"], "color": [ORANGE, GREEN]}
        self.size_fig.title.text = (f"Labels needed as the total error {size.total_error:g} is split between ε "
                                    f"and η (k = {size.submissions:,}, δ = {size.delta:g})")
        inside = size.step < size.total_error * 0.95
        if not inside:
            self.size_points.data = {"eta": [best.step], "labels": [best.labels], "what": ["best η"],
                                     "color": [GREEN]}

    # ------------------------------------------------------------------ attack
    def _build_attack(self):
        a = self.attack
        self.attack_labels = pn.widgets.IntInput.from_param(a.param.labels, name="n (test labels)", start=2,
                                                            end=1_000_000, step=500, sizing_mode="stretch_width")
        self.attack_submissions = pn.widgets.IntInput.from_param(a.param.submissions, name="k up to (probes)",
                                                                 start=1, end=10_000, step=50,
                                                                 sizing_mode="stretch_width",
                                                                 css_classes=["attack-submissions"])
        self.attack_variant = pn.widgets.RadioBoxGroup.from_param(a.param.variant, options=_VARIANT_LABELS_INV,
                                                                  inline=False)
        self.attack_step = pn.widgets.FloatInput.from_param(a.param.step, name="Step η", start=1e-6, end=1.0,
                                                            step=0.005, sizing_mode="stretch_width")
        self.attack_trials = pn.widgets.IntInput.from_param(a.param.trials, name="Trials (averaged)", start=1,
                                                            end=200, sizing_mode="stretch_width",
                                                            css_classes=["attack-trials"])
        self.attack_seed = pn.widgets.IntInput.from_param(a.param.seed, name="Seed", start=0,
                                                          sizing_mode="stretch_width")
        self.run_button = pn.widgets.Button(name="Run the attack", button_type="primary", sizing_mode="stretch_width",
                                            css_classes=["ladder-run"])
        self.cancel_button = pn.widgets.Button(name="Cancel", button_type="warning", sizing_mode="stretch_width",
                                               disabled=True, css_classes=["ladder-cancel"])
        self.run_button.on_click(self._on_run_click)
        self.cancel_button.on_click(lambda event: self.attack.cancel())
        self.progress = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width", bar_color="primary",
                                               css_classes=["ladder-progress"])
        self.attack_status = HTML("", sizing_mode="stretch_width", css_classes=["ladder-status"])
        self.attack_headlines = HTML("", sizing_mode="stretch_width")
        self.attack_sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        self.attack_source = ColumnDataSource({"k": [], "naive": [], "ladder": [], "holdout": [], "reference": []})
        fig = figure(height=360, sizing_mode="stretch_width", x_axis_label="k, random submissions probed",
                     y_axis_label="loss of the boosted submission", tools="pan,wheel_zoom,box_zoom,reset,save",
                     toolbar_location="above", title="The boosting attack: published score against k")
        naive = fig.line("k", "naive", source=self.attack_source, color=VERMILLION, line_width=2.5)
        ladder = fig.line("k", "ladder", source=self.attack_source, color=BLUE, line_width=2.5)
        holdout = fig.line("k", "holdout", source=self.attack_source, color=GREEN, line_width=2)
        reference = fig.line("k", "reference", source=self.attack_source, color=GREY, line_dash="dashed",
                             line_width=1.5)
        fig.add_layout(Span(location=0.5, dimension="width", line_color="#333", line_dash="dotted", line_width=1))
        fig.add_tools(HoverTool(renderers=[naive], mode="vline",
                                tooltips=[("k", "@k"), ("naive board", "@naive{0.0000}"),
                                          ("Ladder", "@ladder{0.0000}"), ("fresh holdout", "@holdout{0.0000}")]))
        fig.add_layout(Legend(items=[("naive board (published)", [naive]), ("Ladder (published)", [ladder]),
                                     ("fresh holdout (truth)", [holdout]), ("½ − √(k/2n)/π (expected drift)",
                                                                            [reference])],
                              location="bottom_left", background_fill_alpha=0.85, click_policy="hide"))
        fig.toolbar.logo = None
        self.attack_fig = fig
        self.attack_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["ladder-attack-plot"])

    async def _run_attack(self):
        """Run the simulation without holding the document lock, so Cancel clicks get through.

        Panel components update safely from here; the plot's Bokeh data source is set in
        a next-tick callback of the session's document (which runs with the lock).
        """
        doc = pn.state.curdoc
        self._defer_doc = doc if doc is not None and doc.session_context is not None else None
        try:
            await self.attack.arun()
        finally:
            self._defer_doc = None

    async def _on_run_click(self, event):
        await self._run_attack()

    def _on_attack_state(self, *events):
        a = self.attack
        self.progress.value = int(round(100 * a.progress))
        self.run_button.disabled = a.running
        self.cancel_button.disabled = not a.running
        status = esc(a.status)
        self.attack_status.object = (error_html(a.error) if a.error else
                                     f'<div class="md-note">{status}</div>' if status else "")

    def _on_attack_result(self, *events):
        res = self.attack.result
        if res is None:
            self.attack_source.data = {"k": [], "naive": [], "ladder": [], "holdout": [], "reference": []}
            return
        data = {"k": res.submissions, "naive": res.naive_public, "ladder": res.ladder_public,
                "holdout": res.naive_holdout, "reference": res.reference}
        doc = getattr(self, "_defer_doc", None)
        if doc is not None:
            doc.add_next_tick_callback(lambda: setattr(self.attack_source, "data", data))
        else:
            self.attack_source.data = data
        if not res.computed:
            return
        v = res.at()
        k, n = v["submissions"], res.labels
        ladder_name = "parameter-free Ladder" if res.step is None else f"Ladder (η = {res.step:g})"
        self.attack_headlines.object = _headlines([
            headline_html("Naive board shows", _fmt(v["naive_public"]), f"after k = {k:,} probes",
                          css_class="attack-naive"),
            headline_html("Ladder shows", _fmt(v["ladder_public"]), ladder_name, css_class="attack-ladder"),
            headline_html("True loss (fresh holdout)", _fmt(v["naive_holdout"]), "the attacker learned nothing",
                          css_class="attack-holdout"),
        ])
        gain = 0.5 - v["naive_public"]
        self.attack_sentence.object = (
            f"<p>An attacker who knows nothing submits k random labelings of n = {n:,} test examples, keeps those "
            f"the board scored at or below ½ and submits their majority vote. Against the exact (naive) board the "
            f"vote looks <b>{gain:.3f}</b> better than chance after {k:,} probes — about √(k/n) = "
            f"{math.sqrt(k / n):.3f} times a constant, as Theorem 6 says — while on fresh data it is a coin flip. "
            f"The Ladder releases a score only on a significant improvement, so random probes teach the attacker "
            f"almost nothing: its board moves only with the few early releases (the luckiest of the first random "
            f"probes) and then stops falling. Averaged over {res.trials} trial(s), seed {res.seed}.</p>")

    # ------------------------------------------------------------------ layout
    def _section(self, title, intro, controls, results, css):
        return pn.Column(
            HTML(f"<h2>{esc(title)}</h2><div class='md-note'>{intro}</div>", sizing_mode="stretch_width"),
            pn.Row(pn.Column(*controls, width=290), pn.Column(*results, sizing_mode="stretch_width"),
                   sizing_mode="stretch_width"),
            sizing_mode="stretch_width", css_classes=["ladder-section", css], margin=(0, 0, 24, 0),
        )

    def results(self):
        if not hasattr(self, "_results"):
            replay = self._section(
                "Replay a leaderboard",
                "Per-example losses of each submission (CSV: one row per test example, one column per submission, "
                "values in [0, 1]). The Ladder (Blum &amp; Hardt) publishes a new score only when a submission beats "
                "the last published one by more than a step, and rounds it; a naive board publishes every exact "
                "loss.",
                [self.example, self.upload, HTML("<b>Ladder</b>", margin=(8, 5, 0, 5)), self.variant,
                 self.step, self.delta, self.replay_error, self.download],
                [self.replay_headlines, self.replay_sentence, self.replay_plot, self.replay_table],
                "ladder-replay",
            )
            size = self._section(
                "How many test labels does a Ladder need?",
                "Lemma 4 of the lecture notes: the leaderboard error — how far the published score can be from the "
                "best true loss so far — exceeds ε + η with probability at most "
                "exp(−2ε²n + (1/η + 2)·log(4k/η) + 1).",
                [self.size_epsilon, self.size_step, self.size_submissions, self.size_delta, self.size_error],
                [self.size_headlines, self.size_sentence, self.size_plot],
                "ladder-size",
            )
            attack = self._section(
                "The boosting attack",
                "Section 5: overfitting a leaderboard without looking at any data. Seeded simulation; the test labels "
                "are random, so every honest loss is ½.",
                [self.attack_labels, self.attack_submissions, HTML("<b>Ladder</b>", margin=(8, 5, 0, 5)),
                 self.attack_variant, self.attack_step, self.attack_trials, self.attack_seed,
                 pn.Row(self.run_button, self.cancel_button), self.progress, self.attack_status],
                [self.attack_headlines, self.attack_sentence, self.attack_plot],
                "ladder-attack",
            )
            self._results = pn.Column(replay, size, attack, sizing_mode="stretch_width", css_classes=["ladder-page"])
        return self._results


_VARIANT_LABELS_INV = {label: value for value, label in _VARIANT_LABELS.items()}

def page():
    """The served Ladder page (URL-synced settings; the attack runs once on load)."""
    return Ladder(sync_url=True)
