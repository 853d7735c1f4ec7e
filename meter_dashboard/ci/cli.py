"""``meter-dashboard ci``: label counts for an ease.ml/ci condition, and replay of a commit trace.

No Panel import here (the CLI runs in CI pipelines).
"""
from __future__ import annotations

from ..core.cli import add_format_option, add_slide_option, add_verb, check_slide_path, write_slide, emit, input_file, shown_path, table
from ..core.validation import InputError, check_number, raw
from .inputs import ADAPTIVITIES, ALARM_ON, BOUNDS, MODES, default


#: Runnable examples shown by ``--help`` (tests/cli/test_help_examples.py runs each one).
EXAMPLES = (
    'meter-dashboard ci --condition "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01" --reliability 0.9999 '
    "--adaptivity full --steps 32",
    'meter-dashboard ci --condition "n - o > 0.02 +/- 0.01" --example ci_commits.csv --fail-on-fail',
)


def register(sub) -> None:
    """Add ``meter-dashboard ci``; every default is the model's (:class:`~meter_dashboard.ci.CIInputs`)."""
    p = add_verb(
        sub, "ci",
        help="test-set size for an ease.ml/ci condition (and replay of a commit trace)",
        description=(
            "How many labelled test examples an ease.ml/ci condition needs (Renggli et al. 2019): the baseline "
            "(Hoeffding, Section 3) and, when the condition has a clause over d or a difference bound is given, "
            "the optimized count (Bennett, Section 4) and the labels per commit with active labeling. "
            "With --trace, replays a commit history into pass/fail signals and new-testset alarms."
        ),
        examples=EXAMPLES, note="The second replays the shipped commit trace and exits with status 1: its last "
        "commit fails the condition (--fail-on-fail).",
    )
    p.add_argument("--condition", required=True,
                   help="the condition, e.g. 'n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01' (n: new accuracy, "
                        "o: old accuracy, d: fraction of changed predictions)")
    _defaulted(p, "--reliability", "reliability", "1 - delta (default {})")
    _choice(p, "--adaptivity", ADAPTIVITIES, "none: results hidden; full: pass/fail released; firstChange: new test "
            "set at the first pass (default {})")
    _defaulted(p, "--steps", "steps", "H, commits per test set (default {})")
    _choice(p, "--mode", MODES, "fp-free: Unknown fails; fn-free: Unknown passes (default {})")
    _choice(p, "--bound", BOUNDS, "the factor of each estimate: hoeffding (the paper's numbers, default) or binomial "
            "(exact tails, Section 4.3: never more labels; JSON adds 'hoeffding' counts for comparison)")
    p.add_argument("--difference-bound", default=None, metavar="P",
                   help="an upper bound p on d for every commit (Pattern 2, Section 4.2)")
    _switch(p, "--assume-difference-bound", "take P as known in advance (as in the paper's Figure 5) instead of "
            "checking it on unlabeled examples")
    _defaulted(p, "--seconds-per-label", "seconds_per_label", "labeling time per example (default {} s)",
               shown="{:g}".format)
    _defaulted(p, "--labelers", "labelers", "labelers working in parallel (default {})")
    p.add_argument("--trace", default=None, metavar="CSV",
                   help="replay a commit trace: columns commit,n,o,d (one row per commit) or label,<model>,... "
                        "(one row per example; the first model is the deployed one); - for standard input")
    p.add_argument("--example", default=None, metavar="{ci_commits.csv,ci_predictions.csv}",
                   help="replay a shipped commit trace instead of --trace (synthetic: see data/ci.md)")
    _switch(p, "--fail-on-fail", "with --trace: exit with status 1 when the last commit fails the condition (the "
            "gate of a CI pipeline)")
    _switch(p, "--fail-on-alarm", "with --trace: exit with status 1 when the trace raised a new-testset alarm for "
            "--adaptivity (the test set must be replaced)")
    _choice(p, "--alarm-on", ALARM_ON, "firstChange: the signal that retires the test set (default {})")
    add_format_option(p)
    add_slide_option(p)
    p.set_defaults(run=run)


def _defaulted(p, flag: str, name: str, help: str, shown=str) -> None:
    """``flag`` taking text, checked by the model; its default the model's ``name`` (``{}`` in ``help``)."""
    value = shown(default(name))
    p.add_argument(flag, default=value, help=help.format(value))


def _choice(p, flag: str, choices, help: str) -> None:
    """``flag`` naming one of ``choices`` (checked by the model, which names the flag); the model's default."""
    name = flag[2:].replace("-", "_")
    p.add_argument(flag, default=default(name), metavar="{" + ",".join(choices) + "}",
                   help=help.format(default(name)))


def _switch(p, flag: str, help: str) -> None:
    p.add_argument(flag, action="store_true", help=help)


def run(args) -> int:
    """Count (and replay); a model's InputError names its parameter, which the CLI shows as the flag."""
    from . import plan as ci_plan
    from . import replay as ci_replay

    difference_bound = None if args.difference_bound is None else check_number("--difference-bound",
                                                                           args.difference_bound)
    seconds = check_number("--seconds-per-label", args.seconds_per_label)
    check_slide_path(args)
    result = ci_plan.ci_labels(args.condition, args.reliability, args.adaptivity, args.steps, args.mode,
                               difference_bound=difference_bound,
                               check_difference_bound=not args.assume_difference_bound,
                               seconds_per_label=seconds, labelers=args.labelers, bound=args.bound)
    replay = None
    trace = _trace(args)
    if (args.fail_on_fail or args.fail_on_alarm) and trace is None:
        raise InputError("--fail-on-fail" if args.fail_on_fail else "--fail-on-alarm",
                         "used with --trace or --example (the commits it judges)", raw("no trace"))
    if trace is not None:
        try:
            replay = ci_replay.replay_ci(args.condition, trace, mode=args.mode, steps=result.steps,
                                         reliability=args.reliability, adaptivity=args.adaptivity,
                                         difference_bound=difference_bound,
                                         check_difference_bound=not args.assume_difference_bound,
                                         alarm_on=args.alarm_on, plan=result)
        except InputError as exc:
            if exc.location is None and exc.parameter == "trace":  # the file itself: name it
                raise InputError("--trace", exc.rule, raw(str(exc.got)), location=shown_path(args.trace)) from None
            raise
    payload = result.to_dict()
    if replay is not None:
        payload["replay"] = replay.to_dict()
    payload["lead"] = result.lead()
    text = _text(result, replay) + "\n\n" + payload["lead"]
    written = write_slide(args, result.slide)
    if written is not None:
        payload["slide"] = written
        text += f"\n\nslide: {written}"
    emit(args, payload, text)
    if replay is not None and len(replay):
        if args.fail_on_fail and replay.signals()[-1] != "pass":
            return 1
        if args.fail_on_alarm and replay.alarms(result.adaptivity):
            return 1
    return 0


def _trace(args):
    """What --trace (``-``: standard input) or --example names, unread; None for neither."""
    if args.trace and args.example is not None:
        raise InputError("--example", "used without --trace (one or the other)", args.example)
    if args.example is not None:
        from .trace import example_trace

        try:
            return example_trace(args.example)
        except InputError as exc:
            raise InputError("--example", exc.rule, args.example) from None
    return input_file(args.trace) if args.trace else None


def _fmt(v):
    return "—" if v is None else v


def _text(result, replay) -> str:
    lines = [f"ease.ml/ci condition: {result.condition}",
             f"reliability {result.reliability:g} (delta {result.delta:g}), mode {result.mode}, "
             f"{result.steps} steps per test set", ""]
    optimized = result.optimized is not None
    exact = result.bound != "hoeffding"
    headers = (["adaptivity", "labels"] + (["Hoeffding"] if exact else [])
               + (["optimized", "labels/commit"] if optimized else []))
    rows = []
    for a, v in result.by_adaptivity.items():
        mark = a + (" *" if a == result.adaptivity else "")
        row = [mark, v["labels"]] + ([result.hoeffding[a]["labels"]] if exact else [])
        if optimized:
            row += [v["optimized"], _fmt(v["labels_per_commit"])]
        rows.append(row)
    lines.append(table(headers, rows, align="l" + "r" * (len(headers) - 1)))
    lines.append("")
    per = f"{result.seconds_per_label:g} s per label, {result.labelers} labeler{'s' if result.labelers != 1 else ''}"
    lines.append(f"labels:            {result.labels:,}  ({result.labeler_hours:,.1f} labeler-hours, "
                 f"{result.calendar_hours:,.1f} h calendar; {per})")
    if optimized:
        lines.append(f"optimized:         {result.optimized:,}  ({result.optimized_labeler_hours:,.1f} labeler-hours)"
                     f"  + {result.unlabeled:,} unlabeled examples")
        if result.labels_per_commit is not None:
            lines.append(f"labels per commit: {result.labels_per_commit:,}  (active labeling, "
                         f"{result.per_commit_hours:,.2f} labeler-hours per commit)")
    lines.append("")
    lines.append(table(["clause", "baseline", "optimized", "method"],
                       [[c.clause, c.baseline, _fmt(c.optimized), c.method] for c in result.clauses],
                       align="lrrl"))
    lines.append("")
    lines.append(result.sentence())
    for note in result.notes:
        lines.append(f"note: {note}")
    if replay is not None:
        lines.append("")
        lines.append(f"replay ({len(replay.rows)} commits, {replay.passes} passed):")
        headers = ["#", "commit", "n", "o", "d", "truth", "signal", "alarm (none/full/firstChange)"]
        rows = []
        for i, r in enumerate(replay.rows):
            alarms = "/".join("ALARM" if r[f"alarm_{a}"] else "-" for a in ("none", "full", "firstChange"))
            rows.append([i + 1, r["commit"], *(("—" if r[k] is None else f"{r[k]:.4f}") for k in "nod"),
                         r["truth"], r["signal"], alarms])
        lines.append(table(headers, rows, align="rlrrrlll"))
        for w in replay.warnings:
            lines.append(f"warning: {w}")
    return "\n".join(lines)
