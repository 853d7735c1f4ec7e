"""Issue 29: /approve says what it computes and for how long (approvals.text.Pace), then the pace of its decisions."""
from __future__ import annotations

import pytest

import meter_dashboard.approvals.model as ap
from meter_dashboard.approvals import text
from meter_dashboard.approvals.text import Pace, duration, time_left
from meter_dashboard.app.first_answer import computing


def test_the_bound_grows_with_the_decisions_and_the_procedure():
    pace = Pace()
    assert pace.seconds(50, "fs-srgp") == pytest.approx(Pace.OVERHEAD_SECONDS + 50 * Pace.MVN_SECONDS)
    assert pace.seconds(50, "pres-srgp") > pace.seconds(15, "pres-srgp") > pace.seconds(15, "bonf-srgp")
    assert pace.seconds(15, "naive") == pytest.approx(Pace.OVERHEAD_SECONDS + 15 * Pace.PLAIN_SECONDS)


def test_a_slower_measurement_raises_the_bound_a_faster_one_never_lowers_it():
    pace = Pace()
    calibrated = pace.seconds(50, "fs-srgp")
    pace.record("fs-srgp", 10, Pace.OVERHEAD_SECONDS + 0.001)  # faster than calibrated: the calibration stays
    assert pace.seconds(50, "fs-srgp") == calibrated
    pace.record("fs-srgp", 10, Pace.OVERHEAD_SECONDS + 3.0)  # 0.3 s a decision on a busy server
    assert pace.seconds(50, "fs-srgp") == pytest.approx(Pace.OVERHEAD_SECONDS + 50 * 0.3)
    assert pace.seconds(50, "bonf-srgp") == pytest.approx(Pace.OVERHEAD_SECONDS + 50 * Pace.PLAIN_SECONDS)
    for _ in range(Pace.KEPT):  # the last computations only
        pace.record("fs-srgp", 10, 0.0)
    assert pace.seconds(50, "fs-srgp") == calibrated


def test_durations_are_bounds_rounded_up():
    assert duration(0.55) == "under 1 s" and duration(1.0) == "under 1 s"
    assert duration(1.01) == "up to 2 s" and duration(99.2) == "up to 100 s" and duration(150) == "up to 3 min"
    assert time_left(10, 50, 2.0) == "about 8 s left at this pace"
    assert time_left(0, 50, 2.0) == "" and time_left(50, 50, 2.0) == ""
    assert time_left(1, 50, 10.0) == "about 9 min left at this pace"


def test_the_first_response_says_how_long_for_the_links_example_and_procedure():
    bound = text.PACE.seconds(50, "pres-srgp")
    assert computing("approve", "example=adversary&method=pres-srgp") == (
        f"computing the approvals of the 50 modifications on the link's trace with presSRGP ({duration(bound)} of "
        "computing on this server) and building the page…")
    # a refused value: the page's default, as the live page computes it (and says why)
    assert "of the 15 modifications on the link's trace with fsSRGP (" in computing("approve", "example=nope")
    assert "with fsSRGP (" in computing("approve", "example=adversary&method=holm")
    assert computing("ladder", "") == "building the page and computing its numbers…"


def test_the_partial_lead_says_how_long_the_rest_takes_at_its_pace():
    full = ap.approve(ap.load_example("adversary")[0], "fs-srgp")
    fields = ("approved", "levels", "weights", "z", "z_thresholds", "p_values", "margins", "estimates",
              "standard_errors")
    part = ap.ApprovalResult(method=full.method, alpha=full.alpha, names=full.names, steps=full.steps,
                             **{f: getattr(full, f)[:10] for f in fields})
    words = text.lead(part, time_left(10, 50, 2.0))
    assert "tested so far (50 in all; about 8 s left at this pace)" in words
    assert text.lead(part) == part.lead() and "left" not in part.lead()  # the report's and slide's words
    assert "left" not in text.lead(full, "about 8 s left at this pace")  # complete: nothing is left


def test_the_view_times_its_computation_says_its_pace_and_bounds_only_a_shipped_example(monkeypatch):
    from meter_dashboard.approvals import view_answer
    from meter_dashboard.approvals.view import Approve

    pace, clock = Pace(), [100.0]
    monkeypatch.setattr(view_answer, "PACE", pace)
    monkeypatch.setattr(view_answer, "monotonic", lambda: clock[0])
    view = Approve(method="fs-srgp")
    model, full = view.model, view.model.result
    assert f"{duration(pace.seconds(15, 'fs-srgp'))} of computing on this server" in view.decisions._pending_lead()
    fields = ("approved", "levels", "weights", "z", "z_thresholds", "p_values", "margins", "estimates",
              "standard_errors")
    part = ap.ApprovalResult(method=full.method, alpha=full.alpha, names=full.names, steps=full.steps,
                             settings=full.settings, **{f: getattr(full, f)[:10] for f in fields})
    model._set(busy=True)  # a setting changed: the page's model computes in the background
    clock[0] = 102.0
    model._set(result=part)  # 10 of 15 decisions in 2 s: the other 5 take about 1 s more
    assert "tested so far (15 in all; about 1 s left at this pace)" in view.lead.object
    clock[0] = 103.0
    model._set(result=ap.approve(model.trace, "fs-srgp", margin_step=0.01), busy=False)
    assert "left" not in view.lead.object
    per_decision = (3.0 - Pace.OVERHEAD_SECONDS) / 15  # measured: above the calibrated cost, so the bound follows
    assert pace.seconds(15, "fs-srgp") == pytest.approx(Pace.OVERHEAD_SECONDS + 15 * per_decision)
    model._set(busy=True)  # a pass that ends with no new result (the comparison only) measures nothing
    clock[0] = 200.0
    model._set(busy=False)
    assert pace.seconds(15, "fs-srgp") == pytest.approx(Pace.OVERHEAD_SECONDS + 15 * per_decision)
    model.use_trace(model.trace)  # the same numbers, as an uploaded file: its computing time is not known beforehand
    assert model.example == "uploaded" and "of computing" not in view.decisions._pending_lead()


def test_no_number_for_more_conditioning_than_calibrated():
    from meter_dashboard.approvals.view import Approve

    assert Pace().known("fs-srgp") and Pace().known("bonferroni", 40) and not Pace().known("pres-srgp", 7)
    view = Approve(method="fs-srgp")
    assert "of computing on this server" in view.decisions._pending_lead()
    view.model.max_conditioning = 12  # each threshold integrates up to 13 dimensions: not what was calibrated
    assert "of computing" not in view.decisions._pending_lead()
