"""Gating a pipeline (issue 20): alarms vs notes (``level``, ``failing``), ``--alarm-signal K``,
``submit --fail-on-alarm``, and the per-tenant cap on submissions per hour (issue 23)."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from meter_dashboard.core.validation import InputError
from meter_dashboard.cli import main
from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.store import Store
from tests.testsets.serving import Server

EPS = "0.01,0.02,0.03,0.04,0.05"


def cli(capsys, *args):
    try:
        code = main(["testset", *args])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def files(tmp_path, data):
    (tmp_path / "labels.csv").write_bytes(data.labels_csv())
    for name, wrong in (("overfit", 2100), ("healthy", 2400), ("good", 300)):  # test accuracy 0.93, 0.92, 0.99
        (tmp_path / f"{name}.csv").write_bytes(data.csv(data.predictions(wrong)))
    return tmp_path


def test_the_last_planned_step_is_a_note_and_does_not_fail(store, data):
    S.create(store, "two", data.labels_csv(), G.meter_settings(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.1,
                                                               steps=2))
    S.submit(store, "two", data.mapping(data.predictions(2400)), 0.93)
    last = S.submit(store, "two", data.mapping(data.predictions(2400)), 0.93)
    assert [(a["kind"], a["level"]) for a in last["alarms"]] == [("budget_used_up", "note")]
    assert last["failing"] is False and S.status(store, "two", S.OWNER)["failing"] is False
    ci = G.ci_settings(condition="n > 0.9 +/- 0.05", reliability=0.99, adaptivity="firstChange", steps=3)
    S.create(store, "gate", data.labels_csv(), ci)
    passed = S.submit(store, "gate", data.mapping(data.predictions(600)), None)
    assert passed["passed"] and [(a["kind"], a["level"]) for a in passed["alarms"]] == [("first_change", "note")]
    assert passed["failing"] is False


def test_alarm_signal_makes_an_overfit_model_fail_the_pipeline(files, store_url, capsys):
    """The issue's case: validation 0.99, test 0.93 got signal 5 of 5 and no alarm; with --alarm-signal 4 it fails."""
    code, out, err = cli(capsys, "create", "emo", "--labels", str(files / "labels.csv"), "--epsilon", EPS,
                         "--delta", "0.1", "--steps", "8", "--alarm-signal", "4", "--store", store_url)
    assert code == 0, err
    base = ["--tenant", "alice", "--store", store_url, "--format", "json"]
    code, out, err = cli(capsys, "submit", "emo", "--predictions", str(files / "healthy.csv"), "--val-accuracy", "0.93",
                         "--fail-on-alarm", *base)
    healthy = json.loads(out)
    assert code == 0 and healthy["signal"] == 3 and healthy["failing"] is False and healthy["alarms"] == []
    code, out, err = cli(capsys, "submit", "emo", "--predictions", str(files / "overfit.csv"), "--val-accuracy", "0.99",
                         *base)
    overfit = json.loads(out)
    assert code == 0 and overfit["signal"] == 5 and overfit["failing"] is True  # recorded; no flag, no exit 1
    assert overfit["alarms"] == [{"kind": "signal_at_or_above", "level": "alarm", "step": 2, "message": (
        "Step 2 got signal 5 of 5, at or above the alarm threshold 4 set for this test set: the model overfits at "
        "least as much as the team decided to stop at.")}]
    code, out, err = cli(capsys, "submit", "emo", "--predictions", str(files / "overfit.csv"), "--val-accuracy", "0.99",
                         "--fail-on-alarm", "--tenant", "alice", "--store", store_url)
    assert code == 1 and "ALARM: Step 3 got signal 5 of 5" in out
    status = S.status(Store(store_url), "emo", S.OWNER)
    assert status["failing"] is True and [a["step"] for a in status["alarms"] if a["level"] == "alarm"] == [2, 3]


def test_alarm_signal_and_rate_options_are_checked(files, tmp_path, capsys):
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    common = ["--labels", str(files / "labels.csv"), "--steps", "8", "--store", store]
    code, _, err = cli(capsys, "create", "a", *common, "--epsilon", EPS, "--alarm-signal", "6")
    assert code == 2 and err == "meter-dashboard testset: error: --alarm-signal must be a whole number in [1, 5]; got '6'\n"
    code, _, err = cli(capsys, "create", "b", *common, "--condition", "n > 0.8 +/- 0.05", "--reliability", "0.99",
                       "--adaptivity", "full", "--alarm-signal", "3", "--allow-smaller")
    assert code == 2 and "--alarm-signal must be used in meter mode" in err
    code, _, err = cli(capsys, "create", "c", *common, "--submissions-per-hour", "0")
    assert code == 2 and err == "meter-dashboard testset: error: --submissions-per-hour must be a whole number in [1, 1000000]; got '0'\n"
    with pytest.raises(InputError, match=r"alarm_signal must be a whole number in \[1, 2\]"):
        G.meter_settings(epsilon=[0.01, 0.02], delta=0.1, steps=3, alarm_signal=0)


def test_a_tenant_over_its_submissions_per_hour_is_refused(tmp_path, data, capsys):
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = Store(url)
    settings = G.meter_settings(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.1, steps=8, submissions_per_hour=2)
    S.create(store, "capped", data.labels_csv(), settings)
    ann, ben = (S.issue_token(store, "capped", t)["token"] for t in ("ann", "ben"))
    server = Server(url, tmp_path, pages="planner")
    try:
        body = json.dumps({"predictions": data.mapping(data.predictions(2400)), "val_accuracy": 0.93}).encode()

        def post(token):
            request = urllib.request.Request(server.base + "/api/testsets/capped/submissions", data=body, method="POST",
                                             headers={"Authorization": f"Bearer {token}",
                                                      "Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=120) as response:
                    return response.status, dict(response.headers), json.loads(response.read())
            except urllib.error.HTTPError as exc:
                return exc.code, dict(exc.headers), json.loads(exc.read())

        assert [post(ann)[0] for _ in range(2)] == [200, 200]
        status, headers, answer = post(ann)
        assert status == 429 and 3500 <= int(headers["Retry-After"]) <= 3601
        assert answer["error"].startswith("tenant ann has made the 2 submission(s) per hour test set 'capped' allows; "
                                          "the next one is accepted in ")
        assert post(ben)[0] == 200  # another tenant has its own count
        (tmp_path / "p.csv").write_bytes(data.csv(data.predictions(2400)))
        code, out, err = cli(capsys, "submit", "capped", "--predictions", str(tmp_path / "p.csv"), "--val-accuracy",
                             "0.93", "--server", server.base, "--token", ann)
        assert code == 1 and out == "" and "refused: tenant ann has made the 2 submission(s) per hour" in err
        assert S.status(store, "capped", S.OWNER)["steps_used"] == 3
        assert S.submit(store, "capped", data.mapping(data.labels), 0.95, tenant="ann")["step"] == 4  # the owner
    finally:
        server.stop()
        store.dispose()
