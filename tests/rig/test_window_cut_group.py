"""A window of a group whose record lost the idle before the next window holds both: it is
``window_cut`` and left out of the estimate (found by helper duty6 on the emulated Cortex-M4
at load 8: with the 2 ms idle of sim-m4.toml a loss the PPK2's counter could not count merged
five windows into one of 338 ms, which stayed in its point's estimate 35 % off the truth)."""
from __future__ import annotations

import numpy as np
from support.m4 import STUB_PERIOD_S, StubBench

from energyrig.capture import Chunk
from energyrig.domain import Point, in_estimate
from energyrig.flags import WINDOW_CUT, WINDOW_LOST
from energyrig.instruments.base import RecordedCapture
from energyrig.rig.dut import RunReply
from energyrig.rig.pipeline import Measurement

ELAPSED_S = 5e-3  # each window's batch, as the firmware timed it
IDLE_A, ACTIVE_A = 1e-3, 10e-3


def _record(spans: list[tuple[float, bool]]) -> RecordedCapture:
    """Idle and trigger-high spans (s, high) in order, sampled every STUB_PERIOD_S."""
    counts = [round(s / STUB_PERIOD_S) for s, _ in spans]
    logic = np.concatenate([np.full(n, h, dtype=np.uint8) for n, (_, h) in zip(counts, spans)])
    current = np.where(logic == 1, ACTIVE_A, IDLE_A)
    return RecordedCapture("ppk2:test", (Chunk(1000, STUB_PERIOD_S, current, 3.0, logic),))


def _cut(spans: list[tuple[float, bool]]) -> list[tuple[str, ...]]:
    m = Measurement(StubBench(), Point(op="sha256", board="mps2-an386"),  # type: ignore[arg-type]
                    batch_n=10, per_op_s=ELAPSED_S / 10, prep={}, auto=False)
    replies = [RunReply(n=10, cycles=125_000, elapsed_ns=round(ELAPSED_S * 1e9), stack_bytes=0)
               for _ in range(3)]
    return [row.flags for row, _ in m._cut_group(_record(spans), replies)]


def test_a_window_that_swallowed_the_next_is_cut_and_left_out() -> None:
    idle = 2e-3  # sim-m4.toml's: whole ms of guard_s + baseline_s
    whole = [(0.02, False), (ELAPSED_S, True), (idle, False), (ELAPSED_S, True),
             (idle, False), (ELAPSED_S, True), (0.005, False)]
    assert not any(WINDOW_CUT in f for f in _cut(whole))
    # the idle between windows 2 and 3 lost: window 2 runs on through window 3
    merged = whole[:4] + whole[5:]
    flags = _cut(merged)
    assert WINDOW_CUT in flags[1] and WINDOW_LOST in flags[2]
    assert in_estimate(flags) == [True, False, False]
