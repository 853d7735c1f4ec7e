"""The /approve page's words for a manager and its slide, Panel-free (the page, the CLI, the report, notebooks).

:func:`lead` is the page's first sentence in plain words, from an
:class:`~meter_dashboard.approvals.model.ApprovalResult`.
"""
from __future__ import annotations

import collections
import math

import numpy as np

from ..core import formatting as fmt
from ..core import plain
from ..core.slide import Chart, Series, Slide

__all__ = ["lead", "pending_lead", "computing_sentence", "duration", "time_left", "Pace", "PACE", "inputs", "title",
           "slide"]


def lead(r, left: str = "") -> str:
    """``We can ship 3 of 10 modifications; the chance that any shipped one is not a real improvement stays below 5%, …``.

    ``left``: while the decisions come in, how long the rest takes (:func:`time_left`)."""
    shipped = f"{fmt.integer(r.approvals)} of {fmt.integer(r.decided)} modification{'' if r.decided == 1 else 's'}"
    pending = "" if r.complete else f" tested so far ({fmt.integer(len(r.names))} in all{'; ' + left if left else ''})"
    return (f"We can ship {shipped}{pending} ({r.label}): all approvals together are right "
            f"{plain.times_in(r.alpha)} — the chance that any approved one is no real improvement stays below "
            f"{fmt.percent(r.alpha)}.")


class Pace:
    """How long one procedure takes to decide every modification of a trace: a bound to say before it runs.

    ``seconds(decisions, method)`` is at most a fixed overhead plus a cost per decision: the larger of
    the calibrated cost below and the slowest this process measured on its last computations
    (:meth:`record`: the page records each computation it waited for), so a busy server says more.

    Calibration (2 shared cores, 2026-11-28, load average 2 to 12; ``approve()`` on the shipped
    examples): with the defaults, fsSRGP took at most 110 ms and presSRGP 231 ms for the 50
    modifications of ``adversary``, 1 and 4 ms for the 15 of ``refits``, every other procedure at
    most 1 ms; over α 0.001-0.9, margins -0.1 to 1 and two seeds the slowest were 945 ms for
    ``adversary`` (presSRGP, α 0.3, margin -0.1: 19 ms a decision) and 299 ms for ``refits`` (20 ms
    a decision).  The cost below is 2.5 times that; the overhead covers the worker process's first
    chunk (``ApproveModel.CHUNK_SECONDS``), one publishing interval (``STREAM_INTERVAL``) and the
    session's next tick.  tests/benchmarks/test_bench_approve_pace.py times the served computation
    against it.  The cost of fs/presSRGP's multivariate normal probabilities grows with the earlier
    nodes they condition on (calibrated at the default, :data:`CONDITIONING`) and with the trace's
    examples and correlations in ways its size does not bound (on synthetic traces 0.02 to 320 ms a
    decision): so no number is said for an uploaded trace or more conditioning (:meth:`known`), only
    the pace of the decisions once they come (:func:`time_left`).
    """

    #: seconds per decision, calibrated (see above): fs/presSRGP, and every other procedure
    MVN_SECONDS, PLAIN_SECONDS = 0.05, 0.001
    #: seconds before the first decision shows, whatever the trace
    OVERHEAD_SECONDS = 0.5
    #: the earlier nodes fs/presSRGP conditioned on in the calibration (``ApprovalSettings.max_conditioning``)
    CONDITIONING = 6
    #: the last computations measured, per kind of procedure
    KEPT = 8

    def __init__(self):
        self._measured: dict[bool, collections.deque] = {True: collections.deque(maxlen=self.KEPT),
                                                           False: collections.deque(maxlen=self.KEPT)}

    @staticmethod
    def _mvn(method: str) -> bool:
        return method in ("fs-srgp", "pres-srgp")

    def record(self, method: str, decisions: int, seconds: float) -> None:
        """A computation of ``decisions`` decisions with ``method`` took ``seconds`` (wall clock, on this process)."""
        if decisions > 0 and seconds >= 0:
            self._measured[self._mvn(method)].append(max(seconds - self.OVERHEAD_SECONDS, 0.0) / decisions)

    def known(self, method: str, max_conditioning: int = CONDITIONING) -> bool:
        """Whether :meth:`seconds` bounds ``method`` with these settings (on a shipped example's trace)."""
        return not self._mvn(method) or max_conditioning <= self.CONDITIONING

    def per_decision(self, method: str) -> float:
        mvn = self._mvn(method)
        return max([self.MVN_SECONDS if mvn else self.PLAIN_SECONDS, *self._measured[mvn]])

    def seconds(self, decisions: int, method: str) -> float:
        """At most how long ``decisions`` decisions with ``method`` take here (a shipped example's trace)."""
        return self.OVERHEAD_SECONDS + decisions * self.per_decision(method)


#: This process's pace (the first response and every session of the page read and feed it).
PACE = Pace()


def duration(seconds: float) -> str:
    """``under 1 s``, ``up to 3 s``, ``up to 2 min``: a bound, rounded up (never promises less)."""
    if seconds <= 1:
        return "under 1 s"
    if seconds < 100:
        return f"up to {math.ceil(seconds)} s"
    return f"up to {math.ceil(seconds / 60)} min"


def time_left(decided: int, total: int, elapsed: float) -> str:
    """``about 4 s left at this pace`` once some decisions are in ('' when none are, or all)."""
    if decided <= 0 or decided >= total or elapsed <= 0:
        return ""
    left = elapsed / decided * (total - decided)
    return f"about {math.ceil(left)} s left at this pace" if left < 100 else \
        f"about {math.ceil(left / 60)} min left at this pace"


def pending_lead(modifications: int, label: str, alpha: float, seconds: float | None = None) -> str:
    """What the lead says while the decisions are computed, in the place and about the length of :func:`lead`
    (so the page does not jump when the answer replaces it); ``seconds``: at most how long (:class:`Pace`)."""
    plural = "" if modifications == 1 else "s"
    how_long = f", {duration(seconds)} of computing on this server" if seconds is not None else ""
    return (f"Computing which of the {fmt.integer(modifications)} modification{plural} we can ship ({label}{how_long}) "
            f"so that all approvals together are right {plain.times_in(alpha)}: each decision shows here as soon as "
            "its test is done.")


def computing_sentence(modifications: int, label: str, seconds: float) -> str:
    """What a link's first response says it computes (the decisions are the live page's: no first answer)."""
    plural = "" if modifications == 1 else "s"
    return (f"computing the approvals of the {fmt.integer(modifications)} modification{plural} on the link's trace "
            f"with {label} ({duration(seconds)} of computing on this server) and building the page…")


def title(r) -> str:
    return f"Modifications approved: {fmt.integer(r.approvals)} of {fmt.integer(r.decided)} ({r.label})"


def inputs(r) -> list:
    pairs = [("Procedure", r.label), ("α (family-wise error rate)", fmt.number(r.alpha)),
             ("Modifications", fmt.integer(len(r.names))), ("Steps planned T", fmt.integer(r.steps))]
    pairs += [(str(k), str(v)) for k, v in r.settings.items() if isinstance(v, (int, float, str)) and k != "alpha"]
    return pairs


def slide(r):
    """The /approve slide: title, :func:`lead`, the inputs, each test's p-value against its level (log scale)."""
    k = r.decided
    x = tuple(range(1, k + 1))
    p = tuple(float(v) for v in np.maximum(r.p_values[:k], 1e-300))
    approved = [j for j in range(k) if r.approved[j]]
    series = (Series("level (threshold)", x, tuple(float(v) for v in r.levels[:k]), "#D55E00", "step"),
              Series("p-value", x, p, "#0072B2", "points"),
              Series("approved", tuple(x[j] for j in approved), tuple(p[j] for j in approved), "#009E73", "points"))
    chart = Chart("test", "p-value", series, log_y=True)
    return Slide(title(r), lead(r), tuple(inputs(r)), chart)
