"""The Ladder's param models: replay, Lemma 4 planner, boosting attack (no browser)."""
from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import meter_dashboard.leaderboard.model as ml
from meter_dashboard.core.validation import InputError
from meter_dashboard.leaderboard.model import BoostingAttackModel, LadderReplayModel, LadderSizeModel


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
    work = a.work

    def cancelling(report, should_stop):  # Cancel once a tenth is done, from the work itself: no race with a clock
        def reporting(fraction, message=""):
            report(fraction, message)
            if fraction >= 0.1:
                a.cancel()

        return work(reporting, should_stop)

    a.work = cancelling
    a.param.watch(lambda event: seen.append(event.new), "progress")
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


# --------------------------------------------------------------------------- issue 10: read-only outputs
def _ran(job):
    job.run()
    return job


@pytest.mark.parametrize("factory,names", [
    (LadderReplayModel, ["table", "result", "error", "busy"]),
    (LadderSizeModel, ["size", "best", "error"]),
    (lambda: _ran(BoostingAttackModel(labels=50, submissions=5, trials=1)), ["result", "progress", "running", "error"]),
])
def test_derived_outputs_are_read_only(factory, names):
    model = factory()
    other = {"error": "written by a view", "busy": True, "running": True, "progress": 0.5}
    for name in names:
        with pytest.raises(TypeError):
            setattr(model, name, other.get(name))


def test_the_attack_model_is_the_shared_background_job():
    from meter_dashboard.core.runtime import BackgroundJob

    a = BoostingAttackModel(labels=200, submissions=30, trials=1)
    assert isinstance(a, BackgroundJob)
    k, reference = a.reference()
    assert k.tolist() == list(range(1, 31)) and reference[0] == pytest.approx(0.5 - math.sqrt(1 / 400) / math.pi)


# --------------------------------------------------------------------------- issue 13: nothing heavy on the loop
def _big_table(n=600, k=500, seed=3):
    rng = np.random.default_rng(seed)
    return (rng.random((n, k)) < np.linspace(0.5, 0.2, k)).astype(float)


def test_prepare_reads_without_touching_the_model_and_apply_shows_it():
    m = LadderReplayModel()
    before = m.result
    table = m.prepare(b"x,y\r1,0\r0,0\r", "cr.csv")          # CR-only line endings (issue 15)
    assert m.result is before and table.names == ("x", "y") and table.source == "cr.csv"
    m.apply_table(table)
    assert m.example == "uploaded file" and m.result.submissions == 2
    with pytest.raises(InputError):
        m.prepare(b"x,y\n1,0\n0," + b"5" * 200_000 + b"\n")


def test_large_tables_are_replayed_in_a_worker_thread_newest_request_winning():
    big = ml.as_table(_big_table())
    assert big.cells > ml.OFFLOAD_CELLS
    m = LadderReplayModel(offload=True)
    busy_seen = []

    async def scenario():
        m.param.watch(lambda e: busy_seen.append(e.new), "busy")
        m.apply_table(big)                      # returns at once: the replay runs in a thread
        assert m.busy and m.result.submissions == 15
        m.param.update(variant="fixed_step", step=0.02)  # replaces the pending request
        while m.busy:
            await asyncio.sleep(0.005)

    asyncio.run(scenario())
    assert m.result.submissions == 500 and m.result.step == 0.02 and m.error == ""
    assert m.result.scores.tolist() == ml.ladder(big, 0.02).scores.tolist()
    assert busy_seen[0] is True and busy_seen[-1] is False


def test_small_tables_are_replayed_at_once_even_with_offload():
    m = LadderReplayModel(offload=True)

    async def scenario():
        m.param.update(variant="fixed_step", step=0.02)
        return m.result

    result = asyncio.run(scenario())
    assert result.step == 0.02 and not m.busy


def test_a_failed_offloaded_replay_keeps_the_last_result():
    m = LadderReplayModel(offload=True)
    good = m.result
    one_row = ml.LossTable(names=tuple(f"s{i}" for i in range(300_000)), losses=np.zeros((1, 300_000)))

    async def scenario():
        m.apply_table(one_row)                   # parameter-free needs 2 examples: refused in the worker
        while m.busy:
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert "at least 2 test examples" in m.error and m.result is good


# --------------------------------------------------------------------------- issue 15: counts exact or refused
def test_size_model_refuses_a_count_beyond_the_limit_and_keeps_the_last():
    s = LadderSizeModel()
    s.step = 1e-300
    assert "step must be large enough" in s.error and s.size.labels == 40_343
    s.step = 0.05
    assert s.error == "" and s.size.labels == 40_343
    s.epsilon = 1e-9
    assert "epsilon must be large enough" in s.error


def test_size_curve_leaves_out_counts_beyond_the_limit():
    s = LadderSizeModel(epsilon=2e-6, step=2e-6)
    eta, labels = s.curve() if s.size is not None else (np.zeros(0), np.zeros(0))
    assert np.all(np.isfinite(labels) | np.isnan(labels))


# --------------------------------------------------------------------------- issue 24: the board feeds the sizing
def test_board_size_of_the_shipped_example():
    from meter_dashboard.bounds import ladder as lb

    board = ml.board_size(ml.ladder(ml.load_example()), 0.1, 0.05)
    assert (board.submissions, board.examples) == (15, 2000)
    assert board.error == pytest.approx(0.23806543745587752)       # the replay's "Leaderboard error <= 0.2381"
    n, eps, eta = board.needed.labels, board.needed.epsilon, board.needed.step
    assert eps + eta == pytest.approx(0.1)
    assert lb.satisfies_lemma4(n, eps, eta, 15, 0.05) and not lb.satisfies_lemma4(n - 1, eps, eta, 15, 0.05)
    assert board.more == n - 2000 and board.to_dict()["needed"]["labels"] == n


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 500), st.floats(0.05, 0.6))
def test_the_labels_a_board_needs_guarantee_the_target(submissions, target):
    """Lemma 4 both ways: a board with the labels board_size asks for is within the target."""
    from meter_dashboard.bounds import ladder as lb

    table = ml.LossTable(names=tuple(f"s{i}" for i in range(submissions)), losses=np.full((4, submissions), 0.5))
    board = ml.board_size(ml.ladder(table), target, 0.05)
    assert lb.leaderboard_error(board.needed.labels, submissions, 0.05)[0] <= target * (1 + 1e-9)
    assert board.more == board.needed.labels - 4
