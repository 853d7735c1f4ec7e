"""The words and numbers of a replayed session, written once for the page and the HTML report.

No Panel here: :mod:`meter_dashboard.session.view` (the page) and
:mod:`meter_dashboard.session.report` (the file to take out of the meeting) both build their
sentence, step table and inputs from these functions, with the one precision rule of
:mod:`meter_dashboard.core.formatting` (counts with separators, measured quantities with
four significant digits, 1 − δ never shown as 1).
"""
from __future__ import annotations

from ..core import formatting as fmt
from .replay import METER_TITLES, READING_NOTES

__all__ = ["sentence", "needed_text", "range_text", "step_row", "step_headers", "table_window", "steps_source_text", "inputs",
           "READING_NOTES", "TABLE_ROWS"]

#: Rows of the step table on the page (a window around the step shown).
TABLE_ROWS = 13

_SOURCES = {
    "trace": "the trace's number of steps — T follows each new trace",
    "link": "from the link — kept for every trace",
    "user": "set by you — kept for every trace",
    "plan": "the plan's — kept for every trace",
    "tenant_steps": "the sum of the steps per tenant",
}


def range_text(lo: float, hi: float) -> str:
    """``[0.01, 0.02)`` (the last range closed at 1)."""
    return f"[{fmt.number(lo)}, {fmt.number(hi)}{']' if hi == 1.0 else ')'}"


def sentence(result, index: int = -1) -> str:
    """What the meter says at position ``index``, in one plain sentence a manager can repeat."""
    d = result.step(index)
    incremental = result.variant == "incremental"
    shown = d["incremental_signal"] if incremental else d["signal"]
    lo, hi = d["incremental_range"] if incremental else d["signal_range"]
    gap = "the worst validation–test gap so far" if incremental else "the validation–test gap"
    text = (f"At step {fmt.integer(d['step'])} the {METER_TITLES[result.variant]} shows signal {shown}: {gap} lies "
            f"in {range_text(lo, hi)}, and with probability {fmt.confidence(result.settings['delta'])} the test score is "
            f"within {fmt.number(d['epsilon'])} of the model's true score")
    if result.short_of_labels and d["supported_epsilon"] is not None:
        text += (f" — if the test set had the {fmt.integer(result.needed)} labels the plan needs. With its "
                 f"{fmt.integer(result.test_size)} labels the bound is only {fmt.number(d['supported_epsilon'])}")
    text += "."
    if not d["within_budget"]:
        text += " This step is beyond the budget: the guarantee does not cover it."
    return text


def needed_text(result) -> str:
    """Labels both meters need, and the test set's size."""
    text = (f"Labels needed for this plan: incremental meter {fmt.integer(result.labels_needed['incremental'])}, "
            f"regular meter {fmt.integer(result.labels_needed['regular'])}")
    if result.test_size is None:
        return text + "; enter the test-set size n to check it."
    return text + f"; the test set has {fmt.integer(result.test_size)}."


def steps_source_text(origin: str, steps: int) -> str:
    """``T = 20: the trace's number of steps — T follows each new trace``."""
    return f"T = {fmt.integer(steps)}: {_SOURCES.get(origin, origin)}."


def step_headers(result) -> list:
    t = result.trace
    return (["step"] + (["tenant"] if t.has_tenants else [])
            + [t.val_column, t.test_column, "gap", "regular", "incremental", "ε", "used", "note"])


def step_row(result, i: int) -> dict:
    """The table row of position ``i``: formatted cells and flags."""
    d = result.step(i)
    t = result.trace
    notes = (["reverted"] if d["reverted"] else []) + ([] if d["within_budget"] else ["beyond budget"])
    if d["description"]:
        text = d["description"]
        notes.append(text if len(text) <= 200 else text[:199] + "…")
    return {
        "step": fmt.integer(d["step"]), "tenant": d["tenant"] or "—", "val": fmt.number(d[t.val_column]),
        "test": fmt.number(d[t.test_column]), "gap": fmt.number(d["empirical_overfitting"]), "signal": d["signal"],
        "incremental": d["incremental_signal"], "epsilon": fmt.number(d["epsilon"]),
        "used": f"{fmt.integer(d['steps_used'])}/{fmt.integer(result.budget)}", "note": " · ".join(notes),
        "beyond": not d["within_budget"],
    }


def table_window(n: int, index: int, rows: int = TABLE_ROWS) -> tuple:
    """Positions ``[lo, hi)`` of a table of ``rows`` rows around ``index`` (all of them when they fit).

    The window keeps its size at both ends of the trace: at the last of 8 steps it shows
    steps 1-8, not 2-8.
    """
    if n <= rows:
        return 0, n
    lo = min(max(index - rows // 2, 0), n - rows)
    return lo, lo + rows


def inputs(result, steps_note: str = "") -> list:
    """(name, value) pairs of everything the replay used."""
    t, s = result.trace, result.settings
    pairs = [
        ("Trace", f"{t.name} ({fmt.integer(len(t))} steps{', synthetic' if t.synthetic else ''})"),
        ("Meter", METER_TITLES[result.variant]),
        ("Range boundaries r₀ … r_m", fmt.number_list(s["ranges"])),
        ("ε per signal", fmt.number_list(s["epsilon"])),
        ("δ (failure probability)", fmt.number(s["delta"])),
        ("T (budget of steps)", fmt.integer(s["steps"]) + (f" — {steps_note}" if steps_note else "")),
    ]
    if len(s["tenant_steps"]) > 1:
        pairs.append(("Steps per tenant", ", ".join(fmt.integer(v) for v in s["tenant_steps"])))
    if t.has_tenants:
        names = t.tenant_names
        pairs.append(("Tenants in the trace", ", ".join(names[:20]) + (" …" if len(names) > 20 else "")))
    if s["reverts"]:
        pairs.append(("Reverts fixed in advance", ", ".join(fmt.integer(v) for v in s["reverts"])))
    pairs.append(("Test-set size n", fmt.integer(result.test_size) if result.test_size is not None else "not given"))
    pairs.append(("Labels needed", f"incremental meter {fmt.integer(result.labels_needed['incremental'])}, "
                                   f"regular meter {fmt.integer(result.labels_needed['regular'])}"))
    return pairs
