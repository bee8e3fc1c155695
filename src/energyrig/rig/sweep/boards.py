"""The boards of a sweep: their benches, the survey that reads each board's firmware and
catalogue when a sweep starts, and the check that each is calibrated."""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
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
