"""``rig calibrate``: what the calibration store holds (``list``), what applies to a bench
(``show``).

A thin layer over :mod:`energyrig.calibration.store`; values are formatted only here.
"""
from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console
from rich.table import Table

from energyrig.fixtures import load_fixture
from energyrig.units import format_si

if TYPE_CHECKING:
    from energyrig.calibration.store import Calibration, Value

#: The help of ``--calibration`` of ``rig run`` and ``rig sweep``.
CALIBRATION_HELP = ("Calibration to apply: 'latest' (each quantity's newest valid value in the "
                    "fixture's calibration directory or $ENERGYRIG_CALIBRATION_DIR), 'none', "
                    "or the path of a record.")


def _value(v: Value) -> str:
    if v.unit == "1":
        return f"{v.value:.6f} ± {v.u:.2g}"
    return f"{format_si(v.value, v.unit, digits=4)} ± {format_si(v.u, v.unit, digits=3)}"


def _state(v: Value, now: datetime) -> str:
    return "expired" if v.expired(now) else f"valid until {v.expires_utc:%Y-%m-%d %H:%M}"


def _calibration_table(cal: Calibration, now: datetime) -> Table:
    table = Table(title=f"Calibration of {cal.instrument.label} ({cal.origin})")
    for column in ("quantity", "value ± u (k=1)", "method", "reference", "record", "state"):
        table.add_column(column)
    for q, v in cal.values.items():
        table.add_row(q, _value(v), v.method, v.reference, cal.sources[q], _state(v, now))
    for q in cal.missing:
        table.add_row(q, "-", "-", "-", "-", "expired" if q in cal.expired else "missing")
    return table


_FIXTURE_HELP = "Bench definition (TOML); default: $ENERGYRIG_FIXTURE or fixtures/sim.toml."


def register(app: typer.Typer) -> None:
    """Add the ``calibrate`` sub-app to ``app``."""
    sub = typer.Typer(help="Calibrate the bench's instrument and show what is stored.",
                      no_args_is_help=True)
    app.add_typer(sub, name="calibrate")

    @sub.command("list")
    def list_(
        fixture: Optional[Path] = typer.Option(None, "--fixture", "-f", help=_FIXTURE_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print the records as JSON."),
    ) -> None:
        """List every record in the fixture's calibration store, oldest first, with each
        value's state (valid or expired). A corrupt record is an error naming it."""
        from energyrig.calibration.store import CalibrationStore, calibration_dir

        store = CalibrationStore(calibration_dir(load_fixture(fixture)))
        records = store.records()
        if as_json:
            typer.echo(json.dumps([r.model_dump(mode="json") for _, r in records], indent=1))
            return
        now = datetime.now(UTC)
        table = Table(title=f"Calibration records in {store.directory}")
        for column in ("record", "instrument", "quantity", "value ± u (k=1)", "state"):
            table.add_column(column)
        for _, record in records:
            for q, v in record.values.items():
                table.add_row(record.id, record.instrument.label, q, _value(v), _state(v, now))
        Console().print(table if records else f"no calibration records in {store.directory}")

    @sub.command()
    def show(
        record: Optional[Path] = typer.Argument(
            None, dir_okay=False, help="A record to check against the bench (default: what "
                                       "'latest' selects)."),
        fixture: Optional[Path] = typer.Option(None, "--fixture", "-f", help=_FIXTURE_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print the selection as JSON."),
    ) -> None:
        """Open the bench and show the calibration that `rig run` would apply to its
        instrument: each quantity's value, uncertainty and record, and what is missing or
        expired. Exit code 1 when it is incomplete, 2 when a record is corrupt, for
        another instrument or expired."""
        from energyrig.rig.bench import open_bench

        with open_bench(load_fixture(fixture), str(record or "latest")) as bench:
            cal = bench.calibrated
        assert cal is not None
        if as_json:
            typer.echo(json.dumps(cal.manifest(), indent=1))
        else:
            Console().print(_calibration_table(cal, datetime.now(UTC)))
            if not cal.complete:
                Console(stderr=True).print(f"[yellow]{cal.problem()}[/]")
        if not cal.complete:
            raise typer.Exit(1)
