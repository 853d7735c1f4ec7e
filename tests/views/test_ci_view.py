"""The /ci page as declared sections (issue 32): what each shows is declared, and a change sends only what changed.

Counted without a browser: the page's models in a Bokeh document, the change events Bokeh emits
(a served page sends them as one message).  The browser-side behaviour is tests/ui/test_ci_page.py.
"""
from __future__ import annotations

import collections

import panel as pn
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ColumnsPatchedEvent, ColumnsStreamedEvent
from panel.io.state import set_curdoc

from meter_dashboard.ci import PRESETS
from meter_dashboard.ci.view import CI
from meter_dashboard.ci.view_answer import Answer, Curves
from meter_dashboard.ci.view_inputs import Inputs
from meter_dashboard.ci.view_replay import Replay

from .test_planner_cost import recorded  # every change event of a document, as Bokeh emits it

_DATA_EVENTS = (ColumnDataChangedEvent, ColumnsPatchedEvent, ColumnsStreamedEvent)


def _page(**params):
    doc = Document()
    with set_curdoc(doc):
        view = CI(**params)
        doc.add_root(pn.Column(view.controls(), view.results()).get_root(doc))
    return view, doc


def _changed(events) -> collections.Counter:
    """(model class, attribute) of every change; data changes as ('data', source name or id)."""
    out: collections.Counter = collections.Counter()
    for e in events:
        if isinstance(e, _DATA_EVENTS):
            out[("data", e.model.name or e.model.id)] += 1
        else:
            out[(type(e.model).__name__, getattr(e, "attr", None))] += 1
    return out


def test_the_page_is_made_of_viewer_sections_over_one_model():
    view = CI(trace="")
    sections = (view.inputs, view.answer, view.curves, view.check)
    assert [type(s) for s in sections] == [Inputs, Answer, Curves, Replay]
    assert all(isinstance(s, pn.viewable.Viewer) and s.model is view.model for s in sections)
    assert view.controls() is view.inputs.__panel__()  # built once: the same column each time


def test_each_show_method_declares_the_model_parameters_it_reads():
    view = CI(trace="")

    def declared(owner, name):
        return {d.name for d in owner.param.method_dependencies(name)}

    assert declared(view.answer, "show") == {"result", "error"}
    assert declared(view.curves, "show") == {"curves"}
    assert declared(view.curves, "show_caption") == {"curves", "curving"}
    assert declared(view.check, "show_points") == {"replay", "replaying"}
    assert declared(view.check, "show") == {"replay", "trace_error", "replaying", "upload_error"}
    assert declared(view.inputs, "show_exact") == {"running", "status", "error", "result", "bound"}


def test_a_refused_upload_changes_its_message_and_nothing_else():
    view, doc = _page(trace="ci_commits.csv")
    events = recorded(doc)
    with set_curdoc(doc):
        view.upload._set(upload_error="file must be a file of at most 10 MiB; got 'big.csv', more than 12 MiB")
    changed = _changed(events)
    assert "at most 10 MiB" in view.trace_error.object
    assert not [k for k in changed if k[0] == "data"], changed  # the replay plot's points are not sent again
    assert set(changed) <= {("HTML", "text")}, changed


def test_a_new_reliability_updates_the_answer_in_place():
    view, doc = _page(trace="")
    models = set(doc.models)
    headlines = view.headlines.object
    events = recorded(doc)
    with set_curdoc(doc):
        view.model.reliability = 0.99
    assert view.headlines.object != headlines
    assert set(doc.models) == models  # nothing rebuilt: the same panes and plots, new values
    changed = _changed(events)
    assert ("data", "ci-curves") in changed
    assert not [k for k in changed if k[0] == "data" and k[1] != "ci-curves"], changed  # no trace: no points


def test_outside_a_server_the_replay_plot_is_built_at_once():
    """Issue 29: served, the replay plot waits until scrolled to (tests/ui); here it is built with its points."""
    view, doc = _page()
    seen = view.check.plot_seen
    assert seen.built and seen.holder.objects == [view.check.replay_box]
    assert doc.get_model_by_id(view.check.replay_fig.id) is view.check.replay_fig
    assert len(view.check.replay_source.data["commit"]) == 40


# --------------------------------------------------------------------------- issue 29: the sidebar as forms
def test_the_sidebar_is_two_forms_the_condition_a_live_box_in_the_first():
    """Issue 29: the preset, the condition, notes, number boxes, choices and toggles are two Form models."""
    from meter_dashboard.ui.form import Form

    view = CI(trace="")
    inputs = view.inputs
    column = view.controls()
    assert column.objects == [inputs.form, inputs.numbers_form]
    assert all(isinstance(f, Form) for f in (inputs.form, inputs.numbers_form))
    form = inputs.form.markup  # the same text, in the same order, as the widgets it replaces
    assert 'data-field="condition" autocomplete="off" spellcheck="false" placeholder="n - o &gt; 0.02' in form
    assert form.count('data-live="1"') == 1 and 'class="md-field ci-condition"' in form  # checked as typed
    order = ['data-field="preset"', 'data-field="condition"', 'data-slot="condition-error"', "ci-grammar", 'data-field="reliability"', "<b>Adaptivity</b>",
             'data-choice="adaptivity"', "<b>Mode</b>", 'data-choice="mode"', "<b>Bound</b>", 'data-choice="bound"']
    assert [form.index(s) for s in order] == sorted(form.index(s) for s in order)
    numbers = inputs.numbers_form.markup
    order = ['data-field="steps"', 'type="range"', "<b>Optimizations</b>", 'data-choice="use_bound"',
             'data-field="difference_bound"', 'data-choice="check_bound"', "<b>Labeling effort</b>",
             'data-field="seconds"', 'data-field="labelers"', 'data-slot="other-errors"']
    assert [numbers.index(s) for s in order] == sorted(numbers.index(s) for s in order)
    doc = Document()
    with set_curdoc(doc):
        doc.add_root(column.get_root(doc))
    kinds = [type(m).__name__ for m in doc.models]
    assert kinds.count("ReactiveESM") == 2 and kinds.count("TextInput") == 0
    assert not {"Select", "RadioButtonGroup", "Checkbox", "IntSlider"} & set(kinds), kinds
    assert len(doc.models) <= 11, len(doc.models)  # 44 with a Panel widget per input, 15 with the condition one


def test_the_choices_follow_the_model_both_ways_and_take_only_their_options():
    view = CI(trace="")
    form, m = view.inputs.form, view.model
    assert form.values["adaptivity"] == "full" and form.values["mode"] == "fp-free" and form.values["bound"] == "hoeffding"
    form.type("adaptivity", "none")  # what the browser sends
    assert m.adaptivity == "none"
    form.type("mode", "fp-free; drop")  # not offered: ignored, the box shows the model's again
    assert m.mode == "fp-free" and form.values["mode"] == "fp-free"
    m.bound = "binomial"  # a link, a notebook: the buttons show it
    assert form.values["bound"] == "binomial" == view.inputs.bound_choice.value
    view.inputs.mode.value = "fn-free"  # a notebook sets the box, as it set the button group
    assert m.mode == "fn-free" and form.values["mode"] == "fn-free" and view.inputs.adaptivity.value == "none"
    top = view.inputs.form
    preset = next(name for name in PRESETS if name.startswith("Section 3.3"))
    top.type("preset", preset)  # a paper setting chosen: the condition box shows it
    assert view.inputs.preset.value == preset and m.condition == view.condition.value == "n > 0.8 +/- 0.05"
    top.type("preset", "Section 9")  # not offered: ignored
    assert view.inputs.preset.value == preset == top.values["preset"]  # shown again


def test_the_bound_toggles_follow_the_model_both_ways():
    view = CI(trace="", condition="n - o > 0.018 +/- 0.022", reliability=0.998, steps=7)
    numbers, m = view.inputs.numbers_form, view.model
    assert numbers.values["use_bound"] == "" and "difference_bound" in numbers.disabled
    assert numbers.values["check_bound"] == "on" and m.check_difference_bound is True
    numbers.type("difference_bound", "0.5")  # disabled: refused, the model keeps None
    assert m.difference_bound is None and numbers.values["difference_bound"] == "0.1"
    numbers.type("use_bound", "on")  # pressed: p is used and can be typed
    assert m.difference_bound == 0.1 and "difference_bound" not in numbers.disabled
    numbers.type("difference_bound", "2")  # refused with a message in its slot
    assert numbers.slots["difference_bound:message"].count("p (bound on d) must be a number in (0, 1]") == 1
    assert m.difference_bound == 0.1
    numbers.type("check_bound", "")
    assert m.check_difference_bound is False
    m.difference_bound = None  # a notebook: the toggle is released and p greyed out
    assert numbers.values["use_bound"] == "" and "difference_bound" in numbers.disabled
    m.check_difference_bound = True
    assert numbers.values["check_bound"] == "on"


def test_the_trace_menu_and_the_alarm_buttons_are_forms_beside_the_drop_area():
    """Issue 29: the replay's menu and firstChange buttons are a Form each (no Panel Select or button group)."""
    view = CI()
    check, m = view.check, view.model
    assert check.example_form.values["example"] == "Example: 40 commits (n, o, d per commit)"
    check.example_form.type("example", "Example: 8 EmoContext-shaped models (predictions)")  # what the browser sends
    assert m.trace.source == "ci_predictions.csv" and len(m.replay.rows) == 7
    check.example_form.type("example", "../etc/passwd")  # not offered: ignored
    assert m.trace.source == "ci_predictions.csv" and check.example.value.startswith("Example: 8")
    alarm = check.alarm_form
    assert alarm.values["alarm_on"] == m.alarm_on == "pass" and "firstChange alarm on" in alarm.markup
    alarm.type("alarm_on", "fail")
    assert m.alarm_on == "fail"
    m.alarm_on = "pass"  # a notebook: the buttons show it
    assert alarm.values["alarm_on"] == "pass" == check.alarm_on.value
    doc = Document()
    with set_curdoc(doc):
        doc.add_root(view.check.__panel__().get_root(doc))
    kinds = [type(x).__name__ for x in doc.models]
    assert "Select" not in kinds and "RadioButtonGroup" not in kinds and kinds.count("ReactiveESM") == 2
