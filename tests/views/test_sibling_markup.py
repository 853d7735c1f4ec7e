"""The HTML panes of /ci, /ladder, /compare and /approve hold plain markup strings (issue 21, templates).

A Markup object handed to Panel's HTML pane is escaped once more and shows its tags as text; the
templates' output is given to the panes as ``str``.  Also: no pane shows a doubly escaped tag.
"""
from __future__ import annotations

import panel as pn
import pytest
from markupsafe import Markup

import meter_dashboard as md


def _panes(view):
    layout = pn.Column(*(part for part in (view.controls(), view.results()) if part is not None))
    return layout.select(pn.pane.HTML)


@pytest.mark.parametrize("make", [
    lambda: md.CI(condition="n > 0.8 +/- 0.05", bound="binomial"),
    lambda: md.Ladder(run_attack=True),
    lambda: md.Compare(),
    lambda: md.Approve(),
])
def test_every_pane_holds_markup_as_text(make):
    view = make()
    panes = _panes(view)
    assert len(panes) > 5
    for pane in panes:
        assert not isinstance(pane.object, Markup), pane.object[:80]
        assert "&amp;lt;" not in str(pane.object) and "&lt;p " not in str(pane.object), pane.object[:120]


def test_the_ci_messages_built_from_snippets_are_text():
    view = md.CI(condition="n > 0.8 +/- 0.05", trace="")
    view.model.condition = "n >> 0.8"
    for pane in (view.sentence, view.condition_error, view.replay_summary):
        assert type(pane.object) is str and pane.object.startswith("<"), pane.object[:60]
