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

import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.paths import ROOT
from support.bad_input import run_rig

from energyrig.calibration.store import (CALIBRATION_DIR_ENV, CalibrationStore, Identity,
                                         Measured, RangeValue, calibration_dir, load_record,
                                         new_record, select)
from energyrig.domain import Point, Window
from energyrig.errors import CalibrationError, ConfigError
from energyrig.fixtures import load_fixture
from energyrig.rig.pipeline import PointResult, measure_point, reps_done

SIM = ROOT / "fixtures" / "sim.toml"
PPK2 = Identity(kind="ppk2", name="PPK2 (HW 9173)", serial="C0FFEE")
HELLO = {"board": "host", "firmware": "energyrig-fw 0.4.0", "build": "g1234abc"}


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
    code, err = run_rig(["calibrate", "list", "-f", str(SIM)], capsys, tmp_path)
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
        from energyrig.instruments.base import InstrumentInfo
        return InstrumentInfo(kind="ppk2", name=PPK2.name, address="", sample_rate_hz=1e5,
                              serial=PPK2.serial)


class _CalibrationBench:
    """What :func:`calibrate` asks of a bench before and after its routines."""

    fixture = load_fixture(SIM)
    hello = HELLO
    instrument = _Instrument()


def test_a_routine_refuses_to_store_what_the_store_would_refuse_to_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from energyrig.calibration.routines import calibrate as routines

    monkeypatch.setenv(CALIBRATION_DIR_ENV, str(tmp_path / "cal"))
    monkeypatch.setattr(routines, "skew", lambda bench, connect: Measured(
        value=2e-6, u=1e-9, method="skew", residual_rms=1.5e-6, n=20))
    with pytest.raises(CalibrationError, match=r"skew: skew_s u: 1e-09 s is less than the "
                                               r"spread of the 20 readings.*Nothing stored"):
        routines.calibrate(_CalibrationBench(), lambda *a, **k: None, ["skew"])  # type: ignore[arg-type]
    assert not (tmp_path / "cal").exists()


# -- item 22: a calibration directory that is not a folder --------------------------------

def test_a_calibration_dir_env_naming_a_file_is_said_to_be_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "cal.json"
    file.write_text("{}", encoding="utf-8")
    monkeypatch.setenv(CALIBRATION_DIR_ENV, str(file))
    code, err = run_rig(["calibrate", "list", "-f", str(SIM)], capsys, tmp_path)
    line = _one_error_line(code, err)
    assert line == (f"rig: error: {file}: ${CALIBRATION_DIR_ENV}: is not a folder: point it "
                    "at the folder of calibration records"), line
    # a sweep or rig run selects "latest": the same error, not "never calibrated"
    with pytest.raises(ConfigError, match="is not a folder"):
        select("latest", load_fixture(SIM), PPK2)


def test_a_fixtures_calibration_dir_that_is_a_file_names_the_fixture_and_field(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sim_fixture: Callable[..., Path]) -> None:
    monkeypatch.delenv(CALIBRATION_DIR_ENV)
    sim_fixture(**{"calibration.dir": "records"})
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


# -- item 9: windows that fail an integrity check stay out of the point's estimate ----------

TRUE_J = 1e-6                           # per op, the clean windows' energy
CORRUPT_J = 1.4 * TRUE_J                # a corrupt word read as current: +40 %
POINT = Point(op="md5", board="bench", payload_bytes=256)


@dataclass
class _Prepared:
    """A prepared point whose windows follow ``script``: each window's flags (a corrupt
    window reads :data:`CORRUPT_J` per op, a clean one :data:`TRUE_J`), the last repeated."""

    script: list[tuple[str, ...]]
    point: Point = POINT
    batch_n: int = 10
    n: int = 0
    prep: Mapping[str, Any] = field(default_factory=dict)
    kept: tuple[Any, ...] = ()

    def first_windows(self) -> tuple[()]:
        return ()  # the batch is given: no sizing window

    def window(self) -> Window:
        flags = self.script[min(self.n, len(self.script) - 1)]
        self.n += 1
        per_op = CORRUPT_J if flags else TRUE_J * (1 + 1e-3 * self.n)
        return Window(start_s=float(self.n), end_s=self.n + 0.01, samples=1000,
                      energy_j=per_op * self.batch_n, baseline_w=0.0, cycles=1000,
                      flags=flags)


@dataclass
class _Bench:
    """A :class:`~energyrig.rig.pipeline.PointBench` of scripted windows."""

    script: list[tuple[str, ...]]
    board: str = "bench"
    hello: Mapping[str, Any] = field(default_factory=lambda: {"cycle_hz": 1000})
    calibration: Mapping[str, Any] | None = None
    prepared: _Prepared | None = None

    def ops(self) -> Sequence[Any]:
        return ()

    def point_flags(self) -> list[str]:
        return []

    def prepare(self, point: Point, **kw: Any) -> _Prepared:
        self.prepared = _Prepared(self.script)
        return self.prepared


CLEAN: tuple[str, ...] = ()
CORRUPT = ("corrupt_samples",)


def _clean_mean(result: PointResult) -> float:
    return sum(w.net_energy_j for w in result.windows if not w.flags) / \
        sum(1 for w in result.windows if not w.flags) / result.batch_n


def test_a_corrupt_window_is_replaced_and_left_out_of_the_estimate() -> None:
    bench = _Bench([CLEAN, CORRUPT, CLEAN, ("corrupt_samples", "stream_loss"), CLEAN])
    result = measure_point(bench, POINT, until=reps_done(3))
    assert result.status == "ok", result.reason
    assert len(result.windows) == 5 and len(result.estimate) == 3  # two replacements
    assert result.excluded == (2, "corrupt_samples 2, stream_loss 1")
    fig = result.figures()
    assert fig["reps"] == 3 and fig["windows_excluded"] == 2
    assert fig["excluded_reason"] == "corrupt_samples 2, stream_loss 1"
    assert fig["net_energy_per_op_j"] == pytest.approx(_clean_mean(result), rel=1e-12)
    assert len(fig["windows"]) == 5  # every window measured is listed, with its flags
    # rig run shows it
    from rich.console import Console

    from energyrig.cli.run import result_table
    console = Console(record=True, width=200, file=io.StringIO())
    console.print(result_table(fig))
    shown = console.export_text()
    assert "windows left out" in shown
    assert "2 (failed the stream's integrity checks: corrupt_samples 2, stream_loss 1)" in shown


def test_a_stream_broken_throughout_fails_the_point_after_as_many_replacements() -> None:
    bench = _Bench([CORRUPT])
    result = measure_point(bench, POINT, until=reps_done(3))
    assert result.status == "failed"
    assert result.reason == ("6 of 6 windows failed the stream's integrity checks "
                             "(corrupt_samples 6): the instrument's stream is corrupt or lossy")
    assert result.estimate == ()


def test_the_store_and_the_report_leave_out_the_same_windows(tmp_path: Path) -> None:
    from energyrig.results import RunWriter, load
    from energyrig.results.report.tables import summarise_workloads

    result = measure_point(_Bench([CORRUPT, CLEAN, CLEAN, CORRUPT, CLEAN]), POINT,
                           until=reps_done(3))
    assert result.ok
    with RunWriter.create(tmp_path / "run") as writer:
        writer.write_point(result.point, result.windows, batch_n=result.batch_n,
                           uncertainty=result.uncertainty())
    run = load(tmp_path / "run")
    (point,) = run.points.itertuples()
    assert (point.n_windows, point.windows_excluded) == (5, 2)
    assert point.excluded_reason == "corrupt_samples 2"
    assert point.net_energy_per_op_j_mean == pytest.approx(_clean_mean(result), rel=1e-12)
    assert point.net_energy_per_op_j_mean == pytest.approx(
        result.figures()["net_energy_per_op_j"], rel=1e-12)
    # the windows stay in windows.parquet, flagged
    assert list(run.windows["flag_list"]) == [["corrupt_samples"], [], [], ["corrupt_samples"], []]
    (workload,) = summarise_workloads(run.windows.assign(family="hash")).itertuples()
    assert (workload.n_windows, workload.windows_excluded) == (3, 2)
    assert workload.net_energy_per_op_j_mean == pytest.approx(point.net_energy_per_op_j_mean,
                                                              rel=1e-12)


def test_the_sweeps_rule_replaces_left_out_windows_within_max_windows(tmp_path: Path) -> None:
    from energyrig.rig.plan import load_plan
    from energyrig.rig.sweep.stopping import enough_windows, target_met

    (tmp_path / "plan.toml").write_text(
        "seed = 1\n[adaptive]\nmin_windows = 3\nmax_windows = 5\nci_target = 0.5\n"
        '[[factors]]\nop = ["md5"]\npayload_bytes = [256]\n', encoding="utf-8")
    plan = load_plan(tmp_path / "plan.toml")
    result = measure_point(_Bench([CORRUPT, CLEAN, CORRUPT, CLEAN, CLEAN]), POINT,
                           until=lambda windows: enough_windows(windows, plan))
    assert len(result.windows) == 5 and len(result.estimate) == 3 and result.ok
    assert target_met(result.windows, plan)
    # max_windows bounds the windows measured, those left out too
    capped = measure_point(_Bench([CORRUPT, CORRUPT, CLEAN]), POINT,
                           until=lambda windows: enough_windows(windows, plan))
    assert len(capped.windows) == 5 and len(capped.estimate) == 3 and capped.ok
    assert not target_met([w for w in capped.windows if w.flags][:1] * 2, plan)


DUT = ROOT / "build" / "host" / "energyrig-dut"


@pytest.mark.skipif(not DUT.exists(), reason="host DUT not built (make firmware-host)")
@pytest.mark.slow
def test_on_the_simulated_bench_corrupt_windows_are_left_out_of_the_point() -> None:
    """The issue's case: the emulated PPK2 corrupts 5e-5 of its bytes; md5 of 256 B. Whatever
    the stream did this time, the point's figures rest only on the windows without an
    integrity flag, and it says how many it left out."""
    from energyrig.rig.bench import open_bench

    fx = load_fixture(SIM)
    assert fx.sim is not None
    power = fx.sim.power.model_copy(update={"corrupt_rate": 5e-5})
    fx = fx.model_copy(update={"sim": fx.sim.model_copy(update={"power": power})})
    with open_bench(fx) as bench:
        result = measure_point(bench, Point(op="md5", board=bench.board, payload_bytes=256),
                               until=reps_done(4))
    left_out = [w for w in result.windows if {"corrupt_samples", "stream_loss",
                                              "baseline_clipped"} & set(w.flags)]
    fig = result.figures()
    assert fig["windows_excluded"] == len(left_out)
    assert len(result.estimate) + len(left_out) == len(result.windows) <= 8
    if result.ok:
        assert len(result.estimate) == 4
        truth = sum(w.true_net_energy_j for w in result.estimate) / 4 / result.batch_n
        assert fig["net_energy_per_op_j"] == pytest.approx(truth, rel=5e-3)
    else:
        assert len(left_out) > len(result.windows) / 2
        assert "integrity checks" in result.reason
