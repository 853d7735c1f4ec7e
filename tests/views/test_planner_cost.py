"""What the planner page creates, and what a change sends (issue 19): counted without a browser.

A served page's cost grows with the Bokeh models it builds, so the page builds what its first
view shows and the rest when it is first opened; a change updates the models that changed (the
answer's markup, the curve's changed columns), nothing is rebuilt.  The counts are checked
against budgets here; the time they cost is measured in tests/benchmarks/test_bench_planner_models.py.
"""
from __future__ import annotations

import collections

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent
from bokeh.models import GlyphRenderer
from bokeh.plotting import figure as Figure
from panel.io.state import set_curdoc

from meter_dashboard.app import pages
from meter_dashboard.meter.view import Planner

#: Bokeh models of the planner page as first served (the page had 410 before issue 19; issue 30 added the
#: "same ε for every signal" box, "Reset to defaults", "Pin this plan" (in a FlexBox: a phone's width) and the
#: budget's largest-T mark: 148; the slide downloads, PNG and SVG: 150; issue 29: the pin button without a
#: FlexBox of its own, δ, T, the budget and the error-rate range without a column each, closed drawers without
#: their bodies, the curve's axes sharing their formatter and label policy: 140; then the sidebar as two forms
#: (ui/form.py) around the ε table as one NumberTable, the sections' toggles and the pin buttons as forms: 77).
FIRST_VIEW_BUDGET = 80


def recorded(doc) -> list:
    """Every change event of ``doc`` as Bokeh emits it (a page would send them in one message)."""
    events, trigger = [], doc.callbacks.trigger_on_change

    def record(event):
        events.append(event)
        trigger(event)

    doc.callbacks.trigger_on_change = record
    return events


def kinds(doc) -> collections.Counter:
    return collections.Counter(type(m).__name__ for m in doc.models)


def build_page(**params):
    doc = Document()
    with set_curdoc(doc):
        view = Planner(sync_url=True, **params)
        column = pn.Column(view.controls(), view.results())
        doc.add_root(column.get_root(doc))
    return view, doc


def test_first_view_stays_within_its_model_budget():
    doc = Document()
    with set_curdoc(doc):
        doc.add_root(pages.build("planner").get_root(doc))
    count = len(doc.models)
    assert count <= FIRST_VIEW_BUDGET, (count, kinds(doc).most_common(12))
    # one plot (the curve over T): one renderer per variant and the budget line; nothing of the sections yet
    assert sum(isinstance(m, Figure) for m in doc.models) == 1
    assert sum(isinstance(m, GlyphRenderer) for m in doc.models) == 6


def test_sections_are_built_the_first_time_they_are_opened():
    view, doc = build_page(budget=50_000)
    before = len(doc.models)
    assert view.sweep_plot is None and view.check is None and view.budget_section.pane is None
    assert view.plan.with_sweep is False and view.plan.sweep_curves == {}  # not even computed
    assert list(view.plan.budget_variants) == ["incremental"]
    with set_curdoc(doc):
        view.sections.open("sweep")
    assert sum(isinstance(m, Figure) for m in doc.models) == 2 and view.plan.sweep_curves["parameter"] == "delta"
    with set_curdoc(doc):
        view.sections.open("check")
        view.sections.open("whatif")
    assert view.check is not None and len(doc.models) > before + 40
    assert all(view.plan.result.max_steps[v] is not None for v in view.plan.result.max_steps)  # every variant now
    opened = len(doc.models)
    with set_curdoc(doc):
        view.sections.show([])  # closed: hidden, kept
        view.sections.show(["sweep", "check", "whatif"])
    assert len(doc.models) == opened


def test_drawers_are_closed_unless_a_link_sets_their_inputs():
    """A drawer's inputs are fields of the sidebar's form (no model of their own): closed, they cost nothing."""
    view, doc = build_page()
    assert view.inputs.form.opened == [] and view.seconds.text.value == "2"
    with set_curdoc(doc):
        view.effort.open()
    assert view.inputs.form.opened == ["effort"] and view.effort.is_open
    linked = Planner(reverts=[1, 2, 3], labelers=3)
    linked.controls()
    assert linked.reverts.text.value == "1,2,3" and linked.labelers.text.value == "3"
    assert sorted(linked.inputs.form.opened) == ["effort", "reverts"]


@pytest.mark.parametrize("delta", ["0.05", "0.02"])
def test_a_change_sends_the_changed_columns_and_markup_only(delta):
    view, doc = build_page()
    source = view.curve_plot.source
    x_before = source.data["x"]
    events = recorded(doc)
    with set_curdoc(doc):
        view.delta.text.value = delta
    data = [e for e in events if isinstance(e, ColumnDataChangedEvent)]
    assert len(data) == 1 and data[0].model is source
    assert set(data[0].cols) == {"single_model", "no_adaptivity", "resampling", "regular", "incremental"}  # not x
    assert source.data["x"] is x_before
    changed = {(type(e.model).__name__, e.attr) for e in events if isinstance(e, ModelChangedEvent)}
    # the answer's pane, the budget label on the curve and the form's values (the box's text): nothing rebuilt
    assert {attr for _, attr in changed} <= {"text", "value", "values", "x", "y", "location"}, changed
    assert not any(attr in ("objects", "children", "renderers") for _, attr in changed)


def test_a_change_that_leaves_the_curve_alone_sends_no_data():
    view, doc = build_page()
    events = recorded(doc)
    with set_curdoc(doc):
        view.effort.open()
        events.clear()
        view.labelers.text.value = "3"
    assert not [e for e in events if isinstance(e, ColumnDataChangedEvent)]
    assert "with 3 labelers" in view.headlines.object
