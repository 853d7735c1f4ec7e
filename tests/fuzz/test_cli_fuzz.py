"""Generated CLI invocations for every verb (issue 15): exit 0 with a checked answer, or exit 2 and one line.

Each verb gets mostly-valid settings with hostile values mixed in (tests/fuzz/strategies.py);
the harness (tests/fuzz/harness.py) runs ``meter-dashboard`` in-process under a watchdog.
``METER_DASHBOARD_FUZZ_EXAMPLES`` raises the number of invocations per verb for a long run.
"""
from __future__ import annotations

import os
import tempfile
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .harness import check, run_cli
from .strategies import MALFORMED_FILES, condition_text, number_list, number_text

EXAMPLES = int(os.environ.get("METER_DASHBOARD_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DATA = resources.files("meter_dashboard.data")
_TMP = Path(tempfile.mkdtemp(prefix="md-fuzz-"))
BAD_FILES = []
for _name, _content in MALFORMED_FILES.items():
    (_TMP / f"{_name}.csv").write_bytes(_content)
    BAD_FILES.append(str(_TMP / f"{_name}.csv"))
MISSING = str(_TMP / "does-not-exist.csv")


def _files(*shipped):
    good = [str(DATA / name) for name in shipped]
    return st.one_of(st.sampled_from(good), st.sampled_from(good), st.sampled_from(BAD_FILES + [MISSING]))


def _options(draw, spec):
    """Draw each optional flag with probability 1/2 from its strategy."""
    argv = []
    for flag, strategy in spec.items():
        if draw(st.booleans()):
            argv += [flag, draw(strategy)]
    return argv


def _names(argv):
    return [a for a in argv if isinstance(a, str) and a.startswith("--")] + [
        "row", "line", "column", "required", "unrecognized", "invalid choice", "file", "argument"]


@st.composite
def plan_argv(draw):
    argv = ["plan", "--epsilon", draw(number_list(0.001, 0.2, sort=True)), "--delta",
            draw(number_text(1e-12, 0.5)), "--steps", draw(st.one_of(number_text(1, 2000, integer=True),
                                                                     st.sampled_from(["1:50", "5:1", "1:1e9"])))]
    argv += _options(draw, {"--signals": number_text(1, 100, integer=True),
                            "--tenants": number_text(1, 5, integer=True),
                            "--reverts": number_list(1, 10, integer=True, sort=True),
                            "--budget": number_text(1, 10**7, integer=True),
                            "--seconds-per-label": number_text(0.1, 60),
                            "--labelers": number_text(1, 50, integer=True),
                            "--cost-per-hour": number_text(0, 100)})
    return argv + ["--format", "json"]


@st.composite
def replay_argv(draw):
    source = draw(st.one_of(st.just(["--example", "emocontext"]), st.just(["--example", "synthetic"]),
                            _files("emocontext_trace.csv", "synthetic_overfitting_trace.json").map(lambda f: [f])))
    argv = ["replay", *source]
    argv += _options(draw, {"--delta": number_text(1e-6, 0.5), "--steps": number_text(1, 100, integer=True),
                            "--test-size": number_text(1, 10**6, integer=True),
                            "--epsilon": number_list(0.001, 0.2, sort=True),
                            "--meter": st.sampled_from(["incremental", "regular", "bogus"])})
    return argv + ["--format", "json"]


@st.composite
def ci_argv(draw):
    argv = ["ci", "--condition", draw(condition_text())]
    argv += _options(draw, {"--reliability": number_text(0.5, 0.999999),
                            "--adaptivity": st.sampled_from(["none", "full", "firstChange", "sometimes"]),
                            "--steps": number_text(1, 1000, integer=True),
                            "--mode": st.sampled_from(["fp-free", "fn-free", "maybe"]),
                            "--difference-bound": number_text(0.001, 1)})
    return argv + ["--format", "json"]


@st.composite
def ladder_argv(draw):
    argv = ["ladder", draw(_files("ladder_ties.csv", "ladder_leaderboard.csv"))]
    argv += _options(draw, {"--step": number_text(0.001, 0.5), "--delta": number_text(1e-6, 0.5)})
    return argv + ["--format", "json"]


@st.composite
def ladder_size_argv(draw):
    argv = ["ladder-size", "--epsilon", draw(number_text(0.001, 0.5)), "--step", draw(number_text(1e-4, 0.5)),
            "--submissions", draw(number_text(1, 10**6, integer=True))]
    argv += _options(draw, {"--delta": number_text(1e-9, 0.5)})
    return argv + ["--format", "json"]


@st.composite
def compare_argv(draw):
    argv = ["compare", draw(_files("compare_paired.csv", "compare_unpaired.csv"))]
    argv += _options(draw, {"--gamma": number_text(0.5, 0.99), "--alpha": number_text(0.001, 0.5),
                            "--resamples": number_text(1, 20_000, integer=True),
                            "--seed": number_text(0, 10**6, integer=True)})
    return argv + ["--format", "json"]


@st.composite
def compare_size_argv(draw):
    argv = ["compare-size"] + _options(draw, {"--alpha": number_text(1e-6, 0.5), "--beta": number_text(1e-6, 0.5),
                                               "--gamma": number_text(0.5, 0.999)})
    return argv + ["--format", "json"]


@st.composite
def approve_argv(draw):
    argv = ["approve", draw(_files("approve_refits.csv"))]
    argv += _options(draw, {"--method": st.sampled_from(["naive", "bonferroni", "weighted-bonferroni", "bonf-srgp",
                                                         "fs-srgp", "pres-srgp", "magic"]),
                            "--alpha": number_text(0.001, 0.5), "--margin": number_text(0, 0.1),
                            "--margin-step": number_text(0, 0.05), "--steps": number_text(1, 60, integer=True),
                            "--success-weight": number_text(0.01, 0.99)})
    return argv + ["--format", "json"]


VERBS = {"plan": plan_argv, "replay": replay_argv, "ci": ci_argv, "ladder": ladder_argv,
         "ladder-size": ladder_size_argv, "compare": compare_argv, "compare-size": compare_size_argv,
         "approve": approve_argv}


@pytest.mark.parametrize("verb", list(VERBS))
def test_generated_invocations_follow_the_rule(verb):
    @FUZZ
    @given(VERBS[verb]())
    def run(argv):
        check(run_cli(argv), names=_names(argv))

    run()
