"""The planner's first view is light (issue 29): what a served session builds, and when."""
from __future__ import annotations

from meter_dashboard.meter import view as planner_view


def test_served_planner_fills_its_numbers_once_on_screen(monkeypatch):
    """Served, the numbers and the curve wait for ``ui.lazy.on_screen`` (not ``pn.state.onload``)."""
    later: list = []
    monkeypatch.setattr(planner_view, "_served", lambda: True)
    monkeypatch.setattr(planner_view, "on_screen", later.append)
    page = planner_view.Planner()
    try:
        assert later == [page._fill] and not page._filled
        assert "computing" in page.curve_plot.figure.title.text
        later[0]()
        assert page._filled and "computing" not in page.curve_plot.figure.title.text
    finally:
        page.plan.stop_work()
