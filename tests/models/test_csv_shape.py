"""Issue 31: a CSV whose shape costs more than its size is refused before it is parsed, by every reader.

A wide header of empty fields above narrow rows (the readers pad every row to the widest: a
24 KiB body took 5 s and 350 MiB), a 1 MiB row, a row of tens of thousands of fields: each
reader of a file a person gives refuses them naming the line (or row) and the limit, with
its peak memory (tracemalloc, which numpy and pandas report to) a small multiple of the
body.  Times are measured in tests/benchmarks/test_bench_csv_shape.py, never asserted here.
"""
from __future__ import annotations

import tracemalloc

import pandas  # noqa: F401  (imported before any memory is traced: the readers import it lazily)
import pytest

from meter_dashboard.approvals import model as approve_model
from meter_dashboard.ci.trace import read_ci_trace
from meter_dashboard.cli import main
from meter_dashboard.comparison import model as mc
from meter_dashboard.core.files import MAX_FIELDS, MAX_ROW_BYTES, PADDING_SLACK, check_csv_shape
from meter_dashboard.core.validation import InputError
from meter_dashboard.leaderboard import model as ml
from meter_dashboard.session.trace import read_trace
from meter_dashboard.testsets.files import read_labels, read_predictions

MIB = 1 << 20

#: reader -> (read bytes, header, a valid row with {i}, the word for a line in its messages)
READERS = {
    "predictions": (read_predictions, "id,prediction", "a{i},b", "row"),
    "labels": (read_labels, "id,label", "a{i},b", "row"),
    "session trace": (lambda data: read_trace(data, format="csv"), "step,val_accuracy,test_accuracy",
                      "{i},0.5,0.5", "row"),
    "ci commits": (read_ci_trace, "commit,n,o,d", "c{i},0.5,0.5,0.1", "line"),
    "ci predictions": (read_ci_trace, "label,m0,m1", "x,x,y", "line"),
    "ladder losses": (ml.read_losses, "s1,s2", "0,1", "line"),
    "ladder page": (lambda data: ml.LadderReplayModel.prepare(data, "up.csv"), "s1,s2", "0,1", "line"),
    "compare runs": (mc.read_runs, "a,b", "0.5,0.6", "line"),
    "compare page": (lambda data: mc.CompareModel.prepare(data, "up.csv"), "a,b", "0.5,0.6", "line"),
    "approve trace": (approve_model.ApproveModel.read_trace, "orig,m1", "0,1", "line"),
}


def wide_header(header: str, row: str, empty: int = 12_000, rows: int = 2000) -> bytes:
    """The issue's body: a header with thousands of empty fields, then narrow rows."""
    return (header + "," * empty + "\n" + "".join(row.format(i=i) + "\n" for i in range(rows))).encode()


def long_row(header: str, row: str) -> bytes:
    """A valid first row, then a row of 1 MiB (half a million empty fields)."""
    return (header + "\n" + row.format(i=0) + "\n" + "0," * (MIB // 2) + "\n").encode()


def many_fields(header: str, row: str) -> bytes:
    """A row under the byte limit with more fields than any file has (a comma each)."""
    return (header + "\n" + row.format(i=0) + "\n" + "," * (MAX_FIELDS + 10) + "\n").encode()


def refused(read, data: bytes) -> tuple[InputError, int]:
    """The InputError ``read`` raises for ``data``, and the peak memory it traced meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            read(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return info.value, peak


@pytest.mark.parametrize("reader", READERS)
def test_a_wide_header_of_empty_fields_is_refused_naming_the_row_and_the_limit(reader):
    read, header, row, word = READERS[reader]
    data = wide_header(header, row)
    error, peak = refused(read, data)
    fields = header.count(",") + 12_001
    assert error.location == f"{word} 2" and f"as wide as {word} 1 ({fields:,} fields)" in str(error), str(error)
    assert "cells of a" in str(error)
    assert peak <= 8 * len(data) + MIB, f"{reader}: {peak / MIB:.1f} MiB for a {len(data) / 1024:.0f} KiB body"


@pytest.mark.parametrize("reader", READERS)
def test_a_1_mib_row_is_refused_naming_the_row_and_the_limit(reader):
    read, header, row, word = READERS[reader]
    data = long_row(header, row)
    error, peak = refused(read, data)
    assert str(error) == (f"{word} 3: row must be at most {MAX_ROW_BYTES:,} bytes long (256 KiB); "
                          f"got {MIB:,} bytes")
    assert peak <= 8 * len(data) + MIB, f"{reader}: {peak / MIB:.1f} MiB for a 1 MiB body"


@pytest.mark.parametrize("reader", READERS)
def test_a_row_of_too_many_fields_is_refused(reader):
    read, header, row, word = READERS[reader]
    error, _ = refused(read, many_fields(header, row))
    assert str(error) == f"{word} 3: row must be at most {MAX_FIELDS:,} fields; got {MAX_FIELDS + 11:,} fields"


def test_a_header_wider_than_the_field_limit_is_refused_on_its_line():
    error, _ = refused(read_predictions, wide_header("id,prediction", "a{i},b", empty=76_000, rows=10))
    assert str(error) == f"row 1: row must be at most {MAX_FIELDS:,} fields; got 76,002 fields"


@pytest.mark.parametrize("command", [["ladder"], ["compare"], ["approve"], ["replay"], ["ci", "--condition",
                                     "n - o > 0.02 +/- 0.01", "--trace"]])
def test_the_cli_readers_refuse_a_wide_header_with_one_line(command, tmp_path, capsys):
    header, row = {"ladder": ("s1,s2", "0,1"), "compare": ("a,b", "0.5,0.6"), "approve": ("orig,m1", "0,1"),
                   "replay": ("step,val_accuracy,test_accuracy", "{i},0.5,0.5"),
                   "ci": ("commit,n,o,d", "c{i},0.5,0.5,0.1")}[command[0]]
    path = tmp_path / "wide.csv"
    path.write_bytes(wide_header(header, row))
    with pytest.raises(SystemExit) as exit_:
        main([*command, str(path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "2: row must be as wide as" in err and "12,00" in err, err


def test_testset_create_refuses_a_labels_file_with_a_1_mib_row(tmp_path, capsys):
    path = tmp_path / "labels.csv"
    path.write_bytes(long_row("id,label", "a{i},b"))
    with pytest.raises(SystemExit) as exit_:
        main(["testset", "create", "demo", "--labels", str(path), "--steps", "4", "--epsilon", "0.05,0.1",
              "--delta", "0.1", "--store", f"sqlite:///{tmp_path / 's.sqlite'}"])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 2 and f"labels.csv, row 3: row must be at most 262,144 bytes long" in err, err


# ---------------------------------------------------------------------------- the rule itself
def test_valid_files_pass_whatever_their_line_endings_blank_lines_and_quotes():
    for ending in ("\n", "\r\n", "\r"):
        check_csv_shape(ending.join(["a,b", "0,1", "", "1,0.5", ""]))
    check_csv_shape('id,prediction\n"x, with a comma",1\n"two\nlines",2\n')
    wide = ",".join(f"m{j}" for j in range(10_001)) + "\n" + ("0.25," * 10_000 + "0.5\n") * 20
    check_csv_shape(wide)  # a modification trace at its 10,000 modifications
    check_csv_shape("a,b,c,d\n" + "\n" * 1_000_000)  # blank lines: the readers skip them
    check_csv_shape(b"a;b\n" + b"0;1\n" * 10, delimiter=";")
    check_csv_shape("")


def test_a_row_exactly_at_the_limits_passes_and_one_more_is_refused():
    check_csv_shape("a\n" + "x" * MAX_ROW_BYTES + "\n")
    with pytest.raises(InputError, match=r"^line 2: row must be at most 262,144 bytes long"):
        check_csv_shape("a\n" + "x" * (MAX_ROW_BYTES + 1) + "\n")
    check_csv_shape("," * (MAX_FIELDS - 1) + "\n" + "," * (MAX_FIELDS - 1) + "\n")
    with pytest.raises(InputError, match=f"^line 2: row must be at most {MAX_FIELDS:,} fields; got"):
        check_csv_shape("a\n" + "," * MAX_FIELDS + "\n")


def test_padding_is_bounded_by_the_file_not_by_its_widest_row():
    """A few short rows are fine; rows short enough that padding them passes the file's bytes are not."""
    header = "a" + ",a" * 999
    full = ",".join(["1"] * 1000)
    check_csv_shape(header + "\n" + (full + "\n") * 50 + "1\n" * 50)
    some = header + "\n" + "1\n" * 60
    assert 999 * 60 <= len(some) + PADDING_SLACK  # the cells padding adds: within the slack
    check_csv_shape(some)
    with pytest.raises(InputError) as info:
        check_csv_shape(header + "\n" + "1\n" * 5000)
    assert str(info.value).startswith("line 2: row must be as wide as line 1 (1,000 fields): padding the narrower "
                                      "rows to it would make 5,001,000 cells of a")
    assert str(info.value).endswith("; got 1 field")


def test_empty_lines_count_as_rows_for_a_reader_that_keeps_them():
    text = "a" + ",a" * 99 + "\n" + "\n" * 5000
    check_csv_shape(text)
    with pytest.raises(InputError, match=r"^row 2: row must be as wide as row 1 \(100 fields\)"):
        check_csv_shape(text, row="row", empty_rows=True)


def test_line_numbers_count_crlf_once():
    with pytest.raises(InputError, match=r"^line 3: "):
        check_csv_shape("a,b\r\n0,1\r\n" + "x" * (MAX_ROW_BYTES + 1) + "\r\n")
    with pytest.raises(InputError, match=r"^line 3: "):
        check_csv_shape("a,b\r0,1\r" + "x" * (MAX_ROW_BYTES + 1) + "\r")
