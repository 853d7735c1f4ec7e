"""The /compare page's words for a manager and its slide, Panel-free (the page, the CLI, the report, notebooks).

:func:`lead` is the page's first sentence in plain words, from a
:class:`~meter_dashboard.comparison.model.CompareResult`.
"""
from __future__ import annotations

from ..core import formatting as fmt
from ..core import plain
from ..core.slide import Chart, Rule, Series, Slide

__all__ = ["lead", "inputs", "title", "slide"]

_VERDICT = {
    "not_significant": "we cannot tell the two apart: noise alone could explain the difference",
    "significant_not_meaningful": "A wins more often than chance, but not often enough to matter",
    "significant_and_meaningful": "A is better than B",
}


def lead(r) -> str:
    """``Model A beat model B in 72% of 50 paired runs (between 60% and 83%, 95 times in 100): A is better than B.``"""
    lo, hi = r.ci
    runs = f"{fmt.integer(r.runs)} {'paired' if r.paired else 'randomly paired'} run{'' if r.runs == 1 else 's'}"
    return (f"Model A beat model B in {fmt.percent(r.p_a_gt_b)} of {runs} (between {fmt.percent(lo)} and "
            f"{fmt.percent(hi)}, {plain.times_in(r.alpha)}): {_VERDICT[r.conclusion]}.")


def title(r) -> str:
    return f"A against B: P(A>B) = {fmt.number(r.p_a_gt_b)}"


def inputs(r) -> list:
    return [("Runs", f"{fmt.integer(r.runs_a)} of A, {fmt.integer(r.runs_b)} of B; {fmt.integer(r.runs)} "
                     + ("paired" if r.paired else "paired at random")),
            ("γ (meaningful above)", fmt.number(r.gamma)), ("α (1 − confidence)", fmt.number(r.alpha)),
            ("β (power 1 − β)", fmt.number(r.beta)), ("Bootstrap", f"{fmt.integer(r.resamples)} resamples, seed {r.seed}"),
            ("Runs needed (Noether)", fmt.integer(r.runs_needed))]


def slide(r):
    """The /compare slide: title, :func:`lead`, the inputs, the bootstrap distribution of P(A>B) with 0.5 and γ."""
    x = tuple(w / r.runs for w in range(r.counts.size))
    lo, hi = r.ci
    chart = Chart("P(A>B)", "bootstrap replicates", (Series("bootstrap replicates", x, tuple(int(c) for c in r.counts),
                                                            "#0072B2", "step"),),
                  rules=(Rule("x", 0.5, "0.5: chance"), Rule("x", r.gamma, f"γ = {fmt.number(r.gamma)}", "#D55E00"),
                         Rule("x", lo, "", "#009E73"), Rule("x", hi, "interval", "#009E73")))
    return Slide(title(r), lead(r), tuple(inputs(r)), chart)
