"""Guarded test sets in a notebook: ``md.connect(...)`` and ``md.TestSet(...)``.

>>> import meter_dashboard as md
>>> team = md.connect("sqlite:///team.sqlite")                      # doctest: +SKIP
>>> emo = team.create("emo", "labels.csv", epsilon=[0.01, 0.02, 0.03, 0.04, 0.05],
...                   delta=0.1, steps=8)                            # doctest: +SKIP
>>> emo.admin_token                                                  # doctest: +SKIP  (shown once)
>>> alice = emo.token("alice")                                       # doctest: +SKIP
>>> emo.submit(predictions, val_accuracy=0.93, tenant="alice")       # doctest: +SKIP
{'step': 1, 'signal': 3, 'incremental_signal': 3, 'range': [0.01, 0.02], ...}

A developer without the store's credentials talks to the server instead:
``md.TestSet("emo", server="http://host:5006", token=alice)``.  Both run the same
operations; a :class:`TestSet` shows its state (never a score while it is active) as
text and as HTML in Jupyter.
"""
from __future__ import annotations

import html
from typing import TYPE_CHECKING

from ..core.validation import InputError
from . import service, signals
from .access import Caller
from .settings import MeterSettings, Settings, as_settings
from .store import Store

if TYPE_CHECKING:
    from .client import Client

__all__ = ["connect", "Connection", "TestSet"]


def _is_server(target) -> bool:
    return isinstance(target, str) and target.strip().lower().startswith(("http://", "https://"))


def connect(store_or_server=None, *, token: str | None = None) -> "Connection":
    """A connection to a store (a URL, a :class:`~.store.Store`, or None for the default store)
    or to a server (``http://...``, with a ``token``)."""
    return Connection(store_or_server, token=token)


class Connection:
    """Guarded test sets in one store or on one server: ``create``, ``testset``/``[name]``, ``list``."""

    def __init__(self, store_or_server=None, *, token: str | None = None):
        self.token = token
        self.client: Client | None  # one or the other
        self.store: Store | None
        if _is_server(store_or_server):
            from .client import Client

            self.client, self.store = Client(store_or_server, token), None
        else:
            self.client = None
            self.store = store_or_server if isinstance(store_or_server, Store) else Store(store_or_server)

    def __repr__(self) -> str:
        return f"Connection({(self.client.server if self.client else self._owned().display_url)!r})"

    def _owned(self) -> Store:
        """The store (a connection to a server has none: it goes through its client)."""
        assert self.store is not None, "a connection to a server goes through its client"
        return self.store

    def create(self, name: str, labels, *, steps, epsilon=None, delta=None, ranges=None, meter="incremental",
               tenant_steps=None, reverts=None, condition=None, reliability=None, adaptivity="full", mode="fp-free",
               baseline=None, allow_smaller: bool = False, alarm_signal=None,
               submissions_per_hour=None, bound: str = "hoeffding", max_error_rate=None) -> "TestSet":
        """Register a test set (meter settings, or ``condition=`` for ease.ml/ci); the returned
        :class:`TestSet` holds the admin token in ``admin_token`` (shown once).  ``alarm_signal`` K
        (meter): a released signal >= K is an alarm; ``submissions_per_hour``: each tenant's cap;
        ``bound``/``max_error_rate`` (meter): the planner's per-model bound."""
        if self.client is not None:
            raise InputError("create", "run against a store (the store's owner creates test sets)",
                             self.client.server)
        settings: Settings
        if condition is not None:
            if alarm_signal is not None:
                raise InputError("alarm_signal", "used in meter mode (ease.ml/ci answers pass or fail)", alarm_signal)
            settings = signals.ci_settings(condition=condition, reliability=reliability, adaptivity=adaptivity,
                                           mode=mode, steps=steps, baseline=baseline is not None,
                                           submissions_per_hour=submissions_per_hour)
        else:
            settings = signals.meter_settings(epsilon=epsilon if epsilon is not None else [0.01, 0.02, 0.03, 0.04,
                                                                                          0.05],
                                              delta=0.01 if delta is None else delta, steps=steps, ranges=ranges,
                                              meter=meter, tenant_steps=tenant_steps, reverts=reverts,
                                              alarm_signal=alarm_signal, submissions_per_hour=submissions_per_hour,
                                              bound=bound, max_error_rate=max_error_rate)
        out = service.create(self._owned(), name, labels, settings, baseline=baseline, allow_smaller=allow_smaller)
        ts = TestSet(name, self.store)
        ts.admin_token = out["admin_token"]
        ts.created = {k: v for k, v in out.items() if k != "admin_token"}
        return ts

    def testset(self, name: str, token: str | None = None) -> "TestSet":
        if self.client is not None:
            return TestSet(name, server=self.client.server, token=token or self.token)
        return TestSet(name, self.store, token=token)

    __getitem__ = testset

    def list(self) -> list:
        """Every test set: name, mode, status, steps used of T and left (and, in a store, labels and dates)."""
        return self.client.list() if self.client is not None else service.list_testsets(self._owned())

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(t['name'])}</td><td>{t['mode']}</td><td>{t['status']}</td>"
                       f"<td style='text-align:right'>{'' if t.get('labels') is None else format(t['labels'], ',')}"
                       f"</td><td>{t['steps_used']}/{t['steps']}</td></tr>" for t in self.list())
        return (f"<b>{html.escape(repr(self))}</b><table><tr><th>name</th><th>mode</th><th>status</th>"
                f"<th>labels</th><th>steps</th></tr>{rows}</table>")


class TestSet:
    """One guarded test set, in a store (its owner) or on a server (with a token).

    Parameters
    ----------
    name : str
    store : str or Store, optional
        A store URL (default: the default store) - the owner's side.
    server : str, optional
        ``http://host:port`` of a ``meter-dashboard serve`` - the developers' side.
    token : str, optional
        With ``server``: a tenant token (submit, status) or the admin token.  With a
        store: act as that token's holder instead of the owner.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, name: str, store=None, *, server: str | None = None, token: str | None = None):
        self.name = service.check_name(name)
        self.admin_token: str | None = None  # shown once, after create
        #: what :meth:`Connection.create` returned besides the admin token (None when opened otherwise)
        self.created: dict | None = None
        self._client: Client | None  # a server's test set: through its client; else the store's, as this caller
        self._store: Store | None
        self._caller: Caller | None
        if server is not None:
            if store is not None:
                raise InputError("server", "given without a store (one or the other)", server)
            from .client import Client

            self._client, self._store, self._caller = Client(server, token), None, None
        else:
            self._client = None
            self._store = store if isinstance(store, Store) else Store(store)
            self._caller = service.OWNER if token is None else service.authenticate(self._store, self.name, token)

    # -- operations (the CLI's, the HTTP API's)
    def submit(self, predictions, val_accuracy=None, *, tenant: str | None = None) -> dict:
        """Submit predictions (a mapping id -> prediction, a Series, a DataFrame or a CSV path); the signal only."""
        if self._client is not None:
            return self._client.submit(self.name, predictions, val_accuracy)
        store, caller = self._local()
        return service.submit(store, self.name, predictions, val_accuracy, caller, tenant=tenant)

    def status(self) -> dict:
        if self._client is not None:
            return self._client.status(self.name)
        store, caller = self._local()
        return service.status(store, self.name, caller)

    def token(self, tenant: str) -> str:
        """A new token for ``tenant`` (shown once)."""
        if self._client is not None:
            return self._client.issue_token(self.name, tenant)["token"]
        store, caller = self._local()
        return service.issue_token(store, self.name, tenant, caller)["token"]

    def _local(self) -> tuple[Store, Caller]:
        """(store, caller) of a test set opened on a store (without a server's client)."""
        assert self._store is not None and self._caller is not None, "a server's test set goes through its client"
        return self._store, self._caller

    def revert(self) -> dict:
        if self._client:
            return self._client.revert(self.name)
        store, caller = self._local()
        return service.revert(store, self.name, caller)

    def retire(self) -> dict:
        if self._client:
            return self._client.retire(self.name)
        store, caller = self._local()
        return service.retire(store, self.name, caller)

    def export(self, format: str = "csv") -> str:
        """The history as trace text (after retirement), for ``md.replay`` or /session."""
        if self._client:
            return self._client.export(self.name, format)["trace"]
        store, caller = self._local()
        return service.export(store, self.name, caller, format=format)["trace"]

    def replay(self):
        """After retirement: the history replayed by :func:`meter_dashboard.replay` (the session page's view)."""
        from ..session.model import replay
        from ..session.trace import read_trace

        settings = as_settings(self.status()["settings"])
        if not isinstance(settings, MeterSettings):
            raise InputError("replay", "a meter test set (ease.ml/ci histories replay on /ci)", settings.mode)
        trace = read_trace(self.export("json").encode(), format="json", name=self.name)
        return replay(trace, plan=settings.plan, variant=settings.meter)

    def labels(self) -> str:
        """The labels as id,label CSV (after retirement)."""
        if self._client:
            return self._client.labels(self.name)
        store, caller = self._local()
        return service.release_labels(store, self.name, caller)

    def history(self):
        """The visible history as a pandas DataFrame (one row per step)."""
        import pandas as pd

        return pd.DataFrame(self.status()["history"])

    # -- display
    def __repr__(self) -> str:
        try:
            s = self.status()
        except (service.ServiceError, InputError) as exc:
            return f"TestSet({self.name!r}: {exc})"
        settings = as_settings(s["settings"])
        mode = (f"{settings.meter} meter" if isinstance(settings, MeterSettings)
                else f"ease.ml/ci {settings.condition.canonical()!r}")
        head = (f"TestSet({self.name!r}: {mode}, {s['status']}, {s['steps_used']}/{s['steps']} steps used, "
                f"{s['labels']:,} labels (the plan needs {s['needed']:,}))")
        lines = [head]
        for h in s["history"][-10:]:
            what = (f"signal {h['signal']} (incremental {h['incremental_signal']}, ε {h['epsilon']:g})"
                    if s["mode"] == "meter" else f"passed {h['passed']}")
            val = "" if h["val_accuracy"] is None else f"val {h['val_accuracy']:g}  "
            lines.append(f"  step {h['step']:>3}  {h['tenant']:<10} {val}{what}{'  reverted' if h['reverted'] else ''}")
        lines += [f"  ALARM: {a['message']}" for a in s["alarms"] if a["level"] == "alarm"]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        try:
            s = self.status()
        except (service.ServiceError, InputError) as exc:
            return f"<b>TestSet {html.escape(self.name)}</b>: {html.escape(str(exc))}"
        meter = s["mode"] == "meter"
        cols = ["step", "tenant", "time", "val_accuracy"] + (["signal", "incremental_signal", "epsilon"] if meter
                                                             else ["passed"]) + ["reverted"]
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(h.get(c)))}</td>" for c in cols) + "</tr>"
                       for h in s["history"])
        alarms = "".join(f"<div style='color:#8a1c00'>⚠ {html.escape(a['message'])}</div>" for a in s["alarms"])
        used = s["steps_used"] / max(s["steps"], 1)
        bar = (f"<div style='width:240px;height:10px;background:#eef2f6;border-radius:5px'><div style='width:"
               f"{240 * used:.0f}px;height:10px;background:#0072B2;border-radius:5px'></div></div>")
        return (f"<div><b>{html.escape(self.name)}</b> · {'meter' if meter else 'ease.ml/ci'} · {s['status']} · "
                f"{s['labels']:,} labels (needs {s['needed']:,}) · {s['steps_used']}/{s['steps']} steps used{bar}"
                f"{alarms}<table><tr>{''.join(f'<th>{c}</th>' for c in cols)}</tr>{body}</table></div>")
