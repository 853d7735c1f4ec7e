"""CSV tables and shipped example files: the one CSV reader every family's file reader shares.

- :func:`read_rows`: the rows of a CSV text (Python's :mod:`csv` module, any line ending:
  ``\\n``, ``\\r\\n`` or a lone ``\\r``), blank rows (and, when asked, ``#`` comment rows)
  skipped, as a :class:`Rows`: the header, the data rows as read, and each data row's line
  number (found only when a message needs it).  Every failure of the csv module, including a
  cell longer than its field limit, is a :class:`CsvError` naming the line (and the column
  when it can be told); a family may word it its own way.
- :func:`csv_rows`, :func:`first_row`: the same rows as ``(line number, stripped cells)``.
- :class:`BadCells`: a reader collects every bad cell it meets and refuses the file once, with
  the first :data:`MAX_NAMED_CELLS` named by line and column (the rest counted), so a person
  fixes a file in one pass instead of one upload per cell.
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
- :func:`spreadsheet_frame`, :func:`spreadsheet_cell`: a table as it may be written to a CSV
  file meant for people (the pages' downloads): a text cell a spreadsheet would run as a
  formula (starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return; OWASP's
  "CSV injection") gets a leading ``'``, so the spreadsheet shows it as text; numbers,
  including text that is a plain number such as ``-0.5``, stay numbers.  Never applied to a
  file a program reads back (a test set's labels: there the bytes are the user's).
- :class:`TableModel`: the param model of a page whose input is one table, a shipped example
  or an uploaded file (/ladder's replay, /compare's runs): the example switch, reading an
  upload (:meth:`~TableModel.prepare` in a worker thread, then :meth:`~TableModel.apply_table`
  or :meth:`~TableModel.fail`), and the read-only ``error`` and ``busy``.

Reading the bytes (size limit, UTF-8) is :func:`meter_dashboard.core.files.read_text`'s job;
nothing here evaluates what it reads.
"""
from __future__ import annotations

import csv
import io
import re
import warnings
from collections.abc import Iterator
from importlib import resources
from importlib.abc import Traversable

import numpy as np
import param

from .files import check_csv_shape
from .runtime import OffloadedModel
from .validation import InputError, raw

__all__ = ["MAX_CELL_CHARS", "MAX_NAMED_CELLS", "CsvError", "Rows", "read_rows", "csv_rows", "first_row",
           "BadCells", "numeric_table", "data_file", "TableModel", "UPLOADED", "FORMULA_STARTS",
           "spreadsheet_cell", "spreadsheet_frame"]

#: The longest cell Python's csv module reads (its default field limit); longer cells are refused.
MAX_CELL_CHARS = csv.field_size_limit()
#: Bad cells named in one message; the rest are counted.
MAX_NAMED_CELLS = 10


class CsvError(InputError):
    """The csv module could not read a text: ``line`` (1-based), ``column`` (1-based or None), ``length``.

    ``length`` is the over-long cell's length (None when the problem is not a long cell);
    ``reason`` is the csv module's own message.
    """

    def __init__(self, parameter: str, rule: str, got, *, location: str, line: int, column: int | None = None,
                 length: int | None = None, reason: str = ""):
        super().__init__(parameter, rule, got, location=location)
        self.line, self.column, self.length, self.reason = line, column, length, reason


def _long_cell(text: str, line_number: int) -> tuple[int | None, int]:
    """(column, length) of the first over-long cell on physical line ``line_number`` (column None if unknown)."""
    lines = text.splitlines()
    line = lines[line_number - 1] if 0 < line_number <= len(lines) else ""
    for column, cell in enumerate(line.split(","), start=1):
        if len(cell) > MAX_CELL_CHARS:
            return column, len(cell)
    return None, len(line)


def _csv_error(exc: csv.Error, text: str, line: int, parameter: str) -> CsvError:
    """The csv module's failure at ``line`` as a :class:`CsvError` naming the line (and the long cell's column)."""
    if "field limit" in str(exc):
        column, length = _long_cell(text, line)
        where = f"line {line}" + (f", column {column}" if column else "")
        return CsvError("cell", f"at most {MAX_CELL_CHARS:,} characters long", raw(f"{length:,} characters"),
                        location=where, line=line, column=column, length=length, reason=str(exc))
    line = max(line, 1)
    return CsvError(parameter, "a valid CSV file", str(exc), location=f"line {line}", line=line, reason=str(exc))


def _skipped(cells: list, comments: bool) -> bool:
    """A blank row (no cell with text), or a ``#`` comment row when ``comments``."""
    if not cells:
        return True
    first = cells[0].strip()
    if first:
        return comments and first.startswith("#")
    return not any(c.strip() for c in cells)


def _reader(text: str, skipinitialspace: bool):
    return csv.reader(io.StringIO(text, newline=""), skipinitialspace=skipinitialspace)


def _iter_rows(text: str, parameter: str, skipinitialspace: bool = False,
               comments: bool = False) -> Iterator[tuple[int, list]]:
    """Yield ``(line number, cells as read)`` of the rows kept; csv failures become :class:`CsvError`."""
    reader = _reader(text, skipinitialspace)
    try:
        for cells in reader:
            if not _skipped(cells, comments):
                yield reader.line_num, cells
    except csv.Error as exc:
        raise _csv_error(exc, text, reader.line_num, parameter) from None


class Rows:
    """The rows of a CSV text: ``header`` (stripped cells), ``header_line``, ``data`` (the cells as read).

    :meth:`line` is the physical line of a data row (counting from 1; a quoted cell spanning
    lines gives the line where it ends), found by reading the text again on first use only.
    """

    def __init__(self, text: str, rows: list, parameter: str, skipinitialspace: bool, comments: bool):
        self.text = text
        self.header = [c.strip() for c in rows[0]]
        self.data = rows[1:]
        self._options = (parameter, skipinitialspace, comments)
        self._lines: list | None = None

    def _numbers(self) -> list:
        if self._lines is None:
            self._lines = [line for line, _ in _iter_rows(self.text, *self._options)]
        return self._lines

    @property
    def header_line(self) -> int:
        """The physical line of the header (the text read up to it only)."""
        if self._lines is not None:
            return self._lines[0]
        return next(_iter_rows(self.text, *self._options))[0]

    def line(self, i: int) -> int:
        """The physical line of data row ``i`` (0-based)."""
        return self._numbers()[i + 1]


def read_rows(text: str, *, parameter: str = "file", skipinitialspace: bool = False,
              comments: bool = False) -> Rows | None:
    """The rows of a CSV text (``None`` when it has none): blank rows skipped, ``#`` rows too when ``comments``.

    The csv module reads every row in C; the rows are kept as read (not stripped).  Malformed
    quoting or a cell longer than :data:`MAX_CELL_CHARS` raises :class:`CsvError` with the line
    (and the column when the line can be split at commas).
    """
    check_csv_shape(text, parameter=parameter)
    reader = _reader(text, skipinitialspace)
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise _csv_error(exc, text, reader.line_num, parameter) from None
    rows = [r for r in rows if not _skipped(r, comments)]
    return Rows(text, rows, parameter, skipinitialspace, comments) if rows else None


def csv_rows(text: str, *, parameter: str = "file") -> list[tuple[int, list[str]]]:
    """``[(line number, cells)]`` of the non-blank rows of a CSV text, cells stripped.

    Line numbers count physical lines from 1 (a quoted cell may span lines: its row
    carries the number of the line where it ends).  A cell longer than
    :data:`MAX_CELL_CHARS` or malformed quoting raises :class:`InputError` with the line
    (and the column when the line can be split at commas).
    """
    return [(line, [c.strip() for c in cells]) for line, cells in _iter_rows(text, parameter)]


def first_row(text: str, *, parameter: str = "file") -> tuple[int, list[str]] | None:
    """The first non-blank row (the header) as ``(line number, stripped cells)``; None for a blank text."""
    for line, cells in _iter_rows(text, parameter):
        return line, [c.strip() for c in cells]
    return None


class BadCellsError(InputError):
    """An :class:`InputError` naming several bad cells: ``cells`` (the first ones, each an InputError), ``count``."""

    cells: list[InputError]
    count: int


class BadCells:
    """The bad cells of one table: collect them as the reader goes, refuse the file once at the end.

    ``add(error)`` keeps the first :data:`MAX_NAMED_CELLS` errors and counts the rest;
    ``check()`` raises one :class:`InputError` whose message is the first error's, followed by
    ``also <where>: got <value>`` for the next ones (their own rule when it differs) and how
    many more there are.  With one bad cell the message is that cell's message, word for word.
    The error's ``parameter``, ``rule``, ``got`` and ``location`` are the first cell's; its
    ``cells`` lists the errors named and ``count`` counts them all.
    """

    def __init__(self, limit: int = MAX_NAMED_CELLS):
        self.limit = limit
        self.errors: list[InputError] = []
        self.count = 0

    def __bool__(self) -> bool:
        return self.count > 0

    @property
    def full(self) -> bool:
        """As many cells as are named have been found (a reader may stop looking for the exact ones)."""
        return self.count >= self.limit

    def add(self, error: InputError) -> None:
        self.count += 1
        if len(self.errors) < self.limit:
            self.errors.append(error)

    def error(self) -> InputError:
        """The one error for every bad cell found."""
        first = self.errors[0]
        combined = BadCellsError(first.parameter, first.rule, first.got, location=first.location)
        parts = [_also(first, e) for e in self.errors[1:]]
        message = str(first)
        if parts:
            message += "; also " + "; ".join(parts)
        if self.count > len(self.errors):
            message += f"; and {self.count - len(self.errors):,} more bad cells"
        combined.args = (message,)
        combined.cells, combined.count = list(self.errors), self.count
        return combined

    def check(self) -> None:
        """Raise :meth:`error` when a bad cell was found."""
        if self.count:
            raise self.error()


def _also(first: InputError, error: InputError) -> str:
    """``error`` in a list after ``first``: its place and value, and its rule when it differs."""
    if error.parameter != first.parameter or error.rule != first.rule:
        return str(error)
    prefix = f"{error.parameter} must be {error.rule}; got "
    text = str(error)
    got = text[text.index(prefix) + len(prefix):]
    return f"{error.location}: got {got}" if error.location else f"got {got}"


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


#: The first characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def spreadsheet_cell(value):
    """``value`` as a spreadsheet should show it: text starting with a formula character gets a leading
    ``'`` (unless it is a plain number such as ``-0.5``); anything else is returned as it is.

    >>> spreadsheet_cell('=HYPERLINK("http://x", "y")'), spreadsheet_cell("-0.5"), spreadsheet_cell(-2.0)
    ('\'=HYPERLINK("http://x", "y")', '-0.5', -2.0)
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def spreadsheet_frame(frame):
    """A copy of the DataFrame ``frame`` for a CSV meant for people: every text cell, column name and
    index label through :func:`spreadsheet_cell` (number columns untouched)."""
    import pandas as pd

    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_object_dtype(out[column]) or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(spreadsheet_cell)
    out.columns = [spreadsheet_cell(c) for c in out.columns]
    if pd.api.types.is_object_dtype(out.index) or pd.api.types.is_string_dtype(out.index):
        out.index = out.index.map(spreadsheet_cell)
    return out


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


#: The ``example`` value of a :class:`TableModel` showing an uploaded file.
UPLOADED = "uploaded file"


class TableModel(OffloadedModel, param.Parameterized):
    """A page's model whose input is one table: a shipped example or an uploaded file.

    A subclass declares ``example`` (a Selector of its examples and :data:`UPLOADED`),
    ``table`` and ``result``, and implements :meth:`example_table` (a shipped example's table),
    :meth:`prepare` (read a source; touches no state, so a worker thread may call it) and the
    runtime's ``_compute``/``_apply_outcome``.  Invalid input keeps the last good table and
    result and sets :attr:`error`.
    """

    offload = param.Boolean(default=False, doc="Compute for large tables in a worker thread (served pages).")
    error = param.String(default="", constant=True, doc="Why the last input was refused ('' when all is well).")
    busy = param.Boolean(default=False, constant=True, doc="A result is being computed in a worker thread.")

    def __init__(self, source=None, **params):
        super().__init__(**params)
        if source is not None:
            self.load(source)
        else:
            self._load_example()
        self.param.watch(lambda event: self._load_example(), "example")  # ``example`` is the subclass's

    @staticmethod
    def example_table(name: str):
        """The table of the shipped example ``name``."""
        raise NotImplementedError

    @staticmethod
    def prepare(source, name: str | None = None):
        """Read ``source`` (path, bytes of an upload, ...) into a table; may take long, touches no state."""
        raise NotImplementedError

    def _table_values(self, table) -> dict:
        """The parameters a new table sets (a subclass may add its own, e.g. how the rows pair)."""
        return {"table": table}

    def _load_example(self):
        if self.example == UPLOADED:
            return
        try:
            table = self.example_table(self.example)
        except InputError as exc:
            self._set(error=str(exc))
            return
        self._set(**self._table_values(table))

    def apply_table(self, table) -> None:
        """Show ``table`` (from :meth:`prepare`) as the uploaded file."""
        self._set(example=UPLOADED, **self._table_values(table))

    def fail(self, exc: InputError | str) -> None:
        """Report a refused file: its InputError, or the upload's own message (the last good table and result stay)."""
        self._set(error=str(exc))

    def load(self, source, name: str | None = None) -> bool:
        """Load a table from ``source``; True on success, else the last good table stays and ``error`` says why."""
        try:
            table = self.prepare(source, name)
        except InputError as exc:
            self.fail(exc)
            return False
        self.apply_table(table)
        return True
