"""Wall-clock bounds that a loaded host must not break (docs/performance.md, "Tests under
load"), and the hung instrument they must still catch.

The scope's waits count from what the scope (or its emulator) is known to be doing, not from
how fast this machine runs: the pre-trigger fill from the moment it answered "armed", the
acquisition's bound from its last change of status; the emulated scope completes a record
only once the trigger window's fall has come over the virtual wire. A scope that never
triggers, or never completes, is still reported after its bound, never waited on forever. A
calibration mark window that the host stretched past its record (the host DUT preempted
inside it) is taken again, a bounded number of times.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from energyrig.calibration.routines import RECORD_RETRIES, record_marks
from energyrig.errors import InstrumentError, RecordTooShort
from energyrig.fixtures import load_fixture
from energyrig.instruments.base import RecordedCapture
from energyrig.instruments.scope.config import ScopeConfig
from energyrig.instruments.scope.dialects import State
from energyrig.instruments.scope.driver import POLL_S, Scope, StateTimeout, wait_for_state
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.scope import ScopeEmulator
from energyrig.instruments.sim.wire import edge_records
from energyrig.rig.energy import WindowSettings, find_windows

ROOT = Path(__file__).resolve().parents[1]
MODEL = PowerModel(supply_v=3.3, idle_a=0.020, active_a=0.045, noise_a=0.5e-3)


def settings(resource: str) -> ScopeConfig:
    return ScopeConfig(resource=resource, supply_v=3.3, max_current_a=0.08,
                       sample_rate_hz=1e6, timeout_s=5.0)


class FakeClock:
    """A clock that only the waiting code's own sleeps advance, s."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _answers(clock: FakeClock, timeline: list[tuple[float, State]]) -> Iterator[State]:
    """The status a scope answers at each poll: ``timeline`` holds (from time s, state)."""
    while True:
        yield max((t, s) for t, s in timeline if t <= clock.now)[1]


def test_wait_goes_on_while_the_acquisition_makes_progress() -> None:
    # armed 4 s, triggered 4 s, done at 8 s: each state within the 5 s bound, the whole
    # beyond it (a starved emulator renders late, yet it is on its way).
    clock = FakeClock()
    status = _answers(clock, [(0.0, "armed"), (4.0, "triggered"), (8.0, "done")])
    done_at = wait_for_state(lambda: next(status), "done", 5.0, clock=clock,
                             sleep=clock.sleep)
    assert 8.0 <= done_at < 8.0 + 2 * POLL_S


def test_wait_reports_a_state_held_past_its_bound() -> None:
    # triggered at 3 s and never done: reported 5 s after the last change, not before.
    clock = FakeClock()
    status = _answers(clock, [(0.0, "armed"), (3.0, "triggered")])
    with pytest.raises(StateTimeout) as caught:
        wait_for_state(lambda: next(status), "done", 5.0, clock=clock, sleep=clock.sleep)
    assert caught.value.last == "triggered"
    assert 8.0 < clock.now < 8.0 + 2 * POLL_S


def test_a_scope_that_cycles_cannot_stretch_the_wait_without_end() -> None:
    # A status flapping between two states is progress only once per state.
    clock = FakeClock()
    flap: list[tuple[float, State]] = [(float(t), "armed" if t % 2 else "triggered")
                                       for t in range(100)]
    status = _answers(clock, flap)
    with pytest.raises(StateTimeout):
        wait_for_state(lambda: next(status), "done", 5.0, clock=clock, sleep=clock.sleep)
    assert clock.now < 2 * 5.0 + 1.0


class SlowToArm(ScopeEmulator):
    """A scope (or an emulator on a starved host) that arms 0.1 s after ``:SINGle``."""

    def arm(self) -> None:
        time.sleep(0.1)
        super().arm()


def test_a_scope_slow_to_arm_still_triggers_on_the_next_edge() -> None:
    # The DUT raises its trigger right after arm() returns: the scope must have had pre_s
    # since it armed by then, however late it armed (the reported 'armed' failure).
    with SlowToArm(MODEL) as emu, Scope(settings(emu.resource)) as scope:
        scope.arm(pre_s=0.02, window_s=0.003, post_s=0.005)
        rise = time.monotonic_ns() + 1_000_000
        emu.inject_edges(edge_records([rise, rise + 3_000_000], [1, 0]))
        capture = scope.collect(timeout_s=5.0)
    (w,) = find_windows(capture, WindowSettings(trigger_bit=0))
    assert w.start_s == pytest.approx(0.02, abs=1e-5)
    assert w.duration_s == pytest.approx(0.003, abs=2e-5)


def test_the_emulated_record_waits_for_the_windows_fall() -> None:
    # The fall reaches the emulator long after the record's end (a loaded host): the record
    # is not rendered without it, and then shows the window as it was.
    with ScopeEmulator(MODEL) as emu, Scope(settings(emu.resource)) as scope:
        scope.arm(pre_s=0.02, window_s=0.003, post_s=0.005)
        rise = time.monotonic_ns() + 1_000_000
        emu.inject_edges(edge_records([rise], [1]))
        record_s = 0.1                              # 12 x 5 ms, and latency_s past it
        time.sleep(record_s + 0.3)
        assert emu.state.acq == "triggered"
        emu.inject_edges(edge_records([rise + 3_000_000], [0], seq0=1))
        capture = scope.collect(timeout_s=5.0)
    (w,) = find_windows(capture, WindowSettings(trigger_bit=0))
    assert w.duration_s == pytest.approx(0.003, abs=2e-5)


def test_a_scope_that_never_triggers_is_reported() -> None:
    with ScopeEmulator(MODEL) as emu, Scope(settings(emu.resource)) as scope:
        scope.arm(pre_s=0.02, window_s=0.003, post_s=0.005)
        with pytest.raises(InstrumentError, match=r"not complete .*status 'armed'"):
            scope.collect(timeout_s=0.3)


def test_a_scope_that_never_completes_is_reported() -> None:
    # The trigger rose and its fall never comes (a DUT hung in its window): the emulated
    # scope stays triggered, and the rig says so after the bound instead of waiting on.
    with ScopeEmulator(MODEL) as emu, Scope(settings(emu.resource)) as scope:
        scope.arm(pre_s=0.02, window_s=0.003, post_s=0.005)
        emu.inject_edges(edge_records([time.monotonic_ns() + 1_000_000], [1]))
        with pytest.raises(InstrumentError, match=r"not complete .*status 'triggered'"):
            scope.collect(timeout_s=0.3)


class OutlastingScope:
    """An instrument whose record the mark window outlasts ``short`` times (a host DUT
    preempted inside its window), then a record."""

    def __init__(self, short: int) -> None:
        self.short = short
        self.arms = 0

    def arm(self, pre_s: float, window_s: float, post_s: float) -> None:
        self.arms += 1

    def collect(self, timeout_s: float) -> RecordedCapture:
        if self.arms <= self.short:
            raise RecordTooShort("the trigger was still high at the end of the record")
        return RecordedCapture("fake", ())


class MarkBench:
    """What record_marks needs of a bench: the sim-scope fixture, a DUT that answers."""

    def __init__(self, instrument: OutlastingScope) -> None:
        self.fixture = load_fixture(ROOT / "fixtures" / "sim-scope.toml")
        self.hello = {"cycle_hz": 1e9}
        self.dut = self
        self.instrument = instrument

    def idle(self, seconds: float) -> float:
        return seconds

    def request(self, line: str, timeout_s: float | None = None) -> dict[str, object]:
        return {"ok": True}


def test_a_mark_window_the_host_stretched_past_its_record_is_taken_again() -> None:
    scope = OutlastingScope(short=RECORD_RETRIES)
    (record,) = record_marks(MarkBench(scope), 1, 5e-3)  # type: ignore[arg-type]
    assert record.source == "fake" and scope.arms == RECORD_RETRIES + 1


def test_a_mark_window_that_never_fits_its_record_is_an_error() -> None:
    scope = OutlastingScope(short=RECORD_RETRIES + 1)
    with pytest.raises(RecordTooShort):
        record_marks(MarkBench(scope), 1, 5e-3)  # type: ignore[arg-type]
    assert scope.arms == RECORD_RETRIES + 1
