"""``md.connect`` and ``md.TestSet``: the same operations from a notebook, locally and over HTTP."""
from __future__ import annotations

import json

import pytest

import meter_dashboard as md
from meter_dashboard.core.validation import InputError
from meter_dashboard.testsets import service as S
from tests.testsets.serving import Server

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]


def test_the_notebook_api_on_a_store(store_url, data, tmp_path):
    team = md.connect(store_url)
    emo = team.create("emo", data.labels_csv(), epsilon=EPS, delta=0.1, steps=3)
    assert emo.admin_token.startswith("mdt_") and emo.created["needed"] == 20_472
    alice = emo.token("alice")
    as_alice = team.testset("emo", token=alice)
    answers = [as_alice.submit(data.mapping(data.predictions(w)), 0.93) for w in (2500, 2100)]
    text, page = repr(as_alice), as_alice._repr_html_()
    assert text.startswith("TestSet('emo': incremental meter, active, 2/3 steps used, 30,000 labels")
    assert "step   2  alice" in text and "<table>" in page
    for shown in (text, page, json.dumps(as_alice.status())):
        assert "0.9166" not in shown and "0.93" in shown  # the validation score yes, the test score never
    with pytest.raises(S.Forbidden):
        as_alice.retire()
    with pytest.raises(S.Refused):
        as_alice.export()
    answers.append(as_alice.submit(data.mapping(data.predictions(1700)), 0.95))
    assert answers[-1]["retired"]
    assert [t["name"] for t in team.list()] == ["emo"] and "emo" in team._repr_html_()
    replayed = team["emo"].replay()  # the owner's view after retirement: the session replay of the history
    assert replayed.incremental_signal.tolist() == [a["signal"] for a in answers]
    assert len(team["emo"].history()) == 3 and "test_accuracy" in team["emo"].history().columns


def test_a_test_set_planned_with_the_exact_bound_keeps_it(store_url, data):
    # issue 30: the planner's exact bound, carried into a guarded test set's settings, counts and replay
    from meter_dashboard.meter.model import plan
    from meter_dashboard.testsets import signals

    team = md.connect(store_url)
    exact = team.create("exact", data.labels_csv(), epsilon=EPS, delta=0.1, steps=3, bound="binomial")
    needed = plan(EPS, 0.1, 3, bound="binomial").labels["incremental"]
    assert exact.created["needed"] == needed < 20_472  # not Hoeffding's count
    alice = team.testset("exact", token=exact.token("alice"))
    alice.submit(data.mapping(data.predictions(2500)), 0.93)
    settings = team["exact"].status()["settings"]
    assert settings["bound"] == "binomial"
    assert "exact binomial bound" in signals.meter_replay(settings, [
        {"step": 1, "val_accuracy": 0.93, "test_accuracy": 0.92, "tenant": "alice", "reverted": False}],
        30_000).bound_text
    from meter_dashboard.testsets.view import _plan_text  # the /testsets card names the bound

    assert "exact binomial bound" in _plan_text(settings)
    with pytest.raises(InputError, match="max_error_rate must be left empty unless the bound is 'binomial'"):
        team.create("wrong", data.labels_csv(), epsilon=EPS, delta=0.1, steps=3, max_error_rate=0.2)


def test_md_testset_over_http(sqlite_store, data, tmp_path):
    url = str(sqlite_store.url)
    emo = md.connect(url).create("remote", data.labels_csv(), epsilon=EPS, delta=0.1, steps=3)
    server = Server(url, tmp_path, pages="planner")
    try:
        token = md.TestSet("remote", server=server.base, token=emo.admin_token).token("bob")
        bob = md.TestSet("remote", server=server.base, token=token)
        answer = bob.submit(data.mapping(data.predictions(2000)), 0.94)
        assert answer["step"] == 1 and "test_accuracy" not in answer
        assert repr(bob).startswith("TestSet('remote': incremental meter, active, 1/3 steps used")
        assert md.connect(server.base, token=token)["remote"].status()["steps_used"] == 1
        with pytest.raises(InputError, match="create must be run against a store"):
            md.connect(server.base, token=token).create("x", data.labels_csv(), steps=3)
        wrong = md.TestSet("remote", server=server.base, token="mdt_nope")
        assert "a valid token for test set 'remote' is needed" in repr(wrong)
        public = md.connect(server.base)  # no token: the public list (state and steps)
        assert public.list() == [{"name": "remote", "mode": "meter", "status": "active", "steps": 3, "steps_used": 1,
                                  "steps_left": 2}]
        assert "<td>remote</td>" in public._repr_html_()
        gated = md.connect(url).create("gated", data.labels_csv(), epsilon=EPS, delta=0.1, steps=3, alarm_signal=2,
                                       submissions_per_hour=5)
        assert gated.status()["settings"]["alarm_signal"] == 2
        assert gated.submit(data.mapping(data.predictions(2000)), 0.99, tenant="t")["failing"] is True
    finally:
        server.stop()
