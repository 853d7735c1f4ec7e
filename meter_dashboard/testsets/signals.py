"""What a guarded test set answers, computed by the models' own public code (one implementation).

- ease.ml/meter: the history plus the new submission is a development trace, replayed
  with :func:`meter_dashboard.session.model.replay` under the test set's plan
  (a :class:`~meter_dashboard.meter.model.MeterPlan`): the signals, the eps, the steps
  used, the tenants' shares and the alarms are exactly what /session shows for the
  exported history.
- ease.ml/ci: n, o and d are exact fractions of the hidden labels, evaluated with
  :func:`meter_dashboard.ci.evaluate`; label counts come from
  :func:`meter_dashboard.ci.ci_labels`.

Settings dictionaries (JSON in the store):

- meter: ``{"mode": "meter", "meter", "ranges", "epsilon", "delta", "steps",
  "tenant_steps", "reverts"}``, and optionally ``"alarm_signal"`` (a released signal at or
  above it is an alarm), ``"submissions_per_hour"`` (per tenant) and ``"bound"`` (with
  ``"max_error_rate"``: the planner's per-model bound, when it is the exact binomial one; the
  counts, the replay and what a short test set supports use it);
- ci: ``{"mode": "ci", "condition", "reliability", "adaptivity", "ci_mode", "steps",
  "baseline"}``, and optionally ``"submissions_per_hour"``.

Stores written before these options existed have settings without them: read them with
``settings.get(...)``.

References
----------
Hubis, Wu & Zhang, ease.ml/meter (2019), Sections 3.1 (signals), 4.4 (incremental meter),
5.2 (tenants), 5.3 (reverts).  Renggli et al., ease.ml/ci (SysML 2019), Sections 3.2-3.5.
"""
from __future__ import annotations

import dataclasses
import json
import math
import threading
from fractions import Fraction

from ..ci import ci_labels, evaluate, parse_condition
from ..core.validation import InputError, check_int, check_probability
from ..meter.model import DEFAULT_RANGES, MeterPlan, plan, resize_ranges, validate_ranges
from ..meter.stages import check_bound
from ..session.model import replay

__all__ = [
    "meter_settings",
    "ci_settings",
    "needed_labels",
    "supported",
    "meter_replay",
    "ci_evaluation",
    "uses_old_model",
    "METERS",
    "ADAPTIVITIES",
    "CI_MODES",
]

METERS = ("incremental", "regular")
ADAPTIVITIES = ("full", "none", "firstChange")
CI_MODES = ("fp-free", "fn-free")

_PLANS: dict = {}
_PLANS_LOCK = threading.Lock()


# ============================================================================ settings
def meter_settings(*, epsilon, delta, steps, ranges=None, meter: str = "incremental", tenant_steps=None,
                   reverts=None, alarm_signal=None, submissions_per_hour=None, bound: str = "hoeffding",
                   max_error_rate=None) -> dict:
    """Validated meter settings (the planner's plan); :class:`InputError` names the bad one.

    ``alarm_signal`` K (1..m): a released signal >= K is an alarm (gate a pipeline on the
    meter itself); ``submissions_per_hour`` N: each tenant may submit at most N times in any
    hour (all its tokens together).  ``bound``/``max_error_rate``: the planner's per-model bound
    (stored only when it is not Hoeffding's, so older stores read the same).
    """
    if meter not in METERS:
        raise InputError("meter", "'incremental' or 'regular'", meter)
    eps = [float(v) for v in epsilon]
    rng = list(ranges) if ranges is not None else resize_ranges(DEFAULT_RANGES, len(eps))
    rng = [float(v) for v in validate_ranges(rng, len(eps))]
    ts = [check_int("tenant_steps", v, minimum=1) for v in (tenant_steps or [])]
    settings = {
        "mode": "meter", "meter": meter, "ranges": rng, "epsilon": eps,
        "delta": check_probability("delta", delta), "steps": check_int("steps", steps, minimum=1),
        "tenant_steps": ts if len(ts) > 1 else [],
        "reverts": [check_int("reverts", v, minimum=1) for v in (reverts or [])],
    }
    meter_plan(settings)  # the planner's own checks (tenant steps sum to T, reverts possible, ...)
    bound, rate = check_bound(bound, max_error_rate)
    if bound != "hoeffding":
        settings["bound"] = bound
        if rate is not None:
            settings["max_error_rate"] = rate
    if alarm_signal is not None:
        settings["alarm_signal"] = check_int("alarm_signal", alarm_signal, minimum=1, maximum=len(eps))
    return _with_rate(settings, submissions_per_hour)


def _with_rate(settings: dict, submissions_per_hour) -> dict:
    if submissions_per_hour is not None:
        settings["submissions_per_hour"] = check_int("submissions_per_hour", submissions_per_hour, minimum=1,
                                                     maximum=1_000_000)
    return settings


def ci_settings(*, condition, reliability, adaptivity: str = "full", mode: str = "fp-free", steps,
                baseline: bool = False, submissions_per_hour=None) -> dict:
    """Validated ease.ml/ci settings; the condition goes through the real parser (never evaluated as code)."""
    if adaptivity not in ADAPTIVITIES:
        raise InputError("adaptivity", "one of " + ", ".join(ADAPTIVITIES), adaptivity)
    if mode not in CI_MODES:
        raise InputError("mode", "one of " + ", ".join(CI_MODES), mode)
    parsed = parse_condition(condition)
    steps = check_int("steps", steps, minimum=1)
    ci_labels(parsed, reliability, adaptivity, steps, mode)  # the reliability's own check
    settings = {
        "mode": "ci", "condition": parsed.canonical(), "reliability": float(reliability),
        "adaptivity": adaptivity, "ci_mode": mode, "steps": steps, "baseline": bool(baseline),
    }
    if uses_old_model(settings) and not baseline:
        raise InputError("baseline", f"the predictions of the deployed model (the condition "
                         f"{settings['condition']!r} compares with it through o or d)", "nothing")
    return _with_rate(settings, submissions_per_hour)


def uses_old_model(settings: dict) -> bool:
    """Whether a ci condition needs the old model (it mentions o or d)."""
    return bool({"o", "d"} & set(parse_condition(settings["condition"]).variables))


def _bound_of(settings: dict) -> dict:
    """``{"bound", "max_error_rate"}`` of meter settings (Hoeffding's for stores written before the option)."""
    return {"bound": settings.get("bound", "hoeffding"), "max_error_rate": settings.get("max_error_rate")}


def meter_plan(settings: dict) -> MeterPlan:
    """The planner's model for ``settings`` with Hoeffding's bound (its checks; one per plan and process; read only)."""
    key = json.dumps({k: settings[k] for k in ("ranges", "epsilon", "delta", "steps", "tenant_steps", "reverts")},
                     sort_keys=True)
    with _PLANS_LOCK:
        found = _PLANS.get(key)
    if found is not None:
        return found
    ts = list(settings["tenant_steps"])
    made = MeterPlan(ranges=list(settings["ranges"]), epsilon=list(settings["epsilon"]), delta=settings["delta"],
                     steps=settings["steps"], tenants=max(len(ts), 1), tenant_steps=ts, reverts=list(settings["reverts"]))
    with _PLANS_LOCK:
        if len(_PLANS) > 64:
            _PLANS.clear()
        return _PLANS.setdefault(key, made)


# ============================================================================ sizes
def needed_labels(settings: dict) -> int:
    """Labels the plan needs: the chosen meter's count (ease.ml/meter), or ease.ml/ci's count
    (the optimized one when an optimization applies, at least the unlabeled examples it
    estimates d on: the labelled test set serves as that set too)."""
    if settings["mode"] == "meter":
        if settings.get("bound", "hoeffding") != "hoeffding":
            ts = settings["tenant_steps"]
            exact = plan(settings["epsilon"], settings["delta"], settings["steps"], tenants=max(len(ts), 1),
                         tenant_steps=ts or None, reverts=settings["reverts"] or None, **_bound_of(settings))
            return int(exact.labels[settings["meter"]])
        return int(meter_plan(settings).result.labels[settings["meter"]])
    result = _ci_result(settings)
    if result.optimized is not None:
        return int(max(result.optimized, result.unlabeled or 0))
    return int(result.labels)


def _ci_result(settings: dict, condition=None):
    return ci_labels(condition if condition is not None else settings["condition"], settings["reliability"],
                     settings["adaptivity"], settings["steps"], settings["ci_mode"])


def supported(settings: dict, n: int) -> dict | None:
    """What ``n`` labels support when the plan needs more (the planner's inverse), else None.

    Meter: ``{"epsilon": [...]}``, the eps vector scaled together (eps_1 from
    :func:`meter_dashboard.meter.model.plan`'s ``min_epsilon``); ``None`` entries when no
    tolerance below 1 is supported.  ci: ``{"tolerance_scale": s, "tolerances": [...]}``,
    every clause's tolerance multiplied by the smallest s whose count fits in n.
    """
    n = check_int("labels", n, minimum=1)
    if n >= needed_labels(settings):
        return None
    if settings["mode"] == "meter":
        ts = settings["tenant_steps"]
        result = plan(settings["epsilon"], settings["delta"], settings["steps"], tenants=max(len(ts), 1),
                      tenant_steps=ts or None, reverts=settings["reverts"] or None, budget=n, **_bound_of(settings))
        assert result.min_epsilon is not None  # plan(..., budget=n) answers it
        value = result.min_epsilon[settings["meter"]]
        eps1 = math.nan if value is None else float(value)  # None: no answer (as nan: nothing supported)
        if not math.isfinite(eps1) or eps1 >= 1:
            return {"epsilon": None}
        scale = eps1 / settings["epsilon"][0]
        return {"epsilon": [float(e) * scale for e in settings["epsilon"]]}
    return _ci_supported(settings, n)


def _ci_supported(settings: dict, n: int) -> dict:
    condition = parse_condition(settings["condition"])
    widest = max(float(c.tolerance) for c in condition.clauses)

    def fits(scale: float) -> bool:
        clauses = tuple(dataclasses.replace(c, tolerance=c.tolerance * Fraction(scale)) for c in condition.clauses)
        scaled = dataclasses.replace(condition, clauses=clauses)
        result = _ci_result(settings, scaled)
        count = max(result.optimized, result.unlabeled or 0) if result.optimized is not None else result.labels
        return count <= n

    top = 1.0 / widest  # beyond this some tolerance would cover the whole range [0, 1]
    if not fits(top):
        return {"tolerance_scale": None, "tolerances": None}
    low, high = 1.0, top
    for _ in range(60):
        mid = math.sqrt(low * high)
        low, high = (low, mid) if fits(mid) else (mid, high)
        if high / low < 1 + 1e-9:
            break
    return {"tolerance_scale": high, "tolerances": [float(c.tolerance) * high for c in condition.clauses]}


# ============================================================================ ease.ml/meter
def meter_replay(settings: dict, rows: list, n: int):
    """The :class:`~meter_dashboard.session.model.ReplayResult` of a history.

    ``rows``: one dict per step (``step``, ``val_accuracy``, ``test_accuracy``, ``tenant``,
    ``reverted``), in step order.
    """
    records = [{"step": int(r["step"]), "val_accuracy": float(r["val_accuracy"]),
                "test_accuracy": float(r["test_accuracy"]), "tenant": str(r["tenant"]),
                "reverted": bool(r["reverted"])} for r in rows]
    if settings.get("bound", "hoeffding") != "hoeffding":  # the plan's exact bound (the replay computes its counts)
        values = {k: settings[k] for k in ("ranges", "epsilon", "delta", "steps", "tenant_steps", "reverts")}
        values["tenants"] = max(len(settings["tenant_steps"]), 1)
        return replay(records, plan={**values, **_bound_of(settings)}, variant=settings["meter"], test_size=n)
    return replay(records, plan=meter_plan(settings), variant=settings["meter"], test_size=n)


# ============================================================================ ease.ml/ci
def ci_evaluation(settings: dict, correct_new: int, correct_old: int | None, differ: int | None, n: int):
    """The condition evaluated on n = correct_new / N, o = correct_old / N, d = differ / N (exact)."""
    o = None if correct_old is None else Fraction(correct_old, n)
    d = None if differ is None else Fraction(differ, n)
    return evaluate(settings["condition"], Fraction(correct_new, n), o, d, settings["ci_mode"])
