"""Curves of a plan: labels against T and against a swept parameter, Hoeffding's at once, exact ones point by point.

- :func:`curve` and :func:`sweep` - every variant's count along T or along δ, ε₁, m or tenants;
  Hoeffding's in one vectorized call, the exact binomial bound's one exact count per point.
- :func:`hoeffding_curve` and :func:`hoeffding_sweep` - the same under Hoeffding's bound, cached
  per process (``functools.lru_cache``; read-only arrays): every person opening the same shared
  link gets the curves computed once.
- :func:`plan_curves` - the curves of a finished plan (reports, the CLI); :func:`start_curves`,
  :func:`exact_points` and :func:`fold` - the format :class:`~meter_dashboard.meter.model.MeterPlan`
  publishes and how exact points arriving in batches are folded into it.

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.  Figs. 8-12.
.. [2] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Section 4.3 (tight numerical bounds).
"""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np

from ..bounds import meter as meter_bounds
from ..bounds.meter import VARIANTS
from ..core.validation import InputError, check_int
from .result import PlanResult
from .stages import check_bound, coarse_to_fine, exact_labels, with_items

__all__ = ["curve", "sweep", "sweep_axis", "sweep_setting", "exact_point", "resize_vector", "SWEEPS", "t_axis", "t_axis_end", "reachable_axis", "T_AXIS_CAP", "axis_to",
           "hoeffding_curve", "hoeffding_sweep", "plan_curves", "start_curves", "exact_batches", "exact_curve_batches", "fold",
           "CACHE_SIZE"]

#: Distinct settings whose Hoeffding curves a process keeps (a few kB each).
CACHE_SIZE = 256


def curve(epsilon, delta, steps, *, tenants: int = 1, reverts=None, variants=VARIANTS, bound: str = "hoeffding",
          max_error_rate: float | None = None) -> dict:
    """Labels against T for every variant: ``{variant: array}``.

    Tenants split each T evenly; reverts count once T reaches their step.  Hoeffding's
    curve is one vectorized call (int arrays).  With ``bound='binomial'`` every point is an
    exact count, each variant's curve one bracketed search of the engine
    (:func:`meter_dashboard.bounds.meter.exact_curve`): float arrays, NaN where the bound
    refuses a count (above 2e7 labels).

    References
    ----------
    Hubis, Wu & Zhang (2019), Figs. 8-12; Renggli et al. (2019), Section 4.3.
    """
    steps = np.asarray(steps)
    if bound == "hoeffding" and max_error_rate is None:
        return meter_bounds.all_labels(epsilon, delta, steps, tenants=tenants, reverts=reverts, variants=variants)
    bound, rate = check_bound(bound, max_error_rate)
    flat = meter_bounds.exact_curve(epsilon, delta, steps.reshape(-1), tenants=tenants, reverts=reverts,
                                    variants=tuple(variants), max_error_rate=rate)
    return {v: np.asarray(flat[v], dtype=float).reshape(steps.shape) for v in variants}


def exact_point(eps: tuple, delta: float, steps: int, tenants: int, reverts: tuple, rate, variants=VARIANTS) -> dict:
    """Every variant's exact binomial count at one T (resampling is T fresh no_adaptivity sets, Eq. 2); cached.

    Tenants split ``steps`` evenly and reverts count once ``steps`` reaches them (the curves'
    conventions); None where the bound refuses a count.
    """
    point = _exact_point(tuple(float(e) for e in eps), float(delta), int(steps), int(tenants),
                         tuple(int(r) for r in reverts), rate)
    return {v: point[v] for v in variants}


@functools.lru_cache(maxsize=CACHE_SIZE * 40)
def _exact_point(eps: tuple, delta: float, steps: int, tenants: int, reverts: tuple, rate) -> dict:
    rv = [r for r in reverts if r <= steps] or None
    try:  # every variant in one search of the exact engine
        counts = meter_bounds.all_labels(list(eps), delta, steps, tenants=min(tenants, steps), reverts=rv,
                                         bound="binomial", max_error_rate=rate)
        return {v: int(counts[v]) for v in VARIANTS}
    except InputError:  # a variant refused: each on its own
        out = {v: exact_labels(v, eps, delta, steps if v != "single_model" else 1, tenants, reverts, "binomial", rate)
               for v in VARIANTS if v != "resampling"}
        out["resampling"] = None if out["no_adaptivity"] is None else out["no_adaptivity"] * steps
        return out


def exact_curve_batches(axis, order, inputs, stop, first: int):
    """``("curves", ...)`` updates of the exact curve over T: ``first`` points of ``order`` (coarse to fine), then
    the others in batches of about a quarter second of work, each one bracketed search of the engine
    (:func:`meter_dashboard.bounds.meter.exact_curve`); work for a changed plan stops between batches.
    """
    yield ("curves", {"planned": len(order), "points": {}})
    chunks = [order[:first]] + [order[k:k + first] for k in range(first, len(order), first)]
    for chunk in chunks:
        if not chunk or stop():
            return
        ts = np.asarray(axis)[chunk]
        counts = meter_bounds.exact_curve(list(inputs.epsilon), inputs.delta, ts, tenants=inputs.tenant_count,
                                          reverts=list(inputs.reverts) or None, max_error_rate=inputs.max_error_rate)
        yield ("curves", {"points": {int(i): {v: (None if np.isnan(counts[v][k]) else int(counts[v][k]))
                                               for v in VARIANTS} for k, i in enumerate(chunk)}})


#: Parameters the second plot can sweep, with their axis labels.
SWEEPS = {
    "delta": "δ (failure probability)",
    "epsilon": "ε₁ (the ε vector scaled together)",
    "signals": "m (signals)",
    "tenants": "tenants (sharing T evenly)",
}


def sweep_axis(parameter: str, epsilon, steps, points: int = 60) -> np.ndarray:
    """The values :func:`sweep` puts on the x axis for ``parameter``."""
    eps = np.asarray(epsilon, dtype=float)
    if parameter == "delta":
        return np.logspace(-6, math.log10(0.5), points)
    if parameter == "epsilon":
        return np.logspace(math.log10(max(eps[0] / 10, 1e-4)), math.log10(min(0.2, 0.99 / eps[-1] * eps[0])), points)
    if parameter == "signals":
        return np.arange(1, 21)
    if parameter == "tenants":
        return np.arange(1, min(int(steps), 20) + 1)
    raise InputError("sweep", "one of " + ", ".join(SWEEPS), parameter)


def sweep_setting(parameter: str, x, epsilon, delta, tenants: int = 1) -> tuple:
    """``(epsilon tuple, delta, tenants)`` of the sweep's point at ``x`` (the other inputs held)."""
    eps = np.asarray(epsilon, dtype=float)
    if parameter == "delta":
        return tuple(eps.tolist()), float(x), tenants
    if parameter == "epsilon":
        return tuple((eps * (float(x) / eps[0])).tolist()), delta, tenants
    if parameter == "signals":
        return tuple(resize_vector(eps, int(x)).tolist()), delta, tenants
    return tuple(eps.tolist()), delta, int(x)


def sweep(parameter: str, epsilon, delta, steps, *, tenants: int = 1, reverts=None, points: int = 60,
          bound: str = "hoeffding", max_error_rate: float | None = None):
    """Labels of every variant against one parameter, others held: ``(x, {variant: array})``.

    With ``bound='binomial'`` every point is an exact count (float arrays, NaN where refused).
    """
    x = sweep_axis(parameter, epsilon, steps, points)
    if bound != "hoeffding" or max_error_rate is not None:
        bound, rate = check_bound(bound, max_error_rate)
        rv = tuple(int(r) for r in (reverts or ())) if parameter != "tenants" else ()
        out = {v: np.full(x.shape, np.nan) for v in VARIANTS}
        for i, value in enumerate(x):
            eps_i, delta_i, tenants_i = sweep_setting(parameter, value, epsilon, delta, tenants)
            point = exact_point(eps_i, delta_i, int(steps), tenants_i, rv, rate)
            for v in VARIANTS:
                out[v][i] = np.nan if point[v] is None else point[v]
        return x, out
    eps = np.asarray(epsilon, dtype=float)
    if parameter == "delta":
        return x, meter_bounds.all_labels(eps, x, steps, tenants=tenants, reverts=reverts)
    if parameter == "epsilon":
        scaled = eps[None, :] * (x / eps[0])[:, None]
        return x, meter_bounds.all_labels(scaled, delta, steps, tenants=tenants, reverts=reverts)
    if parameter == "signals":
        rows = [meter_bounds.all_labels(resize_vector(eps, int(m)), delta, steps, tenants=tenants, reverts=reverts)
                for m in x]
    else:
        rows = [meter_bounds.all_labels(eps, delta, steps, tenants=int(l), reverts=None) for l in x]
    return x, {v: np.array([r[v] for r in rows]) for v in VARIANTS}


def resize_vector(eps, m: int) -> np.ndarray:
    """The eps vector truncated, or extended by repeating its last value, to length m."""
    eps = np.asarray(eps, dtype=float)
    if m <= eps.size:
        return eps[:m].copy()
    return np.concatenate([eps, np.full(m - eps.size, eps[-1])])


# ============================================================================ curves of a plan, exact points in batches
#: Seconds of exact work gathered into one update of the curves (fewer, larger messages to a page).
_BATCH_SECONDS = 0.25


def plan_curves(result: PlanResult, *, sweep_parameter: str = "delta", exact_points: int = 12) -> tuple:
    """``(curves, sweep_curves)`` of a finished plan, in :class:`MeterPlan`'s format (for reports and the CLI).

    Hoeffding's curves at every T (1..max(100, 2T)) and every swept value; under the
    binomial bound, exact counts at every one of them too (the curve over T in batches of
    ``exact_points``, each one bracketed search of the engine).
    """
    if sweep_parameter not in SWEEPS:
        raise InputError("sweep", "one of " + ", ".join(SWEEPS), sweep_parameter)
    exact_points = check_int("exact_points", exact_points, minimum=2, maximum=1000)
    eps, tenants = list(result.epsilon), len(result.tenant_steps)
    rv = list(result.reverts) or None
    axis, hoeffding = reachable_axis(tuple(eps), result.delta, tenants, tuple(result.reverts), t_axis_end(result),
                                     int(t_axis(result.steps)[-1]))
    state = {"curves": start_curves(axis, hoeffding, result.bound, "steps")}
    x, swept = sweep(sweep_parameter, eps, result.delta, result.steps, tenants=tenants, reverts=rv)
    state["sweep_curves"] = {**start_curves(x, swept, result.bound, "x"), "parameter": sweep_parameter}
    if result.bound != "hoeffding":
        settings = dict(reverts=tuple(result.reverts), rate=result.max_error_rate)

        def sweep_point(i):
            eps_i, delta_i, tenants_i = sweep_setting(sweep_parameter, x[i], result.epsilon, result.delta, tenants)
            return eps_i, delta_i, result.steps, tenants_i

        first = [int(np.argmin(np.abs(axis - result.steps)))]
        inputs = _Inputs(result.epsilon, result.delta, tenants, tuple(result.reverts), result.max_error_rate)
        updates = [exact_curve_batches(axis, coarse_to_fine(len(axis), None, first), inputs, lambda: False,
                                       exact_points),
                   exact_batches("sweep_curves", coarse_to_fine(len(x)), sweep_point,
                                 dict(settings, reverts=() if sweep_parameter == "tenants" else settings["reverts"]),
                                 lambda: False)]
        for generator in updates:
            for update in generator:
                fold(state, update)
    return state["curves"], state["sweep_curves"]


@dataclass(frozen=True)
class _Inputs:
    """What an exact curve over T needs of a plan (a finished result's or the model's inputs)."""

    epsilon: tuple
    delta: float
    tenant_count: int
    reverts: tuple
    max_error_rate: float | None


def start_curves(x, hoeffding: dict, bound: str, key: str) -> dict:
    """The curves' starting state: Hoeffding's everywhere, the chosen bound's still to compute."""
    x = np.asarray(x)
    if bound == "hoeffding":
        return {key: x, **hoeffding, "hoeffding": hoeffding, "bound": bound, "computed": x.size, "planned": x.size}
    return {key: x, **{v: np.full(x.shape, np.nan) for v in VARIANTS}, "hoeffding": hoeffding, "bound": bound,
            "computed": 0, "planned": 0}


def exact_batches(kind: str, order, point, settings: dict, stop):
    """``(kind, {"planned": n, "points": {index: {variant: count}}})`` updates, a batch per ~0.25 s of work."""
    batch, started = {}, time.perf_counter()
    yield (kind, {"planned": len(order), "points": {}})
    for i in order:
        if stop():
            return
        eps, delta, steps, tenants = point(i)
        batch[i] = exact_point(eps, delta, steps, tenants, settings["reverts"], settings["rate"])
        if time.perf_counter() - started >= _BATCH_SECONDS:
            yield (kind, {"points": batch})
            batch, started = {}, time.perf_counter()
    if batch:
        yield (kind, {"points": batch})


def fold(state: dict, update) -> None:
    """Apply one update of :meth:`MeterPlan._work` to ``state`` (result, curves, sweep_curves) in place."""
    kind, payload = update
    if kind == "many":  # updates that show together
        for part in payload:
            fold(state, part)
        return
    if kind == "result":
        state["result"] = with_items(state["result"], payload)
        return
    curves = dict(state[kind])
    if "planned" in payload:
        curves["planned"] = payload["planned"]
    points = payload["points"]
    for v in {v for point in points.values() for v in point}:
        values = np.array(curves[v], dtype=float)
        for i, point in points.items():
            if v in point:
                values[i] = np.nan if point[v] is None else point[v]
        curves[v] = values
    complete = frozenset(i for i, point in points.items() if len(point) == len(VARIANTS))
    curves["done"] = frozenset(curves.get("done", frozenset())) | complete
    curves["computed"] = len(curves["done"])
    state[kind] = curves


#: The curve over T ends here at most (a budget supporting more steps says "> 10¹²").
T_AXIS_CAP = 10**12


def t_axis(steps: int, largest=None) -> np.ndarray:
    """The T values of the curve over T: every T up to its end (at most 400), else 200 spaced ones.

    It ends at max(100, 2T), or further when a label budget supports more steps (``largest``: the
    largest T it supports): 25 % beyond it, so the chart shows the answer it states; never beyond
    :data:`T_AXIS_CAP`.
    """
    end = max(100, 2 * int(steps))
    if largest is not None and math.isfinite(largest) and largest >= 1:
        end = max(end, int(math.ceil(1.25 * largest)))
    elif largest is not None and math.isinf(largest):
        end = T_AXIS_CAP
    return axis_to(int(min(end, T_AXIS_CAP)))


def reachable_axis(epsilon: tuple, delta: float, tenants: int, reverts: tuple, end: int, plain: int) -> tuple:
    """``(axis, Hoeffding's curves)`` out to ``end``, or as far as every count can be computed.

    A budget may support more steps than the resampling count allows (at most 10¹⁵ labels): the
    axis is then shortened ten times at a time, never below ``plain`` (the plan's own axis).
    """
    while True:
        try:
            return axis_to(end), hoeffding_curve(tuple(epsilon), delta, tenants, tuple(reverts), end)
        except InputError:
            if end <= plain:
                raise
            end = max(plain, end // 10)


def t_axis_end(result: PlanResult, variant: str = "incremental") -> int:
    """The last T of the curve over T for ``result`` (its steps and, once known, the budget's largest T)."""
    largest = result.max_steps.get(variant) if result.max_steps and not result.is_pending("budget", variant) else None
    return int(t_axis(result.steps, largest)[-1])


def axis_to(t_max: int) -> np.ndarray:
    """:func:`t_axis` by its last value."""
    return np.unique(np.round(np.geomspace(1, t_max, 200)).astype(int)) if t_max > 400 else np.arange(1, t_max + 1)


def _read_only(columns: dict) -> dict:
    for values in columns.values():
        values.flags.writeable = False  # shared by every session that shows it
    return columns


@functools.lru_cache(maxsize=CACHE_SIZE)
def hoeffding_curve(epsilon: tuple, delta: float, tenants: int, reverts: tuple, t_max: int) -> dict:
    """Hoeffding's labels against :func:`t_axis` (ending at ``t_max``), every variant; cached, read-only."""
    axis = axis_to(t_max)
    return _read_only(curve(list(epsilon), delta, axis, tenants=tenants, reverts=list(reverts) or None))


def hoeffding_sweep(parameter: str, epsilon: tuple, delta: float, steps: int, tenants: int, reverts: tuple) -> tuple:
    """``(x, {variant: labels})`` of :func:`sweep` under Hoeffding's bound; cached, read-only.

    The swept parameter's own value does not matter (a δ sweep is the same for every δ).
    """
    if parameter == "delta":
        delta = 0.5
    elif parameter == "tenants":
        tenants, reverts = 1, ()
    return _hoeffding_sweep(parameter, tuple(epsilon), float(delta), int(steps), int(tenants), tuple(reverts))


@functools.lru_cache(maxsize=CACHE_SIZE)
def _hoeffding_sweep(parameter: str, epsilon: tuple, delta: float, steps: int, tenants: int, reverts: tuple) -> tuple:
    x, columns = sweep(parameter, list(epsilon), delta, steps, tenants=tenants, reverts=list(reverts) or None)
    x = np.asarray(x)
    x.flags.writeable = False
    return x, _read_only({v: np.asarray(columns[v]) for v in VARIANTS})
