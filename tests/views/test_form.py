"""ui.form.Form: a column of inputs as one model (issue 29), its messages from the browser, its markup."""
from __future__ import annotations

import logging

import param
import pytest

from meter_dashboard.ui.form import MAX_TEXT, Action, Box, Drawer, Field, Form, Note, Row, Slot
from meter_dashboard.ui.inputs import NumberInput


class Model(param.Parameterized):
    delta = param.Number(0.01, bounds=(0, 1), inclusive_bounds=(False, False), doc="δ: failure probability.")


def _form(**kw):
    pressed = []
    box, choice, message, note = Box(value="1"), Box(value="a"), Slot(), Slot()
    form = Form([
        Field("x", "X <b>bold</b>", box, message=message, description='say "hi" <script>', classes=("x-input",)),
        Field("c", "Choice", choice, kind="buttons", options=[("A <i>", "a"), ("B", "b")]),
        Note("<em>fixed</em>"), Note(slot=note, name="note"),
        Drawer("more", "More", [Row([Field("y", "Y", Box())])], classes=("more",)),
        Action("go", "Go", lambda: pressed.append(1), classes=("go",)),
    ], **kw)
    return form, box, choice, message, note, pressed


def test_the_markup_escapes_every_label_description_and_option():
    form = _form()[0]
    assert "<b>" not in form.markup and "X &lt;b&gt;bold&lt;/b&gt;" in form.markup
    assert "<script>" not in form.markup and 'data-tip="say &quot;hi&quot; &lt;script&gt;"' in form.markup
    assert "A &lt;i&gt;" in form.markup
    assert "<em>fixed</em>" in form.markup  # a note's fixed HTML is the server's own
    assert 'class="md-field x-input"' in form.markup and 'for="f-x"' in form.markup and 'id="f-x"' in form.markup
    assert '<details class="md-drawer" data-drawer="more">' in form.markup and "more-toggle" in form.markup
    assert "style=" not in form.markup  # widths are set by the script, never inline styles


def _typed(form, name, value):
    """What the form's script sends when a person commits a box (Form.type sends the same message)."""
    form._handle_msg({"kind": "value", "name": name, "value": value})


def test_what_the_browser_sends_reaches_the_box_and_the_server_answers_through_values_and_slots():
    form, box, choice, message, note, pressed = _form()
    seen = []
    box.param.watch(lambda e: seen.append(e.new), "value")
    _typed(form, "x", "2.5")
    assert box.value == "2.5" and seen == ["2.5"] and form.values["x"] == "1"  # the browser shows it: not sent back
    box.value = "3"  # the server changes it: the browser is told
    assert form.values["x"] == "3"
    message.show("<div class='md-error'>bad</div>")
    note.object = "<p>n</p>"
    assert form.slots == {"x:message": "<div class='md-error'>bad</div>", "note": "<p>n</p>"}
    box.disabled = True
    assert form.disabled == ["x"]
    _typed(form, "x", "4")  # a disabled box takes nothing: the browser is told its value again
    assert box.value == "3" and form.values["x"] == "3"
    _typed(form, "c", "b")
    assert choice.value == "b"
    form._handle_msg({"kind": "action", "name": "go"})
    assert pressed == [1]
    form.opened = ["more"]  # the browser opened the drawer
    assert form.drawer("more").is_open
    form.opened = []
    assert not form.drawer("more").is_open
    form.drawer("more").open()
    assert form.opened == ["more"]


@pytest.mark.parametrize("name, value", [
    ("nope", "1"), ("x", 1), ("x", "9" * (MAX_TEXT + 1)), ("c", "z"), (["x"], "1"),
])
def test_a_value_for_no_input_or_an_option_not_offered_is_ignored_logged_and_shown_back(name, value, caplog):
    form, box, choice, *_ = _form()
    before = (box.value, choice.value)
    with caplog.at_level(logging.WARNING, logger="meter_dashboard.ui.form"):
        _typed(form, name, value)
    assert (box.value, choice.value) == before
    assert form.values == {"x": "1", "c": "a", "y": ""}  # what the browser is told to show again
    assert any("form: ignored" in r.getMessage() for r in caplog.records)


def test_a_value_the_browser_sent_is_not_sent_back_but_the_server_s_own_changes_are():
    form, box, *_ = _form()
    sent = []
    form.param.watch(lambda e: sent.append(dict(e.new)), "values")
    form.type("x", "2")  # the browser shows "2" already: nothing to send
    assert box.value == "2" and sent == []
    box.value = "2.0"  # the server writes it its own way: sent
    assert sent == [{"x": "2.0", "c": "a", "y": ""}]
    form.type("x", "5")
    box.value = "2.0"  # back to what the property already holds: still sent (the browser shows "5")
    assert len(sent) == 2 and sent[-1]["x"] == "2.0"


@pytest.mark.parametrize("msg", ["not an object", {"kind": "action", "name": "x"}, {"kind": "eval", "name": "go"},
                                 {"kind": "value"}])
def test_a_message_naming_no_input_or_action_is_ignored_and_logged(msg, caplog):
    form, *_, pressed = _form()
    with caplog.at_level(logging.WARNING, logger="meter_dashboard.ui.form"):
        form._handle_msg(msg)
    assert pressed == [] and any("form: ignored" in r.getMessage() for r in caplog.records)


def test_a_drawer_the_form_does_not_have_is_not_opened(caplog):
    form = _form()[0]
    with caplog.at_level(logging.WARNING, logger="meter_dashboard.ui.form"):
        form.opened = ["more", "elsewhere"]
    assert form.opened == ["more"] and any("form: ignored" in r.getMessage() for r in caplog.records)


def test_a_checked_input_as_a_field_parses_refuses_and_follows_its_model():
    model = Model()
    delta = NumberInput(model, "delta", label="δ", slider={"start": 0.001, "end": 0.2, "step": 0.001}, field="delta",
                        css_classes=["delta-input"])
    form = Form([delta.field()])
    assert 'type="range" min="0.001" max="0.2" step="0.001"' in form.markup
    assert "δ: failure probability." in form.markup  # the parameter's doc is the box's description
    _typed(form, "delta", "1.5")
    assert model.delta == 0.01 and "must be in (0, 1); got &#x27;1.5&#x27;" in form.slots["delta:message"]
    _typed(form, "delta", "0.05")
    assert model.delta == 0.05 and form.slots["delta:message"] == ""
    model.delta = 0.2
    assert form.values["delta"] == "0.2"
    with pytest.raises(TypeError, match="its Form shows it"):
        delta.__panel__()
    with pytest.raises(TypeError, match="not a form field"):
        NumberInput(model, "delta", label="δ").field()


def test_an_item_of_no_known_kind_is_refused_with_what_it_must_be():
    with pytest.raises(TypeError, match="must be a Field, Note, Row, Drawer or Action; got str"):
        Form(["text"])
    with pytest.raises(ValueError, match="kind must be 'text', 'select', 'buttons', 'toggles' or 'checkbox'; got 'radio'"):
        Form([Field("x", "X", Box(), kind="radio")])


def test_toggles_take_any_of_their_options_and_nothing_else(caplog):
    box = Box(value="")
    form = Form([Field("open", "Open", box, kind="toggles", options=[("A", "a"), ("B", "b"), ("C", "c")])])
    assert form.multiple == ["open"] and form.markup.count('data-choice="open"') == 3
    _typed(form, "open", "a,c")
    assert box.value == "a,c"
    _typed(form, "open", "")
    assert box.value == ""
    with caplog.at_level(logging.WARNING, logger="meter_dashboard.ui.form"):
        _typed(form, "open", "a,zzz")
    assert box.value == "" and form.values["open"] == ""
    with pytest.raises(ValueError, match="must not contain commas"):
        Form([Field("t", "T", Box(), kind="toggles", options=[("x", "a,b")])])


def test_an_action_s_label_and_visibility_follow_the_server():
    form = Form([Action("pin", "Pin", lambda: None), Action("unpin", "Unpin", lambda: None, hidden=True, color="default")])
    assert form.labels == {"pin": "Pin", "unpin": "Unpin"} and form.hidden == ["unpin"]
    assert 'data-holds="unpin" hidden' in form.markup and "md-button-default" in form.markup
    form.set_label("pin", "Pin instead")
    form.show_action("unpin")
    assert form.labels["pin"] == "Pin instead" and form.hidden == []
    form.show_action("unpin", False)
    assert form.hidden == ["unpin"]


class Choice(param.Parameterized):
    kind = param.Selector(default="a", objects=["a", "b"])
    on = param.Boolean(default=False)


def test_a_linked_box_follows_its_parameter_both_ways_and_takes_only_what_is_offered():
    from meter_dashboard.ui.form import linked

    model = Choice()
    box = linked(model, "kind")
    box.value = "b"
    assert model.kind == "b"
    box.value = "zzz"  # not one of the parameter's objects, even set on the server: the box shows the model's again
    assert model.kind == "b" and box.value == "b"
    model.kind = "a"
    assert box.value == "a"
    narrow = linked(model, "kind", offered=["a"])
    narrow.value = "b"
    assert model.kind == "a" and narrow.value == "a"
    pressed = linked(model, "on", shown=lambda v: "on" if v else "", parsed=lambda t: t == "on")
    assert pressed.value == ""
    pressed.value = "on"
    assert model.on is True
    model.on = False
    assert pressed.value == ""


def test_a_checkbox_takes_true_or_false_only(caplog):
    on = Box(value="true")
    form = Form([Field("on", "Paired <runs>", on, kind="checkbox", classes=("on-box",))])
    assert ('<label class="md-check" for="f-on"><input type="checkbox" id="f-on" data-field="on"><span>Paired '
            '&lt;runs&gt; </span></label>') in form.markup
    _typed(form, "on", "false")
    assert on.value == "false"
    with caplog.at_level(logging.WARNING):
        _typed(form, "on", "maybe")
    assert on.value == "false" and "not one of its options" in caplog.text
