"""Plain words for a manager: chances as "99 times in 100", accuracies in points.

Every page leads with one sentence a team lead can repeat in a meeting (each family's ``text.lead``);
these helpers turn the statistics' numbers into those words, always from the value given, never
rounded into something stronger than what holds.

>>> times_in(0.01)
'99 times in 100'
>>> times_in(0.0001)
'9,999 times in 10,000'
>>> points([0.01, 0.05])
'1–5 points'
"""
from __future__ import annotations

import math

from .formatting import confidence, number

__all__ = ["times_in", "points"]


def times_in(delta) -> str:
    """How often a statement that fails with probability ``delta`` holds, in plain words.

    ``99 times in 100`` when δ is a whole number of hundredths, thousandths … up to millionths;
    otherwise ``with probability 1 − δ`` in the one number format (never rounded up to "always").
    """
    delta = float(delta)
    if 0 < delta < 1:
        for k in range(2, 7):
            scale = 10 ** k
            count = delta * scale
            if round(count) >= 1 and abs(count - round(count)) <= 1e-9 * max(count, 1.0):
                return f"{scale - round(count):,} times in {scale:,}"
    return f"with probability {confidence(delta)}"


def points(values) -> str:
    """Accuracies (fractions) as percentage points: ``1 point``, ``1–5 points``, ``0.5 points``."""
    pts = sorted({100 * float(v) for v in values})
    lo, hi = pts[0], pts[-1]

    def one(v: float) -> str:
        return number(v, 3) if not math.isclose(v, round(v), abs_tol=1e-9) else f"{round(v):,}"

    if math.isclose(lo, hi, rel_tol=1e-12):
        return f"{one(lo)} point" + ("" if math.isclose(lo, 1.0) else "s")
    return f"{one(lo)}–{one(hi)} points"
