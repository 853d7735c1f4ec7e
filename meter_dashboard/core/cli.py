"""What every CLI command shares: output formats, JSON encoding, plain tables.

Nothing here (nor anywhere under ``meter_dashboard.cli``) imports Panel, HoloViews or
Bokeh, so the commands start as fast as numpy and scipy allow and run in CI pipelines.
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from collections.abc import Sequence
from typing import NoReturn

import numpy as np

from .display import cell_text
from .validation import InputError, check_int, raw


def add_format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table (for people, the default) or json (one object, for scripts)",
    )


def add_slide_option(parser: argparse.ArgumentParser) -> None:
    """``--slide FILE.png|FILE.svg``: also write the meeting slide (title, the answer in plain words, inputs, chart)."""
    parser.add_argument("--slide", default=None, metavar="FILE.png|FILE.svg",
                        help="also write a slide for a meeting: title, the answer in plain words, the inputs and "
                             "the chart (PNG or SVG, by the file name's suffix)")


def check_slide_path(args) -> None:
    """Refuse a ``--slide`` name that is neither .png nor .svg before any work is done."""
    path = getattr(args, "slide", None)
    if path is not None and not str(path).lower().endswith((".png", ".svg")):
        raise InputError("--slide", "a file name ending in .png or .svg", path)


def write_slide(args, make) -> str | None:
    """Write ``make()`` (a :class:`~meter_dashboard.core.slide.Slide`) to ``--slide``; the path written, or None."""
    path = getattr(args, "slide", None)
    if path is None:
        return None
    check_slide_path(args)
    try:
        return str(make().save(path))
    except OSError as exc:
        raise InputError("--slide", "a file path that can be written", f"{path} ({exc.strerror})") from None


def emit_answer(args, payload: dict, text: str, lead: str, make_slide) -> int:
    """Print an answer (:func:`emit`) ending with its ``lead`` sentence, the ``--slide`` written first; returns 0.

    ``payload`` gains ``lead`` (and ``slide``, the path written); ``text`` ends with the lead (and the path).
    """
    payload["lead"] = lead
    text += "\n\n" + lead
    written = write_slide(args, make_slide)
    if written is not None:
        payload["slide"] = written
        text += f"\n\nslide: {written}"
    emit(args, payload, text)
    return 0


def add_outputs(parser: argparse.ArgumentParser, run, *, slide: bool = True) -> None:
    """A verb's ``--format`` (and ``--slide`` unless ``slide`` is False); ``run(args)`` answers it."""
    add_format_option(parser)
    if slide:
        add_slide_option(parser)
    parser.set_defaults(run=run)


def add_file_or_example(parser: argparse.ArgumentParser, positional: str, metavar: str, what: str,
                        examples: str) -> None:
    """The input :func:`file_or_example` reads: ``metavar`` (optional; ``what`` it is) or ``--example`` (``examples``)."""
    parser.add_argument(positional, metavar=metavar, nargs="?", default=None, help=what)
    parser.add_argument("--example", default=None, help=examples)


def add_verb(sub, name: str, *, help: str, description: str, examples: Sequence[str], note: str = "",
             heading: str = "examples", formatter_class=argparse.RawDescriptionHelpFormatter) -> argparse.ArgumentParser:
    """One verb's parser: its help line, description and an epilog of runnable examples (tests run them).

    The epilog is ``heading:`` and the examples indented by two spaces, then ``note`` after a blank line.
    """
    epilog = f"{heading}:\n" + "\n".join(f"  {line}" for line in examples) + (f"\n\n{note}" if note else "")
    return sub.add_parser(name, help=help, description=description, epilog=epilog, formatter_class=formatter_class)


def epsilon_for_signals(epsilon: list[float], signals) -> list[float]:
    """``--epsilon`` with ``--signals M``: one ε repeated M times, or M values checked against M."""
    if signals is None:
        return epsilon
    m = check_int("--signals", signals, minimum=1, maximum=1000)
    if len(epsilon) == 1:
        return epsilon * m
    if len(epsilon) != m:
        raise InputError("--signals", f"the number of --epsilon values ({len(epsilon)})", signals)
    return epsilon


def _plain(value):
    """Convert numpy scalars/arrays to JSON-ready Python values; non-finite floats become null."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def dumps(obj) -> str:
    return json.dumps(_plain(obj), indent=2, ensure_ascii=False)


def table(headers: Sequence[str], rows: Sequence[Sequence], *, align: str | None = None) -> str:
    """A plain-text table; numbers right-aligned, text left-aligned."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(_is_number(row[i]) for row in rows) if rows else False for i in range(len(headers))]
    if align:
        numeric = [a == "r" for a in align]
    lines = []
    for j, row in enumerate(cells):
        parts = [c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(parts).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _cell(v) -> str:
    return cell_text(v)  # the same rules as a result's HTML table in a notebook (core.display)


def emit(args, payload: dict, text: str) -> None:
    """Print ``payload`` as JSON or ``text`` as the table view, per ``--format``."""
    if getattr(args, "format", "table") == "json":
        sys.stdout.write(dumps(payload) + "\n")
    else:
        sys.stdout.write(text.rstrip("\n") + "\n")


def as_typed(exc: InputError, args, flags: dict) -> InputError:
    """``exc`` naming the flag a person typed (``--step``) instead of the model's name (``step``).

    ``flags`` maps model names to flags; the value echoed is the text typed for that flag.
    Errors about other names are returned unchanged.
    """
    flag = flags.get(exc.parameter)
    if flag is None:
        return exc
    typed = getattr(args, flag[2:].replace("-", "_"), None)
    return InputError(flag, exc.rule, exc.got if typed is None else typed, location=exc.location)


#: the file name that means standard input, as in pandas, jq and ruff
STDIN = "-"
#: exit status after Ctrl-C (128 + SIGINT), the shell's convention
INTERRUPTED = 130


class StandardInput:
    """``-`` on the command line: standard input, read like a file named ``stdin``.

    Every reader of the package takes a file object (:func:`meter_dashboard.core.files.read_bytes`
    reads at most its size limit plus one byte of it), so this is all ``-`` needs.
    """

    name = "stdin"

    def read(self, size: int = -1) -> bytes:
        return sys.stdin.buffer.read(size)


def flags_named(flags: dict):
    """Decorate a verb's run function: its InputErrors name the flags a person typed (:func:`as_typed`)."""
    def decorate(run):
        @functools.wraps(run)
        def wrapped(args) -> int:
            try:
                return run(args)
            except InputError as exc:
                raise as_typed(exc, args, flags) from None
        return wrapped
    return decorate


def input_file(path):
    """``path``, or :class:`StandardInput` when it is ``-``."""
    return StandardInput() if path == STDIN else path


def shown_path(path) -> str:
    """How messages name an input: its path, or ``stdin`` for ``-``."""
    return "stdin" if path == STDIN else str(path)


def file_or_example(args, positional: str, metavar: str, load_example, read):
    """What ``metavar`` (the positional argument ``positional``, ``-`` for standard input) or
    ``--example NAME`` names, read.

    Exactly one of the two must be given; an unknown example is refused naming ``--example``.
    """
    path = getattr(args, positional)
    if (path is None) == (args.example is None):
        raise InputError(metavar, "given, or --example NAME (exactly one of the two)",
                         raw("both" if args.example is not None else "neither"))
    if args.example is None:
        return read(input_file(path))
    try:
        return load_example(args.example)
    except InputError as exc:
        raise InputError("--example", exc.rule, args.example) from None


def fail(message: str, prog: str = "meter-dashboard") -> NoReturn:
    """One line on stderr, exit status 2 (the convention for bad input).

    Control characters a person typed (a carriage return in a condition, a tab in a file name) are
    written as their escapes, so the message stays one printable line.
    """
    message = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)
    sys.stderr.write(f"{prog}: error: {message}\n")
    raise SystemExit(2)


__all__ = ["add_format_option", "add_verb", "epsilon_for_signals", "flags_named", "dumps", "table", "emit", "as_typed", "file_or_example", "fail", "InputError",
           "STDIN", "INTERRUPTED", "StandardInput", "input_file", "shown_path"]
