"""The meter's counts with the exact binomial factor, and the engine's exactness and limits.

The paper's settings (ease.ml/meter, ../shared/seeds/000_*: Thm 4, Cor 1-2, Sec 5.1; m = 5,
T = 10, delta = 0.01) with Hoeffding's factor replaced by the exact binomial tail (issue 12,
following ease.ml/ci Section 4.3).  Every count is checked independently of the engine:
n - 1 violates the union bound through one candidate's tails summed in Decimal, and n and
every count two sawtooth periods above satisfy it with every candidate evaluated by
scipy.stats (not the engine's pruning nor its tail code).
"""
from __future__ import annotations

import math
import subprocess
import sys
import tracemalloc
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from meter_dashboard.bounds import meter as M
from meter_dashboard.bounds._meter_exact import decimal_log_counts, exact_count
from meter_dashboard.core.validation import InputError

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]


# --------------------------------------------------------------------------- independent checks
def brute_log_factors(n: int, eps: float, a=None) -> float:
    """log F(n, eps) with every candidate (upper breakpoints; range [0, a] and its mirror; p = a)."""
    e = Fraction(str(eps))
    c = math.ceil(2 * n * e)
    j = np.arange(math.ceil(n * e), n + 1)
    p = (j - float(n * e)) / n
    if a is not None:
        keep = (p <= a + 1e-12) | (p >= 1 - a - 1e-12)
        j, p = j[keep], p[keep]
    with np.errstate(divide="ignore"):
        upper = np.log(special.bdtrc(j - 1, n, p))  # P(X >= j); these values are far above 1e-300
        lower = np.where(j - c >= 0, np.log(special.bdtr(np.maximum(j - c, 0), n, p)), -np.inf)
    g = np.logaddexp(np.where(p > 0, upper, -np.inf), np.where(p > 0, lower, -np.inf))
    best = float(g.max())
    if a is not None:
        af = Fraction(str(a))
        best = max(best, float(np.logaddexp(stats.binom.logsf(math.ceil(n * (af + e)) - 1, n, a),
                                            stats.binom.logcdf(math.floor(n * (af - e)), n, a))))
    return best


def decimal_candidate(n: int, eps: str, j: int) -> Decimal:
    """G_j = P(X >= j) + P(X <= j - c) at p_j = j/n - eps, summed term by term in Decimal."""
    with localcontext() as ctx:
        ctx.prec = 40
        e = Decimal(eps)
        c = math.ceil(2 * n * Fraction(eps))
        p = Decimal(j) / n - e
        q = 1 - p
        mode = int(n * p)
        pmf = Decimal(math.comb(n, mode)) * p**mode * q ** (n - mode)
        total, term = Decimal(0), pmf
        for i in range(mode, n + 1):  # walk up from the mode
            if i >= j:
                total += term
            term = term * (n - i) * p / ((i + 1) * q)
        term = pmf
        for i in range(mode, -1, -1):  # and down
            if i <= j - c:
                total += term
            term = term * i * q / ((n - i + 1) * p)
        return total


def log_counts(variant: str, eps, steps=10):
    """log S_k of Thm 4 (1 model), Eq. 1 (T models) or Cor 1-2 (the meters), with their tolerances."""
    if variant in M.ADAPTIVE_VARIANTS:
        return M.log_tree_sizes(variant, len(eps), steps), eps
    return np.array([0.0 if variant == "single_model" else math.log(steps)]), eps[:1]


def check_count(variant, eps, n, a=None, delta=0.01, periods=2):
    logs, row = log_counts(variant, list(np.atleast_1d(eps)))
    row = list(np.atleast_1d(row))

    def lhs(m, exact_all):
        """eps_1's term by brute force; the others by brute force or by Hoeffding's factor (an upper bound)."""
        terms = [logs[0] + brute_log_factors(m, row[0], a)]
        for lg, e in zip(logs[1:], row[1:]):
            terms.append(lg + (brute_log_factors(m, e, a) if exact_all else math.log(2) - 2 * m * e * e))
        return float(np.logaddexp.reduce(terms))

    span = periods * math.ceil(1 / (2 * min(row)))
    for m in range(n, n + span):
        assert lhs(m, False) < math.log(delta) or lhs(m, True) < math.log(delta), f"{m} labels must satisfy it"
    below = logs[0] + brute_log_factors(n - 1, row[0], a)  # a lower bound: the other terms are >= 0
    assert below >= math.log(delta) or lhs(n - 1, True) >= math.log(delta), "n - 1 must violate it"
    return logs, row


# --------------------------------------------------------------------------- the issue's table
TABLE = [  # (variant, epsilon, Hoeffding, exact, exact with error rate <= 0.1) -- issue 12
    ("single_model", [0.01], 26_492, 16_651, 6051),
    ("incremental", NONUNIFORM, 38_005, 27_151, 9801),
    ("regular", NONUNIFORM, 100_033, 86_501, 31_351),
]


@pytest.mark.parametrize("variant,eps,hoeffding,exact,known", TABLE, ids=[t[0] for t in TABLE])
def test_table_of_issue_12(variant, eps, hoeffding, exact, known):
    assert M.labels(variant, eps, 0.01, 10) == hoeffding  # Thm 4 / Cor 2 / Cor 1 (Sec 5.1): unchanged
    assert M.labels(variant, eps, 0.01, 10, bound="binomial") == exact
    assert M.labels(variant, eps, 0.01, 10, bound="binomial", max_error_rate=0.1) == known


@pytest.mark.parametrize("variant,eps,hoeffding,exact,known", TABLE, ids=[t[0] for t in TABLE])
def test_table_counts_checked_independently(variant, eps, hoeffding, exact, known):
    check_count(variant, eps, exact)
    check_count(variant, eps, known, a=0.1)


def test_violation_below_the_one_model_count_in_decimal():
    """n = 16,650 (2 n eps = 333 exactly): one candidate near p = 1/2 already exceeds delta = 0.01."""
    n = 16_650
    j = max(range(8480, 8500), key=lambda jj: decimal_candidate(n, "0.01", jj))
    assert decimal_candidate(n, "0.01", j) >= Decimal("0.01")
    assert math.exp(brute_log_factors(16_651, 0.01)) < 0.01


def test_all_labels_binomial_matches_labels():
    both = M.all_labels(NONUNIFORM, 0.01, 10, bound="binomial")
    assert both == {v: M.labels(v, NONUNIFORM, 0.01, 10, bound="binomial") for v in M.VARIANTS}
    assert both["resampling"] == 10 * both["no_adaptivity"]
    assert both["incremental"] <= both["regular"]


def test_binomial_curve_equals_scalar_calls():
    curve = M.labels("incremental", NONUNIFORM, 0.01, np.arange(1, 6), bound="binomial")
    assert curve.tolist() == [M.labels("incremental", NONUNIFORM, 0.01, t, bound="binomial") for t in range(1, 6)]
    assert np.all(np.diff(curve) >= 0)


# --------------------------------------------------------------------------- properties
small_eps = st.lists(st.sampled_from([0.05, 0.08, 0.1, 0.15, 0.2]), min_size=1, max_size=3).map(sorted)


@settings(max_examples=25, deadline=None)
@given(eps=small_eps, delta=st.sampled_from([0.001, 0.01, 0.05, 0.2]), steps=st.integers(1, 12),
       variant=st.sampled_from(M.VARIANTS))
def test_binomial_never_needs_more_than_hoeffding(eps, delta, steps, variant):
    assert M.labels(variant, eps, delta, steps, bound="binomial") <= M.labels(variant, eps, delta, steps)


@settings(max_examples=20, deadline=None)
@given(eps=small_eps, delta=st.sampled_from([0.001, 0.01, 0.1]), steps=st.integers(1, 8),
       variant=st.sampled_from(["single_model", "no_adaptivity", "regular", "incremental"]),
       rates=st.lists(st.sampled_from([0.05, 0.1, 0.2, 0.3, 0.45]), min_size=2, max_size=2))
def test_restricted_count_falls_as_the_range_narrows(eps, delta, steps, variant, rates):
    lo, hi = sorted(rates)
    narrow = M.labels(variant, eps, delta, steps, bound="binomial", max_error_rate=lo)
    wide = M.labels(variant, eps, delta, steps, bound="binomial", max_error_rate=hi)
    assert narrow <= wide <= M.labels(variant, eps, delta, steps, bound="binomial")


@settings(max_examples=20, deadline=None)
@given(eps=small_eps, delta=st.sampled_from([0.001, 0.01, 0.05]), factor=st.sampled_from([1.5, 3.0, 10.0]),
       steps=st.integers(1, 8), variant=st.sampled_from(M.VARIANTS), a=st.sampled_from([None, 0.1]))
def test_binomial_count_monotone_in_delta_and_steps(eps, delta, factor, steps, variant, a):
    kw = dict(bound="binomial", max_error_rate=a)
    n = M.labels(variant, eps, delta, steps, **kw)
    assert M.labels(variant, eps, delta * factor, steps, **kw) <= n
    assert M.labels(variant, eps, delta, steps + 1, **kw) >= n


# --------------------------------------------------------------------------- inverse questions
def test_binomial_inverse_questions_at_the_count():
    n = M.labels("single_model", 0.01, 0.01, 1, bound="binomial")
    assert M.failure_probability("single_model", n, 0.01, 1, bound="binomial") < 0.01
    assert M.failure_probability("single_model", n - 1, 0.01, 1, bound="binomial") >= 0.01
    assert M.max_steps("single_model", n, 0.01, 0.01, bound="binomial") == 1
    assert M.max_steps("single_model", n - 1, 0.01, 0.01, bound="binomial") == 0


@pytest.mark.parametrize("variant", M.VARIANTS)
def test_binomial_inverses_beat_hoeffding_and_are_consistent(variant):
    budget = 60_000
    e_h = float(M.min_epsilon(variant, budget, NONUNIFORM, 0.01, 10))
    e_b = float(M.min_epsilon(variant, budget, NONUNIFORM, 0.01, 10, bound="binomial"))
    assert e_b <= e_h
    up, down = np.array(NONUNIFORM) * e_b / 0.01 * (1 + 1e-6), np.array(NONUNIFORM) * e_b / 0.01 * (1 - 1e-6)
    assert M.failure_probability(variant, budget, up, 10, bound="binomial") < 0.01
    assert M.failure_probability(variant, budget, down, 10, bound="binomial") >= 0.01
    t_h = M.max_steps(variant, budget, NONUNIFORM, 0.01)
    t_b = M.max_steps(variant, budget, NONUNIFORM, 0.01, bound="binomial")
    assert t_b >= t_h
    if variant not in ("single_model", "resampling") and t_b != math.inf:
        assert M.failure_probability(variant, budget, NONUNIFORM, t_b, bound="binomial") < 0.01
        assert M.failure_probability(variant, budget, NONUNIFORM, t_b + 1, bound="binomial") >= 0.01


def test_binomial_inverse_questions_broadcast_like_hoeffding():
    budgets = np.array([20_000, 60_000])
    got = M.failure_probability("regular", budgets, NONUNIFORM, 10, bound="binomial")
    assert got.shape == (2,) and got[1] < got[0]
    assert got[1] == M.failure_probability("regular", 60_000, NONUNIFORM, 10, bound="binomial")
    eps = M.min_epsilon("single_model", budgets, NONUNIFORM, 0.01, 10, bound="binomial")
    assert eps.shape == (2,) and eps[1] == M.min_epsilon("single_model", 60_000, NONUNIFORM, 0.01, 10, bound="binomial")
    steps = M.failure_probability("regular", 90_000, NONUNIFORM, np.array([5, 10]), bound="binomial")
    assert steps[0] < steps[1] < 0.01


def test_bound_arguments_are_checked():
    with pytest.raises(InputError, match="bound must be one of 'hoeffding', 'binomial'"):
        M.labels("regular", NONUNIFORM, 0.01, 10, bound="chernoff")
    with pytest.raises(InputError, match="max_error_rate must be left empty unless bound='binomial'"):
        M.labels("regular", NONUNIFORM, 0.01, 10, max_error_rate=0.1)
    with pytest.raises(InputError, match="max_error_rate must be in"):
        M.all_labels(NONUNIFORM, 0.01, 10, bound="binomial", max_error_rate=1.5)


# --------------------------------------------------------------------------- issue 15: exact or refused
def test_huge_steps_are_refused_naming_steps():
    """``plan --epsilon 0.01 --signals 1000 --delta 0.01 --steps 1e18`` printed -9223372036854775808."""
    with pytest.raises(InputError) as info:
        M.all_labels(0.01, 0.01, 10**18, signals=1000)
    assert info.value.parameter == "steps" and "at most 1e+15 labels" in str(info.value)
    for steps in (10**18, 2**64 + 1, 18446744073709551617, 1e300):
        with pytest.raises(InputError) as info:
            M.labels("regular", 0.01, 0.01, steps, signals=1000)
        assert info.value.parameter == "steps"


@pytest.mark.parametrize("steps", [10**18, 2**64 + 1, 1e300])
def test_huge_steps_incremental_count_is_exact(steps):
    """The incremental meter grows like log T: a finite count, checked in Decimal (n yes, n - 1 no)."""
    n = M.labels("incremental", 0.01, 0.01, steps, signals=5)
    assert isinstance(n, int) and 0 < n <= M.LABELS_CAP
    logs = decimal_log_counts("incremental", 5, int(steps))
    assert exact_count(logs, [0.01] * 5, 0.01, n + 1000) == n


@pytest.mark.parametrize("eps,delta", [(1e-300, 1e-300), (1e-300, 0.01), (1e-8, 0.01)])
def test_tiny_epsilon_is_refused_naming_epsilon(eps, delta):
    for variant in M.VARIANTS:
        with pytest.raises(InputError) as info:
            M.labels(variant, eps, delta, 10)
        assert info.value.parameter == "epsilon" and "at least" in str(info.value)


def test_tiny_delta_still_counts():
    n = M.labels("single_model", 0.01, 1e-300, 10)
    assert n == math.floor(math.log(2 / 1e-300) / (2 * 0.01**2)) + 1


def test_extreme_inverse_questions_do_not_raise_anything_else():
    assert M.failure_probability("regular", 100, 1e-300, 10) >= 1
    assert 0 < float(M.min_epsilon("regular", 10**6, 1e-300, 1e-300, 10)) < 1
    assert M.max_steps("regular", 10**6, 1e-300, 1e-300) == 0
    assert M.max_steps("incremental", 10**12, 0.01, 0.01, signals=5) == math.inf


def test_cli_refuses_with_one_line_and_exit_2():
    out = subprocess.run([sys.executable, "-m", "meter_dashboard", "plan", "--epsilon", "0.01", "--signals", "1000",
                          "--delta", "0.01", "--steps", "1e18"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "-9223372036854775808" not in out.stdout
    assert len(out.stderr.strip().splitlines()) == 1 and "steps" in out.stderr


def test_decimal_path_reproduces_the_float_path(monkeypatch):
    """Force every count through Decimal: the published numbers come out the same."""
    expected = M.all_labels(NONUNIFORM, 0.01, 10, reverts=[1, 2, 3])
    monkeypatch.setattr(M, "float_is_certain", lambda *args: False)
    assert M.all_labels(NONUNIFORM, 0.01, 10, reverts=[1, 2, 3]) == expected
    assert M.labels("regular", NONUNIFORM, 0.01, 10, tenant_steps=[5, 5]) == 63_261
    assert M.labels("incremental", 0.01, 0.01, 10, signals=5) == 66_527


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 6), steps=st.integers(1, 60), eps=st.floats(0.003, 0.3), delta=st.floats(1e-12, 0.5),
       variant=st.sampled_from(M.VARIANTS))
def test_decimal_counts_agree_with_float_counts(m, steps, eps, delta, variant):
    n = M.labels(variant, eps, delta, steps, signals=m)
    per_set = n // steps if variant == "resampling" else n
    logs = decimal_log_counts(variant, m, steps)
    assert exact_count(logs, [eps] * (m if variant in M.ADAPTIVE_VARIANTS else 1), delta, per_set + 3) == per_set


# --------------------------------------------------------------------------- issue 13: memory
def test_long_curve_memory_is_linear_and_small():
    """Each variant keeps its own width and long curves go in chunks (was every variant widened to m)."""
    eps = np.linspace(0.01, 0.05, 50)
    tracemalloc.start()
    try:
        out = M.all_labels(eps, 0.01, np.arange(1, 20_001))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 48 * 2**20, peak
    assert out["regular"][9] == M.labels("regular", eps, 0.01, 10)
    assert np.all(np.diff(out["incremental"]) >= 0)
