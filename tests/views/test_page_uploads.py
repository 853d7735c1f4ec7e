"""Every upload is a GuardedFileDropper: a refused file is named beside the drop area, the last good data stays.

Issue 15, item 5: the size limit used to be checked only after the whole file had arrived (and a file
over Bokeh's message cap closed the session). In the browser the refusal happens before anything is
sent (tests/ui/test_approve_page.py); here the server side: the message and the kept state.
"""
from __future__ import annotations

import asyncio

import pytest

from meter_dashboard.ci.view import CI
from meter_dashboard.comparison.view import Compare
from meter_dashboard.leaderboard.view import Ladder
from meter_dashboard.ui.upload import GuardedFileDropper

REFUSAL = "file must be a file of at most 10 MiB; got 'big.csv', more than 12 MiB"


@pytest.mark.parametrize("make,model,shown", [
    (Ladder, lambda v: v.replay, lambda v: v.replay_error.object),
    (Compare, lambda v: v.model, lambda v: v.model.error),
])
def test_a_refused_file_is_named_and_the_last_table_stays(make, model, shown):
    view = make()
    assert isinstance(view.upload, GuardedFileDropper)
    before = model(view).table
    view.upload._set(upload_error=REFUSAL)
    assert "at most 10 MiB" in shown(view)
    assert model(view).table is before


def test_ci_shows_a_refused_file_beside_the_trace_and_keeps_the_replay():
    view = CI(trace="ci_commits.csv")
    assert isinstance(view.upload, GuardedFileDropper)
    before = view.model.trace
    view.upload._set(upload_error=REFUSAL)
    assert "at most 10 MiB" in view.trace_error.object
    assert view.model.trace is before


def test_ladder_reads_the_latest_dropped_file():
    view = Ladder()
    csv = b"first,second\n0,1\n1,1\n0,0\n1,0\n"  # one column of 0/1 losses per submission
    asyncio.run(view.table_file.read({"mine.csv": csv}))
    assert view.replay.table is not None and view.replay.example == "uploaded file"
    assert view.replay.error == ""
