"""Speed of the ease.ml/ci engine (figures to report, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_ci.py --benchmark-enable
"""
from __future__ import annotations

import numpy as np

from meter_dashboard.bounds import ci as B
from meter_dashboard.ci import CIModel, ci_curves, ci_labels, evaluate, example_trace, read_ci_trace, replay_ci
from meter_dashboard.ci.grammar import parse_condition

PATTERN1 = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"
FIGURE_2_F2_FULL = [5496, 21984, 87933, 549581, 5957, 23826, 95302, 595633,
                    6417, 25668, 102670, 641684, 6878, 27510, 110038, 687736]


def test_parse_condition(benchmark):
    cond = benchmark(parse_condition, "n - 1.1 * o > 0.01 +/- 0.01 /\\ d < 0.1 +/- 0.01 /\\ n > 0.8 +/- 0.05")
    assert len(cond) == 3


def test_ci_labels_baseline_and_optimized(benchmark):
    r = benchmark(ci_labels, PATTERN1, 0.9999, "full", 32)
    assert (r.labels, r.optimized, r.labels_per_commit) == (655_547, 67_706, 6_771)


def test_figure_2_column_in_one_call(benchmark):
    rel = np.repeat([0.99, 0.999, 0.9999, 0.99999], 4)
    eps = np.tile([0.1, 0.05, 0.025, 0.01], 4)
    log_count = B.clause_log_count("full", 32, 1, 2)
    out = benchmark(B.hoeffding_labels, 2.0, eps, 1 - rel, log_count)
    assert out.tolist() == FIGURE_2_F2_FULL


def test_curves_1_to_4096_steps_three_adaptivities(benchmark):
    steps = np.arange(1, 4097)
    out = benchmark(ci_curves, PATTERN1, 0.9999, steps)
    assert out["full"]["optimized"][31] == 67_706


def test_model_update_round_trip(benchmark):
    """What one keystroke in the condition box costs the server: parse, counts, curves, replay."""
    m = CIModel(trace=example_trace())
    conditions = ["n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01", "n - o > 0.03 +/- 0.01 /\\ d < 0.1 +/- 0.01"]
    state = {"i": 0}

    def edit():
        state["i"] ^= 1
        m.condition = conditions[state["i"]]

    benchmark(edit)
    assert m.error == "" and len(m.replay.rows) == 40


def test_evaluate_one_commit(benchmark):
    ev = benchmark(evaluate, PATTERN1, 0.85, 0.8, 0.05)
    assert ev.signal == "pass"


def test_replay_predictions_trace_5509_examples(benchmark):
    trace = example_trace("ci_predictions.csv")
    rep = benchmark(replay_ci, "n - o > 0.018 +/- 0.022", trace, steps=7, reliability=0.998, adaptivity="full",
                    difference_bound=0.1, check_difference_bound=False)
    assert rep.rows[-1]["active"] == "iteration_7"


# --------------------------------------------------------------------------- large commit histories (issue 13)
def _history(size):
    from tests.models.ci_replay_reference import estimates_csv

    return estimates_csv(size, seed=3)


def test_read_100k_commit_trace(benchmark):
    text = _history(100_000)
    trace = benchmark(read_ci_trace, text)
    assert len(trace) == 100_000


def test_replay_100k_commits_vectorized(benchmark):
    """The replay itself: 100,000 commits, every clause evaluated exactly, alarms for all adaptivities."""
    trace = read_ci_trace(_history(100_000))
    plan = ci_labels(PATTERN1, 0.9999, "full", 32)
    rep = benchmark(replay_ci, PATTERN1, trace, plan=plan)
    assert len(rep) == 100_000 and rep.alarms("full")[:2] == [32, 64]


def test_replay_10k_commits_reference_loop(benchmark):
    """The former per-commit loop over fractions (kept as the test reference), for the speed-up figure."""
    from tests.models.ci_replay_reference import replay_rows

    trace = read_ci_trace(_history(10_000))
    cond = parse_condition(PATTERN1)
    rows = benchmark.pedantic(replay_rows, args=(cond, trace), kwargs=dict(mode="fp-free", steps=32, alarm_on="pass",
                                                                            p=0.1), rounds=1, iterations=1)
    assert rows == list(replay_ci(PATTERN1, trace).rows)


def test_model_update_32_clauses(benchmark):
    """The largest condition the parser accepts (32 clauses): what one edit costs on the server's event loop."""
    cond = " /\\ ".join(["n - o > 0.02 +/- 0.01"] * 16 + ["d < 0.1 +/- 0.01"] * 16)
    m = CIModel(trace=example_trace())
    state = {"i": 0}

    def edit():
        state["i"] ^= 1
        m.condition = cond.replace("0.02", "0.03") if state["i"] else cond

    benchmark(edit)
    assert m.error == "" and len(m.result.clauses) == 32
