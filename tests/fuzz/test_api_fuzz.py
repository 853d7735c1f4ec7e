"""Every public function of ``import meter_dashboard as md``, with generated arguments (issue 23).

Each call either answers or raises :class:`md.InputError` naming one of the function's arguments
(never a plain ValueError, TypeError, IndexError, OverflowError...), and every answer's
``to_dict()`` is strict JSON (no inf or NaN: ``json.dumps(..., allow_nan=False)``).

Values: what a careless or hostile notebook user passes — numbers of every size, NaN and
infinities, complex numbers, text (empty, numeric, hostile), bytes, None, booleans, lists with
such items (nested too), dicts — mixed with valid values so that the calls get past their first
argument. Examples per function: ``METER_DASHBOARD_API_EXAMPLES`` (default 40, so a few hundred
calls in all); ``METER_DASHBOARD_API_EXAMPLES=2000 python -m pytest tests/fuzz/test_api_fuzz.py``
for a long run. The slowest call of the run is printed (``-s``); speed is never asserted here.
"""
from __future__ import annotations

import inspect
import json
import os
import time
from importlib import resources

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import meter_dashboard as md

from .strategies import HOSTILE_NUMBERS

EXAMPLES = int(os.environ.get("METER_DASHBOARD_API_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
DATA = resources.files("meter_dashboard.data")
SLOWEST: list = [0.0, ""]

_scalar = st.one_of(
    st.floats(), st.floats(0, 1), st.integers(-(2**70), 2**70), st.integers(0, 50), st.none(), st.booleans(),
    st.complex_numbers(max_magnitude=2), st.sampled_from(HOSTILE_NUMBERS), st.text(max_size=6),
    st.binary(max_size=6), st.just(np.float64("nan")), st.just(np.int64(3)), st.just(""),
)
VALUE = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                                                      st.dictionaries(st.text(max_size=3), inner, max_size=2)),
                     max_leaves=6)

#: valid values per argument name, so that calls reach their later arguments
VALID = {
    "epsilon": [[0.01, 0.02, 0.03, 0.04, 0.05], 0.05, [0.02, 0.04]], "delta": [0.01, 0.1], "steps": [10, 3],
    "signals": [None, 2], "tenants": [1, 2], "tenant_steps": [None], "reverts": [None], "budget": [None, 50_000],
    "seconds_per_label": [2.0], "labelers": [1, 3], "cost_per_hour": [None, 20.0], "bound": ["hoeffding"],
    "max_error_rate": [None, 0.2], "condition": ["n - o > 0.02 +/- 0.01", "n > 0.8 +/- 0.05"],
    "reliability": [0.999], "adaptivity": ["full", "none"], "mode": ["fp-free"], "difference_bound": [None, 0.1],
    "check_difference_bound": [True], "text": ["n - o > 0.02 +/- 0.01"], "alarm_on": ["pass"],
    "step": [None, 0.05], "submissions": [100], "gamma": [0.75], "alpha": [0.05, 0.1], "beta": [0.05],
    "resamples": [1000], "seed": [0, 3], "paired": [True], "method": ["bonf-srgp", "naive"],
    "success_weight": [0.8], "margin": [0.0], "margin_step": [0.01], "failure_threshold": [3],
    "pres_share": [0.9], "pres_first_share": [0.5], "max_conditioning": [6], "variant": ["incremental"],
    "test_size": [None, 5000], "format": [None, "csv"], "name": [None, "mine"], "title": [None, "t"],
    "steps_note": [""], "position": [None, 1],
}
FILES = {
    "source": "emocontext_trace.csv", "trace": "emocontext_trace.csv", "losses": "ladder_leaderboard.csv",
    "a": "compare_paired.csv",
}
#: per function: the file its source/trace argument reads, when that differs from FILES
FILE_FOR = {"read_ci_trace": "ci_commits.csv", "replay_ci": "ci_commits.csv", "read_losses": "ladder_leaderboard.csv",
            "read_runs": "compare_paired.csv", "read_modification_trace": "approve_refits.csv",
            "approve": "approve_refits.csv", "ladder": "ladder_leaderboard.csv"}


def _valid(function: str, name: str):
    if name in ("source", "trace", "losses", "a"):
        return st.sampled_from([(DATA / FILE_FOR.get(function, FILES[name])).read_bytes()])
    if name == "result":
        made = {"session_report": lambda: md.replay(md.read_trace(DATA / "emocontext_trace.csv"), delta=0.1),
                "plan_report": lambda: md.plan()}[function]
        return st.builds(made)
    return st.sampled_from(VALID.get(name, [None]))


def _arguments(function: str, func):
    """A strategy of keyword arguments: each one valid, or any VALUE (about one in three)."""
    names = [p.name for p in inspect.signature(func).parameters.values()
             if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name not in ("max_bytes", "curves",
                                                                                     "sweep_curves", "ranges",
                                                                                     "check", "check_settings",
                                                                                     "plan", "prespecified",
                                                                                     "parameter", "b")]
    return st.fixed_dictionaries({n: st.one_of(_valid(function, n), _valid(function, n), VALUE) for n in names})


FUNCTIONS = ["plan", "replay", "ci_labels", "parse_condition", "replay_ci", "ladder", "ladder_size", "compare",
             "compare_size", "approve", "read_trace", "read_ci_trace", "read_losses", "read_runs",
             "read_modification_trace", "session_report", "plan_report"]


def _call(function: str, kwargs: dict):
    func = getattr(md, function)
    started = time.perf_counter()
    try:
        return func(**kwargs)
    except md.InputError as exc:  # one shape: the argument (as the person knows it), the rule, the value
        assert isinstance(exc.parameter, str) and exc.parameter and exc.rule, (function, kwargs, exc)
        return None
    finally:
        elapsed = time.perf_counter() - started
        if elapsed > SLOWEST[0]:
            SLOWEST[:] = [elapsed, f"md.{function}({', '.join(f'{k}={v!r:.40}' for k, v in kwargs.items())})"]


def _strict_json(result) -> None:
    to_dict = getattr(result, "to_dict", None)
    if to_dict is not None:
        json.dumps(to_dict(), allow_nan=False)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_public_function_answers_or_refuses_by_name(function):
    @FUZZ
    @given(kwargs=_arguments(function, getattr(md, function)))
    def check(kwargs):
        _strict_json(_call(function, kwargs))

    check()


@pytest.mark.parametrize("call", [
    lambda: md.plan([0.01, ""], 0.01, 10),
    lambda: md.plan([0.01, 1j], 0.01, 10),
    lambda: md.plan([0.01, [0.02]], 0.01, 10),
    lambda: md.plan(0.01, delta=[0.1]),
    lambda: md.compare_size(alpha=""),
    lambda: md.compare_size(gamma=1j),
    lambda: md.compare([1, 2, "x"], [1, 2, 3]),
    lambda: md.compare([[1, 2]], [1, 2]),
    lambda: md.ladder_size(epsilon="", step=0.01, submissions=10, delta=0.05),
    lambda: md.ci_labels(reliability=1j),
    lambda: md.ladder([[0.1, "a"]]),
], ids=["plan-empty-text", "plan-complex", "plan-nested", "plan-delta-list", "compare_size-alpha-text",
        "compare_size-complex", "compare-text-item", "compare-nested", "ladder_size-text", "ci-complex",
        "ladder-text-cell"])
def test_issue_23_cases_are_input_errors(call):
    with pytest.raises(md.InputError):
        call()


def test_the_slowest_call(capsys):
    with capsys.disabled():
        print(f"\nslowest public call of this run: {SLOWEST[0]:.2f} s: {SLOWEST[1]}")


def test_to_dict_is_strict_json_where_a_value_is_infinite():
    """A 1-label budget supports no epsilon for resampling (inf): JSON's null, as the CLI writes it."""
    out = md.plan(budget=1).to_dict()
    assert out["budget"]["min_epsilon"]["resampling"] is None
    assert json.loads(json.dumps(out, allow_nan=False)) == out


def test_compare_takes_a_path_like_its_siblings():
    path = DATA / "compare_paired.csv"
    runs = md.read_runs(path)
    assert md.compare(str(path)).to_dict() == md.compare(runs.a, runs.b).to_dict() == md.compare(runs).to_dict()
    assert md.ladder(str(DATA / "ladder_ties.csv")).to_dict() == md.ladder(md.read_losses(DATA / "ladder_ties.csv")).to_dict()
    with pytest.raises(md.InputError, match="runs must be an existing file"):
        md.compare("no-such-runs.csv")
