"""The one place where numbers from people are parsed: bounded in cost, exact, never evaluated."""
from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meter_dashboard.core.validation import (
    MAX_LIST_ITEMS,
    MAX_NUMBER_CHARS,
    InputError,
    check_int,
    check_number,
    check_probability,
    parse_exact_decimal,
    parse_int_list,
    parse_number_list,
)


@pytest.mark.parametrize("text,expected", [("12", 12), (" 7 ", 7), ("1e6", 10**6), ("1,000", 1000),
                                           ("1e23", 10**23), ("18446744073709551617", 18446744073709551617)])
def test_whole_numbers_are_exact_python_ints(text, expected):
    # issue 15: "--steps 18446744073709551617" and "1e18" must never wrap to -2**63
    value = check_int("--steps", text)
    assert value == expected and type(value) is int


@pytest.mark.parametrize("call,fragment", [
    (lambda: check_int("--steps", "1e99999999"), "--steps must be a whole number below 1e30; got '1e99999999'"),
    (lambda: check_int("--steps", "1.5"), "--steps must be a whole number; got '1.5'"),
    (lambda: check_int("--steps", "0", minimum=1), "--steps must be a whole number >= 1; got '0'"),
    (lambda: check_int("--signals", 2000, minimum=1, maximum=1000), "must be a whole number in [1, 1000]; got 2000"),
    (lambda: check_number("--cost-per-hour", "1e400"), "--cost-per-hour must be a finite number; got '1e400'"),
    (lambda: check_number("--margin", 10**400), "too large to represent"),
    (lambda: check_number("x", True), "x must be a number; got True"),
    (lambda: check_probability("--delta", "abc"), "--delta must be a number; got 'abc'"),
    (lambda: check_probability("--delta", "1.5"), "--delta must be in (0, 1); got '1.5'"),
    (lambda: check_number("--alpha", "2", minimum=0, maximum=1), "--alpha must be a number in [0, 1]; got '2'"),
    (lambda: parse_exact_decimal("condition", "1e30000000"), "between 1e-30 and 1e30 in size"),
    (lambda: parse_exact_decimal("condition", "0." + "1" * 35), "at most 30 significant digits"),
    (lambda: parse_exact_decimal("condition", "1" * (MAX_NUMBER_CHARS + 1)), f"at most {MAX_NUMBER_CHARS} characters"),
    (lambda: parse_exact_decimal("condition", "inf"), "finite"),
    (lambda: parse_int_list("--reverts", "1,2,x"), "('x' is not a whole number)"),
    (lambda: parse_number_list("--epsilon", "0.01,nan"), "('nan' is not a finite number)"),
    (lambda: parse_number_list("--epsilon", ",".join(["0.1"] * (MAX_LIST_ITEMS + 1))), "at most 1000 values"),
])
def test_messages_name_the_input_the_rule_and_the_value(call, fragment):
    with pytest.raises(InputError) as info:
        call()
    assert fragment in str(info.value)


def test_exact_decimals():
    assert parse_exact_decimal("c", "0.1") == Fraction(1, 10)
    assert parse_exact_decimal("c", "1000000") == 10**6
    assert parse_exact_decimal("c", "0") == 0
    assert parse_exact_decimal("c", "-2.5e-3") == Fraction(-1, 400)


def test_huge_literals_are_refused_before_any_big_integer_is_built():
    # issue 13/15: exact rationals made "1e30000000" a 30-million-digit integer (42 s of server time)
    for text in ["1e30000000", "9" * 10_000, "1e-99999999", "1" + "0" * 5000]:
        with pytest.raises(InputError):
            parse_exact_decimal("condition", text)
        with pytest.raises(InputError):
            check_int("--steps", text)


@given(st.text(max_size=60))
def test_any_text_is_a_number_or_an_input_error(text):
    for parse in (check_number, check_int, check_probability, parse_exact_decimal):
        try:
            parse("x", text)
        except InputError:
            pass
