"""The ease.ml/ci param model (no widgets) and its notebook component (no browser)."""
from __future__ import annotations

import numpy as np
import panel as pn
import pytest

import meter_dashboard as md
from meter_dashboard.ci import DEFAULT_CONDITION, PRESETS, CIModel, example_trace
from meter_dashboard.core.validation import InputError


def test_defaults_are_the_papers_pattern_1_setting():
    m = CIModel()
    assert m.condition == DEFAULT_CONDITION and m.reliability == 0.9999 and m.adaptivity == "full"
    r = m.result
    assert (r.labels, r.optimized, r.labels_per_commit) == (655_547, 67_706, 6_771)  # Section 4.1.1: about 67K
    assert m.error == "" and m.error_column is None


def test_inputs_recompute_results_and_curves():
    m = CIModel(condition="n - o > 0.1 +/- 0.1", reliability=0.99)
    assert m.result.labels == 5496  # public calculator
    m.adaptivity = "none"
    assert m.result.labels == 1753  # Figure 2, F2 none
    m.param.update(reliability=0.9999, condition="n > 0.8 +/- 0.05", adaptivity="full")
    assert m.result.labels == 6279  # Section 3.3
    m.steps = 10
    assert list(m.curves["steps"][:3]) == [1, 2, 3] and len(m.curves["steps"]) == 64
    assert m.curves["full"]["baseline"][9] == m.result.labels
    assert m.curves["full"]["optimized"] is None


def test_invalid_condition_keeps_last_result_and_points_at_the_column():
    m = CIModel(condition="n - o > 0.1 +/- 0.1", reliability=0.99)
    m.condition = "n - o >> 0.1 +/- 0.1"
    assert m.error.startswith("column 8: condition must be well-formed")
    assert m.error_column == 8
    assert m.result.labels == 5496 and m.parsed.canonical() == "n - o > 0.1 +/- 0.1"
    m.condition = "n - o > 0.05 +/- 0.1"
    assert m.error == "" and m.error_column is None and m.result.labels == 5496
    m.condition = "n - o > 0.05 +/- 0.05"
    assert m.result.labels == 21_984  # Figure 2, F2 full, 0.99, 0.05


def test_constructor_refuses_a_bad_condition():
    with pytest.raises(InputError) as info:
        CIModel(condition="n >")
    assert info.value.parameter == "condition"


def test_param_bounds_refuse_bad_values_at_assignment():
    m = CIModel()
    with pytest.raises(ValueError):
        m.reliability = 1.0
    with pytest.raises(ValueError):
        m.steps = 0
    with pytest.raises(ValueError):
        m.adaptivity = "sometimes"
    assert m.result.labels == 655_547


def test_difference_bound_and_check():
    m = CIModel(condition="n - o > 0.018 +/- 0.022", reliability=0.998, steps=7)
    assert m.result.optimized is None
    m.difference_bound = 0.1
    checked = m.result.optimized
    m.check_difference_bound = False
    assert m.result.optimized == 5204 < checked  # Figure 5, p = 0.1 known in advance
    m.difference_bound = None
    assert m.result.optimized is None


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_applies_cleanly(name):
    m = CIModel()
    m.apply_preset(name)
    assert m.error == "" and m.result is not None
    for key, value in PRESETS[name].items():
        assert getattr(m, key) == value


def test_preset_numbers_from_the_paper():
    m = CIModel()
    m.apply_preset("Section 3.3: n > 0.8 +/- 0.05, full (6,279)")
    assert m.result.labels == 6279
    m.apply_preset("Figure 5 non-adaptive: n - o > 0.02 +/- 0.02, p = 0.1 known (4,713)")
    assert m.result.optimized == 4713
    m.apply_preset("Pattern 1, Section 4.1.1 (about 67K labels, 6,771 per commit)")
    assert m.check_difference_bound is True and m.result.optimized == 67_706
    with pytest.raises(InputError):
        m.apply_preset("nope")


def test_trace_replay_follows_the_condition_and_mode():
    m = CIModel()
    assert m.replay is None
    m.trace = example_trace()
    first = m.replay
    assert len(first.rows) == 40 and first.condition == DEFAULT_CONDITION
    m.mode = "fn-free"
    assert m.replay.mode == "fn-free" and m.replay.passes >= first.passes
    m.condition = "n - o > 0.05 +/- 0.01 /\\ d < 0.1 +/- 0.01"
    assert m.replay.condition == "n - o > 0.05 +/- 0.01 /\\ d < 0.1 +/- 0.01"
    m.alarm_on = "fail"
    assert m.replay.alarm_on == "fail"
    m.trace = None
    assert m.replay is None


def test_load_trace_errors_keep_the_old_trace():
    m = CIModel(trace=example_trace())
    assert m.load_trace(b"commit,n,o,d\nx,0.8,0.7,0.05\n", name="mine.csv")
    assert m.trace.source == "mine.csv" and len(m.replay.rows) == 1
    assert not m.load_trace(b"commit,n,o,d\nx,zero,0.7,0.05\n", name="bad.csv")
    assert m.trace_error.startswith("bad.csv: line 2, column 'n': n must be a number in [0, 1]")
    assert m.trace.source == "mine.csv"
    # a trace missing a variable the condition needs: the replay error is reported, results stay
    assert m.load_trace(b"commit,n,o\nx,0.8,0.7\n", name="nod.csv")
    assert "d must be a number in [0, 1]" in m.trace_error and m.replay is None
    assert m.result.labels == 655_547


def test_curve_axis_scales_with_steps():
    m = CIModel(steps=32)
    assert m.curve_axis()[-1] == 64
    m.steps = 5000
    axis = m.curve_axis()
    assert axis[-1] == 4096 and len(axis) <= 400 and np.all(np.diff(axis) > 0)


# --------------------------------------------------------------------------- the component (no browser)
def test_notebook_component():
    view = md.CI(condition="n - o > 0.1 +/- 0.1", reliability=0.99)
    assert isinstance(view.model, CIModel)
    layout = view.__panel__()
    assert not isinstance(layout, pn.template.base.BaseTemplate)
    assert pn.panel(view).get_root() is not None
    assert 'ci-labels">5,496<' in view.headlines.object
    assert 'ci-count-none">1,753<' in view.table.object
    assert view.model.replay is not None and len(view.model.replay.rows) == 40  # the shipped example trace


def test_component_shows_errors_beside_the_condition_and_keeps_numbers():
    view = md.CI(condition="n - o > 0.1 +/- 0.1", reliability=0.99)
    view.inputs.form.type("condition", "n - o > 0.1 +/- ")
    assert "column 17: condition must be well-formed" in view.condition_error.object
    assert "^" in view.condition_error.object
    assert 'ci-labels">5,496<' in view.headlines.object
    assert "Showing the last valid condition" in view.headlines.object
    view.inputs.form.type("condition", "n - o > 0.1 +/- 0.05")
    assert view.condition_error.object == "" and 'ci-labels">21,984<' in view.headlines.object


def test_component_escapes_user_text():
    view = md.CI(trace="")
    view.model.load_trace(b"commit,n,o,d\n<script>x</script>,0.8,0.7,0.05\n", name="x.csv")
    assert "<script>" not in view.replay_table.object and "&lt;script&gt;" in view.replay_table.object
    view.inputs.form.type("condition", "n > <b>")
    assert "<b>" not in view.condition_error.object


def test_component_optimized_cards_and_plot_sources():
    view = md.CI()
    html = view.headlines.object
    assert 'ci-optimized">67,706<' in html and 'ci-labels-per-commit">6,771<' in html
    data = view.curve_source.data
    assert data["full_baseline"][31] == 655_547 and data["none_optimized"][31] == 29_048
    view.model.condition = "d < 0.1 +/- 0.01"  # no labels at all: the log plot shows nothing, not zeros
    assert np.all(np.isnan(view.curve_source.data["full_optimized"]))
    view.example.value = "No trace"
    assert view.model.replay is None and "No trace loaded" in view.replay_summary.object


def test_derived_outputs_are_read_only():
    """Issue 10: only the model sets its results and error fields (views cannot write them)."""
    m = CIModel()
    values = {"parsed": None, "result": None, "curves": {}, "replay": object(), "replaying": True, "error": "x",
              "error_column": 3, "trace_error": "x"}
    for name, value in values.items():
        with pytest.raises(TypeError, match="Constant parameter"):
            setattr(m, name, value)
    view = md.CI(trace="")
    view.example.value = "Example: 40 commits (n, o, d per commit)"  # the view asks the model to load it
    assert len(view.model.replay) == 40 and view.model.trace_error == ""


def test_large_traces_replay_in_a_worker_inside_an_event_loop():
    """Issue 13: a trace too large to replay at once is replayed in a worker thread; the loop stays free."""
    import asyncio

    from meter_dashboard.ci import read_ci_trace
    from meter_dashboard.ci.model import SYNC_REPLAY_CELLS
    from tests.models.ci_replay_reference import estimates_csv

    size = SYNC_REPLAY_CELLS // 20 + 1000
    trace = read_ci_trace(estimates_csv(size))

    async def scenario():
        m = CIModel()
        m.trace = trace  # returns at once: the replay is scheduled on this loop
        assert m.replay is None
        ticks = 0
        while m.replay is None:
            await asyncio.sleep(0.001)
            ticks += 1
        return m, ticks

    m, ticks = asyncio.run(scenario())
    assert len(m.replay) == size and not m.replaying and ticks >= 1


# --------------------------------------------------------------------------- the exact binomial bound (issue 12)
def test_binomial_bound_in_the_model():
    m = CIModel(condition="n > 0.8 +/- 0.05")
    assert m.result.labels == 6279 and m.result.bound == "hoeffding"
    m.bound = "binomial"  # without an event loop the search completes before the assignment returns
    assert m.result.bound == "binomial" and m.result.labels < 6279 and m.result.hoeffding["full"]["labels"] == 6279
    assert m.exact.status == "exact binomial counts" and not m.exact.running
    m.steps = 10
    assert m.result.bound == "binomial" and m.result.steps == 10
    m.condition = "n > 0.8 +/- 0.00005"  # Hoeffding's count is shown, and why the exact one is not
    assert "bound must be hoeffding for settings that need more than 10,000,000 labels" in m.error
    assert m.result.bound == "hoeffding"
    m.bound = "hoeffding"
    assert m.error == ""


def test_binomial_search_runs_in_a_worker_inside_an_event_loop():
    """Issue 13: the exact search (up to seconds) never holds the loop; a newer setting supersedes it."""
    import asyncio

    import threading

    from meter_dashboard.ci.exact import ExactCounts

    searched_in = []
    work = ExactCounts.work

    def recording(self, report, should_stop):
        searched_in.append(threading.get_ident())
        return work(self, report, should_stop)

    async def scenario():
        m = CIModel(condition="n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01")
        m.bound = "binomial"
        assert m.result.bound == "hoeffding"  # Hoeffding's counts at once, the search under way
        await asyncio.sleep(0)
        m.steps = 16  # supersedes the running search
        ticks = 0
        while m.result.bound != "binomial" or m.exact.running:
            await asyncio.sleep(0.01)
            ticks += 1
        return m, ticks, threading.get_ident()

    ExactCounts.work = recording
    try:
        m, ticks, loop_thread = asyncio.run(scenario())
    finally:
        ExactCounts.work = work
    assert searched_in and loop_thread not in searched_in  # every search ran in a worker, never on the loop
    assert m.result.steps == 16 and m.result.labels < m.result.hoeffding["full"]["labels"]


def test_component_shows_both_bounds():
    view = md.CI(condition="n > 0.8 +/- 0.05", bound="binomial", trace="")
    assert 'ci-hoeffding-full">6,279<' in view.table.object
    assert "exact binomial" in view.headlines.object and "Hoeffding: 6,279" in view.headlines.object
    assert "Hoeffding&#x27;s counts" in view.curve_caption.object


# --------------------------------------------------------------------------- exact curves (issue 24)
def test_exact_curves_meet_the_table_and_stay_under_hoeffding():
    """Under the binomial bound the curves are exact counts, the same as the table's at the chosen H."""
    from meter_dashboard.bounds import ci as b
    from meter_dashboard.ci.plan import ci_labels

    m = CIModel(condition="n > 0.8 +/- 0.05", bound="binomial")  # no event loop: every point at once
    c = m.curves
    assert c["bound"] == "binomial" and c["computed"] == c["planned"] == 25  # 24 spread over H, plus H = 32
    steps = list(c["steps"])
    full, hoeffding = np.asarray(c["full"]["baseline"]), np.asarray(c["hoeffding"]["full"]["baseline"])
    # Figure 2, F1 at H = 32: Hoeffding 6,279; the exact binomial count 5,704 (bounds/ci.py docstring)
    assert full[steps.index(32)] == m.result.labels == 5704 and hoeffding[steps.index(32)] == 6279
    known = np.isfinite(full)
    assert known.sum() == 25 and known[0] and known[-1]
    for i in np.flatnonzero(known)[::6]:  # independent computations, point by point
        h = steps[i]
        assert full[i] == b.binomial_labels("0.05", 1e-4, b.clause_log_count("full", h, 1, 1))
        assert c["none"]["baseline"][i] == ci_labels("n > 0.8 +/- 0.05", 0.9999, "none", h, bound="binomial").labels
    assert np.all(full[known] <= hoeffding[known]) and np.all(np.diff(full[known]) >= 0)
    assert np.array_equal(c["none"]["baseline"], c["firstChange"]["baseline"], equal_nan=True)  # Section 3.4
    m.seconds_per_label = 3  # nothing the curves depend on: the exact points are kept, not recomputed
    assert m.curves is c
    m.bound = "hoeffding"
    assert m.curves["bound"] == "hoeffding" and np.array_equal(m.curves["full"]["baseline"], hoeffding)


def test_exact_curves_are_computed_off_the_loop_and_the_newest_inputs_win():
    import asyncio
    import threading

    import meter_dashboard.ci.model as cm

    computed_in, point = [], cm.ci_exact_point

    def recording(**kwargs):
        computed_in.append((threading.get_ident(), kwargs["reliability"]))
        return point(**kwargs)

    async def scenario():
        m = CIModel(condition="n > 0.8 +/- 0.05", exact_points=6)
        m.work_in_background()
        m.bound = "binomial"
        assert m.curves["computed"] == 0 and np.isnan(m.curves["full"]["baseline"]).all()  # Hoeffding's at once
        m.reliability = 0.999  # supersedes the running points
        await m.settled()
        return m, threading.get_ident()

    cm.ci_exact_point = recording
    try:
        m, loop_thread = asyncio.run(scenario())
    finally:
        cm.ci_exact_point = point
    assert computed_in and all(thread != loop_thread for thread, _ in computed_in)
    assert m.curves["computed"] == m.curves["planned"] and not m.curving
    full = np.asarray(m.curves["full"]["baseline"])
    assert full[31] == point(condition="n > 0.8 +/- 0.05", reliability=0.999, steps=32)["full"]["baseline"]


def test_the_condition_error_is_markup_and_the_condition_stays_text():
    """Issue 21 (templates): the message and the pointer are markup; what was typed is escaped, once."""
    view = md.CI(condition="n - o > 0.1 +/- 0.1", trace="")
    view.model.condition = "n - o <b>> 0.1"
    html = view.condition_error.object
    assert html.startswith('<div class="md-error">column ') and '<pre class="ci-pointer">' in html
    assert "&lt;b&gt;" in html and "&amp;lt;" not in html and "<b>" not in html


def test_the_lead_and_the_sentence_say_the_same_savings():
    """One phrase for what the optimizations save (ci.text.savings): Figure 5's adaptive setting, 5,204 labels."""
    from meter_dashboard.ci.plan import ci_labels

    r = ci_labels("n - o > 0.018 +/- 0.022", 0.998, "full", 7, "fp-free", difference_bound=0.1,
                  check_difference_bound=False)
    per_commit = f", or {r.labels_per_commit:,} labels per commit with active labeling"
    assert r.sentence().endswith(f"; the optimizations cut that to 5,204{per_commit}.")
    assert r.lead().endswith(f"(with the optimizations 5,204 labelled examples are enough{per_commit}).")
    plain = ci_labels("n > 0.8 +/- 0.05", 0.9999, "full", 32, "fn-free")  # no clause over d: nothing saved
    assert "optimizations" not in plain.sentence() and "optimizations" not in plain.lead()
