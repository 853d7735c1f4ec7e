"""The Section 3 simulations of Feng et al. as a param model: progress, time estimate, cancel.

:class:`ApprovalSimulation` runs :func:`~meter_dashboard.bounds.srgp.simulate_fwer` (Section
3.1) or :func:`~meter_dashboard.bounds.srgp.simulate_power` (Section 3.2).  :meth:`run`
blocks (notebooks, scripts); :meth:`arun` is for a server: chunks of replicates run in the
shared worker processes (:func:`~meter_dashboard.models.approve_workers.process_pool`), the
event loop only awaits them, and the model reports progress, the time left and stops
between chunks when cancelled.  Replicates are seeded by their index, so the chunked run
gives exactly the numbers of the blocking one.
"""
from __future__ import annotations

import math
import threading
import time

import numpy as np
import param

from .._validation import InputError
from ..bounds.srgp import ALPHA, METHODS, SimulationResult, combine_simulations, simulate_fwer, simulate_power
from .approve_workers import process_pool

__all__ = ["ApprovalSimulation", "format_duration"]

#: A chunk of replicates sent to a worker process aims at this many seconds of work.
CHUNK_SECONDS = 1.0


def format_duration(seconds: float) -> str:
    """``75.2`` -> ``'1 min 15 s'``; under ten seconds with one decimal."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    seconds = max(float(seconds), 0.0)
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def _simulate_chunk(kind: str, methods: list, first: int, count: int, settings: dict):
    """One chunk of replicates in a worker process: a SimulationResult, or the error text."""
    function = simulate_fwer if kind == "fwer" else simulate_power
    try:
        return function(methods, replicates=count, first_replicate=first, **settings)
    except InputError as exc:
        return str(exc)


class ApprovalSimulation(param.Parameterized):
    """The Section 3 simulations with progress, a time estimate and cancellation.

    ``kind='fwer'``: Section 3.1 (adversarial developer, oracle initial model, 100 test
    examples, T = 50); ``kind='power'``: Section 3.2 (refits on an i.i.d. stream).  Call
    :meth:`run` (blocking) or ``await`` :meth:`arun` (worker processes), and :meth:`cancel`
    from elsewhere; ``progress`` goes from 0 to 1, ``status`` says where it is and
    ``remaining`` how many seconds are left (``None`` until the first replicate is done).

    References
    ----------
    Feng et al., "Sequential algorithmic modification with test data reuse", Sections 3.1
    (Figure 3) and 3.2 (Figure 4).
    """

    kind = param.Selector(default="fwer", objects=["fwer", "power"], constant=True)
    methods = param.ListSelector(default=list(METHODS), objects=list(METHODS))
    replicates = param.Integer(default=40, bounds=(1, 2000), softbounds=(1, 200))
    steps = param.Integer(default=None, allow_None=True, bounds=(1, 200), doc="T (default 50 / 15).")
    test_size = param.Integer(default=None, allow_None=True, bounds=(10, 100000), doc="Test examples (100 / 800).")
    alpha = param.Number(default=ALPHA, bounds=(0.0, 1.0), inclusive_bounds=(False, False), step=0.01)
    seed = param.Integer(default=0, bounds=(0, 2 ** 32 - 1))

    progress = param.Number(default=0.0, bounds=(0.0, 1.0), constant=True, doc="Fraction done.")
    status = param.String(default="", constant=True, doc="Where the run is, in words.")
    running = param.Boolean(default=False, constant=True)
    remaining = param.Number(default=None, allow_None=True, constant=True, doc="Estimated seconds left.")
    elapsed = param.Number(default=0.0, constant=True, doc="Seconds since the run started.")
    result = param.Parameter(default=None, constant=True, doc="The last SimulationResult.")
    error = param.String(default="", constant=True, doc="Why the last run could not start.")

    DEFAULTS = {"fwer": dict(steps=50, test_size=100), "power": dict(steps=15, test_size=800)}

    def __init__(self, **params):
        super().__init__(**params)
        defaults = self.DEFAULTS[self.kind]
        if self.steps is None:
            self.steps = defaults["steps"]
        if self.test_size is None:
            self.test_size = defaults["test_size"]
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)

    def cancel(self) -> None:
        """Ask a running simulation to stop (after the current test, or the current chunk)."""
        self._stop.set()
        if self.running:
            self._set(status="cancelling...")

    def _settings(self, extra: dict) -> dict:
        return dict(steps=self.steps, test_size=self.test_size, alpha=self.alpha, seed=self.seed, **extra)

    def _finish(self, result: SimulationResult) -> None:
        status = (f"cancelled after {result.completed} of {result.replicates} replicates" if result.cancelled
                  else f"done: {result.completed} replicates")
        self._set(result=result, status=status, remaining=0.0 if not result.cancelled else None,
                  progress=1.0 if not result.cancelled else self.progress)

    def run(self, **extra):
        """Run the simulation here (blocking); returns the SimulationResult (also in ``result``)."""
        if not self._lock.acquire(blocking=False):
            self._set(error="A simulation is already running.")
            return None
        try:
            self._stop.clear()
            start = time.monotonic()
            self._set(running=True, progress=0.0, error="", status="starting...", remaining=None, elapsed=0.0)

            def progress(fraction, message):
                spent = time.monotonic() - start
                left = spent / fraction * (1 - fraction) if fraction > 0 else None
                self._set(progress=float(min(max(fraction, 0.0), 1.0)), status=message, elapsed=spent,
                          remaining=left)

            function = simulate_fwer if self.kind == "fwer" else simulate_power
            try:
                result = function(list(self.methods), replicates=self.replicates, progress=progress,
                                  should_stop=self._stop.is_set, **self._settings(extra))
            except InputError as exc:
                self._set(error=str(exc), status="")
                return None
            self._finish(result)
            return result
        finally:
            self._set(running=False)
            self._lock.release()

    async def arun(self, poll: float = 0.25, **extra):
        """Run in the shared worker processes, chunk by chunk; progress is set on the caller's loop.

        Only the event loop's thread writes parameters, so a served page can update its
        widgets safely, and a Cancel click (:meth:`cancel`) gets through at once: the run
        stops at the next poll and keeps the replicates of the chunks already done.
        """
        if not self._lock.acquire(blocking=False):
            self._set(error="A simulation is already running.")
            return None
        try:
            self._stop.clear()
            self._set(running=True, progress=0.0, error="", status="starting...", remaining=None, elapsed=0.0)
            parts = await self._chunks(poll, self._settings(extra))
            if isinstance(parts, str):
                self._set(error=parts, status="")
                return None
            result = combine_simulations(parts)
            result.replicates = self.replicates
            result.cancelled = result.cancelled or result.completed < self.replicates
            self._finish(result)
            return result
        finally:
            self._set(running=False)
            self._lock.release()

    async def _chunks(self, poll: float, settings: dict):
        """Submit chunks one after the other until done or cancelled; the finished parts (or an error)."""
        import asyncio

        loop = asyncio.get_running_loop()
        kind, methods, total = self.kind, list(self.methods), self.replicates
        parts, done, per_replicate, start = [], 0, None, time.monotonic()
        while done < total and not self._stop.is_set():
            count = 1 if per_replicate is None else max(1, min(total - done, int(CHUNK_SECONDS / per_replicate)))
            began = time.monotonic()
            future = loop.run_in_executor(process_pool(), _simulate_chunk, kind, methods, done, count, settings)
            while not future.done():
                await asyncio.wait({future}, timeout=poll)
                if self._stop.is_set():
                    future.cancel()
                    break
                self._report(done, total, per_replicate, start, time.monotonic() - began)
            if self._stop.is_set():
                break
            part = future.result()
            if isinstance(part, str):
                return part
            parts.append(part)
            done += part.completed
            spent = time.monotonic() - began
            per_replicate = spent / max(part.completed, 1) if per_replicate is None else \
                0.5 * per_replicate + 0.5 * spent / max(part.completed, 1)
            self._report(done, total, per_replicate, start, 0.0)
        if not parts:  # cancelled before the first replicate was done
            steps = settings["steps"] * (1 if kind == "fwer" else 2)
            parts = [SimulationResult(kind=kind, methods=tuple(methods), replicates=0, completed=0,
                                      alpha=settings["alpha"], seed=settings["seed"], cancelled=True,
                                      time=np.arange(1, steps + 1))]
        return parts

    def _report(self, done: int, total: int, per_replicate, start: float, in_chunk: float) -> None:
        """Progress, elapsed and remaining time, in numbers and in words."""
        spent = time.monotonic() - start
        if per_replicate is None:
            left, words = None, f"replicate 1 of {total} running ({format_duration(spent)}; estimating the time left)"
        else:
            left = max(per_replicate * (total - done) - in_chunk, 0.0)
            words = f"{done} of {total} replicates done · about {format_duration(left)} left"
        self._set(progress=done / total, status=words, elapsed=spent, remaining=left)
