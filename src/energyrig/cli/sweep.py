"""``rig sweep PLAN``: measure every point of a plan into a run directory.

A thin layer over :mod:`energyrig.rig.sweep`; its events are shown by
:mod:`energyrig.cli.sweepview` (rich, or JSON lines with ``--json``); durations are formatted
only here.
"""
from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from energyrig.cli.calibrate import CALIBRATION_HELP
from energyrig.units import format_duration

if TYPE_CHECKING:
    from rich.console import Console

    from energyrig.domain import Point
    from energyrig.rig.sweep.dryrun import DryRun
    from energyrig.rig.sweep.state import SweepOutcome


def _default_out(title: str) -> Path:
    return Path("runs") / f"{title}-{datetime.now(UTC):%Y%m%d-%H%M%S}"


def _print_dry_run(d: DryRun, console: Console) -> None:
    from rich.table import Table
    boards = [e.target.board for e in d.expansions]
    configs = len({p.config_key for p in d.points})
    reps = d.plan.repetitions
    console.print(f"plan [bold]{d.plan.title}[/] ({d.plan.path}) on {', '.join(boards)} — "
                  f"seed {d.plan.seed}")
    console.print(f"[bold]{len(d.points)}[/] points to measure ({configs} configurations × "
                  f"{reps} repetition{'s' if reps > 1 else ''}), {len(d.skipped)} "
                  "combinations skipped")
    a = d.plan.adaptive
    console.print(f"windows per point: {a.min_windows}..{a.max_windows}, until the 95 % CI of "
                  f"{a.metric} is within ±{a.ci_target * 100:.3g} % of the mean")
    console.print(f"estimated duration: {format_duration(d.min_s)} .. "
                  f"{format_duration(d.max_s)}" + (" (ops timed on the DUT)" if d.timed else
                                                   " (ops slower than a window take longer: "
                                                   "--probe times them)"))
    configs_table = Table(title="Points to measure (each configuration × its repetitions)")
    for column in ("board", "configuration", "repetitions")[len(boards) == 1:]:
        configs_table.add_column(column)
    seen: dict[str, list[Point]] = {}
    for point in d.points:
        seen.setdefault(point.config_key, []).append(point)
    def order(group: list[Point]) -> tuple:
        p = group[0]
        return (p.board, p.op, p.backend, p.key_bits or 0, p.curve or "", p.payload_bytes or 0,
                p.cpu_hz or 0)

    for group in sorted(seen.values(), key=order):
        first = replace(group[0], rep=0)
        configs_table.add_row(*(first.board, first.label, str(len(group)))[len(boards) == 1:])
    console.print(configs_table)
    if d.skipped:
        table = Table(title="Skipped combinations")
        for column in ("board", "op", "reason")[len(boards) == 1:]:
            table.add_column(column)
        for s in d.skipped:
            table.add_row(*(s.point.board, s.point.op, s.reason)[len(boards) == 1:])
        console.print(table)


def retry_hint(outcome: SweepOutcome) -> str:
    """What to type to measure a complete run's failed points again (rich markup)."""
    from rich.markup import escape
    failed = outcome.failed + outcome.failed_before
    return (f"[yellow]{failed} point{'s' if failed != 1 else ''} of the run failed; measure "
            f"{'them' if failed != 1 else 'it'} again with:[/]\n"
            f"  rig sweep --resume {escape(shlex.quote(str(outcome.run_dir)))} --retry-failed")


def _refuse_conflicts(*, resume: bool, plan: bool, out: bool, dry: bool, probe: bool,
                      overwrite: bool, retry_failed: bool, as_json: bool) -> None:
    """A usage error for options that contradict each other (none is ignored silently)."""
    conflicts = [
        (resume and plan, "--resume takes the run directory only (its plan and seed are in "
                          "its manifest): give no PLAN"),
        (resume and (out or overwrite or dry), "--resume continues a run: --out, "
                                               "--overwrite and --dry-run do not apply"),
        (not resume and not plan, "give a PLAN (or --resume RUN_DIR)"),
        (retry_failed and not resume, "--retry-failed works with --resume RUN_DIR"),
        (probe and not dry, "--probe works with --dry-run (it times the ops for the "
                            "estimate)"),
        (dry and (out or overwrite), "--dry-run writes nothing: --out and --overwrite do "
                                     "not apply"),
        (dry and as_json, "--json writes a sweep's events; --dry-run measures nothing"),
    ]
    for conflict, message in conflicts:
        if conflict:
            raise typer.BadParameter(message)


def register(app: typer.Typer) -> None:
    """Add the ``sweep`` command to ``app``."""

    @app.command()
    def sweep(
        plan: Optional[Path] = typer.Argument(
            None, metavar="PLAN", dir_okay=False, help="The plan (TOML): factors, levels, repetitions, "
                                       "adaptive rule. See plans/quick.toml."),
        fixture: Optional[Path] = typer.Option(
            None, "--fixture", "-f", dir_okay=False,
            help="Bench definition (default: the plan's fixtures, else fixtures/sim.toml)."),
        out: Optional[Path] = typer.Option(
            None, "--out", "-o", file_okay=False,
            help="Run directory to create (default: runs/<plan>-<UTC time>)."),
        resume: Optional[Path] = typer.Option(
            None, "--resume", file_okay=False,
            help="Continue the run in this directory after a crash or Ctrl-C; measures "
                 "only the points it does not hold yet."),
        retry_failed: bool = typer.Option(
            False, "--retry-failed", help="With --resume: measure the points stored as failed "
                                          "again (the failed attempt is kept in the run)."),
        overwrite: bool = typer.Option(
            False, "--overwrite", help="Replace a run already in --out (only what the run "
                                       "wrote is deleted; refused if it holds other files)."),
        dry: bool = typer.Option(
            False, "--dry-run", help="Print the points, the skipped combinations and a "
                                     "duration estimate; measure nothing."),
        probe: bool = typer.Option(
            False, "--probe", help="With --dry-run: time each configuration once on the DUT "
                                   "(prep and one op) so slow ops count in the estimate."),
        calibration: str = typer.Option("latest", "--calibration", help=CALIBRATION_HELP),
        keep_captures: Optional[str] = typer.Option(
            None, "--keep-captures", metavar="none|flagged|all",
            help="Keep the samples of each flagged window (or of all) in RUN_DIR/captures/, "
                 "for `rig analyze --plot` and the report's traces (default none). A resume "
                 "keeps what the run began with."),
        allow_uncalibrated: bool = typer.Option(
            False, "--allow-uncalibrated",
            help="Sweep even when a bench is not fully calibrated (the manifest, every "
                 "point and the report say so)."),
        lab: Optional[str] = typer.Option(
            None, "--lab", metavar="HOST:PORT",
            help="Measure on a labgrid lab: its coordinator (with --places). The plan's "
                 "points run in parallel on the places that carry their board (docs/lab.md)."),
        places: Optional[str] = typer.Option(
            None, "--places", metavar="P1,P2,...",
            help="With --lab: the places to hold for the sweep; each carries a board tag "
                 "naming a fixture's board. A place that dies hands its point to another."),
        as_json: bool = typer.Option(
            False, "--json", help="Write what the sweep does as JSON lines on stdout (one "
                                  "object per event, its kind under \"event\"; docs/sweep.md) "
                                  "instead of the progress bar."),
    ) -> None:
        """Measure every point of a plan on a bench into a run directory.

        The points (op × key size × payload × curve × backend × clock ×
        repetition) are measured in an order shuffled with the plan's seed
        (recorded in the run). Each point takes windows until the 95 % CI of
        its energy per op is within the plan's target, and is written before
        the next starts. Combinations an op cannot take are listed as skipped;
        a point that fails (self-test, DUT not answering) is stored as failed
        with the reason, and the sweep goes on.

        Each bench's calibration (rig calibrate) is applied to every record;
        the sweep refuses to start on a bench that is not fully calibrated
        unless given --allow-uncalibrated.

        Ctrl-C stops after the current window; `rig sweep --resume RUN_DIR`
        continues. Then `rig report RUN_DIR`. Plans: docs/sweep.md.

        Examples:

          rig sweep plans/quick.toml --dry-run

          rig sweep plans/symmetric.toml --out runs/sym

          rig sweep plans/quick.toml --keep-captures flagged

          rig sweep --resume runs/sym

          rig sweep plans/quick.toml --lab 127.0.0.1:20408 --places bench-a,bench-b

        Exit codes: 0 all points ok; 3 complete with failed points; 4 a lab
        run left points because no place could take them (resume when a
        place is back); 75 disk full (free space and --resume); 130 stopped
        (Ctrl-C); 2 bad input.
        """
        # the plan, the sweep and the results store (pandas, pyarrow): only here
        from rich.console import Console

        from energyrig.cli.sweepview import JsonLines, SweepDisplay
        from energyrig.cli.terminal import err_console, quiet
        from energyrig.fixtures import load_fixture
        from energyrig.rig.pipeline import KEEP_CAPTURES
        from energyrig.rig.plan import load_plan
        from energyrig.rig.sweep.boards import calibrated_benches, plan_fixtures
        from energyrig.rig.sweep.dryrun import dry_run, time_ops
        from energyrig.rig.sweep.lab import Lab
        from energyrig.rig.sweep.run import resume_sweep, start_sweep
        from energyrig.rig.sweep.state import NO_PLACE_LEFT

        _refuse_conflicts(resume=resume is not None, plan=plan is not None, out=out is not None,
                          dry=dry, probe=probe, overwrite=overwrite, retry_failed=retry_failed,
                          as_json=as_json)
        if resume is not None and keep_captures is not None:
            raise typer.BadParameter("--resume keeps the policy the run began with (its "
                                     "manifest's keep_captures)", param_hint="--keep-captures")
        keep_captures = keep_captures or "none"
        if keep_captures not in KEEP_CAPTURES:
            raise typer.BadParameter(f"{keep_captures!r}: give one of {', '.join(KEEP_CAPTURES)}",
                                     param_hint="--keep-captures")
        held = None
        if lab is not None or places is not None:
            names = tuple(p.strip() for p in (places or "").split(",") if p.strip())
            if lab is None or not names:
                raise typer.BadParameter("give --lab HOST:PORT and --places P1,P2,... together "
                                         "(a lab run's --resume goes back to its own lab "
                                         "without them)", param_hint="--lab/--places")
            held = Lab(lab, names, calibration)
        fx = load_fixture(fixture) if fixture is not None else None
        p = load_plan(plan) if plan is not None else None
        if p is not None and dry:
            _print_dry_run(dry_run(p, plan_fixtures(p, fx), timer=time_ops if probe else None),
                           Console())
            return
        calibrated = {"bench_factory": calibrated_benches(calibration),
                      "require_calibration": not allow_uncalibrated}
        err = err_console()
        with SweepDisplay(err, bars=not quiet()) as display:
            reporter = JsonLines(sys.stdout) if as_json else display
            if p is None:
                assert resume is not None
                outcome = resume_sweep(resume, fixture=fx, reporter=reporter,
                                       retry_failed=retry_failed, lab=held,
                                       calibration=calibration, **calibrated)
            else:
                outcome = start_sweep(p, out or _default_out(p.title), fixture=fx,
                                      reporter=reporter, overwrite=overwrite,
                                      keep_captures=keep_captures,  # type: ignore[arg-type]
                                      lab=held, **calibrated)
        if not outcome.complete:
            # stopped by Ctrl-C/SIGTERM, or a lab's places are gone: resumable either way
            raise typer.Exit(130 if outcome.stopped != NO_PLACE_LEFT else 4)
        if not outcome.all_ok:  # complete, with failed points (also with --json: stderr)
            err.print(retry_hint(outcome), highlight=False)
            raise typer.Exit(3)
