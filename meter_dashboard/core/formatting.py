"""How every number is written on the pages, in reports and in plot labels: one rule per kind.

No Panel here (the report module and the CLI may use it too).

- counts (labels, steps, runs): whole numbers with thousands separators, ``38,005``;
- measured quantities (accuracies, gaps, epsilon, p-values): four significant digits,
  ``0.06439``, switching to ``2.3×10⁻⁵`` below 0.001 and above 100,000;
- probabilities close to 1 (confidence 1 − δ): never rounded up to ``1``:
  ``1 − 2×10⁻¹³``;
- effort: ``12.5 h`` (or minutes below an hour), ``1.96×10⁹ h`` from 100,000 hours on; money with its unit;
- amounts with one decimal (hours in a table): ``8.1``, ``1.96×10⁹`` from 100,000 on.

The same value reads the same on the page, in the report, in the CLI's table and in a notebook's repr.
"""
from __future__ import annotations

import functools
import math


__all__ = ["json_ready", "strict_json", "DIGITS", "integer", "number", "number_list", "scientific", "confidence",
           "steps_text", "hours", "amount", "LARGE",
           "money", "percent", "interval"]

#: Significant digits of every measured quantity shown.
DIGITS = 4

#: From here on a quantity is written in scientific notation (``1.96×10⁹``), never ``1,959,122,777.8``.
LARGE = 1e5

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_MISSING = "—"


def _special(value) -> str | None:
    if value is None:
        return _MISSING
    value = float(value)
    if math.isnan(value):
        return _MISSING
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return None


def _digits_or_text(value) -> float | str:
    """The value as a float, or its text when there are no digits to show (missing, ±∞, zero)."""
    special = _special(value)
    if special:
        return special
    value = float(value)
    return "0" if value == 0 else value


def integer(value) -> str:
    """38005 -> ``'38,005'``; inf -> ``'∞'``; None -> ``'—'``."""
    if isinstance(value, float) or value is None:
        special = _special(value)
        if special:
            return special
    return f"{int(value):,}".replace("-", "−")


def scientific(value, digits: int = 2) -> str:
    """``2.3×10⁻¹³`` (plain text with Unicode superscripts, fine in HTML and in plot labels)."""
    value = _digits_or_text(value)
    if isinstance(value, str):
        return value
    mantissa, exponent = f"{value:.{max(digits - 1, 0)}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    lead = "" if mantissa in ("1", "-1") else mantissa.replace("-", "−") + "×"
    if mantissa == "-1":
        lead = "−"
    return f"{lead}10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def number(value, digits: int = DIGITS) -> str:
    """A measured quantity with ``digits`` significant digits (the one precision rule)."""
    value = _digits_or_text(value)
    if isinstance(value, str):
        return value
    if 1e-3 <= abs(value) < 1e5:
        text = f"{value:.{digits}g}"
        if "e" in text:  # e.g. 12345.6 with 4 digits
            text = f"{value:,.0f}"
        return text.replace("-", "−")
    return scientific(value, digits)


def number_list(values, digits: int = DIGITS) -> str:
    """``0.01, 0.02, 0.03``."""
    return ", ".join(number(v, digits) for v in values)


def confidence(delta) -> str:
    """1 − δ written so that it is never shown as ``1``: ``0.99``, ``0.999999``, ``1 − 2×10⁻¹³``."""
    delta = float(delta)
    if delta <= 0:
        return "1 − <10⁻¹⁵"  # beyond double precision: 1 − δ is not 1
    if delta >= 1e-6:
        text = f"{1 - delta:.8f}".rstrip("0").rstrip(".")
        return text if text not in ("1", "0") else f"1 − {scientific(delta)}"
    return f"1 − {scientific(delta)}"


def steps_text(value) -> str:
    """A number of steps; ∞ (beyond the search cap) is written ``> 10¹²``."""
    if value is None:
        return _MISSING
    if isinstance(value, float) and math.isinf(value):
        return "> 10¹²"
    return integer(value)


def hours(value) -> str:
    """``12.5 h``; below one hour in minutes (``45 min``)."""
    special = _special(value)
    if special:
        return special
    value = float(value)
    if value >= LARGE:
        return f"{scientific(value, 3)} h"
    return f"{value:,.1f} h" if value >= 1 else f"{value * 60:,.0f} min"


def amount(value, decimals: int = 1) -> str:
    """A quantity in a table cell (hours, cost): ``8.1``, ``1,234.5``; ``1.96×10⁹`` from 100,000 on."""
    special = _special(value)
    if special:
        return special
    value = float(value)
    if abs(value) >= LARGE:
        return scientific(value, 3)
    return f"{value:,.{decimals}f}".replace("-", "−")


def money(amount, per_hour=None) -> str:
    """A cost in the currency of the hourly rate the user gave: ``528 (at 25 per labeler-hour)``."""
    special = _special(amount)
    if special:
        return special
    text = f"{float(amount):,.0f}"
    if per_hour is not None:
        text += f" (at {float(per_hour):,.4g} per labeler-hour)"
    return text


def percent(fraction, digits: int = 3) -> str:
    """0.05 -> ``5%``."""
    special = _special(fraction)
    if special:
        return special
    return f"{100 * float(fraction):.{digits}g}%"


def interval(lo, hi, digits: int = DIGITS) -> str:
    """``[0.512, 0.731]``."""
    return f"[{number(lo, digits)}, {number(hi, digits)}]"


def json_ready(value):
    """``value`` as strict JSON data: dicts with text keys, lists, str, int, float, bool, None.

    numpy scalars and arrays become Python numbers and lists; a non-finite float (inf, -inf,
    NaN) becomes ``None`` (JSON's ``null``), the same rule as the CLI's ``--format json``, so
    ``json.dumps(result.to_dict(), allow_nan=False)`` always works.
    """
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy arrays and scalars
        return json_ready(value.tolist())
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return value


def strict_json(method):
    """Decorates a result's ``to_dict``: its answer goes through :func:`json_ready`."""
    @functools.wraps(method)
    def to_dict(self, *args, **kwargs):
        return json_ready(method(self, *args, **kwargs))
    return to_dict
