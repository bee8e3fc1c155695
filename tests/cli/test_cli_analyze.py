"""`rig analyze` on the bundled synthetic capture, whose true energies are known."""
from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
from support.paths import DATA, ROOT
from typer.testing import CliRunner

from energyrig.calibration.store import CalibrationStore, Identity, Measured, new_record
from energyrig.cli.app import app
from energyrig.fixtures import load_fixture
from energyrig.rig.analysis import JSON_FIELDS, analyze_file

CAPTURE = DATA / "synthetic-capture.csv"
TRUTH = json.loads((DATA / "synthetic-capture.truth.json").read_text())


@pytest.fixture
def rig(rig_cli: Callable[..., subprocess.CompletedProcess[str]]
        ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``rig ARGS`` in this process (tests/conftest.py, ``rig_cli``)."""
    return rig_cli


def test_json_windows_match_the_true_energies() -> None:
    result = CliRunner().invoke(app, ["analyze", str(CAPTURE), "--batch", "1000", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert set(doc) == {"windows", "summary"}
    windows = doc["windows"]
    assert len(windows) == len(TRUTH["windows"])
    for got, true in zip(windows, TRUTH["windows"], strict=True):
        assert tuple(got) == JSON_FIELDS
        assert got["flags"] == []
        assert abs(got["energy_j"] - true["energy_j"]) <= got["edge_error_j"]
        # Net: the edge bound plus the baseline over at most one sample of duration error.
        net_bound = got["edge_error_j"] + TRUTH["idle_w"] * TRUTH["period_s"]
        assert abs(got["net_energy_j"] - true["net_energy_j"]) <= net_bound
        assert got["baseline_w"] == pytest.approx(TRUTH["idle_w"], rel=1e-9)
        assert abs(got["duration_s"] - true["duration_s"]) <= TRUTH["period_s"]
    summary = doc["summary"]
    assert summary["count"] == len(windows) and summary["batch_n"] == 1000
    energies = [w["energy_j"] for w in windows]
    assert summary["energy_j"]["mean"] == pytest.approx(sum(energies) / len(energies))
    assert summary["per_op"]["energy_j"]["mean"] == pytest.approx(
        summary["energy_j"]["mean"] / 1000)
    low, high = summary["energy_j"]["ci_low"], summary["energy_j"]["ci_high"]
    assert low < summary["energy_j"]["mean"] < high


def test_table_output_lists_every_window() -> None:
    result = CliRunner().invoke(app, ["analyze", str(CAPTURE), "--batch", "1000"])
    assert result.exit_code == 0, result.output
    assert "Summary of 8 windows (0 flagged)" in result.output
    assert "energy/op (µJ)" in result.output


def test_constant_voltage_and_settings_options(tmp_path: Path) -> None:
    frame = pd.read_csv(CAPTURE)
    frame = frame.rename(columns={"current_a": "i", "trigger": "gpio"}).drop(columns="voltage_v")
    frame["i"] *= 0.1                     # volts across a 0.1 ohm shunt
    path = tmp_path / "shunt.csv"
    frame.to_csv(path, index=False)
    result = CliRunner().invoke(app, ["analyze", str(path), "--json", "--current", "i",
                                      "--trigger", "gpio", "--voltage", "3.0",
                                      "--shunt-ohms", "0.1", "--guard", "0.002",
                                      "--baseline", "0.005"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)["windows"]
    reference = analyze_file(CAPTURE).windows
    assert [w["energy_j"] for w in got] == pytest.approx([w.energy_j for w in reference],
                                                         rel=1e-9)


@pytest.mark.parametrize(("args", "problem"), [
    (["missing.csv"], "missing.csv: cannot read"),
    ([str(CAPTURE), "--current", "amps"], "no current column 'amps'"),
    ([str(CAPTURE), "--voltage", "vbat"], "no voltage column 'vbat'"),
])
def test_bad_file_or_channel_is_one_line_and_exit_2(
        rig: Callable[..., subprocess.CompletedProcess[str]], args: list[str], problem: str
) -> None:
    proc = rig("analyze", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0] and lines[0].startswith("rig: error: ")


def test_file_not_what_it_claims(tmp_path: Path,
                                 rig: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    fake = tmp_path / "capture.csv"
    fake.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    proc = rig("analyze", str(fake))
    assert proc.returncode == 2
    assert f"{fake}: not a Power Profiler CSV export or " in proc.stderr
    assert " or CSV file (tried by content)" in proc.stderr


def test_lost_rows_and_glitches_are_flagged(tmp_path: Path) -> None:
    frame = pd.read_csv(CAPTURE)
    second = TRUTH["windows"][1]
    inside = frame.index[(frame.time_s > second["rise_s"] + 1e-3)][:5]
    frame = frame.drop(index=inside)                        # 5 samples lost in window 2
    glitch = (frame.time_s > 0.002) & (frame.time_s < 0.00204)
    frame.loc[glitch, "trigger"] = 1                        # a 4-sample glitch before window 1
    path = tmp_path / "flawed.csv"
    frame.to_csv(path, index=False)
    result = CliRunner().invoke(app, ["analyze", str(path), "--json", "--min-pulse", "1e-4"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    flags = [w["flags"] for w in doc["windows"]]
    assert flags[0] == ["glitch"] and flags[1] == ["dropped_samples"]
    assert all(f == [] for f in flags[2:])
    assert doc["summary"]["glitches"] == 1 and doc["summary"]["flagged"] == 2
    # The lost samples are bridged: the energy still matches the truth within the bound.
    assert abs(doc["windows"][1]["energy_j"] - second["energy_j"]) <= \
        doc["windows"][1]["edge_error_j"]


def test_frame_lists_flags_as_the_results_store_does() -> None:
    from energyrig.rig.analysis import Analysis
    from energyrig.domain import Window
    from energyrig.flags import DROPPED_SAMPLES, GLITCH

    w = Window(0.0, 1.0, 100, 2.0, 0.5, 0.01, (DROPPED_SAMPLES, GLITCH), lost_samples=3)
    frame = Analysis("x.csv", (w,), (), ()).frame()
    # windows.parquet holds the flags of a window as ["dropped_samples", "glitch"] too
    assert frame.loc[0, "flag_list"] == ["dropped_samples", "glitch"]


def test_a_calibration_is_applied_as_rig_run_applies_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        rig: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    def measured(value: float) -> Measured:
        return Measured(value=value, u=0.0, method="test")

    fx = load_fixture(ROOT / "fixtures" / "sim.toml")
    store = CalibrationStore(tmp_path / "cal")
    ppk2 = Identity(kind="ppk2", name="PPK2 (serial 1)")
    path = store.save(new_record(fx, ppk2, {"board": "nrf52840dk"}, {
        "offset_a": measured(0.0), "gain": measured(1.1), "skew_s": measured(0.0),
        "overhead_s": measured(1e-4), "overhead_j": measured(1e-6)}))
    raw = analyze_file(CAPTURE).windows
    out = rig("analyze", str(CAPTURE), "--json", "--calibration", str(path))
    assert out.returncode == 0, out.stderr
    fixed = json.loads(out.stdout)["windows"]
    for got, w in zip(fixed, raw, strict=True):
        assert got["net_energy_j"] == pytest.approx(w.net_energy_j / 1.1 - 1e-6, rel=1e-9)
        assert got["duration_s"] == pytest.approx(w.duration_s - 1e-4, rel=1e-9)
        assert got["flags"] == []

    # 'latest': the store's one instrument; no firmware build, so no overhead: flagged.
    monkeypatch.setenv("ENERGYRIG_CALIBRATION_DIR", str(store.directory))
    out = rig("analyze", str(CAPTURE), "--json", "--calibration", "latest")
    assert out.returncode == 0, out.stderr
    assert "overhead_s never calibrated" in " ".join(out.stderr.split())
    assert all(w["flags"] == ["uncalibrated"] for w in json.loads(out.stdout)["windows"])
    store.save(new_record(fx, Identity(kind="scope", name="RIGOL"), {}, {"gain": measured(1.0)},
                          now=datetime(2026, 1, 1, tzinfo=UTC)))
    out = rig("analyze", str(CAPTURE), "--calibration", "latest")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "rig: error: " in out.stderr and "holds records of 2 instruments" in out.stderr
    expired = store.save(new_record(fx, ppk2, {}, {"offset_a": measured(0.0)},
                                    now=datetime(2020, 1, 1, tzinfo=UTC)))
    out = rig("analyze", str(CAPTURE), "--calibration", str(expired))
    assert out.returncode == 2 and "values.offset_a: expired on 2020-01-02" in out.stderr
    (tmp_path / "bad.json").write_text("{")
    out = rig("analyze", str(CAPTURE), "--calibration", str(tmp_path / "bad.json"))
    assert out.returncode == 2 and "corrupt calibration record" in out.stderr


def test_a_long_table_shows_the_worst_windows_and_a_wrong_channel_gets_a_hint(
        tmp_path: Path) -> None:
    rows = ["time_s,current_a,voltage_v,trigger"]
    for i in range(60_000):  # 60 windows of 5 ms (500 samples) every 10 ms; one is 10x
        k, high = divmod(i, 1000)
        active = 200 <= high < 700
        amps = (30e-3 if k == 17 else 3e-3) if active else 1e-3
        rows.append(f"{i * 1e-5:.5f},{amps},3.0,{int(active)}")
    capture = tmp_path / "c.csv"
    capture.write_text("\n".join(rows) + "\n")
    spans = ["--guard", "0.0005", "--baseline", "0.001"]
    result = CliRunner().invoke(app, ["analyze", str(capture), *spans,
                                      "--csv", str(tmp_path / "w.csv")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "20 of 60, the flagged ones and those furthest from the median" in text
    assert re.search(r"^\s*18 ", result.output, re.M)  # the 10x window is among them
    written = pd.read_csv(tmp_path / "w.csv")
    assert len(written) == 60
    assert written["net_energy_j"].iloc[17] > 5 * written["net_energy_j"].median()
    wrong = CliRunner().invoke(app, ["analyze", str(capture), *spans, "--current", "voltage_v"],
                               env={"COLUMNS": "200"})
    assert "is --current the current channel" in " ".join(wrong.output.split())


def test_plot_writes_the_trace_of_a_window_with_its_edges_guard_and_baseline(
        tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["analyze", str(CAPTURE), "--json", "--plot", "3,5",
                                      "--plot", "worst", "--plot-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    window = json.loads(result.stdout)["windows"][2]
    png = tmp_path / f"{CAPTURE.stem}-w03.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(png.with_suffix(".json").read_text())
    T = TRUTH["period_s"]
    guard, baseline = 1e-3, 10e-3  # the defaults of --guard and --baseline
    assert (data["start_s"], data["end_s"]) == (window["start_s"], window["end_s"])
    assert data["guard_s"] == pytest.approx([window["start_s"] - guard, window["start_s"]],
                                            abs=T / 2)
    assert data["baseline_s"] == pytest.approx(
        [window["start_s"] - guard - baseline, window["start_s"] - guard], abs=T / 2)
    # the samples drawn reach 1 ms beyond the baseline span and the window
    assert data["time_s"][0] == pytest.approx(data["baseline_s"][0] - 1e-3, abs=T)
    assert data["time_s"][1] == pytest.approx(window["end_s"] + 1e-3, abs=T)
    nets = [w["net_energy_j"] for w in json.loads(result.stdout)["windows"]]
    median = sorted(nets)[len(nets) // 2]  # no window is flagged: the worst is the furthest
    worst = max(range(len(nets)), key=lambda k: abs(nets[k] - median)) + 1
    drawn = {int(p.stem.rsplit("-w", 1)[1]) for p in tmp_path.glob("*.png")}
    assert drawn == {3, 5, worst}


def test_plot_of_a_window_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["analyze", str(CAPTURE), "--plot", "99",
                                      "--plot-dir", str(tmp_path)])
    assert result.exit_code == 2 and "1..8 or 'worst'" in result.output
    assert not list(tmp_path.iterdir())


def test_at_80_columns_no_heading_or_flag_is_cut() -> None:
    # Issue 12: headings were cut mid-word ("base…") and flags too ("too_…") at 80 columns.
    result = CliRunner().invoke(app, ["analyze", str(CAPTURE), "--min-samples", "100000"],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    table = result.output.split("Summary")[0]
    assert "…" not in table and max(map(len, table.splitlines())) <= 80
    assert "baseline" in table and "too_few_samples" in table
