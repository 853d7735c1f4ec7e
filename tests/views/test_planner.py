"""The planner component without a browser: notebook construction and live updates."""
from __future__ import annotations

import io

import pandas as pd
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


def test_csv_download_has_every_variant_and_the_inputs():
    planner = md.Planner(budget=20_000)
    text = planner._csv().getvalue()
    head = [line for line in text.splitlines() if line.startswith("#")]
    assert "# δ (failure probability): 0.01  (confidence 1 − δ = 0.99)" in head
    assert "# T (development steps): 10" in head and "# Label budget: 20,000" in head
    frame = pd.read_csv(io.StringIO(text), comment="#", index_col="variant")
    assert frame.loc["regular", "labels"] == 100_033 and frame.loc["incremental", "labels"] == 38_005
    assert frame["budget_max_steps"].notna().all()  # every variant's answers, though the page shows one
    assert planner.csv_download.filename == "meter-plan_T10_delta0.01_eps0.01-0.05_m5_budget20000.csv"
