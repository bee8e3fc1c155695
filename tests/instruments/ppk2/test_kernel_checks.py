"""The PPK2 kernel's fast path (issue 24): along a healthy stream the kernel decodes runs of
words without an event in vectorised loops and sends only the events (a logic or range
change, a bad word, a counter skip, a step beyond the jump limit) and the samples after them
through the per-sample checks. Flag for flag and gap for gap it must give what the numpy
checks gave (``support.ppk2_checks``, the oracle) and current for current what ``ppk2-api``
gives, wherever an event falls against the runs' boundaries and however the stream is fed.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from energyrig.instruments.ppk2._decode import Kernel
from energyrig.instruments.ppk2.decode import ADC_FULL_SCALE, Ppk2Decoder, conversion_table, encode_words
from energyrig.instruments.ppk2.metadata import parse_metadata
from support.paths import DATA
from support.ppk2_checks import ReferenceChecks, jump_limits
from support.ppk2_reference import reference_api

DEVICE_TEXT = (DATA / "ppk2-metadata.txt").read_text()
CAL = parse_metadata(DEVICE_TEXT)
VDD_MV = 3300
RUN = 64
"""Words of one fast run in the kernel (ER_RUN): events are placed on every side of it."""
FUZZ = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def healthy_words(n: int, seed: int, *, period: int = 300, high_a: float = 8e-3) -> np.ndarray:
    """``n`` words of a healthy stream: a window on D0 every ``period`` samples at
    ``high_a``, 6 µA between, a little noise; the counter unbroken."""
    rng = np.random.default_rng(seed)
    k = np.arange(n)
    high = (k + int(rng.integers(period))) % period < period // 3
    amps = np.where(high, high_a, 6e-6) * (1 + 0.01 * rng.standard_normal(n))
    return encode_words(amps, CAL, VDD_MV, logic=high.astype(np.uint8), counter_start=int(rng.integers(64)))


def with_event(words: np.ndarray, kind: str, at: int, rng: np.random.Generator) -> np.ndarray:
    """``words`` with one event of ``kind`` at word ``at``."""
    w = words.astype(np.uint32).copy()
    code = (w[at] >> 14) & 7
    if kind == "logic excursion":
        w[at] ^= np.uint32(1 << (24 + int(rng.integers(8))))
    elif kind == "range excursion":
        w[at] = (w[at] & ~np.uint32(7 << 14)) | np.uint32(((code + 1 + rng.integers(4)) % 5) << 14)
    elif kind == "range code above 4":
        w[at] |= np.uint32(int(rng.integers(5, 8)) << 14)
    elif kind == "bit 17":
        w[at] |= np.uint32(1 << 17)
    elif kind == "corrupt counter":
        w[at] ^= np.uint32(int(rng.integers(1, 64)) << 18)
    elif kind == "repeated counter" and at > 0:
        w[at] = (w[at] & ~np.uint32(63 << 18)) | (w[at - 1] & np.uint32(63 << 18))
    elif kind == "lost words":
        w = np.delete(w, np.s_[at: at + int(rng.integers(1, 70))])
    elif kind == "jump":
        w[at] = (w[at] & ~np.uint32(ADC_FULL_SCALE)) | np.uint32(ADC_FULL_SCALE - (w[at] & ADC_FULL_SCALE) // 2)
    elif kind == "step":  # a level that stays: an event, not corrupt
        w[at:] = (w[at:] & ~np.uint32(ADC_FULL_SCALE)) | np.uint32(int(rng.integers(ADC_FULL_SCALE)))
    return w


EVENTS = ["logic excursion", "range excursion", "range code above 4", "bit 17", "corrupt counter",
          "repeated counter", "lost words", "jump", "step"]


def converted(words: np.ndarray) -> np.ndarray:
    """Each word's current by the conversion table in ``ppk2-api``'s order, one word at a
    time (codes above 4 read as 4)."""
    o, k, gs, gi, ug, c = conversion_table(CAL, VDD_MV)[np.minimum((words >> 14) & 7, 4)].T
    x = ((words & ADC_FULL_SCALE).astype(np.float64) * 4 - o) * k
    return ug * (x * (gs * x + gi) + c)


def decode_as_fed(blocks: list[bytes]) -> tuple[int, int]:
    """Feed ``blocks`` to a decoder and to the numpy checks; assert every chunk's corrupt
    flags, gaps, current, ranges, floor and saturation agree; return (samples, samples the
    fast path decoded)."""
    decoder = Ppk2Decoder(CAL, VDD_MV)
    reference = ReferenceChecks(CAL, VDD_MV)
    partial, samples, fed = b"", 0, []
    for block in blocks:
        raw = partial + block
        words = np.frombuffer(raw[: len(raw) - len(raw) % 4], "<u4")
        partial = raw[len(words) * 4:]
        chunk = decoder.feed(block)
        expected = reference.feed(block, None if chunk is None else chunk.current_a)
        assert (chunk is None) == (expected is None)
        if chunk is None:
            continue
        corrupt, gaps = expected
        assert np.flatnonzero(chunk.corrupt).tolist() == np.flatnonzero(corrupt).tolist()
        assert chunk.gaps.tolist() == gaps
        assert np.array_equal(chunk.current_a, converted(words))
        code = ((words >> 14) & 7).astype(np.uint8)
        adc = words & ADC_FULL_SCALE
        assert np.array_equal(chunk.current_range, code)
        assert np.array_equal(chunk.logic, (words >> 24).astype(np.uint8))
        assert np.array_equal(chunk.at_floor, (code == 0) & (adc == 0))
        assert np.array_equal(chunk.saturated, (code >= 4) & (adc == ADC_FULL_SCALE))
        samples += len(chunk)
        fed.append((chunk.corrupt, corrupt))
    # each chunk's last sample, marked once the next chunk was decoded
    for got, want in fed:
        assert np.flatnonzero(got).tolist() == np.flatnonzero(want).tolist()
    return samples, decoder._kernel.fast_samples


def test_a_healthy_stream_is_decoded_along_fast_runs_and_flags_nothing():
    words = healthy_words(200_000, seed=3)
    samples, fast = decode_as_fed([words.astype("<u4").tobytes()])
    assert samples == len(words)
    # Only the windows' edges (2 per 300 samples) and the samples after them are checked
    # one by one.
    assert fast > 0.9 * samples


def test_every_event_at_every_offset_against_the_runs_is_flagged_as_the_numpy_checks_flag():
    rng = np.random.default_rng(7)
    base = healthy_words(4 * RUN + 40, seed=11, period=10_000)  # one range, one logic level
    for kind in EVENTS:
        for at in range(RUN - 6, 2 * RUN + 6):
            words = with_event(base, kind, at, rng)
            samples, fast = decode_as_fed([words.astype("<u4").tobytes()])
            assert fast > 0, (kind, at)
            # the same event split across two feeds at and around it
            for cut in (at - 1, at, at + 1, at + 2):
                raw = words.astype("<u4").tobytes()
                decode_as_fed([raw[: 4 * cut], raw[4 * cut:]])


def test_events_next_to_each_other_and_at_both_ends_of_a_chunk():
    rng = np.random.default_rng(5)
    base = healthy_words(3 * RUN, seed=2, period=10_000)
    for first in EVENTS:
        for second in EVENTS:
            for at, gap in ((0, 1), (1, 2), (RUN - 1, 1), (RUN, 3), (3 * RUN - 3, 1)):
                words = with_event(base, first, at, rng)
                words = with_event(words, second, min(at + gap, len(words) - 1), rng)
                decode_as_fed([words.astype("<u4").tobytes()])


@st.composite
def fed_stream(draw: st.DrawFn) -> list[bytes]:
    """A healthy stream with events of any kind anywhere, cut into feeds of any size."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(RUN, 8 * RUN))
    words = healthy_words(n, seed=int(rng.integers(2**32)), period=draw(st.sampled_from([40, 300, 10_000])),
                          high_a=draw(st.sampled_from([2e-3, 8e-3, 0.05, 0.3])))
    for _ in range(draw(st.integers(0, 8))):
        if len(words) > 1:
            words = with_event(words, draw(st.sampled_from(EVENTS)), int(rng.integers(len(words))), rng)
    raw = words.astype("<u4").tobytes()
    cuts = sorted(draw(st.lists(st.integers(0, len(raw)), max_size=6)))
    return [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]


@FUZZ
@given(blocks=fed_stream())
def test_fuzzed_healthy_streams_with_events_decode_as_the_numpy_checks_say(blocks):
    decode_as_fed(blocks)


def test_the_fast_runs_convert_like_ppk2_api_bit_for_bit_in_every_range():
    rng = np.random.default_rng(4)
    levels = np.repeat([5e-5, 2e-3, 0.05, 0.5, 5.0], 3000)  # one per range
    words = encode_words(levels * (1 + 0.01 * rng.standard_normal(len(levels))), CAL, VDD_MV)
    kernel = Kernel(conversion_table(CAL, VDD_MV), jump_limits(CAL, VDD_MV))
    n = len(words)
    out = (np.empty(n), np.empty(n, np.uint8), np.empty(n, bool), np.empty(n, np.uint8),
           np.empty(n, bool), np.empty(n, bool))
    kernel.decode(words.astype("<u4").tobytes(), *out, 0, np.empty((64, 2), np.int64))
    assert kernel.fast_samples > 0.9 * n
    assert sorted(set(out[3].tolist())) == [0, 1, 2, 3, 4]
    with reference_api(DEVICE_TEXT, VDD_MV) as api:
        expected = []
        for w in words.tolist():
            api.prev_range, api.after_spike = None, 0  # its conversion alone, no spike filter
            expected.append(api.get_adc_result((w >> 14) & 7, (w & ADC_FULL_SCALE) * 4))
    assert np.array_equal(out[0], np.array(expected))
