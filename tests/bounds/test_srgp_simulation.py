"""The Section 3 simulations of Feng et al. (seeds/004): FWER (3.1) and power (3.2), seeded."""
from __future__ import annotations

import math

import numpy as np
import pytest

from meter_dashboard.bounds.srgp import METHODS, simulate_fwer, simulate_power


def _mc_bound(alpha, replicates):
    """alpha plus two Monte Carlo standard errors of a rate alpha estimated from `replicates`."""
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / replicates)


@pytest.mark.slow
def test_fwer_simulation_naive_far_above_alpha_others_at_or_below():
    # Section 3.1: test set of 100, T = 50, oracle initial model -> every approval is an error.
    cheap = ["naive", "bonferroni", "weighted-bonferroni", "bonf-srgp"]
    res = simulate_fwer(cheap, replicates=100, steps=50, seed=0)
    assert res.completed == 100 and not res.cancelled
    # the paper reports 75% for BinaryThres; our simplified developer overfits less but far above alpha
    assert res.fwer["naive"] > _mc_bound(0.1, 100) + 0.1
    for m in cheap[1:]:
        assert res.fwer[m] <= _mc_bound(0.1, 100), m
    assert res.approvals["naive"] > 0.5
    # the correlation-aware SRGPs are expensive: fewer replicates and a shorter sequence
    res = simulate_fwer(["fs-srgp", "pres-srgp"], replicates=16, steps=30, seed=0)
    for m in ("fs-srgp", "pres-srgp"):
        assert res.fwer[m] <= _mc_bound(0.1, 16), m
    # Figure 3 (left): approved models never beat the oracle on fresh data
    assert np.all(res.curves["holdout_auc"]["fs-srgp"] <= res.curves["holdout_auc"]["fs-srgp"][0] + 1e-12)


def test_fwer_simulation_is_seeded_and_reports_overfitting():
    a = simulate_fwer(["naive"], replicates=6, steps=12, seed=4)
    b = simulate_fwer(["naive"], replicates=6, steps=12, seed=4)
    assert a.fwer == b.fwer and np.array_equal(a.curves["test_auc"]["naive"], b.curves["test_auc"]["naive"])
    # an approved (overfit) model looks better on the reused test set than on fresh data
    test_gain = a.curves["test_auc"]["naive"][-1] - a.curves["test_auc"]["naive"][0]
    holdout_gain = a.curves["holdout_auc"]["naive"][-1] - a.curves["holdout_auc"]["naive"][0]
    assert test_gain >= holdout_gain


def test_power_simulation_srgps_approve_more_than_bonferroni():
    # Section 3.2 (scaled down): refits on an i.i.d. stream; alpha recycling gives more approvals than Bonferroni
    res = simulate_power(["bonferroni", "bonf-srgp", "fs-srgp", "pres-srgp"], replicates=3, steps=8, seed=1)
    assert res.completed == 3
    assert res.approvals["bonf-srgp"] >= res.approvals["bonferroni"]
    assert res.approvals["fs-srgp"] >= res.approvals["bonf-srgp"]
    assert res.approvals["bonf-srgp"] > 0
    curve = res.curves["approvals"]["bonf-srgp"]
    assert np.all(np.diff(curve) >= 0) and curve[-1] == pytest.approx(res.approvals["bonf-srgp"])


def test_simulations_can_be_cancelled_and_report_progress():
    seen = []

    def progress(fraction, message):
        seen.append((fraction, message))

    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return len(seen) >= 3  # stop once three (replicate, procedure) pairs are done

    res = simulate_fwer(["naive", "bonferroni"], replicates=5, steps=10, seed=0, progress=progress,
                        should_stop=stop)
    assert res.cancelled
    assert res.completed == 1  # the second replicate was interrupted: only whole replicates count
    assert [round(f, 2) for f, _ in seen] == [0.1, 0.2, 0.3]
    assert "replicate 2 of 5" in seen[-1][1]
    assert set(res.fwer) == {"naive", "bonferroni"}


def test_simulation_inputs_are_validated():
    from meter_dashboard.core.validation import InputError

    with pytest.raises(InputError, match="steps"):
        simulate_fwer(["naive"], replicates=1, steps=500, features=20)
    with pytest.raises(InputError, match="method"):
        simulate_power(["holm"], replicates=1)
    assert len(METHODS) == 6


# --------------------------------------------------------------------------- one loop, one developer (issue 10)
def test_replicate_ranges_combine_to_the_whole_run():
    from meter_dashboard.bounds.srgp import combine_simulations

    whole = simulate_fwer(["naive", "bonf-srgp"], replicates=5, steps=8, seed=2)
    parts = [simulate_fwer(["naive", "bonf-srgp"], replicates=2, steps=8, seed=2),
             simulate_fwer(["naive", "bonf-srgp"], replicates=3, steps=8, seed=2, first_replicate=2)]
    combined = combine_simulations(parts)
    assert combined.fwer == whole.fwer and combined.approvals == whole.approvals and combined.completed == 5
    for name in whole.curves:
        for m in whole.methods:
            assert np.array_equal(combined.curves[name][m], whole.curves[name][m])
    power = simulate_power(["bonferroni"], replicates=2, steps=4, seed=1)
    assert combine_simulations([simulate_power(["bonferroni"], replicates=1, steps=4, seed=1),
                                simulate_power(["bonferroni"], replicates=1, steps=4, seed=1, first_replicate=1)]
                               ).approvals == power.approvals


def test_adversarial_developer_follows_section_3_1():
    from meter_dashboard.bounds.srgp import AdversarialDeveloper, planned_perturbation, true_coefficients

    beta = true_coefficients(9)  # irrelevant variables x7, x8, x9 (indices 6, 7, 8)
    dev = AdversarialDeveloper(beta, perturbation=0.6)
    moves = []
    for approved in (False, True, True, False, False, False):
        coef = dev.propose()
        moves.append((dev.variable, round(float(coef[dev.variable]), 1)))
        dev.feedback(approved)
    # (x7,+) denied; (x7,-) approved -> keep pushing x7 down; denied -> next untouched variable x8 (+, then -)
    assert moves == [(6, 0.6), (6, -0.6), (6, -1.2), (6, -1.8), (7, 0.6), (7, -0.6)]
    assert dev.current[6] == pytest.approx(-1.2)  # the last approved model
    # the prespecified plan: coefficient 7 + floor(t/2) set to +0.6 (t even) or -0.6 (t odd)
    assert [float(planned_perturbation(beta, t)[6 + t // 2]) for t in range(4)] == [0.6, -0.6, 0.6, -0.6]


def test_the_generator_uses_the_packages_developer():
    import inspect

    import tests.generators.generate_approve as gen

    source = inspect.getsource(gen)
    assert "AdversarialDeveloper" in source and "def _draw" not in source and "candidates" not in source
