"""The habits of the CLI (issue 25): examples that paste and run, ``-`` for standard input, Ctrl-C, gates, version.

- Every verb's ``--help`` shows examples, each on a line of its own (never wrapped mid-argument); this
  test takes them from the help text and runs them in a shell, in a fresh folder, as a person pastes
  them (the ``testset`` ones in order, in one folder; ``serve``'s is started, asked for a page, and
  stopped with Ctrl-C).
- Every file argument takes ``-`` for standard input.
- Ctrl-C exits with status 130 and one line, never a traceback: a real SIGINT to a long
  ``plan --bound binomial`` and a long ``simulate``, and to every verb through ``main``.
- Every verb that judges has a switch that fails the pipeline (exit status 1).
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import time
import urllib.request
from importlib import resources
from pathlib import Path

import pytest

from meter_dashboard.cli import COMMAND_MODULES, build_parser, main

DATA = resources.files("meter_dashboard.data")
ROOT = Path(__file__).resolve().parents[2]
#: examples whose documented exit status is not 0 (the help text says why)
EXPECTED_STATUS = {"--fail-on-approval": 1, "--fail-on-fail": 1}


def _helps() -> dict[str, str]:
    os.environ["COLUMNS"] = "80"  # argparse wraps to the terminal: examples must survive a narrow one
    parser = build_parser()
    return {name: verb.format_help() for name, verb in parser.verbs.items()}


HELPS = _helps()


def _examples(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if re.match(r"\s+(\S.*\| )?meter-dashboard \w", line) and not line.strip().startswith("meter-dashboard [")]


def test_every_verb_shows_examples_on_lines_of_their_own():
    assert set(HELPS) >= set(COMMAND_MODULES) | {"ladder-size", "compare-size"}
    for verb, text in HELPS.items():
        assert _examples(text), f"`meter-dashboard {verb} --help` shows no example"
        assert not re.search(r"examples?: meter-dashboard", text), f"{verb}: an example that the help text re-wraps"
        for example in _examples(text):
            shlex.split(example)  # whole: no quote left open by a wrapped line


@pytest.fixture()
def shell(tmp_path):
    """Run a pasted line with bash in a fresh folder, ``meter-dashboard`` being this checkout's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "meter-dashboard"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m meter_dashboard "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}

    def run(line: str, **kwargs):
        return subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=work, env=env, capture_output=True,
                              text=True, **kwargs)
    run.env, run.cwd = env, work
    return run


@pytest.mark.parametrize("verb", sorted(set(HELPS) - {"serve", "testset"}))
def test_each_example_pastes_and_runs(verb, shell):
    for example in _examples(HELPS[verb]):
        proc = shell(example, timeout=600)
        expected = next((status for flag, status in EXPECTED_STATUS.items() if flag in example), 0)
        assert proc.returncode == expected, f"{example}\n{proc.stderr[-2000:]}"
        assert proc.stdout.strip(), example
        assert "Traceback" not in proc.stderr


def test_the_testset_examples_run_in_order(shell):
    examples = _examples(HELPS["testset"])
    assert len(examples) >= 3
    outputs = []
    for example in examples:
        proc = shell(example, timeout=300)
        assert proc.returncode == 0, f"{example}\n{proc.stderr[-2000:]}"
        outputs.append(proc.stdout)
    assert "3,000 labels" in outputs[0] and "step 1: signal" in outputs[1] and "steps used 1 of 4" in outputs[2]


def test_the_serve_example_serves_and_stops_on_ctrl_c(shell):
    (example,) = _examples(HELPS["serve"])
    proc = subprocess.Popen(shlex.split(example), cwd=shell.cwd, env=shell.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        port = re.search(r"http://[^:]+:(\d+)", line)
        assert port, line + proc.stderr.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port.group(1)}/planner", timeout=120) as page:
            assert page.status == 200
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err


# ---------------------------------------------------------------------------------------------- "-"
def _data(name: str) -> bytes:
    return (DATA / name).read_bytes()


@pytest.mark.parametrize("argv,data,shows", [
    (["replay", "-", "--steps", "8"], "emocontext_trace.csv", "Replay of 'stdin' (8 steps)"),
    (["ci", "--condition", "n - o > 0.02 +/- 0.01", "--trace", "-"], "ci_commits.csv", "replay (40 commits"),
    (["ladder", "-", "--step", "0.25"], "ladder_ties.csv", "two_fixes"),
    (["compare", "-"], "compare_paired.csv", "P(A>B)"),
    (["approve", "-", "--method", "bonf-srgp"], "approve_refits.csv", "on stdin (800 test examples"),
    (["approve", "--example", "refits", "--method", "pres-srgp", "--prespecified", "-"],
     "approve_refits_prespecified.csv", "presSRGP"),
])
def test_a_dash_reads_standard_input(argv, data, shows):
    proc = subprocess.run([sys.executable, "-m", "meter_dashboard", *argv], input=_data(data), capture_output=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    assert shows in proc.stdout.decode()


def test_a_dash_names_stdin_in_errors():
    proc = subprocess.run([sys.executable, "-m", "meter_dashboard", "replay", "-"],
                          input=b"step,val_accuracy,test_accuracy\n1,2,0.5\n", capture_output=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("meter-dashboard replay: error: stdin, row 2")


def test_the_same_file_from_a_path_and_from_standard_input_gives_the_same_answer(capsys, monkeypatch):
    import io

    path = str(DATA / "ladder_leaderboard.csv")
    assert main(["ladder", path, "--format", "json"]) == 0
    from_path = capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_data("ladder_leaderboard.csv"))))
    assert main(["ladder", "-", "--format", "json"]) == 0
    assert capsys.readouterr().out == from_path


# ---------------------------------------------------------------------------------------------- Ctrl-C
@pytest.mark.parametrize("argv", [
    ["plan", "--epsilon", "0.01,0.02,0.03,0.04,0.05", "--delta", "0.01", "--steps", "1:1000", "--bound", "binomial"],
    ["simulate", "--epsilon", "0.02,0.04,0.06", "--delta", "0.1", "--steps", "10", "--replicates", "60000"],
], ids=["plan-binomial", "simulate"])
def test_ctrl_c_exits_130_without_a_traceback(argv):
    # Ctrl-C as a terminal delivers it: the child starts with SIGINT at its default, whatever the runner
    # left (a suite started in the background by a shell without job control ignores SIGINT, and so would
    # the child: it then finished its computation and exited 0)
    proc = subprocess.Popen([sys.executable, "-m", "meter_dashboard", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(6)  # well into the computation (both take minutes)
    assert proc.poll() is None, "finished before the interrupt: the test needs a longer computation"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "meter-dashboard: interrupted"


@pytest.mark.parametrize("verb", sorted(set(HELPS) - {"serve", "completion"}))
def test_an_interrupt_in_any_verb_is_130_and_one_line(verb, monkeypatch, capsys):
    import meter_dashboard.cli as cli

    parse = cli._Parser.parse_args

    def interrupted_run(self, *args, **kwargs):
        namespace = parse(self, *args, **kwargs)
        if getattr(namespace, "run", None) is not None:
            def run(_):
                raise KeyboardInterrupt
            namespace.run = run
        return namespace

    monkeypatch.setattr(cli._Parser, "parse_args", interrupted_run)
    monkeypatch.setattr(signal, "signal", lambda *a: None)  # leave pytest's own handler alone
    argv = shlex.split(_examples(HELPS[verb])[-1].split("| ")[-1])[1:]
    assert main(argv) == 130
    assert capsys.readouterr().err == "\nmeter-dashboard: interrupted\n"


# ---------------------------------------------------------------------------------------------- gates, version
def test_every_verb_that_judges_has_a_fail_switch():
    assert "--fail-on-alarm" in HELPS["replay"]
    assert "--fail-on-fail" in HELPS["ci"] and "--fail-on-alarm" in HELPS["ci"]
    assert "--fail-on-approval" in HELPS["approve"] and "--fail-on-denial" in HELPS["approve"]


@pytest.mark.parametrize("argv,status", [
    (["ci", "--condition", "n - o > 0.02 +/- 0.01", "--example", "ci_commits.csv"], 0),
    (["ci", "--condition", "n - o > 0.02 +/- 0.01", "--example", "ci_commits.csv", "--fail-on-fail"], 1),
    (["ci", "--condition", "n - o > 0.0 +/- 0.1", "--example", "ci_commits.csv", "--fail-on-fail",
      "--reliability", "0.9"], None),
    (["ci", "--condition", "n - o > 0.02 +/- 0.01", "--example", "ci_commits.csv", "--fail-on-alarm",
      "--adaptivity", "firstChange"], 1),
    (["approve", "--example", "refits", "--fail-on-approval"], 1),
    (["approve", "--example", "refits", "--fail-on-denial"], 1),
    (["approve", "--example", "refits"], 0),
])
def test_the_gates(argv, status, capsys):
    import json

    code = main([*argv, "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    if argv[0] == "ci" and status is None:  # the gate follows the last commit's signal
        status = 0 if out["replay"]["commits"][-1]["signal"] == "pass" else 1
    assert code == status


def test_a_gate_without_a_trace_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["ci", "--condition", "n - o > 0.02 +/- 0.01", "--fail-on-fail"])
    assert exit_.value.code == 2 and "--fail-on-fail must be used with --trace" in capsys.readouterr().err


def test_version_from_the_installed_metadata(capsys):
    from importlib.metadata import version

    import meter_dashboard as md

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"meter-dashboard {version('meter-dashboard')}" == \
        f"meter-dashboard {md.__version__}"


# ---------------------------------------------------------------------------------------------- completion
COMPLETIONS = [  # words typed (the last is being completed) -> what the shell offers
    (["pl"], "plan"),
    (["plan", "--bo"], "--bound"),
    (["plan", "--bound", ""], "hoeffding binomial"),
    (["testset", "cr"], "create"),
    (["testset", "create", "--meter", ""], "incremental regular"),
    (["approve", "--example", ""], "refits adversary"),
    (["ci", "--adaptivity", "f"], "full firstChange"),
    (["replay", "--format", ""], "table json"),
    (["completion", ""], "bash zsh"),
    (["--ver"], "--version"),
]


def _completion_script(shell: str, tmp_path) -> Path:
    proc = subprocess.run([sys.executable, "-m", "meter_dashboard", "completion", shell], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / f"meter-dashboard.{shell}"
    path.write_text(proc.stdout)
    return path


def _calls(words_list) -> str:
    lines = []
    for words, _ in words_list:
        quoted = " ".join(shlex.quote(w) for w in ["meter-dashboard", *words])
        lines.append(f"COMP_WORDS=({quoted}); COMP_CWORD={len(words)}; COMPREPLY=(); _meter_dashboard; "
                     'echo "${COMPREPLY[*]}"')
    return "\n".join(lines)


def test_bash_completion_from_the_parser(tmp_path):
    script = _completion_script("bash", tmp_path)
    proc = subprocess.run(["bash", "-c", f"source {script}\ncomplete -p meter-dashboard\n{_calls(COMPLETIONS)}"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "complete -o default -F _meter_dashboard meter-dashboard"
    assert lines[1:] == [offered for _, offered in COMPLETIONS]


def test_zsh_completion_from_the_parser(tmp_path):
    if not Path("/usr/bin/zsh").exists():
        pytest.skip("zsh is not installed (the README's test command installs it)")
    script = _completion_script("zsh", tmp_path)
    calls = _calls(COMPLETIONS).replace("'", "'\\''")
    proc = subprocess.run(["zsh", "-fc", f"source {script}\nprint -r -- ${{_comps[meter-dashboard]}}\n"
                           f"emulate sh -c '{calls}'"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "_bash_complete -o default -F _meter_dashboard"
    # zsh's compgen leaves the filtering by what was typed to zsh's completion system, which does it
    shown = [" ".join(w for w in line.split() if w.startswith(words[-1]))
             for line, (words, _) in zip(lines[1:], COMPLETIONS)]
    assert shown == [offered for _, offered in COMPLETIONS]
