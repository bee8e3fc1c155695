"""The emulated Cortex-M4's clock (issue 22 item 5): the rig sets it with ``clock hz=N``; the
board's cycles are the same at every clock and its time is cycles / clock, in its own reply
(``elapsed_ns``) and on the trigger wire, whose records carry the clock in force for the
power model. A level the board does not offer is refused and the clock stays.

What is asserted is what the firmware and the bridge decided (cycles, stamps), never how
long the host took: it holds on a loaded machine."""
from __future__ import annotations

from pathlib import Path

import pytest
from support.m4 import LINE_OVERHEAD_CYCLES, SIM_M4, assert_built, next_edges

from energyrig.fixtures.loader import load_fixture
from energyrig.instruments.sim.wire import TriggerWire
from energyrig.rig.dut import DutRefused, open_dut

LEVELS = (16_000_000, 32_000_000, 64_000_000)

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


@pytest.fixture(autouse=True)
def _built() -> None:
    assert_built()


def test_time_per_op_is_cycles_over_the_clock_at_each_level(tmp_path: Path) -> None:
    wire = TriggerWire(tmp_path / "wire")
    wire.open()
    try:
        with open_dut(load_fixture(SIM_M4), trigger_wire=tmp_path / "wire") as dut:
            hello = dut.hello()
            assert set(LEVELS) <= set(hello["cpu_hz_levels"])
            assert hello["cpu_hz"] in hello["cpu_hz_levels"]
            assert dut.prep("sha256", payload_bytes=1024)["selftest"] == "pass"
            cycles = {}
            for hz in LEVELS:
                assert dut.clock(hz) == {"ok": True, "cpu_hz": hz, "cycle_hz": hz}
                assert (dut.hello()["cpu_hz"], dut.hello()["cycle_hz"]) == (hz, hz)
                run = dut.run(4, timeout_s=120)
                cycles[hz] = run.cycles
                # the board's own time of the batch: its cycles at the clock in force
                assert run.elapsed_ns == pytest.approx(run.cycles * 1e9 / hz, abs=1)
                rise, fall = next_edges(wire, 2)
                assert int(rise["clock_hz"]) == int(fall["clock_hz"]) == hz
                span_ns = int(fall["t_ns"]) - int(rise["t_ns"])
                batch_ns = run.cycles * 10**9 // hz
                assert batch_ns <= span_ns <= batch_ns + LINE_OVERHEAD_CYCLES * 10**9 // hz
    finally:
        wire.close()
    # the same instructions at every clock: the same cycles (a reading's tick apart)
    assert max(cycles.values()) - min(cycles.values()) <= 1e-4 * min(cycles.values())


def test_a_level_the_board_does_not_offer_is_refused() -> None:
    with open_dut(load_fixture(SIM_M4)) as dut:
        before = dut.hello()["cpu_hz"]
        with pytest.raises(DutRefused, match="hz=36000000 not offered"):
            dut.clock(36_000_000)
        assert dut.hello()["cpu_hz"] == before
