"""The executor: every point of a sweep not stored yet, measured one bench at a time, or on
a lab's places at once (:mod:`energyrig.rig.sweep.lanes`)."""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from energyrig.domain import Point
from energyrig.results.store.write import RunWriter
from energyrig.rig.pipeline import PointResult
from energyrig.rig.plan import Plan
from energyrig.rig.sweep.boards import BenchFactory, open_bench
from energyrig.rig.sweep.events import SILENT, Reporter, SweepFinished, SweepStarted
from energyrig.rig.sweep.lanes import Lanes, Slot
from energyrig.rig.sweep.point import measure_one, store_result
from energyrig.rig.sweep.state import NO_PLACE_LEFT, BoardPlan, SweepOutcome
from energyrig.rig.sweep.stopping import StopRequest

log = logging.getLogger(__name__)


def execute(boards: Sequence[BoardPlan], writer: RunWriter, plan: Plan, *,
            bench_factory: BenchFactory = open_bench, stop: StopRequest | None = None,
            reporter: Reporter = SILENT,
            slots: Mapping[str, Sequence[Slot]] | None = None) -> SweepOutcome:
    """Measure every point of ``boards`` not stored in ``writer`` yet: one bench at a time,
    or, given ``slots`` (each board's places of a lab), on all of them at once
    (:mod:`energyrig.rig.sweep.lanes`); ``reporter`` is told what happens, from
    :class:`~energyrig.rig.sweep.events.SweepStarted` to
    :class:`~energyrig.rig.sweep.events.SweepFinished`.

    Skipped combinations are stored first; then each point is measured, and stored while
    the next one is measured on its bench (one store at a time, in order), with
    ``plan.cooldown_s`` of idle time between two points on one bench. A bench with nothing
    left to measure is not opened.
    """
    stop = stop if stop is not None else StopRequest()
    done = writer.done()
    outcome = SweepOutcome(writer.path, total=sum(len(b.expansion.points) for b in boards))
    for s in (s for b in boards for s in b.expansion.skipped):
        outcome.skipped += writer.write_skipped(s.point, s.reason)
    todo = [(b, [p for p in b.expansion.points if p.key not in done]) for b in boards]
    outcome.already_done = outcome.total - sum(len(points) for _, points in todo)
    outcome.failed_before = len(writer.failed())
    reporter.report(SweepStarted(writer.path, outcome.total, outcome.already_done))
    if slots is None:
        _one_bench_at_a_time(todo, writer, plan, bench_factory, stop, outcome, reporter)
    else:
        Lanes(slots, [p for _, points in todo for p in points], plan, writer, outcome,
              stop, reporter).run()
    outcome.stopped = stop.reason if stop else ("" if outcome.complete else NO_PLACE_LEFT)
    reporter.report(SweepFinished(outcome))
    return outcome


def _one_bench_at_a_time(todo: Sequence[tuple[BoardPlan, list[Point]]], writer: RunWriter,
                         plan: Plan, bench_factory: BenchFactory, stop: StopRequest,
                         outcome: SweepOutcome, reporter: Reporter) -> None:
    """Each point measured, then stored while the next one is measured: storing is the
    host's work (a point's tables, its files), measuring mostly waits on the DUT and the
    instrument. One store at a time, in the points' order; a point's store has ended (and
    its error raised here) before the next point's starts, and the last before this
    returns."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="store") as storing:
        pending: list[Future[bool]] = []

        def store(result: PointResult) -> None:
            for stored in pending:
                stored.result()
            pending[:] = [storing.submit(store_result, result, plan, writer, outcome,
                                         reporter)]
        try:
            _measure_all(todo, writer, plan, bench_factory, stop, reporter, store)
        finally:
            for stored in pending:
                stored.result()


def _measure_all(todo: Sequence[tuple[BoardPlan, list[Point]]], writer: RunWriter,
                 plan: Plan, bench_factory: BenchFactory, stop: StopRequest,
                 reporter: Reporter, store: Callable[[PointResult], None]) -> None:
    keep = writer.manifest.get("keep_captures") or "none"
    first = True
    for board, points in todo:
        if not points or stop:
            continue
        with contextlib.ExitStack() as bench_open:
            bench = bench_open.enter_context(bench_factory(board.fixture))
            for k, point in enumerate(points):
                if stop or (not first and stop.wait(plan.cooldown_s)):
                    break
                first = False
                result = measure_one(bench, point, plan, stop, reporter, keep=keep)
                store(result)
                if result.status == "failed" and k + 1 < len(points) and not stop:
                    # A hung or crashed DUT fails every later point: start afresh
                    # (the host DUT and emulator restart; a board's port reopens).
                    log.info("reopening the bench of %s after a failed point", board.name)
                    bench_open.close()
                    bench = bench_open.enter_context(bench_factory(board.fixture))
