"""Known-answer tests of the window finder and integrator against closed-form energies."""
from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.polynomial import Polynomial

from support.energy_traces import inside, sample
from energyrig.capture import Chunk
from energyrig.errors import CaptureError, ChannelError
from energyrig.domain import Window, windows_frame
from energyrig.energy.windows import WindowFinder, WindowSettings, find_windows
from energyrig.flags import (BASELINE_AFTER, DROPPED_SAMPLES, GLITCH, NO_BASELINE, SATURATED,
                             TOO_FEW_SAMPLES)

T = 1e-5            # 100 kS/s, the PPK2's rate
IDLE_A = 2e-3
VOLTS = 3.0
SETTINGS = WindowSettings(guard_s=1e-3, baseline_s=5e-3, min_samples=20)
OFFSETS = (0.0, 0.25, 0.5, 0.75, 0.999)


def run(trace, settings=SETTINGS, size=4096, drop=()) -> tuple[list[Window], WindowFinder]:
    finder = WindowFinder(settings)
    windows = list(find_windows(trace.chunks(size, drop), finder=finder))
    return windows, finder


def assert_within_bound(w: Window, true_j: float, interior_j: float = 0.0) -> None:
    err = abs(w.energy_j - true_j)
    assert err <= w.edge_error_j + interior_j, (err, w.edge_error_j, interior_j)
    # The bound is not vacuous: a few samples' worth against a window of thousands.
    assert w.edge_error_j < 0.01 * abs(true_j)


@pytest.mark.parametrize("rise_frac", OFFSETS)
@pytest.mark.parametrize("fall_frac", OFFSETS)
def test_constant_current_edges_between_samples(rise_frac: float, fall_frac: float) -> None:
    rise, fall = (1000 + rise_frac) * T, (4000 + fall_frac) * T
    active_a = 0.015
    trace = sample(T, 6000, [(rise, fall)], inside([(rise, fall)], lambda t: t * 0 + active_a,
                                                   IDLE_A), VOLTS)
    (w,), finder = run(trace)
    true_j = VOLTS * active_a * (fall - rise)
    assert_within_bound(w, true_j)
    # A step at each edge with the half-sample edge estimate: at most half the bound.
    assert abs(w.energy_j - true_j) <= 0.5 * w.edge_error_j * (1 + 1e-9)
    assert abs(w.duration_s - (fall - rise)) <= T
    assert w.baseline_w == pytest.approx(VOLTS * IDLE_A, rel=1e-12)
    true_net = true_j - VOLTS * IDLE_A * (fall - rise)
    assert abs(w.net_energy_j - true_net) <= w.edge_error_j + VOLTS * IDLE_A * T
    assert w.mean_power_w == pytest.approx(w.energy_j / w.duration_s)
    assert w.flags == ()
    assert finder.glitches == [] and finder.unpaired == []


def test_step_inside_window() -> None:
    rise, fall, step = 500.3 * T, 3000.6 * T, 1700.45 * T
    active = lambda t: np.where(t < step, 0.01, 0.03)  # noqa: E731
    trace = sample(T, 4000, [(rise, fall)], inside([(rise, fall)], active, IDLE_A), VOLTS)
    (w,), _ = run(trace, settings=WindowSettings(guard_s=1e-3, baseline_s=3e-3))
    true_j = VOLTS * (0.01 * (step - rise) + 0.03 * (fall - step))
    assert_within_bound(w, true_j)


@pytest.mark.parametrize("voltage_array", [False, True])
def test_ramp_current_polynomial_closed_form(voltage_array: bool) -> None:
    rise, fall = 800.37 * T, 5200.81 * T
    i_poly = Polynomial([0.004, 3.0])                 # 4 mA + 3 A/s · t
    v_poly = Polynomial([3.3, -20.0]) if voltage_array else Polynomial([VOLTS])
    trace = sample(T, 7000, [(rise, fall)], inside([(rise, fall)], i_poly, IDLE_A),
                   v_poly if voltage_array else VOLTS)
    (w,), _ = run(trace, size=1000)
    p = i_poly * v_poly
    true_j = p.integ()(fall) - p.integ()(rise)
    interior = w.duration_s * T**2 / 12 * abs(p.deriv(2)(0.0))
    assert_within_bound(w, true_j, interior)
    idle_p = Polynomial([IDLE_A]) * v_poly
    lo, hi = rise - SETTINGS.guard_s - SETTINGS.baseline_s, rise - SETTINGS.guard_s
    # Baseline = mean of the sampled idle power over the span before the edge.
    assert w.baseline_w == pytest.approx((idle_p.integ()(hi) - idle_p.integ()(lo)) / (hi - lo),
                                         rel=1e-3)


def test_sine_current() -> None:
    rise, fall = 300.2 * T, 9100.7 * T
    amp, omega, phase = 0.004, 2 * math.pi * 750.0, 0.3
    active = lambda t: 0.01 + amp * np.sin(omega * t + phase)  # noqa: E731
    trace = sample(T, 10000, [(rise, fall)], inside([(rise, fall)], active, IDLE_A), VOLTS)
    (w,), _ = run(trace, settings=WindowSettings(guard_s=5e-4, baseline_s=2e-3))
    true_j = VOLTS * (0.01 * (fall - rise)
                      - amp / omega * (math.cos(omega * fall + phase) - math.cos(omega * rise + phase)))
    interior = w.duration_s * T**2 / 12 * VOLTS * amp * omega**2
    assert_within_bound(w, true_j, interior)


@pytest.mark.parametrize("size", [1, 7, 999, 1000, 1001, 100_000])
def test_chunk_boundaries_do_not_change_results(size: int) -> None:
    edges = [(1000.5 * T, 2000.5 * T), (2999.9 * T, 3999.1 * T), (4500.0 * T, 4600.0 * T)]
    current = inside(edges, lambda t: 0.01 + 2.0 * t, IDLE_A)
    trace = sample(T, 6000, edges, current, lambda t: 3.0 + 0.0 * t)
    settings = WindowSettings(guard_s=2e-3, baseline_s=8e-3, min_samples=10)
    reference, _ = run(trace, settings, size=10**6)
    got, _ = run(trace, settings, size=size)
    assert len(reference) == 3
    for a, b in zip(got, reference, strict=True):
        for name in ("start_s", "end_s", "samples", "flags", "lost_samples"):
            assert getattr(a, name) == getattr(b, name)
        for name in ("energy_j", "baseline_w", "edge_error_j"):
            assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-12, nan_ok=True)
    # The second window sits too close to the first for a baseline before it, and the third
    # rises inside its after-edge span; the third has its baseline after it.
    assert [(NO_BASELINE in w.flags, BASELINE_AFTER in w.flags) for w in reference] == [
        (False, False), (True, False), (False, True)]


def test_dropped_samples_inside_window_are_bridged_and_flagged() -> None:
    rise, fall = 1000.4 * T, 4000.6 * T
    i_poly = Polynomial([0.005, 4.0])
    trace = sample(T, 6000, [(rise, fall)], inside([(rise, fall)], i_poly, IDLE_A), VOLTS)
    drop = list(range(1500, 1530)) + [2222, 4000]   # a block, a sample, the last high one
    for size in (64, 5000):
        (w,), _ = run(trace, size=size, drop=drop)
        true_j = VOLTS * (i_poly.integ()(fall) - i_poly.integ()(rise))
        assert_within_bound(w, true_j)
        assert DROPPED_SAMPLES in w.flags
        assert w.lost_samples == len(drop)
        assert w.samples == 3000 - len(drop)


@pytest.mark.parametrize("lost", [1, 5])
def test_dropped_samples_at_the_rising_edge_widen_the_bound(lost: int) -> None:
    rise, fall = 1000.9 * T, 3000.2 * T
    trace = sample(T, 5000, [(rise, fall)],
                   inside([(rise, fall)], lambda t: t * 0 + 0.02, IDLE_A), VOLTS)
    drop = list(range(1001 - lost, 1001))    # samples just before the first high one
    (w,), _ = run(trace, drop=drop)
    true_j = VOLTS * 0.02 * (fall - rise)
    assert_within_bound(w, true_j)
    assert w.lost_samples == lost
    assert w.edge_error_j == pytest.approx(T * VOLTS * 0.02 * (lost + 1 + 1))


def test_glitches_are_not_windows_and_flag_the_next_window() -> None:
    glitch = (600.2 * T, 603.1 * T)          # 3 samples high
    bounce = (2000.5 * T, 2002.5 * T)        # 2 samples low inside the window
    window = (1500.5 * T, 3500.5 * T)
    edges = [glitch, (window[0], bounce[0]), (bounce[1], window[1])]
    current = inside([window], lambda t: t * 0 + 0.012, IDLE_A)
    trace = sample(T, 5000, edges, current, VOLTS)
    settings = WindowSettings(min_pulse_s=50 * T, guard_s=1e-3, baseline_s=3e-3)
    (w,), finder = run(trace, settings, size=777)
    assert len(finder.glitches) == 1
    assert finder.glitches[0].start_s == pytest.approx(601 * T)
    assert GLITCH in w.flags
    # The bounce is bridged: the window runs from the first rise to the last fall.
    assert_within_bound(w, VOLTS * 0.012 * (window[1] - window[0]))
    assert w.samples == 2000
    # Without a minimum pulse both pulses are windows and the bounce splits the window.
    windows, finder = run(trace, WindowSettings(guard_s=1e-3, baseline_s=3e-3, min_samples=5))
    assert len(windows) == 3 and finder.glitches == []
    assert TOO_FEW_SAMPLES in windows[0].flags


def test_unpaired_edges_are_reported_not_guessed() -> None:
    edges = [(0.0, 200.5 * T), (1000.5 * T, 2000.5 * T), (2900.5 * T, 1.0)]
    trace = sample(T, 3000, edges, inside(edges, lambda t: t * 0 + 0.01, IDLE_A), VOLTS)
    windows, finder = run(trace, WindowSettings(guard_s=1e-4, baseline_s=5e-3))
    assert len(windows) == 1
    assert [(e.kind, e.time_s) for e in finder.unpaired] == [
        ("fall", pytest.approx(200.5 * T)), ("rise", pytest.approx(2900.5 * T))]


def test_baseline_after_and_no_baseline() -> None:
    # Window 1 starts too early for a baseline before it -> after; window 2 has one before;
    # window 3 has low samples neither before (window 2 too close) nor after (capture ends).
    edges = [(100.5 * T, 1000.5 * T), (1500.5 * T, 2000.5 * T), (2100.5 * T, 2900.5 * T)]
    current = inside(edges, lambda t: t * 0 + 0.01, IDLE_A)
    trace = sample(T, 3000, edges, current, VOLTS)
    settings = WindowSettings(guard_s=1e-3, baseline_s=3e-3)
    w1, w2, w3 = run(trace, settings)[0]
    assert BASELINE_AFTER in w1.flags and w1.baseline_w == pytest.approx(VOLTS * IDLE_A)
    assert w2.flags == () and w2.baseline_w == pytest.approx(VOLTS * IDLE_A)
    assert NO_BASELINE in w3.flags and math.isnan(w3.baseline_w) and math.isnan(w3.net_energy_j)


def test_saturation_and_polarity_and_bit() -> None:
    edges = [(1000.5 * T, 2000.5 * T)]
    current = inside(edges, lambda t: t * 0 + 0.01, IDLE_A)
    trace = sample(T, 3000, edges, current, VOLTS, trigger_bit=5, active_high=False)
    trace.saturated = np.zeros(3000, dtype=bool)
    trace.saturated[1500] = True
    settings = WindowSettings(trigger_bit=5, active_high=False, guard_s=1e-4, baseline_s=5e-3)
    (w,), _ = run(trace, settings)
    assert w.flags == (SATURATED,)
    assert_within_bound(w, VOLTS * 0.01 * 1000 * T)
    trace.saturated[2500] = True           # outside the window: no effect
    trace.saturated[1500] = False
    assert run(trace, settings)[0][0].flags == ()


def test_per_op_columns_divide_by_batch() -> None:
    frame = windows_frame([Window(0.0, 1.0, 100, 2.0, 0.5, 0.01)], 1000)
    assert frame.loc[0, ["time_per_op_s", "energy_per_op_j", "net_energy_per_op_j"]].tolist() \
        == pytest.approx([1e-3, 2e-3, 1.5e-3])
    with pytest.raises(ValueError):
        windows_frame([], 0)


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="trigger_bit"):
        WindowSettings(trigger_bit=8)
    with pytest.raises(ValueError, match="guard_s"):
        WindowSettings(guard_s=-1.0)


def test_malformed_chunks_are_capture_errors() -> None:
    finder = WindowFinder(SETTINGS, source="probe")
    logic = np.zeros(10, dtype=np.uint8)
    finder.feed(Chunk(0, T, np.ones(10), VOLTS, logic))
    with pytest.raises(CaptureError, match="probe: bad chunk at sample 5"):
        finder.feed(Chunk(5, T, np.ones(10), VOLTS, logic))       # overlaps the first
    with pytest.raises(CaptureError, match="differ in length"):
        finder.feed(Chunk(10, T, np.ones(10), np.ones(9), logic))
    with pytest.raises(CaptureError, match="sample period changed"):
        finder.feed(Chunk(10, 2 * T, np.ones(10), VOLTS, logic))
    with pytest.raises(ChannelError, match="no logic channel"):
        finder.feed(Chunk(10, T, np.ones(10), VOLTS, None))


@pytest.mark.parametrize("seed", range(6))
def test_random_windows_chunks_and_gaps_stay_inside_the_bound(seed: int) -> None:
    """Many windows of different constant currents, edges anywhere, random chunking, lost
    samples away from the edges and random trigger bounces shorter than the minimum pulse."""
    rng = np.random.default_rng(seed)
    pulse = 20
    edges, levels, bounces, t = [], [], [], 700.0
    for _ in range(25):
        length = rng.uniform(60, 3000)
        edges.append((t * T, (t + length) * T))
        levels.append(rng.uniform(5e-3, 5e-2))
        if rng.random() < 0.4:  # a dip of 1..pulse-1 samples somewhere inside
            at = t + rng.uniform(10, length - 30)
            bounces.append((at * T, (at + rng.integers(1, pulse)) * T))
        t += length + rng.uniform(30, 900)
    n = int(t) + 800
    trigger = [(r, f) for r, f in edges]
    for b0, b1 in bounces:
        trigger = [piece for r, f in trigger for piece in
                   ([(r, b0), (b1, f)] if r < b0 < f else [(r, f)])]

    def current(x: np.ndarray) -> np.ndarray:
        out = np.full_like(x, IDLE_A)
        for (r, f), level in zip(edges, levels):
            out[(x >= r) & (x < f)] = level
        return out

    trace = sample(T, n, trigger, current, VOLTS)
    high = trace.logic.astype(bool)
    near_edge = high ^ np.roll(high, 1) | high ^ np.roll(high, -1)
    candidates = np.flatnonzero(~near_edge)
    drop = rng.choice(candidates, size=60, replace=False)
    settings = WindowSettings(min_pulse_s=pulse * T, guard_s=5 * T, baseline_s=20 * T,
                              min_samples=1)
    finder = WindowFinder(settings)
    windows: list[Window] = []
    chunks = list(trace.chunks(int(rng.integers(1, 5000)), drop=sorted(drop)))
    for chunk in chunks:
        windows += finder.feed(chunk)
    windows += finder.finish()
    assert len(windows) == len(edges) and finder.glitches == []
    for w, (r, f), level in zip(windows, edges, levels):
        assert abs(w.energy_j - VOLTS * level * (f - r)) <= w.edge_error_j * (1 + 1e-9)
        assert abs(w.start_s - r) <= T and abs(w.end_s - f) <= T
    in_window = current(np.arange(n) * T) != IDLE_A     # bounce dips belong to the window
    assert sum(w.lost_samples for w in windows) == int(in_window[drop].sum())
