"""The planner component without a browser: notebook construction and live updates."""
from __future__ import annotations

import panel as pn

import meter_dashboard as md
from meter_dashboard.meter.model import MeterPlan


def test_notebook_construction_from_settings():
    planner = md.Planner(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)
    assert isinstance(planner.plan, MeterPlan)
    layout = planner.__panel__()
    assert not isinstance(layout, pn.template.base.BaseTemplate)  # no template inside the component
    root = pn.panel(planner).get_root()
    assert root is not None
    html = planner.table.object
    assert 'label-count-regular">100,033<' in html
    assert 'label-count-incremental">38,005<' in html


def test_view_follows_the_model_and_keeps_last_good_numbers():
    planner = md.Planner()
    planner.plan.delta = 0.1
    expected = f"{md.plan([0.01, 0.02, 0.03, 0.04, 0.05], 0.1, 10).labels['regular']:,}"
    assert f'label-count-regular">{expected}<' in planner.table.object
    planner.plan.epsilon = [0.05, 0.04, 0.03, 0.02, 0.01]
    assert "epsilon must be non-decreasing" in planner.meter_error.object
    assert f'label-count-regular">{expected}<' in planner.table.object
    assert "Showing the last valid plan" in planner.headlines.object


def test_curves_feed_the_plot_sources():
    planner = md.Planner(steps=10)
    data = planner.curve_source.data
    assert list(data["x"][:3]) == [1, 2, 3]
    assert data["regular"][9] == 100_033
    planner.plan.sweep_parameter = "signals"
    assert list(planner.sweep_source.data["x"][:2]) == [1, 2]


def test_csv_download_has_every_variant():
    planner = md.Planner()
    text = planner._csv().getvalue()
    assert text.splitlines()[0].startswith("variant,labels")
    assert "regular,100033" in text
