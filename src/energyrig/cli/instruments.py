"""``rig instruments`` (what is attached) and ``rig instruments check`` (does a fixture answer).

A thin layer over :mod:`energyrig.instruments.discovery` and :mod:`energyrig.rig.check`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

_LIST_HELP = (
    "List the power instruments this host can reach.\n\n"
    "Each instrument family searches in its own way: 'ppk2' serial ports for PPK2s (USB "
    "product 'PPK2'), 'scope' VISA resources through pyvisa-py (oscilloscopes on USBTMC or "
    "the LAN, each asked *IDN? for its dialect), 'sigrok' sigrok devices (sigrok-cli "
    "--scan; its 'demo' device is always there), 'lpm01a' serial ports with the STM32 virtual "
    "COM port's USB ids (an STM32 Power Shield, X-NUCLEO-LPM01A), 'otii' the devices a "
    "local Otii application's TCP server (port 1905) offers. Each row shows the lines "
    "to put in a fixture's instrument table.\n\n"
    "A scope on a raw socket is not discoverable: write its resource yourself, e.g. "
    "TCPIP::192.168.1.50::5555::SOCKET (Rigol) or TCPIP::192.168.1.50::5025::SOCKET."
)

_CHECK_HELP = (
    "Open each part of a fixture and say which does not answer, and why.\n\n"
    "The instrument is opened and identified (a scope answers *IDN? and its dialect is "
    "checked; a PPK2 sends its calibration; a sigrok device answers a scan); a DUT on a "
    "serial port must answer 'hello'. On a simulated fixture the whole bench is started "
    "(emulator and host DUT).\n\n"
    "Exit code 1 when a part does not answer, 2 when the fixture itself is malformed."
)


#: What to try when nothing answers: the usual reasons on a bench.
NOTHING_FOUND_HINTS = (
    "Is the instrument powered and its USB cable a data cable (not a charge-only one)? "
    "`lsusb` should list it.",
    "Can your user open it? A PPK2 and a sigrok device are /dev/ttyACM* or USB devices: "
    "add yourself to the `dialout` (and `plugdev`) group, or install the udev rules of "
    "nRF Connect / libsigrok, then log in again.",
    "A scope on the network: `rig instruments` finds VISA resources (USB and TCP/IP); give "
    "its address in the fixture if it is not announced (docs/scope.md).",
    "Without hardware: fixtures/sim.toml and fixtures/sim-scope.toml run the simulated bench.",
)


def register(app: typer.Typer) -> None:
    sub = typer.Typer(help="Find instruments and check a fixture's instruments answer.",
                      no_args_is_help=False)
    app.add_typer(sub, name="instruments")

    @sub.callback(invoke_without_command=True, help=_LIST_HELP)
    def instruments(
        ctx: typer.Context,
        source: Optional[list[str]] = typer.Option(
            None, "--source", "-s",
            help="Search only this family (a fixture's [instrument] kind: ppk2, scope, "
                 "sigrok, joulescope, lpm01a, otii); repeat for several."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        from rich.console import Console
        from rich.table import Table
        if ctx.invoked_subcommand is not None:
            return
        from energyrig.instruments.registry import FAMILIES  # the families' configs

        sources = tuple(source or FAMILIES)
        unknown = [s for s in sources if s not in FAMILIES]
        if unknown:
            raise typer.BadParameter(f"unknown source {unknown[0]!r} "
                                     f"(known: {', '.join(FAMILIES)})", param_hint="--source")
        from energyrig.instruments.discovery import (
            find_instruments,  # drivers: only here
        )

        found, problems = find_instruments(sources)
        hints = [] if found else list(NOTHING_FOUND_HINTS)
        if as_json:
            typer.echo(json.dumps({"found": [f.as_dict() for f in found],
                                   "problems": problems, "hints": hints}, indent=2))
            return
        console = Console()
        table = Table(title="instruments found")
        for column in ("kind", "address", "description", "fixture [instrument]"):
            table.add_column(column)
        for f in found:
            table.add_row(f.kind, f.address, f.description, f.fixture)
        console.print(table if found else "no instruments found")
        for name, problem in problems.items():
            console.print(f"[yellow]{name}: not searched: {problem}[/yellow]")
        for hint in hints:
            console.print(f"  - {hint}")

    @sub.command("check", help=_CHECK_HELP)
    def check(
        fixture: Optional[Path] = typer.Option(
            None, "--fixture", "-f", help="Fixture TOML (default: $ENERGYRIG_FIXTURE or "
                                          "fixtures/sim.toml)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        from rich.table import Table
        from rich.text import Text

        from energyrig.cli.terminal import out_console
        from energyrig.rig.check import check_fixture  # the bench: only here

        checks = check_fixture(None if fixture is None else str(fixture))
        if as_json:
            typer.echo(json.dumps([c.as_dict() for c in checks], indent=2))
        else:
            console = out_console()
            table = Table(title=f"fixture {fixture or 'default'}")
            for column in ("part", "target", "answers", "detail"):
                # a path is folded, never cut: it is what the operator has to check
                table.add_column(column, overflow="fold")
            for c in checks:
                table.add_row(c.part, c.target, "[green]yes[/green]" if c.ok else "[red]NO[/red]",
                              c.detail if c.ok else "(below)")
            console.print(table)
            for c in checks:  # each problem in full, its target on a line of its own
                if not c.ok:
                    console.print(Text.assemble((f"{c.part} does not answer:", "red"),
                                                f"\n  {c.target}\n  {c.detail}",
                                                overflow="fold"))
        if not all(c.ok for c in checks):
            raise typer.Exit(1)
