"""The SQLite store's file permissions (issue 23): created 0600 in a 0700 directory, never widened,
and a warning when other local users could read the store."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.store import Store, exposure
from tests.testsets.conftest import Data

_CHMODS: list = []


def _audit(event, args):  # observes chmod calls (an audit hook cannot be removed: it only records)
    if event == "os.chmod":
        _CHMODS.append(str(args[0]))


sys.addaudithook(_audit)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask_zero():
    """The most permissive umask: the modes seen below are the ones the code asked for."""
    old = os.umask(0)
    yield
    os.umask(old)


def test_a_new_store_is_created_owner_only(tmp_path, umask_zero):
    path = tmp_path / "new" / "dir" / "store.sqlite"
    seen = len(_CHMODS)  # the hook records the whole process (e.g. the sdist test's copies)
    store = Store(f"sqlite:///{path}")
    S.create(store, "emo", Data(n=200).labels_csv(), G.meter_settings(epsilon=[0.1, 0.2], delta=0.1, steps=3),
             allow_smaller=True)
    store.dispose()
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    for suffix in ("-wal", "-shm"):  # SQLite gives its journal files the database's mode
        side = Path(str(path) + suffix)
        assert not side.exists() or mode(side) == 0o600
    assert not [p for p in _CHMODS[seen:] if p.startswith(str(path))]  # created so, not changed afterwards


def test_reading_a_store_with_wal_files_keeps_them_owner_only(tmp_path, umask_zero):
    path = tmp_path / "store.sqlite"
    store = Store(f"sqlite:///{path}")
    S.create(store, "emo", Data(n=200).labels_csv(), G.meter_settings(epsilon=[0.1, 0.2], delta=0.1, steps=3),
             allow_smaller=True)
    S.submit(store, "emo", Data(n=200).mapping(Data(n=200).labels), 0.9)
    assert {p.name: mode(p) for p in tmp_path.iterdir()} == {n: 0o600 for n in ("store.sqlite", "store.sqlite-wal",
                                                                                "store.sqlite-shm")}
    store.dispose()


@pytest.fixture
def public_dir():
    """A directory under /tmp that every local user can list (mode 0755)."""
    root = Path(tempfile.mkdtemp(prefix="md-public-", dir="/tmp"))
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "meter_dashboard", "testset", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env=dict(os.environ, PYTHONPATH=os.getcwd()))


def test_a_store_in_a_world_readable_directory_gets_a_warning(public_dir, tmp_path):
    url = f"sqlite:///{public_dir / 'store.sqlite'}"
    proc = cli("list", "--store", url, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "no test sets in the store\n"
    assert proc.stderr == (f"meter-dashboard: warning: the store {public_dir / 'store.sqlite'} is in a directory every "
                           f"local user can list ({public_dir}, mode 0755); keep stores in a private directory "
                           f"(chmod 700 {public_dir})\n")
    assert mode(public_dir / "store.sqlite") == 0o600
    private = tmp_path / "private"
    proc = cli("list", "--store", f"sqlite:///{private / 'store.sqlite'}", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""


def test_a_store_file_written_readable_by_others_gets_a_warning(public_dir):
    os.chmod(public_dir, 0o711)  # others may pass through, not list
    path = public_dir / "old.sqlite"
    path.touch(mode=0o644)  # as the former code created it
    os.chmod(path, 0o644)
    assert exposure(path) == [f"the store {path} can be read by other local users (mode 0644): its labels are "
                              f"secret; chmod 600 {path}"]
    os.chmod(path, 0o600)
    assert exposure(path) == []
