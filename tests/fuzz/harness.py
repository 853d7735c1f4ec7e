"""The fuzzer's harness: run a CLI invocation in-process under a watchdog and judge the outcome.

The rule (issue 15): valid input -> exit 0 and a checked answer; invalid input -> exit 2 and
exactly one line on stderr that names what the user typed (the flag, or the file's row and
column); never a traceback, never a freeze (every invocation answers within ``TIMEOUT``
seconds, a generous bound meant to catch hangs, not to measure speed).
"""
from __future__ import annotations

import contextlib
import io
import json
import signal
import threading
import time
from dataclasses import dataclass

from meter_dashboard.cli import main

#: Seconds after which an invocation counts as a freeze.
TIMEOUT = 20.0
#: Exit codes a verb may use besides 0 and 2 (1: a CI gate failed on purpose).
GATE_EXIT = {"replay": {1}, "testset": {1}, "ci": {1}}


class Freeze(Exception):
    """Raised inside an invocation that ran past :data:`TIMEOUT`."""


@dataclass
class Outcome:
    argv: list
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    crash: BaseException | None = None

    def describe(self) -> str:
        return (f"argv={self.argv!r} code={self.code} after {self.seconds:.2f}s crash={self.crash!r}\n"
                f"stderr={self.stderr[-800:]!r}\nstdout={self.stdout[:300]!r}")


def _alarm(signum, frame):  # pragma: no cover - only on a freeze
    raise Freeze(f"no answer within {TIMEOUT} s")


def run_cli(argv) -> Outcome:
    """Run ``meter-dashboard ARGV`` in this process, capturing output, under a watchdog."""
    out, err = io.StringIO(), io.StringIO()
    watchdog = threading.current_thread() is threading.main_thread()
    if watchdog:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    start = time.perf_counter()
    code, crash = None, None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BaseException as exc:  # noqa: BLE001 - the fuzzer reports every escape
        crash = exc
    finally:
        if watchdog:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return Outcome(list(argv), code, out.getvalue(), err.getvalue(), time.perf_counter() - start, crash)


def check(outcome: Outcome, names=()) -> dict | None:
    """Assert the rule; returns the JSON answer of a successful ``--format json`` run."""
    verb = str(outcome.argv[0]) if outcome.argv else ""
    assert outcome.crash is None, "escaped exception: " + outcome.describe()
    allowed = {0, 2} | GATE_EXIT.get(verb, set())
    assert outcome.code in allowed, "unexpected exit status: " + outcome.describe()
    assert "Traceback" not in outcome.stderr, "traceback: " + outcome.describe()
    if outcome.code == 2:
        lines = outcome.stderr.strip().splitlines()
        assert len(lines) == 1, "bad input must give exactly one line on stderr: " + outcome.describe()
        assert lines[0].startswith("meter-dashboard"), outcome.describe()
        if names:
            assert any(name in lines[0] for name in names), (
                f"the message must name what was typed ({', '.join(names)}): " + outcome.describe())
        return None
    assert outcome.stdout.strip(), "a successful run must print its answer: " + outcome.describe()
    if "--format" in outcome.argv and outcome.argv[outcome.argv.index("--format") + 1] == "json":
        answer = json.loads(outcome.stdout)
        check_counts(answer)
        return answer
    return None


def check_counts(answer) -> None:
    """Every label/run count in an answer is a positive whole number (or a list of them)."""
    for key in ("labels", "optimized", "labels_per_commit", "runs", "needed"):
        value = answer.get(key) if isinstance(answer, dict) else None
        values = value.values() if isinstance(value, dict) else (value if isinstance(value, list) else [value])
        for v in values:
            items = v if isinstance(v, list) else [v]
            for item in items:
                if item is None:
                    continue
                assert isinstance(item, int) and not isinstance(item, bool) and item >= 1, (key, item, answer)
