"""CSV tables and shipped example files: the helpers every family's file reader shares.

- :func:`csv_rows`: the non-blank rows of a CSV text with their line numbers, read by
  Python's :mod:`csv` module (any line ending: ``\\n``, ``\\r\\n`` or a lone ``\\r``); every
  failure, including a cell longer than the module's field limit, is an
  :class:`~meter_dashboard.core.validation.InputError` naming the line (and the column when
  it can be told).
- :func:`numeric_table`: the same text through pandas' C parser, for the common case of a
  clean file (about six times faster than :func:`csv_rows` and a fraction
  of its memory); it answers ``None`` whenever the file is not clean, so the reader then
  walks :func:`csv_rows` to say exactly where the problem is.  pandas' float parser gives the
  same floats as Python's ``float()`` (tested: tests/models/test_files.py), so both paths
  agree: pandas 3's default parser does; pandas 2's is asked for its round-trip parser
  (:func:`exact_floats`), as its default is off by one unit in the last place for some
  values (``0.9333333333333333``).
- :func:`data_file`: a shipped example, by name, from a fixed list (a name is never a
  path).

Reading the bytes (size limit, UTF-8) is :func:`meter_dashboard.core.files.read_text`'s job;
nothing here evaluates what it reads.
"""
from __future__ import annotations

import csv
import io
import warnings
from importlib import resources
from importlib.abc import Traversable

import numpy as np

from .validation import InputError, raw

__all__ = ["MAX_CELL_CHARS", "csv_rows", "first_row", "numeric_table", "data_file"]

#: The longest cell Python's csv module reads (its default field limit); longer cells are refused.
MAX_CELL_CHARS = csv.field_size_limit()


def _long_cell(text: str, line_number: int) -> tuple[int | None, int]:
    """(column, length) of the first over-long cell on physical line ``line_number`` (column None if unknown)."""
    lines = text.splitlines()
    line = lines[line_number - 1] if 0 < line_number <= len(lines) else ""
    for column, cell in enumerate(line.split(","), start=1):
        if len(cell) > MAX_CELL_CHARS:
            return column, len(cell)
    return None, len(line)


def _rows(text: str, parameter: str):
    """Yield ``(line number, stripped cells)`` of the non-blank rows; csv failures become InputError."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for cells in reader:
            if not cells or all(c.strip() == "" for c in cells):
                continue
            yield reader.line_num, [c.strip() for c in cells]
    except csv.Error as exc:
        line = reader.line_num
        if "field limit" in str(exc):
            column, length = _long_cell(text, line)
            where = f"line {line}" + (f", column {column}" if column else "")
            raise InputError("cell", f"at most {MAX_CELL_CHARS:,} characters long",
                             raw(f"{length:,} characters"), location=where) from None
        raise InputError(parameter, "a valid CSV file", str(exc), location=f"line {max(line, 1)}") from None


def csv_rows(text: str, *, parameter: str = "file") -> list[tuple[int, list[str]]]:
    """``[(line number, cells)]`` of the non-blank rows of a CSV text, cells stripped.

    Line numbers count physical lines from 1 (a quoted cell may span lines: its row
    carries the number of the line where it ends).  A cell longer than
    :data:`MAX_CELL_CHARS` or malformed quoting raises :class:`InputError` with the line
    (and the column when the line can be split at commas).
    """
    return list(_rows(text, parameter))


def first_row(text: str, *, parameter: str = "file") -> tuple[int, list[str]] | None:
    """The first non-blank row (the header) as ``(line number, cells)``; None for a blank text."""
    return next(_rows(text, parameter), None)


def exact_floats() -> dict:
    """Options for ``pandas.read_csv`` that read every float exactly as Python's ``float()`` does.

    pandas 3's default parser is exact (and its ``float_precision`` is deprecated); pandas 2's
    default is not, so it gets ``float_precision="round_trip"``.
    """
    import pandas as pd

    return {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


def numeric_table(text: str, *, columns: int, usecols=None) -> np.ndarray | None:
    """The CSV's values below its header as a float array, or ``None`` when the file is not clean.

    Clean means: pandas' C parser reads it without an error or a warning (a row with more
    cells than the header warns), every row has ``columns`` cells and every cell read is a
    number (an empty or non-numeric cell, a NaN, a short row give ``None``; infinities are
    left to the caller's checks).  ``usecols`` selects columns by position (they come back
    in file order).  One call to the C parser: call it from a worker thread for large texts
    (tests/benchmarks/test_bench_ladder.py measures what the event loop sees meanwhile).
    """
    import pandas as pd

    width = len(usecols) if usecols is not None else columns
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            frame = pd.read_csv(io.StringIO(text), header=0, index_col=False, skip_blank_lines=True,
                                usecols=usecols, engine="c", dtype=float, **exact_floats())
    except (ValueError, TypeError, OverflowError, Warning, pd.errors.ParserError):
        return None
    values = frame.to_numpy(dtype=float)
    if values.ndim != 2 or values.shape[1] != width or values.shape[0] == 0 or np.isnan(values).any():
        return None
    return values


def data_file(name: str, examples) -> Traversable:
    """The shipped data file ``name``, which must be one of ``examples`` (package data).

    ``name`` is looked up in the fixed list first, so a name such as ``../../etc/passwd``
    is refused with an :class:`InputError` listing the examples.
    """
    if name not in examples:
        raise InputError("example", "one of " + ", ".join(examples), name)
    path = resources.files("meter_dashboard").joinpath("data").joinpath(str(name))
    if not path.is_file():
        raise InputError("example", "one of " + ", ".join(examples), name)
    return path
