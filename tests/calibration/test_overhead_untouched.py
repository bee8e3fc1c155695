"""The empty windows `rig calibrate overhead` keeps (found under load: at load 15-23 the host
DUT was preempted inside most of its empty windows, their median moved with them, the old
rule, median + 5 deviations, kept the stretched ones, and the bench stored an overhead of
8.05 ms where the host build's is about 0 or refused 11.5 ms as implausible; every window of
the next `rig run`, less that overhead, was then shorter than its batch and left out)."""
from __future__ import annotations

import numpy as np

from energyrig.calibration.routines.overhead import untouched

PERIOD_S = 10e-6  # a PPK2's sample
OVERHEAD_S = 50e-6


def test_a_load_that_stretches_most_windows_leaves_the_untouched_ones_alone() -> None:
    rng = np.random.default_rng(7)
    times = OVERHEAD_S + rng.normal(0, 3e-6, 40)
    preempted = np.arange(40) % 5 < 3  # 24 of 40: their median is a stretched window
    times[preempted] += rng.uniform(0.5e-3, 10e-3, preempted.sum())
    keep = untouched(times, PERIOD_S)
    assert np.array_equal(keep, ~preempted)
    assert abs(times[keep].mean() - OVERHEAD_S) < 3e-6


def test_a_steady_jitter_keeps_every_window() -> None:
    # Jitter of one and of five samples: the rule must not trim a symmetric spread.
    rng = np.random.default_rng(3)
    for sd in (PERIOD_S, 5 * PERIOD_S):
        times = OVERHEAD_S + rng.normal(0, sd, 40)
        assert untouched(times, PERIOD_S).mean() >= 39 / 40


def test_windows_shorter_than_a_sample_count_as_caught() -> None:
    # A 3 µs window is caught by a sample 3 times in 10: 0 or one period, both kept, so
    # the mean stays the window's length.
    times = np.where(np.arange(40) % 10 < 3, PERIOD_S, 0.0)
    assert untouched(times, PERIOD_S).all()
