"""/ci and /compare build fewer Bokeh models per session, with nothing on screen changed (issue 29).

Counted without a browser: a plot's series is its glyph alone and its series share one every-row
filter; the axes share their label policy; a message pane is made the first time there is a message;
the number boxes sit straight in their column.  What this saves in server CPU is measured by
``python -m tests.benchmarks.load.cost --pages ci,compare``.
"""
from __future__ import annotations

import panel as pn
from bokeh.document import Document
from bokeh.models import AllIndices, ColumnDataSource, GlyphRenderer
from bokeh.plotting import figure as bokeh_figure
from panel.io.state import set_curdoc

from meter_dashboard.ci.view import CI
from meter_dashboard.comparison.view import Compare
from meter_dashboard.core.plots import figure, line
from meter_dashboard.ui.style import HTML

#: Bokeh models of each page built outside a server (/ci's replay plot included): before issue 29's lighter
#: sessions, /ci 215 and /compare 222 (182 before its inputs were forms; /ci 142 with its condition a Panel box).
BUDGET = {"ci": 140, "compare": 165}


def _page(cls, **params):
    doc = Document()
    with set_curdoc(doc):
        view = cls(sync_url=True, **params)
        column = pn.Column(*(p for p in (view.controls(), view.results()) if p is not None))
        doc.add_root(column.get_root(doc))
    return view, doc


def _figures(view) -> list:
    if isinstance(view, CI):
        return [view.curves.curve_fig, view.check.replay_fig]
    return [view.figures.hist_fig, view.figures.runs_fig, view.runs_needed.curve_fig]


def _panes(layout, css: str) -> list:
    return [p for p in layout.select(HTML) if css in p.css_classes]


def test_the_pages_stay_within_their_model_budgets():
    for name, cls in (("ci", CI), ("compare", Compare)):
        _, doc = _page(cls)
        assert len(doc.models) <= BUDGET[name], (name, len(doc.models))


def test_a_series_is_its_glyph_alone_and_the_series_share_one_filter():
    for cls in (CI, Compare):
        view, _ = _page(cls)
        for fig in _figures(view):
            renderers = [r for r in fig.renderers if isinstance(r, GlyphRenderer)]
            assert renderers
            for r in renderers:
                assert r.nonselection_glyph == "auto" and r.muted_glyph == "auto", (fig.title.text, r.glyph)
            filters = {id(r.view.filter) for r in renderers if isinstance(r.view.filter, AllIndices)}
            assert len(filters) <= 1, fig.title.text
            if cls is Compare or fig is view.curves.curve_fig:
                assert fig.xaxis[0].major_label_policy is fig.yaxis[0].major_label_policy


def test_a_line_looks_as_bokeh_plotting_draws_it():
    source = ColumnDataSource({"x": [1, 2], "y": [3, 4]})
    ours = line(figure(), source, "x", "y", line_color="#0072B2", line_width=2.5, line_alpha=0.45, line_dash="dashed")
    theirs = bokeh_figure().line("x", "y", source=source, color="#0072B2", line_width=2.5, alpha=0.45,
                                 line_dash="dashed")
    ignore = {"id"}
    a = {k: v for k, v in ours.glyph.properties_with_values().items() if k not in ignore}
    b = {k: v for k, v in theirs.glyph.properties_with_values().items() if k not in ignore}
    assert a == b


def test_compare_glyphs_look_as_before():
    """The runs' points, the bootstrap bars and the runs-needed star: the visuals ``fig.scatter``/``fig.quad`` set."""
    view, _ = _page(Compare)
    runs = view.figures.runs_fig.renderers[0].glyph
    assert (runs.fill_color.field, runs.line_color.field, runs.fill_alpha, runs.line_alpha, runs.size) == (
        "color", "color", 0.8, 0.8, 9)
    legend = view.figures.runs_fig.legend[0]
    assert legend.location == "bottom_right" and legend.items[0].label.field == "outcome"
    bars = view.figures.hist_fig.renderers[0].glyph
    assert (bars.fill_alpha, bars.line_alpha, bars.fill_color, bars.line_color) == (0.55, 0.55, "#0072B2", "#0072B2")


def test_the_bootstrap_boxes_share_their_handles_and_frame_edges():
    from bokeh.models import BoxAnnotation, Node

    view, _ = _page(Compare)
    fig = view.figures.hist_fig
    boxes = [m for m in fig.references() if isinstance(m, BoxAnnotation)]
    assert len(boxes) == 5 and len({id(b.handles) for b in boxes}) == 1
    nodes = [m for m in fig.references() if isinstance(m, Node)]
    assert len(nodes) == len({(n.target, n.symbol) for n in nodes}) == 4
    low = view.figures.region_low  # still from the frame's left edge to 0.5
    assert low.right == 0.5 and (low.left.target, low.left.symbol) == ("frame", "left")


def test_ci_sections_sit_straight_in_the_results_column():
    view, _ = _page(CI)
    results = view.results()
    for part in (*view.answer.parts(), *view.curves.parts()):
        assert part in results.objects


def test_ci_messages_are_slots_of_a_form_right_under_the_condition():
    """Issue 29: the condition's message is a slot of the form under the condition box (hidden while empty)."""
    view, _ = _page(CI)
    sidebar, inputs = view.controls(), view.inputs
    markup = inputs.form.markup
    assert markup.index('data-field="condition"') < markup.index('data-slot="condition-error"') < markup.index("ci-grammar")
    assert inputs.form.slots["condition-error"] == "" and inputs.numbers_form.slots["other-errors"] == ""
    view.model.condition = "n - o > 0.02 +/- "
    assert "column" in view.condition_error.object and inputs.form.slots["condition-error"] == view.condition_error.object
    view.model.condition = "n > 0.8 +/- 0.05"
    assert view.condition_error.object == "" and inputs.form.slots["condition-error"] == ""


def test_ci_url_errors_get_their_slot_at_the_end_of_the_sidebar():
    view, _ = _page(CI)
    view.inputs.url_errors = ["URL key steps must be a whole number in [1, 1000000000]; got '0'"]
    view.inputs.show_errors()
    sidebar, form = view.controls(), view.inputs.numbers_form
    assert "URL key steps" in form.slots["other-errors"] and sidebar.objects[-1] is form
    assert form.markup.rindex("data-slot=") == form.markup.index('data-slot="other-errors"')


def test_ci_exact_search_row_is_placed_when_there_is_a_search():
    view, _ = _page(CI)
    sidebar = view.controls()
    assert view.inputs.exact_cancel not in list(sidebar.select(pn.widgets.Button))
    view.model.bound = "binomial"
    assert view.inputs.exact_cancel in list(sidebar.select(pn.widgets.Button))


def test_ci_boxes_are_fields_of_the_sidebar_forms():
    view, _ = _page(CI)
    inputs = view.inputs
    assert inputs.form.box("reliability") is inputs.reliability.text
    assert inputs.numbers_form.box("steps") is inputs.steps.text
    inputs.reliability.text.value = "2"
    assert "Reliability (1 − δ) must be" in inputs.form.slots["reliability:message"] == inputs.reliability.message_pane.object


def test_compare_link_message_is_made_only_for_a_link_that_had_one():
    view, _ = _page(Compare)
    page = view.results()
    assert _panes(page, "compare-link-message") == []
    assert page.objects[0].margin[0] == 10  # the place the empty link message took: nothing moves


def test_compare_link_message_heads_the_page_when_the_link_had_one():
    view = Compare()
    view.link_message.object = '<div class="md-error">URL key paired must be on or off</div>'  # what the link said
    page = view.results()
    assert page.objects[0] is view.link_message and page.objects[1].margin[0] == 0


def test_compare_boxes_sit_straight_in_their_columns():
    # issue 29: the boxes are fields of the forms (ui.form.Form), which sit straight in the section's columns
    view, _ = _page(Compare)
    page = view.results()
    columns = [c for c in page.select(pn.Column) if "compare-controls" in c.css_classes]
    for key, column, form in (("gamma", columns[0], view.settings.form), ("seed", columns[0], view.settings.form),
                              ("beta", columns[1], view.runs_needed.form)):
        assert form in column.objects and form.box(key) is view.inputs[key].text


def test_served_the_replay_figure_itself_is_made_when_seen(monkeypatch):
    """Served, /ci's replay plot (below the fold) is not even constructed until its place is seen: its sources
    follow the model meanwhile, and the plot made then shows them with the replay's title."""
    from meter_dashboard.ui import lazy

    monkeypatch.setattr(lazy, "served", lambda: True)
    view = CI(trace="ci_commits.csv")
    replay = view.check
    assert replay.replay_fig is None and replay.replay_box is None
    assert len(replay.replay_source.data["commit"]) == 40
    replay.plot_seen.holder.objects[0].seen = True  # what the box's script says when it comes near the screen
    fig = replay.replay_fig
    assert fig is not None and replay.plot_seen.holder.objects == [replay.replay_box]
    assert fig.title.text == "Replay of the commit trace"
    assert {r.data_source for r in fig.renderers} == {replay.replay_source, replay.alarm_source}


def test_compare_sources_share_one_selection_policy():
    view, _ = _page(Compare)
    sources = [view.figures.hist_source, view.figures.runs_source, view.runs_needed.curve_source,
               view.runs_needed.star_source, view.runs_needed.have_source]
    assert len({id(s.selection_policy) for s in sources}) == 1
