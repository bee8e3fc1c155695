"""What a sweep tells its caller: a typed stream of events handed to a :class:`Reporter`.

The sweep never prints; ``cli/sweep.py`` draws the events with rich (the progress bar and
its messages) or writes them as JSON lines (``rig sweep --json``), a test collects them
(labgrid's step reporters are the model). Events of a lab sweep come from its lanes'
threads: a reporter is called from several threads at once and serialises what it writes.

Every event is a frozen dataclass; ``place`` is the lab place the event happened on (``""``
on a local bench).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from energyrig.domain import Point
from energyrig.rig.pipeline import Readout
from energyrig.rig.sweep.state import SweepOutcome

#: How a point was stored: ``flagged`` carries flags of its own (``ci_target_not_met``...).
Stored = Literal["ok", "failed", "flagged"]


@dataclass(frozen=True)
class RunReplaced:
    """``--overwrite`` deleted the run that was in ``run_dir``."""

    run_dir: Path


@dataclass(frozen=True)
class RetryingFailed:
    """A resume with ``--retry-failed`` measures ``count`` failed points again."""

    count: int


@dataclass(frozen=True)
class SweepStarted:
    """The measuring begins: ``total`` points in the run, ``already_done`` stored before."""

    run_dir: Path
    total: int
    already_done: int


@dataclass(frozen=True)
class LaneOpened:
    """A lab sweep's lane starts on ``place``: it opens the place's bench."""

    place: str


@dataclass(frozen=True)
class PointStarted:
    """``point`` is being prepared (self-test, keys, batch probe)."""

    point: Point
    max_windows: int
    place: str = ""


@dataclass(frozen=True)
class WindowMeasured:
    """``point`` has ``windows`` windows measured (of ``max_windows`` at most); ``readout``
    is the last one's."""

    point: Point
    windows: int
    max_windows: int
    readout: Readout
    place: str = ""


@dataclass(frozen=True)
class BatchChanged:
    """The batch-size rule changed ``point``'s batch from ``old`` to ``new`` ops (a window
    came out short, or a batch outlasted the record): its windows start over, so the
    window count goes back to 1."""

    point: Point
    old: int
    new: int
    place: str = ""


@dataclass(frozen=True)
class PointStored:
    """``point`` is in the run: ``status`` ok, failed (``reason``) or flagged (``flags``,
    the point's own, not its windows')."""

    point: Point
    status: Stored
    reason: str = ""
    flags: tuple[str, ...] = ()
    place: str = ""


@dataclass(frozen=True)
class PlaceGone:
    """The lab place ``place`` on ``host`` is gone (``reason``); ``handed_over`` names the
    point it was measuring that went back to another place of its board."""

    place: str
    host: str
    reason: str = ""
    handed_over: Point | None = None


@dataclass(frozen=True)
class LaneClosed:
    """The lane of ``place`` ended (nothing left for it, stopped, or its place gone)."""

    place: str


@dataclass(frozen=True)
class StopRequested:
    """A stop (Ctrl-C, SIGTERM: ``reason``) came: the sweep stops after the current window;
    a second one aborts at once."""

    reason: str


@dataclass(frozen=True)
class SweepFinished:
    """The sweep ended (complete, stopped, or no place left): its counts."""

    outcome: SweepOutcome


SweepEvent = (RunReplaced | RetryingFailed | SweepStarted | LaneOpened | PointStarted
              | WindowMeasured | BatchChanged | PointStored | PlaceGone | LaneClosed | StopRequested
              | SweepFinished)


class Reporter(Protocol):
    """Where a sweep's events go (``cli/sweep.py`` renders them)."""

    def report(self, event: SweepEvent) -> None:
        """Take one event; called from the lanes' threads too."""
        ...


class Silent:
    """A reporter that drops every event (a sweep run from Python without a display)."""

    def report(self, event: SweepEvent) -> None:
        """Drop ``event``."""


#: The reporter of a sweep given none.
SILENT = Silent()
