"""Recomputing a model's result in a worker thread, the newest request winning.

A param model derives its result when its inputs change.  Most inputs make that
instant; a few (a replay of a 10 MiB loss file, the bootstrap of a million runs) take
longer than a served page may hold its event loop (about 50 ms: every other session on
the server waits meanwhile).  :class:`LatestOnly` is the model's way out, without Panel:

- ``submit(request)`` from the event loop starts ``compute(request)`` in a worker
  thread (``asyncio.to_thread``) and returns at once;
- requests submitted while one is computing replace each other: only the newest one
  is computed next, and a result is applied only if no newer request arrived meanwhile
  (a person dragging a slider sees the last value, never an old one last);
- ``apply(request, outcome)`` runs on the loop through ``dispatch`` (default: call it;
  a page passes a function that runs it under its document's lock); ``outcome`` is the
  result or the :class:`~meter_dashboard.core.validation.InputError` that ``compute`` raised.

Without a running event loop (scripts, notebooks, tests) ``submit`` computes and applies
at once, so the same model works everywhere.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import param

from .validation import InputError

__all__ = ["LatestOnly", "OffloadedModel"]


class LatestOnly:
    """Run ``compute`` off the event loop for the newest request only; ``apply`` its outcome.

    Parameters
    ----------
    compute : callable
        ``compute(request) -> result``; runs in a worker thread; may raise InputError.
    apply : callable
        ``apply(request, outcome)``; runs on the event loop (through ``dispatch``).
    on_busy : callable, optional
        ``on_busy(busy: bool)`` when work starts and when the last result is applied.
    """

    def __init__(self, compute: Callable[[Any], Any], apply: Callable[[Any, Any], None],
                 on_busy: Callable[[bool], None] | None = None):
        self._compute = compute
        self._apply = apply
        self._on_busy = on_busy or (lambda busy: None)
        self._pending: tuple | None = None
        self._task: asyncio.Future | None = None
        self._running = False
        #: How to run a callable on the loop (a page sets it to run under its document lock).
        self.dispatch: Callable[[Callable[[], None]], None] = lambda fn: fn()

    @property
    def busy(self) -> bool:
        """A request is being computed or waits for its turn."""
        return self._pending is not None or self._running

    def run_now(self, request) -> None:
        """Compute ``request`` here and apply it (for requests known to be quick)."""
        self._apply(request, self._outcome(request))

    def submit(self, request) -> None:
        """Compute ``request`` (in a worker thread when an event loop is running) and apply it."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.run_now(request)
            return
        self._pending = (request,)
        if not self._running:
            self._running = True
            self._on_busy(True)
            self._task = asyncio.ensure_future(self._drain())

    def _outcome(self, request):
        try:
            return self._compute(request)
        except InputError as exc:
            return exc

    async def _drain(self) -> None:
        try:
            while self._pending is not None:
                (request,) = self._pending
                self._pending = None
                outcome = await asyncio.to_thread(self._outcome, request)
                if self._pending is None:
                    self.dispatch(lambda request=request, outcome=outcome: self._apply(request, outcome))
        finally:
            self._running = False
            self.dispatch(lambda: self._on_busy(self.busy))  # a newer request may have started meanwhile


class OffloadedModel:
    """Mixin for a ``param.Parameterized`` model whose result may be computed by a :class:`LatestOnly`.

    The model defines ``_compute(request)`` and ``_apply_outcome(request, outcome)`` and a
    constant ``busy`` parameter; it gets ``_set(**values)`` (writes its read-only outputs),
    ``_worker`` (made on first use, so parameter watchers may run during ``__init__``) and
    ``dispatch`` (how a worker's outcome is applied; a page sets it).
    """

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)

    @property
    def _worker(self) -> LatestOnly:
        worker = self.__dict__.get("_latest_only")
        if worker is None:
            worker = self.__dict__["_latest_only"] = LatestOnly(self._compute, self._apply_outcome,
                                                                on_busy=lambda busy: self._set(busy=busy))
        return worker

    @property
    def dispatch(self) -> Callable[[Callable[[], None]], None]:
        """How a result computed in a worker thread is applied (default: directly)."""
        return self._worker.dispatch

    @dispatch.setter
    def dispatch(self, function) -> None:
        self._worker.dispatch = function
