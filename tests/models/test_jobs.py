"""BackgroundJob: progress, a time estimate, cancel, errors; run and arun give the same result."""
from __future__ import annotations

import asyncio
import threading

import param
import pytest

from meter_dashboard.core.runtime import BackgroundJob
from meter_dashboard.core.validation import InputError


class Counting(BackgroundJob):
    n = param.Integer(default=5)
    result = param.Parameter(default=None)

    def __init__(self, gate=None, **params):
        super().__init__(**params)
        self.gate = gate

    def work(self, report, should_stop):
        if self.n < 0:
            raise InputError("n", "a whole number >= 0", self.n)
        done = []
        for i in range(self.n):
            if should_stop():
                break
            if self.gate is not None:
                self.gate.wait(5)
            done.append(i)
            report((i + 1) / self.n, f"{i + 1} of {self.n}")
        return done

    def finish(self, result, cancelled):
        self.result = result
        return f"{'cancelled' if cancelled else 'done'} after {len(result)}"


def test_run_reports_and_finishes():
    job = Counting(n=4)
    assert job.run() == [0, 1, 2, 3]
    assert job.status == "done after 4" and job.progress == 1.0 and not job.running and job.error == ""


def test_arun_gives_the_same_result():
    job = Counting(n=4)
    assert asyncio.run(job.arun(poll=0.01)) == [0, 1, 2, 3]
    assert job.result == [0, 1, 2, 3] and job.status == "done after 4" and not job.running


def test_cancel_keeps_what_was_computed():
    gate = threading.Event()
    job = Counting(n=1000, gate=gate)

    async def scenario():
        task = asyncio.ensure_future(job.arun(poll=0.01))
        await asyncio.sleep(0.05)
        job.cancel()
        gate.set()
        return await task

    result = asyncio.run(scenario())
    assert 0 <= len(result) < 1000 and job.status.startswith("cancelled") and not job.running


def test_bad_settings_become_the_error_message():
    job = Counting(n=-1)
    assert job.run() is None
    assert job.error == "n must be a whole number >= 0; got -1" and not job.running


def test_outputs_are_read_only_for_views():
    job = Counting()
    with pytest.raises(TypeError):
        job.progress = 0.5
    with pytest.raises(TypeError):
        job.error = "x"
