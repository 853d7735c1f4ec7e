"""Reading and validating development traces (the history a session replays).

A *trace* is the list of models a team submitted, one row per development step:

========================  ===================================================
column                    meaning
========================  ===================================================
``step``                  the step number (whole number >= 0, increasing)
``val_accuracy``,         the model's accuracy on the validation set and on
``test_accuracy``         the test set, in [0, 1] ...
``val_loss``,             ... or its losses (in [0, 1]) instead; one pair,
``test_loss``             not both
``tenant`` (optional)     who submitted the step (tenants work on separate chains)
``reverted`` (optional)   the step was rolled back (true/false, yes/no, 1/0)
``description`` (opt.)    free text
========================  ===================================================

Other columns are kept out of the way (listed in :attr:`Trace.ignored_columns`).
CSV files carry the header in row 1; JSON files are either a list of step objects
or an object ``{"test_size": n, "steps": [...]}``.  The test-set size ``n`` is a JSON
field; for CSV it is given separately (``test_size=``, the page's input, the CLI's
``--test-size``).

Every problem raises :class:`~meter_dashboard._validation.InputError` naming the row
and column (``row 4, column 3 (test_accuracy): test_accuracy must be a number in
[0, 1]; got '1.2'``).  Rows are counted like a spreadsheet: the CSV header is row 1.
Nothing read from a file is ever evaluated: numbers go through ``float()`` only.

The empirical overfitting of a step is ``|l(H, D_val) - l(H, D_test)|`` (ease.ml/meter,
Section 3.1); with accuracies the loss is ``1 - accuracy``, which gives the same gap.
It is rounded to 12 decimals so that a gap of ``0.9363 - 0.9263`` is exactly 0.01 and
falls into the range that starts at 0.01, as a person reading the numbers expects.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass, field, replace
from importlib import resources

import numpy as np

from .._files import MAX_UPLOAD_BYTES, check_size, decode_text
from .._validation import InputError, check_int, format_value, raw

__all__ = [
    "Trace",
    "read_trace",
    "parse_trace",
    "load_example",
    "example_path",
    "EXAMPLES",
    "Example",
    "MAX_TRACE_BYTES",
    "SCORE_COLUMNS",
]

#: Uploads and files larger than this are refused before they are parsed (10 MiB,
#: about 200,000 steps of CSV).
MAX_TRACE_BYTES = MAX_UPLOAD_BYTES

#: metric -> (validation column, test column)
SCORE_COLUMNS = {
    "accuracy": ("val_accuracy", "test_accuracy"),
    "loss": ("val_loss", "test_loss"),
}
OPTIONAL_COLUMNS = ("tenant", "reverted", "description")
KNOWN_COLUMNS = ("step",) + SCORE_COLUMNS["accuracy"] + SCORE_COLUMNS["loss"] + OPTIONAL_COLUMNS

_TRUE = {"true", "t", "yes", "y", "1", "1.0"}
_FALSE = {"false", "f", "no", "n", "0", "0.0", ""}
_MAX_TENANT_CHARS = 100
_ROUND_DECIMALS = 12

_HEADER_RULE = ("a header row naming the columns step and either val_accuracy, test_accuracy "
                "or val_loss, test_loss")


# ============================================================================ the trace object
@dataclass(frozen=True, eq=False)
class Trace:
    """A validated development trace.

    Attributes
    ----------
    steps : ndarray of int64
        Step numbers, strictly increasing.
    val, test : ndarray of float
        Validation and test scores per step, in [0, 1] (accuracies or losses, see ``metric``).
    metric : {'accuracy', 'loss'}
    tenants : tuple of str
        Who submitted each step ('' for every step when the trace names no tenants).
    reverted : ndarray of bool
        Steps that were rolled back ("git revert HEAD", ease.ml/meter Section 5.3).
    descriptions : tuple of str
    test_size : int or None
        n = |D_test|, when known.
    name : str
        Where the trace came from (a file name or an example's title).
    synthetic : bool
        True for simulated traces (shipped synthetic examples say so).
    provenance : str
        A sentence on where the numbers come from.
    ignored_columns : tuple of str
        Columns present in the file that the replay does not use.
    """

    steps: np.ndarray
    val: np.ndarray
    test: np.ndarray
    metric: str = "accuracy"
    tenants: tuple = ()
    reverted: np.ndarray = None
    descriptions: tuple = ()
    test_size: int | None = None
    name: str = "trace"
    synthetic: bool = False
    provenance: str = ""
    ignored_columns: tuple = field(default_factory=tuple)

    def __post_init__(self):
        n = len(self.steps)
        if not self.tenants:
            object.__setattr__(self, "tenants", ("",) * n)
        if self.reverted is None:
            object.__setattr__(self, "reverted", np.zeros(n, dtype=bool))
        if not self.descriptions:
            object.__setattr__(self, "descriptions", ("",) * n)

    def __len__(self) -> int:
        return int(len(self.steps))

    @property
    def has_tenants(self) -> bool:
        """Whether the trace names who submitted each step."""
        return any(t != "" for t in self.tenants)

    @property
    def tenant_names(self) -> tuple:
        """Tenants in the order they first submitted."""
        return tuple(dict.fromkeys(self.tenants))

    @property
    def empirical_overfitting(self) -> np.ndarray:
        """|l(H, D_val) - l(H, D_test)| per step, rounded to 12 decimals (Section 3.1)."""
        return np.round(np.abs(self.val - self.test), _ROUND_DECIMALS)

    @property
    def val_column(self) -> str:
        return SCORE_COLUMNS[self.metric][0]

    @property
    def test_column(self) -> str:
        return SCORE_COLUMNS[self.metric][1]

    @property
    def revert_steps(self) -> list:
        return [int(s) for s in self.steps[self.reverted]]

    def with_test_size(self, test_size) -> "Trace":
        """A copy with n = ``test_size`` (validated; ``None`` clears it)."""
        if test_size is not None:
            test_size = check_int("test_size", test_size, minimum=1)
        return replace(self, test_size=test_size)

    def to_frame(self):
        """A pandas DataFrame with the trace's columns."""
        import pandas as pd

        data = {"step": self.steps, self.val_column: self.val, self.test_column: self.test}
        if self.has_tenants:
            data["tenant"] = list(self.tenants)
        data["reverted"] = self.reverted
        data["description"] = list(self.descriptions)
        return pd.DataFrame(data)

    def to_records(self) -> list:
        """One plain dict per step (the JSON trace format's ``steps``)."""
        out = []
        for i in range(len(self)):
            row = {"step": int(self.steps[i]), self.val_column: float(self.val[i]),
                   self.test_column: float(self.test[i])}
            if self.has_tenants:
                row["tenant"] = self.tenants[i]
            if self.reverted[i]:
                row["reverted"] = True
            if self.descriptions[i]:
                row["description"] = self.descriptions[i]
            out.append(row)
        return out

    def to_dict(self) -> dict:
        """JSON-ready summary plus the steps (readable back by :func:`read_trace`)."""
        return {
            "name": self.name,
            "metric": self.metric,
            "test_size": self.test_size,
            "synthetic": self.synthetic,
            "provenance": self.provenance,
            "tenants": list(self.tenant_names) if self.has_tenants else [],
            "steps": self.to_records(),
        }

    def __repr__(self) -> str:
        parts = [f"{len(self)} steps ({int(self.steps[0])}..{int(self.steps[-1])})", f"metric={self.metric}"]
        if self.test_size is not None:
            parts.append(f"test_size={self.test_size:,}")
        if self.has_tenants:
            parts.append("tenants=" + ", ".join(self.tenant_names))
        if self.reverted.any():
            parts.append("reverted=" + ", ".join(str(s) for s in self.revert_steps))
        if self.synthetic:
            parts.append("synthetic")
        return f"Trace({self.name!r}: " + ", ".join(parts) + ")"


# ============================================================================ examples
@dataclass(frozen=True)
class Example:
    """A trace shipped inside the package."""

    key: str
    file: str
    title: str
    provenance_file: str
    synthetic: bool
    test_size: int | None = None
    summary: str = ""


EXAMPLES = {
    "emocontext": Example(
        key="emocontext",
        file="emocontext_trace.csv",
        title="EmoContext: a real 8-step development history",
        provenance_file="emocontext.md",
        synthetic=False,
        test_size=5509,
        summary=("System X, an emotion classifier for SemEval-2019 Task 3, the ease.ml/meter paper's case "
                 "study (Section 3.3, Figure 3a). Scores read off the public repository's plots; "
                 "test set of 5,509 conversations."),
    ),
    "synthetic_overfitting": Example(
        key="synthetic_overfitting",
        file="synthetic_overfitting_trace.json",
        title="Synthetic: two developers who overfit the validation set",
        provenance_file="synthetic_overfitting.md",
        synthetic=True,
        summary=("SYNTHETIC, simulated by tests/generators/generate_synthetic_trace.py (seeded): each step "
                 "keeps the candidate with the best validation accuracy on a 500-example validation set, so "
                 "validation accuracy climbs while test accuracy stalls; risky changes that lose validation "
                 "accuracy are reverted."),
    ),
}


def example_path(key: str):
    """The packaged file (a ``importlib.resources`` Traversable) of example ``key``."""
    if key not in EXAMPLES:
        raise InputError("example", "one of " + ", ".join(EXAMPLES), key)
    return resources.files("meter_dashboard.data").joinpath(EXAMPLES[key].file)


def load_example(key: str) -> Trace:
    """A shipped example trace, with its test-set size and provenance attached."""
    info = EXAMPLES.get(key)
    if info is None:
        raise InputError("example", "one of " + ", ".join(EXAMPLES), key)
    data = example_path(key).read_bytes()
    trace = parse_trace(data, name=info.file)
    return replace(
        trace,
        name=info.title,
        synthetic=info.synthetic,
        provenance=info.summary,
        test_size=trace.test_size if trace.test_size is not None else info.test_size,
    )


# ============================================================================ entry points
def read_trace(source, *, format: str | None = None, test_size=None, name: str | None = None,
               max_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """Read and validate a development trace.

    Parameters
    ----------
    source : path, bytes, file object, list of dicts, pandas DataFrame or Trace
        A path (``str`` or ``os.PathLike``) is read from disk; ``bytes`` are the file's
        content; a file object is read (binary or text); a list of dicts or a DataFrame
        holds one step per row; a :class:`Trace` is returned (with ``test_size`` applied).
    format : {'csv', 'json'}, optional
        Default: from the file name's extension, else from the content (``{`` or ``[``
        first means JSON).
    test_size : int, optional
        n = |D_test|; overrides a ``test_size`` field in a JSON trace.
    name : str, optional
        A name for messages and titles (default: the file name).
    max_bytes : int
        Larger inputs are refused before parsing (:data:`MAX_TRACE_BYTES`).

    Returns
    -------
    Trace

    Raises
    ------
    InputError
        With the row and column of the first problem: missing columns, non-numbers,
        values outside [0, 1], NaN, duplicate or decreasing steps, an empty file,
        bytes that are not UTF-8 text, or a file over ``max_bytes``.

    Examples
    --------
    >>> t = read_trace(b"step,val_accuracy,test_accuracy\\n1,0.90,0.88\\n2,0.92,0.89\\n")
    >>> t.empirical_overfitting.tolist()
    [0.02, 0.03]
    """
    if isinstance(source, Trace):
        trace = source
    elif isinstance(source, (bytes, bytearray, memoryview)):
        trace = parse_trace(bytes(source), format=format, name=name or "uploaded trace", max_bytes=max_bytes)
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise InputError("trace", "an existing file", path)
        size = os.path.getsize(path)
        check_size(size, max_bytes, "trace")
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
        trace = parse_trace(data, format=format or _format_from_name(path), name=name or os.path.basename(path),
                            max_bytes=max_bytes)
    elif hasattr(source, "read"):
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        file_name = name or os.path.basename(str(getattr(source, "name", "") or "")) or "trace"
        trace = parse_trace(data, format=format or _format_from_name(file_name), name=file_name,
                            max_bytes=max_bytes)
    elif isinstance(source, list):
        trace = _from_records(source, name=name or "trace", where="list")
    elif hasattr(source, "to_dict") and hasattr(source, "columns"):  # a pandas DataFrame
        records = source.to_dict(orient="records")
        trace = _from_records(records, name=name or "DataFrame", where="frame")
    else:
        raise InputError("trace", "a path, bytes, a file object, a list of step dicts or a DataFrame",
                         raw(type(source).__name__))
    if test_size is not None:
        trace = trace.with_test_size(test_size)
    return trace


def parse_trace(data, *, format: str | None = None, name: str = "trace",
                max_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """Validate the content of a trace file (``bytes`` or already decoded ``str``)."""
    if isinstance(data, str):
        text = data
        check_size(len(text.encode("utf-8")), max_bytes, "trace")
    else:
        data = bytes(data)
        check_size(len(data), max_bytes, "trace")
        text = decode_text(data, "trace", "CSV or JSON")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise InputError("trace", "a CSV or JSON file with a header and at least one step", raw("an empty file"))
    fmt = (format or _format_from_name(name) or _sniff(text)).lower()
    if fmt not in ("csv", "json"):
        raise InputError("format", "'csv' or 'json'", fmt)
    if fmt == "json":
        return _parse_json(text, name)
    return _parse_csv(text, name)


# ============================================================================ bytes and formats






def _format_from_name(name) -> str | None:
    lower = str(name or "").lower()
    if lower.endswith(".json"):
        return "json"
    if lower.endswith((".csv", ".tsv", ".txt")):
        return "csv"
    return None


def _sniff(text: str) -> str:
    first = text.lstrip()[:1]
    return "json" if first in ("{", "[") else "csv"


# ============================================================================ cells
def _normalize_name(name) -> str:
    return str(name).strip().lower().replace(" ", "_").replace("-", "_")


def _parse_step(value, where: str) -> int:
    if isinstance(value, bool):
        raise InputError("step", "a whole number >= 0", value, location=where)
    text = value.strip() if isinstance(value, str) else value
    if text is None or text == "":
        raise InputError("step", "a whole number >= 0", raw("an empty cell"), location=where)
    return check_int_at("step", text, where)


def check_int_at(name: str, value, where: str) -> int:
    try:
        return check_int(name, value, minimum=0)
    except InputError as exc:
        raise InputError(exc.parameter, exc.rule, exc.got, location=where) from None


def _parse_score(column: str, value, where: str) -> float:
    rule = "a number in [0, 1]"
    if isinstance(value, bool) or isinstance(value, (list, dict)):
        raise InputError(column, rule, value, location=where)
    if value is None or (isinstance(value, str) and value.strip() == ""):
        raise InputError(column, rule, raw("an empty cell"), location=where)
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            hint = " (use a dot as the decimal separator)" if "," in text else ""
            raise InputError(column, rule + hint, text, location=where) from None
    else:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InputError(column, rule, value, location=where) from None
        text = value
    if math.isnan(number):
        raise InputError(column, rule + ", not NaN", raw("NaN"), location=where)
    if not 0.0 <= number <= 1.0:
        hint = ""
        if 2.0 <= number <= 100.0:
            hint = f" (write percentages as fractions: {number / 100:g} for {number:g}%)"
        raise InputError(column, rule + hint, text, location=where)
    return number


def _parse_reverted(value, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value in (0, 1):
            return bool(value)
        raise InputError("reverted", "true or false (also yes/no, 1/0)", value, location=where)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError("reverted", "true or false (also yes/no, 1/0)", str(value), location=where)


def _parse_tenant(value, where: str) -> str:
    if value is None or isinstance(value, (bool, list, dict)):
        raise InputError("tenant", "a name (who submitted the step)", raw("nothing" if value is None else
                                                                          format_value(value)), location=where)
    text = str(value).strip()
    if isinstance(value, float) and value == int(value):
        text = str(int(value))
    if not text:
        raise InputError("tenant", "a name (who submitted the step) in every row when the column is present",
                         raw("an empty cell"), location=where)
    if len(text) > _MAX_TENANT_CHARS:
        raise InputError("tenant", f"a name of at most {_MAX_TENANT_CHARS} characters", text, location=where)
    return text


def _parse_description(value) -> str:
    if value is None:
        return ""
    return str(value).strip()


# ============================================================================ columns
def _choose_metric(columns, where: str, given) -> str:
    """'accuracy' or 'loss' from the column names, or a clear error."""
    have = {metric: [c for c in pair if c in columns] for metric, pair in SCORE_COLUMNS.items()}
    if "step" not in columns:
        raise InputError("columns", _HEADER_RULE + " (missing: step)", given, location=where)
    full = [metric for metric, cols in have.items() if len(cols) == 2]
    if len(full) == 2:
        raise InputError("columns", "either val_accuracy, test_accuracy or val_loss, test_loss, not both",
                         given, location=where)
    if full:
        other = "loss" if full[0] == "accuracy" else "accuracy"
        if have[other]:
            raise InputError("columns", "either val_accuracy, test_accuracy or val_loss, test_loss, not both",
                             given, location=where)
        return full[0]
    for metric, cols in have.items():
        if len(cols) == 1:
            missing = [c for c in SCORE_COLUMNS[metric] if c not in cols][0]
            raise InputError("columns", f"{_HEADER_RULE} (missing: {missing}, which goes with {cols[0]})",
                             given, location=where)
    raise InputError("columns", _HEADER_RULE + " (missing: the score columns)", given, location=where)


def _check_order(steps: list, wheres: list) -> None:
    seen = {}
    for i, s in enumerate(steps):
        if s in seen:
            raise InputError("step", f"unique, each step once (step {s} is already on {seen[s]})", s,
                             location=wheres[i])
        if i and s < steps[i - 1]:
            raise InputError("step", f"increasing, in the order the models were submitted (after step {steps[i - 1]})",
                             s, location=wheres[i])
        seen[s] = wheres[i].split(",")[0]


def _build(rows: list, metric: str, has_tenant: bool, name: str, test_size, ignored) -> Trace:
    steps = [r[0] for r in rows]
    wheres = [r[6] for r in rows]
    _check_order(steps, wheres)
    return Trace(
        steps=np.asarray(steps, dtype=np.int64),
        val=np.asarray([r[1] for r in rows], dtype=float),
        test=np.asarray([r[2] for r in rows], dtype=float),
        metric=metric,
        tenants=tuple(r[3] for r in rows) if has_tenant else (),
        reverted=np.asarray([r[4] for r in rows], dtype=bool),
        descriptions=tuple(r[5] for r in rows),
        test_size=test_size,
        name=name,
        ignored_columns=tuple(ignored),
    )


# ============================================================================ CSV
def _parse_csv(text: str, name: str) -> Trace:
    lines = text.splitlines()
    header_line = next((ln for ln in lines if ln.strip()), "")
    delimiter = ","
    if header_line.count(";") > header_line.count(",") and header_line.count(";") > 0:
        delimiter = ";"
    elif header_line.count("\t") > header_line.count(","):
        delimiter = "\t"
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = None
    header_row = 0
    records, row_nos = [], []
    try:
        for record in reader:
            row_no = reader.line_num
            if not record or (not record[0].strip() and all(not c.strip() for c in record)):
                continue
            if header is None:
                header = [_normalize_name(c) for c in record]
                header_row = row_no
                shown = raw(format_value(delimiter.join(c.strip() for c in record)))
                dupes = sorted({c for c in header if header.count(c) > 1 and c})
                if dupes:
                    raise InputError("columns", "unique column names", raw(f"{dupes[0]!r} twice"),
                                     location=f"row {row_no}")
                metric = _choose_metric(header, f"row {row_no}", shown)
                index = {c: i for i, c in enumerate(header)}
                val_col, test_col = SCORE_COLUMNS[metric]
                ignored = [c for c in header if c and c not in KNOWN_COLUMNS]
                continue
            if len(record) > len(header):
                raise InputError("fields", f"{len(header)} per row, like the header (quote text that contains "
                                 f"'{delimiter}')", raw(f"{len(record)} fields"), location=f"row {row_no}")
            records.append(record)
            row_nos.append(row_no)
    except csv.Error as exc:
        raise InputError("trace", "well-formed CSV", raw(str(exc)), location=f"row {reader.line_num}") from None
    if header is None:  # pragma: no cover - guarded by the empty check
        raise InputError("trace", "a CSV file with a header", raw("no rows"))
    if not records:
        raise InputError("trace", "at least one step below the header", raw("only the header"),
                         location=f"row {header_row}")
    fast = _csv_fast(records, index, len(header), metric, name, ignored)
    if fast is not None:
        return fast
    # Something is off: parse cell by cell, which names the row and column of the first problem.
    rows = [_csv_row(record, row_no, index, header, val_col, test_col) for record, row_no in zip(records, row_nos)]
    return _build(rows, metric, "tenant" in index, name, None, ignored)


def _csv_fast(records, index, width, metric, name, ignored) -> Trace | None:
    """Vectorized parsing of a well-formed CSV body; None when any cell needs a closer look."""
    if any(len(r) != width for r in records):
        return None
    columns = list(zip(*records))
    val_col, test_col = SCORE_COLUMNS[metric]
    try:
        step_f = np.array(columns[index["step"]], dtype=float)
        val = np.array(columns[index[val_col]], dtype=float)
        test = np.array(columns[index[test_col]], dtype=float)
    except ValueError:
        return None
    with np.errstate(invalid="ignore"):
        ok = (np.all(np.isfinite(step_f)) and np.all(step_f >= 0) and np.all(step_f == np.floor(step_f))
              and np.all((val >= 0) & (val <= 1)) and np.all((test >= 0) & (test <= 1)))
    if not ok or np.any(np.diff(step_f) <= 0):
        return None
    tenants = ()
    if "tenant" in index:
        tenants = tuple(c.strip() for c in columns[index["tenant"]])
        if any(not t or len(t) > _MAX_TENANT_CHARS for t in tenants):
            return None
    reverted = np.zeros(len(records), dtype=bool)
    if "reverted" in index:
        flags = [c.strip().lower() for c in columns[index["reverted"]]]
        if any(f not in _TRUE and f not in _FALSE for f in flags):
            return None
        reverted = np.fromiter((f in _TRUE for f in flags), dtype=bool, count=len(flags))
    descriptions = tuple(c.strip() for c in columns[index["description"]]) if "description" in index else ()
    return Trace(steps=step_f.astype(np.int64), val=val, test=test, metric=metric, tenants=tenants, reverted=reverted,
                 descriptions=descriptions, name=name, ignored_columns=tuple(ignored))


def _csv_row(record, row_no, index, header, val_col, test_col):
    def cell(col):
        i = index.get(col)
        if i is None:
            return None, None
        where = f"row {row_no}, column {i + 1} ({col})"
        return (record[i] if i < len(record) else None), where

    value, where = cell("step")
    step = _parse_step(value if value is not None else "", where)
    value, where = cell(val_col)
    val = _parse_score(val_col, value, where)
    value, where = cell(test_col)
    test = _parse_score(test_col, value, where)
    tenant = ""
    if "tenant" in index:
        value, where = cell("tenant")
        tenant = _parse_tenant(value if value is not None else "", where)
    reverted = False
    if "reverted" in index:
        value, where = cell("reverted")
        reverted = _parse_reverted(value if value is not None else "", where)
    description = ""
    if "description" in index:
        value, _ = cell("description")
        description = _parse_description(value)
    return (step, val, test, tenant, reverted, description, f"row {row_no}, column {index['step'] + 1} (step)")


# ============================================================================ JSON and records
def _parse_json(text: str, name: str) -> Trace:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError("trace", "valid JSON", raw(exc.msg.lower()), location=f"line {exc.lineno}, column {exc.colno}") from None
    test_size = None
    if isinstance(doc, dict):
        keys = {_normalize_name(k): k for k in doc}
        if "steps" not in keys:
            raise InputError("trace", "a JSON object with a 'steps' list (or a list of steps)",
                             raw("keys " + ", ".join(repr(k) for k in list(doc)[:8])))
        for key in ("test_size", "n"):
            if key in keys and doc[keys[key]] is not None:
                try:
                    test_size = check_int("test_size", doc[keys[key]], minimum=1)
                except InputError as exc:
                    raise InputError(exc.parameter, exc.rule, exc.got, location=f"field {keys[key]}") from None
                break
        records = doc[keys["steps"]]
        if not isinstance(records, list):
            raise InputError("steps", "a list of step objects", raw(type(records).__name__), location="field steps")
        trace = _from_records(records, name=name, where="json")
        extra = {}
        if isinstance(doc.get("synthetic"), bool):
            extra["synthetic"] = doc["synthetic"]
        return replace(trace, test_size=test_size, **extra)
    if isinstance(doc, list):
        return _from_records(doc, name=name, where="json")
    raise InputError("trace", "a JSON object with a 'steps' list (or a list of steps)", raw(type(doc).__name__))


def _from_records(records: list, *, name: str, where: str) -> Trace:
    if not records:
        raise InputError("trace", "at least one step", raw("an empty list"))

    def place(i):
        return f"row {i + 1} (steps[{i}])" if where == "json" else f"row {i + 1}"

    first = records[0]
    if not isinstance(first, dict):
        raise InputError("step entry", "an object with step, val_accuracy, test_accuracy, ...",
                         raw(type(first).__name__), location=place(0))
    columns = {_normalize_name(k) for k in first}
    metric = _choose_metric(columns, place(0), raw("fields " + ", ".join(repr(k) for k in first)))
    val_col, test_col = SCORE_COLUMNS[metric]
    has_tenant = any(isinstance(r, dict) and any(_normalize_name(k) == "tenant" for k in r) for r in records)
    ignored = []
    rows = []
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise InputError("step entry", "an object with step, val_accuracy, test_accuracy, ...",
                             raw(type(record).__name__), location=place(i))
        rec = {_normalize_name(k): v for k, v in record.items()}
        for key in OPTIONAL_COLUMNS:  # a DataFrame's missing optional cells are NaN
            if isinstance(rec.get(key), float) and math.isnan(rec[key]):
                rec[key] = None
        for k in rec:
            if k not in KNOWN_COLUMNS and k not in ignored:
                ignored.append(k)

        def at(col):
            return f"{place(i)}, field {col}"

        if "step" not in rec:
            raise InputError("step", "present in every step entry", raw("no step field"), location=place(i))
        step = _parse_step(rec["step"], at("step"))
        for col in (val_col, test_col):
            if col not in rec:
                raise InputError(col, "present in every step entry (like the first one)", raw(f"no {col} field"),
                                 location=place(i))
        val = _parse_score(val_col, rec[val_col], at(val_col))
        test = _parse_score(test_col, rec[test_col], at(test_col))
        tenant = _parse_tenant(rec.get("tenant", ""), at("tenant")) if has_tenant else ""
        reverted = _parse_reverted(rec.get("reverted"), at("reverted"))
        description = _parse_description(rec.get("description"))
        rows.append((step, val, test, tenant, reverted, description, at("step")))
    return _build(rows, metric, has_tenant, name, None, ignored)
