"""The Ladder page: replay a leaderboard, size its test set, watch the boosting attack.

:class:`Ladder` is a :class:`~meter_dashboard.ui.base.DashboardView` over three models from
:mod:`meter_dashboard.leaderboard.model` (:class:`~meter_dashboard.leaderboard.model.LadderReplayModel`,
:class:`~meter_dashboard.leaderboard.model.LadderSizeModel`,
:class:`~meter_dashboard.leaderboard.model.BoostingAttackModel`).  Every number input is a
:class:`~meter_dashboard.ui.inputs.NumberInput` (a bad value is refused beside it and the
results keep their last valid state, with a banner saying so); the replay's inputs are
:class:`~meter_dashboard.ui.form.Form` components (one Bokeh model each) around the drop area; the attack runs through
:class:`~meter_dashboard.ui.simulation.SimulationControls`, the layout is built once and
updated in place, and every number comes from the models.  Nothing heavy runs on the
server's event loop: uploads are parsed in a worker thread, large replays are computed in
one (``offload``), and the attack runs in one.
"""
from __future__ import annotations

import math

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BasicTicker,
    CDSView,
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    NumeralTickFormatter,
    Range1d,
    Scatter,
    Span,
    Step,
)

from ..core import colors
from ..core import formatting as fmt
from ..core.plots import GREY, LOG_TICKS, figure, glyph, legend
from ..core.html import render
from ..core.report import result_report
from ..core.validation import InputError
from ..ui.base import DashboardView
from ..ui.parts import PageSection
from ..ui.exports import Exports, lead_markup
from ..ui.form import Field, Form, Note, Slot, linked
from ..ui.inputs import NumberInput
from ..ui.lazy import WhenSeen, on_screen
from ..ui.sections import document_dispatch, held, section
from ..ui.urlstate import UrlLink
from ..ui.simulation import SimulationControls
from ..ui.style import HTML, PALETTE, error_html, headline_html, headlines_html, stale_html
from ..ui.upload import TableUpload
from .text import inputs, lead, slide
from .model import BoostingAttackModel, LadderReplayModel, LadderSizeModel, board_size

__all__ = ["Ladder", "page"]

BLUE, ORANGE, GREEN, VERMILLION = PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[5]
#: Rows of the replay table written into the page (the CSV download has them all).
TABLE_ROWS = 200
#: Heights (px, with the 24 px below each) of the label-bound and attack sections at 1440 px wide: below the
#: fold of a served page, each is built when it comes near the screen, in a box of its height (ui.lazy.WhenSeen).
SIZE_HEIGHT, ATTACK_HEIGHT = 603, 641
#: The height an empty HTML pane takes (its default margins, 5 px above and below).
EMPTY_PANE_PX = 10

VARIANT_LABELS = {"Parameter-free (Algorithm 2)": "parameter_free", "Fixed step η (Algorithm 1)": "fixed_step"}


def _number_inputs(model, prefix: str, labels: dict) -> dict:
    """``{parameter: NumberInput}`` (form fields) for ``labels`` (parameter -> label); each field's class is
    ``<prefix>-<parameter>``."""
    return {name: _form_input(model, name, label, f"{prefix}-{name}") for name, label in labels.items()}


def _form_input(model, parameter: str, label: str, css: str) -> NumberInput:
    """A :class:`NumberInput` a Form draws: ``css`` on its field, ``<css>-message`` on its message (the page's hooks)."""
    return NumberInput(model, parameter, label=label, css_classes=[css], message_classes=[f"{css}-message"],
                       field=parameter)


def _fixed_step(variant: str) -> bool:
    """Whether a variant has a step η to set (the step input is shown only then)."""
    return variant == "fixed_step"


def replay_cards(replay, res) -> list[str]:
    """The replay's headline cards (the page, and its first response)."""
    how = "parameter-free Ladder" if res.step is None else f"Ladder with step η = {fmt.number(res.step)}"
    cards = [
        headline_html("Submissions", fmt.integer(res.submissions), f"on {fmt.integer(res.examples)} test examples"),
        headline_html("Scores released", fmt.integer(res.releases), how, css_class="ladder-releases"),
        headline_html("Ladder's best score", fmt.number(float(res.scores[-1])), "what the board shows now",
                      css_class="ladder-best"),
        headline_html("Naive best loss", fmt.number(float(res.best_naive[-1])), "exact empirical minimum"),
    ]
    guarantee = replay.guarantee()
    if guarantee is not None:
        total, eta, _ = guarantee
        useful = total < 1
        cards.append(headline_html(
            "Leaderboard error ≤", fmt.number(total) if useful else "—",
            f"Lemma 4, confidence {fmt.confidence(replay.delta)} (η = {fmt.number(eta)})" if useful
            else "Lemma 4: too few labels for a useful bound", css_class="ladder-guarantee"))
    return cards


def replay_sentence(res) -> str:
    """What the board released, in words (the page, and its first response)."""
    how = "parameter-free Ladder" if res.step is None else f"Ladder with step η = {fmt.number(res.step)}"
    return render("leaderboard/templates/replay_sentence.html", how=how, releases=res.releases,
                  submissions=res.submissions, fixed=res.step is not None)


class ReplayInputs(PageSection):
    """The board to replay: a shipped example or an upload, the Ladder's variant and step, δ, what went wrong.

    Four :class:`~meter_dashboard.ui.form.Form` components (one Bokeh model each, issue 29) around the drop
    area: the loss file; the variant; the step (a form of its own, shown only for the fixed-step Ladder);
    δ with the replay's refusals under it.
    """

    replay = param.ClassSelector(class_=LadderReplayModel)

    def __init__(self, replay: LadderReplayModel, dispatch, **params):
        super().__init__(replay=replay, **params)
        r = replay
        self.example = linked(r, "example")
        self.table_file = TableUpload(r, dispatch, parameter="losses file", css="ladder-upload")
        self.upload = self.table_file.dropper
        self.variant = linked(r, "variant")
        self.step_input = _form_input(r, "step", "Step η", "ladder-step")
        self.delta_input = _form_input(r, "delta", "δ for the error guarantee", "ladder-delta")
        self.replay_error = Slot()
        self._build_forms()
        self.step.visible = pn.bind(_fixed_step, r.param.variant)
        self._show()

    def _build_forms(self) -> None:
        """The forms in the order the page shows them (the drop area between the first two)."""
        r = self.replay
        example = Field("example", "Loss file", self.example, kind="select", classes=("ladder-example",),
                        description=r.param.example.doc or "", options=[(n, n) for n in r.param.example.objects])
        self.example_form = Form([example], prefix="ladder-file", css_classes=["ladder-file-form"])
        variant = Field("variant", "Ladder", self.variant, kind="buttons", classes=("ladder-variant",),
                        options=list(VARIANT_LABELS.items()))
        self.variant_form = Form([Note("<b>Ladder</b>", classes=("md-form-head",)), variant], prefix="ladder-variant",
                                 css_classes=["ladder-variant-form"])
        self.step = Form([self.step_input.field()], prefix="ladder-step", css_classes=["ladder-step-form"])
        self.delta_form = Form([self.delta_input.field(), Note(slot=self.replay_error, classes=("ladder-error",),
                                                                 name="error")],
                               prefix="ladder-delta", css_classes=["ladder-delta-form"])

    @param.depends("replay.error", "replay.busy", watch=True)
    @held
    def _show(self) -> None:
        """Why the last table or setting was refused, and whether a new table is being replayed."""
        r = self.replay
        self.replay_error.show(error_html(r.error) + ('<div class="md-note">Replaying the new table…</div>'
                                                      if r.busy else ""))

    def valid(self) -> bool:
        """The replay's inputs hold what it shows (no refused step, δ or file)."""
        step_bad = self.replay.variant == "fixed_step" and not self.step_input.valid
        return not (self.replay.error or step_bad or not self.delta_input.valid)

    def parts(self) -> list:
        return [self.example_form, self.upload, self.variant_form, self.step, self.delta_form]


class ReplayAnswer(PageSection):
    """The replay in words and numbers: a stale banner, the lead sentence, the headline cards and the sentence."""

    replay = param.ClassSelector(class_=LadderReplayModel)

    def __init__(self, replay: LadderReplayModel, inputs: ReplayInputs, **params):
        super().__init__(replay=replay, **params)
        self._inputs = inputs
        self.replay_stale = HTML("", sizing_mode="stretch_width", css_classes=["ladder-replay-stale"])
        self.replay_lead = HTML("", sizing_mode="stretch_width", css_classes=["ladder-lead-pane"])
        self.replay_headlines = HTML("", sizing_mode="stretch_width")
        self.replay_sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        # the boxes' refusals are not the replay's parameters: the banner follows them through a bound side
        # effect on their text (checked first; watching their message panes would make one per box)
        pn.bind(self._show_stale, *(box.text.param.value for box in (inputs.step_input, inputs.delta_input)),
                watch=True)
        self._show_stale()
        self._show()

    @param.depends("replay.result", "replay.error", "replay.variant", watch=True)
    @held
    def _show_stale(self, *messages) -> None:
        """A banner while the replay shown is the last valid one (a refused step, δ or file)."""
        bad = self.replay.result is not None and not self._inputs.valid()
        self.replay_stale.object = stale_html("replay") if bad else ""

    @param.depends("replay.result", "replay.delta", watch=True)
    @held
    def _show(self) -> None:
        """The lead sentence, the headline cards and the sentence of the replay."""
        res = self.replay.result
        if res is None:
            self.replay_lead.object = self.replay_headlines.object = self.replay_sentence.object = ""
            return
        self.replay_lead.object = lead_markup(lead(res, self.replay.delta), "ladder")
        self.replay_headlines.object = headlines_html(replay_cards(self.replay, res), "ladder-headlines")
        self.replay_sentence.object = replay_sentence(res)

    def parts(self) -> list:
        return [self.replay_stale, self.replay_lead, self.replay_headlines, self.replay_sentence]


class ReplayFigure(PageSection):
    """What each board publishes, submission by submission: the plot and the table (its first rows)."""

    replay = param.ClassSelector(class_=LadderReplayModel)

    def __init__(self, replay: LadderReplayModel, **params):
        super().__init__(replay=replay, **params)
        self.replay_table = HTML("", sizing_mode="stretch_width", css_classes=["ladder-table"])
        self.replay_source = ColumnDataSource(self._replay_data())
        fig = figure(height=330, x_axis_label="submission (in order)", y_axis_label="loss (lower is better)",
                      title="What each leaderboard publishes")
        src = self.replay_source
        # one source, one view, no selection/mute copies (nothing selects; the legend hides): 11 models fewer
        view = CDSView()
        naive = glyph(fig, src, Scatter(x="x", y="naive", size=8, fill_color=GREY, line_color=GREY,
                                           hatch_color=GREY, fill_alpha=0.8, line_alpha=0.8, hatch_alpha=0.8), view=view)
        best = glyph(fig, src, Step(x="x", y="best", mode="after", line_color=GREY, line_dash="dashed",
                                       line_width=1.5), view=view)
        ladder = glyph(fig, src, Step(x="x", y="score", mode="after", line_color=BLUE, line_width=3), view=view)
        released = glyph(fig, src, Scatter(x="x", y="released", size=10, fill_color=BLUE, line_color=BLUE,
                                              hatch_color=BLUE, marker="diamond"), view=view)
        fig.add_tools(HoverTool(renderers=[naive], tooltips=[("submission", "@name"), ("naive loss", "@naive{0.0000}"),
                                                             ("Ladder score", "@score{0.0000}")]))
        legend(fig, [("naive: exact loss", [naive]), ("naive: best so far", [best]),
                     ("Ladder: released score", [ladder, released])], "top_right")
        self.replay_fig = fig
        self.replay_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["ladder-replay-plot"])

        self._on_replay()

    def _replay_data(self) -> dict:
        res = self.replay.result
        if res is None:
            return {"x": [], "name": [], "naive": [], "best": [], "score": [], "released": []}
        x = np.arange(1, res.submissions + 1)
        return {"x": x, "name": list(res.names), "naive": res.naive, "best": res.best_naive, "score": res.scores,
                "released": np.where(res.improved, res.scores, np.nan)}

    @param.depends("replay.result", watch=True)
    @held
    def _on_replay(self):
        """The plot and the table follow the replay in place (its data source and axis change, never the figure)."""
        res = self.replay.result
        if res is None:
            self.replay_table.object = ""
            return
        self.replay_source.data = self._replay_data()
        self._label_axis(res)
        self.replay_table.object = self._table_html(res)

    def _label_axis(self, res) -> None:
        """Up to 25 submissions: each tick names its submission; more: plain numbers."""
        k = res.submissions
        axis = self.replay_fig.xaxis[0]
        if k <= 25:
            axis.ticker = FixedTicker(ticks=list(range(1, k + 1)))
            axis.major_label_overrides = {i + 1: str(n)[:18] for i, n in enumerate(res.names)}
            axis.major_label_orientation = 0.7
        else:
            axis.ticker = BasicTicker()
            axis.major_label_overrides = {}
            axis.major_label_orientation = 0

    @staticmethod
    def _table_html(res) -> str:
        rows = [{"name": res.names[i], "naive": float(res.naive[i]), "best": float(res.best_naive[i]),
                 "threshold": float(res.thresholds[i]) if math.isfinite(res.thresholds[i]) else None,
                 "score": float(res.scores[i]), "released": bool(res.improved[i])}
                for i in range(min(res.submissions, TABLE_ROWS))]
        return render("leaderboard/templates/replay_table.html", rows=rows, total=res.submissions)

    def parts(self) -> list:
        return [self.replay_plot, self.replay_table]


class LabelBound(PageSection):
    """Lemma 4: the test labels a Ladder needs for k submissions, and for the board replayed above."""

    size = param.ClassSelector(class_=LadderSizeModel)
    replay = param.ClassSelector(class_=LadderReplayModel)

    def __init__(self, size: LadderSizeModel, replay: LadderReplayModel, **params):
        super().__init__(size=size, replay=replay, **params)
        self._build_size()
        self._show_stale()
        self._show()
        self._on_size()

    def _build_size(self):
        s = self.size
        self.size_inputs = _number_inputs(s, "size", {"epsilon": "ε (statistical error)", "step": "η (the Ladder's step)",
                                                      "submissions": "k (submissions)",
                                                      "delta": "δ (failure probability)"})
        self.size_error = HTML("", sizing_mode="stretch_width", css_classes=["size-error"])
        # the board replayed above feeds the sizing: its k in one click, its labels against the target
        self.use_board = pn.widgets.Button(label="Size the board above", sizing_mode="stretch_width",
                                           css_classes=["ladder-use-board"])
        self.use_board.on_click(self._on_use_board)
        self.size_stale = HTML("", sizing_mode="stretch_width", css_classes=["size-stale"])
        self.size_headlines = HTML("", sizing_mode="stretch_width")
        self.size_sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        # the boxes' refusals are not the sizing's parameters: the banner follows them through a bound side
        # effect on their text (checked first; watching their message panes would make one per box)
        pn.bind(self._show_stale, *(box.text.param.value for box in self.size_inputs.values()), watch=True)
        # the four boxes: one Form model (issue 29); the button's label follows the board, so it stays a widget
        self.size_form = Form([box.field() for box in self.size_inputs.values()], prefix="size",
                              css_classes=["size-form"])
        eta, labels = s.curve()
        self.size_source = ColumnDataSource({"eta": eta, "labels": labels})
        self.size_points = ColumnDataSource({"eta": [], "labels": [], "what": [], "color": []})
        fig = figure(height=300, x_axis_label="step η (ε = total error − η)", y_axis_label="labels needed",
                      y_axis_type="log", title="Labels for each split of ε + η")
        line = fig.line("eta", "labels", source=self.size_source, color=BLUE, line_width=2.5)
        pts = fig.scatter("eta", "labels", source=self.size_points, color="color", size=12, marker="diamond",
                          legend_field="what")
        fig.add_tools(HoverTool(renderers=[line, pts], tooltips=[("η", "@eta{0.0000}"), ("labels", "@labels{0,0}")]))
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
        fig.yaxis.ticker = FixedTicker(ticks=LOG_TICKS)
        fig.legend.location = "top_center"
        self.size_fig = fig
        self.size_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["ladder-size-plot"])

    @param.depends("size.error", "size.size", watch=True)
    @held
    def _show_stale(self, *messages) -> None:
        """The sizing's refusal; a banner while the label count shown is the last valid one (refused ε, η, k or δ)."""
        s = self.size
        self.size_error.object = error_html(s.error)
        bad = bool(s.error) or not all(box.valid for box in self.size_inputs.values())
        self.size_stale.object = stale_html("label count") if bad and s.size is not None else ""

    def _render(self, size, best) -> tuple:
        if size is None or best is None:
            return "", "", None
        setting = (f"ε = {fmt.number(size.epsilon)}, η = {fmt.number(size.step)}, k = {fmt.integer(size.submissions)}, "
                   f"δ = {fmt.number(size.delta)}")
        board = self._board(size.total_error)
        cards = headlines_html([
            headline_html("Labels needed", fmt.integer(size.labels), setting, css_class="ladder-labels"),
            headline_html("With the best step", fmt.integer(best.labels),
                          f"η = {fmt.number(best.step)}, ε = {fmt.number(best.epsilon)} (same total "
                          f"{fmt.number(best.total_error)})", css_class="ladder-best-labels"),
            *([] if board is None else [headline_html(
                "For the board above", fmt.integer(board.needed.labels),
                f"±{fmt.number(board.target)} for its {fmt.integer(board.submissions)} submissions; it has "
                f"{fmt.integer(board.examples)}", css_class="ladder-board-labels")]),
        ], "ladder-headlines")
        sentence = render("leaderboard/templates/size_sentence.html", size=size, best=best,
                          saved=size.labels - best.labels, board=board)
        return cards, sentence, board

    @param.depends("size.size", "size.best", "replay.result", "replay.delta", watch=True)
    @held
    def _show(self) -> None:
        """The cards and the sentence; the button names the board's k once the board above can be sized."""
        self.size_headlines.object, self.size_sentence.object, board = self._render(self.size.size, self.size.best)
        if board is not None:  # no board, or one Lemma 4 cannot size: the label stays
            self.use_board.label = f"Size the board above (k = {fmt.integer(board.submissions)})"

    @param.depends("size.size", "size.best", watch=True)
    @held
    def _on_size(self):
        """The curve and the two steps marked on it, in place."""
        s = self.size
        size, best = s.size, s.best
        if size is None or best is None:
            return
        eta, labels = s.curve()
        self.size_source.data = {"eta": eta, "labels": labels}
        inside = size.step < size.total_error * 0.95
        points = [(size.step, size.labels, "your η", ORANGE)] if inside else []
        points.append((best.step, best.labels, "best η", GREEN))
        self.size_points.data = {key: [p[i] for p in points] for i, key in enumerate(("eta", "labels", "what", "color"))}
        self.size_fig.title.text = f"Labels for each split of ε + η = {fmt.number(size.total_error)}"

    def _board(self, target: float):
        """The replayed board against ``target`` (None without a replay or for a target Lemma 4 cannot size)."""
        res = self.replay.result
        if res is None:
            return None
        try:
            board = board_size(res, target, self.replay.delta)
        except InputError:
            return None
        return board

    def _on_use_board(self, event) -> None:
        if self.replay.result is not None:
            self.size.submissions = self.replay.result.submissions

    def layout(self):
        return section(
            "How many test labels does a Ladder need?",
            "Lemma 4 of the lecture notes: the leaderboard error — how far the published score can be from the "
            "best true loss so far — exceeds ε + η with probability at most "
            "exp(−2ε²n + (1/η + 2)·log(4k/η) + 1).",
            [self.size_form, self.use_board, self.size_error],
            [self.size_stale, self.size_headlines, self.size_sentence, self.size_plot],
            "ladder", "ladder-size")


class BoostingAttack(PageSection):
    """Section 5: the boosting attack on a naive board and on the Ladder (a seeded simulation)."""

    attack = param.ClassSelector(class_=BoostingAttackModel)

    def __init__(self, attack: BoostingAttackModel, dispatch, **params):
        super().__init__(attack=attack, **params)
        self._dispatch = dispatch
        self._build_attack_inputs()
        self._build_attack()
        self.attack_step.visible = pn.bind(_fixed_step, attack.param.variant)
        self._on_attack_result()

    @param.depends("attack.result", watch=True)
    def _on_result(self):
        """A run's result arrives from its worker: shown on the session's next tick, under its lock."""
        self._dispatch(self._on_attack_result)

    def _build_attack_inputs(self):
        """Three Form models (issue 29): n, k and the variant; the step (shown only for the fixed step); trials, seed."""
        a = self.attack
        self.attack_inputs = _number_inputs(a, "attack", {"labels": "n (test labels)", "submissions": "k up to (probes)",
                                                          "trials": "Trials (averaged)", "seed": "Seed"})
        self.attack_variant = linked(a, "variant")
        self.attack_step_input = _form_input(a, "step", "Step η", "attack-step")
        inputs = self.attack_inputs
        variant = Field("variant", "Ladder", self.attack_variant, kind="buttons", classes=("attack-variant",),
                        options=list(VARIANT_LABELS.items()))
        self.attack_form = Form([inputs["labels"].field(), inputs["submissions"].field(),
                                 Note("<b>Ladder</b>", classes=("md-form-head",)), variant],
                                prefix="attack", css_classes=["attack-form"])
        self.attack_step = Form([self.attack_step_input.field()], prefix="attack-step",
                                css_classes=["attack-step-form"])
        self.attack_runs = Form([inputs["trials"].field(), inputs["seed"].field()], prefix="attack-runs",
                                css_classes=["attack-runs-form"])
        self.controls_attack = SimulationControls(a, run_label="Run the attack", css_prefix="ladder")

    def _build_attack(self):
        a = self.attack
        self.attack_headlines = HTML("", sizing_mode="stretch_width")
        self.attack_sentence = HTML("", sizing_mode="stretch_width", css_classes=["md-sentence"])
        self.attack_source = ColumnDataSource(self._attack_data())
        ink = colors.ink(pn.config.theme == "dark")[0]
        fig = figure(height=360, x_axis_label="k, random submissions probed",
                      x_range=Range1d(0, a.submissions + 1), y_axis_label="loss of the boosted submission",
                      title="Published score against k")
        naive = fig.line("k", "naive", source=self.attack_source, color=VERMILLION, line_width=2.5)
        ladder = fig.line("k", "ladder", source=self.attack_source, color=BLUE, line_width=2.5)
        holdout = fig.line("k", "holdout", source=self.attack_source, color=GREEN, line_width=2)
        reference = fig.line("k", "reference", source=self.attack_source, color=GREY, line_dash="dashed",
                             line_width=1.5)
        fig.add_layout(Span(location=0.5, dimension="width", line_color=ink, line_dash="dotted", line_width=1))
        fig.add_tools(HoverTool(renderers=[naive], mode="vline",
                                tooltips=[("k", "@k"), ("naive board", "@naive{0.0000}"),
                                          ("Ladder", "@ladder{0.0000}"), ("fresh holdout", "@holdout{0.0000}")]))
        legend(fig, [("naive board (published)", [naive]), ("Ladder (published)", [ladder]),
                     ("fresh holdout (truth)", [holdout]), ("½ − √(k/2n)/π (expected drift)", [reference])],
                "bottom_left", alpha=0.85)
        self.attack_fig = fig
        self.attack_plot = pn.pane.Bokeh(fig, sizing_mode="stretch_width", css_classes=["ladder-attack-plot"])

    def _attack_data(self) -> dict:
        """The last run's curves; before any run, the expected drift alone (so the axes have a range)."""
        res = self.attack.result
        if res is None:
            k, reference = self.attack.reference()
            empty = np.full(k.size, np.nan)
            return {"k": k, "naive": empty, "ladder": empty, "holdout": empty, "reference": reference}
        return {"k": res.submissions, "naive": res.naive_public, "ladder": res.ladder_public,
                "holdout": res.naive_holdout, "reference": res.reference}

    @param.depends("attack.labels", "attack.submissions", watch=True)
    @held
    def _on_attack_settings(self):
        if self.attack.result is None:
            self.attack_source.data = self._attack_data()

    @held
    def _on_attack_result(self):
        res = self.attack.result
        self.attack_source.data = self._attack_data()
        if res is None or not res.computed:
            return
        self.attack_fig.x_range.end = int(res.submissions[-1]) + 1
        v = res.at()
        k, n = v["submissions"], res.labels
        ladder_name = "parameter-free Ladder" if res.step is None else f"Ladder (η = {fmt.number(res.step)})"
        self.attack_headlines.object = headlines_html([
            headline_html("Naive board shows", fmt.number(v["naive_public"]), f"after k = {fmt.integer(k)} probes",
                          css_class="attack-naive"),
            headline_html("Ladder shows", fmt.number(v["ladder_public"]), ladder_name, css_class="attack-ladder"),
            headline_html("True loss (fresh holdout)", fmt.number(v["naive_holdout"]), "the attacker learned nothing",
                          css_class="attack-holdout"),
        ], "ladder-headlines")
        self.attack_sentence.object = render("leaderboard/templates/attack_sentence.html", n=n, k=k,
                                             gain=0.5 - v["naive_public"], root=math.sqrt(k / n), trials=res.trials,
                                             seed=res.seed)

    def layout(self):
        return section(
            "The boosting attack",
            "Section 5: overfitting a leaderboard without looking at any data. Seeded simulation; the test labels "
            "are random, so every honest loss is ½.",
            [self.attack_form, self.attack_step, self.attack_runs, self.controls_attack],
            [self.attack_headlines, self.attack_sentence, self.attack_plot],
            "ladder", "ladder-attack")


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

    The page is five sections: :class:`ReplayInputs`, :class:`ReplayAnswer`, :class:`ReplayFigure`
    (one titled block with the exports), :class:`LabelBound` and :class:`BoostingAttack`.

    Examples
    --------
    >>> import meter_dashboard as md
    >>> md.Ladder("my_losses.csv", step=0.01)  # doctest: +SKIP
    """

    title = "Ladder"
    extensions = ("filedropper",)

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
        self._dispatch = document_dispatch()
        served = pn.state.curdoc is not None and pn.state.curdoc.session_context is not None
        self.replay.param.update(offload=served)
        self.replay.dispatch = self._dispatch
        self._build_sections()
        self._follow_url(sync_url)
        if run_attack:
            if served:
                on_screen(self.attack.arun)
            else:
                self.attack.run()

    def _build_sections(self):
        self.replay_inputs = ReplayInputs(self.replay, self._dispatch)
        self.replay_answer = ReplayAnswer(self.replay, self.replay_inputs)
        self.replay_figure = ReplayFigure(self.replay)
        self._label_bound: LabelBound | None = None
        self.size_seen = WhenSeen(lambda: self.label_bound.__panel__(), height=SIZE_HEIGHT,
                                  text="The label bound is drawn when you scroll to it")
        self.attack_seen = WhenSeen(self._build_attack, height=ATTACK_HEIGHT,
                                    text="The boosting attack is drawn when you scroll to it")
        self.exports = Exports("ladder", self._file_stem, csv=self._replay_csv, slide=self._slide, report=self._report)
        # the parts notebooks and tests read by name
        self.table_file, self.upload = self.replay_inputs.table_file, self.replay_inputs.upload
        self.step, self.replay_error = self.replay_inputs.step, self.replay_inputs.replay_error
        self.replay_lead = self.replay_answer.replay_lead
        self.replay_source, self.replay_table = self.replay_figure.replay_source, self.replay_figure.replay_table

    @property
    def label_bound(self) -> LabelBound:
        """Lemma 4's section, made when first needed: scrolled to, a link's value for its boxes, a notebook."""
        if self._label_bound is None:
            self._label_bound = LabelBound(self.size, self.replay)
        return self._label_bound

    def _build_attack(self):
        self._boosting = BoostingAttack(self.attack, self._dispatch)
        return self._boosting.__panel__()

    @property
    def boosting(self) -> BoostingAttack:
        """The attack's section (built now if a served page has not scrolled to it yet)."""
        self.attack_seen.ensure()
        return self._boosting

    @property
    def attack_source(self) -> ColumnDataSource:
        return self.boosting.attack_source

    @property
    def attack_headlines(self) -> HTML:
        return self.boosting.attack_headlines

    def _follow_url(self, sync_url: bool) -> None:
        self.link_message = HTML("", sizing_mode="stretch_width", css_classes=["ladder-link-message"])
        sizing = {"epsilon": "epsilon", "size_step": "step", "submissions": "submissions", "delta": "delta"}
        self._link = UrlLink({"variant": (self.replay, "variant", None),
                              "step": (self.replay, "step", self.replay_inputs.step_input),
                              **{key: (self.size, name, None) for key, name in sizing.items()}})
        if sync_url and pn.state.location is not None:
            query = self._link.query()
            for key, name in sizing.items():  # typed into the sizing's box, refused beside it: the section is made
                if key in query:
                    self._link.bindings[key] = (self.size, name, self.label_bound.size_inputs[name])
            self.link_message.object = "".join(error_html(m) for m in self._link.apply())
            self._link.follow()

    def _file_stem(self) -> str:
        res = self.replay.result
        how = "parameter-free" if res is None or res.step is None else f"step{res.step:g}"
        return "ladder" if res is None else f"ladder_{res.submissions}-submissions_{how}"

    def _replay_csv(self) -> str | None:
        """The replay, one row per submission, with the inputs as ``# name: value`` lines."""
        return self.table_file.result_csv(lambda res: inputs(res, self.replay.delta))

    def _slide(self):
        res = self.replay.result
        return None if res is None else slide(res, self.replay.delta)

    def _report(self):
        res = self.replay.result
        return None if res is None else result_report(res, slide=slide(res, self.replay.delta),
                                                      subtitle="The Ladder leaderboard (Blum & Hardt, ICML 2015)")

    # ------------------------------------------------------------------ layout
    def results(self):
        if getattr(self, "_results", None) is None:
            replay = self._replay_section()
            # the link's message only when the link had something refused (most have none); without it the
            # section keeps the place the empty pane took (its margins), so nothing moves
            link = [self.link_message] if self.link_message.object else []
            if not link:
                replay.margin = (EMPTY_PANE_PX, 0, 24, 0)
            self._results = pn.Column(*link, replay, self.size_seen, self.attack_seen,
                                      sizing_mode="stretch_width", css_classes=["ladder-page"])
        return self._results

    def _replay_section(self):
        return section(
            "Replay a leaderboard",
            "Per-example losses of each submission (CSV: one row per test example, one column per submission, "
            "values in [0, 1]). The Ladder (Blum &amp; Hardt) publishes a new score only when a submission beats "
            "the last published one by more than a step, and rounds it; a naive board publishes every exact loss.",
            self.replay_inputs.parts(),
            [*self.replay_answer.parts(), self.exports.row, self.replay_figure.replay_plot,
             self.replay_figure.replay_table],
            "ladder", "ladder-replay")


def page():
    """The served Ladder page (URL-synced settings; the attack runs once on load)."""
    return Ladder(sync_url=True)
