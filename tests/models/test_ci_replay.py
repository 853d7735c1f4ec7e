"""Commit traces: reading, replay into pass/fail signals, new-testset alarms, shipped examples."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from meter_dashboard.ci import ci_labels, example_trace, read_ci_trace, replay_ci
from meter_dashboard.core.validation import InputError

COND = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"


def _estimates(rows):
    return "commit,n,o,d\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n"


def test_estimates_trace_pass_fail_and_alarms():
    # commits 2 and 5 pass (n - o > 0.03 with d < 0.09); steps = 3
    text = _estimates([("a", 0.80, 0.78, 0.05), ("b", 0.84, 0.80, 0.05), ("c", 0.85, 0.84, 0.05),
                       ("d", 0.85, 0.84, 0.20), ("e", 0.90, 0.84, 0.05), ("f", 0.88, 0.90, 0.01),
                       ("g", 0.91, 0.90, 0.01)])
    rep = replay_ci(COND, text, steps=3)
    assert [r["signal"] for r in rep.rows] == ["fail", "pass", "fail", "fail", "pass", "fail", "fail"]
    assert [r["truth"] for r in rep.rows][:4] == ["Unknown", "True", "False", "False"]
    assert [r["active"] for r in rep.rows] == ["deployed", "b", "b", "b", "e", "e", "e"]
    # none / full: the budget of 3 commits per test set (Sections 3.2-3.3)
    assert rep.alarms("none") == rep.alarms("full") == [3, 6]
    assert [r["testset_full"] for r in rep.rows] == [1, 1, 1, 2, 2, 2, 3]
    # firstChange: the first pass, or the budget, whichever comes first (Section 3.4)
    assert rep.alarms("firstChange") == [2, 5]
    assert [r["testset_firstChange"] for r in rep.rows] == [1, 1, 2, 2, 2, 3, 3]
    # the symmetric setting retires the test set at the first fail
    assert replay_ci(COND, text, steps=3, alarm_on="fail").alarms("firstChange") == [1, 3, 4, 6, 7]
    # fn-free: Unknown passes
    fn = replay_ci(COND, text, steps=3, mode="fn-free")
    assert fn.rows[0]["signal"] == "pass"


def test_first_change_budget_alarm_without_any_pass():
    text = _estimates([(f"c{i}", 0.5, 0.6, 0.01) for i in range(5)])
    rep = replay_ci(COND, text, steps=2)
    assert rep.passes == 0
    assert rep.alarms("firstChange") == [2, 4] == rep.alarms("full")


def test_predictions_trace_uses_the_active_model_as_old():
    # 10 examples; m0 deployed (7 right), m1 (9 right, differs from m0 on 2), m2 (8 right, differs from m1 on 1)
    labels = list("aaaaabbbbb")
    m0 = list("aaaabbbbaa")
    m1 = list("aaaaabbbba")
    m2 = list("aaaaabbbaa")
    lines = ["label,m0,m1,m2"] + [",".join(t) for t in zip(labels, m0, m1, m2)]
    trace = read_ci_trace("\n".join(lines) + "\n")
    assert trace.kind == "predictions" and trace.baseline == "m0" and trace.commits == ("m1", "m2")
    assert trace.examples == 10
    rep = replay_ci("n - o > 0.1 +/- 0.01", trace, steps=5, reliability=0.9)
    acc = {m: sum(p == y for p, y in zip(v, labels)) / 10 for m, v in (("m0", m0), ("m1", m1), ("m2", m2))}
    r1, r2 = rep.rows
    assert (r1["n"], r1["o"]) == (acc["m1"], acc["m0"])
    assert (acc["m0"], acc["m1"], acc["m2"]) == (0.7, 0.9, 0.8)
    assert r1["d"] == 0.2 and r1["disagreements"] == 2
    assert r1["signal"] == "pass" and r1["active"] == "m1"
    assert (r2["n"], r2["o"], r2["disagreements"]) == (acc["m2"], acc["m1"], 1)  # compared with m1, not m0
    assert r2["signal"] == "fail" and r2["active"] == "m1"
    # 10 examples are far too few for the guarantee: the replay says so
    assert any("10 test examples" in w for w in rep.warnings)


def test_shipped_predictions_reproduce_section_5_2_outcome():
    # Section 5.2 / Figure 5: all queries end with the second-last model active (fp-free)
    trace = example_trace("ci_predictions.csv")
    assert trace.examples == 5509 and len(trace) == 7
    kw = dict(steps=7, reliability=0.998, difference_bound=0.1, check_difference_bound=False)
    for cond, adaptivity in (("n - o > 0.02 +/- 0.02", "none"), ("n - o > 0.018 +/- 0.022", "full")):
        rep = replay_ci(cond, trace, adaptivity=adaptivity, **kw)
        assert rep.rows[-1]["active"] == "iteration_7"
        assert rep.warnings == ()  # 5,509 examples >= 4,713 / 5,204 labels; every d <= 0.1
        assert rep.required["optimized"] == (4713 if adaptivity == "none" else 5204)
    # accuracies are the real test accuracies of emocontext_trace.csv, to the example
    labels = np.array(trace.labels)
    acc = [round(float(np.mean(np.array(p) == labels)), 4) for p in trace.predictions.values()]
    assert acc == [0.8813, 0.9082, 0.8962, 0.9092, 0.9114, 0.9101, 0.9221, 0.9201]


def test_shipped_commits_trace():
    trace = example_trace()
    assert trace.kind == "estimates" and len(trace) == 40
    rep = replay_ci(COND, trace)
    assert rep.alarms("full") == [32]
    assert rep.alarms("firstChange") == [i for i, r in enumerate(rep.rows, 1) if r["signal"] == "pass"]
    assert 3 <= rep.passes <= 8


def test_generator_reproduces_the_shipped_files(tmp_path):
    from tests.generators import generate_ci as g

    g.write_predictions(np.random.default_rng(g.SEED), tmp_path / "p.csv")
    g.write_commits(np.random.default_rng(g.SEED + 1), tmp_path / "c.csv")
    data = g.HERE
    assert (tmp_path / "p.csv").read_bytes() == (data / "ci_predictions.csv").read_bytes()
    assert (tmp_path / "c.csv").read_bytes() == (data / "ci_commits.csv").read_bytes()


def test_variance_bound_violations_are_flagged():
    text = _estimates([("a", 0.9, 0.8, 0.05), ("b", 0.9, 0.8, 0.3)])
    rep = replay_ci("n - o > 0.02 +/- 0.05", text, steps=5, reliability=0.9, difference_bound=0.1)
    assert [r["bound_ok"] for r in rep.rows] == [True, False]
    assert any("Commit 2 changes more than p = 0.1" in w for w in rep.warnings)


@pytest.mark.parametrize("text,parameter,where", [
    ("commit,n,o,d\na,0.8,0.7,0.1\nb,abc,0.7,0.1\n", "n", "line 3, column 'n'"),
    ("commit,n,o,d\na,1.5,0.7,0.1\n", "n", "line 2, column 'n'"),
    ("commit,N,O\na,0.8,-0.2\n", "o", "line 2, column 'O'"),
    ("label,m0,m1\na,a,\n", "m1", "line 2, column 'm1'"),
])
def test_bad_cells_name_line_and_column(text, parameter, where):
    with pytest.raises(InputError) as info:
        read_ci_trace(text)
    assert info.value.parameter == parameter
    assert str(info.value).startswith(where + ": ")


@pytest.mark.parametrize("text,rule", [
    ("commit,x,y\na,1,2\n", "columns n, o, d"),
    ("label,m0\na,a\n", "at least two model columns"),
    ("commit,n,o,d\n", "at least one data row"),
])
def test_bad_layouts(text, rule):
    with pytest.raises(InputError) as info:
        read_ci_trace(text)
    assert info.value.parameter == "trace" and rule in str(info.value)


def test_missing_value_for_a_used_variable_names_the_commit():
    text = "commit,n,o\nfirst,0.8,0.7\n"
    assert replay_ci("n - o > 0 +/- 0.05", text, steps=3, reliability=0.9).passes == 1
    with pytest.raises(InputError) as info:
        replay_ci(COND, text)
    assert info.value.parameter == "d" and "commit 1 (first)" in str(info.value)


def test_replay_outputs():
    rep = replay_ci(COND, example_trace())
    frame = rep.to_frame()
    assert list(frame.columns[:4]) == ["commit", "n", "o", "d"] and len(frame) == 40
    assert {"clause_1", "clause_2", "alarm_full", "testset_none"} <= set(frame.columns)
    d = rep.to_dict()
    assert d["alarms"]["full"] == [32] and len(d["commits"]) == 40
    assert repr(rep).startswith("CIReplay(40 commits")


def test_required_labels_follow_the_plan():
    rep = replay_ci(COND, example_trace(), steps=32, reliability=0.9999, adaptivity="none")
    plan = ci_labels(COND, 0.9999, "none", 32)
    assert rep.required == {"labels": plan.labels, "optimized": plan.optimized, "adaptivity": "none"}
