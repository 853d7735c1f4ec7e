"""The distributions, as a user gets them (issue 25): ``python -m build``, then the wheel and the sdist
each installed in a clean virtual environment.

``python -m build`` builds the sdist, then the wheel from the sdist (so the sdist is proven to build).
The clean environments reuse the packages of the environment running the tests and install ours with
``--no-deps``, so the test takes seconds rather than a download of the dependencies; the lowest-versions
install of every dependency is tests/test_dependencies.py's opt-in ``lowest`` test. They see those
packages through a ``.pth`` file naming this interpreter's site-packages folders, not through
``--system-site-packages``: inside a virtual environment (the README's way, and the only way on a Debian
whose Python is externally managed) that option exposes the *base* interpreter, which has none of the
dependencies (issue 33). The folders are only listed, not processed as site folders, so their ``.pth``
files (among them this environment's editable install of meter_dashboard) do not run in the clean one.
"""
from __future__ import annotations

import email
import json
import os
import site
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: tests the sdist must pass when run from its own unpacked tree
SDIST_TESTS = ["tests/test_api.py", "tests/test_shipped_data.py", "tests/test_structure.py",
               "tests/test_dependencies.py", "tests/cli/test_ladder.py"]


def _run(argv, **kwargs):
    proc = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    assert proc.returncode == 0, f"{argv}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], timeout=600)
    return next(out.glob("meter_dashboard-*.whl")), next(out.glob("meter_dashboard-*.tar.gz"))


def _site_folders() -> list[str]:
    """The site-packages folders of the interpreter running the tests, whether it is a venv or not."""
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    # Debian's Python names folders that need not exist (in a venv: <venv>/local/lib/python3.X/dist-packages)
    return [f for f in folders if os.path.isdir(f)]


def _clean_env(where: Path) -> Path:
    """A fresh virtual environment that sees this one's packages but not its meter_dashboard."""
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(where)
    python = where / "bin" / "python"
    own = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], timeout=60,
               env=_env()).stdout.strip()
    Path(own, "_outer_packages.pth").write_text("".join(f"{f}\n" for f in _site_folders()), encoding="utf-8")
    return python


def _env():
    """No PYTHONPATH: the environment's own meter_dashboard is the one imported."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _install(python: Path, target: Path):
    _run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(target)], timeout=600, env=_env())


def _installed_from(python: Path, where: Path) -> str:
    code = "import meter_dashboard, sys; print(meter_dashboard.__file__); print(meter_dashboard.__version__)"
    lines = _run([str(python), "-c", code], cwd=where, timeout=120, env=_env()).stdout.split()
    assert lines[0].startswith(str(where)), f"imported {lines[0]}, not the clean environment's copy"
    return lines[1]


def test_the_wheel_holds_what_the_pages_need_and_its_metadata(dist):
    wheel, _ = dist
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    for needed in ("meter_dashboard/ui/dashboard.css", "meter_dashboard/app/templates/index.html",
                   "meter_dashboard/data/emocontext_trace.csv", "meter_dashboard/data/emocontext.md",
                   "meter_dashboard/py.typed"):
        assert needed in names, needed
    assert not [n for n in names if "generate_" in n or n.startswith("tests/")], "generators stay out of the wheel"
    metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = email.message_from_string(archive.read(metadata_name).decode())
    assert metadata["License-Expression"] == "BSD-3-Clause"  # PEP 639
    assert metadata["License-File"] == "LICENSE"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    requires = metadata.get_all("Requires-Dist")
    assert any(r.startswith("tornado") for r in requires) and any(r.startswith("markdown-it-py") for r in requires)


def test_the_sdist_is_the_whole_tracked_source(dist):
    _, sdist = dist
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (run from an sdist): nothing to compare with")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    tracked = set(subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.split())
    missing = sorted(n for n in tracked - names if n != ".gitignore")
    assert not missing, f"tracked but not in the sdist: {missing[:20]}"
    assert not [n for n in names if "__pycache__" in n or n.startswith("tests/ui/artifacts")]


def test_the_wheel_installs_in_a_clean_environment(dist, tmp_path):
    wheel, _ = dist
    python = _clean_env(tmp_path / "wheel-env")
    _install(python, wheel)
    version = _installed_from(python, tmp_path / "wheel-env")
    assert version == "0.1.0"
    cli = tmp_path / "wheel-env" / "bin" / "meter-dashboard"
    assert _run([str(cli), "--version"], timeout=60, env=_env()).stdout.strip() == f"meter-dashboard {version}"
    plan = _run([str(cli), "plan", "--epsilon", "0.01,0.02,0.03,0.04,0.05", "--delta", "0.01", "--steps", "10",
                 "--format", "json"], timeout=120, env=_env(), cwd=tmp_path)
    assert '"incremental": 38005' in plan.stdout  # ease.ml/meter Sec. 5 (the README's worked example)
    _run([str(python), "-m", "pip", "check"], timeout=120, env=_env())


def test_the_sdist_installs_and_its_tests_pass_from_it(dist, tmp_path):
    _, sdist = dist
    python = _clean_env(tmp_path / "sdist-env")
    _install(python, sdist)
    assert _installed_from(python, tmp_path / "sdist-env") == "0.1.0"
    with tarfile.open(sdist) as tar:
        # extraction filters came in 3.11.4 (and 3.10.12); Debian 12's python3 is 3.11.2
        tar.extractall(tmp_path / "src", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    tree = next((tmp_path / "src").iterdir())
    run = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *SDIST_TESTS],
                         cwd=tree, capture_output=True, text=True, timeout=900, env=_env())
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and " failed" not in run.stdout


def test_the_clean_environment_sees_this_environments_packages_not_its_base(tmp_path):
    """Inside a venv, the clean environments must see the venv's packages (issue 33): with
    ``--system-site-packages`` they saw the base interpreter's, which on Debian has no param, no panel."""
    python = _clean_env(tmp_path / "env")
    code = "import json, sys, param; print(json.dumps([sys.prefix, sys.path, param.__file__]))"
    prefix, path, param_file = json.loads(_run([str(python), "-c", code], timeout=60, env=_env(),
                                               cwd=tmp_path).stdout)
    assert Path(prefix) == tmp_path / "env"
    for folder in _site_folders():
        assert folder in path, f"{folder} (this environment's packages) is not on the clean environment's path"
    ours = [f for f in _site_folders() if Path(param_file).resolve().is_relative_to(Path(f).resolve())]
    assert ours, f"param came from {param_file}, not from this environment's site folders {_site_folders()}"
    own = str((tmp_path / "env").resolve())
    leaked = [p for p in path if ("site-packages" in p or "dist-packages" in p) and p not in _site_folders()
              and not str(Path(p).resolve()).startswith(own)]
    assert not leaked, f"packages from outside this environment are visible (the base interpreter's?): {leaked}"
