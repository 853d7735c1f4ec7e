"""``meter-dashboard ladder`` and ``ladder-size``: JSON contract, tables, one-line errors, no Panel."""
from __future__ import annotations

import json

import pytest

import meter_dashboard.leaderboard.model as ml
from meter_dashboard.cli import main
from tests.cli.verbs import help_examples, imported_ui, process_refuses, refused, run_help_examples

LEADERBOARD = str(ml.example_path("ladder_leaderboard.csv"))
TIES = str(ml.example_path("ladder_ties.csv"))


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
    assert needle in refused(args, capsys)


def test_bad_loss_file_names_line_and_column(tmp_path):
    message = process_refuses(tmp_path, "ladder", "a,b\n0,1\n1,2\n")
    assert message == ("meter-dashboard ladder: error: line 3, column 2 (b): loss must be a number in "
                       "[0, 1]; got '2'")


def test_ladder_verbs_do_not_import_panel():
    calls = (["ladder", LEADERBOARD, "--format", "json"],
             ["ladder-size", "--epsilon", "0.05", "--step", "0.05", "--submissions", "10"])
    assert imported_ui(*calls) == "[]"


def test_tiny_test_sets_get_no_meaningless_guarantee(capsys):
    assert main(["ladder", TIES]) == 0
    text = capsys.readouterr().out
    assert "too few for a useful guarantee" in text and "keep the leaderboard error below" not in text
    assert main(["ladder", LEADERBOARD]) == 0
    assert "keep the leaderboard error below 0.238" in capsys.readouterr().out


# --------------------------------------------------------------------------- issue 11 #13: --help shows a runnable example
@pytest.mark.parametrize("verb", ["ladder", "ladder-size"])
def test_help_has_examples_that_run(verb, capsys):
    run_help_examples(verb, capsys)


def test_the_first_ladder_size_example_is_the_published_count(capsys):
    import shlex

    first = help_examples("ladder-size", capsys)[0]
    assert main(shlex.split(first)[1:] + ["--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["labels"] == 40_343


# --------------------------------------------------------------------------- issue 15: exact or refused, flags as typed
@pytest.mark.parametrize("args,needle", [
    # the example: printed "labels: 1"
    (["ladder-size", "--epsilon", "0.05", "--step", "1e-300", "--submissions", "100"],
     "--step must be large enough that Lemma 4's label count stays below 1e+15"),
    (["ladder-size", "--epsilon", "1e-300", "--step", "0.05", "--submissions", "100"], "--epsilon must be large enough"),
    (["ladder-size", "--epsilon", "5e-324", "--step", "5e-324", "--submissions", "1e29", "--delta", "5e-324"],
     "--epsilon must be large enough"),
    (["ladder-size", "--total-error", "1e-300", "--submissions", "100"], "--total-error must be large enough"),
    (["ladder-size", "--epsilon", "0.05", "--step", "0.05", "--submissions", "1e400"],
     "--submissions must be a whole number below 1e30; got '1e400'"),
    (["ladder-size", "--epsilon", "0.05", "--step", "0.05", "--submissions", "9" * 5000],
     "--submissions must be a whole number of at most 40 characters"),
    (["ladder-size", "--epsilon", "0.05", "--step", "0.05", "--submissions", "10", "--delta", "1e-400"],
     "--delta must be in (0, 1); got '1e-400'"),
    (["ladder-size", "--epsilon", "nan", "--step", "0.05", "--submissions", "10"], "--epsilon must be a finite number"),
    (["ladder", "--example", "ladder_ties.csv", "--step", "inf"], "--step must be a finite number"),
    (["ladder", "--example", "../etc/passwd"], "--example must be one of ladder_leaderboard.csv, ladder_ties.csv"),
    (["ladder"], "LOSSES.csv must be given, or --example NAME"),
])
def test_extreme_flags_are_refused_naming_the_flag_typed(args, needle, capsys):
    assert needle in refused(args, capsys)


def test_tiny_delta_and_huge_submissions_give_certified_counts(capsys):
    from meter_dashboard.bounds.ladder import satisfies_lemma4

    for delta, k in (("1e-300", "100"), ("5e-324", "100"), ("0.05", "1e29")):
        assert main(["ladder-size", "--epsilon", "0.05", "--step", "0.05", "--submissions", k, "--delta", delta,
                     "--format", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        n, d, sub = out["labels"], out["delta"], out["submissions"]
        assert isinstance(n, int) and n > 0
        assert satisfies_lemma4(n, 0.05, 0.05, sub, d) and not satisfies_lemma4(n - 1, 0.05, 0.05, sub, d)


def test_a_tiny_replay_step_is_harmless(capsys):
    assert main(["ladder", "--example", "ladder_ties.csv", "--step", "5e-324", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["scores"] == [0.75, 0.5, 0.25, 0.25, 0.0]


@pytest.mark.parametrize("content,location", [
    (b"a,b\r0,1\r1,7\r", "line 3, column 2 (b)"),                         # CR-only line endings
    (b"a,b\n0,1\n1," + b"5" * 200_000 + b"\n", "line 3, column 2"),       # a 200,000-character field
    (b"a,b\n0,1\n1,x\n", "line 3, column 2 (b)"),
    (b"a,b\n0,1\nNaN,0\n", "line 3, column 1 (a)"),
    (b"a,b\n0,1\n1,-inf\n", "line 3, column 2 (b)"),
])
def test_malformed_loss_files_name_line_and_column(tmp_path, capsys, content, location):
    f = tmp_path / "bad.csv"
    f.write_bytes(content)
    assert refused(["ladder", str(f)], capsys).startswith(f"meter-dashboard ladder: error: {location}: ")


def test_a_huge_loss_file_is_refused_before_it_is_read(tmp_path, capsys):
    f = tmp_path / "huge.csv"
    with open(f, "wb") as fh:
        fh.write(b"a,b\n")
        fh.seek(11 * 1024 * 1024)
        fh.write(b"0,1\n")
    with pytest.raises(SystemExit) as info:
        main(["ladder", str(f)])
    assert info.value.code == 2
    assert "losses must be a file of at most 10 MiB" in capsys.readouterr().err
