"""The planner's numbers in words, Panel-free (the page's markup, the HTML report and the summary share them).

Every number follows :mod:`meter_dashboard.core.formatting` (thousands separators everywhere);
a tolerance ε of 1 or more guarantees nothing and reads "none".  :func:`budget_status` and
:func:`budget_sentence` say what a label budget does for the plan - including when it falls
short, in numbers (issue 24).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ..bounds.meter import VARIANTS
from ..core import formatting as fmt
from ..core import plain
from ..core.slide import Chart, Rule, Series, Slide
from .result import RECOMMENDED, VARIANT_TITLES

__all__ = ["steps_shown", "confidence_shown", "confidence_rounded", "epsilon_shown", "ratio_shown", "budget_status", "BudgetStatus",
           "budget_sentence", "plan_title", "plan_inputs", "file_stem", "summary_text", "comparison", "comparison_text",
           "lead", "slide"]

#: Above this many steps the count is written in scientific notation (rounded down: it stays supported).
_SCIENTIFIC_STEPS = 10**7


def steps_shown(value) -> str:
    """A largest T, short enough for a phone card: ``79,884,252,832`` -> ``7.98×10¹⁰`` (rounded down)."""
    if isinstance(value, numbers.Real) and math.isfinite(value) and not value < _SCIENTIFIC_STEPS:
        exponent = int(math.floor(math.log10(value)))
        mantissa = math.floor(value / 10 ** (exponent - 2)) / 100
        return fmt.scientific(mantissa * 10**exponent, 3)
    return fmt.steps_text(value)


def confidence_shown(achieved_delta) -> str:
    """The confidence a count delivers (``1 − δ'``): 'none' at or below 0, 3 digits below 0.9, else exact."""
    if achieved_delta is None:
        return "—"
    if achieved_delta >= 1:
        return "none"
    if achieved_delta > 0.1:
        return fmt.number(1.0 - achieved_delta, 3)
    return fmt.confidence(achieved_delta)


def epsilon_shown(value, digits: int = 4) -> str:
    """A tolerance: 'none' when it is 1 or more (or infinite: no such guarantee), else ``digits`` digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if value >= 1:
        return "none"
    return fmt.number(value, digits)


def confidence_rounded(value) -> str:
    """A confidence in a sentence: ``0.634``; near 1 never rounded up to it: ``0.952`` (0.95219), ``0.99991``."""
    if value is None or value <= 0:
        return "none"
    if value <= 0.9:
        return fmt.number(value, 3)
    failure = 1.0 - value
    mantissa, exponent = f"{failure:.1e}".split("e")  # two significant digits of the failure probability...
    shown = float(f"{mantissa}e{exponent}")
    if shown < failure * (1 - 1e-9):  # ... rounded up, so the confidence is never overstated
        shown = float(f"{float(mantissa) + 0.1:.1f}e{exponent}")
    return fmt.confidence(shown)


def ratio_shown(value) -> str:
    """``10.00×``, ``1,000,000,000×`` (separators; no decimals once it is large)."""
    return f"{value:,.2f}×" if value < 1000 else f"{value:,.0f}×"


@dataclass(frozen=True)
class BudgetStatus:
    """What the label budget does for the plan of one variant (the recommended one by default)."""

    variant: str
    budget: int
    needed: int
    steps: int
    largest_steps: object  # int, math.inf (beyond the search) or None (refused)
    epsilon: float  # smallest ε₁ the budget supports at the plan's T
    confidence: float  # what the budget's labels give at the plan's T, ε and δ

    @property
    def short(self) -> int:
        """Labels missing for the plan (0 when the budget covers it)."""
        return max(self.needed - self.budget, 0)


def budget_status(r, variant: str = RECOMMENDED) -> BudgetStatus | None:
    """The budget's answers for ``variant`` of result ``r``; None without a budget or while they compute."""
    if r.budget is None or r.max_steps is None or r.is_pending("budget", variant) or r.min_epsilon[variant] is None:
        return None  # no budget, still computing, or not asked for
    return BudgetStatus(variant, r.budget, r.labels[variant], r.steps, r.max_steps[variant], r.min_epsilon[variant],
                        r.confidence[variant])


def budget_sentence(status: BudgetStatus) -> str:
    """``20,000 labels: 18,005 short for T = 10 — at T = 10 they support ε₁ ≥ 0.0138, or confidence 0.634``.

    When the budget covers the plan: ``50,000 labels cover T = 10 (11,995 to spare) and support up to T = 110``.
    """
    b, t = fmt.integer(status.budget), fmt.integer(status.steps)
    if status.short:
        conf = "no confidence at the planned ε" if status.confidence is None or status.confidence <= 0 else \
            f"confidence {confidence_rounded(status.confidence)}"
        eps = epsilon_shown(status.epsilon, 3)
        support = (f"ε₁ ≥ {eps}, or {conf}" if eps != "none" else f"no ε₁ below 1, and {conf}")
        return f"{b} labels: {fmt.integer(status.short)} short for T = {t} — at T = {t} they support {support}"
    spare = status.budget - status.needed
    return (f"{b} labels cover T = {t} ({fmt.integer(spare)} to spare) and support up to "
            f"T = {steps_shown(status.largest_steps)}")


def plan_inputs(r, ranges=None) -> list[tuple[str, str]]:
    """The plan's inputs as (name, value) text pairs: the report's facts, the CSV's header, the summary."""
    pairs = [("ε (tolerance per signal)", fmt.number_list(r.epsilon) + f"  (m = {r.signals} signals)")]
    if ranges is not None:
        pairs.append(("Ranges of empirical overfitting", fmt.number_list(ranges)))
    pairs += [("δ (failure probability)", f"{fmt.number(r.delta)}  (confidence 1 − δ = {fmt.confidence(r.delta)})"),
              ("T (development steps)", fmt.integer(r.steps))]
    if len(r.tenant_steps) > 1:
        pairs.append(("Tenants (steps each)", ", ".join(fmt.integer(t) for t in r.tenant_steps)))
    if r.reverts:
        pairs.append(("Reverts (fixed in advance)", ", ".join(str(t) for t in r.reverts)))
    pairs.append(("Per-model bound", r.bound_title))
    if r.max_error_rate is not None:
        pairs.append(("Error-rate range a", f"every submitted model errs at most {fmt.number(r.max_error_rate)}"))
    effort = f"{fmt.number(r.seconds_per_label)} s per label, {r.labelers} labeler{'s' if r.labelers > 1 else ''}"
    if r.cost_per_hour is not None:
        effort += f", {fmt.number(r.cost_per_hour)} per labeler-hour"
    pairs.append(("Labeling", effort))
    if r.budget is not None:
        pairs.append(("Label budget", fmt.integer(r.budget)))
    return pairs


def file_stem(r) -> str:
    """A file name carrying the plan's parameters: ``meter-plan_T10_delta0.01_eps0.01-0.05_m5``."""
    eps = f"{r.epsilon[0]:g}" if len(set(r.epsilon)) == 1 else f"{r.epsilon[0]:g}-{r.epsilon[-1]:g}"
    rate = f"-a{r.max_error_rate:g}" if r.max_error_rate is not None else ""
    optional = {f"tenants{len(r.tenant_steps)}": len(r.tenant_steps) > 1, f"reverts{len(r.reverts)}": bool(r.reverts),
                f"{r.bound}{rate}": r.bound != "hoeffding", f"budget{r.budget}": r.budget is not None}
    parts = ["meter-plan", f"T{r.steps}", f"delta{r.delta:g}", f"eps{eps}", f"m{r.signals}"]
    return "_".join(parts + [part for part, shown in optional.items() if shown])


def plan_title(r) -> str:
    """The report's title: the labels for T, or the budget's shortfall when it falls short."""
    status = budget_status(r)
    if status is not None and status.short:
        return (f"Test-set plan: {fmt.integer(status.budget)} labels are {fmt.integer(status.short)} short "
                f"for {fmt.integer(r.steps)} development steps")
    return f"Test-set plan: {fmt.integer(r.labels[RECOMMENDED])} labels for {fmt.integer(r.steps)} development steps"


def summary_text(r, inputs: list[tuple[str, str]], link: str = "") -> str:
    """Minutes of the meeting, plain text: the inputs, the five counts, the sentence (and the link)."""
    width = max(len(VARIANT_TITLES[v]) for v in VARIANTS)
    lines = ["Test-set plan (ease.ml/meter)", ""]
    lines += [f"{name}: {value}" for name, value in inputs]
    lines += ["", f"Labels ({r.bound_title}):"]
    for v in VARIANTS:
        mark = "  <- recommended" if v == RECOMMENDED else ""
        lines.append(f"  {VARIANT_TITLES[v]:<{width}}  {fmt.integer(r.labels[v]):>16}{mark}")
    lines += ["", r.sentence()]
    status = budget_status(r)
    if status is not None:
        lines.append(budget_sentence(status) + ".")
    if link:
        lines += ["", f"Shared plan: {link}"]
    return "\n".join(lines)


def _signed(value: int) -> str:
    return "0" if value == 0 else ("+" if value > 0 else "−") + fmt.integer(abs(value))


def comparison(pinned, current, pinned_ranges=None, current_ranges=None) -> tuple[list, list]:
    """``(headers, rows)``: a pinned plan beside the current one, as text cells.

    The settings that differ, then every variant's labels (the difference: current − pinned),
    the labeling effort of the recommended meter and, when either has a budget, the largest T it supports.
    """
    headers = ["", "pinned", "current", "current − pinned"]
    a, b = dict(plan_inputs(pinned, pinned_ranges)), dict(plan_inputs(current, current_ranges))
    rows = [[name, a.get(name, "—"), b.get(name, "—"), ""] for name in dict.fromkeys([*a, *b])
            if a.get(name) != b.get(name)]
    for v in VARIANTS:
        mark = " (recommended)" if v == RECOMMENDED else ""
        rows.append([f"{VARIANT_TITLES[v]}{mark}: labels", fmt.integer(pinned.labels[v]), fmt.integer(current.labels[v]),
                     _signed(current.labels[v] - pinned.labels[v])])
    rows.append([f"{VARIANT_TITLES[RECOMMENDED]}: labeler-hours", fmt.hours(pinned.labeler_hours[RECOMMENDED]),
                 fmt.hours(current.labeler_hours[RECOMMENDED]), ""])
    if pinned.budget is not None or current.budget is not None:
        def largest(r):
            status = budget_status(r)
            return "—" if status is None else steps_shown(status.largest_steps)

        rows.append([f"{VARIANT_TITLES[RECOMMENDED]}: largest T the budget supports", largest(pinned), largest(current),
                     ""])
    return headers, rows


def comparison_text(pinned, current, pinned_ranges=None, current_ranges=None) -> str:
    """The comparison as plain text (the CLI, the summary)."""
    headers, rows = comparison(pinned, current, pinned_ranges, current_ranges)
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             .rstrip() for row in [headers, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def lead(r, variant: str = RECOMMENDED) -> str:
    """The page's first sentence, in plain words: labels, model versions, points of accuracy, how often.

    >>> from meter_dashboard import plan
    >>> lead(plan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10))
    'With 38,005 labelled examples we can test 10 model versions, each reported accuracy within 1–5 points of the truth, 99 times in 100.'
    """
    versions = "1 model version" if variant == "single_model" or r.steps == 1 else f"{fmt.integer(r.steps)} model versions"
    return (f"With {fmt.integer(r.labels[variant])} labelled examples we can test {versions}, each reported accuracy "
            f"within {plain.points(r.epsilon)} of the truth, {plain.times_in(r.delta)}.")


def slide(r):
    """The planner's slide: the title, :func:`lead`, the inputs and labels against T (the answer marked)."""
    from ..core.colors import VARIANT_COLORS  # Bokeh's palettes: not on the CLI's import path
    from .curves import hoeffding_curve, t_axis

    axis = t_axis(r.steps)
    curves = hoeffding_curve(tuple(r.epsilon), float(r.delta), len(r.tenant_steps), tuple(r.reverts), int(axis[-1]))
    suffix = "" if r.bound == "hoeffding" else " (Hoeffding)"
    series = tuple(Series(VARIANT_TITLES[v] + suffix, tuple(axis.tolist()), tuple(curves[v].tolist()), VARIANT_COLORS[v])
                   for v in ("regular", RECOMMENDED))
    rules = (Rule("y", r.budget, f"budget {fmt.integer(r.budget)}"),) if r.budget is not None else ()
    n = r.labels[RECOMMENDED]
    chart = Chart("development steps T", "labels", series, log_y=True, rules=rules,
                  marks=((r.steps, n, f"T = {fmt.integer(r.steps)}: {fmt.integer(n)} labels"),))
    return Slide(plan_title(r), lead(r), tuple(plan_inputs(r)), chart)
