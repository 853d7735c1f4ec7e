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

__version__ = "0.1.0"

from ._validation import InputError

# public name -> "module:attribute", imported on first use (so ``meter-dashboard ci`` never loads
# scipy, and no submodule import can rebind a name: ``md.plan`` is the function, the module is
# ``meter_dashboard.models.plan``)
_EXPORTS = {
    # the meter planner
    "plan": "meter_dashboard.models.plan:plan",
    "MeterPlan": "meter_dashboard.models.plan:MeterPlan",
    "PlanResult": "meter_dashboard.models.plan:PlanResult",
    "VARIANTS": "meter_dashboard.bounds.meter:VARIANTS",
    # session replay
    "read_trace": "meter_dashboard.models.trace:read_trace",
    "replay": "meter_dashboard.models.session:replay",
    "SessionModel": "meter_dashboard.models.session:SessionModel",
    "ReplayResult": "meter_dashboard.models.session:ReplayResult",
    # ease.ml/ci
    "ci_labels": "meter_dashboard.models.ci:ci_labels",
    "parse_condition": "meter_dashboard.models.ci:parse_condition",
    "read_ci_trace": "meter_dashboard.models.ci:read_ci_trace",
    "replay_ci": "meter_dashboard.models.ci:replay_ci",
    # the Ladder leaderboard and P(A>B)
    "ladder": "meter_dashboard.models.ladder:ladder",
    "ladder_size": "meter_dashboard.models.ladder:ladder_size",
    "read_losses": "meter_dashboard.models.ladder:read_losses",
    "compare": "meter_dashboard.models.compare:compare",
    "compare_size": "meter_dashboard.models.compare:sample_size",
    "read_runs": "meter_dashboard.models.compare:read_runs",
    # SRGP approvals of modifications
    "approve": "meter_dashboard.models.approve:approve",
    "read_modification_trace": "meter_dashboard.models.approve:read_modification_trace",
    # reports to take out of a meeting
    "Report": "meter_dashboard.reports:Report",
    "session_report": "meter_dashboard.reports:session_report",
    "plan_report": "meter_dashboard.plan_report:plan_report",
    # guarded test sets
    "TestSet": "meter_dashboard.testsets.notebook:TestSet",
    "connect": "meter_dashboard.testsets.notebook:connect",
    # notebook components
    "Planner": "meter_dashboard.views.planner:Planner",
    "Session": "meter_dashboard.views.session:Session",
    "CI": "meter_dashboard.views.ci:CI",
    "Ladder": "meter_dashboard.views.ladder:Ladder",
    "Compare": "meter_dashboard.views.compare:Compare",
    "Approve": "meter_dashboard.views.approve:Approve",
}

__all__ = sorted(list(_EXPORTS) + ["InputError"])


def __getattr__(name):
    try:
        target = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'meter_dashboard' has no attribute {name!r}") from None
    module_name, attribute = target.split(":")
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_EXPORTS))
