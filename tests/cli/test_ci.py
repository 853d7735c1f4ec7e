"""``meter-dashboard ci``: JSON contract, table output, trace replay, one-line errors, no Panel import."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from meter_dashboard.cli import main

PATTERN1 = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"


def run(*args):
    return subprocess.run([sys.executable, "-m", "meter_dashboard", *args], capture_output=True, text=True,
                          timeout=120)


def _json(capsys, *args):
    assert main(["ci", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_calculator_example_json(capsys):
    # the public ease.ml/ci calculator / Figure 2 (F2 full, 0.99, 0.1): 5,496
    out = _json(capsys, "--condition", "n - o > 0.1 +/- 0.1", "--reliability", "0.99", "--adaptivity", "full",
                "--steps", "32")
    assert out["labels"] == 5496 and isinstance(out["labels"], int)
    assert "optimized" not in out and "labels_per_commit" not in out  # no d clause, no bound
    assert out["by_adaptivity"]["none"]["labels"] == 1753  # Figure 2, F2/F3 none


@pytest.mark.parametrize("adaptivity,labels,optimized,per_commit", [
    ("none", 281_248, 29_048, 2_905),  # Section 4.1.1: about 29K
    ("full", 655_547, 67_706, 6_771),  # Section 4.1.1: about 67K
    ("firstChange", 281_248, 29_048, 2_905),
])
def test_pattern_1_json(capsys, adaptivity, labels, optimized, per_commit):
    out = _json(capsys, "--condition", PATTERN1, "--reliability", "0.9999", "--adaptivity", adaptivity,
                "--steps", "32")
    assert (out["labels"], out["optimized"], out["labels_per_commit"]) == (labels, optimized, per_commit)
    assert all(isinstance(out[k], int) for k in ("labels", "optimized", "labels_per_commit"))
    assert out["variance_bound"] == pytest.approx(0.1)


def test_single_commit_active_labeling_2189(capsys):
    # Section 4.1.2's 2,188 is the real value 2,188.85 for one commit; the integer count is 2,189
    out = _json(capsys, "--condition", PATTERN1, "--reliability", "0.9999", "--adaptivity", "none", "--steps", "1")
    assert out["labels_per_commit"] == 2189


def test_difference_bound_gives_optimized(capsys):
    # Figure 5 with p = 0.1 known in advance: 5,204
    out = _json(capsys, "--condition", "n - o > 0.018 +/- 0.022", "--reliability", "0.998", "--adaptivity", "full",
                "--steps", "7", "--difference-bound", "0.1", "--assume-difference-bound")
    assert out["optimized"] == 5204 and out["labels"] == 48_595
    assert out["difference_bound"] == 0.1 and out["labels_per_commit"] == 521
    checked = _json(capsys, "--condition", "n - o > 0.018 +/- 0.022", "--reliability", "0.998", "--adaptivity",
                    "full", "--steps", "7", "--difference-bound", "0.1")
    assert checked["optimized"] > 5204 and checked["unlabeled"] > 0


def test_json_has_the_documented_keys(capsys):
    out = _json(capsys, "--condition", PATTERN1)
    for key in ("condition", "reliability", "delta", "adaptivity", "mode", "steps", "labels", "optimized",
                "unlabeled", "labels_per_commit", "by_adaptivity", "clauses", "labeling", "sentence", "notes"):
        assert key in out
    assert out["delta"] == 1e-4 and out["adaptivity"] == "full" and out["mode"] == "fp-free" and out["steps"] == 32
    assert out["labeling"]["labeler_hours"] == pytest.approx(655_547 * 2 / 3600)
    assert [c["method"] for c in out["clauses"]] == ["bennett", "unlabeled"]


def test_labeling_hours_follow_the_options(capsys):
    out = _json(capsys, "--condition", "n > 0.8 +/- 0.05", "--seconds-per-label", "5", "--labelers", "4")
    assert out["labeling"]["labeler_hours"] == pytest.approx(6279 * 5 / 3600)
    assert out["labeling"]["calendar_hours"] == pytest.approx(6279 * 5 / 3600 / 4)


def test_table_output(capsys):
    assert main(["ci", "--condition", PATTERN1, "--reliability", "0.9999", "--adaptivity", "full"]) == 0
    text = capsys.readouterr().out
    assert "full *" in text and "655,547" in text and "67,706" in text and "6,771" in text
    assert "bennett" in text and "unlabeled" in text
    assert text.splitlines()[0] == "ease.ml/ci condition: " + PATTERN1


def test_trace_replay(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("commit,n,o,d\na,0.84,0.80,0.05\nb,0.85,0.84,0.05\nc,0.80,0.84,0.05\n")
    out = _json(capsys, "--condition", PATTERN1, "--steps", "2", "--trace", str(path))
    rep = out["replay"]
    assert [c["signal"] for c in rep["commits"]] == ["pass", "fail", "fail"]
    assert rep["alarms"] == {"none": [2], "full": [2], "firstChange": [1, 3]}
    assert main(["ci", "--condition", PATTERN1, "--steps", "2", "--trace", str(path)]) == 0
    text = capsys.readouterr().out
    assert "replay (3 commits, 1 passed)" in text and "ALARM" in text


BAD_ARGS = [
    (["--condition", "n - o = 0.1 +/- 0.01"], "column 7: --condition must be well-formed"),
    (["--condition", "n > 0.8"], "column 8: --condition must be well-formed"),
    (["--condition", "n > 0.8 +/- 0.1", "--reliability", "1.5"], "--reliability must be a number in (0, 1)"),
    (["--condition", "n > 0.8 +/- 0.1", "--reliability", "abc"], "--reliability must be"),
    (["--condition", "n > 0.8 +/- 0.1", "--adaptivity", "some"], "--adaptivity must be one of none, full"),
    (["--condition", "n > 0.8 +/- 0.1", "--mode", "fp"], "--mode must be one of fp-free, fn-free"),
    (["--condition", "n > 0.8 +/- 0.1", "--steps", "0"], "--steps must be a whole number"),
    (["--condition", "n > 0.8 +/- 0.1", "--steps", "2.5"], "--steps must be a whole number"),
    (["--condition", "n > 0.8 +/- 0.1", "--difference-bound", "2"], "--difference-bound must be a number in (0, 1]"),
    (["--condition", "n > 0.8 +/- 0.1", "--difference-bound", "x"], "--difference-bound must be a number"),
    (["--condition", "n > 0.8 +/- 0.1", "--labelers", "0"], "--labelers must be a whole number >= 1"),
    (["--condition", "n > 0.8 +/- 0.1", "--seconds-per-label", "-1"], "--seconds-per-label must be"),
    (["--condition", "n > 0.8 +/- 0.1", "--trace", "/nonexistent/trace.csv"], "/nonexistent/trace.csv: --trace must be an existing file; got '/nonexistent/trace.csv'"),
]


@pytest.mark.parametrize("args,start", BAD_ARGS, ids=[" ".join(a[2:]) or a[1] for a, _ in BAD_ARGS])
def test_bad_input_exit_2_one_line(capsys, args, start):
    with pytest.raises(SystemExit) as info:
        main(["ci", *args])
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert lines[0].startswith("meter-dashboard ci: error: " + start), lines[0]


def test_alarm_on_is_validated(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("commit,n,o,d\na,0.84,0.80,0.05\n")
    with pytest.raises(SystemExit):
        main(["ci", "--condition", PATTERN1, "--trace", str(path), "--alarm-on", "x"])
    assert capsys.readouterr().err.strip() == ("meter-dashboard ci: error: --alarm-on must be one of pass, fail; "
                                               "got 'x'")


def test_bad_input_in_a_real_process_is_one_line():
    proc = run("ci", "--condition", "n - o = 0.1 +/- 0.01")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "meter-dashboard ci: error: column 7: --condition must be well-formed: expected '>' or '<' (there is no '=' "
        "in the grammar), found '='; got 'n - o = 0.1 +/- 0.01'"]


def test_bad_trace_cell_names_line_and_column(capsys, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("commit,n,o,d\na,0.8,0.7,0.1\nb,0.8,seven,0.1\n")
    with pytest.raises(SystemExit):
        main(["ci", "--condition", PATTERN1, "--trace", str(path)])
    assert capsys.readouterr().err.strip() == ("meter-dashboard ci: error: line 3, column 'o': o must be a number "
                                               "in [0, 1]; got 'seven'")


def test_missing_condition_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["ci"])
    assert info.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_the_cli_never_imports_panel():
    code = ("import sys; from meter_dashboard.cli import main; "
            "main(['ci', '--condition', 'n - o > 0.02 +/- 0.01 /\\\\ d < 0.1 +/- 0.01', '--format', 'json']); "
            "bad = [m for m in ('panel', 'holoviews', 'bokeh') if m in sys.modules]; "
            "sys.stderr.write(repr(bad))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == "[]"
    assert json.loads(proc.stdout)["optimized"] == 67_706


def test_the_ci_command_imports_only_what_it_uses():
    """Issue 13: no scipy (the meter's engine), no pandas (the trace reader is the csv module), no event loop."""
    code = ("import sys, io, contextlib; from meter_dashboard.cli import main\n"
            "for extra in ([], ['--trace', sys.argv[1]]):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        main(['ci', '--condition', 'n - o > 0.02 +/- 0.01', '--format', 'json', *extra])\n"
            "print(sorted(m for m in ('scipy', 'pandas', 'asyncio', 'panel', 'bokeh', 'sqlalchemy') if m in sys.modules))")
    from importlib import resources

    trace = str(resources.files("meter_dashboard.data").joinpath("ci_commits.csv"))
    proc = subprocess.run([sys.executable, "-c", code, trace], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_defaults_are_the_models():
    from meter_dashboard.ci import CIInputs
    from meter_dashboard.cli import build_parser

    args = build_parser().parse_args(["ci", "--condition", "n > 0.5 +/- 0.1"])
    for name in ("reliability", "adaptivity", "steps", "mode", "seconds_per_label", "labelers", "alarm_on"):
        default = CIInputs.param[name].default
        assert type(default)(getattr(args, name)) == default, name


def test_bound_binomial(capsys):
    """Issue 12: --bound binomial gives the exact counts and Hoeffding's beside them."""
    out = _json(capsys, "--condition", "n > 0.8 +/- 0.05", "--bound", "binomial")
    assert out["bound"] == "binomial" and out["hoeffding"]["full"]["labels"] == 6279  # Section 3.3
    assert out["labels"] < 6279 and isinstance(out["labels"], int)
    assert [c["method"] for c in out["clauses"]] == ["binomial"]
    assert main(["ci", "--condition", "n > 0.8 +/- 0.05", "--bound", "binomial"]) == 0
    text = capsys.readouterr().out
    assert "Hoeffding" in text and "6,279" in text and "exact binomial tails" in text


def test_bound_binomial_refusals_name_the_flag(capsys):
    with pytest.raises(SystemExit):
        main(["ci", "--condition", "n > 0.8 +/- 0.00005", "--bound", "binomial"])
    err = capsys.readouterr().err.strip()
    assert err.startswith("meter-dashboard ci: error: --bound must be hoeffding for settings that need more than "
                          "10,000,000 labels") and len(err.splitlines()) == 1
    with pytest.raises(SystemExit):
        main(["ci", "--condition", "n > 0.8 +/- 0.05", "--bound", "exact"])
    assert capsys.readouterr().err.strip() == ("meter-dashboard ci: error: --bound must be one of hoeffding, "
                                               "binomial; got 'exact'")
