"""Sweep execution: the points of a plan measured one after another into a run directory.

>>> from energyrig.rig.plan import load_plan
>>> from energyrig.rig.sweep import start_sweep, resume_sweep
>>> outcome = start_sweep(load_plan("plans/quick.toml"), "runs/quick")
>>> outcome = resume_sweep("runs/quick")        # after a crash or Ctrl-C

What the executor guarantees:

- every finished point is written through :class:`energyrig.results.RunWriter` (atomically)
  before the next point starts, so a crash at any instant loses at most the point being
  measured, and :func:`resume_sweep` measures exactly the points not stored yet (same plan,
  same seed, same order);
- Ctrl-C (SIGINT) or SIGTERM stops between two windows: the point being measured is dropped
  (it is measured again on resume), the run is left resumable; a second Ctrl-C aborts at once;
- a point that fails (self-test failure, DUT not answering, instrument error) is stored as
  ``failed`` with the reason, the bench is reopened (a crashed or hung host DUT and the
  emulator restart) and the sweep goes on; combinations the op cannot take are stored as
  ``skipped`` with the reason before the first measurement;
- each point takes windows until the 95 % CI half-width of the plan's metric is under its
  target fraction of the mean, between ``min_windows`` and ``max_windows``.

Each point is measured by the one point pipeline (:func:`energyrig.rig.pipeline.measure_point`)
on a :class:`~energyrig.rig.pipeline.PointBench` (the fixture's bench from
:func:`energyrig.rig.bench.open_bench`, or anything that prepares a point once and then
measures one window at a time); the sweep adds the adaptive rule, the store and the progress
bar.
"""
from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, ContextManager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from energyrig.domain import PER_OP, Point, Window, estimate
from energyrig.errors import ConfigError, DutError
from energyrig.flags import CI_TARGET_NOT_MET
from energyrig.fixtures.loader import check_trusted, fixture_digest, load_fixture
from energyrig.fixtures.schema import Fixture
from energyrig.results.footprint import (
    Footprint,
    read_footprint,
    run_footprint_path,
    write_footprint,
)
from energyrig.results.stats import describe_finite
from energyrig.results.store.layout import (
    MANIFEST,
    RunError,
    check_new_run_dir,
    foreign_entries,
    listed,
)
from energyrig.results.store.read import read_manifest
from energyrig.results.store.write import RunWriter, delete_run
from energyrig.rig.dut import open_dut
from energyrig.rig.pipeline import KeepCaptures, PointBench, PointResult, measure_point
from energyrig.rig.plan import (
    Expansion,
    Plan,
    Skipped,
    Target,
    expand,
    plan_from_record,
)

if TYPE_CHECKING:
    from energyrig.rig.lanes import Slot

log = logging.getLogger(__name__)

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


# --- stopping -----------------------------------------------------------------------------

class StopRequest:
    """Set by Ctrl-C/SIGTERM (see :meth:`handle_signals`) or by a caller; checked between
    windows."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def set(self, reason: str = "stop requested") -> None:
        self.reason = reason
        self._event.set()

    def __bool__(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` unless a stop comes first; True when stopped."""
        return self._event.wait(seconds) if seconds > 0 else bool(self)

    @contextlib.contextmanager
    def handle_signals(self, console: Console | None = None) -> Iterator[None]:
        """First SIGINT/SIGTERM: stop after the current window. Second: abort now."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handler(signum: int, frame: FrameType | None) -> None:
            if self:
                raise KeyboardInterrupt
            self.set(signal.Signals(signum).name)
            message = ("stopping after the current window; the run stays resumable "
                       "(press Ctrl-C again to abort now)")
            if console is not None:
                console.print(f"[yellow]{message}[/]")
            log.info(message)

        previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, h in previous.items():
                signal.signal(s, h)


# --- one point ----------------------------------------------------------------------------

def _metric(window: Window, metric: str) -> float:
    """The adaptive rule's figure of one window, per window (batch_n cancels in the ratio):
    the window column whose per-op column is ``metric`` (see ``store.PER_OP``)."""
    return float(getattr(window, PER_OP[metric]))


def enough_windows(windows: Sequence[Window], plan: Plan) -> bool:
    """The adaptive rule: at least ``min_windows`` in the estimate (windows that failed an
    integrity check are replaced: :func:`~energyrig.domain.estimate`), then until the 95 %
    CI half-width of the metric is at most ``ci_target`` of its mean, at most
    ``max_windows`` measured in all."""
    rule = plan.adaptive
    if len(windows) >= rule.max_windows:
        return True
    return len(estimate(windows)) >= rule.min_windows and target_met(windows, plan)


def target_met(windows: Sequence[Window], plan: Plan) -> bool:
    """True when the 95 % CI half-width of the plan's metric over the windows of the
    estimate is within its ``ci_target`` (a point that stopped at ``max_windows`` without it
    is flagged ``ci_target_not_met``)."""
    summary = describe_finite([_metric(w, plan.adaptive.metric) for w in estimate(windows)])
    return summary is not None and summary.n >= 2 and \
        summary.ci_halfwidth_rel <= plan.adaptive.ci_target


# --- the sweep ----------------------------------------------------------------------------

@dataclass
class SweepOutcome:
    """Counts of one execution of a sweep (a start or a resume)."""

    run_dir: Path
    total: int
    measured: int = 0
    failed: int = 0
    skipped: int = 0
    already_done: int = 0
    failed_before: int = 0
    target_not_met: int = 0
    #: Points of a lab run handed to another place after theirs died mid-point.
    handed_over: int = 0
    stopped: str = ""

    @property
    def remaining(self) -> int:
        """Points still to measure (resume the run for them)."""
        return self.total - self.already_done - self.measured - self.failed

    @property
    def complete(self) -> bool:
        return self.remaining == 0

    @property
    def all_ok(self) -> bool:
        """Complete, and no point of the run stored as failed (now or before)."""
        return self.complete and self.failed == 0 and self.failed_before == 0


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("{task.description}", style="cyan"), BarColumn(),
                    MofNCompleteColumn(), TextColumn("points"), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(),
                    TextColumn("{task.fields[last]}", style="dim"),  # the last window's readout
                    console=console, transient=False)


@dataclass(frozen=True)
class BoardPlan:
    """One fixture of a sweep: its board's points and identity, read when the sweep starts."""

    fixture: Fixture
    expansion: Expansion
    hello: dict[str, Any]
    calibration: Mapping[str, Any] | None
    footprint: Footprint | None = None
    #: The instrument's ADC steps (its limits' resolution, for the uncertainty budget), as
    #: the manifest records them: ``rig reanalyze`` takes the budget again with them.
    resolution: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.expansion.target.board


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
    _distinct_boards(plan, [b.name for b in boards])
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


def _distinct_boards(plan: Plan, names: list[str]) -> None:
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
NO_PLACE_LEFT = "no place left that can take the points left"


@dataclass(frozen=True)
class Lab:
    """A labgrid lab to sweep on (:func:`energyrig.rig.lanes.place_slots`).

    Attributes
    ----------
    coordinator:
        The coordinator's ``HOST:PORT``.
    places:
        The places to measure on; each carries a ``board`` tag naming a plan fixture's board.
    calibration:
        As :class:`energyrig.rig.bench.Bench`'s, for every place's bench.
    """

    coordinator: str
    places: tuple[str, ...]
    calibration: str | None = "latest"

    @classmethod
    def from_record(cls, record: Mapping[str, Any], calibration: str | None) -> Lab:
        """The lab a run's manifest recorded (``lab``)."""
        return cls(str(record["coordinator"]), tuple(p["place"] for p in record["places"]),
                   calibration)


@contextlib.contextmanager
def lab_benches(lab: Lab, fixtures: Sequence[Fixture]
                ) -> Iterator[tuple[BenchFactory, dict[str, list[Slot]]]]:
    """Hold ``lab``'s places for the ``with`` block: yields a bench factory that opens each
    fixture's board on one of its places (for :func:`survey`) and the places of each
    fixture's board (by ``[dut] board``).

    Raises
    ------
    ConfigError
        A fixture's board is carried by none of the places.
    LabError
        A place cannot be acquired or carries a board no fixture has.
    """
    from energyrig.rig.lanes import place_slots

    with place_slots(lab.coordinator, lab.places, fixtures, lab.calibration) as slots:
        by_board: dict[str, list[Slot]] = {}
        for slot in slots:
            by_board.setdefault(slot.board, []).append(slot)
        for fx in fixtures:
            if fx.dut.board not in by_board:
                raise ConfigError(fx.path, "dut.board",
                                  f"no place of {', '.join(lab.places)} carries board "
                                  f"{fx.dut.board!r} (tag one: labgrid-client -p PLACE "
                                  f"set-tags board={fx.dut.board})")
        yield (lambda fx: by_board[fx.dut.board][0].open()), by_board


def _lab_record(lab: Lab, slots: Mapping[str, Sequence[Slot]]) -> dict[str, Any]:
    return {"coordinator": lab.coordinator,
            "places": [{"place": s.name, "board": s.board, "host": s.host}
                       for group in slots.values() for s in group]}


def execute(boards: Sequence[BoardPlan], writer: RunWriter, plan: Plan, *,
            bench_factory: BenchFactory = open_bench, stop: StopRequest | None = None,
            console: Console | None = None,
            slots: Mapping[str, Sequence[Slot]] | None = None) -> SweepOutcome:
    """Measure every point of ``boards`` not stored in ``writer`` yet: one bench at a time,
    or, given ``slots`` (each board's places of a lab), on all of them at once
    (:mod:`energyrig.rig.lanes`).

    Skipped combinations are stored first; then each point is measured and stored before
    the next starts on its bench, with ``plan.cooldown_s`` of idle time between two points
    on one bench. A bench with nothing left to measure is not opened.
    """
    stop = stop if stop is not None else StopRequest()
    console = console or Console(stderr=True)
    done = writer.done()
    outcome = SweepOutcome(writer.path, total=sum(len(b.expansion.points) for b in boards))
    for s in (s for b in boards for s in b.expansion.skipped):
        outcome.skipped += writer.write_skipped(s.point, s.reason)
    todo = [(b, [p for p in b.expansion.points if p.key not in done]) for b in boards]
    outcome.already_done = outcome.total - sum(len(points) for _, points in todo)
    outcome.failed_before = len(writer.failed())
    with _progress(console) as progress:
        task = progress.add_task("sweep", total=outcome.total, completed=outcome.already_done,
                                 last="")
        if slots is None:
            _one_bench_at_a_time(todo, writer, plan, bench_factory, stop, outcome, progress,
                                 task)
        else:
            from energyrig.rig.lanes import Lanes

            Lanes(slots, [p for _, points in todo for p in points], plan, writer, outcome,
                  stop, progress, task).run(measure_one, store_result)
    outcome.stopped = stop.reason if stop else ("" if outcome.complete else NO_PLACE_LEFT)
    return outcome


def _one_bench_at_a_time(todo: Sequence[tuple[BoardPlan, list[Point]]], writer: RunWriter,
                         plan: Plan, bench_factory: BenchFactory, stop: StopRequest,
                         outcome: SweepOutcome, progress: Progress, task: TaskID) -> None:
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
                failed = _measure_and_store(bench, point, plan, writer, stop, outcome,
                                            progress, task)
                if failed and k + 1 < len(points) and not stop:
                    # A hung or crashed DUT fails every later point: start afresh
                    # (the host DUT and emulator restart; a board's port reopens).
                    log.info("reopening the bench of %s after a failed point", board.name)
                    bench_open.close()
                    bench = bench_open.enter_context(bench_factory(board.fixture))


def _measure_and_store(bench: PointBench, point: Point, plan: Plan, writer: RunWriter,
                       stop: StopRequest, outcome: SweepOutcome, progress: Progress,
                       task: TaskID) -> bool:
    """Measure and store one point; True when it failed."""
    result = measure_one(bench, point, plan, stop, progress, task,
                         keep=writer.manifest.get("keep_captures") or "none")
    return store_result(result, plan, writer, outcome, progress, task)


def measure_one(bench: PointBench, point: Point, plan: Plan, stop: StopRequest,
                progress: Progress, task: TaskID, *, keep: KeepCaptures = "none",
                prefix: str = "") -> PointResult:
    """Measure one point by the plan's adaptive rule, showing it on ``task`` (its label
    after ``prefix``, the windows done, the last window's readout)."""
    label = prefix + point.label
    progress.update(task, description=label)
    return measure_point(
        bench, point, until=lambda windows: enough_windows(windows, plan),
        batch_n=None if plan.batch == "auto" else plan.batch, stop=lambda: bool(stop),
        on_progress=lambda stage, n, last: progress.update(
            task, description=f"{label} [{n}/{plan.adaptive.max_windows}]",
            last=f"last: {last.text()}" if last else ""),
        keep=keep)


def store_result(result: PointResult, plan: Plan, writer: RunWriter, outcome: SweepOutcome,
                 progress: Progress, task: TaskID,
                 where: Mapping[str, str] | None = None) -> bool:
    """Store a measured point (``where``: the lab place and host it ran on) and count it;
    True when it failed. An interrupted point is not stored (a resume measures it)."""
    if result.status == "interrupted":
        return False
    failed = result.status == "failed"
    if failed:
        writer.write_failed(result.point, result.reason, batch_n=result.batch_n,
                            windows=result.windows, captures=result.captures, where=where)
        outcome.failed += 1
        progress.console.print(f"[red]failed[/] {result.point.label}: {result.reason}")
    else:
        window_flags = {f for w in result.windows for f in w.flags}
        flags = [f for f in result.flags if f not in window_flags]  # the point's own
        if not target_met(result.windows, plan):
            flags.append(CI_TARGET_NOT_MET)
            outcome.target_not_met += 1
        writer.write_point(result.point, list(result.windows), batch_n=result.batch_n,
                           uncertainty=result.uncertainty(), flags=flags,
                           captures=result.captures, where=where)
        outcome.measured += 1
    progress.advance(task)
    return failed


def _fixture_record(fixture: Fixture) -> dict[str, Any]:
    return {**fixture.model_dump(mode="json", exclude={"path", "source"}),
            "path": str(fixture.file), "sha256": fixture_digest(fixture)}


def _manifest_parts(boards: Sequence[BoardPlan]) -> dict[str, Any]:
    """Fixture, firmware and calibration for the manifest: as they are for one board; for
    several, one entry per board (``board`` names them all, for a reader that shows one)."""
    if len(boards) == 1:
        b = boards[0]
        return {"fixture": _fixture_record(b.fixture), "firmware": b.hello,
                "calibration": b.calibration, "instrument": {"resolution": b.resolution}}
    names = ", ".join(b.name for b in boards)
    return {"fixture": {"name": " + ".join(b.fixture.name or b.name for b in boards),
                        "fixtures": [_fixture_record(b.fixture) for b in boards]},
            "firmware": {"board": names, "boards": {b.name: b.hello for b in boards}},
            "calibration": None if all(b.calibration is None for b in boards) else
            {"id": names, "boards": {b.name: b.calibration for b in boards}},
            "instrument": {"boards": {b.name: {"resolution": b.resolution} for b in boards}}}


def _programs(boards: Sequence[BoardPlan], lab: bool) -> list[str]:
    """The external programs a sweep runs, whose versions its manifest records: a sigrok
    instrument's sigrok-cli, a DUT run under qemu, and the ser2net that shares a lab
    place's ports (labgrid starts it)."""
    sigrok = [getattr(b.fixture.instrument, "sigrok_cli", None) for b in boards]
    qemu = [b.fixture.dut.command[0] for b in boards
            if b.fixture.dut.command and Path(b.fixture.dut.command[0]).name.startswith("qemu")]
    return [*(p for p in sigrok if p is not None), *qemu, *(["ser2net"] if lab else [])]


def _recorded_entries(manifest: Mapping[str, Any]) -> list[Any]:
    """The manifest's record of each fixture the run was measured on (one for most runs)."""
    recorded = manifest.get("fixture") or {}
    return list(recorded.get("fixtures", [recorded]) if isinstance(recorded, Mapping)
                else [recorded])


def _recorded_fixture(run_dir: Path, entry: Any) -> Fixture:
    """The fixture ``entry`` of the run's manifest names: it must be in a trusted directory
    and unchanged since the run began (a run directory must not be able to run commands, nor
    mix points measured on two benches: docs/security.md).

    Raises
    ------
    RunError
        The record lacks its ``path`` or its ``sha256`` (a missing integrity field is an
        error, not a check skipped), or the fixture changed.
    ConfigError
        The fixture is malformed, or runs a program and is not in a trusted directory.
    """
    if not isinstance(entry, Mapping) or not entry.get("path"):
        raise RunError(run_dir, "its manifest names no fixture; give --fixture")
    digest = entry.get("sha256")
    if not isinstance(digest, str):
        raise RunError(run_dir, "its manifest has no fixture.sha256, so whether the fixture "
                                "changed since the run began cannot be checked; resume with "
                                "--fixture FILE to measure on a fixture you name")
    fx = load_fixture(entry["path"])
    check_trusted(fx, run_dir / MANIFEST, "fixture.path")
    if digest != fixture_digest(fx):
        raise RunError(run_dir, f"{fx.path} changed since the run began; resume with "
                                "--fixture FILE to measure on it as it is now")
    return fx


def _finish(writer: RunWriter, boards: list[BoardPlan], plan: Plan, bench_factory: BenchFactory,
            console: Console, stop: StopRequest,
            slots: Mapping[str, Sequence[Slot]] | None = None) -> SweepOutcome:
    for b in boards:  # the footprint of the firmware measured now, also on a resume
        if b.footprint is not None:
            write_footprint(b.footprint, run_footprint_path(writer.path, b.name))
    lanes = None if slots is None else {b.name: slots[b.fixture.dut.board] for b in boards}
    outcome = execute(boards, writer, plan, bench_factory=bench_factory, stop=stop,
                      console=console, slots=lanes)
    if not outcome.complete:
        # The run stays "in progress" (no end time) until a resume finishes it.
        writer.close(finished=False)
    return outcome


def start_sweep(plan: Plan, run_dir: str | Path, *, fixture: Fixture | None = None,
                bench_factory: BenchFactory = open_bench, console: Console | None = None,
                stop: StopRequest | None = None, overwrite: bool = False,
                require_calibration: bool = False,
                keep_captures: KeepCaptures = "none", lab: Lab | None = None) -> SweepOutcome:
    """Run ``plan`` into a new run directory, on ``fixture`` or else on the plan's fixtures
    (one after another), else on the default fixture; with ``lab``, on the lab's places at
    once (each fixture's points on the places that carry its board; ``bench_factory`` is
    not used).

    Parameters
    ----------
    overwrite:
        Replace a run already in ``run_dir`` (refused while a sweep is writing it).
    require_calibration:
        Refuse to start when a bench is not fully calibrated (:func:`check_calibrated`);
        ``bench_factory`` applies the calibration (:func:`calibrated_benches`).
    keep_captures:
        Whose samples to keep in the run's ``captures/`` (no window's, the flagged ones',
        all); recorded in the manifest, so a resume keeps the same.
    """
    run_dir = Path(run_dir)
    plan = plan.with_seed()
    fixtures = plan_fixtures(plan, fixture)
    console = console or Console(stderr=True)
    stop = stop if stop is not None else StopRequest()
    if overwrite:
        remove_run(run_dir, console)
    check_new_run_dir(run_dir)  # refused before the benches are opened
    with stop.handle_signals(console), contextlib.ExitStack() as held:
        slots = None
        if lab is not None:
            bench_factory, slots = held.enter_context(lab_benches(lab, fixtures))
        boards = survey(plan, fixtures, bench_factory)
        check_calibrated(boards, required=require_calibration)
        with RunWriter.create(run_dir, plan=plan.record(), seed=plan.seed,
                              keep_captures=keep_captures, **_manifest_parts(boards),
                              lab=None if slots is None else _lab_record(lab, slots),
                              programs=_programs(boards, lab=slots is not None)
                              ) as writer:
            return _finish(writer, boards, plan, bench_factory, console, stop, slots)


def resume_sweep(run_dir: str | Path, *, fixture: Fixture | None = None,
                 bench_factory: BenchFactory = open_bench, console: Console | None = None,
                 stop: StopRequest | None = None, require_calibration: bool = False,
                 retry_failed: bool = False, lab: Lab | None = None,
                 calibration: str | None = "latest") -> SweepOutcome:
    """Continue the sweep of ``run_dir``: same plan, seed and order; points already stored
    (measured, failed or skipped) are not measured again, except, with ``retry_failed``,
    the failed ones (each measured again as its next attempt; the failed attempt stays in
    the run). ``require_calibration`` as :func:`start_sweep`.

    ``fixture`` replaces the one recorded in the run's manifest (a run on one fixture only).
    A lab run goes back to its lab (its manifest's coordinator and places, with
    ``calibration``), or to ``lab`` if given.
    """
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    plan = plan_from_record(manifest.get("plan") or {}, run_dir / MANIFEST)
    if plan.seed is None or plan.seed != manifest.get("seed"):
        raise RunError(run_dir, "its manifest has no seed matching its plan; cannot resume "
                                "in the same order")
    recorded = _recorded_entries(manifest)
    if fixture is None:
        fixtures = [_recorded_fixture(run_dir, entry) for entry in recorded]
    elif len(recorded) > 1:
        raise RunError(run_dir, f"was measured on {len(recorded)} fixtures; resume it "
                                "without --fixture")
    else:
        fixtures = [fixture]
    console = console or Console(stderr=True)
    stop = stop if stop is not None else StopRequest()
    if lab is None and manifest.get("lab"):
        lab = Lab.from_record(manifest["lab"], calibration)
    # The writer first: a run another sweep is writing is refused before any bench opens.
    with stop.handle_signals(console), RunWriter.resume(run_dir) as writer, \
            contextlib.ExitStack() as held:
        if retry_failed and (retried := writer.retry_failed()):
            console.print(f"measuring {len(retried)} failed points again")
        slots = None
        if lab is not None:
            bench_factory, slots = held.enter_context(lab_benches(lab, fixtures))
            writer.manifest["lab"] = _lab_record(lab, slots)
        boards = survey(plan, fixtures, bench_factory)
        check_calibrated(boards, required=require_calibration)
        if _manifest_parts(boards)["firmware"] != manifest.get("firmware"):
            log.warning("resuming %s with other firmware than it began with", run_dir)
        return _finish(writer, boards, plan, bench_factory, console, stop, slots)


def remove_run(run_dir: Path, console: Console | None = None) -> None:
    """Delete the run in ``run_dir`` (if any) so a new one can start there.

    Refused (:class:`RunError`), deleting nothing, while a sweep is writing it, or when
    the directory holds any file the run did not write, at any depth (the operator's notes
    in it or in one of its folders, or no run at all): ``--overwrite`` deletes only what
    the run's records name (:func:`energyrig.results.store.write.delete_run`)."""
    if not run_dir.exists():
        return
    if not (run_dir / MANIFEST).exists():
        if foreign := foreign_entries(run_dir):
            raise RunError(run_dir, f"holds files but no run (no manifest.json) "
                                    f"({listed(foreign)}); not removed")
        return
    delete_run(run_dir)
    message = f"replaced the previous run in {run_dir}"
    if console is not None:
        console.print(f"[yellow]{message}[/]")
    else:
        log.warning(message)


# --- dry run ------------------------------------------------------------------------------

# A window's wall time beyond its recorded span and margins: the idle and run requests and
# replies, moving the samples; measured on the simulated bench (plans/quick.toml).
WINDOW_OVERHEAD_S = 0.1
# Preparing a point without timings: prep (self-test, keys) and the batch probe.
POINT_OVERHEAD_S = 0.3
# Sample rate assumed for the auto batch's window length (a PPK2), samples/s.
ASSUMED_RATE_HZ = 100e3


@dataclass(frozen=True)
class OpTiming:
    """One configuration timed by the firmware: its prep (self-test, keys) and one op, s."""

    prep_s: float
    op_s: float


@dataclass(frozen=True)
class DryRun:
    """The points a plan would measure, per board, and a duration estimate (s)."""

    plan: Plan
    expansions: tuple[Expansion, ...]
    min_s: float
    max_s: float
    timed: bool = False

    @property
    def points(self) -> tuple[Point, ...]:
        return tuple(p for e in self.expansions for p in e.points)

    @property
    def skipped(self) -> tuple[Skipped, ...]:
        return tuple(s for e in self.expansions for s in e.skipped)


def point_wall_s(fixture: Fixture, windows: int, timing: OpTiming | None) -> float:
    """Wall time of one point of ``windows`` windows on ``fixture``, s.

    A window of the auto batch holds ``measure.min_window_samples`` (at
    :data:`ASSUMED_RATE_HZ`) or one op, whichever is longer, plus its margins, the stream
    latency and the exchange; a point adds its prep and batch probe (``timing`` from
    :func:`time_ops`, else :data:`POINT_OVERHEAD_S`).
    """
    m = fixture.measure
    latency = fixture.emulator_latency_s
    span = m.min_window_samples / ASSUMED_RATE_HZ
    overhead = POINT_OVERHEAD_S
    if timing is not None:
        span = max(span, timing.op_s)
        overhead = timing.prep_s + 2 * timing.op_s + latency
    window = m.pre_s + span + m.post_s + latency + WINDOW_OVERHEAD_S
    return overhead + windows * window


def read_target(fixture: Fixture) -> Target:
    """The board's catalogue and clocks from the DUT alone (no instrument is opened)."""
    with open_dut(fixture) as dut:
        hello = dut.hello()
        return Target.from_dut(hello, dut.ops(), board=hello.get("board") or fixture.dut.board)


def time_ops(fixture: Fixture, points: Sequence[Point]) -> dict[str, OpTiming]:
    """Prep and one op of each configuration of ``points``, timed by the firmware on the
    fixture's DUT (no instrument). Keyed by the point key without ``rep``; a configuration
    the DUT refuses is left out (the sweep will record it as failed)."""
    timings: dict[str, OpTiming] = {}
    m = fixture.measure
    with open_dut(fixture) as dut:
        for point in points:
            config = point.config_key
            if config in timings:
                continue
            try:
                prep = dut.prep(point.op, key_bits=point.key_bits,
                                payload_bytes=point.payload_bytes, curve=point.curve,
                                backend=point.backend, timeout_s=m.probe_timeout_s)
                run = dut.run(1, fixture.dut.timeout_s + 2 * m.probe_timeout_s)  # warm-up + 1
            except DutError as exc:
                log.warning("%s: %s", config, exc)
                continue
            timings[config] = OpTiming(int(prep.get("prep_ns", 0)) * 1e-9, run.elapsed_s)
    return timings


def dry_run(plan: Plan, fixtures: Sequence[Fixture],
            read: Callable[[Fixture], Target] = read_target,
            timer: Callable[[Fixture, Sequence[Point]], Mapping[str, OpTiming]] | None = None
            ) -> DryRun:
    """Expand ``plan`` on each fixture's board and estimate the duration between the adaptive
    rule's minimum and maximum windows.

    Without ``timer`` (e.g. :func:`time_ops`) every op is taken to fit a window; with it,
    ops slower than that (RSA key generation) count at their measured time.
    """
    plan = plan.with_seed()
    expansions = tuple(expand(plan, read(fx)) for fx in fixtures)
    _distinct_boards(plan, [e.target.board for e in expansions])
    bounds = [0.0, 0.0]
    for fx, e in zip(fixtures, expansions, strict=True):
        timings = timer(fx, e.points) if timer is not None else {}
        for k, windows in enumerate((plan.adaptive.min_windows, plan.adaptive.max_windows)):
            bounds[k] += sum(point_wall_s(fx, windows, timings.get(p.config_key))
                             for p in e.points)
            bounds[k] += max(0, len(e.points) - 1) * plan.cooldown_s
    return DryRun(plan, expansions, bounds[0], bounds[1], timed=timer is not None)
