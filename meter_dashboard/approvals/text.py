"""The /approve page's words for a manager and its slide, Panel-free (the page, the CLI, the report, notebooks).

:func:`lead` is the page's first sentence in plain words, from an
:class:`~meter_dashboard.approvals.model.ApprovalResult`.
"""
from __future__ import annotations

import numpy as np

from ..core import formatting as fmt
from ..core import plain
from ..core.slide import Chart, Series, Slide

__all__ = ["lead", "pending_lead", "inputs", "title", "slide"]


def lead(r) -> str:
    """``We can ship 3 of 10 modifications; the chance that any shipped one is not a real improvement stays below 5%, …``."""
    shipped = f"{fmt.integer(r.approvals)} of {fmt.integer(r.decided)} modification{'' if r.decided == 1 else 's'}"
    pending = "" if r.complete else f" tested so far ({fmt.integer(len(r.names))} in all)"
    return (f"We can ship {shipped}{pending} ({r.label}): all approvals together are right "
            f"{plain.times_in(r.alpha)} — the chance that any approved one is no real improvement stays below "
            f"{fmt.percent(r.alpha)}.")


def pending_lead(modifications: int, label: str, alpha: float) -> str:
    """What the lead says while the decisions are computed, in the place and about the length of :func:`lead`
    (so the page does not jump when the answer replaces it)."""
    plural = "" if modifications == 1 else "s"
    return (f"Computing which of the {fmt.integer(modifications)} modification{plural} we can ship ({label}) so "
            f"that all approvals together are right {plain.times_in(alpha)}: each decision shows here as soon as "
            "its test is done.")


def title(r) -> str:
    return f"Modifications approved: {fmt.integer(r.approvals)} of {fmt.integer(r.decided)} ({r.label})"


def inputs(r) -> list:
    pairs = [("Procedure", r.label), ("α (family-wise error rate)", fmt.number(r.alpha)),
             ("Modifications", fmt.integer(len(r.names))), ("Steps planned T", fmt.integer(r.steps))]
    pairs += [(str(k), str(v)) for k, v in r.settings.items() if isinstance(v, (int, float, str)) and k != "alpha"]
    return pairs


def slide(r):
    """The /approve slide: title, :func:`lead`, the inputs, each test's p-value against its level (log scale)."""
    k = r.decided
    x = tuple(range(1, k + 1))
    p = tuple(float(v) for v in np.maximum(r.p_values[:k], 1e-300))
    approved = [j for j in range(k) if r.approved[j]]
    series = (Series("level (threshold)", x, tuple(float(v) for v in r.levels[:k]), "#D55E00", "step"),
              Series("p-value", x, p, "#0072B2", "points"),
              Series("approved", tuple(x[j] for j in approved), tuple(p[j] for j in approved), "#009E73", "points"))
    chart = Chart("test", "p-value", series, log_y=True)
    return Slide(title(r), lead(r), tuple(inputs(r)), chart)
