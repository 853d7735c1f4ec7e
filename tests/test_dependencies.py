"""Every module the package imports is declared, and the declared floors install and work together (issue 25).

A small deptry-like check: the abstract syntax tree of every file gives its imports (``import``,
``from ... import`` and ``pytest.importorskip("...")``, wherever they stand); those
outside the standard library map to their distributions (``importlib.metadata.packages_distributions``)
and each must be named in ``[project] dependencies`` (for ``meter_dashboard/`` and ``apps/``) or in
the ``test`` extra too (for ``tests/``). A declared dependency nothing imports is refused as well,
except the ones kept for a reason named in :data:`DECLARED_WITHOUT_IMPORT`.

The floors: ``test_the_lowest_versions_install_and_work`` (marked ``lowest``, opt-in:
``python -m pytest -m lowest tests/test_dependencies.py``) installs exactly the floors of every
dependency into a fresh virtual environment and runs a part of the suite there. It downloads
about 150 MB the first time (then pip's cache answers) and takes a few minutes, so it is not part
of every run.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import venv
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
#: declared, though no file imports them by name: why
DECLARED_WITHOUT_IMPORT = {
    "psycopg": "SQLAlchemy loads it for postgresql+psycopg:// URLs (the postgres extra)",
    "ipykernel": "the kernel nbclient and JupyterLab start for the notebook tests",
    "pytest-benchmark": "a pytest plugin (the benchmark fixture)",
    "jupyterlab": "the browser test starts `python -m jupyterlab`",
    "mypy": "tests/test_types.py runs `python -m mypy`",
    "build": "tests/test_distributions.py runs `python -m build`",
}


def _name(requirement: str) -> str:
    """The normalized distribution name of a requirement string (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)).lower()


RUNTIME = {_name(r) for r in PROJECT["dependencies"]}
TEST = {_name(r) for r in PROJECT["optional-dependencies"]["test"]}


def _imported_top_modules(folder: Path) -> set[str]:
    modules = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "importorskip"
                  and node.args and isinstance(node.args[0], ast.Constant)):
                modules.add(node.args[0].value.split(".")[0])  # pytest.importorskip("nbclient")
    return {m for m in modules if m not in sys.stdlib_module_names and m not in ("meter_dashboard", "tests")}


def _distributions(modules: set[str]) -> dict[str, str]:
    """module -> normalized distribution name (the module itself if nothing installed provides it)."""
    provided = packages_distributions()
    return {m: _name(provided.get(m, [m])[0]) for m in modules}


@pytest.mark.parametrize("folder", ["meter_dashboard", "apps"])
def test_every_import_of_the_package_is_a_declared_dependency(folder):
    found = _distributions(_imported_top_modules(ROOT / folder))
    undeclared = {m: d for m, d in found.items() if d not in RUNTIME}
    assert not undeclared, f"imported by {folder}/ but not in [project] dependencies: {undeclared}"


def test_every_import_of_the_tests_is_declared():
    found = _distributions(_imported_top_modules(ROOT / "tests"))
    undeclared = {m: d for m, d in found.items() if d not in RUNTIME | TEST}
    assert not undeclared, f"imported by tests/ but neither a dependency nor in the test extra: {undeclared}"


def test_every_declared_dependency_is_used():
    imported = set(_distributions(_imported_top_modules(ROOT / "meter_dashboard")
                                  | _imported_top_modules(ROOT / "tests")).values())
    unused = (RUNTIME | TEST) - imported - set(DECLARED_WITHOUT_IMPORT)
    assert not unused, f"declared but never imported (or say why in DECLARED_WITHOUT_IMPORT): {unused}"


def test_every_runtime_dependency_has_a_floor_and_a_ceiling():
    for requirement in PROJECT["dependencies"]:
        assert re.search(r">=\s*[0-9]", requirement) and "<" in requirement, requirement


#: run in the lowest-versions environment (PostgreSQL cases left out: the postgres extra is not installed)
LOWEST_TESTS = ["tests/bounds/test_meter.py", "tests/bounds/test_binomial.py", "tests/test_api.py",
                "tests/cli/test_plan.py", "tests/cli/test_ci.py", "tests/models/test_session.py",
                "tests/models/test_files.py", "tests/models/test_compare.py", "tests/models/test_ladder.py",
                "tests/models/test_approve.py", "tests/testsets/test_service.py", "tests/views/test_planner.py",
                "tests/test_readme.py"]


def lowest_pins() -> list[str]:
    """``name==floor`` for every runtime dependency: the oldest versions the package claims to support."""
    pins = []
    for requirement in PROJECT["dependencies"]:
        name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
        pins.append(f"{name}=={re.search(r'>=([0-9][^,; ]*)', requirement).group(1)}")
    return pins


def test_the_pins_are_the_floors():
    pins = dict(p.split("==") for p in lowest_pins())
    assert pins["bokeh"] == "3.8" and pins["panel"] == "1.9" and pins["numpy"] == "1.26"


@pytest.mark.lowest
def test_the_lowest_versions_install_and_work(tmp_path):
    """A fresh environment with exactly the floors (transitive packages as pip resolves them), then tests."""
    env_dir = tmp_path / "lowest"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    pins = lowest_pins()
    tests = ["pytest>=8", "hypothesis>=6.100"]
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", *pins, *tests],
                             capture_output=True, text=True, timeout=1800)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    own = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(ROOT)],
                         capture_output=True, text=True, timeout=600)
    assert own.returncode == 0, own.stderr[-3000:]
    check = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    freeze = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True, text=True, timeout=120)
    installed = {line.split("==")[0].lower().replace("_", "-"): line.split("==")[-1]
                 for line in freeze.stdout.splitlines() if "==" in line}
    for pin in pins:
        name, floor = pin.split("==")
        assert installed[_name(name)].startswith(floor), (pin, installed[_name(name)])
    run = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-k", "not postgresql",
         *LOWEST_TESTS],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-3000:]
