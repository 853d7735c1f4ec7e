"""The meter label-count engine against the paper's numbers, exact arithmetic and properties.

Source of every expected number: Hubis, Wu & Zhang, "Quantitative Overfitting Management
for Human-in-the-loop ML Application Development with ease.ml/meter" (2019), in
../shared/seeds/000_*.txt; the section/equation is given beside each value.
"""
from __future__ import annotations

import itertools
import math
import warnings
from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.special import comb, logsumexp

from meter_dashboard.bounds import meter as M
from meter_dashboard.bounds._numeric import log_binom, log_geometric_count, log_sum_exp
from meter_dashboard.core.validation import InputError

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]

# (variant, epsilon, delta, steps, kwargs, expected, source)
PUBLISHED = [
    ("single_model", 0.01, 0.01, 10, {}, 26_492, "A.2.1 (Thm 4): eps = delta = 0.01 -> 26,492"),
    ("single_model", 0.1, 0.05, 10, {}, 185, "A.2.1 (Thm 4): eps = 0.1, delta = 0.05 -> 185"),
    ("no_adaptivity", 0.01, 0.01, 10, {}, 38_005, "Eq. 1, Sec 4.1 / A.2.2: 38K"),
    ("resampling", 0.01, 0.01, 10, {}, 380_050, "Eq. 2, Sec 4.1 / A.2.3: 380K = 10 x 38,005"),
    ("regular", 0.01, 0.01, 10, {"signals": 5}, 108_080, "Thm 1 / Eq. 3, Sec 4.3: 108K"),
    ("incremental", 0.01, 0.01, 10, {"signals": 5}, 66_527, "Thm 2 / Eq. 4, Sec 4.4: 66K"),
    ("regular", NONUNIFORM, 0.01, 10, {}, 100_033, "Cor 1 / Eq. 5, Sec 5.1: 100K"),
    ("incremental", NONUNIFORM, 0.01, 10, {}, 38_005, "Cor 2 / Eq. 6, Sec 5.1: 38K"),
    ("regular", NONUNIFORM, 0.01, 10, {"reverts": [1, 2, 3]}, 75_892, "Eqs. 13-14, Sec 5.3: 76K"),
    ("regular", NONUNIFORM, 0.01, 10, {"tenant_steps": [5, 5]}, 63_261,
     "Eq. 9 / Eq. 29 (the text's 71K disagrees with its own equations)"),
]


@pytest.mark.parametrize("variant,eps,delta,steps,kw,expected,source", PUBLISHED,
                         ids=[f"{p[0]}-{p[5]}" for p in PUBLISHED])
def test_published_numbers(variant, eps, delta, steps, kw, expected, source):
    assert M.labels(variant, eps, delta, steps, **kw) == expected, source


def test_all_labels_matches_each_variant():
    batch = M.all_labels(NONUNIFORM, 0.01, 10)
    assert batch == {v: M.labels(v, NONUNIFORM, 0.01, 10) for v in M.VARIANTS}


def test_two_equal_tenants_match_equation_29_and_explicit_steps():
    # Eq. 29 with l = 2 equal tenants is the same sum as tenant_steps = (5, 5).
    assert M.labels("regular", NONUNIFORM, 0.01, 10, tenants=2) == 63_261
    assert M.labels("incremental", NONUNIFORM, 0.01, 10, tenants=2) == \
        M.labels("incremental", NONUNIFORM, 0.01, 10, tenant_steps=[5, 5])


def test_values_the_text_quotes_in_thousands():
    """The text rounds to thousands; our exact counts must round to (within 1K of) the quotes."""
    quotes = [
        # Sec 6.3 / Fig. 13: nonuniform incremental, T = 8: "25K labels ... reliability 0.9"
        (M.labels("incremental", NONUNIFORM, 0.1, 8), 25_000),
        # Sec 6.3: "... even when reliability increases to 0.99, it would require just 37K"
        (M.labels("incremental", NONUNIFORM, 0.01, 8), 37_000),
        # Sec 3.3: eps = 0.01, delta = 0.1, T = 8: "incremental ... 50K ... regular 80K" (m = 5)
        (M.labels("incremental", 0.01, 0.1, 8, signals=5), 50_000),
        (M.labels("regular", 0.01, 0.1, 8, signals=5), 80_000),
    ]
    for exact, quoted in quotes:
        assert abs(exact - quoted) < 1_000, (exact, quoted)


# --------------------------------------------------------------------------- exact arithmetic
getcontext().prec = 60


def _exact_counts(variant, m, steps, tenant_steps=None, reverts=()):
    """Per-signal tree sizes as exact Python integers (Eqs. 13, 15, 27, Appendix B)."""
    chains = list(tenant_steps) if tenant_steps else [steps]
    reverts = list(reverts)
    counts = [0] * m
    start = 0
    for length in chains:
        mine = [t - start for t in reverts if start < t <= start + length]
        shifted = [t - i for i, t in enumerate(mine)]
        rest = length - len(mine)
        for k in range(1, m + 1):
            if variant == "regular":
                c = (m**rest - 1) // (m - 1) if m > 1 else rest
                c += sum(m ** (s - 1) for s in shifted)
            else:
                c = math.comb(k + rest - 1, k) + sum(math.comb(k + s - 2, k - 1) for s in shifted)
            counts[k - 1] += c
        start += length
    return counts


def _exact_lhs(counts, eps, n):
    return sum(Decimal(2 * c) * (Decimal(-2 * n) * Decimal(e) ** 2).exp() for c, e in zip(counts, eps))


def _check_exact(variant, eps, delta, steps, **kw):
    n = M.labels(variant, eps, delta, steps, **kw)
    counts = _exact_counts(variant, len(eps), steps, kw.get("tenant_steps"), kw.get("reverts", ()))
    d = Decimal(delta)
    assert _exact_lhs(counts, eps, n) < d, "n must satisfy the strict inequality"
    assert _exact_lhs(counts, eps, n - 1) >= d, "n - 1 must not"


@pytest.mark.parametrize("variant", ["regular", "incremental"])
@pytest.mark.parametrize("case", [
    dict(eps=NONUNIFORM, delta=0.01, steps=10),
    dict(eps=[0.01] * 5, delta=0.01, steps=10),
    dict(eps=NONUNIFORM, delta=0.01, steps=10, reverts=[1, 2, 3]),
    dict(eps=NONUNIFORM, delta=0.01, steps=10, tenant_steps=[5, 5]),
    dict(eps=[0.02, 0.05, 0.1], delta=0.001, steps=30, tenant_steps=[10, 7, 13], reverts=[2, 12, 13, 25]),
])
def test_exact_integer_against_decimal_arithmetic(variant, case):
    case = dict(case)
    _check_exact(variant, case.pop("eps"), case.pop("delta"), case.pop("steps"), **case)


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 8),
    steps=st.integers(1, 40),
    base=st.floats(0.005, 0.2),
    growth=st.lists(st.floats(0, 0.05), min_size=8, max_size=8),
    delta=st.floats(1e-9, 0.5),
    variant=st.sampled_from(["regular", "incremental"]),
)
def test_exact_integer_property(m, steps, base, growth, delta, variant):
    eps = list(np.minimum(base + np.cumsum([0] + growth[: m - 1]), 0.9))
    _check_exact(variant, eps, delta, steps)


@pytest.mark.parametrize("variant", ["single_model", "no_adaptivity", "resampling"])
@settings(max_examples=40, deadline=None)
@given(eps=st.floats(1e-3, 0.5), delta=st.floats(1e-12, 0.9), steps=st.integers(1, 10_000))
def test_closed_form_baselines_exact(variant, eps, delta, steps):
    # Thm 4 / Eq. 1 / Eq. 2: n is the smallest integer with c * exp(-2 n eps^2) < delta.
    c = 2 if variant == "single_model" else 2 * steps
    x = (Decimal(c) / Decimal(delta)).ln() / (2 * Decimal(eps) ** 2)
    per_set = int(x) + 1  # floor + 1: the strict inequality
    expected = per_set * (steps if variant == "resampling" else 1)
    assert M.labels(variant, eps, delta, steps) == expected


@settings(max_examples=60, deadline=None)
@given(m=st.integers(2, 12), steps=st.integers(1, 60), eps=st.floats(0.003, 0.3), delta=st.floats(1e-10, 0.5))
def test_uniform_inputs_match_closed_forms_eq3_eq4(m, steps, eps, delta):
    # Eq. 3: n > ln(2 |T(m,T)| / delta) / (2 eps^2), |T| = m (m^T - 1) / (m - 1)   (Thm 1)
    # Eq. 4: n > ln(2 (C(m+T, m) - 1) / delta) / (2 eps^2)                         (Thm 2)
    e2 = 2 * Decimal(eps) ** 2
    regular = int((Decimal(2 * m * (m**steps - 1) // (m - 1)) / Decimal(delta)).ln() / e2) + 1
    incremental = int((Decimal(2 * (math.comb(m + steps, m) - 1)) / Decimal(delta)).ln() / e2) + 1
    assert M.labels("regular", eps, delta, steps, signals=m) == regular
    assert M.labels("incremental", eps, delta, steps, signals=m) == incremental


# --------------------------------------------------------------------------- tree sizes by enumeration
@pytest.mark.parametrize("m,steps", [(2, 3), (3, 4), (4, 5), (5, 4)])
def test_tree_sizes_by_enumerating_histories(m, steps):
    """Count the possible submissions per signal by listing every signal history."""
    regular = [0] * m
    incremental = [0] * m
    for t in range(1, steps + 1):
        # a node at depth t is a history of t - 1 earlier signals; it is counted against
        # the signal it will itself receive (regular: any of m; incremental: the running max)
        for history in itertools.product(range(1, m + 1), repeat=t):
            regular[history[-1] - 1] += 1 if t == 1 else 0
        # regular meter: m**(t-1) distinct predecessors, each node can receive each signal
        for k in range(m):
            regular[k] += m ** (t - 1) if t > 1 else 0
        # incremental meter: distinct non-decreasing histories ending in k
        seen = {tuple(itertools.accumulate(h, max)) for h in itertools.product(range(1, m + 1), repeat=t)}
        for h in seen:
            incremental[h[-1] - 1] += 1
    got_r = np.exp(M.log_tree_sizes("regular", m, steps))
    got_i = np.exp(M.log_tree_sizes("incremental", m, steps))
    np.testing.assert_allclose(got_r, regular, rtol=1e-12)
    np.testing.assert_allclose(got_i, incremental, rtol=1e-12)
    # Thm 2 / Eq. 28: the whole incremental tree has C(m + T, m) - 1 nodes
    assert round(sum(incremental)) == math.comb(m + steps, m) - 1


def test_revert_tree_sizes_match_eq13_eq15():
    m, steps, reverts = 5, 10, [1, 2, 3]
    got_r = np.exp(M.log_tree_sizes("regular", m, steps, reverts=reverts))
    got_i = np.exp(M.log_tree_sizes("incremental", m, steps, reverts=reverts))
    np.testing.assert_allclose(got_r, _exact_counts("regular", m, steps, reverts=reverts), rtol=1e-12)
    np.testing.assert_allclose(got_i, _exact_counts("incremental", m, steps, reverts=reverts), rtol=1e-12)
    # Eq. 13 by hand: (5^7 - 1)/4 + 3 * 5^0 = 19,534 for every k
    np.testing.assert_allclose(got_r, 19_534, rtol=1e-12)


# --------------------------------------------------------------------------- numerics
def test_log_binom_accurate_when_n_much_larger_than_k():
    for n, k in [(10, 3), (1_000, 5), (100_000, 100), (10**9, 7)]:
        exact = math.log(math.comb(n, k))
        assert abs(log_binom(n, k) - exact) <= 1e-12 * max(1.0, exact)
    assert log_binom(3, 5) == -np.inf


def test_log_geometric_count():
    assert log_geometric_count(5, 10) == pytest.approx(math.log((5**10 - 1) / 4), rel=1e-14)
    assert log_geometric_count(1, 7) == pytest.approx(math.log(7))
    assert log_geometric_count(3, 0) == -np.inf
    big = log_geometric_count(100, 100_000)
    assert np.isfinite(big) and big == pytest.approx(100_000 * math.log(100) - math.log(99), rel=1e-12)


def test_log_sum_exp_matches_scipy():
    rng = np.random.default_rng(0)
    a = rng.normal(scale=300, size=(7, 9))
    a[0, :] = -np.inf
    a[1, 3] = -np.inf
    np.testing.assert_allclose(log_sum_exp(a), logsumexp(a, axis=-1))


def test_extreme_parameters_stay_finite_and_exact():
    """T = 100,000, m = 100, eps = 1e-4, delta = 1e-12: no overflow, NaN or inf."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counts = M.all_labels(1e-4, 1e-12, 100_000, signals=100)
    for v, n in counts.items():
        assert isinstance(n, int) and 0 < n < 2**62, v
    # regular: n = floor(ln(2 |T| / delta) / (2 eps^2)) + 1 with |T| = m (m^T - 1)/(m - 1)
    log_tree = 100_000 * math.log(100) + math.log(100 / 99)  # m^T - 1 ~ m^T at this size
    x = (math.log(2) + log_tree - math.log(1e-12)) / (2 * 1e-8)
    assert abs(counts["regular"] - (math.floor(x) + 1)) <= 1
    assert counts["no_adaptivity"] <= counts["incremental"] <= counts["regular"]
    curve = M.all_labels(1e-4, 1e-12, np.array([1, 10, 1_000, 100_000]), signals=100, tenants=3,
                         reverts=[1, 2, 3])
    for v in M.VARIANTS:
        assert np.all(np.diff(curve[v]) >= 0)


# --------------------------------------------------------------------------- properties
eps_vectors = st.integers(1, 8).flatmap(
    lambda m: st.lists(st.floats(0.002, 0.3), min_size=m, max_size=m).map(sorted))


@settings(max_examples=80, deadline=None)
@given(eps=eps_vectors, delta=st.floats(1e-8, 0.5), steps=st.integers(1, 300))
def test_orderings_between_variants(eps, delta, steps):
    c = M.all_labels(eps, delta, steps)
    assert c["incremental"] <= c["regular"]
    assert c["no_adaptivity"] <= c["incremental"]
    assert c["single_model"] <= c["no_adaptivity"] <= c["resampling"]


@settings(max_examples=60, deadline=None)
@given(eps=eps_vectors, delta=st.floats(1e-8, 0.5), steps=st.integers(1, 200),
       variant=st.sampled_from(M.VARIANTS))
def test_counts_never_fall_as_steps_grow(eps, delta, steps, variant):
    ts = np.arange(1, steps + 2)
    curve = M.labels(variant, eps, delta, ts)
    assert np.all(np.diff(curve) >= 0)
    assert curve[-2] == M.labels(variant, eps, delta, steps)  # the curve equals scalar calls


@settings(max_examples=60, deadline=None)
@given(eps=eps_vectors, delta=st.floats(1e-8, 0.4), factor=st.floats(1.0, 2.4), steps=st.integers(1, 100),
       variant=st.sampled_from(M.VARIANTS))
def test_counts_never_rise_as_delta_grows(eps, delta, factor, steps, variant):
    assert M.labels(variant, eps, delta * factor, steps) <= M.labels(variant, eps, delta, steps)


@settings(max_examples=60, deadline=None)
@given(eps=eps_vectors, which=st.integers(0, 7), bump=st.floats(0, 0.1), delta=st.floats(1e-8, 0.5),
       steps=st.integers(1, 100), variant=st.sampled_from(M.VARIANTS))
def test_counts_never_rise_as_any_epsilon_grows(eps, which, bump, delta, steps, variant):
    k = which % len(eps)
    bigger = list(eps)
    for j in range(k, len(eps)):  # keep the vector non-decreasing
        bigger[j] = max(bigger[j], eps[k] + bump) if j == k else max(bigger[j], bigger[k])
    assume(all(e < 1 for e in bigger))
    assert M.labels(variant, bigger, delta, steps) <= M.labels(variant, eps, delta, steps)


@st.composite
def tenant_splits(draw):
    steps = draw(st.integers(2, 60))
    cuts = sorted(draw(st.sets(st.integers(1, steps - 1), min_size=1, max_size=min(5, steps - 1))))
    bounds = [0] + cuts + [steps]
    return steps, [b - a for a, b in zip(bounds, bounds[1:])]


@st.composite
def revert_plans(draw):
    steps = draw(st.integers(1, 60))
    b = draw(st.integers(0, steps))
    positions = sorted(draw(st.lists(st.integers(1, steps), min_size=b, max_size=b)))
    shifted = [t - i for i, t in enumerate(positions)]
    assume(all(s >= 1 for s in shifted))
    return steps, positions


@settings(max_examples=60, deadline=None)
@given(eps=eps_vectors, delta=st.floats(1e-8, 0.5), split=tenant_splits(),
       variant=st.sampled_from(["regular", "incremental"]))
def test_tenants_never_cost_more_than_one_chain(eps, delta, split, variant):
    steps, ts = split
    assert M.labels(variant, eps, delta, steps, tenant_steps=ts) <= M.labels(variant, eps, delta, steps)


@settings(max_examples=60, deadline=None)
@given(eps=eps_vectors, delta=st.floats(1e-8, 0.5), plan=revert_plans(),
       variant=st.sampled_from(["regular", "incremental"]))
def test_reverts_never_cost_more_than_one_chain(eps, delta, plan, variant):
    steps, reverts = plan
    assert M.labels(variant, eps, delta, steps, reverts=reverts) <= M.labels(variant, eps, delta, steps)


# --------------------------------------------------------------------------- vectorization
def test_curve_is_one_call_and_equals_brentq_per_step():
    ts = np.arange(1, 201)
    curve = M.labels("regular", NONUNIFORM, 0.01, ts)
    for t in [1, 2, 17, 100, 200]:
        c = (5**t - 1) / 4  # Thm 1: |T(m, T)| / m nodes per signal

        def f(n):
            return logsumexp([np.log(2 * c) - 2 * n * e**2 for e in NONUNIFORM]) - np.log(0.01)

        root = brentq(f, 1, 1e8, xtol=1e-10)
        assert curve[t - 1] == math.floor(root) + 1


def test_broadcasting_over_delta_and_epsilon_rows():
    deltas = np.array([0.1, 0.01, 0.001])
    out = M.labels("incremental", NONUNIFORM, deltas, 10)
    assert out.shape == (3,)
    assert out[1] == 38_005
    eps_rows = np.array([[0.01] * 5, NONUNIFORM])
    out = M.labels("regular", eps_rows, 0.01, 10)
    assert out.tolist() == [108_080, 100_033]


# --------------------------------------------------------------------------- inverse questions
@pytest.mark.parametrize("variant", M.VARIANTS)
@pytest.mark.parametrize("budget", [20_000, 50_000, 400_000])
def test_max_steps_is_the_largest_fitting_T(variant, budget):
    t = M.max_steps(variant, budget, NONUNIFORM, 0.01)
    if variant == "single_model":
        assert t == int(M.labels(variant, NONUNIFORM, 0.01, 1) <= budget)
        return
    if t == 0:
        assert M.labels(variant, NONUNIFORM, 0.01, 1) > budget
        return
    if t == math.inf:  # grows like log T: fits beyond the search cap
        assert M.labels(variant, NONUNIFORM, 0.01, M.STEPS_CAP) <= budget
        return
    assert M.labels(variant, NONUNIFORM, 0.01, t) <= budget < M.labels(variant, NONUNIFORM, 0.01, t + 1)


def test_max_steps_paper_scale_and_cap():
    # 38,005 labels is exactly the incremental count at T = 10 (Cor 2): T = 10 fits
    assert M.max_steps("incremental", 38_005, NONUNIFORM, 0.01) >= 10
    assert M.max_steps("regular", 100_033, NONUNIFORM, 0.01) == 10
    # a huge budget with a loose tolerance: the incremental meter grows like log T
    assert M.max_steps("incremental", 10**7, 0.2, 0.01, signals=2) == math.inf


@pytest.mark.parametrize("variant", M.VARIANTS)
def test_min_epsilon_brackets_the_budget(variant):
    budget = 60_000
    e1 = float(M.min_epsilon(variant, budget, NONUNIFORM, 0.01, 10))
    scale_up, scale_down = (1 + 1e-6) * e1 / NONUNIFORM[0], (1 - 1e-6) * e1 / NONUNIFORM[0]
    assert M.labels(variant, np.array(NONUNIFORM) * scale_up, 0.01, 10) <= budget
    assert M.labels(variant, np.array(NONUNIFORM) * scale_down, 0.01, 10) > budget


@pytest.mark.parametrize("variant", M.VARIANTS)
def test_failure_probability_inverts_labels(variant):
    n = M.labels(variant, NONUNIFORM, 0.01, 10)
    assert M.failure_probability(variant, n, NONUNIFORM, 10) < 0.01
    lower = n - (10 if variant == "resampling" else 1)
    assert M.failure_probability(variant, lower, NONUNIFORM, 10) >= 0.01


def test_labeling_hours():
    work, calendar = M.labeling_hours(38_005, seconds_per_label=2, labelers=4)
    assert work == pytest.approx(38_005 * 2 / 3600)
    assert calendar == pytest.approx(work / 4)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,fragment", [
    (dict(epsilon=[0.05, 0.01]), "epsilon must be non-decreasing"),
    (dict(epsilon=[0.0]), "epsilon must be tolerances in (0, 1)"),
    (dict(epsilon=[1.5]), "epsilon must be tolerances in (0, 1)"),
    (dict(delta=0.0), "delta must be in (0, 1)"),
    (dict(delta=1.0), "delta must be in (0, 1)"),
    (dict(steps=0), "steps must be a whole number >= 1"),
    (dict(steps=2.5), "steps must be a whole number"),
    (dict(tenant_steps=[5, 4]), "tenant_steps must be steps per tenant summing to steps = 10"),
    (dict(reverts=[1, 1]), "reverts must be positions with t'_i"),
    (dict(reverts=[3, 2]), "reverts must be non-decreasing"),
    (dict(reverts=[11]), "reverts must be steps within 1..10"),
    (dict(signals=3), "signals must be the number of tolerances"),
])
def test_bad_input_messages(kwargs, fragment):
    args = dict(epsilon=NONUNIFORM, delta=0.01, steps=10)
    args.update(kwargs)
    eps, delta, steps = args.pop("epsilon"), args.pop("delta"), args.pop("steps")
    with pytest.raises(InputError) as info:
        M.labels("regular", eps, delta, steps, **args)
    assert fragment in str(info.value)
    assert "got" in str(info.value)


def test_unknown_variant():
    with pytest.raises(InputError, match="variant must be one of"):
        M.labels("magic", 0.01, 0.01, 10)


def test_comb_reference_sanity():
    # scipy's exact comb agrees with the per-signal incremental count (Eq. 27) for k = 1..5
    for k in range(1, 6):
        assert np.exp(log_binom(k + 10 - 1, k)) == pytest.approx(comb(k + 9, k, exact=True), rel=1e-12)
