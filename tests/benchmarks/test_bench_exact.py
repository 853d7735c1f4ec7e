"""Speed of the exact binomial bound, the engine's memory on long curves, and the simulation (figures, not asserts).

Run with:  python -m pytest tests/benchmarks/test_bench_exact.py --benchmark-enable
(without it each benchmark runs once, as a smoke test).
"""
from __future__ import annotations

import tracemalloc

import numpy as np

from meter_dashboard.bounds import binomial as B
from meter_dashboard.bounds import meter as M
from meter_dashboard.bounds import meter_simulation as S

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]


def _cold(fn, *args, **kwargs):
    B.clear_cache()
    return fn(*args, **kwargs)


def test_exact_plan_all_variants_cold(benchmark):
    """One exact plan (m = 5, T = 10, delta = 0.01), every variant, nothing cached."""
    out = benchmark.pedantic(_cold, args=(M.all_labels, NONUNIFORM, 0.01, 10), kwargs=dict(bound="binomial"),
                             rounds=5, iterations=1)
    assert out["regular"] == 86_501 and out["incremental"] == 27_151


def test_exact_plan_all_variants_cached(benchmark):
    """The same plan again (the planner re-asking after an unrelated change): factors come from the cache."""
    M.all_labels(NONUNIFORM, 0.01, 10, bound="binomial")
    out = benchmark(M.all_labels, NONUNIFORM, 0.01, 10, bound="binomial")
    assert out["single_model"] == 16_651


def test_exact_plan_known_error_rate_cold(benchmark):
    out = benchmark.pedantic(_cold, args=(M.all_labels, NONUNIFORM, 0.01, 10),
                             kwargs=dict(bound="binomial", max_error_rate=0.1), rounds=5, iterations=1)
    assert out["regular"] == 31_351


def test_exact_single_model_count_cold(benchmark):
    assert benchmark.pedantic(_cold, args=(B.smallest_labels, [0.0], ["0.01"], 0.01), rounds=5, iterations=1) == 16_651


def test_exact_factor_one_n_cold(benchmark):
    value = benchmark.pedantic(_cold, args=(B.log_tail_factor, 86_501, "0.01"), rounds=5, iterations=1)
    assert value < 0


def test_exact_factor_band_of_128_n_cold(benchmark):
    """128 neighbouring test-set sizes in one batch (what a count certifies)."""
    values = benchmark.pedantic(_cold, args=(B.log_tail_factor, np.arange(86_400, 86_528), "0.01"), rounds=3,
                                iterations=1)
    assert values.shape == (128,)


def test_exact_regular_count_large_T_cold(benchmark):
    """T = 300 steps of the regular meter: about 2.4 million labels."""
    n = benchmark.pedantic(_cold, args=(M.labels, "regular", NONUNIFORM, 0.01, 300), kwargs=dict(bound="binomial"),
                           rounds=1, iterations=1)
    assert n < M.labels("regular", NONUNIFORM, 0.01, 300)


def test_exact_curve_incremental_T_1_to_100_cold(benchmark):
    curve = benchmark.pedantic(_cold, args=(M.labels, "incremental", NONUNIFORM, 0.01, np.arange(1, 101)),
                               kwargs=dict(bound="binomial"), rounds=1, iterations=1)
    assert np.all(np.diff(curve) >= 0)


def test_exact_curve_all_variants_T_1_to_20_cold(benchmark):
    out = benchmark.pedantic(_cold, args=(M.all_labels, NONUNIFORM, 0.01, np.arange(1, 21)),
                             kwargs=dict(bound="binomial"), rounds=1, iterations=1)
    assert out["regular"][9] == 86_501


def test_exact_min_epsilon_cold(benchmark):
    value = benchmark.pedantic(_cold, args=(M.min_epsilon, "regular", 60_000, NONUNIFORM, 0.01, 10),
                               kwargs=dict(bound="binomial"), rounds=1, iterations=1)
    assert 0 < value < 0.0125


def _curve_with_memory():
    tracemalloc.start()
    try:
        out = M.all_labels(np.linspace(0.01, 0.05, 50), 0.01, np.arange(1, 100_001))
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_engine_curve_T_1_to_100000_m_50(benchmark):
    """Issue 13: was 4.5 s and 1.47 GiB (every variant widened to m columns); peak bytes in extra_info."""
    out, peak = benchmark.pedantic(_curve_with_memory, rounds=1, iterations=1)
    benchmark.extra_info["peak_MiB"] = round(peak / 2**20, 1)
    assert out["regular"].shape == (100_000,)


def test_simulation_reference_setting(benchmark):
    """The naive count (3,745 labels) against the adversary, m = 3, T = 10, 1,024 replicates."""
    r = benchmark.pedantic(S.simulate, args=(3745, [0.02, 0.04, 0.06], 10), kwargs=dict(replicates=1024, seed=0),
                           rounds=1, iterations=1)
    benchmark.extra_info["failure_rate"] = r.failure_rate
    assert r.failure_rate > 0.1


def test_simulation_planned_regular_count(benchmark):
    n = M.labels("regular", [0.02, 0.04, 0.06], 0.1, 10)
    r = benchmark.pedantic(S.simulate, args=(n, [0.02, 0.04, 0.06], 10), kwargs=dict(replicates=1024, seed=0),
                           rounds=1, iterations=1)
    assert r.failure_rate <= 0.1
