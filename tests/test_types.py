"""A type checker is clean on the package (issue 25): ``python -m mypy`` with pyproject's [tool.mypy].

py.typed is shipped (tests/test_packaging.py), so users' type checkers read these annotations. Modules
that still have errors are listed in the configuration's ratchet (``ignore_errors``); this test fails
when mypy finds an error anywhere else, and when a listed module has become clean (take it off the
list), so the list only shrinks.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

pytest.importorskip("mypy")
ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
RATCHET = next(o["module"] for o in CONFIG["overrides"] if o.get("ignore_errors"))


def _mypy(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=900, env=env)


def test_mypy_is_clean_on_the_package():
    proc = _mypy()
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout


def test_the_ratchet_only_lists_modules_that_still_have_errors(tmp_path):
    """Without the ratchet, every listed module still has an error (else: take it off the list)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index("[[tool.mypy.overrides]]\n# The ratchet")
    config = tmp_path / "mypy.toml"
    config.write_text("[tool.mypy]" + text[:start].split("[tool.mypy]", 1)[1], encoding="utf-8")
    proc = _mypy("--config-file", str(config))
    failing = {re.sub(r"\.py$", "", m).replace("/", ".") for m in re.findall(r"^(meter_dashboard/\S+?\.py):\d+",
                                                                              proc.stdout, flags=re.M)}
    clean = sorted(set(RATCHET) - failing)
    assert not clean, f"now clean: take them off the ratchet in pyproject.toml: {clean}"
