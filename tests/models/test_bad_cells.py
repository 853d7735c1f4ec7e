"""Every bad cell of a file named at once (issue 24): up to 10 by line and column, the rest counted.

One bad cell keeps its message word for word (the messages the other tests assert); several are
listed after it in reading order, each with its value (and its own rule where it differs).
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import meter_dashboard.approvals.trace as at
import meter_dashboard.comparison.model as mc
import meter_dashboard.leaderboard.model as ml
from meter_dashboard.ci.trace import read_ci_trace
from meter_dashboard.core.tables import MAX_NAMED_CELLS, BadCells, read_rows
from meter_dashboard.core.validation import InputError


def _error(reader, text):
    with pytest.raises(InputError) as info:
        reader(text)
    return info.value


def test_one_bad_cell_keeps_its_message_word_for_word():
    bad = BadCells()
    bad.add(InputError("loss", "a number in [0, 1]", "x", location="line 3, column 2 (b)"))
    err = bad.error()
    assert str(err) == "line 3, column 2 (b): loss must be a number in [0, 1]; got 'x'"
    assert (err.parameter, err.location, err.count) == ("loss", "line 3, column 2 (b)", 1)


def test_the_ladder_names_ten_bad_cells_and_counts_the_rest():
    rows = ["a,b"] + [f"0.5,{i / 40:.3f}" for i in range(20)]
    for i in range(2, 15):                            # 13 bad cells, lines 4..16, column 2
        rows[i] = f"0.5,bad{i}"
    err = _error(lambda t: ml.parse_losses(t), "\n".join(rows) + "\n")
    assert str(err) == ("line 3, column 2 (b): loss must be a number in [0, 1]; got 'bad2'; also "
                        + "; ".join(f"line {i + 1}, column 2 (b): got 'bad{i}'" for i in range(3, 12))
                        + "; and 3 more bad cells")
    assert err.count == 13 and len(err.cells) == MAX_NAMED_CELLS == 10


def test_compare_lists_cells_of_both_columns_in_reading_order():
    err = _error(mc.parse_runs, "a,b\n0.9,x\ninf,0.8\n0.7,0.6\nnan,y\n")
    assert str(err) == ("line 2, column 2: b must be a finite number (a performance, higher is better); got 'x'; "
                        "also line 3, column 1: a must be a finite number (a performance, higher is better); "
                        "got 'inf'; line 5, column 1: a must be a finite number (a performance, higher is better); "
                        "got 'nan'; line 5, column 2: got 'y'")


def test_approve_names_each_bad_loss_with_its_own_rule():
    text = b"o,a\n1,2\n1,x\n1," + b"9" * 41 + b"\n2,oops\n"
    err = _error(at.read_modification_trace, text)
    assert str(err) == ("line 3, column 2: loss (a) must be a finite number; got 'x'; also line 4, column 2: loss (a) "
                        f"must be a number of at most 40 characters; got '{'9' * 41}'; line 5, column 2: got 'oops'")
    assert [e.location for e in err.cells] == ["line 3, column 2", "line 4, column 2", "line 5, column 2"]


def test_ci_names_bad_estimates_and_empty_predictions():
    err = _error(read_ci_trace, "commit,n,o,d\na,abc,0.7,0.1\nb,0.8,7,0.1\nc,xyz,0.7,0.1\n")
    assert [e.location for e in err.cells] == ["line 2, column 'n'", "line 4, column 'n'", "line 3, column 'o'"]
    assert str(err).startswith("line 2, column 'n': n must be a number in [0, 1]") and "; also " in str(err)
    err = _error(read_ci_trace, "label,m0,m1\na,a,\nb,,b\nc,c,\n")
    assert [e.location for e in err.cells] == ["line 3, column 'm0'", "line 2, column 'm1'", "line 4, column 'm1'"]


def test_blank_and_comment_rows_keep_the_line_numbers_of_the_text():
    table = read_rows("# note\n\na,b\n\n0,1\r\n# again\n1,2\n", comments=True)
    assert table.header == ["a", "b"] and table.header_line == 3
    assert [table.line(i) for i in range(len(table.data))] == [5, 7]
    assert read_rows(" , \n\n") is None


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30), st.sets(st.integers(0, 59), min_size=1, max_size=60))
def test_every_bad_cell_is_counted_and_the_first_ten_are_named(rows, bad_positions):
    cells = [["0.5", "0.25"] for _ in range(rows)]
    bad = sorted(p for p in bad_positions if p < 2 * rows)
    if not bad:
        return
    for p in bad:
        cells[p // 2][p % 2] = f"x{p}"
    text = "a,b\n" + "\n".join(",".join(r) for r in cells) + "\n"
    err = _error(ml.parse_losses, text)
    named = [f"line {p // 2 + 2}, column {p % 2 + 1} ({'ab'[p % 2]})" for p in bad]   # reading order
    assert [e.location for e in err.cells] == named[:MAX_NAMED_CELLS] and err.count == len(bad)
    assert str(err).endswith(f"; and {len(bad) - MAX_NAMED_CELLS:,} more bad cells" if len(bad) > MAX_NAMED_CELLS
                             else f"got 'x{bad[min(len(bad), MAX_NAMED_CELLS) - 1]}'")
