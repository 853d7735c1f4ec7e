"""Issue 29: what is the same for every /ladder session (the default attack, the shipped example) is computed once per process and shared read-only."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

import meter_dashboard.leaderboard.model as ml
from meter_dashboard.leaderboard.model import BoostingAttackModel, LadderReplayModel


def _no_simulation(*args, **kwargs):
    raise AssertionError("the attack was simulated again")


def test_a_second_run_with_the_same_settings_takes_the_shared_curves(monkeypatch):
    first = BoostingAttackModel(labels=700, submissions=35, trials=2, seed=11).run()
    assert first.complete
    direct = ml.boosting_attack(700, 35, seed=11, trials=2)  # the bounds function itself, not the shared copy
    monkeypatch.setattr(ml.ladder_bounds, "iter_boosting_attack", _no_simulation)
    again = BoostingAttackModel(labels=700, submissions=35, trials=2, seed=11)
    asyncio.run(again.arun())
    assert again.result is first and again.progress == 1.0 and again.status.startswith("Done: 2 trial(s)")
    np.testing.assert_array_equal(again.result.naive_public, direct.naive_public)
    with pytest.raises(ValueError):  # shared read-only: no session can change another's curves
        again.result.naive_public[0] = 0.0
    assert not again.result.curves.naive_public.flags.writeable  # nor the per-trial curves behind them


def test_other_settings_are_simulated(monkeypatch):
    BoostingAttackModel(labels=700, submissions=35, trials=2, seed=12).run()
    monkeypatch.setattr(ml.ladder_bounds, "iter_boosting_attack", _no_simulation)
    for changed in ({"seed": 13}, {"trials": 1}, {"labels": 701}, {"submissions": 36},
                    {"variant": "fixed_step", "step": 0.02}):
        with pytest.raises(AssertionError, match="simulated again"):
            BoostingAttackModel(**{"labels": 700, "submissions": 35, "trials": 2, "seed": 12, **changed}).run()


def test_a_cancelled_run_is_not_shared():
    a = BoostingAttackModel(labels=500, submissions=120, trials=4, seed=14)
    work = a.work

    def cancelling(report, should_stop):
        def reporting(fraction, message=""):
            report(fraction, message)
            if fraction >= 0.1:
                a.cancel()

        return work(reporting, should_stop)

    a.work = cancelling
    asyncio.run(a.arun())
    assert a.result is not None and not a.result.complete
    assert ml.SHARED_ATTACKS.get((500, 120, None, 14, 4)) is None
    b = BoostingAttackModel(labels=500, submissions=120, trials=4, seed=14).run()
    assert b.complete and ml.SHARED_ATTACKS.get((500, 120, None, 14, 4)) is b


def test_the_shared_results_are_bounded():
    for seed in range(ml.SHARED_ATTACKS.size + 3):
        BoostingAttackModel(labels=50, submissions=3, trials=1, seed=1000 + seed).run()
    assert ml.SHARED_ATTACKS.get((50, 3, None, 1000, 1)) is None
    assert ml.SHARED_ATTACKS.get((50, 3, None, 1000 + ml.SHARED_ATTACKS.size + 2, 1)) is not None


def test_the_shipped_example_is_parsed_once_and_shared_read_only():
    a, b = LadderReplayModel(), LadderReplayModel()
    assert a.table is b.table and a.table.submissions == 15
    with pytest.raises(ValueError):
        a.table.losses[0, 0] = 1.0
    assert ml.load_example().losses.flags.writeable  # a notebook's own copy stays its own
