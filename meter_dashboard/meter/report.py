"""The plan report: one self-contained HTML file to mail out of the meeting (Bokeh, never Panel).

:func:`plan_report` lays a :class:`~meter_dashboard.meter.result.PlanResult` out with
the small public API of :mod:`meter_dashboard.core.report` (:class:`~meter_dashboard.core.report.Report`:
headings, paragraphs, facts, tables, callouts, Bokeh figures; Bokeh's JavaScript inlined, so
the file opens offline): the sentence, the inputs, every variant's count (Hoeffding's beside
the chosen bound's, with the saving), what the error-rate range assumes and how far the
counts move if it is wrong, what the budget buys, the two plots, the simulation check when
one was run, and the assumptions.  The planner page's button, ``md.plan_report(result).save(path)``,
``md.Planner(...).report(path)`` and ``meter-dashboard plan ... --report plan.html`` all
build this same file.

The report follows ease.ml/meter (Thm 4, Eqs. 1-2, Thms 1-2, Cor 1-2, Appendix B, Eqs. 13-16,
Figs. 8-12); the papers are listed in the References of :mod:`meter_dashboard.meter.model`.
"""
from __future__ import annotations

from ..bounds.meter import VARIANTS
from ..core import formatting as fmt
from ..core.report import Report
from .curves import SWEEPS
from .result import RECOMMENDED, TENANT_DISCREPANCY, VARIANT_TITLES, range_caveat, variant_note
from .text import (
    budget_sentence,
    budget_status,
    confidence_shown,
    epsilon_shown,
    plan_inputs,
    plan_title,
    ratio_shown,
    steps_shown,
)

__all__ = ["plan_report"]

def _counts_table(report: Report, r) -> None:
    exact = r.bound != "hoeffding"
    headers = ["variant", f"labels ({r.bound_title})" if exact else "labels"]
    if exact:
        headers += ["Hoeffding", "saving"]
    headers += ["× fewer than resampling", "labeler-hours", "calendar hours"]
    if r.cost is not None:
        headers.append(f"cost (at {fmt.number(r.cost_per_hour)} per labeler-hour)")
    headers.append("method")
    rows = []
    for v in VARIANTS:
        row = [VARIANT_TITLES[v], fmt.integer(r.labels[v]) + ("*" if v in r.refused else "")]
        if exact:
            saved = r.label_savings[v]
            row += [fmt.integer(r.hoeffding_labels[v]),
                    "—" if v in r.refused else f"{fmt.integer(saved)} ({fmt.percent(saved / r.hoeffding_labels[v], 2)})"]
        row += [ratio_shown(r.savings[v]), fmt.amount(r.labeler_hours[v]), fmt.amount(r.calendar_hours[v])]
        if r.cost is not None:
            row.append(fmt.money(r.cost[v]))
        row.append(variant_note(v, r.bound))
        rows.append(row)
    numeric = [False] + [True] * (len(headers) - 2) + [False]
    report.table(headers, rows, numeric=numeric, highlight=[VARIANTS.index(RECOMMENDED)],
                 caption="* no exact count: Hoeffding's is shown." if r.refused else None)


def _range_section(report: Report, r) -> None:
    report.heading("If the error-rate range is wrong")
    report.callout("The range must hold for every model", range_caveat(r.max_error_rate), "alarm")
    rows = []
    for v in VARIANTS:
        n, c = r.unrestricted_labels.get(v), r.unrestricted_confidence.get(v)
        rows.append([VARIANT_TITLES[v], fmt.integer(r.labels[v]), "—" if n is None else fmt.integer(n),
                     "—" if c is None else ("none" if c <= 0 else confidence_shown(1.0 - c))])
    report.table(["variant", f"planned (error rate ≤ {fmt.number(r.max_error_rate)})", "without the range",
                  "confidence of the planned count if the range is wrong"], rows,
                 numeric=[False, True, True, True])


def _budget_section(report: Report, r) -> None:
    report.heading(f"What {fmt.integer(r.budget)} labels buy")
    rows = []
    for v in VARIANTS:
        conf = r.confidence[v]
        rows.append([VARIANT_TITLES[v], steps_shown(r.max_steps[v]), epsilon_shown(r.min_epsilon[v]),
                     "none" if conf is None or conf <= 0 else confidence_shown(1.0 - conf)])
    t = fmt.integer(r.steps)
    report.table(["variant", "largest T", f"smallest ε₁ at T = {t}", f"confidence at T = {t}"], rows,
                 numeric=[False, True, True, True],
                 caption=f"Inverse questions ({r.bound_title}); the ε vector is scaled together.")


def _plots(report: Report, r, curves, sweep_curves) -> None:
    from .figures import LabelsPlot

    exact = r.bound != "hoeffding"
    note = " Solid with dots: exact counts; thin dashed: Hoeffding's." if exact else ""
    report.heading("Labels against T")
    plot = LabelsPlot("T (development steps)", "Labels against T (Figs. 8–12)", marker=r.steps, sizing_mode=None)
    plot.update(curves, "steps")
    status = budget_status(r)
    if status is not None:
        plot.show_budget(status.budget, status.largest_steps, x_end=float(curves["steps"][-1]))
    report.figure(plot.figure)
    parameter = sweep_curves.get("parameter", "delta")
    budget = budget_status(r)
    if budget is not None:
        note += f" The red dashed line is the budget, {fmt.integer(budget.budget)} labels."
    report.paragraph(f"The dashed line marks T = {fmt.integer(r.steps)}.{note}", css_class="md-sub")
    report.heading(f"Labels against {SWEEPS[parameter].split(' ')[0]}")
    sweep = LabelsPlot(SWEEPS[parameter], f"Labels against {SWEEPS[parameter].split(' ')[0]} "
                       f"(T = {fmt.integer(r.steps)})", log_x=parameter in ("delta", "epsilon"), height=320, sizing_mode=None)
    sweep.update(sweep_curves, "x")
    report.figure(sweep.figure)


def _check_section(report: Report, rows, settings: dict) -> None:
    report.heading("Simulation check")
    body = []
    for row in rows:
        res = row.result
        body.append([row.title, fmt.integer(row.labels)] + (
            ["—", "—", "not run"] if res is None else
            [fmt.number(res.failure_rate), fmt.interval(*res.ci), row.verdict + (" (partial)" if res.cancelled else "")]))
    report.table(["count", "labels", "failure rate", "95% interval", f"vs δ = {fmt.number(settings['delta'])}"], body,
                 numeric=[False, True, True, True, False],
                 caption=(f"{settings['developer']} developer, {settings['meter']} meter, T = {settings['steps']}, "
                          f"{settings['replicates']:,} runs per count, seed {settings['seed']}: a run fails when "
                          "a released model's |test − true| reaches its signal's ε."))


def plan_report(result, *, curves=None, sweep_curves=None, ranges=None, check=None, check_settings=None,
                title: str | None = None, link: str | None = None) -> Report:
    """The report of a plan: sentence, inputs, counts, range check, budget, plots, simulation, assumptions.

    Parameters
    ----------
    result : PlanResult
        A finished plan (:func:`meter_dashboard.plan`, ``MeterPlan.result``).
    curves, sweep_curves : dict, optional
        The plots' data in :class:`~meter_dashboard.meter.model.MeterPlan`'s format (the page's,
        as shown); computed with :func:`~meter_dashboard.meter.model.plan_curves` when omitted.
    ranges : sequence of float, optional
        The meter's range boundaries, listed with the inputs.
    check, check_settings : optional
        The simulation check's rows and settings (:class:`~meter_dashboard.meter.check.PlanCheck`).
    title : str, optional
        By default the labels for T, or the budget's shortfall when it falls short.
    link : str, optional
        The page URL holding this plan (the planner page's report shares it).

    Returns
    -------
    Report
        ``.to_html()`` or ``.save(path)``.

    References
    ----------
    Hubis, Wu & Zhang (2019), ease.ml/meter; Renggli et al. (2019), ease.ml/ci, Section 4.3;
    Langford (2005).
    """
    from ..core.validation import InputError, check_instance
    from .result import PlanResult

    r = check_instance("result", result, PlanResult, "a PlanResult (what md.plan returns)")
    if title is not None and not isinstance(title, str):
        raise InputError("title", "a text", title)
    if link is not None and not isinstance(link, str):
        raise InputError("link", "a text (the page URL)", link)
    if curves is None or sweep_curves is None:
        from .model import plan_curves

        curves, sweep_curves = plan_curves(r, sweep_parameter=(sweep_curves or {}).get("parameter", "delta"))
    report = Report(title or plan_title(r),
                    f"ease.ml/meter · {r.bound_title} bound · δ = {fmt.number(r.delta)} · T = {fmt.integer(r.steps)}")
    report.paragraph(r.lead(), css_class="md-sentence")  # the answer in plain words, first (as on the page)
    status = budget_status(r)
    if status is not None and status.short:
        report.callout("Budget", budget_sentence(status), "alarm")
    report.paragraph(r.sentence(), css_class="md-sentence")
    if link:
        report.link("Share this plan:", link)
    if r.max_error_rate is not None:
        report.callout("Assumption", range_caveat(r.max_error_rate), "alarm")
    report.heading("Inputs")
    report.facts(plan_inputs(r, ranges))
    report.heading("Labels per variant")
    _counts_table(report, r)
    if r.bound != "hoeffding" and r.max_error_rate is not None and r.unrestricted_labels is not None:
        _range_section(report, r)
    if r.budget is not None and r.max_steps is not None:
        _budget_section(report, r)
    _plots(report, r, curves, sweep_curves)
    if check:
        _check_section(report, check, check_settings or {})
    report.heading("Assumptions and how to read this report")
    notes = list(r.notes) + [n for n in r.bound_notes() if n not in r.notes]
    report.items(notes + [TENANT_DISCREPANCY, "Each count is the smallest test-set size that satisfies the "
                          "variant's inequality; resampling and single_model use ε₁; curves over T split tenants "
                          "evenly and count a revert once T reaches its step."])
    return report
