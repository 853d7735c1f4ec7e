"""The /approve component outside a browser: words, tables and figures follow the models (no computing)."""
from __future__ import annotations

import numpy as np
import pytest
from bokeh.models import Range1d

import meter_dashboard.approvals.model as ap
from meter_dashboard.approvals import view_text as text
from meter_dashboard.approvals.figures import CompareFigure, DecisionFigure, SimulationFigures
from meter_dashboard.approvals.view import Approve


@pytest.fixture(scope="module")
def refits():
    return ap.load_example("refits")


def _partial(result, k):
    """The first k decisions of ``result``, as a server shows them while computing."""
    fields = ("approved", "levels", "weights", "z", "z_thresholds", "p_values", "margins", "estimates",
              "standard_errors")
    return ap.ApprovalResult(method=result.method, alpha=result.alpha, names=result.names, steps=result.steps,
                             **{f: getattr(result, f)[:k] for f in fields})


def test_a_partial_result_shows_decided_rows_and_pending_ones(refits):
    full = ap.approve(refits[0], "fs-srgp")
    part = _partial(full, 4)
    table = text.decision_table(part)
    assert table.count("class='approve-decision") == 4 and table.count("approve-pending") == 11
    heads = text.headlines(part, "original", busy=True)
    assert f"{part.approvals} of 4" in heads and "deciding test 5 of 15" in heads
    assert "approve-deployed" not in heads  # nothing is deployed before every test is decided
    assert "4 of 15 tests decided so far" in text.sentence(part)
    done = text.headlines(full, "original", busy=False)
    assert f"{full.approvals} of 15" in done and "approve-deployed" in done and "updating" not in done


def test_the_comparison_marks_what_is_still_computing(refits):
    full = ap.approve(refits[0], "bonf-srgp")
    comparison = ap.ApprovalComparison(results={"bonf-srgp": full}, names=full.names, pending=("fs-srgp",))
    table = text.compare_table(comparison)
    assert table.count("data-method='bonf-srgp'") == 15 and "data-method='fs-srgp'" not in table
    assert table.count("approve-pending") == 16  # 15 rows and the total
    assert "computing…" in text.compare_headlines(comparison)


def test_figures_have_explicit_ranges_fitted_to_the_data(refits):
    full = ap.approve(refits[0], "fs-srgp", prespecified=refits[1])
    fig = DecisionFigure()
    assert isinstance(fig.figure.x_range, Range1d) and isinstance(fig.figure.y_range, Range1d)
    fig.update(full)
    lo, hi = fig.figure.y_range.start, fig.figure.y_range.end
    assert lo < min(full.p_values.min(), full.levels.min()) and hi > max(full.p_values.max(), full.levels.max())
    assert (fig.figure.x_range.start, fig.figure.x_range.end) == (0.5, 15.5)
    compare = CompareFigure()
    compare.update(ap.compare(refits[0], prespecified=refits[1]), full)
    assert compare.figure.y_range.start > 0 and len(compare.p_source.data["p"]) == 15
    sim = ap.ApprovalSimulation(kind="power", replicates=1, steps=3, methods=["bonferroni"]).run()
    figures = SimulationFigures("power", 0.1)
    figures.update(sim)
    assert figures.figure.y_range.start == 0.0 and np.isfinite(figures.curve.y_range.end)


def test_simulation_plots_appear_with_the_first_result():
    view = Approve(ap.ApproveModel(method="naive").trace, method="naive")
    assert not view._power_widgets["plots"].visible
    assert "Not run yet" in view._power_widgets["table"].object
    view.power.param.update(replicates=1, steps=3, methods=["bonferroni"])
    view.power.run()
    assert view._power_widgets["plots"].visible and "approve-sim-fwer" in view._power_widgets["table"].object


def test_a_refused_number_leaves_the_model_alone_and_says_why():
    view = Approve(method="bonf-srgp")
    before = view.model.result
    view.alpha.text.value = "2"
    assert view.model.alpha == 0.1 and view.model.result is before
    assert "α (family-wise error rate) must be in (0, 1); got &#x27;2&#x27;" in view.alpha.message_pane.object
    assert "Showing the last valid decisions" in view.stale.object
    view.alpha.text.value = "0.05"
    assert view.model.result.levels[0] == pytest.approx(0.04) and view.stale.object == ""


def test_a_running_simulation_shows_its_time_estimate():
    """Issue 11 #13: every simulation shows progress and time left (state set directly: no machine-speed race)."""
    from meter_dashboard.approvals.simulation import ApprovalSimulation
    from meter_dashboard.ui.simulation import SimulationControls

    job = ApprovalSimulation(kind="fwer", replicates=8)
    panel = SimulationControls(job, css_prefix="approve-fwer")
    job._set(running=True, progress=0.25, status="3 of 8 replicates", seconds_left=6.2)
    assert "3 of 8 replicates · about 6 s left" in panel.status.object and panel.progress.value == 25
    job._set(running=False, progress=1.0, status="done: 8 replicates", seconds_left=None)
    assert "left" not in panel.status.object and "done: 8 replicates" in panel.status.object



# --------------------------------------------------------------------------- issue 19: a light first view
def _served(build):
    """``build()`` made into a document as a served session would (its first message): (doc, result, onload)."""
    import types
    import weakref

    from bokeh.document import Document
    from panel.io.state import set_curdoc, state

    class _Session:  # the parts of a Bokeh session context a page reads
        id = "test"
        server_context = None
        request = types.SimpleNamespace(arguments={}, cookies={}, headers={})

    doc, session = Document(), _Session()
    doc._session_context = weakref.ref(session)
    with set_curdoc(doc):
        built = build()
        doc.add_root(built[0].get_root(doc))
    return doc, built[1], state._onload.get(doc, []), session


def test_the_first_view_holds_only_what_it_shows():
    """The advanced settings and the decision plot are not in the first document (issue 19: models per session)."""
    from meter_dashboard.app import pages

    doc, _, onload, _session = _served(lambda: (pages.build("approve"), None))
    # the first response holds an empty column; the view arrives once the browser connected, built as the
    # process's builder builds it (app.pages._build_next); what it asks to run once on screen goes through
    # ui.lazy.on_screen (the next tick), and the builder no longer collects onload callbacks
    enqueue = next(callback for callback, _ in onload if getattr(callback, "func", None) is pages._enqueue)
    root, name, module = enqueue.args
    waiting = len(onload)
    pages._fill_in(doc, root=root, name=name, module=module)
    kinds = [type(m).__name__ for m in doc.models]
    # issue 29: the sidebar is three ui.form.Form models around the two drop areas, no Panel text box or select
    assert "figure" not in kinds and kinds.count("TextInput") == 0 and kinds.count("Select") == 0
    assert len([k for k in kinds if k.startswith("Form")]) == 3
    assert len(doc.models) <= 50, len(doc.models)  # 145 before: 120 with the advanced card, 77 with Panel widgets, 46
    # the plot's place is a box that says when it is scrolled to (ui.lazy.WhenSeen), not an onload callback
    # (SeenWatch, the downloads row (ui.exports.DownloadRow) and the three forms are JSComponents)
    assert kinds.count("ReactiveESM") == 5
    assert len(onload) == waiting  # the view asked nothing of the page's onload (this session never loads)


def test_advanced_settings_are_a_closed_drawer_and_the_plot_is_built_when_needed():
    """The advanced settings are a ``<details>`` drawer of the procedure's form: closed, costing nothing, and working."""
    import panel as pn

    view = Approve()
    assert view.seed.text.value == "0" and view.decision_plot is not None  # a notebook: everything at once
    doc, view, _, _session = _served(lambda: (lambda v: (pn.Column(v.controls(), v.results()), v))(Approve()))
    form = view.inputs.form
    assert form.opened == [] and not view.advanced.is_open and view.decision_plot is None
    boxes = [view.failure_threshold, view.pres_share, view.pres_first_share, view.max_conditioning, view.seed]
    assert [box.parameter for box in boxes] == ["failure_threshold", "pres_share", "pres_first_share",
                                                "max_conditioning", "seed"]
    markup = form.markup
    drawer, closing = markup.index('data-drawer="advanced"'), markup.index("</details>")
    assert all(drawer < markup.index(f'data-field="{box.field_name}"') < closing for box in boxes)
    assert form.values["seed"] == "0"
    view.seed.text.value = "3"  # what the browser sends when the seed is typed: the model follows
    assert view.model.seed == 3
    view.max_conditioning.text.value = "-1"  # refused beside its box, the model keeps its value
    assert "must be" in form.slots["max_conditioning:message"] and view.inputs.refused()
    view.advanced.open()
    assert form.opened == ["advanced"] and view.advanced.is_open
    view._show_decision_plot()  # what the page's onload does
    assert list(view.decision_source.data["test"]) == list(range(1, 16)) and view.decision_plot.visible


def test_the_first_view_carries_no_empty_message_panes():
    """Issue 32 (server CPU per open): a number box's message pane is made when it has something to say."""
    import panel as pn

    doc, view, _, _session = _served(lambda: (lambda v: (pn.Column(v.controls(), v.results()), v))(Approve()))
    messages = [m for m in doc.models if "md-input-message" in (getattr(m, "css_classes", None) or [])]
    assert messages == [] and view.stale.object == ""
    view.alpha.text.value = "2"  # refused: its message now, and the decisions say they are the last valid ones
    view._flush()  # what the session's next tick runs
    assert "must be in (0, 1)" in view.alpha.message_pane.object and "Showing the last valid" in view.stale.object


def test_while_computing_the_lead_says_what_is_computed_in_the_answers_place(refits):
    """Issue 29: the lead's place is kept while the decisions are computed (the page does not jump when the answer
    arrives), in its own class: ``.approve-lead`` is only ever the answer."""
    from meter_dashboard.approvals.text import PACE, duration, lead, pending_lead

    view = Approve(method="fs-srgp", alpha=0.05)
    pending = view.decisions._pending_lead()
    bound = PACE.seconds(15, "fs-srgp")
    words = pending_lead(15, "fsSRGP", 0.05, bound)  # issue 29: and for how long (text.Pace)
    assert words == (f"Computing which of the 15 modifications we can ship (fsSRGP, {duration(bound)} "
                     "of computing on this server) so that all approvals together are right 95 times in 100: each "
                     "decision shows here as soon as its test is done.")
    assert pending == f'<p class="md-lead page-lead approve-pending-lead">{words}</p>'
    assert "approve-lead" not in pending.replace("approve-pending-lead", "")
    assert 0.6 < len(words) / len(lead(view.model.result)) < 1.6  # about the answer's length: one holds the other's place
    assert pending_lead(1, "Bonferroni", 0.1).startswith("Computing which of the 1 modification we can ship")


def test_the_decision_plot_is_built_when_its_place_is_seen():
    """Issue 29: the plot below the table is a ui.lazy.WhenSeen box of its height until it is scrolled to."""
    import panel as pn

    from panel.io.state import set_curdoc

    from meter_dashboard.approvals.view_answer import PLOT_PLACE_PX
    from meter_dashboard.ui.lazy import SeenWatch

    doc, view, _, _session = _served(lambda: (lambda v: (pn.Column(v.controls(), v.results()), v))(Approve()))
    place = view.decisions.plot_place
    (box,) = place.holder.objects
    assert isinstance(box, SeenWatch) and box.height == PLOT_PLACE_PX and not place.built
    assert view.decision_plot is None and "figure" not in [type(m).__name__ for m in doc.models]
    with set_curdoc(doc):  # the session's own document, as when the browser's message arrives
        box.seen = True  # what the box's script sets when it comes near the screen
    assert place.built and view.decision_plot.visible and place.holder.objects == [place.part]
    assert list(view.decision_source.data["test"]) == list(range(1, 16))  # it arrives with its points
    assert "figure" in [type(m).__name__ for m in doc.models]


def test_outside_a_server_the_decision_plot_is_built_at_once():
    view = Approve(method="bonf-srgp")
    assert view.decisions.plot_place.built and view.decision_plot.visible
    assert list(view.decision_source.data["test"]) == list(range(1, 16))


def test_the_sidebar_is_three_forms_around_the_drop_areas():
    """Issue 29: the sidebar's notes, selects and number boxes are three Form models around the two drop areas."""
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from meter_dashboard.ui.form import Form

    view = Approve()
    inputs = view.inputs
    column = view.controls()
    assert column.objects == [inputs.trace_form, view.upload, inputs.upload_form, view.pres_upload, inputs.form]
    assert all(isinstance(form, Form) for form in (inputs.trace_form, inputs.upload_form, inputs.form))
    trace = inputs.trace_form.markup  # the same text, in the same order, as the widgets it replaces
    assert (trace.index("Modification trace") < trace.index('data-field="example"')
            < trace.index('data-slot="example-note"') < trace.index("Or upload a CSV"))
    assert 'data-slot="upload-error"' in inputs.upload_form.markup
    procedure = inputs.form.markup
    order = ['data-slot="pres-error"', "<b>Procedure</b>", 'data-field="method"', 'data-field="alpha"',
             'data-field="success_weight"', 'data-field="margin"', 'data-field="margin_step"', 'data-slot="error"',
             'data-drawer="advanced"', 'data-field="seed"']
    assert [procedure.index(s) for s in order] == sorted(procedure.index(s) for s in order)
    doc = Document()
    with set_curdoc(doc):
        doc.add_root(column.get_root(doc))
    assert len(doc.models) <= 20, len(doc.models)  # 64 with a Panel widget per input


def test_the_selects_follow_the_model_both_ways_and_take_only_their_options():
    view = Approve(method="bonf-srgp")
    form, inputs = view.inputs.form, view.inputs
    assert form.values["method"] == "bonf-srgp" and inputs.trace_form.values["example"] == "refits"
    form.type("method", "bonferroni")  # what the browser sends
    assert view.model.method == "bonferroni" and inputs.method.value == "bonferroni"
    form.type("method", "holm")  # not offered: ignored
    assert view.model.method == "bonferroni"
    inputs.method.value = "holm"  # not an option, even on the server: the model keeps its procedure
    assert view.model.method == "bonferroni"
    view.model.method = "fs-srgp"  # a link, the model: the select shows it
    assert inputs.method.value == "fs-srgp" and form.values["method"] == "fs-srgp"
    inputs.trace_form.type("example", "adversary")
    assert view.model.example == "adversary" and "approve_adversary.csv" in inputs.example_note.object
    assert inputs.trace_form.slots["example-note"] == inputs.example_note.object


def test_messages_show_in_their_slots():
    view = Approve()
    view.upload._set(upload_error="trace must be a file of at most 10 MiB; got 'big.csv', more than 12 MiB")
    assert "at most 10 MiB" in view.inputs.upload_form.slots["upload-error"]
    view.pres_upload._set(upload_error="prespecified must be a CSV file; got 'x.txt'")
    assert "must be a CSV" in view.inputs.form.slots["pres-error"]
    view.inputs.draw(["Link: alpha must be in (0, 1); got '2'"])
    assert "Link: alpha must be in (0, 1)" in view.inputs.form.slots["error"] == view.error.object
