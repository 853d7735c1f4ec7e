"""Speed of the SRGP approval procedures and simulations (figures to report, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_srgp.py --benchmark-enable
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import meter_dashboard.approvals.model as ap
from meter_dashboard.bounds.srgp import run_procedure, sequential_threshold, simulate_fwer


@pytest.fixture(scope="module")
def refits():
    return ap.load_example("refits")


@pytest.fixture(scope="module")
def adversary():
    return ap.load_example("adversary")


def test_fs_threshold_two_tests(benchmark):
    b = benchmark(sequential_threshold, 0.016, [stats.norm.isf(0.08)], np.array([[1.0, 0.5], [0.5, 1.0]]))
    assert b[0] < stats.norm.isf(0.016)


def test_fs_threshold_seven_dimensions(benchmark):
    corr = np.full((7, 7), 0.6) + 0.4 * np.eye(7)
    priors = [1.405, 2.0, 2.4, 2.8, 3.1, 3.4]
    b, used = benchmark(sequential_threshold, 1e-6, priors, corr, max_conditioning=6)
    assert len(used) == 6 and b < stats.norm.isf(1e-6)


@pytest.mark.parametrize("method", ["bonf-srgp", "fs-srgp", "pres-srgp"])
def test_approve_refits_trace(benchmark, refits, method):
    trace, plan = refits
    r = benchmark(ap.approve, trace, method, prespecified=plan, margin_step=0.01)
    assert len(r.approved) == 15


@pytest.mark.parametrize("method", ["fs-srgp", "pres-srgp"])
def test_approve_adversary_trace_50_tests(benchmark, adversary, method):
    trace, plan = adversary
    r = benchmark.pedantic(ap.approve, args=(trace, method), kwargs=dict(prespecified=plan), rounds=1,
                           iterations=1)
    assert r.approvals == 0


def test_compare_all_procedures_refits(benchmark, refits):
    trace, plan = refits
    c = benchmark(ap.compare, trace, prespecified=plan, margin_step=0.01)
    assert len(c.results) == 6


def test_fwer_simulation_one_replicate_all_procedures(benchmark):
    res = benchmark.pedantic(simulate_fwer, kwargs=dict(replicates=1, steps=50, seed=0), rounds=1, iterations=1)
    assert res.completed == 1


def test_run_procedure_bonferroni_family_1000_tests(benchmark):
    rng = np.random.default_rng(0)
    d = rng.standard_normal((200, 1000)) - 0.5
    out = benchmark(run_procedure, d, "bonf-srgp")
    assert out["approved"].sum() == 0


# --------------------------------------------------------------------------- issue 13 figures (in-process)
def test_joint_tail_one_probability_seven_dimensions(benchmark):
    from meter_dashboard.bounds.srgp.normal import JointTail

    corr = np.full((7, 7), 0.6) + 0.4 * np.eye(7)
    tail = JointTail([1.405, 2.0, 2.4, 2.8, 3.1, 3.4], corr, reference=4.5)
    value = benchmark(tail.log_probability, 4.5)
    assert value < 0


def test_fs_threshold_cold_seven_dimensions(benchmark):
    # a new seed each round: no cached threshold, the whole root find (about four integrations)
    corr = np.full((7, 7), 0.6) + 0.4 * np.eye(7)
    priors = [1.405, 2.0, 2.4, 2.8, 3.1, 3.4]
    seeds = iter(range(10 ** 6))
    b, used = benchmark(lambda: sequential_threshold(1e-6, priors, corr, seed=next(seeds)))
    assert len(used) == 6


@pytest.mark.parametrize("example", ["refits", "adversary"])
@pytest.mark.parametrize("method", ["fs-srgp", "pres-srgp"])
def test_model_alpha_change_all_decisions(benchmark, example, method):
    # what an alpha change costs the chosen procedure (no cache hit: a new alpha every round)
    model = ap.ApproveModel(example=example, method=method, compare_active=False)
    alphas = iter(0.05 + 1e-4 * k for k in range(10 ** 6))

    def change():
        model.alpha = next(alphas)
        return model.result

    result = benchmark.pedantic(change, rounds=3, iterations=1)
    assert result.complete


def test_model_alpha_back_to_a_seen_value_is_cached(benchmark):
    model = ap.ApproveModel(example="adversary", method="pres-srgp", compare_active=False)
    model.alpha = 0.05
    values = iter([0.1, 0.05] * 10 ** 5)

    def change():
        model.alpha = next(values)
        return model.result

    assert benchmark(change).complete


def test_cli_approve_start_up(benchmark):
    # issue 13: `approve` start-up 1.32 s -> <= 0.8 s (scipy.stats no longer imported: python -X importtime)
    import subprocess
    import sys
    from importlib import resources

    path = str(resources.files("meter_dashboard") / "data" / "approve_refits.csv")

    def run():
        return subprocess.run([sys.executable, "-m", "meter_dashboard", "approve", path, "--method", "bonf-srgp"],
                              capture_output=True, text=True, timeout=120)

    proc = benchmark.pedantic(run, rounds=5, iterations=1)
    assert proc.returncode == 0 and "3 of 15 approved" in proc.stdout
