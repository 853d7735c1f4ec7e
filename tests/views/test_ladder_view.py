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
    inputs.variant_form.type("variant", "fixed_step")  # what the browser sends
    assert replay.variant == "fixed_step" and replay.result.step == 0.01 and inputs.step.visible
    inputs.variant_form.type("variant", "bogus")  # not offered: ignored
    assert replay.variant == "fixed_step" and inputs.variant_form.values["variant"] == "fixed_step"
    inputs.variant.value = "bogus"  # not an option, even on the server: the model keeps its variant
    assert replay.variant == "fixed_step" and inputs.variant.value == "fixed_step"
    replay.variant = "parameter_free"  # a link, the model: the buttons show it and the step hides
    assert inputs.variant_form.values["variant"] == "parameter_free" and not inputs.step.visible
    inputs.example_form.type("example", "ladder_ties.csv")
    assert replay.example == "ladder_ties.csv" and replay.result.submissions == 5
    inputs.step.type("step", "0.25")
    assert replay.step == 0.25 and inputs.step_input.text.value == "0.25"
    replay.delta = 0.1
    assert inputs.delta_form.values["delta"] == inputs.delta_input.text.value == "0.1"


def test_refusals_show_in_their_slots():
    view = md.Ladder(run_attack=False)
    inputs = view.replay_inputs
    before = view.replay.result
    inputs.delta_form.type("delta", "abc")
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


def test_the_label_bound_and_the_attack_inputs_are_forms():
    """Issue 29: the sizing's four boxes are one Form; the attack's are three around the shown-or-hidden step."""
    import panel as pn

    from meter_dashboard.ui.form import Form

    view = md.Ladder(run_attack=False)
    bound, attack = view.label_bound, view.boosting
    size = bound.size_form.markup
    order = ['data-field="epsilon"', 'data-field="step"', 'data-field="submissions"', 'data-field="delta"']
    assert [size.index(s) for s in order] == sorted(size.index(s) for s in order)
    assert all(f"size-{name}-message" in size for name in ("epsilon", "step", "submissions", "delta"))
    first = attack.attack_form.markup
    order = ['data-field="labels"', 'data-field="submissions"', "<b>Ladder</b>", "Parameter-free (Algorithm 2)"]
    assert [first.index(s) for s in order] == sorted(first.index(s) for s in order)
    assert 'data-field="trials"' in attack.attack_runs.markup and 'data-field="seed"' in attack.attack_runs.markup
    for section, css in ((bound, "ladder-controls"), (attack, "ladder-controls")):
        controls = next(c for c in section.__panel__().select(pn.Column) if css in c.css_classes)
        kinds = [type(m).__name__ for m in _models(controls)]
        assert not {"TextInput", "RadioBoxGroup"} & set(kinds)
        assert sum(isinstance(o, Form) for o in controls.objects) == (1 if section is bound else 3)
    assert len(_models(next(c for c in bound.__panel__().select(pn.Column) if "ladder-controls" in c.css_classes))) <= 12
    assert not attack.attack_step.visible
    attack.attack_form.type("variant", "fixed_step")  # what the browser sends
    assert view.attack.variant == "fixed_step" and attack.attack_step.visible
    attack.attack_runs.type("trials", "0")
    assert view.attack.trials == 5 and "Trials (averaged)" in attack.attack_runs.slots["trials:message"]
    bound.size_form.type("submissions", "1000")
    assert view.size.submissions == 1000 and "ladder-labels" in bound.size_headlines.object


def test_the_served_first_view_has_no_panel_input_widgets():
    """Issue 29: the document a served /ladder sends first (the replay; the sections below wait to be scrolled to)."""
    from meter_dashboard.app import pages
    from tests.views.test_approve_view import _served

    doc, _, onload, _session = _served(lambda: (pages.build("ladder"), None))
    enqueue = next(callback for callback, _ in onload if getattr(callback, "func", None) is pages._enqueue)
    root, name, module = enqueue.args
    pages._fill_in(doc, root=root, name=name, module=module)
    kinds = [type(m).__name__ for m in doc.models]
    assert not {"TextInput", "Select", "RadioBoxGroup"} & set(kinds)
    assert len([k for k in kinds if k.startswith("Form")]) == 4  # the replay's; not the bound's nor the attack's
    assert len(kinds) <= 85, len(kinds)  # 90 with a Panel widget per input and an empty link-message pane
