"""``meter-dashboard plan``: label counts for every meter variant (one T, or a curve over T).

``--bound binomial`` replaces Hoeffding's per-model factor by the exact binomial tail (0/1
losses; ease.ml/ci Section 4.3, Langford 2005), optionally with ``--max-error-rate A``;
the JSON key ``labels`` holds the chosen bound's counts and ``hoeffding_labels`` Hoeffding's.
``--report plan.html`` also writes the self-contained HTML report (Bokeh is imported only
then; never Panel).
"""
from __future__ import annotations

import argparse
import math
import textwrap

from ..core.cli import add_format_option, add_slide_option, check_slide_path, emit, table, write_slide
from ..core.validation import InputError, check_int, check_number, parse_int_list, parse_number_list
from .defaults import MAX_BUDGET

EXAMPLE = "meter-dashboard plan --epsilon 0.01,0.02,0.03,0.04,0.05 --delta 0.01 --steps 10"
EXAMPLE_EXACT = ("meter-dashboard plan --epsilon 0.01,0.02,0.03,0.04,0.05 --delta 0.01 --steps 10 --bound binomial "
                 "--max-error-rate 0.1 --report plan.html")
#: A curve under the exact bound solves every T exactly: at most this many steps.
EXACT_CURVE_STEPS = 1000
DESCRIPTION = (
    "How many labelled test examples support T adaptive development steps within tolerances eps_1..eps_m "
    "with probability 1 - delta, for every ease.ml/meter variant (single_model, no_adaptivity, resampling, "
    "regular, incremental).  JSON key: labels (the chosen bound's counts; hoeffding_labels beside them).")
EPILOG = (f"example:\n  {EXAMPLE}\n\nexample (exact binomial tails, every model errs at most 0.1, HTML report):"
          f"\n  {EXAMPLE_EXACT}")


def plan_parser(sub, name: str, *, help: str, description: str, epilog: str, delta: str, steps: str,
                signals: str) -> argparse.ArgumentParser:
    """A subcommand over a meter plan (``plan``, ``simulate``): its text, then --epsilon, --delta, --steps, --signals.

    ``delta``, ``steps``, ``signals``: the help of those options; the description is wrapped, the epilog's
    examples are kept as written.
    """
    p = sub.add_parser(name, help=help, description=textwrap.fill(description, width=78), epilog=epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epsilon", required=True, help="eps_1,...,eps_m (non-decreasing), or one eps with --signals")
    p.add_argument("--delta", required=True, help=delta)
    p.add_argument("--steps", required=True, help=steps)
    p.add_argument("--signals", default=None, help=signals)
    return p


def register(sub) -> None:
    p = plan_parser(sub, "plan", help="test labels each meter variant needs", description=DESCRIPTION,
                    epilog=EPILOG, delta="failure probability in (0, 1)", steps="T, or an inclusive range A:B for a curve",
                    signals="m, the number of signals, when one eps is given")
    p.add_argument("--tenants", default=None, help="tenants sharing T evenly (non-communicating)")
    p.add_argument("--tenant-steps", default=None, help="steps per tenant, e.g. 5,5 (must sum to T)")
    p.add_argument("--reverts", default=None, help="revert steps fixed in advance, e.g. 1,2,3")
    p.add_argument("--budget", default=None, help="a label budget: largest T, smallest eps_1, confidence")
    p.add_argument("--seconds-per-label", default="2", help="labeling time per example (default 2 s)")
    p.add_argument("--labelers", default="1", help="labelers working in parallel (default 1)")
    p.add_argument("--cost-per-hour", default=None, help="cost of one labeler-hour (optional)")
    add_bound_options(p)
    p.add_argument("--compare", default=None, metavar="SETTINGS",
                   help="a second plan beside this one: this plan changed by the planner page's URL keys, e.g. "
                        "'delta=0.05&steps=20' (the page's pinned plan)")
    p.add_argument("--report", default=None, metavar="PATH",
                   help="also write the plan as a self-contained HTML report (inputs, table, plots; opens offline)")
    add_format_option(p)
    add_slide_option(p)
    p.set_defaults(run=run)


def add_bound_options(p) -> None:
    """``--bound`` and ``--max-error-rate`` (plan and simulate share them)."""
    p.add_argument("--bound", choices=("hoeffding", "binomial"), default="hoeffding",
                   help="per-model bound: hoeffding (the paper's, default) or binomial (exact tails, 0/1 losses)")
    p.add_argument("--max-error-rate", default=None, metavar="A",
                   help="with --bound binomial: every model that may be submitted (bad ones included) errs at most "
                        "A, in (0, 0.5)")


def bound_values(args) -> tuple:
    """``(bound, max_error_rate)`` from the flags, checked (messages name the flags)."""
    from .stages import check_bound

    if args.max_error_rate is not None and args.bound != "binomial":
        raise InputError("--max-error-rate", "given only with --bound binomial (Hoeffding's bound cannot use it)",
                         args.max_error_rate)
    try:
        return check_bound(args.bound, args.max_error_rate)
    except InputError as exc:
        raise exc.renamed("--" + exc.parameter.replace("_", "-")) from None


def _parse_steps(text: str):
    """``"10"`` -> 10; ``"1:100"`` -> range(1, 101)."""
    text = str(text).strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 2:
            raise InputError("--steps", "a whole number T or an inclusive range A:B", text)
        lo = check_int("--steps", parts[0].strip() or "x", minimum=1)
        hi = check_int("--steps", parts[1].strip() or "x", minimum=1)
        if hi < lo:
            raise InputError("--steps", "a range A:B with A <= B", text)
        if hi - lo > 1_000_000:
            raise InputError("--steps", "a range of at most 1,000,001 steps", text)
        return list(range(lo, hi + 1))
    return check_int("--steps", text, minimum=1)




def run(args) -> int:
    from ..bounds import meter
    from . import model as plan_module

    epsilon = parse_number_list("--epsilon", args.epsilon)
    delta = check_number("--delta", args.delta)
    steps = _parse_steps(args.steps)
    signals = check_int("--signals", args.signals, minimum=1, maximum=1000) if args.signals is not None else None
    tenants = check_int("--tenants", args.tenants, minimum=1) if args.tenants is not None else 1
    tenant_steps = parse_int_list("--tenant-steps", args.tenant_steps) if args.tenant_steps else None
    reverts = parse_int_list("--reverts", args.reverts) if args.reverts else None
    if tenant_steps and args.tenants is not None and len(tenant_steps) != tenants:
        raise InputError("--tenants", f"the number of --tenant-steps values ({len(tenant_steps)})", args.tenants)

    bound, rate = bound_values(args)
    check_slide_path(args)
    if isinstance(steps, list):  # a curve over T
        if args.compare:
            raise InputError("--compare", "given with one T (it compares two plans)", args.compare)
        if args.report:
            raise InputError("--report", "given with one T (a report describes one plan)", args.report)
        if args.slide:
            raise InputError("--slide", "given with one T (a slide describes one plan)", args.slide)
        if bound != "hoeffding" and len(steps) > EXACT_CURVE_STEPS:
            raise InputError("--steps", f"a range of at most {EXACT_CURVE_STEPS:,} steps with --bound binomial "
                                        "(each T is an exact solve)", args.steps)
        if tenant_steps:
            raise InputError("--tenant-steps", "omitted for a range of steps (use --tenants to split each T evenly)",
                             args.tenant_steps)
        eps = epsilon * signals if (signals and len(epsilon) == 1) else epsilon
        if signals and len(epsilon) not in (1, signals):
            raise InputError("--signals", f"the number of --epsilon values ({len(epsilon)})", args.signals)
        if reverts:
            meter.validate_reverts(reverts, max(steps))
        curves = _curve(plan_module, eps, _checked_delta(delta), steps, tenants=tenants, reverts=reverts,
                        bound=bound, max_error_rate=rate)
        payload = {
            "steps": steps,
            "labels": {v: _ints(curves[v]) for v in meter.VARIANTS},
            "bound": bound,
            "inputs": {"epsilon": list(map(float, eps)), "delta": delta, "tenants": tenants,
                       "reverts": reverts or [], "bound": bound, "max_error_rate": rate},
        }
        if rate is not None:
            payload["notes"] = [plan_module.range_caveat(rate)]
        if reverts:
            payload.setdefault("notes", []).extend([plan_module.REVERT_CAVEAT, "Reverts count once T reaches their step."])
        rows = [[t] + [payload["labels"][v][i] for v in meter.VARIANTS] for i, t in enumerate(steps)]
        text = table(["steps"] + list(meter.VARIANTS), rows)
        for note in payload.get("notes", [])[:1 if not reverts else 2]:
            text += "\n\n" + note
        emit(args, payload, text)
        return 0

    budget = check_int("--budget", args.budget, minimum=1, maximum=MAX_BUDGET) if args.budget is not None else None
    cost = check_number("--cost-per-hour", args.cost_per_hour) if args.cost_per_hour is not None else None
    kwargs = dict(epsilon=epsilon, delta=delta, steps=steps, signals=signals, tenants=tenants,
                  tenant_steps=tenant_steps, reverts=reverts, budget=budget,
                  seconds_per_label=check_number("--seconds-per-label", args.seconds_per_label),
                  labelers=check_int("--labelers", args.labelers, minimum=1), cost_per_hour=cost, bound=bound,
                  max_error_rate=rate)
    other_kwargs = _compared(plan_module, kwargs, args.compare)  # checked before any work
    result = plan_module.plan(**kwargs)
    payload = result.to_dict()
    compared = _comparison(plan_module, result, other_kwargs, args.compare, payload)
    if args.report:
        from .report import plan_report

        try:
            payload["report"] = plan_report(result).save(args.report)
        except OSError as exc:
            raise InputError("--report", "a file path that can be written", f"{args.report} ({exc.strerror})") from None
    slide = write_slide(args, result.slide)
    if slide is not None:
        payload["slide"] = slide
    emit(args, payload, _table_text(result) + compared + (f"\n\nreport: {payload['report']}" if args.report else "")
         + (f"\n\nslide: {slide}" if slide is not None else ""))
    return 0


def _compared(plan_module, kwargs: dict, settings) -> dict | None:
    """``--compare``: the second plan's keyword arguments (this plan changed by the page's URL keys), checked."""
    if settings is None:
        return None
    try:
        return plan_module.compare_kwargs(kwargs, settings)
    except InputError as exc:
        raise exc.renamed("--compare") from None


def _comparison(plan_module, result, other_kwargs, settings, payload: dict) -> str:
    """The second plan computed, its comparison with this one in ``payload["compare"]``, and as text."""
    if other_kwargs is None:
        return ""
    try:
        other = plan_module.plan(**other_kwargs)
    except InputError as exc:
        raise InputError("--compare", f"settings of a plan ({exc.parameter}: {exc.rule})", exc.got) from None
    from .text import comparison, comparison_text

    headers, rows = comparison(other, result)
    payload["compare"] = {"settings": settings, "plan": other.to_dict(), "headers": headers, "rows": rows}
    return f"\n\nCompared with {settings} (pinned; this plan is 'current'):\n" + comparison_text(other, result)


def _curve(plan_module, eps, delta, steps, **kw) -> dict:
    """The curve over ``steps``; an exact one in chunks, with progress on stderr when it is a terminal."""
    import sys

    import numpy as np

    if kw["bound"] == "hoeffding" or not sys.stderr.isatty():
        return plan_module.curve(eps, delta, steps, **kw)
    parts, chunk = [], 10
    try:
        for start in range(0, len(steps), chunk):
            parts.append(plan_module.curve(eps, delta, steps[start:start + chunk], **kw))
            sys.stderr.write(f"\rexact counts: {min(start + chunk, len(steps)):,} of {len(steps):,} steps")
            sys.stderr.flush()
    finally:
        sys.stderr.write("\n")
    return {v: np.concatenate([p[v] for p in parts]) for v in parts[0]}


def _ints(values) -> list:
    """Counts as ints; a count the exact bound refuses (NaN) as None."""
    import math as _math

    return [None if isinstance(v, float) and _math.isnan(v) else int(v) for v in values.tolist()]


def _checked_delta(delta):
    from ..core.validation import check_probability

    return check_probability("--delta", delta)


def _table_text(result) -> str:
    from ..bounds.meter import VARIANTS
    from ..core.formatting import confidence as shown_confidence

    def conf(value):
        return "—" if value is None else ("none" if value <= 0 else shown_confidence(1.0 - value))

    headers, rows = result.table()  # the notebook's HTML shows the same table
    out = [result.caption(budget=False), "", table(headers, rows), "", result.sentence()]
    if result.max_error_rate is not None:
        out += ["", "If the error-rate range is wrong (the counts without it; the confidence the planned counts give):"]
        out.append(table(["variant", "planned", "without the range", "confidence if wrong"],
                         [[v, result.labels[v], result.unrestricted_labels.get(v),
                           conf(result.unrestricted_confidence.get(v))] for v in VARIANTS], align="lrrr"))
    if result.budget is not None:
        out += ["", f"With a budget of {result.budget:,} labels:"]
        brows = []
        for v in VARIANTS:
            t = result.max_steps[v]
            brows.append([v, "—" if t is None else "more than 10^12" if t == math.inf else int(t), result.min_epsilon[v],
                          conf(result.confidence[v])])
        out.append(table(["variant", "largest T", "smallest eps_1", f"confidence at T = {result.steps}"], brows,
                         align="lrrr"))
    out += [""] + [f"note: {n}" for n in result.notes]
    return "\n".join(out)
