"""PPK2 word decoding: equality with ppk2-api on the same bytes, streaming, gaps, saturation,
and the raw stream file format (.ppk2raw)."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from support.paths import DATA

from energyrig.capture import Chunk
from energyrig.errors import CaptureError, InstrumentError
from energyrig.instruments.ppk2.decode import (
    ADC_FULL_SCALE,
    Ppk2Decoder,
    decode_stream,
    encode_words,
    range_steps,
)
from energyrig.instruments.ppk2.metadata import Ppk2Calibration, parse_metadata
from energyrig.instruments.ppk2.rawfile import (
    Ppk2RawCapture,
    Ppk2StreamWriter,
    header_line,
    open_ppk2,
)
from support.ppk2_reference import reference_api

DEVICE_TEXT = (DATA / "ppk2-metadata.txt").read_text()
CAL = parse_metadata(DEVICE_TEXT)
VDD_MV = 3300


def words_of(adc, rng_code, counter, logic=0) -> np.ndarray:
    adc, rng_code, counter, logic = (np.asarray(a, dtype=np.uint32) for a in (adc, rng_code, counter, logic))
    return (adc | (rng_code << 14) | ((counter & 63) << 18) | (logic << 24)).astype(np.uint32)


def random_words(n: int, seed: int, run: int = 1) -> np.ndarray:
    """Random ADC codes, logic bytes and range codes 0..7 (held for ``run`` samples),
    with an unbroken counter."""
    rng = np.random.default_rng(seed)
    codes = np.repeat(rng.integers(0, 8, n // run + 1), run)[:n]
    return words_of(rng.integers(0, ADC_FULL_SCALE + 1, n), codes, np.arange(n),
                    rng.integers(0, 256, n))


def decode_all(words: np.ndarray, **kw) -> list[Chunk]:
    return list(decode_stream([words.tobytes()], CAL, VDD_MV, **kw))


def ppk2_api_unfiltered(words: np.ndarray) -> np.ndarray:
    """ppk2-api's get_adc_result with its spike-filter state cleared before every sample,
    i.e. its conversion alone."""
    out = np.empty(len(words))
    with reference_api(DEVICE_TEXT, VDD_MV) as api:
        for k, w in enumerate(words.tolist()):
            api.prev_range, api.after_spike = None, 0
            out[k] = api.get_adc_result(min((w >> 14) & 7, 4), (w & 0x3FFF) * 4)
    return out


def test_conversion_equals_ppk2_api_bit_for_bit_over_all_ranges():
    words = random_words(30_000, seed=1)
    (chunk,) = decode_all(words)
    expected = ppk2_api_unfiltered(words)
    assert np.array_equal(chunk.current_a, expected)  # exact, not approximately
    assert np.array_equal(chunk.logic, (words >> 24).astype(np.uint8))
    assert chunk.voltage_v == VDD_MV / 1000
    assert chunk.period_s == 1e-5


@pytest.mark.parametrize("run", [1, 2, 5, 40])
def test_spike_filter_equals_ppk2_api_get_samples(run):
    # ppk2-api always filters: get_samples is the filtered reference. Runs of the same range
    # exercise the "after spike" countdown and the range-4 hold.
    words = random_words(20_000, seed=run, run=run)
    raw = words.tobytes()
    cuts = [0, 4, 4099, 4099 + 1001, 40_000, len(raw)]  # blocks that split words
    with reference_api(DEVICE_TEXT, VDD_MV) as api:
        expected = np.concatenate([api.get_samples(raw[a:b])[0] for a, b in zip(cuts, cuts[1:])])
    chunks = list(decode_stream([raw[a:b] for a, b in zip(cuts, cuts[1:])], CAL, VDD_MV, spike_filter=True))
    got = np.concatenate([c.current_a for c in chunks]) * 10**6  # get_samples reports µA
    assert np.array_equal(got, expected)
    unfiltered = np.concatenate([c.current_a for c in decode_all(words)]) * 10**6
    assert not np.array_equal(unfiltered, expected)  # the filter really changes samples


def test_default_calibration_and_ranges_above_four_clamp_like_ppk2_api():
    words = words_of([0, 100, 16383, 16383], [5, 6, 7, 4], [0, 1, 2, 3])
    dec = Ppk2Decoder(Ppk2Calibration(), VDD_MV)
    chunk = dec.feed(words.tobytes())
    as_four = Ppk2Decoder(Ppk2Calibration(), VDD_MV).feed(words_of([0, 100, 16383, 16383], 4, [0, 1, 2, 3]).tobytes())
    assert np.array_equal(chunk.current_a, as_four.current_a)


@pytest.mark.parametrize("block", [1, 2, 3, 5, 7, 4096, 4097])
def test_blocks_that_split_words_decode_like_one_block(block):
    words = random_words(3_000, seed=7)
    raw = words.tobytes()
    dec = Ppk2Decoder(CAL, VDD_MV)
    chunks = [c for a in range(0, len(raw), block) if (c := dec.feed(raw[a:a + block])) is not None]
    (whole,) = decode_all(words)
    assert np.array_equal(np.concatenate([c.current_a for c in chunks]), whole.current_a)
    assert np.array_equal(np.concatenate([c.logic for c in chunks]), whole.logic)
    starts = [c.start_index for c in chunks]
    assert starts == list(np.cumsum([0] + [len(c) for c in chunks[:-1]]))
    assert dec.pending_bytes == 0 and dec.next_index == len(words)


def test_feed_accepts_numpy_memoryview_and_bytearray():
    words = random_words(100, seed=3)
    ref = decode_all(words)[0].current_a
    for data in (words, memoryview(words.tobytes()), bytearray(words.tobytes())):
        assert np.array_equal(Ppk2Decoder(CAL, VDD_MV).feed(data).current_a, ref)


def test_counter_gaps_become_chunk_gaps_with_the_count_lost():
    n = 1000
    full = random_words(n, seed=11)
    dropped = {100: 5, 500: 1, 700: 40}  # position in the received stream -> samples lost
    keep = np.ones(n, dtype=bool)
    for pos, lost in dropped.items():
        first = pos + sum(v for p, v in dropped.items() if p < pos)
        keep[first:first + lost] = False
    received = full[keep]
    (chunk,) = decode_all(received)
    assert chunk.gaps.tolist() == [[p, lost] for p, lost in dropped.items()]
    assert chunk.lost == 46 and chunk.end_index == len(received) + 46
    assert np.array_equal(chunk.current_a, decode_all(full)[0].current_a[keep])


def test_gap_across_a_block_boundary_lands_at_position_zero(caplog):
    caplog.set_level(logging.INFO)
    received = np.concatenate([random_words(64, seed=1), random_words(200, seed=1)[74:]])  # 10 lost
    dec = Ppk2Decoder(CAL, VDD_MV, start_index=1000, source="/dev/ttyACM0")
    first = dec.feed(received[:64].tobytes())
    second = dec.feed(received[64:].tobytes())
    assert first.gaps.shape == (0, 2)
    assert second.gaps.tolist() == [[0, 10]]
    assert second.start_index == 1064 and dec.next_index == 1000 + 64 + 10 + 126
    assert dec.samples_lost == 10
    assert "/dev/ttyACM0: 10 samples lost (1 counter jumps) between samples 1064 and 1200" in caplog.text


def test_counter_ambiguity_modulo_64():
    # same counter twice reads as 63 lost; 64 lost is invisible; 70 lost reads as 6
    counters = [0, 0, 1, 66, 66 + 71]
    (chunk,) = decode_all(words_of(0, 1, counters))
    assert chunk.gaps.tolist() == [[1, 63], [4, 6]]


def test_a_stream_of_only_gaps_overflows_the_gap_buffer_correctly(caplog):
    n = 1000  # every word repeats the counter: n - 1 gaps, far more than the 64-row buffer
    caplog.set_level(logging.ERROR)
    (chunk,) = decode_all(words_of(np.arange(n) % 100, 2, np.zeros(n)))
    assert chunk.gaps.shape == (n - 1, 2)
    assert chunk.gaps[:, 0].tolist() == list(range(1, n))
    assert set(chunk.gaps[:, 1].tolist()) == {63}
    assert np.array_equal(chunk.current_a, decode_all(words_of(np.arange(n) % 100, 2, np.arange(n)))[0].current_a)


def test_saturation_is_full_scale_in_the_top_range_only():
    words = words_of([ADC_FULL_SCALE, ADC_FULL_SCALE, ADC_FULL_SCALE, ADC_FULL_SCALE - 1, 0],
                     [4, 3, 6, 4, 0], np.arange(5))
    (chunk,) = decode_all(words)
    assert chunk.saturated.tolist() == [True, False, True, False, False]


def test_encode_words_round_trips_within_one_code():
    amps = np.geomspace(1e-7, 0.5, 5000)
    words = encode_words(amps, CAL, VDD_MV, logic=3, counter_start=2**40 + 62)
    (chunk,) = decode_all(words)
    codes = words & 0x3FFF
    one_code_up = Ppk2Decoder(CAL, VDD_MV).feed((words + (codes < ADC_FULL_SCALE)).astype(np.uint32).tobytes())
    lsb = np.abs(one_code_up.current_a - chunk.current_a)
    assert np.all(np.abs(chunk.current_a - amps) <= 0.5 * lsb + 1e-15)
    assert chunk.gaps.shape == (0, 2) and set(chunk.logic.tolist()) == {3}
    assert ((words >> 18) & 63)[0] == 62


def test_random_bytes_in_random_reads_never_lose_or_invent_samples():
    rng = np.random.default_rng(42)
    for trial in range(20):
        raw = rng.integers(0, 256, int(rng.integers(0, 5000)), dtype=np.uint8).tobytes()
        cuts = np.sort(rng.integers(0, len(raw) + 1, int(rng.integers(0, 30))))
        blocks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)])]
        chunks = list(decode_stream(blocks, CAL, VDD_MV, spike_filter=bool(trial % 2)))
        assert sum(map(len, chunks)) == len(raw) // 4
        if chunks:
            whole = np.frombuffer(raw[: len(raw) // 4 * 4], dtype="<u4")
            assert np.array_equal(np.concatenate([c.logic for c in chunks]), (whole >> 24).astype(np.uint8))
            assert chunks[-1].end_index == len(whole) + sum(c.lost for c in chunks)


def test_kernel_checks_its_buffers():
    from energyrig.instruments.ppk2._decode import Kernel
    from energyrig.instruments.ppk2.decode import conversion_table

    kernel = Kernel(conversion_table(CAL, VDD_MV), np.full(5, 1e-3))
    src = random_words(10, seed=1).tobytes()
    out = dict(current=np.empty(10), logic=np.empty(10, np.uint8), saturated=np.empty(10, bool),
               range=np.empty(10, np.uint8), floor=np.empty(10, bool), corrupt=np.empty(10, bool))
    gaps = np.empty((4, 2), np.int64)
    assert kernel.decode(src, *out.values(), 0, gaps) == (10, 0)
    with pytest.raises(ValueError, match="fewer than the 10 samples"):
        kernel.decode(src, np.empty(9), *list(out.values())[1:], 0, gaps)
    with pytest.raises(ValueError, match="fewer than the 10 samples of the block from index 1"):
        kernel.decode(src, *out.values(), 1, gaps)
    with pytest.raises(ValueError, match="at: expected an index >= 0"):
        kernel.decode(src, *out.values(), -1, gaps)
    with pytest.raises(TypeError, match="current: expected items of 8 bytes"):
        kernel.decode(src, np.empty(10, np.float32), *list(out.values())[1:], 0, gaps)
    with pytest.raises(ValueError, match="5x6 float64"):
        Kernel(np.zeros((5, 5)), np.zeros(5))
    with pytest.raises(ValueError, match="jump: expected 5 float64"):
        Kernel(conversion_table(CAL, VDD_MV), np.zeros(4))
    with pytest.raises(BufferError):  # bytes are read-only
        kernel.decode(src, b"read-only" * 10, *list(out.values())[1:], 0, gaps)


@pytest.mark.parametrize("lost", [False, True])
def test_the_kernel_checks_the_sample_before_a_call_unless_samples_were_lost(lost):
    """The kernel keeps its last two samples from call to call: a call's first word checks
    the sample before it, which lies in the caller's previous outputs (``marked_before``),
    unless ``lost()`` said samples were lost between them."""
    from energyrig.instruments.ppk2._decode import Kernel
    from energyrig.instruments.ppk2.decode import conversion_table

    kernel = Kernel(conversion_table(CAL, VDD_MV), np.full(5, 1e-3))
    words = steady_words(4, logic=1)
    words[1] ^= np.uint32(1 << 24)                       # the trigger drops for one sample

    def decode(part: np.ndarray) -> np.ndarray:
        n = len(part)
        out = [np.empty(n), *(np.empty(n, t) for t in (np.uint8, bool, np.uint8, bool, bool))]
        kernel.decode(part.tobytes(), *out, 0, np.empty((4, 2), np.int64))
        return out[-1]

    assert not decode(words[:2]).any() and kernel.marked_before == 0
    if lost:
        kernel.lost()
    assert not decode(words[2:]).any()
    assert kernel.marked_before == (0 if lost else 1)


def test_decode_stream_warns_about_a_trailing_partial_word(caplog):
    raw = random_words(10, seed=2).tobytes() + b"\x01\x02"
    chunks = list(decode_stream([raw], CAL, VDD_MV, source="bench.ppk2"))
    assert sum(map(len, chunks)) == 10
    assert "bench.ppk2" in caplog.text and "2 bytes" in caplog.text


def test_decoder_rejects_a_supply_voltage_out_of_range():
    with pytest.raises(ValueError, match="vdd_mv"):
        Ppk2Decoder(CAL, 0)


# --- the raw stream file (.ppk2raw) -----------------------------------------------------

def test_raw_file_round_trip(tmp_path):
    words = random_words(250_000, seed=5)
    path = tmp_path / "run.ppk2raw"
    with Ppk2StreamWriter(path, DEVICE_TEXT, vdd_mv=VDD_MV) as rec:
        raw = words.tobytes()
        for a in range(0, len(raw), 65_537):  # writes that split words, as a port read does
            rec.write(raw[a:a + 65_537])
    data = path.read_bytes()
    assert data.startswith(DEVICE_TEXT.encode())  # metadata stored byte for byte
    assert data[len(DEVICE_TEXT):].startswith(b"energyrig-ppk2-raw 1 vdd_mv=3300 sample_rate_hz=100000\n")
    cap = open_ppk2(path, block_samples=100_000)
    assert cap.calibration == CAL and cap.vdd_mv == VDD_MV and cap.source == str(path)
    chunks = list(cap.chunks())
    assert [len(c) for c in chunks] == [100_000, 100_000, 50_000]
    assert np.array_equal(np.concatenate([c.current_a for c in chunks]), decode_all(words)[0].current_a)
    assert [c.start_index for c in chunks] == [0, 100_000, 200_000]
    again = list(cap.chunks())  # a file can be read twice
    assert np.array_equal(again[0].current_a, chunks[0].current_a)


def test_raw_file_from_a_calibration_and_with_the_spike_filter(tmp_path):
    words = random_words(5000, seed=9, run=3)
    path = tmp_path / "cal.ppk2raw"
    with Ppk2StreamWriter(path, CAL, vdd_mv=1800, sample_rate_hz=50_000) as rec:
        rec.write(words.tobytes())
    cap = Ppk2RawCapture(path, spike_filter=True, vdd_mv=2000)
    (chunk,) = list(cap.chunks())
    assert cap.header.sample_rate_hz == 50_000 and chunk.period_s == 2e-5
    assert chunk.voltage_v == 2.0  # the override wins over the header's 1800 mV
    expected = list(decode_stream([words.tobytes()], CAL, 2000, spike_filter=True))[0]
    assert np.array_equal(chunk.current_a, expected.current_a)


@pytest.mark.parametrize("content, problem", [
    (b"time_s,current_a\n0,1\n", "no 'END' line"),
    (DEVICE_TEXT.encode(), "header line after the metadata is missing"),
    (DEVICE_TEXT.encode() + b"something-else 1 vdd_mv=3300\n", "not a raw PPK2 stream"),
    (DEVICE_TEXT.encode() + b"energyrig-ppk2-raw 2 vdd_mv=3300 sample_rate_hz=1\n", "version '2'"),
    (DEVICE_TEXT.encode() + b"energyrig-ppk2-raw 1 sample_rate_hz=100000\n", "lacks vdd_mv"),
    (DEVICE_TEXT.encode() + b"energyrig-ppk2-raw 1 vdd_mv=abc sample_rate_hz=1\n", "vdd_mv=abc"),
    (DEVICE_TEXT.replace("O0: 151.8414", "O0: 15x").encode() + header_line(3300), "'15x' is not a number"),
])
def test_a_file_that_is_not_a_raw_stream_names_the_file_and_the_problem(tmp_path, content, problem):
    path = tmp_path / "bad.ppk2raw"
    path.write_bytes(content)
    with pytest.raises(CaptureError, match=problem) as info:
        open_ppk2(path)
    assert str(path) in str(info.value)


def test_a_missing_file_is_a_capture_error(tmp_path):
    with pytest.raises(CaptureError, match="cannot read"):
        open_ppk2(tmp_path / "nope.ppk2raw")


def test_writer_refuses_metadata_it_could_not_read_back(tmp_path):
    with pytest.raises(InstrumentError, match="END"):
        Ppk2StreamWriter(tmp_path / "x.ppk2raw", "R0: 1000.0\n", vdd_mv=3300)
    with pytest.raises(InstrumentError, match="allows 4096 bytes"):
        Ppk2StreamWriter(tmp_path / "x.ppk2raw", "X: 1\n" * 1000 + "END\n", vdd_mv=3300)
    assert not (tmp_path / "x.ppk2raw").exists()


# --- through the file dispatcher and `rig analyze` ----------------------------------------

def _trigger_file(tmp_path: Path, name: str = "bench.ppk2raw") -> tuple[Path, np.ndarray, np.ndarray]:
    """20 ms windows of 5 mA under D2 every 200 ms, idle 10 µA; returns path, words, trigger."""
    k = np.arange(200_000)
    trigger = (k % 20_000 >= 5_000) & (k % 20_000 < 7_000)
    words = encode_words(np.where(trigger, 5e-3, 10e-6), CAL, VDD_MV, logic=trigger.astype(np.uint8) << 2)
    path = tmp_path / name
    with Ppk2StreamWriter(path, DEVICE_TEXT, vdd_mv=VDD_MV) as rec:
        rec.write(words.tobytes())
    return path, words, trigger


def test_open_capture_reads_ppk2_files_and_windows_integrate_the_decoded_power(tmp_path):
    from energyrig.instruments.fileopts import CaptureOptions
    from energyrig.instruments.files import open_capture
    from energyrig.energy.windows import WindowSettings, find_windows

    path, words, trigger = _trigger_file(tmp_path)
    cap = open_capture(path, CaptureOptions(trigger="d2", chunk_samples=30_000))
    assert cap.trigger_bit == 2
    windows = list(find_windows(cap, WindowSettings(trigger_bit=cap.trigger_bit)))
    assert len(windows) == 10 and all(w.samples == 2000 and not w.flags for w in windows)
    (chunk,) = decode_all(words)
    for n, w in enumerate(windows):
        lo = 5_000 + 20_000 * n
        expected = chunk.current_a[lo:lo + 2000].sum() * (VDD_MV / 1000) * 1e-5  # T * sum(v*i)
        assert w.energy_j == pytest.approx(expected, rel=1e-12)
        assert w.energy_j == pytest.approx(5e-3 * 3.3 * 0.02, rel=2e-3)  # the encoded 5 mA
    by_content = tmp_path / "bench.dat"
    by_content.write_bytes(path.read_bytes())
    override = open_capture(by_content, CaptureOptions(voltage=1.8))
    assert next(iter(override.chunks())).voltage_v == pytest.approx(1.8)


def test_rig_analyze_flags_the_windows_a_files_corrupt_samples_fall_in(tmp_path):
    # As the point pipeline flags a live record: the windows of a raw stream file that hold
    # a corrupt word (or have one in their baseline span) carry corrupt_samples, the others
    # not.
    from energyrig.instruments.fileopts import CaptureOptions
    from energyrig.rig.analysis import analyze_file
    from energyrig.energy.windows import WindowSettings

    path, words, _ = _trigger_file(tmp_path)
    words[5_000 + 20_000 * 3 + 700] |= np.uint32(1 << 17)    # inside window 3
    words[5_000 + 20_000 * 7 - 300] |= np.uint32(1 << 17)    # window 7's baseline span
    words[5_000 + 20_000 * 8 + 10_000] |= np.uint32(1 << 17)  # between windows: no flag
    with Ppk2StreamWriter(path, DEVICE_TEXT, vdd_mv=VDD_MV) as rec:
        rec.write(words.tobytes())
    settings = WindowSettings(guard_s=1e-3, baseline_s=10e-3)
    result = analyze_file(path, CaptureOptions(trigger="d2", chunk_samples=7_000), settings)
    flagged = [n for n, w in enumerate(result.windows) if "corrupt_samples" in w.flags]
    assert len(result.windows) == 10 and flagged == [3, 7]


def test_an_old_raw_stream_named_ppk2_is_still_read(tmp_path):
    """Raw streams were named .ppk2 before the app's sessions (.ppk2 too) were read: the
    content says which it is."""
    from energyrig.instruments.fileopts import CaptureOptions
    from energyrig.instruments.files import open_capture

    path, words, _ = _trigger_file(tmp_path, "old.ppk2")
    cap = open_capture(path, CaptureOptions(trigger_bit=2))
    assert isinstance(cap, Ppk2RawCapture) and cap.trigger_bit == 2
    (chunk,) = list(cap.chunks())
    assert np.array_equal(chunk.current_a, decode_all(words)[0].current_a)


@pytest.mark.parametrize("options, problem", [
    ({"trigger": "D8"}, "no logic channel 'D8'"),
    ({"current": "A0"}, "one current channel"),
    ({"voltage": "A1"}, "no voltage channel"),
])
def test_open_capture_names_channels_a_ppk2_does_not_have(tmp_path, options, problem):
    from energyrig.errors import ChannelError
    from energyrig.instruments.fileopts import CaptureOptions
    from energyrig.instruments.files import open_capture

    path, _, _ = _trigger_file(tmp_path)
    with pytest.raises(ChannelError, match=problem):
        open_capture(path, CaptureOptions(**options))


def test_a_csv_named_ppk2_is_refused(tmp_path):
    from energyrig.instruments.files import open_capture

    path = tmp_path / "fake.ppk2"
    path.write_text("time_s,current_a,voltage_v,trigger\n0,1,3.3,0\n")
    with pytest.raises(CaptureError, match="not a Power Profiler session or raw PPK2 stream "
                                           "file"):
        open_capture(path)


def test_rig_analyze_on_a_ppk2_file(tmp_path, rig_cli):
    import json

    path, _, _ = _trigger_file(tmp_path)
    cmd = ["analyze", str(path)]
    ok = rig_cli(*cmd, "--trigger", "D2", "--json")
    assert ok.returncode == 0, ok.stderr
    windows = json.loads(ok.stdout)["windows"]
    assert len(windows) == 10
    assert all(w["energy_j"] == pytest.approx(5e-3 * 3.3 * 0.02, rel=2e-3) for w in windows)
    bad = rig_cli(*cmd, "--trigger", "D9")
    assert bad.returncode == 2 and str(path) in bad.stderr and "D0..D7" in bad.stderr


# -- the stream's own integrity checks (issue 11) ----------------------------------------------

def steady_words(n: int, amps: float = 2e-3, logic: int = 0) -> np.ndarray:
    """A clean stream of the protocol's own encoder: a steady current, one range."""
    return encode_words(np.full(n, amps), CAL, VDD_MV, logic=logic)


def decode_one(words: np.ndarray) -> Chunk:
    chunks = decode_all(words)
    assert len(chunks) == 1
    return chunks[0]


def test_a_clean_stream_has_nothing_corrupt_and_carries_its_ranges():
    amps = np.concatenate([np.full(500, 5e-6), np.full(500, 2e-3), np.full(500, 0.2)])
    words = encode_words(amps, CAL, VDD_MV, logic=np.repeat([0, 1, 0], 500))
    chunk = decode_one(words)
    assert not chunk.corrupt.any() and not chunk.at_floor.any()
    assert np.array_equal(chunk.current_range, ((words >> 14) & 7).astype(np.uint8))
    assert len(set(chunk.current_range.tolist())) == 3


def test_the_unused_bit_and_range_codes_above_four_are_corrupt():
    words = steady_words(100)
    words[10] |= 1 << 17
    words[20] = (words[20] & ~np.uint32(7 << 14)) | np.uint32(6 << 14)
    assert np.flatnonzero(decode_one(words).corrupt).tolist() == [10, 20]


def test_a_corrupt_counter_is_one_corrupt_word_not_two_losses():
    words = steady_words(200)
    words[50] = (words[50] & ~np.uint32(63 << 18)) | np.uint32(((50 + 17) & 63) << 18)
    chunk = decode_one(words)
    assert chunk.lost == 0 and chunk.end_index == 200
    assert np.flatnonzero(chunk.corrupt).tolist() == [50]


def test_a_real_loss_stays_a_gap_and_is_not_called_corrupt():
    words = np.delete(steady_words(200), np.s_[50:60])
    chunk = decode_one(words)
    assert chunk.gaps.tolist() == [[50, 10]] and not chunk.corrupt.any()


def _pulse_lost(lost: slice) -> tuple[np.ndarray, np.ndarray]:
    """A stream at 30 % of range 0's full scale with a pulse (range 3, then one sample in
    range 2 and one in range 1 on its way down) from sample 500, and the words with the
    samples of ``lost`` left out (the counter counts them)."""
    full = [full_scale for full_scale, _ in range_steps(CAL, VDD_MV)]
    amps = np.concatenate([np.full(500, full[0] * 0.3), np.full(20, full[3] * 0.5),
                           [full[2] * 0.5, full[1] * 0.5], np.full(478, full[0] * 0.3)])
    words = encode_words(amps, CAL, VDD_MV)
    return words, np.delete(words, lost)


@pytest.mark.parametrize("cut", [None, 500])
def test_samples_beside_a_loss_are_not_compared_across_it(cut):
    """Lost samples held the pulse: the samples after the loss step down through the ranges
    from a sample in range 0 before it. They are not neighbours, so no range lies outside
    their span; in one read (None) or with the read ending at the loss (500)."""
    _, kept = _pulse_lost(np.s_[500:520])
    decoder = Ppk2Decoder(CAL, VDD_MV)
    blocks = [kept] if cut is None else [kept[:cut], kept[cut:]]
    chunks = [decoder.feed(b.tobytes()) for b in blocks]
    assert sum(c.lost for c in chunks) == 20
    assert not any(c.corrupt.any() for c in chunks)


def test_nor_across_a_loss_the_stream_clock_found():
    """64 samples lost (the counter cannot see them) up to the pulse's last: the first
    sample after the loss, in range 1 between two in range 0, is no excursion."""
    words, _ = _pulse_lost(np.s_[0:0])
    decoder = Ppk2Decoder(CAL, VDD_MV)
    before = decoder.feed(words[:457].tobytes())
    decoder.add_loss(64)                                  # found against the host's clock
    after = decoder.feed(words[521:].tobytes())
    assert after.gaps.tolist() == [[0, 64]] and after.current_range[:2].tolist() == [1, 0]
    assert not before.corrupt.any() and not after.corrupt.any()


def test_one_sample_logic_and_range_excursions_and_jumps_are_corrupt():
    words = steady_words(300, amps=2e-3, logic=1)
    words[100] ^= np.uint32(1 << 24)                      # the trigger drops for one sample
    words[150] = steady_words(1, amps=0.3)[0] & ~np.uint32(63 << 18) | (words[150] & np.uint32(63 << 18))
    words[200] = (words[200] & ~np.uint32(0x3FFF)) | np.uint32(ADC_FULL_SCALE - 10)  # ADC high bits
    chunk = decode_one(words)
    assert np.flatnonzero(chunk.corrupt).tolist() == [100, 150, 200]


def test_a_range_above_both_neighbours_at_a_trigger_edge_is_corrupt():
    """The first sample of a window, where the ranging steps from idle's range to the
    window's: one byte (ADC bits 8-13 and range bits 0-1) turns its range into the next one
    up and its current more than tenfold. Its neighbours' ranges differ, so the rule of
    equal neighbours passed it: so a 10 ms window of test_ppk2_driver's corrupt stream once
    read 1.8 % high with no flag. Outside its neighbours' span, it is corrupt."""
    amps = np.repeat([5e-4, 3.3e-3, 5e-4], [200, 1000, 200])
    words = encode_words(amps, CAL, VDD_MV, logic=np.repeat([0, 1, 0], [200, 1000, 200]))
    first = 200
    codes = (words >> 14) & 7
    assert codes[first - 1] < codes[first] == codes[first + 1]  # the edge: two ranges
    hit = words.copy()
    hit[first] = (hit[first] & ~np.uint32(0xFF00)) | np.uint32(0xB0 << 8)
    assert (hit[first] >> 14) & 7 == codes[first] + 1
    assert not decode_one(words).corrupt.any()
    chunk = decode_one(hit)
    assert chunk.current_a[first] > 10 * amps[first]
    assert np.flatnonzero(chunk.corrupt).tolist() == [first]


def test_a_step_through_the_ranges_one_sample_each_is_not_corrupt():
    """A fast step of the load: the ranging passes through the ranges between, a sample in
    each; every code lies between its neighbours', on the way up and down."""
    limits = [range_steps(CAL, VDD_MV)[r][0] * 0.5 for r in range(5)]
    amps = np.concatenate([np.full(50, limits[0]), limits[1:4], np.full(50, limits[4]),
                           limits[3:0:-1], np.full(50, limits[0])])
    words = encode_words(amps, CAL, VDD_MV)
    assert ((words >> 14) & 7)[49:55].tolist() == [0, 1, 2, 3, 4, 4]
    assert not decode_one(words).corrupt.any()


@pytest.mark.parametrize("kind", ["range", "logic", "jump"])
@pytest.mark.parametrize("cut", [150, 151])
def test_a_corrupt_sample_at_either_end_of_a_chunk_is_marked(kind, cut):
    """A read of the port ends just before (150) or just after (151) a corrupt word. The
    checks looked inside one chunk, so a chunk's first and last samples were never marked:
    the first is now checked against the kept end of the chunk before, the last when the
    next chunk is decoded (its mark set in the chunk already returned)."""
    words = steady_words(300, amps=2e-3, logic=1)
    odd = {"range": words[150] + np.uint32(1 << 14), "logic": words[150] ^ np.uint32(1 << 24),
           "jump": words[150] & ~np.uint32(0x3FFF) | np.uint32(ADC_FULL_SCALE - 10)}
    words[150] = odd[kind]
    decoder = Ppk2Decoder(CAL, VDD_MV)
    before = decoder.feed(words[:cut].tobytes())
    assert not before.corrupt.any()                      # its last sample: not yet checked
    after = decoder.feed(words[cut:].tobytes())
    marked = np.flatnonzero(np.concatenate([before.corrupt, after.corrupt])).tolist()
    assert marked == [150]
    chunks = list(decode_stream([words[:cut].tobytes(), words[cut:].tobytes()], CAL, VDD_MV))
    assert np.flatnonzero(np.concatenate([c.corrupt for c in chunks])).tolist() == [150]


def test_random_byte_corruption_is_mostly_caught():
    """A byte replaced at random in a clean stream: caught unless it is the ADC's low byte
    (a small error) or leaves the word as it was."""
    rng = np.random.default_rng(3)
    amps = 2e-3 + 1e-5 * rng.standard_normal(100_000)
    clean = encode_words(amps, CAL, VDD_MV, logic=1)
    raw = np.frombuffer(clean.tobytes(), np.uint8).copy()
    hits = rng.choice(len(raw), 2000, replace=False)
    hits = hits[(hits % 4) != 0]                          # not the ADC's low byte
    raw[hits] = rng.integers(0, 256, len(hits), dtype=np.uint8)
    changed = raw[hits] != np.frombuffer(clean.tobytes(), np.uint8)[hits]
    bad_words = np.unique(hits[changed] // 4)
    chunk = decode_one(np.frombuffer(raw.tobytes(), "<u4"))
    found = np.flatnonzero(chunk.corrupt)
    near = np.unique(np.concatenate([bad_words - 1, bad_words, bad_words + 1]))
    assert np.isin(found, near).all()     # clean words called corrupt only beside corrupt ones
    assert np.isin(bad_words, found).mean() >= 0.9
    # Two corrupt counters in a row read as a loss (and its return): rarely.
    assert chunk.lost <= 64 * 2


def test_the_floor_is_adc_code_zero_in_range_zero():
    words = encode_words(np.array([-5e-6, -1e-3, 1e-6, 2e-3]), CAL, VDD_MV)
    assert decode_one(words).at_floor.tolist() == [True, True, False, False]


def _window_record(base_a: float, corrupt_at: list[int] = (), dip_at: int | None = None,
                   ) -> tuple:
    """2000 idle samples at ``base_a``, a 1000-sample window at 2 mA, 500 idle, decoded, and
    its window; ``dip_at``: a sample whose trigger bit a corrupt byte cleared, which (with
    ``min_pulse_s`` 0, the fixture's default) splits the window: the longer part then."""
    from energyrig.energy.windows import WindowSettings, find_windows

    amps = np.concatenate([np.full(2000, base_a), np.full(1000, 2e-3), np.full(500, base_a)])
    logic = np.repeat([0, 1, 0], [2000, 1000, 500])
    if dip_at is not None:
        logic[dip_at] = 0
    words = encode_words(amps, CAL, VDD_MV, logic=logic)
    for k in corrupt_at:
        words[k] |= np.uint32(1 << 17)
    chunks = decode_all(words)
    settings = WindowSettings(min_pulse_s=30e-6 if dip_at is None else 0.0, guard_s=1e-3,
                              baseline_s=10e-3)
    window = max(find_windows(chunks, settings), key=lambda w: w.duration_s)
    return chunks, window, settings


@pytest.mark.parametrize("base_a, corrupt_at, flags", [
    (5e-6, [], ()),
    (-20e-6, [], ("baseline_clipped",)),          # a negative offset below the idle current
    (5e-6, [1500], ("corrupt_samples",)),         # in the baseline span
    (5e-6, [2500], ("corrupt_samples",)),         # in the window
    (5e-6, [100, 3400], ()),                      # before the baseline span, after the window
])
def test_stream_flags_of_a_window(base_a, corrupt_at, flags):
    from energyrig.energy.windows import stream_flags

    chunks, window, settings = _window_record(base_a, corrupt_at)
    assert stream_flags(chunks, window, settings) == flags


@pytest.mark.parametrize("dip_at", [2900, 2100])
def test_a_window_a_corrupt_trigger_sample_split_is_flagged(dip_at):
    # The longer part of the split window ends (2900) or starts (2100) at the corrupt sample.
    from energyrig.energy.windows import stream_flags

    chunks, window, settings = _window_record(5e-6, dip_at=dip_at)
    assert window.samples < 1000
    assert chunks[0].corrupt[dip_at]
    assert stream_flags(chunks, window, settings) == ("corrupt_samples",)
