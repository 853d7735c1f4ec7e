"""``meter-dashboard testset`` end to end on both backends: create -> token -> submit x T -> refusal
-> export -> replay, exit codes, JSON keys, one-line errors, and no score in any output."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from meter_dashboard.cli import main
from meter_dashboard.session.model import replay
from meter_dashboard.session.trace import read_trace

EPS = "0.01,0.02,0.03,0.04,0.05"


def cli(capsys, *args):
    """(exit code, stdout, stderr) of one in-process run."""
    try:
        code = main(["testset", *args])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_whole_path_from_the_cli(capsys, tmp_path, store_url, data):
    labels = tmp_path / "labels.csv"
    labels.write_bytes(data.labels_csv())
    code, out, err = cli(capsys, "create", "emo", "--labels", str(labels), "--epsilon", EPS, "--delta", "0.1",
                         "--steps", "4", "--store", store_url, "--format", "json")
    assert code == 0, err
    created = json.loads(out)
    assert {"name", "labels", "needed", "admin_token"} <= set(created) and created["labels"] == data.n
    code, out, _ = cli(capsys, "token", "emo", "--tenant", "alice", "--store", store_url, "--format", "json")
    assert code == 0 and json.loads(out)["token"].startswith("mdt_")

    wrongs, vals, answers, outputs = [2400, 2000, 1300, 2600], [0.93, 0.94, 0.96, 0.925], [], []
    for k, (wrong, val) in enumerate(zip(wrongs, vals)):
        preds = tmp_path / f"p{k}.csv"
        preds.write_bytes(data.csv(data.predictions(wrong)))
        code, out, err = cli(capsys, "submit", "emo", "--predictions", str(preds), "--val-accuracy", str(val),
                             "--tenant", "alice", "--store", store_url, "--format", "json")
        assert code == 0, err
        answer = json.loads(out)
        assert {"step", "signal", "incremental_signal", "range", "epsilon", "steps_left", "alarms"} <= set(answer)
        answers.append(answer)
        code, text, _ = cli(capsys, "status", "emo", "--store", store_url)  # the table view too
        outputs += [out] + ([text] if not answer["retired"] else [])
    for text in outputs:  # no test score in any output while the test set was active
        for wrong in wrongs:
            assert repr(1 - wrong / data.n) not in text and f"{1 - wrong / data.n:.4f}" not in text
    code, out, err = cli(capsys, "submit", "emo", "--predictions", str(tmp_path / "p0.csv"), "--val-accuracy", "0.9",
                         "--store", store_url)
    assert code == 1 and out == "" and err.count("\n") == 1 and "refused: test set 'emo' is retired" in err
    code, out, err = cli(capsys, "retire", "emo", "--store", store_url)  # releasing is the admin's act
    assert code == 0, err

    trace_path = tmp_path / "trace.csv"
    code, out, err = cli(capsys, "export", "emo", "--out", str(trace_path), "--labels-out",
                         str(tmp_path / "released.csv"), "--store", store_url)
    assert code == 0, err
    assert (tmp_path / "released.csv").read_bytes() == data.labels_csv()
    expected = replay(read_trace(str(trace_path)), epsilon=[float(e) for e in EPS.split(",")], delta=0.1, steps=4,
                      test_size=data.n)
    assert [a["signal"] for a in answers] == expected.incremental_signal.tolist()
    # the session replay CLI reads the exported file and agrees
    code = subprocess.run([sys.executable, "-m", "meter_dashboard", "replay", str(trace_path), "--epsilon", EPS,
                           "--delta", "0.1", "--steps", "4", "--test-size", str(data.n), "--format", "json"],
                          capture_output=True, text=True, check=True)
    replayed = json.loads(code.stdout)
    assert replayed["steps"]["incremental_signal"] == [a["signal"] for a in answers]  # columnar JSON (issue 13)
    code, out, _ = cli(capsys, "list", "--store", store_url, "--format", "json")
    assert [(t["name"], t["status"]) for t in json.loads(out)["testsets"]] == [("emo", "retired")]


def test_ci_mode_exit_codes_gate_a_pipeline(capsys, tmp_path, sqlite_store, data):
    url = str(sqlite_store.url)
    labels, base = tmp_path / "labels.csv", tmp_path / "base.csv"
    labels.write_bytes(data.labels_csv())
    base.write_bytes(data.csv(data.predictions(3000)))
    code, out, err = cli(capsys, "create", "gate", "--labels", str(labels), "--condition", "n - o > 0.02 +/- 0.02",
                         "--reliability", "0.99", "--adaptivity", "full", "--steps", "3", "--baseline", str(base),
                         "--allow-smaller", "--store", url)
    assert code == 0, err
    assert "ALARM: fewer labels than the plan needs; they support tolerances ×" in out
    worse, better = tmp_path / "worse.csv", tmp_path / "better.csv"
    worse.write_bytes(data.csv(data.predictions(3100)))
    better.write_bytes(data.csv(data.predictions(900)))
    code, out, _ = cli(capsys, "submit", "gate", "--predictions", str(worse), "--store", url, "--format", "json")
    assert code == 1 and json.loads(out)["passed"] is False
    code, out, _ = cli(capsys, "submit", "gate", "--predictions", str(better), "--store", url)
    assert code == 0 and out.startswith("commit 2: PASS; 1 commit(s) left")


@pytest.mark.parametrize("args, message", [
    (["create", "x", "--labels", "L", "--steps", "0"], "--steps must be a whole number >= 1; got '0'"),
    (["create", "x", "--labels", "missing.csv", "--steps", "3"], "missing.csv: --labels must be an existing file"),
    (["create", "x", "--labels", "L", "--steps", "3", "--delta", "2"], "delta must be in (0, 1); got 2"),
    (["create", "x", "--labels", "L", "--steps", "3", "--epsilon", "0.05,0.01"], "epsilon must be non-decreasing"),
    (["create", "x", "--labels", "L", "--steps", "3", "--condition", "n > 0.8 +/- 0.05", "--epsilon", "0.1"],
     "--epsilon must be left out in ease.ml/ci mode (--condition); got a value"),
    (["create", "x", "--labels", "L", "--steps", "3", "--condition", "n > > 1", "--reliability", "0.9",
      "--adaptivity", "full"], "condition"),
    (["create", "x y", "--labels", "L", "--steps", "3", "--allow-smaller"], "NAME must be 1-64 letters"),
    (["submit", "nope", "--predictions", "P", "--val-accuracy", "0.9"],
     "NAME must be the name of a guarded test set in the store; got 'nope'"),
    (["submit", "x", "--predictions", "P", "--val-accuracy", "abc"], "--val-accuracy must be a number; got 'abc'"),
    (["submit", "x", "--predictions", "P", "--server", "ftp://h", "--token", "t"], "--server must be an http://"),
    (["submit", "x", "--predictions", "P", "--server", "http://127.0.0.1:9"], "--token must be given with --server"),
    (["status", "x", "--token", "t"], "--token must be used with --server"),
    ([], "SUBCOMMAND must be one of create, token, submit, status, revert, retire, export, list"),
])
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, sqlite_store, data, args, message):
    (tmp_path / "L").write_bytes(data.labels_csv())
    (tmp_path / "P").write_bytes(data.csv(data.labels))
    args = [str(tmp_path / a) if a in ("L", "P") else a for a in args]
    with_store = args and "--server" not in args
    code, out, err = cli(capsys, *args, *(["--store", str(sqlite_store.url)] if with_store else []))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and lines[0].startswith("meter-dashboard testset: error: ")
    assert message in lines[0]


def test_the_testset_verb_does_not_import_panel(tmp_path):
    code = ("import sys\nfrom meter_dashboard.cli import main\n"
            f"main(['testset', 'list', '--store', 'sqlite:///{tmp_path}/s.sqlite', '--format', 'json'])\n"
            "heavy = [m for m in ('panel', 'holoviews', 'bokeh') if m in sys.modules]\n"
            "sys.stderr.write('HEAVY=' + ','.join(heavy))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().endswith("HEAVY=")
