"""Where long SRGP work runs when a server is waiting: shared worker pools, never the event loop.

* :func:`thread_pool` -- approval procedures on one trace (a few hundred milliseconds at
  most; the integrations spend most of their time in numpy, which releases the GIL), so a
  page can stream each decision as it is made.
* :func:`process_pool` -- the Section 3 simulations (seconds to minutes of Python work),
  in separate processes so another session's requests never wait for the interpreter
  lock.  A ``forkserver`` context with the SRGP package preloaded: forking a worker costs
  milliseconds after the first one.

Both pools are created on first use and shared by every session of the process; nothing
session-specific is kept here.  No Panel, no param.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
from concurrent.futures import Executor

__all__ = ["thread_pool", "process_pool", "running_loop", "PROCESS_WORKERS"]

#: Simulation worker processes (at most two: the machine is shared with the server itself).
PROCESS_WORKERS = max(1, min(2, (os.cpu_count() or 1)))

_lock = threading.Lock()
_pools: dict[str, Executor] = {}


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
    """The shared pool for approval procedures (two threads)."""
    from concurrent.futures import ThreadPoolExecutor

    with _lock:
        if "threads" not in _pools:
            _pools["threads"] = ThreadPoolExecutor(max_workers=2, thread_name_prefix="approve")
        return _pools["threads"]


def process_pool():
    """The shared pool for the simulations (:data:`PROCESS_WORKERS` processes)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with _lock:
        pool = _pools.get("processes")
        if pool is None or getattr(pool, "_broken", False):
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            if "forkserver" in methods:
                context.set_forkserver_preload(["meter_dashboard.bounds.srgp"])
            pool = ProcessPoolExecutor(max_workers=PROCESS_WORKERS, mp_context=context)
            _pools["processes"] = pool
            atexit.register(_shutdown, pool)
        return pool


def _shutdown(pool) -> None:
    """Stop the worker processes before the interpreter tears down the modules they need."""
    pool.shutdown(wait=True, cancel_futures=True)
