"""One point of a sweep: measured by the plan's adaptive rule, then stored and counted;
what happens is told to the sweep's :class:`~energyrig.rig.sweep.events.Reporter`."""
from __future__ import annotations

from collections.abc import Mapping

from energyrig.domain import Point
from energyrig.flags import CI_TARGET_NOT_MET
from energyrig.results.store.write import RunWriter
from energyrig.rig.pipeline import KeepCaptures, PointBench, PointResult, Readout, measure_point
from energyrig.rig.plan import Plan
from energyrig.rig.sweep.events import (
    BatchChanged,
    PointStarted,
    PointStored,
    Reporter,
    WindowMeasured,
)
from energyrig.rig.sweep.state import SweepOutcome
from energyrig.rig.sweep.stopping import StopRequest, enough_windows, next_group, target_met


def measure_one(bench: PointBench, point: Point, plan: Plan, stop: StopRequest,
                reporter: Reporter, *, keep: KeepCaptures = "none",
                place: str = "") -> PointResult:
    """Measure one point by the plan's adaptive rule, reporting its start and each window
    (``place``: the lab place it runs on)."""
    most = plan.adaptive.max_windows
    batch: list[int] = []  # the batch of the last window reported

    def progress(stage: str, windows: int, last: Readout | None) -> None:
        if last is None:
            reporter.report(PointStarted(point, most, place))
            return
        if batch and batch[-1] != last.batch_n:
            reporter.report(BatchChanged(point, batch[-1], last.batch_n, place))
        batch[:] = [last.batch_n]
        reporter.report(WindowMeasured(point, windows, most, last, place))

    return measure_point(
        bench, point, until=lambda windows: enough_windows(windows, plan),
        batch_n=None if plan.batch == "auto" else plan.batch, stop=lambda: bool(stop),
        on_progress=progress, keep=keep, group=lambda windows: next_group(windows, plan))


def store_result(result: PointResult, plan: Plan, writer: RunWriter, outcome: SweepOutcome,
                 reporter: Reporter, where: Mapping[str, str] | None = None) -> bool:
    """Store a measured point (``where``: the lab place and host it ran on), count it and
    report it; True when it failed. An interrupted point is not stored (a resume measures
    it)."""
    if result.status == "interrupted":
        return False
    place = (where or {}).get("place", "")
    if result.status == "failed":
        writer.write_failed(result.point, result.reason, batch_n=result.batch_n,
                            windows=result.windows, captures=result.captures, where=where)
        outcome.failed += 1
        reporter.report(PointStored(result.point, "failed", result.reason, place=place))
        return True
    window_flags = {f for w in result.windows for f in w.flags}
    flags = [f for f in result.flags if f not in window_flags]  # the point's own
    if not target_met(result.windows, plan):
        flags.append(CI_TARGET_NOT_MET)
        outcome.target_not_met += 1
    writer.write_point(result.point, list(result.windows), batch_n=result.batch_n,
                       uncertainty=result.uncertainty(), flags=flags,
                       captures=result.captures, where=where)
    outcome.measured += 1
    reporter.report(PointStored(result.point, "flagged" if flags else "ok",
                                flags=tuple(flags), place=place))
    return False
