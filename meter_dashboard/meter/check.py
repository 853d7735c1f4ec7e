"""Checking a plan by simulation: does its test set keep the meter's promise against real developers?

:class:`PlanCheck` is a :class:`~meter_dashboard.core.runtime.BackgroundJob`: it takes the
counts of a :class:`~meter_dashboard.meter.result.PlanResult` and runs the Monte
Carlo check of :mod:`meter_dashboard.bounds.meter_simulation` on each,

- the *naive* count: one Hoeffding estimate (the single_model count), which ignores the
  adaptivity the meter's signals allow and must fail against the adversary as T grows;
- the *planned* count of the chosen meter under Hoeffding's bound;
- the planned count under the exact binomial bound (when the plan uses it),

and reports each one's failure rate (a released model missing its signal's tolerance)
with its interval, beside delta.  Seeded: the same settings give the same numbers.

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.  Thms 1-2.
.. [2] A. Blum, M. Hardt. "The Ladder: A reliable leaderboard for machine learning
   competitions", ICML 2015 (the boosting attack the adversary adapts).
"""
from __future__ import annotations

from dataclasses import dataclass

import param

from ..core.formatting import strict_json
from ..bounds import meter_simulation as _sim
from ..core.runtime import BackgroundJob
from ..core.validation import InputError, check_int

__all__ = ["PlanCheck", "CheckRow", "check_rows", "check_plan", "MAX_REPLICATES"]

#: At most this many replicates per count (each count's run is also bounded by the engine's cell cap).
MAX_REPLICATES = 20_000


@dataclass(frozen=True)
class CheckRow:
    """One count checked: what it is, its labels, and the simulation's result."""

    key: str
    title: str
    labels: int
    result: _sim.SimulationResult | None = None

    @property
    def verdict(self) -> str:
        """'within δ' (the interval reaches δ or below), 'above δ', or '' before a result."""
        if self.result is None or self.result.replicates == 0:
            return ""
        return "within δ" if self.result.below() else "above δ"

    @strict_json
    def to_dict(self) -> dict:
        """Plain values (the CLI's ``simulate`` keys): ``failure_rate``, ``ci``, ``replicates``, ..."""
        out = {"key": self.key, "title": self.title, "labels": self.labels, "verdict": self.verdict}
        if self.result is not None:
            r = self.result
            out.update(failure_rate=r.failure_rate, ci=list(r.ci), replicates=r.replicates, failures=r.failures,
                       delta=r.delta, within_delta=r.below() if r.replicates else None)
        return out

    def _repr_html_(self) -> str:  # notebooks: the simulate verb's table
        from ..core.display import html_table

        r = self.result
        if r is None or r.replicates == 0:
            return html_table(["count", "labels"], [[self.title, self.labels]], caption="not simulated yet")
        row = [self.title, self.labels, r.replicates, r.failures, r.failure_rate,
               "[{:.4g}, {:.4g}]".format(*r.ci), r.delta, self.verdict]
        return html_table(["count", "labels", "runs", "failures", "failure rate", "interval", "delta", "verdict"],
                          [row], caption=f"{self.key}: simulated developers against {self.labels:,} labels",
                          marked=[0] if self.verdict == "above δ" else [], mark_note="above δ")

    def __repr__(self) -> str:
        if self.result is None or self.result.replicates == 0:
            return f"CheckRow({self.key}: {self.labels:,} labels, not run)"
        r = self.result
        return (f"CheckRow({self.key}: {self.labels:,} labels, failure rate {r.failure_rate:.3g} "
                f"[{r.ci[0]:.3g}, {r.ci[1]:.3g}] vs δ = {r.delta:g}: {self.verdict})")


def check_rows(result, meter: str) -> list[CheckRow]:
    """The counts a check runs for ``result`` (a PlanResult) and ``meter`` ('regular' or 'incremental')."""
    if meter not in _sim.METERS:
        raise InputError("meter", "one of " + ", ".join(_sim.METERS), meter)
    rows = [CheckRow("naive", "Naive (single_model, Hoeffding)", result.hoeffding_labels["single_model"]),
            CheckRow("hoeffding", f"Planned {meter}, Hoeffding", result.hoeffding_labels[meter])]
    if result.bound != "hoeffding" and meter not in result.refused and not result.is_pending("labels", meter):
        rows.append(CheckRow("planned", f"Planned {meter}, {result.bound_title}", result.labels[meter]))
    return rows


def check_plan(result, ranges=None, *, meter: str = "incremental", developer: str = "adversary",
               replicates: int = 500, seed: int = 0) -> list[CheckRow]:
    """Check a plan's counts by simulation (blocking; the notebook's and scripts' way in).

    Parameters
    ----------
    result : PlanResult
        The plan (``md.plan(...)``); its eps, delta, T and counts are checked.
    ranges : sequence of float, optional
        The m + 1 boundaries of the meter's empirical-overfitting ranges (default: the
        planner's defaults for m signals).
    meter : {'incremental', 'regular'}
        The meter whose planned counts are checked (the naive single_model count always is).
    developer : {'adversary', 'honest'}
        The boosting-attack adversary (default) or an honest hill-climber.
    replicates, seed
        Independent runs per count; the same seed gives the same numbers.

    Returns
    -------
    list of CheckRow
        The naive count, the planned Hoeffding count and (under the binomial bound) the
        planned exact count, each with its failure rate, interval and verdict beside delta.

    References
    ----------
    .. [1] Hubis, Wu & Zhang (2019), ease.ml/meter, Thms 1-2.
    .. [2] Blum & Hardt (2015), the Ladder: the boosting attack.

    Examples
    --------
    >>> import meter_dashboard as md
    >>> rows = check_plan(md.plan([0.02, 0.04, 0.06], delta=0.1, steps=10), meter="regular",
    ...                   replicates=256)  # doctest: +SKIP
    >>> [row.verdict for row in rows]  # doctest: +SKIP
    ['above δ', 'within δ']
    """
    if developer not in _sim.DEVELOPERS:
        raise InputError("developer", "one of " + ", ".join(_sim.DEVELOPERS), developer)
    if meter not in _sim.METERS:
        raise InputError("meter", "one of " + ", ".join(_sim.METERS), meter)
    job = PlanCheck(meter=meter, developer=developer, seed=check_int("seed", seed, minimum=0),
                    replicates=check_int("replicates", replicates, minimum=_sim.BLOCK, maximum=MAX_REPLICATES))
    job.configure(result, _sim.default_ranges(result.signals) if ranges is None else ranges)
    rows = job.work(lambda fraction, message="": None, lambda: False)  # InputError reaches the caller as is
    job.finish(rows, False)
    return list(job.rows)


class PlanCheck(BackgroundJob):
    """The Monte Carlo check of a plan's counts (naive vs planned), with progress and cancel.

    Call :meth:`configure` with the plan (its result and ranges), then ``run()`` (blocking)
    or ``await arun()`` (a served page).  ``rows`` holds the counts and their results.

    Examples
    --------
    >>> import meter_dashboard as md
    >>> check = PlanCheck(replicates=64)
    >>> check.configure(md.plan([0.02, 0.04, 0.06], delta=0.1, steps=10), [0, 0.01, 0.03, 1])  # doctest: +SKIP
    >>> check.run()  # doctest: +SKIP
    """

    developer = param.Selector(default="adversary", objects=list(_sim.DEVELOPERS), doc=(
        "adversary: random probes whose signals reveal the sign of their test error, then their majority vote "
        "(the boosting attack); honest: a hill-climber."))
    meter = param.Selector(default="incremental", objects=list(_sim.METERS), doc="The meter whose counts are checked.")
    replicates = param.Integer(default=500, bounds=(_sim.BLOCK, MAX_REPLICATES), doc=(
        "Independent runs per count (more: a narrower interval, a longer run)."))
    seed = param.Integer(default=0, bounds=(0, None), doc="The same seed gives the same numbers.")

    rows = param.List(default=[], constant=True, doc="CheckRow per count (results once run).")
    settings = param.Dict(default={}, constant=True, doc="The plan the rows were made for.")

    def configure(self, result, ranges) -> None:
        """Take the counts and the meter of ``result`` (a PlanResult) with its ``ranges``."""
        settings = {"epsilon": tuple(result.epsilon), "ranges": tuple(float(r) for r in ranges),
                    "delta": result.delta, "steps": result.steps, "meter": self.meter,
                    "developer": self.developer, "replicates": self.replicates, "seed": self.seed,
                    "bound": result.bound_title, "tenants": len(result.tenant_steps), "reverts": result.reverts}
        with param.edit_constant(self):
            self.param.update(rows=check_rows(result, self.meter), settings=settings)

    def work(self, report, should_stop):
        s = self.settings
        if not self.rows:
            raise InputError("plan", "a plan to check (configure the check first)", None)
        check_int("replicates", s["replicates"], minimum=_sim.BLOCK, maximum=MAX_REPLICATES)
        results = {}
        # the largest count first: if the engine refuses its size, nothing has been spent on the others
        for k, row in enumerate(sorted(self.rows, key=lambda r: -r.labels)):
            last = None
            for last in _sim.iter_simulate(row.labels, list(s["epsilon"]), s["steps"], ranges=list(s["ranges"]),
                                           meter=s["meter"], developer=s["developer"], replicates=s["replicates"],
                                           seed=s["seed"], delta=s["delta"]):
                report((k + last.replicates / last.total) / len(self.rows),
                       f"{row.title}: {last.replicates:,} of {last.total:,} runs")
                if should_stop():
                    break
            results[row.key] = last
            if should_stop():
                break
        return [CheckRow(r.key, r.title, r.labels, results.get(r.key)) for r in self.rows]

    def finish(self, result, cancelled: bool) -> str:
        if result is not None:
            with param.edit_constant(self):
                self.rows = result
        done = [r for r in (result or []) if r.result is not None]
        if cancelled:
            return f"cancelled after {len(done)} of {len(self.rows)} counts (partial results kept)"
        return f"done: {len(done)} counts, {self.settings.get('replicates', 0):,} runs each"
