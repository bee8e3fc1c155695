"""Losses the PPK2's counter cannot count, found against the host's clock
(:mod:`energyrig.instruments.ppk2.clock`), on synthetic read times."""
from __future__ import annotations

import numpy as np
import pytest

from energyrig.instruments.ppk2.clock import StreamClock
from energyrig.instruments.ppk2.decode import SAMPLE_RATE_HZ, Ppk2Decoder, encode_words
from energyrig.instruments.ppk2.emulator import DEFAULT_CALIBRATION

RATE = SAMPLE_RATE_HZ


def reads(seconds: float, seed: int = 0, every_s: float = 0.005, latency_s: float = 0.02,
          jitter_s: float = 0.004) -> tuple[np.ndarray, np.ndarray]:
    """Host times of reads and the samples received by each: blocks of ``every_s``,
    ``latency_s`` behind, each read up to ``jitter_s`` late."""
    rng = np.random.default_rng(seed)
    t = np.arange(every_s, seconds, every_s)
    t_read = t + latency_s + rng.uniform(0, jitter_s, len(t))
    return t_read, np.floor(t * RATE).astype(np.int64)


def run(clock: StreamClock, t: np.ndarray, index: np.ndarray) -> list[tuple[float, int]]:
    """Feed the reads; re-index after each loss as the driver does; (time, samples) found."""
    found, added = [], 0
    for ti, ni in zip(t.tolist(), index.tolist()):
        loss = clock.update(ti, ni + added)
        if loss is not None:
            found.append((ti, loss.samples))
            added += loss.samples
    return found


def test_a_steady_stream_with_jitter_loses_nothing():
    t, index = reads(30.0)
    assert run(StreamClock(RATE), t, index) == []


def test_a_stalled_host_that_reads_its_backlog_late_loses_nothing():
    t, index = reads(10.0)
    stall = (t > 3.0) & (t < 3.4)
    t[stall] = 3.4 + np.linspace(0, 0.01, stall.sum())   # 0.4 s of blocks read at once
    assert run(StreamClock(RATE), t, index) == []


def test_a_loss_of_094_s_is_found_to_the_sample_and_the_index_resynchronised():
    t, index = reads(10.0)
    lost = 94_000
    index[t > 4.0] -= lost
    counted = (lost % 64)                       # what the counter saw: a jump modulo 64
    index[t > 4.0] += counted
    clock = StreamClock(RATE)
    found = run(clock, t, index)
    assert 1 <= len(found) <= 2                 # the estimate, and what its refinement adds
    assert sum(n for _, n in found) == lost - counted   # a multiple of 64, exactly
    assert 4.0 + clock.confirm_s <= found[0][0] < 4.0 + clock.confirm_s + 0.1
    assert found[-1][0] < 4.0 + clock.settle_s + 0.1
    assert clock.suspect_from is None


@pytest.mark.parametrize("seed", range(5))
def test_a_loss_under_heavy_read_jitter_is_still_found_to_the_sample(seed):
    t, index = reads(12.0, seed=seed, jitter_s=0.02)
    index[t > 4.0] -= 64 * 1468
    found = run(StreamClock(RATE), t, index)
    assert sum(n for _, n in found) == 64 * 1468


def test_a_device_clock_50_ppm_slow_is_followed_not_taken_for_losses():
    t, index = reads(600.0, every_s=0.05)
    index = np.floor(index * (1 - 50e-6)).astype(np.int64)
    assert run(StreamClock(RATE), t, index) == []


def test_a_suspect_lag_names_where_it_began():
    clock = StreamClock(RATE)
    assert clock.update(0.0, 0) is None and clock.update(0.01, 1000) is None
    assert clock.update(0.02, 1000) is None           # 10 ms late: within the jitter
    assert clock.suspect_from is None
    assert clock.update(0.2, 1000) is None            # 190 ms late: suspect
    assert clock.suspect_from == 1000


def test_the_clock_refuses_nonsense():
    with pytest.raises(ValueError):
        StreamClock(0.0)


def test_add_loss_opens_the_next_chunk_with_a_gap():
    dec = Ppk2Decoder(DEFAULT_CALIBRATION, 3000)
    words = encode_words(np.full(200, 1e-3), DEFAULT_CALIBRATION, 3000)
    dec.feed(words[:100].tobytes())
    dec.add_loss(6400)
    chunk = dec.feed(words[100:].tobytes())
    assert chunk.gaps.tolist() == [[0, 6400]] and chunk.start_index == 100
    assert chunk.end_index == 200 + 6400 and dec.samples_lost == 6400
    with pytest.raises(ValueError):
        dec.add_loss(0)
