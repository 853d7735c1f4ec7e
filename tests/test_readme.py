"""The README stays true: its commands and its worked example."""
from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _block_after(marker: str) -> str:
    after = README.split(marker, 1)[1]
    return re.search(r"```bash\n(.*?)\n```", after, re.S).group(1).strip()


def test_readme_has_the_two_setup_commands_first():
    main = _block_after("<!-- main-command -->")
    test = _block_after("<!-- test-command -->")
    assert "meter-dashboard serve" in main and "pip install" in main
    assert "python -m pytest" in test and "chromium" in test and '".[test]"' in test
    assert README.index("<!-- main-command -->") < README.index("## A worked example")


VENV = ["apt-get install", "python3-venv", "python3 -m venv .venv", ". .venv/bin/activate"]


@pytest.mark.parametrize("marker", ["<!-- main-command -->", "<!-- test-command -->"])
def test_both_commands_install_into_the_clones_virtual_environment(marker):
    """Debian's python3 refuses pip outside a venv (PEP 668) and has no ``python`` command (issue 33):
    each command installs python3-venv, makes ``.venv`` and activates it before pip, in that order."""
    command = _block_after(marker)
    assert "\n" not in command, "one line: .ci/run and tests/test_setup.py run the block as one command"
    positions = [command.find(part) for part in [*VENV, "pip install -e "]]
    assert -1 not in positions and positions == sorted(positions), (marker, command)
    assert "sudo" not in command and "--break-system-packages" not in command
    assert " python -m " not in command.split("activate", 1)[0], "`python` exists only once the venv is active"
    assert "`. .venv/bin/activate`" in README  # how to re-enter it in a new shell


def test_the_suite_duration_and_the_dashboard_beside_it_are_stated_next_to_the_test_command():
    after = README.split("<!-- test-command -->", 1)[1].split("## ", 1)[0]
    assert re.search(r"takes about \d+ minutes", after)
    assert "5006 may stay up beside it" in after and "free port" in after


def test_ci_runs_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in script  # it reads the command from the README, so they cannot drift
    # then the README's first command with Debian's python3 (issue 33), in the environment the first one made
    assert script.rstrip().endswith(".venv/bin/python -m pytest -m setup tests/test_setup.py")


def _worked_example() -> tuple[list[str], str]:
    """The worked example's arguments and the output the README shows, up to the block's end."""
    block = README.split("$ meter-dashboard plan", 1)[1].split("```", 1)[0]
    first, shown = block.split("\n", 1)
    return first.split(), shown


@pytest.mark.parametrize("columns", ["40", "80", "250"])
def test_worked_example_is_the_cli_output_byte_for_byte(columns):
    """The whole output (caption, table, sentence, note), at any terminal width: plan wraps nothing, so its
    lines do not depend on COLUMNS (issue 33)."""
    args, shown = _worked_example()
    assert args == ["--epsilon", "0.01,0.02,0.03,0.04,0.05", "--delta", "0.01", "--steps", "10"]
    env = {**os.environ, "COLUMNS": columns, "LINES": "24"}
    out = subprocess.run([sys.executable, "-m", "meter_dashboard", "plan", *args], capture_output=True,
                         check=True, env=env, timeout=120).stdout.decode("utf-8")
    assert out == shown, "\n".join(difflib.unified_diff(shown.splitlines(), out.splitlines(), "README", "CLI",
                                                        lineterm=""))
