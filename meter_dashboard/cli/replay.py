"""``meter-dashboard replay``: what the meter would have said at every step of a trace."""
from __future__ import annotations

from .._validation import InputError, check_int, check_probability, parse_int_list, parse_number_list
from ._common import add_format_option, emit, table

EXAMPLE = ("meter-dashboard replay --example emocontext --ranges 0,0.005,0.01,0.02,0.05,1 "
           "--epsilon 0.01,0.02,0.03,0.04,0.05 --delta 0.1 --steps 8")


def register(sub) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a development trace through the meter",
        description="Replay a development trace (CSV or JSON: step, val_accuracy, test_accuracy or "
        "val_loss, test_loss; optional tenant, reverted, description) through ease.ml/meter: per step the "
        "empirical overfitting, the regular and incremental signals, the epsilon they guarantee and the "
        "steps used; alarms when the budget T is used up or the test set is too small. "
        "Ranges are half-open [r_(i-1), r_i), the last one closed at 1.",
        epilog=f"example: {EXAMPLE}",
    )
    p.add_argument("trace", nargs="?", default=None, metavar="TRACE", help="a CSV or JSON trace file")
    p.add_argument("--example", default=None, help="replay a shipped example instead: emocontext or "
                   "synthetic_overfitting")
    p.add_argument("--ranges", default=None, help="m + 1 boundaries 0,...,1 (default 0,0.005,0.01,0.02,0.05,1 "
                   "for m = 5)")
    p.add_argument("--epsilon", default="0.01,0.02,0.03,0.04,0.05", help="eps_1,...,eps_m, non-decreasing "
                   "(default 0.01,...,0.05)")
    p.add_argument("--signals", default=None, help="m, when one eps is given")
    p.add_argument("--delta", default="0.01", help="failure probability in (0, 1) (default 0.01)")
    p.add_argument("--steps", default=None, help="T, the steps the test set was sized for (default: the "
                   "trace's number of steps)")
    p.add_argument("--tenants", default=None, help="tenants sharing T evenly")
    p.add_argument("--tenant-steps", default=None, help="steps per tenant, e.g. 12,8 (sum T), in the order the "
                   "trace's tenants first submit")
    p.add_argument("--reverts", default=None, help="revert steps fixed in advance in the plan, e.g. 9,18")
    p.add_argument("--test-size", default=None, help="n, the test set's labels (overrides a JSON trace's test_size)")
    p.add_argument("--meter", "--variant", dest="meter", choices=("incremental", "regular"), default="incremental",
                   help="the meter the team runs (default incremental): its eps and label count are checked")
    p.add_argument("--fail-on-alarm", action="store_true", help="exit with status 1 when there is an alarm "
                   "(for CI pipelines)")
    add_format_option(p)
    p.set_defaults(run=run)


def _plan_values(args, trace_len: int) -> dict:
    from ..models.plan import resize_ranges, validate_ranges

    epsilon = parse_number_list("--epsilon", args.epsilon)
    values: dict = {}
    if args.signals is not None:
        m = check_int("--signals", args.signals, minimum=1, maximum=1000)
        if len(epsilon) == 1:
            epsilon = epsilon * m
        elif len(epsilon) != m:
            raise InputError("--signals", f"the number of --epsilon values ({len(epsilon)})", args.signals)
    values["epsilon"] = epsilon
    if args.ranges is not None:
        values["ranges"] = validate_ranges(parse_number_list("--ranges", args.ranges), len(epsilon))
    else:
        values["ranges"] = resize_ranges((0.0, 0.005, 0.01, 0.02, 0.05, 1.0), len(epsilon))
    values["delta"] = check_probability("--delta", str(args.delta).strip())
    values["steps"] = check_int("--steps", args.steps, minimum=1) if args.steps is not None else trace_len
    if args.tenant_steps:
        values["tenant_steps"] = parse_int_list("--tenant-steps", args.tenant_steps)
        values["tenants"] = len(values["tenant_steps"])
        if args.tenants is not None and check_int("--tenants", args.tenants, minimum=1) != values["tenants"]:
            raise InputError("--tenants", f"the number of --tenant-steps values ({values['tenants']})", args.tenants)
    elif args.tenants is not None:
        values["tenants"] = check_int("--tenants", args.tenants, minimum=1)
    if args.reverts:
        values["reverts"] = parse_int_list("--reverts", args.reverts)
    return values


def run(args) -> int:
    from ..models.plan import MeterPlan
    from ..models.session import _replay
    from ..models.trace import load_example, read_trace

    if (args.trace is None) == (args.example is None):
        raise InputError("TRACE", "a trace file, or --example NAME (one of the two)",
                         args.trace if args.trace is not None else "nothing")
    test_size = check_int("--test-size", args.test_size, minimum=1) if args.test_size is not None else None
    if args.example is not None:
        trace = load_example(args.example)
    else:
        try:
            trace = read_trace(args.trace)
        except InputError as exc:
            where = f"{args.trace}, {exc.location}" if exc.location else args.trace
            raise InputError(exc.parameter, exc.rule, exc.got, location=where) from None
    if test_size is not None:
        trace = trace.with_test_size(test_size)
    plan = MeterPlan(**_plan_values(args, len(trace)))
    result = _replay(trace, plan, args.meter)
    emit(args, result.to_dict(), _text(result))
    if args.fail_on_alarm and result.alarms:
        return 1
    return 0


def _text(result) -> str:
    t = result.trace
    s = result.settings
    lines = [
        f"Replay of {t.name!r} ({len(t)} steps{', SYNTHETIC' if t.synthetic else ''}) with the {result.variant} meter",
        f"  ranges {', '.join(f'{v:g}' for v in s['ranges'])}; ε = {', '.join(f'{v:g}' for v in s['epsilon'])}; "
        f"δ = {s['delta']:g}; T = {s['steps']}"
        + (f"; tenant steps {', '.join(str(v) for v in s['tenant_steps'])}" if len(s["tenant_steps"]) > 1 else "")
        + (f"; reverts {', '.join(str(v) for v in s['reverts'])}" if s["reverts"] else ""),
        "",
    ]
    headers = ["step"]
    if t.has_tenants:
        headers.append("tenant")
    headers += [t.val_column, t.test_column, "gap", "signal", "incremental", "ε", "used"]
    flagged = bool(t.reverted.any() or not result.within_budget.all())
    if flagged:
        headers.append("")
    rows = []
    for i in range(len(result)):
        d = result.step(i)
        row = [d["step"]]
        if t.has_tenants:
            row.append(d["tenant"])
        flags = []
        if d["reverted"]:
            flags.append("reverted")
        if not d["within_budget"]:
            flags.append("beyond budget")
        row += [f"{d[t.val_column]:.4f}", f"{d[t.test_column]:.4f}", f"{d['empirical_overfitting']:.4f}",
                d["signal"], d["incremental_signal"], f"{d['epsilon']:g}", f"{d['steps_used']}/{result.budget}"]
        if flagged:
            row.append(", ".join(flags))
        rows.append(row)
    lines.append(table(headers, rows, align="r" + ("l" if t.has_tenants else "") + "rrrrrrr" + ("l" if flagged else "")))
    lines.append("")
    need = (f"Labels needed: incremental {result.labels_needed['incremental']:,}, "
            f"regular {result.labels_needed['regular']:,}")
    if result.test_size is not None:
        need += f"; the test set has {result.test_size:,}"
    lines.append(need)
    for a in result.alarms:
        lines.append(f"ALARM: {a.message}")
    for a in result.notes:
        lines.append(f"note: {a.message}")
    return "\n".join(lines)
