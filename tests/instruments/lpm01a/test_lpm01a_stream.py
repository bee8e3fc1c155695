"""The STM32 Power Shield's numbers and data stream, by known answers: the examples the
board's own ``help`` gives (``6409-07`` and ``52A0`` are both 640.9 µA, as MLPerf Tiny's
runner carries the text), and streams built byte by byte as the board frames them
(Zephyr's ``scripts/pm/stm32l562e_dk/PowerShield.py``: ``F0 F3`` timestamp, ``F0 F4 FF FF``
end), decoded whatever the reads' split."""
from __future__ import annotations

import numpy as np
import pytest

from energyrig.instruments.base import Resolution
from energyrig.instruments.lpm01a.processing import (
    D7_BIT,
    MAX_EXPONENT,
    StreamDecoder,
    decode_ascii,
    decode_words,
    encode_ascii,
    encode_words,
    end_message,
    resolution_ranges,
    text_message,
    timestamp_message,
)
from energyrig.instruments.lpm01a.protocol import (
    Reply,
    error_detail,
    format_millis,
    format_rate,
    parse_reply,
    parse_value,
)


@pytest.mark.parametrize(("text", "value"), [
    ("3300m", 3.3), ("100k", 1e5), ("100u", 1e-4), ("2-3", 2e-3), ("6409-07", 6.409e-4),
    ("10", 10.0), ("3292-03", 3.292)])
def test_numbers_read_as_the_board_writes_them(text: str, value: float) -> None:
    assert parse_value(text) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text", ["", "3.3V", "m", "1e-3", "100kk"])
def test_a_word_that_is_no_number_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a PowerShield number"):
        parse_value(text)


def test_settings_are_written_as_the_board_takes_them() -> None:
    assert format_millis(3.3) == "3300m" and format_millis(1.8) == "1800m"
    assert [format_rate(r) for r in (100_000, 50_000, 1_000, 500, 1)] == [
        "100k", "50k", "1k", "500", "1"]


def test_replies_are_told_apart_from_other_lines() -> None:
    assert parse_reply("PowerShield > ack volt get 3292-03", "volt get") == Reply(
        "volt get", True, "3292-03")
    assert parse_reply("PowerShield > error freq 3k", "freq 3k") == Reply("freq 3k", False)
    assert parse_reply("ack htc", "htc") == Reply("htc", True)
    # another command's reply, or one merely starting alike, is not this one's
    assert parse_reply("PowerShield > ack volt 3300m", "volt get") is None
    assert parse_reply("PowerShield > ack htcx", "htc") is None
    assert error_detail("PowerShield > Error detail: bad argument") == "bad argument"
    assert error_detail("PowerShield > ack htc") is None


def test_the_help_texts_examples_decode_to_640_9_microamps() -> None:
    assert decode_words(bytes.fromhex("52A0"))[0] == 0x2A0 * 16.0 ** -5
    assert decode_words(bytes.fromhex("52A0"))[0] == pytest.approx(640.9e-6, abs=0.05e-6)
    assert decode_ascii(b"6409-07\r\n")[0] == pytest.approx(640.9e-6, rel=1e-12)
    assert encode_words(np.array([640.9e-6])) == bytes.fromhex("52A0")
    assert encode_ascii(np.array([640.9e-6])) == b"6409-07\r\n"


def test_encoding_keeps_12_significant_bits_and_never_the_metadata_exponent() -> None:
    i = np.geomspace(1e-9, 0.05, 2000)
    raw = encode_words(i)
    back = decode_words(raw)
    exponents = np.frombuffer(raw, dtype=">u2") >> 12
    assert exponents.max() <= MAX_EXPONENT
    # the largest exponent whose mantissa fits: within half a step, under 1/512 of the value
    step = 16.0 ** -exponents.astype(np.float64)
    assert np.all(np.abs(back - i) <= step / 2 + 1e-18)
    assert np.all(np.abs(back - i) <= i / 512 + 1e-18)
    assert np.allclose(decode_ascii(encode_ascii(i)), i, rtol=5e-4)


def test_the_resolution_is_the_step_of_the_number_each_current_is_sent_as() -> None:
    binary = Resolution(resolution_ranges("bin_hexa"), "test")
    assert binary.step_a(3.3e-3) == 16.0 ** -5   # 3460 x 16^-5
    assert binary.step_a(5e-3) == 16.0 ** -4     # 328 x 16^-4
    assert binary.step_a(3e-6) == 16.0 ** -7     # 805 x 16^-7
    i = np.array([3e-6, 3.3e-3, 5e-3, 40e-3])
    assert np.all(np.abs(decode_words(encode_words(i)) - i)
                  <= [binary.step_a(x) / 2 for x in i])
    text = Resolution(resolution_ranges("ascii_dec"), "test")
    assert text.step_a(640.9e-6) == pytest.approx(1e-7) and text.step_a(3.3e-3) == (
        pytest.approx(1e-6))


def _stream() -> tuple[bytes, np.ndarray]:
    """A binary stream of 300 samples at 100 kHz: a timestamp at 0 ms, a rise of D7 before
    sample 100, a fall before 200, a timestamp at 3 ms after only 250 samples (50 lost),
    then 50 more and the end, with its summary text."""
    i = np.linspace(1e-6, 5e-3, 300)
    w = encode_words(i)
    data = (timestamp_message(0, 0, "bin_hexa") + w[:200] + text_message("event 1 ris", "bin_hexa")
            + w[200:400] + text_message("event 2 fal", "bin_hexa") + w[400:500]
            + timestamp_message(3, 12, "bin_hexa") + w[500:] + end_message("bin_hexa")
            + b"\r\nPowerShield > Acquisition completed\r\n")
    return data, decode_words(w)


def _decode(data: bytes, step: int, fmt: str = "bin_hexa") -> tuple[StreamDecoder, list]:
    decoder = StreamDecoder(fmt, 100_000, 3.0)
    chunks = [c for k in range(0, len(data), step)
              if (c := decoder.feed(data[k:k + step])) is not None]
    return decoder, chunks


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, 100_000])
def test_a_binary_stream_decodes_alike_however_it_is_split(step: int) -> None:
    data, current = _stream()
    decoder, chunks = _decode(data, step)
    assert np.array_equal(np.concatenate([c.current_a for c in chunks]), current)
    logic = np.concatenate([c.logic for c in chunks])
    assert np.array_equal(np.flatnonzero(np.diff(logic.astype(int))) + 1, [100, 200])
    assert np.all(logic[100:200] == 1 << D7_BIT) and not logic[:100].any()
    # the samples the 3 ms timestamp says were taken but never came: a gap before sample 250
    index = np.concatenate([c.indices() for c in chunks])
    assert index[249] == 249 and index[250] == 300 and index[-1] == 349
    assert decoder.stats.lost == 50 and decoder.stats.events == 2
    assert decoder.stats.timestamps == 2 and decoder.ended
    assert b"Acquisition completed" in decoder.tail


def test_an_ascii_stream_decodes_to_the_same_samples_and_marks() -> None:
    i = np.array([640.9e-6, 3.3e-3, 2.5e-6, 1.0e-3])
    data = (timestamp_message(0, 0, "ascii_dec") + encode_ascii(i[:2])
            + text_message("event 1 ris", "ascii_dec") + encode_ascii(i[2:])
            + b"PowerShield > Acquisition completed\r\n")
    assert data.startswith(b"TimeStamp: 000s 000ms, buff 00%\r\n")
    decoder, chunks = _decode(data, 5, "ascii_dec")
    assert np.allclose(np.concatenate([c.current_a for c in chunks]), i, rtol=5e-4)
    assert list(np.concatenate([c.logic for c in chunks]) >> D7_BIT) == [0, 0, 1, 1]
    assert decoder.completed and decoder.ended


def test_a_word_with_the_reserved_exponent_is_marked_corrupt() -> None:
    decoder = StreamDecoder("bin_hexa", 100_000, 3.0)
    chunk = decoder.feed(encode_words(np.array([1e-3])) + bytes.fromhex("F123")
                         + encode_words(np.array([2e-3])))
    assert chunk is not None and chunk.corrupt is not None
    assert list(chunk.corrupt) == [False, True, False] and decoder.stats.corrupt == 1


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown PowerShield data format 'hex'"):
        StreamDecoder("hex", 100_000, 3.0)
