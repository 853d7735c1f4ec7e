"""The ease.ml/ci condition parser (Appendix A.1): normal forms, a corpus of bad conditions, safety."""
from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meter_dashboard.ci.grammar import ConditionError, format_number, parse_condition
from meter_dashboard.core.validation import InputError

F = Fraction


@pytest.mark.parametrize("text,canonical,coefficients", [
    # Appendix A.1's example
    ("n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01", "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01",
     [{"n": F(1), "o": F(-1)}, {"d": F(1)}]),
    # Section 3.1's example: a constant before the variable
    ("n - 1.1 * o > 0.01 +/- 0.01 /\\ d < 0.1 +/- 0.01", "n - 1.1 * o > 0.01 +/- 0.01 /\\ d < 0.1 +/- 0.01",
     [{"n": F(1), "o": F("-1.1")}, {"d": F(1)}]),
    # the grammar's EXP op2 c: a constant after the variable
    ("n*2-o*0.5<0.3+/-0.05", "2 * n - 0.5 * o < 0.3 +/- 0.05", [{"n": F(2), "o": F("-0.5")}]),
    # parentheses and unary minus; like terms combined (one estimate per variable)
    ("(n - o) * 2 > -0.01 +/- 0.01", "2 * n - 2 * o > -0.01 +/- 0.01", [{"n": F(2), "o": F(-2)}]),
    ("-o + n > 0 +/- 0.1", "n - o > 0 +/- 0.1", [{"n": F(1), "o": F(-1)}]),
    ("n + n - o > 0.5 +/- 0.1", "2 * n - o > 0.5 +/- 0.1", [{"n": F(2), "o": F(-1)}]),
    ("0 * d + n > 0.5 +/- 0.1", "n > 0.5 +/- 0.1", [{"n": F(1)}]),
    # unicode forms, exponents, leading dots
    ("n ± .05 > 0.8 ± 1e-2".replace("n ± .05 ", "n "), "n > 0.8 +/- 0.01", [{"n": F(1)}]),
    ("d < 0.1 ± 0.01 ∧ n > 0.8 ± 0.05", "d < 0.1 +/- 0.01 /\\ n > 0.8 +/- 0.05", [{"d": F(1)}, {"n": F(1)}]),
])
def test_valid_conditions_normalize(text, canonical, coefficients):
    cond = parse_condition(text)
    assert cond.canonical() == canonical
    assert [dict(c.coefficients) for c in cond] == coefficients
    assert parse_condition(cond.canonical()).canonical() == canonical  # round trip


def test_clause_fields_are_exact():
    c = parse_condition("n - o > 0.02 +/- 0.01").clauses[0]
    assert c.threshold == F(2, 100) and c.tolerance == F(1, 100)  # exact decimals, not floats
    assert c.comparison == ">" and c.is_difference and c.difference_scale == 1 and c.weight == 2
    d = parse_condition("n > 0.8 +/- 0.05 /\\ d < 0.1 +/- 0.01").clauses[1]
    assert d.is_difference_only and d.column == 21 and d.source == "d < 0.1 +/- 0.01"


# A corpus of bad conditions: (text, column, words the message must contain)
BAD = [
    ("", 1, "a clause such as"),
    ("   ", 4, "a clause such as"),
    ("n - o = 0.1 +/- 0.01", 7, "no '=' in the grammar"),
    ("n >= 0.1 +/- 0.01", 3, "comparisons are strict"),
    ("n <= 0.1 +/- 0.01", 3, "comparisons are strict"),
    ("x > 1 +/- 0.1", 1, "a variable n (new accuracy)"),
    ("acc > 0.9 +/- 0.1", 1, "found 'acc'"),
    ("n > 0.8", 8, "'+/-' and the error tolerance"),
    ("n > 0.8 +/- 0", 13, "tolerance > 0"),
    ("n > 0.8 +/- -0.1", 13, "tolerance > 0"),
    ("n > 0.8 +/- x", 13, "a variable n"),
    ("n > +/- 0.1", 5, "the threshold (a number)"),
    ("n > 0.1 +/ - 0.01", 9, "'+/-' written without spaces"),
    ("n * o > 0.1 +/- 0.1", 3, "n * o is not linear"),
    ("(n - o) * d > 0.1 +/- 0.1", 9, "n * o is not linear"),
    ("n + 0.1 > 0.1 +/- 0.1", 5, "a constant cannot be added"),
    ("0.1 + n > 0.1 +/- 0.1", 1, "a constant cannot be added"),
    ("0.5 > 0.1 +/- 0.1", 1, "mentions n, o or d"),
    ("n - n > 0 +/- 0.1", 1, "cancel out"),
    ("n / 2 > 0.1 +/- 0.1", 3, "division is not supported"),
    ("n > 0.1 +/- 0.1 d < 0.1 +/- 0.1", 17, "'/\\' before another clause"),
    ("n > 0.1 +/- 0.1 /\\", 19, "end of the condition"),
    ("n > 0.1 +/- 0.1 && d < 0.1 +/- 0.1", 17, "only conjunction"),
    ("n > 0.1 +/- 0.1 \\/ d < 0.1 +/- 0.1", 17, "an operator"),
    ("(n - o > 0.1 +/- 0.1", 8, "')' to close the '(' at column 1"),
    ("n - o) > 0.1 +/- 0.1", 6, "'>' or '<' after the left side"),
    ("n > 1..2 +/- 0.1", 5, "a number"),
    ("n o > 1 +/- 1", 3, "'>' or '<' after the left side"),
    ("n - > 0.1 +/- 0.1", 5, "a variable (n, o or d)"),
    ("n > 0.1 +/- 0.1 0.2", 17, "'/\\' before another clause"),
    ("n >> 0.1 +/- 0.1", 4, "the threshold"),
    ("__import__('os').system('true') > 1 +/- 1", 1, "a variable n"),
    ("n; import os", 2, "an operator"),
]


@pytest.mark.parametrize("text,column,words", BAD, ids=[repr(t) for t, *_ in BAD])
def test_bad_conditions_point_at_the_column(text, column, words):
    with pytest.raises(ConditionError) as info:
        parse_condition(text)
    err = info.value
    assert err.column == column, str(err)
    message = str(err)
    assert words in message
    assert message.startswith(f"column {column}: condition must be well-formed: expected ")
    assert f"; got '{text}'" in message  # the user's text, unescaped (/\ stays readable)
    assert "\n" not in message  # one line for the CLI
    pointer = err.pointer().splitlines()
    assert pointer[-1] == " " * (column - 1) + "^"
    assert isinstance(err, InputError) and isinstance(err, ValueError)


def test_non_text_is_refused():
    with pytest.raises(InputError):
        parse_condition(0.5)


def test_the_parser_never_evaluates(monkeypatch):
    import builtins

    def boom(*args, **kwargs):  # pragma: no cover - would only run if the parser evaluated text
        raise AssertionError("evaluated user text")

    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    monkeypatch.setattr(builtins, "__import__", builtins.__import__)
    assert parse_condition("n - o > 0.02 +/- 0.01").canonical() == "n - o > 0.02 +/- 0.01"
    with pytest.raises(ConditionError):
        parse_condition("__import__('os') > 1 +/- 1")


@pytest.mark.parametrize("value,text", [(F(1, 10), "0.1"), (F(-11, 10), "-1.1"), (F(2), "2"), (F(1, 3), "1/3"),
                                        (F(0), "0"), (F(1, 1000000), "0.000001"), (F(25, 2), "12.5")])
def test_format_number(value, text):
    assert format_number(value) == text


# --------------------------------------------------------------------------- property: round trip
_number = st.decimals(min_value=0, max_value=10, places=3, allow_nan=False, allow_infinity=False).map(str)
_var = st.sampled_from(["n", "o", "d"])


@st.composite
def _clause(draw):
    terms = draw(st.lists(st.tuples(st.sampled_from(["+", "-"]), st.none() | _number, _var), min_size=1, max_size=4))
    parts = []
    for i, (sign, coef, var) in enumerate(terms):
        term = var if coef is None else draw(st.sampled_from([f"{coef} * {var}", f"{var}*{coef}"]))
        parts.append(term if i == 0 and sign == "+" else f"{sign} {term}")
    cmp = draw(st.sampled_from([">", "<"]))
    threshold = draw(st.decimals(min_value=-2, max_value=2, places=3).map(str))
    tol = draw(st.decimals(min_value="0.001", max_value=1, places=3).map(str))
    return f"{' '.join(parts)} {cmp} {threshold} +/- {tol}"


@settings(max_examples=80, deadline=None)
@given(st.lists(_clause(), min_size=1, max_size=3))
def test_random_conditions_parse_or_fail_cleanly_and_round_trip(clauses):
    text = " /\\ ".join(clauses)
    try:
        cond = parse_condition(text)
    except ConditionError as err:
        # the only way a generated clause can be bad: its terms cancel or all coefficients are 0
        assert "cancel out" in str(err)
        return
    again = parse_condition(cond.canonical())
    assert [(c.coefficients, c.comparison, c.threshold, c.tolerance) for c in again] == \
           [(c.coefficients, c.comparison, c.threshold, c.tolerance) for c in cond]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="nod+-*/\\<>=()0123456789. ±∧&|xe", max_size=30))
def test_arbitrary_text_never_crashes(text):
    try:
        parse_condition(text)
    except ConditionError as err:
        assert 1 <= err.column <= len(text) + 1
