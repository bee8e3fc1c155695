"""Rigol ``.wfm`` files (DS1000E/D, DS2000, DS4000), written as the layout RigolWFM's ksy states
(tests/support/rigol_wfm.py), read by `rig analyze` by content: every window's energy
against numpy on the samples the file holds, scaled as RigolWFM's channel.py scales them;
a file the rig cannot read refused in one line (the other models: test_rigol_wfm_more.py)."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from support.bad_input import assert_refused
from support.rigol_wfm import (
    DS2000_Z_PT,
    TIME_OFFSET_PS,
    ds2000_raw,
    ds2000_volts,
    poke,
    raw,
    volts,
    write_ds2000,
    write_ds4000,
    write_rigol_wfm,
)
from support.scope_files import DT, HIGH, LEVEL_V, analyze, check_windows, true_energies

from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture

N = 60_000
ARGS = ("--current", "CH1", "--voltage", "3.0", "--trigger", "CH2", "--trigger-level",
        str(LEVEL_V))


def test_ds1000e_channels_scaled_as_the_header_states(tmp_path: Path) -> None:
    path = tmp_path / "DS1102E.wfm"
    write_rigol_wfm(path, N, block=25_000)
    shunt, trigger = volts(raw(0, 0, N), 0), volts(raw(1, 0, N), 1)
    doc = analyze(path, *ARGS)
    check_windows(doc, true_energies(shunt, 3.0, trigger > LEVEL_V))


def test_ds1000e_streamed_with_its_time_base(tmp_path: Path) -> None:
    """Chunks smaller than the record; sample 0 half the memory depth before the trigger's
    time offset."""
    path = tmp_path / "DS1102E.wfm"
    write_rigol_wfm(path, N)
    capture = open_capture(path, CaptureOptions(current="CH1", voltage="CH2", trigger="CH2",
                                                trigger_level_v=LEVEL_V, chunk_samples=7_777))
    assert capture.period_s == pytest.approx(DT, rel=1e-7)
    assert capture.current.origin_s == pytest.approx(TIME_OFFSET_PS * 1e-12 - N * DT / 2,
                                                     rel=1e-6)
    chunks = list(capture.chunks())
    assert [c.start_index for c in chunks[:3]] == [0, 7_777, 15_554]
    np.testing.assert_array_equal(np.concatenate([c.current_a for c in chunks]),
                                  volts(raw(0, 0, N), 0))
    np.testing.assert_array_equal(np.concatenate([c.voltage_v for c in chunks]),
                                  volts(raw(1, 0, N), 1))


def test_ds1000d_logic_pod_scale_without_the_probe(tmp_path: Path) -> None:
    """A file with the logic analyser on is a DS1000D's: its stated scale already holds the
    10X probe (RigolWFM channel.py ``ds1000d``); the logic words after the channels are not
    samples."""
    path = tmp_path / "DS1102D.wfm"
    write_rigol_wfm(path, N, probe=10.0, logic_pod=True)
    shunt, trigger = volts(raw(0, 0, N), 0), volts(raw(1, 0, N), 1)
    doc = analyze(path, *ARGS)
    check_windows(doc, true_energies(shunt, 3.0, trigger > LEVEL_V))


def test_roll_mode_tail_is_not_samples(tmp_path: Path) -> None:
    """In roll mode the last roll_stop + 2 bytes of each channel are not samples; CH2
    starts after CH1's full memory depth."""
    path = tmp_path / "roll.wfm"
    write_rigol_wfm(path, N, roll_stop=98)
    capture = open_capture(path, CaptureOptions(current="CH1", voltage=3.0, trigger="CH2",
                                                trigger_level_v=LEVEL_V))
    assert capture.samples == N - 100
    got = np.concatenate([c.logic for c in capture.chunks()])
    np.testing.assert_array_equal(got, (volts(raw(1, 0, N - 100), 1) > LEVEL_V)
                                  .astype(np.uint8))


def test_one_channel_file_trigger_on_itself(tmp_path: Path) -> None:
    path = tmp_path / "ch1.wfm"
    write_rigol_wfm(path, N, ch2=False)
    shunt = volts(raw(0, 0, N), 0)
    doc = analyze(path, "--voltage", "3.0", "--trigger", "CH1", "--trigger-level", "0.001")
    check_windows(doc, true_energies(shunt, 3.0, shunt > 0.001))
    assert [w["samples"] for w in doc["windows"]] == [HIGH[1] - HIGH[0]] * 3


@pytest.mark.parametrize("inverted", [False, True])
def test_ds2000_channels_scaled_as_the_header_states(tmp_path: Path, inverted: bool) -> None:
    """CH1 inverted on the scope: its codes fall as the volts rise, the stated scale's sign
    turns them back."""
    path = tmp_path / "DS2072A.wfm"
    write_ds2000(path, N, block=25_000, inverted=inverted)
    shunt = ds2000_volts(ds2000_raw(0, 0, N, inverted), 0, inverted)
    trigger = ds2000_volts(ds2000_raw(1, 0, N), 1)
    doc = analyze(path, *ARGS)
    check_windows(doc, true_energies(shunt, 3.0, trigger > LEVEL_V))
    capture = open_capture(path, CaptureOptions(current="CH1", voltage=3.0, trigger="CH2",
                                                trigger_level_v=LEVEL_V))
    assert capture.current.origin_s == pytest.approx(
        TIME_OFFSET_PS * 1e-12 + (DS2000_Z_PT - N / 2) * DT, rel=1e-6)


@pytest.mark.parametrize("inverted", [False, True])
def test_ds4000_channels_at_32_codes_per_division(tmp_path: Path, inverted: bool) -> None:
    path = tmp_path / "DS4024.wfm"
    write_ds4000(path, N, block=25_000, inverted=inverted)
    shunt = ds2000_volts(ds2000_raw(0, 0, N, inverted, 32.0), 0, inverted, 32.0)
    trigger = ds2000_volts(ds2000_raw(1, 0, N, False, 32.0), 1, False, 32.0)
    doc = analyze(path, *ARGS)
    check_windows(doc, true_energies(shunt, 3.0, trigger > LEVEL_V))
    capture = open_capture(path, CaptureOptions(current="CH1", voltage=3.0, trigger="CH2",
                                                trigger_level_v=LEVEL_V))
    assert capture.current.origin_s == pytest.approx(TIME_OFFSET_PS * 1e-12 - N / 2 * DT,
                                                     rel=1e-6)


def test_ds2000_interwoven_channel_streamed_from_both_halves(tmp_path: Path) -> None:
    """One channel sampled into two channels' memory: even samples in the first half, odd
    in the second; chunks of an odd length start on odd samples too."""
    path = tmp_path / "DS2072A-one.wfm"
    write_ds2000(path, N, block=20_000, interwoven=True)
    shunt = ds2000_volts(ds2000_raw(0, 0, N), 0)
    capture = open_capture(path, CaptureOptions(current="CH1", voltage=3.0, trigger="CH1",
                                                trigger_level_v=0.001, chunk_samples=7_777))
    assert capture.samples == N
    np.testing.assert_array_equal(np.concatenate([c.current_a for c in capture.chunks()]),
                                  shunt)
    doc = analyze(path, "--voltage", "3.0", "--trigger", "CH1", "--trigger-level", "0.001")
    check_windows(doc, true_energies(shunt, 3.0, shunt > 0.001))


@pytest.mark.parametrize(("spoil", "expected"), [
    (poke(44, struct.pack("<f", 10.0)), "CH1 has a 10X probe, which a DS1000E leaves out of "
                                          "the stated scale"),
    (poke(142, b"\x04"), "alternate trigger (each channel on its own time base)"),
    (poke(100, struct.pack("<f", 0.0)), "sample rate 0.0 Hz is not > 0"),
    (lambda p: p.write_bytes(p.read_bytes()[:-10]), "CH2's 1000 points need bytes up to 2276, "
                                                   "the file has 2266 (truncated?)"),
    (lambda p: p.write_bytes(p.read_bytes()[:200]), "the file ends inside its header"),
])
def test_bad_rigol_wfm_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch, spoil,
                                   expected: str) -> None:
    path = tmp_path / "scope.wfm"
    write_rigol_wfm(path, 1000)
    spoil(path)
    assert_refused(["analyze", str(path), *ARGS], expected, tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize(("options", "spoil", "expected"), [
    ({"peak": True}, lambda p: None, "Rigol DS2000 .wfm: a peak detect record"),
    ({}, lambda p: p.write_bytes(p.read_bytes()[:-1]), "CH2's 1000 points need bytes up to "
                                                       "3044, the file has 3043 (truncated?)"),
    ({"interwoven": True}, poke(72, struct.pack("<I", 0)), "an interwoven record without "
                                                           "both halves"),
])
def test_bad_ds2000_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch, options, spoil,
                                expected: str) -> None:
    path = tmp_path / "scope.wfm"
    write_ds2000(path, 1000, **options)
    spoil(path)
    assert_refused(["analyze", str(path), *ARGS], expected, tmp_path, capsys, monkeypatch)


def test_ds4000_truncated_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "DS4024.wfm"
    write_ds4000(path, 1000)
    path.write_bytes(path.read_bytes()[:-1])
    assert_refused(["analyze", str(path), *ARGS], "Rigol DS4000 .wfm: CH2's 1000 points need "
                   "bytes up to 3024, the file has 3023 (truncated?)", tmp_path, capsys,
                   monkeypatch)


def test_recognised_by_content_under_any_name(tmp_path: Path) -> None:
    """No format option: a DS1000E file named .dat is a Rigol .wfm by its magic."""
    path = tmp_path / "capture.dat"
    write_rigol_wfm(path, N)
    shunt, trigger = volts(raw(0, 0, N), 0), volts(raw(1, 0, N), 1)
    check_windows(analyze(path, *ARGS), true_energies(shunt, 3.0, trigger > LEVEL_V))
