"""The P(A>B) param model (no browser)."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

import meter_dashboard.comparison.model as mc
from meter_dashboard.comparison.model import CompareModel


def test_defaults_use_the_paired_example():
    m = CompareModel()
    assert m.example == "compare_paired.csv" and m.paired and m.error == ""
    runs = mc.load_example()
    assert m.result.p_a_gt_b == pytest.approx(float(np.mean(runs.a > runs.b)))
    assert m.result.conclusion == "significant_and_meaningful"
    assert m.size.runs == 29                                  # Appendix C.3


def test_gamma_above_the_upper_bound_makes_it_not_meaningful():
    m = CompareModel()
    hi = m.result.ci[1]
    m.gamma = min(0.99, hi + 0.005)
    assert m.result.conclusion == "significant_not_meaningful"
    assert m.size.runs < 29                                   # a larger gamma needs fewer runs


def test_unpaired_example_switches_pairing_off_and_refuses_paired():
    m = CompareModel(example="compare_unpaired.csv")
    assert not m.paired and not m.result.paired and m.result.runs == 20
    before = m.result
    m.paired = True
    assert "paired must be off" in m.error and m.result is before
    m.paired = False
    assert m.error == ""


def test_upload_bytes_and_bad_files():
    m = CompareModel()
    assert m.load(b"a,b\n3,1\n2,2\n5,4\n", "mine.csv")
    assert m.example == "uploaded file" and m.paired and m.result.runs == 3 and m.result.ties == 1
    good = m.result
    assert not m.load(b"a,c\n1,2\n3,4\n", "bad.csv")
    assert m.error.startswith("line 1: header must be a row naming columns a and b")
    assert m.result is good
    assert m.load(b"a,b\n1,0\n2,1\n3,\n")
    assert not m.paired and m.result.dropped == 1


def test_arrays_and_seed():
    m = CompareModel(runs=(np.arange(30.0) + 0.5, np.arange(30.0)), resamples=2000)
    assert m.result.p_a_gt_b == 1.0
    m2 = CompareModel(runs=(np.r_[np.ones(12), np.zeros(8)], np.full(20, 0.5)), resamples=2000, seed=1)
    ci1 = m2.result.ci
    m2.seed = 2
    assert m2.result.seed == 2
    m2.seed = 1
    assert m2.result.ci == ci1


def test_beta_changes_runs_needed_and_the_curve():
    m = CompareModel()
    m.beta = 0.2
    assert m.size.runs < 29
    g, runs = m.curve()
    assert g.size == runs.size and np.all(np.diff(runs) <= 0)


def test_notebook_component_over_the_model():
    import meter_dashboard as md

    view = md.Compare((np.arange(30.0) + 0.5, np.arange(30.0)), gamma=0.8, resamples=1000)
    assert view.model.gamma == 0.8
    assert 'data-conclusion="significant_and_meaningful"' in view.headlines.object
    assert "compare-conclusion" in view.headlines.object
    view.model.gamma = 0.99
    assert 'data-conclusion="significant_and_meaningful"' in view.headlines.object  # CI [1, 1]: 1 > 0.99
    view.model.load(b"a,b\n1,2\n2,3\n3,4\n")
    assert 'data-conclusion="not_significant"' in view.headlines.object
    assert list(view.curve_source.data["gamma"])[0] == pytest.approx(0.55)
    assert view.__panel__() is view.__panel__()


# --------------------------------------------------------------------------- issues 10, 13, 15
def test_derived_outputs_are_read_only():
    m = CompareModel()
    for name, value in (("table", None), ("result", None), ("size", None), ("error", "written by a view"),
                        ("busy", True)):
        with pytest.raises(TypeError):
            setattr(m, name, value)


def test_the_result_keeps_counts_not_a_million_replicates():
    m = CompareModel(resamples=1_000_000)
    res = m.result
    assert res.counts.sum() == 1_000_000 and res.counts.size == res.runs + 1
    assert res.replicates.size == 1_000_000 and np.all(np.diff(res.replicates) >= 0)
    lo, hi = np.quantile(res.replicates, [0.025, 0.975])
    assert res.ci == (lo, hi)


def test_prepare_reads_without_touching_the_model_and_apply_shows_it():
    m = CompareModel()
    before = m.result
    table = m.prepare(b"a,b\r3,1\r2,2\r5,4\r", "cr.csv")       # CR-only line endings
    assert m.result is before and table.a.tolist() == [3, 2, 5]
    m.apply_table(table)
    assert m.example == "uploaded file" and m.result.runs == 3


def test_many_runs_are_compared_in_a_worker_thread():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.9, 0.01, 150_000), rng.normal(0.899, 0.01, 150_000)
    m = CompareModel(offload=True)
    seen = []

    async def scenario():
        m.param.watch(lambda e: seen.append(e.new), "busy")
        m.apply_table(m.prepare((a, b)))
        assert m.busy and m.result.runs == 30             # still the example while the worker computes
        m.gamma = 0.6
        while m.busy:
            await asyncio.sleep(0.005)

    asyncio.run(scenario())
    assert m.result.runs == 150_000 and m.result.gamma == 0.6 and seen[0] is True and seen[-1] is False
    assert m.result.ci == mc.compare(a, b, gamma=0.6).ci


def test_gamma_next_to_one_half_is_refused_not_overflowed():
    m = CompareModel()
    before = m.result
    m.gamma = 0.5000000000001
    assert "gamma must be far enough from 0.5" in m.error and m.result is before
