"""The Section 3 simulations of Feng et al. as a background job: progress, time left, cancel.

:class:`ApprovalSimulation` is a :class:`~meter_dashboard.core.runtime.BackgroundJob` running
:func:`~meter_dashboard.bounds.srgp.simulate_fwer` (Section 3.1) or
:func:`~meter_dashboard.bounds.srgp.simulate_power` (Section 3.2).  ``run()`` computes here
(notebooks, scripts), with progress after every replicate and procedure.  ``await arun()``
(a served page) hands chunks of replicates to the shared worker processes
(:func:`~meter_dashboard.core.runtime.process_pool`): the server's interpreter only
waits for them, so every other session keeps its speed, and a Cancel stops between chunks.
Replicates are seeded by their index, so both ways give exactly the same numbers.
"""
from __future__ import annotations

import time
from concurrent.futures import TimeoutError as FutureTimeout

import param

from ..bounds.srgp import ALPHA, METHODS, combine_simulations, simulate_fwer, simulate_power
from ..core.runtime import BackgroundJob, preload, process_pool
from ..core.validation import InputError

#: The worker processes of this family: SRGP procedures on a trace (in chunks) and the Section 3 simulations.
WORKER_KINDS = ("procedures", "simulations")
# every worker process imports these once, before its first job (forkserver preload)
preload("meter_dashboard.bounds.srgp", "meter_dashboard.approvals.model")

__all__ = ["ApprovalSimulation", "CHUNK_SECONDS"]

#: A chunk of replicates sent to a worker process aims at this many seconds of work.
CHUNK_SECONDS = 1.0


def _simulate_chunk(kind: str, methods: list, first: int, count: int, settings: dict):
    """One chunk of replicates in a worker process: a SimulationResult, or the parts of an InputError."""
    function = simulate_fwer if kind == "fwer" else simulate_power
    try:
        return function(methods, replicates=count, first_replicate=first, **settings)
    except InputError as exc:
        return (exc.parameter, exc.rule, exc.got, exc.location)


class ApprovalSimulation(BackgroundJob):
    """The Section 3 simulations with progress, a time estimate and cancellation.

    ``kind='fwer'``: Section 3.1 (adversarial developer, oracle initial model, 100 test
    examples, T = 50); ``kind='power'``: Section 3.2 (refits on an i.i.d. stream).

    References
    ----------
    Feng et al., "Sequential algorithmic modification with test data reuse", Sections 3.1
    (Figure 3) and 3.2 (Figure 4).
    """

    kind = param.Selector(default="fwer", objects=["fwer", "power"], constant=True)
    methods = param.ListSelector(default=list(METHODS), objects=list(METHODS))
    replicates = param.Integer(default=40, bounds=(1, 2000), softbounds=(1, 200), doc="Replicates to simulate.")
    steps = param.Integer(default=None, allow_None=True, bounds=(1, 200), doc="T, the tests allowed (50 / 15).")
    test_size = param.Integer(default=None, allow_None=True, bounds=(10, 100000),
                              doc="Examples in the reused test set (100 / 800).")
    alpha = param.Number(default=ALPHA, bounds=(0.0, 1.0), inclusive_bounds=(False, False), step=0.01,
                         doc="FWER every procedure controls.")
    seed = param.Integer(default=0, bounds=(0, None), doc="Seed of the simulated data (same seed, same numbers).")
    result = param.Parameter(default=None, constant=True, doc="The last SimulationResult.")

    DEFAULTS = {"fwer": dict(steps=50, test_size=100), "power": dict(steps=15, test_size=800)}

    def __init__(self, **params):
        super().__init__(**params)
        defaults = self.DEFAULTS[self.kind]
        if self.steps is None:
            self.steps = defaults["steps"]
        if self.test_size is None:
            self.test_size = defaults["test_size"]
        self._in_processes = False

    def _settings(self) -> dict:
        return dict(steps=self.steps, test_size=self.test_size, alpha=self.alpha, seed=self.seed)

    def run(self):
        """Run the simulation here (blocking); returns the SimulationResult (also in ``result``)."""
        if self.running:
            self._set(error="A simulation is already running.")
            return None
        return super().run()

    async def arun(self, poll: float = 0.2):
        """Run in the shared worker processes, chunk by chunk (see the module notes)."""
        if self.running:
            self._set(error="A simulation is already running.")
            return None
        self._in_processes = True
        try:
            return await super().arun(poll)
        finally:
            self._in_processes = False

    def work(self, report, should_stop):
        function = simulate_fwer if self.kind == "fwer" else simulate_power
        settings = self._settings()
        if not self._in_processes:
            return function(list(self.methods), replicates=self.replicates, progress=report,
                            should_stop=should_stop, **settings)
        function(list(self.methods), replicates=1, should_stop=lambda: True, **settings)  # check settings first
        return self._work_in_processes(report, should_stop, settings)

    def _work_in_processes(self, report, should_stop, settings):
        kind, methods, total = self.kind, list(self.methods), self.replicates
        parts, done, per_replicate = [], 0, None
        while done < total and not should_stop():
            count = 1 if per_replicate is None else max(1, min(total - done, int(CHUNK_SECONDS / per_replicate)))
            began = time.monotonic()
            try:
                future = process_pool("simulations").submit(_simulate_chunk, kind, methods, done, count, settings)
                part = self._wait(future, report, should_stop, done, count, total, per_replicate, began)
            except (OSError, RuntimeError):  # no worker process here (BrokenProcessPool): the rest in this thread
                part = self._rest_here(report, should_stop, done, total, settings)
            if part is None:
                break
            if isinstance(part, tuple):
                raise InputError(part[0], part[1], part[2], location=part[3])
            parts.append(part)
            done += part.completed
            rate = (time.monotonic() - began) / max(part.completed, 1)
            per_replicate = rate if per_replicate is None else 0.5 * per_replicate + 0.5 * rate
            report(done / total, f"{done} of {total} replicates done")
        result = combine_simulations(parts) if parts else _empty_result(kind, methods, settings)
        result.replicates = total
        result.cancelled = result.completed < total
        return result

    def _rest_here(self, report, should_stop, done: int, total: int, settings: dict):
        """Replicates ``done..total`` in this thread, progress as they go."""
        function = simulate_fwer if self.kind == "fwer" else simulate_power

        def progress(fraction, message):
            report((done + fraction * (total - done)) / total, message)

        return function(list(self.methods), replicates=total - done, first_replicate=done, progress=progress,
                        should_stop=should_stop, **settings)

    @staticmethod
    def _wait(future, report, should_stop, done, count, total, per_replicate, began):
        """The chunk's result; progress within the chunk from its expected duration; None when cancelled."""
        while True:
            try:
                return future.result(timeout=0.1)
            except FutureTimeout:
                if should_stop():
                    future.cancel()
                    return None
                if per_replicate is not None:
                    inside = min((time.monotonic() - began) / (per_replicate * count), 0.95) * count
                    report((done + inside) / total, f"{done} of {total} replicates done")
                else:
                    report(0.0, f"replicate 1 of {total} running")

    def finish(self, result, cancelled: bool) -> str:
        self._set(result=result)
        if result.cancelled:
            return f"cancelled after {result.completed} of {result.replicates} replicates"
        return f"done: {result.completed} replicates"


def _empty_result(kind: str, methods: list, settings: dict):
    """The result of a run cancelled before its first replicate: no numbers, the right shape."""
    function = simulate_fwer if kind == "fwer" else simulate_power
    return function(methods, replicates=1, should_stop=lambda: True, **settings)
