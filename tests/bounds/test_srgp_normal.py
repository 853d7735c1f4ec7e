"""Normal probabilities and root finds behind the fsSRGP/presSRGP thresholds (Feng et al. Eqs. 4-6).

Every number is checked against an independent computation: scipy's deterministic bivariate
normal cdf, one-dimensional quadratures written here, the one-factor representation of
equicorrelated normals, or exact closed forms.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.special import log_ndtr

from meter_dashboard.bounds import srgp
from meter_dashboard.bounds.srgp import thresholds
from meter_dashboard.bounds.srgp.normal import JointTail, log_box_2d, log_interval


def _quad_log_interval(lo, hi):
    """Independent: log of the integral of the normal density over (lo, hi), scaled at the near end."""
    near = lo if lo > 0 else hi if hi < 0 else 0.0
    value, _ = integrate.quad(lambda x: math.exp(-0.5 * (x * x - near * near)), lo, hi, epsabs=0, epsrel=1e-12,
                              limit=200)
    return math.log(value) - 0.5 * near * near - 0.5 * math.log(2 * math.pi)


@pytest.mark.parametrize("lo,hi", [(-1.0, 2.0), (3.0, 3.5), (20.0, 21.0), (-21.0, -20.0), (-0.5, 0.5),
                                   (8.0, 8.000001)])
def test_log_interval_against_quadrature(lo, hi):
    assert float(log_interval(lo, hi)) == pytest.approx(_quad_log_interval(lo, hi), rel=1e-9, abs=1e-9)


def test_log_interval_one_sided_and_empty():
    assert float(log_interval(-np.inf, -30.0)) == pytest.approx(float(log_ndtr(-30.0)), rel=1e-14)
    assert float(log_interval(30.0, np.inf)) == pytest.approx(float(log_ndtr(-30.0)), rel=1e-14)
    assert float(log_interval(1.0, 1.0)) == -np.inf and float(log_interval(2.0, 1.0)) == -np.inf


@pytest.mark.parametrize("rho", [-0.95, -0.5, 0.0, 0.3, 0.8, 0.99])
@pytest.mark.parametrize("box", [((-np.inf, -np.inf), (1.0, 0.5)), ((-1.0, 0.5), (2.0, np.inf)),
                                 ((0.0, -2.0), (np.inf, 1.0))])
def test_box_2d_against_scipys_deterministic_bivariate_cdf(rho, box):
    lo, hi = np.array(box[0]), np.array(box[1])
    cov = [[1.0, rho], [rho, 1.0]]
    big = 40.0
    lo_f, hi_f = np.maximum(lo, -big), np.minimum(hi, big)
    expected = stats.multivariate_normal.cdf(hi_f, mean=[0, 0], cov=cov, lower_limit=lo_f)
    assert math.exp(log_box_2d(lo, hi, rho)) == pytest.approx(expected, rel=1e-7, abs=1e-12)


@pytest.mark.parametrize("rho", [-0.6, 0.0, 0.5, 0.9])
@pytest.mark.parametrize("b", [3.0, 9.0, 15.0])
def test_box_2d_deep_tails_keep_relative_accuracy(rho, b):
    # P(X <= 1.4, Y > b): independent quadrature over Y of phi(y) Phi((1.4 - rho y)/s), scaled at y = b
    s = math.sqrt(1 - rho * rho)

    def f(y):
        return math.exp(-0.5 * (y * y - b * b) + float(log_ndtr((1.4 - rho * y) / s)))

    value, _ = integrate.quad(f, b, b + 40, epsabs=0, epsrel=1e-12, limit=400)
    expected = math.log(value) - 0.5 * b * b - 0.5 * math.log(2 * math.pi)
    got = log_box_2d(np.array([-np.inf, b]), np.array([1.4, np.inf]), rho)
    assert got == pytest.approx(expected, rel=1e-8)


def _one_factor(priors, b, rho):
    """Independent: equicorrelated Z_i = sqrt(rho) W + sqrt(1 - rho) e_i, one integral over W."""
    s, q = math.sqrt(rho), math.sqrt(1 - rho)
    centre = b * s

    def f(w):
        v = -0.5 * w * w + float(log_ndtr(-(b - s * w) / q)) + sum(float(log_ndtr((bk - s * w) / q))
                                                                    for bk in priors)
        return math.exp(v + 0.5 * centre * centre)

    value, _ = integrate.quad(f, -12, 12 + centre, points=[centre], limit=400, epsabs=0, epsrel=1e-11)
    return math.log(value) - 0.5 * centre * centre - 0.5 * math.log(2 * math.pi)


@pytest.mark.parametrize("rho", [0.2, 0.6, 0.9])
@pytest.mark.parametrize("b", [2.5, 5.0, 7.0])
def test_qmc_joint_tail_against_one_factor_integrals(rho, b):
    priors = [1.4, 2.1, 2.6, 3.0, 3.3, 3.6]  # 7 dimensions: the largest conditioning set by default
    corr = np.full((7, 7), rho) + (1 - rho) * np.eye(7)
    got = JointTail(priors, corr, seed=0, reference=b).log_probability(b)
    ref = _one_factor(priors, b, rho)
    slope = (_one_factor(priors, b + 0.01, rho) - ref) / 0.01  # d log P / d b
    # a few percent in the probability at most (down to 1e-22), which is below 1e-3 on the z scale
    assert got == pytest.approx(ref, abs=0.03)
    assert abs(got - ref) / abs(slope) < 1e-3


def test_qmc_is_seeded_and_smooth_in_the_threshold():
    corr = np.full((5, 5), 0.7) + 0.3 * np.eye(5)
    priors = [1.4, 2.0, 2.5, 2.9]
    tail = JointTail(priors, corr, seed=3, reference=3.0)
    assert tail.log_probability(3.0) == JointTail(priors, corr, seed=3, reference=3.0).log_probability(3.0)
    other = JointTail(priors, corr, seed=4, reference=3.0).log_probability(3.0)
    assert other == pytest.approx(tail.log_probability(3.0), abs=0.01) and other != tail.log_probability(3.0)
    # the same points at every b: the probability is a smooth, strictly decreasing function of b
    grid = np.linspace(2.0, 4.0, 41)
    values = np.array([tail.log_probability(x) for x in grid])
    assert np.all(np.diff(values) < 0)
    second = np.diff(values, 2)
    assert np.max(np.abs(second)) < 0.05  # no jumps from re-drawn random points


def test_identical_statistics_are_merged():
    # the new node identical to the first prior: Z <= 2.5 caps the interval, the probability is a slab
    corr = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    tail = JointTail([2.5, 1.0], corr)
    assert tail.cap == 2.5 and tail.dimension == 2
    expected = (stats.norm.cdf(2.5) - stats.norm.cdf(2.0)) * stats.norm.cdf(1.0)
    assert math.exp(tail.log_probability(2.0)) == pytest.approx(expected, rel=1e-9)
    assert tail.log_probability(2.6) == -math.inf
    # the opposite statistic: Z_1 = -Z, so Z_1 <= 1.5 means Z >= -1.5
    neg = JointTail([1.5], np.array([[1.0, -1.0], [-1.0, 1.0]]))
    assert math.exp(neg.log_probability(-3.0)) == pytest.approx(stats.norm.sf(-1.5), rel=1e-12)
    # two identical priors: the smaller threshold is the one that binds
    dup = JointTail([2.0, 1.2], np.array([[1.0, 1.0, 0.3], [1.0, 1.0, 0.3], [0.3, 0.3, 1.0]]))
    single = JointTail([1.2], np.array([[1.0, 0.3], [0.3, 1.0]]))
    assert dup.dimension == 2 and dup.log_probability(2.0) == pytest.approx(single.log_probability(2.0), rel=1e-12)


def test_semidefinite_correlations_do_not_break_the_integration():
    # Z_3 = (Z_1 + Z_2) / sqrt(2): rank 2 of 3 among the priors, plus the new node
    c = np.eye(4)
    c[0, 2] = c[2, 0] = c[1, 2] = c[2, 1] = 1 / math.sqrt(2)
    c[3, :3] = c[:3, 3] = [0.3, 0.3, 0.3 * math.sqrt(2)]
    value = JointTail([1.0, 1.2, 1.5], c, reference=2.0).log_probability(2.0)
    assert math.isfinite(value) and value < float(log_ndtr(-2.0))


@settings(max_examples=40, deadline=None)
@given(st.floats(-3, 3), st.floats(0.01, 5))
def test_find_root_brent(a, width):
    root = a + 0.37 * width
    x = thresholds.find_root(lambda t: (t - root) ** 3 + 0.1 * (t - root), a, a + width, xtol=1e-12)
    assert x == pytest.approx(root, abs=1e-9)
    with pytest.raises(ValueError):
        thresholds.find_root(lambda t: t * t + 1, -1.0, 1.0)


@pytest.mark.parametrize("rho", [0.0, 0.4, 0.9])
def test_thresholds_solve_their_equation(rho):
    # the returned b makes P(Z_K <= b_K, Z > b) equal the level (checked with an independent integral)
    priors = [1.405, 2.144, 2.6, 2.9]
    corr = np.full((5, 5), rho) + (1 - rho) * np.eye(5)
    for level in (1e-3, 1e-8, 1e-15):
        b, used = srgp.sequential_threshold(level, priors, corr)
        if rho == 0.0:
            # independent: the closed form Phi(-b) prod Phi(b_k) = level
            assert b == pytest.approx(stats.norm.isf(level / np.prod(stats.norm.cdf(priors))), abs=1e-7)
        else:
            assert _one_factor(priors, b, rho) == pytest.approx(math.log(level), abs=0.01)
        assert len(used) == 4


def test_thresholds_are_cached_by_their_exact_inputs(monkeypatch):
    built = []
    original = thresholds.JointTail

    def counting(*args, **kwargs):
        built.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(thresholds, "JointTail", counting)
    corr = np.full((4, 4), 0.55) + 0.45 * np.eye(4)
    first = srgp.sequential_threshold(0.000731, [1.4, 2.2, 2.7], corr, seed=11)
    again = srgp.sequential_threshold(0.000731, [1.4, 2.2, 2.7], corr, seed=11)
    assert first[0] == again[0] and len(built) == 1  # the second call integrated nothing
