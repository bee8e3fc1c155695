"""Bad input that used to give results stored ``ok`` (issue 20, items 7, 9 and 22).

- A calibration record is read with the plausibility limits the routines write it with
  (:data:`energyrig.calibration.quantities.LIMITS`, :meth:`Measured.implausible`): a skew of
  10 s, a gain of 1.5 or 1e-6, an uncertainty that says nothing or that its own readings'
  spread contradicts is one ``rig: error:`` line naming the file, the value and the limit
  (exit 2); a routine refuses to store such a value by the same check.
- A calibration directory that is a file, or cannot be read, is said to be so, not taken
  for an empty store ("no calibration records", "never calibrated").
- A window that fails an integrity check stays in ``windows.parquet`` (flagged) but out of
  its point's estimate: replacements are measured, and the point says how many windows were
  left out and why (``windows_excluded``, ``excluded_reason``).
"""
from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from energyrig.calibration.store import (CALIBRATION_DIR_ENV, CalibrationStore, Identity,
                                         Measured, RangeValue, calibration_dir, load_record,
                                         new_record, select)
from energyrig.cli.app import main
from energyrig.errors import CalibrationError, ConfigError
from energyrig.fixtures import load_fixture

ROOT = Path(__file__).resolve().parents[1]
SIM = ROOT / "fixtures" / "sim.toml"
PPK2 = Identity(kind="ppk2", name="PPK2 (HW 9173)", serial="C0FFEE")
HELLO = {"board": "host", "firmware": "energyrig-fw 0.4.0", "build": "g1234abc"}


def _rig(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``rig ARGV`` as the console script does: exit code, stdout, stderr."""
    capsys.readouterr()
    old, sys.argv = sys.argv, ["rig", *argv]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = old
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_error_line(code: int, err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("rig: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- item 7: calibration records are read with the limits they are written with -----------

def _good_values() -> dict[str, Measured]:
    """What ``rig calibrate all`` measures on the simulated bench (figures of a real run)."""
    return {
        "offset_a": Measured(value=-9.3e-09, u=2.1e-08, method="gain", residual_rms=7.5e-07,
                             n=242282, reference="intercept",
                             ranges={0: RangeValue(value=-2.1e-09, u=2.7e-08),
                                     1: RangeValue(value=8.0e-07, u=9.8e-07)}),
        "gain": Measured(value=1.00033, u=3.5e-4, method="gain", residual_rms=7.5e-07,
                         n=242282, reference="4 references",
                         ranges={0: RangeValue(value=1.0001, u=6.4e-4),
                                 1: RangeValue(value=0.99996, u=7.0e-4)}),
        "skew_s": Measured(value=2.0e-6, u=6.5e-07, method="skew", residual_rms=1.5e-6, n=20),
        "overhead_s": Measured(value=0.0, u=5.5e-07, method="overhead", n=28),
        "overhead_j": Measured(value=0.0, u=2.8e-08, method="overhead", n=28),
    }


def _store_record(directory: Path, edit: dict[str, dict[str, Any]] | None = None) -> Path:
    """A good record saved in ``directory``, with ``edit`` (quantity -> fields) written
    into its JSON as a hand or a damaged disk would."""
    record = new_record(load_fixture(SIM), PPK2, HELLO, _good_values(),  # type: ignore[arg-type]
                        now=datetime.now(UTC))
    path = CalibrationStore(directory).save(record)
    if edit:
        data = json.loads(path.read_text(encoding="utf-8"))
        for q, fields in edit.items():
            data["values"][q].update(fields)
        path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_good_record_loads(tmp_path: Path) -> None:
    path = _store_record(tmp_path)
    assert load_record(path).values["skew_s"].value == pytest.approx(2e-6)


# (case id, edit of the record's JSON, what the error line must say: field, value, limit)
IMPLAUSIBLE = [
    ("skew-10-s", {"skew_s": {"value": 10.0}},
     ["values.skew_s.value", "10 s", "-0.001 .. 0.001 s"]),
    ("gain-1.5", {"gain": {"value": 1.5}}, ["values.gain.value", "1.5", "0.8 .. 1.2"]),
    ("gain-1e-6", {"gain": {"value": 1e-6}}, ["values.gain.value", "1e-06", "0.8 .. 1.2"]),
    ("gain-of-a-range", {"gain": {"ranges": {"1": {"value": 1.5, "u": 1e-3}}}},
     ["values.gain.ranges.1.value", "in range 1", "1.5", "0.8 .. 1.2"]),
    ("overhead-negative", {"overhead_s": {"value": -1e-3}},
     ["values.overhead_s.value", "-0.001 s", "0 .. 0.01 s"]),
    ("gain-u-says-nothing", {"gain": {"u": 0.5}}, ["values.gain.u", "0.5", "0.8 .. 1.2"]),
    ("skew-u-below-its-readings", {"skew_s": {"u": 1e-9}},
     ["values.skew_s.u", "1e-09 s", "residual_rms 1.5e-06 s", "20 readings"]),
    ("skew-readings-wider-than-the-limit", {"skew_s": {"residual_rms": 5e-3, "n": 1000, "u": 4e-4}},
     ["values.skew_s.residual_rms", "0.005 s", "-0.001 .. 0.001 s"]),
]


@pytest.mark.parametrize(("edit", "expected"), [c[1:] for c in IMPLAUSIBLE],
                         ids=[c[0] for c in IMPLAUSIBLE])
def test_an_implausible_record_is_one_error_naming_the_file_value_and_limit(
        tmp_path: Path, edit: dict[str, dict[str, Any]], expected: list[str],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    path = _store_record(tmp_path / "cal", edit)
    before = path.read_bytes()
    monkeypatch.setenv(CALIBRATION_DIR_ENV, str(tmp_path / "cal"))
    code, _, err = _rig(["calibrate", "list", "-f", str(SIM)], capsys)
    line = _one_error_line(code, err)
    assert line.startswith(f"rig: error: {path}: "), line
    for words in expected:
        assert words in line, line
    assert path.read_bytes() == before
    # what a sweep or rig run selects ("latest") refuses it the same way
    with pytest.raises(ConfigError, match=expected[0].replace(".", r"\.")):
        select("latest", load_fixture(SIM), PPK2)


class _Instrument:
    def describe(self) -> Any:
        from energyrig.instruments.family import InstrumentInfo
        return InstrumentInfo(kind="ppk2", name=PPK2.name, address="", sample_rate_hz=1e5,
                              serial=PPK2.serial)


class _Bench:
    """What :func:`calibrate` asks of a bench before and after its routines."""

    fixture = load_fixture(SIM)
    hello = HELLO
    instrument = _Instrument()


def test_a_routine_refuses_to_store_what_the_store_would_refuse_to_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from energyrig.calibration import routines

    monkeypatch.setenv(CALIBRATION_DIR_ENV, str(tmp_path / "cal"))
    monkeypatch.setattr(routines, "skew", lambda bench, connect: Measured(
        value=2e-6, u=1e-9, method="skew", residual_rms=1.5e-6, n=20))
    with pytest.raises(CalibrationError, match=r"skew: skew_s u: 1e-09 s is less than the "
                                               r"spread of the 20 readings.*Nothing stored"):
        routines.calibrate(_Bench(), lambda *a, **k: None, ["skew"])  # type: ignore[arg-type]
    assert not (tmp_path / "cal").exists()


# -- item 22: a calibration directory that is not a folder --------------------------------

def test_a_calibration_dir_env_naming_a_file_is_said_to_be_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "cal.json"
    file.write_text("{}", encoding="utf-8")
    monkeypatch.setenv(CALIBRATION_DIR_ENV, str(file))
    code, out, err = _rig(["calibrate", "list", "-f", str(SIM)], capsys)
    line = _one_error_line(code, err)
    assert line == (f"rig: error: {file}: ${CALIBRATION_DIR_ENV}: is not a folder: point it "
                    "at the folder of calibration records"), line
    assert "no calibration records" not in out
    # a sweep or rig run selects "latest": the same error, not "never calibrated"
    with pytest.raises(ConfigError, match="is not a folder"):
        select("latest", load_fixture(SIM), PPK2)


def test_a_fixtures_calibration_dir_that_is_a_file_names_the_fixture_and_field(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CALIBRATION_DIR_ENV)
    text = SIM.read_text(encoding="utf-8").replace('dir = "calibration"', 'dir = "records"')
    (tmp_path / "bench.toml").write_text(text, encoding="utf-8")
    (tmp_path / "records").write_text("not a folder", encoding="utf-8")
    fixture = load_fixture(tmp_path / "bench.toml")
    with pytest.raises(ConfigError) as caught:
        calibration_dir(fixture)
    assert str(caught.value) == (f"{tmp_path / 'bench.toml'}: calibration.dir: "
                                 f"{tmp_path / 'records'} is not a folder: name the folder of "
                                 "calibration records")


def test_a_calibration_dir_that_cannot_be_read_is_an_error_not_an_empty_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cal").mkdir()
    real_scandir = os.scandir

    def denied(path: Any) -> Any:
        if Path(path) == tmp_path / "cal":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", denied)  # the tests may run as root
    with pytest.raises(ConfigError) as caught:
        CalibrationStore(tmp_path / "cal").records()
    assert str(caught.value) == (f"{tmp_path / 'cal'}: cannot read the folder of calibration "
                                 "records (Permission denied): check its permissions")


def test_a_store_not_made_yet_is_empty(tmp_path: Path) -> None:
    assert CalibrationStore(tmp_path / "not-yet").records() == []
