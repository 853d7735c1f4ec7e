"""What the tests of the file-reading verbs (``compare``, ``ladder``) check alike: helpers, not tests.

- :func:`run`: the real command in a subprocess;
- :func:`process_refuses`: a bad file given to the real command, its message;
- :func:`refused`: a command that must exit 2 with one line on stderr, that line;
- :func:`help_examples` and :func:`run_help_examples`: the runnable examples of ``VERB --help``;
- :func:`imported_ui`: the Panel/Bokeh/HoloViews modules some CLI calls import (none, for the CLI).
"""
from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from meter_dashboard.cli import main


def run(*args):
    """The real command in a subprocess (slow on a busy machine: used sparingly)."""
    return subprocess.run([sys.executable, "-m", "meter_dashboard", *args], capture_output=True, text=True,
                          timeout=120)


def process_refuses(tmp_path, verb: str, content: str) -> str:
    """``meter-dashboard VERB bad.csv`` (``content``) in a real process exits 2: its stderr."""
    bad = tmp_path / "bad.csv"
    bad.write_text(content, encoding="utf-8")
    proc = run(verb, str(bad))
    assert proc.returncode == 2
    return proc.stderr.strip()


def refused(args, capsys) -> str:
    """``main(args)`` exits 2 with exactly one line on stderr: that line."""
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def help_examples(verb: str, capsys) -> list[str]:
    """The example lines of ``VERB --help`` (there is at least one)."""
    with pytest.raises(SystemExit) as info:
        main([verb, "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    examples = [line.strip() for line in text.splitlines() if line.strip().startswith("meter-dashboard ")]
    assert examples, f"{verb} --help has no example:\n{text}"
    return examples


def run_help_examples(verb: str, capsys) -> None:
    """Each example of ``VERB --help`` runs that verb, succeeds and prints something."""
    for example in help_examples(verb, capsys):
        args = shlex.split(example)[1:]
        assert args[0] == verb
        assert main(args) == 0, example
        assert capsys.readouterr().out.strip()


def imported_ui(*calls: list[str]) -> str:
    """Run ``main(call)`` for each call in a fresh interpreter; the UI modules it imported, as printed."""
    code = ("import sys, io, contextlib\nfrom meter_dashboard.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            + "".join(f"    main({call!r})\n" for call in calls)
            + "print(sorted(m for m in sys.modules if m.split('.')[0] in ('panel', 'bokeh', 'holoviews')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()
