"""Speed of the planner's model under the exact binomial bound (issue 12): figures to report, never asserted.

Run with:  python -m pytest tests/benchmarks/test_bench_plan.py --benchmark-enable
Without --benchmark-enable each runs once as a smoke test, except the exact curve over
T = 1..1000 (seconds with the engine of issue 18), which runs only when benchmarks are enabled.

"cold" clears both caches first (the engine's factors, :func:`meter_dashboard.bounds.binomial.clear_cache`,
and the planner's exact counts, :func:`meter_dashboard.meter.stages.clear_cache`).
"""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

import meter_dashboard as md
from meter_dashboard.bounds import binomial as B
from meter_dashboard.bounds import meter as M
from meter_dashboard.meter import stages as plan_stages
from meter_dashboard.meter.model import MeterPlan, curve

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]


def _cold(fn, *args, **kwargs):
    B.clear_cache()
    plan_stages.clear_cache()
    return fn(*args, **kwargs)


def test_exact_plan_all_variants_cold(benchmark):
    """md.plan at the paper's setting (m = 5, T = 10, delta = 0.01), every variant, exact counts, nothing cached."""
    r = benchmark.pedantic(_cold, args=(md.plan, NONUNIFORM, 0.01, 10), kwargs=dict(bound="binomial"), rounds=5,
                           iterations=1)
    assert r.labels["incremental"] == 27_151 and r.labels["regular"] == 86_501


def test_exact_plan_all_variants_cached(benchmark):
    md.plan(NONUNIFORM, 0.01, 10, bound="binomial")
    r = benchmark(md.plan, NONUNIFORM, 0.01, 10, bound="binomial")
    assert r.labels["single_model"] == 16_651


def test_exact_plan_known_error_rate_cold(benchmark):
    """With max_error_rate: the planned counts plus the counts and confidences without the range."""
    r = benchmark.pedantic(_cold, args=(md.plan, NONUNIFORM, 0.01, 10),
                           kwargs=dict(bound="binomial", max_error_rate=0.1), rounds=5, iterations=1)
    assert r.labels["incremental"] == 9_801 and r.unrestricted_labels["incremental"] == 27_151


def test_exact_plan_with_budget_answers_cold(benchmark):
    """The inverse questions (largest T, smallest eps_1, confidence) under the exact bound."""
    r = benchmark.pedantic(_cold, args=(md.plan, NONUNIFORM, 0.01, 10),
                           kwargs=dict(bound="binomial", budget=50_000), rounds=1, iterations=1)
    assert r.max_steps["incremental"] >= 10


def test_planner_model_answers_a_change_with_exact_counts_and_the_rest_deferred(benchmark):
    """What the server does on the event loop for a delta change under the exact bound (issue 18): every
    variant's exact count in one search of the engine (milliseconds); budget answers and curves go to a thread."""
    md.plan(NONUNIFORM, 0.01, 10, bound="binomial")  # the engine's module loaded, as a served page does ahead

    async def go():
        p = MeterPlan(epsilon=NONUNIFORM, delta=0.01, steps=10, budget=50_000, exact_points=2)
        p.work_in_background()  # a served page: the slow parts go to the runtime's worker threads
        p.bound = "binomial"
        values = iter(np.linspace(0.011, 0.09, 10_000))
        benchmark(lambda: setattr(p, "delta", float(next(values))))
        r = p.result
        assert not r.is_pending("labels", "incremental") and r.is_pending("budget", "incremental")
        assert r.labels["incremental"] == M.labels("incremental", NONUNIFORM, r.delta, 10, bound="binomial")
        p._latest.cancel()

    asyncio.run(go())


def test_exact_curve_T_1_to_1000_all_variants_cold(benchmark):
    """Every variant's exact count at every T = 1..1000 (the CLI's ``--steps 1:1000 --bound binomial``)."""
    if benchmark.disabled:
        pytest.skip("seconds with the engine of issue 18: run with --benchmark-enable")
    out = benchmark.pedantic(_cold, args=(curve, NONUNIFORM, 0.01, np.arange(1, 1001)),
                             kwargs=dict(bound="binomial"), rounds=1, iterations=1)
    assert out["incremental"][9] == 27_151 and np.all(np.diff(out["incremental"]) >= 0)


def test_exact_curve_T_1_to_1000_incremental_cold(benchmark):
    """The recommended variant alone over T = 1..1000 (the regular meter's counts reach 8 million labels)."""
    if benchmark.disabled:
        pytest.skip("seconds with the engine of issue 18: run with --benchmark-enable")
    out = benchmark.pedantic(_cold, args=(curve, NONUNIFORM, 0.01, np.arange(1, 1001)),
                             kwargs=dict(bound="binomial", variants=("incremental",)), rounds=1, iterations=1)
    assert out["incremental"][-1] == 48_851
