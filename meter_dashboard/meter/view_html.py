"""The planner page's HTML, from a :class:`~meter_dashboard.meter.result.PlanResult` (no Panel).

Each function returns the markup of one pane, rendered by a Jinja2 template with autoescape
(``meter/templates/*.html`` through :mod:`meter_dashboard.core.html`): the values are prepared
here as text, the templates place them with the classes of ``dashboard.css`` and the stable
hooks the tests use (``label-count-<variant>``, ``hoeffding-count-<variant>``,
``bound-saving-<variant>``, ``budget-steps-<variant>``, ...).  A value still being computed
(the exact counts stream in on a served page) is ``None`` and shows as "computing…".

Only what holds is said: the guarantee card names the labels it needs, a budget that falls
short says by how much and what it does support, in the alarm colour (issue 24).
"""
from __future__ import annotations

from ..bounds.meter import VARIANTS
from ..core import formatting as fmt
from ..core.html import render
from .result import RECOMMENDED, VARIANT_TITLES, variant_note
from .text import budget_sentence, budget_status, confidence_shown, epsilon_shown, ratio_shown, steps_shown

__all__ = ["answer", "budget_html", "assumptions_html", "computing", "progress_text", "cards"]

_TEMPLATES = "meter/templates/"


def computing() -> str:
    """The first response of a served page: the cards' places, "computing…" in each."""
    return render(_TEMPLATES + "computing.html", labels=("Labels", "Labeling effort", "Guarantee"))


def _effort_text(r) -> str:
    rec = RECOMMENDED
    text = f"{fmt.hours(r.calendar_hours[rec])} with {fmt.integer(r.labelers)} labeler{'s' if r.labelers > 1 else ''}"
    if r.cost:
        text += f" · cost {fmt.money(r.cost[rec], r.cost_per_hour)}"
    return text


def _card(label: str, value: str, sub: str = "", css: str = "", card_css: str = "") -> dict:
    return dict(label=label, value=value, sub=sub, css=css, card_css=card_css)


def cards(r, budget_from=None) -> list[dict]:
    """The big numbers: the recommended count (Hoeffding's beside it), effort, guarantee, budget."""
    b = budget_from if budget_from is not None else r
    rec = RECOMMENDED
    exact = r.bound != "hoeffding"
    waiting = exact and r.is_pending("labels", rec)
    if not exact:
        sub = f"{ratio_shown(r.savings[rec])} fewer than resampling"
    elif waiting:
        sub = "Hoeffding's count; the exact count is computing"
    elif rec in r.refused:
        sub = "Hoeffding's count (no exact count)"
    else:
        sub = (f"{r.bound_title} · Hoeffding {fmt.integer(r.hoeffding_labels[rec])}, saves "
               f"{fmt.integer(r.label_savings[rec])}")
    count = r.hoeffding_labels[rec] if waiting else r.labels[rec]
    out = [
        _card(f"{VARIANT_TITLES[rec]} · labels", fmt.integer(count), sub, "headline-labels"),
        _card("Labeling effort", "computing" if waiting else fmt.hours(r.labeler_hours[rec]),
              "" if waiting else _effort_text(r)),
        _card(f"Guarantee with {fmt.integer(count)} labels", f"1 − δ = {fmt.confidence(r.delta)}",
              f"ε₁ = {fmt.number(r.epsilon[0])} to ε_m = {fmt.number(r.epsilon[-1])}, m = {r.signals}"),
    ]
    if b.budget is not None:
        out.append(_budget_card(b))
    return out


def _budget_card(b) -> dict:
    status = budget_status(b)
    label = f"Budget {fmt.integer(b.budget)} labels"
    if status is None:
        return _card(label, "computing", css="headline-budget-steps")
    meter = VARIANT_TITLES[status.variant].lower()
    if status.short:
        return _card(label, f"{fmt.integer(status.short)} short", f"for T = {fmt.integer(status.steps)} with the {meter}",
                     "headline-budget-steps", "planner-alarm")
    return _card(label, f"{steps_shown(status.largest_steps)} steps", f"the {meter} supports", "headline-budget-steps")


def _row(r, v: str) -> dict:
    exact = r.bound != "hoeffding"
    waiting = exact and r.is_pending("labels", v)
    shown = (lambda text: None if waiting else text)  # noqa: E731 - effort follows the pending count
    labels = None if waiting else fmt.integer(r.labels[v]) + ("*" if v in r.refused else "")
    if waiting:
        saving = None
    elif v in r.refused or not exact:
        saving = "—"
    else:
        saved = r.label_savings[v]
        saving = f"{fmt.integer(saved)} ({fmt.percent(saved / r.hoeffding_labels[v], 2)})"
    return dict(variant=v, title=VARIANT_TITLES[v], recommended=v == RECOMMENDED, labels=labels,
                hoeffding=fmt.integer(r.hoeffding_labels[v]), saving=saving, fewer=shown(ratio_shown(r.savings[v])),
                hours=shown(fmt.amount(r.labeler_hours[v])), calendar=shown(fmt.amount(r.calendar_hours[v])),
                cost=shown(fmt.money(r.cost[v])) if r.cost is not None else None, method=variant_note(v, r.bound))


def _range(r) -> dict | None:
    """With an error-rate range: how far the counts move if it is wrong (every variant)."""
    if r.bound == "hoeffding" or r.max_error_rate is None:
        return None
    rows = []
    for v in VARIANTS:
        waiting = r.is_pending("unrestricted", v) or r.is_pending("labels", v)
        n, c = r.unrestricted_labels.get(v), r.unrestricted_confidence.get(v)
        rows.append(dict(variant=v, title=VARIANT_TITLES[v], labels=_row(r, v)["labels"],
                         without=None if waiting else ("—" if n is None else fmt.integer(n)),
                         confidence=None if waiting else ("—" if c is None else
                                                          "none" if c <= 0 else confidence_shown(1.0 - c))))
    return dict(a=r.max_error_rate, rows=rows)


def progress_text(r, curves: dict, sweep: dict) -> str:
    """The exact work still under way, in words (empty when there is none)."""
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
        parts.append(f"budget answers: {budget} to go")
    for name, c in (("curve over T", curves), ("second plot", sweep)):
        if c and c.get("bound", "hoeffding") != "hoeffding" and c.get("computed", 0) < max(c.get("planned", 0), 1):
            planned = c.get("planned", 0)
            parts.append(f"{name}: {c.get('computed', 0)} of {planned} exact points" if planned else
                         f"{name}: exact points starting")
    return " · ".join(parts)


def answer(r, *, stale: bool, budget_from=None, curves=None, sweep=None, work_error: str = "",
           share_query: str | None = None, summary: str = "", stem: str = "meter-plan") -> str:
    """The answer pane: the budget's shortfall (if any), the cards, the sentence, progress, table, range check.

    ``share_query``: the plan's query for the link replaying a trace (served pages only; None leaves the
    page-only note out, as in a notebook).  ``summary``: the plain-text summary "Copy summary" takes
    (kept hidden in the pane, with ``stem``, the file name "Download plots (PNG)" gives).
    """
    b = budget_from if budget_from is not None else r
    status = budget_status(b)
    refused = "; ".join(sorted(set(r.refused.values()))) if r.refused else ""
    return render(_TEMPLATES + "answer.html", stale=stale, cards=cards(r, b), sentence=r.sentence(), lead=r.lead(),
                  shortfall=budget_sentence(status) if status is not None and status.short else "",
                  progress=progress_text(r, curves or {}, sweep or {}), work_error=work_error,
                  exact=r.bound != "hoeffding", bound_title=r.bound_title, cost_per_hour=r.cost_per_hour,
                  rows=[_row(r, v) for v in VARIANTS], refused=refused, share_query=share_query, range=_range(r),
                  delta=r.delta, summary=summary, stem=stem)


def budget_html(r, stale: bool = False) -> str:
    """What the label budget buys: largest T, smallest ε₁ and the confidence at T, per variant."""
    if r.budget is None:  # nobody gave one: say where it goes, never assume one
        return ('<div class="md-section planner-whatif planner-no-budget md-note">Type the labels you have in '
                '<b>Label budget (what we have)</b> to see the largest T, the smallest ε₁ and the confidence they '
                'buy.</div>')
    rows = []
    for v in VARIANTS:
        if r.is_pending("budget", v) or r.min_epsilon[v] is None:
            rows.append(dict(variant=v, title=VARIANT_TITLES[v], steps=None, epsilon=None, confidence=None))
            continue
        conf = r.confidence[v]
        rows.append(dict(variant=v, title=VARIANT_TITLES[v], steps=steps_shown(r.max_steps[v]),
                         epsilon=epsilon_shown(r.min_epsilon[v]),
                         confidence="none" if conf is None or conf <= 0 else confidence_shown(1.0 - conf)))
    return render(_TEMPLATES + "budget.html", budget=r.budget, steps=r.steps, rows=rows, stale=stale,
                  bound_title="" if r.bound == "hoeffding" else r.bound_title)


def assumptions_html(notes) -> str:
    return render(_TEMPLATES + "assumptions.html", notes=list(notes))
