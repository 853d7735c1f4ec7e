"""The ``meter-dashboard`` command line: the entry point that dispatches to each family's ``cli`` module.

Each verb lives in its family's folder (``meter/cli.py`` for ``plan``, ``session/cli.py`` for
``replay``, ...) and exposes ``register(subparsers)``, which adds its sub-parser(s) with
``set_defaults(run=...)``.  A bad input anywhere ends in exit status 2 with one line on stderr
naming the parameter, the rule and the value given (never a traceback).

No module here imports Panel at import time; only ``serve`` starts the dashboard, and it
imports Panel inside its ``run`` function.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from ..core.cli import INTERRUPTED, fail
from ..core.validation import InputError

# verb -> the module that registers it; the order is the order of ``meter-dashboard --help``.
COMMAND_MODULES = {
    "plan": "meter_dashboard.meter.cli",
    "simulate": "meter_dashboard.meter.cli_simulate",
    "replay": "meter_dashboard.session.cli",
    "ci": "meter_dashboard.ci.cli",
    "ladder": "meter_dashboard.leaderboard.cli",
    "compare": "meter_dashboard.comparison.cli",
    "approve": "meter_dashboard.approvals.cli",
    "testset": "meter_dashboard.testsets.cli",
    "serve": "meter_dashboard.app.cli",
    "completion": "meter_dashboard.cli.completion",
}


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line on stderr and exit status 2; remembers its flags."""

    def __init__(self, *args, **kwargs):
        self.flags: set[str] = set()
        self.verbs: dict[str, _Parser] = {}
        super().__init__(*args, **kwargs)

    def add_argument(self, *names, **kwargs):
        self.flags.update(n for n in names if n.startswith("--"))
        return super().add_argument(*names, **kwargs)

    def add_subparsers(self, **kwargs):
        action = super().add_subparsers(**kwargs)
        add_parser = action.add_parser

        def add_verb(name, **options):
            verb = add_parser(name, **options)
            self.verbs[name] = verb
            return verb

        action.add_parser = add_verb
        return action

    def error(self, message):  # pragma: no cover - exercised through main()
        fail(message, prog=self.prog)


def _version() -> str:
    from .. import __version__

    return __version__


def build_parser() -> _Parser:
    parser = _Parser(
        prog="meter-dashboard",
        description=(
            "How many labelled test examples does adaptive ML development need? "
            "ease.ml/meter label counts, trace replay, ease.ml/ci, Ladder, SRGP and P(A>B)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}",
                        help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module_name in COMMAND_MODULES.values():
        importlib.import_module(module_name).register(sub)
    return parser


def _as_typed(error: InputError, parser: _Parser, command: str) -> InputError:
    """Name the flag the person typed when the models name their own parameter (``tenants`` -> ``--tenants``)."""
    flag = "--" + str(error.parameter).replace("_", "-")
    verb = parser.verbs.get(command)
    return error.renamed(flag) if verb is not None and flag in verb.flags else error


def main(argv=None) -> int:
    """Run one verb; its exit status: 0, 1 for a gate that failed (``--fail-on-...``), 2 for bad
    input, 130 after Ctrl-C (one line on stderr, never a traceback)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        _interrupted()
        return INTERRUPTED


def _interrupted() -> None:
    """After Ctrl-C: say so in one line, and let a second Ctrl-C during the exit pass silently."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    sys.stderr.write("\nmeter-dashboard: interrupted\n")
    sys.stderr.flush()


def _main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    try:
        result = args.run(args)
    except InputError as exc:
        fail(str(_as_typed(exc, parser, args.command)), prog=f"meter-dashboard {args.command}")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read input: {exc}", prog=f"meter-dashboard {args.command}")
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
