"""The guarded-test-set service on both backends: signals, budget, tenants, reverts, release.

Every signal is checked against :func:`meter_dashboard.session.model.replay` of the
exported history (the one implementation the session page uses), and every ease.ml/ci
answer against exact fractions computed here from the labels.
"""
from __future__ import annotations

import json
import re
from fractions import Fraction

import numpy as np
import pytest

from meter_dashboard.ci import evaluate
from meter_dashboard.core.validation import InputError
from meter_dashboard.meter.model import plan
from meter_dashboard.session.model import replay
from meter_dashboard.session.trace import read_trace
from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]
SUBMIT_KEYS = {"name", "mode", "meter", "step", "tenant", "signal", "incremental_signal", "range", "epsilon",
               "supported_epsilon", "steps_used", "steps_left", "tenant_steps_left", "retired", "alarms", "failing"}


def meter(**kw):
    values = dict(epsilon=EPS, delta=0.1, steps=8)
    values.update(kw)
    return G.meter_settings(**values)


def run_steps(store, data, name, caller, wrongs, vals, **kw):
    answers = []
    for wrong, val in zip(wrongs, vals):
        answers.append(S.submit(store, name, data.mapping(data.predictions(wrong)), val, caller, **kw))
    return answers


def test_meter_submissions_answer_the_replay_signals_and_never_the_score(store, data):
    created = S.create(store, "emo", data.labels_csv(), meter())
    assert created["labels"] == data.n and created["needed"] == 25_376  # the replay CLI's EmoContext count (README)
    assert created["admin_token"].startswith("mdt_") and created["supported"] is None
    alice = S.authenticate(store, "emo", S.issue_token(store, "emo", "alice")["token"])
    wrongs = [2400, 2700, 3000, 1500, 900, 2000, 3300, 2500]
    vals = [0.93, 0.92, 0.95, 0.94, 0.96, 0.931, 0.90, 0.905]
    answers = run_steps(store, data, "emo", alice, wrongs, vals)
    for k, a in enumerate(answers, start=1):
        assert set(a) == SUBMIT_KEYS and a["step"] == k and a["steps_left"] == 8 - k
        text = json.dumps(a)
        test_acc = 1 - wrongs[k - 1] / data.n
        assert repr(test_acc) not in text and f"{test_acc:.4f}" not in text and "test_accuracy" not in text
    assert answers[-1]["retired"] and [x["kind"] for x in answers[-1]["alarms"]] == ["budget_used_up"]
    with pytest.raises(S.Refused, match="is retired .budget used up at step 8. and accepts no more"):
        S.submit(store, "emo", data.mapping(data.predictions(100)), 0.9, alice)
    with pytest.raises(S.Refused, match="not released: releasing them is its admin's act"):
        S.export(store, "emo", alice)  # retired by itself: the scores stay hidden until the admin releases them
    S.retire(store, "emo")

    exported = S.export(store, "emo", alice)
    trace = read_trace(exported["trace"].encode(), format="csv")
    expected = replay(trace, ranges=[0, 0.005, 0.01, 0.02, 0.05, 1], epsilon=EPS, delta=0.1, steps=8,
                      test_size=data.n, variant="incremental")
    assert [a["signal"] for a in answers] == expected.incremental_signal.tolist()
    assert [a["incremental_signal"] for a in answers] == expected.incremental_signal.tolist()
    assert [a["epsilon"] for a in answers] == expected.epsilon.tolist()
    assert trace.test.tolist() == [1 - w / data.n for w in wrongs]  # released after retirement, exactly


def test_the_regular_meter_answers_each_steps_own_signal(store, data):
    S.create(store, "reg", data.labels_csv(), meter(meter="regular", epsilon=[0.02, 0.03, 0.04, 0.05, 0.06]))
    wrongs, vals = [3000, 1000, 2000], [0.92, 0.95, 0.93]
    answers = run_steps(store, data, "reg", S.OWNER, wrongs, vals, tenant="solo")
    S.retire(store, "reg")
    trace = read_trace(S.export(store, "reg", format="json")["trace"].encode())
    assert trace.test_size == data.n
    r = replay(trace, epsilon=[0.02, 0.03, 0.04, 0.05, 0.06], delta=0.1, steps=8, variant="regular")
    assert [a["signal"] for a in answers] == r.signal.tolist()
    assert [a["incremental_signal"] for a in answers] == r.incremental_signal.tolist()
    assert [a["range"] for a in answers] == [list(r.range_of(int(s))) for s in r.signal]


def test_too_small_is_refused_unless_allowed_and_then_records_the_supported_epsilon(store, data):
    settings = meter(delta=0.01, steps=10)  # needs 38,005 labels (Fig. 8, README); we hold 30,000
    with pytest.raises(InputError) as info:
        S.create(store, "small", data.labels_csv(), settings)
    assert str(info.value).startswith("labels must be at least the 38,005 examples the plan needs")
    assert str(info.value).endswith("got 30,000 examples")
    created = S.create(store, "small", data.labels_csv(), settings, allow_smaller=True)
    eps1 = plan(EPS, delta=0.01, steps=10, budget=data.n).min_epsilon["incremental"]  # the planner's inverse
    assert created["supported"]["epsilon"] == pytest.approx([eps1 * e / 0.01 for e in EPS], rel=1e-12)
    answer = S.submit(store, "small", data.mapping(data.predictions(1000)), 0.96)
    assert answer["supported_epsilon"] is not None
    assert [a["kind"] for a in answer["alarms"]] == ["test_set_too_small"]
    status = S.status(store, "small", S.OWNER)
    assert status["supported"] == created["supported"] and status["needed"] == 38_005


def test_tenant_shares_and_a_tenant_the_plan_does_not_cover(store, data):
    S.create(store, "two", data.labels_csv(), meter(steps=4, tenant_steps=[2, 2]))
    tokens = {t: S.authenticate(store, "two", S.issue_token(store, "two", t)["token"]) for t in ("ann", "bob", "cy")}
    a1 = S.submit(store, "two", data.mapping(data.predictions(3000)), 0.93, tokens["ann"])
    b1 = S.submit(store, "two", data.mapping(data.predictions(600)), 0.97, tokens["bob"])
    a2 = S.submit(store, "two", data.mapping(data.predictions(900)), 0.965, tokens["ann"])
    assert (a1["tenant_steps_left"], b1["tenant_steps_left"], a2["tenant_steps_left"]) == (1, 1, 0)
    with pytest.raises(S.Refused, match="tenant ann has used all 2 steps of their share of test set 'two'"):
        S.submit(store, "two", data.mapping(data.predictions(500)), 0.97, tokens["ann"])
    with pytest.raises(S.Refused, match="shares T = 4 among 2 tenants, who already submitted; tenant cy would be tenant 3"):
        S.submit(store, "two", data.mapping(data.predictions(500)), 0.97, tokens["cy"])
    b2 = S.submit(store, "two", data.mapping(data.predictions(700)), 0.96, tokens["bob"])
    assert b2["retired"] and b2["steps_used"] == 4
    # each tenant sees its own steps only; the incremental signal runs per tenant chain
    assert [r["step"] for r in S.status(store, "two", tokens["ann"])["history"]] == [1, 3]
    assert [r["step"] for r in S.status(store, "two", tokens["bob"])["history"]] == [2, 4]
    trace = read_trace(S.export(store, "two")["trace"].encode(), format="csv")
    r = replay(trace, epsilon=EPS, delta=0.1, steps=4, tenant_steps=[2, 2], tenants=2, test_size=data.n)
    assert [a1["signal"], b1["signal"], a2["signal"], b2["signal"]] == r.incremental_signal.tolist()


def test_reverts_only_where_the_plan_fixed_them(store, data):
    S.create(store, "tt", data.labels_csv(), meter(steps=5, reverts=[2]))
    first = S.submit(store, "tt", data.mapping(data.predictions(3000)), 0.902)  # gap 0.002: signal 1
    assert first["signal"] == 1
    with pytest.raises(S.Refused, match="the plan has no revert left at step 1 .reverts fixed in advance at step "
                                        "positions: 2."):
        S.revert(store, "tt")
    second = S.submit(store, "tt", data.mapping(data.predictions(400)), 0.999)  # gap 0.0123: signal 3
    assert second["signal"] == 3 and [a["kind"] for a in second["alarms"]] == []  # the revert is still due
    assert S.revert(store, "tt") == {"name": "tt", "step": 2, "reverted": True}
    with pytest.raises(S.Refused, match="step 2 is already reverted"):
        S.revert(store, "tt")
    third = S.submit(store, "tt", data.mapping(data.predictions(2900)), 0.905)  # gap 0.0017: signal 1
    # after the revert, step 2's worse signal no longer counts: the incremental signal is back to 1
    assert third["incremental_signal"] == third["signal"] == 1
    history = S.status(store, "tt", S.OWNER)["history"]
    assert [h["reverted"] for h in history] == [False, True, False]
    S.retire(store, "tt")
    trace = read_trace(S.export(store, "tt")["trace"].encode(), format="csv")
    r = replay(trace, epsilon=EPS, delta=0.1, steps=5, reverts=[2], test_size=data.n)
    assert [h["signal"] for h in history] == r.incremental_signal.tolist()
    assert not [a for a in r.notes if a.kind == "unplanned_reverts"]


def test_status_hides_scores_until_retirement_and_only_then_releases_labels(store, data):
    created = S.create(store, "hid", data.labels_csv(), meter())
    admin = S.authenticate(store, "hid", created["admin_token"])
    S.submit(store, "hid", data.mapping(data.predictions(2000)), 0.93, tenant="alice")
    for caller in (S.VIEWER, admin, S.OWNER):
        status = S.status(store, "hid", caller)
        assert status["status"] == "active" and not status.get("released")
        assert "test_accuracy" not in json.dumps(status) and "regular_signal" not in json.dumps(status)
        assert repr(1 - 2000 / data.n) not in json.dumps(status)
    with pytest.raises(S.Refused, match="scores are released only once it retires"):
        S.export(store, "hid", admin)
    with pytest.raises(S.Refused, match="labels are released only once it retires"):
        S.release_labels(store, "hid", admin)
    S.retire(store, "hid", admin)
    assert "test_accuracy" not in json.dumps(S.status(store, "hid", S.VIEWER))  # the page never shows scores
    released = S.status(store, "hid", admin)
    assert released["released"] and released["history"][0]["test_accuracy"] == 1 - 2000 / data.n
    assert [a["kind"] for a in released["alarms"]] == ["retired"]
    assert S.release_labels(store, "hid", admin).encode() == data.labels_csv().replace(b"id,label\n", b"id,label\n")
    with pytest.raises(S.Unauthorized):
        S.export(store, "hid", S.VIEWER)


def test_tokens_roles_and_refusals(store, data):
    created = S.create(store, "tok", data.labels_csv(), meter())
    S.create(store, "other", data.labels_csv(), meter())
    other_admin = S.create(store, "third", data.labels_csv(), meter())["admin_token"]
    tenant = S.issue_token(store, "tok", "alice")["token"]
    for bad in (None, "", "Bearer x", tenant[:-1] + ("A" if tenant[-1] != "A" else "B"), other_admin,
                "mdt_" + "0" * 16 + "_" + "a" * 43, tenant + "x" * 300):
        with pytest.raises(S.Unauthorized, match="a valid token for test set 'tok' is needed"):
            S.authenticate(store, "tok", bad)
    with pytest.raises(S.Unauthorized):
        S.authenticate(store, "other", tenant)  # a tenant token of another test set
    admin = S.authenticate(store, "tok", created["admin_token"])
    alice = S.authenticate(store, "tok", tenant)
    assert admin == S.Caller("admin") and alice == S.Caller("tenant", "alice")
    with pytest.raises(S.Forbidden, match="admin token does not submit"):
        S.submit(store, "tok", data.mapping(data.labels), 0.9, admin)
    with pytest.raises(S.Forbidden, match="only the test set's admin token may revert"):
        S.revert(store, "tok", alice)
    with pytest.raises(S.Forbidden, match="only the test set's admin token may issue tokens"):
        S.issue_token(store, "tok", "mallory", alice)
    with pytest.raises(S.Forbidden, match="its own tenant only"):
        S.submit(store, "tok", data.mapping(data.labels), 0.9, alice, tenant="bob")
    with pytest.raises(S.NotFound, match="NAME must be the name of a guarded test set in the store; got 'nope'"):
        S.status(store, "nope")
    with pytest.raises(InputError, match="NAME must be a name no other test set in the store uses; got 'tok'"):
        S.create(store, "tok", data.labels_csv(), meter())
    with pytest.raises(InputError, match="NAME must be 1-64 letters"):
        S.create(store, "bad name/..", data.labels_csv(), meter())
    # the store keeps SHA-256 digests of the secrets only (a 256-bit random secret needs no salt or stretching)
    with store.read() as conn:
        from sqlalchemy import select

        from meter_dashboard.testsets.store import tokens

        stored = [r.hash for r in conn.execute(select(tokens))]
    import base64
    import hashlib

    def digest(token):  # computed here independently of security.py: sha256 of the secret, url-safe base64
        raw = hashlib.sha256(token.split("_", 2)[-1].encode()).digest()
        return "sha256$" + base64.urlsafe_b64encode(raw).decode().rstrip("=")

    assert {digest(created["admin_token"]), digest(tenant), digest(other_admin)} <= set(stored)
    assert len(stored) == 4 and all(re.fullmatch(r"sha256\$[A-Za-z0-9_-]{43}", h) for h in stored)
    # token = PREFIX_KEYID_SECRET, and the url-safe secret may itself contain "_": split twice only
    secrets_shown = [created["admin_token"].split("_", 2)[-1], tenant.split("_", 2)[-1]]
    assert all(len(s) >= 40 for s in secrets_shown)
    assert not any(s in h for s in secrets_shown for h in stored)


def test_ci_full_against_the_last_accepted_model(store, data):
    base = data.predictions(3000)
    settings = G.ci_settings(condition="n - o > 0.02 +/- 0.02", reliability=0.99, adaptivity="full", steps=4,
                             baseline=True)
    S.create(store, "ci", data.labels_csv(), settings, baseline=data.mapping(base), allow_smaller=True)
    models = [data.predictions(2900), data.predictions(1500), data.predictions(1200), data.predictions(100)]
    answers = [S.submit(store, "ci", data.mapping(p), None, tenant="ci-bot") for p in models]
    accepted, expected = base, []
    for p in models:
        n_hat = Fraction(int((p == data.labels).sum()), data.n)
        o_hat = Fraction(int((accepted == data.labels).sum()), data.n)
        d_hat = Fraction(int((p != accepted).sum()), data.n)
        ev = evaluate("n - o > 0.02 +/- 0.02", n_hat, o_hat, d_hat, "fp-free")
        expected.append(ev.passed)
        accepted = p if ev.passed else accepted
    assert [a["passed"] for a in answers] == expected == [False, True, False, True]
    assert set(answers[0]) == {"name", "mode", "step", "tenant", "passed", "signal", "steps_used", "steps_left",
                               "retired", "alarms", "failing"}
    assert answers[-1]["retired"] and answers[-1]["alarms"][-1]["kind"] == "budget_used_up"
    released = S.status(store, "ci", S.OWNER)["history"]
    assert released[1]["o"] == 1 - 3000 / data.n and released[3]["o"] == 1 - 1500 / data.n


def test_ci_none_hides_results_until_retirement_and_first_change_retires(store, data):
    none = G.ci_settings(condition="n > 0.8 +/- 0.05", reliability=0.99, adaptivity="none", steps=2)
    S.create(store, "hidden", data.labels_csv(), none)
    first = S.submit(store, "hidden", data.mapping(data.predictions(1000)), None)
    assert first["passed"] is None and first["signal"] is None
    assert S.status(store, "hidden", S.OWNER)["history"][0]["passed"] is None
    last = S.submit(store, "hidden", data.mapping(data.predictions(9000)), None)
    assert last["retired"] and last["passed"] is False  # released with the retirement
    assert [h["passed"] for h in S.status(store, "hidden", S.OWNER)["history"]] == [True, False]

    fc = G.ci_settings(condition="n > 0.9 +/- 0.05", reliability=0.99, adaptivity="firstChange", steps=5)
    S.create(store, "fc", data.labels_csv(), fc)
    assert S.submit(store, "fc", data.mapping(data.predictions(6000)), None)["passed"] is False
    passed = S.submit(store, "fc", data.mapping(data.predictions(600)), None)
    assert passed["passed"] is True and passed["retired"]
    assert [a["kind"] for a in passed["alarms"]] == ["first_change"]
    with pytest.raises(S.Refused, match="first change at commit 2"):
        S.submit(store, "fc", data.mapping(data.predictions(600)), None)


def test_ci_needs_a_baseline_when_the_condition_compares(store, data):
    with pytest.raises(InputError, match="baseline must be the predictions of the deployed model"):
        G.ci_settings(condition="n - o > 0.02 +/- 0.01", reliability=0.99, steps=4)
    with pytest.raises(InputError, match="adaptivity must be one of full, none, firstChange; got 'sometimes'"):
        G.ci_settings(condition="n > 0.8 +/- 0.05", reliability=0.99, adaptivity="sometimes", steps=4)
    settings = G.ci_settings(condition="n > 0.8 +/- 0.05", reliability=0.999, adaptivity="full", steps=32)
    with pytest.raises(InputError, match="labels must be at least the"):
        S.create(store, "tiny", b"\n".join(data.labels_csv().split(b"\n")[:1001]), settings)
    created = S.create(store, "tiny", b"\n".join(data.labels_csv().split(b"\n")[:1001]), settings, allow_smaller=True)
    scale = created["supported"]["tolerance_scale"]
    assert scale > 1 and created["supported"]["tolerances"] == pytest.approx([0.05 * scale])


def test_prediction_files_get_the_trace_readers_kind_of_message(store, data):
    S.create(store, "files", data.labels_csv(), meter())
    pred = data.predictions(100)

    def refused(content):
        with pytest.raises(InputError) as info:
            S.submit(store, "files", content, 0.9)
        return str(info.value)

    body = data.csv(pred).decode().splitlines()
    assert refused("\n".join(body[:-1]).encode()) == (
        "predictions must be one prediction for each of the 30,000 test examples (every id of the labels once); "
        "got no prediction for 1 id(s), the first 'ex029999'")
    assert refused("\n".join(body + ["zz,cat"]).encode()) == (
        "row 30002, column 1 (id): id must be an id of the test set (one of the labels' ids); got 'zz'")
    assert refused("\n".join(body[:3] + [body[2]] + body[3:]).encode()) == (
        "row 4, column 1 (id): id must be unique, each id once (id 'ex000001' is already on row 3); got 'ex000001'")
    assert refused(b"") == "predictions must be a CSV file with a header id,prediction and at least one row; " \
                           "got an empty file"
    assert refused(b"id,label\nex000000,cat\n") == ("row 1: columns must be a header row naming the columns id and "
                                                    "prediction (missing: prediction); got 'id,label'")
    assert refused(b"id,prediction\nex000000,cat,extra\n") == (
        "row 2: fields must be 2 per row, like the header (quote text that contains ','); got 3 fields")
    assert refused(b"id,prediction\nex000000,\n") == ("row 2, column 2 (prediction): prediction must be a prediction "
                                                      "in every row; got an empty cell")
    assert refused(b"PK\x03\x04rest") == ("predictions must be a CSV text file (save a spreadsheet as CSV, UTF-8); "
                                          "got a ZIP archive (an .xlsx workbook?)")
    assert refused(b"id,prediction\n\xff\n").startswith("line 2, byte 1: predictions must be UTF-8 text")
    assert refused({"ex000000": 1.5}) == "predictions['ex000000']: prediction must be a string (or a whole number); " \
                                         "got 1.5"
    # a shuffled file with extra columns and a BOM is fine: predictions are matched by id
    order = np.random.default_rng(3).permutation(data.n)
    shuffled = b"\xef\xbb\xbf" + data.csv(pred, order).replace(b"id,prediction", b"id,prediction,note", 1)
    assert S.submit(store, "files", shuffled, 0.9)["step"] == 1


def test_label_files_never_echo_a_label(store):
    settings = meter()
    with pytest.raises(InputError) as info:
        S.create(store, "l", b"id,label\na,secret-class\nb,\n", settings, allow_smaller=True)
    assert str(info.value) == "row 3, column 2 (label): label must be a label in every row; got an empty cell"
    with pytest.raises(InputError) as info:
        S.create(store, "l", b"id,label\na,secret-class\na,other-secret\n", settings, allow_smaller=True)
    assert "secret" not in str(info.value)
    assert str(info.value) == "row 3, column 1 (id): id must be unique, each id once (id 'a' is already on row 2); " \
                              "got 'a'"
    with pytest.raises(InputError) as info:
        S.create(store, "l", b'id,label\na,"top\nsecret"\n', settings, allow_smaller=True)
    assert "secret" not in str(info.value) and "no line breaks" in str(info.value)


def test_list_and_versions(store, data):
    assert S.list_testsets(store) == [] and S.versions(store) == {}
    S.create(store, "a", data.labels_csv(), meter())
    S.create(store, "b", data.labels_csv(), G.ci_settings(condition="n > 0.8 +/- 0.05", reliability=0.99,
                                                          steps=3), allow_smaller=True)
    before = S.versions(store)
    S.submit(store, "a", data.mapping(data.predictions(100)), 0.99)
    after = S.versions(store)
    assert after["a"] > before["a"] and after["b"] == before["b"]
    listed = S.list_testsets(store)
    assert [(x["name"], x["mode"], x["status"], x["steps_used"], x["steps"]) for x in listed] == \
        [("a", "meter", "active", 1, 8), ("b", "ci", "active", 0, 3)]
