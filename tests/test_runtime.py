"""The one runtime for work off the event loop (issue 21): newest request wins, nothing stale applied, errors said.

Every page, model and service runs its long work through :mod:`meter_dashboard.core.runtime`; these tests pin
its contract without Panel (the pages' own tests drive it through real sessions).
"""
from __future__ import annotations

import asyncio
import threading

import pytest

from meter_dashboard.core import runtime
from meter_dashboard.core.runtime import Latest
from meter_dashboard.core.validation import InputError


def test_without_background_work_is_done_at_once_in_the_caller():
    latest, seen = Latest(), []
    latest.compute(lambda: 2 + 2, seen.append)
    latest.stream(lambda stopped: iter([1, 2, 3]), seen.append)
    assert seen == [4, 1, 2, 3] and not latest.busy


def test_an_input_error_is_the_outcome_not_an_exception():
    latest, seen = Latest(), []

    def bad():
        raise InputError("delta", "in (0, 1)", 2)

    latest.compute(bad, seen.append)
    assert isinstance(seen[0], InputError) and seen[0].parameter == "delta"


def test_background_work_leaves_the_loop_and_the_newest_request_wins():
    loop_thread, work_threads, applied = [], [], []
    gate = threading.Event()

    def work(value):
        work_threads.append(threading.get_ident())
        gate.wait(5)
        return value

    async def go():
        loop_thread.append(threading.get_ident())
        latest = Latest(background=True)
        latest.compute(lambda: work("old"), applied.append)
        await asyncio.sleep(0.05)  # "old" is computing in a worker
        latest.compute(lambda: work("middle"), applied.append)
        latest.compute(lambda: work("new"), applied.append)  # replaces "middle" before it starts
        assert latest.busy and applied == []  # nothing computed on the loop
        gate.set()
        await latest.settled()
        return latest

    latest = asyncio.run(go())
    assert applied == ["new"] and not latest.busy  # "old" finished late and was dropped; "middle" never ran
    assert loop_thread[0] not in work_threads


def test_a_stream_stops_at_its_next_item_when_newer_work_starts():
    applied = []

    def items(stopped, tag):
        for i in range(1000):
            if stopped():
                return
            yield (tag, i)

    async def go():
        latest = Latest(background=True)
        latest.stream(lambda stopped: items(stopped, "a"), applied.append)
        await asyncio.sleep(0.01)
        latest.stream(lambda stopped: items(stopped, "b"), applied.append)
        await latest.settled()

    asyncio.run(go())
    tags = [tag for tag, _ in applied]
    assert tags.count("b") == 1000 and tags[-1] == "b"
    assert "a" not in tags[tags.index("b"):]  # nothing of the older stream after the newer one began


def test_an_unexpected_failure_is_reported_and_the_runtime_keeps_working():
    errors, applied = [], []

    def broken(stopped):
        yield 1
        raise ZeroDivisionError("boom")

    async def go():
        latest = Latest(background=True)
        latest.stream(broken, applied.append, on_error=errors.append)
        await latest.settled()
        latest.compute(lambda: "after", applied.append)
        await latest.settled()

    asyncio.run(go())
    assert applied == [1, "after"] and isinstance(errors[0], ZeroDivisionError)


def test_outcomes_go_through_dispatch():
    scheduled = []

    async def go():
        latest = Latest(background=True)
        latest.dispatch = lambda fn: scheduled.append(fn)  # a page: "run this on the session's next tick"
        seen = []
        latest.compute(lambda: 7, seen.append)
        await latest.settled()
        assert seen == []  # not applied until the page runs it
        for fn in scheduled:
            fn()
        return seen

    assert asyncio.run(go()) == [7]


def test_a_pipeline_runs_on_the_loop_and_is_superseded():
    steps = []

    async def pipeline(stopped, tag):
        for i in range(3):
            if stopped():
                return
            steps.append((tag, await runtime.in_thread(lambda i=i: i)))
            await asyncio.sleep(0.01)

    async def go():
        latest = Latest(background=True)
        latest.run(lambda stopped: pipeline(stopped, "a"))
        await asyncio.sleep(0.015)
        latest.run(lambda stopped: pipeline(stopped, "b"))
        await latest.settled()

    asyncio.run(go())
    assert [s for s in steps if s[0] == "b"] == [("b", 0), ("b", 1), ("b", 2)]
    assert len([s for s in steps if s[0] == "a"]) < 3


def test_configure_zero_does_the_work_on_the_loop():
    try:
        runtime.configure(0)

        async def go():
            return threading.get_ident(), await runtime.in_thread(threading.get_ident)

        here, there = asyncio.run(go())
        assert here == there
    finally:
        runtime.configure(runtime.DEFAULT_THREADS)


@pytest.mark.parametrize("threads", [1, 3])
def test_configure_sizes_the_shared_pool(threads):
    try:
        runtime.configure(threads)
        assert runtime.thread_pool()._max_workers == threads
    finally:
        runtime.configure(runtime.DEFAULT_THREADS)


# --------------------------------------------------------------------------- streaming (issue 32: one runtime)
def _emitting(count, tickets, emit):
    """Emit ``count`` items, each once a ticket is released (a worker thread)."""
    for i in range(count):
        tickets.acquire(timeout=5)
        emit(i)
    return "done"


def test_a_thread_stream_publishes_what_the_worker_emitted_and_quick_work_only_its_result():
    published = []

    async def go(interval):
        return await runtime.in_thread_streaming(_emitting, 3, threading.Semaphore(3), publish=published.append,
                                                 interval=interval)

    assert asyncio.run(go(60.0)) == "done" and published == []  # done within the first interval: no partial
    tickets = threading.Semaphore(0)

    async def stepwise():
        task = asyncio.ensure_future(runtime.in_thread_streaming(_emitting, 3, tickets, publish=published.append,
                                                                 interval=0.0))
        for _ in range(3):  # each item published before the next is computed (the last: only the result)
            tickets.release()
            await asyncio.sleep(0.05)
        return await task

    assert asyncio.run(stepwise()) == "done"
    assert published[:2] == [[0], [0, 1]]  # (the third may come with the result)


def test_a_thread_stream_stops_at_its_next_item_once_stopped():
    flag = {"stop": False}
    tickets = threading.Semaphore(1)

    async def go():
        task = asyncio.ensure_future(runtime.in_thread_streaming(_emitting, 1000, tickets,
                                                                 stopped=lambda: flag["stop"]))
        await asyncio.sleep(0.05)
        flag["stop"] = True
        tickets.release()
        await task

    with pytest.raises(runtime.Superseded):
        asyncio.run(go())


def test_work_in_chunks_publishes_as_it_goes_and_is_superseded():
    published = []

    async def step(state):
        state = 0 if state is None else state
        await asyncio.sleep(0)
        return state + 1, [state]

    state, items = asyncio.run(runtime.in_chunks(step, more=lambda s: s < 4, publish=published.append, interval=0.0))
    assert (state, items) == (4, [0, 1, 2, 3]) and published == [[0], [0, 1], [0, 1, 2]]  # never the last one
    published.clear()
    asyncio.run(runtime.in_chunks(step, more=lambda s: s < 4, publish=published.append, interval=60.0))
    assert published == []
    calls = []

    def stopped():
        calls.append(1)
        return len(calls) > 1

    with pytest.raises(runtime.Superseded):
        asyncio.run(runtime.in_chunks(step, more=lambda s: s < 4, stopped=stopped))


def test_in_process_computes_in_the_worker_process():
    import os

    async def go():
        return await runtime.in_process("tests", os.getpid)

    assert asyncio.run(go()) != os.getpid()
