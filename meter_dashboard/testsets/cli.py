"""``meter-dashboard testset``: guarded test sets (ease.ml/meter and ease.ml/ci run for real).

Subcommands: ``create``, ``token``, ``submit``, ``status``, ``revert``, ``retire``,
``export``, ``list``.  They talk to a store (``--store URL``, default
``$METER_DASHBOARD_STORE`` or a SQLite file in the user's data directory) or, for the
developer's side, to a running server (``--server URL --token TOKEN``), so developers
never hold the store's credentials.

Exit status: 0 done; 1 refused by the test set's rules (the budget is used up, it
retired, a revert the plan does not have, a tenant over its submissions per hour), in
ease.ml/ci mode a commit that fails, and with ``submit --fail-on-alarm`` an answer with an
entry of level "alarm" (so a pipeline step can gate on it); 2 bad input (one line on
stderr); 3 ``submit --server`` got no answer after its retries (the connection dropped or was
refused each time, or the server answered 503): the line names the submission's
``Idempotency-Key``, and the same command with ``--idempotency-key KEY`` later gets the answer of a
submission that was recorded, spending nothing.  ``--format json`` prints one object, documented by the schemas of the HTTP API
(``GET /api/openapi.json``; :data:`meter_dashboard.testsets.openapi.CLI_SCHEMAS`).
"""
from __future__ import annotations

import sys

from ..core.cli import (STDIN, StandardInput, add_format_option, add_verb, emit, epsilon_for_signals, input_file,
                        shown_path, table)
from ..core.validation import InputError, check_int, check_number, parse_int_list, parse_number_list, raw

#: service parameter -> the flag a person typed
_FLAGS = {"val_accuracy": "--val-accuracy", "labels": "--labels", "tenant": "--tenant", "baseline": "--baseline",
          "predictions": "--predictions", "alarm_signal": "--alarm-signal", "bound": "--bound",
          "max_error_rate": "--max-error-rate",
          "submissions_per_hour": "--submissions-per-hour", "Idempotency-Key": "--idempotency-key"}
#: ``submit --server``'s exit status when no try was answered (the outcome is unknown; retry with the key).
UNANSWERED = 3
SUBCOMMANDS = ("create", "token", "submit", "status", "revert", "retire", "export", "list")


def _store_option(p, remote: bool = False) -> None:
    p.add_argument("--store", default=None, help="store URL: sqlite:///PATH or postgresql+psycopg://USER@HOST/DB "
                   "(default $METER_DASHBOARD_STORE, else a SQLite file in the user's data directory)")
    if remote:
        p.add_argument("--server", default=None, help="a meter-dashboard server (http://HOST:PORT) instead of a store")
        p.add_argument("--token", default=None, help="the token for --server (a tenant's, or the admin token)")
    add_format_option(p)


#: Runnable examples shown by ``--help``, in order, in one folder (tests/cli/test_help_examples.py runs them):
#: a labels file and a model's predictions arrive on standard input (``-``).
EXAMPLES = (
    "seq 3000 | awk 'BEGIN {print \"id,label\"} {print \"x\" $1 \",\" $1 % 2}' | meter-dashboard testset create demo "
    "--labels - --steps 4 --epsilon 0.05,0.1 --delta 0.1 --store sqlite:///demo.sqlite",
    "seq 3000 | awk 'BEGIN {print \"id,prediction\"} {print \"x\" $1 \",1\"}' | meter-dashboard testset submit demo "
    "--predictions - --val-accuracy 0.52 --tenant alice --store sqlite:///demo.sqlite",
    "meter-dashboard testset status demo --store sqlite:///demo.sqlite",
)


def register(sub) -> None:
    p = add_verb(sub, "testset", help="guarded test sets: create, submit, status, revert, retire, export",
                 description="Hold a test set: developers submit predictions and get back the meter's "
                 "signal (or ease.ml/ci's pass/fail), never the test score; the budget is enforced and the "
                 "test set retires itself when it is used up.",
                 examples=EXAMPLES, heading="examples (in one folder, in this order; - reads standard input)")
    verbs = p.add_subparsers(dest="testset_command", metavar="SUBCOMMAND")  # the same one-line-error parser
    _register_create(verbs)
    t = verbs.add_parser("token", help="issue a tenant token (shown once)")
    t.add_argument("name", metavar="NAME")
    t.add_argument("--tenant", required=True, help="who will submit with it")
    _store_option(t, remote=True)
    s = verbs.add_parser("submit", help="submit predictions; prints the signal only")
    s.add_argument("name", metavar="NAME")
    s.add_argument("--predictions", required=True, help="CSV with columns id,prediction (one row per test example; - for standard input)")
    s.add_argument("--val-accuracy", default=None, help="the model's accuracy on your validation set, in [0, 1]")
    s.add_argument("--tenant", default=None, help="who submits (with --store; a token names its own tenant)")
    s.add_argument("--idempotency-key", default=None, help="with --server: the key of an earlier try that got no "
                   "answer (exit 3 prints it): a submission recorded under it answers again, spending nothing "
                   "(default: a new random key, sent again on each retry)")
    s.add_argument("--fail-on-alarm", action="store_true", help="exit 1 when the answer has an alarm (level "
                   "'alarm': a signal at or above the test set's --alarm-signal, too few labels, ...); notes never fail")
    _store_option(s, remote=True)
    for verb, text in (("status", "the test set's state and the history you may see"),
                       ("revert", "mark the latest step reverted (when the plan has a revert there)"),
                       ("retire", "retire the test set now")):
        v = verbs.add_parser(verb, help=text)
        v.add_argument("name", metavar="NAME")
        _store_option(v, remote=True)
    e = verbs.add_parser("export", help="after retirement: the history as a trace /session replays")
    e.add_argument("name", metavar="NAME")
    e.add_argument("--out", required=True, help="trace file to write (.csv, or .json with the test-set size)")
    e.add_argument("--labels-out", default=None, help="also write the released labels (id,label CSV)")
    _store_option(e, remote=True)
    ls = verbs.add_parser("list", help="every test set in the store")
    _store_option(ls)
    p.set_defaults(run=run)


def _register_create(verbs) -> None:
    c = verbs.add_parser("create", help="register a test set from a labels file and a plan",
                         description="Meter mode (--epsilon/--delta/--steps, the planner's plan) or ease.ml/ci mode "
                         "(--condition/--reliability/--adaptivity). Prints the admin token once.")
    c.add_argument("name", metavar="NAME")
    c.add_argument("--labels", required=True, help="CSV with columns id,label (any class names; - for standard input)")
    c.add_argument("--steps", required=True, help="T (meter) or H (ci): the steps the test set must support")
    c.add_argument("--allow-smaller", action="store_true", help="accept fewer labels than the plan needs and "
                   "record the tolerance they support")
    c.add_argument("--epsilon", default=None, help="meter: eps_1,...,eps_m (default 0.01,...,0.05)")
    c.add_argument("--signals", default=None, help="meter: m, when one eps is given")
    c.add_argument("--ranges", default=None, help="meter: m + 1 boundaries 0,...,1")
    c.add_argument("--delta", default=None, help="meter: failure probability in (0, 1) (default 0.01)")
    c.add_argument("--bound", default=None, choices=("hoeffding", "binomial"),
                   help="meter: the planner's per-model bound (default hoeffding; binomial: exact tails, 0/1 losses)")
    c.add_argument("--max-error-rate", default=None, help="meter, with --bound binomial: every model submitted errs "
                   "at most this")
    c.add_argument("--meter", choices=("incremental", "regular"), default=None, help="meter: the variant (default "
                   "incremental)")
    c.add_argument("--tenant-steps", default=None, help="meter: steps per tenant, e.g. 5,5 (sum T)")
    c.add_argument("--reverts", default=None, help="meter: revert steps fixed in advance, e.g. 2,5")
    c.add_argument("--condition", default=None, help="ci: a condition such as \"n - o > 0.02 +/- 0.01\"")
    c.add_argument("--reliability", default=None, help="ci: 1 - delta, e.g. 0.9999")
    c.add_argument("--adaptivity", default=None, choices=("full", "none", "firstChange"), help="ci: what developers see")
    c.add_argument("--mode", default=None, choices=("fp-free", "fn-free"), help="ci: fp-free (default) or fn-free")
    c.add_argument("--baseline", default=None, help="ci: the deployed model's predictions (id,prediction CSV)")
    c.add_argument("--alarm-signal", default=None, help="meter: a released signal at or above K (1..m) is an alarm "
                   "(submit --fail-on-alarm then exits 1)")
    c.add_argument("--submissions-per-hour", default=None, help="each tenant may submit at most N times in any hour "
                   "(all its tokens together; default: no cap)")
    _store_option(c)


# ============================================================================ helpers
def _store(args):
    from .store import Store

    return Store(args.store)


def _remote(args):
    """A client when --server is given (then --token is required), else None."""
    if getattr(args, "server", None) is None:
        if getattr(args, "token", None) is not None:
            raise InputError("--token", "used with --server (with --store, the store's owner needs no token)", "a token")
        return None
    if args.store is not None:
        raise InputError("--server", "used without --store (one or the other)", args.server)
    if not args.token:
        raise InputError("--token", "given with --server", "nothing")
    from .client import Client

    return Client(args.server, args.token)


def _read(kind: str, path: str, flag: str):
    from . import files

    source = input_file(path)  # ``-``: standard input
    try:
        return files.read_labels(source, parameter=flag) if kind == "labels" else files.read_predictions(source,
                                                                                                         parameter=flag)
    except InputError as exc:
        path = shown_path(path)
        where = f"{path}, {exc.location}" if exc.location else path
        raise InputError(exc.parameter, exc.rule, raw(_got(exc)), location=where) from None


def _in_file(exc: InputError, path: str, parameter: str) -> InputError:
    """A matching-by-id error (missing, extra or repeated ids) names the file it is about."""
    if type(exc) is not InputError or not ((exc.location or "").startswith("row ") or exc.parameter == parameter):
        return exc
    where = f"{path}, {exc.location}" if exc.location else path
    return InputError(exc.parameter, exc.rule, raw(_got(exc)), location=where)


def _got(exc: InputError) -> str:
    return str(exc).split("; got ", 1)[1] if "; got " in str(exc) else repr(exc.got)


def _settings_from_args(args):
    from . import signals

    steps = check_int("--steps", args.steps, minimum=1)
    meter_flags = [f for f, v in (("--epsilon", args.epsilon), ("--signals", args.signals), ("--ranges", args.ranges),
                                  ("--delta", args.delta), ("--meter", args.meter), ("--tenant-steps", args.tenant_steps),
                                  ("--reverts", args.reverts), ("--bound", args.bound),
                                  ("--max-error-rate", args.max_error_rate)) if v is not None]
    if args.condition is not None:
        if meter_flags:
            raise InputError(meter_flags[0], "left out in ease.ml/ci mode (--condition)", raw("a value"))
        if args.reliability is None or args.adaptivity is None:
            raise InputError("--reliability" if args.reliability is None else "--adaptivity",
                             "given with --condition", "nothing")
        if args.alarm_signal is not None:
            raise InputError("--alarm-signal", "used in meter mode (ease.ml/ci answers pass or fail)", raw("a value"))
        return signals.ci_settings(condition=args.condition, reliability=args.reliability, adaptivity=args.adaptivity,
                                   mode=args.mode or "fp-free", steps=steps, baseline=args.baseline is not None,
                                   submissions_per_hour=args.submissions_per_hour)
    for flag, value in (("--reliability", args.reliability), ("--adaptivity", args.adaptivity), ("--mode", args.mode),
                        ("--baseline", args.baseline)):
        if value is not None:
            raise InputError(flag, "used with --condition (ease.ml/ci mode)", raw("a value"))
    epsilon = parse_number_list("--epsilon", args.epsilon or "0.01,0.02,0.03,0.04,0.05")
    epsilon = epsilon_for_signals(epsilon, args.signals)
    return signals.meter_settings(
        epsilon=epsilon, delta=check_number("--delta", args.delta or "0.01"), steps=steps,
        ranges=parse_number_list("--ranges", args.ranges) if args.ranges else None, meter=args.meter or "incremental",
        tenant_steps=parse_int_list("--tenant-steps", args.tenant_steps) if args.tenant_steps else None,
        reverts=parse_int_list("--reverts", args.reverts) if args.reverts else None,
        alarm_signal=args.alarm_signal, submissions_per_hour=args.submissions_per_hour,
        bound=args.bound or "hoeffding", max_error_rate=args.max_error_rate)


def _refused(args, exc) -> int:
    sys.stderr.write(f"meter-dashboard testset {args.testset_command}: refused: {exc}\n")
    if getattr(args, "format", "table") == "json":
        emit(args, {"refused": True, "message": str(exc)}, "")
    return 1


# ============================================================================ the subcommands
def run(args) -> int:
    from .service import ServiceError
    from .store import StoreError

    command = getattr(args, "testset_command", None)
    if command is None:
        raise InputError("SUBCOMMAND", "one of " + ", ".join(SUBCOMMANDS), "nothing")
    try:
        return _COMMANDS[command](args)
    except InputError as exc:
        flag = _FLAGS.get(exc.parameter)
        if flag is None or type(exc) is not InputError:
            raise
        raise InputError(flag, exc.rule, raw(_got(exc)), location=exc.location) from None
    except ServiceError as exc:
        from .client import Unanswered

        if isinstance(exc, Unanswered):
            sys.stderr.write(f"meter-dashboard testset {command}: no answer: {exc}\n")
            return UNANSWERED
        if exc.status in (409, 429):
            return _refused(args, exc)
        raise InputError("--token" if exc.status in (401, 403) else "request", "accepted",
                         raw(str(exc))) from None
    except StoreError as exc:
        raise InputError("--store", "a store that can be opened", raw(str(exc))) from None


def _create(args) -> int:
    from . import service

    settings = _settings_from_args(args)
    labels = _read("labels", args.labels, "--labels")
    baseline = _read("predictions", args.baseline, "--baseline") if args.baseline else None
    try:
        out = service.create(_store(args), args.name, labels, settings, baseline=baseline,
                             allow_smaller=args.allow_smaller)
    except InputError as exc:
        raise _in_file(exc, args.baseline, "baseline") if args.baseline else exc from None
    lines = [f"Created guarded test set {out['name']!r} ({out['mode']} mode): {out['labels']:,} labels; "
             f"the plan needs {out['needed']:,}."]
    if out["supported"]:
        lines.append("ALARM: fewer labels than the plan needs; they support " + _supported_text(out["supported"]))
    lines += ["", f"admin token (shown once, keep it secret): {out['admin_token']}"]
    emit(args, out, "\n".join(lines))
    return 0


def _supported_text(supported: dict) -> str:
    if "epsilon" in supported:
        eps = supported["epsilon"]
        return "no meaningful tolerance" if eps is None else "ε = " + ", ".join(f"{v:.4g}" for v in eps)
    scale = supported["tolerance_scale"]
    return "no meaningful tolerance" if scale is None else (
        f"tolerances × {scale:.4g} (" + ", ".join(f"±{v:.4g}" for v in supported["tolerances"]) + ")")


def _token(args) -> int:
    from . import service

    remote = _remote(args)
    out = remote.issue_token(args.name, args.tenant) if remote else service.issue_token(_store(args), args.name,
                                                                                        args.tenant)
    emit(args, out, f"token for tenant {out['tenant']} of {out['name']!r} (shown once): {out['token']}")
    return 0


def _submit(args) -> int:
    from . import service

    val = None if args.val_accuracy is None else check_number("--val-accuracy", args.val_accuracy)
    remote = _remote(args)
    if remote is not None:
        if args.tenant is not None:
            raise InputError("--tenant", "left out with --server (the token names its tenant)", args.tenant)
        from .client import RemoteError

        source = args.predictions
        if source == STDIN:
            from ..core.files import read_bytes
            from .files import MAX_FILE_BYTES

            source = read_bytes(StandardInput(), parameter="--predictions", max_bytes=MAX_FILE_BYTES)[0]
        try:  # the file goes as it is; the server names the row and column of a problem
            out = remote.submit(args.name, source, val, idempotency_key=args.idempotency_key)
        except RemoteError as exc:
            if str(exc).startswith(("row ", "line ")):  # say which file
                raise RemoteError(f"{shown_path(args.predictions)}, {exc}", exc.status) from None
            raise
    else:
        if args.idempotency_key is not None:
            raise InputError("--idempotency-key", "used with --server", args.idempotency_key)
        predictions = _read("predictions", args.predictions, "--predictions")
        try:
            out = service.submit(_store(args), args.name, predictions, val, tenant=args.tenant)
        except InputError as exc:
            raise _in_file(exc, shown_path(args.predictions), "predictions") from None
    emit(args, out, _submit_text(out))
    if args.fail_on_alarm and out.get("failing"):
        return 1
    return 1 if out.get("passed") is False else 0


def _submit_text(out: dict) -> str:
    if out["mode"] == "ci":
        verdict = {True: "PASS", False: "FAIL", None: "recorded (results are released when the test set retires)"}
        lines = [f"commit {out['step']}: {verdict[out['passed']]}; {out['steps_left']} commit(s) left"]
    else:
        lo, hi = out["range"]
        lines = [f"step {out['step']}: signal {out['signal']} (empirical overfitting in [{lo:g}, {hi:g}"
                 f"{']' if hi == 1 else ')'}), incremental signal {out['incremental_signal']}, "
                 f"ε = {out['epsilon']:g}; {out['steps_left']} step(s) left"
                 + (f", {out['tenant_steps_left']} for {out['tenant']}" if out.get("tenant_steps_left") is not None
                    and out["tenant_steps_left"] != out["steps_left"] else "")]
    lines += [f"ALARM: {a['message']}" if a["level"] == "alarm" else f"note: {a['message']}" for a in out["alarms"]]
    return "\n".join(lines)


def _status(args) -> int:
    from . import service

    remote = _remote(args)
    out = remote.status(args.name) if remote else service.status(_store(args), args.name, service.OWNER)
    emit(args, out, _status_text(out))
    return 0


def _status_text(out: dict) -> str:
    head = (f"{out['name']} ({out['mode']}, {out['status']}): {out['labels']:,} labels (the plan needs "
            f"{out['needed']:,}); steps used {out['steps_used']} of {out['steps']}")
    rows = out["history"]
    lines = [head, ""]
    if rows:
        keys = [k for k in ("step", "tenant", "time", "val_accuracy", "signal", "incremental_signal", "epsilon",
                            "passed", "reverted", "test_accuracy") if k in rows[0]]
        lines.append(table(keys, [[r[k] for k in keys] for r in rows]))
    else:
        lines.append("no submissions yet")
    lines += [f"ALARM: {a['message']}" if a["level"] == "alarm" else f"note: {a['message']}" for a in out["alarms"]]
    return "\n".join(lines)


def _admin(args) -> int:
    from . import service

    remote = _remote(args)
    action = args.testset_command
    if remote is not None:
        out = getattr(remote, action)(args.name)
    else:
        out = getattr(service, action)(_store(args), args.name)
    text = (f"step {out['step']} of {out['name']!r} reverted" if action == "revert" else
            f"{out['name']!r} retired after {out['steps_used']} step(s): its scores and labels are released to its "
            f"tokens")
    emit(args, out, text)
    return 0


def _export(args) -> int:
    from . import service

    fmt = "json" if args.out.lower().endswith(".json") else "csv"
    remote = _remote(args)
    out = remote.export(args.name, fmt) if remote else service.export(_store(args), args.name, format=fmt)
    labels = None
    if args.labels_out:
        labels = remote.labels(args.name) if remote else service.release_labels(_store(args), args.name)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(out["trace"])
    if labels is not None:
        with open(args.labels_out, "w", encoding="utf-8") as fh:
            fh.write(labels)
    summary = {"name": out["name"], "out": args.out, "format": fmt, "test_size": out["test_size"],
               "labels_out": args.labels_out, "settings": out["settings"]}
    emit(args, summary, f"wrote {args.out}" + (f" and {args.labels_out}" if args.labels_out else "")
         + f" (test set of {out['test_size']:,} labels)")
    return 0


def _list(args) -> int:
    from . import service

    rows = service.list_testsets(_store(args))
    text = table(["name", "mode", "status", "labels", "needed", "used", "created"],
                 [[r["name"], r["mode"], r["status"], r["labels"], r["needed"], f"{r['steps_used']}/{r['steps']}",
                   r["created"]] for r in rows]) if rows else "no test sets in the store"
    emit(args, {"testsets": rows}, text)
    return 0


_COMMANDS = {"create": _create, "token": _token, "submit": _submit, "status": _status, "revert": _admin,
             "retire": _admin, "export": _export, "list": _list}
