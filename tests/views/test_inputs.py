"""Inputs refuse bad values beside themselves and keep the last good state (issue 11 #4, #5)."""
from __future__ import annotations

import html

import param
import pytest

from meter_dashboard.meter.model import MeterPlan
from meter_dashboard.ui.inputs import ListInput, NumberInput, checker_for


class Settings(param.Parameterized):
    delta = param.Number(default=0.01, bounds=(0, 1), inclusive_bounds=(False, False))
    steps = param.Integer(default=10, bounds=(1, None))
    cost = param.Number(default=None, allow_None=True, bounds=(0, None))
    margin = param.Number(default=0.0, bounds=(0, 1))


@pytest.mark.parametrize("parameter,label,text,message", [
    ("delta", "δ", "1.5", "δ must be in (0, 1); got '1.5'"),
    ("delta", "δ", "0", "δ must be in (0, 1); got '0'"),
    ("delta", "δ", "abc", "δ must be a number; got 'abc'"),
    ("delta", "δ", "inf", "δ must be a finite number; got 'inf'"),
    ("steps", "T", "2.5", "T must be a whole number; got '2.5'"),
    ("steps", "T", "0", "T must be a whole number >= 1; got '0'"),
    ("cost", "Cost", "-1", "Cost must be a number >= 0; got '-1'"),
    ("margin", "Margin", "2", "Margin must be in [0, 1]; got '2'"),
])
def test_bad_text_is_refused_beside_the_input_and_the_model_keeps_its_value(parameter, label, text, message):
    model = Settings()
    before = getattr(model, parameter)
    box = NumberInput(model, parameter, label=label)
    box.text.value = text
    assert box.message == message and html.escape(message) in box.message_pane.object
    assert getattr(model, parameter) == before and not box.valid


def test_a_valid_value_reaches_the_model_and_clears_the_message():
    model = Settings()
    box = NumberInput(model, "delta", label="δ")
    box.text.value = "2"
    assert box.message
    box.text.value = "0.05"
    assert model.delta == 0.05 and box.message == "" and box.message_pane.object == ""


def test_the_box_follows_the_model_and_forgets_old_messages():
    # issue 11 #5: after a valid change elsewhere, an old error must not stay on screen
    model = Settings()
    box = NumberInput(model, "steps", label="T", slider={"start": 1, "end": 200})
    box.text.value = "x"
    assert box.message
    model.steps = 500
    assert box.text.value == "500" and box.message == ""
    assert box.slider.value == 200  # clamped for display; the model keeps 500
    assert model.steps == 500


def test_slider_release_sets_the_value():
    model = Settings()
    box = NumberInput(model, "steps", label="T", slider={"start": 1, "end": 200})
    box.slider.param.trigger("value_throttled") if False else box._on_slider(type("E", (), {"new": 42})())
    assert model.steps == 42 and box.text.value == "42"


def test_none_allowed_when_the_parameter_allows_it():
    model = Settings(cost=5.0)
    box = NumberInput(model, "cost", label="Cost")
    box.text.value = ""
    assert model.cost is None and box.valid


def test_checker_names_the_label():
    check = checker_for(Settings(), "delta", "δ (failure probability)")
    with pytest.raises(ValueError, match=r"δ \(failure probability\) must be in \(0, 1\); got '1.5'"):
        check("1.5")


def test_list_input_on_the_plan():
    plan = MeterPlan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)
    box = ListInput(plan, "reverts", label="Revert steps")
    box.text.value = "1,x"
    assert box.message == "Revert steps must be a comma-separated list of whole numbers; got '1,x' ('x' is not a whole number)"
    assert plan.reverts == []
    box.text.value = "1, 2, 3"
    assert plan.reverts == [1, 2, 3] and box.valid
    plan.reverts = [2]
    assert box.text.value == "2"


def test_a_box_held_straight_by_a_column_gets_its_message_right_after_its_parts():
    """``parts()`` + ``placed_in``: no column of its own; the first message goes in right after the slider."""
    import panel as pn

    model = Settings()
    box = NumberInput(model, "steps", label="T", slider={"start": 1, "end": 200})
    after = pn.pane.HTML("next")
    column = pn.Column(pn.pane.HTML("before"), *box.parts(), after)
    box.placed_in(column)
    assert column.objects[1:3] == [box.text, box.slider] and len(column) == 4  # no message pane yet
    box.text.value = "x"
    assert column.objects[3] is box.message_pane and column.objects[4] is after
    assert "T must be a whole number" in box.message_pane.object
    box.text.value = "12"
    assert model.steps == 12 and box.message_pane.object == "" and column.objects.count(box.message_pane) == 1


def test_a_message_made_before_the_box_is_placed_goes_in_when_it_is():
    import panel as pn

    model = Settings()
    box = NumberInput(model, "delta", label="δ")
    box.text.value = "2"
    column = pn.Column(*box.parts(), pn.pane.HTML("next"))
    box.placed_in(column)
    assert column.objects[:2] == [box.text, box.message_pane] and "δ must be in (0, 1)" in box.message_pane.object
