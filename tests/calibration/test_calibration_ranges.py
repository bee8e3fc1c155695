"""Offset and gain per PPK2 range, on the emulated PPK2 with a different gain error and offset
in each range.

What is checked: the correction applies each sample's range's offset and gain (known answer,
no bench); a record with one value applies it to every range; ``rig calibrate gain`` with two
references in each of ranges 0 and 1 recovers each range's gain and offset within a few of
its u; a window whose baseline is in range 0 and whose ops are in range 1 then reads the truth
within 0.2 %, where the best single gain is about 1 % off."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support.paths import ROOT

from energyrig.calibration.correction import CurrentCorrection
from energyrig.calibration.routines.calibrate import calibrate
from energyrig.calibration.store import Measured, RangeValue
from energyrig.capture import Chunk
from energyrig.domain import Point
from energyrig.fixtures import load_fixture
from energyrig.rig.bench import open_bench
from energyrig.rig.pipeline import measure_point, reps_done

DUT = ROOT / "build" / "host" / "energyrig-dut"
#: Range 0 (up to 0.65 mA on the emulated unit) reads 1 % low and 2 µA high, range 1 (up to
#: 6.4 mA) 2 % high and 5 µA low: the nRF52840's idle (3 µA) is in range 0, its ops in range 1.
GAIN = (-0.01, 0.02)
OFFSET = (2e-6, -5e-6)
#: Two references in each range: 30 µA and 0.3 mA (range 0), 1 mA and 6 mA (range 1) at 3 V.
REFERENCES = (100000.0, 10000.0, 3000.0, 500.0)


def _chunk(current: list[float], ranges: list[int] | None) -> Chunk:
    return Chunk(start_index=0, period_s=1e-5, current_a=np.array(current), voltage_v=3.0,
                 current_range=None if ranges is None else np.array(ranges, dtype=np.uint8))


def test_each_sample_takes_its_ranges_offset_and_gain() -> None:
    values = {"offset_a": Measured(value=1e-6, u=0, method="t", ranges={
                  0: RangeValue(value=2e-6, u=0), 1: RangeValue(value=-5e-6, u=0)}),
              "gain": Measured(value=1.5, u=0, method="t", ranges={
                  0: RangeValue(value=0.99, u=0), 1: RangeValue(value=1.02, u=0)})}
    fix = CurrentCorrection.from_values(values)
    measured = [0.99 * 3e-6 + 2e-6, 1.02 * 3.3e-3 - 5e-6, 1.5 * 0.1 + 1e-6]
    out = next(fix.chunks([_chunk(measured, [0, 1, 2])])).current_a
    np.testing.assert_allclose(out, [3e-6, 3.3e-3, 0.1], rtol=1e-12)  # range 2: the value
    # No ranges in the samples (a scope), or none in the record: one value for all.
    one = next(fix.chunks([_chunk(measured, None)])).current_a
    np.testing.assert_allclose(one, (np.array(measured) - 1e-6) / 1.5)
    old = CurrentCorrection.from_values({q: Measured(value=v.value, u=0, method="t")
                                         for q, v in values.items()})
    assert old.range_gain == () and old.range_offset_a == ()
    np.testing.assert_allclose(next(old.chunks([_chunk(measured, [0, 1, 2])])).current_a,
                               (np.array(measured) - 1e-6) / 1.5)
    assert dict(fix.applied)["gain[1]"] == 1.02


@pytest.mark.skipif(not DUT.exists(), reason="host DUT not built (make firmware-host)")
@pytest.mark.slow
def test_gain_per_range_is_recovered_and_a_window_across_ranges_reads_the_truth(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sim_fixture: Callable[..., Path]) -> None:
    monkeypatch.setenv("ENERGYRIG_CALIBRATION_DIR", str(tmp_path / "cal"))
    path = sim_fixture(to="sim.toml", **{"sim.power.range_gain_error": list(GAIN),
                                         "sim.power.range_offset_a": list(OFFSET)})
    fixture = load_fixture(path)
    # the fixture's references: two in each range
    assert fixture.calibration.reference_ohms == REFERENCES
    with open_bench(fixture) as bench:
        record, _ = calibrate(bench, bench.connect, ["gain"])  # no skew, no overhead here
    gain, offset = record.values["gain"], record.values["offset_a"]
    assert sorted(gain.ranges) == sorted(offset.ranges) == [0, 1]
    for r in (0, 1):
        g, o = gain.ranges[r], offset.ranges[r]
        # Within 3 u, u itself well below the fault (the references' 0.1 % tolerance).
        assert abs(g.value - (1 + GAIN[r])) < 3 * g.u < 5e-3, (r, g)
        assert abs(o.value - OFFSET[r]) < max(3 * o.u, 0.3e-6), (r, o)
    # The best single gain (the line through all four) is between the two ranges'.
    assert 1 + GAIN[0] < gain.value < 1 + GAIN[1]
    shown = subprocess.run([sys.executable, "-m", "energyrig.cli.app", "calibrate", "show",
                            "-f", str(path)], check=False, capture_output=True, text=True,
                           timeout=120,
                           env={**os.environ, "COLUMNS": "200"})
    assert f"range 1: {gain.ranges[1].value:.6f} ± " in shown.stdout  # each range, listed

    with open_bench(fixture, "latest") as bench:
        assert bench.calibrated is not None and bench.calibrated.values["gain"].ranges
        result = measure_point(bench, Point(op="sha256", board=bench.board, payload_bytes=1024),
                               until=reps_done(4))
    fig = result.figures()
    truth = fig["true_net_energy_per_op_j"]
    assert abs(fig["net_energy_per_op_j"] / truth - 1) < 2e-3
    # A single gain would be off: the window's ops are in range 1, read 2 % high.
    single = fig["net_energy_per_op_j"] * (1 + GAIN[1]) / gain.value
    assert abs(single / truth - 1) > 5e-3
