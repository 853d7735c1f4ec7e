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


@pytest.mark.parametrize("make,sections", [
    (Compare, lambda v: [v.settings, v.answer, v.figures, v.runs_needed]),
    (lambda: Ladder(run_attack=False),
     lambda v: [v.replay_inputs, v.replay_answer, v.replay_figure, v.label_bound, v.boosting]),
])
def test_each_section_shows_alone_built_once_and_shares_the_upload(make, sections):
    import panel as pn

    from meter_dashboard.ui.parts import PageSection
    from meter_dashboard.ui.upload import TableUpload

    view = make()
    for part in sections(view):
        assert isinstance(part, PageSection)
        shown = part.__panel__()
        assert isinstance(shown, pn.layout.ListPanel) and part.__panel__() is shown  # built once, kept
    inputs = sections(view)[0]
    assert isinstance(view.table_file, TableUpload) and view.upload is view.table_file.dropper
    assert inputs.parts()[1] is view.upload  # the shared upload section's drop area, under the example
