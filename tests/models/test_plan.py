"""The planner's model without a browser: derived values, messages, URL round trip."""
from __future__ import annotations

import math

import pytest

import meter_dashboard as md
from meter_dashboard.meter.model import PRESETS, MeterPlan, resize_ranges

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]


def test_defaults_are_the_papers_nonuniform_meter():
    p = MeterPlan()
    assert p.error == ""
    assert p.result.labels["regular"] == 100_033      # Cor 1, Sec 5.1
    assert p.result.labels["incremental"] == 38_005   # Cor 2, Sec 5.1
    assert p.result.savings["incremental"] == pytest.approx(380_050 / 38_005)


def test_plan_function_result_object():
    r = md.plan(NONUNIFORM, delta=0.01, steps=10, budget=50_000, seconds_per_label=2, labelers=2, cost_per_hour=20)
    text = repr(r)
    assert "incremental" in text and "38,005" in text and "recommended" in text
    frame = r.to_frame()
    assert list(frame.index) == list(md.VARIANTS)
    assert frame.loc["regular", "labels"] == 100_033
    assert frame.loc["incremental", "labeler_hours"] == pytest.approx(38_005 * 2 / 3600)
    assert frame.loc["incremental", "calendar_hours"] == pytest.approx(38_005 * 2 / 3600 / 2)
    assert frame.loc["incremental", "cost"] == pytest.approx(38_005 * 2 / 3600 * 20)
    assert r.sentence() == ("With the incremental meter, 38,005 labels support 10 development steps: with "
                            "probability 0.99 every signal's distributional overfitting stays below its ε.")
    d = r.to_dict()
    assert d["labels"]["incremental"] == 38_005 and d["budget"]["labels"] == 50_000


def test_inverse_answers_for_a_budget():
    r = md.plan(NONUNIFORM, delta=0.01, steps=10, budget=38_005)
    assert r.max_steps["incremental"] >= 10
    assert r.confidence["incremental"] >= 0.99
    assert r.min_epsilon["incremental"] <= 0.01
    r = md.plan(NONUNIFORM, delta=0.01, steps=10, budget=20_000)  # the "we have 20k labels"
    assert r.max_steps["regular"] == 0 and r.min_epsilon["regular"] > 0.01
    assert r.confidence["regular"] == 0.0


def test_invalid_epsilon_sets_message_and_keeps_last_result():
    p = MeterPlan()
    before = p.result
    p.epsilon = [0.05, 0.04, 0.03, 0.02, 0.01]
    assert "epsilon must be non-decreasing" in p.error
    assert p.result is before
    p.epsilon = NONUNIFORM
    assert p.error == "" and p.result.labels["regular"] == 100_033


@pytest.mark.parametrize("change,fragment", [
    (dict(tenant_steps=[3, 3]), "tenant_steps must be steps per tenant summing to steps = 10"),
    (dict(reverts=[5, 5, 5, 5, 5, 5]), "reverts must be positions"),
    (dict(ranges=[0, 0.5, 1]), "ranges must be m + 1 = 6 boundaries"),
    (dict(ranges=[0, 0.02, 0.01, 0.03, 0.04, 1]), "ranges must be strictly increasing"),
    (dict(tenants=11), "tenants must be at most steps = 10"),
])
def test_invalid_combinations(change, fragment):
    p = MeterPlan()
    p.param.update(**change)
    assert fragment in p.error
    assert p.result.labels["regular"] == 100_033


def test_param_refuses_out_of_bounds_at_assignment():
    p = MeterPlan()
    with pytest.raises(ValueError):
        p.delta = 1.5
    with pytest.raises(ValueError):
        p.steps = 0
    assert p.delta == 0.01 and p.steps == 10


def test_constructor_raises_on_invalid_plan():
    with pytest.raises(md.InputError, match="epsilon must be non-decreasing"):
        MeterPlan(epsilon=[0.02, 0.01])


def test_revert_budget_defaults_positions_and_presets():
    p = MeterPlan()
    p.revert_budget = 3
    assert p.reverts == [1, 2, 3]
    assert p.result.labels["regular"] == 75_892  # Eqs. 13-14
    p.apply_preset("Paper: two tenants")
    assert p.result.labels["regular"] == 63_261 and p.reverts == []
    p.apply_preset("Paper: uniform ε = 0.01 (m = 5)")
    assert p.result.labels["regular"] == 108_080 and p.result.labels["incremental"] == 66_527
    assert set(PRESETS) >= {"Paper: ε = 0.01…0.05", "Paper: three reverts (1, 2, 3)"}


def test_set_signals_resizes_epsilon_and_ranges_together():
    p = MeterPlan()
    p.set_signals(3)
    assert p.epsilon == [0.01, 0.02, 0.03] and p.ranges == [0.0, 0.005, 0.01, 1.0] and p.error == ""
    p.set_signals(7)
    assert len(p.epsilon) == 7 and len(p.ranges) == 8 and p.error == ""
    assert resize_ranges([0, 0.3, 0.6, 1], 6)[-1] == 1.0


def test_curves_and_sweeps_are_derived():
    p = MeterPlan(steps=10)
    assert p.curves["steps"][0] == 1 and p.curves["steps"][-1] == 100
    assert p.curves["regular"][9] == 100_033
    for name in ("delta", "epsilon", "signals", "tenants"):
        p.sweep_parameter = name
        assert p.sweep_curves["parameter"] == name
        assert len(p.sweep_curves["x"]) == len(p.sweep_curves["incremental"])


def test_url_round_trip():
    p = MeterPlan(epsilon=NONUNIFORM, delta=0.05, steps=12, tenant_steps=[4, 8], reverts=[1, 6], budget=70_000,
                  labelers=3, cost_per_hour=25.5)
    q = p.query_string()
    restored = MeterPlan.from_query(q)
    for name in ("epsilon", "ranges", "delta", "steps", "tenant_steps", "reverts", "budget", "labelers",
                 "cost_per_hour"):
        assert getattr(restored, name) == getattr(p, name), name
    assert restored.result.labels == p.result.labels


def test_url_with_single_epsilon_and_signals():
    p = MeterPlan.from_query("?epsilon=0.01&signals=5&delta=0.01&steps=10")
    assert p.epsilon == [0.01] * 5 and p.result.labels["regular"] == 108_080


@pytest.mark.parametrize("query,fragment", [
    ("delta=2", "delta must be in (0, 1); got '2'"),
    ("epsilon=0.01,oops", "epsilon must be a comma-separated list of numbers"),
    ("steps=-3", "steps must be a whole number >= 1"),
    ("ranges=0,0.5,0.4,1", "ranges must be strictly increasing"),
    ("epsilon=0.01,0.02&signals=3", "signals must be the number of epsilon values"),
    ("sweep=__import__('os')", "sweep must be one of"),
])
def test_bad_url_values_raise_and_change_nothing(query, fragment):
    p = MeterPlan()
    before = p.to_query()
    with pytest.raises(md.InputError) as info:
        p.update_from_query(query)
    assert fragment in str(info.value)
    assert p.to_query() == before


def test_max_steps_inf_is_reported_not_crashing():
    r = md.plan(0.2, delta=0.01, steps=10, signals=2, budget=10**7)
    assert r.max_steps["incremental"] == math.inf
    assert r.to_dict()["budget"]["max_steps"]["incremental"] is None


def test_query_with_epsilon_only_keeps_the_current_ranges():
    p = MeterPlan(ranges=[0, 0.01, 0.02, 0.03, 0.1, 1])
    p.update_from_query("epsilon=0.01,0.02,0.03,0.04,0.05")
    assert p.ranges == [0, 0.01, 0.02, 0.03, 0.1, 1]
    p.update_from_query("epsilon=0.01,0.02,0.03")
    assert p.ranges == [0.0, 0.01, 0.02, 1.0] and p.error == ""
