"""PPK2 calibration metadata: parsing as ppk2-api does, split reads, and writing it back."""
from __future__ import annotations

import dataclasses

import pytest
from support.paths import DATA
from ppk2_api.ppk2_api import PPK2_API

from energyrig.errors import InstrumentError
from energyrig.instruments.ppk2.metadata import (
    MetadataAccumulator,
    Ppk2Calibration,
    format_metadata,
    parse_metadata,
)
from support.ppk2_reference import reference_api

DEVICE_TEXT = (DATA / "ppk2-metadata.txt").read_text()


def test_parse_device_text():
    cal = parse_metadata(DEVICE_TEXT)
    assert cal.r == (1004.5699, 102.1842, 10.3829, 0.9723, 0.0567)
    assert cal.gs[0] == 0.0 and cal.gs[4] == 0.1094
    assert cal.o == (151.8414, 103.3884, 87.8562, 66.8046, 118.2776)
    assert cal.s[0] == -0.000000028 and cal.i[4] == -0.007002169
    assert cal.ug == (1.0, 1.0, 0.98, 1.02, 1.0)
    assert (cal.calibrated, cal.vdd_mv, cal.hw, cal.mode, cal.ia) == (False, 3000, 9173, 2, 56)


def test_same_modifiers_as_ppk2_api_parser():
    cal = parse_metadata(DEVICE_TEXT)
    with reference_api(DEVICE_TEXT, 3000) as api:
        assert api.modifiers == cal.to_ppk2_api_modifiers()


def test_crlf_line_ends_and_text_after_end():
    text = DEVICE_TEXT.replace("\n", "\r\n") + "\x00\x41garbage"
    assert parse_metadata(text) == parse_metadata(DEVICE_TEXT)


def test_zero_shunt_keeps_default_like_ppk2_api(caplog):
    text = DEVICE_TEXT.replace("R2: 10.3829", "R2: 0.0000")
    cal = parse_metadata(text)
    with reference_api(text, 3000) as api:
        assert cal.r[2] == api.modifiers["R"]["2"] == Ppk2Calibration().r[2]
    assert "R2 is 0" in caplog.text


def test_nan_from_uncalibrated_eeprom_keeps_default(caplog):
    cal = parse_metadata(DEVICE_TEXT.replace("GI3: 0.9362", "GI3: -nan"))
    assert cal.gi[3] == 1.0
    assert "GI3" in caplog.text


def test_unknown_keys_are_ignored_whatever_their_value():
    text = DEVICE_TEXT.replace("IA: 56\n", "IA: 56\nFW: 4.0.0\nR7: 1.0\n")
    assert parse_metadata(text) == parse_metadata(DEVICE_TEXT)


def test_missing_keys_take_defaults():
    cal = parse_metadata("R0: 1000.0\nEND\n")
    assert cal == dataclasses.replace(Ppk2Calibration(), r=(1000.0,) + Ppk2Calibration().r[1:])
    assert cal.hw is None and cal.calibrated is None


@pytest.mark.parametrize("text, problem", [
    ("R0: 1000.0\n", "without an END"),
    ("R0 1000.0\nEND\n", "not 'KEY: VALUE'"),
    ("R0: 1000,0\nEND\n", "'1000,0' is not a number"),
])
def test_malformed_metadata_names_the_source_and_problem(text, problem):
    with pytest.raises(InstrumentError, match=problem) as info:
        parse_metadata(text, source="/dev/ttyACM0")
    assert str(info.value).startswith("/dev/ttyACM0: ")


def test_every_split_into_two_reads_parses_like_the_whole():
    data = DEVICE_TEXT.encode() + b"\x12\x34\x56\x78"  # first sample word right after END
    whole = parse_metadata(DEVICE_TEXT)
    for cut in range(1, len(data)):
        acc = MetadataAccumulator()
        complete = acc.feed(data[:cut])
        assert complete == (cut >= len(DEVICE_TEXT))
        received = data[:cut] if complete else data
        if not complete:
            assert acc.feed(data[cut:])
        assert acc.calibration() == whole
        assert acc.text == DEVICE_TEXT and acc.rest == received[len(DEVICE_TEXT):]


def test_accumulator_byte_by_byte_and_limits():
    acc = MetadataAccumulator()
    results = [acc.feed(bytes([b])) for b in DEVICE_TEXT.encode()]
    assert results[-1] and not any(results[:-1]) and acc.done
    with pytest.raises(InstrumentError, match="already complete"):
        acc.feed(b"x")
    runaway = MetadataAccumulator(source="/dev/ttyACM1", max_bytes=100)
    with pytest.raises(InstrumentError, match="/dev/ttyACM1: no END after"):
        runaway.feed(b"\xff" * 101)
    with pytest.raises(InstrumentError, match="not complete"):
        MetadataAccumulator().text  # noqa: B018


class _ScriptedPort:
    """What a serial port shows ppk2-api's metadata reader: successive reads of what has
    arrived (``in_waiting``), here the device's text split in two USB transfers."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = list(pieces)

    @property
    def in_waiting(self) -> int:
        return len(self.pieces[0]) if self.pieces else 0

    def read(self, n: int) -> bytes:
        return self.pieces.pop(0) if self.pieces else b""

    def close(self) -> None:
        pass


def test_split_metadata_loses_ppk2_apis_range0_offset_but_not_ours():
    data = DEVICE_TEXT.encode()
    cut = data.index(b"O0: 151") + len("O0: 15")  # the transfer ends inside the O0 line
    pieces = [data[:cut], data[cut:]]

    api = PPK2_API.__new__(PPK2_API)  # only the reader, no port: give it the scripted one
    defaults = Ppk2Calibration()
    api.modifiers = defaults.to_ppk2_api_modifiers()
    api.ser = _ScriptedPort(pieces)
    api._parse_metadata(api._read_metadata())
    api.ser = None
    assert api.modifiers["O"]["0"] == 0  # ppk2-api: O0 silently lost (and R, GS, GI with it)
    assert api.modifiers["R"]["0"] == defaults.r[0]

    acc = MetadataAccumulator()
    assert [acc.feed(p) for p in pieces] == [False, True]
    cal = acc.calibration()
    assert cal.o[0] == 151.8414 and cal == parse_metadata(DEVICE_TEXT)


def test_format_reproduces_the_device_text_exactly():
    assert format_metadata(parse_metadata(DEVICE_TEXT)) == DEVICE_TEXT


def test_format_then_parse_is_lossless_beyond_device_precision():
    cal = Ppk2Calibration(r=(1003.35061234, 101.5, 10.3, 0.96, 0.0564), o=(1 / 3, 0, 0, 0, 0),
                          s=(4.8e-8, 5.96e-07, 1e-12, 0, 0.002940743), calibrated=True, hw=7)
    text = format_metadata(cal)
    assert "R1: 101.5000\n" in text and "Calibrated: 1\n" in text and "VDD" not in text
    assert "R0: 1003.35061234\n" in text  # more precise than the firmware prints: kept exact
    assert parse_metadata(text) == cal


def test_calibration_needs_five_values_per_range():
    with pytest.raises(ValueError, match="R needs 5"):
        Ppk2Calibration(r=(1.0, 2.0))
