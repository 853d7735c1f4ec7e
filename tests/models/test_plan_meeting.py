"""Issue 30 in the planner's model, the CLI and the formats (no browser): a pinned plan, a uniform ε, the
defaults, no budget nobody gave, a curve that reaches the budget's answer, one number format."""
from __future__ import annotations

import json

import numpy as np
import pytest

import meter_dashboard as md
from meter_dashboard.bounds import meter as M
from meter_dashboard.cli import main
from meter_dashboard.core import formatting as fmt
from meter_dashboard.core.display import cell_text
from meter_dashboard.core.validation import InputError
from meter_dashboard.meter.figures import LabelsPlot
from meter_dashboard.meter.model import MeterPlan, compare_kwargs

UNIFORM = [0.02] * 5


# ---------------------------------------------------------------- no budget nobody gave
def test_a_plan_has_no_budget_until_one_is_given():
    plan = MeterPlan()
    assert plan.budget is None and plan.result.budget is None and plan.result.max_steps is None
    assert "budget" not in plan.to_query()
    plan.budget = 45_000
    assert plan.to_query()["budget"] == "45000" and plan.result.max_steps["incremental"] == M.max_steps(
        "incremental", 45_000, [0.01, 0.02, 0.03, 0.04, 0.05], 0.01)
    plan.update_from_query("budget=")  # an emptied box in a link: no budget
    assert plan.budget is None


# ---------------------------------------------------------------- a uniform ε, the defaults
def test_one_epsilon_for_every_signal_and_a_reset():
    plan = MeterPlan(delta=0.05, budget=30_000, steps=40)
    assert plan.uniform_epsilon is None  # the defaults differ per signal
    plan.set_uniform_epsilon("0.02")
    assert plan.epsilon == UNIFORM and plan.uniform_epsilon == 0.02 and plan.signals == 5
    with pytest.raises(InputError, match="epsilon"):
        plan.set_uniform_epsilon("1.5")
    assert plan.epsilon == UNIFORM
    plan.pin()
    plan.reset()
    fresh = MeterPlan()
    assert plan.to_query() == fresh.to_query() and plan.pinned is None and plan.budget is None


# ---------------------------------------------------------------- the curve reaches the answer
def test_the_curve_over_t_reaches_the_largest_t_the_budget_supports():
    plan = MeterPlan(epsilon=UNIFORM, delta=0.05, budget=30_000)
    largest = M.max_steps("incremental", 30_000, UNIFORM, 0.05)
    assert plan.result.max_steps["incremental"] == largest == 148
    assert plan.curves["steps"][-1] >= largest and largest in plan.curves["steps"]


def test_the_exact_largest_t_extends_the_curve_too():
    plan = MeterPlan(epsilon=UNIFORM, delta=0.05, budget=30_000, bound="binomial")
    largest = M.max_steps("incremental", 30_000, UNIFORM, 0.05, bound="binomial")
    assert plan.result.max_steps["incremental"] == largest > 148
    assert plan.curves["steps"][-1] >= largest
    assert np.isfinite(plan.curves["incremental"]).all()  # every point exact, on the extended axis


def test_the_curve_reaches_t_beyond_100000():
    plan = MeterPlan(epsilon=[0.01] * 5, delta=1e-300, steps=10**6)
    assert plan.curves["steps"][-1] >= 10**6


def test_a_budget_beyond_every_count_keeps_a_computable_axis():
    plan = MeterPlan(epsilon=UNIFORM, delta=0.05, budget=10**9)  # largest T beyond 10¹²; resampling refuses 10¹⁰ +
    assert plan.error == "" and plan.curves["steps"][-1] >= 2 * plan.steps


# ---------------------------------------------------------------- labels inside the plot
def _plot(columns, budget, largest):
    plot = LabelsPlot("T", "t", sizing_mode=None)
    x = np.arange(1, 101)
    plot.update({"steps": x, **{v: np.full(100, float(columns[v])) for v in M.VARIANTS}}, "steps")
    plot.show_budget(budget, largest, x_end=100.0)
    return plot


def test_the_budget_label_sits_on_the_side_of_its_line_inside_the_plot():
    counts = {v: 10_000 + 1_000 * i for i, v in enumerate(M.VARIANTS)}
    low = _plot(counts, 5_000, 0)  # below every curve: the line is the plot's bottom, its label above it
    assert low.budget_label.text.endswith("not even T = 1") and low.budget_label.text_baseline == "bottom"
    high = _plot(counts, 10**6, 100)  # above every curve: the line is the plot's top, its label under it
    assert high.budget_label.text_baseline == "top" and high.budget_label.y_offset < 0
    middle = _plot(counts, 12_500, 60)
    assert middle.budget_label.text_baseline == "bottom"
    assert middle.budget_mark.visible and middle.budget_mark.location == 60


# ---------------------------------------------------------------- two plans side by side
def test_a_pinned_plan_is_compared_and_round_trips_through_the_link():
    plan = MeterPlan(epsilon=UNIFORM, delta=0.05, budget=30_000)
    plan.pin()
    plan.param.update(delta=0.01, budget=None, steps=20)
    headers, rows = plan.comparison()
    assert headers == ["", "pinned", "current", "current − pinned"]
    a, b = M.labels("incremental", UNIFORM, 0.05, 10), M.labels("incremental", UNIFORM, 0.01, 20)
    assert ["Incremental meter (recommended): labels", f"{a:,}", f"{b:,}", f"+{b - a:,}"] in rows
    assert ["T (development steps)", "10", "20", ""] in rows
    assert ["Label budget", "30,000", "—", ""] in rows  # the pinned plan's budget stays its own
    restored = MeterPlan.from_query(plan.query_string())
    assert restored.to_query() == plan.to_query()
    assert restored.pinned.to_query() == plan.pinned.to_query() and restored.pinned.budget == 30_000
    assert restored.comparison() == plan.comparison()
    plan.unpin()
    assert "compare" not in plan.to_query()


def test_compare_with_changes_the_current_plan_and_names_refusals():
    plan = MeterPlan(epsilon=UNIFORM, delta=0.05, steps=10)
    pinned = plan.compare_with("delta=0.01&steps=20")
    assert (pinned.delta, pinned.steps, pinned.epsilon) == (0.01, 20, UNIFORM)
    with pytest.raises(InputError, match=r"compare must be settings of a plan \(delta"):
        plan.compare_with("delta=2")
    assert plan.pinned is pinned  # a refusal changes nothing
    with pytest.raises(InputError, match="compare"):
        plan.compare_with("compare=delta%3D0.1")


def test_compare_kwargs_for_the_function():
    kwargs = compare_kwargs(dict(epsilon=[0.01], signals=5, delta=0.01, steps=10), "epsilon=0.02,0.03&budget=9000")
    assert kwargs["epsilon"] == [0.02, 0.03] and "signals" not in kwargs and kwargs["budget"] == 9000
    assert md.plan(**kwargs).labels["incremental"] == M.labels("incremental", [0.02, 0.03], 0.01, 10)


def test_cli_compare_prints_both_plans_side_by_side(capsys):
    args = ["plan", "--epsilon", "0.02", "--signals", "5", "--delta", "0.05", "--steps", "10", "--budget", "30000"]
    assert main([*args, "--compare", "delta=0.01"]) == 0
    out = capsys.readouterr().out
    a, b = M.labels("incremental", UNIFORM, 0.01, 10), M.labels("incremental", UNIFORM, 0.05, 10)
    line = next(line for line in out.splitlines() if line.startswith("Incremental meter (recommended): labels"))
    assert line.split()[-3:] == [f"{a:,}", f"{b:,}", f"−{a - b:,}"]
    assert main([*args, "--compare", "delta=0.01", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["compare"]["plan"]["labels"]["incremental"] == a and payload["labels"]["incremental"] == b
    assert payload["compare"]["settings"] == "delta=0.01"


def test_cli_compare_refusals_name_the_flag(capsys):
    args = ["plan", "--epsilon", "0.02", "--signals", "5", "--delta", "0.05"]
    for steps, message in (("10", "--compare must be settings of a plan (delta"),
                           ("1:5", "--compare must be given with one T")):
        with pytest.raises(SystemExit) as exit_:
            main([*args, "--steps", steps, "--compare", "delta=3" if steps == "10" else "delta=0.1"])
        assert exit_.value.code == 2 and message in capsys.readouterr().err


# ---------------------------------------------------------------- one number format
def test_huge_and_tiny_numbers_read_the_same_on_every_surface(capsys):
    r = md.plan([0.01] * 5, delta=1e-300, steps=10**6)
    hours = r.labeler_hours["resampling"]
    assert hours > 1e9 and fmt.hours(hours) == "1.96×10⁹ h" and fmt.amount(hours) == "1.96×10⁹"
    assert cell_text(round(hours, 1)) == "1.96×10⁹"  # the CLI's table and the notebook's
    assert "with probability 1 − 10⁻³⁰⁰ every signal" in r.sentence()
    assert "1.96×10⁹ labeler-hours" in repr(r) and "1959122777" not in repr(r).replace(",", "")
    assert main(["plan", "--epsilon", "0.01", "--signals", "5", "--delta", "1e-300", "--steps", "1000000"]) == 0
    out = capsys.readouterr().out
    assert "1.96×10⁹" in out and "with probability 1 − 10⁻³⁰⁰" in out and "1,959,122,778" not in out


@pytest.mark.parametrize("value,text", [(8.12, "8.1"), (1234.56, "1,234.6"), (99_999.9, "99,999.9"),
                                        (100_000, "10⁵"), (1_959_122_777.8, "1.96×10⁹"), (None, "—")])
def test_amount(value, text):
    assert fmt.amount(value) == text
