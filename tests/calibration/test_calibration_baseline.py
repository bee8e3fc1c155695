"""``rig calibrate baseline`` and the gain's check against a PPK2's own calibration.

What is checked, on generated records (fast): the Allan deviation of white noise is the
standard error of a mean; a periodic load or a step needs a longer span than white noise; a
busy board (the trigger high throughout, or again after the window), a window no higher than
idle and an idle too unsteady for the precision are refused; the precision parses. On the
simulated benches (real time): the routine stores its advice on both emulators, a fixture with
a slow periodic load gets a longer span, and the CLI prints the fixture's lines; a refusal is
one line, exit 2, nothing stored. The gain: within the metadata's bound it is stored with the
metadata's identity, beyond the warning bound with a note, grossly off it is refused.
"""
from __future__ import annotations

import math
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support.paths import ROOT

from energyrig.calibration.routines.baseline import (
    Precision,
    allan_deviation,
    baseline,
    idle_stability,
)
from energyrig.calibration.routines.calibrate import calibrate
from energyrig.calibration.routines.gain import check_stated_gain
from energyrig.calibration.store import CalibrationStore, Measured
from energyrig.errors import CalibrationError
from energyrig.fixtures import load_fixture
from energyrig.instruments.ppk2.metadata import stated_calibration
from energyrig.instruments.ppk2.emulator import DEFAULT_CALIBRATION, SERIAL_BASE
from energyrig.rig.bench import open_bench

DUT = ROOT / "build" / "host" / "energyrig-dut"
PERIOD = 1e-5
RNG = np.random.default_rng(7)


def _record(idle: np.ndarray, *, step_a: float = 3e-3, window_n: int = 2000,
            settle_n: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A mark window of ``step_a`` above idle, an edge transient of ``settle_n`` samples,
    then ``idle``."""
    current = np.concatenate([np.full(window_n, step_a), np.full(settle_n, 2e-3), idle])
    current[:window_n] += idle[:window_n]
    high = np.zeros(current.size, dtype=bool)
    high[10:window_n] = True
    return current, high


def _white(n: int = 200_000, sigma: float = 0.2e-6) -> np.ndarray:
    return 3e-6 + RNG.normal(0.0, sigma, n)


def test_the_allan_deviation_of_white_noise_is_the_standard_error_of_a_mean() -> None:
    spans = np.array([1, 10, 100, 1000])
    dev = allan_deviation([RNG.normal(0.0, 1.0, 400_000)], spans)
    np.testing.assert_allclose(dev, 1 / np.sqrt(spans), rtol=0.08)
    assert np.isnan(allan_deviation([np.zeros(10)], np.array([6]))[0])


def test_a_periodic_load_needs_a_longer_baseline_than_white_noise() -> None:
    t = np.arange(200_000) * PERIOD
    load = np.where(np.mod(t, 0.05) < 1e-3, 2e-3, 0.0)  # 2 mA for 1 ms every 50 ms
    quiet = idle_stability([_record(_white()) for _ in range(3)], PERIOD)
    loaded = idle_stability([_record(_white() + np.roll(load, 1000 * k)) for k in range(3)],
                            PERIOD)
    assert quiet["baseline_s"].value == pytest.approx(100 * PERIOD)  # the shortest advised
    assert 0.05 < loaded["baseline_s"].value < 0.5
    assert quiet["idle_noise_a"].value == pytest.approx(0.2e-6, rel=0.05)
    assert abs(quiet["idle_drift_a_per_s"].value) < 5 * quiet["idle_drift_a_per_s"].u + 1e-9
    # settled 3 samples after the fall: the guard is twice that
    assert quiet["guard_s"].value == pytest.approx(2 * 3 * PERIOD)
    assert all(v.u >= 0 and v.method == "baseline" for v in quiet.values())


def test_a_busy_board_a_flat_window_and_an_unsteady_idle_are_refused() -> None:
    current, high = _record(_white())
    with pytest.raises(CalibrationError, match="high throughout the record: the board is busy"):
        idle_stability([(current, np.ones_like(high))], PERIOD)
    again = high.copy()
    again[-5000:] = True
    with pytest.raises(CalibrationError, match="high again after the mark window"):
        idle_stability([(current, again)], PERIOD)
    with pytest.raises(CalibrationError, match="within the noise .* is the board connected"):
        idle_stability([_record(_white(), step_a=0.0)], PERIOD)
    # 50 mA/s: a baseline of the shortest span advised (1 ms) is already 35 uA off
    drifting = _white() + np.arange(200_000) * PERIOD * 0.05
    with pytest.raises(CalibrationError, match=r"no idle span up to 0\.51\d* s gives the "
                                               r"baseline to \S+ A \(0\.5 % of the current "
                                               r"above idle\): .*drift 0\.05 A/s"):
        idle_stability([_record(drifting) for _ in range(3)], PERIOD)
    assert idle_stability([_record(drifting) for _ in range(3)], PERIOD,
                          Precision.parse("100 uA"))["idle_drift_a_per_s"].value == \
        pytest.approx(0.05, rel=0.01)


def test_the_precision_is_a_percentage_or_a_current() -> None:
    assert Precision.parse("0.5%") == Precision(0.005, None) == Precision()
    assert Precision.parse("0.1 %").of(3e-3) == pytest.approx(3e-6)
    assert Precision.parse("2uA") == Precision(None, 2e-6)
    assert Precision.parse("2 µA").of(1.0) == Precision.parse("2e-6").of(1.0) == 2e-6
    assert Precision.parse("0.01mA").absolute_a == pytest.approx(1e-5)
    for bad in ("", "fast", "-1%", "0 A"):
        with pytest.raises(ValueError):
            Precision.parse(bad)


def test_the_gain_is_checked_against_what_the_ppk2s_metadata_allows() -> None:
    stated = stated_calibration(DEFAULT_CALIBRATION)
    assert (stated.calibrated, stated.gain_warn, stated.gain_refuse) == (True, 0.02, 0.05)
    assert stated.identity.startswith("PPK2 metadata HW 9173, calibrated, sha256 ")
    assert stated_calibration(DEFAULT_CALIBRATION) == stated  # a digest of the values
    user = stated_calibration(DEFAULT_CALIBRATION.__class__(ug=(1.0, 1.0, 1.03, 1.0, 1.0)))
    assert not user.calibrated and user.gain_warn == pytest.approx(0.05 + 0.03)
    assert user.identity != stated.identity

    def gain(value: float, u: float = 1e-3) -> Measured:
        return Measured(value=value, u=u, method="gain")

    assert check_stated_gain(gain(1.015), stated) is None
    assert check_stated_gain(gain(1.03, 0.01), stated) is None  # within 2 u of the bound
    assert "which allows 2%: check the reference" in check_stated_gain(gain(0.97), stated)
    with pytest.raises(CalibrationError, match=r"measured 1\.1000 .* says it is calibrated .*"
                                               r"allows 5% at most: a wrong reference"):
        check_stated_gain(gain(1.1), stated)
    assert check_stated_gain(gain(1.1), None) is None  # nothing stated: nothing to check


bench = pytest.mark.skipif(not DUT.exists(), reason="host DUT not built (make firmware-host)")
#: ``rig ARGS`` run as the console script runs it (the ``rig_cli`` fixture of conftest.py).
Rig = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def _rig(rig_cli: Rig, monkeypatch: pytest.MonkeyPatch) -> Rig:
    """``_rig(*ARGS, store=STORE)``: ``rig ARGS`` with the calibration store ``STORE``, through
    the console script's entry point in the test's process (``rig_cli``: its exit code and
    streams as a child's, without a child python's imports)."""
    def run(*args: str, store: Path) -> subprocess.CompletedProcess[str]:
        monkeypatch.setenv("ENERGYRIG_CALIBRATION_DIR", str(store))
        monkeypatch.setenv("COLUMNS", "200")
        return rig_cli(*args)
    return run


def _one_line_exit_2(out: subprocess.CompletedProcess[str], store: Path) -> None:
    assert out.returncode == 2, out.stderr
    assert [l for l in out.stderr.splitlines() if l.startswith("rig: error: ")] == \
        [out.stderr.strip().splitlines()[-1]]
    assert not store.exists() or not list(store.iterdir())


@bench
@pytest.mark.slow
def test_a_slow_periodic_load_gets_a_longer_baseline_on_the_ppk2_bench(
        sim_fixture: Callable[..., Path]) -> None:
    quiet = load_fixture(sim_fixture(to="sim.toml"))
    loaded = load_fixture(sim_fixture(to="load/sim.toml", **{"sim.power.loads": [
        {"amplitude_a": 2.0e-3, "period_s": 0.05, "duty": 0.02}]}))
    found = {}
    for name, fixture in (("quiet", quiet), ("loaded", loaded)):
        with open_bench(fixture) as b:
            found[name] = baseline(b, b.connect, span_s=1.0)
    assert found["quiet"]["baseline_s"].value < 0.01 < found["loaded"]["baseline_s"].value
    assert found["quiet"]["idle_noise_a"].value == pytest.approx(0.2e-6, rel=0.2)
    # the nRF52840's 30 us edge spike, twice
    assert 30e-6 < found["quiet"]["guard_s"].value < 0.2e-3


@bench
@pytest.mark.parametrize("base", ["sim.toml", "sim-scope.toml"])
@pytest.mark.slow
def test_rig_calibrate_baseline_stores_its_advice_and_prints_the_fixture_lines(
        _rig: Rig, tmp_path: Path, base: str, sim_fixture: Callable[..., Path]) -> None:
    store = tmp_path / "cal"
    out = _rig("calibrate", "baseline", "--yes", "-f", str(sim_fixture(base=base, to=base)),
               store=store)
    assert out.returncode == 0, out.stderr
    assert "[windows]\nguard_s = " in out.stdout and "\nbaseline_s = " in out.stdout
    [(_, record)] = CalibrationStore(store).records()
    assert set(record.values) == {"baseline_s", "guard_s", "idle_drift_a_per_s",
                                  "idle_noise_a"}
    assert record.values["idle_drift_a_per_s"].unit == "A/s"
    listed = _rig("calibrate", "list", "-f", str(tmp_path / base), store=store)
    assert "baseline_s" in listed.stdout and "guard_s" in listed.stdout
    if base == "sim.toml":
        assert record.instrument.serial == str(SERIAL_BASE)  # the emulator's, from its seed
        shown = _rig("calibrate", "show", "-f", str(tmp_path / base), store=store)
        assert shown.returncode == 1 and "baseline_s" in shown.stdout  # incomplete: no gain


@bench
@pytest.mark.slow
def test_an_idle_too_unsteady_for_the_precision_is_refused(
        _rig: Rig, tmp_path: Path, sim_fixture: Callable[..., Path]) -> None:
    """A load switching every half second: no span up to a quarter of the record averages it
    out."""
    store = tmp_path / "cal"
    out = _rig("calibrate", "baseline", "--yes", "-f", str(sim_fixture(to="sim.toml", **{
        "sim.power.loads": [{"amplitude_a": 1.0e-3, "period_s": 1.0, "duty": 0.5}]})),
               store=store)
    _one_line_exit_2(out, store)
    assert "no idle span up to" in out.stderr and "not steady enough" in out.stderr
    bad = _rig("calibrate", "baseline", "--yes", "--precision", "fast", "-f",
               str(tmp_path / "sim.toml"), store=store)
    assert bad.returncode == 2 and "--precision" in bad.stderr


@bench
@pytest.mark.slow
def test_a_gain_far_off_a_calibrated_ppk2s_metadata_is_refused(
        _rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        sim_fixture: Callable[..., Path]) -> None:
    store = tmp_path / "cal"
    out = _rig("calibrate", "gain", "--yes", "-f",
               str(sim_fixture(to="sim.toml", **{"sim.power.gain_error": 0.1})), store=store)
    _one_line_exit_2(out, store)
    assert "says it is calibrated" in out.stderr and "broken unit" in out.stderr
    fixture = load_fixture(sim_fixture(to="warn/sim.toml", **{"sim.power.gain_error": 0.03}))
    monkeypatch.setenv("ENERGYRIG_CALIBRATION_DIR", str(store))
    with open_bench(fixture) as b:
        record, _ = calibrate(b, b.connect, ["gain"])
    assert record.values["gain"].value == pytest.approx(1.03, abs=3e-3)
    assert len(record.notes) == 1 and "which allows 2%" in record.notes[0]
    assert record.instrument_calibration == stated_calibration(DEFAULT_CALIBRATION).identity
    assert math.isfinite(record.values["offset_a"].value)
