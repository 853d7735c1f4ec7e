"""Speed of P(A>B) (figures to report, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_compare.py --benchmark-enable
"""
from __future__ import annotations

import asyncio

import numpy as np

import meter_dashboard.comparison.model as mc
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


def test_compare_a_billion_resamples(benchmark):
    # the bootstrap draws the replicates' histogram at once: the cost does not grow with K
    a, b = RNG.normal(0.91, 0.004, 30), RNG.normal(0.908, 0.004, 30)
    r = benchmark(mc.compare, a, b, resamples=10**9)
    assert r.counts.sum() == 10**9


def test_compare_a_million_runs(benchmark):
    a, b = RNG.normal(0.91, 0.004, 1_000_000), RNG.normal(0.908, 0.004, 1_000_000)
    r = benchmark(mc.compare, a, b, resamples=1_000_000)
    assert r.runs == 1_000_000


RUNS_FILE = ("a,b\n" + "\n".join(f"{x:.5f},{y:.5f}" for x, y in zip(RNG.normal(0.9, 0.01, 600_000),
                                                                    RNG.normal(0.9, 0.01, 600_000))) + "\n")


def test_parse_a_10_mib_runs_file(benchmark):
    t = benchmark.pedantic(mc.parse_runs, args=(RUNS_FILE,), rounds=1, iterations=1)
    assert t.a.size == 600_000


def test_event_loop_during_a_large_runs_upload_and_changes(benchmark):
    from tests.benchmarks.test_bench_ladder import max_stall_ms

    model = mc.CompareModel(offload=True)

    async def upload():
        table = await asyncio.to_thread(model.prepare, RUNS_FILE.encode(), "runs.csv")
        model.apply_table(table)
        while model.busy:
            await asyncio.sleep(0.005)
        for gamma in (0.6, 0.7, 0.8):
            model.gamma = gamma
            while model.busy:
                await asyncio.sleep(0.005)
        model.resamples = 1_000_000
        while model.busy:
            await asyncio.sleep(0.005)

    stall = benchmark.pedantic(max_stall_ms, args=(upload,), rounds=1, iterations=1)
    benchmark.extra_info["max_stall_ms"] = round(stall, 1)
    print(f"\nlongest event-loop stall during a {len(RUNS_FILE) / 2**20:.1f} MiB runs upload and changes: {stall:.1f} ms")
    assert model.result.runs == 600_000 and model.result.resamples == 1_000_000


def test_page_update_for_a_gamma_change_on_150k_runs(benchmark):
    # what the server's event loop pays per change on /compare with 150,000 pairs (below OFFLOAD_RUNS)
    from meter_dashboard.comparison.view import Compare

    view = Compare()
    view.__panel__()
    view.model.apply_table(view.model.prepare((RNG.normal(0.9, 0.01, 100_000), RNG.normal(0.899, 0.01, 100_000))))
    values = iter(np.tile([0.6, 0.7], 100_000))

    def change():
        view.model.gamma = float(next(values))

    benchmark(change)
    assert view.model.result.runs == 100_000
