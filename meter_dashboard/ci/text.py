"""The /ci page's words for a manager and its slide, Panel-free (the page, the CLI, the report, notebooks).

:func:`lead` is the page's first sentence in plain words, from a :class:`~meter_dashboard.ci.plan.CIResult`;
:func:`slide` composes the meeting slide (:mod:`meter_dashboard.core.slide`).
"""
from __future__ import annotations

from ..core import formatting as fmt
from ..core import plain
from ..core.slide import Chart, Series, Slide

__all__ = ["lead", "savings", "inputs", "title", "slide"]


def lead(r) -> str:
    """``With 21,127 labelled examples we can check 32 new commits against "n - o > 0.02 +/- 0.02", …``.

    Every number comes from the result: the baseline count, H, the condition, 1 − δ; the
    optimized count and the labels per commit when the optimizations cut the count.
    """
    commits = f"{fmt.integer(r.steps)} new commit{'' if r.steps == 1 else 's'}"
    text = (f"With {fmt.integer(r.labels)} labelled examples we can check {commits} against \"{r.condition}\", "
            f"all the pass or fail verdicts right {plain.times_in(r.delta)}")
    return text + savings(r, " (with the optimizations {} labelled examples are enough", ")") + "."


def savings(r, cut: str, close: str = "") -> str:
    """What the optimizations save, in words: ``cut`` with the optimized count, then the labels per commit.

    ``''`` when they save nothing; the page's lead and the result's sentence (``CIResult.sentence``)
    say it in their own words around the same numbers.
    """
    if r.optimized is None or r.optimized >= r.labels:
        return ""
    text = cut.format(fmt.integer(r.optimized))
    if r.labels_per_commit is not None and 0 < r.labels_per_commit < r.optimized:
        text += f", or {fmt.integer(r.labels_per_commit)} labels per commit with active labeling"
    return text + close


def title(r) -> str:
    return f"ease.ml/ci: {fmt.integer(r.labels)} labels for {fmt.integer(r.steps)} commits"


def inputs(r) -> list:
    """(name, value) pairs of what the counts used."""
    pairs = [("Condition", r.condition), ("Reliability 1 − δ", f"{fmt.confidence(r.delta)} (δ = {fmt.number(r.delta)})"),
             ("Adaptivity", r.adaptivity), ("Mode", r.mode), ("Commits per test set H", fmt.integer(r.steps)),
             ("Bound", "exact binomial tails" if r.bound == "binomial" else "Hoeffding (the paper's)")]
    if r.difference_bound is not None:
        pairs.append(("Difference bound p", fmt.number(r.difference_bound)))
    pairs.append(("Labeling", f"{fmt.number(r.seconds_per_label)} s per label, {r.labelers} labeler"
                              + ("s" if r.labelers != 1 else "")))
    return pairs


def slide(r):
    """The /ci slide: title, :func:`lead`, the inputs and labels against H (Hoeffding's curves, the answer marked)."""
    from .plan import ci_curves

    h = max(64, 2 * r.steps)
    axis = tuple(range(1, h + 1))
    curves = ci_curves(r.condition, r.reliability, axis, r.mode, difference_bound=r.difference_bound,
                       adaptivities=(r.adaptivity,))[r.adaptivity]
    series = [Series("labels (baseline, Hoeffding)", axis, tuple(curves["baseline"].tolist()), "#0072B2")]
    if curves.get("optimized") is not None:
        series.append(Series("optimized", axis, tuple(curves["optimized"].tolist()), "#E69F00"))
    chart = Chart("commits per test set H", "labels", tuple(series), log_y=True,
                  marks=((r.steps, r.labels, f"H = {fmt.integer(r.steps)}: {fmt.integer(r.labels)} labels"),))
    return Slide(title(r), lead(r), tuple(inputs(r)), chart)
