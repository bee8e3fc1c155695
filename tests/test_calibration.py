"""Calibration records and their store.

What is checked: a record round-trips through the store; ``latest`` takes each quantity's
newest unexpired value of this instrument (a daily zero beside an older gain), ignores other
instruments and says what expired; a corrupt, foreign or expired record is one ConfigError
naming the file; the directory comes from the fixture or ``$ENERGYRIG_CALIBRATION_DIR``."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from energyrig.calibration.store import (CALIBRATION_DIR_ENV, CalibrationStore,
                                         Identity, calibration_dir, from_file, load_record,
                                         new_record, select)
from energyrig.errors import ConfigError
from energyrig.fixtures import load_fixture

SIM = Path(__file__).resolve().parents[1] / "fixtures" / "sim.toml"
PPK2 = Identity(kind="ppk2", name="PPK2 (HW 9173)", address="/dev/pts/3")
SCOPE = Identity(kind="scope", name="RIGOL TECHNOLOGIES,DS1104Z,DS1ZA000000000,00.04.04.SP4")
T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
HELLO = {"board": "host", "firmware": "energyrig-fw 0.4.0"}


def _value(value: float, u: float = 1e-9, method: str = "zero") -> dict[str, object]:
    return {"value": value, "u": u, "method": method, "reference": "input open",
            "residual_rms": 2e-7, "n": 1000}


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
                                            "skew_s": _value(2e-5)}, now=T0))
    store.save(new_record(fx, PPK2, HELLO, {"offset_a": _value(1e-6)},
                          now=T0 + timedelta(days=3)))
    store.save(new_record(fx, SCOPE, HELLO, {"gain": _value(0.5)},
                          now=T0 + timedelta(days=4)))
    cal = store.latest(PPK2, now=T0 + timedelta(days=3, hours=1))
    assert {q: v.value for q, v in cal.values.items()} == \
        {"offset_a": 1e-6, "gain": 1.02, "skew_s": 2e-5}
    assert cal.sources["offset_a"] == "20261126T120000Z-ppk2-offset_a"
    assert cal.complete and cal.problem() == ""
    assert cal.id == "20261123T120000Z-ppk2-gain+offset_a+skew_s+20261126T120000Z-ppk2-offset_a"

    later = store.latest(PPK2, now=T0 + timedelta(days=5))  # the daily zero has expired
    assert later.missing == ("offset_a",) and later.expired == ("offset_a",)
    assert "offset_a expired" in later.problem() and "rig calibrate zero" in later.problem()
    manifest = later.manifest()
    assert manifest["complete"] is False and manifest["missing"] == ["offset_a"]
    assert manifest["values"]["gain"]["record"].endswith("gain+offset_a+skew_s")

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


def test_the_store_is_the_fixtures_unless_the_environment_names_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fx = load_fixture(SIM)
    monkeypatch.delenv(CALIBRATION_DIR_ENV)
    assert calibration_dir(fx) == SIM.parent / "calibration"
    monkeypatch.setenv(CALIBRATION_DIR_ENV, str(tmp_path))
    assert calibration_dir(fx) == tmp_path
    none = select("none", fx, PPK2)
    assert none.values == {} and "--calibration none" in none.problem()
