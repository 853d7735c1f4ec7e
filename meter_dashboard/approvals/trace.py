"""Modification traces: what a developer brings to /approve, read and validated.

A trace is a CSV with a header row of names and one row per test example: the first column
is the original model's per-example loss, then one column per modification in the order
they were tested.  An optional second file of the same shape holds the prespecified
procedure's modifications (presSRGP, Feng et al. Section 2.4).  Every file goes through
:func:`meter_dashboard.core.files.read_text` (size limit, UTF-8 with the byte that is not) and
every cell through a bounded number check, so a bad file is an :class:`InputError` naming
its line and column, never a traceback.
"""
from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ..bounds.srgp import MAX_STEPS
from ..core.files import read_text
from ..core.tables import BadCells, CsvError, Rows, read_rows
from ..core.validation import MAX_NUMBER_CHARS, InputError, check_number, check_real_array, raw

__all__ = ["EXAMPLES", "ModificationTrace", "read_modification_trace", "load_example", "as_trace",
           "check_prespecified"]

#: Shipped example traces: name -> (file, prespecified file or None, description).
EXAMPLES = {
    "refits": ("approve_refits.csv", "approve_refits_prespecified.csv",
               "15 refits on a growing data stream (mostly real improvements), 800 test examples"),
    "adversary": ("approve_adversary.csv", "approve_adversary_prespecified.csv",
                  "50 modifications by a developer overfitting 100 reused test examples "
                  "(the original model is the best one)"),
}

_MAX_NAME = 80


@dataclass(frozen=True)
class ModificationTrace:
    """Per-example losses of the original model and of each modification, in test order."""

    names: tuple
    original: np.ndarray
    losses: np.ndarray
    original_name: str = "original"
    source: str = ""

    @property
    def examples(self) -> int:
        return int(self.original.size)

    @property
    def modifications(self) -> int:
        return int(self.losses.shape[1])

    @property
    def improvements(self) -> np.ndarray:
        """Per-example ``loss_0 - loss_j`` (positive = modification j is better), shape (n, T)."""
        return self.original[:, None] - self.losses

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest of the losses and names: equal traces (whoever loaded them) have equal fingerprints."""
        digest = hashlib.blake2b(digest_size=16)
        digest.update(repr((self.names, self.original_name, self.original.shape, self.losses.shape)).encode())
        digest.update(np.ascontiguousarray(self.original).tobytes())
        digest.update(np.ascontiguousarray(self.losses).tobytes())
        return digest.hexdigest()

    def renamed(self, source: str) -> ModificationTrace:
        """The same trace with another display name (an uploaded file's name)."""
        return ModificationTrace(self.names, self.original, self.losses, self.original_name, source)

    def __repr__(self) -> str:
        return (f"ModificationTrace({self.modifications} modifications x {self.examples} examples, "
                f"source={self.source!r})")


def _rows(text: str, parameter: str) -> Rows | None:
    """Non-empty, non-comment CSV rows with their line numbers (CR, LF and CRLF endings)."""
    try:
        return read_rows(text, parameter=parameter, comments=True)
    except CsvError as exc:  # e.g. a field over the csv module's 131,072-character limit
        raise InputError(parameter, "a CSV file of numbers", raw(f"unreadable CSV ({exc.reason})"),
                         location=f"line {exc.line}") from None


def _header(row: list, line: int, parameter: str) -> list:
    header = [cell.strip() for cell in row]
    if len(header) < 2:
        raise InputError(parameter, "at least 2 columns (the original model's loss, then one per modification)",
                         header, location=f"line {line}")
    if len(header) - 1 > MAX_STEPS:
        raise InputError(parameter, f"at most {MAX_STEPS} modifications (columns after the first)",
                         raw(f"{len(header) - 1:,} columns"), location=f"line {line}")
    seen: dict[str, int] = {}  # column name -> its column number
    for j, name in enumerate(header, start=1):
        where = f"line {line}, column {j}"
        if name == "":
            raise InputError("column name", "non-empty", name, location=where)
        if len(name) > _MAX_NAME:
            raise InputError("column name", f"at most {_MAX_NAME} characters", name, location=where)
        if name in seen:
            raise InputError("column name", f"unique (also used by column {seen[name]})", name, location=where)
        seen[name] = j
    if all(_is_number(cell) for cell in header):
        raise InputError(parameter, "a CSV whose first line is a header of names", header, location=f"line {line}")
    return header


def _is_number(cell: str) -> bool:
    try:
        check_number("cell", cell)
    except InputError:
        return False
    return True


def _values(table: Rows, header: list) -> np.ndarray:
    """The loss table; every cell a finite number of bounded length, or an error naming each bad one."""
    width, rows = len(header), table.data
    values = np.empty((len(rows), width))
    bad = BadCells()
    for i, row in enumerate(rows):
        if len(row) != width:
            raise InputError("row", f"{width} values like the header", f"{len(row)} values",
                             location=f"line {table.line(i)}")
        try:  # fast path: numpy parses the whole row; any doubt falls back to the checked path
            if max(len(cell) for cell in row) > MAX_NUMBER_CHARS:
                raise ValueError
            parsed = np.array(row, dtype=float)
            if not np.all(np.isfinite(parsed)):
                raise ValueError
            values[i] = parsed
        except ValueError:
            for j, cell in enumerate(row):
                where = f"line {table.line(i)}, column {j + 1}"
                try:
                    values[i, j] = check_number(f"loss ({header[j]})", cell, location=where)
                except InputError as exc:
                    rule = "a finite number" if len(cell.strip()) <= MAX_NUMBER_CHARS else exc.rule
                    bad.add(InputError(f"loss ({header[j]})", rule, cell.strip(), location=where))
    bad.check()
    return values


def read_modification_trace(source, *, parameter: str = "trace") -> ModificationTrace:
    """Read and validate a modification trace (CSV).

    Parameters
    ----------
    source : path, bytes or text file object
        CSV with a header row of names; one row per test example; the first column is the
        original model's per-example loss, the others the modifications' losses in the
        order they were tested.  Lines starting with ``#`` are comments.
    parameter : str
        The name used in error messages (``"trace"`` or ``"prespecified"``).

    Raises
    ------
    InputError
        With the line and column of each bad value (up to
        :data:`~meter_dashboard.core.tables.MAX_NAMED_CELLS` of them, the rest counted).

    References
    ----------
    Feng et al., "Sequential algorithmic modification with test data reuse", Section 3
    (per-example losses of the original model and of each modification, Eq. 7).
    """
    text, label = read_text(source, parameter=parameter)
    table = _rows(text, parameter)
    if table is None:
        raise InputError(parameter, "a CSV file with a header row and one row per test example", "an empty file")
    header = _header(table.header, table.header_line, parameter)
    values = _values(table, header)
    if values.shape[0] < 2:
        raise InputError(parameter, "at least 2 test examples (rows after the header)", values.shape[0])
    return ModificationTrace(names=tuple(header[1:]), original=values[:, 0].copy(), losses=values[:, 1:].copy(),
                             original_name=header[0], source=label)


def _example_path(filename: str):
    return resources.files("meter_dashboard") / "data" / filename


def load_example(name: str) -> tuple[ModificationTrace, ModificationTrace | None]:
    """A shipped example trace and its prespecified companion (or ``None``).

    Read once per process and shared (the arrays are read-only): every session of a server
    opens the same example without reading it again.
    """
    if name not in EXAMPLES:
        raise InputError("example", "one of " + ", ".join(EXAMPLES), name)
    return _example(name)


@functools.lru_cache(maxsize=None)
def _example(name: str) -> tuple[ModificationTrace, ModificationTrace | None]:
    trace, prespecified = _read_example(name)
    for t in (trace, prespecified):
        if t is not None:
            t.original.flags.writeable = False
            t.losses.flags.writeable = False
    return trace, prespecified


def _read_example(name: str) -> tuple[ModificationTrace, ModificationTrace | None]:
    main, pres, _ = EXAMPLES[name]
    with resources.as_file(_example_path(main)) as path:
        trace = read_modification_trace(path)
    prespecified = None
    if pres:
        with resources.as_file(_example_path(pres)) as path:
            if Path(path).exists():
                prespecified = read_modification_trace(path, parameter="prespecified")
    return trace, prespecified


def _from_table(values, names, original_name: str, source: str, parameter: str) -> ModificationTrace:
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[1] < 2 or values.shape[0] < 2:
        raise InputError(parameter, "a table of losses with at least 2 rows and 2 columns (first column the "
                         "original model)", list(values.shape))
    if values.shape[1] - 1 > MAX_STEPS:
        raise InputError(parameter, f"at most {MAX_STEPS} modifications", raw(f"{values.shape[1] - 1:,} columns"))
    if not np.all(np.isfinite(values)):
        raise InputError(parameter, "finite losses", raw("NaN or infinite values"))
    return ModificationTrace(names=tuple(names), original=values[:, 0].copy(), losses=values[:, 1:].copy(),
                             original_name=original_name, source=source)


def as_trace(trace, parameter: str = "trace") -> ModificationTrace:
    """A :class:`ModificationTrace` from a trace, a path, bytes, a file, a DataFrame or an array."""
    if isinstance(trace, ModificationTrace):
        return trace
    if isinstance(trace, (str, os.PathLike, bytes, bytearray)) or hasattr(trace, "read"):
        return read_modification_trace(trace, parameter=parameter)
    if hasattr(trace, "to_numpy") and hasattr(trace, "columns"):  # a DataFrame
        names = [str(c) for c in trace.columns]
        return _from_table(check_real_array(parameter, trace.to_numpy(), ndim=2), names[1:], names[0], "data frame",
                           parameter)
    values = check_real_array(parameter, trace, ndim=2)
    width = values.shape[1] if values.ndim == 2 else 0
    return _from_table(values, [f"m{j}" for j in range(1, width)], "original", "array", parameter)


def check_prespecified(trace: ModificationTrace, prespecified: ModificationTrace) -> None:
    """A prespecified trace must have one row per test example of ``trace``."""
    if prespecified.examples != trace.examples:
        raise InputError("prespecified", f"{trace.examples} rows (one per test example, as in the trace)",
                         prespecified.examples)
