"""What the tests of the emulated Cortex-M4 bench share: its fixture and firmware, the check
that both are there, and the edges its bridge sent on a trigger wire."""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from support.paths import ROOT

from energyrig.fixtures import load_fixture
from energyrig.instruments.base import Limits
from energyrig.instruments.sim.wire import EdgeArray, TriggerWire
from energyrig.rig.dut import RunReply

SIM_M4 = ROOT / "fixtures" / "sim-m4.toml"
ELF = ROOT / "build" / "qemu-m4" / "energyrig-m4.elf"
#: The port's window holds the batch and the writes of its edge lines on UART1: about 330
#: SysTick cycles at -icount shift=5 (firmware/port/qemu-m4/README.md); a bound, cycles.
LINE_OVERHEAD_CYCLES = 1000
#: The sample period of :class:`StubBench`'s instrument, s (a PPK2's).
STUB_PERIOD_S = 1e-5


@dataclass
class StubBench:
    """What a Measurement's cutting of a group needs of a bench: this fixture, a streaming
    instrument sampling every :data:`STUB_PERIOD_S`, no calibration, windows as found."""

    fixture: Any = field(default_factory=lambda: load_fixture(SIM_M4))
    limits: Limits = field(default_factory=lambda: Limits(1 / STUB_PERIOD_S, None, 0.05,
                                                          max_windows=64))
    calibration: Any = None

    def annotate_group(self, rows: list[Any], sent_ns: int, replied_ns: int) -> list[Any]:
        return list(rows)


def assert_built() -> None:
    """QEMU and the firmware are there (make deps, make firmware-qemu)."""
    assert shutil.which("qemu-system-arm"), "qemu-system-arm is not installed: make deps"
    assert ELF.is_file(), f"{ELF} is not built: make firmware-qemu"


def next_edges(wire: TriggerWire, count: int) -> EdgeArray:
    """The next ``count`` edges of ``wire`` (sent before the board's reply was released)."""
    edges = wire.drain()
    deadline = time.monotonic() + 60  # a bound on a stuck bridge, not on the host's speed
    while len(edges) < count and time.monotonic() < deadline:
        time.sleep(0.01)
        edges = np.concatenate([edges, wire.drain()])
    return edges


def spy_groups(dut: Any) -> list[tuple[int, int]]:
    """Spy on ``dut.run_windows``: (ops per window, windows) of each group request."""
    asked: list[tuple[int, int]] = []
    run_windows = dut.run_windows

    def spy(n: int, windows: int, timeout_s: float, settle_s: float = 0.0) -> list[RunReply]:
        asked.append((n, windows))
        return run_windows(n, windows, timeout_s, settle_s)

    dut.run_windows = spy
    return asked
