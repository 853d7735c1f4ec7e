"""Speed of the meter engine (figures to report, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_meter.py --benchmark-enable
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
from scipy.optimize import brentq

from meter_dashboard.bounds import meter as M
from meter_dashboard.bounds._numeric import log_sum_exp
from meter_dashboard.meter.model import MeterPlan, plan

NONUNIFORM = np.array([0.01, 0.02, 0.03, 0.04, 0.05])
STEPS = np.arange(1, 1001)


def test_one_plan_all_variants(benchmark):
    out = benchmark(M.all_labels, NONUNIFORM, 0.01, 10)
    assert out["regular"] == 100_033


def test_plan_result_object(benchmark):
    r = benchmark(plan, NONUNIFORM, 0.01, 10)
    assert r.labels["incremental"] == 38_005


def test_curve_T_1_to_1000_all_variants(benchmark):
    out = benchmark(M.all_labels, NONUNIFORM, 0.01, STEPS)
    assert out["regular"][9] == 100_033


def _brentq_curve():
    """The reference: solve each T and each variant on its own with scipy.optimize.brentq."""
    log_delta = np.log(0.01)
    out = {v: [] for v in M.VARIANTS}
    for t in STEPS:
        for v in M.VARIANTS:
            if v in ("regular", "incremental"):
                a = np.log(2) + M.log_tree_sizes(v, 5, t)
                b = 2 * NONUNIFORM**2
            else:
                a = np.array([np.log(2) + (np.log(t) if v != "single_model" else 0.0)])
                b = np.array([2 * NONUNIFORM[0] ** 2])

            def f(n, a=a, b=b):
                return log_sum_exp(a - b * n) - log_delta

            root = brentq(f, 1.0, 1e9, xtol=1e-6)
            n = int(np.floor(root)) + 1
            out[v].append(n * t if v == "resampling" else n)
    return out


def test_curve_T_1_to_1000_brentq_reference(benchmark):
    out = benchmark.pedantic(_brentq_curve, rounds=3, iterations=1)
    fast = M.all_labels(NONUNIFORM, 0.01, STEPS)
    for v in M.VARIANTS:
        assert np.array_equal(np.asarray(out[v]), fast[v]), v


def test_planner_model_full_recompute(benchmark):
    p = MeterPlan()
    values = iter(np.linspace(0.001, 0.2, 100_000))

    def change():
        p.delta = float(next(values))

    benchmark(change)
    assert p.error == ""


def _run(args):
    subprocess.run([sys.executable, *args], check=True, capture_output=True)


def test_cli_one_plan_whole_process(benchmark):
    benchmark.pedantic(_run, args=(["-m", "meter_dashboard", "plan", "--epsilon", "0.01,0.02,0.03,0.04,0.05",
                                    "--delta", "0.01", "--steps", "10", "--format", "json"],), rounds=5, iterations=1)


def test_import_numpy_scipy_alone_whole_process(benchmark):
    benchmark.pedantic(_run, args=(["-c", "import numpy, scipy.special, scipy.optimize"],), rounds=5, iterations=1)
