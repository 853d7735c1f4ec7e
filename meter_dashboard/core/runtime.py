"""The one runtime for work off the event loop: every page, model and service uses these few parts.

A served page shares one event loop with every other session of the server, so nothing may hold it
for long (about 50 ms).  Work that may take longer runs here:

- :func:`thread_pool` - the process's worker threads (``meter-dashboard serve --num-threads``, set
  with :func:`configure`), for NumPy/SciPy work and file parsing; :func:`in_thread` awaits a call
  there from the event loop.
- :func:`process_pool` - one worker process per kind of simulation (SRGP procedures, their
  simulations), started ahead of use by :func:`warm_up`, at a lower priority than the server.
- :func:`in_process` awaits a call in a :func:`process_pool`; :func:`in_thread_streaming` awaits a
  call in the threads while the items it emits are published on the loop, at most every so often;
  :func:`in_chunks` awaits work done chunk by chunk (each chunk in a worker), publishing the same
  way; both raise :class:`Superseded` once the work is no longer wanted.
- :class:`Latest` - the newest request wins: a model hands it the work for its current inputs
  (one result, a stream of items, or an asynchronous pipeline); work for inputs changed meanwhile
  stops at its next step and is never applied.  Outcomes reach the model through ``dispatch``: a
  served page sets it to run on the session's next tick under its document lock; notebooks,
  scripts and tests keep the default (run at once).  Without ``background`` (or without a running
  event loop) everything is computed at once, so the same model works everywhere.
- :class:`OffloadedModel` - a param model whose result is computed by a :class:`Latest`.
- :class:`BackgroundJob` - long computations with progress, a time estimate and Cancel
  (simulations, large uploads).

Only documented APIs are used (``asyncio``, ``concurrent.futures``, ``multiprocessing``); no Panel,
so the CLI and notebooks run the same code.  asyncio and the pools are created on first use.
"""
from __future__ import annotations

import atexit
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import param

from .validation import InputError

__all__ = ["configure", "thread_pool", "in_thread", "running_loop", "process_pool", "process_pool_ready",
           "warm_up", "preload", "in_process", "in_thread_streaming", "in_chunks", "Superseded", "Latest", "OffloadedModel", "BackgroundJob", "NICENESS", "DEFAULT_THREADS"]

log = logging.getLogger(__name__)

#: Worker threads unless :func:`configure` says otherwise (``serve --num-threads``).
DEFAULT_THREADS = 4
#: Worker processes run at this niceness: the server process (every session's requests) comes first.
NICENESS = 10

_lock = threading.Lock()
_threads: dict = {"size": DEFAULT_THREADS, "pool": None}
_processes: dict = {}
_ready: set = set()
_preload: list = []
_DONE = object()


# ---------------------------------------------------------------------------------------- threads
def configure(threads: int) -> None:
    """Use ``threads`` worker threads (a running pool is replaced); 0 does the work on the event loop itself."""
    threads = max(0, int(threads))
    with _lock:
        old = _threads["pool"] if threads != _threads["size"] else None
        _threads["size"] = threads
        if old is not None:
            _threads["pool"] = None
    if old is not None:
        old.shutdown(wait=False)


def thread_pool():
    """The process's worker threads (shared by every session; created on first use)."""
    from concurrent.futures import ThreadPoolExecutor

    with _lock:
        if _threads["pool"] is None:
            _threads["pool"] = ThreadPoolExecutor(max_workers=max(1, _threads["size"]),
                                                  thread_name_prefix="meter-dashboard")
        return _threads["pool"]


async def in_thread(function: Callable, *args, **kwargs):
    """Await ``function(*args, **kwargs)`` computed in :func:`thread_pool` (the event loop stays free).

    With ``configure(0)`` the call is made here, on the loop.
    """
    import asyncio

    if _threads["size"] == 0:
        return function(*args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(thread_pool(),
                                                            functools.partial(function, *args, **kwargs))


def running_loop():
    """The asyncio loop running in this thread (a served page, a Jupyter kernel), or ``None``.

    Without asyncio imported no loop can be running: the CLI never pays for importing it.
    """
    if "asyncio" not in sys.modules:
        return None
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# -------------------------------------------------------------------------------------- processes
def preload(*modules: str) -> None:
    """Modules every worker process imports once, before any job (call before the first pool starts)."""
    _preload.extend(m for m in modules if m not in _preload)


def process_pool(kind: str):
    """The worker process for ``kind`` (e.g. ``"procedures"``, ``"simulations"``): one process each.

    A ``forkserver`` context with the :func:`preload` modules imported: after the first start, a
    worker costs milliseconds.  A broken pool (its process died) is replaced.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with _lock:
        pool = _processes.get(kind)
        if pool is None or getattr(pool, "_broken", False):
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            if "forkserver" in methods:
                context.set_forkserver_preload(list(_preload))
            pool = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_lower_priority)
            _processes[kind] = pool
            _ready.discard(kind)
            atexit.register(_shutdown, pool)
        return pool


def _lower_priority() -> None:
    """In each worker process: yield the CPU to the server when both want it."""
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # not available (Windows) or not allowed: keep the priority
        pass


def _started() -> int:
    return os.getpid()


def warm_up(*kinds: str) -> None:
    """Start the worker processes for ``kinds`` in a background thread: the caller never waits.

    Starting the fork server and preloading the modules takes a second or two; until then
    :func:`process_pool_ready` is false and callers use the threads instead.
    """
    with _lock:
        todo = [k for k in kinds if ("warming", k) not in _processes]
        for k in todo:
            _processes[("warming", k)] = True
    if todo:
        threading.Thread(target=_warm, args=(todo,), name="meter-dashboard-warm-up", daemon=True).start()


def _warm(kinds) -> None:
    for kind in kinds:
        try:
            process_pool(kind).submit(_started).result()
        except Exception:  # noqa: BLE001 - no worker processes here: the threads do the work
            continue
        _ready.add(kind)


def process_pool_ready(kind: str) -> bool:
    """Whether the worker process for ``kind`` has started (after :func:`warm_up`)."""
    return kind in _ready


def _shutdown(pool) -> None:
    """Stop the worker processes before the interpreter tears down the modules they need."""
    pool.shutdown(wait=True, cancel_futures=True)


# ------------------------------------------------------------------------------------- streaming
class Superseded(Exception):
    """Work stopped because newer work made it pointless (see :func:`in_thread_streaming`, :func:`in_chunks`)."""


async def in_process(kind: str, function: Callable, *args):
    """Await ``function(*args)`` computed in :func:`process_pool` ``(kind)`` (function and arguments picklable).

    A worker process that died raises ``BrokenProcessPool`` (a RuntimeError) or OSError: a caller
    may do the work with :func:`in_thread` instead.
    """
    import asyncio

    return await asyncio.wrap_future(process_pool(kind).submit(function, *args))


async def in_thread_streaming(function: Callable, *args, publish: Callable[[list], None] | None = None,
                              stopped: Callable[[], bool] = lambda: False, interval: float = 0.25):
    """Await ``function(*args, emit)`` computed in :func:`thread_pool`; what it emits is published on the loop.

    ``emit(item)``, called by the worker, raises :class:`Superseded` once ``stopped()`` (the
    work ends there).  With ``publish``, the items are collected and ``publish(items so far)``
    is called on the loop while the work runs, at most every ``interval`` seconds and never in
    the first one (quick work shows its result only).  Returns (or raises) what ``function`` did.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    items: list = []
    wake = asyncio.Event()

    def emit(item) -> None:  # in the worker thread
        if stopped():
            raise Superseded
        if publish is not None:
            items.append(item)
            loop.call_soon_threadsafe(wake.set)

    future = loop.run_in_executor(thread_pool(), functools.partial(function, *args, emit))
    shown, shown_at = 0, time.monotonic()
    while not future.done():
        waiter = asyncio.ensure_future(wake.wait())
        either: set[asyncio.Future[Any]] = {future, waiter}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        wake.clear()
        if stopped():
            break
        if publish is not None and len(items) > shown and time.monotonic() - shown_at >= interval \
                and not future.done():
            shown, shown_at = len(items), time.monotonic()
            publish(items[:shown])
    return await future


async def in_chunks(step: Callable[[Any], Any], *, more: Callable[[Any], bool],
                    stopped: Callable[[], bool] = lambda: False, publish: Callable[[list], None] | None = None,
                    interval: float = 0.25) -> tuple:
    """Work done chunk by chunk: ``state, new_items = await step(state)`` (``state`` None at first) while ``more(state)``.

    ``step`` awaits a worker (:func:`in_process`, :func:`in_thread`) and carries the work's
    state from one chunk to the next.  After each chunk, :class:`Superseded` is raised once
    ``stopped()``; with ``publish``, ``publish(items so far)`` is called on the loop after every
    chunk but the last once ``interval`` seconds have passed since the start.  Returns
    ``(state, items)``.
    """
    state, items, began = None, [], time.monotonic()
    while state is None or more(state):
        state, new = await step(state)
        if stopped():
            raise Superseded
        items += new
        if publish is not None and more(state) and time.monotonic() - began >= interval:
            publish(list(items))
    return state, items


# ------------------------------------------------------------------------------ the newest request wins
class Latest:
    """Run a model's work for its newest inputs off the event loop; apply each outcome through ``dispatch``.

    Three shapes of work, each started from the event loop and returning at once:

    - :meth:`compute` ``(function, apply)`` - ``function()`` in a worker thread, then
      ``apply(result)`` (or ``apply(InputError)`` when it raised one);
    - :meth:`stream` ``(make, deliver)`` - ``make(stopped)`` returns an iterator; each item is
      computed in a worker thread and handed to ``deliver(item)`` as it comes;
    - :meth:`run` ``(pipeline)`` - ``await pipeline(stopped)`` on the loop, for work in several
      stages (the pipeline awaits :func:`in_thread` or a :func:`process_pool` itself and publishes
      through :attr:`dispatch`).

    Starting new work makes ``stopped()`` of the current one true: it stops at its next step and
    nothing more of it is applied; work is done one at a time, the newest next.  Without
    :attr:`background`, or without a running event loop, work is done at once in the caller.
    """

    def __init__(self, on_busy: Callable[[bool], None] | None = None, background: bool = False):
        self._on_busy = on_busy or (lambda busy: None)
        self._generation = 0
        self._pending: tuple | None = None
        self._running = False
        self._task = None
        #: Work off the loop when one is running (a page or a kernel sets it).
        self.background = background
        #: How outcomes are applied (a served page runs them under its document lock on the next tick).
        self.dispatch: Callable[[Callable[[], None]], None] = lambda fn: fn()

    @property
    def busy(self) -> bool:
        """Work is being done or waits for its turn."""
        return self._pending is not None or self._running

    async def settled(self, poll: float = 0.005) -> None:
        """Wait until no work is being done or waiting (tests, notebooks)."""
        import asyncio

        while self.busy:
            await asyncio.sleep(poll)

    def stopped_function(self) -> Callable[[], bool]:
        """``stopped()`` for work started now: true once newer work has been started or :meth:`cancel` called."""
        generation = self._generation

        return lambda: generation != self._generation

    def cancel(self) -> None:
        """Stop the current work at its next step and forget waiting work."""
        self._generation += 1
        self._pending = None

    def compute(self, function: Callable[[], Any], apply: Callable[[Any], None]) -> None:
        """``apply(function())`` - the function off the loop; an InputError it raises is applied as the outcome."""
        def make(stopped):
            yield _outcome(function)

        self._start(("stream", make, apply, None))

    def stream(self, make: Callable[[Callable[[], bool]], Iterator], deliver: Callable[[Any], None],
               on_error: Callable[[Exception], None] | None = None) -> None:
        """Each item of ``make(stopped)`` computed off the loop and handed to ``deliver``.

        An exception other than InputError stops the work; it is logged and handed to
        ``on_error`` (through :attr:`dispatch`) when given, so a page never waits forever.
        """
        self._start(("stream", make, deliver, on_error))

    def run(self, pipeline: Callable[[Callable[[], bool]], Any]) -> None:
        """``await pipeline(stopped)`` on the event loop (background), or ``asyncio.run`` it here."""
        self._start(("run", pipeline, None, None))

    # ------------------------------------------------------------------ internals
    def _start(self, job: tuple) -> None:
        self._generation += 1
        loop = running_loop() if self.background else None
        if loop is None:
            self._pending = None
            self._now(job, self.stopped_function())
            return
        self._pending = (self._generation, job)
        if not self._running:
            self._running = True
            self._on_busy(True)
            self._task = loop.create_task(self._drain())

    def _now(self, job: tuple, stopped) -> None:
        kind, work, deliver, on_error = job
        if kind == "run":
            import asyncio

            asyncio.run(work(stopped))
            return
        try:
            for item in work(stopped):
                deliver(item)
                if stopped():
                    return
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported like the background path does
            if on_error is None:
                raise
            on_error(exc)

    async def _drain(self) -> None:
        try:
            while self._pending is not None:
                generation, (kind, work, deliver, on_error) = self._pending
                self._pending = None
                stopped = functools.partial(self._stale, generation)
                if kind == "run":
                    await self._guarded(work(stopped), on_error)
                else:
                    await self._stream(work(stopped), deliver, on_error, stopped)
        finally:
            self._running = False
            self.dispatch(lambda: self._on_busy(self.busy))  # newer work may have started meanwhile

    def _stale(self, generation: int) -> bool:
        return generation != self._generation

    async def _guarded(self, coroutine, on_error) -> None:
        try:
            await coroutine
        except Exception as exc:  # noqa: BLE001 - a failure must not stop the runtime for newer work
            log.exception("background work failed")
            if on_error is not None:
                self.dispatch(functools.partial(on_error, exc))

    async def _stream(self, items: Iterator, deliver, on_error, stopped) -> None:
        while not stopped():
            try:
                item = await in_thread(next, items, _DONE)
            except Exception as exc:  # noqa: BLE001 - reported, never left "computing…" forever
                log.exception("background work failed")
                if on_error is not None and not stopped():
                    self.dispatch(functools.partial(on_error, exc))
                return
            if item is _DONE or stopped():
                return
            self.dispatch(functools.partial(self._deliver_current, deliver, item, stopped))

    @staticmethod
    def _deliver_current(deliver, item, stopped) -> None:
        if not stopped():  # newer work may have started between the worker and this tick
            deliver(item)


def _outcome(function: Callable[[], Any]):
    try:
        return function()
    except InputError as exc:
        return exc


class OffloadedModel:
    """Mixin for a ``param.Parameterized`` model whose result may be computed by a :class:`Latest`.

    The model defines ``_compute(request)`` and ``_apply_outcome(request, outcome)`` and a
    constant ``busy`` parameter; it gets ``_set(**values)`` (writes its read-only outputs),
    ``_latest`` (made on first use, so parameter watchers may run during ``__init__``), ``_submit``
    (the request off the loop, or at once) and ``dispatch`` (how a worker's outcome is applied; a page sets it).
    """

    if TYPE_CHECKING:  # what the param.Parameterized model mixing this in provides
        param: Any

        def _compute(self, request: Any) -> Any: ...

        def _apply_outcome(self, request: Any, outcome: Any) -> None: ...

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)

    @property
    def _latest(self) -> Latest:
        latest = self.__dict__.get("_latest_runtime")
        if latest is None:
            latest = self.__dict__["_latest_runtime"] = Latest(on_busy=lambda busy: self._set(busy=busy))
        return latest

    def _submit(self, request, background: bool = True) -> None:
        """Compute ``request`` off the loop (``background`` and a loop running) or at once; newest wins."""
        latest = self._latest
        latest.background = background
        latest.compute(functools.partial(self._compute, request), functools.partial(self._apply_outcome, request))

    @property
    def dispatch(self) -> Callable[[Callable[[], None]], None]:
        """How a result computed in a worker thread is applied (default: directly)."""
        return self._latest.dispatch

    @dispatch.setter
    def dispatch(self, function) -> None:
        self._latest.dispatch = function


# ----------------------------------------------------------------------------- jobs with progress
class BackgroundJob(param.Parameterized):
    """Base class of a cancellable computation that reports its progress.

    A subclass implements :meth:`work` (plain Python, run in a worker thread, reporting progress
    through ``report`` and checking ``should_stop``) and gets ``run()`` (blocking: scripts,
    notebooks, tests), ``await arun()`` (in :func:`thread_pool`, progress published on the loop),
    ``cancel()``, and the parameters ``running``, ``progress`` (0..1), ``status``,
    ``seconds_left`` (an estimate from the rate so far) and ``error``.  The view over it is
    :class:`meter_dashboard.ui.simulation.SimulationControls`.
    """

    running = param.Boolean(default=False, constant=True, doc="The work is under way.")
    progress = param.Number(default=0.0, bounds=(0.0, 1.0), constant=True, doc="Fraction of the work done.")
    status = param.String(default="", constant=True, doc="One line on what is happening or what happened.")
    seconds_left = param.Number(default=None, allow_None=True, constant=True,
                                doc="Estimated seconds until the work ends (None until it can be estimated).")
    error = param.String(default="", constant=True, doc="Why the last run failed ('' when it did not).")

    def __init__(self, **params):
        super().__init__(**params)
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def work(self, report, should_stop):
        """Do the work; call ``report(fraction, message)`` as it goes and stop early when ``should_stop()``.

        Returns the result (handed to :meth:`finish`).  Raise :class:`InputError` for bad settings.
        """
        raise NotImplementedError

    def finish(self, result, cancelled: bool) -> str:
        """Store ``result`` (a subclass's result parameter) and return the final status line."""
        return "cancelled" if cancelled else "done"

    def cancel(self) -> None:
        """Ask the running work to stop at its next check (what was computed is kept)."""
        self._stop.set()
        if self.running:
            self._set(status="cancelling…")

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)

    def _start(self) -> bool:
        if not self._lock.acquire(blocking=False):
            return False
        self._stop.clear()
        self._set(running=True, progress=0.0, error="", status="starting…", seconds_left=None)
        return True

    def _end(self, result=None, failure: InputError | None = None) -> None:
        try:
            if failure is not None:
                self._set(error=str(failure), status="", seconds_left=None)
            else:
                cancelled = self._stop.is_set()
                status = self.finish(result, cancelled)
                self._set(status=status, seconds_left=None, progress=self.progress if cancelled else 1.0)
        finally:
            self._set(running=False)
            self._lock.release()

    def run(self):
        """Run to the end (blocking) and return the result; None if a run is already under way or it failed."""
        if not self._start():
            return None
        started = time.perf_counter()

        def report(fraction, message=""):
            self._set(**self._progress_values(fraction, message, started))

        try:
            result = self.work(report, self._stop.is_set)
        except InputError as exc:
            self._end(failure=exc)
            return None
        self._end(result)
        return result

    async def arun(self, poll: float = 0.2):
        """Run the work in :func:`thread_pool`; progress is published from this event loop every ``poll`` s."""
        import asyncio

        if not self._start():
            return None
        started = time.perf_counter()
        box: dict[str, Any] = {"fraction": 0.0, "message": "starting…"}

        def report(fraction, message=""):  # worker thread: plain attributes only
            box["fraction"], box["message"] = fraction, message

        task = asyncio.ensure_future(in_thread(self.work, report, self._stop.is_set))
        while not task.done():
            await asyncio.wait({task}, timeout=poll)
            if not self._stop.is_set():
                self._set(**self._progress_values(box["fraction"], box["message"], started))
        if self._stop.is_set():  # cancelled: show how far it got (kept by _end), however quickly that was
            self._set(progress=float(min(max(box["fraction"], 0.0), 1.0)))
        try:
            result = task.result()
        except InputError as exc:
            self._end(failure=exc)
            return None
        self._end(result)
        return result

    @staticmethod
    def _progress_values(fraction, message, started) -> dict:
        fraction = float(min(max(fraction, 0.0), 1.0))
        elapsed = time.perf_counter() - started
        left = elapsed * (1 - fraction) / fraction if fraction > 0.02 and elapsed > 0.5 else None
        return {"progress": fraction, "status": message, "seconds_left": left}
