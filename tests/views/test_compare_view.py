"""The P(A>B) and Ladder views make a box's message pane only when it has something to say (issue 29).

The stale banners follow the boxes' text (checked before the banner looks), not their message panes:
asking every box for its pane made one per box on every page opened, most never needed.
"""
from __future__ import annotations

import meter_dashboard as md
from meter_dashboard.ui.style import HTML


def _message_panes(layout) -> list:
    return [p for p in layout.select(HTML) if "md-input-message" in p.css_classes]


def test_compare_has_no_message_pane_until_a_value_is_refused():
    view = md.Compare()
    layout = view.__panel__()
    assert _message_panes(layout) == [] and view.answer.stale.object == ""
    view.inputs["gamma"].text.value = "2"
    panes = _message_panes(layout)
    assert len(panes) == 1 and "γ (meaningful threshold) must be in (0.5, 1)" in panes[0].object
    assert "Showing the last valid" in view.answer.stale.object
    view.inputs["gamma"].text.value = "0.8"
    assert view.answer.stale.object == "" and view.model.gamma == 0.8


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
