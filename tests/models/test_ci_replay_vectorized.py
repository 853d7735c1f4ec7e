"""The vectorized ease.ml/ci replay gives exactly the rows of the per-commit loop over fractions.

The reference (tests/models/ci_replay_reference.py) is the first, loop implementation of
the replay (Section 3.5 interval evaluation with Fractions, Sections 3.2-3.4 alarm
counters); here both run on the shipped traces, on large synthetic histories and on
generated conditions and traces, including boundary values where the interval arithmetic
must be exact.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meter_dashboard.ci import (
    CITrace,
    ExactColumn,
    ci_labels,
    evaluate,
    example_trace,
    parse_condition,
    read_ci_trace,
    replay_ci,
)
from meter_dashboard.ci.replay import new_testset_alarms
from tests.models.ci_replay_reference import clause_truth, estimates_csv, replay_rows

PATTERN1 = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"
CONDITIONS = [
    PATTERN1,
    "n - o > 0.02 +/- 0.01",
    "n > 0.8 +/- 0.05",
    "d < 0.1 +/- 0.01",
    "n - 1.1 * o > 0.01 +/- 0.01 /\\ d < 0.1 +/- 0.01",
    "2 * n - o - 0.5 * d > 0.3 +/- 0.07 /\\ n > 0.5 +/- 0.1",
    "-n + o < -0.01 +/- 0.003",
    "o - n > -0.05 +/- 0.02 /\\ d > 0.01 +/- 0.01",
]


def _plan_p(cond, kw):
    """The variance bound p the replay checks d against (None without one)."""
    return ci_labels(cond, kw.get("reliability", 0.9999), kw.get("adaptivity", "full"), kw.get("steps", 32),
                     kw.get("mode", "fp-free"), difference_bound=kw.get("difference_bound"),
                     check_difference_bound=kw.get("check_difference_bound", True)).variance_bound


def _same(cond, trace, **kw):
    """Replay vectorized and by the reference loop; the rows must be equal, in type and key order too."""
    rep = replay_ci(cond, trace, **kw)
    trace = trace if isinstance(trace, CITrace) else read_ci_trace(trace)
    ref = replay_rows(parse_condition(cond), trace, mode=kw.get("mode", "fp-free"), steps=kw.get("steps", 32),
                      alarm_on=kw.get("alarm_on", "pass"), p=_plan_p(cond, kw))
    assert list(rep.rows) == ref
    for a, b in zip(rep.rows, ref):  # same types, same key order (the CLI's JSON is byte-identical)
        assert list(a) == list(b)
        assert all(type(a[k]) is type(b[k]) for k in a)
    return rep


@pytest.mark.parametrize("cond", CONDITIONS)
@pytest.mark.parametrize("mode", ["fp-free", "fn-free"])
def test_shipped_commits_trace_identical(cond, mode):
    for steps, alarm_on in ((32, "pass"), (3, "fail"), (1, "pass")):
        _same(cond, example_trace(), mode=mode, steps=steps, alarm_on=alarm_on)


@pytest.mark.parametrize("cond,adaptivity", [("n - o > 0.02 +/- 0.02", "none"), ("n - o > 0.018 +/- 0.022", "full"),
                                             (PATTERN1, "full"), ("n > 0.9 +/- 0.01 /\\ d < 0.05 +/- 0.01", "none")])
def test_shipped_predictions_trace_identical(cond, adaptivity):
    trace = example_trace("ci_predictions.csv")
    for mode in ("fp-free", "fn-free"):
        _same(cond, trace, mode=mode, steps=7, reliability=0.998, adaptivity=adaptivity, difference_bound=0.1,
              check_difference_bound=False)


def test_large_history_identical():
    trace = read_ci_trace(estimates_csv(3000, seed=7))
    for cond in CONDITIONS[:5]:
        _same(cond, trace, steps=17)


def test_boundaries_are_exact():
    # x-hat = 0.11 with d < 0.1 +/- 0.01: the low end is exactly 0.1 (False); 0.09: the high end is exactly 0.1
    text = "commit,n,o,d\n" + "\n".join(f"c{i},0.5,0.5,{d}" for i, d in enumerate(
        ["0.11", "0.09", "0.1099", "0.0899", "0.1", "0", "1", "0.110000000000000000000000000001"]))
    rep = _same("d < 0.1 +/- 0.01", text)
    assert [r["truth"] for r in rep.rows] == ["False", "Unknown", "Unknown", "True", "Unknown", "True", "False",
                                              "False"]


def test_huge_denominators_fall_back_to_python_integers():
    # 30 significant digits in the trace and the condition: intermediates beyond int64, still exact
    text = ("commit,n,o,d\na,0.123456789012345678901234567891,0.1,0.05\n"
            "b,0.110000000000000000000000000001,0.1,0.05\nc,0.11,0.1,0.05\n")
    cond = "n - o > 0.000000000000000000000000000001 +/- 0.01"
    trace = read_ci_trace(text)
    assert trace.columns["n"].numerators.dtype == object
    rep = _same(cond, trace)
    # b: n - o - 0.01 = 1e-30 exactly, not > 1e-30 (Unknown); c: 0, not > 1e-30 either
    assert [r["truth"] for r in rep.rows] == ["True", "Unknown", "Unknown"]


def test_alarm_rule_matches_the_counter():
    rng = np.random.default_rng(1)
    for steps in (1, 2, 3, 7, 32):
        signal = rng.random(500) < 0.1
        counter, expected = 0, []
        for s in signal:
            counter += 1
            alarm = counter >= steps or s
            expected.append(alarm)
            counter = 0 if alarm else counter
        assert new_testset_alarms(signal, steps).tolist() == expected
        assert new_testset_alarms(np.zeros(500, dtype=bool), steps).tolist() == [
            (i + 1) % steps == 0 for i in range(500)]


def test_scalar_evaluate_matches_the_fraction_rule():
    cond = parse_condition(CONDITIONS[5])
    for n, o, d in [(0.9, 0.5, 0.1), (0.66, 0.3, 0.02), (0.7, 0.7, 0.7), (1, 0, 1)]:
        ev = evaluate(cond, n, o, d)
        values = {k: Fraction(str(v)) for k, v in zip("nod", (n, o, d))}
        assert [c.truth for c in ev.clauses] == [clause_truth(c, values) for c in cond.clauses]


# --------------------------------------------------------------------------- generated cases
_decimal = st.integers(0, 10_000).map(lambda k: Fraction(k, 10_000))
_coef = st.sampled_from(["1", "-1", "2", "1.1", "-0.5", "0.375"])


@st.composite
def _conditions(draw):
    clauses = []
    for _ in range(draw(st.integers(1, 3))):
        vars_ = draw(st.lists(st.sampled_from("nod"), min_size=1, max_size=3, unique=True))
        terms = " + ".join(f"{draw(_coef)} * {v}" for v in vars_)
        cmp = draw(st.sampled_from([">", "<"]))
        c = draw(st.integers(-100, 100)) / 100
        eps = draw(st.integers(1, 50)) / 1000
        clauses.append(f"{terms} {cmp} {c} +/- {eps}")
    return " /\\ ".join(clauses)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cond=_conditions(), values=st.lists(st.tuples(_decimal, _decimal, _decimal), min_size=1, max_size=40),
       mode=st.sampled_from(["fp-free", "fn-free"]), steps=st.integers(1, 6), alarm_on=st.sampled_from(["pass", "fail"]))
def test_generated_estimates_traces_identical(cond, values, mode, steps, alarm_on):
    columns = {v: ExactColumn.from_fractions([row[j] for row in values]) for j, v in enumerate("nod")}
    trace = CITrace("estimates", tuple(f"c{i}" for i in range(len(values))), columns=columns)
    _same(cond, trace, mode=mode, steps=steps, alarm_on=alarm_on, reliability=0.9)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), models=st.integers(2, 6), examples=st.integers(1, 60), steps=st.integers(1, 5),
       mode=st.sampled_from(["fp-free", "fn-free"]))
def test_generated_predictions_traces_identical(data, models, examples, steps, mode):
    classes = st.sampled_from("abc")
    labels = data.draw(st.lists(classes, min_size=examples, max_size=examples))
    preds = {f"m{j}": tuple(data.draw(st.lists(classes, min_size=examples, max_size=examples)))
             for j in range(models)}
    trace = CITrace("predictions", tuple(list(preds)[1:]), labels=tuple(labels), predictions=preds, baseline="m0")
    cond = data.draw(st.sampled_from(["n - o > 0.05 +/- 0.05", PATTERN1, "n > 0.3 +/- 0.1 /\\ d < 0.5 +/- 0.1"]))
    _same(cond, trace, mode=mode, steps=steps, reliability=0.9, difference_bound=0.3)
