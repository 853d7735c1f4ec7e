"""The package's shape, enforced (issues 10 and 21): one folder per family, roles by file name, imports one way.

Folders: ``bounds`` (the mathematics) and ``core`` (Panel-free shared parts) at the bottom; the families
``meter``, ``session``, ``ci``, ``leaderboard``, ``comparison``, ``approvals``, ``testsets`` above them;
``ui`` (shared Panel widgets) beside the families' views; ``app`` (the served pages) and ``cli`` (the
entry point, which reaches each family's ``cli`` module by name) on top.

Roles inside a family, by file name: ``view*.py`` are the Panel parts; ``figures*.py`` and ``report*.py``
draw with Bokeh but never import Panel; ``cli*.py`` never imports Panel; every other file is a model
role (``model``, ``result``, ``check``, ``text``, ``trace``, ``replay``, ...) and imports neither Panel nor
Bokeh. No family imports another family's view or CLI, and families use each other only one way
(:data:`FAMILY_USES`). No private name is imported from another module.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "meter_dashboard"
FILES = sorted(PACKAGE.rglob("*.py"))
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 800
FAMILIES = {"meter", "session", "ci", "leaderboard", "comparison", "approvals", "testsets"}
#: which other families a family may use (never their views or CLIs)
FAMILY_USES = {"session": {"meter"}, "testsets": {"meter", "session", "ci"}}
PANEL = ("panel", "holoviews")


def _rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def _role(path: Path) -> str:
    """view, figures, report, cli or model (by file name)."""
    stem = path.stem
    for role in ("view", "figures", "report", "cli"):
        if stem == role or stem.startswith(role + "_"):
            return role
    return "model"


def _imports(path: Path, top_level_only: bool = False):
    """(absolute dotted module, imported names) for every import in the file."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    if path.name == "__init__.py":
        package = path.relative_to(PACKAGE.parent).parts[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                parts = (*base, *(node.module.split(".") if node.module else ()))
            else:
                parts = tuple((node.module or "").split("."))
            names = []
            for name in (a.name for a in node.names):
                if _is_module(parts + (name,)):  # "from package import module"
                    yield parts + (name,), []
                else:
                    names.append(name)
            if names:
                yield parts, names
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield tuple(alias.name.split(".")), []


def _is_module(parts) -> bool:
    if not parts or parts[0] != "meter_dashboard":
        return False
    target = PACKAGE.joinpath(*parts[1:])
    return target.is_dir() or target.with_suffix(".py").is_file()


def _inside(parts) -> tuple:
    return tuple(parts[1:]) if parts and parts[0] == "meter_dashboard" else None


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_functions_and_modules_stay_small(path):
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_MODULE_LINES, f"{_rel(path)} has more than {MAX_MODULE_LINES} lines"
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == [], f"{_rel(path)}: functions over {MAX_FUNCTION_LINES} lines: {long}"


def _allowed(path: Path, target: tuple) -> bool:
    """May ``path`` import the package module ``target`` (parts inside the package)?"""
    folder = path.relative_to(PACKAGE).parts[0] if len(path.relative_to(PACKAGE).parts) > 1 else ""
    head = target[0] if target else ""
    if folder == "bounds":
        return head == "bounds" or target[:2] == ("core", "validation")
    if folder == "core":
        return head == "core"
    if folder == "ui":
        return head in ("core", "bounds", "ui")
    if folder == "cli":
        return head in ("core", "cli")
    if folder in FAMILIES:
        if head in ("core", "bounds", folder):
            return True
        if head == "ui":
            return _role(path) == "view"
        if head in FAMILIES:
            other = PACKAGE.joinpath(*target).with_suffix(".py")
            return head in FAMILY_USES.get(folder, ()) and _role(other) not in ("view", "cli")
        return False
    return True  # app/ and the package's top (lazy exports by name) assemble everything


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_imports_flow_one_way_and_private_names_stay_home(path):
    for parts, names in _imports(path):
        inside = _inside(parts)
        if inside is None or not inside:
            continue
        assert _allowed(path, inside), f"{_rel(path)} imports {'.'.join(parts)}"
        private = [n for n in names if n.startswith("_") and not n.startswith("__")]
        assert private == [], f"{_rel(path)} imports private names {private} from {'.'.join(parts)}"


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_roles_keep_to_their_libraries(path):
    """Only views, ui/ and app/ import Panel; model roles (and core/, bounds/) import neither Panel nor Bokeh."""
    rel = path.relative_to(PACKAGE).parts
    folder = rel[0] if len(rel) > 1 else ""
    role = _role(path)
    every = [p for p, _ in _imports(path)]
    top = [p for p, _ in _imports(path, top_level_only=True)]
    panel = [".".join(p) for p in every if p[0] in PANEL]
    bokeh = [".".join(p) for p in every if p[0] == "bokeh"]
    if folder in ("bounds", "core") or (folder in FAMILIES and role in ("model", "figures", "report")):
        assert panel == [], f"{_rel(path)} ({folder}/{role}) imports {panel}"
    if folder == "bounds" or (folder in FAMILIES and role == "model"):
        assert bokeh == [], f"{_rel(path)} ({folder}/{role}) imports {bokeh}"
    if role == "cli" or folder == "cli":
        at_top = [".".join(p) for p in top if p[0] in PANEL]
        assert at_top == [], f"{_rel(path)} imports {at_top} at module level"


def test_the_command_line_never_imports_a_view_at_module_level():
    for path in FILES:
        if _role(path) != "cli" and path.parent.name != "cli":
            continue
        for parts, _ in _imports(path, top_level_only=True):
            inside = _inside(parts) or ()
            if inside:
                target = PACKAGE.joinpath(*inside)
                target = target / "__init__.py" if target.is_dir() else target.with_suffix(".py")
                assert _role(target) != "view" and inside[0] not in ("ui", "app"), \
                    f"{_rel(path)} imports {'.'.join(parts)} at module level"


def test_every_family_folder_is_a_package_with_its_roles_named():
    for family in FAMILIES:
        folder = PACKAGE / family
        assert (folder / "__init__.py").is_file(), family
        assert (folder / "cli.py").is_file(), f"{family} has no cli.py"
    for gone in ("models", "views"):
        assert not (PACKAGE / gone).exists(), f"meter_dashboard/{gone} came back"
