"""The emulated Cortex-M4 board waits without burning a host core (issue 22): while it idles
(``idle``, a batch's ``settle_ms``) or waits for a request, the port sleeps in WFI (on TIMER0,
on UART0's receive interrupt) and QEMU (``-icount sleep=on``) sleeps with it, so the board
costs its host next to no CPU and an idle passes in the host's time, whatever the load
(firmware/port/qemu-m4/README.md, "Waiting").

What is asserted is QEMU's own CPU time against the span it was measured over: load on the
machine only lengthens the span and never adds CPU time to a sleeping QEMU, so the bound
holds on a busy host; before the fix QEMU ran the polling loops flat out."""
from __future__ import annotations

import time

import psutil
import pytest
from support.m4 import SIM_M4, assert_built

from energyrig.fixtures.loader import load_fixture
from energyrig.rig.dut import open_dut

#: The most of the span a waiting board's QEMU may spend on a host core; a fraction.
MAX_CPU_SHARE = 0.30

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


@pytest.fixture(autouse=True)
def _built() -> None:
    assert_built()


def _qemu() -> psutil.Process:
    """The one QEMU this test started (through the fixture's bridge)."""
    (qemu,) = [p for p in psutil.Process().children(recursive=True)
               if p.name().startswith("qemu-system")]
    return qemu


def _cpu_s(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def test_an_idle_or_waiting_board_leaves_the_host_core_free() -> None:
    with open_dut(load_fixture(SIM_M4)) as dut:
        dut.hello()
        qemu = _qemu()
        cpu0, t0 = _cpu_s(qemu), time.monotonic()
        assert dut.idle(1.0) >= 1.0  # the board's cycles: at least the span
        time.sleep(1.0)  # the board waits for its next request
        dut.hello()
        cpu_s, wall_s = _cpu_s(qemu) - cpu0, time.monotonic() - t0
    assert cpu_s < MAX_CPU_SHARE * wall_s, f"QEMU took {cpu_s:.2f} s of CPU in {wall_s:.2f} s"


def test_the_baseline_idle_answers_with_its_span_at_every_clock() -> None:
    with open_dut(load_fixture(SIM_M4)) as dut:
        assert dut.idle(2.0) >= 2.0
        assert dut.clock(64_000_000)["cycle_hz"] == 64_000_000
        # the span in the board's cycles at its clock: 128 M cycles, above the SysTick's 24 bits
        assert dut.idle(0.5) >= 0.5
        assert dut.hello()["conditions"]["idle"] == "wfi"
