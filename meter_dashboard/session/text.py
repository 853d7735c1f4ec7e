"""The words and numbers of a replayed session, written once for the page, the reports and /testsets.

No Panel here: :mod:`meter_dashboard.session.view` (the page), :mod:`meter_dashboard.session.report`
(the file to take out of the meeting) and the /testsets page build their headline, sentence,
step table and inputs from these functions, with the one precision rule of
:mod:`meter_dashboard.core.formatting` (counts with separators, measured quantities with
four significant digits, 1 − δ never shown as 1).

Say only what holds: :func:`guarantee` decides what a test set guarantees at a step — the
planned ε_i, what its labels support when it is short of them, or nothing beyond the budget
— and every headline, sentence and report line about the bound comes from it, so none
states a guarantee that an alarm beside it denies.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..core import formatting as fmt
from ..core import plain
from ..core.html import render
from ..core.slide import Chart, Rule, Series, Slide
from .replay import METER_TITLES, READING_NOTES

__all__ = ["Guarantee", "guarantee", "guarantee_at", "gauge_note", "signal_meaning", "signal_meanings", "sentence", "needed_text",
           "range_text", "step_row", "step_headers", "table_window", "steps_source_text", "inputs", "subscript",
           "steps_left_text", "steps_left_card", "budget_text",
           "READING_NOTES", "TABLE_ROWS", "lead", "slide"]

#: Rows of the step table on the page (a window around the step shown).
TABLE_ROWS = 13

_SOURCES = {
    "trace": "the trace's number of steps — T follows each new trace",
    "link": "from the link — kept for every trace",
    "user": "set by you — kept for every trace",
    "plan": "the plan's — kept for every trace",
    "tenant_steps": "the sum of the steps per tenant",
}


def subscript(k: int) -> str:
    """3 -> '₃' (subscript digits for ε_i)."""
    return str(k).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


# ============================================================================ what holds at a step
@dataclass(frozen=True)
class Guarantee:
    """What a test set guarantees at one step: the bound that holds, the plan's, and how to say it.

    Attributes
    ----------
    state : {'holds', 'unchecked', 'short', 'beyond'}
        ``holds``: the test set has the labels the plan needs and the step is within the budget,
        so the planned ε_i holds; ``unchecked``: the test set's size is unknown (the planned
        ε_i holds if it has the labels); ``short``: fewer labels than the plan needs (what
        they support holds, or nothing); ``beyond``: the step came after the budget T
        (nothing holds).
    holds : float or None
        The ε that holds at this step with probability 1 − δ (None: nothing is guaranteed).
    planned : float
        ε_i the plan promises for the signal shown.
    signal, delta, meter, steps, test_size, needed
        What it was computed from (``meter`` is ``'incremental'`` or ``'regular'``).
    """

    state: str
    holds: float | None
    planned: float
    signal: int
    delta: float
    meter: str = "incremental"
    steps: int | None = None
    test_size: int | None = None
    needed: int | None = None

    @property
    def alarm(self) -> bool:
        """Shown in the alarm colour: what holds is less than the plan promised."""
        return self.state in ("short", "beyond")

    @property
    def value(self) -> str:
        """The headline: the ε that holds, or ``none`` (``none — beyond the budget`` after T)."""
        if self.state == "beyond":
            return "none — beyond the budget"
        return "none" if self.holds is None else fmt.number(self.holds)

    @property
    def planned_label(self) -> str:
        return f"planned ε{subscript(self.signal)} ="

    @property
    def note(self) -> str:
        """The line under the headline: whose bound it is, with what probability."""
        conf = fmt.confidence(self.delta)
        if self.state == "holds":
            return f"ε{subscript(self.signal)} of the {METER_TITLES[self.meter]}, prob. {conf}"
        if self.state == "unchecked":
            return f"ε{subscript(self.signal)} of the {METER_TITLES[self.meter]}, prob. {conf}, if the test set has " \
                   f"the {self._needed} labels the plan needs"
        if self.state == "beyond":
            return "this step came after the budget: no guarantee"
        if self.holds is None:
            return f"{fmt.integer(self.test_size)} labels guarantee no ε below 1"
        return f"what {fmt.integer(self.test_size)} labels guarantee, prob. {conf}"

    @property
    def planned_note(self) -> str:
        """What the planned ε would take (shown after it on the secondary line)."""
        if self.state == "short":
            return f"needs {self._needed} labels"
        if self.state == "beyond":
            return f"covers the first T = {fmt.integer(self.steps)} steps only" if self.steps else "covers T steps only"
        return ""

    @property
    def _needed(self) -> str:
        return fmt.integer(self.needed) if self.needed is not None else "number of"

    @property
    def clause(self) -> str:
        """What the bound says about the test score, as a clause of the page's sentence."""
        conf, planned = fmt.confidence(self.delta), fmt.number(self.planned)
        if self.state == "holds":
            return f"with probability {conf} the test score is within {planned} of the model's true score"
        if self.state == "unchecked":
            return (f"with probability {conf} the test score is within {planned} of the model's true score — if the "
                    f"test set has the {self._needed} labels the plan needs (give its size n to check)")
        if self.state == "beyond":
            budget = f" of T = {fmt.integer(self.steps)} steps" if self.steps else ""
            return (f"This step is beyond the budget{budget}: the test set guarantees nothing about its score — "
                    "draw a new test set")
        labels = fmt.integer(self.test_size)
        if self.holds is None:
            what = f"With its {labels} labels the test set guarantees no bound below 1 on the test score"
        else:
            what = (f"With its {labels} labels the test set guarantees only that the test score is within "
                    f"{fmt.number(self.holds)} of the model's true score (probability {conf})")
        return f"{what}; the planned {planned} needs {self._needed} labels"

    def html(self, label: str = "Guaranteed bound", css_class: str = "meter-guaranteed") -> str:
        """The headline card (``session/templates/guarantee.html``, escaped): in the alarm colour when :attr:`alarm`.

        ``css_class`` goes on the value; the planned ε carries ``meter-epsilon`` (stable hooks for tests).
        A plain string of HTML (put it in a card row, or wrap it in ``Markup`` inside another template).
        """
        return render("session/templates/guarantee.html", g=self, label=label, css_class=css_class)


def guarantee(planned, signal: int, delta, *, meter: str = "incremental", within_budget: bool = True,
              steps: int | None = None, test_size: int | None = None, needed: int | None = None,
              supported: float | None = None) -> Guarantee:
    """What a test set guarantees at one step (the /testsets page and the session page call this).

    Parameters
    ----------
    planned : float
        ε_i of the plan for the signal the meter reports.
    signal : int
        That signal (1-based).
    delta : float
        The plan's failure probability.
    meter : {'incremental', 'regular'}
    within_budget : bool
        False when the step came after the budget T (or a tenant's share).
    steps : int, optional
        The budget T (named in the words).
    test_size, needed : int, optional
        The labels the test set has and the labels the plan needs for this meter.
    supported : float, optional
        ε_i its labels do support when it is short of them (the planner's inverse, the ε
        vector scaled together); None when no ε below 1 is supported.

    Returns
    -------
    Guarantee

    References
    ----------
    Hubis, Wu & Zhang (2019), ease.ml/meter, Section 3.1 (with probability 1 − δ,
    |l(H, D_test) − l(H, 𝒟)| < ε_i for the signal i returned; after T steps a new test set).
    """
    kw: dict[str, Any] = dict(planned=float(planned), signal=int(signal), delta=float(delta), meter=meter,
                              steps=steps, test_size=test_size, needed=needed)
    if not within_budget:
        return Guarantee(state="beyond", holds=None, **kw)
    if test_size is None or needed is None:
        return Guarantee(state="unchecked", holds=float(planned), **kw)
    if test_size >= needed:
        return Guarantee(state="holds", holds=float(planned), **kw)
    holds = float(supported) if supported is not None and supported < 1 else None
    return Guarantee(state="short", holds=holds, **kw)


def guarantee_at(result, index: int = -1) -> Guarantee:
    """:func:`guarantee` at position ``index`` of a :class:`~meter_dashboard.session.replay.ReplayResult`."""
    d = result.step(index)
    shown = d["incremental_signal"] if result.variant == "incremental" else d["signal"]
    return guarantee(d["epsilon"], shown, result.settings["delta"], meter=result.variant,
                     within_budget=d["within_budget"], steps=result.budget, test_size=result.test_size,
                     needed=result.needed, supported=d["supported_epsilon"])


def gauge_note(g: Guarantee) -> str:
    """The meter's caption under its ε bar when the plan's ε does not hold at the step ('' when it does)."""
    if g.state == "beyond":
        return "none guaranteed: this step is beyond the budget"
    if g.state == "short":
        if g.holds is None:
            return f"none guaranteed: {fmt.integer(g.test_size)} labels support no ε below 1"
        return f"these {fmt.integer(g.test_size)} labels guarantee only {fmt.number(g.holds)}"
    return ""


# ============================================================================ what a signal means for the team
def signal_meaning(signal: int, ranges, epsilon: float | None, delta) -> str:
    """What signal ``signal`` means for the team, in one sentence, then the paper's reading.

    One sentence per level: the lowest range says the validation set is not overfit (keep
    developing on it); a middle range says it is overfit (trust the test score, not the
    validation score); the highest says it is overfit beyond the meter's last range (refresh the
    validation set).  The reading is Section 3.4's: with probability 1 − δ,
    ``r_lo − ε ≤ |OVFT(D_val, 𝒟)| ≤ r_hi + ε``.  ``epsilon`` is the bound that *holds*
    (:attr:`Guarantee.holds`); None when nothing does, and then the test score is not vouched for either.

    References
    ----------
    Hubis, Wu & Zhang (2019), ease.ml/meter, Section 3.1 (the developer decodes signal i to its
    range and decides whether to collect a new validation set) and Section 3.4 (the reading, and
    "if the degree of overfitting exceeds the tolerance, replace the validation set").
    """
    r = [float(v) for v in ranges]
    m, k = len(r) - 1, int(signal)
    lo, hi = r[k - 1], r[k]
    holds = epsilon is not None
    trust = f"trust the test score (within ±{fmt.number(epsilon)})" if holds else ""
    none = "no bound holds on the test score at this step"
    if m == 1:
        first = (f"Signal 1 of 1: one range covers every gap, so the meter says nothing about overfitting; "
                 f"{trust if holds else none}.")
    elif k == 1:
        first = (f"Signal 1 of {m} (gap below {fmt.number(hi)}): no sign that the validation set is overfit — keep "
                 f"developing on it; {trust if holds else 'but ' + none}.")
    elif k < m:
        first = (f"Signal {k} of {m} (gap {fmt.number(lo)}–{fmt.number(hi)}): the validation set is overfit — "
                 + (f"{trust}, not the validation score, when you compare models." if holds else
                    f"and {none}: neither score is vouched for when you compare models."))
    else:
        first = (f"Signal {k} of {m} (gap {fmt.number(lo)} or more): the validation set is overfit beyond the "
                 f"meter's last range — refresh it (new validation examples) before the next step; "
                 f"{trust if holds else none + ' either'}.")
    if epsilon is None:
        return first + (" Paper's reading (Section 3.4): the signal bounds the validation set's true overfitting "
                        "only while the test set's guarantee holds; none holds here.")
    low, high = max(lo - epsilon, 0.0), min(hi + epsilon, 1.0)
    return first + (f" Paper's reading (Section 3.4): with probability {fmt.confidence(delta)} the validation set's "
                    f"overfitting |OVFT(D_val, 𝒟)| lies in [{fmt.number(low)}, {fmt.number(high)}].")


def signal_meanings(ranges, epsilon, delta) -> list:
    """:func:`signal_meaning` of every level with the planned ε_i (the reports' and the page's legend)."""
    return [signal_meaning(k, ranges, float(e), delta) for k, e in enumerate(epsilon, start=1)]


def range_text(lo: float, hi: float) -> str:
    """``[0.01, 0.02)`` (the last range closed at 1)."""
    return f"[{fmt.number(lo)}, {fmt.number(hi)}{']' if hi == 1.0 else ')'}"


def sentence(result, index: int = -1) -> str:
    """What the meter says at position ``index``, in plain sentences a manager can repeat (only what holds)."""
    d = result.step(index)
    incremental = result.variant == "incremental"
    shown = d["incremental_signal"] if incremental else d["signal"]
    lo, hi = d["incremental_range"] if incremental else d["signal_range"]
    gap = "the worst validation–test gap so far" if incremental else "the validation–test gap"
    head = (f"At step {fmt.integer(d['step'])} the {METER_TITLES[result.variant]} shows signal {shown}: {gap} lies "
            f"in {range_text(lo, hi)}")
    g = guarantee_at(result, index)
    if g.state in ("holds", "unchecked"):
        return f"{head}, and {g.clause}."
    return f"{head}. {g.clause}."


def needed_text(result) -> str:
    """Labels both meters need (under which bound), and the test set's size."""
    text = (f"Labels needed for this plan ({result.bound_text}): incremental meter "
            f"{fmt.integer(result.labels_needed['incremental'])}, "
            f"regular meter {fmt.integer(result.labels_needed['regular'])}")
    if result.test_size is None:
        return text + "; enter the test-set size n to check it."
    return text + f"; the test set has {fmt.integer(result.test_size)}."


def steps_left_text(result) -> str:
    """How many more steps the test set takes (:meth:`StepsLeft.sentence`), or how to find out."""
    if result.steps_left is None:
        return "Enter the test-set size n to learn how many steps its labels support at the planned ε."
    return result.steps_left.sentence()


def budget_text(result) -> str:
    """Where T comes from, in the words beside it: ``of T = 12, the trace's length (no T was given)``."""
    if result.steps_given:
        return f"of T = {fmt.integer(result.budget)}"
    return f"of T = {fmt.integer(result.budget)}, the trace's length (no T was given)"


def steps_left_card(result) -> dict:
    """The "Steps left" headline card: steps left at the planned ε, of the steps the labels support."""
    left = result.steps_left
    if left is None:
        return dict(label="Steps left", value="—", css="session-steps-left",
                    sub="enter the test-set size n to learn how many steps it supports", alarm=False)
    value = "none" if left.left == 0 else ("?" if left.left is None else _steps(left.left))
    sub = (f"{fmt.integer(left.test_size)} labels support {_steps(left.supported)} steps at the planned ε "
           f"({left.bound}); {fmt.integer(left.used)} used")
    if left.guaranteed_epsilon is not None and not left.covers_used:
        sub += f"; over those they still guarantee ε₁ = {fmt.number(left.guaranteed_epsilon[0])}"
    elif left.guaranteed_epsilon is None:
        sub += "; over those they guarantee no ε below 1"
    if left.budget is not None and left.budget_epsilon is not None and not left.left:
        sub += (f"; at ε₁ = {fmt.number(left.budget_epsilon[0])}, {fmt.integer(left.budget - left.used)} left of "
                f"T = {fmt.integer(left.budget)}")
    if left.plan_used_up:  # the budget alarm says the same (StepsLeft.plan_note)
        sub += "; " + left.plan_note()
    return dict(label="Steps left", value=value, css="session-steps-left", sub=sub,
                alarm=not left.covers_used or left.plan_used_up and left.renew)


def _steps(value) -> str:
    from ..meter.result import steps_text

    return "?" if value is None else steps_text(value)


def steps_source_text(origin: str, steps: int) -> str:
    """``T = 20: the trace's number of steps — T follows each new trace``."""
    return f"T = {fmt.integer(steps)}: {_SOURCES.get(origin, origin)}."


def step_headers(result) -> list:
    t = result.trace
    return (["step"] + (["tenant"] if t.has_tenants else [])
            + [t.val_column, t.test_column, "gap", "regular", "incremental", "planned ε", "used", "note"])


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
        ("T (budget of steps)", fmt.integer(s["steps"]) + (f" — {steps_note}" if steps_note else (
            "" if result.steps_given else " — the trace's length (no T was given)"))),
        ("Per-model bound", result.bound_text),
    ]
    if len(s["tenant_steps"]) > 1:
        pairs.append(("Steps per tenant", ", ".join(fmt.integer(v) for v in s["tenant_steps"])))
    if t.has_tenants:
        names = t.tenant_names
        pairs.append(("Tenants in the trace", ", ".join(names[:20]) + (" …" if len(names) > 20 else "")))
    if s["reverts"]:
        pairs.append(("Reverts fixed in advance", ", ".join(fmt.integer(v) for v in s["reverts"])))
    pairs.append(("Test-set size n", fmt.integer(result.test_size) if result.test_size is not None else "not given"))
    pairs.append(("Steps left", steps_left_text(result)))
    pairs.append(("Labels needed", f"incremental meter {fmt.integer(result.labels_needed['incremental'])}, "
                                   f"regular meter {fmt.integer(result.labels_needed['regular'])}"))
    return pairs


def lead(result) -> str:
    """The page's first sentence, in plain words: the labels, the model versions still to test, how close, how often.

    From the replay's numbers only.  With the test set's size given, the versions left are the planner's
    inverse after the steps used (:attr:`ReplayResult.steps_left`: what these labels support at the planned
    ε, less the steps used), never T minus the steps used; a T nobody gave (the trace's length) is never
    called a plan.
    """
    s = result.settings
    used = int(result.steps_used[-1]) if len(result) else 0
    accuracy = f"each reported accuracy within {plain.points(s['epsilon'])} of the truth, {plain.times_in(s['delta'])}"
    left = result.steps_left.left if result.steps_left is not None else None
    if left is not None and result.steps_left.plan_used_up:  # the plan's T is used up: its alarm says the same
        beyond = used - result.budget
        more = f" and {_versions(beyond)} beyond it" if beyond else ""
        supports = (f"these {fmt.integer(result.test_size)} labelled examples support "
                    f"{_versions(result.steps_left.supported)} at the planned accuracy of {plain.points(s['epsilon'])}")
        tested = f"All {_versions(result.budget)} the plan's T allows are tested{more}"
        if result.steps_left.renew:
            return f"{tested}, and {supports}: draw a new test set."
        return (f"{tested}, and {supports}: raise T to {_steps(result.steps_left.supported)} in a new plan to test "
                f"{_versions(left, 'more ')} at that accuracy.")
    if left is not None:
        n = fmt.integer(result.test_size)
        if left == 0:
            supported = result.steps_left.supported
            state = ("all used" if result.steps_left.covers_used else
                     f"{fmt.integer(used)} are used, so the planned accuracy is not guaranteed")
            return (f"Our {n} labelled examples support {_versions(supported)} at the planned accuracy of "
                    f"{plain.points(s['epsilon'])}; {state}: draw a new test set before testing more.")
        return f"With {n} labelled examples we can test {_versions(left, 'more ')}, {accuracy}."
    if not result.steps_given:
        return (f"{fmt.integer(result.needed)} labelled examples (what the meter needs for the trace's "
                f"{_versions(used)}) keep {accuracy}; give the test set's size to see how many versions are left.")
    n = result.test_size if result.test_size is not None else result.needed
    whose = "" if result.test_size is not None else " (what the plan needs)"
    remaining = max(result.budget - used, 0)
    if result.short_of_labels:
        return (f"Our {fmt.integer(n)} labelled examples are {fmt.integer(result.needed - n)} short of the "
                f"{fmt.integer(result.needed)} this plan needs for {fmt.integer(result.budget)} model versions: "
                f"the planned accuracy of {plain.points(s['epsilon'])} is not guaranteed.")
    if remaining == 0:
        return (f"With {fmt.integer(n)} labelled examples{whose} all {fmt.integer(result.budget)} planned model "
                f"versions are used: draw a new test set before testing more.")
    return f"With {fmt.integer(n)} labelled examples{whose} we can test {_versions(remaining, 'more ')}, {accuracy}."


def _versions(count, more: str = "") -> str:
    if count is None:
        return f"an unknown number of {more}model versions"
    if count == math.inf:
        return f"more than 10¹² {more}model versions"
    return f"{fmt.integer(int(count))} {more}model version{'' if count == 1 else 's'}"


def slide(result):
    """The session's slide: title, :func:`lead`, the inputs, the validation–test gap over the steps."""
    t = result.trace
    steps = tuple(t.steps.tolist())
    eps = result.settings["epsilon"]
    chart = Chart("step", "validation–test gap", (Series("gap", steps, tuple(result.empirical_overfitting.tolist()),
                                                         "#0072B2", "points"),),
                  rules=(Rule("y", float(eps[0]), f"ε₁ = {fmt.number(eps[0])}"),),
                  marks=((steps[-1], float(result.empirical_overfitting[-1]), f"step {fmt.integer(steps[-1])}"),))
    return Slide(f"Session replay: {t.name}", lead(result), tuple(inputs(result)), chart)
