"""The README's notebook code, as written, in a fresh Jupyter kernel (issue 11 #8).

Every ```python block after a ``<!-- notebook-cell -->`` marker in README.md is one cell.  A
component must come back as a live Panel widget (the holoviews exec MIME bundle with HTML),
never a text/plain parameter dump, and nothing may be written to stderr (no "requires the
panel extension" or "tabulator is needed" warnings).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
CELLS = re.findall(r"<!-- notebook-cell -->\s*```python\n(.*?)```", README, flags=re.S)
WIDGET = "application/vnd.holoviews_exec.v0+json"


@pytest.fixture(scope="module")
def executed():
    assert len(CELLS) >= 7, "the README's notebook section lost its cells"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in CELLS])
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=False).execute()
    return notebook


def test_no_cell_writes_to_stderr(executed):
    for cell in executed.cells:
        for output in cell.outputs:
            assert output.output_type != "error", output
            assert not (output.output_type == "stream" and output.name == "stderr"), (cell.source, output.text)


def test_the_plan_cell_prints_the_numbers(executed):
    result = [o for o in executed.cells[0].outputs if o.output_type == "execute_result"][-1]
    assert "38005" in result.data["text/plain"] and "<table" in result.data["text/html"]


@pytest.mark.parametrize("component", ["Planner", "Session", "CI", "Ladder", "Compare", "Approve"])
def test_each_component_renders_as_a_widget(executed, component):
    cell = next(c for c in executed.cells if f"md.{component}(" in c.source)
    result = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert result, f"md.{component}(...) displayed nothing"
    assert WIDGET in result[-1].data and "text/html" in result[-1].data, sorted(result[-1].data)


def test_the_offline_switch_loads_every_components_extensions():
    """``md.extension(inline=True)`` (README, first cell) names every extension a component declares."""
    import panel as pn

    import meter_dashboard as md
    from meter_dashboard.ui.notebook import EXTENSIONS

    needed = {name for component in ("Planner", "Session", "CI", "Ladder", "Compare", "Approve")
              for name in getattr(md, component).extensions}
    assert needed <= set(EXTENSIONS)
    before = pn.config.inline
    try:
        md.extension(inline=True)
        assert pn.config.inline is True
        with pytest.raises(md.InputError, match="inline must be True or False"):
            md.extension(inline="yes")
    finally:
        pn.config.inline = before


def test_a_component_displayed_in_a_kernel_with_subshells_warns_once_with_the_setting_to_change(monkeypatch):
    """JupyterLab 4.4+ with ipykernel 7 opens subshells for comms (README: "Kernel Comms over subshells")."""
    import warnings

    import meter_dashboard as md
    from meter_dashboard.ui import base

    monkeypatch.setattr(base, "_subshell_warned", False)
    monkeypatch.setattr(base, "_kernel_subshells", lambda: [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        md.Planner()._repr_mimebundle_()  # a kernel without subshells (or a script): nothing said
    monkeypatch.setattr(base, "_kernel_subshells", lambda: ["0b7f"])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        md.Planner()._repr_mimebundle_()
        md.CI()._repr_mimebundle_()
    assert [w.category for w in seen] == [RuntimeWarning]  # once per kernel
    text = str(seen[0].message)
    assert "'Kernel Comms over subshells'" in text and "'Disabled'" in text and "README" in text


def test_outside_a_kernel_there_are_no_subshells():
    from meter_dashboard.ui.base import _kernel_subshells

    assert _kernel_subshells() == []
