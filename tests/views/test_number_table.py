"""ui.table.NumberTable: the planner's signals, ranges and ε as one model (issue 29); what the browser sends."""
from __future__ import annotations

import logging

import pytest

from meter_dashboard.core.validation import MAX_NUMBER_CHARS, InputError
from meter_dashboard.meter import view as planner_view
from meter_dashboard.meter.model import PRESETS
from meter_dashboard.ui.table import NumberTable

COLUMNS = [{"key": "n", "title": "#", "editable": False, "digits": None},
           {"key": "low", "title": "from <b>", "editable": False, "digits": 4},
           {"key": "eps", "title": "ε", "editable": True, "digits": 4}]


def _table(rows=None):
    edits: list = []
    refused: list = []
    table = NumberTable(COLUMNS, rows or [[1, 0.0, 0.01], [2, 0.5, 0.02]], caption='Signals "<i>"', row_label="signal",
                        on_edit=lambda *a: edits.append(a), on_refused=lambda *a: refused.append(a))
    return table, edits, refused


def _typed(table, row, column, text, n=[0]):
    """What the table's script does when a person commits a box: the browser sets the table's ``edit``."""
    n[0] += 1
    table.edit = {"row": row, "column": column, "text": text, "n": n[0]}


def test_the_markup_is_a_captioned_table_with_escaped_column_headers():
    table = _table()[0]
    markup = table.markup
    assert markup.startswith('<div class="md-number-table"><table><caption class="md-hidden">')
    assert "Signals &quot;&lt;i&gt;&quot;" in markup and "<i>" not in markup
    assert '<th scope="col">from &lt;b&gt;</th>' in markup and "<b>" not in markup
    assert markup.count('<th scope="col">') == 3 and "<tbody></tbody>" in markup  # the rows are the browser's
    assert "style=" not in markup
    # the script never inserts the server's data as HTML: cells get textContent, boxes a value
    script = NumberTable._esm
    assert script.count("innerHTML") == 1 and "el.innerHTML = model.markup" in script
    assert "textContent = text" in script and "box.value = text" in script
    assert 'inputMode = "decimal"' in script and "aria-label" in script
    assert "eval(" not in script and "Function(" not in script


def test_a_number_typed_reaches_the_server_parsed_and_the_rows_stay_the_server_s():
    table, edits, refused = _table()
    _typed(table, 1, "eps", " 3e-2 ")
    assert edits == [(1, "eps", 0.03)] and refused == []
    assert table.rows == [[1, 0.0, 0.01], [2, 0.5, 0.02]]  # the caller decides what it shows


@pytest.mark.parametrize("text, rule", [
    ("abc", "must be a number; got 'abc'"),
    ("1+1", "must be a number; got '1+1'"),
    ("__import__('os')", "must be a number"),
    ("nan", "must be a finite number"),
    ("inf", "must be a finite number"),
    ("1" * (MAX_NUMBER_CHARS + 1), f"of at most {MAX_NUMBER_CHARS} characters"),
    ("9" * 5000, f"of at most {MAX_NUMBER_CHARS} characters; got 5,000 characters"),
])
def test_text_that_is_no_number_is_refused_naming_the_cell_and_the_last_good_rows_stay(text, rule):
    table, edits, refused = _table()
    _typed(table, 0, "eps", text)
    assert edits == []
    [(row, key, error)] = refused
    assert (row, key) == (0, "eps") and isinstance(error, InputError)
    assert str(error).startswith("signal 1: ε ") and rule in str(error)
    assert len(str(error)) < 200  # a long text is not echoed back
    assert table.invalid == ["0:eps"] and table.rows == [[1, 0.0, 0.01], [2, 0.5, 0.02]]
    _typed(table, 1, "eps", "0.03")  # the next good number: the refused box shows its value again
    assert table.invalid == [] and edits == [(1, "eps", 0.03)]
    _typed(table, 0, "eps", "x")
    table.rows = [[1, 0.0, 0.02]]  # new values from the server clear it too
    assert table.invalid == []


@pytest.mark.parametrize("edit", [
    {"row": 0, "column": "low", "text": "0.2"},        # a read-only column
    {"row": 0, "column": "nope", "text": "0.2"},       # no such column
    {"row": 2, "column": "eps", "text": "0.2"},        # no such row (the rows changed meanwhile)
    {"row": -1, "column": "eps", "text": "0.2"},
    {"row": True, "column": "eps", "text": "0.2"},
    {"row": "0", "column": "eps", "text": "0.2"},
    {"row": 0, "column": "eps", "text": 0.2},          # not text
    {"column": "eps", "text": "0.2"},
])
def test_an_edit_of_no_editable_cell_is_ignored_and_logged(edit, caplog):
    table, edits, refused = _table()
    with caplog.at_level(logging.WARNING, logger="meter_dashboard.ui.table"):
        table.edit = edit
    assert edits == [] and refused == [] and table.invalid == []
    assert "ignored an edit of no editable cell" in caplog.text


def test_the_browser_s_property_change_reaches_the_server():
    """Through the Bokeh model, as a served page's browser changes it."""
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    table, edits, refused = _table()
    doc = Document()
    with set_curdoc(doc):
        root = table.get_root(doc)
        doc.add_root(root)
    root.data.edit = {"row": 0, "column": "eps", "text": "0.015", "n": 7}
    assert edits == [(0, "eps", 0.015)]
    root.data.edit = {"row": 0, "column": "eps", "text": "oops", "n": 8}
    assert refused and root.data.invalid == ["0:eps"]  # and the browser is told which box was refused
    table.rows = [[1, 0.0, 0.015], [2, 0.5, 0.02]]
    assert root.data.rows == table.rows and root.data.invalid == []


# ---------------------------------------------------------------------- in the planner
@pytest.fixture
def planner():
    page = planner_view.Planner()
    yield page
    page.plan.stop_work()


def test_the_planner_s_table_shows_each_signal_s_range_and_epsilon(planner):
    table = planner.meter_table
    assert "meter-table" in table.css_classes
    assert [c["title"] for c in table.columns] == ["#", "from", "to", "ε"]
    assert [c["key"] for c in table.columns if c["editable"]] == ["to", "epsilon"]
    assert all(c["digits"] == 4 for c in table.columns[1:])  # 0.0100, as before
    plan = planner.plan
    assert table.rows == [[i + 1, plan.ranges[i], plan.ranges[i + 1], e] for i, e in enumerate(plan.epsilon)]


def test_editing_epsilon_or_a_range_end_updates_the_plan(planner):
    table, plan = planner.meter_table, planner.plan
    _typed(table, 1, "epsilon", "0.03")
    assert plan.epsilon == [0.01, 0.03, 0.03, 0.04, 0.05] and table.rows[1][3] == 0.03
    _typed(table, 0, "to", "0.004")
    assert plan.ranges[:2] == [0.0, 0.004] and table.rows[1][1] == 0.004  # the next signal's "from" follows
    assert planner.inputs.error_pane("meter").object == ""


def test_a_refused_cell_shows_the_planner_s_message_and_keeps_the_plan(planner):
    table, plan = planner.meter_table, planner.plan
    before = list(plan.epsilon)
    _typed(table, 2, "epsilon", "0.0x")
    message = planner.inputs.error_pane("meter").object
    assert "ranges and ε must be numbers" in message and "signal 3: ε must be a number" in message
    assert plan.epsilon == before and table.rows[2][3] == before[2] and planner.inputs.stale()
    _typed(table, 2, "epsilon", "0.03")
    assert planner.inputs.error_pane("meter").object == "" and not planner.inputs.stale()
    _typed(table, 2, "epsilon", "x")
    plan.set_signals(6)  # new values: the refused box shows its value again, its message goes
    assert table.invalid == [] and planner.inputs.error_pane("meter").object == "" and not planner.inputs.stale()


def test_a_decreasing_epsilon_gets_the_plan_s_own_message_beside_the_table(planner):
    _typed(planner.meter_table, 0, "epsilon", "0.09")
    assert "epsilon must be non-decreasing" in planner.inputs.error_pane("meter").object
    assert planner.meter_table.rows[0][3] == 0.09  # what was typed, shown with the message


def test_the_rows_follow_m_a_preset_and_a_uniform_epsilon(planner):
    table, plan = planner.meter_table, planner.plan
    plan.set_signals(7)
    assert [r[0] for r in table.rows] == list(range(1, 8)) and len(table.rows) == 7
    plan.set_signals(3)
    assert len(table.rows) == 3 and table.rows[-1][2] == plan.ranges[-1]
    plan.set_uniform_epsilon(0.02)
    assert [r[3] for r in table.rows] == [0.02] * 3
    plan.apply_preset(next(iter(PRESETS)))
    assert [r[3] for r in table.rows] == list(plan.epsilon)


def test_the_meter_table_is_one_model():
    """Issue 29: the Tabulator was 21 models; the table is one (with its data model and stylesheets)."""
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    page = planner_view.Planner()
    try:
        doc = Document()
        with set_curdoc(doc):
            doc.add_root(page.meter_table.get_root(doc))
        kinds = sorted(type(m).__name__ for m in doc.models)
        assert kinds.count("ReactiveESM") == 1 and len(kinds) <= 5, kinds  # itself, its data, its stylesheets
    finally:
        page.plan.stop_work()
