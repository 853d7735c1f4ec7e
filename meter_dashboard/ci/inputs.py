"""What a person chooses for an ease.ml/ci test: the parameters, their defaults, their checks.

:class:`CIInputs` declares every input once, with its default, bounds and documentation.
The param model (:class:`~meter_dashboard.ci.model.CIModel`) inherits it, the
functions (:func:`~meter_dashboard.ci.plan.ci_labels`, ...) take their defaults from
it and the CLI reads its defaults from it (``CIInputs.param.reliability.default``), so page,
notebook and command line agree by construction.

The checks here turn what a person typed into validated values, each failure an
:class:`~meter_dashboard.core.validation.InputError` naming the input, the rule and the value.

References
----------
.. [1] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Section 2.2 (the script: condition, reliability, mode,
   adaptivity, steps), Section 2.3 (2 seconds per label), Section 4.2 (Pattern 2's bound p).
"""
from __future__ import annotations

import param

from ..bounds.ci import ADAPTIVITIES, BOUNDS, MODES
from ..core.validation import InputError, check_int, check_number, parse_exact_decimal
from .grammar import Condition, parse_condition

__all__ = [
    "ADAPTIVITIES",
    "BOUNDS",
    "MODES",
    "ALARM_ON",
    "DEFAULT_CONDITION",
    "MAX_STEPS",
    "CIInputs",
    "default",
    "as_condition",
    "check_choice",
    "validate_difference_bound",
    "check_steps",
    "delta_from_reliability",
]

#: The paper's running example (Section 2.2 script plus the Pattern 1 clause of Appendix A.1).
DEFAULT_CONDITION = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"
#: firstChange: the signal that retires a test set (Section 3.4: pass; fail in the symmetric setting).
ALARM_ON = ("pass", "fail")
#: The most commits one test set may be asked to support.
MAX_STEPS = 10**9

_RELIABILITY_RULE = "a number in (0, 1), such as 0.9999"


class CIInputs(param.Parameterized):
    """The inputs of an ease.ml/ci test (an ease.ml/ci script, Section 2.2, plus labeling effort).

    Only declarations: no derived values.  Every default used anywhere (the functions, the
    page, the CLI) is read from these parameters.

    References
    ----------
    Renggli et al. 2019, Section 2.2 (the ease.ml/ci script), Section 4.2 (Pattern 2's p).
    """

    condition = param.String(default=DEFAULT_CONDITION, doc=(
        "The test condition (Appendix A.1), e.g. 'n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01'."))
    reliability = param.Number(default=0.9999, bounds=(0, 1), inclusive_bounds=(False, False),
                               softbounds=(0.9, 0.99999), step=0.0001, doc="1 - delta: the probability of a valid test.")
    adaptivity = param.Selector(default="full", objects=list(ADAPTIVITIES), doc=(
        "none: results hidden from the developer; full: pass/fail released; firstChange: a new test set at the "
        "first pass."))
    mode = param.Selector(default="fp-free", objects=list(MODES), doc=(
        "fp-free: Unknown fails the commit (no false positives); fn-free: Unknown passes it."))
    steps = param.Integer(default=32, bounds=(1, MAX_STEPS), softbounds=(1, 128), doc="H: commits per test set.")
    difference_bound = param.Number(default=None, allow_None=True, bounds=(0, 1), inclusive_bounds=(False, True),
                                    doc="p: an upper bound on d for every commit (Pattern 2), or None.")
    check_difference_bound = param.Boolean(default=True, doc=(
        "Check p on unlabeled examples (Section 4.2) instead of taking it as known in advance."))
    seconds_per_label = param.Number(default=2.0, bounds=(0, None), inclusive_bounds=(False, True),
                                     softbounds=(0.5, 30), doc="Labeling time per example (the paper: 2 s).")
    labelers = param.Integer(default=1, bounds=(1, None), softbounds=(1, 20), doc="Labelers working in parallel.")
    bound = param.Selector(default="hoeffding", objects=list(BOUNDS), doc=(
        "The factor of each estimate: hoeffding (the paper's numbers) or binomial (exact tails, Section 4.3: "
        "never more labels)."))
    alarm_on = param.Selector(default="pass", objects=list(ALARM_ON), doc=(
        "firstChange: which signal retires the test set (pass, Section 3.4; fail in the symmetric setting)."))


def default(name: str):
    """The default of input ``name`` (one definition: :class:`CIInputs`)."""
    return CIInputs.param[name].default


def as_condition(condition) -> Condition:
    """A parsed :class:`~meter_dashboard.ci.grammar.Condition` (parsing text when needed)."""
    return condition if isinstance(condition, Condition) else parse_condition(condition)


def check_choice(name: str, value, choices) -> str:
    """``value`` if it is one of ``choices``, else an :class:`InputError` listing them."""
    if not isinstance(value, str) or value not in choices:
        raise InputError(name, "one of " + ", ".join(choices), value)
    return value


def validate_difference_bound(value) -> float | None:
    """Pattern 2's bound p on d: ``None`` or a number in (0, 1]."""
    if value is None:
        return None
    p = check_number("difference_bound", value)
    if not 0 < p <= 1:
        raise InputError("difference_bound", "a number in (0, 1]", value)
    return p


def delta_from_reliability(reliability) -> float:
    """``1 - reliability`` computed exactly (``1 - 0.9999`` is ``1e-4``, not 9.99999999999e-05).

    The value is read as a bounded float first and then exactly with
    :func:`~meter_dashboard.core.validation.parse_exact_decimal`, so its size and digits are
    bounded before any arithmetic; a reliability so small that ``1 - reliability`` rounds
    to 1 (``1e-400``) is refused with the value typed.

    References
    ----------
    Renggli et al. 2019, Section 2.2 (``reliability: 0.9999`` is 1 - delta).
    """
    if isinstance(reliability, bool) or reliability is None:
        raise InputError("reliability", _RELIABILITY_RULE, reliability)
    try:
        approx = check_number("reliability", reliability)
    except InputError:
        raise InputError("reliability", _RELIABILITY_RULE, reliability) from None
    if not 0 <= approx <= 1:  # 0.99999999999999999999 is 1.0 as a float: decided exactly below
        raise InputError("reliability", _RELIABILITY_RULE, reliability)
    if approx < 1e-15:  # 1 - reliability would round to 1 (1e-400 is 0.0 as a float)
        raise InputError("reliability", f"{_RELIABILITY_RULE}, of at least 1e-15", reliability)
    try:
        value = parse_exact_decimal("reliability", reliability if isinstance(reliability, str) else str(reliability))
    except InputError as exc:
        raise InputError("reliability", f"{_RELIABILITY_RULE} ({exc.rule})", reliability) from None
    if not 0 < value < 1:
        raise InputError("reliability", _RELIABILITY_RULE, reliability)
    return float(1 - value)


def check_steps(steps) -> int:
    """H: a whole number of commits in [1, :data:`MAX_STEPS`]."""
    return check_int("steps", steps, minimum=1, maximum=MAX_STEPS)
