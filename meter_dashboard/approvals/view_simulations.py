"""The /approve page's simulations: Feng et al.'s Section 3.1 (error rate) and 3.2 (power), run on demand.

:class:`ApproveSimulations` is the "Simulations" tab of
:class:`~meter_dashboard.approvals.view.Approve` over two
:class:`~meter_dashboard.approvals.simulation.ApprovalSimulation` jobs, built the first time
the tab opens (at once in a notebook).
"""
from __future__ import annotations

from typing import Any

import panel as pn
import param

from ..core.html import snippet
from ..ui.inputs import NumberInput
from ..ui.simulation import SimulationControls
from ..ui.style import HTML
from . import view_text as text
from .figures import SimulationFigures
from .simulation import ApprovalSimulation

__all__ = ["ApproveSimulations", "KINDS"]

#: The simulations, in the order shown: Section 3.1's error rate, then Section 3.2's power.
KINDS = ("fwer", "power")


class ApproveSimulations(pn.viewable.Viewer):
    """Settings, Run/Cancel with progress, a table and plots for each simulation (built on first view)."""

    fwer = param.ClassSelector(class_=ApprovalSimulation)
    power = param.ClassSelector(class_=ApprovalSimulation)

    def __init__(self, schedule, **params):
        super().__init__(**params)
        self._schedule = schedule
        self._layout = None

    @param.depends("fwer.result", watch=True)
    def _fwer_changed(self) -> None:
        self._schedule("sim-fwer")

    @param.depends("power.result", watch=True)
    def _power_changed(self) -> None:
        self._schedule("sim-power")

    @property
    def built(self) -> bool:
        """The tab has been opened (its widgets exist)."""
        return self._layout is not None

    def __panel__(self):
        if self._layout is None:
            self._fwer_widgets = self._build_simulation("fwer")
            self._power_widgets = self._build_simulation("power")
            self._layout = pn.Column(self._simulation_section("fwer"), self._simulation_section("power"),
                                     sizing_mode="stretch_width")
        return self._layout

    def _build_simulation(self, kind: str) -> dict:
        sim = getattr(self, kind)
        w: dict[str, Any] = {
            "replicates": NumberInput(sim, "replicates", label="Replicates", css_classes=[f"approve-{kind}-replicates"]),
            "seed": NumberInput(sim, "seed", label="Seed", css_classes=[f"approve-{kind}-seed"]),
            "steps": NumberInput(sim, "steps", label="T (tests)", css_classes=[f"approve-{kind}-steps"]),
            "test_size": NumberInput(sim, "test_size", label="Test examples",
                                     css_classes=[f"approve-{kind}-test-size"]),
            "alpha": NumberInput(sim, "alpha", label="α", css_classes=[f"approve-{kind}-alpha"]),
            "controls": SimulationControls(sim, run_label="Run simulation", css_prefix=f"approve-{kind}"),
            "table": HTML("", sizing_mode="stretch_width", css_classes=[f"approve-{kind}-table"]),
            "figures": SimulationFigures(kind, sim.alpha),
        }
        if kind == "fwer":
            w["bar_source"] = w["figures"].bar_source
        w["plots"] = pn.Column(pn.pane.Bokeh(w["figures"].figure, sizing_mode="stretch_width",
                                             css_classes=[f"approve-{kind}-plot"]),
                               pn.pane.Bokeh(w["figures"].curve, sizing_mode="stretch_width"),
                               sizing_mode="stretch_width", visible=False, css_classes=[f"approve-{kind}-plots"])
        return w

    def _widgets(self, kind: str) -> dict:
        return self._fwer_widgets if kind == "fwer" else self._power_widgets

    def _simulation_section(self, kind: str):
        w = self._widgets(kind)
        title, words = text.SIMULATION_TEXT[kind]
        settings = pn.Column(w["replicates"], w["seed"], w["steps"], w["test_size"], w["alpha"], w["controls"],
                             width=260)
        results = pn.Column(w["table"], w["plots"], sizing_mode="stretch_width")
        return pn.Column(HTML(str(snippet("<h2>{{ title }}</h2><p class='md-note'>{{ words }}</p>", title=title,
                                          words=words)), sizing_mode="stretch_width"),
                         pn.Row(settings, results, sizing_mode="stretch_width"),
                         sizing_mode="stretch_width", css_classes=["approve-section", f"approve-{kind}"])

    def shown(self, kind: str) -> bool:
        """Whether the ``kind`` simulation's plots show a completed run."""
        res = getattr(self, kind).result
        return self.built and res is not None and res.completed

    def draw_points(self, kind: str) -> None:
        """The plots' data sources (their axes and visibility follow in :meth:`draw`)."""
        if self.shown(kind):
            self._widgets(kind)["figures"].set_data(getattr(self, kind).result)

    def draw(self, kind: str) -> None:
        if not self.built:
            return
        w, res = self._widgets(kind), getattr(self, kind).result
        w["table"].object = text.simulation_table(kind, res)
        if self.shown(kind):
            w["figures"].set_frame(res)  # its points: draw_points
            w["plots"].visible = True
