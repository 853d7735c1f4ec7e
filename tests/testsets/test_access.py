"""Who sees what (issue 23): one rule (access.disclose) behind the service, the HTTP API, the CLI and the
/testsets page - a test per role with the exact set of fields each sees, written out here by hand."""
from __future__ import annotations

import json

import pytest

from meter_dashboard.cli import main
from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.overview import TestSetsModel
from meter_dashboard.testsets.store import Store
from tests.testsets.conftest import Data
from tests.testsets.serving import Server

PUBLIC = {"name", "mode", "status", "steps", "steps_used", "steps_left"}
TENANT = {"name", "mode", "status", "created", "retired_at", "retired_reason", "labels", "needed", "supported",
          "settings", "steps", "steps_used", "steps_left", "version", "alarms", "failing", "history", "released"}
ADMIN = TENANT | {"tenants"}
OWNER_LIST = {"name", "mode", "status", "labels", "needed", "steps_used", "steps", "steps_left", "created", "version"}
STEP = {"time", "tenant", "step", "val_accuracy", "reverted", "predictions_sha256", "signal", "incremental_signal",
        "epsilon"}
RELEASED_STEP = STEP | {"regular_signal", "test_accuracy", "empirical_overfitting"}
ALARM = {"kind", "level", "step", "message"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Test set "shared" (two tenants, 3 steps each; ann, ben, ann submitted) and "done" (retired)."""
    root = tmp_path_factory.mktemp("access")
    url = f"sqlite:///{root / 'store.sqlite'}"
    store, data = Store(url), Data(n=3000)
    settings = G.meter_settings(epsilon=[0.05, 0.1], delta=0.1, steps=6, tenant_steps=[3, 3])
    out = {"url": url, "store": store, "data": data, "root": root}
    for name in ("shared", "done"):
        out[f"{name}-admin"] = S.create(store, name, data.labels_csv(), settings, allow_smaller=True)["admin_token"]
        for tenant in ("ann", "ben"):
            out[f"{name}-{tenant}"] = S.issue_token(store, name, tenant)["token"]
        for tenant, wrong in (("ann", 300), ("ben", 150), ("ann", 400)):
            S.submit(store, name, data.mapping(data.predictions(wrong)), 0.93, tenant=tenant)
    S.retire(store, "done")
    out["server"] = Server(url, root, pages="planner")
    yield out
    out["server"].stop()
    store.dispose()


def api(world, path, token=None):
    import urllib.error
    import urllib.request

    request = urllib.request.Request(world["server"].base + path,
                                     headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def page_view(world, name, token=None) -> dict:
    model = TestSetsModel(store_url=world["url"])
    if token is not None:
        assert model.use_token(name, token)["ok"]
    model.refresh()
    return model.testsets[name]


def cli_json(capsys, *args) -> dict:
    code = main(["testset", *args, "--format", "json"])
    assert code == 0
    return json.loads(capsys.readouterr().out)


def test_no_token_public_and_the_page_without_a_token(world):
    for name in ("shared", "done"):
        assert set(S.status(world["store"], name, S.PUBLIC)) == PUBLIC
        assert set(S.status(world["store"], name, S.VIEWER)) == PUBLIC  # the page's viewer is the public
        assert set(page_view(world, name)) == PUBLIC
    assert [set(t) for t in S.list_testsets(world["store"], S.PUBLIC)] == [PUBLIC, PUBLIC]
    status, listed = api(world, "/api/testsets")
    assert status == 200 and set(listed) == {"testsets"} and [set(t) for t in listed["testsets"]] == [PUBLIC] * 2
    assert listed["testsets"][0] == {"name": "shared", "mode": "meter", "status": "active", "steps": 6,
                                     "steps_used": 3, "steps_left": 3}
    assert api(world, "/api/testsets/shared")[0] == 401  # a test set's status needs a token
    with pytest.raises(S.Unauthorized):
        S.export(world["store"], "done", S.PUBLIC)


def test_tenant_sees_its_own_steps_only(world, capsys):
    token = world["shared-ann"]
    caller = S.authenticate(world["store"], "shared", token)
    views = [S.status(world["store"], "shared", caller), api(world, "/api/testsets/shared", token)[1],
             page_view(world, "shared", token),
             cli_json(capsys, "status", "shared", "--server", world["server"].base, "--token", token)]
    for view in views:
        assert set(view) == TENANT
        assert [h["tenant"] for h in view["history"]] == ["ann", "ann"] and "ben" not in json.dumps(view)
        assert all(set(h) == STEP for h in view["history"]) and all(set(a) <= ALARM for a in view["alarms"])
    released = S.status(world["store"], "done", S.authenticate(world["store"], "done", world["done-ann"]))
    assert set(released) == TENANT and [set(h) for h in released["history"]] == [RELEASED_STEP] * 2


def test_admin_sees_every_tenant_and_the_tenants(world, capsys):
    token = world["shared-admin"]
    caller = S.authenticate(world["store"], "shared", token)
    views = [S.status(world["store"], "shared", caller), api(world, "/api/testsets/shared", token)[1],
             page_view(world, "shared", token),
             cli_json(capsys, "status", "shared", "--server", world["server"].base, "--token", token)]
    for view in views:
        assert set(view) == ADMIN and view["tenants"] == ["ann", "ben"]
        assert [h["tenant"] for h in view["history"]] == ["ann", "ben", "ann"]
        assert all(set(h) == STEP for h in view["history"])  # no score while active
    released = api(world, "/api/testsets/done", world["done-admin"])[1]
    assert set(released) == ADMIN and [set(h) for h in released["history"]] == [RELEASED_STEP] * 3


def test_owner_sees_what_the_admin_sees_and_lists_more(world, capsys):
    views = [S.status(world["store"], "shared", S.OWNER), cli_json(capsys, "status", "shared", "--store", world["url"])]
    for view in views:
        assert set(view) == ADMIN and [h["tenant"] for h in view["history"]] == ["ann", "ben", "ann"]
    listed = cli_json(capsys, "list", "--store", world["url"])
    assert set(listed) == {"testsets"} and [set(t) for t in listed["testsets"]] == [OWNER_LIST] * 2
    assert [set(t) for t in S.list_testsets(world["store"])] == [OWNER_LIST] * 2


def test_no_tenant_reads_another_tenants_name_or_steps(tmp_path):
    """An unsplit test set (one chain of T shared by every tenant): the replay's session-wide note names
    every tenant; a tenant's answers, status and page carry the note without the other's name."""
    store, data = Store(f"sqlite:///{tmp_path / 's.sqlite'}"), Data(n=3000)
    settings = G.meter_settings(epsilon=[0.05, 0.1], delta=0.1, steps=6)
    S.create(store, "one", data.labels_csv(), settings, allow_smaller=True)
    tokens = {t: S.issue_token(store, "one", t)["token"] for t in ("zed-the-other", "ann")}
    callers = {t: S.authenticate(store, "one", tokens[t]) for t in tokens}
    S.submit(store, "one", data.mapping(data.predictions(300)), 0.93, callers["zed-the-other"])
    answer = S.submit(store, "one", data.mapping(data.predictions(200)), 0.93, callers["ann"])
    status = S.status(store, "one", callers["ann"])
    model = TestSetsModel(store_url=str(store.url))
    assert model.use_token("one", tokens["ann"])["ok"]
    model.refresh()
    for view in (answer, status, model.testsets["one"]):
        text = json.dumps(view)
        assert "zed-the-other" not in text
        assert "which every tenant of this test set shares" in text  # the note, without the names
    admin = json.dumps(S.status(store, "one", S.OWNER))
    assert "zed-the-other" in admin and "these 2 tenants (zed-the-other, ann)" in admin  # the admin's note names them
    store.dispose()
