"""The Ladder view outside a server (issue 29): every section is built at once, none waits to be scrolled to."""
from __future__ import annotations

import meter_dashboard as md
import meter_dashboard.leaderboard.model as ml


def test_outside_a_server_the_sections_below_the_fold_are_built_at_once():
    view = md.Ladder()
    assert view.size_seen.built and view.attack_seen.built
    assert view.size_seen.holder.objects == [view.label_bound.__panel__()]
    assert view.attack_seen.holder.objects == [view.boosting.__panel__()]
    assert "ladder-labels" in view.label_bound.size_headlines.object
    default = ml.boosting_attack(4000, 400, seed=0, trials=5)
    assert view.attack.result.complete
    assert list(view.attack_source.data["naive"]) == list(default.naive_public)


def _models(column) -> list:
    """The Bokeh models a browser is sent for ``column`` (one document, shared stylesheets counted once)."""
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        doc.add_root(column.get_root(doc))
    return list(doc.models)


def test_the_replay_inputs_are_four_forms_around_the_drop_area():
    """Issue 29: the file select, the variant, the step, δ and the messages are Form models, not Panel widgets."""
    from meter_dashboard.ui.form import Form

    view = md.Ladder(run_attack=False)
    inputs = view.replay_inputs
    import panel as pn

    controls = next(c for c in view.results().select(pn.Column) if "ladder-controls" in c.css_classes)
    assert controls.objects == inputs.parts() == [inputs.example_form, view.upload, inputs.variant_form,
                                                   inputs.step, inputs.delta_form]
    assert all(isinstance(form, Form) for form in (inputs.example_form, inputs.variant_form, inputs.step,
                                                   inputs.delta_form))
    assert 'data-field="example"' in inputs.example_form.markup and "ladder-example" in inputs.example_form.markup
    variant = inputs.variant_form.markup  # the same text, in the same order, as the widgets it replaces
    order = ["<b>Ladder</b>", "Parameter-free (Algorithm 2)", "Fixed step η (Algorithm 1)"]
    assert [variant.index(s) for s in order] == sorted(variant.index(s) for s in order)
    assert "ladder-step" in inputs.step.markup and 'data-field="step"' in inputs.step.markup
    delta = inputs.delta_form.markup
    assert delta.index('data-field="delta"') < delta.index('data-slot="error"') and "ladder-error" in delta
    kinds = [type(m).__name__ for m in _models(controls)]
    assert not {"TextInput", "Select", "RadioBoxGroup"} & set(kinds)
    assert len(kinds) <= 18, len(kinds)  # 24 with a Panel widget per input


def test_the_choices_follow_the_model_both_ways_and_take_only_their_options():
    view = md.Ladder(run_attack=False)
    inputs, replay = view.replay_inputs, view.replay
    assert inputs.example_form.values["example"] == "ladder_leaderboard.csv"
    assert inputs.variant_form.values["variant"] == "parameter_free" and not inputs.step.visible
    inputs.variant_form.values = {**inputs.variant_form.values, "variant": "fixed_step"}  # what the browser sends
    assert replay.variant == "fixed_step" and replay.result.step == 0.01 and inputs.step.visible
    inputs.variant_form.values = {**inputs.variant_form.values, "variant": "bogus"}  # not offered: ignored
    assert replay.variant == "fixed_step" and inputs.variant_form.values["variant"] == "fixed_step"
    inputs.variant.value = "bogus"  # not an option, even on the server: the model keeps its variant
    assert replay.variant == "fixed_step" and inputs.variant.value == "fixed_step"
    replay.variant = "parameter_free"  # a link, the model: the buttons show it and the step hides
    assert inputs.variant_form.values["variant"] == "parameter_free" and not inputs.step.visible
    inputs.example_form.values = {**inputs.example_form.values, "example": "ladder_ties.csv"}
    assert replay.example == "ladder_ties.csv" and replay.result.submissions == 5
    inputs.step.values = {**inputs.step.values, "step": "0.25"}
    assert replay.step == 0.25 and inputs.step_input.text.value == "0.25"
    replay.delta = 0.1
    assert inputs.delta_form.values["delta"] == inputs.delta_input.text.value == "0.1"


def test_refusals_show_in_their_slots():
    view = md.Ladder(run_attack=False)
    inputs = view.replay_inputs
    before = view.replay.result
    inputs.delta_form.values = {**inputs.delta_form.values, "delta": "abc"}
    assert view.replay.delta == 0.05 and view.replay.result is before
    assert "must be a number" in inputs.delta_form.slots["delta:message"] == inputs.delta_input.message_pane.object
    assert "Showing the last valid replay" in view.replay_answer.replay_stale.object
    view.upload._set(upload_error="losses file must be a file of at most 10 MiB; got 'big.csv', more than 12 MiB")
    assert "at most 10 MiB" in inputs.delta_form.slots["error"] == view.replay_error.object
    assert view.replay.result is before


def test_the_link_message_is_in_the_page_only_when_the_link_had_something_refused():
    """Issue 29: most links refuse nothing, and an empty pane still costs every session its models."""
    view = md.Ladder(run_attack=False)
    page = view.results()
    assert view.link_message not in page.objects and view.link_message.object == ""
    assert page.objects[0].margin == (10, 0, 24, 0)  # the place the empty pane took: nothing moves
