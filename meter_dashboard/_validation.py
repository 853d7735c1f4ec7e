"""Input validation shared by every layer (pure Python + numpy, no Panel, no param).

Every bad input raises :class:`InputError`, whose message has one shape everywhere
(the scikit-learn convention): *which* parameter, *what* it must be, *what* it got,
and, for files, *where* (row and column).  The CLI prints it as one line, the pages
show it beside the input, notebooks see it as a ``ValueError``.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = [
    "InputError",
    "check_number",
    "check_probability",
    "check_positive",
    "check_int",
    "check_non_decreasing",
    "parse_number_list",
    "parse_int_list",
    "format_value",
]


def format_value(value) -> str:
    """A short, readable rendering of a user's value for an error message."""
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return repr(text)
    if isinstance(value, (np.ndarray, list, tuple)):
        items = list(np.asarray(value, dtype=object).ravel())
        shown = ", ".join(format_value(v) for v in items[:8])
        if len(items) > 8:
            shown += f", ... ({len(items)} values)"
        return f"[{shown}]"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    if isinstance(value, (np.integer,)):
        return str(int(value))
    return repr(value)


class InputError(ValueError):
    """A value a person gave is not acceptable.

    Parameters
    ----------
    parameter : str
        The name the person knows the input by (``"epsilon"``, ``"--steps"``,
        ``"val_accuracy"``).
    rule : str
        What it must be, phrased to follow "must be" (``"in (0, 1)"``).
    got : object
        The offending value, echoed back.
    location : str, optional
        Where the value was found (``"row 4"``, ``"line 2, column 7"``).
    """

    def __init__(self, parameter: str, rule: str, got, *, location: str | None = None):
        self.parameter = parameter
        self.rule = rule
        self.got = got
        self.location = location
        got_text = got if isinstance(got, _Raw) else format_value(got)
        message = f"{parameter} must be {rule}; got {got_text}"
        if location:
            message = f"{location}: {message}"
        super().__init__(message)


class _Raw(str):
    """A pre-formatted 'got' text (not quoted again)."""


def raw(text: str) -> _Raw:
    """Mark a 'got' text as already formatted for :class:`InputError`."""
    return _Raw(text)


def _as_float(name: str, value) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise InputError(name, "a number", value) from None
    if math.isnan(result):
        raise InputError(name, "a number", value)
    return result


def check_number(name: str, value) -> float:
    """``value`` (a flag's text, a cell, a widget value) as a finite float.

    Never evaluates text: ``float()`` only.  NaN and infinities are refused.
    """
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise InputError(name, "a number", value) from None
    if not math.isfinite(result):
        raise InputError(name, "a finite number", value)
    return result


def check_probability(name: str, value, *, closed: bool = False) -> float:
    """``value`` as a float in (0, 1) (or [0, 1] when ``closed``)."""
    result = _as_float(name, value)
    if closed:
        if not 0.0 <= result <= 1.0:
            raise InputError(name, "in [0, 1]", value)
    elif not 0.0 < result < 1.0:
        raise InputError(name, "in (0, 1)", value)
    return result


def check_positive(name: str, value, *, allow_zero: bool = False) -> float:
    """``value`` as a finite float > 0 (or >= 0)."""
    result = _as_float(name, value)
    if not math.isfinite(result) or result < 0 or (result == 0 and not allow_zero):
        raise InputError(name, "a finite number >= 0" if allow_zero else "a finite number > 0", value)
    return result


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int within ``[minimum, maximum]``."""
    if isinstance(value, bool):
        raise InputError(name, "a whole number", value)
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        raise InputError(name, "a whole number", value) from None
    if not math.isfinite(as_float) or as_float != int(as_float):
        raise InputError(name, "a whole number", value)
    result = int(as_float)
    if minimum is not None and result < minimum:
        rule = f"a whole number >= {minimum}" if maximum is None else f"a whole number in [{minimum}, {maximum}]"
        raise InputError(name, rule, value)
    if maximum is not None and result > maximum:
        rule = f"a whole number <= {maximum}" if minimum is None else f"a whole number in [{minimum}, {maximum}]"
        raise InputError(name, rule, value)
    return result


def check_non_decreasing(name: str, values: Sequence[float], what: str = "non-decreasing") -> None:
    """Raise unless ``values[i] <= values[i + 1]`` for every i."""
    arr = np.asarray(values, dtype=float)
    if arr.size > 1 and np.any(np.diff(arr) < 0):
        raise InputError(name, what, list(values))


def _split(text: str) -> list[str]:
    parts = [p.strip() for p in str(text).replace(";", ",").split(",")]
    return [p for p in parts if p != ""]


def parse_number_list(name: str, text) -> list[float]:
    """Parse ``"0.01, 0.02"`` (or an iterable of numbers) into floats.

    Never evaluates the text: each item goes through ``float()`` only.
    """
    if isinstance(text, str):
        items: Iterable = _split(text)
        if not items:
            raise InputError(name, "a comma-separated list of numbers", text)
    else:
        items = list(np.atleast_1d(np.asarray(text, dtype=object)))
    out = []
    for item in items:
        try:
            value = float(item)
        except (TypeError, ValueError):
            raise InputError(name, "a comma-separated list of numbers", raw(format_value(str(text)) + f" ({format_value(item)} is not a number)")) from None
        if math.isnan(value):
            raise InputError(name, "a comma-separated list of numbers", text)
        out.append(value)
    return out


def parse_int_list(name: str, text) -> list[int]:
    """Parse ``"5,5"`` (or an iterable) into whole numbers."""
    values = parse_number_list(name, text)
    out = []
    for value in values:
        if not math.isfinite(value) or value != int(value):
            raise InputError(name, "a comma-separated list of whole numbers", text)
        out.append(int(value))
    return out
