"""The CSV reader and the capture-file dispatcher."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.csvfile import CsvCapture
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture, parse_voltage

T = 1e-5


def write(path: Path, header: str, rows: list[tuple]) -> Path:
    lines = [header] + [",".join(str(x) for x in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def grid_rows(n: int, skip: set[int] = frozenset()) -> list[tuple]:
    return [(f"{k * T:.5f}", 0.001 * k, 3.3, int(10 <= k < 20)) for k in range(n) if k not in skip]


def test_chunks_carry_samples_period_and_gaps(tmp_path: Path) -> None:
    path = write(tmp_path / "c.csv", "time_s,current_a,voltage_v,trigger",
                 grid_rows(30, skip={5, 6, 17}))
    chunks = list(CsvCapture(path, CaptureOptions(chunk_samples=8)).chunks())
    assert [len(c) for c in chunks] == [8, 8, 8, 3]
    assert all(c.period_s == pytest.approx(T) for c in chunks)
    current = np.concatenate([c.current_a for c in chunks])
    expected = [0.001 * k for k in range(30) if k not in {5, 6, 17}]
    np.testing.assert_allclose(current, expected)
    assert chunks[0].gaps.tolist() == [[5, 2]]           # samples 5 and 6 lost
    assert chunks[1].gaps.tolist() == [[7, 1]]           # sample 17 lost
    assert [c.start_index for c in chunks] == [0, 10, 19, 27]
    assert chunks[-1].end_index == 30
    logic = np.concatenate([c.logic for c in chunks])
    assert logic.tolist() == [int(10 <= k < 20) for k in range(30) if k not in {5, 6, 17}]


def test_options_rename_columns_scale_current_and_constant_voltage(tmp_path: Path) -> None:
    path = write(tmp_path / "c.csv", "t, time_s , shunt_v, gpio",
                 [(0, k * T, 0.5 * k, k % 2) for k in range(5)])
    options = CaptureOptions(trigger="gpio", current="shunt_v", voltage=parse_voltage("1.8"),
                             shunt_ohms=0.5)
    (chunk,) = open_capture(path, options).chunks()
    np.testing.assert_allclose(chunk.current_a, [0.0, 1.0, 2.0, 3.0, 4.0])
    assert chunk.voltage_v == 1.8
    assert chunk.logic.tolist() == [0, 1, 0, 1, 0]


@pytest.mark.parametrize(("header", "options", "message"), [
    ("time_s,current_a,trigger", CaptureOptions(), "no voltage column 'voltage_v'"),
    ("time_s,current_a,voltage_v,trigger", CaptureOptions(current="i"), "no current column 'i'"),
    ("time_s,current_a,voltage_v", CaptureOptions(), "no trigger column 'trigger'"),
])
def test_missing_channel_names_file_and_columns(tmp_path: Path, header: str,
                                                options: CaptureOptions, message: str) -> None:
    path = write(tmp_path / "c.csv", header, [])
    with pytest.raises(ChannelError, match=message) as info:
        open_capture(path, options)
    assert str(path) in str(info.value) and "the columns are" in str(info.value)


@pytest.mark.parametrize(("rows", "message"), [
    ([("0.0", 1, 3, 0), ("0.00001", "x", 3, 0)], "line 3: column 'current_a' has 'x'"),
    ([("0.0", 1, 3, 0), ("0.00001", "", 3, 0)], "line 3: column 'current_a'"),
    ([(f"{k * T:.5f}", 1, 3, 0) for k in range(5)] + [("0.000045", 1, 3, 0)],
     "line 7: time_s = 4.5e-05 is off the 1e-05 s sample grid"),
    ([("0.0", 1, 3, 0), ("0.00001", 1, 3, 0), ("0.00001", 1, 3, 0)], "line 4: .*repeats"),
    ([("0.0", 1, 3, 0)], "at least two samples"),
    ([], "no samples"),
])
def test_malformed_rows_name_the_line(tmp_path: Path, rows: list[tuple], message: str) -> None:
    path = write(tmp_path / "c.csv", "time_s,current_a,voltage_v,trigger", rows)
    with pytest.raises(CaptureError, match=message):
        list(open_capture(path).chunks())


def test_dispatcher_checks_content_against_extension(tmp_path: Path) -> None:
    zipped = tmp_path / "capture.csv"
    zipped.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(CaptureError, match="not a Power Profiler CSV export or .*CSV file "
                                           r"\(tried by content\)"):
        open_capture(zipped)
    with pytest.raises(CaptureError, match="cannot read"):
        open_capture(tmp_path / "missing.csv")
    unknown = tmp_path / "capture.raw"
    unknown.write_bytes(bytes(range(256)))
    with pytest.raises(CaptureError, match=r"unknown capture format: its content is none of "
                                           r"Power Profiler session \(\.ppk2\), raw PPK2 stream "
                                           r"\(\.ppk2raw \.ppk2\), .*sigrok session \(\.sr\), "
                                           r"Joulescope JLS \(\.jls\), Otii 3 project \(\.otii3\), "
                                           r"Otii CSV export \(\.csv\), .*CSV \(\.csv \.txt\)$"):
        open_capture(unknown)
    # Unknown extension, CSV content: recognised by content.
    text = write(tmp_path / "capture.dat", "time_s,current_a,voltage_v,trigger", grid_rows(4))
    assert isinstance(open_capture(text), CsvCapture)


def test_both_shunt_and_scale_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "c.csv", "time_s,current_a,voltage_v,trigger", grid_rows(3))
    with pytest.raises(CaptureError, match="either a shunt"):
        open_capture(path, CaptureOptions(shunt_ohms=1.0, current_scale_a_per_v=2.0))


# --- the generic mapping: another program's columns and units, read as they are ------------

def _otii_like(tmp_path: Path, n: int = 4000) -> tuple[Path, list[float]]:
    """An export with its own names and units: time in ms (1 kS/s), current in mA, the
    supply in V, and the digital inputs packed in a whole number whose bit 2 is the
    trigger (bits 0 and 4 busy with other signals). Returns the file and each window's
    true energy, period × Σ v·i over its samples, J."""
    k = np.arange(n)
    high = (k % 1000 >= 300) & (k % 1000 < 500)
    i_ma = np.where(high, 2.0 + 0.001 * (k % 1000), 0.05)
    v = 3.3 - 0.1 * high
    gpio = (high.astype(int) << 2) | (k % 2) | 16
    rows = [(f"{x:g}", f"{i:.6f}", f"{u:.3f}", g) for x, i, u, g in zip(k * 1.0, i_ma, v, gpio)]
    path = write(tmp_path / "otii.csv", "Time (ms),Main current (mA),Main voltage (V),GPI", rows)
    i = np.array([float(r[1]) for r in rows]) * 1e-3
    p = i * np.array([float(r[2]) for r in rows])
    truth = [float(p[a:a + 200].sum()) * 1e-3 for a in range(300, n, 1000)]
    return path, truth


MAPPING = ["--time-column", "Time (ms)", "--time-unit", "ms",
           "--current-column", "Main current (mA)", "--current-unit", "mA",
           "--voltage-column", "Main voltage (V)", "--trigger-column", "GPI", "--trigger-bit", "2"]


def test_rig_analyze_maps_another_programs_columns_and_units(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from energyrig.cli.app import app

    path, truth = _otii_like(tmp_path)
    result = CliRunner().invoke(app, ["analyze", str(path), "--json", *MAPPING])
    assert result.exit_code == 0, result.output
    windows = json.loads(result.output)["windows"]
    assert len(windows) == len(truth) == 4
    for got, true in zip(windows, truth, strict=True):
        assert got["flags"] == [] and got["samples"] == 200
        assert got["energy_j"] == pytest.approx(true, rel=1e-9)
        assert got["baseline_w"] == pytest.approx(0.05e-3 * 3.3, rel=1e-9)


def test_mapped_units_and_bits_in_the_chunks(tmp_path: Path) -> None:
    path, _ = _otii_like(tmp_path, 1000)
    options = CaptureOptions(time="Time (ms)", time_unit="ms", current="Main current (mA)",
                             current_unit="mA", voltage="Main voltage (V)", trigger="GPI",
                             trigger_bit=4, chunk_samples=300)
    chunks = list(open_capture(path, options).chunks())
    assert chunks[0].period_s == pytest.approx(1e-3)
    assert chunks[0].current_a[0] == pytest.approx(0.05e-3)
    assert all(c.logic.all() for c in chunks)  # bit 4 is always set
    bit0 = CaptureOptions(**{**options.__dict__, "trigger_bit": 0})
    logic = np.concatenate([c.logic for c in open_capture(path, bit0).chunks()])
    assert logic.tolist() == [k % 2 for k in range(1000)]


@pytest.mark.parametrize(("rows", "options", "message"), [
    ([(0, 1, 3, 2.5), (1, 1, 3, 2)], {"trigger_bit": 1},
     "line 2: trigger column 'trigger' has '2.5', not a whole number >= 0"),
    ([(0, 1, 3, -1), (1, 1, 3, 2)], {"trigger_bit": 0}, "has '-1', not a whole number"),
    ([(0, 1, 3, 0), (1, 1, 3, 0)], {"time": "t_ms"}, "no time column 't_ms'.*--time-column"),
])
def test_mapping_problems_name_the_line_or_the_option(tmp_path: Path, rows: list,
                                                      options: dict, message: str) -> None:
    path = write(tmp_path / "c.csv", "time_s,current_a,voltage_v,trigger", rows)
    with pytest.raises(CaptureError, match=message):
        list(open_capture(path, CaptureOptions(**options)).chunks())


@pytest.mark.parametrize(("options", "message"), [
    ({"time_unit": "min"}, "time unit must be one of s, ms, us, µs, ns, got 'min'"),
    ({"current_unit": "kA"}, "current unit must be one of A, mA, uA, µA, nA, got 'kA'"),
    ({"trigger_bit": 16}, "trigger bit must be 0..15"),
])
def test_unknown_units_are_refused_naming_the_choices(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CaptureOptions(**options)
