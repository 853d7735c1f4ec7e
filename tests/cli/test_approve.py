"""``meter-dashboard approve``: JSON contract ("approved", "levels"), table, one-line errors, no Panel."""
from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import pytest

import meter_dashboard.approvals.model as ap
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


# --------------------------------------------------------------------------- one set of defaults (issue 11 #6)
@pytest.mark.parametrize("method", ["naive", "bonferroni", "weighted-bonferroni", "bonf-srgp", "fs-srgp",
                                    "pres-srgp"])
def test_cli_defaults_agree_with_the_page_model(method, capsys):
    # The page, notebooks and the CLI read one set of defaults (ApprovalSettings, the paper's Section 3:
    # alpha 0.1, edge weight 0.8, margin 0 growing by 0.01 per approval).  Before, the CLI used margin step 0
    # and approved 13 of 15 refits with bonf-srgp while the page approved 3.
    args = ["approve", REFITS, "--method", method, "--format", "json"]
    if method == "pres-srgp":
        args += ["--prespecified", REFITS_PLAN]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    model = ap.ApproveModel(example="refits", method=method)
    assert out["approved"] == model.result.approved.tolist()
    assert out["levels"] == model.result.levels.tolist()  # the very same numbers, not just close
    assert out["margins"] == model.result.margins.tolist()
    assert out["settings"]["margin_step"] == ap.ApprovalSettings.param.margin_step.default == 0.01


def test_cli_bonf_srgp_on_the_refits_example_approves_3_of_15(capsys):
    assert main(["approve", REFITS, "--method", "bonf-srgp", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sum(out["approved"]) == 3 == ap.ApproveModel(method="bonf-srgp").result.approvals
    # with the old default (no margin step) a chain of equally good refits is approved again and again
    assert main(["approve", REFITS, "--method", "bonf-srgp", "--margin-step", "0", "--format", "json"]) == 0
    assert sum(json.loads(capsys.readouterr().out)["approved"]) == 13


def test_help_names_the_model_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["approve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default 0.01)" in text and "(default 0.8)" in text and "(default 0.1)" in text


# --------------------------------------------------------------------------- bounded input (issue 15)
@pytest.mark.parametrize("value,message", [
    ("1e8", "--steps must be a whole number in [1, 10000]; got '1e8'"),  # used to hang
    ("1e10", "--steps must be a whole number in [1, 10000]; got '1e10'"),  # used to allocate 74.5 GiB
    ("2^63", "--steps must be a whole number; got '2^63'"),  # used to raise IndexError
    ("9223372036854775808", "--steps must be a whole number in [1, 10000]; got '9223372036854775808'"),
    ("1e400", "--steps must be a whole number below 1e30; got '1e400'"),
])
def test_huge_steps_are_refused_at_once(small, capsys, value, message):
    with pytest.raises(SystemExit) as info:
        main(["approve", small, "--steps", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("args,message", [
    (["--max-conditioning", "1e9"], "--max-conditioning must be a whole number in [0, 40]; got '1e9'"),
    (["--failure-threshold", "1e12"], "--failure-threshold must be a whole number in [0, 10000]; got '1e12'"),
    (["--pres-first-share", "2"], "--pres-first-share must be in [0, 1]; got 2"),
])
def test_other_bounded_flags(small, capsys, args, message):
    with pytest.raises(SystemExit) as info:
        main(["approve", small, *args])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_cli_bound_on_steps_is_the_procedures_bound():
    from meter_dashboard.approvals import cli as cli_approve
    from meter_dashboard.bounds.srgp import MAX_STEPS

    assert cli_approve.MAX_STEPS == MAX_STEPS


def test_the_largest_accepted_steps_runs_quickly(small, capsys):
    # T = 10,000 planned tests on a 3-modification trace: O(1) edge weights, exact group sizes, no big arrays
    for method in ("bonferroni", "weighted-bonferroni", "bonf-srgp", "fs-srgp"):
        assert main(["approve", small, "--method", method, "--steps", "10000", "--format", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["steps"] == 10000 and len(out["approved"]) == 3


def test_crlf_cr_and_huge_fields_in_trace_files(tmp_path, capsys):
    for name, content in (("cr.csv", "orig,m1\r1,0.5\r1,0.4\r1.1,0.6\r"),
                          ("crlf.csv", "orig,m1\r\n1,0.5\r\n1,0.4\r\n1.1,0.6\r\n")):
        path = tmp_path / name
        path.write_bytes(content.encode())
        assert main(["approve", str(path), "--method", "naive", "--format", "json"]) == 0
        assert len(json.loads(capsys.readouterr().out)["approved"]) == 1
    big = tmp_path / "big.csv"
    big.write_text("orig,m1\n1," + "1" * 200_000 + "\n1,2\n")
    with pytest.raises(SystemExit) as info:
        main(["approve", str(big)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 2" in err and "trace must be a CSV file of numbers" in err, err
