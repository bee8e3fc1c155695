"""Calibration records, their store, and the correction built from them.

What is checked: a record round-trips through the store; ``latest`` takes each quantity's
newest unexpired value of this instrument (a daily zero beside an older gain), ignores other
instruments and says what expired; a corrupt, foreign or expired record is one ConfigError
naming the file; the directory comes from the fixture or ``$ENERGYRIG_CALIBRATION_DIR``. The
correction gives back the energy of a fault-free record from one with a known offset, gain
and skew (known answer), whatever the chunking, and records what it applied. The uncertainty
budget's components are their closed forms, and unknown without a calibration."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from support.paths import SIM

from energyrig.energy.budget import combined, energy_budget, time_budget
from energyrig.calibration.correction import CurrentCorrection
from energyrig.calibration.store import (CALIBRATION_DIR_ENV, Calibration, CalibrationStore,
                                         Identity, Measured, build_of, calibration_dir,
                                         from_file, load_record, new_record, select)
from energyrig.capture import Chunk
from energyrig.domain import Window
from energyrig.errors import ConfigError
from energyrig.fixtures import load_fixture
from energyrig.flags import UNCALIBRATED
from energyrig.instruments.base import RecordedCapture
from energyrig.energy.windows import WindowSettings, find_windows

PPK2 = Identity(kind="ppk2", name="PPK2 (HW 9173)", address="/dev/pts/3")
SCOPE = Identity(kind="scope", name="RIGOL TECHNOLOGIES,DS1104Z,DS1ZA000000000,00.04.04.SP4")
T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
HELLO = {"board": "host", "firmware": "energyrig-fw 0.4.0", "build": "g1234abc"}
BUILD = build_of(HELLO)


def _value(value: float, u: float = 1e-8, method: str = "zero") -> Measured:
    # u at least what 1000 readings of rms 2e-7 leave in their mean (a record whose u its
    # own residual contradicts is refused)
    return Measured(value=value, u=u, method=method, reference="input open", residual_rms=2e-7,
                    n=1000)


@pytest.fixture
def store(tmp_path: Path) -> CalibrationStore:
    return CalibrationStore(tmp_path / "cal")


def test_a_record_round_trips_with_units_and_expiry_from_the_fixture(
        store: CalibrationStore) -> None:
    fx = load_fixture(SIM)
    record = new_record(fx, PPK2, HELLO, {"offset_a": _value(1.2e-6),
                                          "gain": _value(1.01, 1e-4, "gain")}, now=T0)
    path = store.save(record)
    assert path.name == f"{record.id}.json" and record.id == "20261123T120000Z-ppk2-gain+offset_a"
    back = load_record(path)
    assert back == record
    assert (back.fixture, back.board, back.firmware) == ("sim", "host", "energyrig-fw 0.4.0")
    assert back.values["offset_a"].unit == "A" and back.values["gain"].unit == "1"
    assert back.values["offset_a"].expires_utc == T0 + timedelta(days=1)
    assert back.values["gain"].expires_utc == T0 + timedelta(days=90)
    assert back.software.startswith("energyrig ") and "@" in back.operator


def test_latest_combines_each_quantitys_newest_valid_value(store: CalibrationStore) -> None:
    fx = load_fixture(SIM)
    store.save(new_record(fx, PPK2, HELLO, {"offset_a": _value(9e-6), "gain": _value(1.02),
                                            "skew_s": _value(2e-5), "overhead_s": _value(3e-5),
                                            "overhead_j": _value(2e-7)}, now=T0))
    store.save(new_record(fx, PPK2, HELLO, {"offset_a": _value(1e-6)},
                          now=T0 + timedelta(days=3)))
    store.save(new_record(fx, SCOPE, HELLO, {"gain": _value(0.95)},
                          now=T0 + timedelta(days=4)))
    # Another firmware build's overhead, newer: it does not apply to this build.
    store.save(new_record(fx, PPK2, {**HELLO, "build": "g999"}, {"overhead_s": _value(5e-3),
                                                                  "overhead_j": _value(1e-6)},
                          now=T0 + timedelta(days=3)))
    cal = store.latest(PPK2, now=T0 + timedelta(days=3, hours=1), build=BUILD)
    assert {q: v.value for q, v in cal.values.items()} == \
        {"offset_a": 1e-6, "gain": 1.02, "skew_s": 2e-5, "overhead_s": 3e-5, "overhead_j": 2e-7}
    assert cal.sources["offset_a"] == "20261126T120000Z-ppk2-offset_a"
    assert cal.complete and cal.problem() == ""
    assert cal.id == ("20261123T120000Z-ppk2-gain+offset_a+overhead_j+overhead_s+skew_s+"
                      "20261126T120000Z-ppk2-offset_a")
    unknown = store.latest(PPK2, now=T0 + timedelta(days=3, hours=1))  # firmware not known
    assert unknown.missing == ("overhead_s", "overhead_j")
    assert "rig calibrate overhead" in unknown.problem()

    later = store.latest(PPK2, now=T0 + timedelta(days=5), build=BUILD)  # the zero expired
    assert later.missing == ("offset_a",) and later.expired == ("offset_a",)
    assert "offset_a expired" in later.problem() and "rig calibrate zero" in later.problem()
    manifest = later.manifest()
    assert manifest["complete"] is False and manifest["missing"] == ["offset_a"]
    assert manifest["values"]["gain"]["record"].endswith("offset_a+overhead_j+overhead_s+skew_s")

    nothing = store.latest(Identity(kind="ppk2", name="PPK2 (HW 1)"), now=T0)
    assert nothing.values == {} and "never calibrated" in nothing.problem()


def test_a_corrupt_record_in_the_store_is_one_error_naming_it(store: CalibrationStore) -> None:
    store.directory.mkdir(parents=True)
    bad = store.directory / "broken.json"
    bad.write_text('{"format": 1, "id": ')
    with pytest.raises(ConfigError, match=r"broken\.json: corrupt calibration record"):
        store.latest(PPK2)
    bad.write_text('{"format": 1, "id": "x", "instrument": {"kind": "ppk2", "name": "p"}}')
    with pytest.raises(ConfigError, match=r"broken\.json: fixture: required field"):
        store.records()


def test_a_gain_that_is_not_positive_is_refused(store: CalibrationStore) -> None:
    with pytest.raises(ValueError, match="gain must be > 0"):
        new_record(load_fixture(SIM), PPK2, HELLO, {"gain": _value(0.0)}, now=T0)


def test_a_named_record_must_be_for_this_instrument_and_unexpired(
        store: CalibrationStore) -> None:
    fx = load_fixture(SIM)
    path = store.save(new_record(fx, PPK2, HELLO, {"offset_a": _value(1e-6)}, now=T0))
    cal = from_file(path, PPK2, now=T0 + timedelta(hours=1))
    assert cal.values["offset_a"].value == 1e-6 and cal.origin == f"file {path}"
    assert not cal.complete  # gain and skew are missing
    with pytest.raises(ConfigError, match=r"\.json: instrument: is for ppk2 .* not for this "
                                          r"bench's scope"):
        from_file(path, SCOPE, now=T0)
    with pytest.raises(ConfigError, match=r"values\.offset_a: expired on 2026-11-24 12:00 UTC "
                                          r"\(run `rig calibrate zero`\)"):
        from_file(path, PPK2, now=T0 + timedelta(days=2))
    with pytest.raises(ConfigError, match="no such calibration file"):
        from_file(path.with_name("gone.json"), PPK2)
    other = store.save(new_record(fx, PPK2, {**HELLO, "build": "g999"},
                                  {"overhead_s": _value(1e-5), "overhead_j": _value(1e-7)},
                                  now=T0))
    with pytest.raises(ConfigError, match=r"firmware: its overhead_s, overhead_j measured on "
                                          r"host firmware energyrig-fw 0.4.0 \(g999\), not on "
                                          r"this bench's"):
        from_file(other, PPK2, now=T0, build=BUILD)


def test_the_store_is_the_fixtures_unless_the_environment_names_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fx = load_fixture(SIM)
    monkeypatch.delenv(CALIBRATION_DIR_ENV)
    assert calibration_dir(fx) == SIM.parent / "calibration"
    monkeypatch.setenv(CALIBRATION_DIR_ENV, str(tmp_path))
    assert calibration_dir(fx) == tmp_path
    none = select("none", fx, PPK2)
    assert none.values == {} and "--calibration none" in none.problem()


# -- the correction ---------------------------------------------------------------------------

RATE_HZ = 100e3
PERIOD_S = 1 / RATE_HZ
SUPPLY_V = 3.0


def _current(t_s: np.ndarray) -> np.ndarray:
    """A board's current: 1 mA idle, a 10 mA window from 20 to 70 ms with a 50 Hz ripple."""
    window = (t_s >= 20e-3) & (t_s < 70e-3)
    return np.where(window, 10e-3 + 1e-3 * np.sin(2 * np.pi * 50 * t_s), 1e-3)


def _record(offset_a: float = 0.0, gain: float = 1.0, skew_s: float = 0.0,
            sizes: tuple[int, ...] = (10_000,)) -> RecordedCapture:
    """The board read through an instrument with these faults, in chunks of ``sizes``."""
    t = np.arange(sum(sizes)) * PERIOD_S
    logic = ((t >= 20e-3) & (t < 70e-3)).astype(np.uint8)
    current = gain * _current(t - skew_s) + offset_a
    bounds = np.cumsum((0, *sizes))
    chunks = tuple(Chunk(int(a), PERIOD_S, current[a:b], SUPPLY_V, logic[a:b])
                   for a, b in zip(bounds[:-1], bounds[1:]))
    return RecordedCapture("synthetic", chunks)


def _net_j(record: RecordedCapture) -> float:
    (window,) = find_windows(record, WindowSettings())
    return window.net_energy_j


def _fault_free_net_j() -> float:
    return _net_j(_record())


def test_the_correction_gives_back_the_energy_of_a_fault_free_record() -> None:
    truth = _fault_free_net_j()
    faulty = _record(offset_a=50e-6, gain=1.03, skew_s=40e-6)
    assert abs(_net_j(faulty) / truth - 1) > 0.02  # what the faults do uncorrected
    fixed = CurrentCorrection(offset_a=50e-6, gain=1.03, skew_s=40e-6)(faulty)
    assert _net_j(fixed) == pytest.approx(truth, rel=1e-12)  # a whole-sample skew: exact
    leading = CurrentCorrection(offset_a=-30e-6, gain=0.98, skew_s=-25e-6)
    assert _net_j(leading(_record(offset_a=-30e-6, gain=0.98, skew_s=-25e-6))) == \
        pytest.approx(truth, rel=2e-4)  # a fractional skew: interpolated


def test_the_correction_is_the_same_chunk_by_chunk() -> None:
    whole = _record(skew_s=37e-6)
    split = _record(skew_s=37e-6, sizes=(1, 2, 997, 3, 0, 4000, 1, 4996))
    for shift in (3.7, -3.7, 0.5, 12.0):
        correction = CurrentCorrection(offset_a=1e-6, gain=1.01, skew_s=shift * PERIOD_S)
        (one,) = correction(whole).chunk_list
        many = list(correction.chunks(iter(split.chunk_list)))  # streamed as a file is
        assert [len(c) for c in many] == [len(c) for c in split.chunk_list]
        np.testing.assert_allclose(np.concatenate([c.current_a for c in many]), one.current_a,
                                   rtol=1e-15, atol=0)


def test_the_corrected_record_carries_the_values_and_the_flag() -> None:
    record = CurrentCorrection(offset_a=1e-6, gain=1.01, skew_s=0.0,
                               flags=(UNCALIBRATED,))(_record())
    assert record.corrections == (("offset_a", 1e-6), ("gain", 1.01), ("skew_s", 0.0),
                                  ("overhead_s", 0.0), ("overhead_j", 0.0))
    assert record.flags == (UNCALIBRATED,)
    (window,) = find_windows(record, WindowSettings())
    assert window.samples == 5000


def test_a_correction_of_an_incomplete_calibration_applies_what_it_has() -> None:
    gain = new_record(load_fixture(SIM), PPK2, HELLO, {"gain": _value(1.02)}, now=T0)
    cal = Calibration(PPK2, {"gain": gain.values["gain"]}, {"gain": gain.id}, "store x")
    correction = CurrentCorrection.of(cal)
    assert (correction.offset_a, correction.gain, correction.skew_s) == (0.0, 1.02, 0.0)
    assert correction.flags == (UNCALIBRATED,)
    with pytest.raises(ValueError, match="finite gain > 0"):
        CurrentCorrection(gain=0.0)



# -- the uncertainty budget of a point ----------------------------------------------------------
# (a window's budget: tests/energy/test_uncertainty.py)

def _window(net_j: float, duration_s: float = 0.05, gain_u_j: float = 1e-7) -> Window:
    """A window of 5000 samples, 1 mW idle, whose net energy is ``net_j``."""
    return Window(0.0, duration_s, 5000, net_j + 1e-3 * duration_s, 1e-3,
                  uncertainty=(("edge quantisation", 5e-9), ("ADC resolution", 1e-9),
                               ("gain calibration", gain_u_j), ("skew calibration", 2e-9),
                               ("window overhead", 4e-7), ("offset calibration", 0.0),
                               ("supply voltage", 3e-7)))


CALIBRATED = {"id": "r1", "values": {"overhead_s": {"value": 2e-4, "u": 2e-5}}}


def test_the_point_budget_is_repeatability_and_the_windows_systematic_components() -> None:
    windows = [_window(j, gain_u_j=g) for j, g in ((1.0e-4, 1e-7), (1.1e-4, 1.1e-7),
                                                   (0.9e-4, 0.9e-7), (1.0e-4, 1e-7))]
    budget = {c.name: c for c in energy_budget(windows, 10)}
    per_op = np.array([1.0e-5, 1.1e-5, 0.9e-5, 1.0e-5])
    assert budget["repeatability"].type == "A"
    assert budget["repeatability"].u == pytest.approx(per_op.std(ddof=1) / 2)
    # edge quantisation changes from window to window: it is in the repeatability already
    assert "edge quantisation" not in budget
    assert budget["gain calibration"].u == pytest.approx(1e-8)  # mean per op, not / sqrt(n)
    assert budget["skew calibration"].u == pytest.approx(2e-10)
    assert budget["ADC resolution"].u == pytest.approx(1e-10)
    assert budget["window overhead"].u == pytest.approx(4e-8)  # the same in each window
    assert budget["supply voltage"].u == pytest.approx(3e-8)
    total = combined(list(budget.values()))
    assert total == pytest.approx(np.sqrt(sum(c.u ** 2 for c in budget.values())))
    (rep, edge, overhead) = time_budget(windows, 10, CALIBRATED)
    assert rep.u == 0.0 and edge.u == pytest.approx(1e-5 / np.sqrt(6) / 10 / 2)
    assert overhead.u == pytest.approx(2e-5 / 10)


def test_without_a_windows_budget_the_uncertainty_is_unknown() -> None:
    budget = energy_budget([Window(0.0, 0.05, 5000, 1e-4, 1e-3)] * 2, 10)
    assert np.isnan(combined(budget))
    assert [c.as_dict("j")["u_j"] for c in budget][1:] == [None] * 6


def test_a_serial_number_tells_units_of_one_name_apart_and_old_records_match_by_name(
        store: CalibrationStore, caplog: pytest.LogCaptureFixture) -> None:
    """Every PPK2 of a revision is 'PPK2 (HW 9173)': with serial numbers on both sides they
    decide; a record written before serials were recorded still applies, by name, with a
    note; a serial-less bench takes a record with one by name."""
    fx = load_fixture(SIM)
    unit_a, unit_b = PPK2.model_copy(update={"serial": "A1"}), PPK2.model_copy(
        update={"serial": "B2"})
    assert unit_a.match(unit_a) == "serial" and unit_a.match(unit_b) is None
    assert PPK2.match(unit_a) == "name" and unit_a.match(PPK2) == "name"
    assert unit_a.match(SCOPE.model_copy(update={"serial": "A1"})) is None  # kind first
    assert unit_a.label == "ppk2 'PPK2 (HW 9173)' serial A1" and PPK2.key == ("ppk2", PPK2.name)

    store.save(new_record(fx, unit_b, HELLO, {"gain": _value(1.02, 1e-4, "gain")}, now=T0))
    old = store.save(new_record(fx, PPK2, HELLO, {"offset_a": _value(1e-6)}, now=T0))
    assert load_record(old).instrument.serial == ""  # as records before serials
    cal = store.latest(unit_a, now=T0 + timedelta(hours=1))
    assert set(cal.values) == {"offset_a"} and "gain" in cal.missing  # B2's gain is not A1's
    assert cal.notes == ((f"{load_record(old).id}: recorded without the instrument's serial "
                          "number; taken for ppk2 'PPK2 (HW 9173)' serial A1 by its name"),)
    assert cal.notes[0] in caplog.text and cal.manifest()["notes"] == list(cal.notes)
    assert from_file(old, unit_a, now=T0).notes == cal.notes
    with pytest.raises(ConfigError, match="serial B2, not for this bench's .* serial A1"):
        from_file(store.directory / f"{store.records()[0][1].id}.json", unit_a, now=T0)
    assert set(store.latest(PPK2, now=T0 + timedelta(hours=1)).values) == {"offset_a", "gain"}


def test_the_baselines_advice_is_never_missing(store: CalibrationStore) -> None:
    """The baseline routine advises the fixture's spans; it corrects nothing, so a
    calibration is complete without it and shows it when it is there."""
    fx = load_fixture(SIM)
    values = {q: _value(v, 1e-9, "test") for q, v in (
        ("offset_a", 0.0), ("gain", 1.0), ("skew_s", 0.0), ("overhead_s", 0.0),
        ("overhead_j", 0.0))}
    store.save(new_record(fx, PPK2, HELLO, values, now=T0))
    cal = store.latest(PPK2, now=T0, build=BUILD)
    assert cal.complete and "baseline_s" not in cal.missing
    store.save(new_record(fx, PPK2, HELLO, {"baseline_s": _value(0.2, 0.01, "baseline")},
                          now=T0 + timedelta(seconds=1)))
    later = store.latest(PPK2, now=T0 + timedelta(days=29), build=BUILD)
    assert later.values["baseline_s"].unit == "s" and later.complete is False  # offset: 1 day
    assert later.missing == ("offset_a",)
    assert "baseline_s" not in store.latest(PPK2, now=T0, build="another build").values
