"""The trace file formats (CSV and JSON, or records) read into validated columns.

:func:`parse_csv`, :func:`parse_json` and :func:`columns_from_records` return a
:class:`TraceColumns`; :mod:`meter_dashboard.session.trace` wraps it in a ``Trace``.

Two passes, one set of rules:

- a **vectorized pass** (pandas' C parser for CSV, column extraction for JSON) takes a
  well-formed file of a million steps in well under a second, with no Python object per
  number;
- when anything in it looks off, the **exact pass** reads the file cell by cell with the
  same rules and names the row and column of the first problem.  The vectorized pass only
  accepts what the exact pass accepts, with the same values.

Rules (ease.ml/meter, Section 3.1: a trace is the sequence of models H_1, H_2, ... a team
submitted, each scored on the validation and the test set): steps are whole numbers in
[0, 2**63 - 1], exactly (``1e30`` is refused, never wrapped to -2**63), strictly
increasing; scores are finite numbers in [0, 1]; a tenant names who submitted the step
(at most 100 characters); ``reverted`` is true/false (yes/no, 1/0); descriptions are at
most 10,000 characters.  Nothing read is ever evaluated: numbers go through ``float()``,
``Decimal`` or pandas' number parser only.
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np

from ..core.files import check_csv_shape
from ..core.tables import exact_floats
from ..core.validation import InputError, check_int, format_value, raw
from .trace_problems import MAX_PROBLEMS, Problems, TraceProblems

__all__ = ["TraceColumns", "TraceProblems", "parse_csv", "parse_json", "columns_from_records", "normalize_name",
           "SCORE_COLUMNS", "OPTIONAL_COLUMNS", "KNOWN_COLUMNS", "MAX_STEP", "MAX_TENANT_CHARS",
           "MAX_DESCRIPTION_CHARS", "MAX_JSON_DEPTH", "MAX_PROBLEMS"]

#: metric -> (validation column, test column)
SCORE_COLUMNS = {
    "accuracy": ("val_accuracy", "test_accuracy"),
    "loss": ("val_loss", "test_loss"),
}
OPTIONAL_COLUMNS = ("tenant", "reverted", "description")
KNOWN_COLUMNS = ("step",) + SCORE_COLUMNS["accuracy"] + SCORE_COLUMNS["loss"] + OPTIONAL_COLUMNS

#: The largest step number (steps are stored exactly as 64-bit integers).
MAX_STEP = 2**63 - 1
#: Steps written as floating-point numbers (JSON ``12.0``) are exact only up to 2**53.
_MAX_FLOAT_STEP = 2**53
MAX_TENANT_CHARS = 100
MAX_DESCRIPTION_CHARS = 10_000
#: JSON nesting deeper than this is refused (a trace needs three levels).
MAX_JSON_DEPTH = 64
_CSV_FIELD_LIMIT = csv.field_size_limit()

_TRUE = {"true", "t", "yes", "y", "1", "1.0"}
_FALSE = {"false", "f", "no", "n", "0", "0.0", ""}
_HEADER_RULE = ("a header row naming the columns step and either val_accuracy, test_accuracy "
                "or val_loss, test_loss")
_ENTRY_RULE = "an object with step, val_accuracy, test_accuracy, ..."


@dataclass(frozen=True, eq=False)
class TraceColumns:
    """A trace's validated columns (one entry per step), before it gets a name.

    ``tenant_names`` lists the tenants in the order they first submitted and
    ``tenant_codes`` gives each step's index into it (both ``None`` without a tenant
    column); ``descriptions`` is ``None`` without a description column.
    """

    steps: np.ndarray
    val: np.ndarray
    test: np.ndarray
    metric: str
    reverted: np.ndarray
    tenant_names: tuple | None = None
    tenant_codes: np.ndarray | None = None
    descriptions: tuple | None = None
    ignored: tuple = ()
    test_size: int | None = None
    synthetic: bool | None = None


# ============================================================================ names and columns
def normalize_name(name) -> str:
    """``'Val Accuracy'`` -> ``'val_accuracy'``."""
    return str(name).strip().lower().replace(" ", "_").replace("-", "_")


def _choose_metric(columns, where: str, given) -> str:
    """'accuracy' or 'loss' from the column names, or a clear error."""
    have = {metric: [c for c in pair if c in columns] for metric, pair in SCORE_COLUMNS.items()}
    if "step" not in columns:
        raise InputError("columns", _HEADER_RULE + " (missing: step)", given, location=where)
    full = [metric for metric, cols in have.items() if len(cols) == 2]
    both = "either val_accuracy, test_accuracy or val_loss, test_loss, not both"
    if len(full) == 2:
        raise InputError("columns", both, given, location=where)
    if full:
        if have["loss" if full[0] == "accuracy" else "accuracy"]:
            raise InputError("columns", both, given, location=where)
        return full[0]
    for metric, cols in have.items():
        if len(cols) == 1:
            missing = [c for c in SCORE_COLUMNS[metric] if c not in cols][0]
            raise InputError("columns", f"{_HEADER_RULE} (missing: {missing}, which goes with {cols[0]})",
                             given, location=where)
    raise InputError("columns", _HEADER_RULE + " (missing: the score columns)", given, location=where)


# ============================================================================ cells (the exact pass)
def _parse_step(value, where: str) -> int:
    rule = "a whole number >= 0"
    if isinstance(value, bool):
        raise InputError("step", rule, value, location=where)
    text = value.strip() if isinstance(value, str) else value
    if text is None or text == "":
        raise InputError("step", rule, raw("an empty cell"), location=where)
    if isinstance(text, str) and text.isascii() and text.isdigit() and len(text) < 19:
        return int(text)  # the common case, exact without Decimal
    if isinstance(text, float) and math.isfinite(text) and abs(text) > _MAX_FLOAT_STEP:
        raise InputError("step", f"a whole number written without a decimal point or exponent above "
                         f"{_MAX_FLOAT_STEP:,} (a floating-point number is not exact there)", text, location=where)
    step = check_int("step", text, minimum=0, location=where)
    if step > MAX_STEP:
        raise InputError("step", f"a whole number <= {MAX_STEP} (2**63 - 1)", text, location=where)
    return step


def _parse_score(column: str, value, where: str) -> float:
    rule = "a number in [0, 1]"
    if isinstance(value, (bool, list, dict)):
        raise InputError(column, rule, value, location=where)
    if value is None or (isinstance(value, str) and value.strip() == ""):
        raise InputError(column, rule, raw("an empty cell"), location=where)
    text = value.strip() if isinstance(value, str) else value
    try:
        number = float(text)
    except OverflowError:  # a JSON integer such as 10**400
        raise InputError(column, rule, raw("a number too large to represent"), location=where) from None
    except (TypeError, ValueError):
        hint = " (use a dot as the decimal separator)" if isinstance(text, str) and "," in text else ""
        raise InputError(column, rule + hint, text, location=where) from None
    if math.isnan(number):
        raise InputError(column, rule + ", not NaN", raw("NaN"), location=where)
    if not 0.0 <= number <= 1.0:
        hint = ""
        if 2.0 <= number <= 100.0:
            hint = f" (write percentages as fractions: {number / 100:g} for {number:g}%)"
        raise InputError(column, rule + hint, text, location=where)
    return number


def _parse_reverted(value, where: str) -> bool:
    rule = "true or false (also yes/no, 1/0)"
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, (int, float)):
        if value in (0, 1):
            return bool(value)
        raise InputError("reverted", rule, value, location=where)
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError("reverted", rule, value if isinstance(value, str) else raw(format_value(value)),
                     location=where)


def _parse_tenant(value, where: str) -> str:
    rule = "a name (who submitted the step)"
    if value is None or isinstance(value, (bool, list, dict)):
        raise InputError("tenant", rule, raw("nothing" if value is None else format_value(value)), location=where)
    if isinstance(value, float):
        if not math.isfinite(value):  # JSON Infinity, NaN
            raise InputError("tenant", rule, raw(format_value(value)), location=where)
        text = str(int(value)) if value.is_integer() else repr(value)
    elif isinstance(value, int) and abs(value) >= 10**MAX_TENANT_CHARS:
        text = "9" * (MAX_TENANT_CHARS + 1)  # too long, without printing thousands of digits
    else:
        text = str(value).strip()
    if not text:
        raise InputError("tenant", rule + " in every row when the column is present", raw("an empty cell"),
                         location=where)
    if len(text) > MAX_TENANT_CHARS:
        raise InputError("tenant", f"a name of at most {MAX_TENANT_CHARS} characters", text, location=where)
    return text


def _parse_description(value, where: str) -> str:
    if value is None:
        return ""
    text = str(value).strip()
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise InputError("description", f"text of at most {MAX_DESCRIPTION_CHARS:,} characters",
                         raw(f"{len(text):,} characters"), location=where)
    return text


def _check_order(steps: np.ndarray, locs: Sequence[object] | np.ndarray, locate) -> None:
    """Steps strictly increasing, or the first repeated or decreasing one named."""
    bad = np.flatnonzero(steps[1:] <= steps[:-1])
    if not bad.size:
        return
    i = int(bad[0]) + 1
    s = int(steps[i])
    j = int(np.searchsorted(steps[:i], s))  # steps[:i] is increasing
    if j < i and steps[j] == s:
        raise InputError("step", f"unique, each step once (step {s} is already on {locate(locs[j]).split(',')[0]})",
                         s, location=locate(locs[i]))
    raise InputError("step", f"increasing, in the order the models were submitted (after step {int(steps[i - 1])})",
                     s, location=locate(locs[i]))


def _from_rows(rows: list, metric: str, optional: tuple, ignored, locate) -> TraceColumns:
    """Columns from exact-pass rows ``(step, val, test, *optional cells, location)``.

    ``optional`` names the optional cells each row carries, in order (tenant, reverted, description).
    """
    columns = list(zip(*rows))
    steps = np.asarray(columns[0], dtype=np.int64)
    _check_order(steps, columns[-1], locate)
    cell = {name: columns[3 + k] for k, name in enumerate(optional)}
    names = codes = None
    if "tenant" in cell:
        codes, names = _factorize(cell["tenant"])
    reverted = np.asarray(cell["reverted"], dtype=bool) if "reverted" in cell else np.zeros(steps.size, dtype=bool)
    return TraceColumns(
        steps=steps, val=np.asarray(columns[1], dtype=float), test=np.asarray(columns[2], dtype=float), metric=metric,
        reverted=reverted, tenant_names=names, tenant_codes=codes,
        descriptions=tuple(cell["description"]) if "description" in cell else None, ignored=tuple(ignored))


def _factorize(values) -> tuple:
    """(codes, names in order of first appearance) of a sequence of strings."""
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values, dtype=object), sort=False)
    return codes.astype(np.int64), tuple(str(u) for u in uniques)


# ============================================================================ vectorized checks
def _valid_steps(steps) -> bool:
    return steps.size > 0 and bool(steps[0] >= 0) and bool(np.all(steps[1:] > steps[:-1]))


def _valid_scores(*arrays) -> bool:
    return all(bool(np.all((a >= 0.0) & (a <= 1.0))) for a in arrays)  # NaN fails both comparisons


def _clean_names(names) -> tuple | None:
    """Stripped tenant names, or None when one is empty or too long."""
    out = tuple(str(n).strip() for n in names)
    return None if any(not n or len(n) > MAX_TENANT_CHARS for n in out) else out


def _tenant_index(codes, names) -> tuple | None:
    """(codes, names) with names stripped and merged, in order of first submission."""
    clean = _clean_names(names)
    if clean is None:
        return None
    return _factorize(np.asarray(clean, dtype=object)[codes])


def _descriptions(values) -> tuple | None:
    out = tuple(v.strip() for v in values)
    return None if any(len(v) > MAX_DESCRIPTION_CHARS for v in out) else out




# ============================================================================ CSV
def parse_csv(text: str, data: bytes | None = None) -> TraceColumns:
    """Validated columns of a CSV trace (header in its first non-blank row).

    ``data`` may give the UTF-8 bytes ``text`` was decoded from (read without a second copy).
    """
    converted = "\r" in text
    if converted:  # Windows and old Mac line endings: one rule for all
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    header_line = next((ln for ln in text.split("\n", 50) if ln.strip()), "")
    delimiter = ","
    if header_line.count(";") > header_line.count(",") and header_line.count(";") > 0:
        delimiter = ";"
    elif header_line.count("\t") > header_line.count(","):
        delimiter = "\t"
    check_csv_shape(data if data is not None and not converted else text, delimiter=delimiter, row="row")
    header, header_row, body_start = _csv_header(text, delimiter)
    if data is not None and not converted:  # pandas reads the undecoded bytes (no second copy of the text)
        bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        body = data[bom + len(text[:body_start].encode("utf-8")):]
    else:
        body = text[body_start:].encode("utf-8")
    shown = raw(format_value(delimiter.join(c.strip() for c in header)))
    names = [normalize_name(c) for c in header]
    dupes = sorted({c for c in names if names.count(c) > 1 and c})
    if dupes:
        raise InputError("columns", "unique column names", raw(f"{dupes[0]!r} twice"), location=f"row {header_row}")
    metric = _choose_metric(names, f"row {header_row}", shown)
    ignored = tuple(c for c in names if c and c not in KNOWN_COLUMNS)
    fast = _CsvBody(body, names, delimiter, header_row).columns(metric, ignored)
    if fast is not None:
        return fast
    return _csv_exact(text, delimiter, names, header_row, metric, ignored)


def _csv_error(exc, row: int) -> InputError:
    message = str(exc)
    if "field larger than field limit" in message:
        return InputError("trace", f"CSV cells of at most {_CSV_FIELD_LIMIT:,} characters",
                          raw("a longer cell"), location=f"row {row}")
    return InputError("trace", "well-formed CSV", raw(message), location=f"row {row}")


def _lines(text: str):
    """The lines of ``text`` (with their newline), without copying the whole text."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def _csv_header(text: str, delimiter: str) -> tuple:
    """(header cells, its row number, where the body starts in ``text``)."""
    reader = csv.reader(_lines(text), delimiter=delimiter)
    try:
        for record in reader:
            if record and any(c.strip() for c in record):
                break
        else:  # pragma: no cover - the empty check comes first
            raise InputError("trace", "a CSV file with a header", raw("no rows"))
    except csv.Error as exc:
        raise _csv_error(exc, reader.line_num) from None
    start = 0
    for _ in range(reader.line_num):
        nxt = text.find("\n", start)
        start = len(text) if nxt < 0 else nxt + 1
    return record, reader.line_num, start


class _CsvBody:
    """The vectorized pass over a CSV body (the UTF-8 bytes below the header).

    pandas' C parser reads every column; each column gives its values and a mask of the
    cells the exact rules must look at (empty, not a number, out of range, ...).  Only
    those rows go through the exact pass, so one bad cell in a million rows costs
    microseconds, and the message still names its row and column.  Quoted fields can hide
    line breaks, so with quotes in the body a problem sends the whole file to the exact pass.
    """

    def __init__(self, body: bytes, names: list, delimiter: str, header_row: int):
        self.body, self.names, self.delimiter, self.header_row = body, names, delimiter, header_row
        self.labels = [f"c{i}" for i in range(len(names))]
        self.col = {name: self.labels[i] for i, name in enumerate(names) if name}
        #: (lines, starts, ends) of the body's rows once found; False: they cannot be located
        self._line_index: tuple[np.ndarray, np.ndarray, np.ndarray] | Literal[False] | None = None

    def read(self, dtypes, usecols=None):
        import pandas as pd

        try:
            with warnings.catch_warnings():
                # a first row with extra fields: pandas would drop them with a warning; the exact pass says where
                warnings.simplefilter("error", pd.errors.ParserWarning)
                return pd.read_csv(io.BytesIO(self.body), sep=self.delimiter, header=None, names=self.labels,
                                   na_filter=False, dtype=dtypes, engine="c", low_memory=False, skip_blank_lines=True,
                                   index_col=False, usecols=usecols, encoding="utf-8", **exact_floats())
        except (ValueError, OverflowError, MemoryError, csv.Error, pd.errors.ParserWarning):  # ParserError: ValueError
            return None

    # -- columns: (values, mask of cells for the exact rules)
    def steps(self, frame) -> tuple | None:
        import pandas as pd

        column = self.col["step"]
        if frame[column].dtype == np.int64:
            values = frame[column].to_numpy()
            return values, values < 0
        texts = self.read({column: str}, usecols=[column])
        if texts is None:
            return None
        texts = texts[column]
        plain = texts.str.fullmatch(r"\s*\+?\d{1,18}(?:\.0*)?\s*").to_numpy(dtype=bool)  # 12, 12.0
        values = np.zeros(len(texts), dtype=np.int64)
        whole = texts[plain].str.replace(r"\.0*\s*$", "", regex=True).str.strip()
        values[plain] = pd.to_numeric(whole).to_numpy(dtype=np.int64)
        return values, ~plain

    @staticmethod
    def scores(series) -> tuple:
        import pandas as pd

        values = series.to_numpy(dtype=float) if series.dtype.kind in "if" else \
            pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
        return values, ~((values >= 0.0) & (values <= 1.0))  # NaN fails both

    @staticmethod
    def categories(series, rule) -> tuple:
        """(each cell's cleaned text or flag, mask) of a categorical column, ``rule`` applied per category."""
        cat = series.cat
        cleaned = [rule(str(c)) for c in cat.categories]
        table = np.empty(len(cleaned) + 1, dtype=object)
        table[:-1] = cleaned
        table[-1] = None
        values = table[cat.codes.to_numpy()]
        return values, np.asarray([v is None for v in cleaned] + [True], dtype=bool)[cat.codes.to_numpy()]

    # -- the whole body
    def columns(self, metric: str, ignored) -> TraceColumns | None:
        if re.search(rb"\S", self.body) is None:
            return None
        frame = self.read({self.col[k]: "category" for k in OPTIONAL_COLUMNS if k in self.col})
        if frame is None:
            return None
        parsed = self.steps(frame)
        if parsed is None:
            return None
        val_col, test_col = SCORE_COLUMNS[metric]
        (steps, bad), (val, bad_val), (test, bad_test) = parsed, self.scores(frame[self.col[val_col]]), \
            self.scores(frame[self.col[test_col]])
        bad = bad | bad_val | bad_test
        optional = {}
        for name, rule in (("tenant", _clean_tenant), ("reverted", _clean_flag), ("description", _clean_text)):
            if name in self.col:
                optional[name], mask = self.categories(frame[self.col[name]], rule)
                bad |= mask
        keep = np.ones(steps.size, dtype=bool)
        if bad.any():
            if not self.recheck(np.flatnonzero(bad), metric, steps, val, test, optional, keep):
                return None
            if not keep.all():
                steps, val, test = steps[keep], val[keep], test[keep]
                optional = {k: v[keep] for k, v in optional.items()}
        if not self.ordered(steps, keep):
            return None
        return self.build(steps, val, test, metric, optional, ignored)

    def recheck(self, rows, metric, steps, val, test, optional, keep) -> bool:
        """The exact rules on the flagged rows (raising at the first problem); False: use the exact pass."""
        if b'"' in self.body or self.line_index(len(steps)) is None:
            return False
        index = {c: i for i, c in enumerate(self.names)}
        val_col, test_col = SCORE_COLUMNS[metric]
        cells = _cell_parsers(index, metric)
        problems = Problems()
        for r in rows.tolist():
            line_no, record = self.record(r)
            if not record or all(not c.strip() for c in record):
                keep[r] = False
                continue
            if len(record) > len(self.names):
                problems.add(_too_many_fields(len(self.names), len(record), self.delimiter, line_no))
                continue
            row = _csv_row(record, line_no, cells, problems)
            if problems.full:
                break
            if row is None:
                continue
            values = dict(zip([c[0] for c in cells], row))
            steps[r], val[r], test[r] = values["step"], values[val_col], values[test_col]
            for name in optional:
                optional[name][r] = values[name]
        problems.raise_any()
        return True

    def line_index(self, rows: int):
        """Where each parsed row starts and ends in the body (quote-free bodies only), or None."""
        if self._line_index is None:
            arr = np.frombuffer(self.body, dtype=np.uint8)
            newlines = np.flatnonzero(arr == 10)
            starts = np.concatenate([[0], newlines + 1])
            ends = np.concatenate([newlines, [arr.size]])
            length = ends - starts
            ink = (arr != 32) & (arr != 9) & (arr != 10) & (arr != 11) & (arr != 12)
            filled = np.zeros(starts.size, dtype=bool)
            nonempty = length > 0
            filled[nonempty] = np.logical_or.reduceat(ink, starts[nonempty])
            lines = np.flatnonzero(filled)
            self._line_index = (lines, starts, ends) if lines.size == rows else False
        return self._line_index or None

    def record(self, r: int) -> tuple:
        """(row number as a spreadsheet counts it, the cells) of parsed row ``r``."""
        index = self._line_index
        assert index, "line_index() located the rows first"
        lines, starts, ends = index
        line = int(lines[r])
        text = self.body[starts[line]:ends[line]].decode("utf-8")
        return self.header_row + line + 1, text.split(self.delimiter)

    def ordered(self, steps, keep) -> bool:
        """Raise on the first repeated or decreasing step; False when rows cannot be located."""
        if steps.size and steps[0] >= 0 and np.all(steps[1:] > steps[:-1]):
            return True
        if b'"' in self.body or self.line_index(len(keep)) is None:
            return False
        kept = np.flatnonzero(keep)
        step_col = self.names.index("step") + 1
        _check_order(steps, kept, lambda r: f"row {self.record(int(r))[0]}, column {step_col} (step)")
        return True  # pragma: no cover - _check_order raised

    @staticmethod
    def build(steps, val, test, metric, optional, ignored) -> TraceColumns:
        names = codes = None
        if "tenant" in optional:
            codes, names = _factorize(optional["tenant"])
        reverted = optional["reverted"].astype(bool) if "reverted" in optional else np.zeros(steps.size, dtype=bool)
        descriptions = tuple(optional["description"].tolist()) if "description" in optional else None
        return TraceColumns(steps=steps, val=val, test=test, metric=metric, reverted=reverted, tenant_names=names,
                            tenant_codes=codes, descriptions=descriptions, ignored=ignored)


def _clean_tenant(text: str):
    text = text.strip()
    return text if text and len(text) <= MAX_TENANT_CHARS else None


def _clean_flag(text: str):
    text = text.strip().lower()
    return True if text in _TRUE else (False if text in _FALSE else None)


def _clean_text(text: str):
    text = text.strip()
    return text if len(text) <= MAX_DESCRIPTION_CHARS else None


def _cell_parsers(index: dict, metric: str) -> list:
    """(name, column index, parser, default for a missing cell) of the columns a trace reads."""
    val_col, test_col = SCORE_COLUMNS[metric]
    cells: list[tuple[str, int, Callable[..., object], str | None]] = [("step", index["step"], _parse_step, "")]
    cells += [(c, index[c], partial(_parse_score, c), None) for c in (val_col, test_col)]
    optional = {"tenant": (_parse_tenant, ""), "reverted": (_parse_reverted, ""), "description": (_parse_description, None)}
    return cells + [(c, index[c], parse, default) for c, (parse, default) in optional.items() if c in index]


def _csv_exact(text: str, delimiter: str, header: list, header_row: int, metric: str, ignored) -> TraceColumns:
    """The exact pass: cell by cell, naming the row and column of the first problem."""
    reader = csv.reader(_lines(text), delimiter=delimiter)
    index = {c: i for i, c in enumerate(header)}
    cells = _cell_parsers(index, metric)
    rows = []
    problems = Problems()
    try:
        for record in reader:
            row_no = reader.line_num
            if row_no <= header_row or not record or all(not c.strip() for c in record):
                continue
            if len(record) > len(header):
                problems.add(_too_many_fields(len(header), len(record), delimiter, row_no))
            else:
                row = _csv_row(record, row_no, cells, problems)
                if row is not None:
                    rows.append(row)
            if problems.full:
                break
    except csv.Error as exc:
        problems.add(_csv_error(exc, reader.line_num))
    problems.raise_any()
    if not rows:
        raise InputError("trace", "at least one step below the header", raw("only the header"),
                         location=f"row {header_row}")
    step_col = index["step"] + 1
    return _from_rows(rows, metric, tuple(c[0] for c in cells[3:]), ignored,
                      lambda row_no: f"row {row_no}, column {step_col} (step)")


def _too_many_fields(expected: int, found: int, delimiter: str, row_no: int) -> InputError:
    return InputError("fields", f"{expected} per row, like the header (quote text that contains '{delimiter}')",
                      raw(f"{found} fields"), location=f"row {row_no}")


def _csv_row(record, row_no, cells, problems: Problems) -> tuple | None:
    """(step, val, test[, optional cells...], row_no), or None when a cell is bad (each bad cell goes to ``problems``)."""
    values = []
    width = len(record)
    bad = False
    for name, i, parse, default in cells:
        try:
            values.append(parse(record[i] if i < width else default, None))
        except InputError as exc:
            problems.add(InputError(exc.parameter, exc.rule, exc.got, location=f"row {row_no}, column {i + 1} ({name})"))
            bad = True
    if bad:
        return None
    values.append(row_no)
    return tuple(values)


# ============================================================================ JSON and records
def parse_json(text: str) -> TraceColumns:
    """Validated columns of a JSON trace: a list of steps or ``{"test_size": n, "steps": [...]}``."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError("trace", "valid JSON", raw(exc.msg.lower()),
                         location=f"line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise InputError("trace", f"JSON nested at most {MAX_JSON_DEPTH} levels deep", raw("deeper nesting"),
                         location=_deep_location(text)) from None
    except ValueError:  # Python's limit on the digits of an integer
        raise InputError("trace", "JSON numbers of at most 4,300 digits", raw("a longer number"),
                         location=_long_number_location(text)) from None
    if isinstance(doc, list):
        return columns_from_records(doc, where="json")
    if not isinstance(doc, dict):
        raise InputError("trace", "a JSON object with a 'steps' list (or a list of steps)", raw(type(doc).__name__))
    keys = {normalize_name(k): k for k in doc}
    if "steps" not in keys:
        raise InputError("trace", "a JSON object with a 'steps' list (or a list of steps)",
                         raw("keys " + ", ".join(repr(k) for k in list(doc)[:8])))
    test_size = None
    for key in ("test_size", "n"):
        if key in keys and doc[keys[key]] is not None:
            test_size = check_int("test_size", doc[keys[key]], minimum=1, location=f"field {keys[key]}")
            break
    records = doc[keys["steps"]]
    if not isinstance(records, list):
        raise InputError("steps", "a list of step objects", raw(type(records).__name__), location="field steps")
    columns = columns_from_records(records, where="json")
    synthetic = doc.get("synthetic") if isinstance(doc.get("synthetic"), bool) else None
    return TraceColumns(**{**columns.__dict__, "test_size": test_size, "synthetic": synthetic})


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line}, column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def _deep_location(text: str) -> str | None:
    depth, in_string, escaped = 0, False, False
    for pos, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return _line_col(text, pos)
        elif ch in "]}":
            depth -= 1
    return None


def _long_number_location(text: str) -> str | None:
    match = re.search(r"\d{4300,}", text)
    return _line_col(text, match.start()) if match else None


def columns_from_records(records: list, *, where: str = "list") -> TraceColumns:
    """Validated columns from one dict per step (JSON steps, a list of dicts, a DataFrame's rows)."""
    if not records:
        raise InputError("trace", "at least one step", raw("an empty list"))
    first = records[0]
    if not isinstance(first, dict):
        raise InputError("step entry", _ENTRY_RULE, raw(type(first).__name__), location=_place(0, where))
    metric = _choose_metric({normalize_name(k) for k in first}, _place(0, where),
                            raw("fields " + ", ".join(repr(k) for k in first)))
    fast = _records_fast(records, metric)
    if fast is not None:
        return fast
    return _records_exact(records, metric, where)


def _place(i: int, where: str) -> str:
    return f"row {i + 1} (steps[{i}])" if where == "json" else f"row {i + 1}"


def _records_fast(records: list, metric: str) -> TraceColumns | None:
    """The vectorized pass over records: plain types only, one spelling of each field."""
    if not all(type(r) is dict for r in records):
        return None
    spelled: dict = {}
    for keys in dict.fromkeys(map(tuple, records)):
        for k in keys:
            spelled.setdefault(normalize_name(k), set()).add(k)
    if any(len(v) > 1 for v in spelled.values()):
        return None
    key = {name: next(iter(v)) for name, v in spelled.items()}
    val_col, test_col = SCORE_COLUMNS[metric]

    def column(name):
        return [r.get(key[name]) for r in records] if name in key else None

    steps, val, test = column("step"), column(val_col), column(test_col)
    if steps is None or val is None or test is None or set(map(type, steps)) != {int}:
        return None
    if not set(map(type, val)) | set(map(type, test)) <= {float, int}:
        return None
    try:
        steps = np.asarray(steps, dtype=np.int64)
        val, test = np.asarray(val, dtype=float), np.asarray(test, dtype=float)
    except OverflowError:
        return None
    if not (_valid_steps(steps) and _valid_scores(val, test)):
        return None
    return _records_optional(column, steps, val, test, metric, tuple(k for k in key if k not in KNOWN_COLUMNS))


def _records_optional(column, steps, val, test, metric, ignored) -> TraceColumns | None:
    names = codes = descriptions = None
    tenants = column("tenant")
    if tenants is not None:
        if set(map(type, tenants)) != {str}:
            return None
        codes, names = _factorize(tenants)
        index = _tenant_index(codes, names)
        if index is None:
            return None
        codes, names = index
    flags = column("reverted")
    reverted = np.zeros(steps.size, dtype=bool)
    if flags is not None:
        if not set(map(type, flags)) <= {bool, type(None)}:
            return None
        reverted = np.asarray([bool(f) for f in flags], dtype=bool)
    texts = column("description")
    if texts is not None:
        if not set(map(type, texts)) <= {str, type(None)}:
            return None
        descriptions = _descriptions(t or "" for t in texts)
        if descriptions is None:
            return None
    return TraceColumns(steps=steps, val=val, test=test, metric=metric, reverted=reverted, tenant_names=names,
                        tenant_codes=codes, descriptions=descriptions, ignored=ignored)


def _records_exact(records: list, metric: str, where: str) -> TraceColumns:
    val_col, test_col = SCORE_COLUMNS[metric]
    has_tenant = any(isinstance(r, dict) and any(normalize_name(k) == "tenant" for k in r) for r in records)
    ignored: list = []
    rows = []
    problems = Problems()
    for i, record in enumerate(records):
        if problems.full:
            break
        try:
            rec = _record(record, i, where, (val_col, test_col))
        except InputError as exc:
            problems.add(exc)
            continue
        ignored.extend(k for k in rec if k not in KNOWN_COLUMNS and k not in ignored)
        cells: list[tuple[str, Callable[..., object]]] = [
            ("step", _parse_step), (val_col, partial(_parse_score, val_col)), (test_col, partial(_parse_score, test_col))]
        cells += [("tenant", _parse_tenant)] if has_tenant else []
        cells += [("reverted", _parse_reverted), ("description", _parse_description)]
        values = []
        for col, parse in cells:
            try:
                values.append(parse(rec.get(col, "" if col == "tenant" else None), f"{_place(i, where)}, field {col}"))
            except InputError as exc:
                problems.add(exc)
        if len(values) == len(cells):
            rows.append((*values, i))
    problems.raise_any()
    optional = ("tenant",) * has_tenant + ("reverted", "description")
    return _from_rows(rows, metric, optional, ignored, lambda i: f"{_place(i, where)}, field step")


def _record(record, i: int, where: str, scores: tuple) -> dict:
    """A step entry with normalized names and its required fields present (InputError naming the entry)."""
    if not isinstance(record, dict):
        raise InputError("step entry", _ENTRY_RULE, raw(type(record).__name__), location=_place(i, where))
    rec = {normalize_name(k): v for k, v in record.items()}
    for k in OPTIONAL_COLUMNS:  # a DataFrame's missing optional cells are NaN
        if isinstance(rec.get(k), float) and math.isnan(rec[k]):
            rec[k] = None
    if "step" not in rec:
        raise InputError("step", "present in every step entry", raw("no step field"), location=_place(i, where))
    for col in scores:
        if col not in rec:
            raise InputError(col, "present in every step entry (like the first one)", raw(f"no {col} field"),
                             location=_place(i, where))
    return rec
