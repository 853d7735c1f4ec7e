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

Every problem raises :class:`~meter_dashboard.core.validation.InputError` naming the row
and column (``row 4, column 3 (test_accuracy): test_accuracy must be a number in
[0, 1]; got '1.2'``).  Rows are counted like a spreadsheet: the CSV header is row 1.
Nothing read from a file is ever evaluated (the formats and their rules:
:mod:`meter_dashboard.session.trace_formats`, vectorized for traces of millions of steps).

The empirical overfitting of a step is ``|l(H, D_val) - l(H, D_test)|`` (ease.ml/meter,
Section 3.1); with accuracies the loss is ``1 - accuracy``, which gives the same gap.
It is rounded to 12 decimals so that a gap of ``0.9363 - 0.9263`` is exactly 0.01 and
falls into the range that starts at 0.01, as a person reading the numbers expects.
"""
from __future__ import annotations

import functools
import os
from dataclasses import InitVar, dataclass, field, replace
from importlib import resources

import numpy as np

from ..core.formatting import strict_json
from ..core.files import MAX_FILE_BYTES, check_size, decode_text
from ..core.validation import InputError, check_int, raw
from .trace_formats import SCORE_COLUMNS, TraceColumns, columns_from_records, parse_csv, parse_json

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

#: Files and bytes larger than this are refused before they are parsed (64 MiB, about 1.5
#: million steps of CSV; pages accept uploads up to :data:`meter_dashboard.core.files.MAX_UPLOAD_BYTES`).
MAX_TRACE_BYTES = MAX_FILE_BYTES
_ROUND_DECIMALS = 12


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
    reverted: np.ndarray = None  # type: ignore[assignment]  # None: no step reverted (__post_init__ fills it)
    descriptions: tuple = ()
    test_size: int | None = None
    name: str = "trace"
    synthetic: bool = False
    provenance: str = ""
    ignored_columns: tuple = field(default_factory=tuple)
    tenant_index: InitVar[tuple | None] = None

    def __post_init__(self, tenant_index=None):
        n = len(self.steps)
        if not self.tenants:
            object.__setattr__(self, "tenants", ("",) * n)
        if self.reverted is None:
            object.__setattr__(self, "reverted", np.zeros(n, dtype=bool))
        if not self.descriptions:
            object.__setattr__(self, "descriptions", ("",) * n)
        if tenant_index is not None:  # (names, codes) from the reader: no pass over the tenants
            object.__setattr__(self, "_tenants", tenant_index)

    def __len__(self) -> int:
        return int(len(self.steps))

    def _tenant_table(self) -> tuple:
        """(tenant names in order of first submission, each step's index into them), cached."""
        cached = self.__dict__.get("_tenants")
        if cached is None:
            lookup: dict = {}
            codes = np.fromiter((lookup.setdefault(t, len(lookup)) for t in self.tenants), dtype=np.int64,
                                count=len(self.tenants))
            cached = (tuple(lookup), codes)
            object.__setattr__(self, "_tenants", cached)
        return cached

    @property
    def has_tenants(self) -> bool:
        """Whether the trace names who submitted each step."""
        return any(t != "" for t in self.tenant_names)

    @property
    def tenant_names(self) -> tuple:
        """Tenants in the order they first submitted."""
        return self._tenant_table()[0]

    @property
    def tenant_codes(self) -> np.ndarray:
        """Each step's tenant as an index into :attr:`tenant_names` (int64 array)."""
        return self._tenant_table()[1]

    @property
    def empirical_overfitting(self) -> np.ndarray:
        """|l(H, D_val) - l(H, D_test)| per step, rounded to 12 decimals (Section 3.1)."""
        cached = self.__dict__.get("_gap")
        if cached is None:
            cached = np.round(np.abs(self.val - self.test), _ROUND_DECIMALS)
            cached.flags.writeable = False
            object.__setattr__(self, "_gap", cached)
        return cached

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
        if test_size == self.test_size:
            return self
        return replace(self, test_size=test_size, tenant_index=self._tenant_table())

    def to_columns(self) -> dict:
        """The trace's columns (numpy arrays and tuples), one entry per step."""
        out: dict[str, np.ndarray | tuple[str, ...]] = {"step": self.steps, self.val_column: self.val,
                                                        self.test_column: self.test}
        if self.has_tenants:
            out["tenant"] = self.tenants
        out["reverted"] = self.reverted
        out["description"] = self.descriptions
        return out

    def to_frame(self):
        """A pandas DataFrame with the trace's columns."""
        import pandas as pd

        return pd.DataFrame({k: (list(v) if isinstance(v, tuple) else v) for k, v in self.to_columns().items()})

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

    @strict_json
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
            parts.append("tenants=" + ", ".join(self.tenant_names[:10]) + (", ..." if len(self.tenant_names) > 10 else ""))
        if self.reverted.any():
            shown = self.revert_steps
            parts.append("reverted=" + ", ".join(str(s) for s in shown[:10]) + (", ..." if len(shown) > 10 else ""))
        if self.synthetic:
            parts.append("synthetic")
        return f"Trace({self.name!r}: " + ", ".join(parts) + ")"


# ============================================================================ examples
@dataclass(frozen=True)
class Example:
    """A trace shipped inside the package (its provenance beside it, ``<key>.md``)."""

    key: str
    file: str
    title: str
    synthetic: bool
    test_size: int | None = None
    summary: str = ""

    @property
    def provenance_file(self) -> str:
        """The note on where the trace comes from, in the same package folder."""
        return f"{self.key}.md"


EXAMPLES = {e.key: e for e in (
    Example("emocontext", "emocontext_trace.csv", "EmoContext: a real 8-step development history", synthetic=False,
            test_size=5509,
            summary=("System X, an emotion classifier for SemEval-2019 Task 3, the ease.ml/meter paper's case "
                     "study (Section 3.3, Figure 3a). Scores read off the public repository's plots; "
                     "test set of 5,509 conversations.")),
    Example("synthetic_overfitting", "synthetic_overfitting_trace.json",
            "Synthetic: two developers who overfit the validation set", synthetic=True,
            summary=("SYNTHETIC, simulated by tests/generators/generate_synthetic_trace.py (seeded): each step "
                     "keeps the candidate with the best validation accuracy on a 500-example validation set, so "
                     "validation accuracy climbs while test accuracy stalls; risky changes that lose validation "
                     "accuracy are reverted.")),
)}


def example_path(key: str):
    """The packaged file (a ``importlib.resources`` Traversable) of example ``key``."""
    if key not in EXAMPLES:
        raise InputError("example", "one of " + ", ".join(EXAMPLES), key)
    return resources.files("meter_dashboard.data").joinpath(EXAMPLES[key].file)


def load_example(key: str) -> Trace:
    """A shipped example trace, with its test-set size and provenance attached.

    Read once per process and shared read-only by every session (its arrays cannot be
    written: a change makes a new :class:`Trace`, e.g. :meth:`Trace.with_test_size`).
    """
    if key not in EXAMPLES:
        raise InputError("example", "one of " + ", ".join(EXAMPLES), key)
    return _read_example(key)


@functools.lru_cache(maxsize=len(EXAMPLES))
def _read_example(key: str) -> Trace:
    info = EXAMPLES[key]
    trace = parse_trace(example_path(key).read_bytes(), name=info.file)
    tenants = trace._tenant_table()
    for array in (trace.steps, trace.val, trace.test, trace.reverted, tenants[1]):
        array.flags.writeable = False
    return replace(
        trace,
        name=info.title,
        synthetic=info.synthetic,
        provenance=info.summary,
        test_size=trace.test_size if trace.test_size is not None else info.test_size,
        tenant_index=tenants,
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
    for key, value in (("format", format), ("name", name)):
        if value is not None and not isinstance(value, str):
            raise InputError(key, "a text" + (": 'csv' or 'json'" if key == "format" else ""), value)
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
        trace = _trace(columns_from_records(source, where="list"), name or "trace")
    elif hasattr(source, "to_dict") and hasattr(source, "columns"):  # a pandas DataFrame
        trace = _trace(columns_from_records(source.to_dict(orient="records"), where="frame"), name or "DataFrame")
    else:
        raise InputError("trace", "a path, bytes, a file object, a list of step dicts or a DataFrame",
                         raw(type(source).__name__))
    if test_size is not None:
        trace = trace.with_test_size(test_size)
    return trace


def parse_trace(data, *, format: str | None = None, name: str = "trace",
                max_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """Validate the content of a trace file (``bytes`` or already decoded ``str``)."""
    raw_bytes = None
    if isinstance(data, str):
        text = data
        size = len(text) if len(text) * 4 <= max_bytes else len(text.encode("utf-8", "surrogatepass"))
        check_size(size, max_bytes, "trace")
    else:
        data = bytes(data)
        check_size(len(data), max_bytes, "trace")
        text = decode_text(data, "trace", "CSV or JSON")
        raw_bytes = data
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise InputError("trace", "a CSV or JSON file with a header and at least one step", raw("an empty file"))
    if format is not None and not isinstance(format, str):
        raise InputError("format", "'csv' or 'json'", format)
    fmt = (format or _format_from_name(name) or _sniff(text)).lower()
    if fmt not in ("csv", "json"):
        raise InputError("format", "'csv' or 'json'", fmt)
    try:
        columns = parse_json(text) if fmt == "json" else parse_csv(text, raw_bytes)
    except MemoryError:
        raise InputError("trace", "a file this machine has the memory to read", raw(f"{len(text):,} characters")) from None
    return _trace(columns, name)


# ============================================================================ formats
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


def _trace(columns: TraceColumns, name: str) -> Trace:
    """A :class:`Trace` from validated columns."""
    tenants, index = (), None
    if columns.tenant_names is not None:
        names = np.empty(len(columns.tenant_names), dtype=object)
        names[:] = columns.tenant_names
        tenants = tuple(names[columns.tenant_codes].tolist())
        index = (columns.tenant_names, columns.tenant_codes)
    return Trace(steps=columns.steps, val=columns.val, test=columns.test, metric=columns.metric, tenants=tenants,
                 reverted=columns.reverted, descriptions=columns.descriptions or (), test_size=columns.test_size,
                 name=name, synthetic=bool(columns.synthetic), ignored_columns=tuple(columns.ignored),
                 tenant_index=index)
