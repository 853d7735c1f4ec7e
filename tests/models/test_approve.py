"""The approve models: trace reading/validation, result objects, ApproveModel, ApprovalSimulation (no browser)."""
from __future__ import annotations

import asyncio
import io
import threading

import numpy as np
import pytest
from scipy import stats

import meter_dashboard.approvals.model as ap
from meter_dashboard.approvals.simulation import WORKER_KINDS
from meter_dashboard.core import runtime
from meter_dashboard.bounds.srgp import run_procedure
from meter_dashboard.core.validation import InputError


def _csv(rows):
    return ("\n".join(",".join(str(v) for v in row) for row in rows) + "\n").encode()


def _trace_bytes(n=40, means=(0.5, -0.2, 0.4), seed=0):
    """Original loss ~ 1, modification j's loss lower by means[j] on average."""
    rng = np.random.default_rng(seed)
    base = 1 + rng.standard_normal(n)
    rows = [["original"] + [f"m{j + 1}" for j in range(len(means))]]
    for i in range(n):
        rows.append([f"{base[i]:.6f}"] + [f"{base[i] - m + 0.3 * rng.standard_normal():.6f}" for m in means])
    return _csv(rows)


# --------------------------------------------------------------------------- reading traces
def test_read_trace_from_bytes_path_and_file(tmp_path):
    data = _trace_bytes()
    t = ap.read_modification_trace(data)
    assert t.names == ("m1", "m2", "m3") and t.original_name == "original"
    assert t.examples == 40 and t.modifications == 3
    assert t.improvements.shape == (40, 3)
    assert np.allclose(t.improvements[:, 0], t.original - t.losses[:, 0])
    path = tmp_path / "trace.csv"
    path.write_bytes(data)
    assert ap.read_modification_trace(path).names == t.names
    assert ap.read_modification_trace(io.BytesIO(data)).examples == 40
    # comments and blank lines are skipped, a BOM is accepted
    again = ap.read_modification_trace(b"\xef\xbb\xbf# note\no,a\n\n1,0.5\n2,1.5\n")
    assert again.names == ("a",) and again.original.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("content,message", [
    (b"", "trace must be a CSV file with a header row"),
    (b"only\n1\n2\n", "line 1: trace must be at least 2 columns"),
    (b"o,a,a\n1,2,3\n1,2,3\n", "line 1, column 3: column name must be unique (also used by column 2); got 'a'"),
    (b"o,\n1,2\n1,2\n", "line 1, column 2: column name must be non-empty"),
    (b"1,2\n1,2\n3,4\n", "line 1: trace must be a CSV whose first line is a header of names"),
    (b"o,a\n1,2\n1,x\n", "line 3, column 2: loss (a) must be a finite number; got 'x'"),
    (b"o,a\n1,2\n1,inf\n", "line 3, column 2: loss (a) must be a finite number; got 'inf'"),
    (b"o,a\n1,2\n1\n", "line 3: row must be 2 values like the header; got '1 values'"),
    (b"o,a\n1,2\n", "trace must be at least 2 test examples"),
])
def test_read_trace_errors_say_where(content, message):
    with pytest.raises(InputError) as info:
        ap.read_modification_trace(content)
    assert message in str(info.value)


def test_shipped_examples_load():
    for name in ap.EXAMPLES:
        trace, pres = ap.load_example(name)
        assert pres is not None and pres.examples == trace.examples
        assert pres.modifications == trace.modifications
    with pytest.raises(InputError, match="example must be one of"):
        ap.load_example("nope")


# --------------------------------------------------------------------------- approve() and compare()
def test_approve_result_object():
    t = ap.read_modification_trace(_trace_bytes())
    r = ap.approve(t, "bonf-srgp", alpha=0.1)
    assert r.approved.tolist() == [True, False, True]
    # weights: 0.8 (start), then after an approval at 1: 0.8 x 0.8 = 0.64, denied -> 0.8 x 0.2 = 0.16 (last edge)
    assert r.weights.tolist() == pytest.approx([0.8, 0.64, 0.16])
    assert r.levels.tolist() == pytest.approx([0.08, 0.064, 0.016])
    d = r.to_dict()
    assert list(d)[:2] == ["approved", "levels"]
    assert d["approved"] == [True, False, True] and d["names"] == ["m1", "m2", "m3"]
    frame = r.to_frame()
    assert list(frame.columns) == ["test", "modification", "improvement", "standard_error", "margin", "z",
                                   "p_value", "weight", "level", "z_threshold", "approved"]
    assert "approved=2 of 3 [A.A]" in repr(r)
    # p-values are the one-sided z-test's: 1 - Phi(mean / (sd / sqrt(n)))
    d0 = t.improvements[:, 0]
    z = d0.mean() / (d0.std(ddof=1) / np.sqrt(d0.size))
    assert r.p_values[0] == pytest.approx(stats.norm.sf(z))


def test_approve_accepts_arrays_frames_and_paths(tmp_path):
    data = _trace_bytes()
    t = ap.read_modification_trace(data)
    table = np.column_stack([t.original, t.losses])
    from_array = ap.approve(table, "naive")
    assert from_array.names == ("m1", "m2", "m3")
    import pandas as pd

    frame = pd.DataFrame(table, columns=["orig", "a", "b", "c"])
    assert ap.approve(frame, "naive").names == ("a", "b", "c")
    assert from_array.approved.tolist() == ap.approve(data, "naive").approved.tolist()
    assert ap.approve(t, "bonferroni", steps=5).levels[0] == pytest.approx(0.1 / 31)
    with pytest.raises(InputError, match="steps must be at least the number of modifications"):
        ap.approve(t, "naive", steps=2)


def test_approve_matches_the_bounds_layer():
    t, pres = ap.load_example("refits")
    for method in ("weighted-bonferroni", "fs-srgp", "pres-srgp"):
        r = ap.approve(t, method, prespecified=pres, margin_step=0.01, seed=3)
        raw = run_procedure(t.improvements, method, alpha=0.1, margin_step=0.01, seed=3,
                            prespecified=pres.improvements if method == "pres-srgp" else None)
        assert r.approved.tolist() == raw["approved"].tolist()
        assert r.levels.tolist() == pytest.approx(raw["levels"].tolist())


def test_pres_srgp_needs_a_matching_plan():
    t = ap.read_modification_trace(_trace_bytes())
    with pytest.raises(InputError, match="pres-srgp needs it"):
        ap.approve(t, "pres-srgp")
    with pytest.raises(InputError, match="prespecified must be 40 rows"):
        ap.approve(t, "pres-srgp", prespecified=_trace_bytes(n=39))
    r = ap.approve(t, "pres-srgp", prespecified=_trace_bytes(seed=1))
    assert len(r.approved) == 3


def test_compare_runs_every_procedure_and_skips_pres_without_a_plan():
    t = ap.read_modification_trace(_trace_bytes())
    c = ap.compare(t)
    assert list(c.results) == ["naive", "bonferroni", "weighted-bonferroni", "bonf-srgp", "fs-srgp"]
    assert "pres-srgp" in c.skipped
    frame = c.to_frame()
    assert frame.shape == (3, 2 + 2 * 5)
    # naive approves whenever p <= alpha; Bonferroni over 7 nodes is never more generous
    assert c.results["naive"].approvals >= c.results["bonferroni"].approvals
    assert "Comparison(approved per procedure" in repr(c)


# --------------------------------------------------------------------------- ApproveModel
def test_model_starts_with_the_refits_example_and_its_settings():
    m = ap.ApproveModel()
    assert m.example == "refits" and m.method == "fs-srgp" and m.error == ""
    assert m.margin_step == 0.01  # Section 3.2's schedule, applied with the example
    assert m.trace.modifications == 15 and m.prespecified is not None
    assert len(m.result.approved) == 15
    assert set(m.comparison.results) == set(ap.METHODS)
    assert m.comparison.results["fs-srgp"] is m.result  # cached, not recomputed


def test_model_recomputes_on_every_setting():
    m = ap.ApproveModel(method="bonf-srgp")
    assert m.result.levels[0] == pytest.approx(0.08)
    m.alpha = 0.05
    assert m.result.levels[0] == pytest.approx(0.04)
    m.success_weight = 0.5
    assert m.result.levels[0] == pytest.approx(0.025)
    m.method = "bonferroni"
    assert m.result.levels[0] == pytest.approx(0.05 / (2 ** 15 - 1))
    m.example = "adversary"
    assert m.trace.modifications == 50 and m.margin_step == 0.01  # one set of defaults (issue 11 #6)
    assert m.result.levels[0] == pytest.approx(0.05 / (2 ** 50 - 1))
    naive = m.comparison.results["naive"]
    assert naive.approvals >= 2  # the shipped adversary path fooled the naive procedure
    assert all(m.comparison.results[k].approvals == 0 for k in ("bonferroni", "bonf-srgp"))


def test_model_upload_keeps_last_good_results_on_errors():
    m = ap.ApproveModel(method="naive")
    assert m.load_trace(_trace_bytes(), name="mine.csv")
    assert m.example == "uploaded" and m.trace.source == "mine.csv" and m.prespecified is None
    good = m.result
    assert good.names == ("m1", "m2", "m3")
    assert not m.load_trace(b"o,a\n1,2\n1,x\n", name="bad.csv")
    assert m.trace_error == "line 3, column 2: loss (a) must be a finite number; got 'x'"
    assert m.result is good
    # presSRGP without a plan: the message says why, the last good decisions stay
    m.method = "pres-srgp"
    assert "pres-srgp needs it" in m.error and m.result is good
    assert not m.load_prespecified(_trace_bytes(n=12))
    assert "prespecified must be 40 rows" in m.prespecified_error
    assert m.load_prespecified(_trace_bytes(seed=2), name="plan.csv")
    assert m.error == "" and m.result.method == "pres-srgp"
    # back to an example and again to the upload
    m.example = "refits"
    assert m.trace.source == "approve_refits.csv"
    m.example = "uploaded"
    assert m.trace.source == "mine.csv" and m.prespecified.source == "plan.csv"


def test_model_accepts_a_trace_directly():
    m = ap.ApproveModel(trace=_trace_bytes(), method="bonf-srgp", alpha=0.2)
    assert m.example == "uploaded" and m.result.levels[0] == pytest.approx(0.16)


def test_invalid_assignments_are_refused_by_param():
    m = ap.ApproveModel()
    with pytest.raises(ValueError):
        m.alpha = 1.5
    with pytest.raises(ValueError):
        m.method = "holm"
    assert m.alpha == 0.1 and m.error == ""


# --------------------------------------------------------------------------- ApprovalSimulation
def test_simulation_model_defaults_follow_the_paper():
    fwer = ap.ApprovalSimulation(kind="fwer")
    power = ap.ApprovalSimulation(kind="power")
    assert (fwer.steps, fwer.test_size) == (50, 100)  # Section 3.1
    assert (power.steps, power.test_size) == (15, 800)  # Section 3.2


def test_simulation_model_runs_and_reports_progress():
    sim = ap.ApprovalSimulation(kind="fwer", replicates=3, steps=8, methods=["naive", "bonf-srgp"])
    seen = []
    sim.param.watch(lambda e: seen.append(e.new), "progress")
    res = sim.run()
    assert res is sim.result and res.completed == 3 and not res.cancelled
    assert sim.progress == 1.0 and sim.status == "done: 3 replicates" and not sim.running
    assert seen[:2] == pytest.approx([1 / 6, 2 / 6])  # after each (replicate, procedure) pair


def test_simulation_model_async_run_and_cancel():
    sim = ap.ApprovalSimulation(kind="fwer", replicates=200, steps=10, methods=["naive", "bonferroni"])

    async def go():
        task = asyncio.ensure_future(sim.arun(poll=0.01))
        while sim.progress == 0.0 and not task.done():
            await asyncio.sleep(0.01)
        sim.cancel()
        return await task

    res = asyncio.run(go())
    assert res.cancelled and 0 < res.completed < 200
    assert sim.status.startswith("cancelled after") and not sim.running


def test_simulation_model_refuses_a_second_concurrent_run():
    sim = ap.ApprovalSimulation(kind="fwer", replicates=100, steps=10, methods=["naive"])
    worker = threading.Thread(target=sim.run)
    worker.start()
    while not sim.running:
        pass
    assert sim.run() is None and "already running" in sim.error
    sim.cancel()
    worker.join()
    assert sim.result.cancelled


def test_simulation_model_shows_input_errors():
    sim = ap.ApprovalSimulation(kind="fwer", replicates=1, steps=200)
    assert sim.run() is None
    assert "steps must be at most" in sim.error and not sim.running


# --------------------------------------------------------------------------- the notebook component
def test_notebook_component_follows_its_model():
    import meter_dashboard as md

    view = md.Approve(_trace_bytes(), method="bonf-srgp", alpha=0.2)
    assert view.__panel__() is view.__panel__() and view.controls() is not None  # built once
    assert view.table.object.count("class='approve-decision") == 3
    assert "0.16" in view.headlines.object  # 0.8 x 0.2
    view.model.method = "naive"
    assert "not controlled" in view.headlines.object
    assert view.compare_table.object.count("data-method='naive'") == 3
    assert list(view.decision_source.data["test"]) == [1, 2, 3]
    # a simulation run in a notebook (no server document) fills the plots directly
    view.fwer.param.update(replicates=1, steps=4, methods=["naive", "bonferroni"])
    view.fwer.run()
    bars = view._fwer_widgets["bar_source"].data
    assert bars["label"] == ["BinaryThres (naive)", "Bonferroni"] and len(bars["fwer"]) == 2
    assert "data-method='bonferroni'" in view._fwer_widgets["table"].object


# --------------------------------------------------------------------------- one set of defaults (issue 11 #6)
def test_defaults_are_defined_once_and_are_the_papers():
    import inspect

    from meter_dashboard.bounds import srgp

    # Section 3: alpha 0.1, edge weight 0.8, margin 0 growing by 0.01 after each approval (Eq. 7)
    settings = ap.ApprovalSettings()
    assert (settings.alpha, settings.success_weight, settings.margin, settings.margin_step) == (0.1, 0.8, 0.0, 0.01)
    signature = inspect.signature(ap.approve).parameters
    for name in ap.ApprovalSettings.SETTINGS:  # approve() (notebooks) and the model (page, CLI) agree
        assert signature[name].default == ap.ApprovalSettings.param[name].default, name
    assert inspect.signature(srgp.ApprovalProcedure).parameters["margin_step"].default == srgp.MARGIN_STEP == 0.01
    # choosing an example no longer changes the settings (the adversary example used to set margin step 0)
    m = ap.ApproveModel(margin_step=0.02)
    m.example = "adversary"
    assert m.margin_step == 0.02


def test_derived_outputs_are_read_only():
    def other(value):
        return (not value) if isinstance(value, bool) else "x" if isinstance(value, str) else 0.5 \
            if isinstance(value, float) else None if value is not None else 1.0

    m = ap.ApproveModel(method="bonf-srgp")
    for name in ("result", "comparison", "error", "trace", "prespecified", "trace_error", "busy"):
        with pytest.raises(TypeError):  # a view cannot write an output, e.g. the model's error
            setattr(m, name, other(getattr(m, name)))
    sim = ap.ApprovalSimulation(kind="power")
    for name in ("result", "progress", "status", "running", "error", "seconds_left"):
        with pytest.raises(TypeError):
            setattr(sim, name, other(getattr(sim, name)))


# --------------------------------------------------------------------------- shared links
def test_links_are_parsed_with_bounds_and_refused_values_named():
    m = ap.ApproveModel()
    errors = m.update_from_query({"method": "bonf-srgp", "alpha": "0.05", "margin_step": "0.02", "example": "adversary"})
    assert errors == [] and (m.method, m.alpha, m.margin_step, m.example) == ("bonf-srgp", 0.05, 0.02, "adversary")
    assert m.result.levels[0] == pytest.approx(0.04)
    errors = m.update_from_query({"alpha": "2", "seed": "-1", "method": "holm", "margin": "1e400",
                                  "success_weight": "x" * 500})
    assert errors == [
        "method must be one of naive, bonferroni, weighted-bonferroni, bonf-srgp, fs-srgp, pres-srgp; got 'holm'",
        "alpha must be in (0, 1); got '2'",
        "success_weight must be a number of at most 40 characters; got '" + "x" * 57 + "...'",
        "margin must be a finite number; got '1e400'",
        "seed must be at least 0; got '-1'",
    ]
    assert (m.alpha, m.method, m.seed) == (0.05, "bonf-srgp", 0)  # refused values change nothing
    again = ap.ApproveModel()
    assert again.update_from_query(dict(p.split("=") for p in m.query_string().split("&"))) == []
    assert again.query_string() == m.query_string()


# --------------------------------------------------------------------------- background computation (a server)
def _serve(coro):
    """Run ``coro`` on an asyncio loop, as a Bokeh server would run the page's callbacks."""
    return asyncio.run(coro)


async def _settled(model, timeout=120.0):
    await asyncio.wait_for(model.settled(), timeout)
    assert not model.busy


def test_background_model_computes_the_chosen_procedure_first_and_compares_only_when_asked():
    async def go():
        m = ap.ApproveModel(background=True, compare_active=False, method="bonf-srgp")
        assert m.result is None and m.busy  # nothing computed while the page is being built
        await _settled(m)
        assert m.result.approvals == ap.approve(m.trace, "bonf-srgp", prespecified=m.prespecified).approvals
        assert list(m.comparison.results) == ["bonf-srgp"]  # only what is on screen
        assert set(m.comparison.pending) == set(ap.METHODS) - {"bonf-srgp"}
        m.compare_active = True  # the comparison tab opens
        await _settled(m)
        assert set(m.comparison.results) == set(ap.METHODS) and m.comparison.pending == ()
        return m

    m = _serve(go())
    sync = ap.ApproveModel(method="bonf-srgp")
    for method in ap.METHODS:
        assert m.comparison.results[method].levels.tolist() == sync.comparison.results[method].levels.tolist()


def test_background_model_streams_decisions_and_keeps_only_the_newest_settings():
    seen = []

    async def go():
        runtime.warm_up(*WORKER_KINDS)  # fsSRGP then runs in the worker process, chunk by chunk
        for _ in range(6000):
            if runtime.process_pool_ready("procedures"):
                break
            await asyncio.sleep(0.01)
        m = ap.ApproveModel(background=True, compare_active=False, example="adversary", method="fs-srgp")
        m.STREAM_INTERVAL = 0.0  # publish every decision
        m.CHUNK_SECONDS = 0.0  # the worker process returns after each decision: partial results, however fast
        m.param.watch(lambda e: seen.append(e.new), "result")
        await _settled(m)
        m.alpha = 0.05
        m.alpha = 0.07  # supersedes 0.05 before it is done
        await _settled(m)
        return m

    m = _serve(go())
    partial = [r for r in seen if r is not None and not r.complete and r.alpha == 0.1]
    assert partial, "no decision was shown before the procedure finished"
    full = ap.approve(m.trace, "fs-srgp", alpha=0.1)
    for r in partial:  # each partial result is the beginning of the final one
        assert 0 < r.decided < 50 and r.levels.tolist() == full.levels[:r.decided].tolist()
    assert m.result.complete and m.alpha == 0.07
    expected = ap.approve(m.trace, "fs-srgp", alpha=0.07)
    assert m.result.levels.tolist() == expected.levels.tolist()
    assert m.result.alpha == 0.07


def test_background_errors_keep_the_last_good_result():
    async def go():
        m = ap.ApproveModel(background=True, compare_active=False, trace=_trace_bytes(), method="bonf-srgp")
        await _settled(m)
        good = m.result
        m.method = "pres-srgp"  # needs a plan
        await _settled(m)
        return m, good

    m, good = _serve(go())
    assert "pres-srgp needs it" in m.error and m.result is good


def test_chunks_in_worker_processes_give_the_same_decisions():
    t, pres = ap.load_example("refits")
    options = ap.ApprovalSettings(alpha=0.07).options()
    proc, decisions = None, []
    while proc is None or proc.step < t.modifications:
        out = ap._run_chunk(t, pres, "pres-srgp", options, proc, 0.0)  # one test per chunk
        proc, new = out
        assert len(new) == 1
        decisions += new
    expected = ap.approve(t, "pres-srgp", prespecified=pres, alpha=0.07)
    assert [d.level for d in decisions] == expected.levels.tolist()
    assert ap._run_chunk(t, None, "pres-srgp", options, None, 0.1)[:2] == ("error", "prespecified")


def test_simulation_in_worker_processes_gives_the_same_numbers():
    here = ap.ApprovalSimulation(kind="power", replicates=3, steps=5, methods=["bonferroni", "bonf-srgp"]).run()
    sim = ap.ApprovalSimulation(kind="power", replicates=3, steps=5, methods=["bonferroni", "bonf-srgp"])
    there = asyncio.run(sim.arun(poll=0.01))
    assert there.fwer == here.fwer and there.approvals == here.approvals
    for name in here.curves:
        for m in here.methods:
            assert np.array_equal(there.curves[name][m], here.curves[name][m])
    assert sim.status == "done: 3 replicates" and sim.progress == 1.0


# --------------------------------------------------------------------------- hostile files (issue 15)
@pytest.mark.parametrize("content,message", [
    (b"o,a\r1,0.5\r1,0.4\r", None),  # CR-only line endings are read
    (b"o,a\n1," + b"1" * 200_000 + b"\n1,2\n", "line 2: trace must be a CSV file of numbers"),
    (b"o,a\n1,2\n1," + b"9" * 41 + b"\n", "line 3, column 2: loss (a) must be a number of at most 40 characters"),
    (b"o," + b",".join(b"m%d" % j for j in range(10_001)) + b"\n", "trace must be at most 10000 modifications"),
    (b'o,a\n1,"2\n3"\n1,2\n', "line 3, column 2: loss (a) must be a finite number"),
])
def test_hostile_trace_files(content, message):
    if message is None:
        assert ap.read_modification_trace(content).examples == 2
        return
    with pytest.raises(InputError) as info:
        ap.read_modification_trace(content)
    assert message in str(info.value)


def test_simulation_without_worker_processes_runs_here(monkeypatch):
    from meter_dashboard.approvals import simulation as approve_simulation

    def broken(kind="simulations"):
        raise RuntimeError("no processes in this environment")

    monkeypatch.setattr(approve_simulation, "process_pool", broken)
    here = ap.ApprovalSimulation(kind="fwer", replicates=2, steps=5, methods=["naive"]).run()
    sim = ap.ApprovalSimulation(kind="fwer", replicates=2, steps=5, methods=["naive"])
    there = asyncio.run(sim.arun(poll=0.01))
    assert there.fwer == here.fwer and there.completed == 2 and sim.status == "done: 2 replicates"


@pytest.fixture(autouse=True)
def _fresh_results():
    """Each test computes its own results (the process shares them between sessions: tested below)."""
    ap.clear_shared_results()
    yield


def test_results_are_shared_by_every_session_of_the_process():
    """Issue 19: whoever opens the same example with the same settings reads one result, computed once."""
    first = ap.ApproveModel(method="bonf-srgp")
    calls = []
    run = ap._run_options

    def counting(*args, **kwargs):
        calls.append(args[2])
        return run(*args, **kwargs)

    ap._run_options = counting
    try:
        async def go():
            m = ap.ApproveModel(background=True, compare_active=False, method="bonf-srgp")
            assert m.result is first.result and not m.busy  # known: on the first page, no background pass
            return m

        second = _serve(go())
        again = ap.ApproveModel(example="refits", method="bonf-srgp", alpha=0.05, compare_active=False)
    finally:
        ap._run_options = run
    assert second.result is first.result and calls == ["bonf-srgp"]  # only the new alpha was computed
    assert again.result.alpha == 0.05
    trace, _ = ap.load_example("refits")
    assert trace is ap.load_example("refits")[0] and not trace.losses.flags.writeable  # read once, read-only
