"""Evaluating an ease.ml/ci condition on estimates: interval arithmetic, exact, vectorized.

- :func:`evaluate` - one commit's estimates n-hat, o-hat, d-hat: True / False / Unknown
  per clause, the conjunction, and the pass/fail signal of a mode (Section 3.5,
  Appendix A.2).
- :class:`ExactColumn` and :func:`evaluate_columns` - the same rule for a whole commit
  history at once: each estimate is an exact rational ``numerator / denominator`` held as
  integers (int64 while every intermediate provably fits, Python integers otherwise), so
  a boundary such as ``0.11 - 0.01 = 0.1`` is decided exactly, as with fractions, at
  numpy speed.

References
----------
.. [1] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Section 3.5 (evaluation of a condition with confidence
   intervals), Appendix A.2 (True / False / Unknown, fp-free and fn-free).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core.formatting import strict_json
from ..core.validation import InputError, format_value, parse_exact_decimal, raw
from .grammar import Clause, Condition, format_number
from .inputs import MODES, as_condition, check_choice

__all__ = [
    "RESULT_TRUE",
    "RESULT_FALSE",
    "RESULT_UNKNOWN",
    "TRUTHS",
    "exact_estimate",
    "ExactColumn",
    "ClauseEvaluation",
    "Evaluation",
    "evaluate",
    "evaluate_columns",
]

RESULT_TRUE, RESULT_FALSE, RESULT_UNKNOWN = "True", "False", "Unknown"
#: Truth codes of :func:`evaluate_columns`: ``TRUTHS[code]`` is the truth's name.
TRUTHS = (RESULT_FALSE, RESULT_TRUE, RESULT_UNKNOWN)
_FALSE, _TRUE, _UNKNOWN = 0, 1, 2

#: Integers stay int64 while every intermediate is below this (else Python integers).
_INT64_SAFE = 2**62
#: Floats hold every integer up to 2**53: numerators and denominators below it convert exactly.
_FLOAT_EXACT = 2**53
_RULE = "a number in [0, 1]"


def exact_estimate(name: str, value, location: str | None = None) -> Fraction:
    """An estimate in [0, 1] as an exact rational (floats via their shortest repr: 0.11 is 11/100).

    Text goes through :func:`~meter_dashboard.core.validation.parse_exact_decimal`, so its size
    and digits are bounded before any arithmetic (``1e30000000`` and ``inf`` are refused).

    References
    ----------
    Renggli et al. 2019, Section 3.5 (estimates n-hat, o-hat, d-hat).
    """
    if isinstance(value, Fraction):
        result = value
    elif isinstance(value, (bool, np.bool_)) or value is None:
        raise InputError(name, _RULE, value, location=location)
    elif isinstance(value, (int, np.integer)):
        result = Fraction(int(value))
    else:
        text = value if isinstance(value, str) else str(value)
        try:
            result = parse_exact_decimal(name, text, location=location)
        except InputError as exc:  # not a number, not finite, too long, too many digits, absurd size
            detail = exc.rule.replace("a decimal number", "").strip()
            rule = _RULE if detail in ("", "(finite)") else f"{_RULE}, {detail}"
            raise InputError(name, rule, value, location=location) from None
    if not (0 <= result <= 1):
        raise InputError(name, _RULE, raw(format_value(value) if not isinstance(value, Fraction)
                                          else format_number(value)), location=location)
    return result


@dataclass(frozen=True)
class ExactColumn:
    """Exact values ``numerators[i] / denominator`` in [0, 1], one per commit; ``missing`` where absent.

    ``numerators`` is int64 when the denominator is at most 2**53 (then every value and
    its float conversion are exact), else an object array of Python integers.

    References
    ----------
    Renggli et al. 2019, Section 3.5 (decided exactly, as with fractions).
    """

    numerators: np.ndarray
    denominator: int
    missing: np.ndarray

    @classmethod
    def from_fractions(cls, values) -> ExactColumn:
        """From a sequence of :class:`~fractions.Fraction` (or None where missing)."""
        values = list(values)
        missing = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
        den = math.lcm(*(v.denominator for v in values if v is not None)) if (~missing).any() else 1
        nums = [0 if v is None else v.numerator * (den // v.denominator) for v in values]
        return cls(_int_array(nums, den), den, missing)

    @classmethod
    def from_scaled(cls, numerators, denominator: int, missing=None) -> ExactColumn:
        """From integer numerators over one common denominator."""
        nums = np.asarray(numerators)
        if missing is None:
            missing = np.zeros(nums.shape, dtype=bool)
        return cls(_int_array(nums, denominator), int(denominator), np.asarray(missing, dtype=bool))

    def __len__(self) -> int:
        return len(self.missing)

    def fraction(self, i: int) -> Fraction | None:
        """Value ``i`` as a :class:`~fractions.Fraction` (None where missing)."""
        return None if self.missing[i] else Fraction(int(self.numerators[i]), self.denominator)

    def floats(self) -> np.ndarray:
        """Correctly rounded floats (NaN where missing), as ``float(Fraction(...))`` would give."""
        if self.numerators.dtype == object:
            out = np.array([n / self.denominator for n in self.numerators.tolist()], dtype=float)
        else:  # both below 2**53: exact conversions, one correctly rounded division
            out = self.numerators.astype(float) / float(self.denominator)
        out[self.missing] = np.nan
        return out

    def take(self, index) -> ExactColumn:
        """The values at ``index`` (an integer array)."""
        return ExactColumn(self.numerators[index], self.denominator, self.missing[index])


def _int_array(nums, den: int) -> np.ndarray:
    if den <= _FLOAT_EXACT:
        return np.asarray(nums, dtype=np.int64)
    out = np.empty(len(nums), dtype=object)
    out[:] = [int(n) for n in nums]
    return out


@dataclass(frozen=True)
class ClauseEvaluation:
    """One clause evaluated on interval estimates (Section 3.5)."""

    clause: str
    estimate: Fraction
    low: Fraction
    high: Fraction
    truth: str

    @strict_json
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

    @strict_json
    def to_dict(self) -> dict:
        return {"truth": self.truth, "mode": self.mode, "signal": self.signal,
                "clauses": [c.to_dict() for c in self.clauses]}

    def __repr__(self) -> str:
        parts = ", ".join(f"{c.clause!r}: {c.truth} [{float(c.low):.4g}, {float(c.high):.4g}]" for c in self.clauses)
        return f"Evaluation({self.signal}: {self.truth} in {self.mode} mode; {parts})"


# ============================================================================ the interval rule, vectorized
def _interval(clause: Clause, columns: dict) -> tuple:
    """``(estimate, low, high, M)``: the left side's point value and interval as integer arrays over M.

    Each estimate ``v = N / D`` becomes ``[max(0, v - t), min(1, v + t)]`` with
    ``t = eps / W`` its share of the tolerance; with ``E = D * t.denominator`` the ends are
    integers over E, and the terms ``a_v [lo, hi]`` are brought to the common denominator M.
    """
    t = clause.tolerance / clause.weight
    parts, bound = [], 0
    for var, a in clause.coefficients:
        col = columns[var]
        e = col.denominator * t.denominator
        parts.append((a, col, e, t.numerator * col.denominator))
    m = math.lcm(*(a.denominator * e for a, _, e, _ in parts))
    for a, col, e, s in parts:
        bound += abs(a.numerator) * (m // (a.denominator * e)) * (e + s)
    c = clause.threshold
    big = max(bound * c.denominator, abs(c.numerator) * m) >= _INT64_SAFE
    est = low = high = 0
    for a, col, e, s in parts:
        x = col.numerators.astype(object) if big else col.numerators
        x = x * t.denominator  # v over E
        lo, hi = np.maximum(x - s, 0), np.minimum(x + s, e)
        scale = a.numerator * (m // (a.denominator * e))
        est = est + scale * x
        if a >= 0:
            low, high = low + scale * lo, high + scale * hi
        else:
            low, high = low + scale * hi, high + scale * lo
    return est, low, high, m


def _truth(clause: Clause, low, high, m: int) -> np.ndarray:
    """Truth codes: ``... > c`` True when low > c, False when high <= c (``<`` symmetrically)."""
    c = clause.threshold
    cn, cd = c.numerator * m, c.denominator
    low_c, high_c = low * cd, high * cd
    if clause.comparison == ">":
        true, false = low_c > cn, high_c <= cn
    else:
        true, false = high_c < cn, low_c >= cn
    return np.where(true, _TRUE, np.where(false, _FALSE, _UNKNOWN)).astype(np.int8)


def evaluate_columns(condition, columns: dict, mode: str) -> tuple:
    """Evaluate a condition on many commits at once.

    Parameters
    ----------
    condition : str or Condition
    columns : dict
        variable -> :class:`ExactColumn` for every variable the condition uses (no missing
        values in them).
    mode : {'fp-free', 'fn-free'}

    Returns
    -------
    (clause_truths, truth, passed)
        ``clause_truths`` an int8 array (clauses x commits) of codes into :data:`TRUTHS`,
        ``truth`` the conjunction's codes, ``passed`` the signal as booleans.

    References
    ----------
    Renggli et al. 2019, Section 3.5 and Appendix A.2 (the same rule as :func:`evaluate`).
    """
    cond = as_condition(condition)
    mode = check_choice("mode", mode, MODES)
    codes = np.asarray([_truth(c, *_interval(c, columns)[1:]) for c in cond.clauses], dtype=np.int8)
    truth = np.where((codes == _FALSE).any(axis=0), _FALSE,
                     np.where((codes == _TRUE).all(axis=0), _TRUE, _UNKNOWN)).astype(np.int8)
    passed = (truth == _TRUE) | ((truth == _UNKNOWN) & (mode == "fn-free"))
    return codes, truth, passed


def evaluate(condition, n=None, o=None, d=None, mode: str = "fp-free", *, location: str | None = None) -> Evaluation:
    """Evaluate a condition on estimates n-hat, o-hat, d-hat (Section 3.5, Appendix A.2).

    Each estimate ``v`` becomes the interval ``[v - eps_v, v + eps_v]`` (clipped to [0, 1],
    where the true value lies), ``eps_v = eps / W`` being its share of the clause's
    tolerance; interval arithmetic gives the left side's interval ``[low, high]``.  A
    clause ``... > c`` is True when ``low > c``, False when ``high <= c``, Unknown otherwise
    (``<`` symmetrically).  The conjunction is False if any clause is False, True if all
    are True, else Unknown; ``fp-free`` maps Unknown to fail, ``fn-free`` to pass.
    Arithmetic is exact (rationals), so boundaries are decided correctly.

    References
    ----------
    Renggli et al. 2019, Section 3.5 and Appendix A.2.

    Examples
    --------
    Appendix A.2 (``x < 0.1 +/- 0.01``):

    >>> evaluate("d < 0.1 +/- 0.01", d=0.12).truth, evaluate("d < 0.1 +/- 0.01", d=0.08).truth
    ('False', 'True')
    >>> e = evaluate("d < 0.1 +/- 0.01", d=0.105, mode="fn-free"); (e.truth, e.signal)
    ('Unknown', 'pass')
    """
    cond: Condition = as_condition(condition)
    mode = check_choice("mode", mode, MODES)
    given = {"n": n, "o": o, "d": d}
    columns = {}
    for var in cond.variables:
        if given[var] is None:
            raise InputError(var, "a number in [0, 1] (the condition uses it)", None, location=location)
        columns[var] = ExactColumn.from_fractions([exact_estimate(var, given[var], location)])
    results = []
    for clause in cond.clauses:
        est, low, high, m = _interval(clause, columns)
        code = int(_truth(clause, low, high, m)[0])
        results.append(ClauseEvaluation(clause.canonical(), Fraction(int(est[0]), m), Fraction(int(low[0]), m),
                                        Fraction(int(high[0]), m), TRUTHS[code]))
    codes = [TRUTHS.index(r.truth) for r in results]
    truth = _FALSE if _FALSE in codes else (_TRUE if all(c == _TRUE for c in codes) else _UNKNOWN)
    return Evaluation(tuple(results), TRUTHS[truth], mode)
