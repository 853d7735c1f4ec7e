"""README "Guarded test sets over HTTP" stays true (issue 20): every example runs as written against a real
``serve --store`` and answers the JSON shown; the pipeline script shown is tests/testsets/pipeline/gate.sh,
and it gates a model as the README says."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from meter_dashboard.testsets.openapi import document
from tests.testsets.conftest import Data
from tests.testsets.serving import Server
from tests.testsets.test_openapi import check

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README.split("\n## Guarded test sets over HTTP\n", 1)[1].split("\n## ", 1)[0]
SCRIPT = Path(__file__).parent / "pipeline" / "gate.sh"

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="the README's examples use curl")


def examples() -> list:
    """``(bash, expected)`` pairs: each bash block with the json or text block right after it."""
    blocks = re.findall(r"```(bash|json|text)\n(.*?)\n```", SECTION, re.S)
    pairs = []
    for (kind, body), (next_kind, answer) in zip(blocks, blocks[1:]):
        if kind == "bash" and next_kind in ("json", "text"):
            pairs.append((body, next_kind, answer))
    return pairs


def matches(expected, actual) -> bool:
    """Equal, except where the README writes "…": any value, a string's rest, or more keys of an object."""
    if expected == "…":
        return True
    if isinstance(expected, str) and expected.endswith("…"):
        return isinstance(actual, str) and actual.startswith(expected[:-1])
    if isinstance(expected, dict):
        keys = set(expected) - {"…"}
        if not isinstance(actual, dict) or not keys <= set(actual) or ("…" not in expected and set(actual) != keys):
            return False
        return all(matches(expected[k], actual[k]) for k in keys)
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(map(matches, expected, actual))
    return type(expected) is type(actual) and expected == actual


@pytest.fixture
def workdir(tmp_path):
    """labels.csv and preds.csv as in the first section, a store, and ``meter-dashboard`` on PATH
    running this checkout."""
    data = Data()
    (tmp_path / "labels.csv").write_bytes(data.labels_csv())
    (tmp_path / "preds.csv").write_bytes(data.csv(data.predictions(2400)))  # test accuracy 0.92
    (tmp_path / "overfit.csv").write_bytes(data.csv(data.predictions(2100)))  # test accuracy 0.93
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "meter-dashboard"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m meter_dashboard "$@"\n')
    shim.chmod(0o755)
    url = f"sqlite:///{tmp_path / 'team.sqlite'}"
    env = dict(os.environ, METER_DASHBOARD_STORE=url, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(ROOT))
    return tmp_path, url, env


def bash(line: str, cwd, env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_every_example_answers_what_the_readme_shows(workdir):
    cwd, url, env = workdir
    pairs = examples()
    assert len(pairs) == 13
    create, kind, shown = pairs[0]
    proc = bash(create, cwd, env)
    assert proc.returncode == 0 and matches(json.loads(shown), json.loads(proc.stdout)), proc.stderr
    env["ADMIN"] = json.loads(proc.stdout)["admin_token"]
    server = Server(url, cwd, pages="planner", ready_path="/api/health")
    env["SERVER"] = server.base
    routes = set()
    try:
        for line, kind, shown in pairs[1:]:
            proc = bash(line, cwd, env)
            assert proc.returncode == 0, (line, proc.stderr)
            routes.add(re.sub(r"\?.*", "", re.search(r"\$SERVER(/\S*)", line).group(1).strip('"')))
            if kind == "text":
                assert proc.stdout.rstrip("\n") == shown, (line, proc.stdout[:300])
                continue
            answer = json.loads(proc.stdout)
            assert matches(json.loads(shown), answer), (line, proc.stdout[:600])
            if "token" in answer and "tenant" in answer:
                env["TOKEN"] = answer["token"]
    finally:
        server.stop()
    documented = {p.replace("{name}", "web") for p in document()["paths"]}
    assert routes == documented  # one example per route


def test_the_pipeline_shown_is_the_script_in_the_repository():
    shown = SECTION.split("<!-- pipeline: tests/testsets/pipeline/gate.sh -->\n```bash\n", 1)[1].split("\n```", 1)[0]
    assert shown == SCRIPT.read_text(encoding="utf-8").rstrip("\n")


def test_the_pipeline_script_gates_a_model(workdir):
    cwd, url, env = workdir
    proc = bash("meter-dashboard testset create web --labels labels.csv --epsilon 0.01,0.02,0.03,0.04,0.05 "
                "--delta 0.1 --steps 8 --alarm-signal 4 --format json", cwd, env)
    admin = json.loads(proc.stdout)["admin_token"]
    server = Server(url, cwd, pages="planner", ready_path="/api/health")
    try:
        token = json.loads(bash(f"meter-dashboard testset token web --tenant ci --server {server.base} --token {admin} "
                                "--format json", cwd, env).stdout)["token"]
        gate = dict(env, SERVER=server.base, TOKEN=token, TESTSET="web")
        doc = document()

        def run(predictions, val):
            proc = subprocess.run(["bash", str(SCRIPT)], cwd=cwd, capture_output=True, text=True, timeout=300,
                                  env=dict(gate, PREDICTIONS=predictions, VAL_ACCURACY=val))
            answer = json.loads((cwd / "answer.json").read_text()) if proc.returncode != 2 else None
            return proc.returncode, answer, proc

        code, answer, _ = run("preds.csv", "0.93")
        assert code == 0 and answer["signal"] == 3 and answer["failing"] is False
        check(doc, {"$ref": "#/components/schemas/Submission"}, answer)
        code, answer, _ = run("overfit.csv", "0.99")
        assert code == 1 and answer["signal"] == 5 and answer["failing"] is True
        assert [a["kind"] for a in answer["alarms"]] == ["signal_at_or_above"]
        gate["TOKEN"] = token[:-3] + "xyz"
        code, answer, proc = run("preds.csv", "0.93")
        assert code == 2 and "a valid token for test set 'web' is needed" in proc.stderr
    finally:
        server.stop()
