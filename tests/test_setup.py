"""The README's first command, as written, on a Debian whose only Python is Debian's own (issue 33).

``test_the_readme_main_command_serves_the_planner_with_debians_python`` copies the clone to a temporary
folder and runs the block after ``<!-- main-command -->`` there with ``bash -euo pipefail -c``, the way
``.ci/run`` runs the test command, with a ``PATH`` of Debian's folders only (``/usr/sbin:/usr/bin:/sbin:/bin``:
no pyenv, no ``/usr/local/bin``, no active virtual environment), so ``python3`` is ``/usr/bin/python3``,
which refuses ``pip install`` outside a virtual environment (PEP 668) and has no ``python`` beside it. It
waits for <http://localhost:5006/planner>, then stops the whole process group and checks nothing of it
is left.

It is opt-in (``python -m pytest -m setup tests/test_setup.py``; ``.ci/run`` runs it after the README's
test command) rather than part of every run, because:

* the command serves on 5006, as the README says; the suite promises that a dashboard on 5006 may stay
  up beside it, and the command cannot be moved to another port without testing other text than the
  README's;
* it installs the package and its dependencies from the package index into a fresh environment (a
  minute with pip's cache, a download of about 150 MB without);
* on a machine without ``python3``/``python3-venv``, its ``apt-get`` installs them (root only).

``apt-get``: a stand-in placed first on the ``PATH`` runs Debian's real ``apt-get`` (``update``, then
``install``) only when a package the command asks for is not installed, so the test does not refresh the
package lists of a machine that already has everything; the command text is the README's, unchanged.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.test_readme import _block_after

pytestmark = pytest.mark.setup

ROOT = Path(__file__).resolve().parents[1]
DEBIAN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
PORT = 5006  # the README's "then open http://localhost:5006/planner"
#: how long the install (a venv, the package and its dependencies) and the start may take together
DEADLINE = 1500.0
#: what a copy of the clone leaves out: environments, build output, caches, test artifacts
IGNORED = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache",
                                 ".hypothesis", ".benchmarks", "artifacts", ".server.log")

#: Debian's apt-get when a requested package is missing, otherwise nothing (see the module's docstring)
APT_GET = """#!/bin/sh
# tests/test_setup.py: the README's apt-get, run only when a package it asks for is missing
echo "apt-get $*" >> "$APT_LOG"
[ "$1" = update ] && exit 0
missing=""
for arg in "$@"; do
  case "$arg" in
    install|-*) ;;
    *) dpkg-query -W -f='${Status}' "$arg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $arg" ;;
  esac
done
[ -z "$missing" ] && { echo "apt-get: already installed: $*" >> "$APT_LOG"; exit 0; }
if [ "$(id -u)" != 0 ]; then echo "apt-get: not root and missing:$missing" >&2; exit 100; fi
/usr/bin/apt-get update -qq && exec /usr/bin/apt-get "$@"
"""


def _debian_env(shims: Path, apt_log: Path) -> dict:
    """This environment without pyenv, virtual environments or PYTHONPATH; Debian's folders on the PATH."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "CONDA_PREFIX", "DISPLAY", "WAYLAND_DISPLAY")
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("PYENV")}
    # no browser tab: the command's `serve` opens one, as it should for a user; here BROWSER=true swallows it
    env.update(PATH=f"{shims}:{DEBIAN_PATH}", APT_LOG=str(apt_log), BROWSER="true", PYTHONUNBUFFERED="1")
    return env


def _port_taken(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the whole group (bash, meter-dashboard and what it started), then SIGKILL if needed."""
    pgid = proc.pid  # start_new_session: the group is the shell's pid
    if _group_alive(pgid):
        os.killpg(pgid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pass
    deadline = time.monotonic() + 30
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.5)
    if _group_alive(pgid):
        os.killpg(pgid, signal.SIGKILL)
        proc.wait(timeout=30)
        raise AssertionError("the README's command was still running 30 s after SIGTERM (killed)")


def test_the_readme_main_command_serves_the_planner_with_debians_python(tmp_path):
    command = _block_after("<!-- main-command -->")
    if _port_taken(PORT):
        pytest.fail(f"port {PORT} is in use: the README's command serves there; stop what listens on it first")
    clone = tmp_path / "clone"
    shutil.copytree(ROOT, clone, ignore=IGNORED, symlinks=True)
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "apt-get").write_text(APT_GET, encoding="utf-8")
    (shims / "apt-get").chmod(0o755)
    env = _debian_env(shims, tmp_path / "apt-get.log")
    log_path = tmp_path / "command.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", command], cwd=clone, env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def output() -> str:
        return log_path.read_text(encoding="utf-8", errors="replace")[-6000:]

    try:
        started = time.monotonic()
        html = None
        while time.monotonic() - started < DEADLINE:
            if proc.poll() is not None:
                pytest.fail(f"the README's command exited with {proc.returncode} before serving:\n{output()}")
            try:
                with urllib.request.urlopen(f"http://localhost:{PORT}/planner", timeout=60) as page:
                    assert page.status == 200
                    html = page.read().decode("utf-8")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(2)
        assert html is not None, f"no answer on {PORT}/planner within {DEADLINE:.0f} s:\n{output()}"
        assert "Planner" in html and "bokeh" in html.lower(), html[:2000]
        # the environment is the clone's .venv, made by Debian's python3 (not pyenv's, not this suite's)
        cfg = (clone / ".venv" / "pyvenv.cfg").read_text(encoding="utf-8")
        assert re.search(r"^home = /usr/bin$", cfg, re.M), cfg
        assert proc.poll() is None
    finally:
        _stop(proc)
    assert not _port_taken(PORT), f"something still listens on {PORT} after the process group was stopped"
    apt_calls = (tmp_path / "apt-get.log").read_text(encoding="utf-8")
    assert "apt-get install" in apt_calls and "python3-venv" in apt_calls, apt_calls
