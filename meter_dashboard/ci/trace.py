"""Commit traces for ease.ml/ci: reading a commit history from CSV, with bounded cost.

Two layouts (column names are case-insensitive):

- estimates: a ``commit`` column (optional) and columns ``n``, ``o``, ``d`` (any that the
  condition needs) with values in [0, 1], one row per commit;
- predictions: a ``label`` column and one column per model, one row per test example;
  the first model column is the model deployed before the first commit, each later
  column is a commit.  (Columns ``id``/``example``/``index`` are ignored.)

Reading is bounded before any exact arithmetic: the file size (:mod:`meter_dashboard.core.files`),
each field's length (:data:`MAX_FIELD_CHARS`), and every number's digits and size
(:func:`~meter_dashboard.core.validation.parse_exact_decimal`).  Plain decimals are read
column-wise into exact scaled integers (:class:`~.evaluation.ExactColumn`); anything else
is parsed cell by cell with the bounded parser.  The reader is the standard library's
``csv`` (no pandas import for the CLI); any line ending (LF, CRLF, CR) is accepted.

References
----------
.. [1] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Section 2.3 (the commit history the new-testset alarm reads),
   Section 5.2 (the predictions of the EmoContext models).
"""
from __future__ import annotations

import dataclasses
import io
import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from ..core.files import MAX_UPLOAD_BYTES, check_size, read_text
from ..core.tables import BadCells, CsvError, read_rows
from ..core.validation import InputError, raw
from .evaluation import ExactColumn, exact_estimate
from .grammar import VARIABLES

__all__ = ["MAX_FIELD_CHARS", "CITrace", "read_ci_trace", "example_trace", "EXAMPLES"]

#: The longest field accepted in a trace (a commit name, a label, a number).
MAX_FIELD_CHARS = 1000
#: The shipped example traces.
EXAMPLES = ("ci_commits.csv", "ci_predictions.csv")

_IGNORED_COLUMNS = {"id", "example", "index"}
#: A plain decimal in [0, 1]-friendly form: digits with at most one point, nothing else.
#: Deletes the characters of a plain decimal: text left over means a cell is not plain.
_PLAIN_CHARS = str.maketrans("", "", "0123456789. \t")
#: Plain cells up to this length have at most 15 fraction digits: exact over 10**15 < 2**53.
_MAX_PLAIN_CHARS = 16
_PLAIN_SCALE = 10**15


@dataclass(frozen=True)
class CITrace:
    """A commit history to replay.

    ``kind == 'estimates'``: per commit the measured ``n, o, d`` as exact columns
    (``columns[var]``, an :class:`~.evaluation.ExactColumn`; a variable the file lacks is
    missing everywhere).  ``kind == 'predictions'``: per test example the true ``label``
    and each model's prediction; the first model column is the model deployed before the
    first commit.

    References
    ----------
    Renggli et al. 2019, Section 2.3 (the commit history behind the new-testset alarm).
    """

    kind: str
    commits: tuple
    columns: dict = field(default_factory=dict)
    labels: tuple = ()
    predictions: dict = field(default_factory=dict)
    baseline: str | None = None
    source: str = ""

    @property
    def examples(self) -> int | None:
        return len(self.labels) if self.kind == "predictions" else None

    def values(self, var: str) -> tuple:
        """Estimates trace: the values of ``var`` as Fractions (None where missing)."""
        col = self.columns.get(var)
        return (None,) * len(self.commits) if col is None else tuple(col.fraction(i) for i in range(len(col)))

    @property
    def n(self) -> tuple:
        return self.values("n")

    @property
    def o(self) -> tuple:
        return self.values("o")

    @property
    def d(self) -> tuple:
        return self.values("d")

    def codes(self) -> tuple:
        """Predictions trace: ``(label codes, {model: prediction codes})`` as int arrays (equal text, equal code)."""
        vocab: dict = {}

        def encode(seq) -> np.ndarray:
            return np.fromiter((vocab.setdefault(v, len(vocab)) for v in seq), dtype=np.int64, count=len(seq))

        return encode(self.labels), {k: encode(v) for k, v in self.predictions.items()}

    def named(self, source: str) -> CITrace:
        """The same trace with ``source`` as its display name."""
        return dataclasses.replace(self, source=source)

    def __len__(self) -> int:
        return len(self.commits)

    def __repr__(self) -> str:
        extra = f", {self.examples:,} examples, baseline {self.baseline!r}" if self.kind == "predictions" else ""
        return f"CITrace({self.kind}: {len(self.commits)} commits{extra}, source={self.source!r})"


# ============================================================================ reading
def _text(source) -> tuple:
    """``(text, name)`` of a path, CSV text or bytes, or a file object; size-checked first."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return read_text(bytes(source), parameter="trace")[0], ""
    if isinstance(source, (str, os.PathLike)) and ("\n" not in str(source) and "\r" not in str(source)):
        return read_text(source, parameter="trace")[0], os.fspath(source)
    if isinstance(source, str):
        check_size(len(source), MAX_UPLOAD_BYTES, "trace")
        return (source[1:] if source.startswith("\ufeff") else source), ""
    return read_text(source, parameter="trace")[0], ""


def _rows(text: str) -> tuple:
    """``(header, data rows, line of a row)`` of CSV text (:func:`~meter_dashboard.core.tables.read_rows`).

    The csv module reads every row in C; Python-level work per cell happens only for
    rows that need it (ragged rows, over-long lines), and line numbers are recovered
    only for a message.
    """
    try:
        table = read_rows(text, parameter="trace", skipinitialspace=True)
    except CsvError as exc:  # a field over the csv module's limit, a NUL byte
        if exc.length is None:
            raise InputError("trace", "a CSV file", raw(exc.reason[:120]), location=f"line {exc.line}") from None
        raise InputError("trace", f"fields of at most {MAX_FIELD_CHARS:,} characters",
                         raw("a field of more than 131,072 characters"),
                         location=_long_field(text, exc.line, exc.column)) from None
    if table is None:
        raise InputError("trace", "a CSV file with a header row", raw("an empty file"))
    header, data, lines = table.header, table.data, table.line
    width = len(header)
    if max(map(len, text.splitlines())) > MAX_FIELD_CHARS:
        _check_field_lengths(header, data, lines)
    widths = {len(r) for r in data}
    if widths - {width}:
        for i, row in enumerate(data):
            if len(row) > width:
                raise InputError("trace", f"rows of at most {width} fields (as many as the header)",
                                 raw(f"{len(row)} fields"), location=f"line {lines(i)}")
            row.extend([""] * (width - len(row)))
    return header, data, lines


def _check_field_lengths(header: list, data: list, lines) -> None:
    for j, cell in enumerate(header):
        if len(cell) > MAX_FIELD_CHARS:
            raise InputError("trace", f"fields of at most {MAX_FIELD_CHARS:,} characters",
                             raw(f"{len(cell):,} characters"), location=f"line 1, column {j + 1}")
    for i, row in enumerate(data):
        for j, cell in enumerate(row):
            if len(cell) > MAX_FIELD_CHARS:
                name = header[j].strip()[:40] if j < len(header) else str(j + 1)
                raise InputError("trace", f"fields of at most {MAX_FIELD_CHARS:,} characters",
                                 raw(f"{len(cell):,} characters"), location=f"line {lines(i)}, column '{name}'")


def _long_field(text: str, line: int, column: int | None) -> str:
    """Where the over-long field that stopped the csv module is: 'line L, column C' (best effort:
    the column named by the header's field there, the header split at commas)."""
    if column is None:
        return f"line {line}"
    lines = text.splitlines()
    header = [] if line <= 1 or not lines else lines[0].split(",")
    j = column - 1
    name = header[j].strip()[:40] if j < len(header) and len(header[j]) <= MAX_FIELD_CHARS else str(j + 1)
    return f"line {line}, column '{name}'"


def _header(columns: list) -> list:
    seen = set()
    for name in columns:
        if name.lower() in seen:
            raise InputError("trace", "a header with distinct column names", raw(repr(name)), location="line 1")
        seen.add(name.lower())
    return [c.lower() for c in columns]


def _plain_column(cells: list) -> ExactColumn | None:
    """Plain decimals (``0.8123``) as exact scaled integers, column-wise; None when some cell is not plain.

    A plain cell of at most 16 characters has at most 15 fraction digits; ``float(text)`` is
    correctly rounded and ``value * 10**15 < 2**53`` carries an error below 0.25 for a
    value <= 1, so rounding recovers the exact numerator over ``10**15``, which is then
    reduced to the column's smallest common denominator.
    """
    if "".join(cells).translate(_PLAIN_CHARS) or max(map(len, cells)) > _MAX_PLAIN_CHARS:
        return None  # an exponent, a sign, a letter, many digits: parsed cell by cell
    try:
        values = np.fromiter(map(float, cells), dtype=float, count=len(cells))
    except ValueError:  # '1.2.3', '.'
        return None
    if np.any(values > 1):
        return None  # the cell-by-cell path names the first value out of range
    numerators = np.rint(values * _PLAIN_SCALE).astype(np.int64)
    common = math.gcd(int(np.gcd.reduce(numerators)), _PLAIN_SCALE)
    return ExactColumn.from_scaled(numerators // common, _PLAIN_SCALE // common)


def _number_column(var: str, col: str, cells: list, lines, bad: BadCells) -> ExactColumn | None:
    """One estimates column, exact; its bad cells (named by line and column) go to ``bad`` (then None)."""
    if all(cells):
        fast = _plain_column(cells)
        if fast is not None:
            return fast
    values, found = [], bad.count
    for i, cell in enumerate(cells):
        cell = cell.strip()
        try:
            values.append(None if cell == "" else exact_estimate(var, cell, f"line {lines(i)}, column '{col}'"))
        except InputError as exc:
            bad.add(exc)
    return ExactColumn.from_fractions(values) if bad.count == found else None


def _predictions(columns: list, lower: list, rows: list, lines, name: str) -> CITrace:
    label_col = columns[lower.index("label")]
    models = [c for c, low in zip(columns, lower) if low != "label" and low not in _IGNORED_COLUMNS]
    if len(models) < 2:
        raise InputError("trace", "a 'label' column and at least two model columns (the deployed model, then "
                         "the commits)", raw(", ".join(columns)))
    index = {c: j for j, c in enumerate(columns)}
    data = {c: tuple(r[index[c]].strip() for r in rows) for c in [label_col] + models}
    bad = BadCells()
    for col in [label_col] + models:
        if "" in data[col]:
            for row in (i for i, v in enumerate(data[col]) if v == ""):
                bad.add(InputError(col, "a prediction in every row (empty cell)", "",
                                   location=f"line {lines(row)}, column '{col}'"))
    bad.check()
    return CITrace("predictions", tuple(models[1:]), labels=data[label_col],
                   predictions={c: data[c] for c in models}, baseline=models[0], source=name)


def _estimates(columns: list, lower: list, rows: list, lines, name: str) -> CITrace:
    present = [v for v in VARIABLES if v in lower]
    if not present:
        raise InputError("trace", "a CSV with columns n, o, d (one row per commit) or a 'label' column and "
                         "one column per model (one row per example)", raw("columns " + ", ".join(columns)))
    values, bad = {}, BadCells()
    for var in present:
        j = lower.index(var)
        values[var] = _number_column(var, columns[j], [r[j] for r in rows], lines, bad)
    bad.check()
    if "commit" in lower:
        j = lower.index("commit")
        commits = tuple(r[j].strip() or f"commit {i + 1}" for i, r in enumerate(rows))
    else:
        commits = tuple(f"commit {i + 1}" for i in range(len(rows)))
    return CITrace("estimates", commits, columns=values, source=name)


def _from_frame(frame) -> str:
    """A pandas DataFrame as CSV text (read like a file)."""
    buffer = io.StringIO()
    frame.astype(str).to_csv(buffer, index=False)
    return buffer.getvalue()


def read_ci_trace(source) -> CITrace:
    """Read a commit trace from a CSV path, CSV text/bytes, a file object or a DataFrame.

    Parameters
    ----------
    source : path, str, bytes, file object or pandas.DataFrame
        A path (text without a line break), CSV text, the bytes of an upload.

    Returns
    -------
    CITrace

    Raises
    ------
    InputError
        Naming the line (the header is line 1) and the column of each bad cell (up to
        :data:`~meter_dashboard.core.tables.MAX_NAMED_CELLS` of them, the rest counted), or
        what is wrong with the layout.

    References
    ----------
    Renggli et al. 2019, Section 2.3 (the commit history behind the new-testset alarm).
    """
    pandas = sys.modules.get("pandas")
    name = "DataFrame" if pandas is not None and isinstance(source, pandas.DataFrame) else ""
    if name:
        text = _from_frame(source)
    else:
        text, name = _text(source)
    columns, rows, lines = _rows(text)
    lower = _header(columns)
    if not rows:
        raise InputError("trace", "a CSV file with at least one data row", raw(f"only a header ({', '.join(columns)})"))
    if "label" in lower:
        return _predictions(columns, lower, rows, lines, name)
    return _estimates(columns, lower, rows, lines, name)


def example_trace(name: str = EXAMPLES[0]) -> CITrace:
    """A shipped synthetic trace: ``ci_commits.csv`` (n, o, d per commit) or ``ci_predictions.csv``.

    References
    ----------
    Renggli et al. 2019, Section 5.2 (the EmoContext models the predictions example is shaped after).
    """
    from importlib import resources

    if name not in EXAMPLES:
        raise InputError("example", " or ".join(repr(e) for e in EXAMPLES), name)
    text = resources.files("meter_dashboard.data").joinpath(name).read_text(encoding="utf-8")
    return read_ci_trace(text).named(name)
