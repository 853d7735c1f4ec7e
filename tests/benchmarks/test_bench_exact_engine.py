"""Issue 18's table at the bounds level: the exact binomial engine's speed (figures, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_exact_engine.py --benchmark-enable
(without it each benchmark runs once as a smoke test, except the full exact curve, which runs
only when benchmarks are enabled).  Report the machine's load average (``uptime``) beside them.

"cold" empties the engine's caches first (:func:`meter_dashboard.bounds.binomial.clear_cache`:
the factors per (n, eps) and the counts per union bound); "cached" asks again in the same
process.  The setting is the paper's (ease.ml/meter Sec 5.1): m = 5, eps = 0.01..0.05,
delta = 0.01, T = 10.

| issue 18's line | benchmark |
|---|---|
| every variant, cold / cached | ``test_plan_all_variants_cold`` / ``_cached`` |
| with ``max_error_rate=0.1``, cold | ``test_plan_known_error_rate_cold`` |
| smallest eps at a given n | ``test_smallest_epsilon_at_a_budget_cold`` |
| exact curve T = 1..1000, all variants | ``test_exact_curve_T_1_to_1000_all_variants_cold`` |
| Hoeffding's ``plan`` start-up (no scipy) | ``test_hoeffding_plan_process`` vs ``test_numpy_import_process`` |
| ``plan --bound binomial`` whole process | ``test_binomial_plan_process`` |
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from meter_dashboard.bounds import binomial as B
from meter_dashboard.bounds import meter as M

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]
PLAN = ["plan", "--epsilon", "0.01,0.02,0.03,0.04,0.05", "--delta", "0.01", "--steps", "10"]


def _cold(fn, *args, **kwargs):
    B.clear_cache()
    return fn(*args, **kwargs)


def test_plan_all_variants_cold(benchmark):
    out = benchmark.pedantic(_cold, args=(M.all_labels, NONUNIFORM, 0.01, 10), kwargs=dict(bound="binomial"),
                             rounds=10, iterations=1)
    assert out == {"single_model": 16_651, "no_adaptivity": 27_151, "resampling": 271_510, "regular": 86_501,
                   "incremental": 27_151}


def test_plan_all_variants_cached(benchmark):
    M.all_labels(NONUNIFORM, 0.01, 10, bound="binomial")
    out = benchmark(M.all_labels, NONUNIFORM, 0.01, 10, bound="binomial")
    assert out["regular"] == 86_501


def test_plan_known_error_rate_cold(benchmark):
    out = benchmark.pedantic(_cold, args=(M.all_labels, NONUNIFORM, 0.01, 10),
                             kwargs=dict(bound="binomial", max_error_rate=0.1), rounds=10, iterations=1)
    assert out["incremental"] == 9_801 and out["regular"] == 31_351


def test_smallest_epsilon_at_a_budget_cold(benchmark):
    """The smallest eps_1 60,000 labels support with the regular meter (the last note's 0.56 s figure)."""
    value = benchmark.pedantic(_cold, args=(M.min_epsilon, "regular", 60_000, NONUNIFORM, 0.01, 10),
                               kwargs=dict(bound="binomial"), rounds=5, iterations=1)
    assert 0.012 < value < 0.0121


def test_largest_steps_and_confidence_at_a_budget_cold(benchmark):
    def answers():
        return [(M.max_steps(v, 60_000, NONUNIFORM, 0.01, bound="binomial"),
                 M.failure_probability(v, 60_000, NONUNIFORM, 10, bound="binomial")) for v in M.VARIANTS]

    out = benchmark.pedantic(_cold, args=(answers,), rounds=5, iterations=1)
    assert out[4][0] >= 10


def test_exact_curve_all_variants_but_regular_cold(benchmark):
    """T = 1..1000 for single_model, no_adaptivity, resampling and incremental (counts 16,651..48,851)."""
    out = benchmark.pedantic(_cold, args=(M.exact_curve, NONUNIFORM, 0.01, np.arange(1, 1001)),
                             kwargs=dict(variants=("single_model", "no_adaptivity", "resampling", "incremental")),
                             rounds=1, iterations=1)
    assert out["incremental"][-1] == 48_851


def test_exact_curve_T_1_to_1000_all_variants_cold(benchmark):
    """Every variant's exact count at every T = 1..1000 (the regular meter's reach 8 million labels)."""
    if benchmark.disabled:
        pytest.skip("seconds: run with --benchmark-enable")
    out = benchmark.pedantic(_cold, args=(M.exact_curve, NONUNIFORM, 0.01, np.arange(1, 1001)), rounds=1,
                             iterations=1)
    assert out["incremental"][9] == 27_151 and out["regular"][-1] == 8_041_501


def _process(args):
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_numpy_import_process(benchmark):
    """The floor of every start-up: a Python process that imports numpy."""
    benchmark.pedantic(_process, args=(["-c", "import numpy"],), rounds=5, iterations=1)


def test_hoeffding_plan_process(benchmark):
    """``meter-dashboard plan`` with Hoeffding's bound, whole process (no scipy on this path)."""
    out = benchmark.pedantic(_process, args=(["-m", "meter_dashboard", *PLAN],), rounds=5, iterations=1)
    assert "38,005" in out


def test_hoeffding_bounds_import_and_plan(benchmark):
    """The bounds alone: import the meter's engine and plan every variant (Hoeffding), whole process."""
    code = "import meter_dashboard.bounds.meter as m; m.all_labels([0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 10)"
    benchmark.pedantic(_process, args=(["-c", code],), rounds=5, iterations=1)


def test_binomial_plan_process(benchmark):
    """``meter-dashboard plan ... --bound binomial``, whole process (scipy loaded lazily by the exact path)."""
    out = benchmark.pedantic(_process, args=(["-m", "meter_dashboard", *PLAN, "--bound", "binomial"],), rounds=5,
                             iterations=1)
    assert "27,151" in out


def test_exact_curve_T_1_to_1000_process(benchmark):
    """The exact curve of every variant in a fresh process (imports and scipy included): the CLI's figure, less its layers."""
    if benchmark.disabled:
        pytest.skip("seconds: run with --benchmark-enable")
    code = ("import numpy as np, meter_dashboard.bounds.meter as m\n"
            "out = m.exact_curve([0.01, 0.02, 0.03, 0.04, 0.05], 0.01, np.arange(1, 1001))\n"
            "print(int(out['regular'][-1]))")
    out = benchmark.pedantic(_process, args=(["-c", code],), rounds=1, iterations=1)
    assert out.strip() == "8041501"
