"""The planner's first view is light (issue 29): what a served session builds, and when."""
from __future__ import annotations

from meter_dashboard.meter import view as planner_view


def _served_planner(monkeypatch, loaded: bool):
    """A Planner made as a served session makes it (the page loaded or not); what it handed to ``on_screen``."""
    import panel as pn

    later: list = []
    monkeypatch.setattr(planner_view, "_served", lambda: True)
    monkeypatch.setattr(type(pn.state), "loaded", property(lambda self: loaded))
    monkeypatch.setattr(planner_view, "on_screen", later.append)
    return planner_view.Planner(), later


def test_served_planner_fills_its_numbers_once_on_screen(monkeypatch):
    """Served while the page loads, the numbers and the curve wait for ``ui.lazy.on_screen`` (not ``pn.state.onload``)."""
    page, later = _served_planner(monkeypatch, loaded=False)
    try:
        assert later == [page._fill] and not page._filled
        assert "computing" in page.curve_plot.figure.title.text
        later[0]()
        assert page._filled and "computing" not in page.curve_plot.figure.title.text
    finally:
        page.plan.stop_work()


def test_served_planner_built_after_the_page_loaded_carries_its_numbers(monkeypatch):
    """The page's builder builds the view once the browser connected: the numbers go out with it, in one message."""
    page, later = _served_planner(monkeypatch, loaded=True)
    try:
        assert later == [] and page._filled
        assert "computing" not in page.curve_plot.figure.title.text
        assert "38,005" in page.table.object  # the paper's example (ease.ml/meter Secs. 4-5)
    finally:
        page.plan.stop_work()


def test_the_sidebar_is_two_forms_around_the_meter_table():
    """Issue 29: the sidebar's twenty inputs are two Form models around one NumberTable, not a widget each."""
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    page = planner_view.Planner()
    column = page.controls()
    assert column.objects == [page.inputs.top, page.meter_table, page.inputs.form]
    doc = Document()
    with set_curdoc(doc):
        doc.add_root(column.get_root(doc))
    forms = [m for m in doc.models if type(m).__name__.startswith("Form")]
    assert len(forms) == 2
    tables = [m for m in doc.models if type(m).__name__.startswith("NumberTable")]
    assert len(tables) == 1
    # the two forms and the table, their data, the column and stylesheets: 11 (66 before the forms, 27 with a Tabulator)
    assert len(doc.models) <= 13, len(doc.models)


def test_a_box_s_message_shows_right_under_it_and_its_slider():
    page = planner_view.Planner()
    form = page.inputs.form
    markup = form.markup
    delta, message, steps = (markup.index(s) for s in ('data-field="delta"', 'data-slot="delta:message"',
                                                        'data-field="steps"'))
    assert delta < markup.index('type="range" min="0.001"') < message < steps
    page.delta.text.value = "1.5"
    assert "must be in (0, 1); got &#x27;1.5&#x27;" in page.delta.message_pane.object
    assert form.slots["delta:message"] == page.delta.message_pane.object
    assert page.plan.delta == 0.01  # the plan keeps its last good value
    page.delta.text.value = "0.02"
    assert form.slots["delta:message"] == "" and page.plan.delta == 0.02


def test_a_drawer_holds_its_inputs_and_its_message_follows_it():
    page = planner_view.Planner()
    markup = page.inputs.form.markup
    details = markup.index('data-drawer="reverts"')
    closing = markup.index("</details>", details)
    assert details < markup.index('data-field="reverts"') < closing < markup.index('data-slot="error-reverts"')
    assert page.inputs.form.opened == []
    page.revert_drawer.open()
    assert page.inputs.form.opened == ["reverts"]


def test_a_link_that_sets_reverts_shows_the_drawer_open():
    page = planner_view.Planner(reverts=[1, 2], revert_budget=2)
    assert page.inputs.form.opened == ["reverts"] and page.reverts.text.value == "1,2"
    assert page.inputs.form.values["reverts"] == "1,2"


def test_the_curves_axes_share_their_tick_formatter_and_label_policy():
    """One model each for both axes (stateless): the counts read 100,000 on both, every tick labelled."""
    from meter_dashboard.meter.figures import LabelsPlot

    fig = LabelsPlot("T", "title").figure
    x, y = fig.xaxis[0], fig.yaxis[0]
    assert x.formatter is y.formatter and x.formatter.format == "0,0"
    assert x.major_label_policy is y.major_label_policy
    swept = LabelsPlot("δ", "title", log_x=True).figure  # a log x axis keeps its own tick labels (10⁻²)
    assert swept.xaxis[0].formatter is not swept.yaxis[0].formatter
    assert swept.xaxis[0].major_label_policy is swept.yaxis[0].major_label_policy
