"""Issue 32: every page is a few sections a maintainer can read in one sitting.

Each class in a view module (``view*.py`` in a family, and the shared sections in ``ui/``) stays under
250 lines and each of its functions at most 40, so a page is read section by section rather than as one
class run by callbacks.  The rest of the package keeps the looser limits of ``tests/test_structure.py``.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "meter_dashboard"
MAX_CLASS_LINES = 250
MAX_FUNCTION_LINES = 40
VIEWS = sorted([*PACKAGE.glob("*/view*.py"), *(PACKAGE / "ui").glob("*.py")])


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _lines(node: ast.AST) -> int:
    return node.end_lineno - node.lineno + 1  # type: ignore[attr-defined]


def test_there_are_views_to_check():
    assert len(VIEWS) > 10


@pytest.mark.parametrize("path", VIEWS, ids=_rel)
def test_view_sections_stay_readable(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    classes = [(n.name, _lines(n)) for n in ast.walk(tree)
               if isinstance(n, ast.ClassDef) and _lines(n) >= MAX_CLASS_LINES]
    functions = [(n.name, _lines(n)) for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _lines(n) > MAX_FUNCTION_LINES]
    assert classes == [], f"{_rel(path)}: classes of {MAX_CLASS_LINES} lines or more: {classes}"
    assert functions == [], f"{_rel(path)}: functions over {MAX_FUNCTION_LINES} lines: {functions}"
