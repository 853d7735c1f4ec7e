"""The Monte Carlo check of meter plans (issue 12): the naive count fails under the boosting-style
adversary, every planned count (Hoeffding or exact binomial) holds, runs are seeded, report
progress and can be cancelled.

Settings from the issue: m = 3, eps = (0.02, 0.04, 0.06), delta = 0.1, T = 10, regular meter;
the naive count is one Hoeffding estimate (Thm 4 of ease.ml/meter, ../shared/seeds/000_*):
ln(2 / 0.1) / (2 * 0.02^2) -> 3,745 labels.  The attack follows Section 5 of the Ladder notes
(../shared/seeds/003_*).
"""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from meter_dashboard.bounds import meter as M
from meter_dashboard.bounds import meter_simulation as S
from meter_dashboard.core.validation import InputError

EPS = [0.02, 0.04, 0.06]
DELTA = 0.1
NAIVE = M.labels("single_model", EPS, DELTA, 10)


def test_naive_count_is_the_one_model_hoeffding_count():
    assert NAIVE == math.floor(math.log(2 / DELTA) / (2 * 0.02**2)) + 1 == 3745


def test_naive_count_fails_under_the_adversary():
    """About 0.22 at T = 10 (issue 12): the interval lies above delta."""
    r = S.simulate(NAIVE, EPS, 10, replicates=1024, seed=3, delta=DELTA)
    assert r.ci[0] > DELTA and not r.below()
    assert r.ci[0] <= 0.22 <= r.ci[1] + 0.03
    assert r.failed_by_step[-1] == r.failures and np.all(np.diff(r.failed_by_step) >= 0)


def test_naive_count_fails_more_as_steps_grow():
    short = S.simulate(NAIVE, EPS, 5, replicates=512, seed=4)
    long = S.simulate(NAIVE, EPS, 20, replicates=512, seed=4)
    assert long.ci[0] > short.ci[1]
    assert long.failure_rate > 0.4


@pytest.mark.parametrize("meter", S.METERS)
@pytest.mark.parametrize("bound", ["hoeffding", "binomial"])
@pytest.mark.parametrize("developer", S.DEVELOPERS)
def test_planned_counts_hold(meter, bound, developer):
    """Every planned count keeps the failure rate at or below delta, within its interval."""
    n = M.labels(meter, EPS, DELTA, 10, bound=bound)
    r = S.simulate(n, EPS, 10, meter=meter, developer=developer, replicates=512, seed=5, delta=DELTA)
    assert r.below() and r.failure_rate <= DELTA


def test_restricted_binomial_count_holds_when_the_range_is_true():
    """With error rates at most 0.35 (the honest developer stays near 0.7 accuracy) the smaller count holds."""
    n = M.labels("regular", EPS, DELTA, 10, bound="binomial", max_error_rate=0.35)
    assert n < M.labels("regular", EPS, DELTA, 10, bound="binomial")
    r = S.simulate(n, EPS, 10, developer="honest", replicates=256, seed=6, delta=DELTA)
    assert r.below()


def test_honest_developer_does_not_break_the_naive_count_much():
    r = S.simulate(NAIVE, EPS, 10, developer="honest", replicates=512, seed=7, delta=DELTA)
    assert r.below()


def test_no_signals_no_attack():
    """With one signal the meter says nothing: the attack is blind, its 10 models are independent
    random classifiers, and the failure probability is exactly 1 - (1 - q)^10 with
    q = P(|X/n - 1/2| >= 0.02), X ~ Binomial(3745, 1/2)."""
    from scipy import stats
    k = math.ceil(NAIVE * 0.52)
    q = stats.binom.sf(k - 1, NAIVE, 0.5) + stats.binom.cdf(NAIVE - k, NAIVE, 0.5)
    r = S.simulate(NAIVE, [0.02], 10, replicates=1024, seed=8)
    assert r.ci[0] <= 1 - (1 - q) ** 10 <= r.ci[1]


def test_seeded_and_reproducible():
    a = S.simulate(2000, EPS, 6, replicates=200, seed=11)
    b = S.simulate(2000, EPS, 6, replicates=200, seed=11)
    c = S.simulate(2000, EPS, 6, replicates=200, seed=12)
    assert (a.failures, a.failed_by_step.tolist()) == (b.failures, b.failed_by_step.tolist())
    assert a.failures != c.failures or a.failed_by_step.tolist() != c.failed_by_step.tolist()
    first = next(S.iter_simulate(2000, EPS, 6, replicates=200, seed=11))
    assert first.replicates == S.BLOCK and first.cancelled


def test_progress_and_cancel():
    seen = []
    r = S.simulate(1000, EPS, 4, replicates=5 * S.BLOCK, seed=1, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(S.BLOCK * (i + 1), 5 * S.BLOCK) for i in range(5)] and not r.cancelled
    stopped = S.simulate(1000, EPS, 4, replicates=5 * S.BLOCK, seed=1, progress=lambda done, total: done < 2 * S.BLOCK)
    assert stopped.cancelled and stopped.replicates == 2 * S.BLOCK
    event = threading.Event()
    event.set()
    r = S.simulate(1000, EPS, 4, replicates=5 * S.BLOCK, cancel=event)
    assert r.cancelled and r.replicates == S.BLOCK


def test_worker_thread_can_stop_a_long_run():
    event = threading.Event()
    box = {}

    def work():
        box["result"] = S.simulate(3000, EPS, 10, replicates=50 * S.BLOCK, cancel=event)

    thread = threading.Thread(target=work)
    thread.start()
    event.set()
    thread.join(timeout=60)
    assert not thread.is_alive() and box["result"].cancelled


@pytest.mark.parametrize("x,n,method,expected", [
    (0, 10, "clopper-pearson", (0.0, 0.3085)),  # the exact interval's classic value
    (5, 10, "clopper-pearson", (0.1871, 0.8129)),
    (5, 10, "wilson", (0.2366, 0.7634)),
    (0, 10, "wilson", (0.0, 0.2775)),
])
def test_intervals(x, n, method, expected):
    lo, hi = S.proportion_interval(x, n, 0.95, method)
    assert lo == pytest.approx(expected[0], abs=1e-4) and hi == pytest.approx(expected[1], abs=1e-4)


def test_signal_of_matches_the_session_model():
    from meter_dashboard.session.model import signal_of
    r = S.default_ranges(5)
    gaps = np.array([0.0, 0.004, 0.005, 0.0099, 0.01, 0.03, 0.2, 1.0])
    assert S.signal_of(gaps, r).tolist() == signal_of(gaps, r).tolist()
    assert r == [0.0, 0.005, 0.01, 0.02, 0.05, 1.0] and S.default_ranges(3) == [0.0, 0.005, 0.01, 1.0]


@pytest.mark.parametrize("kwargs,fragment", [
    (dict(ranges=[0, 0.5, 1]), "ranges must be m + 1 = 4"),
    (dict(meter="ladder"), "meter must be one of"),
    (dict(developer="lazy"), "developer must be one of"),
    (dict(replicates=10**6, steps=1000), "replicates must be at most"),
    (dict(interval="bayes"), "interval must be one of"),
    (dict(epsilon=[0.04, 0.02, 0.06]), "epsilon must be non-decreasing"),
])
def test_bad_input(kwargs, fragment):
    args = dict(labels=1000, epsilon=EPS, steps=10)
    args.update(kwargs)
    with pytest.raises(InputError) as info:
        S.simulate(args.pop("labels"), args.pop("epsilon"), args.pop("steps"), **args)
    assert fragment in str(info.value)


def test_below_without_any_delta_is_refused_by_name():
    """A result simulated without delta, asked ``below()`` without one, was a TypeError (``<=`` with None:
    found by mypy --strict on bounds/); it is an InputError naming delta.  With a delta, from either side,
    it answers as before: the interval's lower end at or below it."""
    r = S.simulate(NAIVE, EPS, 10, replicates=64, seed=3)
    with pytest.raises(InputError, match="^delta must be given"):
        r.below()
    assert r.below(r.ci[0]) and r.below(1.0) and not r.below(r.ci[0] / 2)
    with_delta = S.simulate(NAIVE, EPS, 10, replicates=64, seed=3, delta=DELTA)
    assert with_delta.ci == r.ci and with_delta.below() == (r.ci[0] <= DELTA) == r.below(DELTA)
