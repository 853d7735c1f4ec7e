"""Results that are the same for every session, computed once per process and shared read-only.

A served page opens on defaults (a shipped example, a seeded simulation): every session would
compute the same numbers again.  :class:`SharedResults` keeps the most recent results by the
settings that made them (thread-safe: worker threads fill it); :func:`read_only` freezes a
result's numpy arrays so no session can change what another one reads.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

import numpy as np

__all__ = ["SharedResults", "read_only"]

T = TypeVar("T")


def read_only(value: T) -> T:
    """``value`` with its numpy arrays (its own, or its fields' and their tuples') made read-only."""
    fields = vars(value).values() if hasattr(value, "__dict__") else ()
    for item in (value, *fields):
        for arr in (item, *(item if isinstance(item, tuple) else ())):
            if isinstance(arr, np.ndarray):
                arr.flags.writeable = False
    return value


class SharedResults(Generic[T]):
    """The ``size`` most recently used results, by key (settings); kept for the process."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> T | None:
        """The result kept for ``key``, or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: T) -> T:
        """Keep ``value`` (made :func:`read_only`) for ``key``; the least recently used beyond ``size`` go."""
        read_only(value)
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value
