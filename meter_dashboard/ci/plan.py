"""ease.ml/ci label counts: the plan of a condition (baseline and Section 4 optimizations).

- :func:`ci_labels` - the label counts a condition needs, returned as a :class:`CIResult`.
- :func:`ci_curves` - counts against the number of steps for every adaptivity (one
  vectorized call per adaptivity).

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

Every union-bound share is :func:`meter_dashboard.bounds.ci.clause_log_count`, the one
implementation of the Figure 2 count, used by the docs' functions, the CLI and the page.

References
----------
.. [1] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Sections 3.1-3.4 (baseline), 4.1-4.2 (Patterns 1 and 2,
   Bennett's inequality, active labeling), Figure 2, Figure 5.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..core.slide import SlideMixin
from ..core.formatting import strict_json
from ..bounds import ci as ci_bounds
from ..bounds.effort import labeling_hours
from ..core.validation import InputError, check_int, check_positive, raw
from .grammar import Clause, Condition, format_number
from .text import savings
from .inputs import (
    ADAPTIVITIES,
    MODES,
    as_condition,
    check_choice,
    check_steps,
    default,
    delta_from_reliability,
    validate_difference_bound,
)

__all__ = [
    "ADAPTIVITY_TITLES",
    "ASSUMPTIONS",
    "TEXT_ROUNDING_NOTE",
    "BINOMIAL_NOTE",
    "ClausePlan",
    "CIResult",
    "ci_labels",
    "ci_curves",
    "ci_exact_point",
    "exact_curve_order",
]

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

BINOMIAL_NOTE = (
    "Exact binomial tails (Section 4.3, 'tight numerical bounds'): each estimate (n, o or d, a fraction of the "
    "test examples) gets the worst case over its true value of the chance that it misses by its share of the "
    "tolerance on the side that would flip the decision, instead of Hoeffding's exp(-2 n t^2); the union bound "
    "is unchanged. The count is the smallest n from which every larger test set satisfies it (the exact failure "
    "probability is a sawtooth in n). Bennett's count with p (Pattern 1/2) is kept where it is smaller."
)

TEXT_ROUNDING_NOTE = (
    "Counts are the smallest integers satisfying each inequality (the ceiling of the real-valued bound), "
    "as in Figure 2. The paper's text sometimes quotes the real bound truncated: 156,955 (Section 3.3) is "
    "156,955.25, whose integer count is Figure 2's 156,956; 2,188 (Section 4.1.2) is 2,188.85."
)


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
        ``hoeffding``, ``binomial`` (exact tails), ``bennett`` (Pattern 1/2) or ``unlabeled``.
    tolerances : dict
        variable -> the share of the tolerance each estimate gets (eps |a_v| / W, in the
        variable's own units: eps / W).

    References
    ----------
    Renggli et al. 2019, Sections 3.1 and 4.1-4.2.
    """

    clause: str
    baseline: int
    optimized: int | None
    unlabeled: int
    method: str
    tolerances: dict

    @strict_json
    def to_dict(self) -> dict:
        return {
            "clause": self.clause,
            "baseline": self.baseline,
            "optimized": self.optimized,
            "unlabeled": self.unlabeled,
            "method": self.method,
            "tolerances": {k: float(v) for k, v in self.tolerances.items()},
        }


# ============================================================================ which clause goes where
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
    slack = Fraction(0)
    if mode == "fn-free":
        slack = 2 * clause.tolerance if clause.comparison == "<" else -2 * clause.tolerance
    bound = (clause.threshold + slack) / c
    return bound if bound > 0 else None


def _variance_bound(condition: Condition, mode: str, difference_bound, check: bool, difference: tuple):
    """``(p, where p comes from, the tolerance of Pattern 2's check or None)``."""
    clauses = condition.clauses
    bounds_d = [(b, i) for i, c in enumerate(clauses) if (b := _d_upper_bound(c, mode)) is not None]
    p, p_source, check_tol = None, "", None
    if bounds_d:
        b, i = min(bounds_d)
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
    if difference_bound is not None and not difference and not bounds_d:
        p, p_source = None, ""
    return (None if p is None else min(p, 1.0)), p_source, check_tol


def _setup(condition: Condition, mode: str, difference_bound, check: bool) -> _Setup:
    clauses = condition.clauses
    unlabeled = tuple(i for i, c in enumerate(clauses) if c.is_difference_only)
    labeled = tuple(i for i, c in enumerate(clauses) if not c.is_difference_only)
    difference = tuple(i for i in labeled if clauses[i].is_difference)
    notes = []
    if difference_bound is not None and not difference:
        notes.append("The difference bound helps only clauses of the form n - o > C +/- D (Pattern 2); "
                     "this condition has none.")
    p, p_source, check_tol = _variance_bound(condition, mode, difference_bound, check, difference)
    applies = bool(unlabeled) or difference_bound is not None
    shares = len(clauses) + (1 if check_tol is not None else 0)
    return _Setup(applies, p, p_source, check_tol, unlabeled, labeled, difference, shares, tuple(notes))


# ============================================================================ counts, vectorized over steps
def _per_clause(condition: Condition, steps, values) -> np.ndarray:
    """One value per clause, shaped ``(k,) + (1,) * ndim(steps)`` to broadcast against the steps."""
    return np.asarray(values, dtype=float).reshape((len(condition.clauses),) + (1,) * np.ndim(steps))


def _clause_counts(condition: Condition, delta, steps, log_count, bound: str) -> np.ndarray:
    """Per clause (rows): the labels its estimates need, each within ``eps / W`` (Section 3.1).

    Hoeffding: every clause in one vectorized call over the steps.  Binomial: the exact
    count per clause (one setting of steps only; the exact search is per setting).
    """
    clauses = condition.clauses
    if bound == "binomial":
        if np.ndim(steps):
            raise InputError("bound", "hoeffding for counts over a range of steps (the exact binomial count is "
                             "computed for one setting)", "binomial")
        logs = np.ravel(np.broadcast_to(log_count, (len(clauses),)))
        return np.array([ci_bounds.binomial_labels(c.tolerance / c.weight, delta, float(lc))
                         for c, lc in zip(clauses, logs.tolist())], dtype=np.int64)
    w = _per_clause(condition, steps, [float(c.weight) for c in clauses])
    eps = _per_clause(condition, steps, [float(c.tolerance) for c in clauses])
    return np.asarray(ci_bounds.hoeffding_labels(w, eps, delta, log_count))


def _baseline(condition: Condition, delta, steps, adaptivity: str, bound: str) -> dict:
    """Section 3: each clause's count with delta split over S histories, k clauses, m terms."""
    clauses = condition.clauses
    terms = _per_clause(condition, steps, [len(c.coefficients) for c in clauses])
    labels = _clause_counts(condition, delta, steps, ci_bounds.clause_log_count(adaptivity, steps, len(clauses), terms),
                            bound)
    return {"baseline_clauses": list(labels), "baseline": labels.max(axis=0)}


def _optimized_clauses(condition: Condition, delta, steps, adaptivity: str, setup: _Setup, bound: str) -> tuple:
    """Per clause (rows) ``(labels, unlabeled, method, Bennett used)`` in the optimized plan, vectorized."""
    clauses = condition.clauses
    k = len(clauses)
    terms = _per_clause(condition, steps, [len(c.coefficients) for c in clauses])
    hoeff = _clause_counts(condition, delta, steps, ci_bounds.clause_log_count(adaptivity, steps, setup.shares, terms),
                           bound)
    unlabeled = _per_clause(condition, steps, [i in setup.unlabeled for i in range(k)]).astype(bool)
    difference = _per_clause(condition, steps, [i in setup.difference for i in range(k)]).astype(bool)
    use_bennett = np.zeros(hoeff.shape, dtype=bool)
    benn = hoeff
    if setup.p is not None and setup.difference:
        eps_d = _per_clause(condition, steps, [float(c.tolerance / abs(c.difference_scale)) if i in setup.difference
                                               else 1.0 for i, c in enumerate(clauses)])
        benn = np.asarray(ci_bounds.bennett_labels(eps_d, setup.p, delta,
                                                ci_bounds.clause_log_count(adaptivity, steps, setup.shares, 1)))
        use_bennett = difference & (benn <= hoeff)
    labels = np.where(unlabeled, 0, np.where(use_bennett, benn, hoeff))
    methods = np.where(unlabeled, "unlabeled", np.where(use_bennett, "bennett", "hoeffding"))
    return labels, np.where(unlabeled, hoeff, 0), methods, np.all(unlabeled | use_bennett, axis=0)


def _optimized(condition: Condition, delta, steps, adaptivity: str, setup: _Setup, base: dict,
               bound: str) -> dict:
    """Section 4: the optimized plan, used where it needs fewer labels than the baseline ``base``."""
    baseline = base["baseline"]
    shape = np.shape(baseline)
    opt, unl, methods, every_bennett = _optimized_clauses(condition, delta, steps, adaptivity, setup, bound)
    all_bennett = np.full(shape, bool(setup.labeled) and setup.p is not None) & every_bennett
    check = None
    if setup.check_tolerance is not None:
        share = ci_bounds.clause_log_count(adaptivity, steps, setup.shares, 1)
        check = (ci_bounds.binomial_labels(setup.check_tolerance, delta, float(share)) if bound == "binomial"
                 else ci_bounds.hoeffding_labels(1.0, float(setup.check_tolerance), delta, share))
    optimized = opt.max(axis=0)
    unlabeled = np.max(np.asarray(list(unl) + ([check] if check is not None else [])), axis=0)
    if not setup.labeled:
        per_commit = np.zeros(shape)
    elif setup.p is None:
        per_commit = np.full(shape, np.nan)
    else:
        per_commit = np.where(all_bennett, ci_bounds.active_labels(setup.p, optimized), np.nan)
    # The plan is chosen from the settings alone, before any data: where the optimizations
    # do not reduce the labels (a loose bound whose check costs a share of delta), the
    # baseline plan is the better choice and is used.
    use = optimized < baseline
    return dict(
        used=use,
        optimized_clauses=[np.where(use, o, np.asarray(b)) for o, b in zip(opt, base["baseline_clauses"])],
        unlabeled_clauses=[np.where(use, u, 0) for u in unl],
        methods=[np.where(use, mth, "hoeffding") for mth in methods],
        check=check,
        optimized=np.where(use, optimized, baseline),
        unlabeled=np.where(use, unlabeled, 0),
        per_commit=np.where(use, per_commit, np.nan),
    )


def _arrays(condition: Condition, delta, steps, adaptivity: str, setup: _Setup, bound: str = "hoeffding") -> dict:
    """Baseline / optimized / unlabeled / per-commit counts, vectorized over delta and steps (Hoeffding)."""
    out = _baseline(condition, delta, steps, adaptivity, bound)
    if setup.applies:
        out.update(_optimized(condition, delta, steps, adaptivity, setup, out, bound))
    return out


# ============================================================================ the result
@dataclass(frozen=True)
class CIResult(SlideMixin):
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
    bound : str
        ``hoeffding`` (the paper's) or ``binomial`` (exact tails).
    hoeffding : dict or None
        With ``bound='binomial'``: the Hoeffding counts of the same settings, per adaptivity
        (``labels``, ``optimized``, ``labels_per_commit``), to show the saving.

    References
    ----------
    Renggli et al. 2019, Sections 3.1-3.4 (baseline), 4.1-4.2 (optimized, active labeling).
    """

    _text_module = "meter_dashboard.ci.text"  # lead() and slide(path)

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
    bound: str = "hoeffding"
    hoeffding: dict | None = None

    @property
    def saving(self) -> float | None:
        """How many times fewer labels the optimized plan needs (None without optimization)."""
        if self.optimized is None:
            return None
        return math.inf if self.optimized == 0 else self.labels / self.optimized

    def sentence(self) -> str:
        """One plain sentence a manager can repeat."""
        exact = ", exact binomial tails" if self.bound == "binomial" else ""
        text = (f"With reliability {self.reliability:g} ({self.adaptivity} adaptivity, {self.mode}{exact}), a test set of "
                f"{self.labels:,} labels supports {self.steps} commit{'s' if self.steps != 1 else ''}")
        return text + savings(self, "; the optimizations cut that to {}") + "."

    @strict_json
    def to_dict(self) -> dict:
        """JSON-ready form; the CLI's ``--format json``."""
        out = {"condition": self.condition, "reliability": self.reliability, "delta": self.delta,
               "adaptivity": self.adaptivity, "mode": self.mode, "steps": self.steps, "labels": self.labels}
        if self.optimized is not None:
            out.update(optimized=self.optimized, unlabeled=self.unlabeled, labels_per_commit=self.labels_per_commit,
                       variance_bound=self.variance_bound, variance_source=self.variance_source)
        if self.difference_bound is not None:
            out["difference_bound"] = self.difference_bound
        if self.bound != "hoeffding":  # the default output is the paper's, unchanged
            out["bound"] = self.bound
            out["hoeffding"] = {a: dict(v) for a, v in (self.hoeffding or {}).items()}
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
        exact = f", bound={self.bound!r}" if self.bound != "hoeffding" else ""
        lines = [f"CIResult(condition={self.condition!r}, reliability={self.reliability:g}, "
                 f"adaptivity={self.adaptivity!r}, mode={self.mode!r}, steps={self.steps}{exact})"]
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

    def _repr_html_(self) -> str:  # notebooks: the ci verb's table, the chosen adaptivity marked
        from ..core.display import html_table

        optimized, exact = self.optimized is not None, self.bound != "hoeffding"
        hoeffding = self.hoeffding or {}  # set whenever the bound is not Hoeffding's
        headers = (["adaptivity", "labels"] + (["Hoeffding"] if exact else [])
                   + (["optimized", "labels/commit"] if optimized else []))
        rows = []
        for a, v in self.by_adaptivity.items():
            rows.append([a, v["labels"]] + ([hoeffding[a]["labels"]] if exact else [])
                        + ([v["optimized"], v["labels_per_commit"]] if optimized else []))
        caption = (f"condition {self.condition}  reliability {self.reliability:g} (delta {self.delta:g})  "
                   f"mode {self.mode}  {self.steps} steps per test set" + (f"  bound {self.bound}" if exact else ""))
        marked = [k for k, row in enumerate(rows) if row[0] == self.adaptivity]
        return html_table(headers, rows, caption=caption, marked=marked, mark_note="your adaptivity",
                          sentence=self.sentence(), notes=self.notes)


def _saving_text(saving) -> str:
    if saving is None:
        return "—"
    if saving == math.inf:
        return "no labels needed"
    return f"{saving:.1f}x fewer"


# ============================================================================ the public functions
def _counts(condition: Condition, delta, steps, adaptivity: str, setup: _Setup, bound: str) -> dict:
    """:func:`_arrays`, a count too large to be exact refused naming the condition and the steps."""
    try:
        return _arrays(condition, delta, steps, adaptivity, setup, bound)
    except InputError as exc:
        if exc.parameter != "labels":
            raise
        raise InputError("condition", f"a condition whose label count (with these steps and reliability) is "
                         f"at most {ci_bounds.MAX_LABELS:,}", raw(f"{exc.got} ({adaptivity} adaptivity)")) from None


def _by_adaptivity(cond: Condition, delta, steps: int, adaptivity: str, setup: _Setup, bound: str) -> tuple:
    """``({adaptivity: counts}, {adaptivity: arrays})``; an adaptivity other than the chosen one whose
    count cannot be given (too large to be exact, or to search exactly) is shown as unknown (None)."""
    by: dict[str, dict[str, int | None]] = {}
    arrays: dict = {}
    for a in ADAPTIVITIES:
        try:
            arr = arrays[a] = _counts(cond, delta, steps, a, setup, bound)
        except InputError:
            if a == adaptivity:
                raise
            by[a] = {"labels": None, **({"optimized": None, "unlabeled": None, "labels_per_commit": None}
                                        if setup.applies else {})}
            continue
        entry: dict[str, int | None] = {"labels": int(arr["baseline"])}
        if setup.applies:
            entry["optimized"] = int(arr["optimized"])
            entry["unlabeled"] = int(arr["unlabeled"])
            entry["labels_per_commit"] = None if np.isnan(arr["per_commit"]) else int(arr["per_commit"])
        by[a] = entry
    return by, arrays


def _clause_plans(condition: Condition, setup: _Setup, chosen: dict, bound: str) -> tuple:
    plans = []
    for i, c in enumerate(condition.clauses):
        tolerances = {v: c.tolerance / c.weight for v in c.variables}
        if setup.applies:
            method = str(chosen["methods"][i])
            optimized = int(chosen["optimized_clauses"][i])
            unl = int(chosen["unlabeled_clauses"][i])
            if method == "bennett":
                tolerances = {"n - o": c.tolerance / abs(c.difference_scale)}
        else:
            method, optimized, unl = "hoeffding", None, 0
        if method == "hoeffding":
            method = bound  # the per-estimate factor: Hoeffding's or the exact binomial tail
        plans.append(ClausePlan(c.canonical(), int(chosen["baseline_clauses"][i]), optimized, unl, method,
                                tolerances))
    return tuple(plans)


def _effort(entry: dict, seconds_per_label: float, labelers: int) -> dict:
    """Labeler-hours and calendar hours of the baseline, optimized and per-commit counts."""
    labels, optimized, per_commit = entry["labels"], entry.get("optimized"), entry.get("labels_per_commit")
    counts = [labels] + [x for x in (optimized, per_commit) if x is not None]
    work, calendar = labeling_hours(np.asarray(counts, dtype=float), seconds_per_label, labelers)
    out = dict(labeler_hours=float(work[0]), calendar_hours=float(calendar[0]), optimized_labeler_hours=None,
               optimized_calendar_hours=None, per_commit_hours=None)
    j = 1
    if optimized is not None:
        out.update(optimized_labeler_hours=float(work[j]), optimized_calendar_hours=float(calendar[j]))
        j += 1
    if per_commit is not None:
        out["per_commit_hours"] = float(work[j])
    return out


def _notes(setup: _Setup, chosen: dict, adaptivity: str, per_commit, bound: str = "hoeffding") -> tuple:
    notes = list(setup.notes)
    if bound == "binomial":
        notes.append(BINOMIAL_NOTE)
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
    return tuple(notes)


def ci_labels(condition=default("condition"), reliability: float = default("reliability"),
              adaptivity: str = default("adaptivity"), steps: int = default("steps"), mode: str = default("mode"),
              *, difference_bound: float | None = default("difference_bound"),
              check_difference_bound: bool = default("check_difference_bound"),
              seconds_per_label: float = default("seconds_per_label"), labelers: int = default("labelers"),
              bound: str = default("bound")) -> CIResult:
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
    bound : {'hoeffding', 'binomial'}
        The factor of each estimate: Hoeffding's (the paper's numbers) or the exact
        binomial tail (Section 4.3, "tight numerical bounds"; never more labels, exact
        search up to :data:`meter_dashboard.bounds.ci.MAX_EXACT_LABELS` Hoeffding labels).
        Bennett's count for Pattern 1/2 is kept and the smaller one used, as with Hoeffding.

    Returns
    -------
    CIResult

    References
    ----------
    Renggli et al. 2019: Section 3.1 (the Hoeffding recursion), 3.2-3.4 (adaptivity),
    4.1-4.2 (Patterns 1 and 2, Bennett's inequality, active labeling), Figure 2.

    Examples
    --------
    The public ease.ml/ci calculator's example and Figure 2 (F2, full, 0.99, eps = 0.1):

    >>> ci_labels("n - o > 0.1 +/- 0.1", 0.99, "full", 32).labels
    5496
    """
    cond = as_condition(condition)
    delta = delta_from_reliability(reliability)
    adaptivity = check_choice("adaptivity", adaptivity, ADAPTIVITIES)
    steps = check_steps(steps)
    mode = check_choice("mode", mode, MODES)
    p = validate_difference_bound(difference_bound)
    seconds_per_label = check_positive("seconds_per_label", seconds_per_label)
    labelers = check_int("labelers", labelers, minimum=1)
    bound = check_choice("bound", bound, ci_bounds.BOUNDS)
    setup = _setup(cond, mode, p, bool(check_difference_bound))
    by, arrays = _by_adaptivity(cond, delta, steps, adaptivity, setup, bound)
    hoeffding = None
    if bound != "hoeffding":  # side by side: what the paper's bound needs for the same settings
        hoeffding = {a: {k: v for k, v in e.items() if k != "unlabeled"}
                     for a, e in _by_adaptivity(cond, delta, steps, adaptivity, setup, "hoeffding")[0].items()}
    chosen, entry = arrays[adaptivity], by[adaptivity]
    return CIResult(
        condition=cond.canonical(), reliability=float(reliability), delta=delta, adaptivity=adaptivity, mode=mode,
        steps=steps, labels=entry["labels"], optimized=entry.get("optimized"), unlabeled=entry.get("unlabeled"),
        labels_per_commit=entry.get("labels_per_commit"), difference_bound=p,
        variance_bound=setup.p if setup.applies else None, variance_source=setup.p_source if setup.applies else "",
        by_adaptivity=by, clauses=_clause_plans(cond, setup, chosen, bound), seconds_per_label=seconds_per_label,
        labelers=labelers, notes=_notes(setup, chosen, adaptivity, entry.get("labels_per_commit"), bound),
        bound=bound, hoeffding=hoeffding, **_effort(entry, seconds_per_label, labelers),
    )


def _largest_fitting_steps(cond: Condition, delta, steps: np.ndarray, adaptivity: str, setup: _Setup):
    """The largest H in ``steps`` whose counts are small enough to be exact (None if none is).

    Called when the largest does not fit.  Every count grows with H (``log S`` does), so a
    bisection over the sorted values decides.
    """
    def fits(h) -> bool:
        try:
            _arrays(cond, delta, np.asarray([h]), adaptivity, setup)
            return True
        except InputError as exc:
            if exc.parameter != "labels":
                raise
            return False

    values = np.unique(steps)
    lo, hi = -1, values.size - 1  # values[lo] fits (lo = -1: nothing does), values[hi] does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(values[mid]) else (lo, mid)
    return None if lo < 0 else values[lo]


def _curve(cond: Condition, delta, steps: np.ndarray, adaptivity: str, setup: _Setup) -> dict:
    """One adaptivity's curves; where a count is too large to be exact the curve holds NaN (not drawn)."""
    try:
        arr = _arrays(cond, delta, steps, adaptivity, setup)
        pick = {"baseline": arr["baseline"], "optimized": arr.get("optimized"), "per_commit": arr.get("per_commit")}
    except InputError as exc:
        if exc.parameter != "labels":
            raise
        top = _largest_fitting_steps(cond, delta, steps, adaptivity, setup)
        keep = steps <= top if top is not None else np.zeros(steps.shape, dtype=bool)
        arr = _arrays(cond, delta, steps[keep], adaptivity, setup) if keep.any() else {}
        pick = {}
        for key in ("baseline", "optimized", "per_commit"):
            full = np.full(steps.shape, np.nan)
            if key in arr:
                full[keep] = arr[key]
            pick[key] = full
    return {
        "baseline": np.asarray(pick["baseline"]),
        "optimized": np.asarray(pick["optimized"]) if setup.applies else None,
        "labels_per_commit": np.asarray(pick["per_commit"], dtype=float) if setup.applies else None,
    }


def ci_curves(condition, reliability=default("reliability"), steps=None, mode: str = default("mode"), *,
              difference_bound=default("difference_bound"),
              check_difference_bound: bool = default("check_difference_bound"), adaptivities=ADAPTIVITIES) -> dict:
    """Label counts against H for every adaptivity.

    Parameters
    ----------
    condition, reliability, mode, difference_bound, check_difference_bound
        As in :func:`ci_labels`.
    steps : array_like of int
        The H values (default 1..64); each adaptivity is one vectorized solve.
    adaptivities : sequence of str
        Which adaptivities to compute.

    Returns
    -------
    dict
        ``{adaptivity: {'baseline': array, 'optimized': array or None, 'labels_per_commit': array or None}}``.
        Where a count would exceed :data:`meter_dashboard.bounds.ci.MAX_LABELS` the arrays
        hold NaN (such steps are not drawn).

    References
    ----------
    Renggli et al. 2019, Sections 3.2-3.4 (how the count grows with H per adaptivity).
    """
    cond = as_condition(condition)
    delta = delta_from_reliability(reliability)
    mode = check_choice("mode", mode, MODES)
    p = validate_difference_bound(difference_bound)
    steps = np.arange(1, 65) if steps is None else np.asarray(steps)
    setup = _setup(cond, mode, p, bool(check_difference_bound))
    return {a: _curve(cond, delta, steps, check_choice("adaptivity", a, ADAPTIVITIES), setup) for a in adaptivities}


# ============================================================================ exact curves, point by point
def ci_exact_point(condition, reliability=default("reliability"), steps: int = default("steps"),
                   mode: str = default("mode"), *, difference_bound=default("difference_bound"),
                   check_difference_bound: bool = default("check_difference_bound")) -> dict:
    """Every adaptivity's exact binomial counts at one H: a point of the exact curves.

    The same counts as :func:`ci_labels` with ``bound='binomial'`` (Section 4.3), so a curve
    through these points meets the table and the cards at the chosen H.

    Returns
    -------
    dict
        ``{adaptivity: {'baseline': float, 'optimized': float or None}}``; NaN where the
        count cannot be searched exactly (Hoeffding's count passes
        :data:`meter_dashboard.bounds.ci.MAX_EXACT_LABELS`) or is too large to be exact.

    References
    ----------
    Renggli et al. 2019, Section 4.3 (tight numerical bounds) and Sections 3.2-3.4 (firstChange needs
    the non-adaptive count: it is computed once for both).
    """
    cond = as_condition(condition)
    delta = delta_from_reliability(reliability)
    steps = check_steps(steps)
    setup = _setup(cond, check_choice("mode", mode, MODES), validate_difference_bound(difference_bound),
                   bool(check_difference_bound))
    out: dict = {}
    for a in ADAPTIVITIES:
        same = next((b for b in out if ci_bounds.log_histories(b, steps) == ci_bounds.log_histories(a, steps)), None)
        if same is not None:
            out[a] = dict(out[same])
            continue
        try:
            arr = _arrays(cond, delta, steps, a, setup, "binomial")
            out[a] = {"baseline": float(arr["baseline"]),
                      "optimized": float(arr["optimized"]) if setup.applies else None}
        except InputError as exc:
            if exc.parameter not in ("bound", "labels"):
                raise
            out[a] = {"baseline": math.nan, "optimized": math.nan if setup.applies else None}
    return out


def exact_curve_order(size: int, current: int, points: int) -> list[int]:
    """Which of ``size`` values of H get an exact count, in the order to compute them.

    About ``points`` indices spread evenly over ``0..size-1`` (both ends included), ``current``
    (the chosen H) first; then coarse to fine: each index before those that halve the gaps it
    leaves, so a curve drawn through the points computed so far spans the whole axis early.
    """
    spread = np.unique(np.round(np.linspace(0, size - 1, max(2, min(points, size)))).astype(int))
    chosen = [int(i) for i in spread]

    def fineness(k: int) -> tuple:  # 0 and the last first, then by how coarse a grid position k sits on
        if k in (0, len(chosen) - 1):
            return (0, k)
        return (1, -(k & -k), k)

    order = [chosen[k] for k in sorted(range(len(chosen)), key=fineness)]
    current = int(min(max(current, 0), size - 1))
    return [current] + [i for i in order if i != current]
