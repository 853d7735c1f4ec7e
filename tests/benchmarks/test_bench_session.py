"""Benchmarks of the session replay: reading a large trace, replaying it, loading it into the model.

Run with ``python -m pytest tests/benchmarks/test_bench_session.py --benchmark-enable``; the suite
runs them once as tests (``--benchmark-disable``).
"""
from __future__ import annotations

import numpy as np
import pytest

from meter_dashboard.models.session import SessionModel, replay
from meter_dashboard.models.trace import MAX_TRACE_BYTES, read_trace

FIG3 = dict(ranges=[0, 0.005, 0.01, 0.02, 0.05, 1], epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.1)
STEPS = 50_000


@pytest.fixture(scope="module")
def big_csv() -> bytes:
    """A 50,000-step trace with three tenants and about 5% reverted steps (about 2 MB)."""
    rng = np.random.default_rng(7)
    val = np.round(rng.uniform(0.7, 0.95, STEPS), 4)
    test = np.round(np.clip(val - np.abs(rng.normal(0, 0.02, STEPS)), 0, 1), 4)
    tenants = rng.choice(["alice", "bob", "carol"], STEPS)
    reverted = rng.random(STEPS) < 0.05
    lines = ["step,val_accuracy,test_accuracy,tenant,reverted,description"]
    lines += [f"{i + 1},{v},{t},{w},{'true' if r else 'false'},tuned" for i, (v, t, w, r)
              in enumerate(zip(val, test, tenants, reverted))]
    data = ("\n".join(lines) + "\n").encode()
    assert len(data) < MAX_TRACE_BYTES
    return data


def test_bench_read_large_csv(benchmark, big_csv):
    trace = benchmark(read_trace, big_csv)
    assert len(trace) == STEPS and set(trace.tenant_names) == {"alice", "bob", "carol"}


def test_bench_replay_large_trace(benchmark, big_csv):
    trace = read_trace(big_csv)
    result = benchmark(replay, trace, steps=STEPS, tenant_steps=[20_000, 20_000, 10_000], **FIG3)
    assert len(result) == STEPS
    assert np.all(result.incremental_signal >= result.signal)


def test_bench_session_load_example(benchmark):
    model = SessionModel()

    def load():
        model.load_example("synthetic_overfitting")
        model.load_example("emocontext")

    benchmark(load)
    assert model.current["step"] == 8 and model.current["incremental_signal"] == 3
