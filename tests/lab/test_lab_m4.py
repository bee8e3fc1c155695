"""A simulated lab whose places carry the emulated Cortex-M4 board (issue 22 item 3, last
bullet): each place its own QEMU, bridge and emulated PPK2, so the time per op of a point is
its cycles at the board's clock on every place, however many places run at once.

What is asserted is what the rig measured through the places (windows, their cycles), never
how long the host took: the emulated board's windows do not depend on the host's load."""
from __future__ import annotations

import shutil
import threading

import numpy as np
import pytest
from support.lab import rig_lab_sim
from support.paths import ROOT

from energyrig.domain import Point
from energyrig.fixtures import load_fixture
from energyrig.instruments.ppk2.decode import SAMPLE_RATE_HZ
from energyrig.instruments.ppk2.emulator import SERIAL_BASE
from energyrig.lab.place import LabClient
from energyrig.rig.labsim import SimLab
from energyrig.rig.pipeline import PointResult, measure_point, reps_done
from energyrig.rig.sweep.lanes import PlaceSlot, place_slots

SIM_M4 = ROOT / "fixtures" / "sim-m4.toml"
ELF = ROOT / "build" / "qemu-m4" / "energyrig-m4.elf"
#: The emulated PPK2's sample period, s: each window edge lies to within one sample.
PERIOD_S = 1.0 / SAMPLE_RATE_HZ
#: The port's window holds the batch and the writes of its edge lines on UART1 (about 330
#: cycles, firmware/port/qemu-m4/README.md); a bound, cycles.
LINE_OVERHEAD_CYCLES = 1000

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


@pytest.fixture(autouse=True)
def _built() -> None:
    assert shutil.which("qemu-system-arm"), "qemu-system-arm is not installed: make deps"
    assert ELF.is_file(), f"{ELF} is not built: make firmware-qemu"


def _measure(slot: PlaceSlot, results: dict[str, PointResult],
             errors: list[BaseException]) -> None:
    try:
        with slot.open() as bench:
            point = Point(op="sha256", board=bench.board, payload_bytes=1024)
            results[slot.name] = measure_point(bench, point, until=reps_done(3))
    except BaseException as exc:  # noqa: BLE001 - raised in the test's thread
        errors.append(exc)


def test_two_places_measure_the_same_time_per_op_the_boards_cycles_at_its_clock() -> None:
    fx = load_fixture(SIM_M4)
    results: dict[str, PointResult] = {}
    errors: list[BaseException] = []
    with SimLab(2, fixture=SIM_M4) as lab, \
            place_slots(lab.coordinator, lab.places, [fx], None) as slots:
        assert {s.board for s in slots} == {fx.dut.board}
        # Both places measure the point at once: two boards on this host's cores.
        threads = [threading.Thread(target=_measure, args=(s, results, errors))
                   for s in slots]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    assert sorted(results) == ["bench-a", "bench-b"]
    per_op = {}
    for name, result in results.items():
        assert result.ok, (name, result.reason)
        windows = result.estimate
        assert len(windows) == 3
        cycles = np.array([w.cycles for w in windows], dtype=np.float64)
        # sha256: the same work every batch (its cycles read to a count or two).
        assert np.ptp(cycles) <= 2, (name, cycles)
        board_s = cycles / result.cycle_hz
        durations = np.array([w.duration_s for w in windows])
        # Each window is its batch's cycles at the board's clock, to a sample at each edge
        # and the port's edge-line writes: not what QEMU took on this host.
        assert np.all(durations - board_s >= -PERIOD_S), (name, durations, board_s)
        assert np.all(durations - board_s <= PERIOD_S + LINE_OVERHEAD_CYCLES
                      / result.cycle_hz), (name, durations, board_s)
        per_op[name] = (float(durations.mean()) / result.batch_n,
                        float(board_s.mean()) / result.batch_n, result.batch_n)
    (a, board_a, batch_a), (b, board_b, batch_b) = per_op["bench-a"], per_op["bench-b"]
    # The same board, the same point: the same batch and cycles on both places.
    assert batch_a == batch_b
    assert abs(board_a - board_b) * batch_a * results["bench-a"].cycle_hz <= 2  # cycles
    # And the same time per op, to the edges' samples (the host DUT's differed by 18 %
    # with two places running).
    assert abs(a - b) <= 2 * PERIOD_S / batch_a + abs(board_a - board_b)
    assert abs(a / board_a - 1) < 1e-3

def test_rig_lab_sim_s_places_carry_the_board_each_with_an_instrument_of_its_own() -> None:
    """`rig lab sim --fixture fixtures/sim-m4.toml`: every place carries the emulated board;
    each place's emulated PPK2 has its own serial number, so its own calibration records,
    bench-a's the fixture's own bench's (which `rig calibrate all -f fixtures/sim-m4.toml`
    calibrates)."""
    fx = load_fixture(SIM_M4)
    assert fx.sim is not None
    with rig_lab_sim(["bench-a", "bench-b"], SIM_M4) as (_, coordinator):
        client = LabClient(coordinator)
        assert [client.show(p).board for p in ("bench-a", "bench-b")] == [fx.dut.board] * 2
        serials = []
        with place_slots(coordinator, ["bench-a", "bench-b"], [fx], None) as slots:
            for slot in slots:
                with slot.open() as bench:
                    assert bench.hello["board"] == fx.dut.board
                    serials.append(bench.instrument.describe().serial)
    assert serials == [str(SERIAL_BASE + fx.sim.seed), str(SERIAL_BASE + fx.sim.seed + 1)]
