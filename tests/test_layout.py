"""The README's "Layout" is the map of the package: it names every module, and nothing that is not there.

Issue 32: the map had drifted (it listed an approvals ``workers`` module that did not exist and left out
``meter/curves.py``, ``testsets/access.py`` and others).  Here the block is read as written: every
``name.py`` under a folder's line is a module of that folder (``srgp/levels.py`` under ``bounds/`` is
``bounds/srgp/levels.py``), every ``name/`` that starts a line is a folder of the package, and both
sets are compared with the tree in both directions.  Package ``__init__.py`` files are not listed
(except the top level's, which is the public API), nor are non-Python files.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "meter_dashboard"
#: a folder's entry: two spaces, its name and a slash at the start of a line of the block
FOLDER = re.compile(r"^  ([a-z_]+)/\s")
MODULE = re.compile(r"(?<![\w/.])((?:[a-z_][a-z0-9_]*/)*_{0,2}[a-z0-9_]+_{0,2})\.py\b")


def _block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1].splitlines()[1:]


def _listed() -> tuple[set[str], set[str]]:
    """(folders, modules) the block names, as paths relative to the package."""
    folders, modules, current = set(), set(), None
    for line in _block():
        if line.startswith("meter_dashboard/"):
            current = ""
        elif not line.startswith(" "):  # apps/, tests/: outside the package
            current = None
        elif (m := FOLDER.match(line)) is not None:
            current = m.group(1) + "/"
            folders.add(m.group(1))
        if current is None:
            continue
        modules.update(current + name + ".py" for name in MODULE.findall(line))
    return folders, modules


def _tree() -> tuple[set[str], set[str]]:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    modules = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
               if p.name != "__init__.py" or p.parent == PACKAGE}
    # the cli package's entry point is its __init__ (the README says so)
    modules |= {"cli/__init__.py"} if (PACKAGE / "cli" / "__init__.py").exists() else set()
    return folders, modules


def test_the_block_parses_into_folders_and_modules():
    folders, modules = _listed()
    assert {"bounds", "core", "meter", "app"} <= folders
    assert "bounds/srgp/levels.py" in modules and "__init__.py" in modules


def test_every_folder_of_the_package_is_in_the_layout_and_no_other():
    listed, _ = _listed()
    actual, _ = _tree()
    assert listed == actual, (f"folders missing from the README's Layout: {sorted(actual - listed)}; "
                              f"listed but not in the package: {sorted(listed - actual)}")


def test_every_module_is_named_in_the_layout():
    _, listed = _listed()
    _, actual = _tree()
    missing = sorted(actual - listed)
    assert not missing, f"modules the README's Layout does not name (add each under its folder): {missing}"


def test_the_layout_names_no_module_that_does_not_exist():
    _, listed = _listed()
    _, actual = _tree()
    stale = sorted(listed - actual)
    assert not stale, f"the README's Layout names modules that do not exist: {stale}"


@pytest.mark.parametrize("line", ["  bounds/       meter.py (Thms), srgp/ (srgp/levels.py)",
                                  "  core/         validation.py (InputError), files.py"])
def test_the_parser_reads_names_as_written(line):
    names = MODULE.findall(line)
    assert names and all(not n.endswith(".py") for n in names)
