"""Saleae Logic 2's raw-data CSV export read by `rig analyze`: the current and the supply
from ``analog.csv``, the trigger from ``digital.csv``, aligned by time (issue 25, item 4).

The files are laid out as Saleae documents them: saleae/gitbook-docs
``faq/technical-faq/binary-and-csv-export-formats-2025-update.md`` ("Digital CSV Format":
header ``Time [s],<channel names>``, one row where any channel changes, cells 0, 1 or X,
``X`` for no data, as at the capture's end; 9 decimals of seconds in its example), and
saleae/logic2-automation ``Capture.export_raw_data_csv`` (the two files, ``analog.csv`` and
``digital.csv``, in the folder given). The analog file has one row per sample, ``Time [s]``
then the channels' volts.
"""
from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support.cli import rig_output

from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.saleae import DigitalTrack, SaleaeCapture
from energyrig.rig.analysis import analyze_file

ANALOG_RATE = 100_000  # analog samples per second
N = 50_000  # analog samples: 0.5 s
DIGITAL_RATE = 10_000_000  # the digital channels' sample rate: transitions on a 100 ns grid
SHUNT_OHMS = 0.5
#: Trigger rises and falls, s: each between two analog samples (a digital edge need not
#: fall on the analog grid).
EDGES = [(0.0500013, 0.0700052), (0.2000047, 0.2250009), (0.4000001, 0.4120098)]


@functools.cache
def _analog_text(mso: bool) -> str:
    """The analog file's text (the same for every test: written once per process)."""
    t = np.arange(N) / ANALOG_RATE
    busy = np.zeros(N, dtype=bool)
    for rise, fall in EDGES:
        busy |= (t >= rise) & (t < fall)
    current = np.where(busy, 0.020 + 0.010 * np.sin(2 * np.pi * 37 * t) ** 2, 0.001)
    supply = 3.3 + 0.01 * np.sin(2 * np.pi * 50 * t)
    columns = [t, current * SHUNT_OHMS, supply]
    out = io.StringIO()
    out.write("Trigger [s]," * mso + "Time [s],Channel 0,Channel 1\n")
    np.savetxt(out, np.column_stack([t - 0.1, *columns] if mso else columns),
               fmt="%.9f", delimiter=",")
    return out.getvalue()


def write_export(folder: Path, analog_name: str = "analog.csv",
                 digital_name: str = "digital.csv", mso: bool = False) -> tuple[Path, Path]:
    """The two files of one capture: analog Channel 0 the volts across the shunt (a current
    of 1 mA idle, 20-30 mA in a window), Channel 1 the supply (3.3 V with a ripple); digital
    Channel 0 a clock unrelated to the trigger, Channel 2 the trigger. ``mso``: the analog
    file as an MSO's "Waveform CSV", the time from the trigger first (here from 0.1 s)."""
    folder.mkdir(parents=True, exist_ok=True)
    analog = folder / analog_name
    analog.write_text(_analog_text(mso))
    # Digital rows: the capture's start, every change of the clock or the trigger, the end.
    clock = np.arange(1, 25) * 0.02 + 0.0000003  # a change every 20 ms
    changes = sorted({0.0, *clock.tolist(), *(e for pair in EDGES for e in pair)})
    lines = ["Time [s],Channel 0,Channel 2"]
    for when in changes:
        ticks = round(when * DIGITAL_RATE)  # on the digital sample grid
        level = int(any(rise <= when < fall for rise, fall in EDGES))
        lines.append(f"{ticks / DIGITAL_RATE:.9f},{int(np.sum(clock <= when)) % 2},{level}")
    lines.append(f"{N / ANALOG_RATE:.9f},X,X")
    digital = folder / digital_name
    digital.write_text("\n".join(lines) + "\n")
    return analog, digital


def reference(analog: Path, digital: Path) -> list[tuple[int, float]]:
    """Each window's samples and energy, J, computed apart from the rig: numpy reads both
    files; a sample is in a window when its time stamp is at or after a rise of the
    trigger column and before the next fall; energy = period × Σ v_shunt / R × v_supply."""
    a = np.loadtxt(analog, delimiter=",", skiprows=1)
    if analog.read_text()[:11] == "Trigger [s]":
        a = a[:, 1:]
    rows = [line.split(",") for line in digital.read_text().splitlines()[1:]]
    times = [float(r[0]) for r in rows]
    levels = [r[2] for r in rows]
    rises = [times[k] for k in range(1, len(rows)) if levels[k] == "1" and levels[k - 1] == "0"]
    falls = [times[k] for k in range(1, len(rows)) if levels[k] == "0" and levels[k - 1] == "1"]
    period = (a[-1, 0] - a[0, 0]) / (len(a) - 1)
    out = []
    for rise, fall in zip(rises, falls, strict=True):
        inside = (a[:, 0] >= rise) & (a[:, 0] < fall)
        out.append((int(inside.sum()), period * float(np.sum(a[inside, 1] / SHUNT_OHMS
                                                            * a[inside, 2]))))
    return out


Run = Callable[..., tuple[int, str]]


@pytest.fixture
def analyze(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """``analyze(*args)``: ``rig analyze ARGS --json`` through the console script; its exit
    code and stdout (stderr when it failed)."""
    return lambda *args: rig_output(monkeypatch, capsys, "analyze", *map(str, args), "--json")


def _check(windows: list, truth: list[tuple[int, float]]) -> None:
    assert len(windows) == len(truth) == len(EDGES)
    for got, (samples, energy) in zip(windows, truth, strict=True):
        assert got["flags"] == [] and got["samples"] == samples
        assert got["energy_j"] == pytest.approx(energy, rel=1e-9)


CHANNELS = ("--current", "Channel 0", "--shunt-ohms", SHUNT_OHMS, "--voltage", "Channel 1",
            "--trigger", "Channel 2")


@pytest.mark.parametrize("how", ["folder", "analog", "named", "mso"])
def test_rig_analyze_reads_the_export(tmp_path: Path, analyze: Run, how: str) -> None:
    """The folder Logic 2 exported to, its analog.csv (digital.csv found beside it), or two
    files of any name with --digital; an MSO's waveform export too."""
    names = ("a.csv", "d.csv") if how == "named" else ("analog.csv", "digital.csv")
    analog, digital = write_export(tmp_path / "export", *names, mso=how == "mso")
    given = {"folder": [analog.parent], "analog": [analog], "mso": [analog],
             "named": [analog, "--digital", digital]}[how]
    code, output = analyze(*given, *CHANNELS)
    assert code == 0, output
    _check(json.loads(output)["windows"], reference(analog, digital))


def test_the_files_read_in_chunks_give_the_same_windows(tmp_path: Path) -> None:
    """Streaming: the analog file 1000 rows at a time (edges inside chunks)."""
    analog, digital = write_export(tmp_path)
    options = CaptureOptions(current="Channel 0", shunt_ohms=SHUNT_OHMS, voltage="Channel 1",
                             trigger="Channel 2", chunk_samples=1000)
    assert SaleaeCapture(analog, digital, options).track.chunk_rows == 1000
    result = analyze_file(analog, options)
    _check([{"flags": list(w.flags), "samples": w.samples, "energy_j": w.energy_j}
            for w in result.windows], reference(analog, digital))


def test_the_digital_track_read_two_rows_at_a_time(tmp_path: Path) -> None:
    """The trigger's level at every analog time stamp, asked 777 samples at a time of a
    track that reads two rows at a time: a sample is high from a rise's time on, unknown
    (X) from the capture's end row on."""
    analog, digital = write_export(tmp_path)
    t = np.loadtxt(analog, delimiter=",", skiprows=1, usecols=0)
    track = DigitalTrack(digital, "Channel 2", chunk_rows=2)
    parts = [track.levels(t[a:a + 777]) for a in range(0, len(t), 777)]
    levels = np.concatenate([level for level, _ in parts])
    expected = np.zeros(len(t))
    for rise, fall in EDGES:
        expected[(t >= round(rise * DIGITAL_RATE) / DIGITAL_RATE)
                 & (t < round(fall * DIGITAL_RATE) / DIGITAL_RATE)] = 1
    assert np.array_equal(levels, expected)
    assert all(unknown is None for _, unknown in parts)  # the X row is at the end, after t


@pytest.mark.parametrize("args, named, problem", [
    (("{digital}", *CHANNELS), "{digital}",
     "a Saleae Logic 2 digital export holds the trigger but no current: give the analog "
     "export with it: rig analyze {folder}/analog.csv --digital {digital} (or the export's "
     "folder)"),
    (("{analog}", "--digital", "{folder}/none.csv", *CHANNELS), "{analog}",
     "a Saleae Logic 2 analog export holds no trigger: give the digital export of the same "
     "capture with --digital FILE (Logic 2 writes it as digital.csv beside analog.csv; not "
     "found: {folder}/none.csv)"),
    (("{analog}", "--current", "Channel 0", "--voltage", "3.3", "--trigger", "Channel 2"),
     "{analog}", "a Saleae analog channel records volts: give the shunt the current is "
     "measured across (--shunt-ohms OHMS) or the probe's scale (--current-scale A_PER_V)"),
    (("{analog}", "--current", "Channel 0", "--shunt-ohms", "1", "--voltage", "3.3"),
     "{digital}", "several digital channels: name the trigger with --trigger; the digital export's "
     "channels are Channel 0, Channel 2"),
    (("{analog}", "--shunt-ohms", "1", "--voltage", "3.3", "--trigger", "Channel 2"),
     "{analog}",
     "name the current channel with --current; the analog channels are Channel 0, Channel 1"),
    (("{analog}", "--digital", "{analog}", *CHANNELS), "{analog}",
     "not a Saleae Logic 2 digital export: expected the header 'Time [s],<channel>,...' and "
     "rows of 0, 1 or X per channel (Export Raw Data, CSV, without ISO 8601 times)"),
])
def test_bad_input_is_one_line_naming_the_file(tmp_path: Path, analyze: Run, args: tuple,
                                               named: str, problem: str) -> None:
    analog, digital = write_export(tmp_path)
    fill = {"analog": analog, "digital": digital, "folder": tmp_path}
    code, output = analyze(*(str(a).format(**fill) for a in args))
    assert code == 2
    assert output.strip().splitlines() == [
        f"rig: error: {named.format(**fill)}: {problem.format(**fill)}"]


def test_a_bad_digital_cell_is_refused_naming_its_line(tmp_path: Path, analyze: Run) -> None:
    analog, digital = write_export(tmp_path)
    lines = digital.read_text().splitlines()
    lines[5] = lines[5].rsplit(",", 1)[0] + ",2"
    digital.write_text("\n".join(lines) + "\n")
    code, output = analyze(analog, *CHANNELS)
    assert code == 2
    assert output.strip() == (f"rig: error: {digital}: line 6: channel 'Channel 2' has '2', "
                              "not 0, 1 or X")


def test_a_folder_without_an_analog_export_is_refused(tmp_path: Path, analyze: Run) -> None:
    """A folder is read as an export's: one without analog.csv says what it expected (it
    was "cannot read: Is a directory")."""
    write_export(tmp_path / "export", analog_name="a.csv")
    code, output = analyze(tmp_path / "export", *CHANNELS)
    assert code == 2
    assert output.strip() == (f"rig: error: {tmp_path / 'export'}: a folder, not a capture "
                              "file: expected a Saleae Logic 2 export folder holding "
                              "analog.csv and digital.csv")
