"""The lines of issue 13's table that are not about the server: CLI start-up, long replays, engine memory.

Each is measured in a fresh Python process (wall time, and peak resident memory from
``getrusage``), through the command line where there is one, so the figures include imports.

    python -m tests.benchmarks.load.engine [--quick]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .harness import ROOT, child_env, machine_note

_MEASURE = """
import resource, sys, time
start = time.perf_counter()
from meter_dashboard.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
import json
print(json.dumps({"seconds": time.perf_counter() - start, "code": code,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), file=sys.stderr)
"""

_CURVE = """
import resource, time, json, sys
import numpy as np
start = time.perf_counter()
from meter_dashboard.meter.model import curve
eps = list(np.linspace(0.01, 0.05, 50))
out = curve(eps, 0.01, np.arange(1, 100_001))
print(json.dumps({"seconds": time.perf_counter() - start, "code": 0,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), file=sys.stderr)
"""


def _python(code: str, *args: str, timeout: float = 900) -> dict:
    """Run ``code`` in a fresh interpreter; its last stderr line is the JSON figure."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=child_env())
    try:
        return json.loads(done.stderr.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:200]}


def _wall(argv: list[str], repeat: int) -> float:
    """Median wall seconds of ``python argv`` (start-up included)."""
    import time

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, *argv], capture_output=True, timeout=300, cwd=ROOT, env=child_env())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def trace_files(folder: Path, steps: int) -> tuple[Path, Path]:
    """A ``steps``-step development trace and a ``steps``-commit ease.ml/ci trace (seeded CSVs)."""
    rng = np.random.default_rng(5)
    val = np.round(rng.uniform(0.7, 0.95, steps), 4)
    test = np.round(np.clip(val - np.abs(rng.normal(0, 0.02, steps)), 0, 1), 4)
    dev = folder / f"trace-{steps}.csv"
    dev.write_text("step,val_accuracy,test_accuracy\n"
                   + "".join(f"{i + 1},{v},{t}\n" for i, (v, t) in enumerate(zip(val, test))))
    n = np.round(rng.uniform(0.7, 0.9, steps), 4)
    o = np.round(np.clip(n - rng.normal(0.01, 0.02, steps), 0, 1), 4)
    d = np.round(rng.uniform(0.0, 0.1, steps), 4)
    commits = folder / f"commits-{steps}.csv"
    commits.write_text("commit,n,o,d\n" + "".join(f"c{i},{a},{b},{c}\n" for i, (a, b, c) in enumerate(zip(n, o, d))))
    return dev, commits


def run(quick: bool = False) -> dict:
    repeat = 3 if quick else 5
    out = {
        "numpy_import": _wall(["-c", "import numpy"], repeat),
        "plan": _wall(["-m", "meter_dashboard", "plan", "--epsilon", "0.01", "--delta", "0.01", "--steps", "10"],
                      repeat),
        "approve": _wall(["-m", "meter_dashboard", "approve", str(ROOT / "meter_dashboard/data/approve_refits.csv"),
                          "--method", "naive"], repeat),
    }
    steps = 20_000 if quick else 100_000
    with tempfile.TemporaryDirectory() as folder:
        dev, commits = trace_files(Path(folder), steps)
        out["replay_steps"] = steps
        out["replay"] = _python(_MEASURE, "replay", str(dev), "--ranges", "0,0.005,0.01,0.02,0.05,1", "--epsilon",
                                "0.01,0.02,0.03,0.04,0.05", "--delta", "0.1", "--steps", str(steps),
                                "--format", "json")
        out["ci_replay"] = _python(_MEASURE, "ci", "--condition", "n - o > 0.02 +/- 0.01", "--trace", str(commits),
                                   "--format", "json")
        out["ci_startup"] = _python(_MEASURE, "ci", "--condition", "n - o > 0.02 +/- 0.01", "--format", "json")
    out["curve"] = _python(_CURVE)
    return out


def _fig(result: dict, key: str = "seconds", unit: str = "s") -> str:
    if "error" in result:
        return f"failed: {result['error']}"
    value = result[key]
    return f"{value:.2f} {unit}" if unit == "s" else f"{value:,.0f} {unit}"


def report(out: dict) -> list[str]:
    per_commit = "n/a"
    if "error" not in out["ci_replay"] and "error" not in out["ci_startup"]:
        per_commit = f"{(out['ci_replay']['seconds'] - out['ci_startup']['seconds']) / out['replay_steps'] * 1e6:.1f} µs"
    return [
        f"CLI start-up: plan {out['plan']:.2f} s (numpy import alone {out['numpy_import']:.2f} s), "
        f"approve {out['approve']:.2f} s",
        f"CLI replay of a {out['replay_steps']:,}-step trace: {_fig(out['replay'])}, peak "
        f"{_fig(out['replay'], 'peak_mib', 'MiB')}",
        f"ease.ml/ci replay: {per_commit} per commit ({out['replay_steps']:,} commits: {_fig(out['ci_replay'])} "
        "including start-up)",
        f"engine curve T = 1..100,000 at m = 50: {_fig(out['curve'])}, peak {_fig(out['curve'], 'peak_mib', 'MiB')}",
    ]


def table_rows(out: dict) -> list[str]:
    lines = report(out)
    return [
        f"| {out['replay_steps']:,}-step trace: CLI replay | {lines[1].split(': ', 1)[1]} | goal: 1,000,000 steps in "
        "< 5 s and < 1 GiB |",
        f"| ease.ml/ci trace replay | {lines[2].split(': ', 1)[1]} | ≥ 20× faster than 66 µs |",
        f"| CLI start-up: plan / approve | {out['plan']:.2f} s / {out['approve']:.2f} s (numpy import "
        f"{out['numpy_import']:.2f} s) | plan ≤ numpy import + 100 ms; approve ≤ 0.8 s |",
        f"| engine memory, curve T = 1..100,000 at m = 50 | {lines[3].split(': ', 1)[1]} | < 200 MiB |",
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 steps instead of 100,000")
    args = parser.parse_args(argv)
    print(machine_note())
    print("\n".join(report(run(args.quick))))


if __name__ == "__main__":
    main()
