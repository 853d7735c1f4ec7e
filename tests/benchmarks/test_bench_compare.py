"""Speed of P(A>B) (figures to report, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_compare.py --benchmark-enable
"""
from __future__ import annotations

import numpy as np

import meter_dashboard.models.compare as mc
from meter_dashboard.bounds import compare as C

RNG = np.random.default_rng(0)


def test_compare_30_runs_10k_resamples(benchmark):
    a, b = RNG.normal(0.91, 0.004, 30), RNG.normal(0.908, 0.004, 30)
    r = benchmark(mc.compare, a, b)
    assert r.runs == 30


def test_compare_10k_runs_100k_resamples(benchmark):
    a, b = RNG.normal(0.91, 0.004, 10_000), RNG.normal(0.908, 0.004, 10_000)
    r = benchmark(mc.compare, a, b, resamples=100_000)
    assert r.runs == 10_000


def test_noether_curve_1000_gammas(benchmark):
    g = np.linspace(0.51, 0.99, 1000)
    runs = benchmark(C.noether_runs, 0.05, 0.05, g)
    assert runs.shape == (1000,)


def test_compare_model_update_on_gamma_change(benchmark):
    m = mc.CompareModel()
    values = iter(np.tile([0.7, 0.8], 100_000))

    def change():
        m.gamma = float(next(values))

    benchmark(change)
    assert m.error == ""
