"""Approving model modifications on a reused test set: results and the param models.

The mathematics lives in :mod:`meter_dashboard.bounds.srgp` (Feng et al., Section 2,
Algorithm 1, Eqs. 1-7).  This module adds what a person works with:

* :func:`approve` / :func:`compare` -- plain functions returning small result objects
  (readable ``repr``, ``to_dict()``, ``to_frame()``), like scipy.stats' results.
* :class:`ApprovalSettings` -- the procedure's settings with their defaults, defined once:
  the page, notebooks (:class:`ApproveModel`) and the CLI all read them from here.
* :class:`ApproveModel` -- what a person chose (trace, procedure, settings) and the
  decisions derived from it; invalid input keeps the last good results and sets ``error``.
  With ``background=True`` on a server it computes in worker threads: the chosen
  procedure first, decision by decision, then the comparison of all procedures only
  while ``compare_active``, one procedure at a time.
* Traces (:mod:`.trace`) and the Section 3 simulations (:mod:`.simulation`) are re-exported here.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import param

from ..core.slide import SlideMixin
from ..core.formatting import strict_json
from ..bounds import srgp
from ..bounds.srgp import METHOD_LABELS, METHODS, normalize_method
from ..core.runtime import (Latest, Superseded, in_chunks, in_process, in_thread_streaming, process_pool_ready,
                            running_loop, warm_up)
from ..core.validation import InputError, check_int, check_number, raw
from .simulation import ApprovalSimulation
from .trace import EXAMPLES, ModificationTrace, as_trace, check_prespecified, load_example, read_modification_trace
from .simulation import WORKER_KINDS

#: Results of procedures kept per process (shared by every session; least recently used dropped first).
RESULTS_KEPT = 256

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "ModificationTrace",
    "read_modification_trace",
    "EXAMPLES",
    "load_example",
    "ApprovalResult",
    "ApprovalComparison",
    "approve",
    "compare",
    "ApprovalSettings",
    "ApproveModel",
    "ApprovalSimulation",
    "clear_shared_results",
    "RESULTS_KEPT",
]


# --------------------------------------------------------------------------- results
@dataclass(eq=False)
class ApprovalResult(SlideMixin):
    """Decisions of one procedure on one trace (one entry per modification, in test order).

    ``levels`` are the significance levels (p-value thresholds) each test was held to;
    ``weights`` the node weights (shares of alpha) of the SRGP tree; ``z_thresholds`` the
    same levels on the z scale.  While a server is still computing, a result may hold the
    first tests only (``complete`` is false; ``names`` always lists every modification).
    """

    _text_module = "meter_dashboard.approvals.text"  # lead() and slide(path)

    method: str
    alpha: float
    names: tuple
    approved: np.ndarray
    levels: np.ndarray
    weights: np.ndarray
    z: np.ndarray
    z_thresholds: np.ndarray
    p_values: np.ndarray
    margins: np.ndarray
    estimates: np.ndarray
    standard_errors: np.ndarray
    steps: int
    settings: dict = field(default_factory=dict)

    @property
    def approvals(self) -> int:
        return int(np.sum(self.approved))

    @property
    def decided(self) -> int:
        """Tests decided so far."""
        return len(self.approved)

    @property
    def complete(self) -> bool:
        return len(self.approved) == len(self.names)

    @property
    def label(self) -> str:
        return METHOD_LABELS[self.method]

    def __repr__(self) -> str:
        marks = "".join("A" if a else "." for a in self.approved)
        if len(marks) > 40:
            marks = marks[:37] + "..."
        first = f"{self.levels[0]:.4g}" if len(self.levels) else "-"
        return (f"ApprovalResult(method={self.method!r}, alpha={self.alpha:g}, approved={self.approvals} of "
                f"{len(self.approved)} [{marks}], first level={first})")

    def _repr_html_(self) -> str:  # notebooks: the approve verb's table, approved modifications marked
        from ..core.display import html_table

        def sci(value):
            value = float(value)
            return "0" if value == 0 else ("—" if not np.isfinite(value) else
                                           f"{value:.3g}" if value >= 1e-3 else f"{value:.2e}")

        done = len(self.p_values)
        rows = [[j + 1, self.names[j], float(self.estimates[j]), float(self.margins[j]), float(self.z[j]),
                 sci(self.p_values[j]), sci(self.levels[j]), "APPROVED" if self.approved[j] else "denied"]
                for j in range(done)]
        return html_table(["test", "modification", "improvement", "margin", "z", "p-value", "level", "decision"],
                          rows, caption=f"{self.method} at alpha = {self.alpha:g}, T = {self.steps}: "
                                        f"{int(np.sum(self.approved))} of {done} approved",
                          marked=[j for j in range(done) if self.approved[j]], mark_note="approved")

    @strict_json
    def to_dict(self) -> dict:
        """JSON-ready: ``approved`` (booleans in test order) and ``levels`` first."""
        return {
            "approved": [bool(a) for a in self.approved],
            "levels": [float(v) for v in self.levels],
            "method": self.method,
            "alpha": self.alpha,
            "steps": self.steps,
            "names": list(self.names),
            "weights": [float(v) for v in self.weights],
            "z": [float(v) for v in self.z],
            "z_thresholds": [float(v) for v in self.z_thresholds],
            "p_values": [float(v) for v in self.p_values],
            "margins": [float(v) for v in self.margins],
            "estimates": [float(v) for v in self.estimates],
            "standard_errors": [float(v) for v in self.standard_errors],
            "settings": dict(self.settings),
        }

    def to_frame(self):
        """One row per decided test."""
        import pandas as pd

        k = self.decided
        return pd.DataFrame({
            "test": np.arange(1, k + 1), "modification": list(self.names[:k]), "improvement": self.estimates,
            "standard_error": self.standard_errors, "margin": self.margins, "z": self.z,
            "p_value": self.p_values, "weight": self.weights, "level": self.levels,
            "z_threshold": self.z_thresholds, "approved": self.approved,
        })


def _result(method: str, alpha: float, names: tuple, decisions, steps: int, settings: dict) -> ApprovalResult:
    out = srgp.collect_decisions(decisions)
    return ApprovalResult(method=method, alpha=float(alpha), names=names, approved=out["approved"],
                          levels=out["levels"], weights=out["weights"], z=out["z"], z_thresholds=out["z_thresholds"],
                          p_values=out["p_values"], margins=out["margins"], estimates=out["estimates"],
                          standard_errors=out["standard_errors"], steps=int(steps), settings=settings)


@dataclass(eq=False)
class ApprovalComparison:
    """Several procedures on the same trace: ``results[method]`` is an :class:`ApprovalResult`.

    ``skipped`` maps a procedure that cannot run to the reason; ``pending`` lists the
    procedures a server has not computed yet.
    """

    results: dict
    names: tuple
    skipped: dict = field(default_factory=dict)
    pending: tuple = ()

    def __repr__(self) -> str:
        parts = ", ".join(f"{m}: {r.approvals}" for m, r in self.results.items())
        return f"ApprovalComparison(approved per procedure: {{{parts}}}, modifications={len(self.names)})"

    @strict_json
    def to_dict(self) -> dict:
        return {m: r.to_dict() for m, r in self.results.items()} | (
            {"skipped": dict(self.skipped)} if self.skipped else {})

    def to_frame(self):
        """One row per modification: decision and level under each procedure."""
        import pandas as pd

        data = {"test": np.arange(1, len(self.names) + 1), "modification": list(self.names)}
        for m, r in self.results.items():
            data[f"{m}:approved"] = r.approved
            data[f"{m}:level"] = r.levels
        return pd.DataFrame(data)


def _procedure(trace: ModificationTrace, prespecified, method: str, alpha: float, steps: int | None,
               options: dict) -> srgp.ApprovalProcedure:
    """A new procedure for a checked trace (T defaults to the number of modifications)."""
    if method == "pres-srgp" and prespecified is None:
        raise InputError("prespecified", "a trace of the prespecified procedure's modifications (pres-srgp needs it)",
                         raw("no file"))
    if steps is None:
        steps = trace.modifications
    elif check_int("steps", steps, minimum=1, maximum=srgp.MAX_STEPS) < trace.modifications:
        raise InputError("steps", f"at least the number of modifications in the trace ({trace.modifications})", steps)
    return srgp.ApprovalProcedure(method, steps, alpha,
                                  prespecified=prespecified.improvements if method == "pres-srgp" else None,
                                  **options)


def _run(trace: ModificationTrace, prespecified, method: str, alpha: float, steps: int | None, options: dict,
         on_decision=None) -> ApprovalResult:
    """One procedure over a checked trace (``on_decision`` sees each decision as it is made)."""
    proc = _procedure(trace, prespecified, method, alpha, steps, options)
    d = trace.improvements
    for j in range(trace.modifications):
        decision = proc.test(d[:, j])
        if on_decision is not None:
            on_decision(decision)
    return _result(method, alpha, trace.names, proc.decisions, proc.steps, options)


def _run_options(trace: ModificationTrace, prespecified, method: str, options: dict,
                 on_decision=None) -> ApprovalResult:
    """:func:`_run` with the settings of :meth:`ApprovalSettings.options`."""
    rest = {k: v for k, v in options.items() if k != "alpha"}
    return _run(trace, prespecified, method, options["alpha"], None, rest, on_decision)


def _run_chunk(trace: ModificationTrace, prespecified, method: str, options: dict, proc, seconds: float):
    """Continue ``proc`` (or start it) for about ``seconds``, in a worker process.

    Returns ``(proc, new decisions)``; the caller sends ``proc`` back for the next chunk.
    An :class:`InputError` comes back as ``("error", parameter, rule, got, location)`` (it
    does not cross processes as itself).
    """
    try:
        if proc is None:
            rest = {k: v for k, v in options.items() if k != "alpha"}
            proc = _procedure(trace, prespecified, method, options["alpha"], None, rest)
        start, deadline, d = proc.step, time.monotonic() + seconds, trace.improvements
        while proc.step < trace.modifications and (proc.step == start or time.monotonic() < deadline):
            proc.test(d[:, proc.step])
        return proc, proc.decisions[start:]
    except InputError as exc:
        return ("error", exc.parameter, exc.rule, exc.got, exc.location)


def approve(trace, method: str = "bonf-srgp", *, alpha: float = srgp.ALPHA,
            success_weight: float = srgp.SUCCESS_WEIGHT, margin: float = srgp.MARGIN,
            margin_step: float = srgp.MARGIN_STEP, prespecified=None, seed: int = 0, steps: int | None = None,
            failure_threshold: int = srgp.FAILURE_THRESHOLD, pres_share: float = srgp.PRES_SHARE,
            pres_first_share: float = srgp.PRES_FIRST_SHARE,
            max_conditioning: int = srgp.MAX_CONDITIONING) -> ApprovalResult:
    """Run one procedure over a modification trace (Algorithm 1 of Feng et al.).

    The defaults are the paper's (Section 3) and those of :class:`ApprovalSettings`, which
    the page and the CLI use too.

    Parameters
    ----------
    trace : ModificationTrace, path, bytes, DataFrame or array (n, 1 + T)
        Per-example losses: the original model first, then the modifications in test order.
    method : str
        ``naive``, ``bonferroni``, ``weighted-bonferroni``, ``bonf-srgp``, ``fs-srgp`` or
        ``pres-srgp`` (see :mod:`meter_dashboard.bounds.srgp`).
    alpha : float
        FWER of approving at least one unacceptable modification (0.1).
    success_weight : float
        First edge weight of the SRGPs (0.8 in the paper's Section 3).
    margin, margin_step : float
        delta_1 of Eq. 7 in loss units and the step added after each approval (0 and 0.01:
        Eq. 7's schedule, so that every approval must improve on the last).
    prespecified : trace-like, optional
        The prespecified procedure's modifications (required for ``pres-srgp``).
    seed : int
        Seed of the multivariate normal integration (fs-srgp, pres-srgp).
    steps : int, optional
        T, the number of tests planned (default: the number of modifications in the trace).

    Examples
    --------
    >>> import numpy as np, meter_dashboard.approvals.model as ap
    >>> rng = np.random.default_rng(0)
    >>> original = rng.normal(1.0, 1.0, 400)
    >>> better = original - 0.3 + rng.normal(0.0, 0.5, 400)  # 0.3 lower loss on average
    >>> ap.approve(np.column_stack([original, better]), "bonf-srgp").approved.tolist()
    [True]

    References
    ----------
    Feng et al., "Sequential algorithmic modification with test data reuse", Algorithm 1,
    Sections 2.2-2.4 and 3 (Eq. 7).
    """
    method = normalize_method(method)
    trace = as_trace(trace)
    pres_trace = None
    if prespecified is not None:
        pres_trace = as_trace(prespecified, parameter="prespecified")
        check_prespecified(trace, pres_trace)
    options = dict(success_weight=success_weight, margin=margin, margin_step=margin_step, seed=seed,
                   failure_threshold=failure_threshold, pres_share=pres_share, pres_first_share=pres_first_share,
                   max_conditioning=max_conditioning)
    return _run(trace, pres_trace, method, alpha, steps, options)


def compare(trace, methods=METHODS, *, prespecified=None, **options) -> ApprovalComparison:
    """Run several procedures on the same trace (``pres-srgp`` is skipped without a prespecified trace)."""
    trace = as_trace(trace)
    if prespecified is not None:
        prespecified = as_trace(prespecified, parameter="prespecified")
    results, skipped = {}, {}
    for m in methods:
        m = normalize_method(m)
        if m == "pres-srgp" and prespecified is None:
            skipped[m] = "needs the prespecified procedure's modifications"
            continue
        results[m] = approve(trace, m, prespecified=prespecified, **options)
    return ApprovalComparison(results=results, names=trace.names, skipped=skipped)


# --------------------------------------------------------------------------- settings
class ApprovalSettings(param.Parameterized):
    """The settings of a procedure, with the paper's defaults: one definition for page, notebook and CLI.

    References
    ----------
    Feng et al., Section 3: alpha = 0.1, edge weights 0.8, margin growing by 0.01 after
    each approval (Eq. 7), wBonferroni's split at three denials.
    """

    alpha = param.Number(default=srgp.ALPHA, bounds=(0.0, 1.0), inclusive_bounds=(False, False),
                         softbounds=(0.01, 0.3), step=0.01,
                         doc="FWER of approving at least one unacceptable modification.")
    success_weight = param.Number(default=srgp.SUCCESS_WEIGHT, bounds=(0.0, 1.0), step=0.05,
                                  doc="SRGP edge weight to the test right after an approval (0.8 in the paper).")
    margin = param.Number(default=srgp.MARGIN, bounds=(-1e6, 1e6), softbounds=(0.0, 0.1), step=0.001,
                          doc="Margin delta_1: the improvement (loss units) a modification must beat.")
    margin_step = param.Number(default=srgp.MARGIN_STEP, bounds=(-1e6, 1e6), softbounds=(0.0, 0.05), step=0.001,
                               doc="Added to the margin after each approval (Eq. 7: 0.01 on the AUC).")
    seed = param.Integer(default=0, bounds=(0, None), doc="Seed of the multivariate normal integration.")
    failure_threshold = param.Integer(default=srgp.FAILURE_THRESHOLD, bounds=(0, srgp.MAX_STEPS),
                                      doc="wBonferroni: histories with at most this many denials share half of alpha.")
    pres_share = param.Number(default=srgp.PRES_SHARE, bounds=(0.0, 1.0), step=0.05,
                              doc="presSRGP: share of alpha on the prespecified nodes.")
    pres_first_share = param.Number(default=srgp.PRES_FIRST_SHARE, bounds=(0.0, 1.0), step=0.05,
                                    doc="presSRGP: the first prespecified node's share of that.")
    max_conditioning = param.Integer(default=srgp.MAX_CONDITIONING, bounds=(0, 40),
                                     doc="fsSRGP/presSRGP: earlier nodes each threshold conditions on, at most.")

    SETTINGS = ("alpha", "success_weight", "margin", "margin_step", "seed", "failure_threshold", "pres_share",
                "pres_first_share", "max_conditioning")

    def options(self) -> dict:
        """The settings as keyword arguments of :func:`approve`."""
        return {name: getattr(self, name) for name in self.SETTINGS}


# --------------------------------------------------------------------------- the model
@functools.lru_cache(maxsize=RESULTS_KEPT)
def _results(key: tuple) -> dict:
    """The slot of one computation's result (``{"result": ApprovalResult}`` once known), shared by the process.

    Decisions depend only on the trace (by fingerprint), the procedure and its settings, so
    everyone who opens the same example with the same settings reads one result; the
    :data:`RESULTS_KEPT` most recently used are kept.
    """
    return {}


def clear_shared_results() -> None:
    """Forget every result this process shares (tests; a server never needs it)."""
    _results.cache_clear()


class ApproveModel(ApprovalSettings):
    """What a person chose on the /approve page (or in a notebook) and the derived decisions.

    Parameters
    ----------
    background : bool
        Compute off the event loop (a served page): the chosen procedure first (``result``
        grows decision by decision), then, while ``compare_active``, the other procedures
        one at a time (``comparison``).  Otherwise everything is computed at once when a
        setting changes.
    dispatch : callable, optional
        ``dispatch(fn)`` applies a background result where the model lives (a page: the
        session's next tick); by default at once, on the loop that computes.

    References
    ----------
    Feng et al., "Sequential algorithmic modification with test data reuse", Algorithm 1.
    """

    example = param.Selector(default="refits", objects=list(EXAMPLES) + ["uploaded"],
                             doc="A shipped example trace, or 'uploaded' for a file given with load_trace().")
    method = param.Selector(default="fs-srgp", objects=list(METHODS), doc="The approval procedure.")
    compare_methods = param.ListSelector(default=list(METHODS), objects=list(METHODS),
                                         doc="Procedures in the side-by-side comparison.")
    compare_active = param.Boolean(default=True, doc="Keep the comparison of compare_methods up to date.")

    trace = param.Parameter(default=None, constant=True, doc="The ModificationTrace being analysed.")
    prespecified = param.Parameter(default=None, constant=True, doc="The prespecified procedure's trace (or None).")
    result = param.Parameter(default=None, constant=True, doc="ApprovalResult of the chosen method (last good one).")
    comparison = param.Parameter(default=None, constant=True, doc="ApprovalComparison of compare_methods.")
    busy = param.Boolean(default=False, constant=True, doc="Computing in the background.")
    error = param.String(default="", constant=True, doc="Why the last change could not be applied ('' when fine).")
    trace_error = param.String(default="", constant=True, doc="Why the last uploaded file was refused.")
    prespecified_error = param.String(default="", constant=True, doc="Why the last prespecified file was refused.")

    #: While computing in the background, partial results are published at most this often (seconds).
    STREAM_INTERVAL = 0.25
    #: fsSRGP/presSRGP in a worker process go in chunks of about this many seconds of work.
    CHUNK_SECONDS = 0.1

    def __init__(self, *, background: bool = False, dispatch=None, **params):
        trace = params.pop("trace", None)
        prespecified = params.pop("prespecified", None)
        super().__init__(**params)
        self._background = bool(background)
        self._uploaded: tuple | None = None
        #: the background passes (a served page): the newest settings win, one pass at a time
        self._latest = Latest(on_busy=self._pass_busy, background=self._background)
        if dispatch is not None:
            self._latest.dispatch = dispatch
        if self._background:
            warm_up(*WORKER_KINDS)  # the worker processes start now, ready for fsSRGP and presSRGP
        if trace is not None:
            self.load_trace(trace, prespecified=prespecified)
        else:
            self._load_example()

    def _set(self, **values) -> None:
        """Outputs are read-only for everyone else: set them here only."""
        with param.edit_constant(self):
            self.param.update(**values)

    # -- inputs ----------------------------------------------------------------------
    @staticmethod
    def read_trace(source, name: str | None = None, parameter: str = "trace") -> ModificationTrace:
        """A trace read from a path, bytes, file object, DataFrame or array (touches no state: a worker thread
        may call it); named ``name``.  Refused: an :class:`InputError` naming each bad cell."""
        try:
            trace = as_trace(source, parameter=parameter)
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(parameter, "a readable CSV file", str(exc)) from None
        return trace.renamed(name) if name else trace

    def load_trace(self, source, prespecified=None, *, name: str | None = None) -> bool:
        """Use an uploaded/own trace (path, bytes, file object, DataFrame, array).

        Returns False (and sets ``trace_error``) when the file is refused; the previous
        trace and results stay.
        """
        try:
            trace = self.read_trace(source, name)
        except InputError as exc:
            self.fail_trace(exc)
            return False
        pres, pres_error = None, ""
        if prespecified is not None:
            try:
                pres = self.read_trace(prespecified, parameter="prespecified")
                check_prespecified(trace, pres)
            except InputError as exc:
                pres, pres_error = None, str(exc)
        self.use_trace(trace, pres, pres_error)
        return True

    def fail_trace(self, exc) -> None:
        """A refused trace file: say why (the previous trace and results stay)."""
        self._set(trace_error=str(exc))

    def use_trace(self, trace: ModificationTrace, prespecified: ModificationTrace | None = None,
                  prespecified_error: str = "") -> None:
        """Analyse ``trace`` (from :meth:`read_trace`) as the uploaded trace, with its prespecified plan if any."""
        self._set(trace_error="", prespecified_error=prespecified_error)
        self._uploaded = (trace, prespecified)
        if self.example != "uploaded":
            self.example = "uploaded"  # _load_example picks up the uploaded trace and recomputes
        else:
            self._set(trace=trace, prespecified=prespecified)
            self._recompute()

    def load_prespecified(self, source, *, name: str | None = None) -> bool:
        """Use a prespecified procedure's trace for the current trace (presSRGP)."""
        try:
            self.use_prespecified(self.read_trace(source, name, parameter="prespecified"))
        except InputError as exc:
            self.fail_prespecified(exc)
            return False
        return True

    def fail_prespecified(self, exc) -> None:
        """A refused prespecified file: say why (the previous plan stays)."""
        self._set(prespecified_error=str(exc))

    def use_prespecified(self, prespecified: ModificationTrace) -> None:
        """Use ``prespecified`` (from :meth:`read_trace`) for the current trace; InputError if its rows differ."""
        if self.trace is not None:
            check_prespecified(self.trace, prespecified)
        if self.example == "uploaded" and self._uploaded is not None:
            self._uploaded = (self._uploaded[0], prespecified)
        self._set(prespecified=prespecified, prespecified_error="")
        self._recompute()

    @param.depends("example", watch=True)
    def _load_example(self):
        if self.example == "uploaded":
            if self._uploaded is not None:
                self._set(trace=self._uploaded[0], prespecified=self._uploaded[1])
                self._recompute()
            else:
                self._set(error="No uploaded trace yet: choose a CSV file (first column the original model's loss).")
            return
        trace, pres = load_example(self.example)
        self._set(trace=trace, prespecified=pres, trace_error="", prespecified_error="")
        self._recompute()

    # -- shared links ----------------------------------------------------------------------
    #: URL keys of a shared link (each is the parameter of the same name).
    QUERY_KEYS = ("example", "method", "alpha", "success_weight", "margin", "margin_step", "seed")

    @classmethod
    def parse_query(cls, query: dict) -> tuple[dict, list[str]]:
        """A link's settings parsed (``{key: value}``) and a message for each value refused (naming the URL key, the
        rule, the value): the values are parsed with the bounded checks of :mod:`meter_dashboard.core.validation`
        and the parameters' own bounds.  Touches no model: the page and a link's first response both read links so."""
        values, errors = {}, []
        for key in cls.QUERY_KEYS:
            if key not in query:
                continue
            text = query[key]
            try:
                values[key] = cls._parse_query(key, text[0] if isinstance(text, list) else text)
            except InputError as exc:
                errors.append(str(exc))
        return values, errors

    def update_from_query(self, query: dict) -> list[str]:
        """Apply a link's settings (:meth:`parse_query`); a message for each value refused.

        The values are applied together (one recomputation); refused ones leave their setting as it was.
        """
        values, errors = self.parse_query(query)
        example = values.pop("example", None)
        if example is not None and example != self.example:
            self.example = example
        if values:
            self.param.update(**values)
        return errors

    @classmethod
    def _parse_query(cls, key: str, text):
        text = str(text)
        if key == "example":
            if text not in EXAMPLES:
                raise InputError(key, "one of " + ", ".join(EXAMPLES), text)
            return text
        if key == "method":
            return normalize_method(text)
        p = cls.param[key]
        value = check_int(key, text) if isinstance(p, param.Integer) else check_number(key, text)
        low, high = p.bounds if p.bounds is not None else (None, None)
        inclusive = getattr(p, "inclusive_bounds", (True, True))
        if (low is not None and (value < low or (value == low and not inclusive[0]))) or \
                (high is not None and (value > high or (value == high and not inclusive[1]))):
            left, right = "[" if inclusive[0] else "(", "]" if inclusive[1] else ")"
            rule = f"in {left}{low:g}, {high:g}{right}" if high is not None else f"at least {low:g}"
            raise InputError(key, rule, text)
        return value

    def to_query(self) -> dict[str, str]:
        """The settings as a link's query parameters (strings; an uploaded trace is not in a link)."""
        parts = [("example", self.example)] if self.example in EXAMPLES else []
        parts += [(key, getattr(self, key)) for key in self.QUERY_KEYS if key != "example"]
        return {k: v if isinstance(v, str) else repr(v) for k, v in parts}

    def query_string(self) -> str:
        """The settings as a link's query string (``example=refits&method=fs-srgp&alpha=0.1...``)."""
        return "&".join(f"{k}={v}" for k, v in self.to_query().items())

    @property
    def methods_available(self) -> list[str]:
        return [m for m in METHODS if m != "pres-srgp" or self.prespecified is not None]

    # -- derived results -------------------------------------------------------------
    def _key(self, method: str, options: dict) -> tuple:
        pres = self.prespecified.fingerprint if self.prespecified is not None and method == "pres-srgp" else None
        return (method, self.trace.fingerprint, pres, tuple(sorted(options.items())))

    def _cached(self, method: str, options: dict):
        return _results(self._key(method, options)).get("result")

    def _store(self, method: str, options: dict, result: ApprovalResult) -> None:
        _results(self._key(method, options))["result"] = result

    def _compute(self, method: str, options: dict) -> ApprovalResult:
        """approve() with a cache: switching procedures or settings back recomputes nothing."""
        result = self._cached(method, options)
        if result is None:
            result = _run_options(self.trace, self.prespecified, method, options)
            self._store(method, options, result)
        return result

    def _comparison(self, options: dict, results: dict, pending=()) -> ApprovalComparison:
        skipped = {m: "needs the prespecified procedure's modifications" for m in self.compare_methods
                   if m == "pres-srgp" and self.prespecified is None}
        ordered = {m: results[m] for m in self.compare_methods if m in results}
        return ApprovalComparison(results=ordered, names=self.trace.names, skipped=skipped, pending=tuple(pending))

    def _compare_list(self) -> list[str]:
        """Procedures of the comparison still to compute (the chosen one first: it is already known)."""
        todo = [m for m in self.compare_methods if m != "pres-srgp" or self.prespecified is not None]
        return sorted(todo, key=lambda m: m != self.method)

    @param.depends("method", "alpha", "success_weight", "margin", "margin_step", "seed", "failure_threshold",
                   "pres_share", "pres_first_share", "max_conditioning", "compare_methods", "compare_active",
                   watch=True)
    def _recompute(self):
        if self.trace is None:
            return
        if not self._background or running_loop() is None or self._known():
            self._latest.cancel()
            self._compute_now()  # at once: nothing to compute, or nowhere else to compute it
            return
        self._set(busy=True)
        self._latest.run(self._refresh_once)

    def _known(self) -> bool:
        """Every result on screen is already known in this process (another session computed it)."""
        options = self.options()
        wanted = [self.method] + (self._compare_list() if self.compare_active else [])
        return all(self._cached(m, options) is not None for m in wanted)

    def _pass_busy(self, busy: bool) -> None:
        if not busy:  # every pass is over (the chosen procedure's result said "not busy" already)
            self._set(busy=False)

    def _compute_now(self) -> None:
        options = self.options()
        try:
            result = self._compute(self.method, options)
            todo = self._compare_list()
            results = {m: self._compute(m, options) for m in todo} if self.compare_active else \
                {m: r for m in todo if (r := self._cached(m, options)) is not None}
        except InputError as exc:
            self._set(error=str(exc))
            return
        pending = [m for m in todo if m not in results]
        self._set(result=result, comparison=self._comparison(options, results, pending), error="", busy=False)

    # -- background computation (a served page) -------------------------------------------
    async def settled(self) -> None:
        """Wait until the background computation (if any) has caught up with the settings."""
        await self._latest.settled()

    async def _refresh_once(self, stopped) -> None:
        options, method = self.options(), self.method
        result = await self._in_worker(stopped, method, options, stream=True)
        if result is None:
            return
        self._set(result=result, error="", busy=False)  # the chosen procedure is final; the comparison may follow
        todo = self._compare_list()
        results = {m: r for m in todo if (r := self._cached(m, options)) is not None}
        self._set(comparison=self._comparison(options, results, [m for m in todo if m not in results]))
        if not self.compare_active:
            return
        for m in todo:
            if m in results:
                continue
            r = await self._in_worker(stopped, m, options, stream=False)
            if r is None:
                return
            results[m] = r
            self._set(comparison=self._comparison(options, results, [m for m in todo if m not in results]))

    async def _in_worker(self, stopped, method: str, options: dict, stream: bool):
        """One procedure off the event loop; its decisions are published as they come (``stream``).

        fsSRGP and presSRGP run in the procedures' worker process once it has started, in
        chunks of about :data:`CHUNK_SECONDS` (:func:`~meter_dashboard.core.runtime.in_chunks`);
        everything else in the thread pool (:func:`~meter_dashboard.core.runtime.in_thread_streaming`).
        """
        cached = self._cached(method, options)
        if cached is not None:
            return cached
        heavy = method in ("fs-srgp", "pres-srgp") and process_pool_ready("procedures")
        publish = partial(self._publish, method, options) if stream else None
        try:
            if heavy:
                try:
                    result = await self._in_processes(stopped, method, options, publish)
                except (OSError, RuntimeError):  # the worker process died (BrokenProcessPool): do it here
                    result = await self._in_thread(stopped, method, options, publish)
            else:
                result = await self._in_thread(stopped, method, options, publish)
        except Superseded:
            return None
        except InputError as exc:
            if not stopped():
                self._set(error=str(exc))
            return None
        if result is None or stopped():
            return None
        self._store(method, options, result)
        return result

    def _publish(self, method: str, options: dict, decisions: list) -> None:
        """A partial result: the tests decided so far."""
        rest = {k: v for k, v in options.items() if k != "alpha"}
        self._set(result=_result(method, options["alpha"], self.trace.names, decisions, self.trace.modifications,
                                 rest))

    async def _in_processes(self, stopped, method: str, options: dict, publish):
        """The procedure in the worker process, chunk by chunk (the process sends its state back each time)."""
        trace, pres, seconds = self.trace, self.prespecified, self.CHUNK_SECONDS

        async def chunk(proc):
            out = await in_process("procedures", _run_chunk, trace, pres, method, options, proc, seconds)
            if out[0] == "error":
                raise InputError(out[1], out[2], out[3], location=out[4])
            return out

        proc, decisions = await in_chunks(chunk, more=lambda proc: proc.step < trace.modifications, stopped=stopped,
                                          publish=publish, interval=self.STREAM_INTERVAL)
        rest = {k: v for k, v in options.items() if k != "alpha"}
        return _result(method, options["alpha"], trace.names, decisions, proc.steps, rest)

    async def _in_thread(self, stopped, method: str, options: dict, publish):
        # the worker gets its own references: it never reads the model, whose trace may change meanwhile
        return await in_thread_streaming(_run_options, self.trace, self.prespecified, method, options,
                                         publish=publish, stopped=stopped, interval=self.STREAM_INTERVAL)
