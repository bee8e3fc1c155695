"""Rigol ``.wfm`` of the DS1000Z, DS6000, DS1000B and DS1000C, written as RigolWFM 1.6.0's ksy
states (tests/support/rigol_wfm.py), read by `rig analyze` by content: every window's energy
against numpy on the samples the file holds, scaled as RigolWFM's channel.py scales them; a
file the rig cannot read refused in one line. And a DS1000D told from a DS1000E by its logic
analyser header."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from support.bad_input import assert_refused
from support.rigol_wfm import (
    DS1000Z_DT,
    SP3,
    TIME_OFFSET_PS,
    ds1000b_raw,
    ds1000b_volts,
    ds1000z_bias,
    ds1000z_raw,
    ds1000z_volts,
    ds2000_raw,
    ds2000_volts,
    poke,
    raw,
    volts,
    write_ds1000b,
    write_ds1000c,
    write_ds1000z,
    write_ds2000,
    write_rigol_wfm,
)
from support.scope_files import DT, LEVEL_V, analyze, check_windows, true_energies

from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture

N = 60_000
ARGS = ("--current", "CH1", "--shunt-ohms", "1", "--voltage", "3.0", "--trigger", "CH2",
        "--trigger-level", str(LEVEL_V))
DS6000 = b"DS6104000000001"


def _z_volts(k: int, firmware: str, enabled: tuple[int, ...]) -> np.ndarray:
    bias = ds1000z_bias(k, firmware, len(enabled))
    return ds1000z_volts(ds1000z_raw(k, 0, N, bias), k, bias)


@pytest.mark.parametrize("firmware", ["00.04.04.SP4", SP3])
def test_ds1000z_two_channels_with_the_firmware_s_bias(tmp_path: Path, firmware: str) -> None:
    """Two channels alternate byte by byte; the volts' offset is the one RigolWFM gives the
    firmware the file states (00.04.04.SP3's two-channel records: 1/5 division on CH1's
    negative offset, none on CH2's zero one; one division otherwise)."""
    path = tmp_path / "DS1104Z.wfm"
    write_ds1000z(path, N, block=25_000, firmware=firmware)
    shunt, trigger = _z_volts(0, firmware, (0, 1)), _z_volts(1, firmware, (0, 1))
    check_windows(analyze(path, *ARGS), true_energies(shunt, 3.0, trigger > LEVEL_V,
                                                      DS1000Z_DT))
    capture = open_capture(path, CaptureOptions(current="CH1", voltage="CH2", trigger="CH2",
                                                trigger_level_v=LEVEL_V, chunk_samples=7_777))
    np.testing.assert_array_equal(np.concatenate([c.current_a for c in capture.chunks()]),
                                  shunt)
    np.testing.assert_array_equal(np.concatenate([c.voltage_v for c in capture.chunks()]),
                                  trigger)
    assert capture.current.origin_s == pytest.approx(TIME_OFFSET_PS * 1e-12 - N * DT / 2,
                                                     rel=1e-6)
    assert capture.period_s == DS1000Z_DT


def test_ds1000z_sp3_bias_only_on_two_channel_records(tmp_path: Path) -> None:
    """The same firmware's three-channel record (in groups of four bytes: CH4 CH3 CH2 CH1)
    keeps the one-division bias: CH1 read 0.8 division apart from the two-channel one."""
    path = tmp_path / "three.wfm"
    write_ds1000z(path, N, enabled=(0, 1, 3), firmware=SP3)
    capture = open_capture(path, CaptureOptions(current="CH4", voltage="CH1", trigger="CH2",
                                                trigger_level_v=LEVEL_V, chunk_samples=9_999))
    chunks = list(capture.chunks())
    np.testing.assert_array_equal(np.concatenate([c.voltage_v for c in chunks]),
                                  _z_volts(0, SP3, (0, 1, 3)))
    np.testing.assert_array_equal(np.concatenate([c.current_a for c in chunks]),
                                  _z_volts(3, SP3, (0, 1, 3)))
    assert ds1000z_bias(0, SP3, 3) - ds1000z_bias(0, SP3, 2) == pytest.approx(0.8e-3)


def test_ds1000z_first_and_fourth_channel_pair(tmp_path: Path) -> None:
    """CH1 and CH4 alone: CH1 (the first enabled) in the odd bytes, CH4 in the even ones."""
    path = tmp_path / "ch14.wfm"
    write_ds1000z(path, N, enabled=(0, 3), firmware=SP3)
    shunt, trigger = _z_volts(0, SP3, (0, 3)), _z_volts(3, SP3, (0, 3))
    doc = analyze(path, "--current", "CH1", "--shunt-ohms", "1", "--voltage", "3.0",
                  "--trigger", "CH4", "--trigger-level", str(LEVEL_V))
    check_windows(doc, true_energies(shunt, 3.0, trigger > LEVEL_V, DS1000Z_DT))


def test_ds1000z_one_channel_read_and_logic_record_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One analog channel alone is one run of bytes; an MSO's analog + logic record (RigolWFM
    rigol_1000z_logic.py's guess: logic bytes 0 and 2 of each four) is refused."""
    path = tmp_path / "one.wfm"
    write_ds1000z(path, N, enabled=(0,))
    shunt = _z_volts(0, "", (0,))
    doc = analyze(path, "--voltage", "3.0", "--trigger", "CH1", "--trigger-level", "0.001")
    check_windows(doc, true_energies(shunt, 3.0, shunt > 0.001, DS1000Z_DT))
    mso = tmp_path / "mso.wfm"
    write_ds1000z(mso, N, enabled=(0,), logic=True)
    assert_refused(["analyze", str(mso), *ARGS], "Rigol DS1000Z .wfm: an analog + logic "
                   "record", tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("inverted", [False, True])
def test_ds6000_channels_scaled_as_the_header_states(tmp_path: Path, inverted: bool) -> None:
    path = tmp_path / "DS6104.wfm"
    write_ds2000(path, N, block=25_000, inverted=inverted, serial=DS6000)
    shunt = ds2000_volts(ds2000_raw(0, 0, N, inverted), 0, inverted)
    trigger = ds2000_volts(ds2000_raw(1, 0, N), 1)
    check_windows(analyze(path, *ARGS), true_energies(shunt, 3.0, trigger > LEVEL_V))


def test_ds6000_channel_present_by_the_mask(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """CH2's bit of the mask at 64 cleared: CH2 is not in the file, whatever its own header
    says (RigolWFM channel.py, ``wfm6000``)."""
    path = tmp_path / "DS6104.wfm"
    write_ds2000(path, 1000, serial=DS6000)
    data = bytearray(path.read_bytes())
    data[64] = 0x01
    path.write_bytes(bytes(data))
    assert_refused(["analyze", str(path), *ARGS], "no channel 'CH2' for the trigger (the "
                   "channels are CH1)", tmp_path, capsys, monkeypatch)


def test_ds1000b_volts_with_the_probe_and_rigolwfm_s_offset(tmp_path: Path) -> None:
    """10X probes, their factor in the volts; the 1.12-division offset RigolWFM fits."""
    path = tmp_path / "DS1204B.wfm"
    write_ds1000b(path, N, block=25_000)
    shunt, trigger = ds1000b_volts(ds1000b_raw(0, 0, N), 0), ds1000b_volts(ds1000b_raw(1, 0, N), 1)
    check_windows(analyze(path, *ARGS), true_energies(shunt, 3.0, trigger > LEVEL_V))


@pytest.mark.parametrize("first", [0xA1, 0xA5])
def test_ds1000c_by_its_magic_or_its_size(tmp_path: Path, first: int) -> None:
    """``A1 A5 00 00``, or the DS1000E's ``A5 A5 00 00`` with 16 bytes of padding and a size
    that only a DS1000C's samples from 272 fit (RigolWFM wfm.py's rule)."""
    path = tmp_path / "DS1042C.wfm"
    write_ds1000c(path, N, block=25_000, first=first)
    shunt, trigger = volts(raw(0, 0, N), 0), volts(raw(1, 0, N), 1)
    check_windows(analyze(path, *ARGS), true_energies(shunt, 3.0, trigger > LEVEL_V))
    capture = open_capture(path, CaptureOptions(current="CH1", voltage=3.0, trigger="CH2",
                                                trigger_level_v=LEVEL_V))
    assert capture.kind == "Rigol DS1000C .wfm"


@pytest.mark.parametrize(("write", "kind"), [
    (write_ds1000z, "Rigol DS1000Z .wfm"),
    (lambda p, n: write_ds2000(p, n, serial=DS6000), "Rigol DS6000 .wfm"),
    (write_ds1000b, "Rigol DS1000B .wfm"),
    (lambda p, n: write_ds1000c(p, n, first=0xA5), "Rigol DS1000C .wfm"),
])
def test_recognised_by_content_under_any_name(tmp_path: Path, write, kind: str) -> None:
    """No format option, no telling name: the magic (and for a DS1000C with the DS1000E's
    magic, the size; for a DS6000 the serial) says which layout."""
    path = tmp_path / "capture.dat"
    write(path, N)
    doc = analyze(path, *ARGS)
    assert len(doc["windows"]) == 3
    capture = open_capture(path, CaptureOptions(current="CH1", voltage=3.0, trigger="CH2",
                                                trigger_level_v=LEVEL_V))
    assert capture.kind == kind


def test_ds1000d_told_by_its_logic_analyser_header(tmp_path: Path) -> None:
    """The pod off, but the logic analyser's active channel and mask set (as in RigolWFM's
    DS1102D-A.wfm; 0 in every DS1000E file): the stated scale already holds the 10X probe
    (RigolWFM channel.py ``ds1000d``), so it is not multiplied again."""
    path = tmp_path / "DS1102D.wfm"
    write_rigol_wfm(path, N, probe=10.0, ds1000d=True)
    shunt, trigger = volts(raw(0, 0, N), 0), volts(raw(1, 0, N), 1)
    check_windows(analyze(path, *ARGS), true_energies(shunt, 3.0, trigger > LEVEL_V))


@pytest.mark.parametrize("spoil", [lambda p: None, poke(124, bytes(18))])
def test_10x_probe_without_logic_analyser_settings_still_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, spoil) -> None:
    """The DS1000E's logic analyser header, or one whose positions differ but whose pod,
    active channel and mask are 0 (as an untouched DS1000D's may be): which model wrote it
    is not known, and the two scale a 10X probe differently."""
    path = tmp_path / "DS1052E.wfm"
    write_rigol_wfm(path, 1000, probe=10.0)
    spoil(path)
    assert_refused(["analyze", str(path), *ARGS], "no logic analyser setting in it, as in a "
                   "DS1000E's or an untouched DS1000D's", tmp_path, capsys, monkeypatch)


def _cut(count: int):
    return lambda p: p.write_bytes(p.read_bytes()[:-count])


@pytest.mark.parametrize(("write", "spoil", "expected"), [
    (write_ds1000z, poke(84, b"\xd0\x00"), "Rigol DS1000Z .wfm: header block 0100, "
                                           "structure size 0xd0 and sample mode 0 are not "
                                           "the layout the rig reads"),
    (write_ds1000z, poke(114, b"\x01"), "sample mode 1 are not the layout the rig reads"),
    (write_ds1000z, poke(112, b"\x01"), "Rigol DS1000Z .wfm: a peak detect record"),
    (write_ds1000z, poke(120, struct.pack("<f", 0.0)), "sample rate 0.0 Hz is not > 0"),
    (write_ds1000z, _cut(1), "Rigol DS1000Z .wfm: CH1's 1000 points need bytes up to 3088, "
                             "the file has 3087 (truncated?)"),
    (write_ds1000z, lambda p: p.write_bytes(p.read_bytes()[:200]),
     "Rigol DS1000Z .wfm: the file ends inside its header"),
    (write_ds1000b, _cut(1), "Rigol DS1000B .wfm: CH2's 1000 points need bytes up to 2420, "
                             "the file has 2419 (truncated?)"),
    (write_ds1000c, _cut(1), "Rigol DS1000C .wfm: CH2's 1000 points need bytes up to 2256, "
                             "the file has 2255 (truncated?)"),
    (write_ds1000c, poke(142, b"\x04"), "Rigol DS1000C .wfm: alternate trigger"),
    (lambda p, n: write_ds2000(p, n, serial=DS6000), _cut(1),
     "Rigol DS6000 .wfm: CH2's 1000 points need bytes up to 3044, the file has 3043"),
    (lambda p, n: write_ds2000(p, n, serial=DS6000, peak=True), lambda p: None,
     "Rigol DS6000 .wfm: a peak detect record"),
])
def test_bad_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch, write, spoil,
                              expected: str) -> None:
    path = tmp_path / "scope.wfm"
    write(path, 1000)
    spoil(path)
    assert_refused(["analyze", str(path), *ARGS], expected, tmp_path, capsys, monkeypatch)
