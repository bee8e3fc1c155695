"""A sweep on the emulated Cortex-M4 bench (``fixtures/sim-m4.toml``, issue 22 item 4): its
points meet the quick plan's CI target, their time per op is the board's cycles / clock, and
the bench keeps its calibration records apart from the host DUT's bench.

What is asserted is what the rig decided (each point's status, flags, CI, time per op),
never how long the host took: the windows are the board's cycles at its clock however
slowly QEMU runs, so it holds at load 10 on two cores.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.paths import ROOT

from energyrig.calibration.store import CALIBRATION_DIR_ENV, calibration_dir
from energyrig.flags import CI_TARGET_NOT_MET
from energyrig.fixtures.loader import load_fixture
from energyrig.instruments.ppk2.emulator import SERIAL_BASE
from energyrig.results.store.read import load
from energyrig.rig.plan import load_plan
from energyrig.rig.sweep.run import start_sweep

SIM = ROOT / "fixtures" / "sim.toml"
SIM_M4 = ROOT / "fixtures" / "sim-m4.toml"
ELF = ROOT / "build" / "qemu-m4" / "energyrig-m4.elf"

#: Two points of plans/quick.toml, with its adaptive rule (the default: energy per op to a
#: 1 % CI target; 3 to 6 windows) and its batch (the default: auto), one repetition each.
PLAN = """
name = "m4-two"
seed = 22
fixture = "{fixture}"
adaptive = {{ min_windows = 3, max_windows = 6 }}
[[factors]]
op = ["sha256"]
payload_bytes = [1024]
[[factors]]
op = ["aes-ecb-encrypt"]
key_bits = [128]
payload_bytes = [256]
"""


def test_the_emulated_board_has_its_own_ppk2_and_calibration_records(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Records of the two simulated PPK2 benches must not mix: their DUTs differ (the
    window overhead and baseline are the board's), so do their instrument serials
    (SERIAL_BASE + [sim] seed) and their calibration directories."""
    monkeypatch.delenv(CALIBRATION_DIR_ENV, raising=False)
    host, m4 = load_fixture(SIM), load_fixture(SIM_M4)
    assert host.dut.board != m4.dut.board
    assert host.sim is not None and m4.sim is not None
    assert SERIAL_BASE + host.sim.seed != SERIAL_BASE + m4.sim.seed
    assert calibration_dir(host).resolve() != calibration_dir(m4).resolve()


@pytest.mark.slow
def test_a_sweep_on_the_emulated_board_meets_its_ci_target(tmp_path: Path) -> None:
    assert shutil.which("qemu-system-arm"), "qemu-system-arm is not installed: make deps"
    assert ELF.is_file(), f"{ELF} is not built: make firmware-qemu"
    path = tmp_path / "plan.toml"
    path.write_text(PLAN.format(fixture=SIM_M4), encoding="utf-8")
    plan = load_plan(path)
    assert (plan.adaptive.metric, plan.adaptive.ci_target) == ("energy_per_op_j", 0.01)
    outcome = start_sweep(plan, tmp_path / "run")
    assert outcome.failed == 0
    run = load(tmp_path / "run")
    points, windows = run.points, run.windows
    cycle_hz = run.manifest["firmware"]["cycle_hz"]
    assert run.manifest["firmware"]["board"] == "mps2-an386"
    assert len(points) == 2
    assert (points["status"] == "ok").all(), points[["op", "reason"]]
    for _, point in points.iterrows():
        assert CI_TARGET_NOT_MET not in point["flag_list"], point[["op", "flag_list"]]
        # The rule stopped it on its target: the 95 % CI half-width within 1 % of the mean.
        half = (point["energy_per_op_j_ci_high"] - point["energy_per_op_j_ci_low"]) / 2
        assert half <= plan.adaptive.ci_target * point["energy_per_op_j_mean"]
        assert point["n_windows"] <= plan.adaptive.max_windows
        # Time per op = the board's cycles per op / its clock (hello's cycle_hz, 25 MHz, in
        # the manifest): within 0.1 % (the port's ~330 cycles of edge lines per window,
        # the edges' samples), not the host's scheduling.
        own = windows[windows["point_key"] == point["point_key"]]
        board_s = (own["cycles"] / own["batch_n"]).median() / cycle_hz
        assert abs(point["time_per_op_s_mean"] / board_s - 1) < 1e-3, point["op"]
