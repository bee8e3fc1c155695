"""A sweep over several benches at once: one lane per bench, one queue of points, one store.

A lab run (``rig sweep PLAN --lab COORDINATOR --places P1,P2``) measures the points of a
plan on every place that can take them, in parallel. Each :class:`Slot` (a held labgrid
place, :class:`PlaceSlot`, from :func:`place_slots`) gets a *lane*: a thread that opens the
slot's bench, takes the next point of its board from the shared :class:`PointQueue`,
measures it with the sweep's own adaptive rule (:func:`energyrig.rig.sweep.point.measure_one`)
and hands the result to the one store. The benches are other machines; the threads here
only wait on their links and decode their streams. Each lane reports what it does (its
place opened, its points, its place gone) to the sweep's
:class:`~energyrig.rig.sweep.events.Reporter`.

What a lane decides when a point fails:

- the bench reopens and the slot is alive: the point failed on its own merits (a self-test
  failure, a hung DUT): it is stored ``failed`` as in a local sweep, and the lane goes on;
- the bench does not reopen, or the coordinator no longer lists the place's resources: the
  *place* is gone. The point is not stored; it goes back to the front of the queue for
  another lane of its board, and the dead lane ends. When no lane of its board is left, it
  is stored ``failed`` ("no place left that can take board X").

Points nobody has started when every lane of their board is gone stay unstored: the run is
left resumable (``rig sweep --resume RUN`` measures them when a place is back), which is
what an operator who comes in after a night with a dead bench host wants, rather than a
night of points marked failed that were never tried.

Writes are serialised by one lock around the :class:`~energyrig.results.store.write.RunWriter`
(it is not thread-safe; a point's write is a few milliseconds against seconds of
measuring), so every point is stored once, atomically, as in a local sweep.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import ContextManager, Protocol

from energyrig.domain import Point
from energyrig.errors import EnergyrigError, LabError
from energyrig.fixtures.schema import Fixture
from energyrig.lab.place import LabClient, PlaceInfo, acquired, fixture_for_place
from energyrig.results.store.write import RunWriter
from energyrig.rig.bench import Bench
from energyrig.rig.pipeline import PointBench, PointResult
from energyrig.rig.plan import Plan
from energyrig.rig.sweep.events import (LaneClosed, LaneOpened, PlaceGone, PointStored,
                                        Reporter)
from energyrig.rig.sweep.point import measure_one, store_result
from energyrig.rig.sweep.state import SweepOutcome
from energyrig.rig.sweep.stopping import StopRequest

log = logging.getLogger(__name__)


class Slot(Protocol):
    """A bench a lab sweep may measure on (:class:`PlaceSlot`)."""

    #: The place's name, recorded per point as ``place``.
    name: str
    #: Its bench host, recorded per point as ``host``.
    host: str
    #: The board it carries: it takes the points of this board.
    board: str

    def open(self) -> ContextManager[PointBench]:
        """Its bench (opened with ``with``; opened again after a failed point)."""
        ...

    def alive(self) -> bool:
        """False once the place is gone (its exporter or its resources unavailable)."""
        ...


class PointQueue:
    """The points still to measure, by board, shared by the lanes.

    A lane takes the next point of its board (:meth:`take`); a point whose place died goes
    back to the front (:meth:`give_back`). A lane waits while other lanes of its board still
    measure a point that could come back, and learns there is nothing left for it when its
    board's queue is empty and nobody measures one.
    """

    def __init__(self, points: Sequence[Point], lanes_per_board: Mapping[str, int],
                 stopped: Callable[[], bool] = lambda: False) -> None:
        self._todo: dict[str, deque[Point]] = {b: deque() for b in lanes_per_board}
        for point in points:
            self._todo[point.board].append(point)
        self._lanes = dict(lanes_per_board)
        self._busy = dict.fromkeys(lanes_per_board, 0)
        self._cond = threading.Condition()
        self._stopped = stopped

    def take(self, board: str) -> Point | None:
        """The next point of ``board`` (None: nothing left for this lane, or stopped)."""
        with self._cond:
            while not self._stopped():
                if self._todo[board]:
                    self._busy[board] += 1
                    return self._todo[board].popleft()
                if self._busy[board] == 0:
                    return None
                self._cond.wait(0.2)  # a stop (a signal handler) does not notify
            return None

    def done(self, board: str) -> None:
        """The point a lane of ``board`` took is stored (or was interrupted)."""
        with self._cond:
            self._busy[board] -= 1
            self._cond.notify_all()

    def give_back(self, board: str, point: Point) -> bool:
        """The lane measuring ``point`` is gone: put it first in line for another lane of
        ``board`` and end that lane. False when no lane of the board is left (the caller
        stores it failed)."""
        with self._cond:
            self._busy[board] -= 1
            self._lanes[board] -= 1
            alive = self._lanes[board] > 0
            if alive:
                self._todo[board].appendleft(point)
            self._cond.notify_all()
            return alive

    def lane_gone(self, board: str) -> None:
        """A lane of ``board`` ended without a point in hand (its bench would not open)."""
        with self._cond:
            self._lanes[board] -= 1
            self._cond.notify_all()


class Lanes:
    """The lanes of one execution of a lab sweep (see the module docstring).

    :func:`energyrig.rig.sweep.execute.execute` builds it with the points not stored yet
    and runs it (:meth:`run`).
    """

    def __init__(self, slots: Mapping[str, Sequence[Slot]], points: Sequence[Point],
                 plan: Plan, writer: RunWriter, outcome: SweepOutcome, stop: StopRequest,
                 reporter: Reporter) -> None:
        """``slots``: the slots of each board (the board's name as its points carry it)."""
        self.slots = [(board, slot) for board, group in slots.items() for slot in group]
        self.queue = PointQueue(points, {b: len(group) for b, group in slots.items()},
                                stopped=lambda: bool(stop))
        self.plan, self.writer, self.outcome, self.stop = plan, writer, outcome, stop
        self.reporter = reporter
        self._write = threading.Lock()
        self._error: BaseException | None = None

    def run(self) -> None:
        """Run one lane per slot until the queue is empty, every lane is gone or a stop
        comes (the main thread keeps taking signals meanwhile); a lane's unexpected error
        stops the others and is raised here."""
        threads = [threading.Thread(target=self._lane, args=(board, slot), daemon=True,
                                    name=f"lane-{slot.name}") for board, slot in self.slots]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)
        if self._error is not None:
            raise self._error

    def _lane(self, board: str, slot: Slot) -> None:
        self.reporter.report(LaneOpened(slot.name))
        keep = self.writer.manifest.get("keep_captures") or "none"
        bench_open = contextlib.ExitStack()
        try:
            bench = self._open(slot, bench_open)
            if bench is None:
                self.queue.lane_gone(board)
                return
            first = True
            while not self.stop and (point := self.queue.take(board)) is not None:
                if not first and self.stop.wait(self.plan.cooldown_s):
                    self.queue.done(board)  # stopped: the point stays unstored
                    break
                first = False
                result = measure_one(bench, point, self.plan, self.stop, self.reporter,
                                     keep=keep, place=slot.name)
                if result.status == "failed":
                    self._close(slot, bench_open)
                    bench = self._open(slot, bench_open)
                    if bench is None or not slot.alive():
                        self._place_gone(board, slot, point, result.reason)
                        return
                self._store(result, slot)
                self.queue.done(board)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            self._error = exc
            self.stop.set(f"lane {slot.name} failed: {exc}")
        finally:
            self._close(slot, bench_open)
            self.reporter.report(LaneClosed(slot.name))

    def _open(self, slot: Slot, stack: contextlib.ExitStack) -> PointBench | None:
        """The slot's bench, or None when it will not open (the place is gone)."""
        try:
            return stack.enter_context(slot.open())
        except (EnergyrigError, OSError) as exc:
            self.reporter.report(PlaceGone(slot.name, slot.host, str(exc)))
            log.warning("place %s (%s) is gone: %s", slot.name, slot.host, exc)
            return None

    def _close(self, slot: Slot, stack: contextlib.ExitStack) -> None:
        """Close the slot's bench (after a failed point, or at the end); a bench whose place
        is gone cannot say goodbye to its instrument (a broken link), which is no news."""
        try:
            stack.close()
        except (EnergyrigError, OSError) as exc:
            log.info("closing the bench of place %s: %s", slot.name, exc)

    def _place_gone(self, board: str, slot: Slot, point: Point, reason: str) -> None:
        """``slot`` died measuring ``point``: another lane takes the point, or none can."""
        if self.queue.give_back(board, point):
            with self._write:
                self.outcome.handed_over += 1
            self.reporter.report(PlaceGone(slot.name, slot.host, reason, handed_over=point))
            return
        why = f"{reason}; place {slot.name} is gone and no place left can take board {board}"
        with self._write:
            self.writer.write_failed(point, why, where={"place": slot.name, "host": slot.host})
            self.outcome.failed += 1
            self.reporter.report(PointStored(point, "failed", why, place=slot.name))

    def _store(self, result: PointResult, slot: Slot) -> None:
        with self._write:
            store_result(result, self.plan, self.writer, self.outcome, self.reporter,
                         where={"place": slot.name, "host": slot.host})


# --- the slots of a labgrid lab -----------------------------------------------------------

class PlaceSlot:
    """A held place with the fixture of its board, as the parallel sweep uses it.

    Attributes
    ----------
    name:
        The place's name (recorded per point as ``place``).
    host:
        The exporter host serving it (recorded per point as ``host``).
    board:
        The place's ``board`` tag.
    fixture:
        The fixture rewritten for the place (:func:`fixture_for_place`).
    """

    def __init__(self, client: LabClient, info: PlaceInfo, fixture: Fixture,
                 calibration: str | None = None) -> None:
        self.name = info.name
        self.host = info.host
        self.board = info.board
        self.fixture = fixture_for_place(fixture, info)
        self.calibration = calibration
        self._client = client

    def open(self) -> Bench:
        """The bench behind the place (``with slot.open() as bench:``)."""
        return Bench(self.fixture, self.calibration)

    def alive(self) -> bool:
        """Whether the coordinator still lists the place's ``dut`` and ``instrument`` as
        available (``False`` once their exporter is gone, or the coordinator is)."""
        try:
            return self._client.show(self.name).available
        except LabError as exc:
            log.warning("%s", exc)
            return False


@contextlib.contextmanager
def place_slots(coordinator: str, places: Sequence[str], fixtures: Sequence[Fixture],
                calibration: str | None = None) -> Iterator[list[PlaceSlot]]:
    """Acquire every place of ``places`` (at once: :func:`~energyrig.lab.place.acquired`),
    pair each with the fixture whose ``[dut] board`` is its ``board`` tag, yield their slots,
    release every place on the way out (also when acquiring another one fails).

    Raises
    ------
    LabError
        A place is unknown, held by someone else, has no ``dut``/``instrument`` resource, or
        carries a board no fixture has.
    """
    by_board: dict[str, Fixture] = {}
    for fx in fixtures:
        by_board.setdefault(fx.dut.board, fx)
    client = LabClient(coordinator)
    with acquired(client, places) as infos:
        slots = []
        for info in infos:
            fixture = by_board.get(info.board)
            if fixture is None:
                raise LabError(f"place {info.name} carries board "
                               f"{info.board or '(no board tag)'!r}; no fixture has it "
                               f"(boards: {', '.join(sorted(by_board))}); tag the place "
                               f"(labgrid-client -p {info.name} set-tags board=NAME)")
            slots.append(PlaceSlot(client, info, fixture, calibration))
        yield slots
