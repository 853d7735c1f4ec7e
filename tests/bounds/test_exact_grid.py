"""The exact binomial engine gives the answers of issue 12's engine on a seeded grid of 495 settings (issue 18).

The expected values in ``data/exact_binomial_grid.json`` were computed once, by the engine
before issue 18 rewrote the search (commit 739d4d2), with
``python -m tests.generators.generate_exact_grid`` (the generator documents every kind of
case: counts of every variant with nonuniform eps, tenants, reverts and error-rate ranges,
short curves over T, the confidence, largest T and smallest eps at a budget, ease.ml/ci
clause counts, one-sided events).  Counts, largest T and refusals must be identical; the
smallest eps is the same bisection (to 1e-8 relative) and must be identical too; the log of
delta at n is a float sum of exact tails and must agree to 1e-12 relative (the deep tails
are summed by a different, equally exact, method since issue 18).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.generators.generate_exact_grid import answer

CASES = json.loads((Path(__file__).parent / "data" / "exact_binomial_grid.json").read_text(encoding="utf-8"))


def _id(case: dict) -> str:
    return f"{case['kind']}-{case.get('variant', case.get('sides', case.get('adaptivity')))}"


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{_id(c)}" for i, c in enumerate(CASES)])
def test_engine_reproduces_the_grid(case):
    expected = case["expected"]
    got = answer({k: v for k, v in case.items() if k != "expected"})
    if case["kind"] == "failure" and isinstance(expected, float):
        assert isinstance(got, float) and got == pytest.approx(expected, rel=1e-12, abs=1e-300)
    else:
        assert got == expected


def test_the_grid_covers_what_issue_18_asks():
    kinds = {c["kind"] for c in CASES}
    assert kinds == {"labels", "curve", "failure", "max_steps", "min_epsilon", "ci", "smallest"}
    assert len(CASES) >= 300
    labels = [c for c in CASES if c["kind"] == "labels"]
    assert {c["variant"] for c in labels} == {"single_model", "no_adaptivity", "resampling", "regular", "incremental"}
    assert sum("max_error_rate" in c for c in labels) >= 50
    assert sum("reverts" in c for c in labels) >= 10 and sum("tenants" in c for c in labels) >= 10
    assert sum("tenant_steps" in c for c in labels) >= 3
    assert sum(len(set(c["epsilon"])) > 1 for c in labels) >= 50  # nonuniform tolerances
    assert sum(isinstance(c["expected"], dict) for c in labels) >= 3  # refusals
    assert any(c["expected"] == "inf" for c in CASES if c["kind"] == "max_steps")
    assert all(math.isfinite(c["expected"]) for c in CASES if c["kind"] == "min_epsilon")
