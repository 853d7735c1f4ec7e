"""What a plan gives: :class:`PlanResult`, and the words every output uses beside its numbers.

A :class:`PlanResult` holds the label count of every meter variant under the chosen
per-model bound (Hoeffding's, the paper's; or the exact binomial tail, optionally with
a known error-rate range), Hoeffding's count beside it with the saving, the labeling
effort, and the answers a label budget gives.  :func:`meter_dashboard.meter.model.plan`
builds it; the planner page, the CLI, the notebook and the HTML report read it.

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.  Thm 4,
   Eqs. 1-2, Thms 1-2 / Cor 1-2, Appendix B, Eqs. 13-16.
.. [2] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Section 4.3 (tight numerical bounds).
.. [3] J. Langford. "Tutorial on Practical Prediction Theory for Classification", JMLR 6, 2005.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..core import formatting as fmt
from ..core.slide import SlideMixin
from ..core.formatting import strict_json
from ..bounds.meter import ADAPTIVE_VARIANTS, VARIANTS

__all__ = ["PlanResult", "RECOMMENDED", "ASSUMPTION", "BINOMIAL_ASSUMPTION", "TENANT_CAVEAT", "REVERT_CAVEAT",
           "TENANT_DISCREPANCY", "VARIANT_TITLES", "VARIANT_NOTES", "BOUND_TITLES", "range_caveat", "variant_note",
           "bound_title", "steps_text"]

#: The variant headlined by default: the cheapest meter that still reports every step.
RECOMMENDED = "incremental"

ASSUMPTION = ("Hoeffding's inequality for each possible submission, with a union bound over the tree "
              "of submissions the meter's signals could have led to (ease.ml/meter, Thms 1-2).")
BINOMIAL_ASSUMPTION = ("The exact binomial tail for each possible submission (0/1 losses: accuracy; ease.ml/ci "
                       "Section 4.3, Langford 2005), with the same union bound over the tree of submissions "
                       "(ease.ml/meter, Thms 1-2). The event that fails is |test - true| >= eps; the count is the "
                       "smallest n from which every larger test set also satisfies the bound.")
TENANT_CAVEAT = "Tenants must not communicate: each works on their own chain of steps (Appendix B)."
REVERT_CAVEAT = ("The revert saving holds only when the revert steps are fixed in advance; a developer who "
                 "may revert at any step gets no saving (Eqs. 13-16).")
TENANT_DISCREPANCY = ("The paper's text quotes 71K labels for two tenants (eps = 0.01..0.05, delta = 0.01, "
                      "T = 10), but its own Eqs. 9 and 29 give 63,261; meter-dashboard implements the "
                      "general formula of Appendix B.")

VARIANT_TITLES = {
    "single_model": "Single model",
    "no_adaptivity": "No adaptivity",
    "resampling": "Resampling",
    "regular": "Regular meter",
    "incremental": "Incremental meter",
}

VARIANT_NOTES = {
    "single_model": "one evaluation, Hoeffding (Thm 4)",
    "no_adaptivity": "T independent models, union bound (Eq. 1)",
    "resampling": "a fresh test set per step (Eq. 2)",
    "regular": "adaptive, a signal per step (Thm 1, Cor 1)",
    "incremental": "adaptive, worst signal so far (Thm 2, Cor 2)",
}

def variant_note(variant: str, bound: str = "hoeffding") -> str:
    """The method column: the variant's union bound, with the per-model bound it uses."""
    if bound != "hoeffding" and variant == "single_model":
        return "one evaluation, exact binomial tail (Thm 4's event)"
    return VARIANT_NOTES[variant]


#: How each per-model bound is called on every output.
BOUND_TITLES = {"hoeffding": "Hoeffding", "binomial": "exact binomial"}


def bound_title(bound: str, max_error_rate=None) -> str:
    """``'Hoeffding'``, ``'exact binomial'`` or ``'exact binomial, error rate ≤ 0.1'``."""
    title = BOUND_TITLES[bound]
    if bound == "binomial" and max_error_rate is not None:
        title += f", error rate ≤ {max_error_rate:g}"
    return title


def range_caveat(max_error_rate: float) -> str:
    """The sentence every output that uses a known error-rate range carries beside its numbers."""
    return (f"The error-rate range holds only if EVERY model the developer might submit errs at most "
            f"{max_error_rate:g} (accuracy at least {1 - max_error_rate:g}) - including bad ones submitted in "
            f"response to the signals. If some model errs more, the counts without the range apply, and the "
            f"planned counts deliver only the confidence shown beside them.")


def steps_text(value) -> str:
    """A number of steps for plain-text outputs (``math.inf`` is beyond the search cap)."""
    if value is None:
        return "…"
    return "more than 10^12" if value == math.inf else f"{int(value):,}"


# ============================================================================ result object
def _confidence_text(value) -> str:
    """A confidence (not a failure probability): 'none' at or below 0, never rounded up to 1."""
    return "none" if value is None or value <= 0 else fmt.confidence(1.0 - value)


@dataclass(frozen=True)
class PlanResult(SlideMixin):
    """Label counts of every meter variant for one plan, with effort and inverse answers.

    Attributes
    ----------
    labels : dict
        variant -> smallest label count satisfying the variant's inequality under ``bound``
        (for a variant the chosen bound refuses - see ``refused`` - Hoeffding's count).
    hoeffding_labels : dict
        variant -> the same count under Hoeffding's bound (the paper's numbers).
    bound : {'hoeffding', 'binomial'}
        The per-model factor inside the union bound.
    max_error_rate : float or None
        With the binomial bound: every model the team could submit errs at most this.
    refused : dict
        variant -> why the chosen bound gave no count (Hoeffding's is used instead).
    unrestricted_labels : dict or None
        With ``max_error_rate``: the binomial counts without the range (what the counts
        become if the range is wrong).
    unrestricted_confidence : dict or None
        With ``max_error_rate``: the confidence ``labels`` actually deliver if some model
        errs more than ``max_error_rate`` (the worst case over every error rate).
    savings : dict
        variant -> how many times fewer labels than resampling (same bound).
    labeler_hours, calendar_hours : dict
        variant -> labeling effort (see :func:`meter_dashboard.bounds.meter.labeling_hours`).
    cost : dict or None
        variant -> labeler_hours * cost_per_hour, when a cost per hour is given.
    budget : int or None
        The label budget the inverse answers refer to.
    max_steps, min_epsilon, confidence : dict or None
        variant -> largest T the budget supports, smallest eps_1 (the eps vector scaled
        together) and the confidence 1 - delta it gives at the plan's T, under ``bound``.
    pending : frozenset
        Parts still being computed (a served page streams the exact ones in): ``"labels.V"``,
        ``"unrestricted.V"``, ``"budget.V"`` for variant V.  Empty for :func:`plan`'s results.

    References
    ----------
    Hubis, Wu & Zhang (2019), Thm 4, Eqs. 1-2, Thms 1-2; Renggli et al. (2019), Section 4.3;
    Langford (2005).
    """

    _text_module = "meter_dashboard.meter.text"  # lead() and slide(path)

    epsilon: tuple[float, ...]
    delta: float
    steps: int
    tenant_steps: tuple[int, ...]
    reverts: tuple[int, ...]
    labels: dict[str, int]
    savings: dict[str, float]
    labeler_hours: dict[str, float]
    calendar_hours: dict[str, float]
    seconds_per_label: float = 2.0
    labelers: int = 1
    cost_per_hour: float | None = None
    cost: dict[str, float] | None = None
    budget: int | None = None
    # with a budget: variant -> answer (None while it is computed, or when the exact bound gave none)
    max_steps: dict[str, int | float | None] | None = None
    min_epsilon: dict[str, float | None] | None = None
    confidence: dict[str, float | None] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    bound: str = "hoeffding"
    max_error_rate: float | None = None
    hoeffding_labels: dict[str, int] = None  # type: ignore[assignment]  # None: a copy of labels (__post_init__)
    refused: dict[str, str] = field(default_factory=dict)
    # with max_error_rate: variant -> value (None where the planned or the unrestricted count was refused)
    unrestricted_labels: dict[str, int | None] | None = None
    unrestricted_confidence: dict[str, float | None] | None = None
    pending: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.hoeffding_labels is None:
            object.__setattr__(self, "hoeffding_labels", dict(self.labels))

    # ------------------------------------------------------------------ derived
    @property
    def signals(self) -> int:
        return len(self.epsilon)

    @property
    def recommended(self) -> str:
        return RECOMMENDED

    @property
    def bound_title(self) -> str:
        return bound_title(self.bound, self.max_error_rate)

    @property
    def label_savings(self) -> dict[str, int]:
        """variant -> labels the chosen bound saves against Hoeffding's count (0 under Hoeffding)."""
        return {v: self.hoeffding_labels[v] - self.labels[v] for v in VARIANTS}

    def is_pending(self, kind: str, variant: str) -> bool:
        """Whether ``kind`` (``'labels'``, ``'unrestricted'``, ``'budget'``) of ``variant`` is still computing."""
        return f"{kind}.{variant}" in self.pending

    @property
    def complete(self) -> bool:
        return not self.pending

    # ------------------------------------------------------------------ words
    def sentence(self, variant: str = RECOMMENDED) -> str:
        """One plain sentence a manager can repeat."""
        exact = self.bound != "hoeffding" and variant not in self.refused and not self.is_pending("labels", variant)
        n = self.labels[variant] if exact or self.bound == "hoeffding" else self.hoeffding_labels[variant]
        eps_text = (f"below {self.epsilon[0]:g}" if len(set(self.epsilon)) == 1 or variant not in ADAPTIVE_VARIANTS
                    else "below its ε")
        who = "every signal's" if variant in ADAPTIVE_VARIANTS else "every model's"
        steps = "1 model" if variant == "single_model" else f"{self.steps:,} development steps"
        tail = ""
        if variant in ADAPTIVE_VARIANTS and self.reverts:
            tail = " (reverts fixed in advance at steps " + ", ".join(str(t) for t in self.reverts) + ")"
        text = (f"With the {VARIANT_TITLES[variant].lower()}, {n:,} labels support {steps}: with probability "
                f"{fmt.confidence(self.delta)} {who} distributional overfitting stays {eps_text}{tail}.")
        if exact:
            text = text[:-1] + (f" (exact binomial tails, {self.hoeffding_labels[variant]:,} with Hoeffding's bound"
                                + (f"; provided every model submitted errs at most {self.max_error_rate:g}"
                                   if self.max_error_rate is not None else "") + ").")
        return text

    def bound_notes(self) -> list[str]:
        """How far the counts move if the error-rate range is wrong, and counts the chosen bound refused."""
        if self.bound == "hoeffding":
            return []
        out = []
        delivered = self.unrestricted_confidence
        if self.max_error_rate is not None and delivered is not None:
            if self.unrestricted_labels is not None and not self.is_pending("unrestricted", RECOMMENDED):
                v = RECOMMENDED
                without, conf = self.unrestricted_labels[v], delivered[v]
                if conf is not None:  # None: the planned exact count itself was refused (noted below)
                    needs = (f"needs {without:,} labels without it (not {self.labels[v]:,})" if without is not None
                             else "gets no exact count without it")
                    out.append(f"If the range is wrong: the {VARIANT_TITLES[v].lower()} {needs}, and "
                               f"{self.labels[v]:,} labels guarantee only confidence "
                               f"{'none' if conf <= 0 else f'{conf:.6g}'} (not {1 - self.delta:.6g}).")
        for v, why in self.refused.items():
            out.append(f"{VARIANT_TITLES[v]}: no exact count ({why}); Hoeffding's count is shown.")
        return out

    # ------------------------------------------------------------------ exports
    def to_frame(self):
        """A pandas DataFrame, one row per variant."""
        import pandas as pd

        rows = []
        for v in VARIANTS:
            row = {"variant": v, "labels": self.labels[v]}
            if self.bound != "hoeffding":
                row["hoeffding_labels"] = self.hoeffding_labels[v]
                row["saving_vs_hoeffding"] = self.label_savings[v]
                if self.unrestricted_labels is not None:
                    row["labels_without_error_range"] = self.unrestricted_labels.get(v)
                    row["confidence_if_range_wrong"] = self.unrestricted_confidence.get(v)
            row.update({
                "x_fewer_than_resampling": self.savings[v],
                "labeler_hours": self.labeler_hours[v],
                "calendar_hours": self.calendar_hours[v],
            })
            if self.cost is not None:
                row["cost"] = self.cost[v]
            if self.budget is not None:
                row["budget_max_steps"] = self.max_steps[v]
                row["budget_min_epsilon"] = self.min_epsilon[v]
                row["budget_confidence"] = self.confidence[v]
            rows.append(row)
        return pd.DataFrame(rows).set_index("variant")

    @strict_json
    def to_dict(self) -> dict:
        """Plain Python (JSON-ready) form; the CLI's ``--format json``."""
        out: dict[str, Any] = {  # JSON-ready
            "labels": dict(self.labels),
            "bound": self.bound,
            "inputs": {
                "epsilon": list(self.epsilon),
                "signals": self.signals,
                "delta": self.delta,
                "steps": self.steps,
                "tenant_steps": list(self.tenant_steps),
                "reverts": list(self.reverts),
                "bound": self.bound,
                "max_error_rate": self.max_error_rate,
            },
            "x_fewer_than_resampling": dict(self.savings),
            "labeling": {
                "seconds_per_label": self.seconds_per_label,
                "labelers": self.labelers,
                "labeler_hours": dict(self.labeler_hours),
                "calendar_hours": dict(self.calendar_hours),
            },
            "recommended": self.recommended,
            "sentence": self.sentence(),
            "notes": list(self.notes),
        }
        if self.bound != "hoeffding":
            out["hoeffding_labels"] = dict(self.hoeffding_labels)
            out["saving_vs_hoeffding"] = self.label_savings
            out["refused"] = dict(self.refused)
            if self.max_error_rate is not None:
                out["max_error_rate"] = self.max_error_rate
                out["labels_without_error_range"] = dict(self.unrestricted_labels or {})
                out["confidence_if_range_wrong"] = dict(self.unrestricted_confidence or {})
        if self.cost is not None:
            out["labeling"]["cost_per_hour"] = self.cost_per_hour
            out["labeling"]["cost"] = dict(self.cost)
        if self.budget is not None:
            assert self.max_steps is not None and self.min_epsilon is not None and self.confidence is not None
            out["budget"] = {
                "labels": self.budget,
                "max_steps": {k: (None if v == math.inf else v) for k, v in self.max_steps.items()},
                "min_epsilon": dict(self.min_epsilon),
                "confidence": dict(self.confidence),
            }
        return out

    def check(self, ranges=None, *, meter: str = "incremental", developer: str = "adversary",
              replicates: int = 500, seed: int = 0) -> list:
        """Check this plan's counts by simulation (blocking): the naive count beside the planned ones.

        See :func:`meter_dashboard.meter.check.check_plan` (same arguments).  Each row
        has ``labels``, ``result.failure_rate``, ``result.ci`` and ``verdict`` ('within δ'
        or 'above δ').

        References
        ----------
        Hubis, Wu & Zhang (2019), ease.ml/meter, Thms 1-2; Blum & Hardt (2015), the boosting attack.
        """
        from .check import check_plan

        return check_plan(self, ranges, meter=meter, developer=developer, replicates=replicates, seed=seed)

    def __repr__(self) -> str:
        eps = ", ".join(f"{e:g}" for e in self.epsilon)
        head = f"PlanResult(epsilon=[{eps}], delta={self.delta:g}, steps={self.steps}"
        if len(self.tenant_steps) > 1:
            head += f", tenant_steps={list(self.tenant_steps)}"
        if self.reverts:
            head += f", reverts={list(self.reverts)}"
        if self.bound != "hoeffding":
            head += f", bound={self.bound!r}"
            if self.max_error_rate is not None:
                head += f", max_error_rate={self.max_error_rate:g}"
        lines = [head + ")"]
        width = max(len(v) for v in VARIANTS)
        for v in VARIANTS:
            mark = "  <- recommended" if v == self.recommended else ""
            exact = (f"  (Hoeffding {self.hoeffding_labels[v]:,}, saves {self.label_savings[v]:,})"
                     if self.bound != "hoeffding" else "")
            lines.append(f"  {v:<{width}}  {self.labels[v]:>14,} labels  "
                         f"{fmt.amount(self.savings[v], 2):>8}x fewer than resampling  "
                         f"{fmt.amount(self.labeler_hours[v]):>10} labeler-hours{exact}{mark}")
        if (self.budget is not None and self.max_steps is not None and self.max_steps.get("incremental") is not None
                and self.min_epsilon is not None and self.confidence is not None):  # the three come together
            lines.append(f"  budget {self.budget:,} labels: incremental supports "
                         f"{steps_text(self.max_steps['incremental'])} steps, "
                         f"eps_1 >= {self.min_epsilon['incremental']:.4g}, "
                         f"confidence {_confidence_text(self.confidence['incremental'])} at T = {fmt.integer(self.steps)}")
        for note in self.notes:
            lines.append(f"  note: {note}")
        return "\n".join(lines)

    def table(self) -> tuple[list, list]:
        """``(headers, rows)``: the table ``meter-dashboard plan`` prints (one row per variant)."""
        from ..bounds.meter import VARIANTS

        exact = self.bound != "hoeffding"
        headers = (["variant", "labels"] + (["hoeffding", "saving"] if exact else [])
                   + ["x fewer than resampling", "labeler-hours"] + (["cost"] if self.cost is not None else [])
                   + ["method"])
        rows = [[v, self.labels[v]] + ([self.hoeffding_labels[v], self.label_savings[v]] if exact else [])
                + [round(self.savings[v], 2), round(self.labeler_hours[v], 1)]
                + ([round(self.cost[v], 2)] if self.cost is not None else []) + [variant_note(v, self.bound)]
                for v in VARIANTS]
        return headers, rows

    def caption(self, budget: bool = True) -> str:
        """The inputs in one line (the table's caption; without the budget, the CLI's first line)."""
        head = (f"epsilon = [{', '.join(f'{e:g}' for e in self.epsilon)}]  delta = {self.delta:g}  "
                f"steps = {self.steps}")
        if len(self.tenant_steps) > 1:
            head += f"  tenant_steps = {','.join(map(str, self.tenant_steps))}"
        if self.reverts:
            head += f"  reverts = {','.join(map(str, self.reverts))}"
        if self.bound != "hoeffding":
            head += f"  bound = {self.bound_title}"
        if budget and self.budget is not None:
            head += f"  budget = {self.budget:,} labels"
        return head

    def _repr_html_(self) -> str:  # notebooks: the CLI's table, the inputs as caption, the recommendation marked
        from ..core.display import html_table

        headers, rows = self.table()
        marked = [k for k, row in enumerate(rows) if row[0] == self.recommended]
        return html_table(headers, rows, caption=self.caption(), marked=marked, sentence=self.sentence(),
                          notes=self.notes)
