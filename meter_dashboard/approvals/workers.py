"""Where long SRGP work runs when a server is waiting: worker processes (and threads), never the event loop.

* :func:`process_pool` ``("procedures")`` -- fsSRGP and presSRGP on a trace, in chunks of
  about a tenth of a second, so a page can show each decision as it comes and drop work a
  newer setting made pointless; ``("simulations")`` -- the Section 3 simulations, chunks
  of replicates.  Separate processes: the server's interpreter only waits for them, so no
  other session's request ever queues behind this work for the interpreter lock.  A
  ``forkserver`` context with the SRGP modules preloaded: after the first start, a worker
  costs milliseconds.  The workers run at a lower priority (:data:`NICENESS`), so the
  server's own requests come first.  :func:`warm_up` starts both pools ahead of use and
  :func:`process_pool_ready` says when they can take work at once.
* :func:`thread_pool` -- what is quick (the Bonferroni-type procedures, milliseconds), and
  everything while the processes are still starting.

The pools are shared by every session of the process; nothing session-specific is kept
here.  No Panel, no param; asyncio, concurrent.futures and multiprocessing are imported
only when used (the CLI never pays for them).
"""
from __future__ import annotations

import atexit
import os
import sys
import threading

__all__ = ["thread_pool", "process_pool", "process_pool_ready", "warm_up", "running_loop", "PRELOAD", "NICENESS"]

#: Modules every worker process imports once (in the fork server), before any job.
PRELOAD = ["meter_dashboard.bounds.srgp", "meter_dashboard.approvals.model"]

_lock = threading.Lock()
_pools: dict = {}
_ready: set = set()


def running_loop():
    """The asyncio loop running in this thread (a served page), or ``None`` (notebook, CLI, tests).

    Without asyncio imported no loop can be running: the CLI never pays for importing it.
    """
    if "asyncio" not in sys.modules:
        return None
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def thread_pool():
    """The shared pool for quick work (two threads)."""
    from concurrent.futures import ThreadPoolExecutor

    with _lock:
        if "threads" not in _pools:
            _pools["threads"] = ThreadPoolExecutor(max_workers=2, thread_name_prefix="approve")
        return _pools["threads"]


def process_pool(kind: str = "simulations"):
    """The shared worker process for ``kind`` (``"procedures"`` or ``"simulations"``): one process each."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with _lock:
        pool = _pools.get(kind)
        if pool is None or getattr(pool, "_broken", False):
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            if "forkserver" in methods:
                context.set_forkserver_preload(PRELOAD)
            pool = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_lower_priority)
            _pools[kind] = pool
            _ready.discard(kind)
            atexit.register(_shutdown, pool)
        return pool


#: Worker processes run at this niceness: the server process (every session's requests) comes first.
NICENESS = 10


def _lower_priority() -> None:
    """In each worker process: yield the CPU to the server when both want it."""
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # not available (Windows) or not allowed: keep the priority
        pass


def _started() -> int:
    return os.getpid()


def warm_up() -> None:
    """Start both worker processes in a background thread: the caller (an event loop) never waits.

    Starting the fork server and preloading the modules takes a second or two; until then
    :func:`process_pool_ready` is false and the work goes to the thread pool.
    """
    with _lock:
        if "warming" in _pools:
            return
        _pools["warming"] = threading.Thread(target=_warm, name="approve-warm-up", daemon=True)
    _pools["warming"].start()


def _warm() -> None:
    for kind in ("procedures", "simulations"):
        try:
            process_pool(kind).submit(_started).result()
        except Exception:  # noqa: BLE001 - no worker processes here: the thread pool does the work
            continue
        _ready.add(kind)


def process_pool_ready(kind: str) -> bool:
    """Whether the worker process for ``kind`` has started (after :func:`warm_up`)."""
    return kind in _ready


def _shutdown(pool) -> None:
    """Stop the worker processes before the interpreter tears down the modules they need."""
    pool.shutdown(wait=True, cancel_futures=True)
