"""Issue 31 over HTTP, against a real ``serve --store``: a retry with the same Idempotency-Key (the CLI's own,
after a dropped connection) spends nothing; refusals are rate-limited per token; a 5,000-digit JSON number is
a 400 naming its field; every 405 says ``Allow``; ``retire``/``revert`` take no body; a full disk is named and
``/api/health`` reports the store not writable."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from meter_dashboard.testsets import api
from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.store import Store
from tests.testsets.conftest import Data
from tests.testsets.serving import Server

EPS = [0.02, 0.04, 0.06, 0.08, 0.1]


def http(base, method, path, body=None, token=None, headers=None, raw: bytes | None = None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(base + path, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            status, answer_headers, text = response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as exc:
        status, answer_headers, text = exc.code, exc.headers, exc.read().decode()
    return status, answer_headers, (json.loads(text) if text.startswith("{") else text)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("answers")
    url = f"sqlite:///{root / 'store.sqlite'}"
    store, data = Store(url), Data(n=3000)
    server = Server(url, root / "logs", pages="planner")
    yield {"store": store, "data": data, "base": server.base, "server": server, "root": root}
    server.stop()
    store.dispose()
    assert "Traceback" not in server.log_text()


def _testset(served, name, steps=20, tenants=("ann",)):
    store, data = served["store"], served["data"]
    admin = S.create(store, name, data.labels_csv(), G.meter_settings(epsilon=EPS, delta=0.1, steps=steps),
                     allow_smaller=True)["admin_token"]
    return admin, [S.issue_token(store, name, t)["token"] for t in tenants]


def test_a_retry_with_the_same_key_gets_the_first_answer_and_spends_nothing(served):
    admin, (ann,) = _testset(served, "idem")
    data, base = served["data"], served["base"]
    body = {"predictions": data.mapping(data.predictions(100)), "val_accuracy": 0.96}
    key = {"Idempotency-Key": "0b0e7c1e-5d8a-4c3e-9f7a-2f6d1c1b9e10"}
    status, _, first = http(base, "POST", "/api/testsets/idem/submissions", body, ann, key)
    assert status == 200 and first["step"] == 1
    for _ in range(3):
        assert http(base, "POST", "/api/testsets/idem/submissions", body, ann, key)[2] == first
    status, _, out = http(base, "POST", "/api/testsets/idem/submissions", {**body, "val_accuracy": 0.9}, ann, key)
    assert status == 422 and "was used for a different submission (step 1" in out["error"]
    status, _, out = http(base, "POST", "/api/testsets/idem/submissions", body, ann, {"Idempotency-Key": "a b"})
    assert status == 400 and out["error"].startswith("Idempotency-Key must be 1-128 letters")
    assert S.status(served["store"], "idem", S.OWNER)["steps_used"] == 1


class DropFirstAnswer:
    """A TCP relay in front of the server that forwards the first request, reads the server's whole answer and
    closes the client's connection without it (the answer lost after the commit); later ones pass."""

    def __init__(self, base: str):
        self.target = ("127.0.0.1", int(base.rsplit(":", 1)[1]))
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.base = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    @staticmethod
    def _request(conn) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        while len(body) < length:
            body += conn.recv(65536)
        return head + b"\r\n\r\n" + body

    def _serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with conn, socket.create_connection(self.target) as upstream:
                upstream.sendall(self._request(conn))
                answer = b""
                while chunk := upstream.recv(65536):
                    answer += chunk
                if self.connections > 1:
                    conn.sendall(answer)

    def close(self):
        self.listener.close()


def test_the_cli_retries_a_dropped_submission_with_the_same_key(served, tmp_path, capsys):
    from meter_dashboard.cli import main

    admin, (ann,) = _testset(served, "drop")
    data = served["data"]
    preds = tmp_path / "p.csv"
    preds.write_bytes(data.csv(data.predictions(200)))
    relay = DropFirstAnswer(served["base"])
    try:
        code = main(["testset", "submit", "drop", "--predictions", str(preds), "--val-accuracy", "0.95",
                     "--server", relay.base, "--token", ann, "--format", "json"])
    finally:
        relay.close()
    out = capsys.readouterr().out
    assert code == 0 and json.loads(out)["step"] == 1 and relay.connections == 2  # answered by the retry
    assert S.status(served["store"], "drop", S.OWNER)["steps_used"] == 1  # one step for one submission


def test_no_answer_at_all_exits_3_naming_the_key(tmp_path, capsys, monkeypatch):
    from meter_dashboard.cli import main
    from meter_dashboard.testsets import client

    monkeypatch.setattr(client, "RETRY_DELAYS", (0.01, 0.01))
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    preds = tmp_path / "p.csv"
    preds.write_bytes(b"id,prediction\nex0,a\n")
    code = main(["testset", "submit", "x", "--predictions", str(preds), "--val-accuracy", "0.9",
                 "--server", f"http://127.0.0.1:{port}", "--token", "mdt_0123456789abcdef_x"])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1 and "did not answer after 3 tries" in err
    assert "--idempotency-key " in err and "no step is spent twice" in err


def test_refusals_are_rate_limited_per_token_and_spend_nothing(served):
    admin, (ann, bob) = _testset(served, "abuse", tenants=("ann", "bob"))
    data, base = served["data"], served["base"]
    for _ in range(api.REFUSALS_PER_WINDOW):
        assert http(base, "POST", "/api/testsets/abuse/submissions", None, ann, raw=b'{"predictions": [1]}')[0] == 400
    good = {"predictions": data.mapping(data.predictions(100)), "val_accuracy": 0.96}
    status, headers, out = http(base, "POST", "/api/testsets/abuse/submissions", good, ann)
    assert status == 429 and 1 <= int(headers["Retry-After"]) <= api.REFUSAL_WINDOW_S + 1
    assert out["error"].startswith(f"this token had {api.REFUSALS_PER_WINDOW} refused requests in 60 s")
    # another token is not held back, and one under the limit still submits after refusals
    for _ in range(5):
        assert http(base, "POST", "/api/testsets/abuse/submissions", None, bob, raw=b"{")[0] == 400
    assert http(base, "POST", "/api/testsets/abuse/submissions", good, bob)[0] == 200
    assert S.status(served["store"], "abuse", S.OWNER)["steps_used"] == 1


def test_a_number_of_5000_digits_is_a_400_naming_its_field(served):
    admin, (ann,) = _testset(served, "digits")
    base, long = served["base"], b"9" * 5000
    status, _, out = http(base, "POST", "/api/testsets/digits/tokens", None, admin, raw=b'{"tenant": ' + long + b"}")
    assert status == 400 and out == {"error": "tenant must be a number of at most 100 digits; got a number of "
                                              "5,000 characters"}
    body = b'{"predictions": {"ex000000": "cat"}, "val_accuracy": ' + long + b"}"
    status, _, out = http(base, "POST", "/api/testsets/digits/submissions", None, ann, raw=body)
    assert status == 400 and out["error"].startswith("val_accuracy must be a number of at most 100 digits")
    body = b'{"predictions": {"ex000001": ' + long + b'}, "val_accuracy": 0.9}'
    status, _, out = http(base, "POST", "/api/testsets/digits/submissions", None, ann, raw=body)
    assert status == 400 and out["error"].startswith("predictions.ex000001 must be a number of at most 100 digits")


@pytest.mark.parametrize("method, path, allow", [
    ("PUT", "/api/testsets/x/submissions", "POST"), ("DELETE", "/api/testsets/x", "GET"),
    ("GET", "/api/testsets/x/retire", "POST"), ("PATCH", "/api/health", "GET"), ("HEAD", "/api/testsets", "GET"),
    ("PROPFIND", "/api/testsets/x/labels", "GET"), ("POST", "/api/openapi.json", "GET")])
def test_every_405_says_allow(served, method, path, allow):
    status, headers, _ = http(served["base"], method, path, raw=b"{}" if method in ("PUT", "POST", "PATCH") else None)
    assert status == 405 and headers["Allow"] == allow


def test_retire_and_revert_take_no_body(served):
    admin, _ = _testset(served, "nobody")
    base = served["base"]
    for action in ("retire", "revert"):
        for raw in (b"null", b"[]", b'{"reason": "x"}', b'"now"'):
            status, _, out = http(base, "POST", f"/api/testsets/nobody/{action}", None, admin, raw=raw)
            assert status == 400 and out["error"].startswith("body must be"), (action, raw, out)
    assert S.status(served["store"], "nobody", S.OWNER)["status"] == "active"
    assert http(base, "POST", "/api/testsets/nobody/retire", None, admin, raw=b" ")[0] == 200


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MiB tmpfs (root only: mount)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_is_named_and_health_says_not_writable(small_disk, tmp_path):
    url = f"sqlite:///{small_disk / 'store.sqlite'}"
    data = Data(n=3000)
    store = Store(url)
    admin = S.create(store, "full", data.labels_csv(), G.meter_settings(epsilon=EPS, delta=0.1, steps=50),
                     allow_smaller=True)["admin_token"]
    ann = S.issue_token(store, "full", "ann")["token"]
    store.dispose()
    server = Server(url, tmp_path / "logs", pages="planner")
    try:
        base = server.base
        status, _, health = http(base, "GET", "/api/health")
        assert status == 200 and health["store"]["writable"] is True
        body = {"predictions": data.mapping(data.predictions(100)), "val_accuracy": 0.96}
        assert http(base, "POST", "/api/testsets/full/submissions", body, ann)[0] == 200
        filler = small_disk / "filler"
        with open(filler, "wb") as fh:  # every free block
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError:
                pass
        answers = [http(base, "POST", "/api/testsets/full/submissions",
                        {"predictions": data.mapping(data.predictions(120 + k)), "val_accuracy": 0.96}, ann)
                   for k in range(3)]
        refused = [(status, out) for status, _, out in answers if status != 200]
        assert refused and all(status == 503 and out["error"].startswith("the store's disk is full: nothing was "
                                                                          "recorded (no step spent)")
                               for status, out in refused), answers
        status, _, health = http(base, "GET", "/api/health")
        assert status == 503 and health["ready"] is False and health["store"]["writable"] is False
        assert health["store"]["problem"].startswith("the disk holding the store is full")
        filler.unlink()
        status, _, health = http(base, "GET", "/api/health")
        assert status == 200 and health["store"]["writable"] is True
    finally:
        server.stop()
    store = Store(url)
    accepted = 1 + sum(1 for status, _, _ in answers if status == 200)
    assert S.status(store, "full", S.OWNER)["steps_used"] == accepted
    store.dispose()
    assert Path(server.log).exists()
