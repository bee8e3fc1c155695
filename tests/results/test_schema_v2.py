"""The results schema, version 2 (docs/results.md): typed columns that pandas does not
shadow, the version in the manifest, and the reader of version 1 runs (issue 23 item 3)."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.paths import DATA
from support.synthetic import BOARDS, OPS, PAYLOADS, make_run

from energyrig.domain import Point, Window
from energyrig.results.report import write_report
from energyrig.results.report.sections import report_tables
from energyrig.results.store.layout import POINT_SCHEMA, WINDOW_SCHEMA, RunError
from energyrig.results.store.read import load, load_many
from energyrig.results.store.schema import (POINT_COMPONENTS, SCHEMA_VERSION, budget_struct,
                                            corrections_struct, field_name,
                                            uncertainty_struct)
from energyrig.results.store.write import RunWriter
from energyrig.rig.analysis import Analysis
from energyrig.rig.flags import FLAGS

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")

SHADOWED = set(dir(pd.DataFrame))
BUDGET = [{"component": c, "type": "A" if c == "repeatability" else "B", "u_j": k / 1e9,
           "source": f"source of {c}"} for k, c in enumerate(POINT_COMPONENTS, 1)]
CORRECTIONS = (("offset_a", 1e-6), ("gain", 1.01), ("skew_s", 2e-5), ("overhead_s", 1e-5),
               ("overhead_j", 1e-8), ("gain[0]", 1.02), ("gain[1]", 0.98))


def _window_flags(point: Point, k: int) -> tuple[str, ...]:
    return ("glitch", "uncalibrated") if k == 0 else ()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run(tmp_path_factory.mktemp("runs") / "v2", boards=BOARDS[:1], reps=2,
                   n_windows=3, payloads=PAYLOADS[:2],
                   window_flags=_window_flags,
                   point_flags=lambda p: ("ci_target_not_met",) if p.rep == 1 else (),
                   uncertainty={"net_energy_per_op_u_j": 5e-9, "time_per_op_u_s": 1e-6,
                                "uncertainty_budget": BUDGET}, finish=False)
    with RunWriter.resume(run) as writer:
        writer.write_point(Point(op="sha256", family="hash", board="b", payload_bytes=8),
                           [Window(0.0, 1e-3, 100, 2e-6, 1e-3, corrections=CORRECTIONS,
                                   uncertainty=(("edge quantisation", 1e-9),
                                                ("ADC resolution", 2e-10)))], batch_n=10)
    return run


@pytest.fixture
def v1_run(tmp_path: Path) -> Path:
    """The version 1 run of tests/data (tests/data/make_v1_run.py says how it was made)."""
    return Path(shutil.copytree(DATA / "v1-run", tmp_path / "v1-run"))


def test_no_column_of_any_table_is_shadowed_by_pandas(run_dir: Path) -> None:
    run = load(run_dir)
    assert not SHADOWED & {*WINDOW_SCHEMA.names, *POINT_SCHEMA.names}
    assert not SHADOWED & {*run.points.columns, *run.windows.columns}
    both = load_many([run_dir, run_dir])
    assert not SHADOWED & {*both.points.columns, *both.windows.columns}
    tables = report_tables(run, FLAGS)
    frames = {"points": tables.points, "windows": tables.windows, "summary": tables.summary,
              **{k: v for k, v in tables.parts.items() if isinstance(v, pd.DataFrame)}}
    assert len(frames) > 5
    for name, frame in frames.items():
        assert not SHADOWED & set(frame.columns), name
    window = Window(0.0, 1.0, 100, 2.0, 0.5, flags=("glitch",))
    assert not SHADOWED & set(Analysis("x.csv", (window,), (), ()).frame().columns)
    # and the attribute is the column: no pandas object behind a column's name
    assert run.points.flag_list.tolist() == run.points["flag_list"].tolist()


def test_flag_list_is_a_list_of_names_in_the_file_and_once_loaded(run_dir: Path) -> None:
    for table in ("points.parquet", "windows.parquet"):
        schema = pq.read_schema(next((run_dir / table).glob("seg-*.parquet")))
        assert schema.field("flag_list").type == pa.list_(pa.string())
        assert "flags" not in schema.names
    run = load(run_dir)
    assert run.manifest["schema_version"] == SCHEMA_VERSION == 2
    assert all(type(f) is list for f in (*run.points.flag_list, *run.windows.flag_list))
    assert all(type(name) is str for f in run.points.flag_list for name in f)
    second = run.points[(run.points.rep == 1) & (run.points.status == "ok")].flag_list
    assert len(second) and all(f == ["ci_target_not_met", "glitch", "uncalibrated"]
                               for f in second)
    shapes = {tuple(f) for f in run.windows.flag_list}
    assert shapes == {(), ("glitch", "uncalibrated")}


def test_budget_corrections_and_uncertainty_are_structs_with_named_fields(
        run_dir: Path) -> None:
    points = pq.read_schema(next((run_dir / "points.parquet").glob("seg-*.parquet")))
    budget = points.field("uncertainty_budget").type
    assert pa.types.is_struct(budget)
    assert budget.names == [field_name(c) for c in POINT_COMPONENTS] == [
        "repeatability", "adc_resolution", "gain_calibration", "skew_calibration",
        "window_overhead", "offset_calibration", "supply_voltage"]
    assert all(budget.field(n).type.field("u_j").type == pa.float64() for n in budget.names)
    windows = pq.read_schema(next((run_dir / "windows.parquet").glob("seg-*.parquet")))
    corrections = windows.field("corrections").type
    assert corrections.field("gain").type == pa.float64()
    assert corrections.field("range_gain").type == pa.list_(pa.float64())
    assert windows.field("uncertainty").type.field("edge_quantisation").type == pa.float64()
    run = load(run_dir)
    point = run.points.iloc[0]
    assert point.uncertainty_budget["supply_voltage"] == {
        "u_j": 7e-9, "type": "B", "source": "source of supply voltage"}
    last = run.windows.iloc[-1]
    assert last.corrections == {"offset_a": 1e-6, "gain": 1.01, "skew_s": 2e-5,
                                "overhead_s": 1e-5, "overhead_j": 1e-8, "range_offset_a": None,
                                "range_gain": [1.02, 0.98]}
    assert last.uncertainty["adc_resolution"] == 2e-10
    assert last.uncertainty["gain_calibration"] is None
    with pytest.raises(ValueError, match=r"\['made up'\] has no field in the results schema"):
        with RunWriter.resume(run_dir) as writer:
            writer.write_point(Point(op="md5", board="b"),
                               [Window(0.0, 1e-3, 100, 2e-6, 1e-3,
                                       uncertainty=(("made up", 1.0),))], batch_n=1)


def test_pandas_alone_reads_the_same_typed_columns(run_dir: Path) -> None:
    run = load(run_dir)
    points = pd.read_parquet(run_dir / "points.parquet")
    windows = pd.read_parquet(run_dir / "windows.parquet")
    assert set(points.columns) == set(run.points.columns)
    assert set(windows.columns) == set(run.windows.columns)
    by_key = points.set_index("point_key")
    for row in run.points.itertuples():
        assert list(by_key.loc[row.point_key, "flag_list"]) == row.flag_list
        assert by_key.loc[row.point_key, "uncertainty_budget"] == row.uncertainty_budget
    assert sorted(map(list, windows.flag_list)) == sorted(run.windows.flag_list)
    gains = [c["range_gain"] for c in windows.corrections if c["range_gain"] is not None]
    assert [list(np.asarray(g)) for g in gains] == [[1.02, 0.98]]


def test_a_version_1_run_loads_in_the_shape_of_version_2(v1_run: Path) -> None:
    manifest = json.loads((v1_run / "manifest.json").read_text())
    assert "schema_version" not in manifest  # written by the version 1 writer
    assert pq.read_schema(next((v1_run / "points.parquet").glob("*.parquet"))
                          ).field("flags").type == pa.string()
    run = load(v1_run)
    assert not SHADOWED & {*run.points.columns, *run.windows.columns}
    assert "flags" not in run.points.columns and "flags" not in run.windows.columns
    points = run.points.set_index("op")
    assert points.loc["sha256", "flag_list"] == ["ci_target_not_met", "glitch", "uncalibrated"]
    assert points.loc["aes-ecb-encrypt", "flag_list"] == []
    assert points.loc["md5", "flag_list"] == ["stream_loss"]
    assert run.windows.flag_list.tolist() == [["glitch", "uncalibrated"], [], ["uncalibrated"],
                                              [], [], [], ["stream_loss"], ["stream_loss"]]
    budget = points.loc["sha256", "uncertainty_budget"]
    assert budget["gain_calibration"] == {"u_j": 3e-10, "type": "B",
                                          "source": "gain calibration of the fixture"}
    assert budget["skew_calibration"]["u_j"] is None
    assert run.windows.corrections.iloc[0] == {
        "offset_a": 1.5e-6, "gain": 1.01, "skew_s": 2e-5, "overhead_s": 1e-5,
        "overhead_j": 1e-8, "range_offset_a": [1e-6, 2e-6], "range_gain": [1.02, 0.99]}
    assert run.windows.uncertainty.iloc[0]["supply_voltage"] == 7e-10
    assert run.windows.uncertainty.iloc[0]["skew_calibration"] is None  # nan in version 1
    # the report reads it as it reads a version 2 run: the same flags on the page
    page = write_report(v1_run, flags=FLAGS).read_text()
    for flag in ("ci_target_not_met", "glitch", "uncalibrated", "stream_loss"):
        assert f"<td>{flag}</td>" in page or f">{flag}<" in page, flag


def test_a_version_1_run_is_not_resumed_and_says_why(v1_run: Path) -> None:
    before = sorted(p.name for p in v1_run.rglob("*"))
    with pytest.raises(RunError, match=r"v1-run: written with results schema version 1 .*"
                                       r"cannot be added to it"):
        RunWriter.resume(v1_run)
    assert sorted(p.name for p in v1_run.rglob("*")) == before  # nothing written, no lock
    assert load(v1_run).in_progress


@pytest.mark.parametrize("version", [3, "2", None])
def test_a_run_of_a_version_this_reader_does_not_know_is_refused(
        tmp_path: Path, version: object) -> None:
    run = make_run(tmp_path / "later", boards=BOARDS[:1], ops=OPS[:2], payloads=PAYLOADS[:1],
                   reps=1, n_windows=2)
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "schema_version": version}))
    message = rf"later: manifest.json: schema_version {version!r}: this energyrig reads"
    with pytest.raises(RunError, match=message):
        load(run)
    with pytest.raises(RunError, match=message):
        RunWriter.resume(run)


def test_the_report_titles_a_trace_with_the_window_flags(tmp_path: Path) -> None:
    """The trace of a flagged window names its flags, not pandas' ``Series.flags`` (only
    window 0's samples are kept)."""
    from energyrig.capture import Chunk

    T, first = 1e-5, 10_000
    high = (np.arange(3000) >= 2000) & (np.arange(3000) < 2400)
    window = Window(start_s=(first - 0.5) * T, end_s=(first + 399.5) * T, samples=400,
                    energy_j=1e-6, baseline_w=0.0, flags=("glitch", "uncalibrated"))
    clean = [Window(k * 1.0, k * 1.0 + 4e-3, 400, 1e-6, 0.0) for k in (1, 2)]
    fixture = {"dut": {"board": "host"},
               "windows": {"guard_s": 2e-3, "baseline_s": 5e-3, "min_samples": 20}}
    with RunWriter.create(tmp_path / "run", fixture=fixture, keep_captures="all") as writer:
        writer.write_point(Point(op="sha256", board="host", payload_bytes=64),
                           [window, *clean],
                           batch_n=10, captures={0: (Chunk(first - 2000, T,
                                                           np.where(high, 3e-3, 1e-6), 3.0,
                                                           high.astype(np.uint8)),)})
    write_report(tmp_path / "run", tmp_path / "report", flags=FLAGS)
    (trace,) = (tmp_path / "report" / "traces").rglob("*.json")
    assert json.loads(trace.read_text())["flags"] == ["glitch", "uncalibrated"]


def test_every_correction_and_budget_component_the_rig_makes_has_its_field() -> None:
    """What the correction stage and the budgets name fits the structs: a sweep never
    meets a name the schema lacks (a ValueError when its point is stored)."""
    from energyrig.calibration.correction import CurrentCorrection
    from energyrig.energy.budget import UNSTATED_SUPPLY, energy_budget, window_budget
    from energyrig.energy.stats import WindowStats

    applied = CurrentCorrection(offset_a=1e-6, gain=1.01, skew_s=2e-5, overhead_s=1e-5,
                                overhead_j=1e-8, range_offset_a=(1e-6, 2e-6, 3e-6),
                                range_gain=(1.0, 1.02, 0.99)).applied
    assert corrections_struct(applied) == {
        "offset_a": 1e-6, "gain": 1.01, "skew_s": 2e-5, "overhead_s": 1e-5, "overhead_j": 1e-8,
        "range_offset_a": [1e-6, 2e-6, 3e-6], "range_gain": [1.0, 1.02, 0.99]}
    stats = WindowStats(**{f.name: 1.0 for f in dataclasses.fields(WindowStats)
                           if f.type in ("float", "int")})
    window = [(c.name, c.u) for c in window_budget(stats, None, UNSTATED_SUPPLY)]
    assert set(uncertainty_struct(window)) == {field_name(name) for name, _ in window}
    point = energy_budget([Window(0.0, 1e-3, 100, 2e-6, 1e-3, uncertainty=tuple(window))] * 2,
                          1)
    assert set(budget_struct([c.as_dict("j") for c in point])) == \
        {field_name(c.name) for c in point}
