"""Speed of the Ladder (figures to report, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_ladder.py --benchmark-enable
"""
from __future__ import annotations

import numpy as np

import meter_dashboard.models.ladder as ml
from meter_dashboard.bounds import ladder as L

RNG = np.random.default_rng(0)
BIG = (RNG.random((10_000, 50)) < np.linspace(0.3, 0.2, 50)).astype(float)   # n = 10,000, k = 50, 0/1 losses


def test_replay_parameter_free_10k_examples_50_submissions(benchmark):
    r = benchmark(L.replay, BIG)
    assert r.scores.shape == (50,)


def test_replay_fixed_step_10k_examples_50_submissions(benchmark):
    r = benchmark(L.replay, BIG, 0.01)
    assert r.improved[0]


def test_read_the_shipped_loss_file(benchmark):
    t = benchmark(ml.load_example, "ladder_leaderboard.csv")
    assert t.examples == 2000


def test_lemma4_labels_curve_over_10k_submission_counts(benchmark):
    k = np.arange(1, 10_001)
    n = benchmark(L.labels, 0.05, 0.05, k, 0.05)
    assert n[99] == 40_343


def test_best_step(benchmark):
    eta, eps, n = benchmark(L.best_step, 0.1, 100, 0.05)
    assert n < 40_343


def test_boosting_attack_n4000_k400_one_trial(benchmark):
    # the target: n = 4,000 and k up to 400 in seconds
    c = benchmark.pedantic(L.boosting_attack, args=(4000, 400), kwargs={"seed": 0, "trials": 1}, rounds=3,
                           iterations=1)
    assert c.done == 400


def test_boosting_attack_page_default_five_trials(benchmark):
    r = benchmark.pedantic(ml.boosting_attack, args=(4000, 400), kwargs={"seed": 0, "trials": 5}, rounds=1,
                           iterations=1)
    assert r.complete
