"""The planner's numbers in words, Panel-free (the page's markup and the HTML report share them)."""
from __future__ import annotations

import math
import numbers

from ..core import formatting as fmt

__all__ = ["steps_shown", "confidence_shown"]

#: Above this many steps the count is written in scientific notation (rounded down: it stays supported).
_SCIENTIFIC_STEPS = 10**7


def steps_shown(value) -> str:
    """A largest T, short enough for a phone card: ``79,884,252,832`` -> ``7.98×10¹⁰`` (rounded down)."""
    if isinstance(value, numbers.Real) and math.isfinite(value) and not value < _SCIENTIFIC_STEPS:
        exponent = int(math.floor(math.log10(value)))
        mantissa = math.floor(value / 10 ** (exponent - 2)) / 100
        return fmt.scientific(mantissa * 10**exponent, 3)
    return fmt.steps_text(value)


def confidence_shown(achieved_delta) -> str:
    """The confidence a count delivers (``1 − δ'``): 'none' at or below 0, 3 digits below 0.9, else exact."""
    if achieved_delta is None:
        return "—"
    if achieved_delta >= 1:
        return "none"
    if achieved_delta > 0.1:
        return fmt.number(1.0 - achieved_delta, 3)
    return fmt.confidence(achieved_delta)
