"""SessionExecutor: one session's events in order under a document hold, sessions in parallel (issue 13)."""
from __future__ import annotations

import functools
import threading
import time

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource

from meter_dashboard.app.workers import SessionExecutor, document_of, use_session_threads


class _Periodic:
    """Stands for Panel's PeriodicCallback: a bound method whose owner knows its document."""

    def __init__(self, doc):
        self._doc = doc

    def _exec_callback(self):
        return pn.state.curdoc


def test_document_of_finds_the_document_panel_passes():
    doc = Document()
    assert document_of(print, (doc, "event")) is doc
    assert document_of(functools.partial(print, doc, 1), ()) is doc
    assert document_of(functools.partial(functools.partial(print, 1), doc), ()) is doc
    assert document_of(_Periodic(doc)._exec_callback, ()) is doc
    assert document_of(print, (1, "x")) is None


def test_one_session_runs_in_order_one_task_at_a_time():
    doc = Document()
    seen, running, overlaps = [], [0], []
    lock = threading.Lock()

    def task(i):
        with lock:
            running[0] += 1
            overlaps.append(running[0])
        time.sleep(0.005)
        seen.append(i)
        with lock:
            running[0] -= 1
        return i

    with SessionExecutor(4) as pool:
        futures = [pool.submit(task_for_doc, doc, task, i) for i in range(40)]
        assert [f.result(timeout=30) for f in futures] == list(range(40))
    assert seen == list(range(40))
    assert max(overlaps) == 1


def task_for_doc(doc, fn, i):
    """Panel's shape: the document first."""
    assert pn.state.curdoc is doc  # the worker runs with the session's document current
    return fn(i)


def test_sessions_run_in_parallel():
    docs = [Document(), Document()]
    started = threading.Barrier(2, timeout=10)

    def meet(doc):
        started.wait()  # both sessions' tasks must be running at the same time to pass
        return doc

    with SessionExecutor(2) as pool:
        futures = [pool.submit(meet, doc) for doc in docs]
        assert [f.result(timeout=20) for f in futures] == docs


def test_changes_made_in_a_worker_are_held_for_the_event_loop():
    doc = Document()
    source = ColumnDataSource(data={"x": [1]})
    doc.add_root(source)
    events = []
    doc.on_change(lambda event: events.append(event))

    def change(doc):
        source.data = {"x": [1, 2]}
        return doc.callbacks.hold_value

    with SessionExecutor(2) as pool:
        held = pool.submit(change, doc).result(timeout=20)
    assert held == "combine"  # the change was collected while the task ran, not sent from the worker


def test_exceptions_reach_the_future_and_the_queue_goes_on():
    doc = Document()

    def boom(doc):
        raise ValueError("bad")

    with SessionExecutor(2) as pool:
        failed = pool.submit(boom, doc)
        after = pool.submit(lambda d: "next", doc)
        with pytest.raises(ValueError, match="bad"):
            failed.result(timeout=20)
        assert after.result(timeout=20) == "next"
        assert pool.pending() == 0


def test_tasks_without_a_document_run_as_in_a_plain_pool():
    with SessionExecutor(2) as pool:
        assert pool.submit(sum, [1, 2, 3]).result(timeout=20) == 6


def test_use_session_threads_installs_the_executor_and_removes_it():
    try:
        use_session_threads(3)
        assert isinstance(pn.state._thread_pool, SessionExecutor)
        assert pn.config.nthreads == 3
        use_session_threads(3)  # idempotent
        assert isinstance(pn.state._thread_pool, SessionExecutor)
    finally:
        use_session_threads(0)
    assert pn.state._thread_pool is None and pn.config.nthreads is None
