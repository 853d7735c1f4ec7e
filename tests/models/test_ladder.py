"""The Ladder's param models: replay, Lemma 4 planner, boosting attack (no browser)."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

import meter_dashboard.models.ladder as ml
from meter_dashboard.models.ladder import BoostingAttackModel, LadderReplayModel, LadderSizeModel


# --------------------------------------------------------------------------- replay
def test_replay_model_starts_with_the_shipped_example():
    m = LadderReplayModel()
    assert m.example == "ladder_leaderboard.csv" and m.error == ""
    assert m.result.submissions == 15 and m.result.variant == "parameter_free"
    expected = ml.ladder(ml.load_example())
    assert m.result.scores.tolist() == expected.scores.tolist()


def test_switching_variant_and_step_replays():
    m = LadderReplayModel(example="ladder_ties.csv")
    assert m.result.scores.tolist() == [0.75, 0.75, 0.25, 0.25, 0.25]
    m.param.update(variant="fixed_step", step=0.5)
    # eta = 0.5: 0.75 -> [0.75]_0.5 = 1.0; 0.5 < 0.5? no; 0.25 < 0.5 -> [0.25]_0.5 = 0.5; 0.25, 0 < 0? no
    assert m.result.step == 0.5
    assert m.result.scores.tolist() == [1.0, 1.0, 0.5, 0.5, 0.5]
    m.variant = "parameter_free"
    assert m.result.step is None


def test_upload_good_and_bad_bytes():
    m = LadderReplayModel()
    assert m.load(b"x,y\n1,0\n1,1\n0,0\n", "mine.csv")
    assert m.example == "uploaded file" and m.table.names == ("x", "y") and m.error == ""
    good = m.result
    assert not m.load(b"x,y\n1,0\n1,7\n", "bad.csv")
    assert m.error == "line 3, column 2 (y): loss must be a number in [0, 1]; got '7'"
    assert m.result is good                       # last good result kept
    assert m.load(b"x,y\n1,0\n0,0\n")
    assert m.error == ""


def test_constructor_accepts_losses_and_a_one_example_table_errors_only_for_parameter_free():
    m = LadderReplayModel(np.array([[1.0, 0.0]]))
    assert "at least 2 test examples" in m.error
    m.param.update(variant="fixed_step", step=0.5)
    assert m.error == "" and m.result.scores.tolist() == [1.0, 0.0]


def test_selecting_an_example_after_an_upload_reloads_it():
    m = LadderReplayModel()
    m.load(b"x\n1\n0\n")
    m.example = "ladder_ties.csv"
    assert m.table.names[0] == "first"


def test_guarantee_for_the_loaded_test_set():
    m = LadderReplayModel()
    total, eta, eps = m.guarantee()
    assert total == pytest.approx(eta + eps) and 0 < total < 1
    m.delta = 0.001
    assert m.guarantee()[0] > total


# --------------------------------------------------------------------------- Lemma 4
def test_size_model_labels_and_best_split():
    s = LadderSizeModel()
    assert s.size.labels == 40_343 and s.error == ""     # Lemma 4 with eps = eta = 0.05, k = 100, delta = 0.05
    assert s.best.labels < 40_343 and s.best.total_error == pytest.approx(0.1)
    s.submissions = 1000
    assert s.size.labels > 40_343
    eta, labels = s.curve()
    assert eta.size == labels.size == 200 and labels.min() >= s.best.labels


def test_size_model_refuses_a_total_error_of_one_and_keeps_the_last_result():
    s = LadderSizeModel()
    before = s.size
    s.param.update(epsilon=0.6, step=0.5)
    assert "less than 1" in s.error and s.size is before
    s.step = 0.05
    assert s.error == "" and s.size.epsilon == 0.6


def test_size_model_refuses_out_of_range_assignment():
    s = LadderSizeModel()
    with pytest.raises(ValueError):
        s.epsilon = 0
    with pytest.raises(ValueError):
        s.submissions = 0


# --------------------------------------------------------------------------- attack
def test_attack_model_runs_and_reports():
    a = BoostingAttackModel(labels=600, submissions=60, trials=2, seed=4)
    result = a.run()
    assert result is a.result and result.complete and result.trials == 2
    assert a.progress == 1.0 and not a.running and a.status.startswith("Done")
    direct = ml.boosting_attack(600, 60, seed=4, trials=2)
    np.testing.assert_array_equal(result.naive_public, direct.naive_public)


def test_attack_model_fixed_step_variant():
    a = BoostingAttackModel(labels=600, submissions=30, trials=1, variant="fixed_step", step=0.02)
    assert a.run().step == 0.02


def test_attack_model_async_run_can_be_cancelled():
    a = BoostingAttackModel(labels=400, submissions=200, trials=5, seed=1)
    seen = []

    def watch(event):
        seen.append(event.new)
        if event.new >= 0.1:
            a.cancel()

    a.param.watch(watch, "progress")
    asyncio.run(a.arun())
    assert not a.running and a.status.startswith("Cancelled")
    assert 0.1 <= seen[-1] < 1.0
    assert a.result is not None and not a.result.complete
    assert a.result.computed > 0


def test_attack_model_async_run_to_the_end_matches_the_sync_run():
    a = BoostingAttackModel(labels=300, submissions=40, trials=2, seed=9)
    asyncio.run(a.arun())
    b = BoostingAttackModel(labels=300, submissions=40, trials=2, seed=9)
    b.run()
    np.testing.assert_array_equal(a.result.ladder_public, b.result.ladder_public)
    assert a.progress == 1.0


# --------------------------------------------------------------------------- the notebook component
def test_notebook_component_over_the_models():
    import meter_dashboard as md

    view = md.Ladder(ml.example_path("ladder_ties.csv").read_bytes(), step=0.25, run_attack=False)
    assert view.replay.variant == "fixed_step" and view.replay.step == 0.25
    html = view.replay_table.object
    assert html.count("ladder-score") == 5          # one hook per released score
    assert view.replay_source.data["score"].tolist() == [0.75, 0.75, 0.25, 0.25, 0.25]
    view.replay.variant = "parameter_free"
    assert view.replay_source.data["score"].tolist() == [0.75, 0.75, 0.25, 0.25, 0.25]
    assert not view.step.visible
    view.attack.param.update(labels=300, submissions=20, trials=1)
    view.attack.run()
    assert len(view.attack_source.data["k"]) == 20
    assert "attack-naive" in view.attack_headlines.object
    assert view.__panel__() is view.__panel__()      # the layout is built once
