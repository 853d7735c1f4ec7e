"""A submission spends its step once, and one tenant token never takes every step (issue 31).

- ``Idempotency-Key``: a client's key for one submission, stored with the step it spent
  (``md_idempotency``, written in the step's own transaction) and the answer given; a retry with
  the key gets that answer and spends nothing; the key with other predictions or another
  validation accuracy is :class:`~.errors.KeyReused` (422).
- ``proceed``: asked just before the step's transaction commits; False (the client left, the
  server is giving up its drain) rolls the step back: :class:`~.errors.Abandoned` (503).
- :func:`tenant_share`: without a split of T in the plan, each tenant token may spend at most an
  equal share, ceil(T / tenants holding a token).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..core.validation import InputError, raw
from .access import Caller, disclose
from .errors import Abandoned, KeyReused, Refused
from .settings import MeterSettings, Settings

__all__ = ["Once", "check_idempotency_key", "replay", "tenant_share", "check_share"]

_KEY_RE = re.compile(r"^[A-Za-z0-9._:+/=-]{1,128}$")


def check_idempotency_key(key) -> str:
    """A client's ``Idempotency-Key``: 1-128 letters, digits or ``._:+/=-`` (a UUID fits)."""
    if not isinstance(key, str) or not _KEY_RE.match(key):
        raise InputError("Idempotency-Key", "1-128 letters, digits or . _ : + / = - (a UUID, say)",
                         key if isinstance(key, str) and len(key) <= 200 else raw("a longer or other value"))
    return key


@dataclass(frozen=True)
class Once:
    """What makes a submission happen once: its key and request, who asks, and whether to go on."""

    key: str | None
    digest: str
    val_accuracy: float | None
    caller: Caller
    proceed: Callable[[], bool] | None = None

    def seen(self, store, conn, row, who):
        """The answer a retry gets (None: the key is new or absent); :class:`KeyReused` for other data."""
        if self.key is None:
            return None
        found = store.find_idempotent(conn, row["id"], who, self.key)
        return None if found is None else replay(found, self.digest, self.val_accuracy, self.key)

    def commit(self, store, conn, row, who, step: int, out: dict) -> dict:
        """The disclosed answer, its key written with the step; :class:`Abandoned` when told not to go on."""
        answer = disclose("submission", out, self.caller)
        if self.key is not None:
            store.insert_idempotent(conn, row["id"], who, self.key, step, answer)
        if self.proceed is not None and not self.proceed():
            raise Abandoned("the server is stopping: this submission was not recorded (no step spent); send it "
                            "again, with the same Idempotency-Key, once the server is back")
        return answer


def replay(found, digest: str, val_accuracy, key: str) -> dict:
    same_val = (found["val_accuracy"] is None and val_accuracy is None) or (
        found["val_accuracy"] is not None and val_accuracy is not None
        and float(found["val_accuracy"]) == float(val_accuracy))
    if found["predictions_sha256"] != digest or not same_val:
        raise KeyReused(f"the Idempotency-Key {key!r} was used for a different submission (step "
                        f"{int(found['step'])}, other predictions or val_accuracy): a retry must send the same "
                        f"request; new predictions need a new key")
    return json.loads(found["answer"])


def tenant_share(store, conn, row, settings: Settings) -> int | None:
    """The steps one tenant token may spend when the plan does not split T itself: an equal share,
    ceil(T / tenants), of the tenants holding a token (None: no tenant yet, or the plan's own split)."""
    if isinstance(settings, MeterSettings) and settings.tenant_steps:
        return None
    count = len(store.tenants(conn, row["id"]))
    return None if count == 0 else -(-settings.steps // count)


def check_share(store, conn, row, settings: Settings, who: str, used: int, caller: Caller) -> int | None:
    """Refuse a tenant token beyond its default share (:func:`tenant_share`); returns the share."""
    if caller.role != "tenant":
        return None
    share = tenant_share(store, conn, row, settings)
    if share is not None and used >= share:
        T = settings.steps
        raise Refused(f"tenant {who} has used its {share} step(s), an equal share of test set {row['name']!r}'s "
                      f"T = {T} among the tenants holding tokens; the other tenants' steps stay theirs")
    return share
