"""Calibration on the simulated bench, as an operator uses it through ``rig``.

What is checked: with instrument faults switched on in the emulator (offset, 3 % gain, 60 µs
skew), ``rig run`` reads about 3 % off and flags the windows ``uncalibrated`` with a warning;
with a record of the faults it reads the truth within 0.2 % and records the corrections; a
corrupt or foreign record is one line and exit code 2; ``rig sweep`` refuses an
uncalibrated bench unless given ``--allow-uncalibrated``."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import ROOT

from energyrig.calibration.store import CalibrationStore, Identity, Measured, new_record
from energyrig.fixtures import load_fixture
from energyrig.rig.dut import open_dut

DUT = ROOT / "build" / "host" / "energyrig-dut"
FAULTS = {"offset_a": 30e-6, "gain_error": 0.03, "skew_s": 60e-6}
SIM_PPK2 = Identity(kind="ppk2", name="PPK2 (HW 9173)")

pytestmark = [pytest.mark.skipif(not DUT.exists(), reason="host DUT not built (make firmware-host)"),
              pytest.mark.slow]


@pytest.fixture
def faulty(sim_fixture: Callable[..., Path]) -> Path:
    """sim.toml with the instrument faults switched on."""
    return sim_fixture(to="faulty.toml", **{f"sim.power.{k}": v for k, v in FAULTS.items()})


def _rig(*args: str, store: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ENERGYRIG_CALIBRATION_DIR": str(store), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "energyrig.cli.app", *args],
                          capture_output=True, text=True, env=env)


def _run_json(fixture: Path, store: Path, *extra: str) -> tuple[dict, str]:
    out = _rig("run", "--op", "sha256", "--payload-bytes", "1024", "--reps", "4", "--json",
               "-f", str(fixture), *extra, store=store)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), out.stderr


def _error(fig: dict) -> float:
    return fig["net_energy_per_op_j"] / fig["true_net_energy_per_op_j"] - 1


def test_a_record_of_the_faults_takes_them_out(faulty: Path, tmp_path: Path) -> None:
    store = tmp_path / "cal"
    raw, err = _run_json(faulty, store)
    assert "not fully calibrated" in err and "rig calibrate" in err
    assert "uncalibrated" in raw["flags"]
    assert _error(raw) == pytest.approx(0.03, abs=0.015)  # the gain, less a little skew

    values = {"offset_a": FAULTS["offset_a"], "gain": 1 + FAULTS["gain_error"],
              "skew_s": FAULTS["skew_s"], "overhead_s": 0.0, "overhead_j": 0.0}
    with open_dut(load_fixture(faulty)) as dut:  # the overhead is of this firmware build
        hello = dut.hello()
    CalibrationStore(store).save(new_record(load_fixture(faulty), SIM_PPK2, hello, {
        q: Measured(value=v, u=0.0, method="test", reference="the emulator's faults")
        for q, v in values.items()}))
    fixed, err = _run_json(faulty, store)
    assert "calibrated" not in err and "uncalibrated" not in fixed["flags"]
    assert abs(_error(fixed)) < 0.002
    assert all(w["corrections"] == values for w in fixed["windows"])
    # The supply's component, from the fixture's tolerance (the emulator's supply is exact).
    supply = {c["component"]: c for c in fixed["uncertainty_budget"]}["supply voltage"]
    assert supply["u_j"] == 0.0 and supply["type"] == "B"
    assert all(w["uncertainty"]["supply voltage"] == 0.0 for w in fixed["windows"])


def test_a_bad_record_is_one_line_and_exit_2(faulty: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    out = _rig("run", "--op", "sha256", "--payload-bytes", "64", "-f", str(faulty),
               "--calibration", str(bad),
               store=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == \
        [l for l in out.stderr.strip().splitlines() if l.startswith("rig: error: ")]
    assert f"rig: error: {bad}: corrupt calibration record" in out.stderr

    other = CalibrationStore(tmp_path / "other").save(new_record(
        load_fixture(faulty), Identity(kind="scope", name="RIGOL"), {},
        {"gain": Measured(value=1.0, u=0.0, method="test")}))
    out = _rig("run", "--op", "sha256", "--payload-bytes", "64", "-f", str(faulty),
               "--calibration", str(other),
               store=tmp_path)
    assert out.returncode == 2
    assert "instrument: is for scope 'RIGOL', not for this bench's ppk2 'PPK2 (HW 9173)'" \
        in out.stderr


def test_a_sweep_refuses_an_uncalibrated_bench(faulty: Path, tmp_path: Path) -> None:
    out = _rig("sweep", str(ROOT / "plans" / "quick.toml"), "-f", str(faulty), "--out",
               str(tmp_path / "run"), store=tmp_path / "empty")
    assert out.returncode == 2, out.stderr
    assert "not fully calibrated" in out.stderr and "--allow-uncalibrated" in out.stderr
    assert not (tmp_path / "run").exists()
