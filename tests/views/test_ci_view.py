"""The /ci page as declared sections (issue 32): what each shows is declared, and a change sends only what changed.

Counted without a browser: the page's models in a Bokeh document, the change events Bokeh emits
(a served page sends them as one message).  The browser-side behaviour is tests/ui/test_ci_page.py.
"""
from __future__ import annotations

import collections

import panel as pn
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ColumnsPatchedEvent, ColumnsStreamedEvent
from panel.io.state import set_curdoc

from meter_dashboard.ci.view import CI
from meter_dashboard.ci.view_answer import Answer, Curves
from meter_dashboard.ci.view_inputs import Inputs
from meter_dashboard.ci.view_replay import Replay

from .test_planner_cost import recorded  # every change event of a document, as Bokeh emits it

_DATA_EVENTS = (ColumnDataChangedEvent, ColumnsPatchedEvent, ColumnsStreamedEvent)


def _page(**params):
    doc = Document()
    with set_curdoc(doc):
        view = CI(**params)
        doc.add_root(pn.Column(view.controls(), view.results()).get_root(doc))
    return view, doc


def _changed(events) -> collections.Counter:
    """(model class, attribute) of every change; data changes as ('data', source name or id)."""
    out: collections.Counter = collections.Counter()
    for e in events:
        if isinstance(e, _DATA_EVENTS):
            out[("data", e.model.name or e.model.id)] += 1
        else:
            out[(type(e.model).__name__, getattr(e, "attr", None))] += 1
    return out


def test_the_page_is_made_of_viewer_sections_over_one_model():
    view = CI(trace="")
    sections = (view.inputs, view.answer, view.curves, view.check)
    assert [type(s) for s in sections] == [Inputs, Answer, Curves, Replay]
    assert all(isinstance(s, pn.viewable.Viewer) and s.model is view.model for s in sections)
    assert view.controls() is view.inputs.__panel__()  # built once: the same column each time


def test_each_show_method_declares_the_model_parameters_it_reads():
    view = CI(trace="")

    def declared(owner, name):
        return {d.name for d in owner.param.method_dependencies(name)}

    assert declared(view.answer, "show") == {"result", "error"}
    assert declared(view.curves, "show") == {"curves"}
    assert declared(view.curves, "show_caption") == {"curves", "curving"}
    assert declared(view.check, "show_points") == {"replay", "replaying"}
    assert declared(view.check, "show") == {"replay", "trace_error", "replaying", "upload_error"}
    assert declared(view.inputs, "show_exact") == {"running", "status", "error", "result", "bound"}


def test_a_refused_upload_changes_its_message_and_nothing_else():
    view, doc = _page(trace="ci_commits.csv")
    events = recorded(doc)
    with set_curdoc(doc):
        view.upload._set(upload_error="file must be a file of at most 10 MiB; got 'big.csv', more than 12 MiB")
    changed = _changed(events)
    assert "at most 10 MiB" in view.trace_error.object
    assert not [k for k in changed if k[0] == "data"], changed  # the replay plot's points are not sent again
    assert set(changed) <= {("HTML", "text")}, changed


def test_a_new_reliability_updates_the_answer_in_place():
    view, doc = _page(trace="")
    models = set(doc.models)
    headlines = view.headlines.object
    events = recorded(doc)
    with set_curdoc(doc):
        view.model.reliability = 0.99
    assert view.headlines.object != headlines
    assert set(doc.models) == models  # nothing rebuilt: the same panes and plots, new values
    changed = _changed(events)
    assert ("data", "ci-curves") in changed
    assert not [k for k in changed if k[0] == "data" and k[1] != "ci-curves"], changed  # no trace: no points


def test_outside_a_server_the_replay_plot_is_built_at_once():
    """Issue 29: served, the replay plot waits until scrolled to (tests/ui); here it is built with its points."""
    view, doc = _page()
    seen = view.check.plot_seen
    assert seen.built and seen.holder.objects == [view.check.replay_box]
    assert doc.get_model_by_id(view.check.replay_fig.id) is view.check.replay_fig
    assert len(view.check.replay_source.data["commit"]) == 40
