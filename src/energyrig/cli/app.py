"""The ``rig`` command: a thin Typer layer over the library.

Each area lives in its own module with a ``register(app)`` function; this file only wires
them together and turns :class:`energyrig.errors.EnergyrigError` into a one-line message and
its exit code (2, bad input; 75 for a full disk: :class:`energyrig.errors.DiskFullError`).
"""
from __future__ import annotations

import functools
import sys
from typing import Any

import typer

import energyrig
from energyrig.cli import (analyze, calibrate, instruments, lab, reanalyze, report, run,
                           sweep)
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
    # Click's plain help: it wraps at the terminal's width instead of cutting words in
    # boxes, and does not show flags as taking a value (Typer's rich help prints "<bool>").
    rich_markup_mode=None,
)

for module in (analyze, calibrate, instruments, lab, reanalyze, report, run, sweep):
    module.register(app)


def versions_text() -> str:
    """Every version the rig's figures depend on, as a run's manifest records them
    (``software`` and ``versions``: :mod:`energyrig.results.versions`), one per line."""
    from energyrig.results import versions

    record = {"software": versions.software(), **versions.collect(
        versions.PROGRAMS, lab=True)}
    lines = [f"energyrig {energyrig.__version__}"]
    for section, entries in record.items():
        for name, value in entries.items():
            if isinstance(value, dict):  # a program: its version line and Debian package
                value = ", ".join(str(v) for v in (value["version"], value["debian"]) if v) \
                    or None
            lines.append(f"{section}.{name}: {value if value is not None else 'not installed'}")
    lines += _firmware_lines()
    return "\n".join(lines)


#: What of the firmware's ``hello`` (a run's manifest ``firmware``) ``--version --verbose``
#: shows.
FIRMWARE_FIELDS = ("firmware", "build", "toolchain", "board", "crypto")


def _firmware_lines() -> list[str]:
    """The default fixture's firmware as its ``hello`` says (kept by ``rig ops``, else
    asked), or why it cannot be asked."""
    from energyrig.rig.opscache import firmware_catalogue

    try:
        hello = firmware_catalogue().hello
    except EnergyrigError as exc:
        return [f"firmware: not reachable ({exc})"]
    return [f"firmware.{name}: {hello.get(name, 'not reported')}" for name in FIRMWARE_FIELDS]


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="Log what the rig does, and each repeat of a warning "
                                      "(without it: the first, then how many); with "
                                      "--version, print every version its figures depend "
                                      "on."),
    quiet: bool = typer.Option(False, "--quiet", "-q",
                               help="Log errors only and draw no progress bar (the answer, "
                                    "failures and the outcome are still printed)."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        # energyrig.__version__ reads the installed metadata (importlib.metadata, slow to
        # import): asked here only, not at the import of this module
        typer.echo(versions_text() if verbose else f"energyrig {energyrig.__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        ctx.fail("Missing command.")
    if verbose and quiet:
        raise typer.BadParameter("give one of them", param_hint="'--verbose' / '--quiet'")
    from energyrig.cli.terminal import log_to_terminal, summarise_repeats

    log_to_terminal("verbose" if verbose else "quiet" if quiet else "normal")
    ctx.call_on_close(summarise_repeats)  # what the command's log left unsaid, at its end


#: Click's usage errors (a bad option value, a missing argument): the base of BadParameter,
#: whichever Click Typer runs on.
_UsageError = typer.BadParameter.__mro__[1]


@functools.cache
def _command() -> Any:
    """``app`` as a Click command, built once per process. Typer's own call of ``app`` builds
    it anew each time (about 10 ms of reading signatures), which a notebook or a test that runs
    ``rig`` again and again in one process would pay at each. Calling it is calling ``app``:
    with ``pretty_exceptions_enable=False`` Typer's call adds nothing to it."""
    return typer.main.get_command(app)


def main() -> None:
    """Entry point of the ``rig`` console script.

    Every mistake an operator can make ends in one line on stderr, ``rig: error: ...``,
    and exit code 2: a wrong option (naming it), or an :class:`EnergyrigError` (naming the
    file and field; a full disk under a run exits 75 instead, resumable). Ctrl-C exits
    with 130.
    """
    try:
        code = _command()(standalone_mode=False, prog_name="rig")
    except EnergyrigError as exc:
        typer.echo(f"rig: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except _UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `rig` alone: the help is the answer
            typer.echo(exc.format_message())
            sys.exit(0)
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        typer.echo(f"rig: error: {exc.format_message()}{where}", err=True)
        sys.exit(2)
    except OSError as exc:  # the machine's trouble (a full disk), not the rig's: one line
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"rig: error: {where}{exc.strerror or exc}", err=True)
        sys.exit(1)
    except RuntimeError as exc:  # Click's Abort: Ctrl-C or end of input at a prompt
        if isinstance(exc.__cause__, (KeyboardInterrupt, EOFError)):
            sys.exit(130)
        raise
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
