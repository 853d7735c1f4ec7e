"""The planner's model: what a team chose, and every label count derived from it.

Two ways in, one engine (:mod:`meter_dashboard.bounds.meter`):

- :func:`plan` - a function for scripts and notebooks, returning a :class:`PlanResult`
  (readable repr, ``to_frame()``, ``to_dict()``, ``sentence()``).
- :class:`MeterPlan` - a ``param.Parameterized`` model with no widgets inside.  The
  planner and session pages, notebooks, the CLI and the tests all drive it.  Invalid
  combinations set :attr:`MeterPlan.error` and keep the last valid :attr:`MeterPlan.result`.

The per-model bound is a choice: ``bound="hoeffding"`` (the paper's, the default: every
published number reproduces) or ``bound="binomial"`` (the exact binomial tail for 0/1
losses, optionally with ``max_error_rate``: a known range for every model's error rate).
Every result carries Hoeffding's count beside the chosen bound's, with the saving.

The plan round-trips through a URL query string (:meth:`MeterPlan.to_query`,
:meth:`MeterPlan.from_query`) with the keys ``epsilon``, ``ranges``, ``delta``,
``steps``, ``signals``, ``tenant_steps``, ``reverts`` (plus ``tenants``, ``budget``,
``seconds_per_label``, ``labelers``, ``cost_per_hour``, ``sweep``, ``bound``,
``max_error_rate``).

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.
.. [2] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Section 4.3 (tight numerical bounds).
.. [3] J. Langford. "Tutorial on Practical Prediction Theory for Classification", JMLR 6, 2005.
"""
from __future__ import annotations

import sys
from typing import Any
from urllib.parse import parse_qsl, urlencode

import numpy as np
import param

from ..bounds import meter as meter_bounds
from ..bounds.meter import VARIANTS
from ..core.runtime import Latest, running_loop
from ..core.validation import (
    InputError,
    check_int,
    check_positive,
    check_probability,
    parse_int_list,
    parse_number_list,
)
from .defaults import DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_RANGES, DEFAULT_STEPS, MAX_BUDGET
from .text import comparison
from .result import (
    ASSUMPTION,
    BINOMIAL_ASSUMPTION,
    RECOMMENDED,
    REVERT_CAVEAT,
    TENANT_CAVEAT,
    PlanResult,
    bound_title,
    range_caveat,
)
from .curves import (
    SWEEPS,
    reachable_axis,
    curve,
    exact_batches,
    exact_curve_batches,
    fold,
    hoeffding_sweep,
    plan_curves,
    resize_vector,
    start_curves,
    sweep,
    sweep_setting,
    t_axis,
    t_axis_end,
)
from .stages import (
    ORDER,
    budget_key,
    check_bound,
    chosen_counts,
    coarse_to_fine,
    normalize,
    quick_result,
    slow_items,
    with_items,
)

__all__ = ["plan", "PlanResult", "MeterPlan", "curve", "sweep", "plan_curves", "VARIANTS", "RECOMMENDED", "BOUNDS",
           "REVERT_CAVEAT", "TENANT_CAVEAT", "ASSUMPTION", "BINOMIAL_ASSUMPTION", "PRESETS", "validate_ranges",
           "range_caveat", "bound_title", "compare_kwargs", "comparison"]

#: The per-model bounds: Hoeffding's (the paper's, the default) and the exact binomial tail.
BOUNDS = meter_bounds.BOUNDS
#: Up to this many labels (Hoeffding's count, every variant) a page's exact counts are computed at once.
QUICK_LABELS = 2_000_000



def validate_ranges(ranges, signals: int | None = None) -> list[float]:
    """The m + 1 boundaries 0 = r_0 < r_1 < ... < r_m = 1 of the empirical-overfitting ranges."""
    r = [float(v) for v in ranges]
    if len(r) < 2:
        raise InputError("ranges", "at least two boundaries (0 and 1)", r)
    if r[0] != 0.0 or r[-1] != 1.0:
        raise InputError("ranges", "boundaries starting at 0 and ending at 1", r)
    if any(b <= a for a, b in zip(r, r[1:])):
        raise InputError("ranges", "strictly increasing boundaries (0 = r_0 < r_1 < ... < r_m = 1)", r)
    if signals is not None and len(r) != signals + 1:
        raise InputError("ranges", f"m + 1 = {signals + 1} boundaries for the {signals} signals", r)
    return r


#: plan() keyword arguments a query's values (:meth:`MeterPlan.parse_query`) may change.
_PLAN_KWARGS = ("epsilon", "delta", "steps", "tenants", "tenant_steps", "reverts", "budget", "seconds_per_label",
                "labelers", "cost_per_hour", "bound", "max_error_rate")


def compare_kwargs(kwargs: dict, query) -> dict:
    """:func:`plan`'s keyword arguments ``kwargs`` changed by ``query`` (``"delta=0.05&steps=20"``): a second plan.

    The CLI's ``--compare``; a refused setting raises :class:`InputError` naming ``compare``.
    """
    try:
        values = MeterPlan.parse_query(query)
    except InputError as exc:
        raise InputError("compare", f"settings of a plan ({exc.parameter}: {exc.rule})", exc.got) from None
    if "pinned" in values:
        raise InputError("compare", "one plan's settings (no compare inside compare)", query)
    out = {**kwargs, **{k: v for k, v in values.items() if k in _PLAN_KWARGS}}
    if "epsilon" in values:
        out.pop("signals", None)  # the query's ε vector says how many signals
    if values.get("tenant_steps") == []:
        out["tenant_steps"] = None
    if values.get("reverts") == []:
        out["reverts"] = None
    return out


# ============================================================================ the function
def plan(epsilon=DEFAULT_EPSILON, delta: float = DEFAULT_DELTA, steps: int = DEFAULT_STEPS, *, signals: int | None = None,
         tenants: int = 1, tenant_steps=None, reverts=None, budget: int | None = None,
         seconds_per_label: float = 2.0, labelers: int = 1, cost_per_hour: float | None = None,
         bound: str = "hoeffding", max_error_rate: float | None = None) -> PlanResult:
    """Label counts of every meter variant, labeling effort, and the inverse answers for a budget.

    Parameters
    ----------
    epsilon : float or sequence of float
        eps_1 <= ... <= eps_m; one value with ``signals`` is the uniform meter.
    delta : float
        The guarantee holds with probability 1 - delta.
    steps : int
        T, development steps to support.
    signals : int, optional
        m, when a single epsilon is given.
    tenants : int
        Tenants sharing T evenly (ignored when ``tenant_steps`` is given).
    tenant_steps : sequence of int, optional
        Steps per tenant, summing to T.
    reverts : sequence of int, optional
        Revert steps fixed in advance.
    budget : int, optional
        A label budget: answers the inverse questions (largest T, smallest eps_1, confidence).
    seconds_per_label, labelers, cost_per_hour
        Labeling effort (2 s per label is the ease.ml/ci paper's working figure).
    bound : {'hoeffding', 'binomial'}
        The per-model factor inside each variant's union bound: Hoeffding's
        ``2 exp(-2 n eps^2)`` (the paper's; every published number) or the exact binomial tail
        (0/1 losses; ease.ml/ci Section 4.3, Langford 2005).  The counts, the budget answers
        and the curves use it; Hoeffding's count is kept beside it (``hoeffding_labels``).
    max_error_rate : float, optional
        With ``bound='binomial'``: every model the developer might submit errs at most this
        (in (0, 0.5)); the worst case runs over error rates in [0, a] only.  It must hold
        for EVERY model, including bad ones submitted in response to the signals: the result
        also carries the counts without the range and the confidence the planned counts
        deliver if the range is wrong.

    Returns
    -------
    PlanResult

    Notes
    -----
    With the binomial bound a count the bound refuses (above
    :data:`~meter_dashboard.bounds.meter.BINOMIAL_LABELS_CAP` labels, e.g. resampling over
    many steps) falls back to Hoeffding's, named in ``refused`` and the notes.

    References
    ----------
    .. [1] Hubis, Wu & Zhang (2019), ease.ml/meter: Thm 4, Eqs. 1-2, Thms 1-2, Cor 1-2,
       Appendix B, Eqs. 13-16.
    .. [2] Renggli et al. (2019), ease.ml/ci, Section 4.3 (tight numerical bounds).
    .. [3] J. Langford (2005), "Tutorial on Practical Prediction Theory for Classification".

    Examples
    --------
    >>> r = plan([0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)
    >>> r.labels["regular"], r.labels["incremental"]
    (100033, 38005)
    """
    inputs = normalize(epsilon, delta, steps, signals=signals, tenants=tenants, tenant_steps=tenant_steps,
                       reverts=reverts, budget=budget, seconds_per_label=seconds_per_label, labelers=labelers,
                       cost_per_hour=cost_per_hour, bound=bound, max_error_rate=max_error_rate)
    result = quick_result(inputs)
    items = [item for unit in slow_items(inputs) for item in unit]
    return with_items(result, items)


def resize_ranges(ranges, m: int) -> list[float]:
    """The range boundaries for m signals: truncated, or extended by doubling the last inner one."""
    inner = [float(r) for r in ranges[1:-1]]
    if m - 1 <= len(inner):
        inner = inner[: m - 1]
    else:
        last = inner[-1] if inner else 0.005
        while len(inner) < m - 1:
            last = last * 2 if last * 2 < 1 else (last + 1) / 2
            inner.append(last)
    return [0.0] + inner + [1.0]


# ============================================================================ presets
PRESETS: dict[str, dict[str, Any]] = {  # preset name -> parameter values
    "Paper: uniform ε = 0.01 (m = 5)": dict(epsilon=[0.01] * 5, delta=0.01, steps=10, tenants=1, tenant_steps=[],
                                             reverts=[]),
    "Paper: ε = 0.01…0.05": dict(epsilon=list(DEFAULT_EPSILON), delta=0.01, steps=10, tenants=1, tenant_steps=[],
                                  reverts=[]),
    "Paper: δ = 0.1 (Fig. 3)": dict(epsilon=list(DEFAULT_EPSILON), delta=0.1, steps=8, tenants=1, tenant_steps=[],
                                     reverts=[]),
    "Paper: δ = 0.01": dict(epsilon=list(DEFAULT_EPSILON), delta=0.01, steps=8, tenants=1, tenant_steps=[],
                             reverts=[]),
    "Paper: two tenants": dict(epsilon=list(DEFAULT_EPSILON), delta=0.01, steps=10, tenants=2, tenant_steps=[],
                               reverts=[]),
    "Paper: three reverts (1, 2, 3)": dict(epsilon=list(DEFAULT_EPSILON), delta=0.01, steps=10, tenants=1,
                                            tenant_steps=[], reverts=[1, 2, 3]),
}


# ============================================================================ the param model
#: The parameters a plan's inputs are made of (:meth:`MeterPlan.inputs_of`).
_INPUT_NAMES = ("epsilon", "delta", "steps", "tenants", "tenant_steps", "reverts", "budget", "seconds_per_label",
                "labelers", "cost_per_hour", "bound", "max_error_rate", "budget_variants", "ranges")


class MeterPlan(param.Parameterized):
    """What a team chose for its meter, and everything derived from it, live.

    Inputs are declared parameters; derived outputs are :attr:`result` (the last valid
    :class:`PlanResult`), :attr:`curves` and :attr:`sweep_curves`, recomputed whenever an
    input changes.  A combination that is invalid as a whole (a decreasing eps vector,
    tenant steps that do not sum to T, impossible reverts) sets :attr:`error` and leaves
    the previous results in place.

    Examples
    --------
    >>> p = MeterPlan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)
    >>> p.result.labels["regular"]
    100033
    """

    ranges = param.List(default=list(DEFAULT_RANGES), item_type=(int, float), doc=(
        "Empirical-overfitting range boundaries 0 = r_0 < r_1 < ... < r_m = 1; signal i covers "
        "[r_(i-1), r_i), the last one closed at 1."))
    epsilon = param.List(default=list(DEFAULT_EPSILON), item_type=(int, float), doc=(
        "Distributional tolerances eps_1 <= ... <= eps_m, one per signal."))
    delta = param.Number(default=DEFAULT_DELTA, bounds=(0, 1), inclusive_bounds=(False, False), softbounds=(0.001, 0.2),
                         step=0.001, doc="Failure probability: the guarantee holds with probability 1 - delta.")
    steps = param.Integer(default=DEFAULT_STEPS, bounds=(1, None), softbounds=(1, 200),
                          doc="T: development steps (model submissions) the test set must support.")
    tenants = param.Integer(default=1, bounds=(1, None), softbounds=(1, 10),
                            doc="Developers who work on separate chains and do not communicate (steps split evenly).")
    tenant_steps = param.List(default=[], item_type=int, doc=(
        "Explicit steps per tenant (sum = T); empty means T split evenly among the tenants."))
    revert_budget = param.Integer(default=0, bounds=(0, None), softbounds=(0, 20),
                                  doc="B: how many reverts are planned; revert steps default to 1..B.")
    reverts = param.List(default=[], item_type=int, doc=(
        "Revert steps t_1 <= ... <= t_B, fixed in advance (no saving otherwise)."))
    seconds_per_label = param.Number(default=2.0, bounds=(0, None), inclusive_bounds=(False, True),
                                     softbounds=(0.5, 60), doc="Labeling time per example, in seconds.")
    labelers = param.Integer(default=1, bounds=(1, None), softbounds=(1, 50), doc="Labelers working in parallel.")
    cost_per_hour = param.Number(default=None, allow_None=True, bounds=(0, None),
                                 doc="Optional cost of one labeler-hour (any currency).")
    budget = param.Integer(default=None, allow_None=True, bounds=(1, None), softbounds=(1_000, 1_000_000),
                           doc="A label budget for the inverse questions; None (the default) until someone gives one.")
    sweep_parameter = param.Selector(default="delta", objects=list(SWEEPS), doc="What the second plot varies.")
    bound = param.Selector(default="hoeffding", objects=list(BOUNDS), doc=(
        "The per-model bound: 'hoeffding' (the paper's) or 'binomial' (exact binomial tails for 0/1 losses, "
        "ease.ml/ci Section 4.3)."))
    max_error_rate = param.Number(default=None, allow_None=True, bounds=(0, 0.5), inclusive_bounds=(False, False),
                                  softbounds=(0.01, 0.49), step=0.01, doc=(
        "With the binomial bound: every model the developer might submit (bad ones included) errs at most this; "
        "empty for no such range."))
    with_sweep = param.Boolean(default=True, doc=(
        "Compute the second plot's curves (a page turns this on when the plot is first opened)."))
    budget_variants = param.ListSelector(default=list(ORDER), objects=list(ORDER), doc=(
        "The variants whose budget answers are computed (a page asks for the headlined one until its table "
        "is opened)."))
    exact_points = param.Integer(default=24, bounds=(2, 1000), doc=(
        "How many values of T get an exact count in each batch of the curve over T (the first batch, coarse to "
        "fine, shows the curve's shape; every value gets one)."))

    pinned = param.Parameter(default=None, doc=(
        "A second plan pinned for comparison (a MeterPlan: :meth:`pin`, :meth:`compare_with`), or None.  "
        "Its settings travel in the URL under ``compare``."))

    # ---- derived (read-only for users)
    result = param.Parameter(default=None, doc="The last valid PlanResult (partial while `result.pending`).")
    curves = param.Dict(default={}, doc=(
        "{'steps': T array, variant: labels under the chosen bound (NaN: not computed yet or refused), "
        "'hoeffding': {variant: Hoeffding's labels}, 'bound', 'computed', 'planned'} for the curve over T."))
    sweep_curves = param.Dict(default={}, doc="{'x': values, 'parameter', variant: labels, 'hoeffding': ...}.")
    error = param.String(default="", doc="Why the current inputs are not valid ('' when they are).")
    error_parameter = param.String(default="", doc="The input the error is about (e.g. 'epsilon', 'reverts').")
    work_error = param.String(default="", doc="Why background work on the current plan failed ('' when it did not).")

    def __init__(self, **params):
        if "epsilon" in params and np.ndim(params["epsilon"]) == 0:
            params["epsilon"] = [float(params["epsilon"])]
        for key in ("epsilon", "ranges"):
            if key in params and not isinstance(params[key], list):
                params[key] = [float(v) for v in params[key]]
        for key in ("tenant_steps", "reverts"):
            if key in params and not isinstance(params[key], list):
                params[key] = [int(v) for v in params[key]]
        if "reverts" in params and "revert_budget" not in params:
            params["revert_budget"] = len(params["reverts"])
        if "epsilon" in params and "ranges" not in params:
            params["ranges"] = resize_ranges(DEFAULT_RANGES, len(params["epsilon"]))
        self._memo: dict = {}  # the inputs the curves on show belong to
        #: the slow work of the newest plan (exact counts, budget answers, exact curve points); a page turns
        #: on ``background`` work with :meth:`work_in_background`, else everything is computed right away
        self._latest = Latest()
        super().__init__(**params)
        self._recompute()
        if self.error:
            raise InputError(*self._last_error_args)

    # -- input coupling (side effects on other inputs)
    @param.depends("revert_budget", watch=True)
    def _reverts_follow_budget(self):
        if len(self.reverts) != self.revert_budget:
            self.reverts = list(range(1, self.revert_budget + 1))

    @property
    def signals(self) -> int:
        return len(self.epsilon)

    def set_signals(self, m: int) -> None:
        """Change m: the eps vector and the ranges are truncated or extended together."""
        m = check_int("signals", m, minimum=1, maximum=1000)
        with param.parameterized.batch_call_watchers(self):
            self.param.update(epsilon=resize_vector(self.epsilon, m).tolist(), ranges=resize_ranges(self.ranges, m))

    def apply_preset(self, name: str) -> None:
        """Load one of :data:`PRESETS` (the paper's settings)."""
        if name not in PRESETS:
            raise InputError("preset", "one of " + ", ".join(PRESETS), name)
        values = dict(PRESETS[name])
        values["ranges"] = resize_ranges(self.ranges, len(values["epsilon"]))
        values["revert_budget"] = len(values["reverts"])
        self.param.update(**values)

    # -- a uniform ε, the defaults
    @property
    def uniform_epsilon(self) -> float | None:
        """The one ε every signal shares, or None when they differ."""
        return self.epsilon[0] if len(set(self.epsilon)) == 1 else None

    def set_uniform_epsilon(self, value) -> None:
        """The same ε for every signal (m unchanged); raises InputError unless it is in (0, 1)."""
        eps = check_probability("epsilon", value)
        self.epsilon = [eps] * self.signals

    #: What a person chooses (everything :meth:`reset` puts back and :meth:`copy` carries).
    INPUTS = ("ranges", "epsilon", "delta", "steps", "tenants", "tenant_steps", "revert_budget", "reverts",
              "seconds_per_label", "labelers", "cost_per_hour", "budget", "sweep_parameter", "bound", "max_error_rate")

    def reset(self) -> None:
        """Every input back to its default (the pinned plan is dropped too)."""
        with param.parameterized.batch_call_watchers(self):
            self.param.update(**{k: self.param[k].default for k in self.INPUTS}, pinned=None)

    # -- a second plan, pinned for comparison
    def copy(self, **changes) -> "MeterPlan":
        """A new plan with this one's inputs (and ``changes``); nothing pinned, no second plot.

        When this plan works in the background (a page, a kernel), so does the copy: its exact
        counts and curve arrive later, through the same dispatch.
        """
        values = {k: getattr(self, k) for k in self.INPUTS}
        values = {k: (list(v) if isinstance(v, list) else v) for k, v in {**values, **changes}.items()}
        values.pop("pinned", None)
        latest = self._latest
        exact = {k: values.pop(k) for k in ("bound", "max_error_rate")} if latest.background else {}
        other = MeterPlan(**values, with_sweep=False, budget_variants=list(self.budget_variants))
        if latest.background:
            other.work_in_background(latest.dispatch)
            other.param.update(**exact)
        return other

    def comparison(self) -> tuple[list, list]:
        """``(headers, rows)``: the pinned plan beside this one (settings that differ, labels, budget, effort)."""
        if self.pinned is None:
            raise InputError("pinned", "a pinned plan (pin() or compare_with() first)", None)
        return comparison(self.pinned.result, self.result, self.pinned.ranges, self.ranges)

    def pin(self) -> "MeterPlan":
        """Pin the plan as it is now: later changes are compared with it (:attr:`pinned`)."""
        self.pinned = self.copy()
        return self.pinned

    def compare_with(self, query) -> "MeterPlan":
        """Pin this plan changed by ``query`` (``"delta=0.05&steps=20"`` or a mapping; the URL's keys).

        Raises :class:`InputError` naming ``compare`` and the setting refused; nothing is pinned then.
        """
        self.pinned = self._pinned_from(query)
        return self.pinned

    def unpin(self) -> None:
        if self.pinned is not None:
            self.pinned.stop_work()
        self.pinned = None

    def _pinned_from(self, query) -> "MeterPlan":
        try:
            values = self.parse_query(query, current_ranges=self.ranges)
            if "pinned" in values:
                raise InputError("compare", "one plan's settings (no compare inside compare)", query)
            return self.copy(**values)
        except InputError as exc:
            if exc.parameter == "compare":
                raise
            raise InputError("compare", f"settings of a plan ({exc.parameter}: {exc.rule})", exc.got) from None

    # -- derivation
    def inputs(self):
        """The validated inputs (:class:`~meter_dashboard.meter.stages.PlanInputs`); raises InputError."""
        return self.inputs_of({name: getattr(self, name) for name in _INPUT_NAMES})

    @classmethod
    def inputs_of(cls, values: dict):
        """The validated inputs of a plan with ``values`` (the others at their defaults), without building one.

        A page's first response answers its link this way (:meth:`parse_query`'s values): no curves, no
        background work.  Raises InputError.
        """
        v = {name: values.get(name, cls.param[name].default) for name in _INPUT_NAMES}
        inputs = normalize(v["epsilon"], v["delta"], v["steps"], tenants=v["tenants"],
                           tenant_steps=v["tenant_steps"] or None, reverts=v["reverts"], budget=v["budget"],
                           seconds_per_label=v["seconds_per_label"], labelers=v["labelers"],
                           cost_per_hour=v["cost_per_hour"], bound=v["bound"],
                           max_error_rate=v["max_error_rate"] if v["bound"] == "binomial" else None,
                           budget_variants=tuple(v["budget_variants"]))
        validate_ranges(v["ranges"], len(inputs.epsilon))
        return inputs

    def validate(self) -> None:
        """Raise :class:`InputError` if the inputs do not form a valid plan."""
        self.inputs()

    def _kept(self, name: str, key, start):
        """The curves on show when they belong to the same inputs (exact points kept), else ``start()``."""
        if self._memo.get(name) == key and getattr(self, name):
            return getattr(self, name)
        self._memo[name] = key
        return start()

    def _sweep_state(self, inputs):
        """``(x, sweep_curves)`` for the second plot, or ``(None, {})`` while nobody looks at it."""
        if not self.with_sweep:
            self._memo.pop("sweep_curves", None)
            return None, (self.sweep_curves if not self.sweep_curves else {})
        parameter = self.sweep_parameter
        # the swept parameter's own value does not change its plot (a δ change keeps the δ sweep)
        key = (inputs.epsilon, None if parameter == "delta" else inputs.delta,
               None if parameter == "tenants" else inputs.tenant_count, inputs.reverts, inputs.steps, parameter)
        x, swept = hoeffding_sweep(parameter, inputs.epsilon, inputs.delta, inputs.steps, inputs.tenant_count,
                                   inputs.reverts)
        state = self._kept("sweep_curves", (key, inputs.bound, inputs.max_error_rate),
                           lambda: {**start_curves(x, swept, inputs.bound, "x"), "parameter": parameter})
        return x, state

    @param.depends("ranges", "epsilon", "delta", "steps", "tenants", "tenant_steps", "reverts",
                   "seconds_per_label", "labelers", "cost_per_hour", "budget", "sweep_parameter", "bound",
                   "max_error_rate", "exact_points", "with_sweep", "budget_variants", watch=True)
    def _recompute(self):
        try:
            inputs = self.inputs()
            result = quick_result(inputs)
            base = (inputs.epsilon, inputs.delta, inputs.tenant_count, inputs.reverts)
            axis, hoeffding = reachable_axis(*base, self._axis_end(inputs, result), int(t_axis(inputs.steps)[-1]))
            x, sweep_state = self._sweep_state(inputs)
        except InputError as exc:
            self._last_error_args = (exc.parameter, exc.rule, exc.got)
            with param.parameterized.batch_call_watchers(self):
                self.error_parameter = exc.parameter
                self.error = str(exc)
            return
        self._last_error_args = None
        state = {"result": result,
                 "curves": self._kept("curves", (base, int(axis[-1]), inputs.bound, inputs.max_error_rate),
                                      lambda: start_curves(axis, hoeffding, inputs.bound, "steps")),
                 "sweep_curves": sweep_state}
        latest = self._latest
        if inputs.bound == "hoeffding":  # milliseconds, all of it: nothing goes off the loop, one update
            latest.cancel()
            self._publish(state)
            return
        if not latest.background or running_loop() is None:
            latest.cancel()  # background work for older inputs stops
            for update in self._work(inputs, latest.stopped_function(), axis, x):
                fold(state, update)
            self._publish(state)
            self._follow_budget()
            return
        planned = self._counts_now(inputs, result)
        if planned is not None:  # the first update already has the exact counts (and the curve's point at T)
            fold(state, self._with_point([("labels", v, planned[v]) for v in ORDER], axis, inputs))
        self._publish(state)
        latest.stream(lambda stopped: self._work(inputs, stopped, axis, x, planned), self._deliver,
                      on_error=self._failed)

    def _axis_end(self, inputs, result) -> int:
        """The curve over T's last T: past the plan's T and the budget's largest T (the exact one once known)."""
        end = t_axis_end(result)
        known = self._memo.get("largest")
        if known is not None and known[0] == budget_key(inputs):
            end = max(end, known[1])
        return end

    def _follow_budget(self) -> None:
        """An exact budget answer beyond the curve's last T: the curve is drawn again, out to it."""
        r = self.result
        if r is None or r.budget is None or not self.curves or r.is_pending("budget", RECOMMENDED):
            return
        end = t_axis_end(r)
        if end > int(self.curves["steps"][-1]):
            self._memo["largest"] = (budget_key(self.inputs()), end)
            self._recompute()

    def work_in_background(self, dispatch=None) -> None:
        """Compute the slow part off the event loop from now on (a served page, a Jupyter kernel).

        ``dispatch(fn)`` runs ``fn`` where the model lives (a page: the session's next tick under its
        document lock); Hoeffding's numbers are published at once, the rest as it comes.
        """
        self._latest.background = True
        if dispatch is not None:
            self._latest.dispatch = dispatch
        if self.bound == "binomial" and not self.error:
            self._recompute()

    def _publish(self, state: dict) -> None:
        """Set the derived parameters; curves that did not change are not set again (nothing re-sent)."""
        changed = {k: v for k, v in state.items() if getattr(self, k) is not v}
        with param.parameterized.batch_call_watchers(self):
            self.param.update(**changed, error_parameter="", error="", work_error="")

    def stop_work(self) -> None:
        """Stop the background work for the current plan (a page whose browser left): nothing more is applied."""
        self._latest.cancel()
        if self.pinned is not None:
            self.pinned.stop_work()

    async def settled(self) -> None:
        """Wait until the background work for the current inputs is done (notebooks, tests)."""
        await self._latest.settled()

    def _failed(self, exc: Exception) -> None:
        self.work_error = f"The exact computation stopped: {type(exc).__name__}: {exc}"

    def _deliver(self, update) -> None:
        """One update of background work, where the model lives (updates for an older plan never arrive).

        The parameters it changes are set together: the page shows a new exact count in the
        headline, the table and on the curve in one message.
        """
        if self.error:
            return
        kinds = [u[0] for u in update[1]] if update[0] == "many" else [update[0]]
        state = {k: getattr(self, k) for k in kinds}
        fold(state, update)
        with param.parameterized.batch_call_watchers(self):
            self.param.update(**state)
        if "result" in kinds:
            self._follow_budget()

    @staticmethod
    def _with_point(unit, axis, inputs):
        """A unit of results; with the exact counts, the curve's point at T too (both change at once)."""
        current = int(np.argmin(np.abs(axis - inputs.steps)))
        on_curve = int(axis[current]) == inputs.steps and len(set(inputs.tenant_steps)) <= 1
        point = {v: (None if isinstance(n, InputError) else n) for kind, v, n in unit if kind == "labels"}
        if point and on_curve:  # the same count is the curve's point at T
            return ("many", [("result", unit), ("curves", {"points": {current: point}})])
        return ("result", unit)

    def _counts_now(self, inputs, result) -> dict | None:
        """The exact counts, computed right away when they take milliseconds (else None: off the loop).

        The engine of issue 18 finds every variant's count in one search of a few milliseconds for
        modest counts, once its module is loaded (the first exact plan of a process loads it off the loop).
        """
        if "meter_dashboard.bounds.binomial" not in sys.modules or max(result.hoeffding_labels.values()) > QUICK_LABELS:
            return None
        return chosen_counts(inputs)

    def _work(self, inputs, stop, axis, x, planned=None):
        """The slow part of one plan: exact counts, budget answers, exact curve and sweep points (until ``stop()``)."""
        current = int(np.argmin(np.abs(axis - inputs.steps)))
        for unit in slow_items(inputs, stop, planned):
            yield self._with_point(unit, axis, inputs)
        if stop():
            return
        settings = dict(reverts=inputs.reverts, rate=inputs.max_error_rate)
        yield from exact_curve_batches(axis, coarse_to_fine(len(axis), None, first=[current]), inputs, stop,
                                       self.exact_points)
        if x is None:
            return
        parameter = self.sweep_parameter
        order = coarse_to_fine(len(x))  # every point, coarse to fine, a batch per quarter second
        sweep_settings = dict(settings, reverts=() if parameter == "tenants" else inputs.reverts)

        def sweep_point(i):
            eps_i, delta_i, tenants_i = sweep_setting(parameter, x[i], inputs.epsilon, inputs.delta,
                                                      inputs.tenant_count)
            return eps_i, delta_i, inputs.steps, tenants_i

        yield from exact_batches("sweep_curves", order, sweep_point, sweep_settings, stop)

    # -- URL state
    QUERY_KEYS = ("epsilon", "ranges", "delta", "steps", "signals", "tenants", "tenant_steps", "reverts",
                  "budget", "seconds_per_label", "labelers", "cost_per_hour", "sweep")
    #: The planner's own keys for the per-model bound (the session replays with Hoeffding's and ignores them).
    BOUND_QUERY_KEYS = ("bound", "max_error_rate")
    #: The planner's key for the pinned plan (its own query string, URL-encoded once more).
    PIN_QUERY_KEYS = ("compare",)

    def to_query(self, pinned: bool = True, explicit: bool = False) -> dict:
        """The plan as URL query parameters (strings); the pinned plan under ``compare`` unless ``pinned=False``.

        ``explicit``: every setting, defaults included (an empty value for none), so that the query
        read on top of any other plan gives this one (the pinned plan's ``compare``).
        """
        def nums(values):
            return ",".join(f"{v:g}" for v in values)

        q = {
            "epsilon": nums(self.epsilon),
            "ranges": nums(self.ranges),
            "delta": f"{self.delta:g}",
            "steps": str(self.steps),
            "signals": str(self.signals),
        }
        if self.tenant_steps:
            q["tenant_steps"] = ",".join(str(v) for v in self.tenant_steps)
        elif self.tenants != 1:
            q["tenants"] = str(self.tenants)
        if self.reverts:
            q["reverts"] = ",".join(str(v) for v in self.reverts)
        if self.budget is not None:
            q["budget"] = str(self.budget)
        if self.seconds_per_label != self.param.seconds_per_label.default:
            q["seconds_per_label"] = f"{self.seconds_per_label:g}"
        if self.labelers != 1:
            q["labelers"] = str(self.labelers)
        if self.cost_per_hour is not None:
            q["cost_per_hour"] = f"{self.cost_per_hour:g}"
        if self.sweep_parameter != self.param.sweep_parameter.default:
            q["sweep"] = self.sweep_parameter
        if self.bound != "hoeffding":
            q["bound"] = self.bound
            if self.max_error_rate is not None:
                q["max_error_rate"] = f"{self.max_error_rate:g}"
        if explicit:
            q = {"tenants": str(self.tenants), "tenant_steps": ",".join(str(v) for v in self.tenant_steps),
                 "reverts": ",".join(str(v) for v in self.reverts), "budget": "" if self.budget is None else str(self.budget),
                 "seconds_per_label": f"{self.seconds_per_label:g}", "labelers": str(self.labelers),
                 "cost_per_hour": "" if self.cost_per_hour is None else f"{self.cost_per_hour:g}",
                 "bound": self.bound, "max_error_rate": "" if self.max_error_rate is None else f"{self.max_error_rate:g}",
                 **q}
        if pinned and self.pinned is not None:
            q["compare"] = self.pinned.query_string(pinned=False, explicit=True)
        return q

    def query_string(self, pinned: bool = True, explicit: bool = False) -> str:
        return urlencode(self.to_query(pinned, explicit), safe=",")

    @staticmethod
    def parse_query(query, current_ranges=None) -> dict:
        """Validated parameter values from a query string or mapping (unknown keys ignored).

        When the query gives ``epsilon`` but no ``ranges``, the ranges are ``current_ranges``
        (or the defaults) resized to the new number of signals.  Raises
        :class:`InputError` naming the key, the rule and the value.
        """
        if isinstance(query, str):
            query = dict(parse_qsl(query.lstrip("?"), keep_blank_values=True))
        q = {k: (v[0] if isinstance(v, list) else v) for k, v in query.items()}
        q = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in q.items()}
        out: dict = {}
        if "epsilon" in q:
            out["epsilon"] = parse_number_list("epsilon", q["epsilon"])
        if "signals" in q:
            m = check_int("signals", q["signals"], minimum=1, maximum=1000)
            eps = out.get("epsilon", list(DEFAULT_EPSILON))
            if len(eps) == 1:
                out["epsilon"] = eps * m
            elif len(eps) != m:
                raise InputError("signals", f"the number of epsilon values ({len(eps)})", q["signals"])
        if "ranges" in q:
            out["ranges"] = validate_ranges(parse_number_list("ranges", q["ranges"]))
        elif "epsilon" in out:
            out["ranges"] = resize_ranges(current_ranges or DEFAULT_RANGES, len(out["epsilon"]))
        if "delta" in q:
            out["delta"] = check_probability("delta", q["delta"])
        if "steps" in q:
            out["steps"] = check_int("steps", q["steps"], minimum=1)
        if "tenants" in q:
            out["tenants"] = check_int("tenants", q["tenants"], minimum=1)
        if "tenant_steps" in q:
            out["tenant_steps"] = parse_int_list("tenant_steps", q["tenant_steps"]) if q["tenant_steps"] else []
            if out["tenant_steps"] or "tenants" not in out:  # an empty list keeps the tenants given beside it
                out["tenants"] = max(1, len(out["tenant_steps"]))
        if "reverts" in q:
            out["reverts"] = parse_int_list("reverts", q["reverts"]) if q["reverts"] else []
            out["revert_budget"] = len(out["reverts"])
        if "budget" in q:
            out["budget"] = (check_int("budget", q["budget"], minimum=1, maximum=MAX_BUDGET)
                             if q["budget"].strip() else None)
        if "seconds_per_label" in q:
            out["seconds_per_label"] = check_positive("seconds_per_label", q["seconds_per_label"])
        if "labelers" in q:
            out["labelers"] = check_int("labelers", q["labelers"], minimum=1)
        if "cost_per_hour" in q:
            text = q["cost_per_hour"].strip()
            out["cost_per_hour"] = check_positive("cost_per_hour", text, allow_zero=True) if text else None
        if "sweep" in q:
            if q["sweep"] not in SWEEPS:
                raise InputError("sweep", "one of " + ", ".join(SWEEPS), q["sweep"])
            out["sweep_parameter"] = q["sweep"]
        if "bound" in q:
            if q["bound"] not in BOUNDS:
                raise InputError("bound", "one of " + ", ".join(BOUNDS), q["bound"])
            out["bound"] = q["bound"]
        if "max_error_rate" in q:
            text = q["max_error_rate"].strip()
            out["max_error_rate"] = check_bound("binomial", text)[1] if text else None
        if "compare" in q:
            out["pinned"] = q["compare"]  # the pinned plan's settings: checked by the plan they are applied to
        return out

    @classmethod
    def from_query(cls, query) -> "MeterPlan":
        """A plan restored from a URL query (string or mapping), its pinned plan (``compare``) too."""
        values = cls.parse_query(query)
        compare = values.pop("pinned", None)
        plan = cls(**values)
        if compare:
            plan.compare_with(compare)
        return plan

    def update_from_query(self, query) -> None:
        """Apply a URL query to this plan (raises InputError and changes nothing if invalid)."""
        values = self.parse_query(query, current_ranges=self.ranges)
        if "pinned" in values:
            compare = values.pop("pinned")
            values["pinned"] = self.copy(**values)._pinned_from(compare) if compare else None
        if values:
            self.param.update(**values)
