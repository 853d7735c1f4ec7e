"""Token checks at request speed (issue 20): requests per second with valid and invalid tokens,
and the latency of a legitimate request during a flood of made-up tokens, against a real
``meter-dashboard serve --store`` process.

Tokens are 256-bit random secrets, stored as SHA-256 digests (they were salted scrypt
hashes, N = 2**14: about 70 ms of CPU per request).  These measure (they never assert a
time); run with
``python -m pytest tests/benchmarks/test_bench_tokens.py --benchmark-enable -s``;
the suite runs each once as a test (``--benchmark-disable``).
"""
from __future__ import annotations

import secrets
import statistics
import time
import urllib.request

import pytest

from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.store import Store
from tests.testsets.attacks import Flood, keep_alive_gets
from tests.testsets.conftest import Data
from tests.testsets.serving import Server

REQUESTS = 40  # per round, over 4 keep-alive connections


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("tokens")
    url = f"sqlite:///{root / 'store.sqlite'}"
    store = Store(url)
    S.create(store, "bench", Data(n=1000).labels_csv(), G.meter_settings(epsilon=[0.05, 0.1], delta=0.1, steps=10),
             allow_smaller=True)
    token = S.issue_token(store, "bench", "alice")["token"]
    server = Server(url, root, pages="planner")
    yield server, token
    server.stop()
    store.dispose()


def made_up(token: str, count: int) -> dict:
    """Invalid tokens of three kinds: a real key id with a wrong secret, an unknown key id, garbage."""
    key_id = token.split("_")[1]
    return {
        "wrong secret": [f"mdt_{key_id}_{secrets.token_urlsafe(32)}" for _ in range(count)],
        "unknown key id": [f"mdt_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}" for _ in range(count)],
        "malformed": [secrets.token_urlsafe(24) for _ in range(count)],
    }


@pytest.mark.parametrize("kind", ["valid", "wrong secret", "unknown key id", "malformed"])
def test_bench_requests_per_second(benchmark, served, kind):
    server, token = served
    path = "/api/testsets/bench"
    tokens = [token] if kind == "valid" else made_up(token, 1)[kind]
    expected = 200 if kind == "valid" else 401

    def burst():
        statuses, seconds = keep_alive_gets(server.base, path, tokens[0], REQUESTS)
        assert statuses == [expected] * REQUESTS
        return seconds

    seconds = benchmark.pedantic(burst, rounds=3, iterations=1)
    benchmark.extra_info["requests_per_second"] = round(REQUESTS / seconds, 1)
    print(f"{kind}: {REQUESTS / seconds:.1f} requests/s ({REQUESTS} requests over 4 connections)")


def test_bench_a_legitimate_request_during_an_invalid_token_flood(benchmark, served):
    """8 connections sending made-up tokens without pause; meanwhile one tenant asks for its status."""
    server, token = served
    flood_tokens = sum(made_up(token, 50).values(), [])
    request = urllib.request.Request(server.base + "/api/testsets/bench", headers={"Authorization": f"Bearer {token}"})

    def legit():
        start = time.monotonic()
        with urllib.request.urlopen(request, timeout=300) as response:
            assert response.status == 200
        return time.monotonic() - start

    quiet = [legit() for _ in range(5)]
    with Flood(server.base, "/api/testsets/bench", flood_tokens, threads=8) as flood:
        time.sleep(1.0)
        during = benchmark.pedantic(lambda: [legit() for _ in range(5)], rounds=2, iterations=1)
        started = time.monotonic()
        sent_before = flood.sent
        time.sleep(1.0)
        rate = (flood.sent - sent_before) / (time.monotonic() - started)
    assert set(flood.statuses) <= {401}, flood.statuses
    benchmark.extra_info.update(quiet_median_s=statistics.median(quiet), flood_median_s=statistics.median(during),
                                flood_requests_per_second=round(rate, 1))
    print(f"legitimate request: median {statistics.median(quiet) * 1000:.1f} ms quiet, "
          f"{statistics.median(during) * 1000:.1f} ms (max {max(during) * 1000:.1f} ms) during a flood of "
          f"{rate:.0f} invalid-token requests/s")
