"""The session page's component without a browser: what it shows for the model's state."""
from __future__ import annotations

import html

from meter_dashboard.session.text import table_window
from meter_dashboard.session.trace import example_path
from meter_dashboard.session.view import Session

GOOD = b"step,val_accuracy,test_accuracy\n" + b"".join(b"%d,0.9,0.89\n" % i for i in range(1, 21))


def test_the_table_window_keeps_its_size_at_both_ends():
    # issue 11 #13: at the last of 8 steps the table said "Steps 2-8 of 8" and hid step 1
    assert table_window(8, 7) == (0, 8) and table_window(8, 0) == (0, 8)
    assert table_window(100, 99) == (87, 100) and table_window(100, 0) == (0, 13) and table_window(100, 50) == (44, 57)
    view = Session(example="emocontext")
    assert "Steps 1–8 of 8" in view.table.object and view.table.object.count("<tr") == 9


def test_go_to_step_follows_the_replay():
    view = Session(example="emocontext")
    assert view.jump.text.value == "8"
    view.jump.text.value = "5"
    assert view.model.current["step"] == 5 and 'session-step">5<' in view.cards.object
    view.model.step_back()
    assert view.jump.text.value == "4"  # not the old "5"
    view.jump.text.value = "42"
    assert "Go to step must be a step of the trace (1..8); got '42'" in view.jump.message
    assert view.model.current["step"] == 4


def test_numeric_inputs_say_what_is_wrong_and_keep_the_replay():
    # issue 11 #4: every numeric input gets a message beside it; the results stay
    view = Session(example="emocontext")
    view.open_settings()  # issue 19: the meter's inputs are built when first opened
    before = view.model.result
    for box, typed, message in ((view.delta, "1.5", "δ (failure probability) must be in (0, 1); got '1.5'"),
                                (view.steps, "0", "T (budget of steps) must be a whole number >= 1; got '0'"),
                                (view.steps, "1e13", "T (budget of steps) must be a whole number of at most"),
                                (view.test_size, "abc", "Test-set size n (labels) must be a whole number; got 'abc'")):
        box.text.value = typed
        assert message in box.message
        assert view.model.result is before
    view.delta.text.value = "0.1"
    assert view.delta.message == "" and view.model.result.settings["delta"] == 0.1
    view.epsilon.text.value = "0.05,0.01"  # a valid list, an invalid plan: the plan's message and the stale banner
    assert "epsilon must be non-decreasing" in view.plan_error.object and "last valid replay" in view.plan_error.object


def test_t_follows_the_trace_and_the_page_says_so():
    # issue 11 #3: after EmoContext (T = 8) a 20-step trace showed "Steps used 20 / 8"
    view = Session(example="emocontext")
    assert "T = 8: the trace's number of steps" in html.unescape(view.meter_summary.object)
    view.open_settings()
    assert "T = 8: the trace's number of steps" in html.unescape(view.steps_note.object)
    view.model.load(GOOD, name="twenty.csv")
    assert 'session-used">20 / 20<' in view.cards.object and "T = 20: the trace" in view.steps_note.object
    view.steps.text.value = "12"
    form = view.inputs.form  # the button "T = the trace's steps" is an action of the sidebar's form
    assert "T = 12: set by you" in view.steps_note.object and "follow" not in form.hidden
    assert form.labels["follow"] == "T = the trace's 20 steps"
    form._handle_msg({"kind": "action", "name": "follow"})  # what the browser sends when it is pressed
    assert view.model.plan.steps == 20 and "follow" in form.hidden


def test_an_upload_outside_a_server_is_read_and_a_refusal_shown():
    view = Session(example="emocontext")
    view._on_upload(type("E", (), {"new": {"twenty.csv": GOOD}})())
    assert view.model.trace.name == "twenty.csv" and view.model.plan.steps == 20
    view._on_upload(type("E", (), {"new": {"bad.csv": b"step,val_accuracy,test_accuracy\n1,2,0.5\n"}})())
    assert "row 2, column 2 (val_accuracy)" in view.trace_error.object and view.model.trace.name == "twenty.csv"
    view.upload._set(upload_error="trace must be a file of at most 10 MiB; got 'big.csv', more than 12 MiB")
    assert "at most 10 MiB" in view.trace_error.object


def test_the_report_button_gives_the_replay_as_one_html_file():
    view = Session(example="synthetic_overfitting", delta=0.1)
    html = view._report_file().getvalue()
    assert "Session replay: Synthetic" in html and "SYNTHETIC" in html and "20 steps" in html
    assert "T (budget of steps)" in html and "the trace&#x27;s number of steps" in html
    assert "cdn.bokeh.org" not in html
    view.model.step_back()
    assert "At step 19 the incremental meter" in view.report().to_html()  # the notebook's way: .save(path)


def test_shipped_json_through_the_view():
    view = Session(example="emocontext")
    view.model.load(example_path("synthetic_overfitting").read_bytes(), name="synthetic.json")
    assert 'meter-incremental-signal">4<' in view.cards.object and "reverted: 9, 18" in view.title.object


def _models(view) -> tuple:
    """(Bokeh models of the page's sidebar and main area, the document) once rendered."""
    import panel as pn
    from bokeh.document import Document

    doc = Document()
    doc.add_root(pn.Row(view.controls(), view.results()).get_root(doc))
    return doc


def test_the_first_view_builds_few_bokeh_models_and_the_rest_when_first_opened():
    # issue 19: the page created 631 Bokeh models (60 BoxAnnotations for the signal bands alone); the first
    # view now holds what a person reads first, and the history plots and the meter's inputs come when opened
    from collections import Counter

    view = Session(example="emocontext")
    doc = _models(view)
    first = Counter(type(m).__name__ for m in doc.models)
    assert sum(first.values()) <= 60, first
    assert first["figure"] == 0 and first["GlyphRenderer"] == 0 and first["TextInput"] == 1  # go to step
    # the sidebar's inputs are two forms (issue 29; their Bokeh class is named Form<n>); the one select is the speed
    assert sum(n for kind, n in first.items() if kind.startswith("Form")) == 2 and first["CustomSelect"] == 1
    view.history_toggle.value = True
    opened = Counter(type(m).__name__ for m in doc.models)
    assert opened["figure"] == 2 and opened["BoxAnnotation"] <= 4  # Figures 3a and 3c; the bands are one glyph
    view.history_toggle.value = False
    view.history_toggle.value = True
    assert Counter(type(m).__name__ for m in doc.models) == opened  # reopened, not rebuilt
    view.open_settings()  # the meter's inputs are in the form's drawer: opening it adds no model
    assert Counter(type(m).__name__ for m in doc.models) == opened and view.inputs.form.opened == ["settings"]
    assert view.model.current["step"] == 8 and 'meter-signal">3<' in view.cards.object


def test_a_step_moved_changes_only_what_differs():
    view = Session(example="emocontext")
    _models(view)
    before = {name: getattr(view, name).object for name in ("title", "cards", "sentence", "table", "explain")}
    gauge = view.gauge.pane.object
    view.model.step_back()  # step 7: signal 2 (regular), 3 (worst so far)
    after = {name: getattr(view, name).object for name in before}
    assert after["title"] is before["title"] and after["explain"] is before["explain"]  # not re-sent
    assert after["cards"] != before["cards"] and view.gauge.pane.object != gauge


def test_a_notebook_session_takes_the_plans_bound_and_shows_the_steps_left():
    # issue 30: md.Session(..., bound="binomial") replays with the exact bound; the card answers the steps left
    from meter_dashboard.meter.model import plan

    view = Session(example="emocontext", bound="binomial", steps=10)
    r = view.model.result
    assert view.model.bound == "binomial" and r.labels_needed["incremental"] == plan(
        [0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 10, bound="binomial").labels["incremental"] == 27_151
    cards = html.unescape(view.cards.object)
    assert "Steps left" in cards and "5,509 labels support 0 steps at the planned ε (exact binomial bound)" in cards
    assert "exact binomial bound" in html.unescape(view.meter_summary.object)
    assert "budget=5509" in view.meter_summary.object and "bound=binomial" in view.meter_summary.object


def test_the_sidebar_is_two_forms_around_the_upload_area():
    """Issue 29: the sidebar's notes, select, boxes and option buttons are two Form models around the upload area."""
    from meter_dashboard.ui.form import Form

    view = Session(example="emocontext")
    inputs = view.inputs
    column = view.controls()
    assert column.objects == [inputs.trace_form, view.upload, view.load_progress, inputs.form]
    assert all(isinstance(form, Form) for form in (inputs.trace_form, inputs.form))
    trace = inputs.trace_form.markup  # the same text, in the same order, as the widgets it replaces
    assert trace.index("<b>Trace</b>") < trace.index('data-field="example"') and "example-select" in trace
    markup = inputs.form.markup
    order = ['data-slot="trace"', 'data-field="test_size"', 'data-slot="summary"', 'data-drawer="settings"',
             'data-choice="variant"', 'data-field="epsilon"', 'data-field="ranges"', 'data-field="delta"',
             'data-field="steps"', 'data-slot="steps-note"', 'data-action="follow"', 'data-field="tenant_steps"',
             'data-field="reverts"', 'data-slot="plan-error"']
    assert [markup.index(s) for s in order] == sorted(markup.index(s) for s in order)
    for css in ("test-size-input", "test-size-message", "meter-settings-toggle", "variant-input", "delta-input",
                "steps-input", "follow-trace", "tenant-steps-input", "reverts-input", "trace-error", "planner-link"):
        assert css in markup, css
    doc = _models(view)
    assert len(doc.models) <= 45, len(doc.models)  # 51 with a Panel widget per input (and 63 once opened)
    assert sum(type(m).__name__.startswith("Form") for m in doc.models) == 2


def test_the_sidebars_inputs_follow_the_model_both_ways():
    view = Session(example="emocontext")
    inputs = view.inputs
    trace, form = inputs.trace_form, inputs.form
    assert trace.values["example"] == "emocontext" and form.values["variant"] == "incremental"
    trace.type("example", "synthetic_overfitting")  # what the browser sends
    assert view.model.example == "synthetic_overfitting" and view.model.plan.steps == 20
    assert "synthetic" in form.slots["trace"].lower() and form.values["steps"] == "20"
    trace.type("example", "no-such-trace")  # not offered: ignored
    assert view.model.example == "synthetic_overfitting"
    form.type("variant", "regular")
    assert view.model.variant == "regular" and "The regular meter" in form.slots["summary"]
    view.model.variant = "incremental"  # a link, the model: the buttons show it
    assert inputs.variant.value == "incremental" and form.values["variant"] == "incremental"
    form.type("delta", "0.1")
    assert view.model.plan.delta == 0.1
    view.model.plan.delta = 0.05
    assert form.values["delta"] == "0.05"
    view.model.load(GOOD, name="twenty.csv")  # an upload: the select says so
    assert trace.values["example"] == "(uploaded file)"


def test_refusals_show_in_their_slots():
    view = Session(example="emocontext")
    form = view.inputs.form
    form.type("test_size", "abc")
    assert "must be a whole number; got 'abc'" in html.unescape(form.slots["test_size:message"])  # escaped
    form.type("steps", "0")
    assert "T (budget of steps) must be a whole number >= 1; got '0'" in html.unescape(form.slots["steps:message"])
    form.type("epsilon", "0.05,0.01")  # a valid list, an invalid plan: the plan's message under the inputs
    assert "epsilon must be non-decreasing" in form.slots["plan-error"] and "last valid replay" in form.slots["plan-error"]
    form.type("epsilon", "0.01,0.02,0.03,0.04,0.05")
    assert form.slots["plan-error"] == ""
    view._on_upload(type("E", (), {"new": {"bad.csv": b"step,val_accuracy,test_accuracy\n1,2,0.5\n"}})())
    assert "row 2, column 2 (val_accuracy)" in form.slots["trace"]
