"""``serve`` stopped by SIGTERM (``kill``, systemd) during concurrent submissions (issue 31): it stops taking
requests, answers those in progress, then exits 143; the steps recorded are exactly the steps acknowledged,
whatever the moment of the signal, on SQLite and PostgreSQL."""
from __future__ import annotations

import http.client
import json
import signal
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest

from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.store import Store
from tests.testsets.serving import Server

CLIENTS = 6


def _post(base, name, token, body, key):
    request = urllib.request.Request(f"{base}/api/testsets/{name}/submissions", data=body, method="POST")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    request.add_header("Idempotency-Key", key)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, ConnectionRefusedError):
            return "refused", None
        return "dropped", repr(exc.reason)
    except (ConnectionError, http.client.HTTPException) as exc:  # reset, closed without an answer
        return "dropped", repr(exc)


# the signal at these fractions of one submission's time after the clients start: while the first requests are
# read, parsed, committed, answered, and between them
@pytest.mark.parametrize("moment", [0.05, 0.5, 1.0, 2.5])
def test_sigterm_during_concurrent_submissions_spends_only_answered_steps(store_url, data, tmp_path, moment):
    store = Store(store_url)
    S.create(store, "busy", data.labels_csv(), G.meter_settings(epsilon=[0.02, 0.04, 0.06, 0.08, 0.1], delta=0.1,
                                                                steps=600), allow_smaller=True)
    tokens = [S.issue_token(store, "busy", f"t{k}")["token"] for k in range(CLIENTS)]
    bodies = [json.dumps({"predictions": data.mapping(data.predictions(500 + k)), "val_accuracy": 0.97}).encode()
              for k in range(8)]
    server = Server(store_url, tmp_path / "logs", pages="planner")
    try:
        started = time.monotonic()
        status, _ = _post(server.base, "busy", tokens[0], bodies[0], "warm-up")
        latency = time.monotonic() - started
        assert status == 200
        outcomes: list = []  # (sent before the signal?, status, answer)
        signalled = threading.Event()
        go = threading.Barrier(CLIENTS + 1)

        def client(k):
            go.wait()
            for j in range(200):
                before = not signalled.is_set()
                status, answer = _post(server.base, "busy", tokens[k], bodies[j % len(bodies)], str(uuid.uuid4()))
                outcomes.append((before, status, answer))
                if status in ("refused", "dropped") or status == 503:
                    return

        threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
        for t in threads:
            t.start()
        go.wait()
        time.sleep(moment * latency)
        signalled.set()
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=90) == 143
        for t in threads:
            t.join(timeout=120)
    finally:
        server.stop()
    log = server.log_text()
    assert "Traceback" not in log, log[-3000:]
    acknowledged = 1 + sum(1 for _, status, _ in outcomes if status == 200)
    steps = S.status(store, "busy", S.OWNER)
    store.dispose()
    assert steps["steps_used"] == len(steps["history"]) == acknowledged, (moment, outcomes)
    # every request in progress when the signal came was answered (a step, or 503 "stopping": nothing spent)
    in_progress = [(status, answer) for before, status, answer in outcomes if before]
    assert all(status in (200, 503) for status, _ in in_progress), in_progress
    stopping = [answer["error"] for _, status, answer in outcomes if status == 503]
    assert all("the server is stopping" in e for e in stopping), stopping
