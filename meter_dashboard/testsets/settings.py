"""A guarded test set's settings as one immutable, typed value, validated once (issue 32).

- :class:`MeterSettings` (ease.ml/meter): the planner's choices and the validated
  :class:`~meter_dashboard.meter.model.MeterPlan` they make (Hoeffding's bound: its checks
  and its counts);
- :class:`CISettings` (ease.ml/ci): the *parsed* condition and ease.ml/ci's label count for it.

Both validate every field when they are made (an :class:`~meter_dashboard.core.validation.InputError`
names the field) and cannot change afterwards, so the service, the signals, the alarms and the
views carry the value and never read or check a setting by a string key again.

The store keeps settings as JSON text: :meth:`MeterSettings.to_dict` / :meth:`CISettings.to_dict`
write it (the same dictionary answers show), and :func:`settings_from_json` is the one way back,
parsed once per text and process (the settings of a test set never change once written).

Dictionaries (JSON in the store and in answers):

- meter: ``{"mode": "meter", "meter", "ranges", "epsilon", "delta", "steps", "tenant_steps",
  "reverts"}``, and optionally ``"alarm_signal"`` (a released signal at or above it is an alarm),
  ``"submissions_per_hour"`` (per tenant) and ``"bound"`` (with ``"max_error_rate"``: the
  planner's per-model bound, when it is the exact binomial one);
- ci: ``{"mode": "ci", "condition", "reliability", "adaptivity", "ci_mode", "steps", "baseline"}``,
  and optionally ``"submissions_per_hour"``.

Stores written before the optional keys existed read as their defaults.
"""
from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Union

from ..ci import ci_labels, parse_condition
from ..ci.grammar import Condition
from ..ci.plan import CIResult
from ..core.validation import InputError, check_int, check_probability, raw
from ..meter.model import DEFAULT_RANGES, MeterPlan, resize_ranges, validate_ranges
from ..meter.stages import check_bound

__all__ = ["MeterSettings", "CISettings", "Settings", "settings_from_json", "settings_json", "settings_from_dict",
           "as_settings", "forget_parsed", "METERS", "ADAPTIVITIES", "CI_MODES"]

METERS = ("incremental", "regular")
ADAPTIVITIES = ("full", "none", "firstChange")
CI_MODES = ("fp-free", "fn-free")


def _set(value, name: str, to) -> None:
    """Store a validated field of a frozen value while it is being made."""
    object.__setattr__(value, name, to)


def _rate(submissions_per_hour) -> int | None:
    if submissions_per_hour is None:
        return None
    return check_int("submissions_per_hour", submissions_per_hour, minimum=1, maximum=1_000_000)


class _JSONForm:
    """The JSON form read by key, for code written against the settings dictionaries (this package reads fields)."""

    def to_dict(self) -> dict:
        raise NotImplementedError

    def __getitem__(self, key: str):
        return self.to_dict()[key]


@dataclass(frozen=True)
class MeterSettings(_JSONForm):
    """ease.ml/meter settings; :attr:`plan` is the planner's validated model (read only)."""

    mode: ClassVar[str] = "meter"

    epsilon: tuple[float, ...]
    delta: float
    steps: int
    ranges: tuple[float, ...] = ()  # empty: the default ranges of len(epsilon) signals
    meter: str = "incremental"
    tenant_steps: tuple[int, ...] = ()
    reverts: tuple[int, ...] = ()
    alarm_signal: int | None = None
    submissions_per_hour: int | None = None
    bound: str = "hoeffding"
    max_error_rate: float | None = None
    plan: MeterPlan = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.meter not in METERS:
            raise InputError("meter", "'incremental' or 'regular'", self.meter)
        eps = tuple(float(v) for v in self.epsilon)
        ranges = list(self.ranges) if len(self.ranges) else resize_ranges(DEFAULT_RANGES, len(eps))
        _set(self, "epsilon", eps)
        _set(self, "ranges", tuple(float(v) for v in validate_ranges(ranges, len(eps))))
        ts = tuple(check_int("tenant_steps", v, minimum=1) for v in self.tenant_steps)
        _set(self, "tenant_steps", ts if len(ts) > 1 else ())
        _set(self, "delta", check_probability("delta", self.delta))
        _set(self, "steps", check_int("steps", self.steps, minimum=1))
        _set(self, "reverts", tuple(check_int("reverts", v, minimum=1) for v in self.reverts))
        # the planner's own checks (tenant steps sum to T, reverts possible, ...), made once
        _set(self, "plan", MeterPlan(ranges=list(self.ranges), epsilon=list(eps), delta=self.delta,
                                     steps=self.steps, tenants=self.tenants, tenant_steps=list(self.tenant_steps),
                                     reverts=list(self.reverts)))
        bound, rate = check_bound(self.bound, self.max_error_rate)
        _set(self, "bound", bound)
        _set(self, "max_error_rate", rate)
        if self.alarm_signal is not None:
            _set(self, "alarm_signal", check_int("alarm_signal", self.alarm_signal, minimum=1, maximum=len(eps)))
        _set(self, "submissions_per_hour", _rate(self.submissions_per_hour))

    @property
    def tenants(self) -> int:
        return max(len(self.tenant_steps), 1)

    @property
    def exact(self) -> bool:
        """Whether the plan uses another bound than Hoeffding's (the replay then computes its own counts)."""
        return self.bound != "hoeffding"

    def plan_values(self) -> dict:
        """The plan as :func:`~meter_dashboard.meter.model.plan` and :func:`~meter_dashboard.session.model.replay`
        take it (with the bound)."""
        return {"ranges": list(self.ranges), "epsilon": list(self.epsilon), "delta": self.delta,
                "steps": self.steps, "tenants": self.tenants, "tenant_steps": list(self.tenant_steps),
                "reverts": list(self.reverts), "bound": self.bound, "max_error_rate": self.max_error_rate}

    def shown(self, signal: int, incremental_signal: int) -> int:
        """The signal this meter reports: the incremental one for the incremental meter."""
        return int(incremental_signal if self.meter == "incremental" else signal)

    def to_dict(self) -> dict:
        """The JSON form (the store's and the answers')."""
        out: dict[str, Any] = {
            "mode": "meter", "meter": self.meter, "ranges": list(self.ranges), "epsilon": list(self.epsilon),
            "delta": self.delta, "steps": self.steps, "tenant_steps": list(self.tenant_steps),
            "reverts": list(self.reverts)}
        if self.exact:
            out["bound"] = self.bound
            if self.max_error_rate is not None:
                out["max_error_rate"] = self.max_error_rate
        if self.alarm_signal is not None:
            out["alarm_signal"] = self.alarm_signal
        return _with_rate(out, self.submissions_per_hour)


@dataclass(frozen=True)
class CISettings(_JSONForm):
    """ease.ml/ci settings: the condition parsed (never evaluated as code) and its label count."""

    mode: ClassVar[str] = "ci"

    condition: Condition  # a text is parsed when the value is made
    reliability: float
    steps: int
    adaptivity: str = "full"
    ci_mode: str = "fp-free"
    baseline: bool = False
    submissions_per_hour: int | None = None
    ci_result: CIResult = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.adaptivity not in ADAPTIVITIES:
            raise InputError("adaptivity", "one of " + ", ".join(ADAPTIVITIES), self.adaptivity)
        if self.ci_mode not in CI_MODES:
            raise InputError("mode", "one of " + ", ".join(CI_MODES), self.ci_mode)
        if not isinstance(self.condition, Condition):
            _set(self, "condition", parse_condition(self.condition))
        _set(self, "steps", check_int("steps", self.steps, minimum=1))
        # the reliability's own check; its count is what the test set needs
        _set(self, "ci_result", ci_labels(self.condition, self.reliability, self.adaptivity, self.steps, self.ci_mode))
        _set(self, "reliability", float(self.reliability))
        _set(self, "baseline", bool(self.baseline))
        if self.uses_old_model and not self.baseline:
            raise InputError("baseline", f"the predictions of the deployed model (the condition "
                             f"{self.condition.canonical()!r} compares with it through o or d)", "nothing")
        _set(self, "submissions_per_hour", _rate(self.submissions_per_hour))

    @property
    def uses_old_model(self) -> bool:
        """Whether the condition needs the old model (it mentions o or d)."""
        return bool({"o", "d"} & set(self.condition.variables))

    def to_dict(self) -> dict:
        """The JSON form (the store's and the answers')."""
        return _with_rate({"mode": "ci", "condition": self.condition.canonical(), "reliability": self.reliability,
                           "adaptivity": self.adaptivity, "ci_mode": self.ci_mode, "steps": self.steps,
                           "baseline": self.baseline}, self.submissions_per_hour)


Settings = Union[MeterSettings, CISettings]


def _with_rate(out: dict, submissions_per_hour: int | None) -> dict:
    if submissions_per_hour is not None:
        out["submissions_per_hour"] = submissions_per_hour
    return out


_TYPES: dict = {"meter": MeterSettings, "ci": CISettings}
#: The keys a method's dictionary may have (``mode`` aside): the value's fields.
_KEYS = {mode: tuple(f.name for f in fields(kind) if f.init) for mode, kind in _TYPES.items()}
#: The keys every stored dictionary of a method has (the others came later, with defaults).
_REQUIRED = {"meter": ("meter", "ranges", "epsilon", "delta", "steps", "tenant_steps", "reverts"),
             "ci": ("condition", "reliability", "adaptivity", "ci_mode", "steps", "baseline")}


def settings_from_dict(values: Mapping) -> Settings:
    """The typed settings of a settings dictionary (:meth:`MeterSettings.to_dict` / :meth:`CISettings.to_dict`),
    validated; an :class:`InputError` names the key that is missing, unknown or bad."""
    if not isinstance(values, Mapping):
        raise InputError("settings", "a JSON object of a test set's settings", raw(type(values).__name__))
    mode = str(values.get("mode"))
    if mode not in _TYPES:
        raise InputError("settings.mode", "'meter' or 'ci'", values.get("mode", raw("nothing")))
    keys = _KEYS[mode]
    unknown = sorted(set(values) - set(keys) - {"mode"})
    if unknown:
        raise InputError(f"settings.{unknown[0]}", f"left out (a {mode} test set's settings are "
                         f"{', '.join(keys)})", raw("a value"))
    missing = [k for k in _REQUIRED[mode] if k not in values]
    if missing:
        raise InputError(f"settings.{missing[0]}", f"given (every {mode} test set's settings have it)", "nothing")
    return _TYPES[mode](**{k: v for k, v in values.items() if k != "mode"})


_PARSED: OrderedDict = OrderedDict()  # JSON text -> its typed settings (immutable: shared)
_PARSED_LOCK = threading.Lock()


def _remember(text: str, value: Settings) -> Settings:
    with _PARSED_LOCK:
        _PARSED[text] = value
        _PARSED.move_to_end(text)
        while len(_PARSED) > 256:
            _PARSED.popitem(last=False)
    return value


def settings_from_json(text: str) -> Settings:
    """The typed settings of the store's JSON text: parsed and validated once per text and process
    (a test set's settings never change once written, and the value is immutable, so it is shared)."""
    with _PARSED_LOCK:
        found = _PARSED.get(text)
    if found is not None:
        return found
    try:
        values = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise InputError("settings", "JSON text of a test set's settings", raw(f"text that does not parse ({exc})"))
    return _remember(text, settings_from_dict(values))


def settings_json(settings: Settings) -> str:
    """The JSON text the store keeps for ``settings`` (read back by :func:`settings_from_json` as this very value)."""
    text = json.dumps(settings.to_dict(), sort_keys=True)
    _remember(text, settings)
    return text


def as_settings(value: Settings | Mapping) -> Settings:
    """``value`` itself when typed; a settings dictionary (from an answer, say) parsed once per content."""
    if isinstance(value, (MeterSettings, CISettings)):
        return value
    if not isinstance(value, Mapping):
        return settings_from_dict(value)  # refused, by name
    return settings_from_json(json.dumps(dict(value), sort_keys=True))


def forget_parsed() -> None:
    """Empty the per-process cache of parsed settings (tests count parses from a clean start)."""
    with _PARSED_LOCK:
        _PARSED.clear()
