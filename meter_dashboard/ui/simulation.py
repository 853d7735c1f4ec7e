"""Run, Cancel, a progress bar and a time estimate for any :class:`~meter_dashboard.core.runtime.BackgroundJob`.

The one simulation-controls component of the dashboard (Ladder's boosting attack, the SRGP
simulations, the meter's Monte Carlo check): the work runs in a worker thread through
``job.arun()``, so the page keeps answering and a Cancel click gets through; the buttons,
the bar and the status line follow the job's parameters.
"""
from __future__ import annotations

import math

import panel as pn

from .style import HTML, error_html, esc

__all__ = ["SimulationControls", "time_left_text"]


def time_left_text(seconds) -> str:
    """``about 40 s left`` / ``about 3 min left``; empty when there is no estimate yet."""
    if seconds is None or not math.isfinite(seconds):
        return ""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s left"
    return f"about {round(seconds / 60)} min left"


class SimulationControls(pn.viewable.Viewer):
    """Run / Cancel buttons, progress bar and status line over ``job``.

    Parameters
    ----------
    job : BackgroundJob
        The model whose ``arun()``/``cancel()`` the buttons call.
    run_label : str
        Text of the run button.
    css_prefix : str
        Stable hooks for tests: ``<prefix>-run``, ``<prefix>-cancel``, ``<prefix>-progress``,
        ``<prefix>-status``.
    before_run : callable, optional
        Called before each run (e.g. to copy settings into the job); may raise to refuse.
    """

    def __init__(self, job, *, run_label: str = "Run simulation", css_prefix: str = "simulation",
                 before_run=None, **params):
        super().__init__(**params)
        self.job = job
        self._before_run = before_run
        self.run_button = pn.widgets.Button(label=run_label, button_type="primary", sizing_mode="stretch_width",
                                            css_classes=[f"{css_prefix}-run"])
        self.cancel_button = pn.widgets.Button(label="Cancel", button_type="warning", sizing_mode="stretch_width",
                                               disabled=True, css_classes=[f"{css_prefix}-cancel"])
        self.progress = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width", bar_color="primary",
                                               css_classes=[f"{css_prefix}-progress"])
        self.status = HTML("", sizing_mode="stretch_width", css_classes=[f"{css_prefix}-status"])
        self.run_button.on_click(self._on_run)
        self.cancel_button.on_click(lambda event: self.job.cancel())
        job.param.watch(self._on_state, ["running", "progress", "status", "seconds_left", "error"])
        self._on_state()

    async def _on_run(self, event) -> None:
        if self._before_run is not None:
            self._before_run()
        await self.job.arun()

    def _on_state(self, *events) -> None:
        job = self.job
        with pn.io.hold():
            self.progress.value = int(round(100 * job.progress))
            self.run_button.disabled = job.running
            self.cancel_button.disabled = not job.running
            line = " · ".join(t for t in (job.status, time_left_text(job.seconds_left) if job.running else "") if t)
            self.status.object = (error_html(job.error) if job.error
                                  else f'<div class="md-sim-status">{esc(line)}</div>' if line else "")

    def __panel__(self):
        return pn.Column(pn.Row(self.run_button, self.cancel_button, sizing_mode="stretch_width"), self.progress,
                         self.status, sizing_mode="stretch_width")
