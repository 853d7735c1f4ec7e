"""The store module on both backends (SQLite file and a real throwaway PostgreSQL)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from meter_dashboard.core.validation import InputError
from meter_dashboard.testsets.store import ENV_VAR, Store, StoreError, default_url, display_url

SETTINGS = {"mode": "meter", "meter": "incremental", "steps": 3}


def _testset(store, conn, name="t1"):
    return store.insert_testset(conn, name=name, mode="meter", settings=SETTINGS, size=10, needed=5,
                                supported=None, labels_sha256="0" * 64)


def _submission(store, conn, testset_id, step, **extra):
    values = dict(testset_id=testset_id, step=step, tenant="alice", val_accuracy=0.9, test_accuracy=0.8,
                  signal=1, incremental_signal=1, epsilon=0.01, reverted=False, predictions_sha256="f" * 64)
    values.update(extra)
    store.insert_submission(conn, **values)


def test_tables_rows_and_versions(store):
    with store.write() as conn:
        tid = _testset(store, conn)
        store.insert_labels(conn, tid, b"ids", b"codes", ["cat", "dog"])
        store.insert_token(conn, tid, "a" * 16, "admin", None, "scrypt$hash")
    with store.read() as conn:
        row = store.get_testset(conn, "t1")
        assert row["name"] == "t1" and row["status"] == "active" and row["steps_used"] == 0
        assert json.loads(row["settings"]) == SETTINGS
        assert store.load_labels(conn, tid) == (b"ids", b"codes", ["cat", "dog"])
        token = store.find_token(conn, "a" * 16)
        assert token["testset_name"] == "t1" and token["role"] == "admin" and token["hash"] == "scrypt$hash"
        assert store.find_token(conn, "b" * 16) is None
        assert store.versions(conn) == {"t1": 1}
    with store.write() as conn:
        store.update_testset(conn, tid, steps_used=1)
        store.update_testset(conn, tid)
    with store.read() as conn:
        assert store.versions(conn) == {"t1": 3}
        assert store.get_testset(conn, "t1")["steps_used"] == 1
        assert [r["name"] for r in store.list_testsets(conn)] == ["t1"]


def test_one_row_per_step_is_enforced_by_the_database(store):
    with store.write() as conn:
        tid = _testset(store, conn)
        _submission(store, conn, tid, 1)
    with pytest.raises(StoreError) as info:
        with store.write() as conn:
            _submission(store, conn, tid, 1, tenant="bob")
    message = str(info.value)
    assert "refused the operation" in message
    assert "bob" not in message and "f" * 64 not in message  # parameters are hidden
    with store.read() as conn:
        assert [(r["step"], r["tenant"]) for r in store.history(conn, tid)] == [(1, "alice")]


def test_an_error_inside_a_transaction_leaves_nothing(store):
    with store.write() as conn:
        tid = _testset(store, conn)
    with pytest.raises(RuntimeError):
        with store.write() as conn:
            _submission(store, conn, tid, 1)
            store.update_testset(conn, tid, steps_used=1)
            raise RuntimeError("boom")
    with store.read() as conn:
        assert store.history(conn, tid) == []
        assert store.get_testset(conn, "t1")["steps_used"] == 0


def test_unique_names(store):
    with store.write() as conn:
        _testset(store, conn)
    with pytest.raises(StoreError):
        with store.write() as conn:
            _testset(store, conn)


def test_lock_and_active_predictions(store):
    with store.write() as conn:
        tid = _testset(store, conn)
        row = store.lock_testset(conn, "t1")
        assert row["id"] == tid and store.lock_testset(conn, "nope") is None
        store.save_active_predictions(conn, tid, 0, b"base")
        store.save_active_predictions(conn, tid, 3, b"three")
    with store.read() as conn:
        assert store.load_active_predictions(conn, tid) == (3, b"three")
        store.mark_reverted  # exists
    with store.write() as conn:
        _submission(store, conn, tid, 1)
        store.mark_reverted(conn, tid, 1)
    with store.read() as conn:
        assert store.history(conn, tid)[0]["reverted"] is True


KILLED = textwrap.dedent("""
    import os, sys
    from meter_dashboard.testsets.store import Store
    store = Store(sys.argv[1])
    with store.write() as conn:
        row = store.lock_testset(conn, "t1")
        store.insert_submission(conn, testset_id=row["id"], step=1, tenant="alice", val_accuracy=0.9,
                                test_accuracy=0.8, signal=1, incremental_signal=1, epsilon=0.01, reverted=False,
                                predictions_sha256="f" * 64)
        store.update_testset(conn, row["id"], steps_used=1)
        print("written", flush=True)
        sys.stdin.readline()  # the parent kills the process here, mid-transaction
""")


def test_a_process_killed_mid_transaction_leaves_no_half_written_step(store, store_url):
    with store.write() as conn:
        tid = _testset(store, conn)
    proc = subprocess.Popen([sys.executable, "-c", KILLED, store_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "written"
    finally:
        proc.kill()
        proc.wait(timeout=30)
    with store.write() as conn:  # the lock is gone and nothing was committed
        assert store.history(conn, tid) == []
        assert store.lock_testset(conn, "t1")["steps_used"] == 0
        _submission(store, conn, tid, 1)  # step 1 is still free
    with store.read() as conn:
        assert [r["step"] for r in store.history(conn, tid)] == [1]


def test_urls(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, "sqlite:////tmp/x.sqlite")
    assert default_url() == "sqlite:////tmp/x.sqlite"
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_url() == f"sqlite:///{tmp_path}/meter-dashboard/testsets.sqlite"
    assert Store().url.database == f"{tmp_path}/meter-dashboard/testsets.sqlite"
    assert display_url("postgresql://alice:s3cret@db.example/team") == \
        "postgresql+psycopg://alice:***@db.example/team"
    assert "s3cret" not in repr(Store("postgres://alice:s3cret@db.example/team"))
    with pytest.raises(InputError, match="--store must be a sqlite:/// or postgresql"):
        Store("mysql://x/y")
    with pytest.raises(InputError, match="--store must be a database URL"):
        Store("not a url")


def test_the_default_store_is_created_on_first_use(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store = Store()
    assert not (tmp_path / "data").exists()  # nothing happens before the store is used
    with store.read() as conn:
        assert store.list_testsets(conn) == []
    assert (tmp_path / "data" / "meter-dashboard" / "testsets.sqlite").is_file()
    store.dispose()


def test_an_unreachable_store_says_so_without_the_password():
    store = Store("postgresql+psycopg://alice:s3cret@127.0.0.1:1/nope")
    with pytest.raises(StoreError) as info:
        with store.read():
            pass
    assert "cannot open the store postgresql+psycopg://alice:***@127.0.0.1:1/nope" in str(info.value)
    assert "s3cret" not in str(info.value)
