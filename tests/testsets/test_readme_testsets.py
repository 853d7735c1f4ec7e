"""The README's "Guarded test sets" section stays true: its commands, outputs, HTTP calls and notebook code."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.testsets.conftest import Data
from tests.testsets.serving import Server

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "README.md").read_text(encoding="utf-8").split("## Guarded test sets", 1)[1].split("\n## ", 1)[0]


def blocks(kind: str) -> list:
    return re.findall(rf"```{kind}\n(.*?)\n```", SECTION, re.S)


def commands(block: str) -> list:
    """The block's commands (comments dropped, trailing comments and line continuations joined)."""
    text = block.replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.split(" #")[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    data = Data()
    (tmp_path / "labels.csv").write_bytes(data.labels_csv())
    (tmp_path / "preds.csv").write_bytes(data.csv(data.predictions(2400)))  # test accuracy 0.92
    url = f"sqlite:///{tmp_path / 'team.sqlite'}"
    env = dict(os.environ, METER_DASHBOARD_STORE=url)
    return tmp_path, url, env


def run(line: str, cwd, env) -> subprocess.CompletedProcess:
    args = shlex.split(line)
    assert args[0] == "meter-dashboard", line
    return subprocess.run([sys.executable, "-m", "meter_dashboard", *args[1:]], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_cli_block_and_its_output(workdir):
    cwd, _, env = workdir
    shown = blocks("console")[0]
    outputs = []
    for line in commands(blocks("bash")[0]):
        proc = run(line, cwd, env)
        assert proc.returncode == 0, (line, proc.stderr)
        outputs.append(re.sub(r"mdt_\S+", "mdt_…", proc.stdout))
    everything = "".join(outputs)
    for line in shown.splitlines():
        assert line.strip() == "" or line in everything, line


def test_the_file_message_quoted_in_the_readme(workdir):
    cwd, _, env = workdir
    quoted = re.search(r"\(`(preds\.csv, row 4.*?)`\)", SECTION.replace("\n  ", " ")).group(1)
    (cwd / "small.csv").write_text("id,label\n" + "".join(f"ex{k},cat\n" for k in range(1, 10)))
    (cwd / "preds.csv").write_text("id,prediction\nex5,cat\nex7,dog\nex7,cat\n")
    assert run("meter-dashboard testset create tiny --labels small.csv --steps 2 --allow-smaller", cwd, env).returncode == 0
    proc = run("meter-dashboard testset submit tiny --predictions preds.csv --val-accuracy 0.9", cwd, env)
    assert proc.returncode == 2 and proc.stderr.strip() == f"meter-dashboard testset: error: {quoted}"


def test_the_http_block_and_the_notebook_block(workdir):
    cwd, url, env = workdir
    import meter_dashboard as md

    created = md.connect(url).create("emo", str(cwd / "labels.csv"), epsilon=[0.01, 0.02, 0.03, 0.04, 0.05],
                                     delta=0.1, steps=8)
    server = Server(url, cwd, pages="planner")
    try:
        token = created.token("bob")
        env = dict(env, TOKEN=token)
        for line in commands(blocks("bash")[1]):
            line = line.replace("http://localhost:5006", server.base)
            if line.startswith("curl"):
                if shutil.which("curl") is None:
                    continue
                proc = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True,
                                      timeout=120)
                assert proc.returncode == 0 and "predictions must be one prediction for each" in proc.stdout
                continue
            proc = run(line.replace("$TOKEN", token), cwd, env)
            assert proc.returncode == 0, (line, proc.stderr)
        code = blocks("python")[-1]
        code = code.replace('"sqlite:///team.sqlite"', repr(url)).replace("http://localhost:5006", server.base)
        code = code.replace('"emo"', '"emo2"')  # beside the test set the bash blocks made
        namespace: dict = {}
        old = os.getcwd()
        os.chdir(cwd)
        try:
            exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own example
        finally:
            os.chdir(old)
        replayed = namespace["emo"].replay()
        assert replayed.incremental_signal.tolist() == [3] and namespace["alice"].status()["steps_used"] == 1
    finally:
        server.stop()
