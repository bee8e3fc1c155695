"""Start, resume and remove a sweep's run: the run directory, its manifest and the benches
it is measured on (the package docstring says what a sweep guarantees)."""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from energyrig.fixtures.loader import check_trusted, fixture_digest, load_fixture
from energyrig.fixtures.schema import Fixture
from energyrig.results.footprint import run_footprint_path, write_footprint
from energyrig.results.store.layout import (
    MANIFEST,
    RunError,
    check_new_run_dir,
    foreign_entries,
    listed,
)
from energyrig.results.store.read import read_manifest
from energyrig.results.store.write import RunWriter, delete_run
from energyrig.rig.pipeline import KeepCaptures
from energyrig.rig.plan import Plan, plan_from_record
from energyrig.rig.sweep.boards import (
    BenchFactory,
    KeptOpen,
    check_calibrated,
    open_bench,
    plan_fixtures,
    survey,
)
from energyrig.rig.sweep.events import SILENT, Reporter, RetryingFailed, RunReplaced
from energyrig.rig.sweep.execute import execute
from energyrig.rig.sweep.lab import Lab, lab_benches, lab_record
from energyrig.rig.sweep.lanes import Slot
from energyrig.rig.sweep.state import BoardPlan, SweepOutcome
from energyrig.rig.sweep.stopping import StopRequest

log = logging.getLogger(__name__)


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
            reporter: Reporter, stop: StopRequest,
            slots: Mapping[str, Sequence[Slot]] | None = None) -> SweepOutcome:
    for b in boards:  # the footprint of the firmware measured now, also on a resume
        if b.footprint is not None:
            write_footprint(b.footprint, run_footprint_path(writer.path, b.name))
    lanes = None if slots is None else {b.name: slots[b.fixture.dut.board] for b in boards}
    outcome = execute(boards, writer, plan, bench_factory=bench_factory, stop=stop,
                      reporter=reporter, slots=lanes)
    if not outcome.complete:
        # The run stays "in progress" (no end time) until a resume finishes it.
        writer.close(finished=False)
    return outcome


def start_sweep(plan: Plan, run_dir: str | Path, *, fixture: Fixture | None = None,
                bench_factory: BenchFactory = open_bench, reporter: Reporter = SILENT,
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
        ``bench_factory`` applies the calibration (:func:`~energyrig.rig.sweep.boards.calibrated_benches`).
    keep_captures:
        Whose samples to keep in the run's ``captures/`` (no window's, the flagged ones',
        all); recorded in the manifest, so a resume keeps the same.
    """
    run_dir = Path(run_dir)
    plan = plan.with_seed()
    fixtures = plan_fixtures(plan, fixture)
    stop = stop if stop is not None else StopRequest()
    if overwrite:
        remove_run(run_dir, reporter)
    check_new_run_dir(run_dir)  # refused before the benches are opened
    with stop.handle_signals(reporter), contextlib.ExitStack() as held:
        slots = None
        if lab is not None:
            bench_factory, slots = held.enter_context(lab_benches(lab, fixtures))
        else:  # the survey's bench is the one measured on
            bench_factory = held.enter_context(KeptOpen(bench_factory))
        boards = survey(plan, fixtures, bench_factory)
        check_calibrated(boards, required=require_calibration)
        with RunWriter.create(run_dir, plan=plan.record(), seed=plan.seed,
                              keep_captures=keep_captures, **_manifest_parts(boards),
                              lab=None if slots is None else lab_record(lab, slots),
                              programs=_programs(boards, lab=slots is not None)
                              ) as writer:
            return _finish(writer, boards, plan, bench_factory, reporter, stop, slots)


def resume_sweep(run_dir: str | Path, *, fixture: Fixture | None = None,
                 bench_factory: BenchFactory = open_bench, reporter: Reporter = SILENT,
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
    stop = stop if stop is not None else StopRequest()
    if lab is None and manifest.get("lab"):
        lab = Lab.from_record(manifest["lab"], calibration)
    # The writer first: a run another sweep is writing is refused before any bench opens.
    with stop.handle_signals(reporter), RunWriter.resume(run_dir) as writer, \
            contextlib.ExitStack() as held:
        if retry_failed and (retried := writer.retry_failed()):
            reporter.report(RetryingFailed(len(retried)))
        slots = None
        if lab is not None:
            bench_factory, slots = held.enter_context(lab_benches(lab, fixtures))
            writer.manifest["lab"] = lab_record(lab, slots)
        else:  # the survey's bench is the one measured on
            bench_factory = held.enter_context(KeptOpen(bench_factory))
        boards = survey(plan, fixtures, bench_factory)
        check_calibrated(boards, required=require_calibration)
        if _manifest_parts(boards)["firmware"] != manifest.get("firmware"):
            log.warning("resuming %s with other firmware than it began with", run_dir)
        return _finish(writer, boards, plan, bench_factory, reporter, stop, slots)


def remove_run(run_dir: Path, reporter: Reporter = SILENT) -> None:
    """Delete the run in ``run_dir`` (if any) so a new one can start there.

    Refused (:class:`RunError`), deleting nothing, while a sweep is writing it, or when
    the directory holds any file the run did not write, at any depth (the operator's notes
    in it or in one of its folders, or no run at all): ``--overwrite`` deletes only what
    the run's records name (:func:`energyrig.results.store.delete_run`)."""
    if not run_dir.exists():
        return
    if not (run_dir / MANIFEST).exists():
        if foreign := foreign_entries(run_dir):
            raise RunError(run_dir, f"holds files but no run (no manifest.json) "
                                    f"({listed(foreign)}); not removed")
        return
    delete_run(run_dir)
    log.info("replaced the previous run in %s", run_dir)
    reporter.report(RunReplaced(run_dir))


