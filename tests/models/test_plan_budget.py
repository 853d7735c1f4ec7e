"""Issue 31: a label budget past what the engines count is refused by name, never an OverflowError.

``plan --budget 9223372036854775808 --bound binomial`` was a traceback (the binomial engine's
64-bit label counts); ``md.plan(..., budget=10**400)`` an OverflowError with either bound.
"""
from __future__ import annotations

import pytest

import meter_dashboard as md
from meter_dashboard.cli import main
from meter_dashboard.core.validation import InputError
from meter_dashboard.meter.defaults import MAX_BUDGET
from meter_dashboard.meter.model import MeterPlan

RULE = f"budget must be a whole number in [1, {MAX_BUDGET}]"


@pytest.mark.parametrize("bound", ["binomial", "hoeffding"])
@pytest.mark.parametrize("budget", [2**63, 10**400, MAX_BUDGET + 1])
def test_plan_refuses_a_budget_past_the_limit_naming_it(budget, bound):
    with pytest.raises(InputError) as info:
        md.plan([0.05, 0.1], delta=0.1, steps=10, budget=budget, bound=bound)
    assert str(info.value).startswith(RULE + "; got ")


def test_the_largest_budget_gets_an_answer_from_both_bounds():
    for bound in ("binomial", "hoeffding"):
        r = md.plan([0.05, 0.1], delta=0.1, steps=10, budget=MAX_BUDGET, bound=bound)
        assert r.budget == MAX_BUDGET and 0 < r.to_dict()["budget"]["min_epsilon"]["regular"] < 1e-6


def test_the_cli_refuses_the_issues_budget_in_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["plan", "--epsilon", "0.05,0.1", "--delta", "0.1", "--steps", "10", "--budget",
              "9223372036854775808", "--bound", "binomial"])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 2 and err == (f"meter-dashboard plan: error: --{RULE}; got '9223372036854775808'")


def test_the_planner_refuses_the_budget_from_a_url_and_from_its_parameter():
    with pytest.raises(InputError, match=r"^" + RULE.replace("[", r"\[").replace("]", r"\]")):
        MeterPlan.parse_query("budget=9223372036854775808&bound=binomial")
    plan = MeterPlan(bound="binomial")
    before = plan.budget
    with pytest.raises(InputError):
        plan.update_from_query("budget=9223372036854775808")
    assert plan.budget == before
    with pytest.raises(InputError, match=r"^budget must be"):
        MeterPlan(budget=2**63, bound="binomial")
