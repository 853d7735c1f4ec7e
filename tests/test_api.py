"""The notebook/script API: ``import meter_dashboard as md`` gives one function per family (issue 10)."""
from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import pytest

import meter_dashboard as md

DATA = resources.files("meter_dashboard.data")


def test_every_public_name_resolves_and_is_listed():
    for name in md.__all__:
        assert getattr(md, name) is not None, name
    assert set(md.__all__) <= set(dir(md))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        md.nope  # noqa: B018


def test_the_functions_never_load_panel():
    code = ("import sys, meter_dashboard as md\n"
            "md.plan(); md.ci_labels('n - o > 0.02 +/- 0.01'); md.ladder_size(epsilon=0.05, step=0.01, "
            "submissions=100, delta=0.05); md.compare_size()\n"
            "print(sorted(m for m in ('panel', 'bokeh', 'holoviews') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def _cli_json(*argv):
    proc = subprocess.run([sys.executable, "-m", "meter_dashboard", *argv, "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("call,argv,key", [
    (lambda: md.plan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10),
     ["plan", "--epsilon", "0.01,0.02,0.03,0.04,0.05", "--delta", "0.01", "--steps", "10"], "labels"),
    (lambda: md.ci_labels("n - o > 0.02 +/- 0.01", reliability=0.999, adaptivity="full", steps=32),
     ["ci", "--condition", "n - o > 0.02 +/- 0.01", "--reliability", "0.999", "--adaptivity", "full",
      "--steps", "32"], "labels"),
    (lambda: md.ladder_size(epsilon=0.05, step=0.01, submissions=100, delta=0.05),
     ["ladder-size", "--epsilon", "0.05", "--step", "0.01", "--submissions", "100", "--delta", "0.05"], "labels"),
    (lambda: md.approve(md.read_modification_trace(DATA / "approve_refits.csv"), method="bonf-srgp"),
     ["approve", str(DATA / "approve_refits.csv"), "--method", "bonf-srgp"], "approved"),
])
def test_a_result_object_is_what_the_cli_prints(call, argv, key):
    """One implementation: the function's ``to_dict()`` and the command's JSON agree on the answer."""
    ours = json.loads(json.dumps(call().to_dict()))
    theirs = _cli_json(*argv)
    assert key in theirs
    assert ours[key] == theirs[key]


def test_the_docstring_examples_of_the_package():
    runs = md.read_runs(DATA / "compare_paired.csv")
    result = md.compare(runs.a, runs.b)
    assert 0.0 <= result.to_dict()["p_a_gt_b"] <= 1.0
    replayed = md.replay(md.read_trace(DATA / "emocontext_trace.csv"), delta=0.1)
    assert replayed.to_dict()["labels_needed"]["incremental"] == 25_376  # ease.ml/meter Fig. 3 settings
