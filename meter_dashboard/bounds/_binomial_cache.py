"""The process-wide caches of the exact binomial bound: factors per (n, eps) and counts per union bound.

``F(n, eps)`` (its breakpoint maximum) is shared by every variant, every T, every delta and
every inverse question (issue 18), so it is computed once per ``(n, eps, a, sides)`` and kept
(bounded: the table is emptied when full; values are cheap to recompute).  Whole counts are
kept too, keyed by their union bound, so asking again costs a dictionary lookup.  Both are
emptied by :func:`clear` (benchmarks of a cold start).  Pages compute in worker threads, so
writes hold a lock.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from fractions import Fraction
from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from ._binomial_max import log_tail_maxima
from ._types import FloatArray

__all__ = ["tag", "factors", "known", "count_key", "recall", "remember", "clear", "FACTORS_SIZE", "COUNTS_SIZE"]

#: Exact factors kept per (n, eps, a, sides).
FACTORS_SIZE = 200_000
#: Counts kept per union bound.
COUNTS_SIZE = 20_000
#: ``(numerator, denominator, a's (numerator, denominator) or None, sides)``
Tag = tuple[int, int, Union[tuple[int, int], None], str]
#: ``(log counts as bytes, the terms' tags, log delta)``
CountKey = tuple[bytes, tuple[Tag, ...], float]
_factors: dict[tuple[int, Tag], float] = {}
_counts: dict[CountKey, int] = {}
_lock = threading.Lock()


def tag(eps: Fraction, a: Fraction | None, sides: str) -> Tag:
    """A cheap hashable key (Fraction hashes cost a modular inverse each)."""
    return (eps.numerator, eps.denominator, None if a is None else (a.numerator, a.denominator), sides)


def _tags(eps_rows: Sequence[Fraction], a: Fraction | None, sides: str) -> list[Tag]:
    memo: dict[int, Tag] = {}
    out = []
    for e in eps_rows:
        t = memo.get(id(e))
        if t is None:
            t = memo[id(e)] = tag(e, a, sides)
        out.append(t)
    return out


def _rows(ns: ArrayLike, eps: Fraction | Sequence[Fraction], size: int) -> list[Fraction]:
    return [eps] * size if isinstance(eps, Fraction) else list(eps)


def known(ns: ArrayLike, eps: Fraction | Sequence[Fraction], a: Fraction | None, sides: str) -> FloatArray:
    """Cached ``log F`` for rows (n, eps), NaN where not computed yet."""
    ns = np.asarray(ns, dtype=np.int64)
    keys = zip(ns.tolist(), _tags(_rows(ns, eps, ns.size), a, sides))
    return np.array([_factors.get(k, np.nan) for k in keys], dtype=float)


def factors(ns: ArrayLike, eps: Fraction | Sequence[Fraction], a: Fraction | None, sides: str) -> FloatArray:
    """Exact ``log F(n, eps)`` for rows (n, eps) (``eps`` one Fraction or one per n): the missing ones in one batch."""
    ns = np.asarray(ns, dtype=np.int64)
    rows = _rows(ns, eps, ns.size)
    keys = list(zip(ns.tolist(), _tags(rows, a, sides)))
    got = {k: _factors.get(k) for k in keys}
    missing = [k for k, v in got.items() if v is None]
    if missing:
        where = {k: i for i, k in enumerate(keys)}
        todo = [where[k] for k in missing]
        values = log_tail_maxima(ns[todo], [rows[i] for i in todo], a, sides).tolist()
        got.update(zip(missing, values))
        with _lock:
            if len(_factors) + len(missing) > FACTORS_SIZE:
                _factors.clear()
            _factors.update(zip(missing, values))
    return np.array([got[k] for k in keys], dtype=float)


def count_key(logs: ArrayLike, eps_list: Sequence[Fraction], log_delta: float, a: Fraction | None,
              sides: str) -> CountKey:
    """The key of one count: its union bound's terms (log S_k, eps_k) and delta."""
    return (np.asarray(logs, dtype=float).tobytes(), tuple(_tags(eps_list, a, sides)), float(log_delta))


def recall(key: CountKey) -> int | None:
    return _counts.get(key)


def remember(key: CountKey, value: int) -> None:
    with _lock:
        if len(_counts) >= COUNTS_SIZE:
            _counts.clear()
        _counts[key] = value


def clear() -> None:
    """Forget every cached factor and count (benchmarks of a cold start)."""
    with _lock:
        _factors.clear()
        _counts.clear()
