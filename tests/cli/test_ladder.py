"""``meter-dashboard ladder`` and ``ladder-size``: JSON contract, tables, one-line errors, no Panel."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import meter_dashboard.models.ladder as ml
from meter_dashboard.cli import main

LEADERBOARD = str(ml.example_path("ladder_leaderboard.csv"))
TIES = str(ml.example_path("ladder_ties.csv"))


def run(*args):
    """The real command in a subprocess (slow on a busy machine: used sparingly)."""
    return subprocess.run([sys.executable, "-m", "meter_dashboard", *args], capture_output=True, text=True,
                          timeout=120)


def test_ladder_json_hand_computed_ties(capsys):
    assert main(["ladder", TIES, "--step", "0.25", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # Algorithm 1 with eta = 0.25 on the ties board (see tests/bounds/test_ladder.py for the hand replay)
    assert out["scores"] == [0.75, 0.75, 0.25, 0.25, 0.25]
    assert out["naive"] == [0.75, 0.5, 0.25, 0.25, 0.0]
    assert out["variant"] == "fixed_step" and out["step"] == 0.25
    assert out["improved"] == [True, False, True, False, False]
    assert out["submissions"] == ["first", "one_fix", "two_fixes", "swap", "perfect"]


def test_ladder_json_parameter_free_without_step(capsys):
    assert main(["ladder", TIES, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == "parameter_free" and out["step"] is None
    assert out["scores"] == [0.75, 0.75, 0.25, 0.25, 0.25]


def test_ladder_json_matches_the_model_on_the_shipped_example(capsys):
    assert main(["ladder", LEADERBOARD, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = ml.ladder(ml.read_losses(LEADERBOARD))
    assert out["scores"] == expected.scores.tolist()
    assert out["naive"] == expected.naive.tolist()
    assert out["releases"] == expected.releases
    g = out["guarantee"]
    assert g["leaderboard_error"] == pytest.approx(g["step"] + g["epsilon"])


def test_ladder_table_output(capsys):
    assert main(["ladder", LEADERBOARD, "--step", "0.01"]) == 0
    text = capsys.readouterr().out
    assert "Ladder with step 0.01 (Algorithm 1)" in text
    assert "pretrain_ens" in text and "Ladder score" in text and "Lemma 4" in text


def test_ladder_size_json_and_best_split(capsys):
    assert main(["ladder-size", "--epsilon", "0.05", "--step", "0.05", "--submissions", "100", "--delta", "0.05",
                 "--format", "json"]) == 0
    # Lemma 4: (22 log 8000 + 1 + log 20) / (2 * 0.05^2) = 40,342.8 -> 40,343
    assert json.loads(capsys.readouterr().out)["labels"] == 40_343
    assert main(["ladder-size", "--total-error", "0.1", "--submissions", "100", "--delta", "0.05",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["labels"] < 40_343 and out["epsilon"] + out["step"] == pytest.approx(0.1)
    assert main(["ladder-size", "--epsilon", "0.05", "--step", "0.05", "--submissions", "100"]) == 0
    assert "40,343" in capsys.readouterr().out


@pytest.mark.parametrize("args,needle", [
    (["ladder", "/no/such/file.csv"], "losses must be an existing file; got '/no/such/file.csv'"),
    (["ladder", TIES, "--step", "0"], "--step must be"),
    (["ladder", TIES, "--step", "abc"], "--step must be a number"),
    (["ladder-size", "--epsilon", "2", "--step", "0.1", "--submissions", "3"], "--epsilon must be in (0, 1)"),
    (["ladder-size", "--epsilon", "0.1", "--step", "0.1", "--submissions", "0"], "--submissions must be"),
    (["ladder-size", "--step", "0.1", "--submissions", "3"], "--epsilon must be given"),
    (["ladder-size", "--total-error", "0.1", "--epsilon", "0.05", "--submissions", "3"], "--total-error"),
    (["ladder-size", "--epsilon", "0.1", "--step", "0.1"], "--submissions"),
])
def test_bad_input_exits_2_with_one_line(args, needle, capsys):
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], lines



def test_bad_loss_file_names_line_and_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n0,1\n1,2\n", encoding="utf-8")
    proc = run("ladder", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("meter-dashboard ladder: error: line 3, column 2 (b): loss must be a number in "
                                   "[0, 1]; got '2'")


def test_ladder_verbs_do_not_import_panel():
    code = ("import sys, io, contextlib\nfrom meter_dashboard.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['ladder', {LEADERBOARD!r}, '--format', 'json'])\n"
            "    main(['ladder-size', '--epsilon', '0.05', '--step', '0.05', '--submissions', '10'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('panel', 'bokeh', 'holoviews')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_tiny_test_sets_get_no_meaningless_guarantee(capsys):
    assert main(["ladder", TIES]) == 0
    text = capsys.readouterr().out
    assert "too few for a useful guarantee" in text and "keep the leaderboard error below" not in text
    assert main(["ladder", LEADERBOARD]) == 0
    assert "keep the leaderboard error below 0.238" in capsys.readouterr().out
