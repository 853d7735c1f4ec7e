"""What a test set guarantees at a step, and what a signal means (session/text.py; issue 24, "say only what holds").

Independent computations: the ε a short test set supports is checked against the failure
probability of the meter's union bound (Hubis, Wu & Zhang 2019, Theorem 2 / Corollary 2: the
supported ε vector is the one at which the bound's failure probability is δ), not against the
code that found it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meter_dashboard.bounds import meter
from meter_dashboard.core import formatting as fmt
from meter_dashboard.session import text
from meter_dashboard.session.model import replay
from meter_dashboard.session.trace import load_example

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]
RANGES = [0, 0.005, 0.01, 0.02, 0.05, 1]


def test_the_example_at_step_8_guarantees_what_its_5509_labels_support():
    # issue 24: the card said 0.03 while the alarm said the labels support only eps_1 >= 0.02588 (0.07763 at signal 3)
    r = replay(load_example("emocontext"))  # delta 0.01, T = 8, n = 5,509 shipped with the example
    g = text.guarantee_at(r)
    assert r.test_size == 5509 and g.signal == 3 and g.state == "short" and g.alarm
    # independent: the scaled vector eps * s makes the incremental meter's failure probability exactly delta
    scale = g.holds / 0.03
    at = float(meter.failure_probability("incremental", 5509, [e * scale for e in EPS], 8))
    below = float(meter.failure_probability("incremental", 5509, [e * scale * 0.999 for e in EPS], 8))
    assert at == pytest.approx(0.01, rel=1e-6) and below > 0.01
    assert g.value == fmt.number(g.holds) == "0.07763"
    assert g.note == "what 5,509 labels guarantee, prob. 0.99"
    assert (g.planned_label, g.planned, g.planned_note) == ("planned ε₃ =", 0.03, "needs 36,889 labels")
    card = str(g.html())
    assert "md-headline-alarm" in card and 'meter-guaranteed">0.07763<' in card and 'meter-epsilon">0.03<' in card
    s = text.sentence(r)
    assert "within 0.03" not in s and "guarantees only that the test score is within 0.07763" in s
    assert "the planned 0.03 needs 36,889 labels" in s


def test_beyond_the_budget_nothing_is_guaranteed():
    r = replay(load_example("emocontext"), steps=6, test_size=60_000)
    assert not r.short_of_labels
    g = text.guarantee_at(r)  # step 8, after T = 6
    assert g.state == "beyond" and g.holds is None and g.alarm and g.value == "none — beyond the budget"
    assert g.planned_note == "covers the first T = 6 steps only"
    assert "the test set guarantees nothing about its score" in text.sentence(r)
    assert "within" not in text.sentence(r)
    inside = text.guarantee_at(r, 5)  # step 6, the last step of the budget
    assert inside.state == "holds" and inside.value == "0.03" and not inside.alarm  # worst so far: signal 3
    assert "with probability 0.99 the test score is within 0.03" in text.sentence(r, 5)


def test_enough_labels_or_an_unknown_size():
    r = replay(load_example("emocontext"), test_size=60_000)
    g = text.guarantee_at(r)
    assert g.state == "holds" and g.holds == 0.03 and not g.alarm and "md-headline-alarm" not in str(g.html())
    assert g.note == "ε₃ of the incremental meter, prob. 0.99"
    unknown = replay(load_example("emocontext").with_test_size(None))
    u = text.guarantee_at(unknown)
    assert u.state == "unchecked" and not u.alarm and "if the test set has the 36,889 labels" in u.note


def test_too_few_labels_for_any_tolerance():
    r = replay(load_example("emocontext"), test_size=5)
    g = text.guarantee_at(r)
    assert r.supported_epsilon is None or r.supported_epsilon[2] >= 1
    assert g.state == "short" and g.holds is None and g.value == "none" and g.alarm
    assert g.note == "5 labels guarantee no ε below 1"
    assert "guarantees no bound below 1 on the test score" in text.sentence(r)
    assert text.gauge_note(g) == "none guaranteed: 5 labels support no ε below 1"


def test_the_function_the_testsets_page_calls():
    # plain values, as /testsets has them: no ReplayResult needed
    g = text.guarantee(0.03, 3, 0.01, meter="incremental", within_budget=True, steps=8, test_size=5509,
                       needed=36_889, supported=0.07763044940543658)
    assert (g.value, g.alarm) == ("0.07763", True)
    assert text.guarantee(0.03, 3, 0.01, within_budget=False, steps=8).value == "none — beyond the budget"
    assert "&lt;" in str(text.guarantee(0.03, 3, 0.01).html(label="<b>"))  # escaped


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 200_000), delta=st.sampled_from([0.5, 0.1, 0.01, 1e-6]), steps=st.integers(1, 12),
       variant=st.sampled_from(["incremental", "regular"]), index=st.integers(0, 7))
def test_no_headline_states_a_guarantee_an_alarm_denies(n, delta, steps, variant, index):
    r = replay(load_example("emocontext"), variant=variant, delta=delta, steps=steps, test_size=n)
    g = text.guarantee_at(r, index)
    d = r.step(index)
    denied = r.short_of_labels or not d["within_budget"]
    assert g.alarm == denied
    assert any(a.kind == "test_set_too_small" for a in r.alarms) == r.short_of_labels
    s = text.sentence(r, index)
    if denied:
        assert f"within {fmt.number(g.planned)} of" not in s  # the plan's ε is never stated as holding
        assert g.holds is None or g.holds > g.planned
    else:
        assert g.holds == g.planned and f"within {fmt.number(g.planned)} of the model's true score" in s
    if g.holds is not None and g.state == "short":
        assert fmt.number(g.holds) in s and math.isfinite(g.holds) and g.holds < 1


def test_what_each_signal_means_for_the_team():
    # Section 3.1: the developer decodes signal i to its range and decides whether to collect a new
    # validation set; Section 3.4: with probability 1 - delta, r_lo - eps <= |OVFT(D_val, D)| <= r_hi + eps
    lines = text.signal_meanings(RANGES, EPS, 0.1)
    assert len(lines) == 5
    assert lines[0].startswith("Signal 1 of 5 (gap below 0.005): no sign that the validation set is overfit")
    assert "[0, 0.015]" in lines[0]  # 0.005 + eps_1 0.01
    assert "the validation set is overfit — trust the test score (within ±0.03), not the validation score" in lines[2]
    assert "with probability 0.9 the validation set's overfitting |OVFT(D_val, 𝒟)| lies in [0, 0.05]" in lines[2]
    assert "[0, 0.09]" in lines[3]  # 0.02 - 0.04 clipped at 0 ... 0.05 + 0.04
    assert "refresh it (new validation examples) before the next step" in lines[4] and "[0, 1]" in lines[4]
    none = text.signal_meaning(5, RANGES, None, 0.1)
    assert "no bound holds on the test score at this step either" in none and "none holds here" in none
    assert "trust the test score" not in none
    middle = text.signal_meaning(3, RANGES, None, 0.1)
    assert "and no bound holds on the test score at this step: neither score is vouched for" in middle
    assert "says nothing about overfitting" in text.signal_meaning(1, [0, 1], 0.01, 0.1)
    two = text.signal_meanings([0, 0.02, 1], [0.01, 0.02], 0.05)
    assert "no sign" in two[0] and "refresh it" in two[1]


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.floats(0.001, 0.999), min_size=1, max_size=8, unique=True), eps=st.floats(1e-4, 0.5),
       data=st.data())
def test_the_papers_reading_is_the_range_widened_by_epsilon(cuts, eps, data):
    ranges = [0.0, *sorted(cuts), 1.0]
    if np.any(np.diff(ranges) <= 0):
        return
    k = data.draw(st.integers(1, len(ranges) - 1))
    line = text.signal_meaning(k, ranges, eps, 0.05)
    low, high = max(ranges[k - 1] - eps, 0.0), min(ranges[k] + eps, 1.0)
    assert f"lies in [{fmt.number(low)}, {fmt.number(high)}]." in line
