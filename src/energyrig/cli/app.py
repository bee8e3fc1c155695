"""The ``rig`` command: a thin Typer layer over the library.

Each area lives in its own module with a ``register(app)`` function; this file only wires
them together and turns :class:`energyrig.errors.EnergyrigError` into a one-line message and
exit code 2.
"""
from __future__ import annotations

import logging
import sys

import typer

from energyrig import __version__
from energyrig.cli import analyze, calibrate, instruments, report, run, sweep
from energyrig.errors import EnergyrigError

app = typer.Typer(
    name="rig",
    help=(
        "Measure the time and energy of one cryptographic operation on an embedded board.\n\n"
        "Start with `rig analyze CAPTURE` on a recorded capture, or `rig run --op aes-ecb-encrypt` "
        "on the simulated bench (no hardware needed)."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

for module in (analyze, calibrate, instruments, report, run, sweep):
    module.register(app)


@app.callback()
def _root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what the rig does."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        typer.echo(f"energyrig {__version__}")
        raise typer.Exit()
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


def main() -> None:
    """Entry point of the ``rig`` console script."""
    try:
        app()
    except EnergyrigError as exc:
        typer.echo(f"rig: error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
