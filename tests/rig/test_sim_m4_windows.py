"""The emulated Cortex-M4 bench's ``[windows]`` (``fixtures/sim-m4.toml``, issue 24 part 3)
come from its own calibration: ``rig calibrate baseline`` on that bench advises the shortest
baseline span and guard that give the baseline to its precision, and the fixture holds no span
shorter than that advice. The firmware idles whole ms before each window (``settle_ms``), so
that idle must also leave the guard between the previous window's fall (or the request's
warm-up op) and the baseline span.

What is asserted is what the calibration decided on the bench (the board's idle current, its
settling after an edge, both on the emulator's own sample clock), never how long the host
took, so it holds under load."""
from __future__ import annotations

import pytest
from support.m4 import SIM_M4, assert_built

from energyrig.calibration.routines.baseline import advised_windows, baseline
from energyrig.fixtures import load_fixture
from energyrig.rig.bench import open_bench
from energyrig.rig.dut import whole_ms


def _idle_before_window_s(guard_s: float, baseline_s: float) -> float:
    """The idle the firmware holds before each window for this guard and span, s."""
    return whole_ms(guard_s + baseline_s) / 1000


def test_the_idle_before_each_window_leaves_a_guard_after_the_previous_fall() -> None:
    w = load_fixture(SIM_M4).windows
    idle_s = _idle_before_window_s(w.guard_s, w.baseline_s)
    assert idle_s - (w.guard_s + w.baseline_s) >= w.guard_s


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_fixtures_guard_and_baseline_are_at_least_its_calibrations_advice() -> None:
    assert_built()
    fixture = load_fixture(SIM_M4)
    with open_bench(fixture) as bench:
        advice = baseline(bench, bench.connect)  # rig calibrate baseline's routine, defaults
    guard_s, baseline_s = advised_windows(advice)
    w = fixture.windows
    assert w.baseline_s >= baseline_s, (w.baseline_s, advice["baseline_s"])
    assert w.guard_s >= guard_s, (w.guard_s, advice["guard_s"])
    # The idle before each window also settles the previous window's fall (or the warm-up
    # op's end) for the advised guard before the baseline span starts.
    idle_s = _idle_before_window_s(w.guard_s, w.baseline_s)
    assert idle_s - (w.guard_s + w.baseline_s) >= guard_s, (idle_s, advice["guard_s"])
