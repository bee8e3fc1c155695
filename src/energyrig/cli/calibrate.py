"""``rig calibrate``: the routines (``zero``, ``gain``, ``skew``, ``overhead``, ``baseline``,
``all``), what the store holds (``list``) and what applies to a bench (``show``).

A thin layer over :mod:`energyrig.calibration.routines` and :mod:`energyrig.calibration.store`;
prompts and formatting only here.
"""
from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from energyrig.calibration.quantities import ORDER, short_id
from energyrig.units import format_si

if TYPE_CHECKING:
    from rich.table import Table

    from energyrig.calibration.store import Calibration, Record, Value

#: The help of ``--calibration`` of ``rig run`` and ``rig sweep``.
CALIBRATION_HELP = ("Calibration to apply: 'latest' (each quantity's newest valid value in the "
                    "fixture's calibration directory or $ENERGYRIG_CALIBRATION_DIR), 'none', "
                    "or the path of a record.")


def _value(v: Value) -> str:
    """The value ± u, and each current range's of its own on a line below it."""
    def one(value: float, u: float) -> str:
        if v.unit == "1":
            return f"{value:.6f} ± {u:.2g}"
        return f"{format_si(value, v.unit, digits=4)} ± {format_si(u, v.unit, digits=3)}"
    return "\n".join([one(v.value, v.u), *(f"range {r}: {one(rv.value, rv.u)}"
                                           for r, rv in sorted(v.ranges.items()))])


def _state(v: Value, now: datetime) -> str:
    return "expired" if v.expired(now) else f"valid until {v.expires_utc:%Y-%m-%d %H:%M}"


def _calibration_table(cal: Calibration, now: datetime) -> Table:
    from rich.table import Table
    table = Table(title=f"Calibration of {cal.instrument.label} ({cal.origin})")
    for column in ("quantity", "value ± u (k=1)", "method", "reference", "record", "state"):
        table.add_column(column, overflow="fold")  # a record's id is folded, never cut
    for q, v in cal.values.items():
        table.add_row(q, _value(v), v.method, v.reference, short_id(cal.sources[q]),
                      _state(v, now))
    for q in cal.missing:
        table.add_row(q, "-", "-", "-", "-", "expired" if q in cal.expired else "missing")
    return table


def _record_table(record: Record) -> Table:
    from rich.table import Table
    table = Table(title=f"Calibration {short_id(record.id)} of {record.instrument.label}")
    for column in ("quantity", "value ± u (k=1)", "reference", "fit residual (rms)", "n",
                   "valid until"):
        table.add_column(column)
    for q, v in record.values.items():
        unit = "A" if v.method in ("zero", "gain") else v.unit
        table.add_row(q, _value(v), v.reference,
                      "-" if v.residual_rms is None else format_si(v.residual_rms, unit, 3),
                      str(v.n), f"{v.expires_utc:%Y-%m-%d %H:%M}")
    return table


_FIXTURE_HELP = "Bench definition (TOML); default: $ENERGYRIG_FIXTURE or fixtures/sim.toml."

_ROUTINES_HELP = {
    "zero": "The offset of the current channel with its input open (on the simulated bench "
            "the emulator opens it).",
    "gain": "The gain of the current channel on the fixture's reference resistors "
            "([calibration] reference_ohms): with two or more, gain and offset as a line "
            "(per current range on a PPK2, two references in a range); with one, the valid "
            "offset taken out.",
    "skew": "The delay of the current channel behind the trigger channel, fitted on the "
            "current steps of the firmware's mark windows.",
    "overhead": "The time and energy of the firmware's empty trigger window (run n=0) on "
                "this board and firmware build, taken out of every window.",
    "baseline": "The board's idle stability (drift, noise) and the shortest baseline span "
                "and guard that give the baseline to --precision; prints the fixture's "
                "[windows] lines (it corrects nothing).",
    "all": "zero, gain, skew, overhead and baseline in that order, stored as one record: run "
           "it before an overnight sweep.",
}

_PRECISION_HELP = ("The baseline's standard error at most this: a percentage of the board's "
                   "current above idle in a window ('0.5%', the default) or a current "
                   "('2uA').")


def _run_routines(names: tuple[str, ...], fixture: Optional[Path], yes: bool,
                  precision: str) -> None:
    from rich.console import Console

    from energyrig.calibration.routines.baseline import Precision, fixture_lines
    from energyrig.calibration.routines.calibrate import calibrate
    from energyrig.fixtures import load_fixture
    from energyrig.rig.bench import open_bench

    try:
        wanted = Precision.parse(precision)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--precision") from None

    err = Console(stderr=True)
    with open_bench(load_fixture(fixture)) as bench:
        def connect(load: str, ohms: float = math.inf) -> None:
            instruction = bench.connect(load, ohms)  # type: ignore[arg-type]
            if instruction is None:
                return
            if yes:
                err.print(f"[yellow]--yes: assuming the bench is wired: {instruction}[/]")
            else:
                typer.prompt(f"{instruction}; then press Enter", default="",
                             show_default=False, prompt_suffix=" ")

        record, path = calibrate(bench, connect, names, wanted)
    Console().print(_record_table(record))
    for note in record.notes:
        err.print(f"[yellow]warning: {note}[/]")
    if "baseline_s" in record.values:
        typer.echo(f"for the fixture ({bench.fixture.path}):\n"
                   f"{fixture_lines(record.values, bench.fixture)}")
    typer.echo(f"calibration stored: {path}")


def register(app: typer.Typer) -> None:
    """Add the ``calibrate`` sub-app to ``app``."""
    sub = typer.Typer(help="Calibrate the bench's instrument and show what is stored.",
                      no_args_is_help=True)
    app.add_typer(sub, name="calibrate")

    def routine(name: str, names: tuple[str, ...]) -> None:
        @sub.command(name, help=_ROUTINES_HELP[name] + " Exit code 2 when the measurement "
                     "makes no sense (nothing is stored).")
        def command(
            fixture: Optional[Path] = typer.Option(None, "--fixture", "-f", help=_FIXTURE_HELP),
            yes: bool = typer.Option(False, "--yes", "-y",
                                     help="Do not prompt for rewiring (a real bench must be "
                                          "wired already; the simulated one switches itself)."),
            precision: str = typer.Option("0.5%", "--precision", help=_PRECISION_HELP,
                                          hidden="baseline" not in names),
        ) -> None:
            _run_routines(names, fixture, yes, precision)

    for name in ORDER:
        routine(name, (name,))
    routine("all", ORDER)

    @sub.command("list")
    def list_(
        fixture: Optional[Path] = typer.Option(None, "--fixture", "-f", help=_FIXTURE_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print the records as JSON."),
    ) -> None:
        """List every record in the fixture's calibration store, oldest first, with each
        value's state (valid or expired). A corrupt record is an error naming it."""
        from rich.table import Table

        from energyrig.calibration.store import CalibrationStore, calibration_dir
        from energyrig.cli.terminal import out_console
        from energyrig.fixtures import load_fixture

        store = CalibrationStore(calibration_dir(load_fixture(fixture)))
        records = store.records()
        if as_json:
            typer.echo(json.dumps([r.model_dump(mode="json") for _, r in records], indent=1))
            return
        now = datetime.now(UTC)
        console = out_console()
        if not records:
            console.print(f"no calibration records in {store.directory}")
            return
        console.print(f"Calibration records in {store.directory}")
        for _, record in records:  # a table each: the id and instrument whole, in its title
            table = Table(title=f"{short_id(record.id)} of {record.instrument.label}",
                          title_justify="left")
            for column in ("quantity", "value ± u (k=1)", "state"):
                table.add_column(column)
            for q, v in record.values.items():
                table.add_row(q, _value(v), _state(v, now))
            console.print(table)

    @sub.command()
    def show(
        record: Optional[Path] = typer.Argument(
            None, metavar="RECORD", dir_okay=False, help="A record to check against the bench (default: what "
                                       "'latest' selects)."),
        fixture: Optional[Path] = typer.Option(None, "--fixture", "-f", help=_FIXTURE_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print the selection as JSON."),
    ) -> None:
        """Open the bench and show the calibration that `rig run` would apply to its
        instrument: each quantity's value, uncertainty and record, and what is missing or
        expired. Exit code 1 when it is incomplete, 2 when a record is corrupt, for
        another instrument or expired."""
        from rich.console import Console

        from energyrig.fixtures import load_fixture
        from energyrig.rig.bench import open_bench

        with open_bench(load_fixture(fixture), str(record or "latest")) as bench:
            cal = bench.calibrated
        assert cal is not None
        if as_json:
            typer.echo(json.dumps(cal.manifest(), indent=1))
        else:
            Console().print(_calibration_table(cal, datetime.now(UTC)))
            for note in cal.notes:
                Console(stderr=True).print(f"[yellow]note: {note}[/]")
            if not cal.complete:
                Console(stderr=True).print(f"[yellow]{cal.problem()}[/]")
        if not cal.complete:
            raise typer.Exit(1)
