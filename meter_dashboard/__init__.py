"""meter-dashboard: test-set budgets for adaptive ML development.

Notebook API (imports are lazy, so ``import meter_dashboard`` stays light and the
computational functions never pull in Panel):

>>> import meter_dashboard as md
>>> md.plan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10).labels["incremental"]
38005

One function per family answers in a script: ``md.plan``, ``md.replay``, ``md.ci_labels``,
``md.replay_ci``, ``md.ladder``, ``md.ladder_size``, ``md.compare``, ``md.compare_size``,
``md.approve`` (``md.compare(runs.a, runs.b)`` for a table from ``md.read_runs``); each returns a
result object whose ``.to_dict()`` is what the CLI prints with ``--format json``.

Components for Jupyter (``md.Planner()``, ``md.Session()``, ``md.CI()``, ``md.Ladder()``,
``md.Compare()``, ``md.Approve()``) are Panel ``Viewer`` objects over the same models the
CLI uses.
"""
from __future__ import annotations

import importlib
from typing import Any

from .core.validation import InputError

# public name -> "module:attribute", imported on first use (so ``meter-dashboard ci`` never loads
# scipy, and no submodule import can rebind a name: ``md.plan`` is the function, the module is
# ``meter_dashboard.meter.model``)
_EXPORTS = {
    # the meter planner
    "plan": "meter_dashboard.meter.model:plan",
    "MeterPlan": "meter_dashboard.meter.model:MeterPlan",
    "PlanResult": "meter_dashboard.meter.model:PlanResult",
    "VARIANTS": "meter_dashboard.bounds.meter:VARIANTS",
    # session replay
    "read_trace": "meter_dashboard.session.trace:read_trace",
    "replay": "meter_dashboard.session.model:replay",
    "SessionModel": "meter_dashboard.session.model:SessionModel",
    "ReplayResult": "meter_dashboard.session.model:ReplayResult",
    # ease.ml/ci
    "ci_labels": "meter_dashboard.ci:ci_labels",
    "parse_condition": "meter_dashboard.ci:parse_condition",
    "read_ci_trace": "meter_dashboard.ci:read_ci_trace",
    "replay_ci": "meter_dashboard.ci:replay_ci",
    # the Ladder leaderboard and P(A>B)
    "ladder": "meter_dashboard.leaderboard.model:ladder",
    "ladder_size": "meter_dashboard.leaderboard.model:ladder_size",
    "read_losses": "meter_dashboard.leaderboard.model:read_losses",
    "compare": "meter_dashboard.comparison.model:compare",
    "compare_size": "meter_dashboard.comparison.model:sample_size",
    "read_runs": "meter_dashboard.comparison.model:read_runs",
    # SRGP approvals of modifications
    "approve": "meter_dashboard.approvals.model:approve",
    "read_modification_trace": "meter_dashboard.approvals.model:read_modification_trace",
    # reports to take out of a meeting
    "Report": "meter_dashboard.core.report:Report",
    "session_report": "meter_dashboard.session.report:session_report",
    "plan_report": "meter_dashboard.meter.report:plan_report",
    # guarded test sets
    "TestSet": "meter_dashboard.testsets.notebook:TestSet",
    "connect": "meter_dashboard.testsets.notebook:connect",
    # notebook components, and their JavaScript without a CDN (md.extension(inline=True))
    "extension": "meter_dashboard.ui.notebook:extension",
    "Planner": "meter_dashboard.meter.view:Planner",
    "Session": "meter_dashboard.session.view:Session",
    "CI": "meter_dashboard.ci.view:CI",
    "Ladder": "meter_dashboard.leaderboard.view:Ladder",
    "Compare": "meter_dashboard.comparison.view:Compare",
    "Approve": "meter_dashboard.approvals.view:Approve",
}

__all__ = sorted(list(_EXPORTS) + ["InputError"])  # ``md.__version__`` too, from the metadata


def _installed_version() -> str:
    """The version of the installed distribution (its metadata), so that it is never a second copy."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("meter-dashboard")
    except PackageNotFoundError:  # a source tree on sys.path, never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:  # a lazy export: any of the public functions and classes
    if name == "__version__":  # read on first use: the metadata look-up costs a few ms at import
        value = globals()["__version__"] = _installed_version()
        return value
    try:
        target = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'meter_dashboard' has no attribute {name!r}") from None
    module_name, attribute = target.split(":")
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | {"__version__"})
