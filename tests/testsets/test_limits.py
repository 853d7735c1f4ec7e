"""Request bounds against a real ``meter-dashboard serve --store`` (issue 23), with the server's memory.

Each memory row runs on a freshly started server (a process that has already parsed a big
body keeps those pages resident, which would hide the growth) and measures its peak
resident memory growth (``/proc/PID/status`` VmHWM after ``clear_refs``) against the body
size.  Times are printed, never asserted.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.store import Store
from tests.testsets.attacks import MIB, Memory, Raw, blank_lines_body, filler
from tests.testsets.conftest import Data
from tests.testsets.serving import Server

LABELS = 1000


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A store with a 1,000-label test set (T = 100) and a tenant token."""
    root = tmp_path_factory.mktemp("limits")
    url = f"sqlite:///{root / 'store.sqlite'}"
    store, data = Store(url), Data(n=LABELS)
    settings = G.meter_settings(epsilon=[0.05, 0.1], delta=0.1, steps=100)
    admin = S.create(store, "small", data.labels_csv(), settings, allow_smaller=True)["admin_token"]
    token = S.issue_token(store, "small", "alice")["token"]
    yield {"url": url, "root": root, "store": store, "data": data, "token": token, "admin": admin}
    store.dispose()


@pytest.fixture
def fresh(world, tmp_path):
    """A freshly started server that has answered one valid submission (warm, but no big body yet)."""
    server = Server(world["url"], tmp_path, pages="planner")
    raw = Raw(server.base, timeout=300)
    warm = raw.request("POST", "/api/testsets/small/submissions?val_accuracy=0.9", auth(world, csv=True),
                       world["data"].csv(world["data"].predictions(50)))
    assert warm.status == 200, warm.body
    yield server, raw, Memory(server.proc.pid)
    server.stop()
    assert "Traceback" not in server.log_text()


def auth(world, csv: bool = False, json_body: bool = False) -> dict:
    headers = {"Authorization": f"Bearer {world['token']}"}
    if csv:
        headers["Content-Type"] = "text/csv"
    if json_body:
        headers["Content-Type"] = "application/json"
    return headers


def one_line_error(answer) -> str:
    body = answer.json()
    assert set(body) == {"error"} and "\n" not in body["error"] and answer.body.count(b"\n") == 0
    return body["error"]


def steps_used(world) -> int:
    return S.status(world["store"], "small", S.OWNER)["steps_used"]


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_valid_rows_then_blank_lines_are_refused_at_the_row_limit(world, fresh, chunked):
    """1,000 valid rows then 16 MiB of blank lines: 413 as soon as the body passes 1,001 lines."""
    server, raw, memory = fresh
    before = steps_used(world)
    body = list(blank_lines_body(world["data"].csv(world["data"].predictions(60)), 16 * MIB))
    size = sum(map(len, body))
    memory.reset()
    answer = raw.request("POST", "/api/testsets/small/submissions?val_accuracy=0.9", auth(world, csv=True), body,
                         chunked=chunked, length=None if chunked else size)
    growth = memory.growth()
    assert answer.status == 413 and one_line_error(answer) == (
        "the submission must hold at most 1,001 lines (the test set's 1,000 labels and a header; blank lines "
        "count); got more")
    assert answer.sent < size and growth <= 2 * size and steps_used(world) == before  # refused early, not a step
    print(f"blank lines ({'chunked' if chunked else 'Content-Length'}): {size / MIB:.1f} MiB body, answered after "
          f"{answer.sent / MIB:.1f} MiB sent in {answer.seconds:.2f} s, peak memory growth {growth / MIB:.1f} MiB")


def test_four_blank_line_attacks_at_once(world, fresh):
    """The issue's "four at once exceed the machine": four 16 MiB bodies together, each refused at the limit."""
    from concurrent.futures import ThreadPoolExecutor

    server, raw, memory = fresh
    before = steps_used(world)
    bodies = [list(blank_lines_body(world["data"].csv(world["data"].predictions(60 + k)), 16 * MIB)) for k in range(4)]
    size = sum(len(c) for body in bodies for c in body)
    memory.reset()
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda body: raw.request(
            "POST", "/api/testsets/small/submissions?val_accuracy=0.9", auth(world, csv=True), body,
            length=sum(map(len, body))), bodies))
    growth = memory.growth()
    assert [a.status for a in answers] == [413] * 4 and growth <= 2 * size and steps_used(world) == before
    print(f"4 blank-line bodies at once ({size / MIB:.0f} MiB in all): all refused within "
          f"{max(a.seconds for a in answers):.2f} s, peak memory growth {growth / MIB:.1f} MiB")


def test_bodies_without_a_token_are_refused_from_the_headers(world, fresh):
    """Six 15 MiB bodies with no token: each 401 arrives before its body was sent; nothing is kept."""
    server, raw, memory = fresh
    memory.reset()
    answers = [raw.request("POST", "/api/testsets/small/submissions", {"Content-Type": "text/csv"},
                           filler(15 * MIB), length=15 * MIB) for _ in range(6)]
    growth = memory.growth()
    for answer in answers:
        assert answer.status == 401 and one_line_error(answer) == (
            "a valid token for test set 'small' is needed (Authorization: Bearer TOKEN)")
        assert answer.sent < 15 * MIB  # the answer came while the body was still being sent
    assert growth <= 2 * 15 * MIB
    # a client that sends its whole body before it reads (urllib) still gets the answer: the rest is drained
    request = urllib.request.Request(server.base + "/api/testsets/small/submissions", data=b"\n" * (15 * MIB),
                                     method="POST", headers={"Content-Type": "text/csv"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=120)
    assert info.value.code == 401 and json.loads(info.value.read())["error"].startswith("a valid token")
    print(f"no token: 6 x 15 MiB, answered after {max(a.sent for a in answers) / MIB:.1f} MiB sent at most, "
          f"in {max(a.seconds for a in answers):.2f} s at most; peak memory growth {growth / MIB:.1f} MiB")


def test_a_chunked_body_over_the_limit_gets_413_naming_it(world, fresh):
    """101 MiB chunked (no Content-Length): the one-line 413 naming 100 MiB, to a client that reads as it sends."""
    server, raw, memory = fresh
    memory.reset()
    lines = (b"x" * (128 * 1024 - 1) + b"\n" for _ in range(808))  # 101 MiB in lines within the row limit
    answer = raw.request("POST", "/api/testsets/small/submissions?val_accuracy=0.9", auth(world, csv=True),
                         lines, chunked=True)
    growth = memory.growth()
    assert answer.status == 413 and one_line_error(answer) == (
        "the submission must be at most 100 MiB (104,857,600 bytes); got more")
    assert growth <= 2 * 101 * MIB
    small = raw.request("POST", "/api/testsets/small/tokens", {"Authorization": f"Bearer {world['admin']}",
                                                             "Content-Type": "application/json"},
                        filler(65 * 1024, chunk=4096, byte=b" "), chunked=True)
    assert small.status == 413 and one_line_error(small) == "the body must be at most 64 KiB (65,536 bytes); got more"
    print(f"chunked 101 MiB: 413 after {answer.sent / MIB:.1f} MiB in {answer.seconds:.2f} s, peak memory growth "
          f"{growth / MIB:.1f} MiB")


def test_a_declared_size_over_the_limit_is_refused_before_the_body(world, fresh):
    server, raw, _ = fresh
    answer = raw.request("POST", "/api/testsets/small/submissions", auth(world, csv=True), filler(4 * MIB),
                         length=200 * MIB)
    assert answer.status == 413 and one_line_error(answer) == (
        "the body must be at most 100 MiB (104,857,600 bytes); got 200 MiB")


def test_deep_json_is_400_in_one_line(world, fresh):
    server, raw, _ = fresh
    for opening, closing in ((b"[", b"]"), (b'{"a":', b"}")):
        deep = b'{"predictions": ' + opening * 100_000 + b"1" + closing * 100_000 + b', "val_accuracy": 0.9}'
        answer = raw.request("POST", "/api/testsets/small/submissions", auth(world, json_body=True), deep)
        assert answer.status == 400 and one_line_error(answer) == "body must be JSON nested at most 8 deep; got " \
                                                                   "deeper nesting"
    brackets_in_strings = json.dumps({"predictions": {i: "[[[[[[[[[[{{{{{{{{{{" for i in world["data"].ids},
                                      "val_accuracy": 0.9}).encode()
    answer = raw.request("POST", "/api/testsets/small/submissions", auth(world, json_body=True), brackets_in_strings)
    assert answer.status == 200 and answer.json()["step"] >= 2  # brackets inside strings are not nesting


def test_json_with_more_predictions_than_labels_is_refused(world, fresh):
    server, raw, _ = fresh
    predictions = {f"x{k}": "cat" for k in range(LABELS + 5)}
    body = json.dumps({"predictions": predictions, "val_accuracy": 0.9}).encode()
    answer = raw.request("POST", "/api/testsets/small/submissions", auth(world, json_body=True), body)
    assert answer.status == 413 and one_line_error(answer) == (
        "body must hold at most 1,002 JSON members (one prediction per label: 1,000); got more")


def test_a_long_path_is_414(world, fresh):
    server, raw, _ = fresh
    for path in ("/api/testsets/" + "a" * 100_000, "/planner/" + "b" * 100_000, "/" + "c" * 3000):
        answer = raw.request("GET", path)
        assert answer.status == 414 and one_line_error(answer).startswith("the URL path must be at most 2,048 "
                                                                          "characters; got ")
    assert raw.request("GET", "/api/testsets/" + "a" * 60).status == 401  # a long name within the rule: no such set


def test_a_large_valid_submission_measured(tmp_path):
    """Not a bound: what a valid 500,000-row CSV submission (about 6 MiB) costs the server, for the record."""
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store, data = Store(url), Data(n=500_000, seed=3)
    S.create(store, "big", data.labels_csv(), G.meter_settings(epsilon=[0.01, 0.02], delta=0.1, steps=50),
             allow_smaller=True)
    token = S.issue_token(store, "big", "bob")["token"]
    server = Server(url, tmp_path, pages="planner")
    try:
        raw, memory = Raw(server.base, timeout=300), Memory(server.proc.pid)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/csv"}
        body = data.csv(data.predictions(20_000))
        assert raw.request("POST", "/api/testsets/big/submissions?val_accuracy=0.97", headers, body).status == 200
        memory.reset()
        answer = raw.request("POST", "/api/testsets/big/submissions?val_accuracy=0.97", headers, body)
        growth = memory.growth()
        assert answer.status == 200 and answer.json()["step"] == 2
    finally:
        server.stop()
        store.dispose()
    print(f"valid submission: {len(body) / MIB:.1f} MiB CSV (500,000 rows) answered in {answer.seconds:.2f} s, "
          f"peak memory growth {growth / MIB:.1f} MiB ({growth / len(body):.1f}x the body)")
