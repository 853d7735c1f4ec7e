"""SessionModel: the replay session's param model (no browser)."""
from __future__ import annotations

import pytest

from meter_dashboard._validation import InputError
from meter_dashboard.models.plan import MeterPlan
from meter_dashboard.models.session import SessionModel
from meter_dashboard.models.trace import example_path

GOOD = b"step,val_accuracy,test_accuracy\n1,0.90,0.88\n2,0.92,0.91\n3,0.95,0.90\n"


def test_defaults_are_defined_once_on_the_plans_parameters():
    # Issue 11 #6 (on purpose): the page, the notebook and the CLI share MeterPlan's defaults
    # (delta = 0.01, like `meter-dashboard replay`), and T is the trace's length (issue 11 #3).
    s = SessionModel()
    assert s.plan.epsilon == MeterPlan.param.epsilon.default == [0.01, 0.02, 0.03, 0.04, 0.05]
    assert s.plan.ranges == MeterPlan.param.ranges.default and s.plan.delta == MeterPlan.param.delta.default == 0.01
    assert s.trace is None and s.result is None and s.current is None and s.steps_source == "trace"
    s.load_example("emocontext")
    assert s.plan.steps == 8 and s.result.budget == 8


def test_example_loads_and_shows_the_last_step():
    s = SessionModel(example="emocontext")
    assert s.example == "emocontext" and s.test_size == 5509
    assert s.position == 7
    cur = s.current
    assert (cur["step"], cur["signal"], cur["incremental_signal"], cur["epsilon"]) == (8, 3, 3, 0.03)
    assert "Loaded example" in s.status


def test_the_session_holds_the_planners_model():
    plan = MeterPlan(epsilon=[0.01] * 5, delta=0.1, steps=8)
    s = SessionModel(plan=plan, example="emocontext")
    assert s.plan is plan
    assert s.result.labels_needed["incremental"] == 50776  # Section 3.3: "only 50K labels"
    plan.delta = 0.01  # the planner changes the plan: the replay follows
    assert s.result.settings["delta"] == 0.01
    assert s.result.labels_needed["incremental"] > 50776
    plan.ranges = [0, 0.001, 0.002, 0.003, 0.004, 1]
    # gaps .0078 .0030 .0066 .0078 .0105 .0035 .0084 .0161: 0.0030 sits on the boundary of [0.003, 0.004)
    assert s.result.signal.tolist() == [5, 4, 5, 5, 5, 4, 5, 5]
    # a new plan object: the replay follows the new one
    s.plan = MeterPlan(delta=0.1, steps=4)
    assert s.result.budget == 4 and any(a.kind == "beyond_budget" for a in s.result.alarms)


def test_an_invalid_plan_keeps_the_last_replay():
    s = SessionModel(example="emocontext")
    before = s.result
    s.plan.epsilon = [0.05, 0.04, 0.03, 0.02, 0.01]
    assert s.plan.error and s.result is before
    s.plan.epsilon = [0.01, 0.02, 0.03, 0.04, 0.06]
    assert not s.plan.error and s.result is not before


def test_a_bad_upload_keeps_the_previous_trace():
    s = SessionModel(example="emocontext")
    trace, result = s.trace, s.result
    assert not s.load(b"step,val_accuracy,test_accuracy\n1,0.9,oops\n", name="bad.csv")
    assert s.error == "row 2, column 3 (test_accuracy): test_accuracy must be a number in [0, 1]; got 'oops'"
    assert s.trace is trace and s.result is result and s.position == 7
    assert s.load(GOOD, name="good.csv")
    assert s.error == "" and s.trace.name == "good.csv" and s.example is None
    assert s.position == 2 and s.current["step"] == 3


def test_test_size_follows_the_trace_that_carried_it():
    s = SessionModel(example="emocontext")
    assert s.test_size == 5509
    s.load(GOOD, name="mine.csv")  # a CSV has no n: the example's n must not stick to it
    assert s.test_size is None
    s.test_size = 40_000  # typed by the person: kept across uploads without n
    s.load(GOOD, name="again.csv")
    assert s.test_size == 40_000
    assert not any(a.kind == "test_set_too_small" for a in s.result.alarms)
    s.load(example_path("synthetic_overfitting").read_bytes(), name="synthetic.json")
    assert s.test_size == 20_000  # the JSON's own test_size


def test_changing_test_size_and_meter_replays():
    s = SessionModel(example="emocontext", plan={"delta": 0.1})  # the paper's Figure 3 setting
    assert any(a.kind == "test_set_too_small" for a in s.result.alarms)
    s.test_size = 30_000
    assert not any(a.kind == "test_set_too_small" for a in s.result.alarms)
    s.variant = "regular"  # the regular meter needs 72,425 at this plan
    assert s.result.needed == 72425 and any(a.kind == "test_set_too_small" for a in s.result.alarms)
    assert s.current["epsilon"] == s.current["epsilon_regular"]


def test_moving_through_the_replay():
    s = SessionModel(example="emocontext")
    assert not s.step_forward()
    assert s.step_back() and s.current["step"] == 7
    s.first()
    assert s.position == 0 and not s.step_back()
    s.jump_to_step(5)
    assert s.current["step"] == 5 and s.current["signal"] == 3
    with pytest.raises(InputError, match="step must be a step of the trace"):
        s.jump_to_step(42)
    s.last()
    assert s.current["step"] == 8


def test_loading_a_shorter_trace_moves_the_position_into_range():
    s = SessionModel(example="synthetic_overfitting")
    assert s.position == 19
    s.load(GOOD)
    assert s.position == 2
    with pytest.raises(ValueError):
        s.position = 5  # beyond the trace


def test_constructor_errors_are_the_trace_errors():
    with pytest.raises(InputError, match="row 2, column 3"):
        SessionModel(trace=b"step,val_accuracy,test_accuracy\n1,0.5,2\n")
    with pytest.raises(InputError, match="example must be one of"):
        SessionModel(example="nope")


def test_url_query_round_trip():
    s = SessionModel(example="synthetic_overfitting", plan={"delta": 0.1})
    s.plan.param.update(steps=20, tenant_steps=[12, 8], tenants=2, reverts=[9], revert_budget=1)
    s.variant = "regular"
    q = s.to_query()
    assert q["meter"] == "regular" and q["example"] == "synthetic_overfitting"
    assert q["tenant_steps"] == "12,8" and q["reverts"] == "9" and q["delta"] == "0.1"
    assert "test_size" not in q  # it comes with the example
    other = SessionModel()
    other.update_from_query(q)
    assert other.variant == "regular" and other.example == "synthetic_overfitting"
    assert other.plan.tenant_steps == [12, 8] and other.plan.reverts == [9]
    assert other.result.to_dict() == s.result.to_dict()
    # the planner's own query string works as is
    other.update_from_query("?epsilon=0.01&signals=3&delta=0.05&steps=20&test_size=1234")
    assert other.plan.epsilon == [0.01] * 3 and len(other.plan.ranges) == 4
    assert other.test_size == 1234 and other.to_query()["test_size"] == "1234"
    with pytest.raises(InputError, match="meter must be"):
        other.update_from_query({"meter": "resampling"})
    with pytest.raises(InputError, match="delta must be"):
        other.update_from_query({"delta": "7"})
    assert other.plan.delta == 0.05  # nothing changed
