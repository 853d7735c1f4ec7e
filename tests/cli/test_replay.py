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
    from meter_dashboard.session.trace import example_path

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


# ---------------------------------------------------------------- issues 11 (#6, #7, #14), 13 and 15
def _healthy_csv(tmp_path, n=12):
    path = tmp_path / "healthy.csv"
    path.write_text("step,val_accuracy,test_accuracy\n" + "".join(f"{i},0.90,0.899\n" for i in range(1, n + 1)))
    return path


def test_fail_on_alarm_passes_a_healthy_trace_with_default_settings(tmp_path, capsys):
    # issue 11 #7: T defaults to the trace's length; using the last planned step is a note, not an alarm
    path = _healthy_csv(tmp_path)
    assert main(["replay", str(path), "--fail-on-alarm"]) == 0
    out = capsys.readouterr().out
    # issue 30: and it says so, instead of "the last of the T = 12 steps this test set supports"
    assert "T = 12 (the trace's length: no --steps was given)" in out and "note: No T was given: T = 12" in out
    assert "ALARM" not in out and "used the last of the T" not in out
    assert main(["replay", str(path), "--steps", "12", "--fail-on-alarm"]) == 0
    assert "note: Step 12 used the last of the T = 12 steps" in capsys.readouterr().out
    assert main(["replay", str(path), "--steps", "11", "--fail-on-alarm"]) == 1  # exceeding it is an alarm


def test_replay_answers_the_steps_left_and_uses_the_plans_bound(tmp_path, capsys):
    # issue 30: a 12-step trace and n = 10,000 answer how many more steps the test set takes, under the plan's bound
    path = _healthy_csv(tmp_path)
    assert main(["replay", str(path), "--test-size", "10000"]) == 0
    out = capsys.readouterr().out
    assert ("Steps left: 10,000 labels support 0 steps at the planned ε = 0.01, 0.02, 0.03, 0.04, 0.05 (δ = 0.01, "
            "incremental meter, Hoeffding's bound): 12 used, none left") in out
    assert "Labels needed (Hoeffding's bound): incremental 38,917" in out
    assert main(["replay", str(path), "--test-size", "50000", "--bound", "binomial"]) == 0
    out = capsys.readouterr().out
    assert "Labels needed (exact binomial bound): incremental 28,001" in out
    assert "exact binomial bound): 12 used" in out
    assert main(["replay", str(path), "--test-size", "50000", "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps_left"]["supported_steps"] == 110 and summary["steps_left"]["steps_left"] == 98
    with pytest.raises(SystemExit):
        main(["replay", str(path), "--max-error-rate", "0.2"])
    assert "--max-error-rate must be left empty unless the bound is 'binomial'" in capsys.readouterr().err


def test_defaults_are_the_models(capsys):
    # issue 11 #6: one set of defaults (MeterPlan's parameters), read by the page, the notebook and the CLI
    from meter_dashboard.session.model import SessionModel

    main(["replay", "--example", "emocontext", "--format", "json"])
    settings = json.loads(capsys.readouterr().out)["settings"]
    page = SessionModel(example="emocontext")
    assert settings["delta"] == page.plan.delta == 0.01
    assert settings["epsilon"] == page.plan.epsilon and settings["ranges"] == page.plan.ranges
    assert settings["steps"] == page.plan.steps == 8


@pytest.mark.parametrize(
    "args, message",
    [
        (["--steps", "3.7e37"], "--steps must be a whole number below 1e30; got '3.7e37'"),  # was ZeroDivisionError
        (["--steps", "1e13"], "--steps must be a whole number of at most 1,000,000,000,000 (10^12); got '1e13'"),
        (["--epsilon", "0.05,0.01"], "--epsilon must be non-decreasing"),
        (["--tenant-steps", "3,3"], "--tenant-steps must be steps per tenant summing to steps = 8"),
        (["--reverts", "0"], "--reverts must be a whole number >= 1"),
        (["--example", "nope"], "--example must be one of emocontext, synthetic_overfitting; got 'nope'"),
    ],
)
def test_messages_name_the_flag(args, message, capsys):
    with pytest.raises(SystemExit) as info:
        main(["replay", *(args if "--example" in args else ["--example", "emocontext", *args])])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_hostile_trace_files_exit_2_naming_row_and_column(tmp_path):
    wrapped = tmp_path / "wrapped.csv"
    wrapped.write_text("step,val_accuracy,test_accuracy\n1e30,0.5,0.4\n2e30,0.5,0.4\n")
    proc = run_cli(str(wrapped))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{wrapped}, row 2, column 1 (step): step must be a whole number <= 9223372036854775807" in proc.stderr
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 50_000 + "]" * 50_000)
    proc = run_cli(str(deep))
    assert proc.returncode == 2 and "JSON nested at most 64 levels deep" in proc.stderr


def test_columnar_json_reads_into_a_frame(tmp_path, capsys):
    import pandas as pd

    main(["replay", "--example", "synthetic_overfitting", "--tenant-steps", "12,8", "--steps", "20",
          "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    frame = pd.DataFrame(out["steps"])
    assert len(frame) == 20 and frame["tenant"].tolist()[:2] == ["alice", "alice"]
    assert frame["tenant_budget"].tolist() == [12] * 12 + [8] * 8
    assert frame["reverted"].sum() == 2 and out["trace"]["reverted_steps"] == [9, 18]


def test_long_traces_print_a_bounded_table(tmp_path, capsys):
    path = _healthy_csv(tmp_path, n=5000)
    assert main(["replay", str(path), "--steps", "2500"]) == 0
    out = capsys.readouterr().out
    # the first and last 20 steps and the two alarm steps (2,500: T used up; 2,501: beyond T)
    assert "(4,958 of 5,000 steps not shown: --format json or --report FILE.html has every step)" in out
    assert len(out.splitlines()) < 80 and "beyond budget" in out


def test_report_is_written_without_panel(tmp_path):
    report = tmp_path / "session.html"
    code = ("import sys\nfrom meter_dashboard.cli import main\n"
            f"rc = main(['replay', '--example', 'emocontext', '--delta', '0.1', '--report', {str(report)!r}])\n"
            "sys.stderr.write('PANEL=' + str('panel' in sys.modules) + ' RC=' + str(rc))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stderr.strip().endswith("PANEL=False RC=0"), proc.stderr
    html = report.read_text(encoding="utf-8")
    assert "25,376" in html and "0.02146" in html and "EmoContext" in html  # Section 6.3: "only 25K labels"
    assert "cdn.bokeh.org" not in html and "<script src=" not in html and "Bokeh.embed.embed_items" in html
    with pytest.raises(SystemExit):
        main(["replay", "--example", "emocontext", "--report", str(tmp_path / "missing" / "dir" / "r.html")])
