"""``meter-dashboard simulate``: the Monte Carlo check of a plan (issue 12).

The adversary is the boosting attack of Blum & Hardt (2015), adapted to the meter's signals.
Against it the naive count (one Hoeffding estimate, single_model) fails visibly at m = 3,
eps = (0.02, 0.04, 0.06), delta = 0.1, T = 10, regular meter: independent runs quoted in
issue 12 give about 0.22; every planned count (ease.ml/meter Thm 1 / Thm 2, Hoeffding or
exact binomial) stays at or below delta within its interval.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from meter_dashboard.cli import main

SETTING = ["simulate", "--epsilon", "0.02,0.04,0.06", "--delta", "0.1", "--steps", "10"]


def simulate(capsys, *args) -> dict:
    assert main([*SETTING, *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_naive_count_fails_against_the_adversary(capsys):
    out = simulate(capsys, "--meter", "regular", "--labels", "single_model", "--replicates", "1024")
    assert {"failure_rate", "ci", "replicates"} <= set(out)
    assert out["replicates"] == 1024 and out["labels"] == 3745  # Hoeffding, eps_1 = 0.02, delta = 0.1
    lo, hi = out["ci"]
    assert lo <= out["failure_rate"] <= hi
    assert lo > 0.1 and 0.15 < out["failure_rate"] < 0.3  # about 0.22, well above delta
    assert out["within_delta"] is False


@pytest.mark.parametrize("meter", ["regular", "incremental"])
@pytest.mark.parametrize("bound", ["hoeffding", "binomial"])
def test_planned_counts_stay_within_delta(capsys, meter, bound):
    out = simulate(capsys, "--meter", meter, "--bound", bound, "--replicates", "512")
    assert out["ci"][0] <= 0.1 and out["within_delta"] is True
    assert out["failure_rate"] <= 0.1


def test_planned_exact_count_is_the_plans(capsys):
    out = simulate(capsys, "--meter", "regular", "--bound", "binomial", "--replicates", "64")
    assert main(["plan", "--epsilon", "0.02,0.04,0.06", "--delta", "0.1", "--steps", "10", "--bound", "binomial",
                 "--format", "json"]) == 0
    assert out["labels"] == json.loads(capsys.readouterr().out)["labels"]["regular"]


def test_seeded_and_a_number_of_labels(capsys):
    a = simulate(capsys, "--labels", "2000", "--replicates", "256", "--seed", "7")
    b = simulate(capsys, "--labels", "2000", "--replicates", "256", "--seed", "7")
    assert a == b and a["labels"] == 2000 and a["labels_from"] == "given"


def test_honest_developer_and_table(capsys):
    assert main([*SETTING, "--developer", "honest", "--labels", "single_model", "--replicates", "128"]) == 0
    text = capsys.readouterr().out
    assert "failure rate" in text and "honest developer" in text


@pytest.mark.parametrize("args, fragment", [
    (["--replicates", "0"], "--replicates must be a whole number in [1, 100000]; got '0'"),
    (["--labels", "foo"], "--labels must be a whole number in [1, 1e8] or one of"),
    (["--steps", "20000"], "--steps must be a whole number in [1, 10000]"),
    (["--confidence", "2"], "--confidence must be in (0, 1)"),
    (["--ranges", "0,0.5"], "--ranges must be boundaries starting at 0 and ending at 1"),
    (["--max-error-rate", "0.1"], "--max-error-rate must be given only with --bound binomial"),
    (["--bound", "binomial", "--max-error-rate", "0.7"], "--max-error-rate must be below 0.5"),
    (["--labels", "100000000", "--replicates", "100000"], "--replicates must be at most"),
    (["--meter", "single"], "--meter: invalid choice"),
])
def test_bad_input_exit_2_and_one_line(args, fragment):
    proc = subprocess.run([sys.executable, "-m", "meter_dashboard", *SETTING, *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_simulate_never_imports_panel():
    code = ("import sys; from meter_dashboard.cli import main; "
            f"main({SETTING + ['--replicates', '64', '--format', 'json']!r}); "
            "sys.stderr.write(repr([m for m in ('panel', 'holoviews', 'bokeh') if m in sys.modules]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr.strip().endswith("[]"), proc.stderr
