"""The /testsets page's model: every guarded test set in a store, refreshed when the store changes.

:class:`TestSetsModel` holds what the page shows - each test set as the person at the page
may see it (:func:`meter_dashboard.testsets.access.disclose`): without a token its state
and steps used and left only; with a tenant token, that test set's plan, alarms and the
tenant's own history of signals; with the admin token, every tenant's - never a test score
while it is active - and the admin actions a person can take with a test set's admin
token.  Tokens typed at the page stay in that page's session.  It reads the store only
through the service layer.

Refreshing is split so the page never holds its event loop: :meth:`TestSetsModel.check`
does the reading (a cheap ``{name: version}`` query, then the statuses that changed) and
may run in a worker thread; :meth:`TestSetsModel.apply` sets the parameters (on the
page's loop).  :meth:`TestSetsModel.refresh` does both, for notebooks and tests.

References
----------
Hubis, Wu & Zhang, ease.ml/meter (2019), Sections 3.1 and 3.2 (the meter and its signals).
"""
from __future__ import annotations

import threading

import param

from ..core.validation import InputError
from . import service
from .access import PUBLIC
from .store import StoreError, open_store

__all__ = ["TestSetsModel"]


class TestSetsModel(param.Parameterized):
    """Every guarded test set in one store, as the page shows them.

    Examples
    --------
    >>> m = TestSetsModel(store_url="sqlite:///:memory:")
    >>> m.refresh(), m.names
    (False, [])
    """

    __test__ = False

    store_url = param.String(default=None, allow_None=True, doc="The store (None: the process's default store).")
    testsets = param.Dict(default={}, doc="name -> that test set's status as this page may see it (service.status).")
    names = param.List(default=[], doc="Test-set names in the order they were created.")
    error = param.String(default="", doc="Why the store could not be read ('' when it could).")
    message = param.String(default="", doc="The outcome of the last admin action.")
    revision = param.Integer(default=0, doc="Bumped whenever anything shown changed.")

    def __init__(self, **params):
        super().__init__(**params)
        self._versions: dict = {}
        self._callers: dict = {}  # name -> Caller of a token typed at this page
        self._lock = threading.Lock()

    @property
    def store(self):
        return open_store(self.store_url)

    # -- reading (thread-safe: no parameter changes)
    def check(self):
        """What changed since the last :meth:`apply`: ``(versions, statuses, error, callers)`` or None
        (``callers``: the views the statuses were read with)."""
        with self._lock:
            known, callers = dict(self._versions), dict(self._callers)
        try:
            if not self.store.exists():  # nothing created yet: show that, and create nothing
                return None if not known and not self.error else ({}, {}, "", callers)
            versions = service.versions(self.store)
            if versions == known:
                return None
            changed = [n for n, v in versions.items() if known.get(n) != v]
            statuses = {name: service.status(self.store, name, callers.get(name, PUBLIC)) for name in changed}
        except (StoreError, InputError) as exc:
            message = f"The store cannot be read: {exc}"
            return None if message == self.error else ({}, {}, message, callers)
        return versions, statuses, "", callers

    def apply(self, update) -> bool:
        """Set the parameters from a :meth:`check` result (None: nothing changed)."""
        if update is None:
            return False
        versions, statuses, error, callers = update
        testsets = {n: statuses.get(n, self.testsets.get(n)) for n in versions}
        names = list(versions)  # the order they were created
        with self._lock:  # a token typed while the store was read: read that test set again
            self._versions = {n: v for n, v in versions.items()
                              if self._callers.get(n, PUBLIC) == callers.get(n, PUBLIC)}
        self.param.update(testsets=testsets, names=names, error=error, revision=self.revision + 1)
        return True

    def refresh(self) -> bool:
        """Read the store and update; True when something changed."""
        return self.apply(self.check())

    # -- tokens typed at the page (run off the page's loop)
    def use_token(self, name: str, token: str) -> dict:
        """Show test set ``name`` as ``token``'s holder sees it (a tenant: its own history; the admin: all);
        ``{"ok": bool, "message": str}``.  An empty token goes back to the public view."""
        try:
            caller = PUBLIC if not (token or "").strip() else service.authenticate(self.store, name, token.strip())
        except (service.ServiceError, InputError, StoreError) as exc:
            return {"ok": False, "message": str(exc)}
        with self._lock:
            self._callers[name] = caller
            self._versions.pop(name, None)  # read it again, with the new view
        who = {"public": "without a token", "tenant": f"as tenant {caller.tenant}", "admin": "as its admin"}
        return {"ok": True, "message": f"Showing {name} {who.get(caller.role, caller.role)}."}

    def caller(self, name: str):
        with self._lock:
            return self._callers.get(name, PUBLIC)

    # -- admin actions (each checks the admin token; run them off the page's loop)
    def _admin(self, name: str, token: str):
        if not token:
            raise service.Unauthorized("enter the test set's admin token first")
        caller = service.authenticate(self.store, name, token.strip())
        if caller.role != "admin":
            raise service.Forbidden("this is a tenant token: admin actions need the admin token")
        return caller

    def run_action(self, action: str, name: str, token: str, tenant: str | None = None) -> dict:
        """``revert``, ``retire``, ``token`` (a new tenant token, shown once) or ``export`` (the trace,
        after retirement).  Returns ``{"ok": bool, "message": str, ...}``; never raises for a refusal."""
        try:
            caller = self._admin(name, token)
            if action == "revert":
                out = service.revert(self.store, name, caller)
                result = {"ok": True, "message": f"Step {out['step']} of {name} is marked reverted."}
            elif action == "retire":
                out = service.retire(self.store, name, caller)
                result = {"ok": True, "message": f"{name} retired after {out['steps_used']} step(s): its scores and "
                                                 f"labels are released to its tokens."}
            elif action == "token":
                out = service.issue_token(self.store, name, tenant or "", caller)
                result = {"ok": True, "token": out["token"],
                          "message": f"Token for tenant {out['tenant']} (shown once, copy it now): {out['token']}"}
            elif action == "export":
                out = service.export(self.store, name, caller, format="json")
                result = {"ok": True, "trace": out["trace"], "message": f"The history of {name} as a trace."}
            else:
                raise InputError("action", "revert, retire, token or export", action)
        except (service.ServiceError, InputError, StoreError) as exc:
            result = {"ok": False, "message": str(exc)}
        return result
