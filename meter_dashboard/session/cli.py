"""``meter-dashboard replay``: what the meter would have said at every step of a trace."""
from __future__ import annotations

import json
import sys

import numpy as np

from ..core.cli import add_format_option, add_slide_option, add_verb, check_slide_path, write_slide, dumps, epsilon_for_signals, input_file, shown_path, table
from ..core.validation import InputError, check_int, check_probability, parse_int_list, parse_number_list

EXAMPLE = ("meter-dashboard replay --example emocontext --ranges 0,0.005,0.01,0.02,0.05,1 "
           "--epsilon 0.01,0.02,0.03,0.04,0.05 --delta 0.1 --steps 8 --report session.html")
#: Traces up to this many steps are printed whole; longer ones show their start, end and alarms.
TABLE_ROWS = 200
_EDGE_ROWS = 20
#: The flag a person typed for each setting (messages name the flag, not the internal name).
FLAGS = {"bound": "--bound", "max_error_rate": "--max-error-rate", "epsilon": "--epsilon", "ranges": "--ranges", "delta": "--delta", "steps": "--steps",
         "signals": "--signals", "tenants": "--tenants", "tenant_steps": "--tenant-steps", "reverts": "--reverts",
         "test_size": "--test-size", "example": "--example", "meter": "--meter"}


def _defaults() -> dict:
    # the light module (no engine at start-up); MeterPlan reads the same constants
    from ..meter.defaults import DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_RANGES

    return {"ranges": list(DEFAULT_RANGES), "epsilon": list(DEFAULT_EPSILON), "delta": DEFAULT_DELTA}


def _nums(values) -> str:
    return ",".join(f"{float(v):g}" for v in values)


def register(sub) -> None:
    defaults = _defaults()  # MeterPlan's parameter defaults: the page and the notebook use the same
    p = add_verb(
        sub, "replay",
        help="replay a development trace through the meter",
        description="Replay a development trace (CSV or JSON: step, val_accuracy, test_accuracy or "
        "val_loss, test_loss; optional tenant, reverted, description) through ease.ml/meter: per step the "
        "empirical overfitting, the regular and incremental signals, the epsilon they guarantee and the "
        "steps used; alarms when steps go beyond the budget T or the test set is too small. "
        "Ranges are half-open [r_(i-1), r_i), the last one closed at 1.",
        examples=[EXAMPLE], heading="example", note="A trace from a pipe: ... | meter-dashboard replay - --steps 8",
    )
    p.add_argument("trace", nargs="?", default=None, metavar="TRACE", help="a CSV or JSON trace file (- for standard input)")
    p.add_argument("--example", default=None, help="replay a shipped example instead: emocontext or "
                   "synthetic_overfitting")
    p.add_argument("--ranges", default=None, help=f"m + 1 boundaries 0,...,1 (default {_nums(defaults['ranges'])} "
                   "for m = 5, resized to the number of --epsilon values)")
    p.add_argument("--epsilon", default=None, help="eps_1,...,eps_m, non-decreasing "
                   f"(default {_nums(defaults['epsilon'])})")
    p.add_argument("--signals", default=None, help="m, when one eps is given")
    p.add_argument("--delta", default=None, help=f"failure probability in (0, 1) (default {defaults['delta']:g})")
    p.add_argument("--steps", default=None, help="T, the steps the test set was sized for (default: the "
                   "trace's number of steps)")
    p.add_argument("--tenants", default=None, help="tenants sharing T evenly")
    p.add_argument("--tenant-steps", default=None, help="steps per tenant, e.g. 12,8 (sum T), in the order the "
                   "trace's tenants first submit")
    p.add_argument("--reverts", default=None, help="revert steps fixed in advance in the plan, e.g. 9,18")
    p.add_argument("--bound", choices=("hoeffding", "binomial"), default="hoeffding",
                   help="the per-model bound of the counts: hoeffding (the paper's) or binomial (exact tails, 0/1 "
                   "losses), as in the planner")
    p.add_argument("--max-error-rate", default=None, help="with --bound binomial: every model submitted errs at "
                   "most this (in (0, 0.5))")
    p.add_argument("--test-size", default=None, help="n, the test set's labels (overrides a JSON trace's test_size)")
    p.add_argument("--meter", "--variant", dest="meter", choices=("incremental", "regular"), default="incremental",
                   help="the meter the team runs (default incremental): its eps and label count are checked")
    p.add_argument("--fail-on-alarm", action="store_true", help="exit with status 1 when there is an alarm "
                   "(steps beyond the budget, a test set too small, ...; using the last planned step is not one)")
    p.add_argument("--report", default=None, metavar="FILE.html", help="also write a self-contained HTML report "
                   "(inputs, table, sentence, assumptions, plots; opens offline)")
    add_format_option(p)
    add_slide_option(p)
    p.set_defaults(run=run)


def _plan_values(args, trace_len: int) -> dict:
    from ..meter.model import resize_ranges, validate_ranges
    from ..meter.stages import check_bound
    from .replay import MAX_BUDGET_STEPS

    defaults = _defaults()
    epsilon = parse_number_list("--epsilon", args.epsilon) if args.epsilon is not None else defaults["epsilon"]
    values: dict = {}
    epsilon = epsilon_for_signals(epsilon, args.signals)
    values["epsilon"] = epsilon
    if args.ranges is not None:
        values["ranges"] = validate_ranges(parse_number_list("--ranges", args.ranges), len(epsilon))
    else:
        values["ranges"] = resize_ranges(defaults["ranges"], len(epsilon))
    values["delta"] = (check_probability("--delta", str(args.delta).strip()) if args.delta is not None
                       else defaults["delta"])
    if args.steps is not None:  # else T is the trace's length, and the replay says so
        values["steps"] = check_int("--steps", args.steps, minimum=1)
    if values.get("steps", trace_len) > MAX_BUDGET_STEPS:
        raise InputError("--steps", f"a whole number of at most {MAX_BUDGET_STEPS:,} (10^12)", args.steps)
    if args.tenant_steps:
        values["tenant_steps"] = parse_int_list("--tenant-steps", args.tenant_steps)
        values["tenants"] = len(values["tenant_steps"])
        if args.tenants is not None and check_int("--tenants", args.tenants, minimum=1) != values["tenants"]:
            raise InputError("--tenants", f"the number of --tenant-steps values ({values['tenants']})", args.tenants)
    elif args.tenants is not None:
        values["tenants"] = check_int("--tenants", args.tenants, minimum=1)
    if args.reverts:
        values["reverts"] = parse_int_list("--reverts", args.reverts)
    values["bound"], values["max_error_rate"] = check_bound(args.bound, args.max_error_rate)
    return values


def _as_flag(exc: InputError, location: str | None = None) -> InputError:
    """The same message, naming the flag the person typed (``--epsilon``) instead of the setting."""
    name = exc.parameter if exc.parameter.startswith("-") else FLAGS.get(exc.parameter, exc.parameter)
    return InputError(name, exc.rule, exc.got, location=location or exc.location)


def run(args) -> int:
    from .replay import replay
    from .trace import load_example, read_trace

    if (args.trace is None) == (args.example is None):
        raise InputError("TRACE", "a trace file, or --example NAME (one of the two)",
                         args.trace if args.trace is not None else "nothing")
    test_size = check_int("--test-size", args.test_size, minimum=1) if args.test_size is not None else None
    check_slide_path(args)
    try:
        if args.example is not None:
            trace = load_example(args.example)
        else:
            trace = read_trace(input_file(args.trace))
    except InputError as exc:
        if args.example is not None:
            raise _as_flag(exc) from None
        where = shown_path(args.trace)
        raise InputError(exc.parameter, exc.rule, exc.got,
                         location=f"{where}, {exc.location}" if exc.location else where) from None
    if test_size is not None:
        trace = trace.with_test_size(test_size)
    try:
        result = replay(trace, _plan_values(args, len(trace)), variant=args.meter)
    except InputError as exc:
        raise _as_flag(exc) from None
    steps_note = "" if args.steps is not None else "the trace's length: no --steps was given"
    if args.report is not None:
        _write_report(result, args.report, steps_note)
    write_slide(args, result.slide)
    if getattr(args, "format", "table") == "json":
        _write_json(result, sys.stdout)
    else:
        sys.stdout.write(_text(result, steps_note).rstrip("\n") + "\n")
    if args.fail_on_alarm and result.alarms:
        return 1
    return 0


def _write_report(result, path: str, steps_note: str) -> None:
    from .report import session_report

    try:
        session_report(result, steps_note=steps_note).save(path)
    except OSError as exc:
        raise InputError("--report", "a file that can be written", path, location=exc.strerror) from None


# ============================================================================ JSON (columnar)
def _json_array(values) -> str:
    """A JSON array of one column: json's C encoder on plain Python values, tables for repeated ones."""
    if values is None:
        return "null"
    if isinstance(values, (tuple, list)):
        return json.dumps(list(values), ensure_ascii=False)
    arr = np.asarray(values)
    if arr.dtype == bool:
        return "[" + ", ".join(np.where(arr, "true", "false").tolist()) + "]"
    if arr.dtype.kind in "iu":
        return json.dumps(arr.tolist())
    if not np.all(np.isfinite(arr)):
        return json.dumps([float(v) if np.isfinite(v) else None for v in arr.tolist()])
    distinct, index = np.unique(arr, return_inverse=True)
    if distinct.size * 4 < arr.size:  # scores with a few decimals: write each distinct value once
        return _lookup_array(distinct.tolist(), index)
    return json.dumps(arr.tolist())


def _lookup_array(table, index) -> str:
    """A JSON array of ``table[index]`` (the eps of each step's signal): one text per distinct value."""
    texts = np.asarray([json.dumps(v) for v in table] + ["null"])
    return "[" + ", ".join(texts[index].tolist()) + "]"


def _write_json(result, out) -> None:
    """One JSON object: the replay's summary, ``steps`` as one array per field (``"layout": "columns"``).

    ``pandas.DataFrame(json.load(f)["steps"])`` is the step table.  Memory stays proportional to
    one column's text (a million steps: about 110 MB of JSON, written column by column).
    """
    columns = result.to_columns()
    if columns["tenant"] is None:
        del columns["tenant"]
    eps = list(result.settings["epsilon"])
    sig, inc = result.signal - 1, result.incremental_signal - 1
    shown = inc if result.variant == "incremental" else sig
    lookups = {"epsilon": (eps, shown), "epsilon_regular": (eps, sig), "epsilon_incremental": (eps, inc)}
    if result.supported_epsilon is not None:
        lookups["supported_epsilon"] = (list(result.supported_epsilon), shown)
    budget = columns["tenant_budget"]
    if np.any(budget < 0):
        lookups["tenant_budget"] = ([int(v) for v in np.unique(budget[budget >= 0])], None)
    payload = {**result.summary(), "layout": "columns", "steps": None,
               "alarms": [a.to_dict() for a in result.alarms], "notes": [a.to_dict() for a in result.notes]}
    head, tail = dumps(payload).split('"steps": null', 1)
    out.write(head + '"steps": {\n')
    names = list(columns)
    for k, name in enumerate(names):
        if name in lookups:
            table, index = lookups[name]
            if index is None:  # tenant budgets: -1 (no share) becomes null
                index = np.where(budget < 0, len(table), np.searchsorted(table, budget))
            text = _lookup_array(table, index)
        else:
            text = _json_array(columns[name])
        out.write(f'    "{name}": {text}' + (",\n" if k < len(names) - 1 else "\n"))
    out.write("  }" + tail + "\n")


# ============================================================================ table
def _text(result, steps_note: str = "") -> str:
    t = result.trace
    s = result.settings
    lines = [
        f"Replay of {t.name!r} ({len(t):,} steps{', SYNTHETIC' if t.synthetic else ''}) with the {result.variant} meter",
        f"  ranges {', '.join(f'{v:g}' for v in s['ranges'])}; ε = {', '.join(f'{v:g}' for v in s['epsilon'])}; "
        f"δ = {s['delta']:g}; T = {s['steps']}" + (f" ({steps_note})" if steps_note else "")
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
    rows, shown = [], result.listed_positions(TABLE_ROWS, _EDGE_ROWS)
    for k, i in enumerate(shown):
        if k and i != shown[k - 1] + 1:
            rows.append(["…"] + [""] * (len(headers) - 1))
        rows.append(_row(result, i, flagged))
    lines.append(table(headers, rows, align="r" + ("l" if t.has_tenants else "") + "rrrrrrr" + ("l" if flagged else "")))
    if len(shown) < len(result):
        lines.append(f"({len(result) - len(shown):,} of {len(result):,} steps not shown: --format json or "
                     "--report FILE.html has every step)")
    lines.append("")
    need = (f"Labels needed ({result.bound_text}): incremental {result.labels_needed['incremental']:,}, "
            f"regular {result.labels_needed['regular']:,}")
    if result.test_size is not None:
        need += f"; the test set has {result.test_size:,}"
    lines.append(need)
    lines.append("Steps left: " + (result.steps_left.sentence() if result.steps_left is not None else
                                   "give --test-size N to learn how many steps the test set's labels support."))
    lines += [f"ALARM: {a.message}" for a in result.alarms] + [f"note: {a.message}" for a in result.notes]
    return "\n".join(lines)


def _row(result, i: int, flagged: bool) -> list:
    d = result.step(i)
    t = result.trace
    row = [d["step"]] + ([d["tenant"]] if t.has_tenants else [])
    flags = (["reverted"] if d["reverted"] else []) + ([] if d["within_budget"] else ["beyond budget"])
    row += [f"{d[t.val_column]:.4f}", f"{d[t.test_column]:.4f}", f"{d['empirical_overfitting']:.4f}",
            d["signal"], d["incremental_signal"], f"{d['epsilon']:g}", f"{d['steps_used']}/{result.budget}"]
    return row + ([", ".join(flags)] if flagged else [])
