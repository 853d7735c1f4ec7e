"""The README's notebook in a real JupyterLab, driven by Chromium, with no CDN reachable (issue 25).

A JupyterLab server (``python -m jupyterlab``, this environment's kernel) serves a notebook made
of the README's ``<!-- notebook-cell -->`` cells as written (the first one calls
``md.extension(inline=True)``, the README's offline switch). The browser refuses every request that
does not go to that server, as a firewalled company network would; the test runs all cells from
JupyterLab's Run menu, then checks that each component draws (a rendered output of real size, no
"Bokeh or Panel library is missing") and reacts: T 10 -> 20 in the planner changes its label count,
and steps 32 -> 64 in the CI component changes its own.
"""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("jupyterlab")
nbformat = pytest.importorskip("nbformat")
from playwright.sync_api import expect  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CELLS = re.findall(r"<!-- notebook-cell -->\s*```python\n(.*?)```", README, flags=re.S)
COMPONENTS = ["Planner", "Session", "CI", "Ladder", "Compare", "Approve"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """``(base URL, notebook name)`` of a JupyterLab serving the README's notebook."""
    root = tmp_path_factory.mktemp("lab")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, root / "readme.ipynb")
    settings = root / ".settings" / "@jupyterlab"
    for plugin, values in {"notebook-extension/tracker": {"windowingMode": "none"},  # every cell in the DOM
                           "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False}
                           }.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port = _free_port()
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(root / ".settings"), "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "JUPYTER_CONFIG_DIR": str(root / ".config"), "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
           "PANEL_INLINE": ""}  # the README's own switch must do it, not the environment
    log = open(root / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--ServerApp.port={port}",
         "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
         f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
         "--ServerApp.disable_check_xsrf=True",  # this throwaway local server takes the kernel session by REST
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyterlab exited with {proc.returncode}: {(root / 'lab.log').read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(base + "/api/status", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("jupyterlab did not start within 120 s")
        time.sleep(0.5)
    _start_kernel(base, "readme.ipynb", root / ".runtime")
    yield base, "readme.ipynb"
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _start_kernel(base: str, path: str, runtime: Path, timeout: float = 300) -> None:
    """The notebook's kernel session, started through the server's REST API and ready before the page opens.

    JupyterLab then attaches to it.  Left to the page on a loaded machine, a slow kernel start made
    JupyterLab ask "Select Kernel" again and again, each answer starting a kernel and shutting down
    the one still starting.
    """
    from jupyter_client import BlockingKernelClient

    body = json.dumps({"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}).encode()
    request = urllib.request.Request(base + "/api/sessions", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        kernel = json.loads(answer.read())["kernel"]["id"]
    connection = runtime / f"kernel-{kernel}.json"
    deadline = time.monotonic() + timeout
    while not connection.exists():
        assert time.monotonic() < deadline, f"no connection file for kernel {kernel} within {timeout} s"
        time.sleep(0.2)
    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=max(deadline - time.monotonic(), 1))  # answers kernel_info: it runs code now
    finally:
        client.stop_channels()


@pytest.fixture(scope="module")
def notebook_page(browser, lab):
    """The notebook open in JupyterLab, every cell run; requests beyond the server refused."""
    base, name = lab
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    refused: list[str] = []

    def only_the_lab(route):
        if route.request.url.startswith(base):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_lab)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.console_messages = []
    page.on("console", lambda msg: page.console_messages.append(msg.text))
    page.on("pageerror", lambda exc: page.console_messages.append(str(exc)))
    page.goto(f"{base}/lab/tree/{name}", wait_until="domcontentloaded")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="visible", timeout=120_000)
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(timeout=120_000)
    prompts = page.locator(".jp-Cell .jp-InputArea-prompt")
    page.dialogs_seen = []
    deadline = time.monotonic() + 600
    started = None
    while True:  # every cell numbered, none pending ([*])
        texts = prompts.all_inner_texts()
        dialog = page.locator(".jp-Dialog")
        if dialog.count():  # e.g. "Select Kernel" when the kernel was slow to start under load: accept it
            page.dialogs_seen.append(dialog.first.inner_text())
            dialog.locator(".jp-mod-accept").first.click()
            continue
        if started is None or (time.monotonic() - started > 30 and all(t.strip() == "[ ]:" for t in texts)):
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()  # (again, if the
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()  # kernel was busy)
            started = time.monotonic()
        if len(texts) == len(CELLS) and all(re.fullmatch(r"\[\d+\]:", t.strip()) for t in texts):
            break
        assert time.monotonic() < deadline, f"cells not all run after 600 s: {texts}; dialogs {page.dialogs_seen}"
        time.sleep(1)
    page.refused = refused
    yield page
    context.close()


def _cell(page, component: str):
    index = next(i for i, code in enumerate(CELLS) if f"md.{component}(" in code)
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def test_no_cell_failed_and_no_library_is_missing(notebook_page):
    errors = notebook_page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert errors.count() == 0, errors.all_inner_texts()
    missing = [m for m in notebook_page.console_messages if "library is missing" in m]
    assert not missing, missing


def test_the_plan_cell_shows_its_numbers(notebook_page):
    output = notebook_page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-OutputArea-output").last
    assert "38,005" in output.inner_text() or "38005" in output.inner_text()


@pytest.mark.parametrize("component", COMPONENTS)
def test_each_component_draws(notebook_page, component):
    output = _cell(notebook_page, component).locator(".jp-OutputArea-output").last
    expect(output.locator(".bk-panel-models-layout-Column, .bk-panel-models-layout-Row").first).to_be_attached(
        timeout=60_000)
    deadline = time.monotonic() + 60
    while output.bounding_box()["height"] < 150:  # drawn, not an empty placeholder
        assert time.monotonic() < deadline, f"md.{component}(...) drew {output.bounding_box()} only"
        time.sleep(0.5)
    assert output.locator("canvas, table, .tabulator").count() > 0, f"md.{component}(...) shows no plot or table"


def test_the_planner_reacts_to_t(notebook_page):
    cell = _cell(notebook_page, "Planner")
    count = cell.locator(".label-count-incremental").first
    expect(count).to_have_text("38,005", timeout=60_000)  # ease.ml/meter Sec. 5, T = 10
    box = cell.locator(".steps-input input").first
    box.fill("20")
    box.press("Enter")
    expect(count).not_to_have_text("38,005", timeout=60_000)
    assert int(count.inner_text().replace(",", "")) > 38_005  # more steps need more labels


def test_the_ci_component_reacts_to_its_steps(notebook_page):
    cell = _cell(notebook_page, "CI")
    labels = cell.locator(".ci-labels").first
    expect(labels).to_have_text(re.compile(r"\d"), timeout=60_000)
    before = labels.inner_text()
    box = cell.locator(".ci-steps input").first
    box.fill("64")
    box.press("Enter")
    expect(labels).not_to_have_text(before, timeout=60_000)  # twice the commits need more labels


def test_nothing_was_fetched_from_outside(notebook_page):
    """Requests beyond the machine were refused; the components drew all the same."""
    assert all(not url.startswith("http://127.0.0.1") for url in notebook_page.refused)
    json.dumps(notebook_page.refused)  # listed for the report when a test above fails
