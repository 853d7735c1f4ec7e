"""Every synthetic file in meter_dashboard/data is reproduced byte for byte by its seeded generator.

The generators live outside the installed package (tests/generators/); this test is what keeps
the shipped files and the scripts that document their provenance from drifting apart.
"""
from __future__ import annotations

import importlib

import pytest

GENERATORS = ["generate_ci", "generate_compare", "generate_ladder", "generate_synthetic_trace", "generate_approve"]


@pytest.mark.parametrize("name", GENERATORS)
def test_generator_reproduces_the_shipped_files(name, tmp_path, monkeypatch):
    gen = importlib.import_module(f"tests.generators.{name}")
    shipped = gen.HERE
    monkeypatch.setattr(gen, "HERE", tmp_path)
    if hasattr(gen, "OUTPUT"):
        monkeypatch.setattr(gen, "OUTPUT", tmp_path / gen.OUTPUT.name)
    if name == "generate_approve":
        gen.main(["--out", str(tmp_path)])
    else:
        gen.main()
    written = sorted(p for p in tmp_path.iterdir() if p.is_file())
    assert written, f"{name} wrote nothing"
    for path in written:
        assert path.read_bytes() == (shipped / path.name).read_bytes(), f"{name}: {path.name} differs from the shipped file"
