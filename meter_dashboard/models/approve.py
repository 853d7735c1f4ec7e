"""Approving model modifications on a reused test set: traces, results and the param models.

The mathematics lives in :mod:`meter_dashboard.bounds.srgp` (Feng et al., Section 2,
Algorithm 1, Eqs. 1-7).  This module adds what a person works with:

* :func:`read_modification_trace` -- the input file: a CSV with one row per test example;
  the first column is the original model's per-example loss, then one column per
  modification in the order they were tested (header = names).  An optional second file
  of the same shape holds the prespecified procedure's modifications (presSRGP).
* :func:`approve` / :func:`compare` -- plain functions returning small result objects
  (readable ``repr``, ``to_dict()``, ``to_frame()``), like scipy.stats' results.
* :class:`ApproveModel` -- a ``param.Parameterized`` holding what a person chose (trace,
  procedure, alpha, edge weight, margins, seed) and deriving the decisions; invalid input
  keeps the last good results and sets ``error``.  The CLI, notebooks and the /approve
  page drive the same object.
* :class:`ApprovalSimulation` -- the Section 3 simulations (FWER and power) with a
  progress fraction and cancellation, for the page and notebooks.
"""
from __future__ import annotations

import asyncio
import csv
import io
import math
import os
import threading
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import param

from .._files import read_text
from .._validation import InputError, raw
from ..bounds import srgp
from ..bounds.srgp import METHOD_LABELS, METHODS, normalize_method

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "ModificationTrace",
    "read_modification_trace",
    "EXAMPLES",
    "load_example",
    "ApprovalResult",
    "Comparison",
    "approve",
    "compare",
    "ApproveModel",
    "ApprovalSimulation",
]

#: Shipped example traces: name -> (file, prespecified file or None, description).
EXAMPLES = {
    "refits": ("approve_refits.csv", "approve_refits_prespecified.csv",
               "15 refits on a growing data stream (mostly real improvements), 800 test examples"),
    "adversary": ("approve_adversary.csv", "approve_adversary_prespecified.csv",
                  "50 modifications by a developer overfitting 100 reused test examples "
                  "(the original model is the best one)"),
}

#: The settings each example was made for (applied when the example is chosen on a model).
EXAMPLE_SETTINGS = {
    "refits": dict(margin=0.0, margin_step=0.01),  # Section 3.2: delta grows by 0.01 AUC per approval
    "adversary": dict(margin=0.0, margin_step=0.0),  # the path was generated with margin 0
}

_MAX_NAME = 80


# --------------------------------------------------------------------------- traces
@dataclass(frozen=True)
class ModificationTrace:
    """Per-example losses of the original model and of each modification, in test order."""

    names: tuple
    original: np.ndarray
    losses: np.ndarray
    original_name: str = "original"
    source: str = ""

    @property
    def examples(self) -> int:
        return int(self.original.size)

    @property
    def modifications(self) -> int:
        return int(self.losses.shape[1])

    @property
    def improvements(self) -> np.ndarray:
        """Per-example ``loss_0 - loss_j`` (positive = modification j is better), shape (n, T)."""
        return self.original[:, None] - self.losses

    def __repr__(self) -> str:
        return (f"ModificationTrace({self.modifications} modifications x {self.examples} examples, "
                f"source={self.source!r})")




def read_modification_trace(source, *, parameter: str = "trace") -> ModificationTrace:
    """Read and validate a modification trace (CSV).

    Parameters
    ----------
    source : path, bytes or text file object
        CSV with a header row of names; one row per test example; the first column is the
        original model's per-example loss, the others the modifications' losses in the
        order they were tested.  Lines starting with ``#`` are comments.
    parameter : str
        The name used in error messages (``"trace"`` or ``"prespecified"``).

    Raises
    ------
    InputError
        With the row and column of the first bad value.
    """
    text, label = read_text(source, parameter=parameter)
    rows = []
    line_numbers = []
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or all(cell.strip() == "" for cell in row):
            continue
        if row[0].lstrip().startswith("#"):
            continue
        rows.append(row)
        line_numbers.append(number)
    if not rows:
        raise InputError(parameter, "a CSV file with a header row and one row per test example", "an empty file")
    header = [cell.strip() for cell in rows[0]]
    if len(header) < 2:
        raise InputError(parameter, "at least 2 columns (the original model's loss, then one per modification)",
                         header, location=f"line {line_numbers[0]}")
    seen = {}
    for j, name in enumerate(header, start=1):
        if name == "":
            raise InputError("column name", "non-empty", name, location=f"line {line_numbers[0]}, column {j}")
        if len(name) > _MAX_NAME:
            raise InputError("column name", f"at most {_MAX_NAME} characters", name,
                             location=f"line {line_numbers[0]}, column {j}")
        if name in seen:
            raise InputError("column name", f"unique (also used by column {seen[name]})", name,
                             location=f"line {line_numbers[0]}, column {j}")
        seen[name] = j
    _try_number = _number_or_none
    if all(_try_number(cell) is not None for cell in header):
        raise InputError(parameter, "a CSV whose first line is a header of names", header,
                         location=f"line {line_numbers[0]}")
    width = len(header)
    values = np.empty((len(rows) - 1, width))
    for i, (row, number) in enumerate(zip(rows[1:], line_numbers[1:])):
        if len(row) != width:
            raise InputError("row", f"{width} values like the header", f"{len(row)} values",
                             location=f"line {number}")
        for j, cell in enumerate(row):
            value = _number_or_none(cell)
            if value is None or not math.isfinite(value):
                raise InputError(f"loss ({header[j]})", "a finite number", cell.strip(),
                                 location=f"line {number}, column {j + 1}")
            values[i, j] = value
    if values.shape[0] < 2:
        raise InputError(parameter, "at least 2 test examples (rows after the header)", values.shape[0])
    return ModificationTrace(names=tuple(header[1:]), original=values[:, 0].copy(), losses=values[:, 1:].copy(),
                             original_name=header[0], source=label)


def _number_or_none(cell: str):
    try:
        return float(cell.strip())
    except (TypeError, ValueError):
        return None


def _example_path(filename: str):
    return resources.files("meter_dashboard") / "data" / filename


def load_example(name: str) -> tuple[ModificationTrace, ModificationTrace | None]:
    """A shipped example trace and its prespecified companion (or ``None``)."""
    if name not in EXAMPLES:
        raise InputError("example", "one of " + ", ".join(EXAMPLES), name)
    main, pres, _ = EXAMPLES[name]
    with resources.as_file(_example_path(main)) as path:
        trace = read_modification_trace(path)
    prespecified = None
    if pres:
        with resources.as_file(_example_path(pres)) as path:
            if Path(path).exists():
                prespecified = read_modification_trace(path, parameter="prespecified")
    return trace, prespecified


def _as_trace(trace, parameter="trace") -> ModificationTrace:
    if isinstance(trace, ModificationTrace):
        return trace
    if isinstance(trace, (str, os.PathLike, bytes, bytearray)) or hasattr(trace, "read"):
        return read_modification_trace(trace, parameter=parameter)
    if hasattr(trace, "to_numpy") and hasattr(trace, "columns"):  # a DataFrame
        values = trace.to_numpy(dtype=float)
        names = [str(c) for c in trace.columns]
        return ModificationTrace(names=tuple(names[1:]), original=values[:, 0], losses=values[:, 1:],
                                 original_name=names[0], source="data frame")
    values = np.asarray(trace, dtype=float)
    if values.ndim != 2 or values.shape[1] < 2:
        raise InputError(parameter, "a table of losses (first column the original model)", list(values.shape))
    names = tuple(f"m{j}" for j in range(1, values.shape[1]))
    return ModificationTrace(names=names, original=values[:, 0], losses=values[:, 1:], source="array")


def _check_prespecified(trace: ModificationTrace, prespecified: ModificationTrace) -> None:
    if prespecified.examples != trace.examples:
        raise InputError("prespecified", f"{trace.examples} rows (one per test example, as in the trace)",
                         prespecified.examples)


# --------------------------------------------------------------------------- results
@dataclass
class ApprovalResult:
    """Decisions of one procedure on one trace (one entry per modification, in test order).

    ``levels`` are the significance levels (p-value thresholds) each test was held to;
    ``weights`` the node weights (shares of alpha) of the SRGP tree; ``z_thresholds`` the
    same levels on the z scale.
    """

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
    def label(self) -> str:
        return METHOD_LABELS[self.method]

    def __repr__(self) -> str:
        marks = "".join("A" if a else "." for a in self.approved)
        if len(marks) > 40:
            marks = marks[:37] + "..."
        return (f"ApprovalResult(method={self.method!r}, alpha={self.alpha:g}, approved={self.approvals} of "
                f"{len(self.approved)} [{marks}], first level={_fmt(self.levels[0]) if len(self.levels) else '-'})")

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
        import pandas as pd

        return pd.DataFrame({
            "test": np.arange(1, len(self.approved) + 1),
            "modification": list(self.names),
            "improvement": self.estimates,
            "standard_error": self.standard_errors,
            "margin": self.margins,
            "z": self.z,
            "p_value": self.p_values,
            "weight": self.weights,
            "level": self.levels,
            "z_threshold": self.z_thresholds,
            "approved": self.approved,
        })


def _fmt(v: float) -> str:
    return f"{v:.4g}"


@dataclass
class Comparison:
    """Several procedures on the same trace: ``results[method]`` is an :class:`ApprovalResult`."""

    results: dict
    names: tuple
    skipped: dict = field(default_factory=dict)  # method -> reason

    def __repr__(self) -> str:
        parts = ", ".join(f"{m}: {r.approvals}" for m, r in self.results.items())
        return f"Comparison(approved per procedure: {{{parts}}}, modifications={len(self.names)})"

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


def approve(trace, method: str = "bonf-srgp", *, alpha: float = 0.1, success_weight: float = 0.8,
            margin: float = 0.0, margin_step: float = 0.0, prespecified=None, seed: int = 0,
            steps: int | None = None, failure_threshold: int = 3, pres_share: float = 0.9,
            pres_first_share: float = 0.5, max_conditioning: int = srgp.MAX_CONDITIONING) -> ApprovalResult:
    """Run one procedure over a modification trace (Algorithm 1 of Feng et al.).

    Parameters
    ----------
    trace : ModificationTrace, path, bytes, DataFrame or array (n, 1 + T)
        Per-example losses: the original model first, then the modifications in test order.
    method : str
        ``naive``, ``bonferroni``, ``weighted-bonferroni``, ``bonf-srgp``, ``fs-srgp`` or
        ``pres-srgp`` (see :mod:`meter_dashboard.bounds.srgp`).
    alpha : float
        FWER of approving at least one unacceptable modification.
    success_weight : float
        First edge weight of the SRGPs (0.8 in the paper's Section 3).
    margin, margin_step : float
        delta_1 of Eq. 7 in loss units and the step added after each approval.
    prespecified : trace-like, optional
        The prespecified procedure's modifications (required for ``pres-srgp``).
    seed : int
        Seed of the multivariate normal integration (fs-srgp, pres-srgp).
    steps : int, optional
        T, the number of tests planned (default: the number of modifications in the trace).

    Examples
    --------
    >>> import numpy as np, meter_dashboard.models.approve as ap
    >>> rng = np.random.default_rng(0)
    >>> original = rng.normal(1.0, 1.0, 400)
    >>> better = original - 0.3 + rng.normal(0.0, 0.5, 400)  # 0.3 lower loss on average
    >>> ap.approve(np.column_stack([original, better]), "bonf-srgp").approved.tolist()
    [True]
    """
    method = normalize_method(method)
    trace = _as_trace(trace)
    pres_trace = None
    if prespecified is not None:
        pres_trace = _as_trace(prespecified, parameter="prespecified")
        _check_prespecified(trace, pres_trace)
    if method == "pres-srgp" and pres_trace is None:
        raise InputError("prespecified", "a trace of the prespecified procedure's modifications (pres-srgp needs it)",
                         raw("no file"))
    if steps is None:
        steps = trace.modifications
    elif int(steps) < trace.modifications:
        raise InputError("steps", f"at least the number of modifications in the trace ({trace.modifications})", steps)
    options = dict(success_weight=success_weight, margin=margin, margin_step=margin_step, seed=seed,
                   failure_threshold=failure_threshold, pres_share=pres_share, pres_first_share=pres_first_share,
                   max_conditioning=max_conditioning)
    out = srgp.run_procedure(trace.improvements, method, alpha=alpha, steps=steps,
                             prespecified=pres_trace.improvements if (pres_trace is not None and method == "pres-srgp") else None,
                             **options)
    return ApprovalResult(method=method, alpha=float(alpha), names=trace.names, approved=out["approved"],
                          levels=out["levels"], weights=out["weights"], z=out["z"], z_thresholds=out["z_thresholds"],
                          p_values=out["p_values"], margins=out["margins"], estimates=out["estimates"],
                          standard_errors=out["standard_errors"], steps=int(steps), settings=options)


def compare(trace, methods=METHODS, *, prespecified=None, **options) -> Comparison:
    """Run several procedures on the same trace (``pres-srgp`` is skipped without a prespecified trace)."""
    trace = _as_trace(trace)
    if prespecified is not None:
        prespecified = _as_trace(prespecified, parameter="prespecified")
    results = {}
    skipped = {}
    for m in methods:
        m = normalize_method(m)
        if m == "pres-srgp" and prespecified is None:
            skipped[m] = "needs the prespecified procedure's modifications"
            continue
        results[m] = approve(trace, m, prespecified=prespecified, **options)
    return Comparison(results=results, names=trace.names, skipped=skipped)


# --------------------------------------------------------------------------- param models
class ApproveModel(param.Parameterized):
    """What a person chose on the /approve page (or in a notebook) and the derived decisions."""

    example = param.Selector(default="refits", objects=list(EXAMPLES) + ["uploaded"],
                             doc="A shipped example trace, or 'uploaded' for a file given with load_trace().")
    method = param.Selector(default="fs-srgp", objects=list(METHODS), doc="The approval procedure.")
    alpha = param.Number(default=0.1, bounds=(0.0, 1.0), inclusive_bounds=(False, False), softbounds=(0.01, 0.3),
                         step=0.01, doc="FWER of approving at least one unacceptable modification.")
    success_weight = param.Number(default=0.8, bounds=(0.0, 1.0), step=0.05,
                                  doc="SRGP edge weight to the test right after an approval (0.8 in the paper).")
    margin = param.Number(default=0.0, softbounds=(0.0, 0.1), step=0.001,
                          doc="Margin delta_1: the improvement (loss units) a modification must beat.")
    margin_step = param.Number(default=0.0, softbounds=(0.0, 0.05), step=0.001,
                               doc="Added to the margin after each approval (Section 3.2 uses 0.01 on AUC).")
    seed = param.Integer(default=0, bounds=(0, None), doc="Seed of the multivariate normal integration.")
    failure_threshold = param.Integer(default=3, bounds=(0, None),
                                      doc="wBonferroni: histories with at most this many denials share half of alpha.")
    pres_share = param.Number(default=0.9, bounds=(0.0, 1.0), step=0.05,
                              doc="presSRGP: share of alpha on the prespecified nodes.")
    pres_first_share = param.Number(default=0.5, bounds=(0.0, 1.0), step=0.05,
                                    doc="presSRGP: the first prespecified node's share of that.")
    max_conditioning = param.Integer(default=srgp.MAX_CONDITIONING, bounds=(0, 40),
                                     doc="fsSRGP/presSRGP: earlier nodes each threshold conditions on, at most.")
    compare_methods = param.ListSelector(default=list(METHODS), objects=list(METHODS),
                                         doc="Procedures in the side-by-side comparison.")

    trace = param.Parameter(default=None, doc="The ModificationTrace being analysed.")
    prespecified = param.Parameter(default=None, doc="The prespecified procedure's trace (or None).")
    result = param.Parameter(default=None, doc="ApprovalResult of the chosen method (last good one).")
    comparison = param.Parameter(default=None, doc="Comparison of compare_methods (last good one).")
    error = param.String(default="", doc="Why the last change could not be applied ('' when fine).")
    trace_error = param.String(default="", doc="Why the last uploaded file was refused.")
    prespecified_error = param.String(default="", doc="Why the last prespecified file was refused.")

    def __init__(self, **params):
        trace = params.pop("trace", None)
        prespecified = params.pop("prespecified", None)
        super().__init__(**params)
        self._uploaded: tuple | None = None
        if trace is not None:
            self.load_trace(trace, prespecified=prespecified)
        else:
            self._load_example()

    # -- inputs ----------------------------------------------------------------------
    def load_trace(self, source, prespecified=None, *, name: str | None = None) -> bool:
        """Use an uploaded/own trace (path, bytes, file object, DataFrame, array).

        Returns False (and sets ``trace_error``) when the file is refused; the previous
        trace and results stay.
        """
        try:
            trace = _as_trace(source)
            if name:
                trace = ModificationTrace(trace.names, trace.original, trace.losses, trace.original_name, name)
        except (InputError, OSError, UnicodeDecodeError) as exc:
            self.trace_error = str(exc)
            return False
        self.trace_error = ""
        pres = None
        if prespecified is not None:
            try:
                pres = _as_trace(prespecified, parameter="prespecified")
                _check_prespecified(trace, pres)
            except (InputError, OSError, UnicodeDecodeError) as exc:
                self.prespecified_error = str(exc)
                pres = None
        self._uploaded = (trace, pres)
        if self.example != "uploaded":
            self.example = "uploaded"  # _load_example picks up the uploaded trace and recomputes
        else:
            self.param.update(trace=trace, prespecified=pres)
            self._recompute()
        return True

    def load_prespecified(self, source, *, name: str | None = None) -> bool:
        """Use a prespecified procedure's trace for the current trace (presSRGP)."""
        try:
            pres = _as_trace(source, parameter="prespecified")
            if name:
                pres = ModificationTrace(pres.names, pres.original, pres.losses, pres.original_name, name)
            if self.trace is not None:
                _check_prespecified(self.trace, pres)
        except (InputError, OSError, UnicodeDecodeError) as exc:
            self.prespecified_error = str(exc)
            return False
        self.prespecified_error = ""
        if self.example == "uploaded" and self._uploaded is not None:
            self._uploaded = (self._uploaded[0], pres)
        self.prespecified = pres
        self._recompute()
        return True

    @param.depends("example", watch=True)
    def _load_example(self):
        if self.example == "uploaded":
            if self._uploaded is not None:
                trace, pres = self._uploaded
                self.param.update(trace=trace, prespecified=pres)
                self._recompute()
            else:
                self.error = "No uploaded trace yet: choose a CSV file (first column the original model's loss)."
            return
        trace, pres = load_example(self.example)
        self._holding = True  # one recomputation for the new trace and its settings, not one per setting
        try:
            self.param.update(trace=trace, prespecified=pres, trace_error="", prespecified_error="",
                              **EXAMPLE_SETTINGS.get(self.example, {}))
        finally:
            self._holding = False
        self._recompute()

    # -- derived results -------------------------------------------------------------
    def options(self) -> dict:
        return dict(alpha=self.alpha, success_weight=self.success_weight, margin=self.margin,
                    margin_step=self.margin_step, seed=self.seed, failure_threshold=self.failure_threshold,
                    pres_share=self.pres_share, pres_first_share=self.pres_first_share,
                    max_conditioning=self.max_conditioning)

    @param.depends("method", "alpha", "success_weight", "margin", "margin_step", "seed", "failure_threshold",
                   "pres_share", "pres_first_share", "max_conditioning", "compare_methods", watch=True)
    def _recompute(self):
        if self.trace is None or getattr(self, "_holding", False):
            return
        options = self.options()
        try:
            result = self._run(self.method, options)
            results, skipped = {}, {}
            for m in self.compare_methods:
                if m == "pres-srgp" and self.prespecified is None:
                    skipped[m] = "needs the prespecified procedure's modifications"
                    continue
                results[m] = self._run(m, options)
        except InputError as exc:
            self.error = str(exc)
            return
        comparison = Comparison(results=results, names=self.trace.names, skipped=skipped)
        self.param.update(result=result, comparison=comparison, error="")

    def _run(self, method: str, options: dict) -> ApprovalResult:
        """approve() with a small cache: switching procedures does not recompute the others."""
        key = (method, id(self.trace), id(self.prespecified), tuple(sorted(options.items())))
        cache = self.__dict__.setdefault("_results_cache", {})
        if key not in cache:
            if len(cache) > 64:
                cache.clear()
            cache[key] = approve(self.trace, method, prespecified=self.prespecified, **options)
        return cache[key]

    @property
    def methods_available(self) -> list[str]:
        return [m for m in METHODS if m != "pres-srgp" or self.prespecified is not None]


class ApprovalSimulation(param.Parameterized):
    """The Section 3 simulations with progress and cancellation.

    ``kind='fwer'``: Section 3.1 (adversarial developer, oracle initial model, 100 test
    examples, T = 50); ``kind='power'``: Section 3.2 (refits on an i.i.d. stream).  Call
    :meth:`run` (blocking; a page runs it in a worker thread) and :meth:`cancel` from
    elsewhere; ``progress`` goes from 0 to 1 and ``status`` says where it is.
    """

    kind = param.Selector(default="fwer", objects=["fwer", "power"], constant=True)
    methods = param.ListSelector(default=list(METHODS), objects=list(METHODS))
    replicates = param.Integer(default=40, bounds=(1, 2000), softbounds=(1, 200))
    steps = param.Integer(default=None, allow_None=True, bounds=(1, 200), doc="T (default 50 / 15).")
    test_size = param.Integer(default=None, allow_None=True, bounds=(10, 100000), doc="Test examples (100 / 800).")
    alpha = param.Number(default=0.1, bounds=(0.0, 1.0), inclusive_bounds=(False, False), step=0.01)
    seed = param.Integer(default=0, bounds=(0, None))

    progress = param.Number(default=0.0, bounds=(0.0, 1.0))
    status = param.String(default="")
    running = param.Boolean(default=False)
    result = param.Parameter(default=None)
    error = param.String(default="")

    DEFAULTS = {"fwer": dict(steps=50, test_size=100), "power": dict(steps=15, test_size=800)}

    def __init__(self, **params):
        super().__init__(**params)
        defaults = self.DEFAULTS[self.kind]
        if self.steps is None:
            self.steps = defaults["steps"]
        if self.test_size is None:
            self.test_size = defaults["test_size"]
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Ask a running simulation to stop after the current test."""
        self._stop.set()
        if self.running:
            self.status = "cancelling..."

    def _simulate(self, progress, extra):
        function = srgp.simulate_fwer if self.kind == "fwer" else srgp.simulate_power
        return function(list(self.methods), replicates=self.replicates, steps=self.steps, test_size=self.test_size,
                        alpha=self.alpha, seed=self.seed, progress=progress, should_stop=self._stop.is_set, **extra)

    def _finish(self, result):
        status = (f"cancelled after {result.completed} of {result.replicates} replicates" if result.cancelled
                  else f"done: {result.completed} replicates")
        self.param.update(result=result, status=status, progress=1.0 if not result.cancelled else self.progress)

    def run(self, **extra):
        """Run the simulation (blocking); returns the SimulationResult (also in ``result``)."""
        if not self._lock.acquire(blocking=False):
            self.error = "A simulation is already running."
            return None
        try:
            self._stop.clear()
            self.param.update(running=True, progress=0.0, error="", status="starting...")

            def progress(fraction, message):
                self.param.update(progress=float(min(max(fraction, 0.0), 1.0)), status=message)

            try:
                result = self._simulate(progress, extra)
            except InputError as exc:
                self.param.update(error=str(exc), status="")
                return None
            self._finish(result)
            return result
        finally:
            self.running = False
            self._lock.release()

    async def arun(self, poll: float = 0.25, **extra):
        """Run in a worker thread; ``progress``/``status`` are updated from the caller's event loop.

        The worker only writes plain attributes; every parameter event happens on the
        loop's thread, so a served page can update its widgets safely and a Cancel click
        (which calls :meth:`cancel`) gets through while the simulation runs.
        """
        if not self._lock.acquire(blocking=False):
            self.error = "A simulation is already running."
            return None
        try:
            self._stop.clear()
            self.param.update(running=True, progress=0.0, error="", status="starting...")
            box = {"progress": 0.0, "status": "starting..."}

            def progress(fraction, message):
                box["progress"] = float(min(max(fraction, 0.0), 1.0))
                box["status"] = message

            task = asyncio.ensure_future(asyncio.to_thread(self._simulate, progress, extra))
            while not task.done():
                await asyncio.wait({task}, timeout=poll)
                if not self._stop.is_set():
                    self.param.update(progress=box["progress"], status=box["status"])
            try:
                result = task.result()
            except InputError as exc:
                self.param.update(error=str(exc), status="")
                return None
            self._finish(result)
            return result
        finally:
            self.running = False
            self._lock.release()
