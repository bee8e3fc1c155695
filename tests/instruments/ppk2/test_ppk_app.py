"""The Power Profiler app's CSV export and saved sessions, written as the app writes them
(tests/support/ppk_app.py), read by `rig analyze`: every window's energy against the energy
of the samples the file holds."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.ppk_app import (
    ALL,
    convert_bits16,
    js_number,
    js_to_fixed,
    write_csv_export,
    write_session,
)
from typer.testing import CliRunner

from energyrig.cli.app import app
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.csvfile import CsvCapture
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture
from energyrig.instruments.ppk2.appfile import PpkSessionCapture

RATE = 100_000  # samples per second
N = 60_000
SUPPLY_V = 3.0
CHANNEL = 3  # the trigger is on D3
PERIOD = 20_000  # a window every 0.2 s
HIGH = (5_000, 7_000)  # samples [5000, 7000) of each period are high


def _profile(n: int = N, rate: int = RATE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Current in µA (float32, multiples of 1/8 µA: exact in float32 and in the export's three
    decimals), the 16-bit channel pairs, and the trigger. Idle 10 µA; in a window a ramp
    from 2 to about 4 mA; D0 toggles every sample and D5 is always high, to show the
    channels are kept apart."""
    k = np.arange(n)
    phase = k % PERIOD
    trigger = (phase >= HIGH[0]) & (phase < HIGH[1])
    ramp = np.round((2000 + (phase - HIGH[0]) * 1.0) * 8) / 8
    current = np.where(trigger, ramp, 10.0).astype(np.float32)
    b8 = (trigger.astype(np.uint8) << CHANNEL) | (k % 2).astype(np.uint8) | (1 << 5)
    return current, convert_bits16(b8), trigger


def _true_energies(current_ua: np.ndarray, trigger: np.ndarray, rate: int = RATE) -> list[float]:
    """Energy of each high span: period × V × the sum of its samples' currents, J."""
    edges = np.flatnonzero(np.diff(trigger.astype(np.int8)))
    starts, ends = edges[::2] + 1, edges[1::2] + 1
    i = current_ua.astype(np.float64) * 1e-6
    return [float(i[a:b].sum()) * SUPPLY_V / rate for a, b in zip(starts, ends, strict=True)]


def _blocks(current: np.ndarray, bits: np.ndarray, size: int = 25_000):
    return [(current[a:a + size], bits[a:a + size]) for a in range(0, len(current), size)]


def _analyze(path: Path, *args: str) -> dict:
    result = CliRunner().invoke(app, ["analyze", str(path), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _check(doc: dict, truth: list[float]) -> None:
    windows = doc["windows"]
    assert len(windows) == len(truth) == 3
    for got, true in zip(windows, truth, strict=True):
        assert got["flags"] == [] and got["samples"] == HIGH[1] - HIGH[0]
        assert got["energy_j"] == pytest.approx(true, rel=1e-9)
        assert got["baseline_w"] == pytest.approx(10e-6 * SUPPLY_V, rel=1e-9)


# --- the text rules the app's export follows ---------------------------------------------

@pytest.mark.parametrize("value, text", [
    (0.0, "0"), (0.01, "0.01"), (30.0, "30"), (123.45, "123.45"), (1e-7, "1e-7"),
    (0.000001, "0.000001"), (1e21, "1e+21"), (-2.5e-9, "-2.5e-9"), (1.5e300, "1.5e+300")])
def test_js_number_follows_ecma_number_to_string(value: float, text: str) -> None:
    assert js_number(value) == text


@pytest.mark.parametrize("value, text", [
    (1.0005, "1.000"),  # 1.0005 is 1.000499999... in binary
    (0.125, "0.125"), (2.0625, "2.063"), (-2.0625, "-2.063"), (10.0, "10.000")])
def test_js_to_fixed_rounds_the_exact_value_ties_away_from_zero(value: float, text: str) -> None:
    assert js_to_fixed(value, 3) == text


def test_convert_bits16_is_the_apps() -> None:
    assert convert_bits16(np.array([0, 0xFF, 0b1011]))[0] == 0b0101010101010101
    assert convert_bits16(np.array([0xFF]))[0] == 0b1010101010101010
    assert convert_bits16(np.array([0b1011]))[0] == 0b0101010110011010


# --- the CSV export ------------------------------------------------------------------------

def test_the_export_is_laid_out_as_the_app_writes_it() -> None:
    current, bits, _ = _profile(5)
    out = io.StringIO()
    write_csv_export(out, [(current, bits)], RATE)
    assert out.getvalue().splitlines() == [
        "Timestamp(ms),Current(uA),D0-D7",
        "0,10.000,00000100", "0.01,10.000,10000100", "0.02,10.000,00000100",
        "0.03,10.000,10000100", "0.04,10.000,00000100"]


@pytest.mark.parametrize("selection, args", [
    (ALL, ["--trigger", "D3"]),
    ((True, True, False, True), ["--trigger-bit", "3"]),  # one column per channel
    ((True, True, True, True), ["--trigger-column", "d3"]),
])
def test_rig_analyze_reads_the_csv_export(tmp_path: Path, selection: tuple, args: list) -> None:
    current, bits, trigger = _profile()
    path = tmp_path / "export.csv"
    with path.open("w", newline="") as out:
        write_csv_export(out, _blocks(current, bits), RATE, selection)
    assert isinstance(open_capture(path, CaptureOptions(voltage=SUPPLY_V)), CsvCapture)
    _check(_analyze(path, "--voltage", str(SUPPLY_V), *args), _true_energies(current, trigger))


def test_an_export_from_the_middle_of_a_session_with_samples_left_out(tmp_path: Path) -> None:
    """A selection starts anywhere; NaN samples are left out of the file: they are gaps."""
    current, bits, trigger = _profile()
    current[1_000:1_010] = np.nan  # idle: before the first window's baseline
    path = tmp_path / "part.csv"
    with path.open("w", newline="") as out:
        write_csv_export(out, _blocks(current, bits), RATE, start=123_456)
    assert path.read_text().splitlines()[1].startswith("1234.56,")
    cap = open_capture(path, CaptureOptions(voltage=SUPPLY_V, trigger="D3"))
    gaps = np.concatenate([c.gaps for c in cap.chunks()])
    assert gaps.tolist() == [[1_000, 10]]
    _check(_analyze(path, "--voltage", str(SUPPLY_V), "--trigger", "D3"),
           _true_energies(current, trigger))


def test_mixed_and_missing_channel_states(tmp_path: Path) -> None:
    """X (high and low within an averaged sample) reads high; - (no state) low, marked
    corrupt."""
    current, bits, trigger = _profile()
    bits = bits.copy()
    mask = np.uint16(3 << (2 * CHANNEL))
    bits[HIGH[0]] = (bits[HIGH[0]] & ~mask) | np.uint16(3 << (2 * CHANNEL))  # X, still high
    bits[PERIOD + HIGH[0] + 100] &= ~mask  # '-' inside the second window
    path = tmp_path / "states.csv"
    with path.open("w", newline="") as out:
        write_csv_export(out, _blocks(current, bits), RATE)
    assert path.read_text().splitlines()[HIGH[0] + 1] == "50,2000.000,000X0100"
    cap = open_capture(path, CaptureOptions(voltage=SUPPLY_V, trigger="D3"))
    (chunk,) = list(cap.chunks())
    assert np.flatnonzero(chunk.corrupt).tolist() == [PERIOD + HIGH[0] + 100]
    assert chunk.logic[PERIOD + HIGH[0] + 100] == 0 and chunk.logic[HIGH[0]] == 1
    doc = _analyze(path, "--voltage", str(SUPPLY_V), "--trigger", "D3", "--min-pulse", "0.0001")
    flags = [w["flags"] for w in doc["windows"]]
    assert flags == [[], ["glitch", "corrupt_samples"], []]  # the one-sample dip, bridged
    assert doc["windows"][0]["energy_j"] == pytest.approx(
        _true_energies(current, trigger)[0], rel=1e-9)


@pytest.mark.parametrize("text, options, error, problem", [
    ("Timestamp(ms),Current(uA),D0-D7\n0,1.000,00000000\n", {}, CaptureError,
     "records current only: give the supply voltage with --voltage"),
    ("Timestamp(ms),Current(uA)\n0,1.000\n0.01,1.000\n", {"voltage": 3.0}, ChannelError,
     "no digital channel D0 in the export"),
    ("Timestamp(ms),Current(uA),D0-D7\n0,1.000,00000000\n", {"voltage": 3.0, "trigger": "D9"},
     ChannelError, "no logic channel 'D9'"),
    ("Timestamp(ms),Current(uA),D0-D7\n0,1.000,000\n0.01,1.000,000\n",
     {"voltage": 3.0, "trigger": "D5"}, CaptureError,
     "line 2: digital column 'D0-D7' has '000': no channel 5"),
])
def test_export_problems_name_the_file_and_what_to_do(tmp_path: Path, text: str, options: dict,
                                                     error: type, problem: str) -> None:
    path = tmp_path / "e.csv"
    path.write_text(text)
    with pytest.raises(error, match=problem) as info:
        list(open_capture(path, CaptureOptions(**options)).chunks())
    assert str(path) in str(info.value)


# --- the saved session ---------------------------------------------------------------------

@pytest.mark.parametrize("order", [("metadata.json", "minimap.raw", "session.raw"),
                                   ("session.raw", "minimap.raw", "metadata.json")])
def test_rig_analyze_reads_a_saved_session(tmp_path: Path, order: tuple[str, ...]) -> None:
    current, bits, trigger = _profile()
    path = tmp_path / "session.ppk2"
    write_session(path, _blocks(current, bits), RATE, order=order)
    cap = open_capture(path, CaptureOptions(voltage=SUPPLY_V, trigger="D3", chunk_samples=7_000))
    assert isinstance(cap, PpkSessionCapture) and cap.trigger_bit == CHANNEL
    chunks = list(cap.chunks())
    assert [len(c) for c in chunks[:2]] == [7_000, 7_000] and chunks[0].period_s == 1 / RATE
    logic = np.concatenate([c.logic for c in chunks])
    assert np.array_equal((logic >> CHANNEL) & 1, trigger)
    assert np.array_equal(logic & 1, np.arange(N) % 2) and np.all(logic & (1 << 5))
    _check(_analyze(path, "--voltage", str(SUPPLY_V), "--trigger", "D3"),
           _true_energies(current, trigger))


def test_a_session_is_recognised_by_content_whatever_its_name(tmp_path: Path) -> None:
    current, bits, _ = _profile(1000)
    path = tmp_path / "recording.zip"
    write_session(path, _blocks(current, bits), RATE)
    assert isinstance(open_capture(path, CaptureOptions(voltage=SUPPLY_V)), PpkSessionCapture)


def test_session_nan_samples_are_gaps_and_a_missing_state_is_corrupt(tmp_path: Path) -> None:
    current, bits, _ = _profile(3000)
    current[10:13] = np.nan
    bits = bits.copy()
    bits[20] = 0  # no state on any channel
    path = tmp_path / "s.ppk2"
    write_session(path, _blocks(current, bits, 1000), 1000.0)
    cap = open_capture(path, CaptureOptions(voltage=SUPPLY_V, chunk_samples=1000))
    chunks = list(cap.chunks())
    assert chunks[0].gaps.tolist() == [[10, 3]] and len(chunks[0]) == 997
    assert chunks[0].period_s == 1e-3
    assert np.flatnonzero(chunks[0].corrupt).tolist() == [17]  # sample 20, after the gap
    assert chunks[1].start_index == 1000 and chunks[1].corrupt is None


def test_rig_analyze_json_in_a_subprocess(tmp_path: Path) -> None:
    """The installed entry point: exit 0 and JSON on a session; exit 2 naming the file and
    the missing voltage."""
    current, bits, trigger = _profile()
    path = tmp_path / "session.ppk2"
    write_session(path, _blocks(current, bits), RATE)
    cmd = [sys.executable, "-c", "from energyrig.cli.app import main; main()", "analyze",
           str(path)]
    proc = subprocess.run([*cmd, "--json", "--voltage", "3", "--trigger-bit", "3"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    _check(json.loads(proc.stdout), _true_energies(current, trigger))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert f"{path}: a Power Profiler session records current only" in proc.stderr


@pytest.mark.parametrize("metadata, problem", [
    ({"metadata": {}, "formatVersion": 2}, "no metadata.samplesPerSecond > 0"),
    ({"metadata": {"samplesPerSecond": -1}, "formatVersion": 2}, "found -1"),
])
def test_a_session_without_a_rate_is_refused(tmp_path: Path, metadata: dict, problem: str) -> None:
    current, bits, _ = _profile(10)
    path = tmp_path / "s.ppk2"
    write_session(path, [(current, bits)], RATE, metadata=metadata)
    with pytest.raises(CaptureError, match=problem):
        open_capture(path, CaptureOptions(voltage=SUPPLY_V))


def test_a_zip_without_the_session_members_is_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "s.ppk2"
    import zipfile
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(CaptureError, match="not a Power Profiler session or raw PPK2 stream "
                                           "file"):
        open_capture(path, CaptureOptions(voltage=SUPPLY_V))
