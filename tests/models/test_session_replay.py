"""Replaying traces through the meter (meter_dashboard.session.model.replay), against hand-computed signals."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meter_dashboard.bounds import meter
from meter_dashboard.core.validation import InputError
from meter_dashboard.meter.model import MeterPlan
from meter_dashboard.session.model import replay, signal_of
from meter_dashboard.session.trace import load_example

RANGES = [0, 0.005, 0.01, 0.02, 0.05, 1]
EPS = [0.01, 0.02, 0.03, 0.04, 0.05]
FIG3 = dict(ranges=RANGES, epsilon=EPS, delta=0.1)  # the paper's Figure 3 / Section 6.3 setting


def steps(*gaps, tenants=None, reverted=()):
    """A trace whose step i (1-based) has test accuracy 0.5 and validation accuracy 0.5 + gap."""
    out = []
    for i, g in enumerate(gaps):
        row = {"step": i + 1, "val_accuracy": round(0.5 + g, 6), "test_accuracy": 0.5}
        if tenants:
            row["tenant"] = tenants[i]
        if i + 1 in reverted:
            row["reverted"] = True
        out.append(row)
    return out


# ---------------------------------------------------------------- signals
def test_emocontext_hand_computed():
    # gaps |val - test| from data/emocontext_trace.csv: .0078 .0030 .0066 .0078 .0105 .0035 .0084 .0161
    r = replay(load_example("emocontext"), steps=8, **FIG3)
    assert r.empirical_overfitting.tolist() == [0.0078, 0.003, 0.0066, 0.0078, 0.0105, 0.0035, 0.0084, 0.0161]
    assert r.signal.tolist() == [2, 1, 2, 2, 3, 1, 2, 3]
    assert r.incremental_signal.tolist() == [2, 2, 2, 2, 3, 3, 3, 3]
    assert r.epsilon.tolist() == [0.02, 0.02, 0.02, 0.02, 0.03, 0.03, 0.03, 0.03]  # eps of the incremental signal
    assert r.epsilon_regular.tolist() == [0.02, 0.01, 0.02, 0.02, 0.03, 0.01, 0.02, 0.03]
    assert r.steps_used.tolist() == list(range(1, 9)) and r.within_budget.all()
    regular = replay(load_example("emocontext"), steps=8, variant="regular", **FIG3)
    assert regular.epsilon.tolist() == regular.epsilon_regular.tolist()


def test_ranges_are_half_open_and_the_last_is_closed():
    x = [0.0, 0.004999, 0.005, 0.0099, 0.01, 0.02, 0.049, 0.05, 0.5, 1.0]
    assert signal_of(x, RANGES).tolist() == [1, 1, 2, 2, 3, 4, 4, 5, 5, 5]
    r = replay(steps(0.0, 0.005, 0.01, 0.05, 0.5), **FIG3)
    assert r.signal.tolist() == [1, 2, 3, 5, 5]
    # a gap of exactly 1 (val 1.0, test 0.0) is signal m
    r1 = replay([{"step": 1, "val_accuracy": 1.0, "test_accuracy": 0.0}], **FIG3)
    assert r1.signal.tolist() == [5] and r1.step(0)["signal_range"] == [0.05, 1.0]


def test_decimal_boundaries_survive_floating_point():
    # 0.9363 - 0.9263 = 0.010000000000000009 in binary; it must be signal 3 ([0.01, 0.02)),
    # and 0.9263 - 0.9163 = 0.009999999999999898 must be signal 3 too.
    r = replay([{"step": 1, "val_accuracy": 0.9363, "test_accuracy": 0.9263},
                {"step": 2, "val_accuracy": 0.9263, "test_accuracy": 0.9163}], **FIG3)
    assert r.signal.tolist() == [3, 3]


def test_losses_give_the_same_gap_as_accuracies():
    acc = replay([{"step": 1, "val_accuracy": 0.93, "test_accuracy": 0.91}], **FIG3)
    loss = replay([{"step": 1, "val_loss": 0.07, "test_loss": 0.09}], **FIG3)
    assert acc.signal.tolist() == loss.signal.tolist() == [4]


def test_incremental_signal_is_worst_so_far_within_each_tenant():
    # step:    1  2  3  4  5  6
    # tenant:  a  b  a  b  a  b
    # signal:  4  1  2  2  1  3      (gaps .03 .001 .006 .007 .002 .015)
    # a's chain: 4 4 4 ; b's chain: 1 2 3
    r = replay(steps(0.03, 0.001, 0.006, 0.007, 0.002, 0.015, tenants="ababab"), **FIG3)
    assert r.signal.tolist() == [4, 1, 2, 2, 1, 3]
    assert r.incremental_signal.tolist() == [4, 1, 4, 2, 4, 3]
    assert r.tenant_steps_used.tolist() == [1, 1, 2, 2, 3, 3]
    assert [r.step(i)["tenant"] for i in range(6)] == list("ababab")


def test_a_reverted_step_counts_at_its_own_step_and_not_after():
    # signals 2, 5 (reverted), 1, 3: incremental 2, 5, 2, 3 (step 2 was rolled back)
    r = replay(steps(0.006, 0.2, 0.001, 0.015, reverted=(2,)), **FIG3)
    assert r.signal.tolist() == [2, 5, 1, 3]
    assert r.incremental_signal.tolist() == [2, 5, 2, 3]
    assert r.epsilon.tolist() == [0.02, 0.05, 0.02, 0.03]
    # two reverts in a row: both roll back their own step only
    r2 = replay(steps(0.001, 0.03, 0.2, 0.002, reverted=(2, 3)), **FIG3)
    assert r2.incremental_signal.tolist() == [1, 4, 5, 1]


def test_reverts_and_tenants_together():
    # a: signals 3, 5 (reverted), 1 -> incremental 3, 5, 3; b: 2, 1 -> 2, 2
    r = replay(steps(0.015, 0.3, 0.002, 0.006, 0.001, tenants="aabab", reverted=(2,)), **FIG3)
    # order: a a b a b
    assert r.signal.tolist() == [3, 5, 1, 2, 1]
    assert r.incremental_signal.tolist() == [3, 5, 1, 3, 1]


# ---------------------------------------------------------------- budgets and alarms
def test_budget_used_up_and_beyond():
    r = replay(load_example("emocontext"), steps=6, **FIG3)
    kinds = [(a.kind, a.step) for a in r.alarms]
    assert ("budget_used_up", 6) in kinds and ("beyond_budget", 7) in kinds
    assert r.within_budget.tolist() == [True] * 6 + [False] * 2
    used_up = next(a for a in r.alarms if a.kind == "budget_used_up")
    assert "draw a new test set" in used_up.message and "release the old one" in used_up.message
    assert f"{r.labels_needed['incremental']:,} labels" in used_up.message
    assert r.step(5)["alarms"] == ["budget_used_up"]
    beyond = next(a for a in r.alarms if a.kind == "beyond_budget")
    assert beyond.message.startswith("Steps 7–8 (2 steps) came after the budget of T = 6")
    # exactly T steps: used up at the last step, nothing beyond.  Issue 11 #7 (on purpose): using the
    # last planned step is a note ("before the next step, draw a new test set"), not an alarm.
    r8 = replay(load_example("emocontext"), steps=8, **FIG3)
    assert [a.kind for a in r8.alarms if a.kind.endswith("budget")] == []
    assert not any(a.kind == "budget_used_up" for a in r8.alarms)
    assert any(a.kind == "budget_used_up" and a.step == 8 for a in r8.notes)
    # more budget than steps: no budget alarm
    r10 = replay(load_example("emocontext"), steps=10, **FIG3)
    assert not any("budget" in a.kind for a in r10.alarms)


def test_tenant_shares_from_the_plan():
    trace = steps(0.001, 0.001, 0.001, 0.001, 0.001, tenants="aabbb")
    r = replay(trace, steps=6, tenant_steps=[3, 3], **FIG3)
    assert list(r.tenant_budget) == [3, 3, 3, 3, 3]
    # b used exactly its share: a note, not an alarm (issue 11 #7, on purpose)
    assert [(a.kind, a.step) for a in r.alarms if a.kind.startswith("tenant")] == []
    assert [(a.kind, a.step) for a in r.notes if a.kind.startswith("tenant")] == [("tenant_budget_used_up", 5)]
    assert r.within_budget.all()
    r2 = replay(trace, steps=5, tenant_steps=[3, 2], **FIG3)
    kinds = [(a.kind, a.step) for a in r2.alarms]
    assert ("tenant_budget_used_up", 4) in kinds  # b's 2nd step is step 4
    assert ("tenant_beyond_budget", 5) in kinds
    assert r2.within_budget.tolist() == [True, True, True, True, False]
    # a third tenant the plan does not know
    r3 = replay(steps(0.001, 0.001, 0.001, tenants="abc"), steps=3, tenant_steps=[2, 1], **FIG3)
    assert [a.kind for a in r3.alarms if a.kind == "tenant_not_planned"] == ["tenant_not_planned"]
    assert r3.tenant_budget[2] is None and not r3.within_budget[2]


def test_single_tenant_plan_with_several_trace_tenants_is_a_note():
    r = replay(load_example("synthetic_overfitting"), steps=20, **FIG3)
    assert [n.kind for n in r.notes if n.kind == "shared_budget"] == ["shared_budget"]
    assert set(r.tenant_budget) == {None}
    assert r.within_budget.all()


def test_plan_reverts_must_happen():
    trace = steps(0.001, 0.03, 0.001, reverted=(2,))
    ok = replay(trace, steps=3, reverts=[2], **FIG3)
    assert not any(a.kind == "revert_not_taken" for a in ok.alarms)
    assert not any(n.kind == "unplanned_reverts" for n in ok.notes)
    missed = replay(trace, steps=3, reverts=[3], **FIG3)
    alarm = next(a for a in missed.alarms if a.kind == "revert_not_taken")
    assert alarm.step == 3 and "fixed in advance" in alarm.message
    assert next(n for n in missed.notes if n.kind == "unplanned_reverts").details == {"steps": [2]}
    # a planned revert the trace has not reached yet is not an alarm
    early = replay(steps(0.001), steps=3, reverts=[3], **FIG3)
    assert not any(a.kind == "revert_not_taken" for a in early.alarms)


def test_plan_reverts_with_tenants_use_each_chain():
    # plan: tenant 1 has steps 1-2, tenant 2 steps 3-4 (global positions); b reverts its 1st step = position 3
    trace = steps(0.001, 0.001, 0.001, 0.001, tenants="abab", reverted=(2,))
    r = replay(trace, steps=4, tenant_steps=[2, 2], reverts=[3], **FIG3)
    assert not any(a.kind == "revert_not_taken" for a in r.alarms)


# ---------------------------------------------------------------- the test set's size
def test_paper_label_counts_section_3_3_and_6_3():
    # Section 3.3: eps = 0.01 (m = 5), delta = 0.1, T = 8: "50K" incremental, "80K" regular
    uniform = replay(load_example("emocontext"), steps=8, ranges=RANGES, epsilon=[0.01] * 5, delta=0.1)
    assert uniform.labels_needed == {"incremental": 50776, "regular": 80472}
    # Section 6.3: eps = 0.01..0.05, reliability 0.9: "only 25K labels"; 0.99: "just 37K"
    assert replay(load_example("emocontext"), steps=8, **FIG3).labels_needed["incremental"] == 25376
    r99 = replay(load_example("emocontext"), steps=8, ranges=RANGES, epsilon=EPS, delta=0.01)
    assert r99.labels_needed["incremental"] == 36889


def test_small_test_set_alarm_reports_the_supported_epsilon():
    r = replay(load_example("emocontext"), steps=8, **FIG3)  # n = 5,509 < 25,376
    alarm = next(a for a in r.alarms if a.kind == "test_set_too_small")
    eps1 = float(meter.min_epsilon("incremental", 5509, EPS, 0.1, 8))
    assert alarm.details["supported_epsilon_1"] == pytest.approx(eps1)
    assert r.supported_epsilon == pytest.approx(tuple(np.array(EPS) * eps1 / 0.01))
    assert f"ε₁ ≥ {eps1:.4g} at δ = 0.1 and T = 8" in alarm.message
    # the inverse is consistent with the forward count: slightly above eps1 fits in 5,509 labels, below does not
    assert meter.labels("incremental", np.array(EPS) * (eps1 * 1.001 / 0.01), 0.1, 8) <= 5509
    assert meter.labels("incremental", np.array(EPS) * (eps1 * 0.999 / 0.01), 0.1, 8) > 5509
    assert r.step(-1)["supported_epsilon"] == pytest.approx(r.supported_epsilon[2])  # signal 3
    # enough labels: no alarm, the confidence is at least 1 - delta
    big = replay(load_example("emocontext"), steps=8, test_size=25376, **FIG3)
    assert not any(a.kind == "test_set_too_small" for a in big.alarms)
    assert big.confidence >= 0.9
    small = replay(load_example("emocontext"), steps=8, test_size=25375, **FIG3)
    assert any(a.kind == "test_set_too_small" for a in small.alarms)


def test_unknown_test_size_is_a_note():
    r = replay(steps(0.001), **FIG3)
    assert r.test_size is None and r.supported_epsilon is None
    # no T given: T is the trace's one step, and the note says so (issue 30) instead of "the last of T = 1"
    assert [n.kind for n in r.notes] == ["steps_from_trace", "test_size_unknown"]


# ---------------------------------------------------------------- inputs and exports
def test_plan_object_and_settings_agree():
    plan = MeterPlan(steps=8, **FIG3)
    a = replay(load_example("emocontext"), plan)
    b = replay(load_example("emocontext"), steps=8, **FIG3)
    assert a.to_dict() == b.to_dict()
    with pytest.raises(TypeError):
        replay(load_example("emocontext"), plan, delta=0.2)
    # steps default to the trace's length
    assert replay(load_example("emocontext"), ranges=RANGES, epsilon=EPS).budget == 8


def test_invalid_settings_raise_input_errors():
    with pytest.raises(InputError, match="epsilon must be non-decreasing"):
        replay(steps(0.001), epsilon=[0.05, 0.01], ranges=[0, 0.01, 1])
    with pytest.raises(InputError, match="ranges must be m \\+ 1 = 6 boundaries"):
        replay(steps(0.001), epsilon=EPS, ranges=[0, 0.5, 1])
    with pytest.raises(InputError, match="meter must be 'incremental' or 'regular'"):
        replay(steps(0.001), variant="resampling")
    with pytest.raises(InputError, match="settings must be MeterPlan parameters"):
        replay(steps(0.001), colour="red")
    plan = MeterPlan()
    plan.epsilon = [0.05, 0.01]  # invalid: the plan keeps its last result and an error
    assert plan.error
    with pytest.raises(InputError):
        replay(steps(0.001), plan)


def test_signals_with_one_epsilon_is_the_uniform_meter():
    r = replay(steps(0.03), epsilon=0.01, signals=5)
    assert r.settings["epsilon"] == [0.01] * 5 and r.settings["ranges"] == RANGES


def test_to_dict_is_json_ready_with_the_documented_keys():
    r = replay(load_example("synthetic_overfitting"), steps=20, **FIG3)
    d = json.loads(json.dumps(r.to_dict()))
    assert {"steps", "alarms", "notes", "labels_needed", "settings", "test_size", "supported_epsilon"} <= set(d)
    first = d["steps"][0]
    for key in ("step", "empirical_overfitting", "signal", "incremental_signal", "epsilon", "steps_used",
                "tenant_steps_used", "budget_steps", "within_budget", "reverted", "tenant"):
        assert key in first
    assert len(d["steps"]) == 20
    frame = r.to_frame()
    assert list(frame.index) == list(range(1, 21)) and "incremental_signal" in frame.columns
    text = repr(r)
    assert "ReplayResult(" in text and "reverted" in text and "ALARM" in text


def test_index_of_and_alarms_until():
    r = replay(load_example("emocontext"), steps=6, **FIG3)
    assert r.index_of(7) == 6
    with pytest.raises(InputError, match="step must be a step of the trace"):
        r.index_of(99)
    early = [a.kind for a in r.alarms_until(2)]
    assert "budget_used_up" not in early and "test_set_too_small" in early
    assert "beyond_budget" in [a.kind for a in r.alarms_until(7)]


# ---------------------------------------------------------------- against a brute-force reference
def reference_incremental(signals, tenants, reverted):
    out = []
    for i in range(len(signals)):
        before = [signals[k] for k in range(i) if tenants[k] == tenants[i] and not reverted[k]]
        out.append(max(before + [signals[i]]))
    return out


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 0.2), st.sampled_from("abc"), st.booleans()), min_size=1, max_size=25))
def test_incremental_matches_a_brute_force_reference(rows):
    gaps = [g for g, _, _ in rows]
    tenants = "".join(t for _, t, _ in rows)
    reverted = tuple(i + 1 for i, (_, _, r) in enumerate(rows) if r)
    r = replay(steps(*gaps, tenants=tenants, reverted=reverted), **FIG3)
    flags = [i + 1 in reverted for i in range(len(rows))]
    assert r.incremental_signal.tolist() == reference_incremental(r.signal.tolist(), tenants, flags)
    assert np.all(r.incremental_signal >= r.signal)
    assert np.all((r.signal >= 1) & (r.signal <= 5))
    lo = np.asarray(RANGES)[r.signal - 1]
    hi = np.asarray(RANGES)[r.signal]
    x = r.empirical_overfitting
    assert np.all((lo <= x) & ((x < hi) | (hi == 1.0)))


# ---------------------------------------------------------------- issue 11 #7, issue 10: alarms are for what went wrong
def test_a_healthy_trace_raises_no_alarm_at_its_default_budget():
    # T defaults to the trace's length, and the replay says so (issue 30): not "the last of T steps"
    r = replay(steps(0.001, 0.003, 0.002), **FIG3, test_size=1_000_000)
    assert r.alarms == () and r.budget == 3 and not r.steps_given
    assert "budget_used_up" not in [n.kind for n in r.notes]
    assert next(n for n in r.notes if n.kind == "steps_from_trace").message.startswith("No T was given: T = 3")
    # a T given: the last planned step used is the plan (a note)
    given = replay(steps(0.001, 0.003, 0.002), steps=3, **FIG3, test_size=1_000_000)
    note = next(n for n in given.notes if n.kind == "budget_used_up")
    assert given.alarms == () and note.step == 3 and "before the next step, draw a new test set" in note.message
    # one step more than planned: the beyond-budget alarm, and the used-up message becomes an alarm too
    over = replay(steps(0.001, 0.003, 0.002), steps=2, **FIG3, test_size=1_000_000)
    assert [a.kind for a in over.alarms] == ["budget_used_up", "beyond_budget"]


def test_tenant_shares_used_exactly_are_notes_exceeded_are_alarms():
    trace = steps(0.001, 0.001, 0.001, 0.001, tenants="abab")
    exact = replay(trace, steps=4, tenant_steps=[2, 2], **FIG3, test_size=10**6)
    assert exact.alarms == () and [n.kind for n in exact.notes].count("tenant_budget_used_up") == 2
    over = replay(trace, steps=4, tenant_steps=[1, 3], **FIG3, test_size=10**6)
    assert [(a.kind, a.step) for a in over.alarms] == [("tenant_budget_used_up", 1), ("tenant_beyond_budget", 3)]


def test_defaults_are_the_meter_plans_parameters():
    from meter_dashboard.session.replay import replay_defaults

    d = replay_defaults()
    assert d == {"ranges": MeterPlan.param.ranges.default, "epsilon": MeterPlan.param.epsilon.default,
                 "delta": MeterPlan.param.delta.default}
    trace = load_example("emocontext")
    from meter_dashboard.session.replay import replay_with

    assert replay(trace).to_dict() == replay_with(trace, MeterPlan(steps=8), "incremental", steps_given=False).to_dict()


def test_budgets_beyond_what_the_counts_can_hold_are_refused():
    # issue 15: `replay --steps 3.7e37` was a ZeroDivisionError; T is bounded before any arithmetic
    with pytest.raises(InputError, match="steps must be a whole number in \\[1, 1000000000000\\]; got 3.7e\\+37"):
        replay(steps(0.001), steps=3.7e37)
    with pytest.raises(InputError, match="steps must be"):  # the planner's own bound, or the replay's
        replay(steps(0.001), MeterPlan(steps=10**13))
    big = replay(steps(0.001), steps=10**6, **FIG3)
    assert big.budget == 10**6 and big.labels_needed["incremental"] > 0


def test_columns_frame_and_rows_agree():
    import pandas as pd

    r = replay(load_example("synthetic_overfitting"), steps=20, tenant_steps=[12, 8], **FIG3)
    rows = pd.DataFrame([r.step(i) for i in range(len(r))]).set_index("step")
    rows = rows.drop(columns=["signal_range", "incremental_range"])
    frame = r.to_frame()
    assert list(frame.columns) == list(rows.columns)
    pd.testing.assert_frame_equal(frame, rows, check_dtype=False)
    columns = r.to_columns()
    assert columns["signal"] is r.signal and columns["tenant"] == r.trace.tenants
    assert list(columns["tenant_budget"]) == [12] * 12 + [8] * 8


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 0.2), st.integers(0, 40), st.booleans()), min_size=1, max_size=120))
def test_many_tenants_match_the_brute_force_reference(rows):
    gaps = [g for g, _, _ in rows]
    tenants = [f"t{k}" for _, k, _ in rows]
    reverted = tuple(i + 1 for i, (_, _, rv) in enumerate(rows) if rv)
    trace = [dict(row, tenant=tenants[i]) for i, row in enumerate(steps(*gaps, reverted=reverted))]
    r = replay(trace, **FIG3)
    flags = [i + 1 in reverted for i in range(len(rows))]
    assert r.incremental_signal.tolist() == reference_incremental(r.signal.tolist(), tenants, flags)
    used = [tenants[: i + 1].count(tenants[i]) for i in range(len(rows))]
    assert r.tenant_steps_used.tolist() == used


def test_plan_reverts_checked_against_many_positions():
    trace = steps(*([0.001] * 50), reverted=(5, 10, 15))
    r = replay(trace, steps=50, reverts=[5, 10, 15, 20], **FIG3)
    assert [(a.kind, a.step) for a in r.alarms if a.kind == "revert_not_taken"] == [("revert_not_taken", 20)]
    assert not any(n.kind == "unplanned_reverts" for n in r.notes)


def test_long_lists_in_messages_are_shortened():
    trace = steps(*([0.001] * 30), reverted=tuple(range(1, 31, 2)))
    note = next(n for n in replay(trace, **FIG3).notes if n.kind == "unplanned_reverts")
    assert "1, 3, 5, 7, 9, 11, 13, 15, 17, 19 and 5 more" in note.message and len(note.details["steps"]) == 15


def test_a_million_steps_replay_in_one_vectorized_pass():
    n = 1_000_000
    rng = np.random.default_rng(3)
    val = np.round(rng.uniform(0.7, 0.95, n), 4)
    from meter_dashboard.session.trace import Trace

    trace = Trace(steps=np.arange(1, n + 1), val=val, test=np.clip(val - 0.01, 0, 1),
                  tenants=tuple(np.where(rng.random(n) < 0.5, "a", "b").tolist()), reverted=rng.random(n) < 0.05)
    r = replay(trace, **FIG3)
    assert len(r) == n and np.all(r.incremental_signal >= r.signal)
    # spot-check one chain against the definition (Section 4.4, 5.2, 5.3) on its first 2,000 steps
    idx = np.flatnonzero(np.asarray(trace.tenants) == "a")[:2000]
    sig, rev = r.signal[idx], trace.reverted[idx]
    expected = [max([int(sig[k]) for k in range(j) if not rev[k]] + [int(sig[j])]) for j in range(idx.size)]
    assert r.incremental_signal[idx].tolist() == expected
