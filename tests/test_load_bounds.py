"""Wall-clock bounds that a loaded host must not break (docs/performance.md, "Tests under
load"), and the hung instrument they must still catch.

The scope's waits count from what the scope (or its emulator) is known to be doing, not from
how fast this machine runs: the pre-trigger fill from the moment it answered "armed", the
acquisition's bound from its last change of status; the emulated scope completes a record
only once the trigger window's fall has come over the virtual wire. A scope that never
triggers, or never completes, is still reported after its bound, never waited on forever. A
calibration mark window that the host stretched past its record (the host DUT preempted
inside it) is taken again, a bounded number of times, in a longer record (whose sample rate
the skew routine then keeps apart). A starting emulator (or simulated
lab) is waited for while it works, and reported once it stops working or works too long.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support.paths import ROOT

from energyrig.calibration.routines.marks import RECORD_RETRIES, record_marks
from energyrig.calibration.routines.skew import skew
from energyrig.capture import Chunk
from energyrig.errors import InstrumentError, NoTriggerWindow, RecordTooShort
from energyrig.fixtures import load_fixture
from energyrig.instruments.base import Limits, RecordedCapture
from energyrig.instruments.scope.config import ScopeConfig
from energyrig.instruments.scope.dialects import State
from energyrig.instruments.scope.driver import POLL_S, Scope, StateTimeout, wait_for_state
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.progress import ProgressBound
from energyrig.instruments.sim.process import EmulatorProcess
from energyrig.instruments.scope.emulator import ScopeEmulator
from energyrig.instruments.sim.wire import edge_records
from energyrig.energy.windows import WindowSettings, find_windows

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
        self.windows: list[float] = []

    @property
    def arms(self) -> int:
        return len(self.windows)

    def limits(self) -> Limits:
        return Limits(sample_rate_hz=1e6, max_record_s=0.6, stream_lag_s=0.0, window_margin=2.0)

    def arm(self, pre_s: float, window_s: float, post_s: float) -> None:
        self.windows.append(window_s)

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
    # each time in a longer record, up to what the memory holds: (0.6 - 0.02 - 0.005) / 2
    assert scope.windows == pytest.approx([5e-3, 20e-3, 80e-3, 0.2875])


def test_a_mark_window_that_never_fits_its_record_is_an_error() -> None:
    scope = OutlastingScope(short=RECORD_RETRIES + 1)
    with pytest.raises(RecordTooShort):
        record_marks(MarkBench(scope), 1, 5e-3)  # type: ignore[arg-type]
    assert scope.arms == RECORD_RETRIES + 1


class ScriptedCpu:
    """A process tree's CPU time, s: set by the test."""

    def __init__(self) -> None:
        self.used = 0.0

    def __call__(self) -> float:
        return self.used


def test_a_start_that_keeps_working_is_waited_for() -> None:
    clock, cpu = FakeClock(), ScriptedCpu()
    bound = ProgressBound(10.0, work=cpu, clock=clock)
    for _ in range(60):                      # a minute of wall time, 3 s of CPU in it
        clock.sleep(1.0)
        cpu.used += 0.05
        assert not bound.expired()


def test_a_start_that_stops_working_is_hung_after_its_bound() -> None:
    clock, cpu = FakeClock(), ScriptedCpu()
    bound = ProgressBound(10.0, work=cpu, clock=clock)
    clock.sleep(5.0)
    cpu.used = 0.5
    assert not bound.expired()
    clock.sleep(10.0)                        # blocked: no CPU since 5 s
    assert not bound.expired()
    clock.sleep(0.5)
    assert bound.expired()


def test_work_without_end_is_no_progress_past_its_cpu_bound() -> None:
    clock, cpu = FakeClock(), ScriptedCpu()
    bound = ProgressBound(10.0, work=cpu, clock=clock)
    for _ in range(10):                      # 10 s of CPU: still a (slow) start
        clock.sleep(1.0)
        cpu.used += 1.0
        assert not bound.expired()
    for _ in range(10):                      # busy on: no longer progress
        clock.sleep(1.0)
        cpu.used += 1.0
    clock.sleep(0.5)
    assert bound.expired()


def test_work_counts_only_while_something_is_expected_of_it() -> None:
    # An emulator's idle CPU (its tick loop) is no progress towards a trigger.
    clock, cpu = FakeClock(), ScriptedCpu()
    bound = ProgressBound(5.0, work=cpu, clock=clock)
    for _ in range(6):
        clock.sleep(1.0)
        cpu.used += 0.01
    assert bound.expired(working=False) and not bound.expired(working=True)


def test_a_triggered_emulator_that_works_is_waited_for() -> None:
    # 'triggered' 12 s while its process renders a deep record (a starved host): no state
    # changes, its CPU time grows; done then.
    clock, cpu = FakeClock(), ScriptedCpu()
    timeline: list[tuple[float, State]] = [(0.0, "armed"), (1.0, "triggered"), (13.0, "done")]
    status = _answers(clock, timeline)

    def answer() -> State:
        cpu.used = min(clock.now, 13.0) * 0.1   # a tenth of a core
        return next(status)

    done_at = wait_for_state(answer, "done", 5.0, work=cpu, clock=clock, sleep=clock.sleep)
    assert 13.0 <= done_at < 13.0 + 2 * POLL_S
    # The same scope on hardware (no work known) is reported after its bound.
    clock2 = FakeClock()
    status = _answers(clock2, timeline)
    with pytest.raises(StateTimeout):
        wait_for_state(lambda: next(status), "done", 5.0, clock=clock2, sleep=clock2.sleep)


SLOW_START = """import time
end = time.monotonic() + 2.0
while time.monotonic() < end:                    # 2 s of a start, a third of it on the CPU
    busy = time.monotonic() + 0.05
    while time.monotonic() < busy:
        pass
    time.sleep(0.1)
print("ready", flush=True)
time.sleep(3600)
"""


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> str:
    (tmp_path / "emulated.py").write_text(body)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return "emulated"


@pytest.mark.slow
def test_an_emulator_slow_to_start_on_a_loaded_host_is_waited_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _module(tmp_path, monkeypatch, SLOW_START)
    with EmulatorProcess(MODEL, module=module, start_timeout_s=1.0) as emulator:
        assert emulator.port == "ready"


@pytest.mark.parametrize("body", ["import time\ntime.sleep(3600)\n", "while True:\n    pass\n"])
@pytest.mark.slow
def test_an_emulator_that_never_starts_is_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    # Blocked (no CPU) or busy without end: reported, and stopped, not waited on forever.
    emulator = EmulatorProcess(MODEL, module=_module(tmp_path, monkeypatch, body),
                               start_timeout_s=0.5)
    with pytest.raises(InstrumentError, match="emulator did not start"):
        with emulator:
            pass
    assert emulator.pid is None


def _mark_record(period_s: float, lead_s: float) -> RecordedCapture:
    """A 60 ms record at ``period_s``: the trigger high 20..45 ms, the current stepping up
    ``lead_s`` before it (a negative skew), idle 10 mA, active 30 mA."""
    t = np.arange(round(0.06 / period_s)) * period_s
    high = (t >= 0.02) & (t < 0.045)
    active = (t >= 0.02 - lead_s) & (t < 0.045 - lead_s)
    current = np.where(active, 0.03, 0.01) + np.where(np.arange(len(t)) % 2, 1e-6, -1e-6)
    chunk = Chunk(0, period_s, current, 3.3, logic=high.astype(np.uint8))
    return RecordedCapture("fake", (chunk,))


class RecordsScope(OutlastingScope):
    """Hands out the given records in turn."""

    def __init__(self, records: list[RecordedCapture]) -> None:
        super().__init__(short=0)
        self.records = records

    def collect(self, timeout_s: float) -> RecordedCapture:
        return self.records[self.arms - 1]


def test_skew_takes_each_record_at_its_own_sample_rate() -> None:
    # Records taken again in a longer record sample slower: each edge's offset is in its
    # own record's samples (mixed, the last record's period scaled them all).
    records = [_mark_record(0.2e-6, 60e-6)] * 3 + [_mark_record(0.4e-6, 60e-6)]
    skewed = skew(MarkBench(RecordsScope(records)), lambda *a, **k: None,  # type: ignore[arg-type]
                  windows=4)
    assert skewed.value == pytest.approx(-60e-6, abs=0.5e-6)


class LosingScope(OutlastingScope):
    """A stream whose samples of the mark window were dropped ``short`` times (a loaded host
    read them too late), then a record."""

    def collect(self, timeout_s: float) -> RecordedCapture:
        if self.arms <= self.short:
            raise NoTriggerWindow("no complete trigger window (the trigger never rose on D0)")
        return RecordedCapture("fake", ())


def test_a_mark_window_the_stream_lost_is_taken_again() -> None:
    scope = LosingScope(short=2)
    (record,) = record_marks(MarkBench(scope), 1, 5e-3)  # type: ignore[arg-type]
    assert record.source == "fake" and scope.windows == [5e-3] * 3
    never = LosingScope(short=RECORD_RETRIES + 1)     # a trigger that is not wired
    with pytest.raises(NoTriggerWindow):
        record_marks(MarkBench(never), 1, 5e-3)  # type: ignore[arg-type]
    assert never.arms == RECORD_RETRIES + 1
