"""Session events on worker threads, safely: the thread pool behind ``meter-dashboard serve --num-threads``.

With ``pn.config.nthreads`` set, Panel hands every session event (a widget change, a click,
an ``onload`` callback, a periodic callback) to a thread pool, so one person's long callback
does not hold the event loop that every other session needs.  Two things make a plain pool
unsafe for the dashboard's views, which update Bokeh models (figures, data sources) directly:

- Bokeh accepts document changes only on the event loop, under the session's lock (from a
  worker thread: ``RuntimeError: _pending_writes should be non-None ...``);
- a plain pool may run two events of the same session at once, or out of order.

:class:`SessionExecutor` runs each task of a session's document inside Panel's
``hold(doc)`` — from a worker thread Panel collects the task's document changes and sends
them from the event loop, under the lock, when the task ends — and runs one session's tasks
one at a time, in the order they came (different sessions run in parallel).  A session thus
sees its events exactly as without threads; the others keep being served meanwhile.
"""
from __future__ import annotations

import functools
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

import panel as pn
from bokeh.document import Document
from panel.io.document import hold
from panel.io.state import set_curdoc

__all__ = ["SessionExecutor", "document_of", "use_session_threads"]


def document_of(fn, args) -> Document | None:
    """The Bokeh document a task submitted by Panel belongs to (None when it belongs to none).

    Panel submits ``fn(doc, ...)``, ``partial(fn, doc, ...)`` or a periodic callback's bound
    method (the callback object knows its document).
    """
    candidates = list(args)
    while isinstance(fn, functools.partial):
        candidates.extend(fn.args)
        fn = fn.func
    owner = getattr(fn, "__self__", None)
    candidates.append(getattr(owner, "_doc", None))
    for value in candidates:
        if isinstance(value, Document):
            return value
    return None


class SessionExecutor(ThreadPoolExecutor):
    """A thread pool that runs one session's tasks in order, one at a time, inside ``hold(doc)``."""

    def __init__(self, max_workers: int):
        super().__init__(max_workers=max_workers, thread_name_prefix="meter-dashboard-session")
        self._queues: dict[Document, deque] = {}
        self._queues_lock = threading.Lock()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        doc = document_of(fn, args)
        if doc is None:
            return super().submit(fn, *args, **kwargs)
        future: Future = Future()
        with self._queues_lock:
            queue = self._queues.get(doc)
            idle = queue is None
            if idle:
                queue = self._queues[doc] = deque()
            queue.append((future, fn, args, kwargs))
        if idle:
            super().submit(self._drain, doc)
        return future

    def pending(self) -> int:
        """Tasks waiting or running, over all sessions (documents with work queued)."""
        with self._queues_lock:
            return sum(len(queue) for queue in self._queues.values())

    def _drain(self, doc: Document) -> None:
        """Run ``doc``'s queued tasks in order until none is left."""
        while True:
            with self._queues_lock:
                queue = self._queues[doc]
                if not queue:
                    del self._queues[doc]
                    return
                future, fn, args, kwargs = queue.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                with set_curdoc(doc), hold(doc):
                    result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to the future, as a plain pool does
                future.set_exception(exc)
            else:
                future.set_result(result)


def use_session_threads(num_threads: int) -> None:
    """Run session events on ``num_threads`` workers (a :class:`SessionExecutor`); 0: on the event loop."""
    wanted = num_threads if num_threads else None
    if pn.config.nthreads != wanted:
        pn.config.nthreads = None  # Panel shuts its pool down (it refuses to replace a running one)
        pn.config.nthreads = wanted
    if wanted and not isinstance(pn.state._thread_pool, SessionExecutor):
        pn.state._thread_pool.shutdown(wait=False)
        pn.state._thread_pool = SessionExecutor(wanted)
