"""Who may see what of a guarded test set: the one rule of the service layer (issue 23).

Every answer the service gives - to the HTTP API, the CLI, a notebook and the /testsets
page - goes through :func:`disclose`, which keeps the fields the caller's role may see and
drops the rest.  The roles (:class:`Caller`):

=========  =====================================================  ==========================================
role       who                                                    sees
=========  =====================================================  ==========================================
public     no token: ``GET /api/testsets``, the /testsets page    per test set its name, mode, state (active
           without a token (:data:`PUBLIC`, also :data:`VIEWER`)  or retired), steps used of T and steps left
tenant     a tenant token                                         the plan, the labels count, the alarms about
                                                                  its own steps and the whole session, and its
                                                                  own history (signals, never a score while
                                                                  active)
admin      the test set's admin token                             everything a tenant sees, for every tenant,
                                                                  and the tenants' names
owner      holds the store (CLI ``--store``, notebook)             what the admin sees
=========  =====================================================  ==========================================

Test scores (and ease.ml/ci's n, o, d) appear in a history only once the test set has
retired, for a caller with a token (or the owner): ease.ml/meter Section 3.1.  Tenants
never see one another's steps: the tenants' shares of the budget (Appendix B) assume
they do not communicate, and the page must not be the channel.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Caller", "PUBLIC", "VIEWER", "OWNER", "ROLES", "disclose", "failing", "PUBLIC_FIELDS", "STATUS_FIELDS",
           "ADMIN_STATUS_FIELDS", "HISTORY_FIELDS", "SUBMIT_FIELDS", "ALARM_FIELDS", "LIST_FIELDS", "ANSWER_FIELDS"]

ROLES = ("public", "tenant", "admin", "owner")


@dataclass(frozen=True)
class Caller:
    """Who is asking: ``public`` (no token), ``tenant`` (with ``tenant``), ``admin`` or ``owner``."""

    role: str
    tenant: str | None = None

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}; got {self.role!r}")

    @property
    def is_admin(self) -> bool:
        return self.role in ("owner", "admin")

    @property
    def has_token(self) -> bool:
        """A tenant, the admin or the owner (released scores and labels are for them)."""
        return self.role != "public"


PUBLIC = Caller("public")
#: The /testsets page without a token: the public view.
VIEWER = PUBLIC
OWNER = Caller("owner")

#: Everyone, per test set (``GET /api/testsets``, the page without a token).
PUBLIC_FIELDS = ("name", "mode", "status", "steps", "steps_used", "steps_left")
#: A tenant's status (with its own history only).
STATUS_FIELDS = ("name", "mode", "status", "created", "retired_at", "retired_reason", "labels", "needed", "supported",
                 "settings", "steps", "steps_used", "steps_left", "version", "alarms", "failing", "history",
                 "released")
#: The admin's and the owner's status: a tenant's fields and the tenants.
ADMIN_STATUS_FIELDS = STATUS_FIELDS + ("tenants",)
#: One step of a history (the last six once released: scores and ease.ml/ci's estimates).
HISTORY_FIELDS = ("time", "tenant", "step", "val_accuracy", "signal", "incremental_signal", "epsilon", "passed",
                  "reverted", "predictions_sha256", "regular_signal", "test_accuracy", "empirical_overfitting", "n", "o",
                  "d", "truth")
#: The answer to a submission (the submitter's).
SUBMIT_FIELDS = ("name", "mode", "meter", "step", "tenant", "signal", "incremental_signal", "range", "epsilon",
                 "supported_epsilon", "passed", "steps_used", "steps_left", "tenant_steps_left", "retired", "alarms",
                 "failing")
ALARM_FIELDS = ("kind", "level", "step", "message")
#: ``testset list`` for the owner (the public list has :data:`PUBLIC_FIELDS`).
LIST_FIELDS = ("name", "mode", "status", "labels", "needed", "steps_used", "steps", "steps_left", "created",
               "version")
#: The other answers, the same for every role allowed to ask.
ANSWER_FIELDS = {
    "created": ("name", "mode", "labels", "needed", "supported", "admin_token"),
    "token": ("name", "tenant", "token"),
    "revert": ("name", "step", "reverted"),
    "retire": ("name", "status", "steps_used", "reason"),
    "export": ("name", "format", "trace", "test_size", "settings"),
}


def _keep(data: dict, fields) -> dict:
    return {k: data[k] for k in fields if k in data}


def failing(alarms) -> bool:
    """Whether a list of alarms should fail a pipeline: any entry of level ``alarm`` (notes never do)."""
    return any(a.get("level") == "alarm" for a in alarms)


def disclose(kind: str, data: dict, caller: Caller) -> dict:
    """What ``caller`` may see of ``data``, an answer of kind ``status``, ``summary`` (a list entry),
    ``submission`` or one of :data:`ANSWER_FIELDS`; the one place the fields are chosen.

    Status and summary: the public sees :data:`PUBLIC_FIELDS`; a tenant
    :data:`STATUS_FIELDS` (the service has already kept its own steps and alarms); the admin
    and the owner :data:`ADMIN_STATUS_FIELDS` (the owner's list: :data:`LIST_FIELDS`).
    Alarms keep :data:`ALARM_FIELDS`, history rows :data:`HISTORY_FIELDS`.
    """
    if kind == "summary":
        return _keep(data, LIST_FIELDS if caller.is_admin else PUBLIC_FIELDS)
    if kind == "status":
        if not caller.has_token:
            return _keep(data, PUBLIC_FIELDS)
        out = _keep(data, ADMIN_STATUS_FIELDS if caller.is_admin else STATUS_FIELDS)
        out["alarms"] = [_keep(a, ALARM_FIELDS) for a in data.get("alarms", [])]
        out["history"] = [_keep(h, HISTORY_FIELDS) for h in data.get("history", [])]
        out["failing"] = failing(out["alarms"])
        return out
    if kind == "submission":
        out = _keep(data, SUBMIT_FIELDS)
        out["alarms"] = [_keep(a, ALARM_FIELDS) for a in data.get("alarms", [])]
        out["failing"] = failing(out["alarms"])
        return out
    if kind in ANSWER_FIELDS:
        return _keep(data, ANSWER_FIELDS[kind])
    raise ValueError(f"kind must be one of status, summary, submission, {', '.join(ANSWER_FIELDS)}; got {kind!r}")
