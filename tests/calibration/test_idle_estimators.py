"""The four estimators of ``rig calibrate baseline`` (energyrig.calibration.routines.baseline)
on synthetic idle spans whose answer is known: the drift, the white noise, the shortest
baseline span of a stated standard error, and the guard after a falling edge."""
from __future__ import annotations

import math

import numpy as np
import pytest

from energyrig.calibration.routines.baseline import (GUARD_MARGIN, SETTLED_FOR_S, allan_span,
                                                     idle_drift, idle_line, idle_noise,
                                                     settle_guard)
from energyrig.errors import CalibrationError

PERIOD = 1e-5


def _line(slope: float, level: float, n: int = 30_000) -> np.ndarray:
    return level + slope * np.arange(n) * PERIOD


def test_the_line_of_an_idle_span_is_its_slope_and_level() -> None:
    slope, level = idle_line(_line(2e-6, 3e-6), PERIOD)
    assert slope == pytest.approx(2e-6, rel=1e-6)
    assert level == pytest.approx(3e-6, rel=1e-6)


def test_the_drift_is_the_mean_slope_with_its_spread_over_the_spans() -> None:
    drift, u = idle_drift([_line(1e-6, 3e-6), _line(3e-6, 3e-6)], PERIOD, noise_a=0.0)
    assert drift == pytest.approx(2e-6, rel=1e-6)
    assert u == pytest.approx(math.sqrt(2) * 1e-6 / math.sqrt(2), rel=1e-6)


def test_the_drift_is_known_no_better_than_white_noise_leaves_in_a_slope() -> None:
    n, noise = 30_000, 1e-6
    third = n // 3
    _, u = idle_drift([_line(1e-6, 3e-6, n)] * 2, PERIOD, noise_a=noise)
    assert u == pytest.approx(1.2533 * noise * math.sqrt(2 / third) / (2 * third * PERIOD)
                              / math.sqrt(2), rel=1e-9)


def test_the_noise_is_the_white_noise_blind_to_a_drift_and_a_load_step() -> None:
    rng = np.random.default_rng(3)
    sigma = 0.2e-6
    seg = _line(5e-6, 3e-6, 200_000) + rng.normal(0.0, sigma, 200_000)
    seg[100_000:] += 50e-6  # a load switching on
    noise, n = idle_noise([seg[:150_000], seg[150_000:]])
    assert noise == pytest.approx(sigma, rel=0.02)
    assert n <= 200_000 - 2 and n >= 200_000 - 20  # the step left out, little else


def test_the_allan_span_is_where_the_standard_error_reaches_the_precision() -> None:
    rng = np.random.default_rng(5)
    sigma = 1e-6
    idle = [rng.normal(0.0, sigma, 400_000) for _ in range(3)]
    precision_a = sigma / math.sqrt(1000)  # white noise: a span of 1000 samples
    spans, deviation, k = allan_span(idle, precision_a)
    assert k is not None
    assert deviation[k] <= precision_a < deviation[k - 1]
    assert 700 <= spans[k] <= 1400
    assert allan_span(idle, sigma / 1e4).shortest is None  # needs 1e8 samples


def test_the_guard_is_twice_the_time_the_current_takes_to_settle() -> None:
    level = np.zeros(2000)
    after = np.concatenate([np.full(30, 1e-3), np.zeros(1970)])  # settled after 30 samples
    guard, u, median, n = settle_guard([(after, level)] * 3, noise_a=1e-6, period_s=PERIOD)
    assert median == pytest.approx(30 * PERIOD)
    assert guard == pytest.approx(GUARD_MARGIN * 30 * PERIOD)
    assert u == pytest.approx(GUARD_MARGIN * PERIOD / math.sqrt(12))
    assert n == 3


def test_a_current_that_never_settles_gives_no_guard() -> None:
    run = round(SETTLED_FOR_S / PERIOD)
    after = np.tile([1e-3, 0.0], run)  # back within the band never for a run of samples
    with pytest.raises(CalibrationError, match="does not settle"):
        settle_guard([(after, np.zeros(after.size))] * 3, noise_a=1e-6, period_s=PERIOD)
