"""Speed of the Ladder (figures to report, never asserted).

Run with:  python -m pytest tests/benchmarks/test_bench_ladder.py --benchmark-enable
"""
from __future__ import annotations

import asyncio

import numpy as np
import param

import meter_dashboard.leaderboard.model as ml
from meter_dashboard.bounds import ladder as L

RNG = np.random.default_rng(0)
BIG = (RNG.random((10_000, 50)) < np.linspace(0.3, 0.2, 50)).astype(float)   # n = 10,000, k = 50, 0/1 losses


def test_replay_parameter_free_10k_examples_50_submissions(benchmark):
    r = benchmark(L.replay, BIG)
    assert r.scores.shape == (50,)


def test_replay_fixed_step_10k_examples_50_submissions(benchmark):
    r = benchmark(L.replay, BIG, 0.01)
    assert r.improved[0]


def test_read_the_shipped_loss_file(benchmark):
    t = benchmark(ml.load_example, "ladder_leaderboard.csv")
    assert t.examples == 2000


def test_lemma4_labels_curve_over_10k_submission_counts(benchmark):
    k = np.arange(1, 10_001)
    n = benchmark(L.labels, 0.05, 0.05, k, 0.05)
    assert n[99] == 40_343


def test_best_step(benchmark):
    eta, eps, n = benchmark(L.best_step, 0.1, 100, 0.05)
    assert n < 40_343


def test_boosting_attack_n4000_k400_one_trial(benchmark):
    # the target: n = 4,000 and k up to 400 in seconds
    c = benchmark.pedantic(L.boosting_attack, args=(4000, 400), kwargs={"seed": 0, "trials": 1}, rounds=3,
                           iterations=1)
    assert c.done == 400


def test_boosting_attack_page_default_five_trials(benchmark):
    r = benchmark.pedantic(ml.boosting_attack, args=(4000, 400), kwargs={"seed": 0, "trials": 5}, rounds=1,
                           iterations=1)
    assert r.complete


# --------------------------------------------------------------------------- issue 13: the event loop stays free
# The figure to read is extra_info["max_stall_ms"]: the longest time a 2 ms heartbeat on the same event loop
# waited while the work ran (what every other session on the server would wait).  Reported, never asserted.
def max_stall_ms(work) -> float:
    """Run ``await work()`` beside a 2 ms heartbeat; the longest gap beyond 2 ms, in milliseconds."""

    async def main():
        gaps, done = [], asyncio.Event()

        async def heartbeat():
            loop = asyncio.get_running_loop()
            last = loop.time()
            while not done.is_set():
                await asyncio.sleep(0.002)
                now = loop.time()
                gaps.append(now - last - 0.002)
                last = now

        beat = asyncio.ensure_future(heartbeat())
        await asyncio.sleep(0.02)
        await work()
        done.set()
        await beat
        return 1000 * max(gaps)

    return asyncio.run(main())


def test_event_loop_idle_baseline(benchmark):
    """The same heartbeat with nothing else to do: the machine's own noise, to read the figures below against."""

    async def idle():
        await asyncio.sleep(2)

    stall = benchmark.pedantic(max_stall_ms, args=(idle,), rounds=1, iterations=1)
    benchmark.extra_info["max_stall_ms"] = round(stall, 1)
    print(f"\nlongest event-loop stall with nothing to do (baseline): {stall:.1f} ms")


def _loss_file(n, k, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    losses = (rng.random((n, k)) < np.linspace(0.5, 0.2, k)).astype(np.int8)
    lines = [",".join(f"s{j}" for j in range(k))] + [",".join(map(str, row)) for row in losses]
    return ("\n".join(lines) + "\n").encode()


UPLOAD = _loss_file(2000, 2500)          # 10.0 MB: 5,000,000 losses, just under the 10 MiB upload limit


async def _until_idle(model):
    while model.busy:
        await asyncio.sleep(0.005)


def test_parse_a_10_mib_loss_file(benchmark):
    t = benchmark.pedantic(ml.parse_losses, args=(UPLOAD.decode(),), rounds=1, iterations=1)
    assert t.cells == 5_000_000


def test_replay_parameter_free_at_the_offload_threshold(benchmark):
    losses = (RNG.random((500, 500)) < np.linspace(0.5, 0.2, 500)).astype(float)  # 250,000 = OFFLOAD_CELLS
    r = benchmark(L.replay, losses)
    assert r.scores.shape == (500,)


def test_event_loop_during_a_10_mib_upload_and_its_replay(benchmark):
    model = ml.LadderReplayModel(offload=True)

    async def upload():
        table = await asyncio.to_thread(model.prepare, UPLOAD, "big.csv")
        model.apply_table(table)
        await _until_idle(model)
        model.param.update(variant="fixed_step", step=0.02)     # a change on the big table: offloaded too
        await _until_idle(model)

    stall = benchmark.pedantic(max_stall_ms, args=(upload,), rounds=1, iterations=1)
    benchmark.extra_info["max_stall_ms"] = round(stall, 1)
    print(f"\nlongest event-loop stall during a 10 MiB upload, its replay and a step change: {stall:.1f} ms")
    assert model.result.submissions == 2500


def test_event_loop_during_the_page_default_attack(benchmark):
    attack = ml.BoostingAttackModel()            # n = 4,000, k up to 400, 5 trials, as the page runs it on load
    stall = benchmark.pedantic(max_stall_ms, args=(attack.arun,), rounds=1, iterations=1)
    benchmark.extra_info["max_stall_ms"] = round(stall, 1)
    print(f"\nlongest event-loop stall during the boosting attack: {stall:.1f} ms")
    assert attack.result.complete


def test_certified_count(benchmark):
    assert benchmark(L.exact_labels, 0.05, 0.05, 100, 0.05) == 40_343


def test_size_model_change(benchmark):
    s = ml.LadderSizeModel()
    values = iter(np.tile([0.04, 0.05], 100_000))

    def change():
        s.epsilon = float(next(values))

    benchmark(change)
    assert s.error == ""


def test_page_update_for_a_label_bound_change(benchmark):
    # what the server's event loop pays per change on /ladder: model, certified counts, curve, HTML and plot data
    from meter_dashboard.leaderboard.view import Ladder

    view = Ladder(run_attack=False)
    view.__panel__()
    values = iter(np.tile([0.04, 0.05], 100_000))

    def change():
        view.size.epsilon = float(next(values))

    benchmark(change)
    assert view.size.error == ""


def test_page_update_after_a_500_submission_replay(benchmark):
    from meter_dashboard.leaderboard.view import Ladder

    view = Ladder(run_attack=False)
    view.__panel__()
    table = ml.as_table((RNG.random((500, 500)) < np.linspace(0.5, 0.2, 500)).astype(float))
    steps = iter(np.tile([0.01, 0.02], 100_000))

    def change():
        view.replay.param.update(table=table) if view.replay.table is not table else None
        view.replay.param.update(variant="fixed_step", step=float(next(steps)))

    with param.edit_constant(view.replay):
        benchmark(change)
    assert view.replay.result.submissions == 500
