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
