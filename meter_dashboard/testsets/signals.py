"""What a guarded test set answers, computed by the models' own public code (one implementation).

- ease.ml/meter: the history plus the new submission is a development trace, replayed
  with :func:`meter_dashboard.session.model.replay` under the test set's plan
  (a :class:`~meter_dashboard.meter.model.MeterPlan`): the signals, the eps, the steps
  used, the tenants' shares and the alarms are exactly what /session shows for the
  exported history.
- ease.ml/ci: n, o and d are exact fractions of the hidden labels, evaluated with
  :func:`meter_dashboard.ci.evaluate`; label counts come from
  :func:`meter_dashboard.ci.ci_labels`.

Settings are one typed value per method (:mod:`.settings`: :class:`~.settings.MeterSettings`,
:class:`~.settings.CISettings`), validated once when made; every function here takes that value
(or a settings dictionary from an answer, read once by :func:`~.settings.as_settings`).

References
----------
Hubis, Wu & Zhang, ease.ml/meter (2019), Sections 3.1 (signals), 4.4 (incremental meter),
5.2 (tenants), 5.3 (reverts).  Renggli et al., ease.ml/ci (SysML 2019), Sections 3.2-3.5.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from fractions import Fraction

from ..ci import ci_labels, evaluate
from ..core.validation import InputError, check_int
from ..meter.model import PlanResult, plan
from ..session.model import replay
from .settings import ADAPTIVITIES, CI_MODES, METERS, CISettings, MeterSettings, Settings, as_settings

__all__ = [
    "meter_settings",
    "ci_settings",
    "needed_labels",
    "supported",
    "meter_replay",
    "ci_evaluation",
    "replay_history",
    "METERS",
    "ADAPTIVITIES",
    "CI_MODES",
]


# ============================================================================ settings
def meter_settings(*, epsilon, delta, steps, ranges=None, meter: str = "incremental", tenant_steps=None,
                   reverts=None, alarm_signal=None, submissions_per_hour=None, bound: str = "hoeffding",
                   max_error_rate=None) -> MeterSettings:
    """Validated meter settings (the planner's plan); :class:`InputError` names the bad one.

    ``alarm_signal`` K (1..m): a released signal >= K is an alarm (gate a pipeline on the
    meter itself); ``submissions_per_hour`` N: each tenant may submit at most N times in any
    hour (all its tokens together).  ``bound``/``max_error_rate``: the planner's per-model bound
    (stored only when it is not Hoeffding's, so older stores read the same).
    """
    return MeterSettings(epsilon=epsilon, delta=delta, steps=steps, ranges=() if ranges is None else ranges,
                         meter=meter, tenant_steps=tenant_steps or (), reverts=reverts or (), alarm_signal=alarm_signal,
                         submissions_per_hour=submissions_per_hour, bound=bound, max_error_rate=max_error_rate)


def ci_settings(*, condition, reliability, adaptivity: str = "full", mode: str = "fp-free", steps,
                baseline: bool = False, submissions_per_hour=None) -> CISettings:
    """Validated ease.ml/ci settings; the condition goes through the real parser (never evaluated as code)."""
    return CISettings(condition=condition, reliability=reliability, adaptivity=adaptivity, ci_mode=mode, steps=steps,
                      baseline=baseline, submissions_per_hour=submissions_per_hour)


def _exact(settings: MeterSettings, budget: int | None = None) -> PlanResult:
    """:func:`~meter_dashboard.meter.model.plan` of the settings under their own bound."""
    return plan(settings.epsilon, settings.delta, settings.steps, tenants=settings.tenants,
                tenant_steps=list(settings.tenant_steps) or None, reverts=list(settings.reverts) or None,
                budget=budget, bound=settings.bound, max_error_rate=settings.max_error_rate)


# ============================================================================ sizes
def needed_labels(settings: Settings) -> int:
    """Labels the plan needs: the chosen meter's count (ease.ml/meter), or ease.ml/ci's count
    (the optimized one when an optimization applies, at least the unlabeled examples it
    estimates d on: the labelled test set serves as that set too)."""
    if isinstance(settings, MeterSettings):
        counts = _exact(settings).labels if settings.exact else settings.plan.result.labels
        return int(counts[settings.meter])
    return _ci_count(settings.ci_result)


def _ci_count(result) -> int:
    if result.optimized is not None:
        return int(max(result.optimized, result.unlabeled or 0))
    return int(result.labels)


def supported(settings: Settings, n: int) -> dict | None:
    """What ``n`` labels support when the plan needs more (the planner's inverse), else None.

    Meter: ``{"epsilon": [...]}``, the eps vector scaled together (eps_1 from
    :func:`meter_dashboard.meter.model.plan`'s ``min_epsilon``); ``None`` entries when no
    tolerance below 1 is supported.  ci: ``{"tolerance_scale": s, "tolerances": [...]}``,
    every clause's tolerance multiplied by the smallest s whose count fits in n.
    """
    n = check_int("labels", n, minimum=1)
    if n >= needed_labels(settings):
        return None
    if isinstance(settings, CISettings):
        return _ci_supported(settings, n)
    result = _exact(settings, budget=n)
    assert result.min_epsilon is not None  # plan(..., budget=n) answers it
    value = result.min_epsilon[settings.meter]
    eps1 = math.nan if value is None else float(value)  # None: no answer (as nan: nothing supported)
    if not math.isfinite(eps1) or eps1 >= 1:
        return {"epsilon": None}
    scale = eps1 / settings.epsilon[0]
    return {"epsilon": [float(e) * scale for e in settings.epsilon]}


def _ci_supported(settings: CISettings, n: int) -> dict:
    condition = settings.condition
    widest = max(float(c.tolerance) for c in condition.clauses)

    def fits(scale: float) -> bool:
        clauses = tuple(dataclasses.replace(c, tolerance=c.tolerance * Fraction(scale)) for c in condition.clauses)
        scaled = dataclasses.replace(condition, clauses=clauses)
        return _ci_count(ci_labels(scaled, settings.reliability, settings.adaptivity, settings.steps,
                                   settings.ci_mode)) <= n

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
def replay_history(settings: MeterSettings, rows: list, n: int):
    """The :class:`~meter_dashboard.session.model.ReplayResult` of a history.

    ``rows``: one dict per step (``step``, ``val_accuracy``, ``test_accuracy``, ``tenant``,
    ``reverted``), in step order.
    """
    records = [{"step": int(r["step"]), "val_accuracy": float(r["val_accuracy"]),
                "test_accuracy": float(r["test_accuracy"]), "tenant": str(r["tenant"]),
                "reverted": bool(r["reverted"])} for r in rows]
    # the plan's exact bound: the replay computes its counts; Hoeffding's: the settings' own plan
    chosen = settings.plan_values() if settings.exact else settings.plan
    return replay(records, plan=chosen, variant=settings.meter, test_size=n)


def meter_replay(settings: MeterSettings | Mapping, rows: list, n: int):
    """:func:`replay_history`, for callers holding a status's settings dictionary (read once per content)."""
    typed = as_settings(settings)
    if not isinstance(typed, MeterSettings):
        raise InputError("settings", "a meter test set's settings (ease.ml/ci histories replay on /ci)", typed.mode)
    return replay_history(typed, rows, n)


# ============================================================================ ease.ml/ci
def ci_evaluation(settings: CISettings, correct_new: int, correct_old: int | None, differ: int | None, n: int):
    """The condition evaluated on n = correct_new / N, o = correct_old / N, d = differ / N (exact)."""
    o = None if correct_old is None else Fraction(correct_old, n)
    d = None if differ is None else Fraction(differ, n)
    return evaluate(settings.condition, Fraction(correct_new, n), o, d, settings.ci_mode)
