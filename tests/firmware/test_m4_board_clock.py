"""The emulated Cortex-M4 board's clock in its bridge (``BoardClock`` of
firmware/port/qemu-m4/energyrig-m4-dut): a batch's edges are never stamped in the past.

The emulated PPK2 renders its samples ``latency_s`` (50 ms) behind real time; an edge it gets
with a time whose samples it already sent is a late edge, and the window runs on until the
edge arrived. When the bridge stamped a rise as its line was read and the fall at rise + the
board's time, a QEMU slower than the board (a loaded host: ``rig calibrate all -f
fixtures/sim-m4.toml`` beside two busy loops) sent a fall already in the past. The clock here
is a fake one, so the test asserts what the bridge decided, not how fast this host is."""
from __future__ import annotations

import importlib.machinery
import importlib.util
from types import ModuleType

import pytest
from support.paths import ROOT

BRIDGE = ROOT / "firmware" / "port" / "qemu-m4" / "energyrig-m4-dut"
CYCLE_HZ = 25_000_000
MS = 1_000_000


def _bridge() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("energyrig_m4_dut", str(BRIDGE))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class FakeClock:
    """CLOCK_MONOTONIC as the test sets it, ns."""

    def __init__(self) -> None:
        self.now_ns = 10_000 * MS

    def __call__(self) -> int:
        return self.now_ns


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, FakeClock]:
    module = _bridge()
    fake = FakeClock()
    monkeypatch.setattr(module.time, "monotonic_ns", fake)
    return module, fake


def test_a_batch_qemu_ran_slower_than_the_board_is_stamped_from_its_fall_on(
        clock: tuple[ModuleType, FakeClock]) -> None:
    module, fake = clock
    board = module.BoardClock()
    board.cycle_hz = CYCLE_HZ
    batch_cycles = CYCLE_HZ // 1000  # 1 ms of the board's time
    assert board.place(1, 5000, 1, 2) == []  # the rise waits for its fall
    fake.now_ns += 120 * MS  # QEMU took 120 ms of this host's time for the board's 1 ms
    read_ns = fake.now_ns
    (rise_ns, rise, accel, family), (fall_ns, fall, _, _) = board.place(
        0, 5000 + batch_cycles, 0, 0)
    # Both edges lie at or after the moment they are sent: none is late for an instrument
    # rendering behind real time, whatever QEMU took.
    assert rise_ns >= read_ns and fall_ns >= read_ns
    # The window is the board's: its cycles at its clock, exactly; the rise carries its
    # batch's accelerator flag and family.
    assert (rise, fall, accel, family) == (1, 0, 1, 2)
    assert fall_ns - rise_ns == 1 * MS
    assert board.hold_until_ns == fall_ns  # the reply waits for the fall


def test_edges_follow_one_another_and_are_stamped_when_read_before_the_clock_is_known(
        clock: tuple[ModuleType, FakeClock]) -> None:
    module, fake = clock
    board = module.BoardClock()
    assert board.place(1, 100, 0, 1) == [(fake.now_ns, 1, 0, 1)]
    assert board.place(0, 200, 0, 0) == [(fake.now_ns + 1, 0, 0, 0)]
    board.learn(b'{"ok": true, "cycle_hz": 25000000}')
    assert board.cycle_hz == CYCLE_HZ
    board.place(1, 300, 0, 1)
    first = board.place(0, 300 + 25, 0, 0)  # 1 µs
    board.place(1, 400, 0, 1)
    second = board.place(0, 400 + 25, 0, 0)  # read at once: the same host instant
    assert first[1][0] - first[0][0] == 1000
    assert second[0][0] > first[1][0]  # the next batch starts after the last one ended
