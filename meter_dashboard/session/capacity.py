"""How many more steps a used test set can take: the planner's inverse, at the planned ε, after the steps used.

"Our test set has 10,000 labels and was used 12 times: how many more steps can it take?"
:func:`steps_left` answers with the planner's own inverse (a label budget -> the largest T,
:func:`meter_dashboard.meter.stages.budget_answers`) under the plan's per-model bound, and
:class:`StepsLeft` says it in words.  The replay (:mod:`meter_dashboard.session.replay`) computes it
for every trace with a known n; the session page's card, its report, ``meter-dashboard replay`` and
``md.replay(...).steps_left`` all show this one answer.

References
----------
Hubis, Wu & Zhang (2019), ease.ml/meter, Section 3.1 (after T steps, a new test set) and Thms 1-2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.validation import InputError, check_int
from ..meter.result import steps_text
from ..meter.stages import budget_answers, normalize

__all__ = ["StepsLeft", "steps_left", "used_up_message", "bound_words", "bound_text", "METERS", "METER_TITLES"]

#: The meters a session can replay for (the adaptive variants: one signal per step).
METERS = ("incremental", "regular")
METER_TITLES = {"regular": "regular meter", "incremental": "incremental meter"}


@dataclass(frozen=True)
class StepsLeft:
    """How many more steps a test set of ``test_size`` labels can take, after ``used`` steps.

    The planner's inverse ("a budget of labels -> the largest T",
    :func:`meter_dashboard.meter.stages.budget_answers`) at the planned ε, under the plan's bound:
    the page's card, the report, the CLI and the notebook all say this one answer.

    Attributes
    ----------
    test_size : int
        n, the labels of the test set.
    supported : int, float or None
        The largest T these labels support at the planned ε (``math.inf`` beyond the search's cap;
        None when the exact bound gave no answer).
    used : int
        Steps taken (the trace's steps).
    guaranteed_epsilon : tuple or None
        The ε vector (scaled together) these labels still guarantee over the ``used`` steps; None
        when no ε below 1 is.
    confidence : float
        The confidence 1 − δ' the planned ε has over the ``used`` steps (0: none).
    epsilon, delta, variant, bound
        The plan it was computed for (``bound``: the per-model bound used, in words).
    budget : int or None
        The plan's T when it is more than the steps used (then ``budget_epsilon`` is the ε vector these
        labels guarantee over all T steps: the steps left at that ε are ``budget - used``).
    budget_epsilon : tuple or None
    plan_steps : int or None
        The plan's T when somebody gave one (None: T is the trace's length).  Once the steps used reach
        it, :meth:`plan_note` and :func:`used_up_message` say what comes next in numbers: raise T to what
        these labels support (:attr:`left` more steps), or a new test set when none is left.
    """

    test_size: int
    supported: int | float | None
    used: int
    guaranteed_epsilon: tuple | None
    confidence: float
    epsilon: tuple
    delta: float
    variant: str
    bound: str = "Hoeffding's bound"
    budget: int | None = None
    budget_epsilon: tuple | None = None
    plan_steps: int | None = None

    @property
    def left(self) -> int | float | None:
        """Steps left at the planned ε (0 when the steps used are already beyond what the labels support)."""
        if self.supported is None:
            return None
        return math.inf if self.supported == math.inf else max(int(self.supported) - self.used, 0)

    @property
    def covers_used(self) -> bool:
        """Whether the planned ε holds over the steps already used."""
        return self.supported is not None and self.supported >= self.used

    @property
    def plan_used_up(self) -> bool:
        """Whether the steps used reached the plan's T (a T somebody gave)."""
        return self.plan_steps is not None and self.used >= self.plan_steps

    @property
    def renew(self) -> bool:
        """Whether only a new test set gives more steps: none left at the planned ε (or none known)."""
        return not self.left

    def capacity(self) -> str:
        """``these 50,000 labels support 110 steps at the planned ε (Hoeffding's bound): 12 used, 98 left``."""
        return (f"these {self.test_size:,} labels support {steps_text(self.supported)} steps at the planned ε "
                f"({self.bound}): {self.used:,} used, {_left_text(self.left)} left")

    def wider_plan(self) -> str:
        """`` — a plan with T = 110 would: these 50,000 labels support …`` when steps are left ('' otherwise)."""
        if self.renew or self.supported in (None, math.inf):
            return ""
        return f" — a plan with T = {int(self.supported or 0):,} would: {self.capacity()}"

    def plan_note(self) -> str:
        """What the plan's T, once used up, means for the steps left ('' before): the card, lead and alarms agree.

        ``the plan's T = 10 steps are used up (2 beyond it): raise T to 110 in a new plan to take the 98 left``,
        or ``…: draw a new test set`` when these labels support no more steps at the planned ε.
        """
        if not self.plan_used_up:
            return ""
        beyond = self.used - int(self.plan_steps or 0)
        head = f"the plan's T = {self.plan_steps:,} steps are used up" + (f" ({beyond:,} beyond it)" if beyond else "")
        if self.renew:
            return f"{head}: draw a new test set"
        return f"{head}: raise T to {steps_text(self.supported)} in a new plan to take the {steps_text(self.left)} left"

    def sentence(self) -> str:
        """The answer in words: supported at the planned ε, used, left, and what the labels still guarantee."""
        eps = ", ".join(f"{v:g}" for v in self.epsilon)
        head = (f"{self.test_size:,} labels support {steps_text(self.supported)} steps at the planned ε = {eps} "
                f"(δ = {self.delta:g}, {METER_TITLES[self.variant]}, {self.bound}): "
                f"{self.used:,} used, {_left_text(self.left)} left.")
        if self.guaranteed_epsilon is None:
            head += f" Over the {self.used:,} steps used they guarantee no ε below 1."
        else:
            word = "still guarantee" if not self.covers_used else "guarantee"
            head += (f" Over the {self.used:,} steps used they {word} ε₁ = {self.guaranteed_epsilon[0]:.4g}"
                     + (f" (ε = {', '.join(f'{v:.4g}' for v in self.guaranteed_epsilon)})"
                        if len(self.guaranteed_epsilon) > 1 else "") + ".")
        if self.budget is not None:
            if self.budget_epsilon is None:
                head += f" Over the plan's T = {self.budget:,} steps they guarantee no ε below 1."
            else:
                head += (f" At ε₁ = {self.budget_epsilon[0]:.4g}, what they guarantee over the plan's T = "
                         f"{self.budget:,} steps, {self.budget - self.used:,} steps are left.")
        note = self.plan_note()
        return head + (f" {note[0].upper()}{note[1:]}." if note else "")

    def to_dict(self) -> dict:
        return {"test_size": self.test_size,
                "supported_steps": None if self.supported in (None, math.inf) else int(self.supported),
                "supported_beyond_cap": self.supported == math.inf, "steps_used": self.used,
                "steps_left": None if self.left in (None, math.inf) else int(self.left),
                "guaranteed_epsilon": list(self.guaranteed_epsilon) if self.guaranteed_epsilon else None,
                "confidence_over_used": self.confidence, "bound": self.bound, "budget_steps": self.budget,
                "budget_epsilon": list(self.budget_epsilon) if self.budget_epsilon else None}


def bound_words(bound: str, max_error_rate=None) -> str:
    """``"Hoeffding's bound"``, ``"exact binomial bound"``, ``"exact binomial bound (error rate ≤ 0.2)"``."""
    if bound == "hoeffding":
        return "Hoeffding's bound"
    return "exact binomial bound" + (f" (error rate ≤ {max_error_rate:g})" if max_error_rate is not None else "")


def bound_text(settings: dict, variant: str) -> str:
    """The bound a replay's ``settings`` used for ``variant``, and why it is not the plan's when the exact one refused."""
    used = bound_words(settings["bound_used"],
                       settings["max_error_rate"] if settings["bound_used"] == "binomial" else None)
    if settings["bound_refused"]:
        return f"{used}: the {METER_TITLES[variant]} has no exact count here ({settings['bound_refused']})"
    return used


def used_up_message(step: int, steps: int, needed: int, title: str, beyond: bool, left: StepsLeft | None) -> str:
    """The alarm (or note) when step ``step`` used the last of the plan's T = ``steps``, in the card's numbers.

    It names what these labels support at the planned ε (:meth:`StepsLeft.capacity`, the card's answer)
    and, when steps are left, that raising T takes them; a new test set otherwise.
    """
    renew = (f"{'' if beyond else 'before the next step, '}draw a new test set ({needed:,} labels for the {title}) "
             f"and release the old one to the developers for development")
    head = f"Step {step} used the last of the T = {steps:,} steps of the plan"
    if left is None:
        return f"{head}: {renew}."
    if left.renew:
        return f"{head}, and {left.capacity()} — {renew}."
    return (f"{head}, and {left.capacity()} — {renew}, or raise T to {steps_text(left.supported)} in a new plan "
            f"to take the {steps_text(left.left)} left.")


def _left_text(left) -> str:
    if left is None:
        return "an unknown number of steps"
    return "none" if left == 0 else steps_text(left)


def steps_left(test_size: int, epsilon, delta: float, used: int, *, steps: int | None = None,
               variant: str = "incremental", tenants: int = 1, tenant_steps=None, reverts=None,
               bound: str = "hoeffding", max_error_rate=None, steps_given: bool = True) -> StepsLeft:
    """How many more steps ``test_size`` labels take at the planned ε after ``used`` steps (:class:`StepsLeft`).

    The planner's own inverse (:func:`~meter_dashboard.meter.stages.budget_answers`: the largest T a
    budget supports, the smallest ε₁ at a T) at the plan's ε, δ and bound; tenants split T
    evenly as in the planner, reverts fixed in advance count once T reaches them.  ``steps``: the
    plan's T, when there is one (its tenant steps and reverts are checked against it); ``steps_given=False``:
    ``steps`` is only the trace's length, not a T anybody planned (:attr:`StepsLeft.plan_steps` stays None).

    Examples
    --------
    >>> s = steps_left(50_000, [0.01, 0.02, 0.03, 0.04, 0.05], 0.01, 12)
    >>> s.supported, s.used, s.left
    (110, 12, 98)
    """
    n = check_int("test_size", test_size, minimum=1)
    used = check_int("steps used", used, minimum=1)
    if variant not in METERS:
        raise InputError("meter", "'incremental' or 'regular'", variant)
    count = len(tenant_steps) if tenant_steps and len(tenant_steps) > 1 else tenants
    common = dict(budget=n, bound=bound, max_error_rate=max_error_rate, budget_variants=(variant,))
    planned = (steps is not None and steps_given) or bool(tenant_steps and len(tenant_steps) > 1)  # a T the plan set
    if steps is None:
        steps = sum(tenant_steps) if tenant_steps and len(tenant_steps) > 1 else max(used, count)
    at_plan = normalize(epsilon, delta, steps, tenants=count, tenant_steps=tenant_steps or None,
                        reverts=[r for r in (reverts or []) if r <= steps] or None, **common)
    supported, eps1_at_t, _ = budget_answers(at_plan, variant)
    over_used = normalize(epsilon, delta, used, tenants=min(count, used),
                          reverts=[r for r in (reverts or []) if r <= used] or None, **common)
    _, eps1, confidence = budget_answers(over_used, variant)
    eps = np.asarray(over_used.epsilon, dtype=float)

    def scaled(e1):
        return tuple(float(v) for v in eps * (e1 / eps[0])) if e1 is not None and math.isfinite(e1) and e1 < 1 else None

    guaranteed = scaled(eps1)
    budget = int(at_plan.steps) if planned and at_plan.steps > used else None
    return StepsLeft(budget=budget, plan_steps=int(at_plan.steps) if planned else None, budget_epsilon=scaled(eps1_at_t) if budget is not None else None,
                     test_size=n, supported=supported, used=used, guaranteed_epsilon=guaranteed,
                     confidence=float(confidence or 0.0), epsilon=tuple(float(v) for v in over_used.epsilon),
                     delta=float(delta), variant=variant, bound=bound_words(bound, over_used.max_error_rate))
