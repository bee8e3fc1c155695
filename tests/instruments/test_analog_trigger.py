"""The analog trigger (threshold with hysteresis) against closed-form signals, and the CSV
reader that uses it. The sigrok reader's use is tested against sigrok-cli in
test_sigrok_srfile.py."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from energyrig.errors import CaptureError
from energyrig.instruments.csvfile import CsvCapture
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.threshold import AnalogTrigger, Schmitt
from energyrig.energy.windows import WindowSettings, find_windows

LEVEL, BAND, NOISE = 1.65, 0.4, 0.15  # V; the noise stays inside the band
PERIOD, HIGH, RAMP = 600, 150, 100     # samples: a trapezoid wave 0 -> 3.3 V


def noisy_square(periods: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A 0/3.3 V trapezoid wave (linear ramps of RAMP samples) plus uniform noise < NOISE,
    and its clean form. Period k rises over samples [k·PERIOD + 100, +RAMP) and falls after
    HIGH samples at the top."""
    k = np.arange(periods * PERIOD)
    phase = k % PERIOD - 100
    up = np.clip(phase / RAMP, 0, 1)
    down = np.clip((phase - RAMP - HIGH) / RAMP, 0, 1)
    clean = 3.3 * (up - down)
    noise = np.random.default_rng(seed).uniform(-NOISE, NOISE, len(k))
    return clean + noise, clean


def edges(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d = np.diff(bits.astype(np.int8))
    return np.flatnonzero(d == 1) + 1, np.flatnonzero(d == -1) + 1


def test_hysteresis_suppresses_chatter_and_edges_lie_where_the_clean_ramp_crosses_the_band() -> None:
    periods = 20
    signal, clean = noisy_square(periods)
    plain = Schmitt(AnalogTrigger(LEVEL, 0.0))(signal)
    assert len(edges(plain)[0]) > 2 * periods   # a bare comparator chatters on these ramps
    bits = Schmitt(AnalogTrigger(LEVEL, BAND))(signal)
    rises, falls = edges(bits)
    assert len(rises) == len(falls) == periods
    # A rise happens where signal >= LEVEL + BAND/2, so the clean ramp is within NOISE of it:
    # on a 3.3 V / RAMP ramp that is a known span of samples; likewise for the fall.
    step = 3.3 / RAMP
    for rise, fall, p in zip(rises, falls, range(periods)):
        base = p * PERIOD + 100
        lo_rise = base + (LEVEL + BAND / 2 - NOISE) / step
        hi_rise = base + (LEVEL + BAND / 2 + NOISE) / step
        assert lo_rise - 1 <= rise <= hi_rise + 1
        top_end = base + RAMP + HIGH
        lo_fall = top_end + (3.3 - (LEVEL - BAND / 2) - NOISE) / step
        hi_fall = top_end + (3.3 - (LEVEL - BAND / 2) + NOISE) / step
        assert lo_fall - 1 <= fall <= hi_fall + 1
        assert clean[rise] >= LEVEL + BAND / 2 - NOISE and clean[fall] <= LEVEL - BAND / 2 + NOISE


def reference(signal: np.ndarray, rise: float, fall: float, level: float) -> np.ndarray:
    """The textbook per-sample Schmitt trigger (a loop: a reference for tests only)."""
    state = signal[0] >= level
    out = np.empty(len(signal), dtype=np.uint8)
    for j, x in enumerate(signal):
        if x >= rise:
            state = True
        elif x < fall:
            state = False
        out[j] = state
    return out


@pytest.mark.parametrize("block", [1, 7, 99, 150, 4096, 10**6])
def test_state_carries_across_blocks_of_any_size(block: int) -> None:
    signal, _ = noisy_square(8, seed=block)
    trigger = AnalogTrigger(LEVEL, BAND)
    schmitt = Schmitt(trigger)
    bits = np.concatenate([schmitt(signal[i:i + block]) for i in range(0, len(signal), block)])
    np.testing.assert_array_equal(bits, reference(signal, trigger.rise_v, trigger.fall_v, LEVEL))


def test_a_block_wholly_inside_the_band_keeps_the_state_it_inherits() -> None:
    schmitt = Schmitt(AnalogTrigger(1.0, 0.5))        # rises at 1.25, falls below 0.75
    assert schmitt(np.array([0.0, 1.3])).tolist() == [0, 1]
    assert schmitt(np.full(5, 0.8)).tolist() == [1] * 5   # a whole chunk in the band
    assert schmitt(np.array([], dtype=float)).tolist() == []
    assert schmitt(np.array([0.76, 0.74, 1.2])).tolist() == [1, 0, 0]
    assert schmitt.state is False


@pytest.mark.parametrize("first, expected", [(1.1, 1), (0.9, 0)])
def test_before_any_decision_the_state_is_the_first_samples_side_of_the_level(
        first: float, expected: int) -> None:
    assert Schmitt(AnalogTrigger(1.0, 0.5))(np.array([first, 1.0, 1.2])).tolist() == [expected] * 3


def test_default_hysteresis_and_validation() -> None:
    trigger = AnalogTrigger(1.65)
    assert trigger.band_v == pytest.approx(0.165)
    assert (trigger.rise_v, trigger.fall_v) == pytest.approx((1.7325, 1.5675))
    assert Schmitt(AnalogTrigger(0.5, 0.0))(np.array([0.49, 0.5, 0.51, 0.49])).tolist() == [0, 1, 1, 0]
    for bad in (dict(level_v=float("nan")), dict(level_v=1.0, hysteresis_v=-0.1),
                dict(level_v=1.0, hysteresis_v=float("inf"))):
        with pytest.raises(ValueError):
            AnalogTrigger(**bad)  # type: ignore[arg-type]
    with pytest.raises(CaptureError, match="f.sr: trigger 'A1' is an analog channel: give its "
                                           "threshold with --trigger-level"):
        CaptureOptions().analog_trigger("f.sr", "A1")
    with pytest.raises(CaptureError, match="trigger 'A1': trigger hysteresis must be"):
        CaptureOptions(trigger_level_v=1.0, trigger_hysteresis_v=-1).analog_trigger("f.sr", "A1")


T = 1e-5
CURRENT_HIGH, CURRENT_IDLE = 5e-3, 1e-3


def write_analog_csv(path: Path, periods: int) -> tuple[Path, np.ndarray]:
    """A CSV whose trigger column is the noisy trapezoid in volts; current is 5 mA where the
    reference Schmitt trigger is high, else 1 mA. Returns the path and those trigger bits."""
    signal, _ = noisy_square(periods)
    bits = reference(signal, LEVEL + BAND / 2, LEVEL - BAND / 2, LEVEL)
    current = np.where(bits == 1, CURRENT_HIGH, CURRENT_IDLE)
    k = np.arange(len(signal))
    np.savetxt(path, np.column_stack([k * T, current, signal]), fmt=["%.6f", "%.6g", "%.6f"],
               delimiter=",", header="time_s,current_a,gpio_v", comments="")
    return path, bits


def test_csv_analog_trigger_column_windows_across_chunks(tmp_path: Path) -> None:
    periods = 12
    path, bits = write_analog_csv(tmp_path / "scope.csv", periods)
    rises, falls = edges(bits)
    options = CaptureOptions(trigger="gpio_v", trigger_level_v=LEVEL, trigger_hysteresis_v=BAND,
                             voltage=3.0, chunk_samples=333)    # edges fall across chunks
    capture = CsvCapture(path, options)
    logic = np.concatenate([c.logic for c in capture.chunks()])
    np.testing.assert_array_equal(logic, bits)
    settings = WindowSettings(guard_s=5 * T, baseline_s=50 * T, min_samples=1)
    windows = list(find_windows(capture, settings))
    assert len(windows) == periods
    for w, rise, fall in zip(windows, rises, falls):
        assert w.samples == fall - rise
        # constant current inside: energy = V · I · duration, baseline = V · idle current
        assert w.energy_j == pytest.approx(3.0 * CURRENT_HIGH * w.duration_s, rel=1e-9)
        assert w.baseline_w == pytest.approx(3.0 * CURRENT_IDLE, rel=1e-9)


def test_csv_trigger_of_volts_without_a_level_is_refused_with_its_line(tmp_path: Path) -> None:
    path, _ = write_analog_csv(tmp_path / "scope.csv", 2)
    capture = CsvCapture(path, CaptureOptions(trigger="gpio_v", voltage=3.0))
    with pytest.raises(CaptureError, match=r"scope.csv: line 2: trigger column 'gpio_v' has "
                                           r"[-0-9.e]+, not 0 or 1: .*--trigger-level VOLTS"):
        list(capture.chunks())
