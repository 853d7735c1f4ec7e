"""Reading per-example loss files, the shipped examples, and the result objects."""
from __future__ import annotations

import io
import math

import numpy as np
import pytest

import meter_dashboard.leaderboard.model as ml
from meter_dashboard.core.validation import InputError
from tests.generators import generate_ladder


def test_parse_losses_reads_names_and_values():
    t = ml.parse_losses("a,b,c\n0,1,0.5\n1,1,0.25\n\n", "x.csv")
    assert t.names == ("a", "b", "c")
    assert t.losses.tolist() == [[0, 1, 0.5], [1, 1, 0.25]]
    assert (t.examples, t.submissions) == (2, 3)
    assert "3 submissions x 2 test examples" in repr(t)


def test_read_losses_from_path_bytes_and_open_file(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text("s1,s2\n0,1\n1,0\n", encoding="utf-8")
    for source in (path, str(path), path.read_bytes(), io.BytesIO(path.read_bytes())):
        assert ml.read_losses(source).losses.tolist() == [[0, 1], [1, 0]]
    # a byte-order mark (Excel) is not part of the first name
    assert ml.read_losses(b"\xef\xbb\xbfs1,s2\n0,1\n").names == ("s1", "s2")


@pytest.mark.parametrize("text,parameter,where", [
    ("a,b\n0,1\n1,x\n", "loss", "line 3, column 2 (b)"),
    ("a,b\n0,1\n1,1.5\n", "loss", "line 3, column 2 (b)"),
    ("a,b\n0,1\n-0.1,1\n", "loss", "line 3, column 1 (a)"),
    ("a,b\n0,\n", "loss", "line 2, column 2 (b)"),
    ("a,b\n0,nan\n", "loss", "line 2, column 2 (b)"),
    ("a,b\n0,1,1\n", "row", "line 2"),
    ("a,a\n0,1\n", "submission names", "line 1, column 2"),
    ("a,,c\n0,1,1\n", "submission name", "line 1, column 2"),
    ("0,1\n1,1\n", "header", "line 1, column 1"),
    ("a,b\n", "losses file", None),
    ("", "losses file", None),
])
def test_bad_loss_files_say_where(text, parameter, where):
    with pytest.raises(InputError) as info:
        ml.parse_losses(text)
    assert info.value.parameter == parameter
    if where:
        assert info.value.location == where
        assert str(info.value).startswith(where + ": ")


def test_binary_upload_is_refused_with_a_message():
    with pytest.raises(InputError, match="UTF-8 text"):
        ml.read_losses(b"\xff\xfe\x00\x01binary")


def test_examples_load_and_unknown_names_are_refused():
    t = ml.load_example("ladder_leaderboard.csv")
    assert (t.examples, t.submissions) == (2000, 15)
    assert set(np.unique(t.losses)) == {0.0, 1.0}
    ties = ml.load_example("ladder_ties.csv")
    assert ties.names == ("first", "one_fix", "two_fixes", "swap", "perfect")
    with pytest.raises(InputError):
        ml.load_example("../../etc/passwd")
    with pytest.raises(InputError):
        ml.load_example("compare_paired.csv")


def test_generator_reproduces_the_shipped_files(tmp_path):
    names, losses = generate_ladder.leaderboard()
    generate_ladder.write(tmp_path / "l.csv", names, losses)
    assert (tmp_path / "l.csv").read_bytes() == ml.example_path("ladder_leaderboard.csv").read_bytes()
    generate_ladder.write(tmp_path / "t.csv", *generate_ladder.TIES)
    assert (tmp_path / "t.csv").read_bytes() == ml.example_path("ladder_ties.csv").read_bytes()


def test_generated_leaderboard_has_the_fix_and_break_counts_it_claims():
    names, losses = generate_ladder.leaderboard()
    assert losses[:, 0].sum() == generate_ladder.BASELINE_ERRORS
    for t, (_, fix, brk) in enumerate(generate_ladder.LEADERBOARD[1:], start=1):
        assert np.sum((losses[:, t - 1] == 1) & (losses[:, t] == 0)) == fix
        assert np.sum((losses[:, t - 1] == 0) & (losses[:, t] == 1)) == brk


def test_ladder_result_object():
    r = ml.ladder(ml.load_example("ladder_ties.csv"), step=0.25)
    assert r.variant == "fixed_step" and r.releases == 2
    d = r.to_dict()
    assert d["scores"] == [0.75, 0.75, 0.25, 0.25, 0.25]
    assert d["naive"] == [0.75, 0.5, 0.25, 0.25, 0.0]
    assert d["thresholds"][0] is None
    frame = r.to_frame()
    assert list(frame.columns) == ["submission", "naive", "best_naive", "threshold", "ladder_score", "improved"]
    assert frame["ladder_score"].tolist() == d["scores"]
    assert "Ladder with step 0.25" in repr(r) and "2 released" in repr(r)
    assert ml.ladder(ml.load_example("ladder_ties.csv")).variant == "parameter_free"


def test_ladder_accepts_arrays_and_dataframes():
    import pandas as pd

    arr = np.array([[1, 0], [1, 1], [0, 0]], dtype=float)
    assert ml.ladder(arr, 0.1).names == ("submission 1", "submission 2")
    frame = pd.DataFrame(arr, columns=["x", "y"])
    assert ml.ladder(frame, 0.1).scores.tolist() == ml.ladder(arr, 0.1).scores.tolist()


def test_ladder_size_and_best_step_objects():
    s = ml.ladder_size(0.05, 0.05, 100, 0.05)
    assert s.labels == 40_343 and s.total_error == pytest.approx(0.1)
    assert s.to_dict()["labels"] == 40_343
    assert "40,343" in repr(s)
    b = ml.best_step(0.1, 100, 0.05)
    assert b.labels < s.labels and b.epsilon + b.step == pytest.approx(0.1)
    with pytest.raises(InputError):
        ml.ladder_size(0.05, None, 100, 0.05)


def test_attack_result_object():
    r = ml.boosting_attack(400, 30, seed=2, trials=2)
    assert r.complete and r.trials == 2 and r.computed == 30
    v = r.at()
    assert v["submissions"] == 30 and 0 < v["naive_public"] < 1
    assert v["reference"] == pytest.approx(0.5 - math.sqrt(30 / 800) / math.pi)
    d = r.to_dict()
    assert len(d["naive_public"]) == 30 and d["variant"] == "parameter_free"
    assert list(r.to_frame().columns)[:3] == ["k", "naive_public", "ladder_public"]
    assert "after k=30 probes" in repr(r)
