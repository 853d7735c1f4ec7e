"""One precision rule per kind of number (issue 11 #13: 0.06439 beside 0.0644, confidence shown as 1)."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meter_dashboard.core import formatting as fmt


@pytest.mark.parametrize("value,text", [(38005, "38,005"), (0, "0"), (-3, "−3"), (math.inf, "∞"), (None, "—"),
                                        (float("nan"), "—")])
def test_integer(value, text):
    assert fmt.integer(value) == text


@pytest.mark.parametrize("value,text", [(0.064393, "0.06439"), (0.0644, "0.0644"), (0.9363, "0.9363"),
                                        (2.3e-13, "2.3×10⁻¹³"), (1e-12, "10⁻¹²"), (12345.6, "12,346"),
                                        (-0.5, "−0.5"), (0.001, "0.001")])
def test_number_has_one_precision_rule(value, text):
    assert fmt.number(value) == text


@pytest.mark.parametrize("delta,text", [(0.01, "0.99"), (0.1, "0.9"), (2e-6, "0.999998"), (1e-7, "1 − 10⁻⁷"),
                                        (2e-13, "1 − 2×10⁻¹³")])
def test_confidence_is_never_shown_as_one(delta, text):
    assert fmt.confidence(delta) == text


@given(st.floats(min_value=1e-300, max_value=0.999999))
def test_confidence_never_reads_as_certainty(delta):
    assert fmt.confidence(delta) not in ("1", "1.0")


def test_effort_and_money_carry_units():
    assert fmt.hours(528) == "528.0 h" and fmt.hours(0.75) == "45 min"
    assert fmt.money(528, 25) == "528 (at 25 per labeler-hour)"
    assert fmt.steps_text(math.inf) == "> 10¹²" and fmt.steps_text(110) == "110"
    assert fmt.percent(0.05) == "5%" and fmt.interval(0.51234, 0.7) == "[0.5123, 0.7]"
