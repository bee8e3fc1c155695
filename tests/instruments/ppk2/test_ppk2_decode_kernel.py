"""The PPK2 stream's integrity checks run in the compiled kernel, in the decode's own pass
(issue 24): flag for flag and gap for gap what the numpy checks before them gave
(``support.ppk2_checks``), over random, structured and corrupted streams fed in any
chunking, with and without the spike filter."""
from __future__ import annotations

from support.paths import DATA


import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from energyrig.instruments.ppk2._decode import Kernel
from energyrig.instruments.ppk2.decode import ADC_FULL_SCALE, Ppk2Decoder, conversion_table, encode_words
from energyrig.instruments.ppk2.metadata import parse_metadata
from support.ppk2_checks import ReferenceChecks, excursions, jump_limits, jumps, range_excursions

CAL = parse_metadata((DATA / "ppk2-metadata.txt").read_text())
VDD_MV = 3300
CHECKS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- streams --------------------------------------------------------------------------------

def structured_stream(seed: int, n: int, rate: float) -> bytes:
    """``n`` words that reach every check: ranges, logic and ADC codes held for runs and left
    for one sample, slow drift and far jumps, range codes 5..7 beside 4, the unused bit, and
    a counter that skips, returns, repeats and loses samples; ``rate``: how often something
    happens."""
    rng = np.random.default_rng(seed)

    def runs(values: np.ndarray) -> np.ndarray:
        return values[np.cumsum(rng.random(n) < rate) % len(values)]

    def here_and_there() -> np.ndarray:
        return rng.random(n) < rate

    code = runs(rng.choice(8, 64, p=[0.2, 0.2, 0.2, 0.1, 0.2, 0.04, 0.03, 0.03]))
    logic = runs(rng.integers(0, 256, 64))
    adc = np.clip(rng.integers(0, ADC_FULL_SCALE + 1) + np.cumsum(rng.integers(-3, 4, n)), 0, ADC_FULL_SCALE)
    adc = np.where(here_and_there(), rng.integers(0, ADC_FULL_SCALE + 1, n), adc)
    code = np.where(here_and_there(), rng.integers(0, 8, n), code)
    code = np.where(here_and_there() & (code >= 4), rng.integers(4, 8, n), code)  # 4..7 read as 4
    logic = np.where(here_and_there(), logic ^ (1 << rng.integers(0, 8, n)), logic)
    counter = np.arange(n) + np.cumsum(np.where(here_and_there(), rng.integers(1, 70, n), 0))  # losses
    counter = np.where(here_and_there(), rng.integers(0, 64, n), counter)  # one corrupt counter
    counter = np.where(here_and_there(), np.roll(counter, 1), counter)     # a repeated one
    words = (adc.astype(np.uint32) | (code.astype(np.uint32) << 14)
             | ((counter.astype(np.uint32) & 63) << 18) | (logic.astype(np.uint32) << 24)
             | (here_and_there().astype(np.uint32) << 17))
    return words.astype("<u4").tobytes()


RATES = [0.002, 0.02, 0.2]


@st.composite
def structured_words(draw: st.DrawFn) -> bytes:
    return structured_stream(draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 1500)),
                             draw(st.sampled_from(RATES)))


@st.composite
def corrupted_clean_stream(draw: st.DrawFn) -> bytes:
    """A clean stream of the protocol's own encoder (a window on D0, noise, range switches)
    with bytes replaced, removed or doubled: the corrupt-stream cases."""
    n = draw(st.integers(3, 1500))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = np.arange(n)
    high = (k // 200) % 2 == 1
    amps = np.where(high, draw(st.sampled_from([2e-3, 0.05, 0.3])), 5e-6) * (1 + 0.02 * rng.standard_normal(n))
    raw = bytearray(encode_words(amps, CAL, VDD_MV, logic=high.astype(np.uint8), counter_start=int(rng.integers(64)))
                    .astype("<u4").tobytes())
    for _ in range(draw(st.integers(0, 12))):
        if not raw:
            break
        at = int(rng.integers(len(raw)))
        action = draw(st.sampled_from(["replace", "remove", "double", "drop words"]))
        if action == "replace":
            raw[at] = int(rng.integers(256))
        elif action == "remove":
            del raw[at]
        elif action == "double":
            raw.insert(at, raw[at])
        else:
            del raw[at - at % 4: at - at % 4 + 4 * int(rng.integers(1, 80))]
    return bytes(raw)


STREAMS = st.one_of(structured_words(), corrupted_clean_stream(), st.binary(max_size=6000))


@st.composite
def chunked(draw: st.DrawFn, streams: st.SearchStrategy[bytes]) -> list[bytes]:
    """A stream cut into feeds of any size: single bytes, words split anywhere, one block."""
    raw = draw(streams)
    cuts = sorted(draw(st.lists(st.integers(0, len(raw)), max_size=25)))
    return [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)])]


# -- the kernel's checks against today's ------------------------------------------------------

@CHECKS
@given(blocks=chunked(STREAMS), spike_filter=st.booleans())
def test_the_kernels_checks_equal_the_numpy_checks_in_any_chunking(blocks, spike_filter):
    decoder = Ppk2Decoder(CAL, VDD_MV, spike_filter=spike_filter)
    reference = ReferenceChecks(CAL, VDD_MV)
    fed = []
    for block in blocks:
        chunk = decoder.feed(block)
        expected = reference.feed(block, None if chunk is None else chunk.current_a)
        assert (chunk is None) == (expected is None)
        if chunk is not None:
            corrupt, gaps = expected
            assert np.flatnonzero(chunk.corrupt).tolist() == np.flatnonzero(corrupt).tolist()
            assert chunk.gaps.tolist() == gaps
            fed.append((chunk.corrupt, corrupt))
    # each chunk's last sample, marked once the next chunk was decoded
    assert [np.flatnonzero(got).tolist() for got, _ in fed] == [
        np.flatnonzero(want).tolist() for _, want in fed]


def test_the_structured_streams_reach_every_check():
    """The streams above are worth their examples: each check fires on its own there."""
    fired = dict.fromkeys(["logic excursion", "range excursion", "jump", "bad word", "corrupt counter",
                           "gap"], 0)
    for seed, rate in enumerate(RATES * 5):
        raw = structured_stream(seed, 1500, rate)
        words = np.frombuffer(raw, "<u4")
        code = ((words >> 14) & 7).astype(np.uint8)
        counter_flags, gaps = np.zeros(len(words), dtype=bool), []
        ReferenceChecks(CAL, VDD_MV).counter(words, 0, len(words), counter_flags, gaps)
        fired["logic excursion"] += int(excursions((words >> 24).astype(np.uint8)).sum())
        fired["range excursion"] += int(range_excursions(code).sum())
        current = Ppk2Decoder(CAL, VDD_MV).feed(raw).current_a
        fired["jump"] += int(jumps(current, code, jump_limits(CAL, VDD_MV)).sum())
        fired["bad word"] += int((((words >> 17) & 1) | (code > 4)).sum())
        fired["corrupt counter"] += int(counter_flags.sum())
        fired["gap"] += len(gaps)
    assert all(n > 0 for n in fired.values()), fired


# -- the kernel itself ------------------------------------------------------------------------

def kernel_decode(raw: bytes, splits: list[int], gap_rows: int, jump_a: np.ndarray | None = None
                  ) -> tuple[np.ndarray, ...]:
    """One chunk decoded by ``Kernel.decode`` calls from each of ``splits`` (word indices) on,
    with a gap buffer of ``gap_rows`` (a call stops when it fills and the next goes on)."""
    kernel = Kernel(conversion_table(CAL, VDD_MV), jump_limits(CAL, VDD_MV) if jump_a is None else jump_a)
    n = len(raw) // 4
    out = (np.empty(n), np.empty(n, np.uint8), np.empty(n, bool), np.empty(n, np.uint8),
           np.empty(n, bool), np.empty(n, bool))
    buf = np.empty((gap_rows, 2), np.int64)
    gaps = []
    for first, last in zip([0, *splits], [*splits, n]):
        at = first
        while at < last:
            done, n_gaps = kernel.decode(raw[4 * at: 4 * last], *out, at, buf)
            gaps += buf[:n_gaps].tolist()
            at += done
    return (*out, np.array(gaps, dtype=np.int64).reshape(-1, 2))


@CHECKS
@given(raw=STREAMS, data=st.data())
def test_one_chunk_decoded_from_any_index_on_is_checked_as_one(raw, data):
    """The neighbour checks run on across the calls of one chunk; the counter looks ahead
    within a call (the numpy checks did the same with the word a feed completes)."""
    n = len(raw) // 4
    splits = sorted(set(data.draw(st.lists(st.integers(1, n - 1), max_size=8)))) if n >= 2 else []
    current, *_, corrupt, gaps = kernel_decode(raw, splits, data.draw(st.integers(1, 4)))
    words = np.frombuffer(raw[: 4 * n], "<u4")
    expected, expected_gaps = ReferenceChecks(CAL, VDD_MV).chunk(words, current, splits)
    assert np.flatnonzero(corrupt).tolist() == np.flatnonzero(expected).tolist()
    assert gaps.tolist() == expected_gaps
    assert np.array_equal(current, kernel_decode(raw, [], 64)[0])


def test_the_kernel_marks_an_odd_sample_beside_the_index_it_starts_from():
    words = encode_words(np.full(10, 2e-3), CAL, VDD_MV, logic=np.array([0, 0, 0, 0, 1, 0, 0, 0, 0, 0]))
    raw = words.astype("<u4").tobytes()
    for split in range(1, 10):
        corrupt = kernel_decode(raw, [split], 64)[5]
        assert np.flatnonzero(corrupt).tolist() == [4], split


@given(seed=st.integers(0, 2**32 - 1))
@CHECKS
def test_the_jump_limits_are_strict_as_the_numpy_checks_were(seed):
    """Limits set to exactly the distances of a sample to its neighbours: a jump is more
    than the limit, the neighbours' agreement less than a tenth of it."""
    rng = np.random.default_rng(seed)
    code = int(rng.integers(0, 5))
    adc = rng.integers(0, ADC_FULL_SCALE + 1, 3)
    words = (adc | (code << 14) | (np.arange(3) << 18)).astype("<u4")
    current = kernel_decode(words.tobytes(), [], 64)[0]
    near, far = sorted([abs(current[1] - current[0]), abs(current[1] - current[2])])
    settle = abs(current[2] - current[0])
    for limit in (near, np.nextafter(near, 0), far, 10 * settle, np.nextafter(10 * settle, np.inf)):
        jump_a = np.full(5, limit)
        corrupt = kernel_decode(words.tobytes(), [], 64, jump_a)[5]
        assert corrupt.tolist() == jumps(current, np.full(3, code, np.uint8), jump_a).tolist()
