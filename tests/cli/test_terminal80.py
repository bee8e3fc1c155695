"""The terminal at 80 columns (issue 23, 8): `rig ops` keeps an op on one line, `rig
instruments check` shows the port that failed whole, `rig lab status` fits, the sweep's bar
keeps its counts and ETA once the readout starts, and a calibration record has a short id
that `rig calibrate list` shows whole."""
from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from support.paths import ROOT
from support.sweep import SIM
from typer.testing import CliRunner

from energyrig.calibration.quantities import QUANTITIES, short_id
from energyrig.calibration.store import CalibrationStore, Identity, Measured, new_record
from energyrig.cli.app import app
from energyrig.cli.sweepview import SweepDisplay
from energyrig.domain import Point
from energyrig.fixtures import load_fixture
from energyrig.lab import status as lab_status
from energyrig.lab.status import LastCalibration, PlaceStatus
from energyrig.results.footprint import Footprint, Memory, OpFootprint, write_footprint
from energyrig.rig.opscache import firmware_catalogue
from energyrig.rig.pipeline import Readout
from energyrig.rig.sweep.events import PointStarted, SweepStarted, WindowMeasured

WIDTH = {"COLUMNS": "80"}
#: A PPK2 by its stable name: 71 characters of path, no space to wrap at.
PORT = "/dev/serial/by-id/usb-Nordic_Semiconductor_ASA_PPK2_C8A1B2C3D4E5F6-if01"
#: What `rig calibrate all` names its record.
FULL_ID = "20261126T162840Z-ppk2-" + "+".join(sorted(QUANTITIES))


def fits(text: str) -> list[str]:
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80, max(lines, key=len)
    assert "…" not in text
    return lines


@pytest.mark.parametrize("with_footprint", [False, True])
@pytest.mark.slow
def test_rig_ops_keeps_each_op_on_one_line(with_footprint: bool, tmp_path: Path) -> None:
    ops = firmware_catalogue(SIM).ops
    args = ["ops", "--fixture", str(SIM)]
    if with_footprint:
        footprint = Footprint(
            board="host", zephyr=None, crypto=None, toolchain="cc", build_id="abc1234",
            empty=Memory(flash_bytes=34538, ram_bytes=201773),
            full=Memory(flash_bytes=127952, ram_bytes=215000),
            ops=(OpFootprint(id="sha256", op="sha256", backend="software",
                             flash_bytes=123012, ram_bytes=10240),))
        args += ["--footprint", str(write_footprint(footprint, tmp_path / "fp.json"))]
    result = CliRunner().invoke(app, args, env=WIDTH)
    assert result.exit_code == 0, result.output
    lines = fits(result.stdout)
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) == len(ops)  # no op wraps to a second line
    for op in ops:
        (row,) = [r for r in rows if r.split("│")[1].strip() == op.name]
        if op.key_bits:
            assert ", ".join(map(str, op.key_bits)) in row
    if with_footprint:
        assert "123 012" in next(r for r in rows if " sha256 " in r)


def test_instruments_check_shows_the_failed_port_whole(tmp_path: Path) -> None:
    fixture = tmp_path / "bench.toml"
    fixture.write_text(f'[dut]\nboard = "nrf52840dk_nrf52840"\nlink = "pty"\n'
                       f'command = ["{ROOT / "build/host/energyrig-dut"}"]\n'
                       f'[instrument]\nkind = "ppk2"\nport = "{PORT}"\n')
    result = CliRunner().invoke(app, ["instruments", "check", "--fixture", str(fixture)],
                                env=WIDTH)
    assert result.exit_code == 1
    lines = fits(result.stdout)
    assert any(PORT in line for line in lines)
    assert "instrument does not answer" in result.stdout and "NO" in result.stdout


def test_lab_status_fits_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    cal = LastCalibration(FULL_ID, datetime(2026, 11, 26, 16, 28, tzinfo=UTC),
                          "ppk2 'PPK2' serial E1", tuple(sorted(QUANTITIES)))
    rows = [PlaceStatus("bench-a", "nrf52840dk_nrf52840", "lab-host-01.example.org",
                        "ana/session-1", True, ("NetworkSerialPort", "NetworkPPK2"), cal),
            PlaceStatus("bench-b", "host", "10.0.0.7", None, False, ("NetworkSerialPort",),
                        None)]
    monkeypatch.setattr(lab_status, "lab_status", lambda lab, fixtures: rows)
    result = CliRunner().invoke(app, ["lab", "status", "--lab", "127.0.0.1:20408", "-f",
                                      str(SIM)], env=WIDTH)
    assert result.exit_code == 0, result.output
    lines = fits(result.stdout)
    for text in ("nrf52840dk_nrf52840", "lab-host-01.example.org", "NetworkSerialPort",
                 "20261126T162840Z-ppk2-all 2026-11-26 16:28Z", "MISSING"):
        assert any(text in line for line in lines), text  # whole, on one line


def test_the_sweep_bar_keeps_its_counts_once_the_readout_starts() -> None:
    console = Console(width=80, file=io.StringIO())
    point = Point(op="aes-ecb-encrypt", board="nrf52840dk_nrf52840", key_bits=256,
                  payload_bytes=1024, rep=1)
    with SweepDisplay(console) as display:
        display.report(SweepStarted(Path("runs/quick"), 32, 3))
        display.report(PointStarted(point, 6))
        display.report(WindowMeasured(point, 5, 6, Readout(1.09e-8, 3.61e-3, ("glitch",),
                                                           4096)))
        shot = Console(width=80, file=io.StringIO(), record=True)
        shot.print(display)
    lines = fits(shot.export_text())
    assert "3/32" in lines[0] and "points" in lines[0] and "ETA" in lines[0]
    assert f"{point.label} [5/6]" in lines[1]
    assert "last: 10.9 nJ/op, 3.61 mA, glitch" in lines[1]


def test_a_calibration_record_has_a_short_id_for_display() -> None:
    assert len(FULL_ID) > 100
    assert short_id(FULL_ID) == "20261126T162840Z-ppk2-all"
    assert short_id("20261123T160512Z-ppk2-offset_a") == "20261123T160512Z-ppk2-zero"
    assert short_id("20261123T160512Z-sigrok-demo-gain+offset_a") == \
        "20261123T160512Z-sigrok-demo-zero+gain"
    assert short_id("my-record") == "my-record"  # not of the rig's form: as it is


def test_calibrate_list_shows_each_record_by_its_whole_short_id(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CalibrationStore(tmp_path / "cal")
    def measured(q: str) -> Measured:
        return Measured(value=1.0 if q == "gain" else 1.2e-6, u=1e-8, method="zero",
                        reference="input open", residual_rms=2e-7, n=1000)

    record = new_record(load_fixture(SIM), Identity(kind="ppk2", name="PPK2 (HW 9173)",
                                                    serial="3925868544"),
                        {"board": "host"}, {q: measured(q) for q in QUANTITIES},
                        now=datetime(2026, 11, 26, 16, 28, 40, tzinfo=UTC))
    store.save(record)
    assert len(record.id) > 100  # the stored record keeps its whole id
    monkeypatch.setenv("ENERGYRIG_CALIBRATION_DIR", str(store.directory))
    result = CliRunner().invoke(app, ["calibrate", "list", "-f", str(SIM)], env=WIDTH)
    assert result.exit_code == 0, result.output
    lines = fits(result.stdout)
    assert any("20261126T162840Z-ppk2-all of ppk2 'PPK2 (HW 9173)'" in line for line in lines)
