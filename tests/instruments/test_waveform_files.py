"""Binary waveform files a scope saves (Keysight/Agilent and Rigol .bin, Tektronix .isf),
written as the layouts their sources state (tests/support/scope_files.py), read by
`rig analyze` by content: every window's energy against a numpy computation on the samples
the file holds."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from support.bad_input import assert_refused
from support.scope_files import (
    DT,
    HIGH,
    ISF_YMULT,
    ISF_YOFF,
    ISF_YZERO,
    LEVEL_V,
    analyze,
    check_windows,
    isf_raw,
    profile,
    true_energies,
    write_bin,
    write_isf,
    write_tek_wfm,
)

from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture

N = 60_000


def _float32_channels() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Channels 1..3 as the file holds them (float32), in float64."""
    return tuple(c.astype(np.float32).astype(np.float64) for c in profile(0, N))


@pytest.mark.parametrize(("cookie", "version"), [(b"AG", b"10"), (b"AG", b"03"),
                                                 (b"RG", b"01")])
def test_bin_analog_trigger(tmp_path: Path, cookie: bytes, version: bytes) -> None:
    path = tmp_path / "scope.bin"
    write_bin(path, N, cookie, version, block=25_000)
    shunt, trigger, supply = _float32_channels()
    doc = analyze(path, "--current", "CH1", "--shunt-ohms", "0.5", "--voltage", "3",
                   "--trigger", "CH2", "--trigger-level", str(LEVEL_V))
    check_windows(doc, true_energies(shunt / 0.5, 3.0, trigger > LEVEL_V))


def test_bin_logic_trigger_bit_beyond_the_pod(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "scope.bin"
    write_bin(path, 1000, logic_bit=3)
    assert_refused(["analyze", str(path), "--trigger", "D0-7", "--trigger-bit", "9",
                    "--voltage", "3"], "--trigger-bit must be 0..7, got 9", tmp_path, capsys,
                   monkeypatch)


def test_bin_supply_channel_and_logic_trigger(tmp_path: Path) -> None:
    """The trigger on bit 3 of a digital pod (bit 0 toggling every sample), the supply on a
    channel; chunks smaller than the file."""
    path = tmp_path / "scope.bin"
    write_bin(path, N, logic_bit=3, block=7_000)
    shunt, trigger, _ = _float32_channels()
    supply = profile(0, N)[2].astype(np.float32).astype(np.float64)
    capture = open_capture(path, CaptureOptions(current="CH1", voltage="CH3", trigger="D0-7",
                                                trigger_bit=3, chunk_samples=9_999))
    chunks = list(capture.chunks())
    assert [c.start_index for c in chunks[:3]] == [0, 9_999, 19_998]
    np.testing.assert_array_equal(np.concatenate([c.voltage_v for c in chunks]), supply)
    np.testing.assert_array_equal(np.concatenate([c.logic for c in chunks]),
                                  (trigger > LEVEL_V).astype(np.uint8))
    doc = analyze(path, "--voltage", "CH3", "--trigger", "D0-7",
                   "--trigger-bit", "3")
    check_windows(doc, true_energies(shunt, supply, trigger > LEVEL_V))


@pytest.mark.parametrize("order", ["LSB", "MSB"])
def test_isf_scaled_as_its_preamble_states(tmp_path: Path, order: str) -> None:
    """One channel: the trigger is the shunt's volts above 1 mV."""
    path = tmp_path / "ch1.isf"
    write_isf(path, N, block=25_000, order=order)
    volts = (isf_raw(0, N).astype(np.float64) - ISF_YOFF) * ISF_YMULT + ISF_YZERO
    doc = analyze(path, "--trigger", "CH1", "--trigger-level", "0.001", "--voltage", "3.0")
    check_windows(doc, true_energies(volts, 3.0, volts > 0.001))


@pytest.mark.parametrize(("version", "order"), [(b":WFM#003", "<"), (b":WFM#002", ">"),
                                               (b":WFM#001", "<")])
def test_tek_wfm_user_samples_scaled_as_stated(tmp_path: Path, version: bytes,
                                               order: str) -> None:
    """The pre- and post-charge points (full scale) are not samples; one channel, the
    trigger on itself."""
    path = tmp_path / "ch1.wfm"
    write_tek_wfm(path, N, version, order, block=25_000)
    volts = isf_raw(0, N).astype(np.float64) * ISF_YMULT + (ISF_YZERO - ISF_YOFF * ISF_YMULT)
    doc = analyze(path, "--trigger", "CH1", "--trigger-level", "0.001", "--voltage", "3.0")
    check_windows(doc, true_energies(volts, 3.0, volts > 0.001))
    # From the first user sample (the pre-charge would move it by 16 samples).
    assert doc["windows"][0]["start_s"] == pytest.approx(HIGH[0] * DT, abs=DT)


@pytest.mark.parametrize(("offset", "value", "expected"), [
    (2, b":WFM#004", "Tektronix .wfm version ':WFM#004' is not one the rig reads"),
    (72, b"\x03", "a FastFrame set (4 frames)"),
    (168 + 72, b"\x04", "curve format 4 with 2 bytes per point"),
    (168 + 76, b"\x01", "storage type 1"),
])
def test_bad_tek_wfm_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch, offset: int, value: bytes,
                                 expected: str) -> None:
    path = tmp_path / "ch1.wfm"
    write_tek_wfm(path, 1000)
    data = bytearray(path.read_bytes())
    data[offset:offset + len(value)] = value
    path.write_bytes(bytes(data))
    assert_refused(["analyze", str(path), "--trigger", "CH1", "--trigger-level", "0.001",
                    "--voltage", "3"], expected, tmp_path, capsys, monkeypatch)


def _spoil_version(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[2:4] = b"07"
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-10])


def _peak_detect(path: Path) -> None:
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 12 + 4, 2)  # waveform 1: type 2 (peak detect)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("spoil", "args", "expected"), [
    (_spoil_version, (), "Keysight/Agilent .bin version '07' is not one the rig reads"),
    (_truncate, (), "(truncated?)"),
    (_peak_detect, (), "is a peak detect record"),
    (lambda p: None, ("--voltage", "3"), "name the trigger channel with --trigger"),
    (lambda p: None, ("--trigger", "CH2", "--voltage", "3"),
     "is an analog channel: give its threshold with --trigger-level"),
    (lambda p: None, ("--trigger", "CH9", "--voltage", "3"), "no channel 'CH9' for the trigger"),
    (lambda p: None, ("--trigger", "CH2", "--trigger-level", "1.65", "--voltage", "D0-7"),
     "no analog channel 'D0-7' for the voltage"),
    (lambda p: None, ("--trigger", "CH2", "--trigger-level", "1.65", "--trigger-bit", "1",
                      "--voltage", "3"), "--trigger-bit applies to a logic one"),
])
def test_bad_bin_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch, spoil, args,
                             expected: str) -> None:
    path = tmp_path / "scope.bin"
    write_bin(path, 1000)
    spoil(path)
    assert_refused(["analyze", str(path), *(args or ("--trigger", "CH2", "--voltage", "3",
                                                     "--trigger-level", "1.65"))],
                   expected, tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize(("old", "new", "expected"), [
    (b"PT_FMT Y", b"PT_FMT ENV", "point format 'ENV'"),
    (b"#42000", b"#41000", "the curve block of 1000 bytes is not NR_PT 1000 × BYT_NR 2"),
    (b"ENCDG BIN", b"ENCDG ASC", "encoding 'ASC'"),
    (b"BYT_NR 2", b"BYT_NR 4", "BYT_NR 4"),
    (b"YMULT", b"YMUL", "the preamble has no YMU field"),
])
def test_bad_isf_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch, old: bytes, new: bytes,
                             expected: str) -> None:
    path = tmp_path / "ch1.isf"
    write_isf(path, 1000)
    path.write_bytes(path.read_bytes().replace(old, new, 1))
    assert_refused(["analyze", str(path), "--trigger", "CH1", "--trigger-level", "0.001",
                    "--voltage", "3"], expected, tmp_path, capsys, monkeypatch)
