"""The claim scoring every reproduction uses (`qosnet.reproduce.scoring`): hand-worked
intervals and verdicts, and properties a verdict must keep whatever the numbers."""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qosnet.reproduce import scoring
from qosnet.reproduce.scoring import (
    CIRCULAR,
    HOLDS,
    NOT,
    ONE_SEED,
    TIE,
    UNLIKE,
    UNTESTABLE,
    Traffic,
    combine,
    compare,
    interval,
    over_loads,
    t_quantile,
)


@pytest.mark.parametrize(
    ("df", "expected"),
    # Student's t table, two-sided 95%
    [(1, 12.7062), (2, 4.3027), (4, 2.7764), (10, 2.2281), (30, 2.0423), (1000, 1.9623)],
)
def test_t_quantile_matches_the_table(df, expected):
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-4)


def test_interval_of_three_seeds_by_hand():
    # mean 2, sd 1, half width 4.3027 / sqrt(3) = 2.4842
    i = interval([1.0, 2.0, 3.0])
    assert (i.mean, i.n) == (2.0, 3)
    assert i.low == pytest.approx(2 - 2.4842, abs=1e-3)
    assert i.high == pytest.approx(2 + 2.4842, abs=1e-3)


def test_relative_match_by_hand():
    # a: mean 1.1, variance 0.01; b: 1.0 each, variance 0. Welch: se^2 = 0.01 / 3, df = 2,
    # half width 4.3027 x sqrt(0.01 / 3) = 0.2484; over b's mean 1.0: [-0.148, 0.348]
    rel, verdict = scoring.relative_match([1.0, 1.1, 1.2], [1.0, 1.0, 1.0], 0.05)
    assert rel.mean == pytest.approx(0.1)
    assert rel.low == pytest.approx(0.1 - 0.2484, abs=1e-3)
    assert rel.high == pytest.approx(0.1 + 0.2484, abs=1e-3)
    assert verdict == TIE
    # the same spread about b's mean, scaled so the interval fits within 5%
    assert scoring.relative_match([1.0, 1.001, 1.002], [1.0, 1.0, 1.0], 0.05)[1] == HOLDS
    assert scoring.relative_match([1.2, 1.201, 1.202], [1.0, 1.0, 1.0], 0.05)[1] == NOT
    assert scoring.relative_match([1.06], [1.0], 0.05) == (
        scoring.Interval(pytest.approx(0.06), math.nan, math.nan, 1),  # type: ignore[arg-type]
        ONE_SEED,
    )


def test_interval_leaves_out_missing_values():
    i = interval([4.0, float("nan"), None])  # type: ignore[list-item]
    assert (i.mean, i.low, i.high, i.n) == (4.0, 4.0, 4.0, 1)
    assert interval([]).n == 0


def test_paired_seeds_tell_apart_what_unpaired_cannot():
    # the seeds move both sides together: per seed a is 2, 2 and 2.5 lower
    a = {1: 10.0, 2: 11.0, 3: 12.0}
    b = {1: 12.0, 2: 13.0, 3: 14.5}
    paired = compare(a, b, "lower")
    assert paired.paired and paired.verdict == HOLDS
    # differences -2, -2, -2.5: mean -2.1667, sd 0.2887, half 4.3027 * 0.2887 / sqrt(3)
    assert paired.diff.mean == pytest.approx(-2.1667, abs=1e-4)
    assert paired.diff.low == pytest.approx(-2.1667 - 0.7172, abs=1e-3)
    assert paired.diff.high == pytest.approx(-2.1667 + 0.7172, abs=1e-3)
    # the same numbers as independent samples (Welch): the spread across seeds hides it
    unpaired = compare(list(a.values()), list(b.values()), "lower")
    assert not unpaired.paired and unpaired.verdict == TIE
    assert unpaired.diff.low < 0 < unpaired.diff.high


def test_the_wrong_direction_is_not():
    a = {1: 10.0, 2: 11.0, 3: 12.0}
    b = {1: 12.0, 2: 13.0, 3: 14.5}
    assert compare(a, b, "higher").verdict == NOT


def test_equal_sides_tie():
    # 16 credits that never bind give exactly no control's numbers
    same = {1: 0.794, 2: 0.794, 3: 0.794}
    assert compare(same, dict(same), "higher").verdict == TIE


def test_one_seed_decides_nothing():
    assert compare({1: 1.0}, {1: 5.0}, "lower").verdict == ONE_SEED
    assert scoring.within([0.001], 0.01) == ONE_SEED


def test_dmp_untestable_where_the_baseline_never_misses():
    zero = {1: 0.0, 2: 0.0, 3: 0.0}
    s = compare(zero, zero, "lower", dmp=True)
    assert s.verdict == UNTESTABLE
    # a mechanism that misses where the baseline never does is a reversal, not untestable
    assert compare({1: 0.1, 2: 0.2, 3: 0.15}, zero, "lower", dmp=True).verdict == NOT
    # and testable once the baseline misses
    s = compare(zero, {1: 0.1, 2: 0.2, 3: 0.15}, "lower", dmp=True)
    assert s.verdict == HOLDS


def test_a_win_on_refused_traffic_is_not_like_for_like():
    fast = {1: 200.0, 2: 190.0, 3: 210.0}
    slow = {1: 2400.0, 2: 3500.0, 3: 3800.0}
    refused = Traffic(delivered=0.05, refused=0.9, network=200, end_to_end=210)
    everything = Traffic(delivered=0.6, refused=0.0, network=2400, end_to_end=270000)
    s = compare(fast, slow, "lower", traffic=(refused, everything))
    assert s.verdict == UNLIKE
    assert "refused 90%" in s.text(("A peak", "No A, No C"))
    # the same win on the same traffic holds
    s = compare(fast, slow, "lower", traffic=(everything, everything))
    assert s.verdict == HOLDS


def test_matches_is_an_equivalence_test():
    # value - 0.5: 0, 0.01, -0.01; mean 0, half width 4.3027 * 0.01 / sqrt(3) = 0.0248
    assert scoring.matches([0.50, 0.51, 0.49], 0.5, 0.02) == TIE
    assert scoring.matches([0.50, 0.51, 0.49], 0.5, 0.03) == HOLDS
    assert scoring.matches([0.60, 0.61, 0.59], 0.5, 0.02) == NOT


def test_combine_and_loads():
    assert combine([HOLDS, HOLDS]) == HOLDS
    assert combine([HOLDS, TIE]) == TIE
    assert combine([HOLDS, NOT, TIE]) == NOT
    assert combine([TIE, UNTESTABLE]) == UNTESTABLE
    assert combine([CIRCULAR]) == CIRCULAR
    assert over_loads({0.4: HOLDS, 0.6: HOLDS, 0.8: HOLDS}) == "holds at all 3 loads"
    assert (
        over_loads({0.4: HOLDS, 0.6: TIE, 0.8: NOT}) == "holds at 1 of 3 loads (0.6: tie, 0.8: not)"
    )


def test_the_interval_covers_the_mean_95_percent_of_the_time():
    # three normal seeds, 4000 repetitions: a bootstrap interval would cover about 75%
    rng = random.Random(35)
    covered = 0
    reps = 4000
    for _ in range(reps):
        i = interval([rng.gauss(10.0, 3.0) for _ in range(3)])
        covered += i.low <= 10.0 <= i.high
    assert 0.935 < covered / reps < 0.965


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
seeds_values = st.lists(finite, min_size=3, max_size=6)


@given(seeds_values, finite)
def test_interval_moves_with_a_shift(values, shift):
    a, b = interval(values), interval([v + shift for v in values])
    assert b.mean == pytest.approx(a.mean + shift, abs=1e-6 * (1 + abs(shift) + abs(a.mean)))
    assert (b.high - b.low) == pytest.approx(a.high - a.low, abs=1e-6 * (1 + abs(a.high - a.low)))
    assert a.low <= a.mean <= a.high


@given(st.lists(st.tuples(finite, finite), min_size=3, max_size=6))
def test_verdict_is_antisymmetric(pairs):
    a = {i: x for i, (x, _) in enumerate(pairs)}
    b = {i: y for i, (_, y) in enumerate(pairs)}
    ab, ba = compare(a, b, "lower").verdict, compare(b, a, "lower").verdict
    swap = {HOLDS: NOT, NOT: HOLDS, TIE: TIE}
    assert ba == swap[ab]
    assert compare(a, b, "higher").verdict == swap[ab]


@given(st.floats(min_value=0.55, max_value=0.995), st.floats(min_value=0.5, max_value=200))
def test_t_quantile_inverts_the_distribution(p, df):
    q = t_quantile(p, df)
    assert scoring.t_cdf(q, df) == pytest.approx(p, abs=1e-9)
    assert q >= t_quantile(p, df * 2) - 1e-9  # heavier tails with fewer degrees of freedom
    assert not math.isnan(q)
