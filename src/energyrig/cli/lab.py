"""``rig lab status`` (the places of a labgrid lab) and ``rig lab sim`` (a simulated lab).

A thin layer over :mod:`energyrig.lab.status` and :mod:`energyrig.cli.labsim`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from energyrig.calibration.quantities import short_id

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from energyrig.lab.status import PlaceStatus

_STATUS_HELP = (
    "Show the places of a labgrid lab: board, host, who holds each, whether its resources "
    "are there, and its bench's last calibration.\n\n"
    "The last calibration is the newest record in the store of the fixture of the place's "
    "board (--fixture, repeat for several boards) measured on that board with that "
    "instrument kind: the instrument is not opened, so its serial number is not known."
)

_SIM_HELP = (
    "Start a simulated lab on loopback: a labgrid coordinator and one exporter per place, "
    "each sharing a DUT (the host DUT; with --fixture fixtures/sim-m4.toml the emulated "
    "Cortex-M4 board, its own QEMU per place) and an emulated PPK2 through ser2net. Prints "
    "the coordinator (for --lab or LG_COORDINATOR) and the places; runs until Ctrl-C, then "
    "stops everything."
)


def status_view(lab: str | None, rows: list[PlaceStatus], console: Console) -> RenderableType:
    """The places of ``rig lab status``: a table where it fits ``console``'s width, else a
    block of lines per place (at 80 columns the table's six columns cut board, host and
    resource names mid-word); a calibration by its short id
    (:func:`~energyrig.calibration.quantities.short_id`) and its time."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    title = f"lab {lab or '$LG_COORDINATOR'}"
    cells = [(r.name, r.board or "-", r.host or "-", r.holder or "free",
              ("available" if r.available else "MISSING") + f" ({', '.join(r.resources)})",
              "none" if r.calibration is None else
              f"{short_id(r.calibration.id)} {r.calibration.created_utc:%Y-%m-%d %H:%M}Z")
             for r in rows]
    table = Table(title=title)
    for col in ("place", "board", "host", "held by", "resources", "last calibration"):
        table.add_column(col, no_wrap=True)
    for row in cells:
        table.add_row(*row)
    if console.measure(table, options=console.options.update_width(10_000)).maximum \
            <= console.width:
        return table
    blocks: list[RenderableType] = [Text(title, style="italic")]
    for name, board, host, holder, resources, calibration in cells:
        held = "free" if holder == "free" else f"held by {holder}"
        blocks += [Text.assemble((name, "bold"), f"  {board} on {host}, {held}"),
                   Text(f"  resources {resources}\n  last calibration {calibration}",
                        overflow="fold")]
    return Group(*blocks)


def register(app: typer.Typer) -> None:
    sub = typer.Typer(help="A lab of benches through labgrid: its places, a simulated lab.",
                      no_args_is_help=True)
    app.add_typer(sub, name="lab")

    @sub.command("status", help=_STATUS_HELP)
    def status(
        lab: Optional[str] = typer.Option(
            None, "--lab", help="The coordinator, HOST:PORT (default: $LG_COORDINATOR)."),
        fixture: Optional[list[Path]] = typer.Option(
            None, "--fixture", "-f", dir_okay=False,
            help="A fixture whose calibration store holds a board's records (default: the "
                 "default fixture); repeat for several boards."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        from energyrig.fixtures import load_fixture
        from energyrig.fixtures.paths import default_fixture_path
        from energyrig.lab.status import lab_status

        fixtures = [load_fixture(p) for p in (fixture or [default_fixture_path()])]
        rows = lab_status(lab, fixtures)
        if as_json:
            typer.echo(json.dumps({"places": [r.as_dict() for r in rows]}, indent=1))
            return
        from energyrig.cli.terminal import out_console

        console = out_console()
        console.print(status_view(lab, rows, console))

    @sub.command("sim", help=_SIM_HELP)
    def sim(
        places: int = typer.Option(2, "--places", "-n", min=1, max=26,
                                   help="How many simulated benches (places)."),
        fixture: Optional[Path] = typer.Option(
            None, "--fixture", "-f", dir_okay=False,
            help="The simulated fixture every bench runs (default: the default fixture, "
                 "fixtures/sim.toml, the host DUT; fixtures/sim-m4.toml: the emulated "
                 "Cortex-M4 board)."),
        seed: Optional[int] = typer.Option(
            None, "--seed", help="Emulator seed of the first bench (default: the "
                                 "fixture's [sim] seed)."),
    ) -> None:
        from energyrig.cli.labsim import run

        run(places, fixture, seed)
