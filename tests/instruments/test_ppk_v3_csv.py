"""The Power Profiler app's older CSV exports, whose digital text is written D7 first, read
as the app wrote them (issue 25, item 1).

The layouts follow NordicSemiconductor/pc-nrfconnect-ppk:

- commit a7b1157 (2020-04-23, a development build before v3.0.0), ``src/actions/
  fileActions.js``: header ``Timestamp(ms),Current(uA),Bits``, each line
  ``${indexToTimestamp(n, index) / 1000},${v.toFixed(3)},${bits.toString(2).padStart(8, '0')}``;
  the next day (fc6268e) the column was renamed ``LAP0-LAP7``;
- v3.0.0 to v3.0.2 (``src/components/SaveExport/ExportDialog.jsx``): the same binary text
  under ``D0-D7`` (and ``b.split('').join(',')`` under ``D0,D1,...,D7``), and v3.1.0 to v3.1.2
  (``exportChartAction.js``, ``averagedBitState(bitsData[k], 7 - i)``) D7 first too, until
  506d7e1 ("Invert bit sequence when exporting data", v3.1.3) put D0 first;

with ``indexToTimestamp(i, index) = options.timestamp - (index - i) * 1e6 /
options.samplesPerSecond`` (``src/globals.js``), ``bits`` the PPK2's logic byte (bit k = Dk).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support.ppk_app import js_number, js_to_fixed
from support.cli import rig_output

from energyrig.instruments.csvfile import CsvCapture
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture

RATE = 100_000
N = 40_000
SUPPLY_V = 3.0
CHANNEL = 3
PERIOD = 10_000
HIGH = (3_000, 4_500)
#: The header each build wrote for its packed column, and the separate columns of v3.0.x.
HEADERS = {"bits": "Timestamp(ms),Current(uA),Bits",
           "lap": "Timestamp(ms),Current(uA),LAP0-LAP7",
           "v3.0": "Timestamp(ms),Current(uA),D0-D7",
           "v3.0-columns": "Timestamp(ms),Current(uA),D0,D1,D2,D3,D4,D5,D6,D7"}


def _profile() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Current in µA (multiples of 1/8), the logic byte and the trigger: D3 high in a window,
    D0 toggling every sample, D6 always high, so a channel read from the wrong end shows."""
    k = np.arange(N)
    phase = k % PERIOD
    trigger = (phase >= HIGH[0]) & (phase < HIGH[1])
    current = np.where(trigger, np.round((1500 + (phase - HIGH[0]) * 0.5) * 8) / 8, 20.0)
    b8 = (trigger.astype(np.int64) << CHANNEL) | (k % 2) | (1 << 6)
    return current.astype(np.float32), b8, trigger


def write_v3(path: Path, layout: str, current: np.ndarray, b8: np.ndarray) -> None:
    """The export as the build of ``layout`` (:data:`HEADERS`) wrote it: binary text, D7
    first, time stamps counted back from the newest sample's."""
    index = N - 1
    newest_us = index * 1e6 / RATE
    lines = [HEADERS[layout]]
    for n, (value, bits) in enumerate(zip(current.tolist(), b8.tolist(), strict=True)):
        text = format(bits, "b").rjust(8, "0")
        digital = ",".join(text) if layout == "v3.0-columns" else text
        stamp = (newest_us - ((index - n) * 1e6) / RATE) / 1000
        lines.append(f"{js_number(stamp)},{js_to_fixed(value, 3)},{digital}")
    path.write_text("\n".join(lines) + "\n")


def _energies(current_ua: np.ndarray, trigger: np.ndarray) -> list[float]:
    """Each high span's energy from the samples, J: V × period × Σ i."""
    rise = np.flatnonzero(trigger[1:] & ~trigger[:-1]) + 1
    fall = np.flatnonzero(~trigger[1:] & trigger[:-1]) + 1
    i = current_ua.astype(np.float64) * 1e-6
    return [SUPPLY_V / RATE * float(np.sum(i[a:b])) for a, b in zip(rise, fall, strict=True)]


Analyze = Callable[..., tuple[int, str]]


@pytest.fixture
def analyze(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Analyze:
    """``analyze(path, *args)``: ``rig analyze PATH --voltage 3.0 --json ARGS`` as the console
    script runs it; its exit code and its output (stdout, or stderr when it failed)."""
    return lambda path, *args: rig_output(monkeypatch, capsys, "analyze", str(path),
                                          "--voltage", str(SUPPLY_V), "--json", *args)


@pytest.fixture(scope="module")
def profile() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _profile()


def _check(output: str, current: np.ndarray, trigger: np.ndarray) -> None:
    windows = json.loads(output)["windows"]
    truth = _energies(current, trigger)
    assert len(windows) == len(truth) == 4
    for got, true in zip(windows, truth, strict=True):
        assert got["flags"] == [] and got["samples"] == HIGH[1] - HIGH[0]
        assert got["energy_j"] == pytest.approx(true, rel=1e-9)


def test_the_writer_follows_the_apps_binary_text(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    write_v3(path, "bits", np.array([10.0, 10.0], np.float32), np.array([0b110, 0b1000]))
    assert path.read_text().splitlines() == [
        "Timestamp(ms),Current(uA),Bits", "0,10.000,00000110", "0.01,10.000,00001000"]


@pytest.mark.parametrize("layout", ["bits", "lap"])
@pytest.mark.parametrize("args", [["--trigger", "D3"], ["--trigger-bit", "3"],
                                  ["--trigger", "Bits", "--trigger-bit", "3"]])
def test_the_development_builds_export_is_recognised_and_read_d7_first(
        tmp_path: Path, profile: tuple, analyze: Analyze, layout: str, args: list[str]
) -> None:
    """`--trigger-bit 3` is channel D3: the fourth character from the right of "00001000",
    not bit 3 of the decimal number 1000."""
    current, b8, trigger = profile
    path = tmp_path / "export.csv"
    write_v3(path, layout, current, b8)
    capture = open_capture(path, CaptureOptions(voltage=SUPPLY_V))
    assert isinstance(capture, CsvCapture) and capture.digital_text
    code, output = analyze(path, *args)
    assert code == 0, output
    _check(output, current, trigger)


@pytest.mark.parametrize("layout", ["v3.0", "v3.0-columns"])
def test_an_export_of_v3_0_is_read_d7_first_when_told(tmp_path: Path, profile: tuple,
                                                      analyze: Analyze, layout: str) -> None:
    current, b8, trigger = profile
    path = tmp_path / "export.csv"
    write_v3(path, layout, current, b8)
    code, output = analyze(path, "--trigger", "D3", "--digital-layout", "d7-first")
    assert code == 0, output
    _check(output, current, trigger)
    # The same header as today's app, which writes D0 first: read so, D3 is the fifth
    # character, here D4, which never rose.
    code, output = analyze(path, "--trigger", "D3")
    assert code == 2 and "never went high" in output


def test_a_session_layout_is_refused_for_a_csv_export(tmp_path: Path, profile: tuple,
                                                       analyze: Analyze) -> None:
    current, b8, _ = profile
    path = tmp_path / "export.csv"
    write_v3(path, "bits", current[:100], b8[:100])
    code, output = analyze(path, "--digital-layout", "mask")
    assert code == 2
    assert output.strip() == (f"rig: error: {path}: --digital-layout mask does not apply to a "
                              "Power Profiler CSV export: its layouts are d0-first, d7-first")
