"""The simulated bench whose DUT is the emulated Cortex-M4 (``fixtures/sim-m4.toml``, issue 22
item 3): a window lasts what the board's cycles say at the board's clock, not what QEMU took
on this host.

The bridge (``firmware/port/qemu-m4/energyrig-m4-dut``) stamps a batch's falling edge at its
rising edge + the cycles between them / ``hello``'s ``cycle_hz`` and holds the board's reply
until the host clock has passed that stamp. What is asserted is what the bridge and the rig
decided (edge stamps, windows, the point's figures), never how long the host took, so it holds
on a loaded machine: QEMU's cycles under ``-icount`` are the same however slowly it runs.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.m4 import LINE_OVERHEAD_CYCLES, SIM_M4, assert_built, next_edges
from typer.testing import CliRunner

from energyrig.cli.app import app
from energyrig.domain import in_estimate
from energyrig.flags import INTEGRITY_FLAGS
from energyrig.fixtures.loader import load_fixture
from energyrig.instruments.ppk2.decode import SAMPLE_RATE_HZ
from energyrig.instruments.sim.power import PowerModel, at_clock
from energyrig.instruments.sim.wire import TriggerWire
from energyrig.rig.dut import open_dut

#: The emulated PPK2's sample period, s.
PERIOD_S = 1.0 / SAMPLE_RATE_HZ

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


@pytest.fixture(autouse=True)
def _built() -> None:
    assert_built()


def test_the_fall_is_placed_by_the_boards_cycles_and_the_reply_waits_for_it(
        tmp_path: Path) -> None:
    fixture = load_fixture(SIM_M4)
    wire = TriggerWire(tmp_path / "wire")
    wire.open()
    try:
        with open_dut(fixture, trigger_wire=tmp_path / "wire") as dut:
            cycle_hz = dut.hello()["cycle_hz"]
            assert dut.prep("sha256", payload_bytes=1024)["selftest"] == "pass"
            spans = []
            for _ in range(2):
                run = dut.run(8, timeout_s=120)
                replied_ns = time.monotonic_ns()
                rise, fall = next_edges(wire, 2)["t_ns"].astype(np.int64)
                spans.append(fall - rise)
                # The window on the wire is the board's: its batch's cycles at its clock,
                # plus the port's edge-line writes; QEMU itself got there far sooner.
                batch_ns = run.cycles * 10**9 // cycle_hz
                overhead_ns = LINE_OVERHEAD_CYCLES * 10**9 // cycle_hz
                assert batch_ns <= fall - rise <= batch_ns + overhead_ns
                # The reply came only once the host clock had reached the falling edge.
                assert replied_ns >= fall
    finally:
        wire.close()
    # The same instructions, the same window: within a few of the readings' 40 ns ticks
    # (4 seen), far inside the 0.1 % the windows of a point must agree to.
    assert abs(spans[0] - spans[1]) <= 1e-4 * spans[0]


def _rig_run_sha256() -> dict[str, Any]:
    """issue 22's "Done means": `rig run -f fixtures/sim-m4.toml --op sha256
    --payload-bytes 1024 --reps 5 --json`, its document."""
    result = CliRunner().invoke(app, ["run", "-f", str(SIM_M4), "--op", "sha256",
                                      "--payload-bytes", "1024", "--reps", "5", "--json"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_rig_run_on_the_emulated_board_measures_the_boards_timeline() -> None:
    doc = _rig_run_sha256()
    assert doc["status"] == "ok"
    # On a loaded host the emulated PPK2 may lose samples the host did not read in time: such
    # windows carry an integrity flag, are left out of the estimate and replaced (what the
    # rig decided); the five in the estimate are the board's.
    keep = in_estimate(w["flags"] for w in doc["windows"])
    windows = [w for w, kept in zip(doc["windows"], keep) if kept]
    assert doc["windows_excluded"] == keep.count(False)
    assert set(doc["flags"]) <= {"uncalibrated", *INTEGRITY_FLAGS}, doc["flags"]
    assert all(set(w["flags"]) <= {"uncalibrated", "stream_time_shift"} for w in windows)
    assert len(windows) == 5
    durations = np.array([w["end_s"] - w["start_s"] for w in windows])
    # The five windows agree within 0.1 % (here: within one sample).
    assert durations.max() - durations.min() <= max(1e-3 * durations.mean(), PERIOD_S * 1.01)
    # Each window is its batch's cycles at the board's clock: to its edges' samples and the
    # port's edge-line overhead, not what QEMU took on this host.
    cycle_hz = doc["cycle_hz"]
    for w, duration in zip(windows, durations):
        board_s = w["cycles"] / cycle_hz
        assert -PERIOD_S <= duration - board_s <= PERIOD_S + LINE_OVERHEAD_CYCLES / cycle_hz
    # The time per op is cycles / clock.
    board_per_op_s = doc["cycles_per_op"] / cycle_hz
    assert abs(doc["time_per_op_s"] / board_per_op_s - 1) < 1e-3
    # The net energy agrees with the power model's truth within 0.2 %, CI half-width < 1 %.
    net = doc["net_energy_per_op_j"]
    assert abs(net / doc["true_net_energy_per_op_j"] - 1) < 2e-3
    low, high = doc["net_energy_per_op_ci95_j"]
    assert (high - low) / 2 < 0.01 * net
    # The nRF52840 profile's hash family current at the board's clock (issue 22 item 5: the
    # current follows the clock) drew the power in the window: energy per op = that current
    # at the supply x the board's time per op (the ~0.1 % the window's line overhead and the
    # edge spikes add, within 1 %).
    model = PowerModel.from_dict({"profile": load_fixture(SIM_M4).sim.power.profile})
    assert doc["family"] == "hash"
    hash_a = at_clock(model, model.families["hash"], cycle_hz).active_a
    modelled_w = hash_a * doc["supply_v"]
    assert abs(doc["true_energy_per_op_j"] / (modelled_w * board_per_op_s) - 1) < 1e-2
    # The same on every run: the batch from the firmware's cycles, the time per op to the
    # edges' samples.
    again = _rig_run_sha256()
    assert again["batch_n"] == doc["batch_n"]
    assert abs(again["time_per_op_s"] - doc["time_per_op_s"]) <= 2 * PERIOD_S / doc["batch_n"]
