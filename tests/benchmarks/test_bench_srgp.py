"""Speed of the SRGP approval procedures and simulations (figures to report, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_srgp.py --benchmark-enable
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import meter_dashboard.models.approve as ap
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
