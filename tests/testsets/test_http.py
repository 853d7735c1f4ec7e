"""The HTTP API against real ``meter-dashboard serve`` processes, on SQLite and PostgreSQL.

Covers the whole path (create -> token -> submit x T -> 409 -> export -> replay), the
CLI's ``--server --token``, wrong/missing/other tokens, oversized and malformed bodies,
two servers on one PostgreSQL acting as one service, and a scan of every response and
of the server logs for the labels and the test scores.
"""
from __future__ import annotations

import itertools
import json
import re
import threading
import urllib.error
import urllib.request

import numpy as np
import pytest

from meter_dashboard.session.model import replay
from meter_dashboard.session.trace import read_trace
from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.client import Client
from meter_dashboard.testsets.store import Store
from tests.testsets.conftest import Data
from tests.testsets.serving import Server

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]
SECRET = re.compile(r"secret-[0-9a-f]{10}")
_names = itertools.count()


class Secrets(Data):
    """Labels that are distinctive strings, so a leak is visible in any text."""

    def __init__(self):
        rng = np.random.default_rng(11)
        super().__init__(n=30_000, seed=5, classes=tuple(f"secret-{rng.bytes(5).hex()}" for _ in range(40)))


class Env:
    def __init__(self, url, server):
        self.url, self.server, self.store = url, server, Store(url)
        self.responses: list = []  # every body the server sent

    def http(self, method, path, body=None, token=None, headers=None, raw: bytes | None = None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.server.base + path, data=data, method=method)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode()
        self.responses.append(text)
        return status, (json.loads(text) if text.startswith("{") else text)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def env(request, tmp_path_factory):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('http') / 'store.sqlite'}"
    else:
        url = request.getfixturevalue("pg_cluster").create_database(f"md_http_{next(_names)}")
    server = Server(url, tmp_path_factory.mktemp("logs"), pages="planner")
    e = Env(url, server)
    yield e
    server.stop()
    e.store.dispose()
    log = server.log_text()  # the log scan: no label, no token secret, no traceback
    assert not SECRET.search(log), "a label appeared in the server log"
    assert "Traceback" not in log


@pytest.fixture(scope="module")
def secrets():
    return Secrets()


def _create(env, secrets, steps=4, **kw):
    name = f"h{next(_names)}"
    settings = G.meter_settings(epsilon=EPS, delta=0.1, steps=steps, **kw)
    admin = S.create(env.store, name, secrets.labels_csv(), settings)["admin_token"]
    return name, admin


def test_the_whole_path_over_http(env, secrets):
    name, admin = _create(env, secrets)
    status, out = env.http("POST", f"/api/testsets/{name}/tokens", {"tenant": "alice"}, token=admin)
    assert status == 200 and set(out) == {"name", "tenant", "token"}
    alice = out["token"]
    wrongs, vals, answers = [2501, 1801, 1499, 2699], [0.93, 0.945, 0.955, 0.92], []
    for wrong, val in zip(wrongs, vals):
        status, answer = env.http("POST", f"/api/testsets/{name}/submissions",
                                  {"predictions": secrets.mapping(secrets.predictions(wrong)), "val_accuracy": val},
                                  token=alice)
        assert status == 200, answer
        assert {"step", "signal", "incremental_signal", "range", "epsilon", "steps_left", "alarms"} <= set(answer)
        assert not ({"test_accuracy", "empirical_overfitting", "n", "o", "d"} & set(answer))
        answers.append(answer)
        status, st = env.http("GET", f"/api/testsets/{name}", token=alice)
        assert status == 200 and st["status"] == ("retired" if answer["retired"] else "active")
        if not answer["retired"]:
            assert all(repr(1 - w / secrets.n) not in json.dumps(st) for w in wrongs)
    status, refused = env.http("POST", f"/api/testsets/{name}/submissions",
                               {"predictions": secrets.mapping(secrets.labels), "val_accuracy": 0.9}, token=alice)
    assert status == 409 and "is retired (budget used up at step 4)" in refused["error"]
    status, hidden = env.http("GET", f"/api/testsets/{name}/labels", token=alice)
    assert status == 409 and "releasing them is its admin's act" in hidden["error"]  # never released by itself
    assert env.http("POST", f"/api/testsets/{name}/retire", {}, token=admin)[0] == 200  # the admin releases them
    status, exported = env.http("GET", f"/api/testsets/{name}/export?format=json", token=alice)
    assert status == 200
    trace = read_trace(exported["trace"].encode())
    r = replay(trace, epsilon=EPS, delta=0.1, steps=4, variant="incremental")
    assert [a["signal"] for a in answers] == r.incremental_signal.tolist() and trace.test_size == secrets.n
    status, labels = env.http("GET", f"/api/testsets/{name}/labels", token=alice)
    assert status == 200 and labels.encode() == secrets.labels_csv()  # released after retirement


def test_the_cli_and_the_client_use_the_server(env, secrets, tmp_path, capsys):
    from meter_dashboard.cli import main

    name, admin = _create(env, secrets, steps=3)
    token = Client(env.server.base, admin).issue_token(name, "bob")["token"]
    preds = tmp_path / "p.csv"
    preds.write_bytes(secrets.csv(secrets.predictions(2000)))
    code = main(["testset", "submit", name, "--predictions", str(preds), "--val-accuracy", "0.94",
                 "--server", env.server.base, "--token", token, "--format", "json"])
    out = capsys.readouterr().out
    env.responses.append(out)
    assert code == 0 and json.loads(out)["step"] == 1
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"id,prediction\nex000000,x\nnope,y\n")
    with pytest.raises(SystemExit) as info:
        main(["testset", "submit", name, "--predictions", str(bad), "--val-accuracy", "0.94",
              "--server", env.server.base, "--token", token])
    err = capsys.readouterr().err
    env.responses.append(err)
    assert info.value.code == 2 and err.strip() == (
        f"meter-dashboard testset: error: {bad}, row 3, column 1 (id): id must be an id of the test set (one of the "
        "labels' ids); got 'nope'")
    client = Client(env.server.base, token)
    assert client.submit(name, secrets.mapping(secrets.predictions(1900)), 0.94)["step"] == 2  # JSON
    assert client.submit(name, secrets.csv(secrets.predictions(1800)), 0.95)["step"] == 3  # text/csv
    name_left = client.status(name)["steps_left"]
    assert name_left == 0
    assert [h["step"] for h in client.status(name)["history"]] == [1, 2, 3]
    with pytest.raises(S.Forbidden):
        client.retire(name)
    with pytest.raises(S.Refused, match="not released"):
        client.export(name)  # the budget retired it at step 3; the labels and scores stay hidden
    assert Client(env.server.base, admin).retire(name)["reason"] == "budget used up at step 3"  # released now
    with pytest.raises(S.Refused, match="is already retired .* and released"):
        Client(env.server.base, admin).retire(name)
    code = main(["testset", "export", name, "--out", str(tmp_path / "t.csv"), "--server", env.server.base,
                 "--token", token])
    assert code == 0 and read_trace(str(tmp_path / "t.csv")).steps.tolist() == [1, 2, 3]


def test_tokens_401_403_and_a_tenant_sees_its_own_history_only(env, secrets):
    name, admin = _create(env, secrets, steps=6)
    other_name, other_admin = _create(env, secrets, steps=6)
    a = env.http("POST", f"/api/testsets/{name}/tokens", {"tenant": "ann"}, token=admin)[1]["token"]
    b = env.http("POST", f"/api/testsets/{name}/tokens", {"tenant": "ben"}, token=admin)[1]["token"]
    other = env.http("POST", f"/api/testsets/{other_name}/tokens", {"tenant": "ann"}, token=other_admin)[1]["token"]
    body = {"predictions": secrets.mapping(secrets.predictions(2000)), "val_accuracy": 0.93}
    for token in (None, "", "garbage", a[:-2] + "xx", other, other_admin):
        status, out = env.http("POST", f"/api/testsets/{name}/submissions", body, token=token)
        assert status == 401 and out == {"error": f"a valid token for test set {name!r} is needed "
                                                  "(Authorization: Bearer TOKEN)"}
    assert env.http("GET", f"/api/testsets/{name}")[0] == 401
    assert env.http("POST", f"/api/testsets/{name}/submissions", body, token=admin)[0] == 403
    assert env.http("POST", f"/api/testsets/{name}/retire", {}, token=a)[0] == 403
    assert env.http("POST", f"/api/testsets/{name}/tokens", {"tenant": "eve"}, token=a)[0] == 403
    assert env.http("GET", f"/api/testsets/{name}/export", token=a)[0] == 409  # still active
    assert env.http("GET", f"/api/testsets/{name}/labels", token=admin)[0] == 409
    for token in (a, b, a):
        assert env.http("POST", f"/api/testsets/{name}/submissions", body, token=token)[0] == 200
    assert [h["step"] for h in env.http("GET", f"/api/testsets/{name}", token=a)[1]["history"]] == [1, 3]
    assert [h["step"] for h in env.http("GET", f"/api/testsets/{name}", token=b)[1]["history"]] == [2]
    status, out = env.http("POST", f"/api/testsets/{name}/revert", {}, token=admin)
    assert status == 409 and "the plan has no revert left at step 3" in out["error"]
    full = env.http("GET", f"/api/testsets/{name}", token=admin)[1]
    assert [h["tenant"] for h in full["history"]] == ["ann", "ben", "ann"] and full["tenants"] == ["ann", "ben"]
    assert env.http("GET", "/api/testsets/no-such-set", token=a)[0] == 401  # no hint whether it exists


def test_oversized_and_malformed_bodies(env, secrets):
    name, admin = _create(env, secrets, steps=6)
    token = env.http("POST", f"/api/testsets/{name}/tokens", {"tenant": "ann"}, token=admin)[1]["token"]
    path = f"/api/testsets/{name}/submissions"
    status, out = env.http("POST", path, raw=b"x", token=token, headers={"Content-Length": str(10 ** 12)})
    assert status == 413 and out["error"].startswith("the body must be at most 100 MiB")
    status, out = env.http("POST", f"/api/testsets/{name}/tokens", raw=b" " * 70_000, token=admin)
    assert status == 413
    cases = [
        (b'{"predictions": {"a": "b"}, "val_accuracy": 0.9', "body must be valid JSON"),
        (b"\xff\xfe", "body must be UTF-8 JSON"),
        (b"[1, 2]", "body must be a JSON object; got 'list'"),
        (b'{"predictions": [1, 2], "val_accuracy": 0.9}', "predictions must be an object"),
        (b'{"predictions": {"ex000000": "x"}, "val_accuracy": 0.9, "test_accuracy": 1}',
         "body must be the keys predictions and val_accuracy; got 'test_accuracy'"),
        (b'{"predictions": {"ex000000": "x"}, "val_accuracy": 1.5}', "val_accuracy must be in [0, 1]; got 1.5"),
        (b'{"predictions": {"ex000000": "x"}}', "val_accuracy must be given"),
        (b'{"predictions": {"ex000000": "x", "ex000000": "y"}, "val_accuracy": 0.9}',
         "id must be unique, each id once"),
        (b'{"predictions": {"zz": "x"}, "val_accuracy": 0.9}',
         "predictions['zz']: id must be an id of the test set (one of the labels' ids); got 'zz'"),
        (b'{"predictions": {"ex000000": "x"}, "val_accuracy": 0.9}',
         "predictions must be one prediction for each of the 30,000 test examples"),
    ]
    for raw, message in cases:
        status, out = env.http("POST", path, raw=raw, token=token, headers={"Content-Type": "application/json"})
        assert status == 400 and message in out["error"], (raw[:60], out)
    assert env.http("GET", f"/api/testsets/{name}", token=token)[1]["steps_used"] == 0  # nothing was recorded


def test_no_response_carried_a_label_or_a_test_score(env, secrets):
    """Runs after the others in this module: every body the servers sent, scanned."""
    assert env.responses
    released = [t for t in env.responses if t.startswith("id,label") or '"trace"' in t or '"released": true' in t]
    for text in env.responses:
        if text in released:
            continue  # the export, the labels and the history, released after retirement on purpose
        assert not SECRET.search(text), text[:200]
        assert '"test_accuracy":' not in text and '"empirical_overfitting":' not in text


def test_two_servers_on_one_postgresql_are_one_service(request, secrets, tmp_path):
    cluster = request.getfixturevalue("pg_cluster")
    url = cluster.create_database(f"md_two_{next(_names)}")
    servers = [Server(url, tmp_path, pages="planner") for _ in range(2)]
    try:
        store = Store(url)
        settings = G.meter_settings(epsilon=[0.02, 0.04, 0.06, 0.08, 0.1], delta=0.1, steps=20)
        admin = S.create(store, "shared", secrets.labels_csv(), settings, allow_smaller=True)["admin_token"]
        token = Client(servers[0].base, admin).issue_token("shared", "ann")["token"]
        bodies = [secrets.mapping(secrets.predictions(900 + k)) for k in range(24)]
        results, lock = [], threading.Lock()

        def send(k):
            client = Client(servers[k % 2].base, token)
            try:
                step = client.submit("shared", bodies[k], 0.97)["step"]
            except S.Refused:
                step = None
            with lock:
                results.append(step)

        threads = [threading.Thread(target=send, args=(k,)) for k in range(24)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert sorted(s for s in results if s is not None) == list(range(1, 21)) and results.count(None) == 4
        assert [h["step"] for h in S.status(store, "shared", S.OWNER)["history"]] == list(range(1, 21))
        store.dispose()
    finally:
        for s in servers:
            s.stop()
