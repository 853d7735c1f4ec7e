"""``meter-dashboard compare`` and ``compare-size``: JSON contract, tables, one-line errors, no Panel."""
from __future__ import annotations

import json

import pytest

import meter_dashboard.comparison.model as mc
from meter_dashboard.cli import main
from tests.cli.verbs import imported_ui, process_refuses, refused, run, run_help_examples

PAIRED = str(mc.example_path("compare_paired.csv"))
UNPAIRED = str(mc.example_path("compare_unpaired.csv"))


def test_compare_json_keys_and_values(capsys):
    assert main(["compare", PAIRED, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("p_a_gt_b", "ci", "significant", "meaningful", "conclusion", "runs", "runs_needed"):
        assert key in out
    runs = mc.read_runs(PAIRED)
    expected = mc.compare(runs.a, runs.b)
    assert out["p_a_gt_b"] == expected.p_a_gt_b == pytest.approx(float((runs.a > runs.b).mean()))
    assert out["ci"] == list(expected.ci)
    assert out["significant"] is True and out["meaningful"] is True
    assert out["conclusion"] == "significant_and_meaningful"
    assert (out["gamma"], out["alpha"], out["resamples"], out["seed"]) == (0.75, 0.05, 10000, 0)


def test_compare_constructed_file(tmp_path, capsys):
    # 10 runs, A wins 9: P = 0.9; with gamma = 0.95 the interval's upper bound 1.0 is above it.
    f = tmp_path / "r.csv"
    f.write_text("a,b\n" + "\n".join(f"{i + 1},{i}" for i in range(9)) + "\n0,5\n", encoding="utf-8")
    assert main(["compare", str(f), "--format", "json", "--resamples", "2000", "--seed", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["p_a_gt_b"] == 0.9 and out["runs"] == 10 and out["ci"][1] == 1.0
    assert out["resamples"] == 2000 and out["seed"] == 3


def test_gamma_changes_the_decision(capsys):
    assert main(["compare", PAIRED, "--format", "json"]) == 0
    hi = json.loads(capsys.readouterr().out)["ci"][1]
    assert main(["compare", PAIRED, "--format", "json", "--gamma", str(min(0.99, hi + 0.001))]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["significant"] is True and out["meaningful"] is False
    assert out["conclusion"] == "significant_not_meaningful"


def test_unpaired_needs_the_flag_and_pairs_at_random(capsys):
    proc = run("compare", UNPAIRED)  # the real process: exit status 2, one line, no traceback
    assert proc.returncode == 2 and "--unpaired" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr
    assert main(["compare", UNPAIRED, "--unpaired", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["paired"] is False and out["runs"] == 20 and (out["runs_a"], out["runs_b"]) == (20, 25)


def test_compare_table_output(capsys):
    assert main(["compare", PAIRED]) == 0
    text = capsys.readouterr().out
    assert "P(A>B)" in text and "95% CI" in text and "Significant and meaningful" in text


def test_compare_size(capsys):
    assert main(["compare-size", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == 29       # Appendix C.3
    assert main(["compare-size", "--gamma", "0.55", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] > 700       # Appendix C.3, Figure C.1
    assert main(["compare-size", "--alpha", "0.05", "--beta", "0.05", "--gamma", "0.75"]) == 0
    assert "29" in capsys.readouterr().out


@pytest.mark.parametrize("args,needle", [
    (["compare", "/no/such.csv"], "runs must be an existing file; got '/no/such.csv'"),
    (["compare", PAIRED, "--gamma", "0.4"], "--gamma must be a number in (0.5, 1)"),
    (["compare", PAIRED, "--alpha", "x"], "--alpha must be a number"),
    (["compare", PAIRED, "--alpha", "0.7"], "--alpha must be in (0, 0.5)"),
    (["compare", PAIRED, "--resamples", "0"], "--resamples must be"),
    (["compare", PAIRED, "--seed", "-1"], "--seed must be"),
    (["compare-size", "--beta", "0.9"], "--beta must be in (0, 0.5)"),
    (["compare-size", "--gamma", "1"], "--gamma must be"),
])
def test_bad_input_exits_2_with_one_line(args, needle, capsys):
    assert needle in refused(args, capsys)


def test_bad_runs_file_names_line_and_column(tmp_path):
    message = process_refuses(tmp_path, "compare", "a,b\n0.9,0.8\n0.91,n/a\n")
    assert message == ("meter-dashboard compare: error: line 3, column 2: b must be a finite number "
                       "(a performance, higher is better); got 'n/a'")


def test_compare_verbs_do_not_import_panel():
    assert imported_ui(["compare", PAIRED, "--format", "json"], ["compare-size"]) == "[]"


# --------------------------------------------------------------------------- issue 11 #13: --help shows a runnable example
@pytest.mark.parametrize("verb", ["compare", "compare-size"])
def test_help_has_examples_that_run(verb, capsys):
    run_help_examples(verb, capsys)


def test_compare_size_example_is_figure_c1s_red_star(capsys):
    assert main(["compare-size", "--alpha", "0.05", "--beta", "0.05", "--gamma", "0.75", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == 29


# --------------------------------------------------------------------------- issue 15: exact or refused, flags as typed
@pytest.mark.parametrize("args,needle", [
    (["compare", PAIRED, "--resamples", "1e10"], "--resamples must be a whole number in [1, 1000000000]; got '1e10'"),
    (["compare", PAIRED, "--gamma", "0.5"], "--gamma must be a number in (0.5, 1); got '0.5'"),
    (["compare", PAIRED, "--gamma", "0.5000000000001"],
     "--gamma must be far enough from 0.5 that the runs needed stay below 1e+15"),
    (["compare-size", "--gamma", "0.50000000001"], "--gamma must be far enough from 0.5"),
    (["compare", PAIRED, "--alpha", "0.5"], "--alpha must be in (0, 0.5); got '0.5'"),
    (["compare", PAIRED, "--seed", "-1"], "--seed must be a whole number >= 0"),
    (["compare", PAIRED, "--beta", "1e-400"], "--beta must be in (0, 1); got '1e-400'"),
    (["compare", "--example", "nope.csv"], "--example must be one of compare_paired.csv"),
    (["compare"], "RUNS.csv must be given, or --example NAME"),
])
def test_extreme_flags_are_refused_naming_the_flag_typed(args, needle, capsys):
    assert needle in refused(args, capsys)


def test_a_billion_resamples_are_answered_at_once(capsys):
    assert main(["compare", PAIRED, "--resamples", "1e9", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["resamples"] == 10**9 and out["conclusion"] == "significant_and_meaningful"


@pytest.mark.parametrize("content,location", [
    (b"a,b\r0.9,0.8\r0.91,x\r", "line 3, column 2"),                     # CR-only line endings
    (b"a,b\n0.9,0.8\n0.91," + b"9" * 200_000 + b"\n", "line 3, column 2"),
    (b"a,b\n0.9,0.8\nnan,0.8\n", "line 3, column 1"),
    (b"a,b\n0.9,0.8\n0.91,inf\n", "line 3, column 2"),
])
def test_malformed_run_files_name_line_and_column(tmp_path, capsys, content, location):
    f = tmp_path / "bad.csv"
    f.write_bytes(content)
    assert refused(["compare", str(f)], capsys).startswith(f"meter-dashboard compare: error: {location}: ")
