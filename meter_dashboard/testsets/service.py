"""Guarded test sets: the service that holds the labels and answers with signals only.

ease.ml/meter (Hubis, Wu & Zhang 2019, Sections 2-3) and ease.ml/ci (Renggli et al.
2019, Sections 2-3) *hold* the test set: a developer submits a model's predictions and
gets back only a signal, never the test score, while the system counts the steps,
enforces the budget the plan was sized for and asks for a new test set when it is used
up.  Every operation here validates its input, opens one transaction on the
:class:`~meter_dashboard.testsets.store.Store` (locking the test set's row), computes
what to answer with the models' own code (:mod:`.signals`), writes the history and
answers from an explicit allow-list of fields.

Who may do what (:class:`~.access.Caller`): ``owner`` holds the store itself (the CLI and
notebooks given a store URL) and may do everything; ``admin`` holds the test set's admin
token (shown once at creation): tokens, reverts, retirement, the full history;
``tenant`` holds a tenant token: submissions and its own history; ``public`` has no token
(the page without one, ``GET /api/testsets``): a test set's state and steps only.  What
each sees is decided in one place, :func:`.access.disclose`.  Test scores, ease.ml/ci's
n, o, d and the labels are released to anyone with a token only after the test set
retires (Section 3.1: "the old test set can be replaced by and released to the developer").

Errors: :class:`~meter_dashboard.core.validation.InputError` for bad input (CLI exit 2,
HTTP 400), :class:`NotFound` (404), :class:`Unauthorized` (401), :class:`Forbidden`
(403) and :class:`Refused` (409: the budget is used up, the test set retired, a revert
the plan does not have).  No message ever holds a label, a score or a token.

References
----------
Hubis, Wu & Zhang, ease.ml/meter (2019), Sections 3.1, 4.4, 5.2, 5.3.
Renggli et al., ease.ml/ci (SysML 2019), Sections 2-3.
"""
from __future__ import annotations

import io
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from ..core.validation import InputError, check_probability, raw
from . import files, security, signals
from .errors import Abandoned, Forbidden, KeyReused, NotFound, RateLimited, Refused, ServiceError, Unauthorized
from .once import Once, check_idempotency_key, check_share, replay, tenant_share
from .alarms import ci_alarms, signal_alarm, status_alarms, visible_alarms
from .access import OWNER, PUBLIC, VIEWER, Caller, disclose
from .settings import CISettings, MeterSettings, Settings, as_settings, settings_from_json, settings_json
from .store import Store

__all__ = [
    "Caller", "OWNER", "PUBLIC", "VIEWER", "ServiceError", "Refused", "RateLimited", "Unauthorized", "Forbidden",
    "NotFound", "KeyReused", "Abandoned", "submitter", "check_submission", "check_idempotency_key", "tenant_share",
    "authenticate", "create", "issue_token", "submit", "status", "revert", "retire", "export", "release_labels",
    "list_testsets", "versions", "check_name", "check_tenant",
]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_TENANT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
DEFAULT_TENANT = "default"




# ============================================================================ small checks
def check_name(name) -> str:
    """A test set's name: 1-64 letters, digits, '.', '_' or '-' (it appears in URLs)."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise InputError("NAME", "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
    return name


def check_tenant(tenant) -> str:
    if not isinstance(tenant, str) or not _TENANT_RE.match(tenant):
        raise InputError("tenant", "1-64 letters, digits, '.', '_', '@', '+' or '-', starting with a letter or digit",
                         tenant)
    return tenant


def _iso(t) -> str | None:
    return None if t is None else datetime.fromtimestamp(float(t), tz=timezone.utc).isoformat(timespec="seconds")


def _row_or_404(row, name: str):
    if row is None:
        raise NotFound("NAME", "the name of a guarded test set in the store", name)
    return row


def _require_admin(caller: Caller, action: str) -> None:
    if not caller.is_admin:
        raise Forbidden(f"only the test set's admin token may {action}")


# ============================================================================ tokens
def authenticate(store: Store, name: str, token) -> Caller:
    """The :class:`Caller` a token stands for on test set ``name``; :class:`Unauthorized` otherwise.

    Every failure (no token, a malformed one, an unknown key, a wrong secret, a token of
    another test set, a revoked token) gets the same message and costs the same digest.
    A token whose stored hash is of the former scheme (scrypt) has it rewritten as
    SHA-256 once it is verified (the store migrates in place, token by token).
    """
    parts = security.split_token(token)
    row = None
    if parts is not None:
        with store.read() as conn:
            row = store.find_token(conn, parts[0])
    ok = security.verify_secret(parts[1] if parts else None, row["hash"] if row is not None else None)
    if not ok or parts is None or row is None or row["revoked"] or row["testset_name"] != name:
        raise Unauthorized(f"a valid token for test set {name!r} is needed (Authorization: Bearer TOKEN)")
    if security.needs_rehash(row["hash"]):
        with store.write() as conn:
            store.replace_token_hash(conn, parts[0], row["hash"], security.hash_secret(parts[1]))
    return Caller(row["role"], row["tenant"])


def issue_token(store: Store, name: str, tenant: str, caller: Caller = OWNER) -> dict:
    """A new tenant token (shown once): ``{"name", "tenant", "token"}``."""
    _require_admin(caller, "issue tokens")
    name, tenant = check_name(name), check_tenant(tenant)
    token, key_id, hashed = security.new_token()
    with store.write() as conn:
        row = _row_or_404(store.lock_testset(conn, name), name)
        store.insert_token(conn, row["id"], key_id, "tenant", tenant, hashed)
        store.update_testset(conn, row["id"])
    return disclose("token", {"name": name, "tenant": tenant, "token": token}, caller)


# ============================================================================ create
def create(store: Store, name: str, labels, settings: Settings | dict, *, baseline=None,
           allow_smaller: bool = False) -> dict:
    """Register a guarded test set: ``{"name", "mode", "labels", "needed", "supported", "admin_token"}``.

    Parameters
    ----------
    labels : path, bytes, file object or LabelSet
        ``id,label`` (any class names).
    settings : MeterSettings, CISettings or dict
        From :func:`.signals.meter_settings` or :func:`.signals.ci_settings` (a settings dictionary is
        read by :func:`.settings.as_settings`).
    baseline : predictions, optional
        ease.ml/ci: the deployed model's predictions (the first old model o).
    allow_smaller : bool
        Accept fewer labels than the plan needs, recording what they support.
    """
    name = check_name(name)
    settings = as_settings(settings)
    label_set = labels if isinstance(labels, files.LabelSet) else files.read_labels(labels)
    n = len(label_set)
    needed = signals.needed_labels(settings)
    if n < needed and not allow_smaller:
        what = (f"the {settings.meter} meter's count" if isinstance(settings, MeterSettings)
                else "the ease.ml/ci count")
        raise InputError("labels", f"at least the {needed:,} examples the plan needs ({what}; allow smaller test sets "
                         f"with --allow-smaller to record the tolerance {n:,} labels support)", raw(f"{n:,} examples"))
    supported = signals.supported(settings, n) if n < needed else None
    if isinstance(settings, CISettings) and (baseline is not None) != settings.baseline:
        raise InputError("baseline", "given exactly when the settings say so", raw("a mismatch"))
    aligned_baseline = None
    if baseline is not None:
        aligned_baseline = _align(label_set, files.read_predictions(baseline, parameter="baseline"), "baseline")
    token, key_id, hashed = security.new_token()
    ids_blob = files.pack_strings(label_set.ids, level=1)
    codes_blob = _compress(label_set.codes.astype("<i4").tobytes())
    with store.write() as conn:
        if store.get_testset(conn, name) is not None:
            raise InputError("NAME", "a name no other test set in the store uses", name)
        testset_id = store.insert_testset(
            conn, name=name, mode=settings.mode, settings=settings_json(settings), size=n, needed=needed, supported=supported,
            labels_sha256=label_set.sha256, active_step=0 if aligned_baseline is not None else None)
        store.insert_labels(conn, testset_id, ids_blob, codes_blob, label_set.classes)
        store.insert_token(conn, testset_id, key_id, "admin", None, hashed)
        if aligned_baseline is not None:
            store.save_active_predictions(conn, testset_id, 0, files.pack_strings(aligned_baseline))
    return disclose("created", {"name": name, "mode": settings.mode, "labels": n, "needed": needed,
                                "supported": supported, "admin_token": token}, OWNER)


def _compress(data: bytes) -> bytes:
    import zlib

    return zlib.compress(data, 1)


# ============================================================================ the hidden labels
_LABELS: OrderedDict = OrderedDict()
_LABELS_LOCK = threading.Lock()


@dataclass(frozen=True, eq=False)
class _Labels:
    ids: np.ndarray
    index: object  # pandas.Index of ids
    codes: np.ndarray
    classes: tuple


def _labels(store: Store, row) -> _Labels:
    """The test set's labels (kept per process: they never change once written)."""
    import zlib

    import pandas as pd

    key = (store.display_url, int(row["id"]), row["labels_sha256"])
    with _LABELS_LOCK:
        if key in _LABELS:
            _LABELS.move_to_end(key)
            return _LABELS[key]
    with store.read() as conn:
        ids_blob, codes_blob, classes = store.load_labels(conn, row["id"])
    ids = files.unpack_strings(ids_blob)
    codes = np.frombuffer(zlib.decompress(codes_blob), dtype="<i4").astype(np.int32)
    value = _Labels(ids=ids, index=pd.Index(ids), codes=codes, classes=tuple(classes))
    with _LABELS_LOCK:
        _LABELS[key] = value
        while len(_LABELS) > 4:
            _LABELS.popitem(last=False)
    return value


def _align(label_set, predictions, parameter: str) -> np.ndarray:
    import pandas as pd

    index = getattr(label_set, "index", None)
    if index is None:
        index = pd.Index(label_set.ids)
    return files.align(label_set.ids, index, predictions, parameter=parameter)


def _correct(labels: _Labels, aligned: np.ndarray) -> np.ndarray:
    """Per example: is the prediction the label?  (An unknown class is wrong.)"""
    import pandas as pd

    codes, uniques = pd.factorize(aligned)
    lookup = {c: k for k, c in enumerate(labels.classes)}
    mapped = np.asarray([lookup.get(u, -1) for u in uniques], dtype=np.int64)
    return mapped[codes] == labels.codes


# ============================================================================ submit
def submitter(caller: Caller, tenant=None) -> str:
    """Who a submission by ``caller`` is for (a tenant token: its own tenant); :class:`Forbidden` for the admin."""
    if caller.role == "tenant":
        if tenant is not None and tenant != caller.tenant:
            raise Forbidden("a tenant token submits for its own tenant only")
        assert caller.tenant is not None  # a tenant token names its tenant (access.Caller)
        return caller.tenant
    if caller.role == "owner":
        return check_tenant(tenant if tenant is not None else DEFAULT_TENANT)
    raise Forbidden("submissions need a tenant token (the admin token does not submit)")


def _retired_message(row) -> str:
    then = ("its scores and labels are released" if row["released_at"] is not None else
            "its admin may release its scores and labels (testset retire, POST .../retire)")
    return (f"test set {row['name']!r} is retired ({row['retired_reason'] or 'retired'}) and accepts no more "
            f"submissions: draw a new test set; {then}")


def submit(store: Store, name: str, predictions, val_accuracy=None, caller: Caller = OWNER, *, tenant=None,
           idempotency_key=None, proceed=None) -> dict:
    """Score a model on the hidden labels and answer with the signal only.

    Parameters
    ----------
    predictions : path, bytes, file object, mapping ``{id: prediction}``, Series or DataFrame
        One prediction per test example id.
    val_accuracy : float
        The model's accuracy on the developer's own validation set (ease.ml/meter; optional
        in ease.ml/ci mode).
    caller : Caller
        A tenant (its token's tenant submits) or the store's owner (``tenant`` names who).
    idempotency_key : str, optional
        The client's ``Idempotency-Key``: a submission with a key this tenant used before on this
        test set returns the answer given then and spends nothing (:class:`KeyReused` if the
        predictions or the validation accuracy differ).  Written in the step's own transaction.
    proceed : callable, optional
        Asked just before the step's transaction commits; False gives it up (:class:`Abandoned`,
        nothing written): a server that is stopping spends no step it could not answer.

    Returns
    -------
    dict
        Meter: ``step``, ``signal`` (the signal the meter reports: the incremental one for
        the incremental meter), ``incremental_signal``, ``range``, ``epsilon``,
        ``steps_used``, ``steps_left``, ``alarms``, ...; ci: ``step``, ``passed``
        (True/False, or None while adaptivity ``none`` hides results), ``steps_left``,
        ``alarms``.  Never the test score.

    Raises
    ------
    Refused
        The test set is retired or the step is beyond the budget (of T or the tenant's share).
    """
    name = check_name(name)
    who = submitter(caller, tenant)
    key = None if idempotency_key is None else check_idempotency_key(idempotency_key)
    preds = files.read_predictions(predictions)
    with store.read() as conn:
        row = _row_or_404(store.get_testset(conn, name), name)
        seen = None if key is None else store.find_idempotent(conn, row["id"], who, key)
    if row["status"] != "active" and seen is None:
        raise Refused(_retired_message(row))
    settings = settings_from_json(row["settings"])
    if isinstance(settings, MeterSettings) and val_accuracy is None:
        raise InputError("val_accuracy", "given: the model's accuracy on your validation set, in [0, 1] "
                         "(ease.ml/meter's signal compares it with the hidden test score)", raw("nothing"))
    if val_accuracy is not None:
        val_accuracy = check_probability("val_accuracy", val_accuracy, closed=True)
    labels = _labels(store, row)
    aligned = _align(labels, preds, "predictions")
    correct = _correct(labels, aligned)
    digest = files.predictions_hash(aligned)
    if seen is not None and key is not None:
        return replay(seen, digest, val_accuracy, key)
    once = Once(key, digest, val_accuracy, caller, proceed)
    if isinstance(settings, MeterSettings):
        return _submit_meter(store, name, settings, who, val_accuracy, int(correct.sum()), digest, caller, once)
    return _submit_ci(store, name, settings, who, val_accuracy, labels, aligned, correct, digest, caller, once)


def _open_step(store, conn, name: str, settings: Settings, who: str, caller: Caller, once: Once):
    """The test set's row, locked for a submission, and the first answer when this is a retry (then
    nothing else is checked); else the test set is active and the tenant within its rate."""
    row = _row_or_404(store.lock_testset(conn, name), name)
    answered = once.seen(store, conn, row, who)
    if answered is None:
        if row["status"] != "active":
            raise Refused(_retired_message(row))
        _check_rate(store, conn, row, settings, who, caller)
    return row, answered


def _submit_meter(store, name, settings: MeterSettings, who, val_accuracy, correct: int, digest: str, caller, once) -> dict:
    with store.write() as conn:
        row, answered = _open_step(store, conn, name, settings, who, caller, once)
        if answered is not None:
            return answered
        n = int(row["size"])
        step = int(row["steps_used"]) + 1
        history = [dict(r) for r in store.history(conn, row["id"])]
        used = sum(1 for r in history if r["tenant"] == who)
        share = check_share(store, conn, row, settings, who, used, caller)
        new = {"step": step, "tenant": who, "val_accuracy": val_accuracy, "test_accuracy": correct / n,
               "reverted": False}
        result = signals.replay_history(settings, history + [new], n)
        if not bool(result.within_budget[-1]):
            found = [a for a in result.alarms if a.index == len(history) and a.kind in _BEYOND]
            raise Refused(_refusal(found[0] if found else None, name, who, settings))
        d = result.step(-1)
        store.insert_submission(
            conn, testset_id=row["id"], step=step, tenant=who, val_accuracy=val_accuracy,
            test_accuracy=correct / n, signal=d["signal"], incremental_signal=d["incremental_signal"],
            epsilon=d["epsilon"], reverted=False, predictions_sha256=digest)
        retire_now = step >= settings.steps
        store.update_testset(conn, row["id"], steps_used=step, **_retirement(retire_now, f"budget used up at step {step}"))
        out = _meter_answer(name, settings, result, who, retired=retire_now)
        if share is not None:  # the default share bounds what the plan alone would leave
            left = share - used - 1
            out["tenant_steps_left"] = left if out["tenant_steps_left"] is None else min(out["tenant_steps_left"], left)
        return once.commit(store, conn, row, who, step, out)


_BEYOND = ("tenant_not_planned", "tenant_beyond_budget", "beyond_budget")


def _refusal(alarm, name: str, tenant: str, settings: MeterSettings) -> str:
    """Why a step beyond the budget is refused (the replay's alarm, said before the fact)."""
    T = settings.steps
    if alarm is not None and alarm.kind == "tenant_beyond_budget":
        share = alarm.details["tenant_steps"]
        return (f"tenant {tenant} has used all {share} steps of their share of test set {name!r}: the guarantee "
                f"would not cover another step (the budget T = {T} is split {list(settings.tenant_steps)})")
    if alarm is not None and alarm.kind == "tenant_not_planned":
        k = len(settings.tenant_steps)
        return (f"the plan of test set {name!r} shares T = {T} among {k} tenants, who already submitted; tenant "
                f"{tenant} would be tenant {k + 1}, whose steps the guarantee does not cover")
    return f"test set {name!r} has used its budget of T = {T} steps"


def _retirement(now: bool, reason: str) -> dict:
    return {"status": "retired", "retired_at": time.time(), "retired_reason": reason} if now else {}


def check_submission(store: Store, name: str, caller: Caller, idempotency_key=None) -> int:
    """Whether ``caller`` may submit to ``name`` now, before anything is read: :class:`Forbidden` (the
    admin token), :class:`Refused` (retired), :class:`RateLimited` (a tenant over the test set's
    submissions per hour).  All are checked again, authoritatively, inside the submission's
    transaction.  A retry (an ``idempotency_key`` this tenant used on the test set) is let through:
    it gets its first answer whatever happened since.  Returns the test set's number of labels (a
    submission holds at most that many)."""
    who = submitter(caller)
    name = check_name(name)
    key = None if idempotency_key is None else check_idempotency_key(idempotency_key)
    with store.read() as conn:
        row = _row_or_404(store.get_testset(conn, name), name)
        if key is not None and store.find_idempotent(conn, row["id"], who, key) is not None:
            return int(row["size"])
        if row["status"] != "active":
            raise Refused(_retired_message(row))
        _check_rate(store, conn, row, settings_from_json(row["settings"]), caller.tenant, caller)
    return int(row["size"])


def _check_rate(store, conn, row, settings: Settings, tenant: str | None, caller: Caller) -> None:
    """A tenant token over the test set's ``submissions_per_hour`` (in the last 3,600 s) is refused (429)."""
    cap = settings.submissions_per_hour
    if cap is None or caller.role != "tenant":
        return
    assert tenant is not None  # a tenant token's tenant
    now = time.time()
    times = store.submission_times(conn, row["id"], tenant, since=now - 3600)
    if len(times) >= cap:
        wait = max(1, int(times[len(times) - cap] + 3600 - now + 1))
        raise RateLimited(f"tenant {tenant} has made the {cap} submission(s) per hour test set {row['name']!r} "
                          f"allows; the next one is accepted in {wait} s", wait)




def _meter_answer(name, settings: MeterSettings, result, tenant, *, retired: bool) -> dict:
    """The submit answer (an allow-list: no score, no empirical overfitting)."""
    d = result.step(-1)
    shown = settings.shown(d["signal"], d["incremental_signal"])
    T = settings.steps
    tenant_left = None if d["tenant_budget"] is None else int(d["tenant_budget"]) - int(d["tenant_steps_used"])
    return {
        "name": name, "mode": "meter", "meter": settings.meter, "step": int(d["step"]), "tenant": tenant,
        "signal": int(shown), "incremental_signal": int(d["incremental_signal"]),
        "range": [float(v) for v in result.range_of(int(shown))], "epsilon": float(d["epsilon"]),
        "supported_epsilon": (float(d["supported_epsilon"]) if result.short_of_labels
                              and d["supported_epsilon"] is not None else None),
        "steps_used": int(d["steps_used"]), "steps_left": max(T - int(d["steps_used"]), 0),
        "tenant_steps_left": tenant_left, "retired": retired,
        "alarms": (visible_alarms(result, tenant, len(result) - 1, active=not retired)
                   + signal_alarm(settings, int(d["step"]), int(shown))),
    }


def _active_model(store, conn, row, labels: _Labels):
    """``(step, aligned predictions, correct count)`` of the accepted model (cached per process)."""
    step = row["active_step"]
    if step is None:
        return None
    key = (store.display_url, int(row["id"]), int(step), row["labels_sha256"], "active")
    with _LABELS_LOCK:
        if key in _LABELS:
            return _LABELS[key]
    found = store.load_active_predictions(conn, row["id"])
    aligned = files.unpack_strings(found[1])
    value = (int(step), aligned, int(_correct(labels, aligned).sum()))
    with _LABELS_LOCK:
        _LABELS[key] = value
        while len(_LABELS) > 6:
            _LABELS.popitem(last=False)
    return value


def _submit_ci(store, name, settings: CISettings, who, val_accuracy, labels, aligned, correct, digest, caller, once) -> dict:
    n = int(correct.size)
    with store.write() as conn:
        row, answered = _open_step(store, conn, name, settings, who, caller, once)
        if answered is not None:
            return answered
        check_share(store, conn, row, settings, who, len(store.submission_times(conn, row["id"], who, 0.0)), caller)
        step = int(row["steps_used"]) + 1
        active = _active_model(store, conn, row, labels)
        differ = None if active is None else int(np.count_nonzero(active[1] != aligned))
        ev = signals.ci_evaluation(settings, int(correct.sum()), None if active is None else active[2], differ, n)
        store.insert_submission(
            conn, testset_id=row["id"], step=step, tenant=who, val_accuracy=val_accuracy,
            test_accuracy=float(correct.mean()), predictions_sha256=digest, reverted=False,
            ci_n=float(correct.mean()), ci_o=None if active is None else active[2] / n,
            ci_d=None if differ is None else differ / n, passed=bool(ev.passed), truth=ev.truth)
        changes = {"steps_used": step}
        if ev.passed:
            store.save_active_predictions(conn, row["id"], step, files.pack_strings(aligned))
            changes["active_step"] = step
        first_change = settings.adaptivity == "firstChange" and ev.passed
        retire_now = step >= settings.steps or first_change
        reason = f"first change at commit {step}" if first_change else f"budget used up at commit {step}"
        store.update_testset(conn, row["id"], **changes, **_retirement(retire_now, reason))
        out = _ci_answer(name, settings, step, who, bool(ev.passed), retired=retire_now, first_change=first_change,
                         size=n, needed=int(row["needed"]))
        return once.commit(store, conn, row, who, step, out)


def _ci_answer(name, settings: CISettings, step, tenant, passed: bool, *, retired, first_change, size,
               needed) -> dict:
    released = settings.adaptivity != "none" or retired
    H = settings.steps
    return {
        "name": name, "mode": "ci", "step": step, "tenant": tenant,
        "passed": passed if released else None,
        "signal": ("pass" if passed else "fail") if released else None,
        "steps_used": step, "steps_left": max(H - step, 0), "retired": retired,
        "alarms": ci_alarms(settings, step, retired, first_change, size, needed),
    }


# ============================================================================ status
def _history_row(r, settings: Settings, released: bool, active: bool) -> dict:
    """One history row for a response: public fields, plus the scores once released."""
    out = {"time": _iso(r["created_at"]), "tenant": r["tenant"], "step": int(r["step"]),
           "val_accuracy": None if r["val_accuracy"] is None else float(r["val_accuracy"]),
           "reverted": bool(r["reverted"]), "predictions_sha256": r["predictions_sha256"]}
    if isinstance(settings, MeterSettings):
        out.update(signal=settings.shown(r["signal"], r["incremental_signal"]), incremental_signal=int(r["incremental_signal"]), epsilon=float(r["epsilon"]))
        if released:
            out.update(regular_signal=int(r["signal"]), test_accuracy=float(r["test_accuracy"]),
                       empirical_overfitting=round(abs(float(r["val_accuracy"]) - float(r["test_accuracy"])), 12))
    else:
        show = not active or settings.adaptivity != "none"
        out.update(passed=bool(r["passed"]) if show else None)
        if released:
            out.update(n=r["ci_n"], o=r["ci_o"], d=r["ci_d"], truth=r["truth"], test_accuracy=float(r["test_accuracy"]))
    return out


def status(store: Store, name: str, caller: Caller = PUBLIC) -> dict:
    """The test set's state and the history the caller may see (:func:`.access.disclose`).

    Without a token: the state and the steps used and left.  A token: the plan, n, the
    labels needed, alarms (``failing``: any of level alarm), and per step time, tenant,
    step, validation score, signal(s), eps, reverted and the predictions' hash; a tenant
    sees its own steps only.  Test scores (and ease.ml/ci's n, o, d) are added once the
    test set retires, for callers with a token (or the owner).
    """
    name = check_name(name)
    if not caller.has_token:
        with store.read() as conn:
            row = _row_or_404(store.get_testset(conn, name), name)
        return disclose("status", _summary(row, settings_from_json(row["settings"])), caller)
    with store.read() as conn:
        row = _row_or_404(store.get_testset(conn, name), name)
        history = [dict(r) for r in store.history(conn, row["id"])]
        tenants = store.tenants(conn, row["id"]) if caller.is_admin else None
    settings = settings_from_json(row["settings"])
    active = row["status"] == "active"
    released = not active and caller.has_token and (row["released_at"] is not None or caller.role == "owner")
    own = caller.tenant if caller.role == "tenant" else None
    alarms = status_alarms(row, settings, history, own, active)
    visible = [r for r in history if own is None or r["tenant"] == own]
    out = _summary(row, settings)
    out.update(alarms=alarms, history=[_history_row(r, settings, released, active) for r in visible],
               released=released)
    if tenants is not None:
        out["tenants"] = tenants
    return disclose("status", out, caller)


def _summary(row, settings: Settings) -> dict:
    import json

    T = settings.steps
    return {
        "name": row["name"], "mode": row["mode"], "status": row["status"], "created": _iso(row["created_at"]),
        "retired_at": _iso(row["retired_at"]), "retired_reason": row["retired_reason"], "labels": int(row["size"]),
        "needed": int(row["needed"]), "supported": json.loads(row["supported"]) if row["supported"] else None,
        "settings": settings.to_dict(), "steps": T, "steps_used": int(row["steps_used"]),
        "steps_left": max(T - int(row["steps_used"]), 0), "version": int(row["version"]),
    }


def list_testsets(store: Store, caller: Caller = OWNER) -> list:
    """Every test set as ``caller`` may see it: name, mode, status, steps used of T and left
    (everyone); labels, needed, created, version (the owner)."""
    with store.read() as conn:
        rows = store.list_testsets(conn)
    return [disclose("summary", _summary(row, settings_from_json(row["settings"])), caller) for row in rows]


def versions(store: Store) -> dict:
    """``{name: version}``: changes whenever a test set changes (pages poll this)."""
    with store.read() as conn:
        return store.versions(conn)


# ============================================================================ revert and retire
def revert(store: Store, name: str, caller: Caller = OWNER) -> dict:
    """Mark the latest step reverted ("git revert HEAD", Section 5.3), if the plan has a revert
    fixed in advance at that step; :class:`Refused` otherwise."""
    _require_admin(caller, "revert a step")
    name = check_name(name)
    with store.write() as conn:
        row = _row_or_404(store.lock_testset(conn, name), name)
        settings = settings_from_json(row["settings"])
        if not isinstance(settings, MeterSettings):
            raise Refused("reverts belong to ease.ml/meter plans; an ease.ml/ci test set keeps its last accepted model")
        if row["status"] != "active":
            raise Refused(_retired_message(row))
        history = [dict(r) for r in store.history(conn, row["id"])]
        if not history:
            raise Refused(f"test set {name!r} has no step to revert yet")
        last = history[-1]
        if last["reverted"]:
            raise Refused(f"step {last['step']} is already reverted")
        trial = history[:-1] + [{**last, "reverted": True}]
        result = signals.replay_history(settings, trial, int(row["size"]))
        if any(a.kind == "unplanned_reverts" for a in result.notes):
            planned = ", ".join(str(p) for p in settings.reverts) or "none"
            raise Refused(f"the plan has no revert left at step {last['step']} (reverts fixed in advance at step "
                          f"positions: {planned}); a revert the plan did not count on has no saving (Section 5.3)")
        store.mark_reverted(conn, row["id"], int(last["step"]))
        store.update_testset(conn, row["id"])
    return disclose("revert", {"name": name, "step": int(last["step"]), "reverted": True}, caller)


def retire(store: Store, name: str, caller: Caller = OWNER, *, reason: str = "retired by the admin") -> dict:
    """Retire the test set now and release its scores and labels to its tokens: the admin's act, never
    automatic.  A test set that retired by itself (its budget used up, ease.ml/ci's first change)
    takes no more submissions but keeps its labels hidden until this is called."""
    _require_admin(caller, "retire the test set")
    name = check_name(name)
    with store.write() as conn:
        row = _row_or_404(store.lock_testset(conn, name), name)
        if row["released_at"] is not None:
            raise Refused(f"test set {name!r} is already retired ({row['retired_reason']}) and released")
        if row["status"] == "active":
            store.update_testset(conn, row["id"], **_retirement(True, reason), released_at=time.time())
        else:
            reason = row["retired_reason"] or reason
            store.update_testset(conn, row["id"], released_at=time.time())
    return disclose("retire", {"name": name, "status": "retired", "steps_used": int(row["steps_used"]),
                               "reason": reason}, caller)


# ============================================================================ release after retirement
def _released_row(store: Store, name: str, caller: Caller, what: str):
    if not caller.has_token:
        raise Unauthorized(f"a token for test set {name!r} is needed to download {what}")
    with store.read() as conn:
        row = _row_or_404(store.get_testset(conn, name), name)
        history = [dict(r) for r in store.history(conn, row["id"])]
    if row["status"] == "active":
        raise Refused(f"test set {name!r} is active: {what} are released only once it retires "
                      f"(the guarantee rests on keeping them hidden until then)")
    if row["released_at"] is None and caller.role != "owner":  # the store's owner holds the labels anyway
        raise Refused(f"test set {name!r} is retired ({row['retired_reason']}) but {what} are not released: "
                      f"releasing them is its admin's act (testset retire, POST .../retire)")
    return row, history


def export(store: Store, name: str, caller: Caller = OWNER, *, format: str = "csv") -> dict:
    """The history as a trace (after retirement): ``{"name", "format", "trace", "test_size", "settings"}``.

    Meter: a development trace (``step, tenant, val_accuracy, test_accuracy, reverted``)
    that /session and :func:`~meter_dashboard.session.model.replay` read (JSON carries
    ``test_size``).  ci: a commit trace (``commit, n, o, d``) that /ci replays.
    """
    import json

    name = check_name(name)
    if format not in ("csv", "json"):
        raise InputError("format", "'csv' or 'json'", format)
    row, history = _released_row(store, name, caller, "the test scores")
    settings = settings_from_json(row["settings"])
    meter = isinstance(settings, MeterSettings)
    if meter:
        records = [{"step": int(r["step"]), "tenant": r["tenant"], "val_accuracy": float(r["val_accuracy"]),
                    "test_accuracy": float(r["test_accuracy"]), "reverted": bool(r["reverted"])} for r in history]
        columns = ["step", "tenant", "val_accuracy", "test_accuracy", "reverted"]
    else:
        records = [{"commit": f"commit {int(r['step'])}", "n": r["ci_n"], "o": r["ci_o"], "d": r["ci_d"]}
                   for r in history]
        columns = ["commit", "n", "o", "d"]
    if format == "json":
        text = json.dumps({"test_size": int(row["size"]), "steps": records} if meter
                          else {"commits": records}, indent=1)
    else:
        text = _csv(columns, records)
    return disclose("export", {"name": name, "format": format, "trace": text, "test_size": int(row["size"]),
                               "settings": settings.to_dict()}, caller)


def _csv(columns, records) -> str:
    import csv

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for r in records:
        writer.writerow(["" if r[c] is None else (repr(r[c]) if isinstance(r[c], float) else
                                                  ("true" if r[c] is True else "false" if r[c] is False else r[c]))
                         for c in columns])
    return buffer.getvalue()


def release_labels(store: Store, name: str, caller: Caller = OWNER) -> str:
    """The labels as ``id,label`` CSV text, once the test set has retired."""
    name = check_name(name)
    row, _ = _released_row(store, name, caller, "the labels")
    labels = _labels(store, row)
    classes = np.asarray(labels.classes, dtype=object)
    return _csv(["id", "label"], [{"id": i, "label": c} for i, c in zip(labels.ids.tolist(),
                                                                        classes[labels.codes].tolist())])
