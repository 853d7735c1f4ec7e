"""The README's notebook in a real JupyterLab, driven by Chromium, with no CDN reachable (issue 25).

A JupyterLab server (``python -m jupyterlab``, this environment's kernel) serves a notebook made
of the README's ``<!-- notebook-cell -->`` cells as written (the first one calls
``md.extension(inline=True)``, the README's offline switch). The browser refuses every request that
does not go to that server, as a firewalled company network would; the test runs all cells from
JupyterLab's Run menu, then checks that each component draws (a rendered output of real size, no
"Bokeh or Panel library is missing") and reacts: T 10 -> 20 in the planner changes its label count,
and steps 32 -> 64 in the CI component changes its own.  JupyterLab runs with the README's settings
(``<!-- lab-settings -->``: comms not over kernel subshells; with them a value typed right after the cells
ran was never sent), so no cell may print the components' subshell warning either.
"""
from __future__ import annotations

import contextlib
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
#: the README's ``<!-- lab-settings: <plugin id> -->`` blocks: {"<extension>/<plugin>": settings}
LAB_SETTINGS = {plugin.split("/", 1)[1].replace(":", "/"): json.loads(block) for plugin, block in re.findall(
    r"<!-- lab-settings: (\S+) -->\s*```json\n(.*?)```", README, flags=re.S)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _jupyterlab(root: Path, cells: list[str], settings: dict):
    """A JupyterLab on a free local port serving ``readme.ipynb`` made of ``cells``, with these user settings.

    Besides ``settings`` (plugin "<extension>/<plugin>": values): every cell in the DOM, no news, and the
    notebook's kernel started by JupyterLab itself, without a "Select Kernel" dialog.  Yields its base URL.
    """
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, root / "readme.ipynb")
    for plugin, values in {**settings,
                           "notebook-extension/tracker": {"windowingMode": "none", "autoStartDefaultKernel": True},
                           "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False}
                           }.items():
        path = root / ".settings" / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port = _free_port()
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(root / ".settings"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "JUPYTER_CONFIG_DIR": str(root / ".config"), "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
           "PANEL_INLINE": ""}  # the README's own switch must do it, not the environment
    log = open(root / "lab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--ServerApp.port={port}",
         "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
         f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
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
                raise RuntimeError("jupyterlab did not start within 120 s")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """``(base URL, notebook name)`` of a JupyterLab serving the README's notebook, with the README's settings."""
    assert LAB_SETTINGS, "the README's <!-- lab-settings --> block is gone"
    with _jupyterlab(tmp_path_factory.mktemp("lab"), CELLS, LAB_SETTINGS) as base:
        yield base, "readme.ipynb"


def _open_notebook(context, base: str, name: str = "readme.ipynb"):
    """The notebook open in JupyterLab, its kernel (started by JupyterLab) connected and idle."""
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.console_messages = []
    page.on("console", lambda msg: page.console_messages.append(msg.text))
    page.on("pageerror", lambda exc: page.console_messages.append(str(exc)))
    page.goto(f"{base}/lab/tree/{name}", wait_until="domcontentloaded")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="visible", timeout=120_000)
    # the execution indicator says "idle" before there is any kernel: wait for the kernel's name, then idle
    page.locator(".jp-Toolbar-kernelName", has_text="Python 3").first.wait_for(timeout=300_000)
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(timeout=300_000)
    page.dialogs_seen = []
    return page


def _answer_dialog(page, name: str) -> bool:
    """A "Select Kernel" dialog (not seen with the settings above) answered with the notebook's running kernel."""
    dialog = page.locator(".jp-Dialog")
    if not dialog.count():
        return False
    page.dialogs_seen.append(dialog.first.inner_text())
    choice = dialog.first.locator("select")
    if choice.count():  # the notebook's running session ("readme.ipynb (<id>)"), not a new kernel
        options = choice.first.evaluate("select => [...select.options].map(option => option.text)")
        running = [text for text in options if text.startswith(name)]
        if running:
            choice.first.select_option(label=running[0])
    dialog.first.locator(".jp-mod-accept").first.click()
    dialog.first.wait_for(state="detached", timeout=30_000)  # one answer per dialog, not a click per loop
    return True


def _run_all(page, name: str, count: int, timeout: float = 600) -> None:
    """Run All Cells from JupyterLab's Run menu; wait until all ``count`` cells are numbered."""
    prompts = page.locator(".jp-Cell .jp-InputArea-prompt")
    deadline = time.monotonic() + timeout
    started = None
    while True:  # every cell numbered, none pending ([*])
        texts = prompts.all_inner_texts()
        if _answer_dialog(page, name):
            continue
        if started is None or (time.monotonic() - started > 30 and all(t.strip() == "[ ]:" for t in texts)):
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()  # (again, if the
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()  # kernel was busy)
            started = time.monotonic()
        if len(texts) == count and all(re.fullmatch(r"\[\d+\]:", t.strip()) for t in texts):
            return
        assert time.monotonic() < deadline, f"cells not all run after {timeout} s: {texts}; dialogs {page.dialogs_seen}"
        time.sleep(1)


def _run_cell(page, index: int, timeout: float = 300) -> None:
    """Run cell ``index`` alone (selected, then Ctrl+Enter) and wait until it is numbered."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-prompt").click()
    page.keyboard.press("Control+Enter")
    expect(cell.locator(".jp-InputArea-prompt")).to_have_text(re.compile(r"^\[\d+\]:$"), timeout=timeout * 1000)


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
    page = _open_notebook(context, base, name)
    _run_all(page, name, len(CELLS))
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
    try:
        expect(labels).not_to_have_text(before, timeout=60_000)  # twice the commits need more labels
    except AssertionError as error:
        raise AssertionError(f"{error}\nbox shows {box.input_value()!r}; "
                             f"console: {notebook_page.console_messages[-20:]}") from None


def test_nothing_was_fetched_from_outside(notebook_page):
    """Requests beyond the machine were refused; the components drew all the same."""
    assert all(not url.startswith("http://127.0.0.1") for url in notebook_page.refused)
    json.dumps(notebook_page.refused)  # listed for the report when a test above fails


#: cells of a JupyterLab with its default settings (comms over subshells): the README's first cell (its
#: ``md.extension`` makes the page open comms, which JupyterLab puts on subshells), a wait until the kernel
#: has them, then two components: the first warns under its cell, the second does not (once per kernel)
SUBSHELL_CELLS = [
    CELLS[0],
    "import time\nfrom meter_dashboard.ui.base import _kernel_subshells\n"
    "deadline = time.monotonic() + 120\n"
    "while not _kernel_subshells() and time.monotonic() < deadline:\n    time.sleep(0.2)\n"
    "bool(_kernel_subshells())",
    "md.Planner(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)",
    'md.CI(condition="n - o > 0.02 +/- 0.01", reliability=0.999, adaptivity="full", steps=32)',
]


def test_with_comms_over_subshells_a_component_says_once_under_its_cell_what_to_set(browser, tmp_path):
    """The README's advice, seen where a person sees it: JupyterLab's default sends comms over subshells."""
    with _jupyterlab(tmp_path, SUBSHELL_CELLS, {}) as base:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = _open_notebook(context, base)
            for index in range(len(SUBSHELL_CELLS)):
                _run_cell(page, index)
            cells = page.locator(".jp-Notebook .jp-Cell")
            expect(cells.nth(1).locator(".jp-OutputArea-output").last).to_have_text("True")  # subshells open
            stderr = "[data-mime-type='application/vnd.jupyter.stderr']"
            warned = cells.nth(2).locator(f".jp-OutputArea-output{stderr}")
            expect(warned).to_contain_text("Kernel Comms over subshells", timeout=30_000)
            assert "'Disabled'" in warned.inner_text() and "README" in warned.inner_text()
            every = page.locator(f".jp-OutputArea-output{stderr}")
            assert every.count() == 1, every.all_inner_texts()  # once per kernel: not again under md.CI(...)
        finally:
            context.close()
