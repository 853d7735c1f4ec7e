"""Evaluation of conditions on estimates (Section 3.5, Appendix A.2): truth tables for both modes."""
from __future__ import annotations

from fractions import Fraction

import pytest

from meter_dashboard.ci import evaluate
from meter_dashboard.core.validation import InputError

# Appendix A.2: "x < 0.1 +/- 0.01"; x-hat > 0.11 -> False, x-hat < 0.09 -> True, in between -> Unknown.
# At the edges the true value may sit exactly on the threshold: x-hat = 0.11 gives x* >= 0.1 (False),
# x-hat = 0.09 gives x* <= 0.1, which may equal 0.1 (Unknown).  Arithmetic is exact.
A2 = [
    (0.12, "False", "fail", "fail"),
    (0.11, "False", "fail", "fail"),
    (0.1099, "Unknown", "fail", "pass"),
    (0.10, "Unknown", "fail", "pass"),
    (0.0901, "Unknown", "fail", "pass"),
    (0.09, "Unknown", "fail", "pass"),
    (0.0899, "True", "pass", "pass"),
    (0.0, "True", "pass", "pass"),
]


@pytest.mark.parametrize("d,truth,fp_free,fn_free", A2, ids=[str(r[0]) for r in A2])
def test_appendix_a2_truth_table_both_modes(d, truth, fp_free, fn_free):
    fp = evaluate("d < 0.1 +/- 0.01", d=d, mode="fp-free")
    fn = evaluate("d < 0.1 +/- 0.01", d=d, mode="fn-free")
    assert fp.truth == fn.truth == truth
    assert (fp.signal, fn.signal) == (fp_free, fn_free)


@pytest.mark.parametrize("n,o,truth", [
    # n - o > 0.02 +/- 0.01: each estimate gets 0.005 (optimal split), the left side +/- 0.01
    (0.85, 0.82, "Unknown"),   # [0.02, 0.04]: 0.02 is not > 0.02
    (0.851, 0.82, "True"),     # [0.021, 0.041]
    (0.84, 0.83, "False"),     # [0.0, 0.02]: nothing above 0.02
    (0.835, 0.82, "Unknown"),  # [0.005, 0.025]
    (0.80, 0.85, "False"),
])
def test_difference_clause_interval_arithmetic(n, o, truth):
    ev = evaluate("n - o > 0.02 +/- 0.01", n=n, o=o)
    assert ev.truth == truth
    c = ev.clauses[0]
    assert c.estimate == Fraction(str(n)) - Fraction(str(o))
    assert c.high - c.low == Fraction(2, 100)


def test_constant_factors_scale_the_interval():
    # n - 1.1 * o: the tolerance 0.021 splits 0.01 to n and 0.011 to 1.1 * o (each estimate +/- 0.01)
    c = evaluate("n - 1.1 * o > 0 +/- 0.021", n=0.9, o=0.8).clauses[0]
    assert c.estimate == Fraction("0.9") - Fraction("1.1") * Fraction("0.8")
    assert c.low == Fraction("0.89") - Fraction("1.1") * Fraction("0.81")
    assert c.high == Fraction("0.91") - Fraction("1.1") * Fraction("0.79")


def test_intervals_are_clipped_to_the_unit_range():
    # n lies in [0, 1]: with n-hat = 1 the interval is [0.96, 1], so n < 1.01 is certainly True
    ev = evaluate("n < 1.01 +/- 0.04", n=1.0)
    assert (ev.clauses[0].low, ev.clauses[0].high) == (Fraction("0.96"), Fraction(1))
    assert ev.truth == "True"


# Kleene conjunction, and the mode's mapping of Unknown (Appendix A.2)
CONJ = [
    # (n, d): clause 1 "n > 0.8 +/- 0.01", clause 2 "d < 0.1 +/- 0.01"
    ((0.9, 0.05), ("True", "True"), "True", "pass", "pass"),
    ((0.9, 0.10), ("True", "Unknown"), "Unknown", "fail", "pass"),
    ((0.9, 0.20), ("True", "False"), "False", "fail", "fail"),
    ((0.805, 0.10), ("Unknown", "Unknown"), "Unknown", "fail", "pass"),
    ((0.805, 0.20), ("Unknown", "False"), "False", "fail", "fail"),
    ((0.70, 0.20), ("False", "False"), "False", "fail", "fail"),
    ((0.70, 0.05), ("False", "True"), "False", "fail", "fail"),
]


@pytest.mark.parametrize("values,clauses,truth,fp_free,fn_free", CONJ)
def test_conjunction_truth_table(values, clauses, truth, fp_free, fn_free):
    n, d = values
    for mode, signal in (("fp-free", fp_free), ("fn-free", fn_free)):
        ev = evaluate("n > 0.8 +/- 0.01 /\\ d < 0.1 +/- 0.01", n=n, d=d, mode=mode)
        assert tuple(c.truth for c in ev.clauses) == clauses
        assert ev.truth == truth and ev.signal == signal
        assert ev.passed == (signal == "pass")


def test_estimates_may_be_text_fractions_or_floats():
    a = evaluate("n > 0.8 +/- 0.01", n="0.811")
    b = evaluate("n > 0.8 +/- 0.01", n=Fraction(811, 1000))
    c = evaluate("n > 0.8 +/- 0.01", n=0.811)
    assert a.clauses[0].low == b.clauses[0].low == c.clauses[0].low == Fraction("0.801")


@pytest.mark.parametrize("kwargs,parameter", [
    (dict(n=0.9), "o"),  # the condition uses o
    (dict(n=1.2, o=0.5), "n"),
    (dict(n="abc", o=0.5), "n"),
    (dict(n=0.5, o=-0.1), "o"),
    (dict(n=True, o=0.5), "n"),
])
def test_bad_estimates(kwargs, parameter):
    with pytest.raises(InputError) as info:
        evaluate("n - o > 0 +/- 0.1", **kwargs)
    assert info.value.parameter == parameter


def test_unknown_mode_is_refused():
    with pytest.raises(InputError) as info:
        evaluate("n > 0.5 +/- 0.1", n=0.7, mode="maybe")
    assert info.value.parameter == "mode"


def test_repr_and_dict_are_readable():
    ev = evaluate("n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01", n=0.9, o=0.85, d=0.05)
    assert repr(ev).startswith("Evaluation(pass: True in fp-free mode")
    assert ev.to_dict()["clauses"][1] == {"clause": "d < 0.1 +/- 0.01", "estimate": 0.05, "low": 0.04,
                                          "high": 0.06, "truth": "True"}
