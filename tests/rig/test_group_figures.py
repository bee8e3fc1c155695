"""A group's windows (``run windows=R``, one record) each get their figures from their own
samples (issue 24 part 3): the uncertainty's statistics and the stream's flags of a window
are read from its cut (the window, its guard and baseline span and a margin), not from the
group's whole record, so processing a group of R windows grows as R, not R², and the figures
are the same as over the whole record (what ``rig reanalyze`` reads is that cut too).

Synthetic records, no bench: what is asserted is which samples each window's figures read
and that they equal the whole record's, never how long anything took."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.m4 import STUB_PERIOD_S, StubBench

import energyrig.energy.figures as figures_module
from energyrig.capture import Chunk
from energyrig.domain import Point
from energyrig.energy.stats import window_stats
from energyrig.energy.windows import stream_flags
from energyrig.instruments.base import RecordedCapture
from energyrig.rig.dut import RunReply
from energyrig.rig.pipeline import Measurement

PERIOD_S = STUB_PERIOD_S
ELAPSED_S = 5e-3
WINDOWS = 16


def group(settle_s: float) -> tuple[RecordedCapture, list[RunReply]]:
    """A record of :data:`WINDOWS` windows, each after a settle idle, with noise, ranges,
    and a few corrupt samples (one in a window, one in a baseline span)."""
    rng = np.random.default_rng(24)
    current, logic = [], []

    def span(seconds: float, amps: float, high: bool) -> None:
        n = round(seconds / PERIOD_S)
        current.append(amps + rng.normal(0, 1e-6, n))
        logic.append(np.full(n, 1 if high else 0, dtype=np.uint8))

    span(0.02, 1e-3, False)
    for k in range(WINDOWS):
        if k:
            span(settle_s, 1e-3 + 1e-5 * k, False)
        span(ELAPSED_S, 10e-3 + 1e-4 * k, True)
    span(0.005, 1e-3, False)
    amps = np.concatenate(current)
    corrupt = np.zeros(amps.size, dtype=bool)
    pre, window, settle = 2000, round(ELAPSED_S / PERIOD_S), round(settle_s / PERIOD_S)
    # inside the first window; inside the third window's baseline span (before its guard)
    corrupt[[pre + window // 2, pre + 2 * (window + settle) - 60]] = True
    chunk = Chunk(1000, PERIOD_S, amps, 3.0, np.concatenate(logic),
                  current_range=(amps > 5e-3).astype(np.uint8), corrupt=corrupt,
                  at_floor=np.zeros(amps.size, dtype=bool))
    replies = [RunReply(n=10, cycles=125_000, elapsed_ns=round(ELAPSED_S * 1e9),
                        stack_bytes=0) for _ in range(WINDOWS)]
    return RecordedCapture("ppk2:test", (chunk,)), replies


def measurement() -> Measurement:
    return Measurement(StubBench(), Point(op="sha256", board="mps2-an386"),  # type: ignore[arg-type]
                       batch_n=10, per_op_s=ELAPSED_S / 10, prep={}, auto=False)


def test_each_window_of_a_group_reads_its_own_cut_not_the_whole_record(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = measurement()
    record, replies = group(m._settle_s())
    read: list[int] = []

    def spy(chunks: Any, *args: Any, **kwargs: Any) -> Any:
        read.append(sum(len(c) for c in chunks))
        return window_stats(chunks, *args, **kwargs)

    monkeypatch.setattr(figures_module, "window_stats", spy)
    rows = m._cut_group(record, replies)
    assert len(read) == WINDOWS
    for n, (_, kept) in zip(read, rows, strict=True):
        assert n == sum(len(c) for c in kept)  # the window's cut
    whole = sum(len(c) for c in record.chunk_list)
    assert max(read) * WINDOWS < whole  # far less than the record, every window


def test_a_windows_figures_from_its_cut_equal_those_from_the_whole_record() -> None:
    m = measurement()
    record, replies = group(m._settle_s())
    settings = m._settings(record)
    rows = m._cut_group(record, replies)
    for row, kept in rows:
        assert window_stats(kept, row, settings, None) == \
            window_stats(record.chunk_list, row, settings, None)
        assert stream_flags(kept, row, settings) == \
            stream_flags(record.chunk_list, row, settings)
    # the first window's own corrupt sample, and the third's in its baseline span
    assert [k for k, (row, _) in enumerate(rows) if "corrupt_samples" in row.flags] == [0, 2]
