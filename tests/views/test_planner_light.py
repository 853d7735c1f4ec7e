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


def test_the_sidebar_holds_its_single_boxes_straight_and_their_messages_under_them():
    """δ, T, the budget and the error-rate range have no column each; a message goes right under its box."""
    import panel as pn

    page = planner_view.Planner()
    column = page.controls()
    for box in (page.delta, page.steps, page.budget, page.max_error_rate):
        parts = box.parts()
        start = column.objects.index(parts[0])
        assert column.objects[start:start + len(parts)] == parts
    assert not any(isinstance(o, pn.Column) and page.delta.text in o.objects for o in column.objects)
    page.delta.text.value = "1.5"
    index = column.objects.index(page.delta.slider)
    assert column.objects[index + 1] is page.delta.message_pane
    assert "must be in (0, 1); got &#x27;1.5&#x27;" in page.delta.message_pane.object
    assert column.objects[index + 2] is page.steps.text


def test_a_closed_drawer_holds_its_toggle_only_and_opening_puts_its_body_right_under_it():
    page = planner_view.Planner()
    column = page.controls()
    drawer = page.inputs.effort
    assert drawer.body is None and drawer.toggle in column.objects
    drawer.open()
    index = column.objects.index(drawer.toggle)
    assert column.objects[index + 1] is drawer.body and drawer.body.visible
    assert page.seconds.text in drawer.body.select(type(page.seconds.text))
    drawer.toggle.value = False
    assert not drawer.body.visible and column.objects.count(drawer.body) == 1
    drawer.open()
    assert drawer.body.visible and column.objects.count(drawer.body) == 1


def test_a_link_that_sets_reverts_shows_the_drawer_open_and_its_message_under_its_body():
    page = planner_view.Planner(reverts=[1, 2], revert_budget=2)
    column = page.controls()
    drawer = page.inputs.revert_drawer
    index = column.objects.index(drawer.toggle)
    assert column.objects[index + 1] is drawer.body and page.reverts.text.value == "1,2"
    pane = page.reverts_error
    assert column.objects[index + 2] is pane


def test_a_message_about_reverts_before_the_drawer_opens_stays_under_the_drawer():
    page = planner_view.Planner()
    column = page.controls()
    drawer = page.inputs.revert_drawer
    pane = page.reverts_error  # made before the drawer's body
    assert column.objects[column.objects.index(drawer.toggle) + 1] is pane
    drawer.open()
    index = column.objects.index(drawer.toggle)
    assert column.objects[index + 1:index + 3] == [drawer.body, pane]


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
