"""Malformed uploads through the page models and generated Python API calls (issue 15).

Uploads: every model's ``load`` must refuse a bad file with a message (InputError text in the
model's error field), return False, keep the last good data, and never raise anything else.
API: every public function either answers (with counts that are positive whole numbers) or
raises :class:`InputError` — never ZeroDivisionError, OverflowError, RecursionError, csv.Error.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import meter_dashboard as md
from meter_dashboard.core.validation import InputError

from .strategies import HOSTILE_NUMBERS, MALFORMED_FILES

EXAMPLES = int(os.environ.get("METER_DASHBOARD_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _models():
    from meter_dashboard.approvals.model import ApproveModel
    from meter_dashboard.ci import CIModel
    from meter_dashboard.comparison.model import CompareModel
    from meter_dashboard.leaderboard.model import LadderReplayModel
    from meter_dashboard.session.model import SessionModel

    return {
        "session": (SessionModel, lambda m, data: m.load(data, name="upload.csv"), lambda m: m.trace),
        "ci": (CIModel, lambda m, data: m.load_trace(data, name="upload.csv"), lambda m: getattr(m, "trace", None)),
        "ladder": (LadderReplayModel, lambda m, data: m.load(data, name="upload.csv"), lambda m: m.table),
        "compare": (CompareModel, lambda m, data: m.load(data, name="upload.csv"), lambda m: m.table),
        "approve": (ApproveModel, lambda m, data: m.load_trace(data, name="upload.csv"), lambda m: m.trace),
    }


@pytest.mark.parametrize("page", ["session", "ci", "ladder", "compare", "approve"])
@pytest.mark.parametrize("case", list(MALFORMED_FILES))
def test_malformed_upload_is_refused_and_the_last_good_data_stays(page, case):
    cls, load, current = _models()[page]
    model = cls()
    before = current(model)
    try:
        accepted = load(model, MALFORMED_FILES[case])
    except InputError:
        accepted = False  # a loader may raise InputError; the page shows it
    if not accepted:
        assert current(model) is before, f"{page}: a refused {case} upload replaced the data on screen"
        error = getattr(model, "trace_error", "") or getattr(model, "error", "")
        assert error, f"{page}: a refused {case} upload must say why"


def _any_value():
    return st.one_of(st.sampled_from(HOSTILE_NUMBERS), st.floats(), st.integers(-(2**70), 2**70),
                     st.none(), st.booleans(), st.lists(st.floats(), max_size=4), st.text(max_size=8))


@FUZZ
@given(epsilon=st.one_of(_any_value(), st.lists(st.floats(1e-6, 0.5), min_size=1, max_size=5).map(sorted)),
       delta=_any_value(), steps=_any_value(), budget=st.one_of(st.none(), _any_value()))
def test_plan_answers_or_refuses(epsilon, delta, steps, budget):
    try:
        result = md.plan(epsilon, delta=delta, steps=steps, budget=budget)
    except InputError:
        return
    for value in result.labels.values():
        assert isinstance(value, int) and value >= 1


@FUZZ
@given(text=st.one_of(st.text(max_size=60), st.sampled_from(HOSTILE_NUMBERS)))
def test_query_strings_answer_or_refuse(text):
    from meter_dashboard.meter.model import MeterPlan

    for key in ("epsilon", "delta", "steps", "signals", "reverts", "tenant_steps", "budget", "ranges"):
        try:
            MeterPlan.parse_query({key: text})
        except InputError:
            pass
