"""Fewer requests per point (issue 24 part 3): ``auto`` sizes a point's windows by the edge
error bound the bench's last windows showed (:attr:`Bench.edge_samples`), so on a bench
that has measured a window the sizing window is not short by its edges and is kept, and a
point that measures groups sizes its batch on its first group: one request, no separate
sizing window.

The scripted bench knows every sample; the emulated Cortex-M4 bench places every edge by
the board's cycles, so what is asserted holds however loaded the host is."""
from __future__ import annotations

import pytest
from support.m4 import SIM_M4, assert_built, spy_groups
from support.pipeline import POINT, ScriptedBench
from test_point_overhead import EDGE_FACTOR, HeavyEdges, runs_of

from energyrig.domain import Point
from energyrig.fixtures import load_fixture
from energyrig.rig.bench import open_bench
from energyrig.rig.pipeline import measure_point, reps_done, reps_left


def test_a_bench_that_measured_heavy_edges_sizes_the_next_point_for_them() -> None:
    bench = ScriptedBench()
    bench.instrument = HeavyEdges(bench.dut, bench.log)
    first = measure_point(bench, POINT, until=reps_done(3))
    assert first.ok and bench.log.count("collect") == 4  # its sizing window was short
    assert bench.edge_samples is not None and bench.edge_samples > 2.0
    bench.log.clear()
    second = measure_point(bench, POINT, until=reps_done(3))
    assert second.ok and len(second.windows) == 3
    assert bench.log.count("collect") == 3  # every record a window of the estimate
    m = bench.fixture.measure
    for w in second.windows:
        assert w.edge_error_j <= m.max_edge_error * abs(w.energy_j)


def test_the_edges_learnt_are_those_of_the_windows_not_a_guess() -> None:
    bench = ScriptedBench()
    bench.instrument = HeavyEdges(bench.dut, bench.log)
    result = measure_point(bench, POINT, until=reps_done(2))
    w = result.windows[-1]
    # each edge: one sample at EDGE_FACTOR times the window's current
    assert bench.edge_samples == pytest.approx(w.edge_error_j * w.samples / w.energy_j)
    assert bench.edge_samples == pytest.approx(2 * EDGE_FACTOR, rel=0.01)


def test_a_fresh_bench_sizes_on_one_window_and_drops_no_more() -> None:
    bench = ScriptedBench()
    bench.instrument = HeavyEdges(bench.dut, bench.log)
    runs = runs_of(bench)
    prepared = bench.prepare(POINT)
    assert prepared.first_windows(3) == ()  # short: grown, not kept
    assert len([n for n, settle in runs if settle]) == 1  # one window measured, not three


@pytest.mark.slow
def test_the_second_point_on_the_emulated_board_is_one_group_request() -> None:
    assert_built()
    with open_bench(load_fixture(SIM_M4)) as bench:
        asked = spy_groups(bench.dut)
        runs = runs_of(bench)  # type: ignore[arg-type]
        first = measure_point(bench, Point(op="sha256", board=bench.board, payload_bytes=256),
                              until=reps_done(3), group=reps_left(3))
        asked.clear()
        runs.clear()
        second = measure_point(bench, Point(op="rc4", board=bench.board, payload_bytes=256),
                               until=reps_done(3), group=reps_left(3))
    assert first.ok and second.ok, (first.reason, second.reason)
    assert len(second.windows) == 3 and not [w for w in second.windows if w.flags]
    # the probes only, then one request for the three windows at the point's batch
    assert not [n for n, settle in runs if settle]
    assert asked == [(second.batch_n, 3)]
