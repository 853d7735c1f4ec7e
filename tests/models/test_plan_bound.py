"""The planner's model with the exact binomial bound (issue 12): plan(), MeterPlan, curves, URL keys, the check.

Reference values:
- ease.ml/ci (Renggli et al. 2019), Section 4.3, setting m = 5, T = 10, delta = 0.01 with the meter's
  eps = 0.01..0.05 (Hubis et al. 2019, Sec. 5.1): independent computations quoted in issue 12 give
  single_model about 16,650, incremental about 27,150, regular about 86,500 (exact binomial) and
  about 6,000 / 9,800 / 31,400 with the error rate known to be at most 0.1.
- :func:`exact_tail` below: the worst-case two-sided binomial tail computed with Python integers
  and fractions only (no floating point), over every breakpoint of p (Langford 2005, Sec. 3).
"""
from __future__ import annotations

import asyncio
from dataclasses import replace
from fractions import Fraction
from math import ceil, comb, floor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import meter_dashboard as md
from meter_dashboard.bounds import meter as M
from meter_dashboard.meter.check import check_plan
from meter_dashboard.meter.model import MeterPlan, curve

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]


# ---------------------------------------------------------------- independent exact arithmetic
def _tail(n: int, p: Fraction, eps: Fraction) -> Fraction:
    """P_p(|X/n - p| >= eps), X ~ Binomial(n, p), exactly."""
    hi, lo = ceil(n * (p + eps)), floor(n * (p - eps))
    a, b = p.numerator, p.denominator
    total = sum(comb(n, k) * a**k * (b - a) ** (n - k) for k in range(max(hi, 0), n + 1))
    total += sum(comb(n, k) * a**k * (b - a) ** (n - k) for k in range(0, min(lo, n) + 1))
    return Fraction(total, b**n)


def exact_tail(n: int, eps: str, rate: str = "1") -> Fraction:
    """sup over p in [0, rate] of P_p(|X/n - p| >= eps): the max over the breakpoints j/n - eps, i/n + eps, rate."""
    e, a = Fraction(eps), Fraction(rate)
    points = {a, Fraction(0)} | {Fraction(j, n) - e for j in range(n + 1)} | {Fraction(i, n) + e for i in range(n + 1)}
    return max(_tail(n, p, e) for p in points if 0 <= p <= a)


@pytest.mark.parametrize("rate", ["1", "0.2"])
def test_single_model_count_against_exact_fractions(rate):
    kw = {} if rate == "1" else {"max_error_rate": float(rate)}
    n = md.plan(0.1, delta=0.05, steps=1, signals=1, bound="binomial", **kw).labels["single_model"]
    assert exact_tail(n, "0.1", rate) <= Fraction(5, 100)
    assert exact_tail(n - 1, "0.1", rate) > Fraction(5, 100)
    # a larger test set never breaks the guarantee: two periods (1 / (2 eps) = 5 labels each) further
    assert all(exact_tail(k, "0.1", rate) <= Fraction(5, 100) for k in range(n + 1, n + 11))


def test_no_adaptivity_is_t_exact_tails_against_exact_fractions():
    n = md.plan(0.1, delta=0.05, steps=4, signals=1, bound="binomial").labels["no_adaptivity"]
    assert 4 * exact_tail(n, "0.1") <= Fraction(5, 100) < 4 * exact_tail(n - 1, "0.1")


# ---------------------------------------------------------------- the published settings
def test_exact_counts_of_the_papers_setting_beside_hoeffdings():
    r = md.plan(NONUNIFORM, delta=0.01, steps=10, bound="binomial")
    assert (r.labels["single_model"], r.labels["incremental"], r.labels["regular"]) == (16651, 27151, 86501)
    assert r.hoeffding_labels["incremental"] == 38_005 and r.hoeffding_labels["regular"] == 100_033
    assert r.label_savings["incremental"] == 38_005 - 27_151
    assert r.recommended == "incremental" and not r.refused and r.complete
    assert "38,005 with Hoeffding's bound" in r.sentence()
    frame = r.to_frame()
    assert frame.loc["regular", "labels"] == 86_501


def test_known_error_rate_range_and_what_happens_if_it_is_wrong():
    r = md.plan(NONUNIFORM, delta=0.01, steps=10, bound="binomial", max_error_rate=0.1)
    assert (r.labels["single_model"], r.labels["incremental"], r.labels["regular"]) == (6051, 9801, 31351)
    assert r.unrestricted_labels["incremental"] == 27_151
    assert 0 < r.unrestricted_confidence["incremental"] < 0.99  # the planned count without the range's promise
    assert "EVERY model" in " ".join(r.notes) and "at most 0.1" in r.sentence()


def test_a_refused_exact_count_with_a_range_is_noted_not_a_crash():
    """With max_error_rate, an exact count the binomial bound refuses (Hoeffding's above BINOMIAL_LABELS_CAP) has no
    count without the range either: bound_notes() formatted those None values (a TypeError, so md.plan raised;
    found by mypy on meter.result, issue 25).  Now the plan shows Hoeffding's counts with the refusals noted, and a
    planned count whose unrestricted count alone is refused says so."""
    r = md.plan([0.0003] * 5, delta=0.01, steps=10, bound="binomial", max_error_rate=0.1)
    assert r.complete and set(r.refused) == set(r.labels) and r.labels == r.hoeffding_labels
    assert r.unrestricted_labels["incremental"] is None and r.unrestricted_confidence["incremental"] is None
    notes = r.bound_notes()
    assert not any(n.startswith("If the range is wrong") for n in notes)
    assert any(n.startswith("Incremental meter: no exact count") for n in notes) and "Incremental meter" in str(r.notes)
    only_without = replace(r, refused={}, unrestricted_labels={"incremental": None},
                           unrestricted_confidence={"incremental": 0.5})
    assert only_without.bound_notes() == [
        f"If the range is wrong: the incremental meter gets no exact count without it, and "
        f"{r.labels['incremental']:,} labels guarantee only confidence 0.5 (not 0.99)."]


def test_budget_answers_use_the_exact_bound_at_that_n():
    at = md.plan(NONUNIFORM, delta=0.01, steps=10, bound="binomial", budget=27_151)
    below = md.plan(NONUNIFORM, delta=0.01, steps=10, bound="binomial", budget=27_150)
    assert at.confidence["incremental"] >= 0.99 > below.confidence["incremental"]
    assert at.max_steps["incremental"] >= 10 > below.max_steps["incremental"]
    assert at.min_epsilon["incremental"] <= 0.01 < below.min_epsilon["incremental"]


def test_hoeffding_stays_the_default():
    assert md.plan(NONUNIFORM, delta=0.01, steps=10).labels["incremental"] == 38_005


@pytest.mark.parametrize("kw, fragment", [
    (dict(bound="exact"), "bound must be one of"),
    (dict(bound="binomial", max_error_rate=0.5), "max_error_rate must be below 0.5"),
    (dict(bound="binomial", max_error_rate=0), "max_error_rate must be"),
])
def test_bad_bound_settings_name_the_parameter(kw, fragment):
    with pytest.raises(md.InputError) as info:
        md.plan(NONUNIFORM, delta=0.01, steps=10, **kw)
    assert fragment in str(info.value)


# ---------------------------------------------------------------- properties
eps1 = st.sampled_from([0.01, 0.02, 0.03, 0.05])
deltas = st.sampled_from([1e-6, 1e-3, 0.01, 0.1])


@settings(max_examples=8, deadline=None)
@given(eps1, deltas, st.integers(1, 60))
def test_binomial_never_needs_more_than_hoeffding(e, delta, steps):
    eps = [e, 2 * e, 3 * e]
    r = md.plan(eps, delta=delta, steps=steps, bound="binomial")
    for v in md.VARIANTS:
        if v not in r.refused:
            assert r.labels[v] <= r.hoeffding_labels[v], v


@settings(max_examples=6, deadline=None)
@given(eps1, deltas, st.sampled_from([0.05, 0.1, 0.2]), st.sampled_from([0.25, 0.4]))
def test_restricted_count_falls_as_the_range_narrows(e, delta, a_low, a_high):
    kw = dict(delta=delta, steps=5, bound="binomial")
    low, high = md.plan([e, 2 * e], max_error_rate=a_low, **kw), md.plan([e, 2 * e], max_error_rate=a_high, **kw)
    free = md.plan([e, 2 * e], **kw)
    for v in ("single_model", "regular", "incremental"):
        assert low.labels[v] <= high.labels[v] <= free.labels[v], v


@settings(max_examples=6, deadline=None)
@given(eps1, st.integers(1, 30), st.integers(1, 30))
def test_monotone_in_delta_and_steps(e, t1, t2):
    eps = [e, 2 * e]
    small, large = sorted((t1, t2))
    a, b = md.plan(eps, delta=0.01, steps=small, bound="binomial"), md.plan(eps, delta=0.01, steps=large,
                                                                            bound="binomial")
    c = md.plan(eps, delta=0.001, steps=small, bound="binomial")
    for v in ("no_adaptivity", "regular", "incremental"):
        assert a.labels[v] <= b.labels[v] and a.labels[v] <= c.labels[v], v


# ---------------------------------------------------------------- curves and the param model
def test_exact_curve_matches_the_plan_at_each_t():
    c = curve(NONUNIFORM, 0.01, [1, 10], bound="binomial")
    assert c["incremental"][1] == 27_151 and c["regular"][1] == 86_501
    assert c["single_model"][0] == c["single_model"][1] == 16_651
    h = curve(NONUNIFORM, 0.01, [10])
    assert h["regular"][0] == 100_033


def test_meter_plan_bound_url_keys_round_trip():
    p = MeterPlan(epsilon=NONUNIFORM, delta=0.01, steps=10, bound="binomial", max_error_rate=0.1, exact_points=2)
    q = p.to_query()
    assert q["bound"] == "binomial" and q["max_error_rate"] == "0.1"
    assert p.result.labels["incremental"] == 9_801
    back = MeterPlan.from_query(p.query_string() + "&exact_points=2")
    assert back.bound == "binomial" and back.max_error_rate == 0.1
    assert back.result.labels == p.result.labels
    p.bound = "hoeffding"
    assert "bound" not in p.to_query() and "max_error_rate" not in p.to_query()
    assert p.result.labels["incremental"] == 38_005  # the range is ignored with Hoeffding's bound


def test_meter_plan_exact_curves_fill_in_and_keep_hoeffdings():
    """Issue 18: with the exact bound the whole curve over T is exact (a first batch, then every other T)."""
    p = MeterPlan(epsilon=NONUNIFORM, delta=0.01, steps=10, bound="binomial", exact_points=3)
    curves = p.curves
    assert curves["bound"] == "binomial" and curves["computed"] == curves["planned"] == len(curves["steps"]) == 100
    i = list(curves["steps"]).index(10)
    assert curves["incremental"][i] == 27_151 and curves["hoeffding"]["incremental"][i] == 38_005
    for t in (1, 37, 100):  # each point is the engine's count at that T
        j = list(curves["steps"]).index(t)
        assert curves["regular"][j] == M.labels("regular", NONUNIFORM, 0.01, t, bound="binomial")


@pytest.mark.parametrize("query, fragment", [
    ("bound=exact", "bound must be one of"),
    ("bound=binomial&max_error_rate=0.7", "max_error_rate must be below 0.5"),
    ("bound=binomial&max_error_rate=x", "max_error_rate must be a number; got 'x'"),
])
def test_bad_bound_url_values_raise_and_change_nothing(query, fragment):
    p = MeterPlan(exact_points=2)
    before = p.to_query()
    with pytest.raises(md.InputError) as info:
        p.update_from_query(query)
    assert fragment in str(info.value) and p.to_query() == before


def test_background_runner_gives_the_same_result():
    async def go():
        p = MeterPlan(epsilon=NONUNIFORM, delta=0.01, steps=10, exact_points=2)
        p.work_in_background()
        p.bound = "binomial"
        first = p.result  # Hoeffding's with the exact count pending, or already the exact count (issue 18)
        assert (first.labels["incremental"], first.is_pending("labels", "incremental")) in ((38_005, True),
                                                                                         (27_151, False))
        await p.settled()
        assert p.result.labels["incremental"] == 27_151 and p.result.complete

    asyncio.run(go())


def test_a_served_plan_has_its_exact_counts_in_its_first_update():
    """Issue 18: with the engine loaded, modest counts are found in milliseconds - no "computing…" at all."""
    md.plan(NONUNIFORM, 0.01, 10, bound="binomial")  # the engine's module is loaded

    async def go():
        p = MeterPlan(epsilon=NONUNIFORM, delta=0.01, steps=10, exact_points=2)
        p.work_in_background()
        p.param.update(bound="binomial", delta=0.0123)
        expected = M.labels("incremental", NONUNIFORM, 0.0123, 10, bound="binomial")
        assert p.result.labels["incremental"] == expected and not p.result.is_pending("labels", "incremental")
        i = list(p.curves["steps"]).index(10)
        assert p.curves["incremental"][i] == expected  # the curve's point at T, in the same update
        await p.settled()
        assert p.result.complete

    asyncio.run(go())


# ---------------------------------------------------------------- the simulation check
def test_check_naive_fails_and_planned_counts_stay_within_delta():
    r = md.plan([0.02, 0.04, 0.06], delta=0.1, steps=10, bound="binomial")
    rows = {row.key: row for row in r.check(meter="regular", replicates=512, seed=0)}
    assert set(rows) == {"naive", "hoeffding", "planned"}
    naive = rows["naive"].result
    assert rows["naive"].labels == 3_745 and naive.ci[0] > 0.1 and rows["naive"].verdict == "above δ"
    for key in ("hoeffding", "planned"):
        assert rows[key].result.ci[0] <= 0.1 and rows[key].verdict == "within δ", key
    assert rows["planned"].labels == r.labels["regular"] < rows["hoeffding"].labels
    assert rows["naive"].to_dict()["failure_rate"] == naive.failure_rate


@pytest.mark.parametrize("kw, fragment", [
    (dict(replicates=1), "replicates must be"),
    (dict(meter="single_model"), "meter must be one of"),
    (dict(developer="lazy"), "developer must be one of"),
])
def test_check_bad_settings(kw, fragment):
    with pytest.raises(md.InputError) as info:
        check_plan(md.plan([0.02, 0.04], delta=0.1, steps=3), **kw)
    assert fragment in str(info.value)
