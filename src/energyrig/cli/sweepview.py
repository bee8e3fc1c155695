"""How ``rig sweep`` shows a sweep: its events (:mod:`energyrig.rig.sweep.events`) drawn with
rich (:class:`SweepDisplay`: the progress bar and its messages) or written as JSON lines
(:class:`JsonLines`, ``rig sweep --json``; docs/sweep.md)."""
from __future__ import annotations

import dataclasses
import json
import math
import re
import shlex
import threading
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from energyrig.cli.progress import LinedProgress
from energyrig.cli.terminal import summarise_repeats
from energyrig.domain import Point
from energyrig.rig.sweep.events import (
    BatchChanged,
    LaneClosed,
    LaneOpened,
    PlaceGone,
    PointStarted,
    PointStored,
    RetryingFailed,
    RunReplaced,
    StopRequested,
    SweepEvent,
    SweepFinished,
    SweepStarted,
    WindowMeasured,
)
from energyrig.rig.sweep.state import SweepOutcome


class SweepDisplay:
    """Draws a sweep's events on ``console``: one progress bar for the run (and one per lab
    place), each with its point and last window's readout on a line below it; a line for
    each failed point, gone place and stop, the outcome at the end. ``bars=False``
    (``rig -q``): the lines only.

    Use as a context manager around the sweep (the bar is closed also when it raises).
    """

    def __init__(self, console: Console, *, bars: bool = True) -> None:
        self.console = console
        self.bars = bars
        self._progress: LinedProgress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> SweepDisplay:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._close()

    def __rich__(self) -> RenderableType:
        """What the display shows now (its bars and their lines; nothing when closed)."""
        return "" if self._progress is None else self._progress.get_renderable()

    def _close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def report(self, event: SweepEvent) -> None:
        """Draw ``event`` (called from the lanes' threads too; rich serialises)."""
        match event:
            case SweepStarted():
                self._start(event)
            case LaneOpened(place=place) if self._progress is not None:
                self._tasks[place] = self._progress.add_task(place, total=None, now="opening",
                                                             note="", last="")
            case PointStarted() if self._progress is not None:
                self._update(event.place, now=f"{event.point.label} [0/{event.max_windows}]",
                             note="", last="")
            case BatchChanged() if self._progress is not None:
                self._update(event.place, note=f"batch {event.old} -> {event.new}, "
                                               "windows restart")
            case WindowMeasured() if self._progress is not None:
                self._update(event.place,
                             now=f"{event.point.label} [{event.windows}/{event.max_windows}]",
                             last=f"last: {event.readout.text()}")
            case PointStored():
                if event.status == "failed":
                    self.console.print(f"[red]failed[/] {event.point.label}: {event.reason}")
                self._advance("")
                if event.place:
                    self._advance(event.place)
            case PlaceGone(handed_over=None):
                self.console.print(f"[red]place {event.place} ({event.host}) is gone[/]: "
                                   f"{event.reason}")
            case PlaceGone(handed_over=point) if point is not None:
                self.console.print(f"[yellow]place {event.place} ({event.host}) is gone; "
                                   f"{point.label} goes to another place[/]")
            case LaneClosed(place=place) if self._progress is not None:
                task = self._tasks[place]
                done = next(t.completed for t in self._progress.tasks if t.id == task)
                self._progress.update(task, total=done, now="done", note="", last="")
            case StopRequested():
                self.console.print("[yellow]stopping after the current window; the run stays "
                                   "resumable (press Ctrl-C again to abort now)[/]")
            case RunReplaced(run_dir=run_dir):
                self.console.print(f"[yellow]replaced the previous run in {run_dir}[/]")
            case RetryingFailed(count=count):
                self.console.print(f"measuring {count} failed points again")
            case SweepFinished(outcome=outcome):
                self._close()
                summarise_repeats(self.console)
                _print_outcome(outcome, self.console)

    def _start(self, event: SweepStarted) -> None:
        self._close()
        if not self.bars:
            return
        self._progress = LinedProgress(
            TextColumn("{task.description}", style="cyan"), BarColumn(bar_width=None),
            MofNCompleteColumn(), TextColumn("points"), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn(),
            console=self.console, transient=False, expand=True)
        self._progress.start()
        self._tasks = {"": self._progress.add_task("sweep", total=event.total,
                                                   completed=event.already_done, now="",
                                                   note="", last="")}

    def _update(self, place: str, **fields: str) -> None:
        assert self._progress is not None
        self._progress.update(self._tasks[place], **fields)

    def _advance(self, place: str) -> None:
        if self._progress is not None:
            self._progress.advance(self._tasks[place])


class JsonLines:
    """Writes a sweep's events to ``stream`` as JSON lines (``rig sweep --json``): one
    object per event, its kind under ``event`` (``point_stored``...), its fields beside it
    (a point as its ``key`` and ``label``, SI units, NaN as null; docs/sweep.md)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        # reentrant: a stop request is reported from the signal handler, which may run in
        # the main thread while it writes a line
        self._lock = threading.RLock()

    def report(self, event: SweepEvent) -> None:
        """Write ``event`` as one line (a line at a time from the lanes' threads)."""
        line = json.dumps({"event": event_name(event), **_plain(event)}, allow_nan=False)
        with self._lock:
            self.stream.write(line + "\n")
            self.stream.flush()


def event_name(event: SweepEvent) -> str:
    """``point_stored`` for a :class:`~energyrig.rig.sweep.events.PointStored`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(event).__name__).lower()


def _plain(value: Any) -> Any:
    """``value`` as JSON takes it: dataclasses as objects (an outcome with its derived
    counts), a point as its key and label, paths as text, NaN as null."""
    match value:
        case Point():
            return {"key": value.key, "label": value.label}
        case SweepOutcome():
            return {**_fields(value), "remaining": value.remaining,
                    "complete": value.complete, "all_ok": value.all_ok}
        case _ if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return _fields(value)
        case Path():
            return str(value)
        case float() if not math.isfinite(value):
            return None
        case tuple() | list():
            return [_plain(v) for v in value]
        case _:
            return value


def _fields(value: Any) -> dict[str, Any]:
    return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}


def _print_outcome(o: SweepOutcome, console: Console) -> None:
    console.print(f"run {o.run_dir}: {o.measured} points measured, {o.failed} failed, "
                  f"{o.skipped} skipped combinations listed"
                  + (f", {o.already_done} stored before" if o.already_done else ""))
    if o.handed_over:
        console.print(f"[yellow]{o.handed_over} points were handed to another place after "
                      "theirs died while measuring them[/]")
    if o.target_not_met:
        console.print(f"[yellow]{o.target_not_met} of {o.measured} points stopped at the plan's "
                      "max_windows before their 95 % CI reached its ci_target: they are "
                      "flagged ci_target_not_met (in points.parquet and the report); raise "
                      "\\[adaptive] max_windows, or accept the wider intervals[/]")
    if not o.complete:
        console.print(f"[yellow]stopped ({o.stopped or 'interrupted'}) with {o.remaining} "
                      f"points left; continue with: rig sweep --resume "
                      f"{shlex.quote(str(o.run_dir))}[/]")
