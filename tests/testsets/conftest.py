"""Fixtures for guarded test sets: a store on each backend (SQLite file, throwaway PostgreSQL).

``store_url`` is parametrized over ``sqlite`` and ``postgresql``: the same tests run on
both.  PostgreSQL tests are skipped only when Debian's ``postgresql`` binaries are absent
(CI installs them; the README's test command does).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.testsets.postgres import find_bindir, start_cluster

_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_cluster():
    if find_bindir() is None:
        pytest.skip("PostgreSQL binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
    cluster = start_cluster()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """A fresh, empty store on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.sqlite'}"
    cluster = request.getfixturevalue("pg_cluster")
    return cluster.create_database(f"md_test_{next(_counter)}")


@pytest.fixture
def store(store_url):
    from meter_dashboard.testsets.store import Store

    s = Store(store_url)
    yield s
    s.dispose()


@pytest.fixture
def sqlite_store(tmp_path):
    from meter_dashboard.testsets.store import Store

    s = Store(f"sqlite:///{tmp_path / 'store.sqlite'}")
    yield s
    s.dispose()


class Data:
    """A synthetic labelled test set and predictions of chosen accuracy (seeded)."""

    def __init__(self, n: int = 30_000, seed: int = 7, classes=("cat", "dog", "bird")):
        self.rng = np.random.default_rng(seed)
        self.n = n
        self.ids = np.asarray([f"ex{i:06d}" for i in range(n)], dtype=object)
        self.labels = self.rng.choice(np.asarray(classes, dtype=object), n)
        self.classes = tuple(classes)

    def labels_csv(self) -> bytes:
        return ("id,label\n" + "\n".join(f"{a},{b}" for a, b in zip(self.ids, self.labels)) + "\n").encode()

    def predictions(self, wrong: int) -> np.ndarray:
        """Predictions with exactly ``wrong`` mistakes (accuracy 1 - wrong / n)."""
        pred = self.labels.copy()
        idx = self.rng.choice(self.n, size=wrong, replace=False)
        for k in idx:
            pred[k] = next(c for c in self.classes if c != self.labels[k])
        return pred

    def csv(self, pred, order=None) -> bytes:
        order = np.arange(self.n) if order is None else order
        return ("id,prediction\n" + "\n".join(f"{self.ids[k]},{pred[k]}" for k in order) + "\n").encode()

    def mapping(self, pred) -> dict:
        return dict(zip(self.ids.tolist(), pred.tolist()))


@pytest.fixture
def data():
    return Data()
