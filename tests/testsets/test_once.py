"""Steps are spent once and only by the admin's rules (issue 31): an Idempotency-Key makes a retry free, a
tenant token has an equal share of T by default, and releasing the labels is the admin's act, never automatic."""
from __future__ import annotations

import pytest

from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.store import Store

EPS = [0.02, 0.04, 0.06, 0.08, 0.1]


def _meter(steps=4, **kw):
    return G.meter_settings(epsilon=EPS, delta=0.1, steps=steps, **kw)


def test_a_retry_with_the_same_key_gets_the_first_answer_and_spends_nothing(store, data):
    S.create(store, "k", data.labels_csv(), _meter(), allow_smaller=True)
    ann = S.authenticate(store, "k", S.issue_token(store, "k", "ann")["token"])
    preds = data.mapping(data.predictions(900))
    first = S.submit(store, "k", preds, 0.97, ann, idempotency_key="req-1")
    again = S.submit(store, "k", preds, 0.97, ann, idempotency_key="req-1")
    assert again == first and S.status(store, "k", S.OWNER)["steps_used"] == 1
    with pytest.raises(S.KeyReused, match="Idempotency-Key 'req-1' was used for a different submission .step 1"):
        S.submit(store, "k", data.mapping(data.predictions(800)), 0.97, ann, idempotency_key="req-1")
    with pytest.raises(S.KeyReused):
        S.submit(store, "k", preds, 0.96, ann, idempotency_key="req-1")  # the same predictions, another val
    second = S.submit(store, "k", preds, 0.97, ann, idempotency_key="req-2")  # a new key: a new step
    assert second["step"] == 2
    # keys belong to a tenant: bob's "req-1" is his own
    bob = S.authenticate(store, "k", S.issue_token(store, "k", "bob")["token"])
    assert S.submit(store, "k", preds, 0.97, bob, idempotency_key="req-1")["step"] == 3
    with pytest.raises(Exception, match="Idempotency-Key must be 1-128"):
        S.submit(store, "k", preds, 0.97, ann, idempotency_key="no spaces allowed")
    assert S.status(store, "k", S.OWNER)["steps_used"] == 3


def test_a_retry_after_the_step_that_retired_the_set_still_gets_its_answer(store, data):
    S.create(store, "last", data.labels_csv(), _meter(steps=1), allow_smaller=True)
    ann = S.authenticate(store, "last", S.issue_token(store, "last", "ann")["token"])
    preds = data.mapping(data.predictions(900))
    first = S.submit(store, "last", preds, 0.97, ann, idempotency_key="only")
    assert first["retired"]
    assert S.check_submission(store, "last", ann, "only") == data.n  # let through before the body is read
    assert S.submit(store, "last", preds, 0.97, ann, idempotency_key="only") == first
    with pytest.raises(S.Refused, match="is retired"):
        S.check_submission(store, "last", ann, "another")


def test_an_abandoned_submission_writes_nothing(store, data):
    S.create(store, "ab", data.labels_csv(), _meter(), allow_smaller=True)
    ann = S.authenticate(store, "ab", S.issue_token(store, "ab", "ann")["token"])
    preds = data.mapping(data.predictions(900))
    with pytest.raises(S.Abandoned, match="not recorded .no step spent."):
        S.submit(store, "ab", preds, 0.97, ann, idempotency_key="x", proceed=lambda: False)
    status = S.status(store, "ab", S.OWNER)
    assert status["steps_used"] == 0 and status["history"] == []
    assert S.submit(store, "ab", preds, 0.97, ann, idempotency_key="x")["step"] == 1  # the key was not kept


@pytest.mark.parametrize("mode", ["meter", "ci"])
def test_one_tenant_cannot_spend_every_step_and_nothing_is_released_by_itself(store, data, mode):
    if mode == "meter":
        settings = _meter(steps=4)
    else:
        settings = G.ci_settings(condition="n > 0.5 +/- 0.05", reliability=0.99, adaptivity="full", steps=4)
    S.create(store, "t", data.labels_csv(), settings, allow_smaller=True)
    tokens = {t: S.authenticate(store, "t", S.issue_token(store, "t", t)["token"]) for t in ("eve", "ann")}
    eve, ann = tokens["eve"], tokens["ann"]
    answers = [S.submit(store, "t", data.mapping(data.predictions(900 + k)), 0.97, eve) for k in range(2)]
    if mode == "meter":
        assert [a["tenant_steps_left"] for a in answers] == [1, 0]  # an equal share: ceil(4 / 2) = 2
    with pytest.raises(S.Refused, match="tenant eve has used its 2 step.s., an equal share of test set 't'"):
        S.submit(store, "t", data.mapping(data.predictions(700)), 0.97, eve)
    for k in range(2):  # ann's steps stay hers
        last = S.submit(store, "t", data.mapping(data.predictions(600 + k)), 0.97, ann)
    assert last["retired"] and S.status(store, "t", S.OWNER)["status"] == "retired"
    # retired by itself (the budget used up): no tenant may download the labels or the scores
    for caller in (eve, ann):
        with pytest.raises(S.Refused, match="not released: releasing them is its admin's act"):
            S.release_labels(store, "t", caller)
        with pytest.raises(S.Refused, match="not released"):
            S.export(store, "t", caller)
        assert S.status(store, "t", caller)["released"] is False
    admin = S.Caller("admin", None)
    with pytest.raises(S.Forbidden):
        S.retire(store, "t", eve)
    out = S.retire(store, "t", admin)  # the admin releases them
    reason = "budget used up at " + ("step 4" if mode == "meter" else "commit 4")
    assert out["status"] == "retired" and out["reason"] == reason
    assert S.release_labels(store, "t", eve).startswith("id,label\n")
    assert S.status(store, "t", ann)["released"] is True
    with pytest.raises(S.Refused, match=f"already retired .{reason}. and released"):
        S.retire(store, "t", admin)


def test_a_store_written_before_release_was_separate_keeps_its_retired_sets_released(tmp_path, data):
    """Migration: an old store (no released_at column) opens; its retired sets stay released, active ones not."""
    import sqlite3

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    store = Store(url)
    S.create(store, "old", data.labels_csv(), _meter(), allow_smaller=True)
    S.create(store, "live", data.labels_csv(), _meter(), allow_smaller=True)
    S.retire(store, "old")
    store.dispose()
    with sqlite3.connect(tmp_path / "old.sqlite") as conn:  # as the previous version wrote it
        conn.execute("ALTER TABLE md_testsets DROP COLUMN released_at")
        conn.execute("DROP TABLE md_idempotency")
    store = Store(url)
    tenant = S.authenticate(store, "old", S.issue_token(store, "old", "ann")["token"])
    assert S.release_labels(store, "old", tenant).startswith("id,label\n")
    live = S.authenticate(store, "live", S.issue_token(store, "live", "ann")["token"])
    assert S.submit(store, "live", data.mapping(data.predictions(900)), 0.97, live, idempotency_key="a")["step"] == 1
    store.dispose()
