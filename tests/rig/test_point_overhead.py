"""What a point spends outside its windows (issue 24 part 3): with ``auto`` the batch size is
settled on one recorded window, not on an unrecorded batch, so a window whose edges need more
samples than the probes' timing gives grows the batch before any group is measured (one
window lost, not a group), and a window that holds enough is the point's first.

The scripted bench knows every sample; the emulated Cortex-M4 bench places every edge by the
board's cycles, so what is asserted holds however loaded the host is."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from support.m4 import SIM_M4, assert_built, spy_groups
from support.pipeline import POINT, ScriptedBench, ScriptedInstrument

from energyrig.domain import Point
from energyrig.fixtures import load_fixture
from energyrig.instruments.base import RecordedCapture
from energyrig.rig.bench import open_bench
from energyrig.rig.dut import RunReply
from energyrig.rig.pipeline import measure_point, reps_done, reps_left

#: Current of the first and last sample inside a window, times the window's own: an op whose
#: power at its edges is above its mean, so its edge error bound wants more samples than
#: ``2 / max_edge_error``.
EDGE_FACTOR = 4.0


@dataclass
class HeavyEdges(ScriptedInstrument):
    """The scripted record with its window's first and last sample at ``EDGE_FACTOR``."""

    def collect(self, timeout_s: float) -> RecordedCapture:
        record = super().collect(timeout_s)
        chunk = record.chunk_list[0]
        assert chunk.logic is not None
        high = np.flatnonzero(chunk.logic)
        chunk.current_a[[high[0], high[-1]]] *= EDGE_FACTOR
        return record


def runs_of(bench: ScriptedBench) -> list[tuple[int, float]]:
    """Spy on the scripted DUT's ``run``: (ops, settle s) of each request."""
    runs: list[tuple[int, float]] = []
    run = bench.dut.run

    def spy(n: int, timeout_s: float, settle_s: float = 0.0) -> RunReply:
        runs.append((n, settle_s))
        return run(n, timeout_s, settle_s)

    bench.dut.run = spy  # type: ignore[method-assign]
    return runs


def test_heavy_edges_grow_the_batch_on_the_sizing_window_not_after() -> None:
    bench = ScriptedBench()
    bench.instrument = HeavyEdges(bench.dut, bench.log)
    prepared = bench.prepare(POINT)
    probed = prepared.batch_n
    assert prepared.first_windows() == ()  # the short window is not kept
    sized = prepared.batch_n
    assert sized > probed and prepared.restarts == 1
    row = prepared.window()
    m = bench.fixture.measure
    assert prepared.batch_n == sized  # the first window after preparing holds enough
    assert row.edge_error_j <= m.max_edge_error * abs(row.energy_j)


def test_the_window_that_settles_the_batch_is_the_points_first() -> None:
    bench = ScriptedBench()
    runs = runs_of(bench)
    result = measure_point(bench, POINT, until=reps_done(3))
    assert result.ok and len(result.windows) == 3
    assert bench.log.count("collect") == 3  # every record is a window of the estimate
    # outside the windows only the probes ran, each smaller than the chosen batch
    unrecorded = [n for n, settle in runs if not settle]
    assert unrecorded and all(n < result.batch_n for n in unrecorded)


@pytest.mark.slow
def test_no_group_is_measured_at_a_batch_the_point_drops_on_the_emulated_board() -> None:
    assert_built()
    fixture = load_fixture(SIM_M4)
    with open_bench(fixture) as bench:
        asked = spy_groups(bench.dut)
        result = measure_point(bench, Point(op="sha256", board=bench.board, payload_bytes=256),
                               until=reps_done(3), group=reps_left(3))
    assert result.ok, result.reason
    assert len(result.windows) == 3
    # every group at the point's batch, none measured and dropped
    assert asked and all(n == result.batch_n for n, _ in asked)
    assert sum(w for _, w in asked) <= len(result.windows)


def test_a_sizing_window_that_fails_keeps_the_points_prep_and_batch() -> None:
    bench = ScriptedBench()
    runs = runs_of(bench)
    bench.dut.fail_at_run = 3  # two probes, then the sizing window's run
    result = measure_point(bench, POINT, until=reps_done(3))
    assert result.status == "failed" and "did not answer" in result.reason
    assert result.prep.get("selftest") == "pass" and result.point.family == "hash"
    assert result.batch_n > max(n for n, _ in runs[:2]) and not result.windows
