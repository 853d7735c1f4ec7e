"""``meter-dashboard replay``: JSON keys, tables, exit status 2 with one stderr line, no Panel import."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from meter_dashboard.cli import main

FIG3 = ["--ranges", "0,0.005,0.01,0.02,0.05,1", "--epsilon", "0.01,0.02,0.03,0.04,0.05", "--delta", "0.1"]


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "meter_dashboard", "replay", *args],
                          capture_output=True, text=True, timeout=120)


def test_json_output_for_the_issue_example(tmp_path):
    from meter_dashboard.models.trace import example_path

    path = tmp_path / "emocontext.csv"
    path.write_bytes(example_path("emocontext").read_bytes())
    proc = run_cli(str(path), *FIG3, "--steps", "8", "--test-size", "5509", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # Issue 13 (on purpose): per-step data are columnar, one array per field, so 1,000,000 steps stay bounded
    assert out["layout"] == "columns"
    steps = out["steps"]
    assert {"step", "empirical_overfitting", "signal", "incremental_signal", "epsilon"} <= set(steps)
    assert all(len(column) == 8 for column in steps.values() if isinstance(column, list))
    # hand-computed in tests/models/test_session_replay.py::test_emocontext_hand_computed
    assert steps["signal"] == [2, 1, 2, 2, 3, 1, 2, 3]
    assert steps["incremental_signal"] == [2, 2, 2, 2, 3, 3, 3, 3]
    assert steps["epsilon"][-1] == 0.03
    assert out["labels_needed"]["incremental"] == 25376  # Section 6.3: "only 25K labels" at reliability 0.9
    kinds = [a["kind"] for a in out["alarms"]]
    # issue 11 #7 (on purpose): using the last of T = 8 steps is a note, not an alarm
    assert kinds == ["test_set_too_small"]
    assert [n["kind"] for n in out["notes"]] == ["budget_used_up"]
    assert out["alarms"][0]["details"]["supported_epsilon_1"] == pytest.approx(0.021462, abs=1e-6)


def test_table_output_and_example_flag(capsys):
    assert main(["replay", "--example", "synthetic_overfitting", *FIG3, "--steps", "12"]) == 0
    out = capsys.readouterr().out
    assert "SYNTHETIC" in out and "tenant" in out and "reverted" in out and "beyond budget" in out
    assert "ALARM: Step 12 used the last of the T = 12 steps" in out


def test_fail_on_alarm_exit_status(capsys):
    assert main(["replay", "--example", "emocontext", *FIG3, "--fail-on-alarm"]) == 1
    assert main(["replay", "--example", "emocontext", *FIG3, "--steps", "9", "--test-size", "30000",
                 "--fail-on-alarm"]) == 0
    capsys.readouterr()


def test_variant_regular(capsys):
    main(["replay", "--example", "emocontext", *FIG3, "--meter", "regular", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert out["meter"] == "regular"
    assert out["steps"]["epsilon"] == [0.02, 0.01, 0.02, 0.02, 0.03, 0.01, 0.02, 0.03]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--example", "emocontext", "--epsilon", "0.05,0.01", "--ranges", "0,0.1,1"], "epsilon must be non-decreasing"),
        (["--example", "emocontext", "--ranges", "0,0.5,1"], "ranges must be m + 1 = 6 boundaries"),
        (["--example", "emocontext", "--delta", "2"], "--delta must be in (0, 1); got '2'"),
        (["--example", "emocontext", "--delta", "nan"], "--delta must be a number; got 'nan'"),
        (["--example", "emocontext", "--steps", "0"], "--steps must be a whole number >= 1; got '0'"),
        (["--example", "emocontext", "--test-size", "abc"], "--test-size must be a whole number; got 'abc'"),
        (["--example", "nope"], "example must be one of emocontext, synthetic_overfitting; got 'nope'"),
        ([], "TRACE must be a trace file, or --example NAME (one of the two); got 'nothing'"),
        (["missing.csv"], "missing.csv: trace must be an existing file"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, message, capsys):
    with pytest.raises(SystemExit) as info:
        main(["replay", *args])
    assert info.value.code == 2
    stderr = capsys.readouterr().err
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr
    assert lines[0].startswith("meter-dashboard replay: error: ")
    assert message in lines[0]


def test_malformed_file_names_file_row_and_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("step,val_accuracy,test_accuracy\n1,0.9,0.88\n2,0.91,1.7\n")
    proc = run_cli(str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"meter-dashboard replay: error: {bad}, row 3, column 3 (test_accuracy): "
                                   "test_accuracy must be a number in [0, 1]; got '1.7'")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"step,val_accuracy,test_accuracy\n1,0.9,\x88\n")
    proc = run_cli(str(binary))
    assert proc.returncode == 2 and "line 2, byte 7: trace must be UTF-8 text" in proc.stderr


def test_the_cli_does_not_import_panel():
    code = ("import sys\nfrom meter_dashboard.cli import main\n"
            "main(['replay', '--example', 'emocontext', '--format', 'json'])\n"
            "heavy = [m for m in ('panel', 'holoviews', 'bokeh') if m in sys.modules]\n"
            "sys.stderr.write('HEAVY=' + ','.join(heavy))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().endswith("HEAVY=")
