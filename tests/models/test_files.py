"""Shared CSV helpers (models/files.py): any line ending, bounded cells, the fast path agrees with the exact one."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import meter_dashboard.comparison.model as mc
import meter_dashboard.leaderboard.model as ml
from meter_dashboard.core.tables import MAX_CELL_CHARS, csv_rows, data_file, first_row, numeric_table
from meter_dashboard.core.validation import InputError


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_every_line_ending_gives_the_same_rows(ending):
    text = ending.join(["a,b", "0,1", "", "1,0.5"]) + ending
    assert csv_rows(text) == [(1, ["a", "b"]), (2, ["0", "1"]), (4, ["1", "0.5"])]
    assert first_row(ending * 3 + "x,y" + ending) == (4, ["x", "y"])
    assert first_row("  ,  \n\n") is None


def test_an_over_long_cell_is_named_by_line_and_column():
    # issue 15: a 200,000-character field raised csv.Error
    with pytest.raises(InputError) as info:
        csv_rows("a,b\n0,1\n1," + "7" * 200_000 + "\n")
    assert info.value.location == "line 3, column 2" and f"{MAX_CELL_CHARS:,}" in info.value.rule
    assert "200,000 characters" in str(info.value)


def test_the_fast_path_refuses_what_the_exact_path_must_explain():
    assert numeric_table("a,b\n0,1\n1,0\n", columns=2).tolist() == [[0, 1], [1, 0]]
    assert numeric_table("x,a,b\nq,0,1\nr,1,0\n", columns=3, usecols=[2, 1]).tolist() == [[0, 1], [1, 0]]
    for text in ("a,b\n0,1\n1,0,3\n", "a,b\n0,1\n1\n", "a,b\n0,x\n", "a,b\n0,\n", "a,b\n0,nan\n"):
        assert numeric_table(text, columns=2) is None, text
    many = "a,b\n" + "0,1\n" * 1000 + "1,oops\n"
    assert numeric_table(many, columns=2) is None
    for ending in ("\n", "\r", "\r\n"):
        assert numeric_table(many[:-7].replace("\n", ending), columns=2).shape == (1000, 2)
    assert numeric_table("\n\n a , b \n0,1\n", columns=2).tolist() == [[0, 1]]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 40), st.integers(0, 2**31))
def test_large_loss_files_read_the_same_by_both_paths(k, n, seed):
    rng = np.random.default_rng(seed)
    values = np.round(rng.random((n, k)), int(rng.integers(1, 17)))
    text = ",".join(f"s{j}" for j in range(k)) + "\n" + "\n".join(",".join(repr(float(v)) for v in row)
                                                               for row in values) + "\n"
    padding = "\n" * (ml.FAST_PATH_CHARS + 1)           # blank lines: forces the pandas path, same content
    fast, exact = ml.parse_losses(text + padding), ml.parse_losses(text)
    assert fast.names == exact.names and np.array_equal(fast.losses, exact.losses)
    assert np.array_equal(exact.losses, values)


def test_large_run_files_read_the_same_by_both_paths():
    rng = np.random.default_rng(2)
    a, b = np.round(rng.random(60_000), 6), np.round(rng.random(60_000), 6)
    text = "run,B,note,A\n" + "\n".join(f"{i},{b[i]},x,{a[i]}" for i in range(a.size)) + "\n"
    assert len(text) > mc.FAST_PATH_CHARS
    fast = mc.parse_runs(text)
    assert np.array_equal(fast.a, a) and np.array_equal(fast.b, b) and fast.complete_rows
    unpaired = mc.parse_runs(text + "60001,,x,0.5\n")             # an empty cell: read cell by cell
    assert unpaired.a.size == 60_001 and unpaired.b.size == 60_000 and not unpaired.complete_rows


def test_large_malformed_files_are_still_named_by_line_and_column():
    rows = ["a,b"] + ["0,1"] * 60_000
    rows[40_000] = "0,2"
    with pytest.raises(InputError) as info:
        ml.parse_losses("\n".join(rows) + "\n")
    assert info.value.location == "line 40001, column 2 (b)"
    rows[40_000] = "0,inf"
    with pytest.raises(InputError) as info:
        mc.parse_runs("\n".join(rows) + "\n")
    assert info.value.location == "line 40001, column 2"


def test_example_names_come_from_a_fixed_list():
    assert data_file("ladder_ties.csv", ml.LADDER_EXAMPLES).is_file()
    for name in ("../../etc/passwd", "compare_paired.csv", ""):
        with pytest.raises(InputError) as info:
            data_file(name, ml.LADDER_EXAMPLES)
        assert info.value.parameter == "example"
