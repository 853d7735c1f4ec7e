"""The P(A>B) and Ladder views make a box's message pane only when it has something to say (issue 29).

/compare's inputs are :class:`~meter_dashboard.ui.form.Form` fields (one Bokeh model per form): a box's
message is a slot of its form, hidden while empty; the first view is few models.

The stale banners follow the boxes' text (checked before the banner looks), not their message panes:
asking every box for its pane made one per box on every page opened, most never needed.
"""
from __future__ import annotations

import param

import meter_dashboard as md
from meter_dashboard.ui.style import HTML


def _message_panes(layout) -> list:
    return [p for p in layout.select(HTML) if "md-input-message" in p.css_classes]


def test_compare_has_no_message_pane_until_a_value_is_refused():
    # issue 29: the boxes are fields of a ui.form.Form: a refusal shows in the field's message slot (no pane at all)
    view = md.Compare()
    layout = view.__panel__()
    slot = view.inputs["gamma"].message_pane
    assert _message_panes(layout) == [] and slot.object == "" and view.answer.stale.object == ""
    view.inputs["gamma"].text.value = "2"
    assert _message_panes(layout) == [] and "γ (meaningful threshold) must be in (0.5, 1)" in slot.object
    assert view.settings.form.slots["gamma:message"] == slot.object
    assert "Showing the last valid" in view.answer.stale.object
    view.inputs["gamma"].text.value = "0.8"
    assert view.answer.stale.object == "" and view.model.gamma == 0.8 and slot.object == ""


def test_ladder_has_no_message_pane_until_a_value_is_refused():
    view = md.Ladder(run_attack=False)
    layout = view.__panel__()
    assert _message_panes(layout) == []
    # the Ladder's boxes are fields of ui.form.Form models (issue 29): a refusal shows in its form's slot, no pane
    view.label_bound.size_inputs["epsilon"].text.value = "2"
    assert _message_panes(layout) == []
    assert "must be in (0, 1)" in view.label_bound.size_form.slots["epsilon:message"]
    assert "Showing the last valid label count" in view.label_bound.size_stale.object
    view.replay_inputs.delta_input.text.value = "abc"
    assert _message_panes(layout) == []
    assert "must be a number" in view.replay_inputs.delta_form.slots["delta:message"]
    assert "Showing the last valid replay" in view.replay_answer.replay_stale.object


def _document(view):
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        doc.add_root(view.results().get_root(doc))
    return doc


def test_compare_inputs_are_forms_around_the_drop_area():
    """Issue 29: the select, the checkbox, the number boxes, the note and the messages are three Form models."""
    import panel as pn

    from meter_dashboard.ui.form import Form

    view = md.Compare(sync_url=True)
    doc = _document(view)
    settings, needed = view.settings, view.runs_needed
    columns = [c for c in view.results().select(pn.Column) if "compare-controls" in c.css_classes]
    assert columns[0].objects == [settings.file_form, view.upload, settings.form]
    assert columns[1].objects == [needed.form]
    assert all(isinstance(f, Form) for f in (settings.file_form, settings.form, needed.form))
    kinds = [type(m).__name__ for m in doc.models]
    assert kinds.count("TextInput") == kinds.count("Select") == kinds.count("Checkbox") == 0
    # 176 with a Panel widget per input; now 160 alone, 161 after other tests built their pages in the process
    assert len(doc.models) <= 165, len(doc.models)
    file_form = settings.file_form.markup
    assert file_form.index("Runs file") < file_form.index('data-field="example"')
    assert 'class="md-field compare-example"' in file_form
    numbers = settings.form.markup
    order = ['data-field="gamma"', 'data-field="alpha"', 'data-field="resamples"', 'data-field="seed"',
             'data-slot="error"']
    assert [numbers.index(s) for s in order] == sorted(numbers.index(s) for s in order)
    for key in ("gamma", "alpha", "resamples", "seed"):  # the css classes the browser tests and benchmarks use
        assert f'class="md-field compare-{key}"' in numbers and f"compare-{key}-message" in numbers
    size = needed.form.markup
    assert size.index('data-field="beta"') < size.index("α and γ are shared with the comparison above.")
    assert 'class="md-field compare-beta"' in size


def test_compare_fields_follow_the_model_both_ways():
    view = md.Compare()
    form, file_form, size_form = view.settings.form, view.settings.file_form, view.runs_needed.form
    assert form.values["gamma"] == "0.75" and file_form.values["example"] == "compare_paired.csv"
    form.type("gamma", "0.8")  # what the browser sends
    assert view.model.gamma == 0.8 and view.model.result.gamma == 0.8
    size_form.type("beta", "0.1")
    assert view.model.beta == 0.1 and view.model.size.beta == 0.1
    view.model.seed = 3  # a link, the model: the box shows it
    assert form.values["seed"] == "3"
    file_form.type("example", "compare_unpaired.csv")
    assert view.model.example == "compare_unpaired.csv" and not view.model.paired
    file_form.type("example", "../../etc/passwd")  # not offered: ignored
    assert view.model.example == "compare_unpaired.csv" and file_form.values["example"] == "compare_unpaired.csv"
    view.settings.example.value = "nope.csv"  # not an option, even on the server: the model keeps its file
    assert view.model.example == "compare_unpaired.csv"
    view.model.example = "compare_paired.csv"
    assert file_form.values["example"] == "compare_paired.csv"


def test_compare_refusals_show_in_their_slots():
    view = md.Compare()
    form = view.settings.form
    form.type("resamples", "1e10")
    assert "Bootstrap resamples must be a whole number" in form.slots["resamples:message"]
    assert view.model.resamples == 10000 and "Showing the last valid" in view.answer.stale.object
    view.upload._set(upload_error="runs file must be a file of at most 10 MiB; got 'big.csv', more than 12 MiB")
    assert "at most 10 MiB" in form.slots["error"] == view.settings.error.object
    with param.edit_constant(view.model):  # what the model says while a worker thread compares new runs
        view.model.busy = True
    assert "Comparing the new runs…" in form.slots["error"]


def test_the_paired_checkbox_is_a_form_field_bound_to_the_model_both_ways():
    from meter_dashboard.comparison.view import Compare

    view = Compare()
    form = view.settings.form
    assert 'class="md-field compare-paired"' in form.markup and 'type="checkbox"' in form.markup
    assert form.values["paired"] == "true" and view.model.paired
    form.type("paired", "false")
    assert view.model.paired is False
    form.type("paired", "1")  # not a checkbox's value: refused, the model keeps its own
    assert view.model.paired is False and form.values["paired"] == "false"
    view.model.paired = True
    assert form.values["paired"] == "true"
