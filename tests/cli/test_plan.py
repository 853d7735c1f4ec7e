"""``meter-dashboard plan``: JSON contract, curves, table output and one-line errors."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from meter_dashboard.cli import main

NONUNIFORM = "0.01,0.02,0.03,0.04,0.05"


def run(*args):
    return subprocess.run([sys.executable, "-m", "meter_dashboard", *args], capture_output=True, text=True,
                          timeout=120)


def test_json_labels_for_the_papers_nonuniform_settings(capsys):
    assert main(["plan", "--epsilon", NONUNIFORM, "--delta", "0.01", "--steps", "10", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # Sec 5.1 (Cor 1, Cor 2), Eq. 1, Eq. 2, Thm 4
    assert out["labels"] == {"single_model": 26_492, "no_adaptivity": 38_005, "resampling": 380_050,
                             "regular": 100_033, "incremental": 38_005}
    assert out["recommended"] == "incremental"
    assert "38,005 labels support 10 development steps" in out["sentence"]


@pytest.mark.parametrize("extra,variant,expected", [
    (["--epsilon", "0.01", "--signals", "5"], "regular", 108_080),        # Eq. 3
    (["--epsilon", "0.01", "--signals", "5"], "incremental", 66_527),     # Eq. 4
    (["--epsilon", NONUNIFORM, "--reverts", "1,2,3"], "regular", 75_892),  # Eqs. 13-14
    (["--epsilon", NONUNIFORM, "--tenant-steps", "5,5"], "regular", 63_261),  # Eq. 9 / 29
    (["--epsilon", NONUNIFORM, "--tenants", "2"], "regular", 63_261),
])
def test_json_variants(capsys, extra, variant, expected):
    assert main(["plan", "--delta", "0.01", "--steps", "10", "--format", "json", *extra]) == 0
    assert json.loads(capsys.readouterr().out)["labels"][variant] == expected


def test_revert_caveat_is_in_every_output_that_shows_it(capsys):
    main(["plan", "--epsilon", NONUNIFORM, "--delta", "0.01", "--steps", "10", "--reverts", "1,2,3"])
    table = capsys.readouterr().out
    assert "fixed in advance" in table
    main(["plan", "--epsilon", NONUNIFORM, "--delta", "0.01", "--steps", "10", "--reverts", "1,2,3",
          "--format", "json"])
    assert any("fixed in advance" in n for n in json.loads(capsys.readouterr().out)["notes"])
    main(["plan", "--epsilon", NONUNIFORM, "--delta", "0.01", "--steps", "5:10", "--reverts", "1,2,3",
          "--format", "json"])
    assert any("fixed in advance" in n for n in json.loads(capsys.readouterr().out)["notes"])


def test_steps_range_gives_lists_in_step_order(capsys):
    assert main(["plan", "--epsilon", NONUNIFORM, "--delta", "0.01", "--steps", "8:10", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"] == [8, 9, 10]
    assert out["labels"]["regular"][-1] == 100_033
    assert out["labels"]["incremental"][-1] == 38_005
    assert all(len(v) == 3 for v in out["labels"].values())
    assert out["labels"]["resampling"] == sorted(out["labels"]["resampling"])


def test_table_output_is_readable(capsys):
    main(["plan", "--epsilon", NONUNIFORM, "--delta", "0.01", "--steps", "10", "--budget", "50000",
          "--cost-per-hour", "30"])
    out = capsys.readouterr().out
    assert "100,033" in out and "38,005" in out and "largest T" in out and "cost" in out


@pytest.mark.parametrize("args,fragment", [
    (["--epsilon", "0.05,0.01", "--delta", "0.01", "--steps", "10"], "epsilon must be non-decreasing"),
    (["--epsilon", "0.01", "--delta", "1.5", "--steps", "10"], "delta must be in (0, 1); got 1.5"),
    (["--epsilon", "0.01", "--delta", "0", "--steps", "10"], "delta must be in (0, 1)"),
    (["--epsilon", "0.01", "--delta", "0.1", "--steps", "10", "--tenant-steps", "5,4"],
     "--tenant-steps must be steps per tenant summing to steps = 10; got [5, 4]"),
    (["--epsilon", "0.01", "--delta", "0.1", "--steps", "10", "--reverts", "1,1"], "reverts must be positions"),
    (["--epsilon", "0.01", "--delta", "0.1", "--steps", "3", "--reverts", "1,2,5"], "t_B <= T"),
    (["--epsilon", "abc", "--delta", "0.1", "--steps", "10"], "--epsilon must be a comma-separated list"),
    (["--epsilon", "0.01", "--delta", "x", "--steps", "10"], "--delta must be a number; got 'x'"),
    (["--epsilon", "0.01", "--delta", "0.1", "--steps", "ten"], "--steps must be a whole number"),
    (["--epsilon", "0.01", "--delta", "0.1", "--steps", "9:3"], "--steps must be a range A:B with A <= B"),
    (["--epsilon", "0.01,0.02", "--signals", "3", "--delta", "0.1", "--steps", "3"], "signals must be"),
    (["--delta", "0.1", "--steps", "3"], "required: --epsilon"),
])
def test_bad_input_exit_2_and_one_line(args, fragment):
    proc = run("plan", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert fragment in lines[0]
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_cli_does_not_import_panel():
    code = ("import sys; from meter_dashboard.cli import main; "
            "main(['plan','--epsilon','0.01','--signals','5','--delta','0.01','--steps','10','--format','json']); "
            "bad = [m for m in ('panel','holoviews','bokeh') if m in sys.modules]; "
            "sys.stderr.write(repr(bad))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stderr.strip() == "[]"


def test_console_script_and_help():
    proc = run("--help")
    assert proc.returncode == 0 and "plan" in proc.stdout
    proc = run("plan", "--help")
    assert "--tenant-steps" in proc.stdout and "example:" in proc.stdout


def test_the_tables_first_line_is_the_plans_caption_without_its_budget(capsys):
    """One caption for the notebook's table and the CLI (``PlanResult.caption``); the CLI shows the budget below."""
    from meter_dashboard import plan

    args = ["--epsilon", "0.01,0.02", "--delta", "0.01", "--steps", "10", "--tenant-steps", "5,5", "--reverts", "2",
            "--budget", "50000"]
    assert main(["plan", *args]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    r = plan(epsilon=[0.01, 0.02], delta=0.01, steps=10, tenant_steps=[5, 5], reverts=[2], budget=50_000)
    assert first == r.caption(budget=False) == ("epsilon = [0.01, 0.02]  delta = 0.01  steps = 10  tenant_steps = 5,5"
                                                "  reverts = 2")
    assert r.caption() == first + "  budget = 50,000 labels"
