"""The planner's numbers in words (meter/text.py): what a budget does, huge values, confidences never overstated.

Expected numbers are computed with the bounds (ease.ml/meter Sec. 5.1: ε = 0.01..0.05, δ = 0.01,
T = 10 needs 38,005 labels with the incremental meter, Cor 2), not copied from the page.
"""
from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st

import meter_dashboard as md
from meter_dashboard.bounds import meter as M
from meter_dashboard.core import formatting as fmt
from meter_dashboard.meter.report import plan_report
from meter_dashboard.meter.text import (
    budget_sentence,
    budget_status,
    confidence_rounded,
    epsilon_shown,
    file_stem,
    plan_title,
    ratio_shown,
    summary_text,
)

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]


def test_a_short_budget_in_numbers():
    r = md.plan(EPS, 0.01, 10, budget=20_000)
    status = budget_status(r)
    assert status.needed == M.labels("incremental", EPS, 0.01, 10) == 38_005 and status.short == 18_005
    eps1 = M.min_epsilon("incremental", 20_000, EPS, 0.01, 10)
    conf = -math.expm1(M.failure_probability("incremental", 20_000, EPS, 10, log=True))
    assert budget_sentence(status) == (f"20,000 labels: 18,005 short for T = 10 — at T = 10 they support "
                                       f"ε₁ ≥ {fmt.number(eps1, 3)}, or confidence {fmt.number(conf, 3)}")
    assert plan_title(r) == "Test-set plan: 20,000 labels are 18,005 short for 10 development steps"


def test_a_budget_that_covers_the_plan():
    r = md.plan(EPS, 0.01, 10, budget=50_000)
    status = budget_status(r)
    largest = M.max_steps("incremental", 50_000, EPS, 0.01)
    assert status.short == 0 and status.largest_steps == largest
    assert budget_sentence(status) == f"50,000 labels cover T = 10 (11,995 to spare) and support up to T = {largest:,}"
    assert plan_title(r) == "Test-set plan: 38,005 labels for 10 development steps"


def test_the_report_says_what_the_budget_does():
    html = plan_report(md.plan(EPS, 0.01, 10, budget=20_000), link="https://example.org/planner?steps=10").to_html()
    assert "20,000 labels are 18,005 short" in html and "md-callout alarm" in html
    assert '<a href="https://example.org/planner?steps=10">' in html
    assert 'href="javascript:' not in plan_report(md.plan(EPS, 0.01, 10), link="javascript:alert(1)").to_html()


def test_huge_valid_values_are_written_with_separators_and_epsilon_above_one_is_none():
    r = md.plan(EPS, 0.01, 10**9, budget=50_000)
    assert "1,000,000,000 development steps" in r.sentence()
    assert ratio_shown(r.savings["incremental"]) == "1,000,000,000×"
    assert r.min_epsilon["regular"] > 1 and epsilon_shown(r.min_epsilon["regular"]) == "none"
    assert epsilon_shown(math.inf) == "none" and epsilon_shown(0.0138) == "0.0138"
    html = plan_report(r).to_html()
    assert "1000000000" not in re.sub(r"<script.*?</script>", "", html, flags=re.S)


def test_file_names_and_summary_carry_the_inputs():
    r = md.plan(EPS, 0.01, 10, budget=20_000, bound="binomial", max_error_rate=0.1)
    assert file_stem(r) == "meter-plan_T10_delta0.01_eps0.01-0.05_m5_binomial-a0.1_budget20000"
    text = summary_text(r, [("δ (failure probability)", "0.01"), ("T (development steps)", "10")])
    assert "δ (failure probability): 0.01" in text and r.sentence() in text
    for v in M.VARIANTS:
        assert f"{r.labels[v]:,}" in text


@given(st.floats(min_value=0.001, max_value=0.999999999999, allow_nan=False))
def test_a_confidence_in_words_is_never_above_the_true_one_near_one(value):
    shown = confidence_rounded(value)
    if value > 0.9:
        if shown.startswith("1 − "):
            mantissa, _, exponent = shown[4:].partition("10")
            digits = float(mantissa.rstrip("×") or 1)
            failure = digits * 10.0 ** int(exponent.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
            assert 1 - failure <= value * (1 + 1e-12)
        else:
            assert float(shown) <= value * (1 + 1e-12)
    else:
        assert abs(float(shown) - value) <= 0.0051 * max(value, 1e-12) + 1e-12
