"""Calibration routines on the simulated benches (emulated PPK2 and scope with faults).

What is checked: the routines that correct (zero, gain, skew, overhead; ``rig calibrate
all`` without the baseline, which corrects nothing and has its own tests,
test_calibration_baseline.py) find the emulator's offset, gain and skew (both signs of
each, both instruments; the offset as the intercept of the two references' line, since a
PPK2 cannot show a current below zero) within reach of their uncertainties and store one
record that the bench then applies to read the truth within 0.2 %; a routine whose
measurement makes no sense — the board still on an open input, an offset below the range, an
open reference, a step that never comes, one reference without an offset — refuses with
CalibrationError and stores nothing."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import ROOT

from energyrig.calibration.quantities import CORRECTING
from energyrig.calibration.routines.calibrate import calibrate
from energyrig.calibration.store import CalibrationStore
from energyrig.domain import Point
from energyrig.errors import CalibrationError
from energyrig.fixtures import load_fixture
from energyrig.instruments.sim.power import PROFILES
from energyrig.rig.bench import open_bench
from energyrig.rig.pipeline import measure_point, reps_done

DUT = ROOT / "build" / "host" / "energyrig-dut"

pytestmark = [pytest.mark.skipif(not DUT.exists(), reason="host DUT not built (make firmware-host)"),
              pytest.mark.slow]


def _faulty(sim_fixture: Callable[..., Path], base: str, to: str = "", *,
            one_reference: bool = False, **faults: float) -> Path:
    """``base`` with ``faults`` of the power model (and one reference resistor), written as
    ``to``/``base``."""
    overrides = {f"sim.power.{k}": v for k, v in faults.items()}
    if one_reference:
        overrides["calibration.reference_ohms"] = [1000.0]
    return sim_fixture(base=base, to=f"{to}{base}", **overrides)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CalibrationStore:
    monkeypatch.setenv("ENERGYRIG_CALIBRATION_DIR", str(tmp_path / "cal"))
    return CalibrationStore(tmp_path / "cal")


@pytest.mark.parametrize("base, faults, tol", [
    ("sim.toml", {"offset_a": 40e-6, "gain_error": 0.02, "skew_s": 70e-6, "overhead_s": 150e-6,
                  "overhead_a": 3e-3},
     {"offset_a": 2e-6, "gain": 2e-3, "skew_s": 5e-6}),
    ("sim-scope.toml", {"offset_a": -50e-6, "gain_error": -0.03, "skew_s": -60e-6,
                        "overhead_s": 80e-6, "overhead_a": 40e-3},
     {"offset_a": 100e-6, "gain": 3e-3, "skew_s": 3e-6}),
])
def test_the_corrections_find_the_faults_and_run_then_reads_the_truth(
        sim_fixture: Callable[..., Path], store: CalibrationStore, base: str,
        faults: dict[str, float], tol: dict[str, float]) -> None:
    fixture = load_fixture(_faulty(sim_fixture, base, **faults))
    with open_bench(fixture) as bench:
        record, path = calibrate(bench, bench.connect, CORRECTING)
    assert path.parent == store.directory and [p for p, _ in store.records()] == [path]
    expected = {"offset_a": faults["offset_a"], "gain": 1 + faults["gain_error"],
                "skew_s": faults["skew_s"]}
    for q, value in expected.items():
        got = record.values[q]
        assert got.value == pytest.approx(value, abs=tol[q]), q
        assert 0 < got.u < tol[q], q
    # The emulated overhead, and the host DUT's own (its rising edge's wire send) on top.
    board = PROFILES[fixture.sim.power.profile]  # type: ignore[index, union-attr]
    overhead = faults["overhead_s"] * (faults["overhead_a"] - board["idle_a"]) * board["supply_v"]
    assert record.values["overhead_s"].value > faults["overhead_s"] * 0.9
    assert record.values["overhead_j"].value > overhead * 0.9

    with open_bench(fixture, "latest") as bench:
        assert bench.calibrated is not None and bench.calibrated.complete
        result = measure_point(bench, Point(op="sha256", board=bench.board, payload_bytes=1024),
                               until=reps_done(4))
    fig = result.figures()
    assert "uncalibrated" not in fig["flags"]
    # Within 0.2 % of the truth, or (a loaded host stretches the empty windows the overhead
    # is measured on) within the uncertainty the rig states for it: never wrong unawares.
    truth = fig["true_net_energy_per_op_j"]
    assert fig["net_energy_per_op_u_j"] is not None
    assert abs(fig["net_energy_per_op_j"] - truth) <= max(2e-3 * truth,
                                                          fig["net_energy_per_op_u_j"])


def test_nonsense_is_refused_and_nothing_is_stored(sim_fixture: Callable[..., Path],
                                                   store: CalibrationStore) -> None:
    fixture = load_fixture(_faulty(sim_fixture, "sim.toml", one_reference=True, offset_a=5e-6))
    with open_bench(fixture) as bench:
        with pytest.raises(CalibrationError, match="follows the firmware's trigger"):
            calibrate(bench, lambda load, ohms=0: bench.connect("dut"), ["zero"])  # board on
        with pytest.raises(CalibrationError, match="one reference needs a valid offset"):
            calibrate(bench, bench.connect, ["gain"])
        with pytest.raises(CalibrationError, match=r"a gain of .*: is the reference connected"):
            calibrate(bench, lambda load, ohms=0: bench.connect(
                "open" if load == "reference" else load), ["zero", "gain"])
        with pytest.raises(CalibrationError, match="no current step"):
            calibrate(bench, lambda load, ohms=0: bench.connect("open"), ["skew"])  # board gone
        assert store.records() == []
        _, path = calibrate(bench, bench.connect, ["zero", "gain"])
    assert [p for p, _ in store.records()] == [path]
    # A PPK2 cannot show a current below zero: the open input cannot give a negative offset,
    # the line through two references can.
    below = load_fixture(_faulty(sim_fixture, "sim.toml", "below/", offset_a=-20e-6))
    with open_bench(below) as bench:
        with pytest.raises(CalibrationError, match="bottom of the range"):
            calibrate(bench, bench.connect, ["zero"])
        record, _ = calibrate(bench, bench.connect, ["gain"])
    assert record.values["offset_a"].value == pytest.approx(-20e-6, abs=1e-6)
    assert record.values["gain"].value == pytest.approx(1.0, abs=2e-3)
