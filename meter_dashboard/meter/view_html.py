"""The planner page's HTML, built from a :class:`~meter_dashboard.meter.result.PlanResult` (no Panel).

Each function returns the markup of one pane, with the classes of ``dashboard.css`` and the
stable hooks the tests use (``label-count-<variant>``, ``hoeffding-count-<variant>``,
``bound-saving-<variant>``, ``budget-steps-<variant>``, ...).  A number still being
computed (the exact counts stream in on a served page) shows as "computing…".
"""
from __future__ import annotations

from ..bounds.meter import VARIANTS
from ..core import formatting as fmt
from ..ui.style import esc, headline_html, headlines_html, stale_html, swatch_html
from .result import RECOMMENDED, VARIANT_TITLES, variant_note
from .text import confidence_shown, steps_shown

__all__ = ["results_table", "budget_html", "headlines", "range_check_html", "progress_html", "assumptions_html",
           "computing", "PENDING"]

PENDING = '<span class="md-pending">computing…</span>'


def computing() -> str:
    """The first response of a served page: the cards' places, "computing…" in each."""
    cards = [headline_html(label, "", "", "") for label in ("Labels", "Labeling effort", "Guarantee")]
    return ('<div class="planner-computing">' + headlines_html(cards).replace(
        '<span class="md-headline-value "></span>', f'<span class="md-headline-value">{PENDING}</span>')
            + "</div>")

def _count_cell(r, v: str) -> str:
    if r.bound != "hoeffding" and r.is_pending("labels", v):
        return PENDING
    text = fmt.integer(r.labels[v])
    return text + "*" if v in r.refused else text


def _saving_cell(r, v: str) -> str:
    if r.is_pending("labels", v):
        return PENDING
    if v in r.refused:
        return "—"
    saved = r.label_savings[v]
    return f"{fmt.integer(saved)} ({fmt.percent(saved / r.hoeffding_labels[v], 2)})"


def results_table(r) -> str:
    """Every variant: the chosen bound's count (beside Hoeffding's and the saving), effort, method."""
    exact = r.bound != "hoeffding"
    has_cost = r.cost is not None
    head = ("<tr><th>variant</th><th class='num'>labels</th>"
            + ("<th class='num'>Hoeffding</th><th class='num'>saving</th>" if exact else "")
            + "<th class='num planner-wide'>× fewer than resampling</th><th class='num'>labeler-hours</th>"
              "<th class='num planner-wide'>calendar hours</th>"
            + (f"<th class='num'>cost (at {fmt.number(r.cost_per_hour)} per labeler-hour)</th>" if has_cost else "")
            + "<th>method</th></tr>")
    rows = []
    for v in VARIANTS:
        cls = ' class="md-recommended"' if v == r.recommended else ""
        waiting = exact and r.is_pending("labels", v)
        effort = (lambda text: PENDING if waiting else text)  # noqa: E731 - effort follows the pending count
        rows.append(
            f"<tr{cls}><td>{swatch_html(f'variant-{v}')}{esc(VARIANT_TITLES[v])}</td>"
            f'<td class="num label-count label-count-{v}">{_count_cell(r, v)}</td>'
            + (f'<td class="num hoeffding-count hoeffding-count-{v}">{fmt.integer(r.hoeffding_labels[v])}</td>'
               f'<td class="num bound-saving bound-saving-{v}">{_saving_cell(r, v)}</td>' if exact else "")
            + f'<td class="num planner-wide">{effort(f"{r.savings[v]:,.2f}×")}</td>'
            f'<td class="num">{effort(f"{r.labeler_hours[v]:,.1f}")}</td>'
            f'<td class="num planner-wide">{effort(f"{r.calendar_hours[v]:,.1f}")}</td>'
            + (f'<td class="num">{effort(fmt.money(r.cost[v]))}</td>' if has_cost else "")
            + f"<td class='md-plain'>{esc(variant_note(v, r.bound))}</td></tr>")
    foot = ""
    if r.refused:
        foot = ('<div class="md-note">* no exact count (' + esc("; ".join(sorted(set(r.refused.values()))))
                + "): Hoeffding's count is shown.</div>")
    caption = (f'<div class="md-note planner-bound-caption">labels: {esc(r.bound_title)}; Hoeffding\'s count '
               "(the paper's) beside it, and the labels saved.</div>" if exact else "")
    return f'{caption}<table class="md-table planner-results">{head}{"".join(rows)}</table>{foot}'


def budget_html(r) -> str:
    """What the label budget buys: largest T, smallest ε₁ and the confidence at T, per variant."""
    if r.budget is None:
        return ""
    rows = []
    for v in VARIANTS:
        if r.is_pending("budget", v):
            cells = [PENDING] * 3
        else:
            conf = r.confidence[v]
            cells = [steps_shown(r.max_steps[v]), fmt.number(r.min_epsilon[v]),
                     "none" if conf is None or conf <= 0 else confidence_shown(1.0 - conf)]
        rows.append(f"<tr><td>{esc(VARIANT_TITLES[v])}</td>"
                    f'<td class="num budget-steps-{v}">{cells[0]}</td>'
                    f'<td class="num budget-epsilon-{v}">{cells[1]}</td>'
                    f'<td class="num budget-confidence-{v}">{cells[2]}</td></tr>')
    bound = "" if r.bound == "hoeffding" else f"; {esc(r.bound_title)}"
    return (f'<div class="md-section"><b>What {fmt.integer(r.budget)} labels buy</b> '
            f'<span class="md-note">(inverse questions; ε vector scaled together{bound})</span>'
            f'<table class="md-table"><tr><th>variant</th><th class="num">largest T</th>'
            f'<th class="num">smallest ε₁ at T = {r.steps}</th><th class="num">confidence at T = {r.steps}</th></tr>'
            + "".join(rows) + "</table></div>")


def headlines(r, stale: bool, budget_from=None) -> str:
    """The big numbers: the recommended count (with Hoeffding's beside it), effort, guarantee, budget.

    ``budget_from`` is the result whose budget answer to show (default ``r``).
    """
    b = budget_from if budget_from is not None else r
    rec = RECOMMENDED
    exact = r.bound != "hoeffding"
    waiting = exact and r.is_pending("labels", rec)
    effort = f"{fmt.hours(r.calendar_hours[rec])} with {r.labelers} labeler{'s' if r.labelers > 1 else ''}"
    if r.cost:
        effort += f" · cost {fmt.money(r.cost[rec], r.cost_per_hour)}"
    if not exact:
        sub = f"{r.savings[rec]:.1f}× fewer than resampling"
    elif waiting:
        sub = "Hoeffding's count; the exact count is computing…"
    elif rec in r.refused:
        sub = "Hoeffding's count (no exact count)"
    else:
        sub = (f"{r.bound_title} · Hoeffding {fmt.integer(r.hoeffding_labels[rec])}, saves "
               f"{fmt.integer(r.label_savings[rec])}")
    count = r.hoeffding_labels[rec] if waiting else r.labels[rec]
    cards = [
        headline_html(f"{VARIANT_TITLES[rec]} · labels", fmt.integer(count), sub, "headline-labels"),
        headline_html("Labeling effort", "…" if waiting else fmt.hours(r.labeler_hours[rec]),
                      "" if waiting else effort),
        headline_html("Guarantee", f"1 − δ = {fmt.confidence(r.delta)}",
                      f"ε₁ = {fmt.number(r.epsilon[0])} … ε_m = {fmt.number(r.epsilon[-1])}, m = {r.signals}"),
    ]
    if b.budget is not None:
        t = None if b.is_pending("budget", rec) else b.max_steps[rec]
        cards.append(headline_html(f"Budget {fmt.integer(b.budget)} labels",
                                   "…" if t is None else steps_shown(t) + " steps",
                                   f"the {VARIANT_TITLES[rec].lower()} supports", "headline-budget-steps"))
    return (stale_html("plan") if stale else "") + headlines_html(cards)


def range_check_html(r) -> str:
    """With an error-rate range: how far the counts move if it is wrong (every variant)."""
    if r.bound == "hoeffding" or r.max_error_rate is None:
        return ""
    a = r.max_error_rate
    rows = []
    for v in VARIANTS:
        if r.is_pending("unrestricted", v) or r.is_pending("labels", v):
            without, conf = PENDING, PENDING
        else:
            n = r.unrestricted_labels.get(v)
            c = r.unrestricted_confidence.get(v)
            without = "—" if n is None else fmt.integer(n)
            conf = "—" if c is None else ("none" if c <= 0 else confidence_shown(1.0 - c))
        rows.append(f"<tr><td>{esc(VARIANT_TITLES[v])}</td><td class='num'>{_count_cell(r, v)}</td>"
                    f'<td class="num range-without-{v}">{without}</td>'
                    f'<td class="num range-confidence-{v}">{conf}</td></tr>')
    return (f'<div class="md-section planner-range"><b>If the error-rate range is wrong</b>'
            f'<div class="md-caveat">The range a = {fmt.number(a)} must hold for every model the developer '
            f"might submit (accuracy at least {fmt.number(1 - a)}), including bad ones submitted in response to "
            f"the signals. If any model errs more, the counts without the range apply, and the planned counts "
            f"deliver only the confidence on the right (not 1 − δ = {fmt.confidence(r.delta)}).</div>"
            f'<table class="md-table"><tr><th>variant</th><th class="num">planned (a = {fmt.number(a)})'
            f'</th><th class="num">without the range</th><th class="num">confidence if wrong</th></tr>'
            + "".join(rows) + "</table></div>")


def progress_html(r, curves: dict, sweep: dict, work_error: str = "") -> str:
    """One line on the exact work still under way (empty when there is none)."""
    if work_error:
        return f'<div class="md-error">{esc(work_error)}</div>'
    if r is None:
        return ""
    parts = []
    counts = sum(r.is_pending("labels", v) for v in VARIANTS)
    if counts:
        parts.append(f"exact counts: {5 - counts} of 5 variants")
    unrestricted = sum(r.is_pending("unrestricted", v) for v in VARIANTS)
    if unrestricted:
        parts.append(f"counts without the range: {5 - unrestricted} of 5")
    budget = sum(r.is_pending("budget", v) for v in VARIANTS)
    if budget and r.bound != "hoeffding":
        parts.append(f"budget answers: {5 - budget} of 5")
    for name, c in (("curve over T", curves), ("second plot", sweep)):
        if c and c.get("bound", "hoeffding") != "hoeffding" and c.get("computed", 0) < max(c.get("planned", 0), 1):
            parts.append(f"{name}: {c.get('computed', 0)} of {c.get('planned') or '…'} exact points")
    if not parts:
        return ""
    return ('<div class="md-note planner-progress"><span class="md-pending">Computing in the background</span> — '
            + esc(" · ".join(parts)) + ". Hoeffding's numbers are shown meanwhile.</div>")


def assumptions_html(notes) -> str:
    return ('<div class="md-note"><b>Assumptions</b><ul>' + "".join(f"<li>{esc(n)}</li>" for n in notes)
            + "</ul></div>")
