"""Long computations (simulations, large replays) with progress, a time estimate and cancel.

:class:`BackgroundJob` is the one way the models run work that may take longer than a
person will wait for a page to answer: a subclass implements :meth:`BackgroundJob.work`
(plain Python, run in a worker thread, reporting progress through ``report`` and checking
``should_stop``), and gets

- ``run()``: blocking, for scripts, notebooks and tests;
- ``await arun()``: the work in a worker thread while the caller's event loop stays free
  (a served page keeps answering every session; a Cancel click gets through); every
  parameter event happens on the loop's thread, so views may update documents safely;
- ``cancel()``, and the parameters ``running``, ``progress`` (0..1), ``status``,
  ``seconds_left`` (an estimate from the rate so far) and ``error``.

The view over it is :class:`meter_dashboard.ui.simulation.SimulationControls`.
"""
from __future__ import annotations

import asyncio
import threading
import time

import param

from .validation import InputError

__all__ = ["BackgroundJob"]


class BackgroundJob(param.Parameterized):
    """Base class of a cancellable computation that reports its progress."""

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

    # ------------------------------------------------------------------ to implement
    def work(self, report, should_stop):
        """Do the work; call ``report(fraction, message)`` as it goes and stop early when ``should_stop()``.

        Returns the result (handed to :meth:`finish`).  Raise :class:`InputError` for bad settings.
        """
        raise NotImplementedError

    def finish(self, result, cancelled: bool) -> str:
        """Store ``result`` (a subclass's result parameter) and return the final status line."""
        return "cancelled" if cancelled else "done"

    # ------------------------------------------------------------------ running
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
        """Run the work in a worker thread; progress is published from this event loop every ``poll`` s."""
        if not self._start():
            return None
        started = time.perf_counter()
        box = {"fraction": 0.0, "message": "starting…"}

        def report(fraction, message=""):  # worker thread: plain attributes only
            box["fraction"], box["message"] = fraction, message

        task = asyncio.ensure_future(asyncio.to_thread(self.work, report, self._stop.is_set))
        while not task.done():
            await asyncio.wait({task}, timeout=poll)
            if not self._stop.is_set():
                self._set(**self._progress_values(box["fraction"], box["message"], started))
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
