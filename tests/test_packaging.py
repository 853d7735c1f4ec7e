"""The built wheel carries what the served pages need and nothing of the development tools."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contents(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=300)
    wheel = next(tmp_path.glob("meter_dashboard-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("meter_dashboard/ui/dashboard.css", "meter_dashboard/app/templates/index.html",
                   "meter_dashboard/data/emocontext_trace.csv", "meter_dashboard/data/emocontext.md"):
        assert needed in names, needed
    assert not [n for n in names if "generate_" in n or n.startswith("tests/")], "generators stay out of the wheel"
