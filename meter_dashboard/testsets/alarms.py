"""The alarms and notes of a guarded test set, as the service answers them.

Every entry is ``{"kind", "level", "step", "message"}``; ``level`` is ``"alarm"`` (act on
it: a pipeline should fail) or ``"note"`` (know it: the plan is working as designed, such as
the last planned step being used).  :func:`.access.failing` is the one test of a list:
any entry of level ``"alarm"``.

Kinds: the session replay's (ease.ml/meter: ``beyond_budget``, ``tenant_beyond_budget``,
``budget_used_up`` (a note at the last planned step), ``revert_not_taken``, ...; see
:mod:`meter_dashboard.session.model`), and here:

- ``signal_at_or_above`` (alarm): a released signal reached the threshold set at creation
  (``testset create --alarm-signal K``): the model overfits at least as much as the team
  decided to stop at;
- ``test_set_too_small`` (alarm): fewer labels than the plan needs - the guarantee does not
  hold at the planned tolerance;
- ``budget_used_up`` and ``first_change`` (ease.ml/ci, notes): the test set is used up as
  planned - draw a new one;
- ``retired`` (alarm): the admin retired the test set before its budget was used.
"""
from __future__ import annotations

from . import signals
from .settings import CISettings, MeterSettings, Settings

__all__ = ["visible_alarms", "ci_alarms", "status_alarms", "retire_alarm", "signal_alarm", "shown_signal"]


def _entry(kind: str, level: str, step, message: str) -> dict:
    return {"kind": kind, "level": level, "step": step, "message": message}


def visible_alarms(result, tenant: str | None, index: int, active: bool) -> list:
    """Alarms and notes up to position ``index`` a caller may see (a tenant: its own steps and
    the session-wide ones, without other tenants' names or steps); while active, a planned
    revert still due at ``index`` is not yet late."""
    out = []
    for a in result.alarms_until(index):
        if active and a.kind == "revert_not_taken" and a.index == index:
            continue
        if tenant is not None and a.index is not None and a.kind != "budget_used_up" \
                and result.trace.tenants[a.index] != tenant:
            continue
        message = a.message if tenant is None else _for_one_tenant(result, a, tenant)
        if message is not None:
            out.append(_entry(a.kind, a.level, a.step, message))
    return out


def _for_one_tenant(result, alarm, tenant: str) -> str | None:
    """A session-wide entry as one tenant may read it: other tenants' names and steps left out (None: drop it)."""
    if alarm.index is not None:
        return alarm.message
    if alarm.kind == "shared_budget":  # it names every tenant
        head = alarm.message.split("; that also covers", 1)[0]
        return f"{head}, which every tenant of this test set shares, as long as they do not communicate."
    if alarm.kind == "unplanned_reverts":  # it lists reverted steps, maybe another tenant's
        own = {int(s) for s, t in zip(list(result.trace.steps), list(result.trace.tenants)) if t == tenant}
        return alarm.message if set(alarm.details.get("steps", [])) <= own else None
    return alarm.message


def shown_signal(settings: MeterSettings, row) -> int:
    """The signal a meter step released: the incremental one for the incremental meter."""
    return settings.shown(row["signal"], row["incremental_signal"])


def signal_alarm(settings: MeterSettings, step: int, signal: int) -> list:
    """``[alarm]`` when ``signal`` reaches the test set's ``alarm_signal`` threshold, else ``[]``."""
    threshold = settings.alarm_signal
    if threshold is None or signal < threshold:
        return []
    m = len(settings.epsilon)
    return [_entry("signal_at_or_above", "alarm", step,
                   f"Step {step} got signal {signal} of {m}, at or above the alarm threshold {threshold} set for this "
                   f"test set: the model overfits at least as much as the team decided to stop at.")]


def ci_alarms(settings: CISettings, step: int, retired: bool, first_change: bool, size: int, needed: int) -> list:
    H = settings.steps
    alarms = []
    if size < needed:
        alarms.append(_entry("test_set_too_small", "alarm", None,
                             f"The test set has {size:,} labels; the condition needs {needed:,} "
                             f"({settings.adaptivity} adaptivity, {H} commits): the reliability guarantee "
                             f"does not hold at the condition's tolerances."))
    if retired and first_change:
        alarms.append(_entry("first_change", "note", step,
                             f"Commit {step} passed: with adaptivity firstChange this test set is used up "
                             f"(Section 3.4). Draw a new test set and release this one to the developers."))
    elif retired:
        alarms.append(_entry("budget_used_up", "note", step,
                             f"Commit {step} used the last of the H = {H} commits this test set supports: "
                             f"draw a new test set and release this one to the developers."))
    return alarms


def status_alarms(row, settings: Settings, history, tenant, active: bool) -> list:
    """The alarms of a test set's history that a caller (``tenant``: one tenant's view) may see."""
    n, size = len(history), int(row["size"])
    if isinstance(settings, CISettings):
        retired = not active
        first = retired and (row["retired_reason"] or "").startswith("first change")
        return ci_alarms(settings, n, retired and n > 0, first, size, int(row["needed"])) + retire_alarm(row, n)
    if not history:
        if size < int(row["needed"]):
            return [_entry("test_set_too_small", "alarm", None,
                           f"The test set has {size:,} labels; the {settings.meter} meter needs "
                           f"{int(row['needed']):,} for this plan.")]
        return retire_alarm(row, n)
    result = signals.replay_history(settings, history, size)
    thresholds = [a for r in history if tenant is None or r["tenant"] == tenant
                  for a in signal_alarm(settings, int(r["step"]), shown_signal(settings, r))]
    return visible_alarms(result, tenant, n - 1, active=active) + thresholds + retire_alarm(row, n)


def retire_alarm(row, steps_used: int) -> list:
    reason = row["retired_reason"] or ""
    if row["status"] == "active" or reason.startswith(("budget used up", "first change")):
        return []
    return [_entry("retired", "alarm", None,
                   f"Retired after {steps_used} step(s) ({reason}): draw a new test set; this one's scores "
                   f"and labels may be released to the developers.")]
