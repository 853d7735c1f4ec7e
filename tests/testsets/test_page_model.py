"""The /testsets page's model and view, in process (no browser): refresh on change, admin actions,
and no test score in anything the page renders."""
from __future__ import annotations

from meter_dashboard.testsets import access as A
from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.overview import TestSetsModel

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]


def test_the_model_refreshes_only_when_the_store_changes(sqlite_store, data):
    model = TestSetsModel(store_url=str(sqlite_store.url))
    assert model.refresh() is False and model.names == [] and model.error == ""  # an empty store
    assert model.check() is None and model.refresh() is False
    S.create(sqlite_store, "emo", data.labels_csv(), G.meter_settings(epsilon=EPS, delta=0.1, steps=8))
    revision = model.revision
    assert model.refresh() is True and model.names == ["emo"] and model.revision == revision + 1
    assert model.testsets["emo"] == {"name": "emo", "mode": "meter", "status": "active", "steps": 8, "steps_used": 0,
                                     "steps_left": 8}  # without a token: the public view
    S.submit(sqlite_store, "emo", data.mapping(data.predictions(2400)), 0.93)
    update = model.check()  # the reading part (a worker thread on the page) ...
    assert update is not None and model.testsets["emo"]["steps_used"] == 0
    model.apply(update)  # ... and the setting part (the page's loop)
    assert model.testsets["emo"]["steps_used"] == 1 and "history" not in model.testsets["emo"]
    assert "test_accuracy" not in str(model.testsets)


def test_browsing_never_creates_a_store(tmp_path):
    model = TestSetsModel(store_url=f"sqlite:///{tmp_path / 'none' / 'store.sqlite'}")
    assert model.refresh() is False and model.names == [] and model.error == ""
    assert not (tmp_path / "none").exists()


def test_admin_actions_need_the_admin_token(sqlite_store, data):
    admin = S.create(sqlite_store, "emo", data.labels_csv(), G.meter_settings(epsilon=EPS, delta=0.1, steps=8,
                                                                                reverts=[1]))["admin_token"]
    tenant = S.issue_token(sqlite_store, "emo", "alice")["token"]
    model = TestSetsModel(store_url=str(sqlite_store.url))
    assert model.run_action("retire", "emo", "") == {"ok": False, "message": "enter the test set's admin token first"}
    assert "a valid token for test set 'emo'" in model.run_action("retire", "emo", "mdt_x")["message"]
    assert model.run_action("retire", "emo", tenant)["message"].startswith("this is a tenant token")
    issued = model.run_action("token", "emo", admin, tenant="bob")
    assert issued["ok"] and S.authenticate(sqlite_store, "emo", issued["token"]) == S.Caller("tenant", "bob")
    S.submit(sqlite_store, "emo", data.mapping(data.predictions(2400)), 0.93)
    assert model.run_action("revert", "emo", admin) == {"ok": True, "message": "Step 1 of emo is marked reverted."}
    assert model.run_action("export", "emo", admin)["message"].startswith("test set 'emo' is active")
    assert model.run_action("retire", "emo", admin)["ok"]
    exported = model.run_action("export", "emo", admin)
    assert exported["ok"] and '"test_size": 30000' in exported["trace"]


def test_a_token_shows_its_own_view_of_one_test_set(sqlite_store, data):
    """Issue 23: the page without a token shows each set's state and steps; a tenant token typed at the
    page shows that tenant's own history only; the admin token every tenant's."""
    admin = S.create(sqlite_store, "emo", data.labels_csv(),
                     G.meter_settings(epsilon=EPS, delta=0.1, steps=10, tenant_steps=[5, 5]))["admin_token"]
    ann, ben = (S.issue_token(sqlite_store, "emo", t)["token"] for t in ("ann", "ben"))
    for tenant, wrong in (("ann", 2400), ("ben", 1500), ("ann", 3000)):
        S.submit(sqlite_store, "emo", data.mapping(data.predictions(wrong)), 0.93, tenant=tenant)
    model = TestSetsModel(store_url=str(sqlite_store.url))
    model.refresh()
    assert set(model.testsets["emo"]) == set(A.PUBLIC_FIELDS)
    assert model.use_token("emo", "mdt_nope") == {"ok": False, "message": "a valid token for test set 'emo' is "
                                                  "needed (Authorization: Bearer TOKEN)"}
    assert model.use_token("emo", ann) == {"ok": True, "message": "Showing emo as tenant ann."}
    model.refresh()
    seen = model.testsets["emo"]
    assert set(seen) == set(A.STATUS_FIELDS) and [h["tenant"] for h in seen["history"]] == ["ann", "ann"]
    assert "ben" not in str(seen)
    assert model.use_token("emo", admin)["message"] == "Showing emo as its admin."
    model.refresh()
    assert [h["tenant"] for h in model.testsets["emo"]["history"]] == ["ann", "ben", "ann"]
    assert model.use_token("emo", "")["message"] == "Showing emo without a token."
    model.refresh()
    assert set(model.testsets["emo"]) == set(A.PUBLIC_FIELDS)
    del ben


def test_the_view_renders_every_test_set_without_a_score(sqlite_store, data):
    from meter_dashboard.testsets.view import TestSets

    admins = {
        "emo": S.create(sqlite_store, "emo", data.labels_csv(), G.meter_settings(epsilon=EPS, delta=0.1, steps=8)),
        "gate": S.create(sqlite_store, "gate", data.labels_csv(),
                         G.ci_settings(condition="n > 0.9 +/- 0.02", reliability=0.99, adaptivity="none", steps=4)),
    }
    S.submit(sqlite_store, "emo", data.mapping(data.predictions(2400)), 0.93, tenant="alice")
    S.submit(sqlite_store, "gate", data.mapping(data.predictions(1000)), None, tenant="bot")
    view = TestSets(store_url=str(sqlite_store.url), live=False)
    cards = view.cards
    assert [c.layout for c in cards.values()][::-1] == list(view.column.objects)  # the newest first
    assert set(cards) == {"emo", "gate"}
    public = " ".join(p.object for c in cards.values() for p in (c.header, c.cards))
    assert "alice" not in public and "0.9300" not in public and "Type a token of this test set" in public
    assert all(c.gauge is None and c.layout.objects == [c.header, c.cards] for c in cards.values())
    for name in ("emo", "gate"):
        assert view.model.use_token(name, admins[name]["admin_token"])["ok"]
    view.model.refresh()
    emo, gate = cards["emo"], cards["gate"]
    assert '<span class="md-headline-value testset-steps-used">1 / 8</span>' in emo.cards.object
    assert emo.gauge.signal == 3 and emo.gauge.empirical_overfitting is None and emo.gauge.epsilon_shown == 0.03
    assert "hidden" in gate.history.object and gate.gauge is None  # adaptivity none: results not released
    html = " ".join(p.object for c in cards.values() for p in (c.header, c.cards, c.alarms, c.history))
    assert "alice" in html and "0.92" not in html and "0.9667" not in html  # the scores (1 - 2400/30000, ...)
    assert view.select.options == ["emo", "gate"]
    assert not view.select.disabled and not view.buttons["retire"].disabled


def test_retire_now_asks_first_naming_the_test_set(sqlite_store, data):
    """Issue 24: "Retire now" opens a confirmation naming the set and what follows; only "Yes" retires."""
    from meter_dashboard.testsets.view import TestSets

    S.create(sqlite_store, "emo", data.labels_csv(), G.meter_settings(epsilon=EPS, delta=0.1, steps=8))
    view = TestSets(store_url=str(sqlite_store.url), live=False)
    view.select.value = "emo"
    assert not view.confirm.visible
    view._ask_retire(None)
    assert view.confirm.visible and view.confirm_yes.name == "Yes, retire emo"
    text = view.confirm_text.object
    assert "Retire <b>emo</b> now (0 of 8 steps used)?" in text and "cannot be undone" in text
    assert "released to the developers" in text and "new test set" in text
    view._hide_confirm()
    assert not view.confirm.visible and S.status(sqlite_store, "emo")["status"] == "active"


def test_an_empty_store_says_how_to_create_a_test_set(tmp_path):
    """No dead end: the first visit (no test set yet) shows the command, and the admin actions are off."""
    from meter_dashboard.testsets.view import TestSets

    view = TestSets(store_url=f"sqlite:///{tmp_path / 'store.sqlite'}", live=False)
    assert list(view.column.objects) == [view.empty]
    assert "meter-dashboard testset create NAME --labels LABELS.csv" in view.empty.object
    assert all(w.disabled for w in view.admin_widgets)


def test_a_short_test_set_shows_what_it_supports_in_the_alarm_colour(sqlite_store, data):
    """Issue 24: the /testsets card says what the test set guarantees at its latest step, as /session does:
    created with too few labels (--allow-smaller), its card shows the supported eps, not the planned one."""
    from meter_dashboard.session.text import guarantee
    from meter_dashboard.testsets.view import _headlines

    settings = G.meter_settings(epsilon=EPS, delta=0.01, steps=64)
    made = S.create(sqlite_store, "short", data.labels_csv(), settings, allow_smaller=True)
    assert made["labels"] < made["needed"] and made["supported"]
    S.submit(sqlite_store, "short", data.mapping(data.predictions(2400)), 0.93)
    status = S.status(sqlite_store, "short", A.OWNER)
    last = status["history"][-1]
    card = "".join(_headlines(status, detailed=True))
    supported = made["supported"]["epsilon"][last["signal"] - 1]
    expected = guarantee(last["epsilon"], last["signal"], 0.01, meter=settings["meter"], steps=64,
                         test_size=made["labels"], needed=made["needed"], supported=supported)
    assert expected.state == "short" and expected.alarm and expected.holds == supported > last["epsilon"]
    assert expected.html(css_class="testset-epsilon") in card

