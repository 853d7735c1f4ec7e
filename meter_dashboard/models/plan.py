"""The planner's model: what a team chose, and every label count derived from it.

Two ways in, one engine (:mod:`meter_dashboard.bounds.meter`):

- :func:`plan` - a function for scripts and notebooks, returning a :class:`PlanResult`
  (readable repr, ``to_frame()``, ``to_dict()``, ``sentence()``).
- :class:`MeterPlan` - a ``param.Parameterized`` model with no widgets inside.  The
  planner and session pages, notebooks, the CLI and the tests all drive it.  Invalid
  combinations set :attr:`MeterPlan.error` and keep the last valid :attr:`MeterPlan.result`.

The plan round-trips through a URL query string (:meth:`MeterPlan.to_query`,
:meth:`MeterPlan.from_query`) with the keys ``epsilon``, ``ranges``, ``delta``,
``steps``, ``signals``, ``tenant_steps``, ``reverts`` (plus ``tenants``, ``budget``,
``seconds_per_label``, ``labelers``, ``cost_per_hour``, ``sweep``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

import numpy as np
import param

from .._validation import (
    InputError,
    check_int,
    check_positive,
    check_probability,
    parse_int_list,
    parse_number_list,
)
from ..bounds import meter as _meter
from ..bounds.meter import VARIANTS
from .defaults import DEFAULT_DELTA, DEFAULT_EPSILON, DEFAULT_RANGES, DEFAULT_STEPS

__all__ = ["plan", "PlanResult", "MeterPlan", "curve", "sweep", "VARIANTS", "RECOMMENDED",
           "REVERT_CAVEAT", "TENANT_CAVEAT", "ASSUMPTION", "PRESETS", "validate_ranges"]

#: The variant headlined by default: the cheapest meter that still reports every step.
RECOMMENDED = "incremental"

ASSUMPTION = ("Hoeffding's inequality for each possible submission, with a union bound over the tree "
              "of submissions the meter's signals could have led to (ease.ml/meter, Thms 1-2).")
TENANT_CAVEAT = "Tenants must not communicate: each works on their own chain of steps (Appendix B)."
REVERT_CAVEAT = ("The revert saving holds only when the revert steps are fixed in advance; a developer who "
                 "may revert at any step gets no saving (Eqs. 13-16).")
TENANT_DISCREPANCY = ("The paper's text quotes 71K labels for two tenants (eps = 0.01..0.05, delta = 0.01, "
                      "T = 10), but its own Eqs. 9 and 29 give 63,261; meter-dashboard implements the "
                      "general formula of Appendix B.")

VARIANT_TITLES = {
    "single_model": "Single model",
    "no_adaptivity": "No adaptivity",
    "resampling": "Resampling",
    "regular": "Regular meter",
    "incremental": "Incremental meter",
}

VARIANT_NOTES = {
    "single_model": "one evaluation, Hoeffding (Thm 4)",
    "no_adaptivity": "T independent models, union bound (Eq. 1)",
    "resampling": "a fresh test set per step (Eq. 2)",
    "regular": "adaptive, a signal per step (Thm 1, Cor 1)",
    "incremental": "adaptive, worst signal so far (Thm 2, Cor 2)",
}



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


# ============================================================================ result object
@dataclass(frozen=True)
class PlanResult:
    """Label counts of every meter variant for one plan, with effort and inverse answers.

    Attributes
    ----------
    labels : dict
        variant -> smallest label count satisfying the variant's inequality.
    savings : dict
        variant -> how many times fewer labels than resampling.
    labeler_hours, calendar_hours : dict
        variant -> labeling effort (see :func:`meter_dashboard.bounds.meter.labeling_hours`).
    cost : dict or None
        variant -> labeler_hours * cost_per_hour, when a cost per hour is given.
    budget : int or None
        The label budget the inverse answers refer to.
    max_steps, min_epsilon, confidence : dict or None
        variant -> largest T the budget supports, smallest eps_1 (the eps vector scaled
        together) and the confidence 1 - delta it gives at the plan's T.
    """

    epsilon: tuple
    delta: float
    steps: int
    tenant_steps: tuple
    reverts: tuple
    labels: dict
    savings: dict
    labeler_hours: dict
    calendar_hours: dict
    seconds_per_label: float = 2.0
    labelers: int = 1
    cost_per_hour: float | None = None
    cost: dict | None = None
    budget: int | None = None
    max_steps: dict | None = None
    min_epsilon: dict | None = None
    confidence: dict | None = None
    notes: tuple = field(default_factory=tuple)

    @property
    def signals(self) -> int:
        return len(self.epsilon)

    @property
    def recommended(self) -> str:
        return RECOMMENDED

    def sentence(self, variant: str = RECOMMENDED) -> str:
        """One plain sentence a manager can repeat."""
        n = self.labels[variant]
        eps_text = (f"below {self.epsilon[0]:g}" if len(set(self.epsilon)) == 1 or variant not in _meter.ADAPTIVE_VARIANTS
                    else "below its ε")
        who = "every signal's" if variant in _meter.ADAPTIVE_VARIANTS else "every model's"
        steps = "1 model" if variant == "single_model" else f"{self.steps} development steps"
        tail = ""
        if variant in _meter.ADAPTIVE_VARIANTS and self.reverts:
            tail = " (reverts fixed in advance at steps " + ", ".join(str(t) for t in self.reverts) + ")"
        return (f"With the {VARIANT_TITLES[variant].lower()}, {n:,} labels support {steps}: with probability "
                f"{1 - self.delta:.6g} {who} distributional overfitting stays {eps_text}{tail}.")

    def to_frame(self):
        """A pandas DataFrame, one row per variant."""
        import pandas as pd

        rows = []
        for v in VARIANTS:
            row = {
                "variant": v,
                "labels": self.labels[v],
                "x_fewer_than_resampling": self.savings[v],
                "labeler_hours": self.labeler_hours[v],
                "calendar_hours": self.calendar_hours[v],
            }
            if self.cost is not None:
                row["cost"] = self.cost[v]
            if self.budget is not None:
                row["budget_max_steps"] = self.max_steps[v]
                row["budget_min_epsilon"] = self.min_epsilon[v]
                row["budget_confidence"] = self.confidence[v]
            rows.append(row)
        return pd.DataFrame(rows).set_index("variant")

    def to_dict(self) -> dict:
        """Plain Python (JSON-ready) form; the CLI's ``--format json``."""
        out = {
            "labels": dict(self.labels),
            "inputs": {
                "epsilon": list(self.epsilon),
                "signals": self.signals,
                "delta": self.delta,
                "steps": self.steps,
                "tenant_steps": list(self.tenant_steps),
                "reverts": list(self.reverts),
            },
            "x_fewer_than_resampling": dict(self.savings),
            "labeling": {
                "seconds_per_label": self.seconds_per_label,
                "labelers": self.labelers,
                "labeler_hours": dict(self.labeler_hours),
                "calendar_hours": dict(self.calendar_hours),
            },
            "recommended": self.recommended,
            "sentence": self.sentence(),
            "notes": list(self.notes),
        }
        if self.cost is not None:
            out["labeling"]["cost_per_hour"] = self.cost_per_hour
            out["labeling"]["cost"] = dict(self.cost)
        if self.budget is not None:
            out["budget"] = {
                "labels": self.budget,
                "max_steps": {k: (None if v == math.inf else v) for k, v in self.max_steps.items()},
                "min_epsilon": dict(self.min_epsilon),
                "confidence": dict(self.confidence),
            }
        return out

    def __repr__(self) -> str:
        eps = ", ".join(f"{e:g}" for e in self.epsilon)
        head = f"PlanResult(epsilon=[{eps}], delta={self.delta:g}, steps={self.steps}"
        if len(self.tenant_steps) > 1:
            head += f", tenant_steps={list(self.tenant_steps)}"
        if self.reverts:
            head += f", reverts={list(self.reverts)}"
        lines = [head + ")"]
        width = max(len(v) for v in VARIANTS)
        for v in VARIANTS:
            mark = "  <- recommended" if v == self.recommended else ""
            lines.append(f"  {v:<{width}}  {self.labels[v]:>14,} labels  "
                         f"{self.savings[v]:6.2f}x fewer than resampling  "
                         f"{self.labeler_hours[v]:10,.1f} labeler-hours{mark}")
        if self.budget is not None:
            lines.append(f"  budget {self.budget:,} labels: incremental supports "
                         f"{_steps_text(self.max_steps['incremental'])} steps, "
                         f"eps_1 >= {self.min_epsilon['incremental']:.4g}, "
                         f"confidence {self.confidence['incremental']:.6g} at T = {self.steps}")
        for note in self.notes:
            lines.append(f"  note: {note}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:  # notebooks
        return self.to_frame()._repr_html_() + f"<p>{self.sentence()}</p>"


def _steps_text(value) -> str:
    return "more than 10^12" if value == math.inf else f"{int(value):,}"


def _normalize(epsilon, signals, steps, tenants, tenant_steps, reverts):
    """Validated (eps array, steps, tenant count, tenant steps tuple, reverts tuple)."""
    eps = parse_number_list("epsilon", epsilon) if isinstance(epsilon, str) else list(np.atleast_1d(epsilon).astype(float))
    if signals is not None:
        m = check_int("signals", signals, minimum=1, maximum=1000)
        if len(eps) == 1:
            eps = eps * m
        elif len(eps) != m:
            raise InputError("signals", f"the number of epsilon values ({len(eps)}) when several are given", m)
    eps = _meter.validate_epsilon(eps)
    steps = check_int("steps", steps, minimum=1)
    if tenant_steps is not None and len(tenant_steps) > 0:
        ts = tuple(check_int("tenant_steps", v, minimum=1) for v in tenant_steps)
        if sum(ts) != steps:
            raise InputError("tenant_steps", f"steps per tenant summing to steps = {steps}", list(ts))
        tenant_count = len(ts)
    else:
        tenant_count = check_int("tenants", tenants, minimum=1)
        if tenant_count > steps:
            raise InputError("tenants", f"at most steps = {steps} tenants (each submits at least once)", tenant_count)
        ts = tuple(int(v) for v in _meter.split_steps(steps, tenant_count))
    rv = tuple(int(v) for v in _meter.validate_reverts(list(reverts) if reverts is not None else None, steps))
    return eps, steps, tenant_count, ts, rv


def plan(epsilon=DEFAULT_EPSILON, delta: float = DEFAULT_DELTA, steps: int = DEFAULT_STEPS, *, signals: int | None = None,
         tenants: int = 1, tenant_steps=None, reverts=None, budget: int | None = None,
         seconds_per_label: float = 2.0, labelers: int = 1, cost_per_hour: float | None = None) -> PlanResult:
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

    Examples
    --------
    >>> r = plan([0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)
    >>> r.labels["regular"], r.labels["incremental"]
    (100033, 38005)
    """
    delta = check_probability("delta", delta)
    eps, steps, tenant_count, ts, rv = _normalize(epsilon, signals, steps, tenants, tenant_steps, reverts)
    seconds_per_label = check_positive("seconds_per_label", seconds_per_label)
    labelers = check_int("labelers", labelers, minimum=1)
    if cost_per_hour is not None:
        cost_per_hour = check_positive("cost_per_hour", cost_per_hour, allow_zero=True)
    kw = dict(tenant_steps=list(ts) if len(ts) > 1 else None, reverts=list(rv) or None)
    counts = _meter.all_labels(eps, delta, steps, **kw)
    savings = {v: counts["resampling"] / counts[v] for v in VARIANTS}
    work, calendar = _meter.labeling_hours(np.array([counts[v] for v in VARIANTS]), seconds_per_label, labelers)
    labeler_hours = {v: float(h) for v, h in zip(VARIANTS, work)}
    calendar_hours = {v: float(h) for v, h in zip(VARIANTS, calendar)}
    cost = {v: labeler_hours[v] * cost_per_hour for v in VARIANTS} if cost_per_hour is not None else None

    notes = [ASSUMPTION]
    if len(ts) > 1:
        notes.append(TENANT_CAVEAT)
    if rv:
        notes.append(REVERT_CAVEAT)

    max_t = min_eps = conf = None
    if budget is not None:
        budget = check_int("budget", budget, minimum=1)
        inv_kw = dict(tenants=tenant_count, reverts=list(rv) or None)
        max_t = {v: _meter.max_steps(v, budget, eps, delta, **inv_kw) for v in VARIANTS}
        min_eps = {v: float(_meter.min_epsilon(v, budget, eps, delta, steps, **kw)) for v in VARIANTS}
        conf = {}
        for v in VARIANTS:
            log_d = float(_meter.failure_probability(v, budget, eps, steps, log=True, **kw))
            conf[v] = float(-np.expm1(log_d)) if log_d < 0 else 0.0
        if tenant_count > 1 and len(set(ts)) > 1:
            notes.append("Largest T splits every T evenly among the tenants.")
    return PlanResult(
        epsilon=tuple(float(e) for e in eps), delta=delta, steps=steps, tenant_steps=ts, reverts=rv,
        labels=counts, savings=savings, labeler_hours=labeler_hours, calendar_hours=calendar_hours,
        seconds_per_label=seconds_per_label, labelers=labelers, cost_per_hour=cost_per_hour, cost=cost,
        budget=budget, max_steps=max_t, min_epsilon=min_eps, confidence=conf, notes=tuple(notes),
    )


def curve(epsilon, delta, steps, *, tenants: int = 1, reverts=None, variants=VARIANTS) -> dict:
    """Labels against T for every variant (one vectorized call): ``{variant: int array}``.

    Tenants split each T evenly; reverts count once T reaches their step.
    """
    steps = np.asarray(steps)
    return _meter.all_labels(epsilon, delta, steps, tenants=tenants, reverts=reverts, variants=variants)


#: Parameters the second plot can sweep, with their axis labels.
SWEEPS = {
    "delta": "δ (failure probability)",
    "epsilon": "ε₁ (the ε vector scaled together)",
    "signals": "m (signals)",
    "tenants": "tenants (sharing T evenly)",
}


def sweep(parameter: str, epsilon, delta, steps, *, tenants: int = 1, reverts=None, points: int = 60):
    """Labels of every variant against one parameter, others held: ``(x, {variant: array})``."""
    eps = np.asarray(epsilon, dtype=float)
    if parameter == "delta":
        x = np.logspace(-6, math.log10(0.5), points)
        return x, _meter.all_labels(eps, x, steps, tenants=tenants, reverts=reverts)
    if parameter == "epsilon":
        x = np.logspace(math.log10(max(eps[0] / 10, 1e-4)), math.log10(min(0.2, 0.99 / eps[-1] * eps[0])), points)
        scaled = eps[None, :] * (x / eps[0])[:, None]
        return x, _meter.all_labels(scaled, delta, steps, tenants=tenants, reverts=reverts)
    if parameter == "signals":
        x = np.arange(1, 21)
        rows = [_meter.all_labels(resize_vector(eps, int(m)), delta, steps, tenants=tenants, reverts=reverts)
                for m in x]
        return x, {v: np.array([r[v] for r in rows]) for v in VARIANTS}
    if parameter == "tenants":
        x = np.arange(1, min(int(steps), 20) + 1)
        rows = [_meter.all_labels(eps, delta, steps, tenants=int(l), reverts=None) for l in x]
        return x, {v: np.array([r[v] for r in rows]) for v in VARIANTS}
    raise InputError("sweep", "one of " + ", ".join(SWEEPS), parameter)


def resize_vector(eps, m: int) -> np.ndarray:
    """The eps vector truncated, or extended by repeating its last value, to length m."""
    eps = np.asarray(eps, dtype=float)
    if m <= eps.size:
        return eps[:m].copy()
    return np.concatenate([eps, np.full(m - eps.size, eps[-1])])


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
PRESETS = {
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
    budget = param.Integer(default=50_000, bounds=(1, None), softbounds=(1_000, 1_000_000),
                           doc="A label budget for the inverse questions.")
    sweep_parameter = param.Selector(default="delta", objects=list(SWEEPS), doc="What the second plot varies.")

    # ---- derived (read-only for users)
    result = param.Parameter(default=None, doc="The last valid PlanResult.")
    curves = param.Dict(default={}, doc="{'steps': T array, variant: labels array} for the curve over T.")
    sweep_curves = param.Dict(default={}, doc="{'x': values, variant: labels array} for the sweep plot.")
    error = param.String(default="", doc="Why the current inputs are not valid ('' when they are).")
    error_parameter = param.String(default="", doc="The input the error is about (e.g. 'epsilon', 'reverts').")

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

    # -- derivation
    def validate(self) -> None:
        """Raise :class:`InputError` if the inputs do not form a valid plan."""
        _normalize(self.epsilon, None, self.steps, self.tenants, self.tenant_steps or None, self.reverts)
        validate_ranges(self.ranges, self.signals)

    @param.depends("ranges", "epsilon", "delta", "steps", "tenants", "tenant_steps", "reverts",
                   "seconds_per_label", "labelers", "cost_per_hour", "budget", "sweep_parameter", watch=True)
    def _recompute(self):
        try:
            self.validate()
            result = plan(self.epsilon, self.delta, self.steps, tenants=self.tenants,
                          tenant_steps=self.tenant_steps or None, reverts=self.reverts, budget=self.budget,
                          seconds_per_label=self.seconds_per_label, labelers=self.labelers,
                          cost_per_hour=self.cost_per_hour)
            t_max = int(min(max(100, 2 * self.steps), 100_000))
            t_axis = np.unique(np.round(np.geomspace(1, t_max, 200)).astype(int)) if t_max > 400 else np.arange(1, t_max + 1)
            tenants = len(result.tenant_steps)
            curves = curve(self.epsilon, self.delta, t_axis, tenants=tenants, reverts=self.reverts or None)
            x, swept = sweep(self.sweep_parameter, self.epsilon, self.delta, self.steps, tenants=tenants,
                             reverts=self.reverts or None)
        except InputError as exc:
            self._last_error_args = (exc.parameter, exc.rule, exc.got)
            with param.parameterized.batch_call_watchers(self):
                self.error_parameter = exc.parameter
                self.error = str(exc)
            return
        self._last_error_args = None
        with param.parameterized.batch_call_watchers(self):
            self.result = result
            self.curves = {"steps": t_axis, **curves}
            self.sweep_curves = {"x": x, "parameter": self.sweep_parameter, **swept}
            self.error_parameter = ""
            self.error = ""

    # -- URL state
    QUERY_KEYS = ("epsilon", "ranges", "delta", "steps", "signals", "tenants", "tenant_steps", "reverts",
                  "budget", "seconds_per_label", "labelers", "cost_per_hour", "sweep")

    def to_query(self) -> dict:
        """The plan as URL query parameters (strings)."""
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
        if self.budget != self.param.budget.default:
            q["budget"] = str(self.budget)
        if self.seconds_per_label != self.param.seconds_per_label.default:
            q["seconds_per_label"] = f"{self.seconds_per_label:g}"
        if self.labelers != 1:
            q["labelers"] = str(self.labelers)
        if self.cost_per_hour is not None:
            q["cost_per_hour"] = f"{self.cost_per_hour:g}"
        if self.sweep_parameter != self.param.sweep_parameter.default:
            q["sweep"] = self.sweep_parameter
        return q

    def query_string(self) -> str:
        return urlencode(self.to_query(), safe=",")

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
            out["tenants"] = max(1, len(out["tenant_steps"]))
        if "reverts" in q:
            out["reverts"] = parse_int_list("reverts", q["reverts"]) if q["reverts"] else []
            out["revert_budget"] = len(out["reverts"])
        if "budget" in q:
            out["budget"] = check_int("budget", q["budget"], minimum=1)
        if "seconds_per_label" in q:
            out["seconds_per_label"] = check_positive("seconds_per_label", q["seconds_per_label"])
        if "labelers" in q:
            out["labelers"] = check_int("labelers", q["labelers"], minimum=1)
        if "cost_per_hour" in q:
            out["cost_per_hour"] = check_positive("cost_per_hour", q["cost_per_hour"], allow_zero=True)
        if "sweep" in q:
            if q["sweep"] not in SWEEPS:
                raise InputError("sweep", "one of " + ", ".join(SWEEPS), q["sweep"])
            out["sweep_parameter"] = q["sweep"]
        return out

    @classmethod
    def from_query(cls, query) -> "MeterPlan":
        """A plan restored from a URL query (string or mapping)."""
        return cls(**cls.parse_query(query))

    def update_from_query(self, query) -> None:
        """Apply a URL query to this plan (raises InputError and changes nothing if invalid)."""
        values = self.parse_query(query, current_ranges=self.ranges)
        if values:
            self.param.update(**values)
