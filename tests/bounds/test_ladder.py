"""The Ladder's mathematics: hand-computed replays (with ties), Lemma 4, the boosting attack.

Source: lecture notes on Blum & Hardt's Ladder (../shared/seeds/003_*): Algorithm 1
(fixed step), Algorithm 2 (parameter-free), Lemma 4, Section 5 / Theorem 6.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from meter_dashboard.bounds import ladder as L
from meter_dashboard.core.validation import InputError

INF = math.inf

# The 4-example board of ladder_ties.csv: columns are submissions, rows are examples.
TIES = np.array([
    [1, 0, 0, 0, 0],
    [1, 1, 0, 0, 0],
    [1, 1, 1, 0, 0],
    [0, 0, 0, 1, 0],
], dtype=float)


# --------------------------------------------------------------------------- Algorithm 1
def test_fixed_step_hand_replay_with_ties_at_the_threshold():
    r = L.replay(TIES, step=0.25)
    # naive R_S(f_t): column means
    assert r.naive.tolist() == [0.75, 0.5, 0.25, 0.25, 0.0]
    # t=1: R_0 = inf, released [0.75]_0.25 = 0.75
    # t=2: 0.5 < 0.75 - 0.25 = 0.5?  No: a tie is not an improvement -> R_2 = 0.75
    # t=3: 0.25 < 0.5 -> R_3 = [0.25]_0.25 = 0.25
    # t=4: 0.25 < 0.25 - 0.25 = 0? No -> 0.25
    # t=5: 0.0 < 0.0?  No (tie again) -> 0.25
    assert r.scores.tolist() == [0.75, 0.75, 0.25, 0.25, 0.25]
    assert r.improved.tolist() == [True, False, True, False, False]
    assert r.thresholds.tolist() == [INF, 0.5, 0.5, 0.0, 0.0]
    assert r.best_naive.tolist() == [0.75, 0.5, 0.25, 0.25, 0.0]


def test_fixed_step_rounds_to_the_nearest_multiple_and_ties_survive_binary_noise():
    # n = 2 examples with fractional losses, eta = 0.1.
    losses = np.array([[0.3, 0.2, 0.1, 0.0],
                       [0.2, 0.2, 0.18, 0.0]])
    r = L.replay(losses, step=0.1)
    # t=1: R_S = 0.25 -> [0.25]_0.1 = 0.3 (halves round up)
    # t=2: R_S = 0.2;  threshold 0.3 - 0.1 = 0.2 (0.19999999999999998 in binary): a tie, not released
    # t=3: R_S = 0.14 < 0.2 -> [0.14]_0.1 = 0.1
    # t=4: R_S = 0.0;  threshold 0.1 - 0.1 = 0: a tie, not released
    assert r.scores.tolist() == [0.3, 0.3, 0.1, 0.1]
    assert r.improved.tolist() == [True, False, True, False]


def test_fixed_step_keeps_the_old_score_until_an_improvement_beats_the_step():
    # 10 examples, eta = 0.2: losses 0.9, 0.8 (not enough), 0.6 (enough), 0.5, 0.39 (enough)
    counts = [9, 8, 6, 5]
    cols = [np.r_[np.ones(c), np.zeros(10 - c)] for c in counts]
    cols.append(np.r_[np.full(5, 0.78), np.zeros(5)])  # mean 0.39
    r = L.replay(np.column_stack(cols), step=0.2)
    # 0.9 -> [0.9]_0.2 = 1.0 (0.9/0.2 = 4.5, half up); 0.8 < 0.8? no; 0.6 < 0.8 -> [0.6]_0.2 = 0.6;
    # 0.5 < 0.4? no; 0.39 < 0.4 -> [0.39]_0.2 = 0.4
    assert r.scores.tolist() == [1.0, 1.0, 0.6, 0.6, 0.4]
    assert r.improved.tolist() == [True, False, True, False, True]


# --------------------------------------------------------------------------- Algorithm 2
def test_parameter_free_hand_replay_with_ties_at_the_threshold():
    r = L.replay(TIES)  # n = 4, sqrt(n) = 2
    # t=1: R_0 = inf, released [0.75]_{1/4} = 0.75, l_best = (1,1,1,0)
    # t=2: d = l_2 - l_best = (-1,0,0,0): s = sqrt((1 - 1/4)/3) = 1/2, s/sqrt(n) = 1/4,
    #      threshold 0.75 - 0.25 = 0.5 and R_S = 0.5: a tie -> not released
    # t=3: d = (-1,-1,0,0): s = sqrt(1/3), threshold 0.75 - sqrt(1/3)/2 = 0.4613; 0.25 < 0.4613 -> released
    # t=4: d = (0,0,-1,1) vs l_best = l_3: s = sqrt(2/3), threshold 0.25 - sqrt(2/3)/2 < 0 -> not released
    # t=5: d = (0,0,-1,0): s = 1/2, threshold 0.25 - 0.25 = 0 and R_S = 0: a tie -> not released
    assert r.scores.tolist() == [0.75, 0.75, 0.25, 0.25, 0.25]
    assert r.improved.tolist() == [True, False, True, False, False]
    np.testing.assert_allclose(r.thresholds[1:], [0.5, 0.75 - math.sqrt(1 / 3) / 2, 0.25 - math.sqrt(2 / 3) / 2,
                                                  0.0], rtol=0, atol=1e-15)


def test_parameter_free_rounds_to_a_multiple_of_one_over_n():
    # n = 4 fractional losses: R_S = 0.8375 -> [.]_{1/4} = 0.75 (0.8375 * 4 = 3.35 -> 3)
    losses = np.array([[0.9, 0.0], [0.9, 0.0], [0.9, 0.0], [0.65, 0.1]])
    r = L.replay(losses)
    assert r.naive[0] == pytest.approx(0.8375)
    # t=2: R_S = 0.025, d = (-0.9,-0.9,-0.9,-0.55), s = 0.175, threshold 0.75 - 0.0875 -> released,
    #      [0.025]_{1/4} = 0 (0.1 -> 0)
    assert r.scores.tolist() == [0.75, 0.0]


@pytest.mark.parametrize("n", [2, 3, 7, 50, 1000])
def test_a_one_example_improvement_is_exactly_at_the_parameter_free_threshold(n):
    # fixing one example and breaking none gives d = (-1, 0, ..., 0): mean -1/n, s^2 = 1/n (n >= 2),
    # so R_S(f_2) = R_1 - 1/n = R_1 - s/sqrt(n) exactly: a tie for every n, never released.
    first = np.zeros(n)
    first[: max(1, n // 2)] = 1
    second = first.copy()
    second[0] = 0
    r = L.replay(np.column_stack([first, second]))
    assert r.improved.tolist() == [True, False]
    assert r.thresholds[1] == pytest.approx(r.naive[1], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.lists(st.integers(0, 1), min_size=n, max_size=n), min_size=1, max_size=8))))
def test_parameter_free_with_01_losses_releases_iff_fixed_minus_broken_squared_exceeds_their_sum(case):
    # With 0/1 losses, R_S(f_t) < R_best - s/sqrt(n)  <=>  a > b and (a - b)^2 > a + b, where a = examples
    # fixed and b = examples broken relative to the last released submission (a paired t-statistic above 1).
    n, columns = case
    losses = np.array(columns, dtype=float).T
    r = L.replay(losses)
    assert r.improved[0]
    best = losses[:, 0]
    for t in range(1, losses.shape[1]):
        fixed = int(np.sum((best == 1) & (losses[:, t] == 0)))
        broken = int(np.sum((best == 0) & (losses[:, t] == 1)))
        assert r.improved[t] == (fixed > broken and (fixed - broken) ** 2 > fixed + broken), (t, fixed, broken)
        if r.improved[t]:
            best = losses[:, t]
            assert r.scores[t] == losses[:, t].mean()  # 0/1 losses: already a multiple of 1/n


def _exact_fixed_step(columns, step: Fraction):
    """Algorithm 1 in exact rational arithmetic (half-up rounding), as an independent reference."""
    released, out = None, []
    for col in columns:
        loss = sum(col, Fraction(0)) / len(col)
        if released is None or loss < released - step:
            q = loss / step
            index = math.floor(q + Fraction(1, 2))
            released = index * step
            out.append((float(released), True))
        else:
            out.append((float(released), False))
    return out


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 10), st.integers(1, 6), st.integers(2, 10),
       st.lists(st.lists(st.integers(0, 10), min_size=6, max_size=6), min_size=1, max_size=6))
def test_fixed_step_matches_exact_rational_arithmetic(n, m, q, raw):
    # losses are multiples of 1/q, eta = 1/m: ties at thresholds and halves are frequent.
    columns = [[Fraction(min(v, q), q) for v in col[:n]] for col in raw]
    assume(all(len(c) == n for c in columns))
    step = Fraction(1, m)
    expected = _exact_fixed_step(columns, step)
    losses = np.array([[float(v) for v in col] for col in columns]).T
    r = L.replay(losses, step=float(step))
    assert [(float(s), bool(i)) for s, i in zip(r.scores, r.improved)] == [
        (pytest.approx(s, abs=1e-12), i) for s, i in expected]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30).flatmap(lambda n: st.lists(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=n, max_size=n), min_size=1, max_size=10)),
    st.one_of(st.none(), st.floats(0.001, 1.0)))
def test_released_scores_never_increase_and_stay_within_rounding_of_the_loss(columns, step):
    losses = np.array(columns).T
    r = L.replay(losses, step)
    assert np.all(np.diff(r.scores) <= 1e-12)
    multiple = step if step is not None else 1.0 / losses.shape[0]
    released = r.improved
    assert np.all(np.abs(r.scores[released] - r.naive[released]) <= multiple / 2 + 1e-9)
    # a submission that is not released did not beat its threshold
    assert np.all(r.naive[~released] >= r.thresholds[~released] - 1e-9)


def test_round_to_multiple():
    assert L.round_to_multiple(0.25, 0.1) == 0.3   # 2.4999999999999996 in binary: still a half, rounds up
    assert L.round_to_multiple(0.3, 0.1) == 0.3    # not 0.30000000000000004
    assert L.round_to_multiple(0.35, 0.1) == 0.4
    assert L.round_to_multiple(0.1234, 0.001) == 0.123
    assert L.round_to_multiple([0.0, 0.05, 0.949], 0.1).tolist() == [0.0, 0.1, 0.9]


@pytest.mark.parametrize("losses,step,parameter", [
    (np.array([[0.5, 1.2]]), 0.1, "losses"),
    (np.array([[0.5, -0.1]]), 0.1, "losses"),
    (np.array([[0.5], [np.nan]]), None, "losses"),
    (np.ones((3, 2)) * 0.5, 0.0, "step"),
    (np.ones((3, 2)) * 0.5, 1.5, "step"),
    (np.ones((1, 2)) * 0.5, None, "losses"),  # parameter-free needs a standard deviation: n >= 2
])
def test_replay_refuses_bad_input(losses, step, parameter):
    with pytest.raises(InputError) as info:
        L.replay(losses, step)
    assert info.value.parameter == parameter


def test_fixed_step_works_with_a_single_example():
    assert L.replay(np.array([[1.0, 0.0]]), step=0.5).scores.tolist() == [1.0, 0.0]


# --------------------------------------------------------------------------- Lemma 4
def test_lemma4_labels_published_form():
    # Lemma 4: exp(-2 eps^2 n + (1/eta + 2) log(4k/eta) + 1) < delta with eps = eta = 0.05, k = 100,
    # delta = 0.05: n > (22 log(8000) + 1 + log 20) / (2 * 0.05^2) = 40,342.81...
    real = (22 * math.log(8000) + 1 + math.log(20)) / (2 * 0.05 ** 2)
    assert real == pytest.approx(40342.81246562348)
    assert L.labels(0.05, 0.05, 100, 0.05) == 40_343


@settings(max_examples=80, deadline=None)
@given(st.floats(0.005, 0.5), st.floats(0.005, 1.0), st.integers(1, 10**6), st.floats(1e-9, 0.5))
def test_labels_are_the_smallest_integer_satisfying_lemma4_strictly(eps, eta, k, delta):
    n = L.labels(eps, eta, k, delta)
    closed_form = ((1 / eta + 2) * math.log(4 * k / eta) + 1 + math.log(1 / delta)) / (2 * eps * eps)
    assert n == max(1, math.floor(closed_form) + 1) or abs(n - closed_form) < 1 + 1e-6 * closed_form
    assert L.log_failure_bound(n, eps, eta, k) < math.log(delta)
    if n > 1:
        assert L.log_failure_bound(n - 1, eps, eta, k) >= math.log(delta)


def test_labels_broadcast_and_are_monotone():
    k = np.array([1, 10, 100, 1000, 10_000])
    n = L.labels(0.05, 0.05, k, 0.05)
    assert n.shape == (5,)
    assert [L.labels(0.05, 0.05, int(v), 0.05) for v in k] == n.tolist()
    assert np.all(np.diff(n) > 0)                                                  # more submissions, more labels
    eps = np.array([0.01, 0.02, 0.05, 0.1])
    assert np.all(np.diff(L.labels(eps, 0.05, 100, 0.05)) < 0)                    # looser eps, fewer labels
    assert np.all(np.diff(L.labels(0.05, 0.05, 100, np.array([1e-6, 1e-3, 0.1]))) < 0)  # looser delta


def test_failure_probability_is_the_bound_and_caps_at_one():
    p = L.failure_probability(40_343, 0.05, 0.05, 100)
    assert p < 0.05
    assert L.failure_probability(40_342, 0.05, 0.05, 100) >= 0.05
    assert L.failure_probability(10, 0.05, 0.05, 100) == 1.0


@pytest.mark.parametrize("total,k,delta", [(0.1, 100, 0.05), (0.05, 1000, 0.01), (0.3, 10, 0.1), (0.02, 50, 0.05)])
def test_best_step_minimizes_labels_over_every_split(total, k, delta):
    eta, eps, n = L.best_step(total, k, delta)
    assert eps + eta == pytest.approx(total)
    grid = np.linspace(total * 0.001, total * 0.999, 5000)
    on_grid = L.labels(total - grid, grid, k, delta)
    assert n <= on_grid.min()
    assert n == L.labels(eps, eta, k, delta)


def test_best_step_at_the_published_setting():
    # eps + eta = 0.1, k = 100, delta = 0.05: the best split needs fewer labels than 0.05 + 0.05
    eta, eps, n = L.best_step(0.1, 100, 0.05)
    assert n < 40_343
    assert 0.02 < eta < 0.05


def test_leaderboard_error_inverts_labels():
    total, eta, eps = L.leaderboard_error(40_343, 100, 0.05)
    assert total == pytest.approx(eps + eta)
    assert total <= 0.1 + 1e-9                     # 40,343 labels guarantee 0.05 + 0.05, the best split does better
    assert L.failure_probability(40_343, eps * (1 + 1e-9), eta, 100) <= 0.05
    # and the labels for that split and a hair more error are at most 40,343
    assert L.labels(eps * (1 + 1e-6), eta, 100, 0.05) <= 40_343


@pytest.mark.parametrize("kwargs,parameter", [
    ({"epsilon": 0.0, "step": 0.1, "submissions": 1, "delta": 0.1}, "epsilon"),
    ({"epsilon": 0.1, "step": 0.0, "submissions": 1, "delta": 0.1}, "step"),
    ({"epsilon": 0.1, "step": 0.1, "submissions": 0, "delta": 0.1}, "submissions"),
    ({"epsilon": 0.1, "step": 0.1, "submissions": 2.5, "delta": 0.1}, "submissions"),
    ({"epsilon": 0.1, "step": 0.1, "submissions": 1, "delta": 1.0}, "delta"),
])
def test_labels_refuse_bad_input(kwargs, parameter):
    with pytest.raises(InputError) as info:
        L.labels(**kwargs)
    assert info.value.parameter == parameter


def test_extreme_parameters_stay_finite():
    assert L.labels(1e-4, 1e-4, 10**9, 1e-12) > 10**12          # huge but exact integer
    assert L.labels(0.999, 1.0, 1, 0.999) >= 1
    eta, eps, n = L.best_step(0.999, 1, 0.5)
    assert 0 < eta < 0.999 and n >= 1


# --------------------------------------------------------------------------- Section 5
def test_boosting_attack_beats_the_naive_board_but_not_the_ladder():
    # Theorem 6: against an exact board the boosted vote's published loss falls to 1/2 - Omega(sqrt(k/n));
    # the Ladder (parameter-free) does not follow; on a fresh holdout the vote is a coin flip.
    c = L.boosting_attack(4000, 400, seed=0, trials=2)
    naive = c.naive_public.mean(axis=0)
    ladder = c.ladder_public.mean(axis=0)
    holdout = c.naive_holdout.mean(axis=0)
    assert naive[399] < 0.47                         # about 1/2 - sqrt(400/8000)/pi = 0.429
    assert naive[399] < naive[99] < naive[9]         # keeps falling with k
    assert ladder[399] > naive[399] + 0.03
    assert ladder[399] - ladder[99] > -0.01          # the Ladder's board has stopped moving
    assert abs(holdout[399] - 0.5) < 0.03
    assert naive[399] == pytest.approx(L.boosting_reference(4000, 400), abs=0.02)


def test_boosting_attack_against_the_fixed_step_ladder():
    c = L.boosting_attack(2000, 200, step=0.02, seed=5, trials=1)
    assert c.ladder_public[0, -1] > c.naive_public[0, -1] + 0.02
    assert c.ladder_selected[0, -1] <= 5              # a random probe rarely beats the last score by eta
    assert c.naive_selected[0, -1] > 80               # about half look better than chance


def test_boosting_attack_is_seeded_and_chunking_does_not_change_it():
    a = L.boosting_attack(500, 60, seed=11, trials=2)
    *_, b = L.iter_boosting_attack(500, 60, seed=11, trials=2, chunk=7)
    np.testing.assert_array_equal(a.naive_public, b.naive_public)
    np.testing.assert_array_equal(a.ladder_public, b.ladder_public)
    c = L.boosting_attack(500, 60, seed=12, trials=2)
    assert not np.array_equal(a.naive_public, c.naive_public)
    assert a.done == a.total == 120


def test_boosting_attack_can_stop_early_and_keeps_what_it_computed():
    seen = []

    def progress(done, total):
        seen.append((done, total))
        return done < 30

    c = L.boosting_attack(300, 50, seed=1, trials=2, progress=progress)
    assert seen[0] == (10, 100)
    assert c.done == 30
    assert np.isfinite(c.naive_public[0, :30]).all() and np.isnan(c.naive_public[0, 30:]).all()
    assert np.isnan(c.naive_public[1]).all()


@pytest.mark.parametrize("kwargs,parameter", [
    ({"labels": 1, "submissions": 10}, "labels"),
    ({"labels": 100, "submissions": 0}, "submissions"),
    ({"labels": 100, "submissions": 10, "trials": 0}, "trials"),
    ({"labels": 100, "submissions": 10, "step": -1}, "step"),
    ({"labels": 100, "submissions": 10, "seed": -3}, "seed"),
])
def test_boosting_attack_refuses_bad_input(kwargs, parameter):
    with pytest.raises(InputError) as info:
        L.boosting_attack(**kwargs)
    assert info.value.parameter == parameter


# --------------------------------------------------------------------------- the vectorized replay
def _round_by_round(losses, step):
    """Algorithm 1 / 2 played one round at a time with LadderState (the reference for replay())."""
    arr = np.asarray(losses, dtype=float)
    state = L.LadderState(arr.shape[0], step)
    out = [state.submit(float(arr[:, t].mean()), arr[:, t] if step is None else None) for t in range(arr.shape[1])]
    return [o[0] for o in out], [o[1] for o in out], [o[2] for o in out]


@settings(max_examples=120, deadline=None)
@given(st.integers(2, 25), st.integers(1, 60), st.sampled_from([None, 0.01, 0.1, 0.25, 1 / 3, 1e-6, 1.0]),
       st.integers(0, 2**31), st.sampled_from(["01", "quarters", "uniform", "improving"]))
def test_vectorized_replay_makes_the_round_by_round_decisions(n, k, step, seed, kind):
    rng = np.random.default_rng(seed)
    if kind == "01":
        losses = (rng.random((n, k)) < rng.random(k)).astype(float)
    elif kind == "quarters":
        losses = np.round(rng.random((n, k)) * 4) / 4
    elif kind == "uniform":
        losses = rng.random((n, k))
    else:
        losses = (rng.random((n, k)) < np.linspace(0.9, 0.0, k)).astype(float)
    scores, improved, thresholds = _round_by_round(losses, step)
    r = L.replay(losses, step)
    assert r.scores.tolist() == scores and r.improved.tolist() == improved
    assert r.thresholds.tolist() == thresholds           # the same floats: one contiguous row per submission


def test_long_runs_of_withheld_submissions_and_blocks_larger_than_a_release():
    # 3,000 submissions, only the first beats the others: every block search runs to the end
    losses = np.full((4, 3000), 0.5)
    losses[:, 0] = 0.25
    r = L.replay(losses, 0.1)
    assert r.improved.sum() == 1 and np.all(r.scores == 0.3)
    assert _round_by_round(losses[:, :50], 0.1)[0] == r.scores[:50].tolist()


def test_round_to_multiple_with_a_step_below_float_resolution_leaves_the_value():
    # issue 15: --step 1e-300 (or 5e-324) must not overflow: x is already a multiple as far as a float can tell
    assert L.round_to_multiple(0.3, 1e-300) == 0.3
    assert L.round_to_multiple(0.7, 5e-324) == 0.7
    assert L.round_to_multiple([0.0, 1.0], 5e-324).tolist() == [0.0, 1.0]
    assert L.replay(TIES, 5e-324).scores.tolist() == [0.75, 0.5, 0.25, 0.25, 0.0]


# --------------------------------------------------------------------------- exact counts (issue 15)
def test_issue_15_tiny_step_is_refused_naming_the_step():
    # ladder-size --epsilon 0.05 --step 1e-300 --submissions 100 printed "labels: 1" (int64 overflow)
    with pytest.raises(InputError) as info:
        L.labels(0.05, 1e-300, 100, 0.05)
    assert info.value.parameter == "step" and "1e+15" in info.value.rule


@pytest.mark.parametrize("eps,eta,name", [(1e-300, 0.05, "epsilon"), (1e-7, 0.05, "epsilon"), (0.05, 1e-12, "step"),
                                          (5e-324, 5e-324, "epsilon")])
def test_counts_beyond_the_limit_name_what_made_them_explode(eps, eta, name):
    with pytest.raises(InputError) as info:
        L.labels(eps, eta, 100, 0.05)
    assert info.value.parameter == name


def test_counts_just_below_the_limit_are_exact():
    n = L.exact_labels(0.05, 1e-9, 100, 0.05)                       # about 4.4e12 labels
    assert 10**12 < n <= L.MAX_LABELS
    assert L.satisfies_lemma4(n, 0.05, 1e-9, 100, 0.05) and not L.satisfies_lemma4(n - 1, 0.05, 1e-9, 100, 0.05)


def test_satisfies_lemma4_at_the_published_setting():
    # (22 log 8000 + 1 + log 20) / (2 * 0.05^2) = 40,342.81: 40,343 satisfies the strict inequality, 40,342 does not
    assert L.satisfies_lemma4(40_343, 0.05, 0.05, 100, 0.05)
    assert not L.satisfies_lemma4(40_342, 0.05, 0.05, 100, 0.05)
    assert L.exact_labels(0.05, 0.05, 100, 0.05) == 40_343


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-4, 0.9), st.floats(1e-4, 1.0), st.integers(1, 10**29), st.floats(1e-300, 0.9))
def test_certified_counts_are_positive_and_the_smallest(eps, eta, k, delta):
    try:
        n = L.exact_labels(eps, eta, k, delta)
    except InputError as exc:                      # only beyond the reporting limit
        assert exc.parameter in ("epsilon", "step") and "1e+15" in exc.rule
        return
    assert isinstance(n, int) and 1 <= n <= L.MAX_LABELS
    assert L.satisfies_lemma4(n, eps, eta, k, delta)
    assert n == 1 or not L.satisfies_lemma4(n - 1, eps, eta, k, delta)
    assert abs(n - L.labels(eps, eta, k, delta)) <= 1          # the float solve agrees to within a label


@pytest.mark.parametrize("total", [1e-300, 5e-324, 1e-6])
def test_best_step_refuses_a_total_error_no_split_can_meet(total):
    with pytest.raises(InputError) as info:
        L.best_step(total, 100, 0.05)
    assert info.value.parameter == "total_error"


def test_extreme_deltas_and_submissions_stay_exact():
    for delta in (1e-300, 5e-324):
        n = L.exact_labels(0.05, 0.05, 100, delta)
        assert L.satisfies_lemma4(n, 0.05, 0.05, 100, delta) and not L.satisfies_lemma4(n - 1, 0.05, 0.05, 100, delta)
    assert L.exact_labels(0.05, 0.05, 10**29, 0.05) > L.exact_labels(0.05, 0.05, 100, 0.05)
