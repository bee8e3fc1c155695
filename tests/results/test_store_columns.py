"""What the results store's files hold, column by column, however ``write_point`` builds
them (issue 24: its tables are built from the windows' fields as Arrow, no pandas frame):
the schema of version 2 as written before, NaN and None stored as null, strings and lists
as given, the same table from Window objects and from a DataFrame, and one ``pandas``
metadata in every part and segment."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from energyrig.domain import Point, Window, windows_frame
from energyrig.results import RunWriter, load
from energyrig.results.store.layout import PARTS, POINTS, WINDOWS

#: The columns of a point's two tables as version 2 files held them before this change
#: (``pq.read_schema`` of a part written by commit f1a4cfe; Parquet names a list's item
#: ``element``): name and type, in file order.
CORRECTIONS = ("struct<offset_a: double, gain: double, skew_s: double, overhead_s: double, "
               "overhead_j: double, range_offset_a: list<element: double>, "
               "range_gain: list<element: double>>")
UNCERTAINTY = ("struct<edge_quantisation: double, baseline_noise: double, sample_noise: double, "
               "adc_resolution: double, gain_calibration: double, skew_calibration: double, "
               "window_overhead: double, offset_calibration: double, supply_voltage: double>")
COMPONENT = "struct<u_j: double, type: string, source: string>"
BUDGET = "struct<" + ", ".join(f"{name}: {COMPONENT}" for name in (
    "repeatability", "adc_resolution", "gain_calibration", "skew_calibration",
    "window_overhead", "offset_calibration", "supply_voltage")) + ">"
FACTORS = [("point_key", "string"), ("family", "string"), ("op", "string"),
           ("key_bits", "int64"), ("payload_bytes", "int64"), ("curve", "string"),
           ("backend", "string"), ("board", "string"), ("cpu_hz", "int64"), ("rep", "int64"),
           ("batch_n", "int64"), ("attempt", "int64")]
WINDOW_COLUMNS = [*FACTORS, *((n, "int64") for n in ["window"]),
                  *((n, "double") for n in ["start_s", "end_s", "duration_s"]),
                  ("samples", "int64"),
                  *((n, "double") for n in ["energy_j", "baseline_w", "net_energy_j",
                                            "mean_power_w", "edge_error_j"]),
                  ("flag_list", "list<element: string>"), ("corrections", CORRECTIONS),
                  *((n, "double") for n in ["overhead_s", "net_energy_u_j", "duration_u_s"]),
                  ("uncertainty", UNCERTAINTY), ("cycles", "int64"),
                  *((n, "double") for n in [
                      "true_energy_j", "true_net_energy_j", "time_per_op_s", "energy_per_op_j",
                      "net_energy_per_op_j", "cycles_per_op", "true_energy_per_op_j",
                      "true_net_energy_per_op_j"])]
POINT_COLUMNS = [*FACTORS, ("status", "string"), ("reason", "string"),
                 *((n, "int64") for n in ["n_windows", "n_flagged", "windows_excluded"]),
                 ("excluded_reason", "string"),
                 *((f"{col}_{stat}", "double")
                   for col in ["time_per_op_s", "energy_per_op_j", "net_energy_per_op_j"]
                   for stat in ["mean", "median", "std", "ci_low", "ci_high"]),
                 *((f"{col}_mean", "double")
                   for col in ["cycles_per_op", "mean_power_w", "true_energy_per_op_j",
                               "true_net_energy_per_op_j"]),
                 ("net_energy_per_op_u_j", "double"), ("time_per_op_u_s", "double"),
                 ("uncertainty_budget", BUDGET), ("flag_list", "list<element: string>"),
                 ("place", "string"), ("host", "string"), ("written_at", "timestamp[us, tz=UTC]")]
NOT_NULL = {"point_key", "op", "status"}

POINT = Point(op="aes-ecb-encrypt", family="symmetric", board="nrf52840dk", key_bits=128,
              payload_bytes=16, cpu_hz=64_000_000, rep=1)
UNCERTAIN = {"net_energy_per_op_u_j": 2e-9, "time_per_op_u_s": math.nan,
             "uncertainty_budget": [
                 {"component": "repeatability", "type": "A", "u_j": 1e-9, "source": "windows"},
                 {"component": "supply voltage", "type": "B", "u_j": math.nan,
                  "source": "the supply's datasheet, ±1 %"}]}


def odd_windows() -> list[Window]:
    """Windows with every kind of missing value: NaN, None, a zero duration, flags given
    twice and out of order, a correction per range with a range missing, text with
    non-ASCII characters (in the flags)."""
    return [
        Window(0.0, 0.0, 0, 1e-6, math.nan, edge_error_j=math.nan, overhead_s=math.nan,
               flags=("glitch", "saturated", "glitch"), cycles=None, true_energy_j=None,
               true_net_energy_j=2e-6,
               corrections=(("offset_a", 1e-6), ("gain", math.nan), ("offset_a[2]", 3e-6)),
               uncertainty=(("edge quantisation", 1e-9), ("baseline noise", math.nan)),
               net_energy_u_j=2e-9),
        Window(1.0, 1.5, 10, 2e-6, 1e-3, cycles=7_000_000_000, true_energy_j=1e-6,
               flags=("stream_loss", "µ-glitch"), corrections={"skew_s": 2e-5},
               duration_u_s=1e-6),
        Window(2.0, 2.25, 2500, 3e-6, 1e-3, edge_error_j=1e-8, cycles=5, overhead_s=0.05),
    ]


def part(run_dir: Path) -> Path:
    (only,) = (run_dir / PARTS).iterdir()
    return only


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    writer = RunWriter.create(run_dir)
    writer.write_point(POINT, odd_windows(), batch_n=4, uncertainty=UNCERTAIN,
                       flags=("ci_target_not_met",), where={"place": "bench-ü", "host": "h1"})
    return run_dir


@pytest.mark.parametrize(("table", "columns"), [(WINDOWS, WINDOW_COLUMNS),
                                                (POINTS, POINT_COLUMNS)])
def test_a_parts_columns_are_those_of_before_by_name_type_and_order(
        run_dir: Path, table: str, columns: list[tuple[str, str]]) -> None:
    schema = pq.read_schema(part(run_dir) / table)
    assert [(f.name, str(f.type)) for f in schema] == columns
    assert {f.name for f in schema if not f.nullable} == NOT_NULL & set(schema.names)
    assert list(schema.metadata) == [b"pandas"]
    pandas = json.loads(schema.metadata[b"pandas"])
    assert [c["name"] for c in pandas["columns"]] == [name for name, _ in columns]
    assert pandas["index_columns"] == []


def test_nan_and_none_are_null_and_values_are_as_given(run_dir: Path) -> None:
    win = pq.read_table(part(run_dir) / WINDOWS).to_pydict()
    assert win["window"] == [0, 1, 2]
    assert win["point_key"] == [POINT.key] * 3 and win["key_bits"] == [128] * 3
    assert win["family"] == ["symmetric"] * 3 and win["curve"] == [None] * 3
    assert win["batch_n"] == [4] * 3 and win["attempt"] == [1] * 3
    assert win["samples"] == [0, 10, 2500]
    assert win["cycles"] == [None, 7_000_000_000, 5]  # beyond 32 bits, and none
    assert win["baseline_w"] == [None, 1e-3, 1e-3]  # NaN stored as null, as pandas stores it
    assert win["edge_error_j"] == [0.0, 0.0, 1e-8]  # a missing bound is none
    assert win["overhead_s"] == [0.0, 0.0, 0.05]
    assert win["true_energy_j"] == [None, 1e-6, None]
    assert win["net_energy_u_j"] == [2e-9, None, None]
    assert win["duration_s"] == [0.0, 0.5, 2.25 - 2.0 - 0.05]
    assert win["mean_power_w"][:2] == [math.inf, 2e-6 / 0.5]  # no time: inf, kept
    assert win["net_energy_j"][0] is None  # no baseline: NaN, null
    assert win["net_energy_j"][1] == 2e-6 - 1e-3 * 0.5
    assert win["energy_per_op_j"] == [1e-6 / 4, 2e-6 / 4, 3e-6 / 4]
    assert win["cycles_per_op"] == [None, 7_000_000_000 / 4, 5 / 4]
    assert win["flag_list"] == [["glitch", "saturated"], ["stream_loss", "µ-glitch"], []]
    assert win["corrections"][0] == {"offset_a": 1e-6, "gain": None, "skew_s": None,
                                     "overhead_s": None, "overhead_j": None,
                                     "range_offset_a": [None, None, 3e-6], "range_gain": None}
    assert win["corrections"][1]["skew_s"] == 2e-5
    assert win["uncertainty"][0]["edge_quantisation"] == 1e-9
    assert win["uncertainty"][0]["baseline_noise"] is None
    assert set(win["uncertainty"][2].values()) == {None}
    pts = pq.read_table(part(run_dir) / POINTS).to_pylist()
    (point,) = pts
    assert point["status"] == "ok" and point["reason"] is None
    assert point["n_windows"] == 3 and point["n_flagged"] == 2
    assert point["windows_excluded"] == 1 and point["excluded_reason"] == "stream_loss 1"
    assert point["flag_list"] == ["ci_target_not_met", "glitch", "saturated", "stream_loss",
                                  "µ-glitch"]
    assert point["place"] == "bench-ü" and point["host"] == "h1"
    assert point["net_energy_per_op_u_j"] == 2e-9 and point["time_per_op_u_s"] is None
    assert point["uncertainty_budget"]["repeatability"] == {
        "u_j": 1e-9, "type": "A", "source": "windows"}
    assert point["uncertainty_budget"]["supply_voltage"] == {
        "u_j": None, "type": "B", "source": "the supply's datasheet, ±1 %"}
    assert point["uncertainty_budget"]["adc_resolution"] is None
    # the estimate: windows 0 and 2 (window 1 lost samples); mean of the finite per-op
    assert point["energy_per_op_j_mean"] == pytest.approx((1e-6 + 3e-6) / 2 / 4, rel=1e-15)
    assert point["cycles_per_op_mean"] == 5 / 4  # window 0 has none
    assert point["written_at"].tzinfo is not None


def test_load_gives_nan_na_and_python_values(run_dir: Path) -> None:
    run = load(run_dir)
    win = run.windows
    assert win["baseline_w"].dtype == np.float64 and math.isnan(win["baseline_w"][0])
    assert str(win["cycles"].dtype) == "Int64" and win["cycles"].isna().tolist() == [
        True, False, False]
    assert win["flag_list"].tolist() == [["glitch", "saturated"], ["stream_loss", "µ-glitch"],
                                         []]
    assert win["corrections"][0]["range_offset_a"] == [None, None, 3e-6]
    (reason,) = run.points["reason"]
    assert pd.isna(reason)
    assert run.points["place"].tolist() == ["bench-ü"]


def test_a_dataframe_of_windows_is_stored_as_its_window_objects(tmp_path: Path) -> None:
    windows = odd_windows()
    by_objects, by_frame = tmp_path / "objects", tmp_path / "frame"
    for run_dir, given in ((by_objects, windows), (by_frame, windows_frame(windows, 4))):
        with RunWriter.create(run_dir, consolidate_every=100) as writer:
            writer.write_point(POINT, given, batch_n=4)
            tables = {name: pq.read_table(part(run_dir) / name) for name in (WINDOWS, POINTS)}
        run_dir.joinpath(".tables").write_text(repr(
            {name: t.drop(["written_at"] if name == POINTS else []).to_pylist()
             for name, t in tables.items()}))
        assert tables[WINDOWS].schema == pq.read_schema(
            next((run_dir / WINDOWS).glob("seg-*.parquet")))
    assert (by_objects / ".tables").read_text() == (by_frame / ".tables").read_text()
    # a frame missing a column a window must have is refused, as windows_frame refuses it
    with RunWriter.create(tmp_path / "bad") as writer, pytest.raises(
            ValueError, match=r"the windows lack the columns \['samples'\]"):
        writer.write_point(POINT, windows_frame(windows, 4).drop(columns="samples"),
                           batch_n=4)


def test_parts_and_segments_carry_one_pandas_metadata(tmp_path: Path) -> None:
    """pandas reads a part with the dtypes it reads the merged run with (``Int64``
    integers, text as strings): before, a part's metadata followed its values (a factor
    the op does not take was an ``object`` column, a key size ``int64``)."""
    run_dir = tmp_path / "run"
    writer = RunWriter.create(run_dir)
    writer.write_point(POINT, odd_windows(), batch_n=4)
    writer.write_point(Point(op="sha256", board="b"), odd_windows()[1:], batch_n=1)
    parts = sorted((run_dir / PARTS).iterdir())
    meta = {pq.read_schema(p / WINDOWS).metadata[b"pandas"] for p in parts}
    frames = [pd.read_parquet(p / WINDOWS) for p in parts]
    writer.close()
    segment = next((run_dir / WINDOWS).glob("seg-*.parquet"))
    assert meta == {pq.read_schema(segment).metadata[b"pandas"]}
    merged = pd.read_parquet(segment)
    for frame in frames:
        assert frame.dtypes.to_dict() == merged.dtypes.to_dict()
    assert str(merged["key_bits"].dtype) == "Int64"
    (sha,) = [f for f in frames if (f["op"] == "sha256").all()]
    assert sha["key_bits"].isna().all()  # sha256 takes no key size: <NA>
