"""Bonferroni and the SRGP family (Feng et al., seeds/004): weights, levels and thresholds.

Every expected number is computed by hand (or by an independent method) beside the assertion,
with the paper's section or equation it comes from.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats
from scipy.special import log_ndtr

from meter_dashboard.bounds import srgp
from meter_dashboard.bounds.srgp import (
    ApprovalProcedure,
    auc_influence,
    bonferroni_level,
    edge_weights,
    joint_tail_probability,
    run_procedure,
    sequential_threshold,
    weighted_bonferroni_group_sizes,
    weighted_bonferroni_level,
)
from meter_dashboard.core.validation import InputError

BAD = -1.0  # mean improvement far below any margin: always denied
GOOD = 1.0  # far above: always approved (when the level is > 0)


def _column(mean: float, n: int = 64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(n)
    return mean + 0.01 * (noise - noise.mean()) / noise.std(ddof=1)


def _path(method, means, steps=None, alpha=0.1, **kw):
    d = np.column_stack([_column(m, seed=j) for j, m in enumerate(means)])
    return run_procedure(d, method, alpha=alpha, steps=steps or len(means), **kw)


# --------------------------------------------------------------------------- edge weights (Section 3)
def test_edge_weights_section3():
    # 0.8, then 0.8 of the remaining 0.2 = 0.16, the last edge takes the rest 0.04
    assert edge_weights(3).tolist() == pytest.approx([0.8, 0.16, 0.04])
    # 4 edges: 0.8, 0.16, 0.032, rest 0.008
    assert edge_weights(4).tolist() == pytest.approx([0.8, 0.16, 0.032, 0.008])
    assert edge_weights(1).tolist() == [1.0]
    assert edge_weights(0).size == 0
    assert edge_weights(3, 1.0).tolist() == [1.0, 0.0, 0.0]
    assert edge_weights(3, 0.0).tolist() == [0.0, 0.0, 1.0]
    assert edge_weights(3, 0.5).tolist() == pytest.approx([0.5, 0.25, 0.25])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.floats(0.0, 1.0))
def test_edge_weights_sum_to_one(count, s):
    g = edge_weights(count, s)
    assert np.all(g >= 0)
    assert g.sum() == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------- bonfSRGP levels along small trees
def test_bonf_srgp_levels_after_the_start():
    # alpha = 0.1, three denials from the start: 0.1 x (0.8, 0.16, 0.032) = 0.08, 0.016, 0.0032 (issue / Section 3)
    out = _path("bonf-srgp", [BAD, BAD, BAD, BAD])
    assert out["levels"][:3].tolist() == pytest.approx([0.08, 0.016, 0.0032], rel=1e-12)
    assert out["levels"][3] == pytest.approx(0.1 * 0.2 ** 3)  # last edge takes the rest: 0.0008
    assert not out["approved"].any()


def test_bonf_srgp_level_after_an_approval_at_the_first():
    # approval at test 1 (weight 0.8) passes 0.8 x 0.8 = 0.64 to test 2: level 0.064; then 0.8 x 0.16 and the rest
    out = _path("bonf-srgp", [GOOD, BAD, BAD, BAD])
    assert out["approved"].tolist() == [True, False, False, False]
    assert out["levels"].tolist() == pytest.approx([0.08, 0.064, 0.0128, 0.0032], rel=1e-12)
    assert out["weights"].tolist() == pytest.approx([0.8, 0.64, 0.128, 0.032], rel=1e-12)


def test_bonf_srgp_level_after_an_approval_at_the_second():
    # deny (0.8), approve (0.16), then 0.16 x (0.8, 0.2): 0.128 and 0.032 -> levels 0.0128, 0.0032
    out = _path("bonf-srgp", [BAD, GOOD, BAD, BAD])
    assert out["levels"].tolist() == pytest.approx([0.08, 0.016, 0.0128, 0.0032], rel=1e-12)


def test_bonf_srgp_two_approvals_in_a_row():
    # 0.8 -> 0.64 -> 0.64 x 0.8 = 0.512 (T = 4, remaining 2 edges: 0.8, 0.2)
    out = _path("bonf-srgp", [GOOD, GOOD, BAD, BAD])
    assert out["weights"].tolist() == pytest.approx([0.8, 0.64, 0.512, 0.128], rel=1e-12)


def test_success_weight_is_configurable():
    out = _path("bonf-srgp", [BAD, BAD, BAD], success_weight=0.5)
    assert out["levels"].tolist() == pytest.approx([0.05, 0.025, 0.025])


def test_naive_tests_everything_at_alpha():
    out = _path("naive", [BAD, GOOD, BAD], alpha=0.05)
    assert out["levels"].tolist() == [0.05, 0.05, 0.05]


# --------------------------------------------------------------------------- Bonferroni over the tree
def test_bonferroni_level_is_alpha_over_tree_size():
    assert bonferroni_level(0.1, 3) == pytest.approx(0.1 / 7)  # 2**3 - 1 = 7 nodes
    assert bonferroni_level(0.1, 50) == pytest.approx(0.1 / (2 ** 50 - 1), rel=1e-12)
    out = _path("bonferroni", [BAD, GOOD, BAD])
    assert out["levels"].tolist() == pytest.approx([0.1 / 7] * 3)


def test_bonferroni_huge_trees_underflow_to_zero_and_never_approve():
    assert bonferroni_level(0.1, 2000) == 0.0
    proc = ApprovalProcedure("bonferroni", steps=2000, alpha=0.1)
    decision = proc.test(np.full(10, 5.0))  # zero variance, improvement 5 > 0: z = +inf, p = 0
    assert decision.p_value == 0.0 and not decision.approved


# --------------------------------------------------------------------------- weighted Bonferroni (Section 3)
def _brute_force_groups(steps, k):
    low = high = 0
    for t in range(1, steps + 1):
        for history in itertools.product((0, 1), repeat=t - 1):
            if history.count(0) <= k:
                low += 1
            else:
                high += 1
    return low, high


@pytest.mark.parametrize("steps,k", [(1, 3), (4, 3), (5, 3), (6, 3), (8, 2), (10, 3), (9, 0)])
def test_weighted_bonferroni_group_sizes_by_enumeration(steps, k):
    assert weighted_bonferroni_group_sizes(steps, k) == _brute_force_groups(steps, k)


def test_weighted_bonferroni_levels_hand_computed():
    # T = 6, at most 3 denials: C(6,1)+C(6,2)+C(6,3)+C(6,4) = 6+15+20+15 = 56 nodes; 63 - 56 = 7 others
    assert weighted_bonferroni_group_sizes(6, 3) == (56, 7)
    out = _path("weighted-bonferroni", [BAD] * 6)
    # tests 1-4 have 0..3 earlier denials: 0.05/56; tests 5-6 have 4 and 5: 0.05/7
    assert out["levels"].tolist() == pytest.approx([0.05 / 56] * 4 + [0.05 / 7] * 2)
    # T = 50 (Section 3.1): 50 + 1225 + 19600 + 230300 = 251175 "few denials" nodes
    assert weighted_bonferroni_group_sizes(50, 3)[0] == 251175
    assert weighted_bonferroni_level(0.1, 50, 0) == pytest.approx(0.05 / 251175)


def test_weighted_bonferroni_small_trees_give_all_alpha_to_the_only_group():
    # T = 4: every history has at most 3 denials, 15 nodes share all of alpha (our documented choice)
    assert weighted_bonferroni_level(0.1, 4, 3) == pytest.approx(0.1 / 15)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(0, 8))
def test_weighted_bonferroni_spends_exactly_alpha_over_the_tree(steps, k):
    low, high = weighted_bonferroni_group_sizes(steps, k)
    assert low + high == 2 ** steps - 1
    total = low * weighted_bonferroni_level(0.1, steps, 0, k)
    if high:
        total += high * weighted_bonferroni_level(0.1, steps, k + 1, k)
    assert total == pytest.approx(0.1, rel=1e-9)


# --------------------------------------------------------------------------- fsSRGP thresholds (Section 2.3, Eq. 4)
def test_fs_threshold_zero_correlation_2_111_vs_bonferroni_2_144():
    # second test of the first streak: w = 0.16, alpha = 0.1 -> Bonferroni z = Phi^-1(1 - 0.016) = 2.144;
    # independent tests: P(Z1 <= 1.405) P(Z2 > b) = 0.016 -> 1 - Phi(b) = 0.016 / 0.92 -> b = 2.111
    b1 = stats.norm.isf(0.08)
    b, used = sequential_threshold(0.016, [b1], np.eye(2))
    assert round(stats.norm.isf(0.016), 3) == 2.144
    assert round(b, 3) == 2.111
    assert b == pytest.approx(stats.norm.isf(0.016 / 0.92), abs=1e-7)
    assert used.tolist() == [0]


def test_fs_procedure_at_exactly_zero_sample_correlation():
    # Hadamard rows: centered, orthogonal columns, so the estimated correlation is exactly 0
    h = np.array([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]], dtype=float)
    d1 = -5.0 + np.tile(h[1], 16)
    d2 = -5.0 + np.tile(h[2], 16)
    out = run_procedure(np.column_stack([d1, d2]), "fs-srgp", alpha=0.1, steps=3)
    assert out["levels"][0] == pytest.approx(0.08)
    assert out["z_thresholds"][1] == pytest.approx(stats.norm.isf(0.016 / 0.92), abs=1e-7)
    assert out["levels"][1] == pytest.approx(0.016 / 0.92, rel=1e-6)  # 0.01739 > Bonferroni's 0.016


def _bvn_threshold(level, b1, rho):
    """Independent: Phi(b1) - Phi2(b1, b; rho) = level with scipy's deterministic bivariate cdf."""
    cov = [[1.0, rho], [rho, 1.0]]

    def f(b):
        return stats.norm.cdf(b1) - stats.multivariate_normal.cdf([b1, b], mean=[0, 0], cov=cov) - level

    return optimize.brentq(f, -5, 10, xtol=1e-12)


@pytest.mark.parametrize("rho", [-0.6, -0.2, 0.3, 0.6, 0.9, 0.99])
def test_fs_threshold_two_tests_against_bivariate_normal(rho):
    b1 = stats.norm.isf(0.08)
    corr = np.array([[1.0, rho], [rho, 1.0]])
    b, _ = sequential_threshold(0.016, [b1], corr)
    assert b == pytest.approx(_bvn_threshold(0.016, b1, rho), abs=1e-6)
    # positive correlation lowers the threshold (more power), negative raises it, never above Bonferroni
    assert b <= stats.norm.isf(0.016) + 1e-9


def _one_factor_log_probability(priors, b, rho):
    """Independent: equicorrelated Z_i = sqrt(rho) W + sqrt(1 - rho) e_i, integrate over W."""
    s, q = math.sqrt(rho), math.sqrt(1 - rho)
    log_sqrt_2pi = 0.5 * math.log(2 * math.pi)

    def integrand(w):
        value = -0.5 * w * w - log_sqrt_2pi + float(log_ndtr(-(b - s * w) / q))
        value += sum(float(log_ndtr((bk - s * w) / q)) for bk in priors)
        return math.exp(value)

    center = b * s  # the integrand's mass sits near where the tail variable crosses b
    return math.log(integrate.quad(integrand, -12, 12 + center, points=[center], limit=400, epsabs=0,
                                   epsrel=1e-10)[0])


def _one_factor_threshold(level, priors, rho):
    return optimize.brentq(lambda b: _one_factor_log_probability(priors, b, rho) - math.log(level), 0, 6,
                           xtol=1e-9)


@pytest.mark.parametrize("rho", [0.2, 0.5, 0.8])
def test_fs_thresholds_of_a_streak_against_one_factor_integrals(rho):
    # streak after the start (alpha = 0.1): weights 0.8, 0.16, 0.032, 0.0064; thresholds built one after the other
    levels = 0.1 * edge_weights(5)[:4]
    corr = np.full((4, 4), rho) + (1 - rho) * np.eye(4)
    ours, ref = [], []
    for j, level in enumerate(levels):
        b, _ = sequential_threshold(level, ours, corr[: j + 1, : j + 1], seed=1)
        ours.append(b)
        ref.append(_one_factor_threshold(level, ref, rho) if j else stats.norm.isf(level))
    # 1-2 dimensions are exact; 3-4 use scipy's randomized QMC: a few 1e-4 on the z scale
    assert ours[:2] == pytest.approx(ref[:2], abs=1e-6)
    assert ours == pytest.approx(ref, abs=2e-3)


def test_fs_thresholds_spend_exactly_the_streak_alpha_by_monte_carlo():
    # P(some test of the streak rejects) = sum_j P(first rejection at j) = sum_j w_j alpha (Section 2.3 union bound)
    rho = 0.7
    levels = 0.1 * edge_weights(4)
    corr = np.full((4, 4), rho) + (1 - rho) * np.eye(4)
    b = []
    for j, level in enumerate(levels):
        b.append(sequential_threshold(level, b, corr[: j + 1, : j + 1], seed=2)[0])
    z = np.random.default_rng(7).multivariate_normal(np.zeros(4), corr, size=400_000)
    hit = np.any(z > np.array(b), axis=1).mean()
    se = math.sqrt(0.1 * 0.9 / z.shape[0])
    assert abs(hit - levels.sum()) < 4 * se  # levels sum to alpha = 0.1
    # each test spends exactly its own share given the earlier ones were denied
    first = np.argmax(z > np.array(b), axis=1)
    for j, level in enumerate(levels[:3]):
        frac = np.mean((first == j) & np.any(z > np.array(b), axis=1))
        assert abs(frac - level) < 4 * math.sqrt(level * (1 - level) / z.shape[0])


def test_fs_thresholds_do_not_depend_much_on_the_qmc_seed():
    corr = np.full((4, 4), 0.6) + 0.4 * np.eye(4)
    priors = [stats.norm.isf(0.08), 2.0, 2.5]
    values = [sequential_threshold(0.00064, priors, corr, seed=s)[0] for s in range(4)]
    assert max(values) - min(values) < 1e-3
    # and the same seed gives the same number (seeded, reproducible)
    assert sequential_threshold(0.00064, priors, corr, seed=3)[0] == values[3]


def test_fs_level_is_never_below_the_bonferroni_share():
    rng = np.random.default_rng(3)
    base = rng.standard_normal(200)
    d = np.column_stack([-0.5 + base + 0.5 * rng.standard_normal(200) for _ in range(6)])
    fs = run_procedure(d, "fs-srgp", alpha=0.1)
    bonf = run_procedure(d, "bonf-srgp", alpha=0.1)
    assert not fs["approved"].any() and not bonf["approved"].any()
    assert np.all(fs["levels"] >= bonf["levels"] * (1 - 1e-9))
    assert fs["levels"][0] == pytest.approx(bonf["levels"][0])
    assert fs["levels"][1] > bonf["levels"][1]  # positively correlated streak: strictly more


def test_conditioning_on_fewer_nodes_is_more_conservative():
    corr = np.full((6, 6), 0.8) + 0.2 * np.eye(6)
    priors = [1.4, 2.1, 2.6, 3.0, 3.3]
    full, _ = sequential_threshold(1e-4, priors, corr, max_conditioning=5)
    two, used = sequential_threshold(1e-4, priors, corr, max_conditioning=2)
    none, _ = sequential_threshold(1e-4, priors, corr, max_conditioning=0)
    assert len(used) == 2 and set(used.tolist()) == {0, 1}  # the lowest thresholds cut the most
    assert full <= two + 1e-6 <= none + 1e-6
    assert none == pytest.approx(stats.norm.isf(1e-4))


# --------------------------------------------------------------------------- multivariate normal helpers
def test_joint_tail_deep_tails_keep_relative_accuracy():
    # rho = 0: P(Z1 <= b1, Z2 > b) = Phi(b1) Phi(-b) in closed form, even at b = 12 (1.6e-33)
    for b in (2.0, 8.0, 12.0):
        value = joint_tail_probability(b, [1.405], np.eye(2))
        assert value == pytest.approx(stats.norm.cdf(1.405) * stats.norm.sf(b), rel=1e-8)


def test_joint_tail_merges_identical_statistics():
    # Z2 == Z1: P(Z1 <= 2.5, Z2 > 2.0) = Phi(2.5) - Phi(2.0)
    corr = np.ones((2, 2))
    assert joint_tail_probability(2.0, [2.5], corr) == pytest.approx(stats.norm.cdf(2.5) - stats.norm.cdf(2.0))
    assert joint_tail_probability(3.0, [2.5], corr) == 0.0
    # three variables, the last identical to the first, the middle independent: a slab times a marginal
    corr3 = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    expected = (stats.norm.cdf(2.5) - stats.norm.cdf(2.0)) * stats.norm.cdf(1.0)
    assert joint_tail_probability(2.0, [2.5, 1.0], corr3) == pytest.approx(expected, rel=1e-9)


# --------------------------------------------------------------------------- presSRGP (Section 2.4, Eqs. 5-6)
def test_pres_srgp_identical_plan_hand_computed():
    # plan == modification: z_1 = Phi^-1(1 - 0.9 x 0.5 x 0.1) (Eq. 5, weight 0.045); test 1 has w = 0.1 x 0.8 = 0.08
    # Eq. 6: P(b < Z < z_1) = 0.08 x 0.1 = 0.008 -> 1 - Phi(b) = 0.045 + 0.008 = 0.053
    d = _column(BAD, seed=1)
    plan = np.column_stack([d, _column(0.0, seed=2), _column(0.0, seed=3)])  # 3 planned nodes: 0.45, 0.225, 0.225
    proc = ApprovalProcedure("pres-srgp", steps=3, alpha=0.1, prespecified=plan)
    decision = proc.test(d)
    assert proc.prespecified_thresholds[0] == pytest.approx(stats.norm.isf(0.045))
    assert decision.weight == pytest.approx(0.08)
    assert decision.level == pytest.approx(0.053, rel=1e-9)


def test_pres_srgp_uncorrelated_plan_hand_computed():
    # independent plan: P(xi_1 < z_1) P(Z > b) = 0.955 (1 - Phi(b)) = 0.008 -> level 0.008 / 0.955
    h = np.array([[1, -1, 1, -1], [1, 1, -1, -1]], dtype=float)
    plan = np.tile(h[0], 16)
    d = -3.0 + np.tile(h[1], 16)
    proc = ApprovalProcedure("pres-srgp", steps=2, alpha=0.1, prespecified=np.column_stack([plan, plan]))
    assert proc.test(d).level == pytest.approx(0.008 / 0.955, rel=1e-9)


def test_pres_srgp_weights_are_configurable_and_need_a_plan():
    plan = np.column_stack([_column(0.0, seed=s) for s in range(3)])
    proc = ApprovalProcedure("pres-srgp", steps=3, alpha=0.1, prespecified=plan, pres_share=0.5,
                             pres_first_share=0.2)
    assert proc.pres_weights.tolist() == pytest.approx([0.1, 0.2, 0.2])
    assert proc.next_weight() == pytest.approx(0.5 * 0.8)  # adaptive tree starts with 1 - 0.5
    with pytest.raises(InputError, match="prespecified"):
        ApprovalProcedure("pres-srgp", steps=3)


# --------------------------------------------------------------------------- margins (Eq. 7, Section 3.2)
def test_margin_grows_after_each_approval():
    out = _path("naive", [GOOD, BAD, GOOD, GOOD], margin=0.1, margin_step=0.01)
    assert out["approved"].tolist() == [True, False, True, True]
    assert out["margins"].tolist() == pytest.approx([0.1, 0.11, 0.11, 0.12])


def test_margin_decides_between_approve_and_deny():
    # improvement 0.05 with se 0.01/sqrt(64): z = (0.05 - delta) / 0.00125
    d = _column(0.05)[:, None]
    assert run_procedure(d, "naive", margin=0.0)["approved"].tolist() == [True]
    assert run_procedure(d, "naive", margin=0.06)["approved"].tolist() == [False]
    z = run_procedure(d, "naive", margin=0.049)["z"][0]
    assert z == pytest.approx(0.001 / (0.01 / 8))


def test_zero_variance_columns():
    d = np.column_stack([np.full(5, 0.2), np.full(5, -0.2)])
    out = run_procedure(d, "fs-srgp")
    assert out["z"].tolist() == [math.inf, -math.inf]
    assert out["approved"].tolist() == [True, False]


# --------------------------------------------------------------------------- validation, extremes
def test_bad_inputs_raise_input_errors():
    with pytest.raises(InputError, match="method must be one of"):
        ApprovalProcedure("holm", steps=3)
    with pytest.raises(InputError, match="alpha must be in"):
        ApprovalProcedure("naive", steps=3, alpha=1.5)
    with pytest.raises(InputError, match="success_weight"):
        ApprovalProcedure("bonf-srgp", steps=3, success_weight=1.2)
    proc = ApprovalProcedure("naive", steps=1)
    proc.test(_column(0.0))
    with pytest.raises(InputError, match="at most steps = 1"):
        proc.test(_column(0.0))
    with pytest.raises(InputError, match="at least 2"):
        ApprovalProcedure("naive", steps=1).test([1.0])


def test_method_aliases():
    assert srgp.normalize_method("fs_srgp") == "fs-srgp"
    assert srgp.normalize_method("fsSRGP") == "fs-srgp"
    assert srgp.normalize_method("BinaryThres") == "naive"
    assert srgp.normalize_method("wBonferroni") == "weighted-bonferroni"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([BAD, GOOD]), min_size=1, max_size=8), st.floats(0.01, 0.5))
def test_srgp_weights_never_exceed_alpha_along_any_path(path, alpha):
    out = _path("bonf-srgp", path, alpha=alpha)
    assert np.all(out["levels"] <= alpha + 1e-15)
    # each test's weight is at most its parent's weight (alpha recycling never creates mass)
    assert np.all(out["weights"] <= 1.0 + 1e-12)
    naive = _path("naive", path, alpha=alpha)
    assert naive["approved"].tolist() == [m == GOOD for m in path]


def test_auc_influence_mean_is_the_auc_with_ties():
    rng = np.random.default_rng(5)
    y = rng.random(300) < 0.4
    s = np.round(rng.standard_normal(300) + y, 1)  # rounded: many ties
    pos, neg = s[y], s[~y]
    auc = np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))
    assert auc_influence(s, y).mean() == pytest.approx(auc, abs=1e-12)
    with pytest.raises(InputError):
        auc_influence(s, np.ones(300, dtype=bool))


def test_fit_logistic_recovers_coefficients():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4000, 3))
    y = rng.random(4000) < 1 / (1 + np.exp(-(0.5 + x @ np.array([1.0, -1.0, 0.0]))))
    beta = srgp.fit_logistic(x, y, penalty=1e-6)
    assert beta == pytest.approx([0.5, 1.0, -1.0, 0.0], abs=0.12)


# --------------------------------------------------------------------------- bounded cost (issue 15)
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.floats(0.0, 1.0))
def test_edge_weight_one_at_a_time_equals_the_vector(count, s):
    vector = edge_weights(count, s)
    assert [srgp.edge_weight(i, count, s) for i in range(count)] == pytest.approx(vector.tolist(), rel=1e-15)
    assert srgp.edge_weight(count, count, s) == 0.0


def test_the_largest_tree_is_bounded_and_cheap():
    with pytest.raises(InputError, match=r"steps must be a whole number in \[1, 10000\]; got 100000000"):
        ApprovalProcedure("bonf-srgp", steps=10 ** 8)
    with pytest.raises(InputError, match="steps"):
        ApprovalProcedure("naive", steps=2 ** 63)
    for method in ("bonferroni", "weighted-bonferroni", "bonf-srgp", "fs-srgp"):  # O(1) per test, not O(T)
        proc = ApprovalProcedure(method, steps=srgp.MAX_STEPS)
        for j in range(5):
            proc.test(_column(BAD, seed=j))
        assert proc.decisions[0].level > 0 or method == "bonferroni"
    # wBonferroni at T = 10,000 has exact group sizes: C(T,1) + ... + C(T,4) histories with at most 3 denials
    low, high = weighted_bonferroni_group_sizes(srgp.MAX_STEPS, 3)
    assert low == sum(math.comb(10_000, i) for i in range(1, 5)) and low + high == 2 ** 10_000 - 1
