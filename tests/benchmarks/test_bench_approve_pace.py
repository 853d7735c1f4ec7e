"""How long /approve computes a link's decisions, against what its first response says (issue 29).

The first response and the live page's lead say "under 1 s / up to N s of computing on this server"
(:class:`meter_dashboard.approvals.text.Pace`).  This times the same computation as a served page
runs it (``ApproveModel(background=True)`` on an event loop: fs/presSRGP in the worker process, in
chunks, decisions published as they come), from the model's creation until its last decision, for
every shipped example and procedure, with a seed no earlier run used (nothing comes from the shared
results).  Figures to report, never asserted; ``extra_info`` holds the bound the page states.

Run with:  python -m pytest tests/benchmarks/test_bench_approve_pace.py --benchmark-enable -s
"""
from __future__ import annotations

import asyncio
import itertools
import time

import pytest

import meter_dashboard.approvals.model as ap
from meter_dashboard.approvals.text import Pace

_SEEDS = itertools.count(1000)


async def _served_computation(example: str, method: str) -> float:
    start = time.perf_counter()
    model = ap.ApproveModel(background=True, example=example, method=method, seed=next(_SEEDS),
                            compare_active=False)
    await model.settled()
    assert model.result is not None and model.result.complete
    return time.perf_counter() - start


@pytest.mark.parametrize("example", ["refits", "adversary"])
@pytest.mark.parametrize("method", list(ap.METHODS))
def test_decisions_within_the_stated_bound(benchmark, example, method):
    asyncio.run(_served_computation(example, "naive"))  # imports are warm (each run starts its worker's chunks anew)
    times: list[float] = []
    benchmark.pedantic(lambda: times.append(asyncio.run(_served_computation(example, method))), rounds=3,
                       iterations=1)
    modifications = ap.load_example(example)[0].modifications
    bound = Pace().seconds(modifications, method)  # the calibrated bound (no measurements of this process)
    benchmark.extra_info.update(bound_seconds=bound, modifications=modifications, slowest_seconds=max(times))
    print(f"\n{example} {method}: slowest {max(times):.3f} s, stated bound {bound:.2f} s")
