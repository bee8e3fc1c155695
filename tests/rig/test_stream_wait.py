"""The wait after a point's unrecorded runs (issue 24 part 3): the next record must not take
their windows for its own, but the pipeline no longer sleeps the stream's stated lag for it.
A streaming instrument is told where the next record may start
(:meth:`StreamAcquisition.start_after`); the simulated bench knows that sample exactly from
the emulator's time base, so it waits for nothing; a real bench still waits the lag.

The stream here is fed by hand, sample by sample, so what is asserted is what the
instrument decided, not how long anything took."""
from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from support.handstream import RATE_HZ, HandStream
from support.m4 import SIM_M4, assert_built
from support.pipeline import POINT, ScriptedBench

import energyrig.rig.pipeline as pipeline
from energyrig.capture import Chunk
from energyrig.domain import Point
from energyrig.fixtures import load_fixture
from energyrig.rig.bench import open_bench
from energyrig.rig.flags import DURATION_MISMATCH, EXTRA_WINDOWS
from energyrig.rig.pipeline import measure_point, reps_done

PROBE = (400, 450)     # an unrecorded run's window: in the stream, not yet received at arm
WINDOW = (800, 900)    # the recorded window


def lagging_stream(start_after: int | None) -> tuple[Chunk, ...]:
    """Arm while the stream has brought 300 samples only (it lags behind the probe, which
    ended at sample 500 by the host's clock), then let it bring the probe and the window."""
    stream = HandStream()
    stream.feed(300)
    if start_after is not None:
        stream.start_after(start_after)
    stream._arm_stream(pre_s=1e-3, window_s=1e-3, post_s=1e-4, start_s=1.0)
    stream.feed(500, PROBE)
    stream.feed(400, WINDOW)
    return stream.record()


def high_spans(chunks: tuple[Chunk, ...]) -> list[int]:
    index = np.concatenate([c.indices() for c in chunks])
    logic = np.concatenate([c.logic for c in chunks if c.logic is not None])
    return [int(i) for i in index[logic == 1]]


def test_a_stream_lagging_behind_a_probe_would_take_its_window() -> None:
    # what the fixed sleep of stream_lag_s was for
    assert high_spans(lagging_stream(None))[0] == PROBE[0]


def test_the_record_starts_after_the_sample_it_is_told_and_takes_the_window_after_it() -> None:
    chunks = lagging_stream(500)
    assert chunks[0].start_index >= 500
    spans = high_spans(chunks)
    assert spans[0] == WINDOW[0] and spans[-1] == WINDOW[1] - 1


def test_preparing_a_point_tells_the_bench_where_records_start_and_never_sleeps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"the pipeline slept {seconds} s")

    monkeypatch.setattr(pipeline.time, "sleep", no_sleep)
    bench = ScriptedBench()
    result = measure_point(bench, POINT, until=reps_done(2))
    assert result.ok, result.reason
    # the probes ran, then the bench was told, then the first window was armed
    first_arm = bench.log.index("arm")
    assert bench.log[first_arm - 1] == "records_after"
    assert bench.log.count("records_after") == 1
    assert all(step in ("prep", "run") for step in bench.log[:first_arm - 1])


@pytest.mark.slow
def test_the_simulated_bench_starts_records_after_the_probes_without_a_wait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert_built()
    slept: list[float] = []
    sleep = time.sleep

    def spy(seconds: float) -> None:
        if threading.current_thread() is threading.main_thread():
            slept.append(seconds)
        sleep(seconds)

    fixture = load_fixture(SIM_M4)
    with open_bench(fixture) as bench:
        lag = bench.limits.stream_lag_s
        monkeypatch.setattr(time, "sleep", spy)
        marks: list[int] = []
        start_after = bench.instrument.start_after
        bench.instrument.start_after = lambda index: (marks.append(index),  # type: ignore[method-assign]
                                                      start_after(index))[1]
        # ecdsa-sign: one probe of one op, a window as long as the recorded one's
        result = measure_point(bench, Point(op="ecdsa-sign", board=bench.board, curve="p256",
                                            payload_bytes=32), until=reps_done(2))
    assert result.ok, result.reason
    assert len(marks) == 1
    assert not [s for s in slept if s >= lag]  # never the stream's lag
    for w in result.windows:
        # the recorded window, not the probe's: its own length by the firmware, its truth
        assert DURATION_MISMATCH not in w.flags and EXTRA_WINDOWS not in w.flags
        assert w.true_energy_j is not None and not math.isnan(w.energy_j)
        assert w.energy_j == pytest.approx(w.true_energy_j, rel=2e-3)
        assert w.start_s * RATE_HZ >= marks[0]  # after the probes' end
