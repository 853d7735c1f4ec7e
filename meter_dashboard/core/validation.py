"""Input validation shared by every layer (pure Python + numpy, no Panel, no param).

Every bad input raises :class:`InputError`, whose message has one shape everywhere
(the scikit-learn convention): *which* parameter, *what* it must be, *what* it got,
and, for files, *where* (row and column).  The CLI prints it as one line, the pages
show it beside the input, notebooks see it as a ``ValueError``.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from fractions import Fraction

__all__ = [
    "InputError",
    "MAX_NUMBER_CHARS",
    "MAX_LIST_ITEMS",
    "check_number",
    "parse_exact_decimal",
    "check_probability",
    "check_positive",
    "check_int",
    "check_non_decreasing",
    "parse_number_list",
    "parse_int_list",
    "format_value",
    "check_real_array",
    "check_choice_text",
    "check_instance",
]

_T = TypeVar("_T")


def format_value(value: object) -> str:
    """A short, readable rendering of a user's value for an error message."""
    try:
        return _format_value(value)
    except (TypeError, ValueError, OverflowError, RecursionError):  # a ragged or exotic value: its type
        return f"a {type(value).__name__}"


def _format_value(value: object) -> str:
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

    def __init__(self, parameter: str, rule: str, got: object, *, location: str | None = None) -> None:
        self.parameter = parameter
        self.rule = rule
        self.got = got
        self.location = location
        got_text = got if isinstance(got, _Raw) else format_value(got)
        message = f"{parameter} must be {rule}; got {got_text}"
        if location:
            message = f"{location}: {message}"
        super().__init__(message)


    def renamed(self, parameter: str) -> "InputError":
        """The same error, naming the input as the person typed it (``cost_per_hour`` -> ``--cost-per-hour``)."""
        got = self.got if isinstance(self.got, _Raw) else self.got
        return InputError(parameter, self.rule, got, location=self.location)


class _Raw(str):
    """A pre-formatted 'got' text (not quoted again)."""


def raw(text: str) -> _Raw:
    """Mark a 'got' text as already formatted for :class:`InputError`."""
    return _Raw(text)


#: The longest text accepted as one number ("0.000001", "1e-12", "100000"): longer text is
#: refused before any conversion, so a 30-million-digit literal costs nothing.
MAX_NUMBER_CHARS = 40
#: Decimal literals parsed exactly (:func:`parse_exact_decimal`) keep at most this many
#: significant digits, with their leading digit within 10**-MAX_EXACT_EXPONENT..10**MAX_EXACT_EXPONENT:
#: enough for every real input, small enough that exact rational arithmetic stays instant.
MAX_EXACT_DIGITS = 30
MAX_EXACT_EXPONENT = 30
#: Items in one comma-separated list (an epsilon vector, revert steps, tenant steps).
MAX_LIST_ITEMS = 1000


def _number_text(name: str, value: str | bytes, rule: str, location: str | None) -> str:
    """The stripped text of a number typed by a person, refused when absurdly long."""
    text = value.strip() if isinstance(value, str) else bytes(value).decode("ascii", "replace").strip()
    if len(text) > MAX_NUMBER_CHARS:
        raise InputError(name, f"{rule} of at most {MAX_NUMBER_CHARS} characters", text, location=location)
    return text


def _as_float(name: str, value: Any, rule: str = "a number", location: str | None = None, *,
              nonfinite_rule: str | None = None) -> float:
    """``value`` as a finite float, bounded in cost; every failure is an :class:`InputError`.

    Text goes through ``float()`` only (never evaluated).  Python ints too large for a float,
    booleans, NaN and infinities are refused with the parameter's name.
    """
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise InputError(name, rule, value, location=location)
    if isinstance(value, (str, bytes)):
        value = _number_text(name, value, rule, location)
    try:
        result = float(value)
    except OverflowError:
        raise InputError(name, f"{rule} within ±1.8e308", raw("a number too large to represent"),
                         location=location) from None
    except (TypeError, ValueError):
        raise InputError(name, rule, value, location=location) from None
    if math.isnan(result):
        raise InputError(name, nonfinite_rule or rule, value, location=location)
    if math.isinf(result):
        raise InputError(name, nonfinite_rule or ("a finite number" if rule == "a number" else rule), value,
                         location=location)
    return result


def check_number(name: str, value: object, *, minimum: float | None = None, maximum: float | None = None,
                 location: str | None = None) -> float:
    """``value`` (a flag's text, a URL value, a cell, a widget value) as a finite float.

    Never evaluates text: ``float()`` only, on at most :data:`MAX_NUMBER_CHARS` characters.
    NaN and infinities are refused; ``minimum`` and ``maximum`` are inclusive bounds.
    """
    result = _as_float(name, value, location=location, nonfinite_rule="a finite number")
    if (minimum is not None and result < minimum) or (maximum is not None and result > maximum):
        if maximum is None:
            rule = f"a number >= {minimum:g}"
        elif minimum is None:
            rule = f"a number <= {maximum:g}"
        else:
            rule = f"a number in [{minimum:g}, {maximum:g}]"
        raise InputError(name, rule, value, location=location)
    return result


def parse_exact_decimal(name: str, text: object, *, location: str | None = None) -> Fraction:
    """A decimal literal as an exact :class:`fractions.Fraction`, bounded before any big arithmetic.

    ``"0.1"`` is exactly 1/10 (not the nearest binary float).  At most
    :data:`MAX_EXACT_DIGITS` significant digits and a size within
    10**-:data:`MAX_EXACT_EXPONENT` .. 10**:data:`MAX_EXACT_EXPONENT`, so a literal such as
    ``1e30000000`` is refused at once instead of becoming a 30-million-digit integer.
    """
    from decimal import Decimal, InvalidOperation
    from fractions import Fraction

    if isinstance(text, Fraction):
        return text
    rule = "a decimal number"
    if isinstance(text, (str, bytes)):
        literal = _number_text(name, text, rule, location)
    else:
        literal = repr(_as_float(name, text, rule, location))
    try:
        value = Decimal(literal)
    except (InvalidOperation, ValueError):
        raise InputError(name, rule, literal, location=location) from None
    if not value.is_finite():
        raise InputError(name, f"{rule} (finite)", literal, location=location)
    _, digit_tuple, raw_exponent = value.as_tuple()
    digits = list(digit_tuple)
    exponent = int(raw_exponent)  # finite (checked above): never 'n', 'N' or 'F'
    while len(digits) > 1 and digits[-1] == 0:  # 1000 is 1E+3: trailing zeros are not precision
        digits.pop()
        exponent += 1
    if any(digits):
        leading = len(digits) + exponent - 1  # the decimal exponent of the leading digit
        if not -MAX_EXACT_EXPONENT <= leading <= MAX_EXACT_EXPONENT:
            raise InputError(name, f"{rule} between 1e-{MAX_EXACT_EXPONENT} and 1e{MAX_EXACT_EXPONENT} in size",
                             literal, location=location)
        if len(digits) > MAX_EXACT_DIGITS:
            raise InputError(name, f"{rule} with at most {MAX_EXACT_DIGITS} significant digits", literal,
                             location=location)
    return Fraction(value)


def check_probability(name: str, value: object, *, closed: bool = False, location: str | None = None) -> float:
    """``value`` as a float in (0, 1) (or [0, 1] when ``closed``)."""
    result = _as_float(name, value, location=location)
    if closed:
        if not 0.0 <= result <= 1.0:
            raise InputError(name, "in [0, 1]", value, location=location)
    elif not 0.0 < result < 1.0:
        raise InputError(name, "in (0, 1)", value, location=location)
    return result


def check_positive(name: str, value: object, *, allow_zero: bool = False, location: str | None = None) -> float:
    """``value`` as a finite float > 0 (or >= 0)."""
    result = _as_float(name, value, location=location)
    if result < 0 or (result == 0 and not allow_zero):
        raise InputError(name, "a finite number >= 0" if allow_zero else "a finite number > 0", value,
                         location=location)
    return result


def _int_range_rule(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"a whole number in [{minimum}, {maximum}]"
    if minimum is not None:
        return f"a whole number >= {minimum}"
    if maximum is not None:
        return f"a whole number <= {maximum}"
    return "a whole number"


def check_int(name: str, value: object, *, minimum: int | None = None, maximum: int | None = None,
              location: str | None = None) -> int:
    """``value`` as a Python int within ``[minimum, maximum]`` (exact: never wrapped to 64 bits).

    Text such as ``"12"``, ``"1e6"`` or ``"1,000"`` is accepted when it names a whole
    number; text longer than :data:`MAX_NUMBER_CHARS` is refused before conversion.
    """
    rule = "a whole number"
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise InputError(name, rule, value, location=location)
    if isinstance(value, (int, np.integer)):
        result = int(value)
    else:
        if isinstance(value, (str, bytes)):
            return _int_in_range(name, _int_from_text(name, value, rule, location), minimum, maximum, rule,
                                 value, location)
        as_float = _as_float(name, value, rule, location)
        if as_float != math.floor(as_float):
            raise InputError(name, rule, value, location=location)
        result = int(as_float)
    return _int_in_range(name, result, minimum, maximum, rule, value, location)


def _int_from_text(name: str, value: str | bytes, rule: str, location: str | None) -> int:
    """``"12"``, ``"1e6"``, ``"1,000"`` as an exact int (``"1e23"`` is 10**23, not a float's neighbour)."""
    from decimal import Decimal, InvalidOperation

    text = _number_text(name, value, rule, location).replace(",", "").replace("_", "")
    try:
        number = Decimal(text)
    except (InvalidOperation, ValueError):
        raise InputError(name, rule, value, location=location) from None
    if not number.is_finite():
        raise InputError(name, rule, value, location=location)
    if number.adjusted() > MAX_EXACT_EXPONENT:  # > 10**30: refused before building the integer
        raise InputError(name, f"{rule} below 1e{MAX_EXACT_EXPONENT}", value, location=location)
    if number != number.to_integral_value():
        raise InputError(name, rule, value, location=location)
    return int(number)


def _int_in_range(name: str, result: int, minimum: int | None, maximum: int | None, rule: str, value: object,
                  location: str | None) -> int:
    if (minimum is not None and result < minimum) or (maximum is not None and result > maximum):
        raise InputError(name, _int_range_rule(minimum, maximum), value, location=location)
    return result


def check_non_decreasing(name: str, values: Sequence[float], what: str = "non-decreasing") -> None:
    """Raise unless ``values[i] <= values[i + 1]`` for every i."""
    arr = np.asarray(values, dtype=float)
    if arr.size > 1 and np.any(np.diff(arr) < 0):
        raise InputError(name, what, list(values))


def _list_items(name: str, text: object, rule: str) -> list[object]:
    """The items of a comma-separated text (or an iterable), at most :data:`MAX_LIST_ITEMS`."""
    if isinstance(text, str):
        if len(text) > MAX_LIST_ITEMS * (MAX_NUMBER_CHARS + 2):
            raise InputError(name, f"{rule} of at most {MAX_LIST_ITEMS} values", text)
        items: list[object] = [p.strip() for p in text.replace(";", ",").split(",")]
        items = [p for p in items if p != ""]
        if not items:
            raise InputError(name, rule, text)
    else:
        items = _flat_items(name, text, rule)
    if len(items) > MAX_LIST_ITEMS:
        raise InputError(name, f"{rule} of at most {MAX_LIST_ITEMS} values", raw(f"{len(items):,} values"))
    return items


def _flat_items(name: str, values: Any, rule: str) -> list[object]:
    """The items of a flat iterable (a list, a tuple, a 1-d array, or one number); a nested one is refused."""
    if isinstance(values, (bytes, bytearray, dict, set, frozenset)) or values is None:
        raise InputError(name, rule, values)
    if isinstance(values, np.ndarray):
        if values.ndim > 1:
            raise InputError(name, f"{rule} (a flat list, not a table)", raw(f"an array of shape {values.shape}"))
        return list(np.atleast_1d(values))
    if np.isscalar(values):
        return [values]
    try:
        items = list(values)
    except TypeError:
        raise InputError(name, rule, values) from None
    for item in items:
        if isinstance(item, (list, tuple, dict, set, np.ndarray)) and not np.isscalar(item):
            raise InputError(name, f"{rule} (a flat list: no list inside)", values)
    return items


def check_real_array(name: str, value: object, *, ndim: int | None = None,
                     location: str | None = None) -> NDArray[np.float64]:
    """``value`` (a list, nested lists, an array) as a float array of real numbers, or an InputError.

    Refused by name: text, bytes, dicts and None where numbers belong, complex numbers, booleans
    mixed with numbers being fine (0/1), ragged nested lists, and a number of dimensions other
    than ``ndim``. NaN and infinities are left to the caller's range checks.
    """
    rules = {1: "a list of numbers", 2: "a table of numbers (rows of equal length)"}
    rule = rules.get(ndim, "numbers") if ndim is not None else "numbers"
    if isinstance(value, (str, bytes, bytearray, dict, set)) or value is None:
        raise InputError(name, rule, value, location=location)
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        raise InputError(name, rule, value, location=location) from None
    if arr.dtype.kind == "O":
        flat = arr.ravel().tolist()
        if any(isinstance(v, (complex, np.complexfloating, str, bytes, list, tuple, dict, set)) or v is None
               for v in flat):
            raise InputError(name, rule, value, location=location)
    elif arr.dtype.kind not in "biuf":
        raise InputError(name, rule, value, location=location)
    try:
        out = arr.astype(float)
    except (ValueError, TypeError, OverflowError):
        raise InputError(name, rule, value, location=location) from None
    if ndim is not None and out.ndim != ndim:
        raise InputError(name, rule, raw(f"{out.ndim} dimension(s), shape {out.shape}"), location=location)
    return out


def check_choice_text(name: str, value: object, choices: Sequence[str]) -> str:
    """``value`` as one of ``choices`` (text, case-insensitive); anything else an InputError listing them."""
    if not isinstance(value, str) or value.strip().lower() not in {c.lower() for c in choices}:
        raise InputError(name, "one of " + ", ".join(repr(c) for c in choices), value)
    return next(c for c in choices if c.lower() == value.strip().lower())


def check_instance(name: str, value: object, kind: type[_T], what: str) -> _T:
    """``value`` when it is a ``kind``; else an InputError saying ``what`` it must be."""
    if not isinstance(value, kind):
        raise InputError(name, what, raw(f"a {type(value).__name__}"))
    return value


def parse_number_list(name: str, text: object) -> list[float]:
    """Parse ``"0.01, 0.02"`` (or an iterable of numbers) into finite floats.

    Never evaluates the text: each item goes through ``float()`` only.
    """
    return _parse_list(name, text, "a comma-separated list of numbers", lambda item: _as_float(name, item),
                       "is not a finite number")


def parse_int_list(name: str, text: object) -> list[int]:
    """Parse ``"5,5"`` (or an iterable) into whole numbers (exact Python ints)."""
    return _parse_list(name, text, "a comma-separated list of whole numbers", lambda item: check_int(name, item),
                       "is not a whole number")


def _parse_list(name: str, text: object, rule: str, convert: Callable[[object], _T], failure: str) -> list[_T]:
    out: list[_T] = []
    for item in _list_items(name, text, rule):
        try:
            out.append(convert(item))
        except InputError:
            got = raw(format_value(str(text)) + f" ({format_value(item)} {failure})")
            raise InputError(name, rule, got) from None
    return out
