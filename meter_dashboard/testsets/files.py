"""Labels and predictions files of guarded test sets: ``id,label`` and ``id,prediction``.

Both go through :mod:`meter_dashboard.core.files` (the size limit before parsing, UTF-8 with
the line and byte of a bad byte, spreadsheets and UTF-16 named, the byte-order mark
dropped), then a CSV parser whose messages have the trace reader's shape: the row and
column of the first problem (the header is row 1, rows counted like a spreadsheet),
what the cell must be, and what it holds.  Labels may be any class names; a *label's*
text never appears in a message (the file is secret), ids and predictions may.

Predictions are matched to the labels by id: every id of the labels exactly once;
an id that is not in the test set, an id given twice and an id with no prediction are
refused with the row (or the JSON field) and the id.  A prediction that is not one of
the label classes is simply a wrong prediction (refusing it would reveal the classes).
"""
from __future__ import annotations

import csv
import hashlib
import io
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..core.files import check_csv_shape, decode_text, read_bytes
from ..core.validation import InputError, format_value, raw

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_NAME_CHARS",
    "LabelSet",
    "Predictions",
    "read_labels",
    "read_predictions",
    "predictions_from_pairs",
    "align",
    "predictions_hash",
    "pack_strings",
    "unpack_strings",
    "PairList",
    "json_pairs_hook",
]

#: Labels and predictions files (and HTTP bodies) larger than this are refused before
#: parsing: 100 MiB, several million examples.
MAX_FILE_BYTES = 100 * 1024 * 1024
#: The longest id, label or prediction accepted.
MAX_NAME_CHARS = 200


@dataclass(frozen=True, eq=False)
class LabelSet:
    """The hidden labels: ``ids`` and ``labels`` (object arrays, file order); ``codes`` index ``classes``."""

    ids: np.ndarray
    codes: np.ndarray
    classes: tuple

    def __len__(self) -> int:
        return int(self.ids.size)

    def __repr__(self) -> str:  # never the labels themselves
        return f"LabelSet({len(self):,} examples, {len(self.classes)} classes)"

    @property
    def sha256(self) -> str:
        """A fingerprint of ids and labels (kept with the test set; reveals nothing)."""
        h = hashlib.sha256(pack_strings(self.ids, level=1))
        h.update(self.codes.astype("<i4").tobytes())
        h.update("\n".join(self.classes).encode("utf-8"))
        return h.hexdigest()


@dataclass(frozen=True, eq=False)
class Predictions:
    """Predictions as read: ``ids`` and ``values`` in input order; ``where(k)`` names input position k."""

    ids: np.ndarray
    values: np.ndarray
    source: str = "predictions"
    rows: np.ndarray | None = None  # file row numbers (CSV)
    id_column: int = 1

    def where(self, k: int) -> str:
        if self.rows is not None:
            return f"row {int(self.rows[k])}, column {self.id_column} (id)"
        return f"{self.source}[{format_value(str(self.ids[k]))}]"


class PairList(list):
    """``[(id, prediction), ...]`` as a JSON object's pairs, duplicates kept (see :func:`json_pairs_hook`)."""


# ============================================================================ CSV
def _normalize(name: str) -> str:
    return str(name).strip().lower().replace(" ", "_")


def _delimiter(header_line: str) -> str:
    if header_line.count(";") > header_line.count(",") and header_line.count(";") > 0:
        return ";"
    if header_line.count("\t") > header_line.count(","):
        return "\t"
    return ","


def _rows(text: str, delimiter: str, parameter: str):
    """``(records, row numbers)``: every row as a list of cells, blank rows dropped."""
    if '"' not in text:  # the fast path: row k of the file is line k
        import pandas as pd

        try:
            frame = pd.read_csv(io.StringIO(text), header=None, dtype=str, keep_default_na=False, na_filter=False,
                                skip_blank_lines=False, sep=delimiter, engine="c")
        except pd.errors.ParserError as exc:
            raise _parser_error(str(exc), delimiter, parameter) from None
        except pd.errors.EmptyDataError:
            return [], np.zeros(0, dtype=np.int64)
        cells = frame.to_numpy(dtype=object)
        blank = (cells == "").all(axis=1)
        keep = np.flatnonzero(~blank)
        return cells[keep], keep + 1
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    records, rows = [], []
    try:
        start = 1
        for record in reader:  # a row is numbered by the line it starts on
            if record and any(c.strip() for c in record):
                records.append(record)
                rows.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(parameter, "well-formed CSV", raw(str(exc)), location=f"row {reader.line_num}") from None
    width = max((len(r) for r in records), default=0)
    cells = np.array([r + [""] * (width - len(r)) for r in records], dtype=object).reshape(len(records), width)
    return cells, np.asarray(rows, dtype=np.int64)


def _parser_error(message: str, delimiter: str, parameter: str) -> InputError:
    import re

    found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
    if found:
        width, line, saw = (int(g) for g in found.groups())
        return InputError("fields", f"{width} per row, like the header (quote text that contains '{delimiter}')",
                          raw(f"{saw} fields"), location=f"row {line}")
    return InputError(parameter, "well-formed CSV", raw(message.split(". ")[-1][:120]))


def _table(text: str, value_column: str, parameter: str):
    """Header checks, then ``(ids, values, rows, id column, value column)`` of a two-column file."""
    rule = f"a CSV file with a header id,{value_column} and at least one row"
    if not text.strip():
        raise InputError(parameter, rule, raw("an empty file"))
    header_line = next(ln for ln in io.StringIO(text) if ln.strip())
    delimiter = _delimiter(header_line)
    check_csv_shape(text, parameter=parameter, delimiter=delimiter, row="row", empty_rows=True)
    cells, rows = _rows(text, delimiter, parameter)
    if len(cells) == 0:  # e.g. a lone '"': the reader found no row at all
        raise InputError(parameter, rule, raw("no row (an unterminated quote?)"))
    header = [_normalize(c) for c in cells[0]]
    header_row = int(rows[0])
    dupes = sorted({c for c in header if c and header.count(c) > 1})
    if dupes:
        raise InputError("columns", "unique column names", raw(f"{dupes[0]!r} twice"), location=f"row {header_row}")
    missing = [c for c in ("id", value_column) if c not in header]
    if missing:
        shown = raw(format_value(delimiter.join(str(c).strip() for c in cells[0] if str(c).strip())))
        raise InputError("columns", f"a header row naming the columns id and {value_column} (missing: "
                         f"{', '.join(missing)})", shown, location=f"row {header_row}")
    if len(cells) < 2:
        raise InputError(parameter, "at least one row below the header", raw("only the header"),
                         location=f"row {header_row}")
    i, j = header.index("id"), header.index(value_column)
    body = cells[1:]
    padded = _has_padding(text, delimiter)  # most files have none: then no cell needs stripping
    ids = _strip(body[:, i]) if padded else np.ascontiguousarray(body[:, i])
    values = _strip(body[:, j]) if padded else np.ascontiguousarray(body[:, j])
    return ids, values, rows[1:], i + 1, j + 1


def _has_padding(text: str, delimiter: str) -> bool:
    """Whether any cell may start or end with blanks (a vectorized scan of the bytes)."""
    if " " not in text and (delimiter == "\t" or "\t" not in text):
        return False  # no blank at all (the usual file)
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    if data.size == 0:
        return False
    edge = (data == ord(delimiter)) | (data == 10) | (data == 13)
    blank = (data == 32) if delimiter == "\t" else ((data == 32) | (data == 9))
    return bool(blank[0] or blank[-1] or np.any(blank[1:] & edge[:-1]) or np.any(blank[:-1] & edge[1:]))


def _strip(column) -> np.ndarray:
    return np.asarray([str(c).strip() for c in column], dtype=object)


def _lengths(values: np.ndarray) -> np.ndarray:
    return np.fromiter(map(len, values), dtype=np.int64, count=values.size)


def _check_cells(ids, values, rows, id_col, value_col, value_column: str, secret: bool, long_lines: bool = True) -> None:
    """Empty or over-long ids and values, with row and column (a secret value is never echoed).

    ``long_lines=False`` (no line of the file is longer than :data:`MAX_NAME_CHARS`) skips
    the per-cell length count: only empty cells can be wrong then."""
    for column, name, col in ((ids, "id", id_col), (values, value_column, value_col)):
        bad = np.flatnonzero(column == "")
        if long_lines:
            lengths = _lengths(column)
            bad = np.flatnonzero((lengths == 0) | (lengths > MAX_NAME_CHARS))
        if not bad.size:
            continue
        k = int(bad[0])
        where = f"row {int(rows[k])}, column {col} ({name})"
        if column[k] == "":
            rule = "an id in every row" if name == "id" else f"a {name} in every row"
            raise InputError(name, rule, raw("an empty cell"), location=where)
        echo = name != "id" and not secret  # a long prediction is shown; a label or an id is counted
        got = column[k] if echo else raw(f"{len(column[k])} characters")
        raise InputError(name, f"a{'n' if name == 'id' else ''} {name} of at most {MAX_NAME_CHARS} characters", got,
                         location=where)


def _long_lines(text: str) -> bool:
    """Whether some line is longer than :data:`MAX_NAME_CHARS` bytes (then cells are measured one by one)."""
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    breaks = np.flatnonzero(data == 10)
    edges = np.concatenate([[-1], breaks, [data.size]])
    return bool(np.max(np.diff(edges)) - 1 > MAX_NAME_CHARS)


def _first_duplicate(ids: np.ndarray):
    """``(k, earlier)``: the first position whose id appeared before, and where; None if all unique."""
    import pandas as pd

    index = pd.Index(ids)
    if index.is_unique:
        return None
    k = int(np.flatnonzero(index.duplicated(keep="first"))[0])
    earlier = int(np.flatnonzero(ids[:k] == ids[k])[0])
    return k, earlier


def _read(source, parameter: str, max_bytes: int) -> str:
    data, _ = read_bytes(source, parameter=parameter, max_bytes=max_bytes)
    return decode_text(data, parameter, "CSV")


def read_labels(source, *, parameter: str = "labels", max_bytes: int = MAX_FILE_BYTES) -> LabelSet:
    """Read a labels file (``id,label``; a path, bytes or a file object).

    Raises
    ------
    InputError
        Naming the row and column of the first problem (an empty cell, a duplicate id,
        a row with too many fields, ...), never a label's text.

    Examples
    --------
    >>> read_labels(b"id,label\\na,cat\\nb,dog\\nc,cat\\n")
    LabelSet(3 examples, 2 classes)
    """
    import pandas as pd

    text = _read(source, parameter, max_bytes)
    ids, values, rows, id_col, value_col = _table(text, "label", parameter)
    _check_cells(ids, values, rows, id_col, value_col, "label", secret=True, long_lines=_long_lines(text))
    if '"' in text:  # only a quoted cell can hold a line break
        _check_one_line(ids, rows, id_col, "id", secret=False)
        _check_one_line(values, rows, value_col, "label", secret=True)
    dup = _first_duplicate(ids)
    if dup is not None:
        k, earlier = dup
        raise InputError("id", f"unique, each id once (id {format_value(ids[k])} is already on row {int(rows[earlier])})",
                         ids[k], location=f"row {int(rows[k])}, column {id_col} (id)")
    codes, classes = pd.factorize(values)
    return LabelSet(ids=ids, codes=np.asarray(codes, dtype=np.int32), classes=tuple(str(c) for c in classes))


def _check_one_line(values, rows, column: int, name: str, secret: bool) -> None:
    """Ids and values are stored one per line: refuse a cell with a line break (quoted in the CSV)."""
    if not any("\n" in v or "\r" in v for v in values):
        return
    k = next(k for k, v in enumerate(values) if "\n" in v or "\r" in v)
    raise InputError(name, f"a {name} on one line (no line breaks)", raw("a line break") if secret else values[k],
                     location=f"row {int(rows[k])}, column {column} ({name})")


def read_predictions(source, *, parameter: str = "predictions", max_bytes: int = MAX_FILE_BYTES) -> Predictions:
    """Read predictions: a CSV file (``id,prediction``), a mapping ``{id: prediction}``, a pandas
    Series (index = ids), a DataFrame with columns ``id`` and ``prediction``, or a :class:`PairList`."""
    if isinstance(source, Predictions):
        return source
    if isinstance(source, PairList):
        return predictions_from_pairs(source, parameter=parameter)
    if isinstance(source, Mapping):
        return predictions_from_pairs(list(source.items()), parameter=parameter)
    if hasattr(source, "index") and hasattr(source, "to_numpy") and not hasattr(source, "columns"):  # Series
        return predictions_from_pairs(list(zip(source.index.tolist(), source.tolist())), parameter=parameter)
    if hasattr(source, "columns") and hasattr(source, "to_numpy"):  # DataFrame
        columns = {_normalize(c): c for c in source.columns}
        if "id" not in columns or "prediction" not in columns:
            raise InputError(parameter, "a DataFrame with columns id and prediction",
                             raw("columns " + ", ".join(repr(str(c)) for c in source.columns)))
        pairs = list(zip(source[columns["id"]].tolist(), source[columns["prediction"]].tolist()))
        return predictions_from_pairs(pairs, parameter=parameter)
    text = _read(source, parameter, max_bytes)
    ids, values, rows, id_col, value_col = _table(text, "prediction", parameter)
    _check_cells(ids, values, rows, id_col, value_col, "prediction", secret=False, long_lines=_long_lines(text))
    if '"' in text:
        _check_one_line(ids, rows, id_col, "id", secret=False)
        _check_one_line(values, rows, value_col, "prediction", secret=False)
    return Predictions(ids=ids, values=values, source=parameter, rows=rows, id_column=id_col)


def _as_text(value, what: str, where: str) -> str:
    if isinstance(value, str):
        text = value.strip()
    elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        text = str(int(value))
    else:
        raise InputError(what, "a string (or a whole number)", value, location=where)
    if "\n" in text or "\r" in text:
        raise InputError(what, f"a {what} on one line (no line breaks)", text, location=where)
    if not text or len(text) > MAX_NAME_CHARS:
        raise InputError(what, f"a non-empty string of at most {MAX_NAME_CHARS} characters",
                         raw("an empty string") if not text else raw(f"{len(text)} characters"), location=where)
    return text


def predictions_from_pairs(pairs, *, parameter: str = "predictions") -> Predictions:
    """Predictions from ``[(id, prediction), ...]`` (a JSON object's pairs, a dict's items)."""
    if len(pairs) == 0:
        raise InputError(parameter, "one prediction per test example", raw("no predictions"))
    keys = [p[0] for p in pairs]
    values = [p[1] for p in pairs]
    if set(map(type, keys)) == {str} and set(map(type, values)) == {str}:  # the usual case, checked at C speed
        ids: list[str] | np.ndarray = [k.strip() for k in keys]
        vals: list[str] | np.ndarray = [v.strip() for v in values]
        joined = "\x00".join(keys) + "\x00" + "\x00".join(values)
        shortest = min(min(map(len, ids)), min(map(len, vals)))
        longest = max(max(map(len, ids)), max(map(len, vals)))
        if "\n" not in joined and "\r" not in joined and shortest > 0 and longest <= MAX_NAME_CHARS:
            return Predictions(ids=np.asarray(ids, dtype=object), values=np.asarray(vals, dtype=object),
                               source=parameter)
    ids = np.empty(len(pairs), dtype=object)  # something to report: find it, in order
    vals = np.empty(len(pairs), dtype=object)
    for k, (key, value) in enumerate(pairs):
        where = f"{parameter}[{format_value(str(key))}]"
        ids[k] = _as_text(key, "id", where)
        vals[k] = _as_text(value, "prediction", where)
    return Predictions(ids=ids, values=vals, source=parameter)


def json_pairs_hook(pairs):
    """``json.loads(..., object_pairs_hook=json_pairs_hook)``: large objects keep their pairs
    (so a repeated id is seen, not silently overwritten); small ones become dicts."""
    keys = {k for k, _ in pairs}
    if len(keys) != len(pairs) or len(pairs) > 16:
        return PairList(pairs)
    return dict(pairs)


# ============================================================================ matching
def align(label_ids, label_index, predictions: Predictions, *, parameter: str = "predictions") -> np.ndarray:
    """The predictions in the labels' order (object array), or the :class:`InputError` of the
    first id that is not in the test set, is given twice, or is missing.

    ``label_index`` is ``pandas.Index(label_ids)`` (kept by the caller for speed).
    """
    import pandas as pd

    n = label_ids.size
    ids, values = predictions.ids, predictions.values
    if ids.size == n and np.array_equal(ids, label_ids):  # the usual case: the test set's own order
        return values
    pos = label_index.get_indexer(ids)
    unknown = np.flatnonzero(pos < 0)
    if unknown.size:
        k = int(unknown[0])
        raise InputError("id", "an id of the test set (one of the labels' ids)", ids[k], location=predictions.where(k))
    repeated = pd.Index(pos).duplicated(keep="first")
    if repeated.any():
        k = int(np.flatnonzero(repeated)[0])
        earlier = int(np.flatnonzero(pos[:k] == pos[k])[0])
        before = (f"row {int(predictions.rows[earlier])}" if predictions.rows is not None else "given before")
        raise InputError("id", f"unique, each id once (id {format_value(ids[k])} is already on {before})", ids[k],
                         location=predictions.where(k))
    if ids.size < n:
        seen = np.zeros(n, dtype=bool)
        seen[pos] = True
        first = int(np.flatnonzero(~seen)[0])
        raise InputError(parameter, f"one prediction for each of the {n:,} test examples (every id of the labels once)",
                         raw(f"no prediction for {n - ids.size:,} id(s), the first {format_value(str(label_ids[first]))}"))
    aligned = np.empty(n, dtype=object)
    aligned[pos] = values
    return aligned


def predictions_hash(aligned: np.ndarray) -> str:
    """sha256 of the predictions in the labels' order (the same model always hashes the same)."""
    return hashlib.sha256(pack_strings(aligned, level=None)).hexdigest()


def pack_strings(values, level: int | None = 6) -> bytes:
    """``"\\n".join(values)`` as UTF-8, zlib-compressed at ``level`` (``None``: not compressed)."""
    data = "\n".join(values.tolist() if isinstance(values, np.ndarray) else list(values)).encode("utf-8")
    return data if level is None else zlib.compress(data, level)


def unpack_strings(data: bytes) -> np.ndarray:
    """The inverse of :func:`pack_strings` (compressed)."""
    return np.asarray(zlib.decompress(data).decode("utf-8").split("\n"), dtype=object)
