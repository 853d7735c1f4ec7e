"""The package's shape, enforced (issue 10): small functions and modules, imports one way, no private names.

Layers: bounds (mathematics) -> models (what a person chose, no Panel) -> testsets (the guarded store,
no Panel) -> presentation without Panel (formatting, planner_text, reports, plan_report) -> views
(Panel) -> pages -> apps; the CLI, reports and server settings never import Panel
at module level (``serve`` imports the pages inside its run function). ``_validation`` and ``_files`` are
the package's internal helpers, used by every layer; any other private name stays in its module.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "meter_dashboard"
FILES = sorted(PACKAGE.rglob("*.py"))
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 800
#: Panel-free presentation shared by pages, reports and the CLI (numbers, sentences, HTML reports)
PRESENTATION = {"formatting", "planner_text", "reports", "plan_report"}
#: what each part of the package may import from the package (besides the internal helpers)
ALLOWED = {
    "bounds": {"bounds"},
    "models": {"bounds", "models"},
    "views": {"bounds", "models", "views", "testsets", *PRESENTATION},
    "cli": {"bounds", "models", "cli", "serving", "testsets", "pages", *PRESENTATION},  # pages: inside serve's run
    "testsets": {"bounds", "models", "testsets", "serving"},
}
INTERNAL = {"_validation", "_files"}


def _rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def _imports(path: Path):
    """(module parts inside the package, imported names) for every import of the package."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                parts = (*base, *(node.module.split(".") if node.module else ()))
            elif (node.module or "").startswith("meter_dashboard"):
                parts = tuple(node.module.split("."))
            else:
                continue
            names = [a.name for a in node.names]
            if not node.module and node.level:  # "from . import x": x is a module of the package
                yield from ((parts + (name,), []) for name in names)
            else:
                yield parts, names
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("meter_dashboard"):
                    yield tuple(alias.name.split(".")), []


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_functions_and_modules_stay_small(path):
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_MODULE_LINES, f"{_rel(path)} has more than {MAX_MODULE_LINES} lines"
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == [], f"{_rel(path)}: functions over {MAX_FUNCTION_LINES} lines: {long}"


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_imports_flow_one_way_and_private_names_stay_home(path):
    layer = path.relative_to(PACKAGE).parts[0]
    for parts, names in _imports(path):
        inside = parts[1:]  # without "meter_dashboard"
        if not inside or inside[0] in INTERNAL:
            continue
        if layer in ALLOWED:
            assert inside[0] in ALLOWED[layer], f"{_rel(path)} ({layer}) imports {'.'.join(parts)}"
        private = [n for n in names if n.startswith("_") and not n.startswith("__")]
        assert private == [], f"{_rel(path)} imports private names {private} from {'.'.join(parts)}"


def test_the_command_line_never_imports_panel_at_module_level():
    for path in sorted((PACKAGE / "cli").glob("*.py")) + [PACKAGE / "reports.py", PACKAGE / "serving.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = [a.name for n in top for a in n.names] + [getattr(n, "module", "") or "" for n in top]
        assert not [n for n in names if n.split(".")[0] in ("panel", "holoviews")], _rel(path)
        assert not [n for n in top if getattr(n, "level", 0) and (n.module or "").split(".")[0] in ("pages", "views")], _rel(path)
