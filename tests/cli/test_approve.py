"""``meter-dashboard approve``: JSON contract ("approved", "levels"), table, one-line errors, no Panel."""
from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import pytest

import meter_dashboard.models.approve as ap
from meter_dashboard.cli import main

DATA = resources.files("meter_dashboard") / "data"
REFITS = str(DATA / "approve_refits.csv")
REFITS_PLAN = str(DATA / "approve_refits_prespecified.csv")


def run(*args):
    """The real command in a subprocess (slow on a busy machine: used sparingly)."""
    return subprocess.run([sys.executable, "-m", "meter_dashboard", *args], capture_output=True, text=True,
                          timeout=180)


@pytest.fixture
def small(tmp_path):
    # 4 test examples; improvements (loss_0 - loss_j): m1 = [.5,.6,.4,.5] (clearly better), m2 = [-.1,.1,-.1,.1]
    path = tmp_path / "small.csv"
    path.write_text("orig,m1,m2,m3\n1.0,0.5,1.1,0.5\n1.0,0.4,0.9,0.4\n1.0,0.6,1.1,0.6\n1.0,0.5,0.9,0.5\n")
    return str(path)


def test_json_hand_computed_bonf_srgp(small, capsys):
    assert main(["approve", small, "--method", "bonf-srgp", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out)[:2] == ["approved", "levels"]
    # m1: mean 0.5, sd 0.0816 -> z = 12.2, approved at 0.08; then 0.8 x 0.8 = 0.64 -> 0.064 (m2 mean 0: denied);
    # then the last edge of the streak after m1: 0.8 x 0.2 = 0.16 -> 0.016 (m3 = m1: approved)
    assert out["approved"] == [True, False, True]
    assert out["levels"] == pytest.approx([0.08, 0.064, 0.016])
    assert out["names"] == ["m1", "m2", "m3"] and out["method"] == "bonf-srgp" and out["steps"] == 3


def test_json_margins_and_steps(small, capsys):
    assert main(["approve", small, "--method", "naive", "--margin", "0.45", "--margin-step", "0.1",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # m1: z = (0.5 - 0.45) / (0.0816/2) = 1.22 < 1.28 at alpha 0.1: denied, margin stays 0.45 -> m3 the same
    assert out["approved"] == [False, False, False]
    assert out["margins"] == [0.45, 0.45, 0.45]
    assert main(["approve", small, "--method", "bonferroni", "--steps", "5", "--alpha", "0.31",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["levels"] == pytest.approx([0.01] * 3)  # 0.31 / (2**5 - 1)


def test_json_matches_the_model_for_every_method(capsys):
    trace, plan = ap.load_example("refits")
    for method in ("naive", "weighted-bonferroni", "fs-srgp", "pres-srgp"):
        args = ["approve", REFITS, "--method", method, "--margin-step", "0.01", "--format", "json"]
        if method == "pres-srgp":
            args += ["--prespecified", REFITS_PLAN]
        assert main(args) == 0
        out = json.loads(capsys.readouterr().out)
        expected = ap.approve(trace, method, prespecified=plan, margin_step=0.01)
        assert out["approved"] == expected.approved.tolist()
        assert out["levels"] == pytest.approx(expected.levels.tolist())


def test_table_output(small, capsys):
    assert main(["approve", small, "--method", "fs-srgp"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("fsSRGP at alpha = 0.1 on small.csv (4 test examples, T = 3): 2 of 3 approved")
    assert "APPROVED" in text and "denied" in text and "level" in text


@pytest.mark.parametrize("args,message", [
    (["--alpha", "2"], "--alpha must be in (0, 1); got 2"),
    (["--alpha", "abc"], "--alpha must be a number; got 'abc'"),
    (["--method", "holm"], "--method must be one of naive, bonferroni, weighted-bonferroni, bonf-srgp, fs-srgp, "
                           "pres-srgp; got 'holm'"),
    (["--method", "pres-srgp"], "--prespecified must be a CSV of the prespecified procedure's modifications"),
    (["--success-weight", "1.5"], "--success-weight must be in [0, 1]; got 1.5"),
    (["--steps", "2"], "--steps must be at least the number of modifications in the trace (3); got 2"),
    (["--seed", "-1"], "--seed must be a whole number >= 0; got -1"),
    (["--margin", "nan"], "--margin must be a finite number; got 'nan'"),
])
def test_bad_options_exit_2_with_one_line(small, capsys, args, message):
    with pytest.raises(SystemExit) as info:
        main(["approve", small, *args])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("meter-dashboard approve: error: ")
    assert message in err


def test_bad_files_exit_2_with_one_line(tmp_path, small, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("orig,m1\n1,0.5\n1,oops\n")
    short = tmp_path / "short.csv"
    short.write_text("orig,p1\n1,0.5\n1,0.5\n")
    cases = [
        ([str(bad)], "line 3, column 2: loss (m1) must be a finite number; got 'oops'"),
        ([str(tmp_path / "missing.csv")], "trace must be an existing file; got '" + str(tmp_path / "missing.csv") + "'"),
        ([small, "--method", "pres-srgp", "--prespecified", str(short)], "prespecified must be 4 rows"),
    ]
    for args, message in cases:
        with pytest.raises(SystemExit) as info:
            main(["approve", *args])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err


def test_subprocess_json_and_no_panel_import(small):
    code = ("import sys, json; from meter_dashboard.cli import main; "
            f"main(['approve', {small!r}, '--method', 'fs-srgp', '--format', 'json']); "
            "bad = [m for m in ('panel', 'holoviews', 'bokeh') if m in sys.modules]; "
            "print(json.dumps(bad), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
    out = json.loads(proc.stdout)
    assert out["approved"] == [True, False, True] and len(out["levels"]) == 3


def test_subprocess_bad_input_is_one_line_on_stderr(small):
    proc = run("approve", small, "--alpha", "0")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "meter-dashboard approve: error: --alpha must be in (0, 1); got 0"
    assert proc.stdout == ""
