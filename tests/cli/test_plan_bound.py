"""``meter-dashboard plan --bound binomial [--max-error-rate A] [--report PATH]`` (issue 12).

The counts are the independent computations quoted in issue 12 for ease.ml/ci's setting
(Renggli et al. 2019, Section 4.3; m = 5, T = 10, delta = 0.01): exact binomial single_model
about 16,650, incremental about 27,150, regular about 86,500; with the error rate known to be
at most 0.1, about 6,000 / 9,800 / 31,400.  Hoeffding's counts are the paper's (38,005 and
100,033, ease.ml/meter Fig. 10 settings).
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from meter_dashboard.cli import main

NONUNIFORM = "0.01,0.02,0.03,0.04,0.05"
BASE = ["plan", "--epsilon", NONUNIFORM, "--delta", "0.01", "--steps", "10"]


def run(*args):
    return subprocess.run([sys.executable, "-m", "meter_dashboard", *args], capture_output=True, text=True,
                          timeout=120)


def json_of(capsys, *args) -> dict:
    assert main([*BASE, *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_binomial_counts_beside_hoeffdings(capsys):
    out = json_of(capsys, "--bound", "binomial")
    labels, hoeffding = out["labels"], out["hoeffding_labels"]
    assert (labels["single_model"], labels["incremental"], labels["regular"]) == (16651, 27151, 86501)
    assert (hoeffding["incremental"], hoeffding["regular"]) == (38005, 100033)
    assert out["bound"] == "binomial" and out["inputs"]["max_error_rate"] is None
    assert all(out["saving_vs_hoeffding"][v] == hoeffding[v] - labels[v] > 0 for v in labels)
    assert "|test - true| >= eps" in " ".join(out["notes"])


def test_known_error_rate_range_and_what_if_it_is_wrong(capsys):
    out = json_of(capsys, "--bound", "binomial", "--max-error-rate", "0.1")
    labels = out["labels"]
    assert (labels["single_model"], labels["incremental"], labels["regular"]) == (6051, 9801, 31351)
    assert out["inputs"]["max_error_rate"] == 0.1
    notes = " ".join(out["notes"])
    assert "EVERY model" in notes and "27,151" in notes  # the count without the range, beside the planned one


def test_default_bound_is_the_papers(capsys):
    out = json_of(capsys)
    assert out["labels"]["incremental"] == 38005 and out["labels"]["regular"] == 100033


def test_table_shows_both_counts_and_the_range_caveat(capsys):
    assert main([*BASE, "--bound", "binomial", "--max-error-rate", "0.1"]) == 0
    text = capsys.readouterr().out
    assert "hoeffding" in text and "saving" in text and "38,005" in text and "9,801" in text
    assert "If the error-rate range is wrong" in text and "27,151" in text


def test_exact_curve_over_t(capsys):
    assert main(["plan", "--epsilon", NONUNIFORM, "--delta", "0.01", "--steps", "8:10", "--bound", "binomial",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"] == [8, 9, 10] and out["bound"] == "binomial"
    assert out["labels"]["incremental"][-1] == 27151 and out["labels"]["regular"][-1] == 86501
    assert out["labels"]["regular"] == sorted(out["labels"]["regular"])


def test_report_file_is_written_and_self_contained(tmp_path):
    path = tmp_path / "plan.html"
    proc = run(*BASE, "--bound", "binomial", "--max-error-rate", "0.1", "--report", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["report"] == str(path)
    html = path.read_text(encoding="utf-8")
    assert "9,801" in html and "38,005" in html and "27,151" in html  # chosen, Hoeffding, without the range
    assert "errs at most 0.1" in html
    assert "<script src=" not in html  # Bokeh inlined: opens offline


def test_report_never_imports_panel(tmp_path):
    code = ("import sys; from meter_dashboard.cli import main; "
            f"main({BASE + ['--bound', 'binomial', '--report', str(tmp_path / 'p.html')]!r}); "
            "sys.stderr.write(repr([m for m in ('panel', 'holoviews') if m in sys.modules]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr.strip().endswith("[]"), proc.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--bound", "binomial", "--max-error-rate", "0.6"], "--max-error-rate must be below 0.5"),
    (["--bound", "binomial", "--max-error-rate", "abc"], "--max-error-rate must be a number; got 'abc'"),
    (["--max-error-rate", "0.1"], "--max-error-rate must be given only with --bound binomial"),
    (["--bound", "exact"], "--bound: invalid choice: 'exact'"),
    (["--bound", "binomial", "--steps", "1:2000"], "--steps must be a range of at most 1,000 steps"),
    (["--steps", "1:5", "--report", "x.html"], "--report must be given with one T"),
    (["--report", "/nonexistent-dir/p.html"], "--report must be a file path that can be written"),
])
def test_bad_bound_input_exit_2_and_one_line(args, fragment):
    proc = run(*BASE, *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_help_names_the_bound_and_an_example():
    proc = run("plan", "--help")
    assert "--bound {hoeffding,binomial}" in proc.stdout and "--max-error-rate" in proc.stdout
    assert "--bound binomial --max-error-rate 0.1 --report plan.html" in proc.stdout


def test_a_budget_beyond_the_exact_tails_is_answered_and_says_so():
    """Issue 23: --budget 1e15 under the exact bound gave an IndexError; now an answer, conservative, and said."""
    out = subprocess.run([sys.executable, "-m", "meter_dashboard", "plan", "--epsilon", "0.01", "--delta", "0.01",
                          "--steps", "10", "--budget", "1000000000000000", "--bound", "binomial"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "more than 10^12" in out.stdout and "certified upper bound" in out.stdout
