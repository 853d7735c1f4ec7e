"""SessionModel: the replay session's param model (no browser)."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from meter_dashboard.core.validation import InputError
from meter_dashboard.meter.model import MeterPlan
from meter_dashboard.meter.model import plan as md_plan
from meter_dashboard.session.model import SessionModel, replay
from meter_dashboard.session.replay import steps_left
from meter_dashboard.session.trace import example_path, load_example

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


# ---------------------------------------------------------------- issue 11 #3: T follows the loaded trace unless fixed
SIX = b"step,val_accuracy,test_accuracy\n" + b"".join(b"%d,0.9,0.89\n" % i for i in range(1, 7))


def test_a_loaded_trace_sets_t_unless_someone_fixed_it():
    s = SessionModel(example="emocontext")
    assert (s.plan.steps, s.steps_source) == (8, "trace")
    s.load_example("synthetic_overfitting")  # 20 steps: "Steps used 20 / 20", not "20 / 8"
    assert s.plan.steps == 20 and s.result.budget == 20 and s.result.within_budget.all()
    assert "steps" not in s.to_query()  # a link keeps following the trace
    s.plan.steps = 12  # the person fixes T
    assert s.steps_source == "user" and s.result.budget == 12
    s.load(SIX, name="six.csv")
    assert s.plan.steps == 12 and s.to_query()["steps"] == "12"
    s.follow_trace()
    assert (s.plan.steps, s.steps_source, s.result.budget) == (6, "trace", 6)


def test_t_from_the_link_or_a_given_plan_is_kept():
    s = SessionModel()
    s.update_from_query("steps=8&example=synthetic_overfitting")
    assert s.steps_source == "link" and s.plan.steps == 8 and s.result.budget == 8
    assert any(a.kind == "beyond_budget" for a in s.result.alarms)  # 12 steps after T = 8: the plan's T is kept
    s.load(SIX)
    assert s.plan.steps == 8
    given = SessionModel(plan=MeterPlan(steps=30), example="emocontext")
    assert given.steps_source == "plan" and given.plan.steps == 30
    mapping = SessionModel(plan={"delta": 0.05}, example="emocontext")
    assert mapping.steps_source == "trace" and mapping.plan.steps == 8 and mapping.plan.delta == 0.05
    tenants = SessionModel(plan={"steps": 20, "tenant_steps": [12, 8], "tenants": 2}, example="emocontext")
    assert tenants.steps_origin == "tenant_steps" and tenants.plan.steps == 20


def test_outputs_are_read_only():
    s = SessionModel(example="emocontext")
    for name, value in (("result", None), ("error", "x"), ("status", "x"), ("trace", None), ("steps_source", "user")):
        with pytest.raises(TypeError):
            setattr(s, name, value)
    s.refuse("the link was wrong")  # the model's own way to record a refusal
    assert s.error == "the link was wrong"


def test_prepare_in_a_thread_then_apply():
    from concurrent.futures import ThreadPoolExecutor

    s = SessionModel(example="emocontext")
    before = s.result
    with ThreadPoolExecutor(1) as pool:
        prepared = pool.submit(s.prepare, SIX, name="six.csv").result()
    assert s.result is before and s.trace.name != "six.csv"  # preparing changes nothing
    assert prepared.result.budget == 6  # replayed with T = the new trace's length
    s.apply(prepared)
    assert s.result is prepared.result and s.plan.steps == 6 and s.status == "Loaded trace 'six.csv': 6 steps."
    # a plan changed in the meantime: apply replays again with the current plan
    prepared = s.prepare_example("emocontext")
    s.plan.delta = 0.2
    s.apply(prepared)
    assert s.result is not prepared.result and s.result.settings["delta"] == 0.2


def test_trace_load_job_reports_and_refuses():
    from meter_dashboard.session.model import TraceLoad

    s = SessionModel(example="emocontext")
    job = TraceLoad(s, SIX, name="six.csv")
    statuses = []
    job.param.watch(lambda e: statuses.append(e.new), "status")
    job.run()
    assert job.prepared is not None and len(job.prepared.trace) == 6 and not job.error
    assert any("reading six.csv" in x for x in statuses) and any("replaying 6 steps" in x for x in statuses)
    bad = TraceLoad(s, b"step,val_accuracy,test_accuracy\n1,0.5,2\n", name="bad.csv")
    bad.run()
    assert bad.prepared is None and "row 2, column 3 (test_accuracy)" in bad.error


def test_a_bad_link_is_recorded_not_raised():
    s = SessionModel(example="emocontext")
    assert not s.apply_link({"delta": "1.5"})
    assert s.error == "The link's settings were not applied: delta must be in (0, 1); got '1.5'"
    assert s.plan.delta == 0.01 and s.apply_link("delta=0.05") and s.plan.delta == 0.05
    with pytest.raises(InputError, match="steps must be a whole number in \\[1, 1000000000000\\]"):
        s.update_from_query({"steps": "1e13"})


def test_defaults_agree_with_the_cli():
    from meter_dashboard.cli import build_parser
    from meter_dashboard.session.replay import replay_defaults

    s = SessionModel()
    assert replay_defaults() == {"ranges": s.plan.ranges, "epsilon": s.plan.epsilon, "delta": s.plan.delta}
    help_text = build_parser()._subparsers._group_actions[0].choices["replay"].format_help()
    assert f"(default {s.plan.delta:g})" in help_text


def test_long_replays_go_to_the_runner_and_late_results_are_dropped(monkeypatch):
    import meter_dashboard.session.model as session_module

    monkeypatch.setattr(session_module, "BACKGROUND_STEPS", 5)  # SIX has 6 steps: "long"

    async def go():
        s = SessionModel(example="emocontext")
        s.load(SIX, name="six.csv")
        s.work_in_background()
        before = s.result
        s.plan.delta = 0.2
        s.plan.delta = 0.3
        assert s.result is before  # nothing computed here, the page stays free
        await s.settled()
        assert s.result.settings["delta"] == 0.3  # the older request (0.2) was never applied after it
        s.plan.steps = 1000
        await s.settled()
        assert s.result.budget == 1000

    asyncio.run(go())

# ---------------------------------------------------------------- issue 24: long traces, the step and the bound in links
def long_trace(n: int = 200) -> bytes:
    """n steps whose gap walks through the five default ranges (and back), so signals change often."""
    gaps = [0.002, 0.007, 0.015, 0.03, 0.08, 0.03, 0.015, 0.007]
    rows = [f"{i},0.9,{0.9 - gaps[(i // 9) % len(gaps)]:.4f}" for i in range(1, n + 1)]
    return ("step,val_accuracy,test_accuracy\n" + "\n".join(rows) + "\n").encode()


def test_next_alarm_and_next_change_jump_to_the_next_such_step():
    s = SessionModel(trace=long_trace(), plan={"delta": 0.1, "steps": 150})
    r = s.result
    shown = r.incremental_signal
    changes = [i for i in range(1, len(r)) if shown[i] != shown[i - 1]]
    assert changes and r.change_positions.tolist() == changes
    s.first()
    seen = []
    while s.next_change():
        seen.append(s.position)
    assert seen == changes and not s.has_next("change")
    s.variant = "regular"  # the regular meter's signal changes more often
    s.first()
    regular = [i for i in range(1, len(s.result)) if s.result.signal[i] != s.result.signal[i - 1]]
    assert s.has_next("change") and s.next_change() and s.position == regular[0]
    s.first()
    assert s.next_alarm() and s.position == 149  # step 150 used the last of T = 150, and steps went on
    assert s.result.step(s.position)["alarms"] == ["budget_used_up"] and s.has_next("alarm")
    assert s.next_alarm() and s.position == 150  # step 151 is the first beyond T = 150
    assert s.result.step(s.position)["alarms"] == ["beyond_budget"] and not s.has_next("alarm")
    assert not s.next_alarm() and s.position == 150


def test_the_step_shown_is_in_the_link_and_restored():
    s = SessionModel(example="emocontext")
    assert "step" not in s.to_query()  # the last step: a loaded trace opens there
    s.jump_to_step(5)
    assert s.to_query()["step"] == "5"
    other = SessionModel()
    other.update_from_query(s.to_query())
    assert other.current["step"] == 5
    with pytest.raises(InputError, match="step must be a step of the trace \\(1..8\\); got '42'"):
        other.update_from_query({"example": "emocontext", "step": "42"})


def test_the_planners_bound_is_the_replays_and_survives_the_round_trip():
    # issue 30 (after issue 24): the planner's exact 15,651 was replayed with Hoeffding's 25,376
    s = SessionModel(example="emocontext")
    s.update_from_query("epsilon=0.01,0.02,0.03,0.04,0.05&delta=0.1&steps=8&bound=binomial")
    assert s.bound == "binomial" and s.result.labels_needed["incremental"] == 15_651  # the planner's count
    assert s.result.settings["bound_used"] == "binomial" and "exact binomial bound" in s.result.bound_text
    s.update_from_query({"max_error_rate": "0.2"})
    assert s.result.labels_needed["incremental"] == 10_051
    q = s.to_query()
    assert q["bound"] == "binomial" and q["max_error_rate"] == "0.2"
    back = MeterPlan.parse_query(s.planner_query())  # what the planner reads from the link
    assert back["bound"] == "binomial" and back["max_error_rate"] == 0.2 and back["delta"] == 0.1
    s.update_from_query({"delta": "0.05"})  # a link without the keys keeps them
    assert s.bound == "binomial" and s.to_query()["bound"] == "binomial"
    s.update_from_query({"bound": "hoeffding"})
    assert s.bound == "hoeffding" and s.max_error_rate is None and "bound" not in s.to_query()
    assert s.result.settings["bound_used"] == "hoeffding" and s.result.bound_text == "Hoeffding's bound"
    with pytest.raises(InputError, match="bound must be one of"):
        s.update_from_query({"bound": "magic"})
    with pytest.raises(InputError, match="max_error_rate"):
        s.update_from_query({"bound": "binomial", "max_error_rate": "0.7"})
    assert s.bound == "hoeffding"  # a refused link changes nothing


def test_a_plan_with_the_exact_bound_replays_with_it_everywhere():
    plan = MeterPlan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10, bound="binomial",
                     with_sweep=False, exact_points=2)
    s = SessionModel(example="emocontext", plan=plan)
    assert s.bound == "binomial" and s.result.labels_needed["incremental"] == 27_151  # not Hoeffding's 38,005
    assert replay(load_example("emocontext"), steps=10, bound="binomial").labels_needed["incremental"] == 27_151
    assert replay(load_example("emocontext"), plan).labels_needed["incremental"] == 27_151


def test_a_method_without_an_exact_count_says_which_bound_it_used():
    from meter_dashboard.session.replay import ReplayResult

    r = replay(load_example("emocontext"), steps=10)
    refused = dataclasses.replace(r, settings={**r.settings, "bound": "binomial", "bound_used": "hoeffding",
                                               "bound_refused": "above the cap"})
    assert isinstance(refused, ReplayResult)
    assert refused.bound_text.startswith("Hoeffding's bound: the incremental meter has no exact count here")


def test_a_used_test_set_answers_how_many_steps_it_has_left():
    # issue 30: n = 10,000 and a 12-step trace read "Step 12 used the last of the T = 12 steps this test set supports"
    records = [{"step": k, "val_accuracy": 0.8 + 0.005 * k, "test_accuracy": 0.79 + 0.004 * k} for k in range(1, 13)]
    r = replay(records, test_size=10_000)
    left = r.steps_left
    expected = md_plan([0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 12, budget=10_000)  # the planner's inverse
    assert (left.supported, left.used, left.left) == (expected.max_steps["incremental"], 12, 0) == (0, 12, 0)
    assert left.guaranteed_epsilon[0] == pytest.approx(expected.min_epsilon["incremental"])
    assert not r.steps_given and "budget_used_up" not in {a.kind for a in r.alarms + r.notes}
    note = next(a for a in r.notes if a.kind == "steps_from_trace")
    assert "No T was given: T = 12 is the trace's number of steps" in note.message
    assert "10,000 labels support 0 steps at the planned ε" in left.sentence()
    assert "still guarantee ε₁ = 0.01973" in left.sentence()
    # a bigger test set: the planner's 110 steps at these settings, 98 left
    big = replay(records, test_size=50_000, steps=20)
    assert (big.steps_left.supported, big.steps_left.left) == (110, 98) and big.steps_given
    assert big.summary()["steps_left"]["steps_left"] == 98
    assert "steps left: 50,000 labels support 110 steps" in repr(big)
    assert "Steps left: 50,000 labels support 110 steps" in big._repr_html_()
    # the session model says the same, and where T comes from
    s = SessionModel(trace=records)
    s.test_size = 10_000
    assert s.result.steps_left.left == 0 and s.steps_origin == "trace" and not s.result.steps_given
    s.plan.steps = 20  # a T set by the person: a budget, said as such
    assert s.steps_origin == "user" and s.result.steps_given
    assert "steps_from_trace" not in {a.kind for a in s.result.notes}
    assert replay(records).steps_left is None
    # a T the plan fixed beyond the steps used: the ε the labels guarantee over all of it, and the steps left at it
    fixed = replay(records, test_size=10_000, steps=20).steps_left
    at_t = md_plan([0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 20, budget=10_000).min_epsilon["incremental"]
    assert fixed.budget == 20 and fixed.budget_epsilon[0] == pytest.approx(at_t)
    assert f"At ε₁ = {at_t:.4g}, what they guarantee over the plan's T = 20 steps, 8 steps are left." in fixed.sentence()


def test_steps_left_uses_the_planners_inverse_under_each_bound():
    for bound in ("hoeffding", "binomial"):
        left = steps_left(50_000, [0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 12, bound=bound)
        expected = md_plan([0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 12, budget=50_000, bound=bound)
        assert left.supported == expected.max_steps["incremental"]
        assert left.left == left.supported - 12
    with pytest.raises(InputError, match="test_size must be"):
        steps_left(0, [0.01], 0.01, 3)


def test_the_report_says_the_steps_left_and_the_bound():
    from meter_dashboard.session.report import session_report

    records = [{"step": k, "val_accuracy": 0.8 + 0.005 * k, "test_accuracy": 0.79 + 0.004 * k} for k in range(1, 13)]
    page = session_report(replay(records, test_size=10_000, bound="binomial")).to_html()
    assert "Steps left: 10,000 labels support 0 steps at the planned ε" in page
    assert "Labels needed for this plan (exact binomial bound)" in page and "Per-model bound" in page
    assert "12 — the trace&#x27;s length (no T was given)" in page and "No T was given: T = 12" in page


def test_the_planners_budget_becomes_the_test_sets_n_and_comes_back():
    # issue 30: links carry every input both ways; the planner's budget ("what we have") is the test set's n
    planner = MeterPlan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10, budget=50_000)
    s = SessionModel(example="emocontext")
    s.update_from_query(planner.query_string(pinned=False))  # the planner's "Replay a trace with this meter"
    assert s.test_size == 50_000 and s.result.test_size == 50_000
    assert s.to_query()["test_size"] == "50000"
    assert MeterPlan.parse_query(s.planner_query())["budget"] == 50_000  # and back to the planner
    s.update_from_query("budget=20000&test_size=12000")  # an explicit n wins over the budget
    assert s.test_size == 12_000
    other = SessionModel(example="emocontext")
    other.update_from_query(MeterPlan(epsilon=[0.02] * 5, delta=0.05).query_string(pinned=False))  # no budget
    assert other.test_size == SessionModel(example="emocontext").test_size  # the example's own n stays


@pytest.mark.parametrize("n, supported, left", [(50_000, 110, 98), (10_000, 0, 0)])
def test_a_trace_past_the_plans_t_says_one_thing_in_the_card_alarm_lead_and_report(n, supported, left):
    # issue 30: 12 steps past a plan of T = 10 read "the last of the T = 10 steps this test set supports:
    # draw a new test set" while the card beside it said 98 steps were left (50,000 labels support 110)
    from meter_dashboard.session import text
    from meter_dashboard.session.report import session_report

    records = [{"step": k, "val_accuracy": 0.8 + 0.005 * k, "test_accuracy": 0.79 + 0.004 * k} for k in range(1, 13)]
    r = replay(records, steps=10, test_size=n)
    assert md_plan([0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 12, budget=n).max_steps["incremental"] == supported
    s = r.steps_left
    assert (s.supported, s.used, s.left, s.plan_steps, s.plan_used_up) == (supported, 12, left, 10, True)
    capacity = f"these {n:,} labels support {supported} steps at the planned ε (Hoeffding's bound): 12 used, " + (
        f"{left} left" if left else "none left")
    alarm = next(a for a in r.alarms if a.kind == "budget_used_up")
    assert "this test set supports" not in alarm.message and capacity in alarm.message
    card = text.steps_left_card(r)
    assert card["value"] == (str(left) if left else "none") and card["alarm"] == (not left)
    assert card["sub"].startswith(f"{n:,} labels support {supported} steps at the planned ε")
    lead = text.lead(r)
    assert f"these {n:,} labelled examples support {supported} model versions" in lead
    report = session_report(r).to_html()
    if left:  # steps are left: raise T to what the labels support; a new test set is one choice, not the only one
        plan_note = "the plan's T = 10 steps are used up (2 beyond it): raise T to 110 in a new plan to take the 98 left"
        assert alarm.message.endswith("or raise T to 110 in a new plan to take the 98 left.")
        assert "raise T to 110 in a new plan to test 98 more model versions" in lead
        beyond = next(a for a in r.alarms if a.kind == "beyond_budget")
        assert f"a plan with T = 110 would: {capacity}." in beyond.message
    else:  # none left: every one of them says to draw a new test set, none says to raise T
        plan_note = "the plan's T = 10 steps are used up (2 beyond it): draw a new test set"
        assert "draw a new test set" in alarm.message and lead.endswith("draw a new test set.")
        assert all("raise T" not in words for words in (alarm.message, lead, card["sub"], s.sentence()))
    assert card["sub"].endswith(plan_note) and plan_note[0].upper() + plan_note[1:] in s.sentence()
    assert "Steps left: " + s.sentence().replace("'", "&#x27;") in report
    assert alarm.message.replace("'", "&#x27;") in report
    # before the plan's T is used up, nothing is said about it
    early = replay(records[:8], steps=10, test_size=n).steps_left
    assert not early.plan_used_up and early.plan_note() == "" and "plan's T" not in text.steps_left_card(
        replay(records[:8], steps=10, test_size=n))["sub"]


def test_every_shipped_example_names_its_trace_and_provenance_files():
    from importlib import resources

    from meter_dashboard.session.trace import EXAMPLES

    data = resources.files("meter_dashboard.data")
    for key, example in EXAMPLES.items():
        assert example.key == key and example.provenance_file == f"{key}.md"
        assert data.joinpath(example.file).is_file() and data.joinpath(example.provenance_file).is_file()
        assert load_example(key).provenance == example.summary and load_example(key).synthetic == example.synthetic
