"""The boards of a sweep: their benches, the survey that reads each board's firmware and
catalogue when a sweep starts, and the check that each is calibrated."""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from typing import ContextManager

from energyrig.errors import ConfigError
from energyrig.fixtures.loader import check_trusted, load_fixture
from energyrig.fixtures.schema import Fixture
from energyrig.results.footprint import read_footprint
from energyrig.rig.pipeline import PointBench
from energyrig.rig.plan import Plan, Target, expand
from energyrig.rig.sweep.state import BoardPlan

log = logging.getLogger(__name__)

#: Opens the bench of a fixture (``with factory(fixture) as bench:``).
BenchFactory = Callable[[Fixture], ContextManager[PointBench]]


def open_bench(fixture: Fixture) -> ContextManager[PointBench]:
    """The bench of ``fixture`` (:func:`energyrig.rig.bench.open_bench`), uncorrected."""
    return calibrated_benches(None)(fixture)


def calibrated_benches(calibration: str | None) -> BenchFactory:
    """Benches that apply ``calibration`` (``"latest"``, ``"none"``, a record's path;
    ``None``: no correction stage), as :class:`energyrig.rig.bench.Bench` takes it."""
    from energyrig.rig.bench import (
        open_bench as open_fixture_bench,  # instruments, emulators
    )

    return lambda fixture: open_fixture_bench(fixture, calibration)


class KeptOpen:
    """A bench factory that keeps the first bench it opens for a fixture open after its
    ``with`` ends, and hands that bench out again to the next ``with`` for the same fixture:
    the bench :func:`survey` opened is the one the sweep measures on, not a second start of
    it (on the simulated bench: the emulator and the DUT, QEMU's boot, started once).

    Only a fixture's first bench is kept: every later one closes at the end of its ``with``
    (the executor reopening a bench after a failed point gets a fresh start). At most one
    bench is open at a time: a ``with`` for another fixture closes the kept one before it
    opens its own; one never handed out again closes with the ``with`` of this factory. Not
    for a lab's places: a place kept would stay held while the lanes measure
    (``start_sweep`` does not wrap their factory).
    """

    def __init__(self, factory: BenchFactory) -> None:
        self._factory = factory
        self._kept: tuple[Fixture, contextlib.ExitStack, PointBench] | None = None
        self._opened: list[Fixture] = []  # the fixtures whose first bench was opened

    def __enter__(self) -> KeptOpen:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        kept, self._kept = self._kept, None
        if kept is not None:
            kept[1].close()

    @contextlib.contextmanager
    def __call__(self, fixture: Fixture) -> Iterator[PointBench]:
        if self._kept is not None and self._kept[0] is fixture:
            _, held, bench = self._kept
            self._kept = None
            with held:  # handed out again: closes with this `with`
                yield bench
            return
        self._close()
        first = not any(f is fixture for f in self._opened)
        with contextlib.ExitStack() as held:
            bench = held.enter_context(self._factory(fixture))
            self._opened.append(fixture)
            yield bench
            if first:
                self._kept = (fixture, held.pop_all(), bench)


def survey(plan: Plan, fixtures: Sequence[Fixture],
           bench_factory: BenchFactory = open_bench) -> list[BoardPlan]:
    """Open each fixture's bench once to read its firmware and catalogue, and expand the
    plan on it; read the footprint the fixture names. Two fixtures must not name the same
    board (their points would collide)."""
    boards: list[BoardPlan] = []
    for fixture in fixtures:
        path = fixture.footprint_path
        footprint = read_footprint(path) if path is not None else None
        with bench_factory(fixture) as bench:
            target = Target.from_dut(bench.hello, bench.ops(), board=bench.board)
            limits = getattr(bench, "limits", None)  # a scripted bench has none
            resolution = None if limits is None else limits.resolution
            boards.append(BoardPlan(fixture, expand(plan, target), dict(bench.hello),
                                    bench.calibration, footprint,
                                    None if resolution is None else asdict(resolution)))
    distinct_boards(plan, [b.name for b in boards])
    return boards


def check_calibrated(boards: Sequence[BoardPlan], *, required: bool) -> None:
    """Refuse (``required``) or warn about a board whose bench applies an incomplete or no
    calibration; a bench without a correction stage (``calibration`` ``None``) is not
    asked.

    Raises
    ------
    ConfigError
        ``required`` and a board is not fully calibrated (names its fixture and why).
    """
    for b in boards:
        if b.calibration is None or b.calibration["complete"]:
            continue
        problem = b.calibration["problem"]
        if required:
            raise ConfigError(b.fixture.path, "calibration",
                              f"{problem}; a sweep refuses to measure uncalibrated unless "
                              "given --allow-uncalibrated")
        log.warning("%s: %s; its points are flagged uncalibrated", b.name, problem)


def distinct_boards(plan: Plan, names: list[str]) -> None:
    """Refuse two fixtures that name one board (their points would collide).

    Raises
    ------
    ConfigError
        ``names`` (each fixture's board) holds a name twice.
    """
    if len(set(names)) != len(names):
        raise ConfigError(plan.path, "fixture", f"the fixtures measure boards {names}; give "
                                                "each its own [dut] board name")


def plan_fixtures(plan: Plan, fixture: Fixture | None = None) -> list[Fixture]:
    """``fixture`` if given, else the plan's fixtures, else the default fixture."""
    if fixture is not None:
        return [fixture]
    fixtures = [load_fixture(p) for p in plan.fixture_paths()]
    for fx in fixtures:
        check_trusted(fx, plan.path, "fixture")
    return fixtures or [load_fixture()]


#: Why a lab sweep ended with points left unmeasured (:class:`SweepOutcome`'s ``stopped``).
