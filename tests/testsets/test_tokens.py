"""Tokens at request speed (issue 20): SHA-256 digests compared in constant time, stores written with
scrypt hashes migrated in place, and a server that keeps answering during an invalid-token flood."""
from __future__ import annotations

import base64
import hashlib
import json
import shutil
import statistics
import time
import urllib.request
from pathlib import Path

import pytest
from sqlalchemy import select

from meter_dashboard.testsets import security
from meter_dashboard.testsets import service as S
from meter_dashboard.testsets.store import Store, tokens
from tests.testsets.attacks import Flood
from tests.testsets.serving import Server

DATA = Path(__file__).parent / "data"


def stored_hashes(store) -> dict:
    with store.read() as conn:
        return {r.key_id: r.hash for r in conn.execute(select(tokens))}


def test_the_digest_is_sha256_of_the_secret():
    token, key_id, hashed = security.new_token()
    secret = token.split("_", 2)[2]
    expected = base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest()).decode().rstrip("=")
    assert hashed == "sha256$" + expected and token.split("_")[1] == key_id and len(secret) == 43
    assert security.verify_secret(secret, hashed)
    assert not security.verify_secret(secret[:-1] + ("A" if secret[-1] != "A" else "B"), hashed)
    assert not security.verify_secret(None, hashed) and not security.verify_secret(secret, None)
    assert not security.verify_secret(secret, "md5$abc") and not security.verify_secret(secret, "sha256$***")
    assert not security.needs_rehash(hashed) and security.needs_rehash(security.scrypt_hash(secret))
    assert security.verify_secret(secret, security.scrypt_hash(secret))  # the former scheme still checks


@pytest.fixture
def legacy(tmp_path):
    """A copy of a store written by the scrypt-token code (tests/testsets/data, git 739d4d2)."""
    path = tmp_path / "legacy.sqlite"
    shutil.copyfile(DATA / "scrypt_store.sqlite", path)
    store = Store(f"sqlite:///{path}")
    yield store, json.loads((DATA / "scrypt_store.json").read_text())
    store.dispose()


def test_a_store_written_with_scrypt_hashes_migrates_in_place(legacy):
    store, known = legacy
    before = stored_hashes(store)
    assert len(before) == 3 and all(h.startswith("scrypt$16384$8$1$") for h in before.values())
    with pytest.raises(S.Unauthorized):  # a wrong secret changes nothing
        S.authenticate(store, "legacy", known["alice"][:-2] + "zz")
    assert stored_hashes(store) == before
    assert S.authenticate(store, "legacy", known["alice"]) == S.Caller("tenant", "alice")
    after = stored_hashes(store)
    alice_key = known["alice"].split("_")[1]
    assert after[alice_key] == security.hash_secret(known["alice"].split("_", 2)[2])
    assert {k: v for k, v in after.items() if k != alice_key} == {k: v for k, v in before.items() if k != alice_key}
    assert S.authenticate(store, "legacy", known["alice"]) == S.Caller("tenant", "alice")  # and again, by digest
    assert S.authenticate(store, "legacy", known["admin"]) == S.Caller("admin")
    # the history written by the old code reads as before; the tokens act as before
    status = S.status(store, "legacy", S.authenticate(store, "legacy", known["admin"]))
    assert status["steps_used"] == 1 and [h["tenant"] for h in status["history"]] == ["alice"]
    assert S.issue_token(store, "legacy", "carol", S.Caller("admin"))["token"].startswith("mdt_")
    assert sum(h.startswith("sha256$") for h in stored_hashes(store).values()) == 3  # alice, admin, carol


def test_the_migration_over_http(legacy, tmp_path):
    store, known = legacy
    server = Server(str(store.url), tmp_path, pages="planner")
    try:
        request = urllib.request.Request(server.base + "/api/testsets/legacy",
                                         headers={"Authorization": f"Bearer {known['bob']}"})
        for _ in range(2):
            with urllib.request.urlopen(request, timeout=60) as response:
                assert response.status == 200 and json.loads(response.read())["name"] == "legacy"
    finally:
        server.stop()
    bob_key = known["bob"].split("_")[1]
    assert stored_hashes(store)[bob_key] == security.hash_secret(known["bob"].split("_", 2)[2])


def test_the_server_answers_others_during_an_invalid_token_flood(tmp_path):
    """8 connections send made-up tokens without pause; a tenant's requests are still answered."""
    from meter_dashboard.testsets import signals as G
    from tests.testsets.conftest import Data

    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = Store(url)
    S.create(store, "busy", Data(n=500).labels_csv(), G.meter_settings(epsilon=[0.05, 0.1], delta=0.1, steps=5),
             allow_smaller=True)
    token = S.issue_token(store, "busy", "alice")["token"]
    key_id = token.split("_")[1]
    made_up = [f"mdt_{key_id}_{'A' * 42}{k % 10}" for k in range(20)] + [f"mdt_{k:016x}_{'b' * 43}" for k in range(20)]
    server = Server(url, tmp_path, pages="planner")
    latencies = []
    try:
        request = urllib.request.Request(server.base + "/api/testsets/busy", headers={"Authorization": f"Bearer {token}"})
        with Flood(server.base, "/api/testsets/busy", made_up, threads=8) as flood:
            time.sleep(1.0)
            for _ in range(10):
                start = time.monotonic()
                with urllib.request.urlopen(request, timeout=120) as response:  # generous: no timing asserted
                    assert response.status == 200 and json.loads(response.read())["name"] == "busy"
                latencies.append(time.monotonic() - start)
        assert flood.sent > 0 and set(flood.statuses) == {401}, flood.statuses
    finally:
        server.stop()
        store.dispose()
    print(f"legitimate requests during a flood of {flood.sent} invalid-token requests: median "
          f"{statistics.median(latencies) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")
