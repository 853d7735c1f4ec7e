"""The /ladder page's words for a manager and its slide, Panel-free (the page, the CLI, the report, notebooks).

:func:`lead` is the page's first sentence in plain words, from a
:class:`~meter_dashboard.leaderboard.model.LadderResult` (and the δ of the guarantee, when given).
"""
from __future__ import annotations

from ..core import formatting as fmt
from ..core import plain
from ..core.slide import Chart, Series, Slide

__all__ = ["lead", "inputs", "title", "slide"]


def lead(r, delta: float | None = None) -> str:
    """How many submissions, on how many labels, how often a new best was published, and how close it is.

    With ``delta``: the leaderboard error the labels guarantee (Blum & Hardt 2015, Lemma 4
    inverted: :func:`meter_dashboard.bounds.ladder.leaderboard_error`).
    """
    how = ("only when it beats the best by more than its noise" if r.step is None
           else f"only when it beats the best by at least {fmt.number(r.step)}")
    text = (f"Our leaderboard ranked {fmt.integer(r.submissions)} submission{'' if r.submissions == 1 else 's'} on "
            f"{fmt.integer(r.examples)} labelled examples and published a new best score "
            f"{fmt.integer(r.releases)} time{'' if r.releases == 1 else 's'}: the Ladder shows a new score {how}")
    if delta is not None:
        from ..bounds.ladder import leaderboard_error

        total = leaderboard_error(r.examples, r.submissions, delta)[0]
        if total < 1:
            text += (f", so every published score is within {plain.points([total])} of the truth, "
                     f"{plain.times_in(delta)}")
        else:
            text += f"; {fmt.integer(r.examples)} labels guarantee no useful accuracy for this many submissions"
    return text + "."


def title(r) -> str:
    return f"Ladder leaderboard: {fmt.integer(r.submissions)} submissions, {fmt.integer(r.releases)} published"


def inputs(r, delta: float | None = None) -> list:
    pairs = [("Losses", r.source or "a table of losses"), ("Submissions", fmt.integer(r.submissions)),
             ("Labelled examples", fmt.integer(r.examples)),
             ("Ladder", "parameter-free (Algorithm 2)" if r.step is None else f"fixed step {fmt.number(r.step)}")]
    if delta is not None:
        pairs.append(("δ (failure probability)", fmt.number(delta)))
    return pairs


def slide(r, delta: float | None = None):
    """The /ladder slide: title, :func:`lead`, the inputs, the naive best and the Ladder's score per submission."""
    x = tuple(range(1, r.submissions + 1))
    chart = Chart("submission", "loss", (
        Series("naive leaderboard (best so far)", x, tuple(float(v) for v in r.best_naive), "#D55E00", "step"),
        Series("Ladder score", x, tuple(float(v) for v in r.scores), "#0072B2", "step")),
        marks=((r.submissions, float(r.scores[-1]), f"published {fmt.number(float(r.scores[-1]))}"),)
        if r.submissions else ())
    return Slide(title(r), lead(r, delta), tuple(inputs(r, delta)), chart)
