"""Submissions at the same moment get distinct steps and never overspend the budget (both backends)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections import Counter

import numpy as np

from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.store import Store

T = 50


def _create(store, data, steps=T):
    settings = G.meter_settings(epsilon=[0.02, 0.04, 0.06, 0.08, 0.1], delta=0.1, steps=steps)
    return S.create(store, "busy", data.labels_csv(), settings, allow_smaller=True)


def test_fifty_concurrent_submissions_get_steps_1_to_50_exactly_once(store, data):
    _create(store, data)
    token = S.issue_token(store, "busy", "alice")["token"]
    predictions = [data.mapping(data.predictions(500 + k)) for k in range(T + 5)]
    barrier = threading.Barrier(T + 5)
    answers, refused, errors = [], [], []

    def worker(k):
        try:
            caller = S.authenticate(store, "busy", token)
            barrier.wait()
            answers.append((k, S.submit(store, "busy", predictions[k], 0.98, caller)))
        except S.Refused as exc:
            refused.append(str(exc))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(T + 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert errors == []
    assert sorted(a["step"] for _, a in answers) == list(range(1, T + 1))  # each step exactly once
    assert len(refused) == 5 and all("is retired (budget used up at step 50)" in m for m in refused)
    status = S.status(store, "busy", S.OWNER)
    assert status["steps_used"] == T and status["status"] == "retired"
    history = status["history"]
    assert [h["step"] for h in history] == list(range(1, T + 1))
    # every accepted submission is the row of its step, none lost or doubled
    by_step = {a["step"]: k for k, a in answers}
    assert len(set(by_step.values())) == T
    assert Counter(h["predictions_sha256"] for h in history).most_common(1)[0][1] == 1


WORKER = textwrap.dedent("""
    import json, sys
    import numpy as np
    from meter_dashboard.testsets import service as S
    from meter_dashboard.testsets.store import Store
    url, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = Store(url)
    ids = [f"ex{i:06d}" for i in range(int(sys.argv[4]))]
    labels = json.loads(sys.stdin.readline())
    out = []
    for k in range(count):
        pred = list(labels)
        rng = np.random.default_rng(seed * 100 + k)
        for j in rng.choice(len(pred), size=400, replace=False):
            pred[j] = "zzz"
        try:
            out.append(S.submit(store, "busy", dict(zip(ids, pred)), 0.98, tenant="p%d" % seed)["step"])
        except S.Refused:
            out.append(None)
    print(json.dumps(out))
""")


def test_several_processes_on_one_store_behave_as_one_service(store, store_url, data):
    """Four processes (like four ``serve`` processes behind one database) submit at once."""
    import json

    _create(store, data, steps=30)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, store_url, str(seed), "9", str(data.n)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for seed in range(4)]
    payload = json.dumps(data.labels.tolist()) + "\n"
    for p in procs:
        p.stdin.write(payload)
        p.stdin.flush()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
        results.extend(json.loads(out.strip().splitlines()[-1]))
    steps = [s for s in results if s is not None]
    assert sorted(steps) == list(range(1, 31)) and results.count(None) == 36 - 30
    history = S.status(store, "busy", S.OWNER)["history"]
    assert [h["step"] for h in history] == list(range(1, 31))
    assert len({h["tenant"] for h in history}) > 1  # the processes really interleaved
    assert np.all(np.diff([h["step"] for h in history]) == 1)
    Store(store_url).dispose()
