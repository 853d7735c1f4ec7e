"""The README stays true: its commands and its worked example."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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


def test_ci_runs_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in script  # it reads the command from the README, so they cannot drift


def test_worked_example_matches_the_cli():
    block = README.split("$ meter-dashboard plan", 1)[1].split("```", 1)[0]
    args = block.splitlines()[0].split()
    out = subprocess.run([sys.executable, "-m", "meter_dashboard", "plan", *args], capture_output=True, text=True,
                         check=True).stdout
    for line in block.splitlines()[1:]:
        line = line.strip()
        if line.startswith(("single_model", "no_adaptivity", "resampling", "regular", "incremental")):
            assert line in out, line
