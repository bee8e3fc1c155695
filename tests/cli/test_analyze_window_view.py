"""`rig analyze --plot/--csv`: the window view (issue 23 item 9).

A synthetic capture whose every figure is known from numpy over its samples (the definitions
of docs/analyze.md: a window's samples a..b, energy T·Σv·i, charge T·Σi, the baseline the
mean over the span guard before the rising edge); the CSV row of each window equals that,
and the JSON beside a window's PNG equals its CSV row.
"""
from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from energyrig.capture import Chunk
from energyrig.cli.analyze import plot_name
from energyrig.cli.app import app
from energyrig.domain import WindowSettings
from energyrig.energy.windows import WindowFinder, find_windows, windows_max_current

T = 1e-5  # 100 kS/s
GUARD, BASELINE = 5e-4, 2e-3  # --guard, --baseline
#: (first sample, samples) of each window: 2.37 ms, 4.11 ms, 0.53 ms
WINDOWS = ((400, 237), (1200, 411), (2100, 53))
N = 2600


def _signals() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Current (A), voltage (V, a ripple: energy is not a voltage times the charge) and
    trigger of the synthetic capture."""
    k = np.arange(N)
    trigger = np.zeros(N, dtype=np.uint8)
    current = 1.7e-3 + 0.2e-3 * np.sin(k / 7.0)  # idle, with noise-like ripple
    for n, (a, length) in enumerate(WINDOWS):
        trigger[a:a + length] = 1
        current[a:a + length] = (11.3e-3 * (n + 1) + 2.1e-3 * np.sin(k[a:a + length] / 13.0)
                                 + 1e-4 * ((k[a:a + length] * 7919) % 17))
    voltage = 3.0 + 0.05 * np.cos(k / 29.0)
    return current, voltage, trigger


def _expected(batch: int) -> list[dict[str, float]]:
    """Each window's figures by numpy over the samples, independently of the rig."""
    current, voltage, _ = _signals()
    power = current * voltage
    guard, base = round(GUARD / T), round(BASELINE / T)
    out = []
    for a, length in WINDOWS:
        inside = slice(a, a + length)
        idle = slice(a - guard - base, a - guard)
        duration = length * T
        energy = T * power[inside].sum()
        charge = T * current[inside].sum()
        baseline_w = power[idle].mean()
        out.append({"start_s": (a - 0.5) * T, "end_s": (a + length - 0.5) * T,
                    "duration_s": duration, "samples": length, "energy_j": energy,
                    "net_energy_j": energy - baseline_w * duration, "baseline_w": baseline_w,
                    "mean_power_w": energy / duration, "charge_c": charge,
                    "mean_current_a": charge / duration,
                    "max_current_a": current[inside].max(),
                    "baseline_a": current[idle].mean(),
                    "energy_per_op_j": energy / batch,
                    "net_energy_per_op_j": (energy - baseline_w * duration) / batch,
                    "time_per_op_s": duration / batch, "charge_per_op_c": charge / batch})
    return out


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    current, voltage, trigger = _signals()
    path = tmp_path / "cap.csv"
    rows = ["time_s,current_a,voltage_v,trigger"]
    rows += [f"{k * T!r},{i!r},{v!r},{d}" for k, (i, v, d)
             in enumerate(zip(current.tolist(), voltage.tolist(), trigger.tolist()))]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _analyze(capture: Path, *args: str) -> None:
    result = CliRunner().invoke(app, ["analyze", str(capture), "--guard", str(GUARD),
                                      "--baseline", str(BASELINE), *args],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output


def _csv_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _typed(text: str, like: object) -> object:
    """A CSV cell as the JSON sidecar's type of the same column (``like``)."""
    if like is None:
        return None if text == "" or math.isnan(float(text)) else float(text)
    return type(like)(text)


def test_each_csv_row_holds_the_numbers_numpy_computes_from_the_samples(
        capture: Path, tmp_path: Path) -> None:
    _analyze(capture, "--batch", "10", "--csv", str(tmp_path / "w.csv"))
    header, rows = _csv_rows(tmp_path / "w.csv")
    assert header[0] == "window" and [r["window"] for r in rows] == ["1", "2", "3"]
    for row, want in zip(rows, _expected(10), strict=True):
        for name, value in want.items():
            assert float(row[name]) == pytest.approx(value, rel=6e-9, abs=1e-15), name


def test_the_csv_names_its_units_and_prints_clean_floats(capture: Path, tmp_path: Path) -> None:
    _analyze(capture, "--csv", str(tmp_path / "plain.csv"))
    header, rows = _csv_rows(tmp_path / "plain.csv")
    assert {"window", "mean_current_a", "max_current_a", "charge_c", "duration_s",
            "baseline_w"} <= set(header)
    assert not [c for c in header if "per_op" in c]  # per op only with --batch
    # every quantity's header says its SI unit
    units = re.compile(r".+_(s|j|w|c|a)$")
    assert [c for c in header if not units.match(c)] == ["window", "samples", "lost_samples",
                                                         "flag_list"]
    _analyze(capture, "--batch", "1000", "--csv", str(tmp_path / "w.csv"))
    header, rows = _csv_rows(tmp_path / "w.csv")
    assert {"energy_per_op_j", "net_energy_per_op_j", "time_per_op_s",
            "charge_per_op_c"} <= set(header)
    mantissa = re.compile(r"^-?(\d+)(?:\.(\d+))?(?:e[-+]\d+)?$")
    floats = [row[c] for row in rows for c in header if units.match(c)]
    for cell in floats:
        whole, frac = mantissa.match(cell).groups()  # type: ignore[union-attr]
        digits = (whole + (frac or "")).lstrip("0")
        assert len(digits) <= 9, cell
    # the edges are (k ± 0.5)·T: as float64 sums they print as 0.0038650000000000004
    assert rows[0]["start_s"] == "0.003995" and rows[0]["end_s"] == "0.006365"


def test_the_json_beside_a_plot_is_the_csv_row_of_its_window(
        capture: Path, tmp_path: Path) -> None:
    _analyze(capture, "--batch", "10", "--csv", str(tmp_path / "w.csv"), "--plot", "2",
             "--plot-dir", str(tmp_path / "plots"))
    png = tmp_path / "plots" / "cap-w02.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(png.with_suffix(".json").read_text(encoding="utf-8"))
    header, rows = _csv_rows(tmp_path / "w.csv")
    assert list(data["window"]) == header
    assert {k: _typed(rows[1][k], v) for k, v in data["window"].items()} == data["window"]
    want = _expected(10)[1]
    for name in ("duration_s", "mean_current_a", "max_current_a", "charge_c", "energy_j",
                 "net_energy_j", "baseline_w"):
        assert data["window"][name] == pytest.approx(want[name], rel=6e-9), name
    # the view: current, voltage (the capture has it per sample) and the trigger lane
    assert data["lanes"] == ["current", "voltage", "trigger D0"]


def test_the_window_is_centred_and_the_baseline_takes_a_third_of_the_axis(
        capture: Path, tmp_path: Path) -> None:
    _analyze(capture, "--plot", "3", "--plot-dir", str(tmp_path))
    data = json.loads((tmp_path / "cap-w03.json").read_text(encoding="utf-8"))
    start, end = data["start_s"], data["end_s"]
    panels = data["panels"]
    # the short window (0.53 ms) beside a 2 ms baseline span: two panels, the window's
    # centred, the baseline's a third of the width (no longer most of the axis)
    assert len(panels) == 2
    base, window = panels
    assert window["time_s"][0] < start < end < window["time_s"][1]
    assert sum(window["time_s"]) / 2 == pytest.approx((start + end) / 2, abs=1e-12)
    assert base["time_s"][0] <= data["baseline_s"][0] and base["share"] == pytest.approx(1 / 3)
    assert window["time_s"][1] - window["time_s"][0] < 3 * (end - start)
    # a window much longer than its baseline span shares one panel with it
    _analyze(capture, "--plot", "2", "--plot-dir", str(tmp_path), "--baseline", "0.0005")
    one = json.loads((tmp_path / "cap-w02.json").read_text(encoding="utf-8"))["panels"]
    assert len(one) == 1 and one[0]["share"] == 1


def _chunks(sizes: list[int]) -> list[Chunk]:
    """The synthetic capture as chunks of ``sizes`` samples (boundaries inside windows)."""
    current, voltage, trigger = _signals()
    out, at = [], 0
    for size in sizes:
        out.append(Chunk(at, T, current[at:at + size], voltage[at:at + size],
                         trigger[at:at + size]))
        at += size
    return out


def test_charge_and_largest_current_do_not_depend_on_where_the_chunks_split() -> None:
    settings = WindowSettings(guard_s=GUARD, baseline_s=BASELINE)
    for sizes in ([N], [450, 3, 900, 1247], [1] * 50 + [N - 50]):
        finder = WindowFinder(settings, charge=True)
        windows = list(find_windows(_chunks(sizes), finder=finder))
        tops = windows_max_current(_chunks(sizes[::-1] if len(sizes) < 5 else sizes), windows)
        want = _expected(1)
        assert [c.charge_c for c in finder.currents] == pytest.approx(
            [w["charge_c"] for w in want], rel=1e-12)
        assert [c.baseline_a for c in finder.currents] == pytest.approx(
            [w["baseline_a"] for w in want], rel=1e-12)
        assert tops.tolist() == [w["max_current_a"] for w in want]


def test_plot_files_are_named_by_window() -> None:
    assert plot_name(Path("runs/x/session.ppk2"), 3, 8) == "session-w03.png"
    assert plot_name(Path("a.csv"), 7, 120) == "a-w007.png"


def test_kept_samples_are_named_by_point_and_window_and_old_runs_still_read(
        tmp_path: Path) -> None:
    from energyrig.domain import Point, key_id
    from energyrig.results.store.layout import CAPTURES, capture_dir_name, capture_path
    from energyrig.results.store.write import RunWriter, delete_run

    point = Point(op="aes-cbc-encrypt", board="nrf5340dk/nrf5340/cpuapp", key_bits=128,
                  payload_bytes=64, rep=2)
    name = capture_dir_name(point.key)
    assert name == f"aes-cbc-encrypt-128b-64B-nrf5340dk_nrf5340_cpuapp-r2-{key_id(point.key)[:8]}"
    assert capture_dir_name(point.key, 2) == f"{name}-a2"
    current, voltage, trigger = _signals()
    chunk = Chunk(0, T, current, voltage, trigger)
    settings = WindowSettings(guard_s=GUARD, baseline_s=BASELINE)
    windows = list(find_windows([chunk], settings))
    with RunWriter.create(tmp_path / "run", fixture={}, keep_captures="all") as writer:
        writer.write_point(point, windows, batch_n=10, captures={1: (chunk,), 2: (chunk,)})
    kept = sorted(p.relative_to(tmp_path / "run" / CAPTURES).as_posix()
                  for p in (tmp_path / "run" / CAPTURES).rglob("*.*"))
    assert kept == [f"{name}/w0001.csv", f"{name}/w0001.npz", f"{name}/w0002.csv",
                    f"{name}/w0002.npz"]
    assert capture_path(tmp_path / "run", point.key, 2) == \
        tmp_path / "run" / CAPTURES / name / "w0002.csv"
    # a run kept before: hash-named folders, window-NNNN files; still found, still deleted
    old = tmp_path / "run" / CAPTURES / key_id(point.key) / "window-0003.csv"
    old.parent.mkdir()
    old.write_text("time_s\n", encoding="utf-8")
    assert capture_path(tmp_path / "run", point.key, 3) == old
    delete_run(tmp_path / "run")
    assert not (tmp_path / "run").exists()
    # analysing a kept capture names the plot by its point
    assert plot_name(tmp_path / "run" / CAPTURES / name / "w0002.csv", 1, 1) == \
        f"{name}-w0002-w01.png"


def test_without_max_current_the_file_is_read_once_and_only_the_maximum_is_unknown(
        capture: Path) -> None:
    from energyrig.instruments.fileopts import CaptureOptions
    from energyrig.rig.analysis import analyze_file

    settings = WindowSettings(guard_s=GUARD, baseline_s=BASELINE)
    full = analyze_file(capture, CaptureOptions(), settings, 10)
    quick = analyze_file(capture, CaptureOptions(), settings, 10, max_current=False)
    for k in range(len(WINDOWS)):
        row, lean = full.row(k), quick.row(k)
        assert math.isnan(float(lean.pop("max_current_a")))
        assert row.pop("max_current_a") == pytest.approx(_expected(10)[k]["max_current_a"],
                                                        rel=6e-9)
        assert lean == row
