"""A test set's settings are one typed value, validated when made and parsed once from the store (issue 32)."""
from __future__ import annotations

import dataclasses
import json

import pytest

from meter_dashboard.ci.grammar import Condition
from meter_dashboard.core.validation import InputError
from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import settings as T
from meter_dashboard.testsets import signals as G

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]


def test_the_value_is_frozen_and_holds_its_validated_plan_or_parsed_condition():
    meter = G.meter_settings(epsilon=EPS, delta=0.1, steps=8, tenant_steps=[5, 3])
    with pytest.raises(dataclasses.FrozenInstanceError):
        meter.steps = 9  # type: ignore[misc]
    assert meter.epsilon == tuple(EPS) and meter.tenant_steps == (5, 3) and meter.tenants == 2
    assert meter.plan.steps == 8 and meter.plan.tenant_steps == [5, 3] and not meter.plan.error
    ci = G.ci_settings(condition="n > 0.8 +/- 0.05", reliability=0.99, steps=4)
    assert isinstance(ci.condition, Condition) and ci.condition.canonical() == "n > 0.8 +/- 0.05"
    assert ci.ci_result.labels > 0 and not ci.uses_old_model


@pytest.mark.parametrize("make, message", [
    (lambda: T.MeterSettings(epsilon=EPS, delta=1.5, steps=8), "delta must be"),
    (lambda: T.MeterSettings(epsilon=EPS, delta=0.1, steps=0), "steps must be"),
    (lambda: T.MeterSettings(epsilon=EPS, delta=0.1, steps=8, meter="fast"), "meter must be 'incremental' or"),
    (lambda: T.MeterSettings(epsilon=EPS, delta=0.1, steps=8, tenant_steps=(3, 3)), "tenant"),
    (lambda: T.MeterSettings(epsilon=EPS, delta=0.1, steps=8, alarm_signal=6), "alarm_signal must be"),
    (lambda: T.CISettings(condition="n > > 0.8", reliability=0.99, steps=4), "condition must be well-formed"),
    (lambda: T.CISettings(condition="n > 0.8 +/- 0.05", reliability=0.99, steps=4, ci_mode="both"), "mode must be"),
])
def test_bad_settings_are_refused_when_the_value_is_made_naming_the_field(make, message):
    with pytest.raises(InputError, match=message):
        make()


def test_the_json_form_reads_back_as_the_same_value_and_bad_json_names_the_key():
    for value in (G.meter_settings(epsilon=EPS, delta=0.1, steps=8, reverts=[2], bound="binomial",
                                   max_error_rate=0.2, submissions_per_hour=3, alarm_signal=4),
                  G.ci_settings(condition="n - o > 0.02 +/- 0.02", reliability=0.99, adaptivity="none", steps=4,
                                baseline=True)):
        assert T.settings_from_dict(json.loads(json.dumps(value.to_dict()))) == value
    good = G.meter_settings(epsilon=EPS, delta=0.1, steps=8).to_dict()
    with pytest.raises(InputError, match="settings.steps must be given"):
        T.settings_from_dict({k: v for k, v in good.items() if k != "steps"})
    with pytest.raises(InputError, match="settings.epsilons must be left out"):
        T.settings_from_dict({**good, "epsilons": EPS})
    with pytest.raises(InputError, match="settings.mode must be 'meter' or 'ci'; got 'both'"):
        T.settings_from_dict({**good, "mode": "both"})
    with pytest.raises(InputError, match="settings must be JSON text"):
        T.settings_from_json("{not json")


@pytest.fixture
def counted(monkeypatch):
    """How often settings are validated (a value made) and a ci condition parsed, from a clean cache."""
    counts = {"made": 0, "conditions": 0}
    for kind in (T.MeterSettings, T.CISettings):
        made = kind.__post_init__

        def counting(self, made=made):
            counts["made"] += 1
            made(self)

        monkeypatch.setattr(kind, "__post_init__", counting)
    import meter_dashboard.ci.inputs as ci_inputs

    for module in (T, ci_inputs):
        parse = module.parse_condition

        def parsing(text, parse=parse):
            counts["conditions"] += 1
            return parse(text)

        monkeypatch.setattr(module, "parse_condition", parsing)
    T.forget_parsed()
    yield counts
    T.forget_parsed()


def test_meter_settings_are_validated_once_from_creation_to_the_released_signal(sqlite_store, data, counted):
    settings = G.meter_settings(epsilon=EPS, delta=0.1, steps=8, alarm_signal=5)
    S.create(sqlite_store, "once", data.labels_csv(), settings)
    for wrong in (2000, 1500):
        answer = S.submit(sqlite_store, "once", data.mapping(data.predictions(wrong)), 0.93)
    assert answer["step"] == 2 and answer["signal"] >= 1
    status = S.status(sqlite_store, "once", S.OWNER)
    assert status["settings"] == settings.to_dict() and len(status["history"]) == 2
    S.list_testsets(sqlite_store)
    assert counted["made"] == 1  # made once; the store's text reads back as that very value


def test_a_ci_condition_is_parsed_once_across_submissions(sqlite_store, data, counted):
    settings = G.ci_settings(condition="n > 0.8 +/- 0.05", reliability=0.99, adaptivity="full", steps=3)
    S.create(sqlite_store, "gate", data.labels_csv(), settings, allow_smaller=True)
    answers = [S.submit(sqlite_store, "gate", data.mapping(data.predictions(w)), None) for w in (6000, 600)]
    assert [a["passed"] for a in answers] == [False, True]
    S.status(sqlite_store, "gate", S.OWNER)
    assert counted == {"made": 1, "conditions": 1}


def test_settings_from_an_older_process_parse_once_per_text(sqlite_store, data, counted):
    S.create(sqlite_store, "old", data.labels_csv(), G.meter_settings(epsilon=EPS, delta=0.1, steps=8))
    T.forget_parsed()  # as a server that did not create it: the store's text is all it has
    counted["made"] = 0
    for wrong in (2000, 1500, 1200):
        S.submit(sqlite_store, "old", data.mapping(data.predictions(wrong)), 0.93)
    S.status(sqlite_store, "old", S.OWNER)
    assert counted["made"] == 1


def test_no_module_reads_settings_by_key_but_the_parser():
    """Settings travel as the typed value: only settings.py turns them into or out of a dictionary."""
    import re
    from pathlib import Path

    folder = Path(T.__file__).parent
    by_key = re.compile(r"\bsettings\s*\[\s*['\"]|\bsettings\.get\(|json\.loads\(\s*row\[\s*['\"]settings")
    found = [f"{path.name}:{n}" for path in sorted(folder.glob("*.py")) if path.name != "settings.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if by_key.search(line)]
    assert found == []
