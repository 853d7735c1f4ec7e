"""A type checker is clean on the package (issue 25): ``python -m mypy`` with pyproject's [tool.mypy].

py.typed is shipped (tests/test_packaging.py), so users' type checkers read these annotations. Every
module is checked; no module's errors are ignored (``ignore_errors`` appears nowhere in the
configuration).  ``bounds/`` is checked strictly: it passes ``mypy --strict`` and the configuration
gives it (and only it) every per-module flag of ``--strict``.
"""
from __future__ import annotations

import io
import os
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


def _mypy(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=900, env=env)


def test_mypy_is_clean_on_the_package():
    proc = _mypy()
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout


def test_no_module_is_exempt():
    """No override hides errors (the ratchet of modules with errors is gone: it reached zero)."""
    assert not [o["module"] for o in CONFIG.get("overrides", []) if o.get("ignore_errors")]


BOUNDS = ("meter_dashboard.bounds", "meter_dashboard.bounds.*")


def _strict_flags() -> dict:
    """The per-module options ``mypy --strict`` changes, as mypy itself defines them (name -> value)."""
    from mypy.main import process_options
    from mypy.options import PER_MODULE_OPTIONS

    quiet = io.StringIO()
    _, strict = process_options(["--strict", "--config-file", os.devnull, "-c", "pass"], stdout=quiet, stderr=quiet)
    _, plain = process_options(["--config-file", os.devnull, "-c", "pass"], stdout=quiet, stderr=quiet)
    return {k: getattr(strict, k) for k in sorted(PER_MODULE_OPTIONS) if getattr(strict, k) != getattr(plain, k)}


def test_bounds_passes_mypy_strict():
    """``mypy --strict meter_dashboard/bounds`` (the modules it imports too)."""
    proc = _mypy("--strict", "meter_dashboard/bounds")
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout


def test_the_configuration_checks_bounds_strictly_and_only_bounds():
    """The override sets every per-module flag of --strict on bounds/ (not ``strict = true``: in an override
    mypy applies that to every module); the rest of the package keeps the default flags."""
    from mypy.config_parser import parse_config_file
    from mypy.options import Options

    flags = _strict_flags()
    assert {"disallow_untyped_defs", "disallow_untyped_calls", "warn_return_any"} <= set(flags)
    override = next(o for o in CONFIG["overrides"] if tuple(o["module"]) == BOUNDS)
    assert "strict" not in override and {k: v for k, v in override.items() if k != "module"} == flags

    options, quiet = Options(), io.StringIO()
    parse_config_file(options, lambda: None, str(ROOT / "pyproject.toml"), quiet, quiet)
    for module in ("meter_dashboard.bounds", "meter_dashboard.bounds.meter", "meter_dashboard.bounds.srgp.normal"):
        per_module = options.clone_for_module(module)
        assert {k: getattr(per_module, k) for k in flags} == flags, module
    for module in ("meter_dashboard.core.runtime", "meter_dashboard.meter.model", "meter_dashboard"):
        per_module = options.clone_for_module(module)
        assert not per_module.disallow_untyped_defs and not per_module.warn_return_any, module
