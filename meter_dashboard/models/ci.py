"""ease.ml/ci: sample sizes, evaluation and commit-trace replay for CI conditions.

The same objects serve notebooks, the CLI (``meter-dashboard ci``) and the ``/ci`` page:

- :func:`ci_labels` - the label counts a condition needs (baseline of Section 3 and the
  optimizations of Section 4), returned as a :class:`CIResult`.
- :func:`ci_curves` - counts against the number of steps for every adaptivity (one
  vectorized call per adaptivity).
- :func:`evaluate` - interval arithmetic on the estimates (Section 3.5, Appendix A.2):
  True / False / Unknown per clause, and the pass/fail signal of a mode.
- :func:`read_ci_trace`, :func:`replay_ci` - a commit history (per commit ``n, o, d``, or
  per-example predictions) replayed into pass/fail signals and new-testset alarms.
- :class:`CIModel` - a ``param.Parameterized`` model (no widgets) holding what a person
  chose.  Invalid input sets :attr:`CIModel.error` and keeps the last good results.

How the optimized plan is built (Section 4; symbols of :mod:`meter_dashboard.bounds.ci`):

- Clauses over d alone need no labels (Technical Observation 2): they are estimated on
  an *unlabeled* set.
- A variance bound ``p`` on ``E[(n_i - o_i)**2] <= d`` comes from a clause ``d < A +/- B``
  (Pattern 1: the clause passes only if ``d < A`` in fp-free mode, ``d < A + 2B`` in
  fn-free mode) or from a user-given ``difference_bound`` (Pattern 2).  Pattern 2's bound
  is checked on an unlabeled set that estimates d to ``2D`` (Section 4.2), unless the user
  declares it known in advance (``check_difference_bound=False``, as in Figure 5).
- delta is split equally across the clauses, the Pattern 2 check counting as one more
  (the paper's Pattern 1 gives delta/2 to the filter on d and delta/2 to the test).
- A clause ``a (n - o) > C +/- D`` uses the smaller of the Hoeffding count and Bennett's
  count with ``p`` (Section 4.1.1).  Other clauses use the Hoeffding recursion.
- Active labeling (Section 4.1.2): when every labeled clause is such a difference clause,
  each commit needs labels only where the models disagree: ``ceil(p * labels)``.
"""
from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import numpy as np
import param

from .._files import read_text
from .._validation import InputError, check_int, check_positive, format_value, raw
from ..bounds import ci as _ci
from ..bounds.ci import ADAPTIVITIES, MODES
from ..bounds.meter import labeling_hours
from .ci_grammar import VARIABLES, Clause, Condition, ConditionError, format_number, parse_condition

__all__ = [
    "ADAPTIVITIES",
    "MODES",
    "DEFAULT_CONDITION",
    "PRESETS",
    "ci_labels",
    "ci_curves",
    "CIResult",
    "ClausePlan",
    "evaluate",
    "Evaluation",
    "ClauseEvaluation",
    "read_ci_trace",
    "example_trace",
    "CITrace",
    "replay_ci",
    "CIReplay",
    "CIModel",
    "delta_from_reliability",
    "parse_condition",
    "ConditionError",
]

#: The paper's running example (Section 2.2 script plus the Pattern 1 clause of Appendix A.1).
DEFAULT_CONDITION = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"

ADAPTIVITY_TITLES = {
    "none": "none (results hidden, union bound over H steps)",
    "full": "full (pass/fail released, union bound over 2^H histories)",
    "firstChange": "firstChange (new test set at the first pass)",
}

ASSUMPTIONS = (
    "Hoeffding's inequality for each estimate (n, o, d in [0, 1]), with a union bound over the clauses, "
    "the terms of each sum and the histories the adaptivity allows (Section 3).",
    "Test examples are drawn i.i.d. from the distribution the models will face; labels are correct.",
    "The developer is deterministic or pseudo-random: her next model depends only on the signals released.",
)

TEXT_ROUNDING_NOTE = (
    "Counts are the smallest integers satisfying each inequality (the ceiling of the real-valued bound), "
    "as in Figure 2. The paper's text sometimes quotes the real bound truncated: 156,955 (Section 3.3) is "
    "156,955.25, whose integer count is Figure 2's 156,956; 2,188 (Section 4.1.2) is 2,188.85."
)

RESULT_TRUE, RESULT_FALSE, RESULT_UNKNOWN = "True", "False", "Unknown"


def delta_from_reliability(reliability) -> float:
    """``1 - reliability`` computed in decimal (``1 - 0.9999`` is exactly ``1e-4``, not 9.99999999999e-05)."""
    try:
        value = Decimal(str(reliability))
    except (InvalidOperation, ValueError, TypeError):
        raise InputError("reliability", "a number in (0, 1), such as 0.9999", reliability) from None
    if not value.is_finite() or not (0 < value < 1):
        raise InputError("reliability", "a number in (0, 1), such as 0.9999", reliability)
    return float(1 - value)


def _check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise InputError(name, "one of " + ", ".join(choices), value)
    return value


def _as_condition(condition) -> Condition:
    return condition if isinstance(condition, Condition) else parse_condition(condition)


def _check_difference_bound(value):
    if value is None:
        return None
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise InputError("difference_bound", "a number in (0, 1]", value) from None
    if not (0 < p <= 1) or math.isnan(p):
        raise InputError("difference_bound", "a number in (0, 1]", value)
    return p


# ============================================================================ plan
@dataclass(frozen=True)
class ClausePlan:
    """How one clause is tested, in the baseline and in the optimized plan.

    Attributes
    ----------
    clause : str
        The clause in normal form.
    baseline : int
        Labels it needs in the baseline (Section 3): the Hoeffding recursion.
    optimized : int or None
        Labels it needs in the optimized plan (0 for clauses over d alone).
    unlabeled : int
        Unlabeled examples it needs in the optimized plan (clauses over d alone).
    method : str
        ``hoeffding``, ``bennett`` (Pattern 1/2) or ``unlabeled``.
    tolerances : dict
        variable -> the share of the tolerance each estimate gets (eps |a_v| / W, in the
        variable's own units: eps / W).
    """

    clause: str
    baseline: int
    optimized: int | None
    unlabeled: int
    method: str
    tolerances: dict

    def to_dict(self) -> dict:
        return {
            "clause": self.clause,
            "baseline": self.baseline,
            "optimized": self.optimized,
            "unlabeled": self.unlabeled,
            "method": self.method,
            "tolerances": {k: float(v) for k, v in self.tolerances.items()},
        }


@dataclass(frozen=True)
class _Setup:
    """Which clauses go where in the optimized plan (independent of delta and steps)."""

    applies: bool
    p: float | None
    p_source: str
    check_tolerance: Fraction | None
    unlabeled: tuple  # indices of clauses over d alone
    labeled: tuple  # indices of clauses that need labels
    difference: tuple  # subset of labeled: a (n - o)
    shares: int  # how many parts delta is split into
    notes: tuple


def _d_upper_bound(clause: Clause, mode: str) -> Fraction | None:
    """The bound on d a passing clause over d alone guarantees (Pattern 1), or None."""
    if not clause.is_difference_only:
        return None
    c = clause.coefficient("d")
    upper = (c > 0 and clause.comparison == "<") or (c < 0 and clause.comparison == ">")
    if not upper:
        return None
    slack = 0
    if mode == "fn-free":
        slack = 2 * clause.tolerance if clause.comparison == "<" else -2 * clause.tolerance
    bound = (clause.threshold + slack) / c
    return bound if bound > 0 else None


def _setup(condition: Condition, mode: str, difference_bound, check: bool) -> _Setup:
    clauses = condition.clauses
    unlabeled = tuple(i for i, c in enumerate(clauses) if c.is_difference_only)
    labeled = tuple(i for i, c in enumerate(clauses) if not c.is_difference_only)
    difference = tuple(i for i in labeled if clauses[i].is_difference)
    notes = []
    bounds = [(b, i) for i in unlabeled if (b := _d_upper_bound(clauses[i], mode)) is not None]
    p = None
    p_source = ""
    check_tol = None
    if bounds:
        b, i = min(bounds)
        p = float(b)
        p_source = f"clause '{clauses[i].canonical()}' ({mode}: a passing commit has d < {format_number(b)})"
    if difference_bound is not None and (p is None or difference_bound < p):
        p = float(difference_bound)
        if difference and check:
            d_min = min(clauses[i].tolerance / abs(clauses[i].difference_scale) for i in difference)
            check_tol = 2 * d_min
            p_source = (f"difference bound p = {difference_bound:g}, checked on unlabeled examples "
                        f"(d estimated to +/- {format_number(check_tol)}, Section 4.2)")
        else:
            p_source = f"difference bound p = {difference_bound:g}, assumed known in advance (as in Figure 5)"
    if difference_bound is not None and not difference:
        notes.append("The difference bound helps only clauses of the form n - o > C +/- D (Pattern 2); "
                     "this condition has none.")
        if not bounds:
            p = None
            p_source = ""
    if p is not None:
        p = min(p, 1.0)
    applies = bool(unlabeled) or difference_bound is not None
    shares = len(clauses) + (1 if check_tol is not None else 0)
    return _Setup(applies, p, p_source, check_tol, unlabeled, labeled, difference, shares, tuple(notes))


def _arrays(condition: Condition, delta, steps, adaptivity: str, setup: _Setup):
    """Baseline / optimized / unlabeled / per-commit counts, vectorized over delta and steps."""
    clauses = condition.clauses
    k = len(clauses)
    log_s = _ci.log_histories(adaptivity, steps)
    baseline = []
    for c in clauses:
        log_count = log_s + math.log(k) + math.log(len(c.coefficients))
        baseline.append(_ci.hoeffding_labels(float(c.weight), float(c.tolerance), delta, log_count))
    out = {"baseline_clauses": baseline, "baseline": np.max(np.asarray(baseline), axis=0)}
    if not setup.applies:
        return out
    shares = setup.shares
    opt, methods, unl = [], [], []
    shape = np.shape(out["baseline"])
    all_bennett = np.full(shape, bool(setup.labeled) and setup.p is not None)
    for i, c in enumerate(clauses):
        log_count = log_s + math.log(shares) + math.log(len(c.coefficients))
        hoeff = np.asarray(_ci.hoeffding_labels(float(c.weight), float(c.tolerance), delta, log_count))
        if i in setup.unlabeled:
            opt.append(np.zeros_like(hoeff))
            unl.append(hoeff)
            methods.append(np.full(shape, "unlabeled"))
            continue
        unl.append(np.zeros_like(hoeff))
        if i in setup.difference and setup.p is not None:
            eps = float(c.tolerance / abs(c.difference_scale))
            benn = np.asarray(_ci.bennett_labels(eps, setup.p, delta, log_s + math.log(shares)))
            use_bennett = benn <= hoeff
            opt.append(np.where(use_bennett, benn, hoeff))
            methods.append(np.where(use_bennett, "bennett", "hoeffding"))
            all_bennett = all_bennett & use_bennett
        else:
            opt.append(hoeff)
            methods.append(np.full(shape, "hoeffding"))
            all_bennett = np.zeros(shape, dtype=bool)
    check = None
    if setup.check_tolerance is not None:
        check = _ci.hoeffding_labels(1.0, float(setup.check_tolerance), delta, log_s + math.log(shares))
    optimized = np.max(np.asarray(opt), axis=0)
    unlabeled = np.max(np.asarray(unl + ([check] if check is not None else [])), axis=0)
    if not setup.labeled:
        per_commit = np.zeros(shape)
    elif setup.p is None:
        per_commit = np.full(shape, np.nan)
    else:
        per_commit = np.where(all_bennett, _ci.active_labels(setup.p, optimized), np.nan)
    # The plan is chosen from the settings alone, before any data: where the optimizations
    # do not reduce the labels (a loose bound whose check costs a share of delta), the
    # baseline plan is the better choice and is used.
    use = optimized < out["baseline"]
    baseline_clauses = [np.asarray(x) for x in baseline]
    out.update(
        used=use,
        optimized_clauses=[np.where(use, o, bc) for o, bc in zip(opt, baseline_clauses)],
        unlabeled_clauses=[np.where(use, u, 0) for u in unl],
        methods=[np.where(use, mth, "hoeffding") for mth in methods],
        check=check,
        optimized=np.where(use, optimized, out["baseline"]),
        unlabeled=np.where(use, unlabeled, 0),
        per_commit=np.where(use, per_commit, np.nan),
    )
    return out


@dataclass(frozen=True)
class CIResult:
    """Label counts for one ease.ml/ci condition, baseline and optimized, with labeling effort.

    Attributes
    ----------
    labels : int
        The baseline count (Section 3): labeled test examples the condition needs.
    optimized : int or None
        Labeled examples with the Section 4 optimizations, when one applies (the condition
        has a clause over d alone, or a difference bound is given); else None.
    unlabeled : int or None
        Unlabeled examples the optimized plan needs (for the clauses over d and the
        Pattern 2 check).
    labels_per_commit : int or None
        Active labeling (Section 4.1.2): labels each commit needs when only the examples
        where the models disagree are labeled; None when a clause needs all labels.
    by_adaptivity : dict
        adaptivity -> {'labels': int, 'optimized': int or None, 'labels_per_commit': ...}.
    clauses : tuple of ClausePlan
    """

    condition: str
    reliability: float
    delta: float
    adaptivity: str
    mode: str
    steps: int
    labels: int
    optimized: int | None
    unlabeled: int | None
    labels_per_commit: int | None
    difference_bound: float | None
    variance_bound: float | None
    variance_source: str
    by_adaptivity: dict
    clauses: tuple
    seconds_per_label: float = 2.0
    labelers: int = 1
    labeler_hours: float = 0.0
    calendar_hours: float = 0.0
    optimized_labeler_hours: float | None = None
    optimized_calendar_hours: float | None = None
    per_commit_hours: float | None = None
    notes: tuple = field(default_factory=tuple)

    @property
    def saving(self) -> float | None:
        """How many times fewer labels the optimized plan needs (None without optimization)."""
        if self.optimized is None:
            return None
        return math.inf if self.optimized == 0 else self.labels / self.optimized

    def sentence(self) -> str:
        """One plain sentence a manager can repeat."""
        text = (f"With reliability {self.reliability:g} ({self.adaptivity} adaptivity, {self.mode}), a test set of "
                f"{self.labels:,} labels supports {self.steps} commit{'s' if self.steps != 1 else ''}")
        if self.optimized is not None and self.optimized < self.labels:
            text += f"; the optimizations cut that to {self.optimized:,}"
            if self.labels_per_commit is not None and 0 < self.labels_per_commit < self.optimized:
                text += f", or {self.labels_per_commit:,} labels per commit with active labeling"
        return text + "."

    def to_dict(self) -> dict:
        """JSON-ready form; the CLI's ``--format json``."""
        out = {
            "condition": self.condition,
            "reliability": self.reliability,
            "delta": self.delta,
            "adaptivity": self.adaptivity,
            "mode": self.mode,
            "steps": self.steps,
            "labels": self.labels,
        }
        if self.optimized is not None:
            out["optimized"] = self.optimized
            out["unlabeled"] = self.unlabeled
            out["labels_per_commit"] = self.labels_per_commit
            out["variance_bound"] = self.variance_bound
            out["variance_source"] = self.variance_source
        if self.difference_bound is not None:
            out["difference_bound"] = self.difference_bound
        out["by_adaptivity"] = {a: dict(v) for a, v in self.by_adaptivity.items()}
        out["clauses"] = [c.to_dict() for c in self.clauses]
        out["labeling"] = {
            "seconds_per_label": self.seconds_per_label,
            "labelers": self.labelers,
            "labeler_hours": self.labeler_hours,
            "calendar_hours": self.calendar_hours,
            "optimized_labeler_hours": self.optimized_labeler_hours,
            "optimized_calendar_hours": self.optimized_calendar_hours,
            "per_commit_hours": self.per_commit_hours,
        }
        out["sentence"] = self.sentence()
        out["notes"] = list(self.notes)
        return out

    def to_frame(self):
        """A pandas DataFrame: one row per adaptivity, baseline and optimized counts."""
        import pandas as pd

        rows = []
        for a in ADAPTIVITIES:
            v = self.by_adaptivity[a]
            rows.append({"adaptivity": a, "labels": v["labels"], "optimized": v.get("optimized"),
                         "labels_per_commit": v.get("labels_per_commit")})
        return pd.DataFrame(rows).set_index("adaptivity")

    def __repr__(self) -> str:
        lines = [f"CIResult(condition={self.condition!r}, reliability={self.reliability:g}, "
                 f"adaptivity={self.adaptivity!r}, mode={self.mode!r}, steps={self.steps})"]
        lines.append(f"  labels (baseline)     {self.labels:>12,}   {self.labeler_hours:,.1f} labeler-hours")
        if self.optimized is not None:
            lines.append(f"  optimized             {self.optimized:>12,}   {self.optimized_labeler_hours:,.1f} "
                         f"labeler-hours  ({_saving_text(self.saving)})")
            lines.append(f"  unlabeled examples    {self.unlabeled:>12,}")
            per = "n/a" if self.labels_per_commit is None else f"{self.labels_per_commit:,}"
            lines.append(f"  labels per commit     {per:>12}   (active labeling)")
        for c in self.clauses:
            opt = "" if c.optimized is None else f"  optimized {c.optimized:,} ({c.method})"
            lines.append(f"  clause {c.clause!r}: baseline {c.baseline:,}{opt}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:  # notebooks
        return self.to_frame()._repr_html_() + f"<p>{self.sentence()}</p>"


def _saving_text(saving) -> str:
    if saving is None:
        return "—"
    if saving == math.inf:
        return "no labels needed"
    return f"{saving:.1f}x fewer"


def _validate_inputs(condition, reliability, adaptivity, steps, mode, difference_bound):
    cond = _as_condition(condition)
    delta = delta_from_reliability(reliability)
    adaptivity = _check_choice("adaptivity", adaptivity, ADAPTIVITIES)
    mode = _check_choice("mode", mode, MODES)
    steps = check_int("steps", steps, minimum=1, maximum=10**9)
    p = _check_difference_bound(difference_bound)
    return cond, delta, adaptivity, steps, mode, p


def ci_labels(condition=DEFAULT_CONDITION, reliability: float = 0.9999, adaptivity: str = "full", steps: int = 32,
              mode: str = "fp-free", *, difference_bound: float | None = None, check_difference_bound: bool = True,
              seconds_per_label: float = 2.0, labelers: int = 1) -> CIResult:
    """How many test labels an ease.ml/ci condition needs, baseline and optimized.

    Parameters
    ----------
    condition : str or Condition
        Such as ``"n - o > 0.02 +/- 0.01 /\\\\ d < 0.1 +/- 0.01"`` (Appendix A.1).
    reliability : float
        1 - delta, in (0, 1).
    adaptivity : {'none', 'full', 'firstChange'}
        What the developer sees (Sections 3.2-3.4).
    steps : int
        H, the commits one test set must support.
    mode : {'fp-free', 'fn-free'}
        How Unknown maps to a signal (Appendix A.2); it decides the variance bound a
        clause ``d < A +/- B`` guarantees (``A`` or ``A + 2B``).
    difference_bound : float, optional
        p, an upper bound on d known for every commit (Pattern 2, Section 4.2).
    check_difference_bound : bool
        Check p on unlabeled examples (Section 4.2; costs a share of delta), or take it as
        known in advance (Figure 5's setting).
    seconds_per_label, labelers
        Labeling effort (2 s per label is the paper's working figure, Section 2.3).

    Examples
    --------
    The public ease.ml/ci calculator's example and Figure 2 (F2, full, 0.99, eps = 0.1):

    >>> ci_labels("n - o > 0.1 +/- 0.1", 0.99, "full", 32).labels
    5496
    """
    cond, delta, adaptivity, steps, mode, p = _validate_inputs(condition, reliability, adaptivity, steps, mode,
                                                                difference_bound)
    seconds_per_label = check_positive("seconds_per_label", seconds_per_label)
    labelers = check_int("labelers", labelers, minimum=1)
    setup = _setup(cond, mode, p, bool(check_difference_bound))
    by = {}
    arrays = {}
    for a in ADAPTIVITIES:
        arr = _arrays(cond, delta, steps, a, setup)
        arrays[a] = arr
        entry = {"labels": int(arr["baseline"])}
        if setup.applies:
            entry["optimized"] = int(arr["optimized"])
            entry["unlabeled"] = int(arr["unlabeled"])
            entry["labels_per_commit"] = None if np.isnan(arr["per_commit"]) else int(arr["per_commit"])
        by[a] = entry
    chosen = arrays[adaptivity]
    clause_plans = []
    for i, c in enumerate(cond.clauses):
        w = c.weight
        tolerances = {v: c.tolerance / w for v in c.variables}
        if setup.applies:
            method = str(chosen["methods"][i])
            optimized = int(chosen["optimized_clauses"][i])
            unl = int(chosen["unlabeled_clauses"][i])
            if method == "bennett":
                tolerances = {"n - o": c.tolerance / abs(c.difference_scale)}
        else:
            method, optimized, unl = "hoeffding", None, 0
        clause_plans.append(ClausePlan(c.canonical(), int(chosen["baseline_clauses"][i]), optimized, unl, method,
                                       tolerances))
    labels = by[adaptivity]["labels"]
    optimized = by[adaptivity].get("optimized")
    per_commit = by[adaptivity].get("labels_per_commit")
    counts = [labels] + [x for x in (optimized, per_commit) if x is not None]
    work, calendar = labeling_hours(np.asarray(counts, dtype=float), seconds_per_label, labelers)
    opt_work = opt_cal = per_work = None
    j = 1
    if optimized is not None:
        opt_work, opt_cal = float(work[j]), float(calendar[j])
        j += 1
    if per_commit is not None:
        per_work = float(work[j])
    notes = list(setup.notes)
    if setup.applies and not bool(chosen["used"]):
        notes.append("The optimizations do not reduce the labels for these settings (the variance bound is too "
                     "loose for its cost), so the optimized plan is the baseline plan.")
    elif setup.applies and setup.p is not None:
        notes.append(f"Variance bound p = {setup.p:g} from the {setup.p_source}.")
    if setup.applies and bool(chosen["used"]) and per_commit is None and setup.labeled:
        notes.append("Active labeling needs every labeled clause to be of the form n - o > C +/- D with a "
                     "variance bound; this condition has a clause that needs all labels.")
    if adaptivity == "firstChange":
        notes.append("firstChange: a new test set is requested at the first pass (or after H commits); the "
                     "count equals the non-adaptive one (Section 3.4).")
    return CIResult(
        condition=cond.canonical(), reliability=float(reliability), delta=delta, adaptivity=adaptivity, mode=mode,
        steps=steps, labels=labels, optimized=optimized, unlabeled=by[adaptivity].get("unlabeled"),
        labels_per_commit=per_commit, difference_bound=p, variance_bound=setup.p if setup.applies else None,
        variance_source=setup.p_source if setup.applies else "", by_adaptivity=by, clauses=tuple(clause_plans),
        seconds_per_label=seconds_per_label, labelers=labelers, labeler_hours=float(work[0]),
        calendar_hours=float(calendar[0]), optimized_labeler_hours=opt_work, optimized_calendar_hours=opt_cal,
        per_commit_hours=per_work, notes=tuple(notes),
    )


def ci_curves(condition, reliability, steps, mode: str = "fp-free", *, difference_bound=None,
              check_difference_bound: bool = True, adaptivities=ADAPTIVITIES) -> dict:
    """Label counts against H for every adaptivity: ``{adaptivity: {'baseline': array, 'optimized': array|None}}``.

    ``steps`` is an array of H values; each adaptivity is one vectorized solve.
    """
    cond = _as_condition(condition)
    delta = delta_from_reliability(reliability)
    mode = _check_choice("mode", mode, MODES)
    p = _check_difference_bound(difference_bound)
    steps = np.asarray(steps)
    setup = _setup(cond, mode, p, bool(check_difference_bound))
    out = {}
    for a in adaptivities:
        arr = _arrays(cond, delta, steps, _check_choice("adaptivity", a, ADAPTIVITIES), setup)
        out[a] = {
            "baseline": np.asarray(arr["baseline"]),
            "optimized": np.asarray(arr["optimized"]) if setup.applies else None,
            "labels_per_commit": np.asarray(arr["per_commit"], dtype=float) if setup.applies else None,
        }
    return out


# ============================================================================ evaluation
def _exact(name: str, value, location: str | None = None) -> Fraction:
    """An estimate as an exact rational (floats via their shortest repr: 0.11 is 11/100)."""
    if isinstance(value, Fraction):
        result = value
    elif isinstance(value, (bool, np.bool_)):
        raise InputError(name, "a number in [0, 1]", value, location=location)
    elif isinstance(value, (int, np.integer)):
        result = Fraction(int(value))
    else:
        text = str(value).strip()
        try:
            result = Fraction(Decimal(text))
        except (InvalidOperation, ValueError):
            raise InputError(name, "a number in [0, 1]", value, location=location) from None
    if not (0 <= result <= 1):
        raise InputError(name, "a number in [0, 1]", raw(format_value(value) if not isinstance(value, Fraction)
                                                         else format_number(value)), location=location)
    return result


@dataclass(frozen=True)
class ClauseEvaluation:
    """One clause evaluated on interval estimates (Section 3.5)."""

    clause: str
    estimate: Fraction
    low: Fraction
    high: Fraction
    truth: str

    def to_dict(self) -> dict:
        return {"clause": self.clause, "estimate": float(self.estimate), "low": float(self.low),
                "high": float(self.high), "truth": self.truth}


@dataclass(frozen=True)
class Evaluation:
    """A condition evaluated on estimates: per-clause truth, the conjunction, and the signal."""

    clauses: tuple
    truth: str
    mode: str

    @property
    def passed(self) -> bool:
        return self.truth == RESULT_TRUE or (self.truth == RESULT_UNKNOWN and self.mode == "fn-free")

    @property
    def signal(self) -> str:
        return "pass" if self.passed else "fail"

    def to_dict(self) -> dict:
        return {"truth": self.truth, "mode": self.mode, "signal": self.signal,
                "clauses": [c.to_dict() for c in self.clauses]}

    def __repr__(self) -> str:
        parts = ", ".join(f"{c.clause!r}: {c.truth} [{float(c.low):.4g}, {float(c.high):.4g}]" for c in self.clauses)
        return f"Evaluation({self.signal}: {self.truth} in {self.mode} mode; {parts})"


def _clause_truth(clause: Clause, values: dict) -> ClauseEvaluation:
    w = clause.weight
    low = high = est = Fraction(0)
    for var, coef in clause.coefficients:
        v = values[var]
        t = clause.tolerance / w  # this estimate's share of the tolerance (range 1)
        lo, hi = max(Fraction(0), v - t), min(Fraction(1), v + t)  # n, o, d lie in [0, 1]
        est += coef * v
        if coef >= 0:
            low += coef * lo
            high += coef * hi
        else:
            low += coef * hi
            high += coef * lo
    c = clause.threshold
    if clause.comparison == ">":
        truth = RESULT_TRUE if low > c else (RESULT_FALSE if high <= c else RESULT_UNKNOWN)
    else:
        truth = RESULT_TRUE if high < c else (RESULT_FALSE if low >= c else RESULT_UNKNOWN)
    return ClauseEvaluation(clause.canonical(), est, low, high, truth)


def _conjunction(truths) -> str:
    truths = list(truths)
    if RESULT_FALSE in truths:
        return RESULT_FALSE
    if all(t == RESULT_TRUE for t in truths):
        return RESULT_TRUE
    return RESULT_UNKNOWN


def evaluate(condition, n=None, o=None, d=None, mode: str = "fp-free", *, location: str | None = None) -> Evaluation:
    """Evaluate a condition on estimates n-hat, o-hat, d-hat (Section 3.5, Appendix A.2).

    Each estimate ``v`` becomes the interval ``[v - eps_v, v + eps_v]`` (clipped to [0, 1],
    where the true value lies), ``eps_v = eps / W`` being its share of the clause's
    tolerance; interval arithmetic gives the left side's interval ``[low, high]``.  A
    clause ``... > c`` is True when ``low > c``, False when ``high <= c``, Unknown otherwise
    (``<`` symmetrically).  The conjunction is False if any clause is False, True if all
    are True, else Unknown; ``fp-free`` maps Unknown to fail, ``fn-free`` to pass.
    Arithmetic is exact (rationals), so boundaries are decided correctly.

    Examples
    --------
    Appendix A.2 (``x < 0.1 +/- 0.01``):

    >>> evaluate("d < 0.1 +/- 0.01", d=0.12).truth, evaluate("d < 0.1 +/- 0.01", d=0.08).truth
    ('False', 'True')
    >>> e = evaluate("d < 0.1 +/- 0.01", d=0.105, mode="fn-free"); (e.truth, e.signal)
    ('Unknown', 'pass')
    """
    cond = _as_condition(condition)
    mode = _check_choice("mode", mode, MODES)
    given = {"n": n, "o": o, "d": d}
    values = {}
    for var in cond.variables:
        if given[var] is None:
            raise InputError(var, "a number in [0, 1] (the condition uses it)", None, location=location)
        values[var] = _exact(var, given[var], location)
    results = tuple(_clause_truth(c, values) for c in cond.clauses)
    return Evaluation(results, _conjunction(r.truth for r in results), mode)


# ============================================================================ traces
@dataclass(frozen=True)
class CITrace:
    """A commit history to replay.

    ``kind == 'estimates'``: per commit the measured ``n, o, d`` (missing ones None).
    ``kind == 'predictions'``: per test example the true ``label`` and each model's
    prediction; the first model column is the model deployed before the first commit.
    """

    kind: str
    commits: tuple
    n: tuple = ()
    o: tuple = ()
    d: tuple = ()
    labels: tuple = ()
    predictions: dict = field(default_factory=dict)
    baseline: str | None = None
    source: str = ""

    @property
    def examples(self) -> int | None:
        return len(self.labels) if self.kind == "predictions" else None

    def __len__(self) -> int:
        return len(self.commits)

    def __repr__(self) -> str:
        extra = f", {self.examples:,} examples, baseline {self.baseline!r}" if self.kind == "predictions" else ""
        return f"CITrace({self.kind}: {len(self.commits)} commits{extra}, source={self.source!r})"


_IGNORED_COLUMNS = {"id", "example", "index"}


def _read_frame(source):
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        return source.astype(str), "DataFrame"
    name = ""
    if isinstance(source, (bytes, bytearray, memoryview)):
        text, _ = read_text(bytes(source), parameter="trace")
    elif isinstance(source, (str, os.PathLike)) and ("\n" not in str(source)):
        name = os.fspath(source)
        text, _ = read_text(source, parameter="trace")
    elif isinstance(source, str):
        text = source
    else:
        text, _ = read_text(source, parameter="trace")
    buffer = io.StringIO(text)
    try:
        frame = pd.read_csv(buffer, dtype=str, keep_default_na=False, skipinitialspace=True)
    except Exception as exc:  # noqa: BLE001 - pandas raises several parser errors
        raise InputError("trace", "a CSV file with a header row", raw(str(exc).splitlines()[0][:120])) from None
    return frame, name


def read_ci_trace(source) -> CITrace:
    """Read a commit trace from a CSV path, CSV text/bytes, a file object or a DataFrame.

    Two layouts (column names are case-insensitive):

    - estimates: a ``commit`` column (optional) and columns ``n``, ``o``, ``d`` (any that
      the condition needs) with values in [0, 1], one row per commit;
    - predictions: a ``label`` column and one column per model, one row per test example;
      the first model column is the model deployed before the first commit, each later
      column is a commit.  (Columns ``id``/``example``/``index`` are ignored.)

    Errors name the line (the header is line 1) and the column.
    """
    frame, name = _read_frame(source)
    columns = [str(c).strip() for c in frame.columns]
    lower = [c.lower() for c in columns]
    frame.columns = columns
    if len(frame) == 0:
        raise InputError("trace", "a CSV file with at least one data row", raw(f"only a header ({', '.join(columns)})"))
    if "label" in lower:
        label_col = columns[lower.index("label")]
        models = [c for c, low in zip(columns, lower) if low != "label" and low not in _IGNORED_COLUMNS]
        if len(models) < 2:
            raise InputError("trace", "a 'label' column and at least two model columns (the deployed model, then "
                             "the commits)", raw(", ".join(columns)))
        for col in [label_col] + models:
            empty = frame[col].astype(str).str.strip() == ""
            if empty.any():
                row = int(np.flatnonzero(empty.to_numpy())[0])
                raise InputError(col, "a prediction in every row (empty cell)", "",
                                 location=f"line {row + 2}, column '{col}'")
        labels = tuple(frame[label_col].astype(str).str.strip())
        predictions = {c: tuple(frame[c].astype(str).str.strip()) for c in models}
        return CITrace("predictions", tuple(models[1:]), labels=labels, predictions=predictions, baseline=models[0],
                       source=name)
    present = [v for v in VARIABLES if v in lower]
    if not present:
        raise InputError("trace", "a CSV with columns n, o, d (one row per commit) or a 'label' column and "
                         "one column per model (one row per example)", raw("columns " + ", ".join(columns)))
    values = {}
    for var in VARIABLES:
        if var not in lower:
            values[var] = (None,) * len(frame)
            continue
        col = columns[lower.index(var)]
        parsed = []
        for row, cell in enumerate(frame[col].astype(str)):
            cell = cell.strip()
            parsed.append(None if cell == "" else _exact(var, cell, f"line {row + 2}, column '{col}'"))
        values[var] = tuple(parsed)
    if "commit" in lower:
        commits = tuple(str(c).strip() or f"commit {i + 1}" for i, c in enumerate(frame[columns[lower.index("commit")]]))
    else:
        commits = tuple(f"commit {i + 1}" for i in range(len(frame)))
    return CITrace("estimates", commits, n=values["n"], o=values["o"], d=values["d"], source=name)


def example_trace(name: str = "ci_commits.csv") -> CITrace:
    """A shipped synthetic trace: ``ci_commits.csv`` (n, o, d per commit) or ``ci_predictions.csv``."""
    from importlib import resources

    if name not in ("ci_commits.csv", "ci_predictions.csv"):
        raise InputError("example", "'ci_commits.csv' or 'ci_predictions.csv'", name)
    text = resources.files("meter_dashboard.data").joinpath(name).read_text(encoding="utf-8")
    trace = read_ci_trace(text)
    return CITrace(trace.kind, trace.commits, trace.n, trace.o, trace.d, trace.labels, trace.predictions,
                   trace.baseline, source=name)


@dataclass(frozen=True)
class CIReplay:
    """A trace replayed against a condition: one row per commit.

    ``rows`` hold: ``commit``, ``n``, ``o``, ``d`` (floats), ``clauses`` (truth per clause),
    ``truth``, ``signal`` (pass/fail), ``active`` (the model in the repository afterwards),
    ``disagreements`` (examples where the commit and the active model differ: the labels
    active labeling needs; predictions traces only), ``bound_ok`` (d within the variance
    bound, when there is one), and per adaptivity ``testset_<a>`` (which test set the
    commit used, from 1) and ``alarm_<a>`` (a new test set is needed after this commit).
    """

    condition: str
    mode: str
    steps: int
    alarm_on: str
    rows: tuple
    examples: int | None
    required: dict
    warnings: tuple

    @property
    def passes(self) -> int:
        return sum(r["signal"] == "pass" for r in self.rows)

    def alarms(self, adaptivity: str) -> list:
        """1-based commit numbers after which ``adaptivity`` raises the new-testset alarm."""
        return [i + 1 for i, r in enumerate(self.rows) if r[f"alarm_{adaptivity}"]]

    def to_frame(self):
        import pandas as pd

        records = []
        for r in self.rows:
            rec = {k: v for k, v in r.items() if k != "clauses"}
            for j, t in enumerate(r["clauses"]):
                rec[f"clause_{j + 1}"] = t
            records.append(rec)
        return pd.DataFrame(records)

    def to_dict(self) -> dict:
        return {
            "condition": self.condition, "mode": self.mode, "steps": self.steps, "alarm_on": self.alarm_on,
            "examples": self.examples, "required": self.required, "warnings": list(self.warnings),
            "passes": self.passes, "commits": [dict(r) for r in self.rows],
            "alarms": {a: self.alarms(a) for a in ADAPTIVITIES},
        }

    def __repr__(self) -> str:
        alarms = "; ".join(f"{a}: {self.alarms(a) or 'none'}" for a in ADAPTIVITIES)
        return (f"CIReplay({len(self.rows)} commits, {self.passes} passed, mode={self.mode!r}, steps={self.steps}; "
                f"alarms after commits - {alarms})")


def replay_ci(condition, trace, *, mode: str = "fp-free", steps: int = 32, reliability: float = 0.9999,
              adaptivity: str = "full", difference_bound=None, check_difference_bound: bool = True,
              alarm_on: str = "pass", plan: CIResult | None = None) -> CIReplay:
    """Replay a commit trace: pass/fail per commit and the new-testset alarm of each adaptivity.

    The old model ``o`` of each commit is the *active* model: the last commit that passed
    (the deployed model before that).  For an estimates trace the ``o`` column is taken as
    given.  Alarms (Sections 3.2-3.4): ``none`` and ``full`` after every ``steps`` commits
    on one test set (the budget); ``firstChange`` at the first commit whose signal is
    ``alarm_on`` (``pass``, Section 3.4; ``fail`` for the symmetric setting) or at the
    budget, whichever comes first.  Each alarm starts a new test set for that adaptivity.

    ``reliability``, ``adaptivity`` and the difference bound only serve the check that a
    predictions trace has enough examples, and the variance-bound check per commit;
    ``plan`` may pass the :class:`CIResult` of exactly these settings to skip recomputing it.
    """
    cond = _as_condition(condition)
    if not isinstance(trace, CITrace):
        trace = read_ci_trace(trace)
    mode = _check_choice("mode", mode, MODES)
    steps = check_int("steps", steps, minimum=1)
    alarm_on = _check_choice("alarm_on", alarm_on, ("pass", "fail"))
    same = plan is not None and (plan.condition, plan.mode, plan.steps, plan.adaptivity, plan.delta,
                                 plan.difference_bound) == (cond.canonical(), mode, steps, adaptivity,
                                                            delta_from_reliability(reliability),
                                                            _check_difference_bound(difference_bound))
    if not same:
        plan = ci_labels(cond, reliability, adaptivity, steps, mode, difference_bound=difference_bound,
                         check_difference_bound=check_difference_bound)
    p = plan.variance_bound
    warnings = []
    required = {"labels": plan.labels, "optimized": plan.optimized, "adaptivity": adaptivity}
    rows = []
    counters = {a: 0 for a in ADAPTIVITIES}
    testsets = {a: 1 for a in ADAPTIVITIES}
    if trace.kind == "predictions":
        labels = np.asarray(trace.labels, dtype=object)
        preds = {k: np.asarray(v, dtype=object) for k, v in trace.predictions.items()}
        total = len(labels)
        correct = {k: int(np.sum(v == labels)) for k, v in preds.items()}
        active = trace.baseline
        if plan.optimized is not None and total < plan.optimized:
            warnings.append(f"The trace has {total:,} test examples; the condition needs {plan.optimized:,} labels "
                            f"(optimized, {adaptivity} adaptivity, {steps} steps): the reliability guarantee does not "
                            f"hold for these signals.")
        elif plan.optimized is None and total < plan.labels:
            warnings.append(f"The trace has {total:,} test examples; the condition needs {plan.labels:,} labels "
                            f"({adaptivity} adaptivity, {steps} steps): the reliability guarantee does not hold.")
    else:
        active = "deployed"
    for i, name in enumerate(trace.commits):
        loc = f"commit {i + 1} ({name})"
        disagreements = None
        if trace.kind == "predictions":
            new = preds[name]
            old = preds[active]
            disagreements = int(np.sum(new != old))
            n_hat = Fraction(correct[name], total)
            o_hat = Fraction(correct[active], total)
            d_hat = Fraction(disagreements, total)
        else:
            n_hat, o_hat, d_hat = trace.n[i], trace.o[i], trace.d[i]
        ev = evaluate(cond, n_hat, o_hat, d_hat, mode, location=loc)
        row = {
            "commit": name,
            "n": None if n_hat is None else float(n_hat),
            "o": None if o_hat is None else float(o_hat),
            "d": None if d_hat is None else float(d_hat),
            "clauses": [c.truth for c in ev.clauses],
            "truth": ev.truth,
            "signal": ev.signal,
        }
        if ev.passed:
            active = name
        row["active"] = active
        row["disagreements"] = disagreements
        row["bound_ok"] = None if (p is None or d_hat is None) else bool(d_hat <= Fraction(str(p)))
        for a in ADAPTIVITIES:
            counters[a] += 1
            row[f"testset_{a}"] = testsets[a]
            alarm = counters[a] >= steps or (a == "firstChange" and ev.signal == alarm_on)
            row[f"alarm_{a}"] = alarm
            if alarm:
                counters[a] = 0
                testsets[a] += 1
        rows.append(row)
    if p is not None and any(r["bound_ok"] is False for r in rows):
        bad = [i + 1 for i, r in enumerate(rows) if r["bound_ok"] is False]
        which = (f"Commit {bad[0]} changes" if len(bad) == 1
                 else f"Commits {', '.join(map(str, bad[:10]))}{' ...' if len(bad) > 10 else ''} change")
        warnings.append(f"{which} more than p = {p:g} of the predictions: the optimized (Bennett) test set is "
                        "not valid for them.")
    return CIReplay(cond.canonical(), mode, steps, alarm_on, tuple(rows), trace.examples, required, tuple(warnings))


# ============================================================================ presets
#: The paper's settings, by where they appear (name -> CIModel parameter values).
PRESETS = {
    "Pattern 1, Section 4.1.1 (about 67K labels, 6,771 per commit)": dict(
        condition=DEFAULT_CONDITION, reliability=0.9999, adaptivity="full", mode="fp-free", steps=32,
        difference_bound=None),
    "Section 2.2 script: n - o > 0.02 +/- 0.01, full": dict(
        condition="n - o > 0.02 +/- 0.01", reliability=0.9999, adaptivity="full", mode="fp-free", steps=32,
        difference_bound=None),
    "Section 3.3: n > 0.8 +/- 0.05, full (6,279)": dict(
        condition="n > 0.8 +/- 0.05", reliability=0.9999, adaptivity="full", mode="fn-free", steps=32,
        difference_bound=None),
    "Public calculator: n - o > 0.1 +/- 0.1, 0.99, full (5,496)": dict(
        condition="n - o > 0.1 +/- 0.1", reliability=0.99, adaptivity="full", mode="fp-free", steps=32,
        difference_bound=None),
    "F3 milestones: n - o > 0.1 +/- 0.01, firstChange": dict(
        condition="n - o > 0.1 +/- 0.01", reliability=0.9999, adaptivity="firstChange", mode="fp-free", steps=32,
        difference_bound=None),
    "F4 no big changes: d < 0.1 +/- 0.01, fn-free": dict(
        condition="d < 0.1 +/- 0.01", reliability=0.9999, adaptivity="full", mode="fn-free", steps=32,
        difference_bound=None),
    "Figure 5 adaptive: n - o > 0.018 +/- 0.022, p = 0.1 known (5,204)": dict(
        condition="n - o > 0.018 +/- 0.022", reliability=0.998, adaptivity="full", mode="fp-free", steps=7,
        difference_bound=0.1, check_difference_bound=False),
    "Figure 5 non-adaptive: n - o > 0.02 +/- 0.02, p = 0.1 known (4,713)": dict(
        condition="n - o > 0.02 +/- 0.02", reliability=0.998, adaptivity="none", mode="fp-free", steps=7,
        difference_bound=0.1, check_difference_bound=False),
}


# ============================================================================ the param model
class CIModel(param.Parameterized):
    """What a team chose for its ease.ml/ci test, and everything derived from it, live.

    Inputs are declared parameters.  :attr:`result` (a :class:`CIResult`), :attr:`curves`
    and :attr:`replay` are recomputed when an input changes.  A condition that does not
    parse (or another invalid combination) sets :attr:`error` (and :attr:`error_column`
    for the condition) and keeps the previous results.

    Examples
    --------
    >>> m = CIModel(condition="n - o > 0.1 +/- 0.1", reliability=0.99, adaptivity="full", steps=32)
    >>> m.result.labels
    5496
    >>> m.condition = "n - o >> 0.1"
    >>> m.error.split(":")[0], m.result.labels
    ('column 8', 5496)
    """

    condition = param.String(default=DEFAULT_CONDITION, doc=(
        "The test condition (Appendix A.1), e.g. 'n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01'."))
    reliability = param.Number(default=0.9999, bounds=(0, 1), inclusive_bounds=(False, False),
                               softbounds=(0.9, 0.99999), step=0.0001, doc="1 - delta: the probability of a valid test.")
    adaptivity = param.Selector(default="full", objects=list(ADAPTIVITIES), doc=(
        "none: results hidden from the developer; full: pass/fail released; firstChange: a new test set at the "
        "first pass."))
    mode = param.Selector(default="fp-free", objects=list(MODES), doc=(
        "fp-free: Unknown fails the commit (no false positives); fn-free: Unknown passes it."))
    steps = param.Integer(default=32, bounds=(1, 10**9), softbounds=(1, 128), doc="H: commits per test set.")
    difference_bound = param.Number(default=None, allow_None=True, bounds=(0, 1), inclusive_bounds=(False, True),
                                    doc="p: an upper bound on d for every commit (Pattern 2), or None.")
    check_difference_bound = param.Boolean(default=True, doc=(
        "Check p on unlabeled examples (Section 4.2) instead of taking it as known in advance."))
    seconds_per_label = param.Number(default=2.0, bounds=(0, None), inclusive_bounds=(False, True),
                                     softbounds=(0.5, 30), doc="Labeling time per example (the paper: 2 s).")
    labelers = param.Integer(default=1, bounds=(1, None), softbounds=(1, 20), doc="Labelers working in parallel.")
    alarm_on = param.Selector(default="pass", objects=["pass", "fail"], doc=(
        "firstChange: which signal retires the test set (pass, Section 3.4; fail in the symmetric setting)."))
    trace = param.Parameter(default=None, doc="The CITrace to replay (None: no replay).")

    # ---- derived
    parsed = param.Parameter(default=None, doc="The last valid parsed Condition.")
    result = param.Parameter(default=None, doc="The last valid CIResult.")
    curves = param.Dict(default={}, doc="{'steps': H array, adaptivity: {'baseline', 'optimized'} arrays}.")
    replay = param.Parameter(default=None, doc="The CIReplay of the trace under the current condition.")
    error = param.String(default="", doc="Why the current inputs are not valid ('' when they are).")
    error_column = param.Integer(default=None, allow_None=True, doc="The condition's column at fault, if any.")
    trace_error = param.String(default="", doc="Why the last trace could not be read or replayed.")

    def __init__(self, **params):
        super().__init__(**params)
        self._recompute()
        if self.error:
            raise self._last_error

    def load_trace(self, source, name: str = "") -> bool:
        """Read a trace (path, CSV text/bytes, DataFrame); on error set :attr:`trace_error`, keep the old one."""
        try:
            trace = read_ci_trace(source)
        except InputError as exc:
            self.trace_error = f"{name + ': ' if name else ''}{exc}"
            return False
        except (OSError, UnicodeDecodeError) as exc:
            self.trace_error = f"cannot read {name or 'the trace'}: {exc}"
            return False
        if name:
            trace = CITrace(trace.kind, trace.commits, trace.n, trace.o, trace.d, trace.labels, trace.predictions,
                            trace.baseline, source=name)
        self.trace_error = ""
        self.trace = trace
        return True

    def apply_preset(self, name: str) -> None:
        """Load one of :data:`PRESETS` (the paper's settings)."""
        if name not in PRESETS:
            raise InputError("preset", "one of " + ", ".join(PRESETS), name)
        values = {"check_difference_bound": True, **PRESETS[name]}
        self.param.update(**values)

    def curve_axis(self) -> np.ndarray:
        top = int(min(max(64, 2 * self.steps), 4096))
        if top <= 512:
            return np.arange(1, top + 1)
        return np.unique(np.round(np.geomspace(1, top, 400)).astype(int))

    @param.depends("condition", "reliability", "adaptivity", "mode", "steps", "difference_bound",
                   "check_difference_bound", "seconds_per_label", "labelers", watch=True)
    def _recompute(self):
        try:
            cond = parse_condition(self.condition)
            result = ci_labels(cond, self.reliability, self.adaptivity, self.steps, self.mode,
                               difference_bound=self.difference_bound,
                               check_difference_bound=self.check_difference_bound,
                               seconds_per_label=self.seconds_per_label, labelers=self.labelers)
            axis = self.curve_axis()
            curves = ci_curves(cond, self.reliability, axis, self.mode, difference_bound=self.difference_bound,
                               check_difference_bound=self.check_difference_bound)
        except InputError as exc:
            self._last_error = exc
            self.param.update(error=str(exc),
                              error_column=exc.column if isinstance(exc, ConditionError) else None)
            return
        curves["steps"] = axis
        self.param.update(parsed=cond, result=result, curves=curves, error="", error_column=None)
        self._replay()

    @param.depends("trace", "alarm_on", watch=True)
    def _replay(self):
        if self.trace is None or self.parsed is None:
            self.replay = None
            return
        try:
            replay = replay_ci(self.parsed, self.trace, mode=self.mode, steps=self.steps,
                               reliability=self.reliability, adaptivity=self.adaptivity,
                               difference_bound=self.difference_bound,
                               check_difference_bound=self.check_difference_bound, alarm_on=self.alarm_on,
                               plan=self.result)
        except InputError as exc:
            self.param.update(trace_error=str(exc), replay=None)
            return
        self.param.update(replay=replay, trace_error="")
