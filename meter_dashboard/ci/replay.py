"""Replaying a commit history into pass/fail signals and new-testset alarms, vectorized.

:func:`replay_ci` evaluates every commit of a :class:`~.trace.CITrace` with the exact
interval rule of :func:`~.evaluation.evaluate_columns` in one pass over arrays, and derives
the alarms of every adaptivity from the signals with array arithmetic (no per-commit
Python loop for an estimates trace; a predictions trace loops over its few models, each
step vectorized over the test examples, because each commit is compared with the model
the previous signals made active).  The result, :class:`CIReplay`, holds columns; its
``rows`` (one dict per commit) are built only when asked for.

References
----------
.. [1] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Sections 3.2-3.4 (the new-testset alarm of each adaptivity),
   Section 3.5 (evaluation), Section 4.1.2 (labels only where the models disagree).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np

from ..core.formatting import strict_json
from ..core.validation import InputError
from .evaluation import TRUTHS, ExactColumn, evaluate_columns
from .inputs import ADAPTIVITIES, ALARM_ON, MODES, as_condition, check_choice, check_steps, default
from .inputs import delta_from_reliability, validate_difference_bound
from .plan import CIResult, ci_labels
from .trace import CITrace, read_ci_trace

__all__ = ["CIReplay", "replay_ci", "new_testset_alarms"]

_PASS, _FAIL = "pass", "fail"


@dataclass(frozen=True, eq=False)
class CIReplay:
    """A trace replayed against a condition, held as columns (one entry per commit).

    ``columns`` hold: ``commit`` (names), ``n``, ``o``, ``d`` (floats, NaN where absent),
    ``present`` (variable -> bool array), ``clauses`` (int8 truth codes, clauses x commits),
    ``truth`` (codes), ``passed`` (bool), ``active`` (the model in the repository
    afterwards), ``disagreements`` (examples where the commit and the active model differ:
    the labels active labeling needs; predictions traces only, else None), ``bound_ok``
    (d within the variance bound, or None), and per adaptivity ``testset_<a>`` (which test
    set the commit used, from 1) and ``alarm_<a>`` (a new test set is needed after it).

    :attr:`rows` presents the same as one dict per commit.

    References
    ----------
    Renggli et al. 2019, Sections 3.2-3.5 and 4.1.2.
    """

    condition: str
    mode: str
    steps: int
    alarm_on: str
    columns: dict = field(repr=False)
    examples: int | None
    required: dict
    warnings: tuple

    def __len__(self) -> int:
        return len(self.columns["commit"])

    @property
    def passes(self) -> int:
        return int(np.count_nonzero(self.columns["passed"]))

    def alarms(self, adaptivity: str) -> list:
        """1-based commit numbers after which ``adaptivity`` raises the new-testset alarm."""
        return (np.flatnonzero(self.columns[f"alarm_{adaptivity}"]) + 1).tolist()

    def signals(self) -> list:
        """``'pass'`` / ``'fail'`` per commit."""
        return np.where(self.columns["passed"], _PASS, _FAIL).tolist()

    def _lists(self, stop: int | None = None) -> dict:
        """Every column (its first ``stop`` entries) as a Python list of Python values (None where absent)."""
        c, cut = self.columns, slice(0, stop)
        size = len(c["commit"][cut])
        out = {"commit": list(c["commit"][cut])}
        for var in ("n", "o", "d"):
            values, present = c[var][cut].tolist(), c["present"][var][cut]
            out[var] = values if present.all() else [v if ok else None for v, ok in zip(values, present)]
        out["clauses"] = [[TRUTHS[k] for k in col] for col in c["clauses"][:, cut].T.tolist()]
        out["truth"] = [TRUTHS[k] for k in c["truth"][cut].tolist()]
        out["signal"] = np.where(c["passed"][cut], _PASS, _FAIL).tolist()
        out["active"] = list(c["active"][cut])
        out["disagreements"] = c["disagreements"][cut].tolist() if c["disagreements"] is not None else [None] * size
        out["bound_ok"] = [None] * size
        if c["bound_ok"] is not None:
            ok, absent = c["bound_ok"][cut].tolist(), c["bound_missing"][cut]
            out["bound_ok"] = [None if m else b for b, m in zip(ok, absent)] if absent.any() else ok
        for a in ADAPTIVITIES:
            out[f"testset_{a}"] = c[f"testset_{a}"][cut].tolist()
            out[f"alarm_{a}"] = c[f"alarm_{a}"][cut].tolist()
        return out

    @staticmethod
    def _dicts(lists: dict) -> tuple:
        keys = list(lists)
        return tuple(dict(zip(keys, values)) for values in zip(*(lists[k] for k in keys)))

    @cached_property
    def rows(self) -> tuple:
        """One dict per commit: ``commit, n, o, d, clauses, truth, signal, active, disagreements,
        bound_ok``, then ``testset_<a>, alarm_<a>`` per adaptivity (built on first use)."""
        return self._dicts(self._lists())

    def head(self, count: int) -> tuple:
        """The :attr:`rows` of the first ``count`` commits (without building the others)."""
        return self.rows[:count] if "rows" in self.__dict__ else self._dicts(self._lists(count))

    def to_frame(self):
        """A pandas DataFrame: one row per commit, one column per clause truth."""
        import pandas as pd

        lists = self._lists()
        clauses = lists.pop("clauses")
        frame = pd.DataFrame(lists)
        for j in range(len(self.columns["clauses"])):
            frame[f"clause_{j + 1}"] = [t[j] for t in clauses]
        return frame

    def _repr_html_(self) -> str:  # notebooks: the ci --trace table; commits with a new-testset alarm marked
        from ..core.display import html_table

        rows, marked = [], []
        for i, r in enumerate(self._dicts(self._lists(200))):
            alarms = "/".join("ALARM" if r[f"alarm_{a}"] else "-" for a in ADAPTIVITIES)
            if "ALARM" in alarms:
                marked.append(i)
            rows.append([i + 1, r["commit"], r["n"], r["o"], r["d"], r["truth"], r["signal"], alarms])
        more = None if len(self) <= 200 else f"{len(self) - 200:,} of {len(self):,} commits not shown"
        return html_table(["#", "commit", "n", "o", "d", "truth", "signal", "alarm (none/full/firstChange)"], rows,
                          caption=f"condition {self.condition}  mode {self.mode}  {self.steps} steps per test set: "
                                  f"{len(self):,} commits, {self.passes} passed",
                          marked=marked, mark_note="new test set", notes=list(self.warnings), more=more)

    @strict_json
    def to_dict(self) -> dict:
        return {
            "condition": self.condition, "mode": self.mode, "steps": self.steps, "alarm_on": self.alarm_on,
            "examples": self.examples, "required": self.required, "warnings": list(self.warnings),
            "passes": self.passes, "commits": [dict(r) for r in self.rows],
            "alarms": {a: self.alarms(a) for a in ADAPTIVITIES},
        }

    def __repr__(self) -> str:
        alarms_text = "; ".join(f"{a}: {self.alarms(a) or 'none'}" for a in ADAPTIVITIES)
        return (f"CIReplay({len(self)} commits, {self.passes} passed, mode={self.mode!r}, steps={self.steps}; "
                f"alarms after commits - {alarms_text})")


# ============================================================================ alarms
def new_testset_alarms(signal_alarm: np.ndarray, steps: int) -> np.ndarray:
    """Where a test set is retired: at a signal alarm, or after ``steps`` commits since the last alarm.

    A budget alarm resets the count like any other, so between two signal alarms the budget
    alarms fall every ``steps`` commits after the earlier one; with ``signal_alarm`` all
    False this is the ``none`` / ``full`` rule (Sections 3.2-3.3), with the firstChange
    signal it is Section 3.4's "passes the test or reaches the budget, whichever first".

    References
    ----------
    Renggli et al. 2019, Sections 3.2-3.4 (the new-testset alarm of each adaptivity).
    """
    index = np.arange(signal_alarm.size)
    last = np.maximum.accumulate(np.where(signal_alarm, index, -1))
    previous = np.concatenate([[-1], last[:-1]])  # the last signal alarm strictly before each commit
    return signal_alarm | ((index - previous) % steps == 0)


def _testsets(alarm: np.ndarray) -> np.ndarray:
    """The test set each commit used: 1 + alarms strictly before it."""
    return 1 + np.concatenate([[0], np.cumsum(alarm)[:-1]]).astype(np.int64)


# ============================================================================ the two kinds of trace
def _estimates(cond, trace: CITrace, mode: str) -> dict:
    """Every commit at once: the estimates are given per commit, ``o`` included."""
    size = len(trace)
    empty = ExactColumn.from_scaled(np.zeros(size, dtype=np.int64), 1, np.ones(size, dtype=bool))
    exact = {v: trace.columns.get(v, empty) for v in ("n", "o", "d")}
    used = list(cond.variables)
    bad = np.zeros(size, dtype=bool)
    for v in used:
        bad |= exact[v].missing
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        var = next(v for v in used if exact[v].missing[i])
        raise InputError(var, "a number in [0, 1] (the condition uses it)", None,
                         location=f"commit {i + 1} ({trace.commits[i]})")
    codes, truth, passed = evaluate_columns(cond, {v: exact[v] for v in used}, mode)
    last = np.maximum.accumulate(np.where(passed, np.arange(size), -1))
    names = np.asarray(trace.commits, dtype=object)
    active = np.where(last >= 0, names[np.maximum(last, 0)], "deployed")
    return dict(clauses=codes, truth=truth, passed=passed, active=active.tolist(), disagreements=None, exact=exact)


def _predictions(cond, trace: CITrace, mode: str) -> dict:
    """One model after another (each compared with the model the signals so far made active),
    each step vectorized over the test examples."""
    labels, preds = trace.codes()
    total = len(labels)
    correct = {k: int(np.count_nonzero(v == labels)) for k, v in preds.items()}
    nums: dict[str, list[int]] = {"n": [], "o": [], "d": []}
    active, actives, codes, truths, passed = trace.baseline, [], [], [], []
    for name in trace.commits:
        disagreements = int(np.count_nonzero(preds[name] != preds[active]))
        values = {"n": correct[name], "o": correct[active], "d": disagreements}
        cols = {v: ExactColumn.from_scaled(np.asarray([values[v]]), total) for v in cond.variables}
        c, t, ok = evaluate_columns(cond, cols, mode)
        if ok[0]:
            active = name
        for v in nums:
            nums[v].append(values[v])
        codes.append(c[:, 0])
        truths.append(t[0])
        passed.append(bool(ok[0]))
        actives.append(active)
    exact = {v: ExactColumn.from_scaled(np.asarray(nums[v], dtype=np.int64), total) for v in nums}
    return dict(clauses=np.asarray(codes, dtype=np.int8).T.reshape(len(cond.clauses), len(trace)),
                truth=np.asarray(truths, dtype=np.int8), passed=np.asarray(passed, dtype=bool), active=actives,
                disagreements=np.asarray(nums["d"], dtype=np.int64), exact=exact)


def _bound_ok(d: ExactColumn, p: float | None):
    """``(d <= p exactly, where d is absent)`` per commit, or ``(None, None)`` without a bound."""
    if p is None:
        return None, None
    bound = Fraction(str(p))
    big = d.denominator * max(bound.numerator, bound.denominator) >= 2**62 or d.numerators.dtype == object
    nums = d.numerators.astype(object) if big else d.numerators
    return np.asarray(nums * bound.denominator <= bound.numerator * d.denominator, dtype=bool), d.missing


def _columns(trace: CITrace, evaluated: dict, steps: int, alarm_on: str, p) -> dict:
    exact = evaluated.pop("exact")
    columns: dict[str, Any] = {"commit": list(trace.commits)}
    for v in ("n", "o", "d"):
        columns[v] = exact[v].floats()
    columns["present"] = {v: ~exact[v].missing for v in ("n", "o", "d")}
    columns.update(evaluated)
    columns["bound_ok"], columns["bound_missing"] = _bound_ok(exact["d"], p)
    passed = columns["passed"]
    first_change = passed if alarm_on == _PASS else ~passed
    for a in ADAPTIVITIES:
        alarm = new_testset_alarms(first_change if a == "firstChange" else np.zeros_like(passed), steps)
        columns[f"alarm_{a}"] = alarm
        columns[f"testset_{a}"] = _testsets(alarm)
    return columns


def _size_warning(trace: CITrace, plan: CIResult, adaptivity: str, steps: int) -> list:
    total = len(trace.labels)  # a predictions trace: one label per test example
    if plan.optimized is not None and total < plan.optimized:
        return [f"The trace has {total:,} test examples; the condition needs {plan.optimized:,} labels (optimized, "
                f"{adaptivity} adaptivity, {steps} steps): the reliability guarantee does not hold for these signals."]
    if plan.optimized is None and total < plan.labels:
        return [f"The trace has {total:,} test examples; the condition needs {plan.labels:,} labels ({adaptivity} "
                f"adaptivity, {steps} steps): the reliability guarantee does not hold."]
    return []


def _bound_warning(columns: dict, p) -> list:
    ok, absent = columns["bound_ok"], columns["bound_missing"]
    if ok is None:
        return []
    bad = (np.flatnonzero(~ok & ~absent) + 1).tolist()
    if not bad:
        return []
    which = (f"Commit {bad[0]} changes" if len(bad) == 1
             else f"Commits {', '.join(map(str, bad[:10]))}{' ...' if len(bad) > 10 else ''} change")
    return [f"{which} more than p = {p:g} of the predictions: the optimized (Bennett) test set is not valid for them."]


def replay_ci(condition, trace, *, mode: str = default("mode"), steps: int = default("steps"),
              reliability: float = default("reliability"), adaptivity: str = default("adaptivity"),
              difference_bound=default("difference_bound"),
              check_difference_bound: bool = default("check_difference_bound"), alarm_on: str = default("alarm_on"),
              plan: CIResult | None = None) -> CIReplay:
    """Replay a commit trace: pass/fail per commit and the new-testset alarm of each adaptivity.

    The old model ``o`` of each commit is the *active* model: the last commit that passed
    (the deployed model before that).  For an estimates trace the ``o`` column is taken as
    given.  Alarms (Sections 3.2-3.4): ``none`` and ``full`` after every ``steps`` commits
    on one test set (the budget); ``firstChange`` at the first commit whose signal is
    ``alarm_on`` (``pass``, Section 3.4; ``fail`` for the symmetric setting) or at the
    budget, whichever comes first.  Each alarm starts a new test set for that adaptivity.

    Parameters
    ----------
    condition : str or Condition
    trace : CITrace or anything :func:`~.trace.read_ci_trace` reads
    mode, steps, alarm_on
        As the condition's script (Section 2.2); ``alarm_on`` for firstChange.
    reliability, adaptivity, difference_bound, check_difference_bound
        Only for the check that a predictions trace has enough examples and the
        variance-bound check per commit.
    plan : CIResult, optional
        The :class:`~.plan.CIResult` of exactly these settings, to skip recomputing it.

    Returns
    -------
    CIReplay

    References
    ----------
    Renggli et al. 2019, Sections 3.2-3.4 (alarms), 3.5 (evaluation), 4.1.2 (disagreements).
    """
    cond = as_condition(condition)
    if not isinstance(trace, CITrace):
        trace = read_ci_trace(trace)
    mode = check_choice("mode", mode, MODES)
    steps = check_steps(steps)
    alarm_on = check_choice("alarm_on", alarm_on, ALARM_ON)
    same = plan is not None and (plan.condition, plan.mode, plan.steps, plan.adaptivity, plan.delta,
                                 plan.difference_bound) == (cond.canonical(), mode, steps, adaptivity,
                                                            delta_from_reliability(reliability),
                                                            validate_difference_bound(difference_bound))
    if plan is None or not same:
        plan = ci_labels(cond, reliability, adaptivity, steps, mode, difference_bound=difference_bound,
                         check_difference_bound=check_difference_bound)
    p = plan.variance_bound
    if trace.kind == "predictions":
        warnings = _size_warning(trace, plan, adaptivity, steps)
        evaluated = _predictions(cond, trace, mode)
    else:
        warnings, evaluated = [], _estimates(cond, trace, mode)
    columns = _columns(trace, evaluated, steps, alarm_on, p)
    warnings += _bound_warning(columns, p)
    required = {"labels": plan.labels, "optimized": plan.optimized, "adaptivity": adaptivity}
    return CIReplay(cond.canonical(), mode, steps, alarm_on, columns, trace.examples, required, tuple(warnings))
