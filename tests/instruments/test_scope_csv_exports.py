"""Oscilloscope CSV exports (Rigol, Keysight, Tektronix, Siglent), written as each scope
writes them (tests/support/scope_files.py), read by `rig analyze` by content: every window's
energy against a numpy computation on the values the file holds."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from support.bad_input import assert_refused
from support.scope_files import (
    DT,
    LEVEL_V,
    analyze,
    check_windows,
    true_energies,
    write_keysight_csv,
    write_rigol_csv,
    write_siglent_csv,
    write_tektronix_csv,
)

from energyrig.instruments.csvfile import CsvCapture
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture

N = 60_000


# (writer, the lines pandas skips, the channel names: current, trigger, supply)
LAYOUTS: dict[str, tuple[Callable[[Path, int], None], list[int], tuple[str, str, str]]] = {
    "rigol": (write_rigol_csv, [1], ("CH1", "CH2", "CH3")),
    "keysight": (write_keysight_csv, [1], ("CH1", "CH2", "CH3")),
    "tektronix": (write_tektronix_csv, list(range(13)), ("CH1", "CH2", "CH3")),
}


@pytest.mark.parametrize("vendor", sorted(LAYOUTS))
def test_three_channel_exports_read_by_content(tmp_path: Path, vendor: str) -> None:
    """Current (shunt), trigger (analog, with a level) and supply on three channels."""
    write, skip, (current, trigger, supply) = LAYOUTS[vendor]
    path = tmp_path / "scope.csv"
    write(path, N)
    table = pd.read_csv(path, skiprows=skip)
    if vendor == "keysight":  # its channels 1, 2, 3 are read as CH1, CH2, CH3
        table = table.rename(columns={str(c): f"CH{c}" for c in (1, 2, 3)})
    i = table[current].to_numpy(float) / 0.5
    v = table[supply].to_numpy(float)
    high = table[trigger].to_numpy(float) > LEVEL_V
    doc = analyze(path, "--current", current, "--shunt-ohms", "0.5", "--voltage", supply,
                   "--trigger", trigger, "--trigger-level", str(LEVEL_V))
    check_windows(doc, true_energies(i, v, high))


def test_rigol_time_is_start_plus_index_times_increment(tmp_path: Path) -> None:
    path = tmp_path / "rigol.csv"
    write_rigol_csv(path, 1000)
    capture = open_capture(path, CaptureOptions(trigger="CH2", voltage=3.0,
                                                trigger_level_v=LEVEL_V))
    assert isinstance(capture, CsvCapture)
    chunks = list(capture.chunks())
    assert chunks[0].period_s == pytest.approx(DT, rel=1e-12)
    assert sum(len(c) for c in chunks) == 1000 and chunks[0].start_index == 0


def test_siglent_single_channel_triggered_on_itself(tmp_path: Path) -> None:
    """A Siglent export holds one channel: the trigger is that channel with a level (the
    shunt's volts above 1 mV)."""
    path = tmp_path / "siglent.csv"
    write_siglent_csv(path, N)
    table = pd.read_csv(path, skiprows=5)
    i = table["Volt"].to_numpy(float)
    # Its column is read as the channel of its Source row.
    doc = analyze(path, "--trigger", "CH1", "--trigger-level", "0.001", "--voltage", "3.0")
    check_windows(doc, true_energies(i, 3.0, i > 0.001))


@pytest.mark.parametrize(("edit", "args", "expected"), [
    (lambda text: text.replace("Sequence,", "Index,", 1), ("--trigger", "CH2"),
     "Rigol CSV export: line 2 should be the units row"),
    (lambda text: text, ("--voltage", "3.0"), "name the trigger channel with --trigger"),
    (lambda text: text, ("--trigger", "CH2", "--trigger-level", "1.65"),
     "give the supply voltage"),
    (lambda text: text, ("--trigger", "CH9", "--trigger-level", "1.65", "--voltage", "3"),
     "no trigger column 'CH9'"),
])
def test_bad_rigol_export_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch, edit, args,
                                      expected: str) -> None:
    path = tmp_path / "rigol.csv"
    write_rigol_csv(path, 100)
    path.write_text(edit(path.read_text()))
    assert_refused(["analyze", str(path), *args], expected, tmp_path, capsys, monkeypatch)


def test_keysight_export_without_its_units_row_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "keysight.csv"
    write_keysight_csv(path, 100)
    path.write_text(path.read_text().replace("second,Volt,Volt,Volt\n", "", 1))
    assert_refused(["analyze", str(path), "--trigger", "CH2", "--voltage", "3"],
                   "Keysight CSV export: line 2 should be the units row 'second,Volt,...'",
                   tmp_path, capsys, monkeypatch)


def test_tektronix_export_in_other_time_units_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tek.csv"
    write_tektronix_csv(path, 100)
    path.write_text(path.read_text().replace("Horizontal Units,s", "Horizontal Units,Hz"))
    assert_refused(["analyze", str(path), "--trigger", "CH2", "--voltage", "3"],
                   "Horizontal Units 'Hz': only seconds (s) are read", tmp_path, capsys,
                   monkeypatch)
