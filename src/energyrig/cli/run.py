"""``rig run`` (measure one op on a bench) and ``rig ops`` (the firmware's catalogue).

A thin layer over :func:`energyrig.rig.pipeline.measure_point` on the fixture's bench; SI values are turned into J with a
readable prefix, nWh, µs and mW only here.
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from energyrig.cli.calibrate import CALIBRATION_HELP
from energyrig.domain import Point, at_supply, finite_or_none
from energyrig.energy.budget import unstated_because
from energyrig.flags import CALIBRATION_FLAGS, ENERGY_FLAGS
from energyrig.instruments.sim.flags import SIM_FLAGS
from energyrig.rig.flags import PIPELINE_FLAGS
from energyrig.units import format_charge, format_nwh, format_si

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Group
    from rich.table import Table

    from energyrig.results.footprint import Footprint
    from energyrig.rig.dut import OpInfo
    from energyrig.rig.pipeline import PointResult, Readout


def _energy(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return (f"{format_si(value, 'J', digits=4, missing='-')}  "
            f"({format_nwh(value, digits=4, power_below=1e-4)})")


def _ci(ci: list[float] | None, unit: str) -> str:
    if ci is None:
        return "-"
    return " … ".join(format_si(v, unit, digits=4, missing="-") for v in ci)


def result_table(fig: dict[str, Any]) -> Table:
    """The per-op figures of ``rig run`` as a two-column table."""
    from rich.table import Table
    params = ", ".join(f"{k}={v}" for k, v in fig["params"].items() if v is not None)
    table = Table(title=f"{fig['op']} ({params}) on {fig['board']}: {fig['reps']} windows of "
                        f"{fig['batch_n']} ops", show_header=False)
    table.add_column("figure")
    table.add_column("value", justify="right")
    unknown = [c["component"] for c in fig["uncertainty_budget"] if c["u_j"] is None]
    rows = [
        ("time per op", format_si(fig["time_per_op_s"], "s", digits=4, missing="-")),
        ("  95 % CI", _ci(fig["time_per_op_ci95_s"], "s")),
        ("  U (k=2)", format_si(fig["time_per_op_u_s"], "s", digits=3, missing="-")),
        ("energy per op (gross)", _energy(fig["energy_per_op_j"])),
        ("  95 % CI", _ci(fig["energy_per_op_ci95_j"], "J")),
        ("  charge per op (gross)", format_charge(fig.get("charge_per_op_c"), digits=4,
                                                  missing="- (no supply voltage)")),
        ("energy per op (net of idle)", _energy(fig["net_energy_per_op_j"])),
        ("  95 % CI", _ci(fig["net_energy_per_op_ci95_j"], "J")),
        ("  U (k=2)", format_si(fig["net_energy_per_op_u_j"], "J", digits=3,
                                missing=f"- ({unstated_because(unknown)})")),
        *((f"    u {c['component']} ({c['type']})", format_si(c["u_j"], "J", digits=3,
                                                               missing="unknown"))
          for c in fig["uncertainty_budget"]),
        ("  charge per op (net)", format_charge(fig.get("net_charge_per_op_c"), digits=4,
                                                missing="- (no supply voltage)")),
        ("mean power", format_si(fig["mean_power_w"], "W", digits=4, missing="-")),
        ("mean current", format_si(fig.get("mean_current_a"), "A", digits=4,
                                   missing="- (no supply voltage)")),
        ("idle baseline", format_si(fig["baseline_w"], "W", digits=4, missing="-")),
        ("cycles per op (firmware)", "-" if fig["cycles_per_op"] is None
         else f"{fig['cycles_per_op']:.6g} @ "
              f"{format_si(fig['cycle_hz'], 'Hz', digits=4, missing='-')}"),
        ("samples per window", "-" if fig["samples_per_window"] is None
         else f"{fig['samples_per_window']:.0f}"),
    ]
    if "true_net_energy_per_op_j" in fig:
        rows += [("true energy per op (emulator)", _energy(fig["true_energy_per_op_j"])),
                 ("true net energy per op", _energy(fig["true_net_energy_per_op_j"]))]
        net, true = fig["net_energy_per_op_j"], fig["true_net_energy_per_op_j"]
        if net is not None and true:
            rows.append(("net error vs truth", f"{(net - true) / true * 100:+.3f} %"))
    rows.append(("flags", ", ".join(fig["flags"]) or "none"))
    if fig["windows_excluded"]:
        rows.append(("windows left out", f"{fig['windows_excluded']} (failed the stream's "
                                         f"integrity checks: {fig['excluded_reason']})"))
    for name, value in rows:
        table.add_row(name, value)
    return table


def _bytes(value: int | None) -> str:
    return "-" if value is None else f"{value:,}".replace(",", " ")


def _sizes(footprint: Footprint, op: OpInfo) -> dict[str, int | None]:
    """``flash_bytes`` and ``ram_bytes`` of ``op`` in ``footprint`` (``None``: not in it)."""
    size = footprint.of(op.name, op.backend)
    return {"flash_bytes": None if size is None else size.flash_bytes,
            "ram_bytes": None if size is None else size.ram_bytes}


def ops_tables(hello: dict[str, Any], ops: list[OpInfo], footprint: Footprint | None = None,
               width: int = 80) -> Group:
    """The firmware catalogue (its ``hello`` and ``ops`` replies): one table per op family,
    with only the columns its ops fill (a backend column only where they differ: else it is
    in the title) so that an op takes one line of ``width`` columns (80 too); with a
    ``footprint``, each op's flash and RAM (what it adds to the firmware without any op)."""
    from rich.console import Group
    from rich.text import Text
    head = (f"Ops of firmware {hello.get('firmware')} on {hello.get('board')} "
            f"({hello.get('crypto')})")
    if footprint is not None:
        head += (f"\nflash and RAM per op: footprint of {footprint.board} build "
                 f"{footprint.build_id}, {_bytes(footprint.empty.flash_bytes)} B flash and "
                 f"{_bytes(footprint.empty.ram_bytes)} B RAM without any op")
        if footprint.build_id != hello.get("build"):
            head += f" (the DUT runs build {hello.get('build')})"
    families: dict[str, list[OpInfo]] = {}
    for op in ops:
        families.setdefault(op.family, []).append(op)
    return Group(Text(head, style="bold"),
                 *(_family_table(name, members, footprint, width)
                   for name, members in families.items()))


def _family_table(family: str, ops: list[OpInfo], footprint: Footprint | None,
                  width: int) -> Table:
    """The ops of one family of :func:`ops_tables`."""
    from rich.table import Table
    backends = {op.backend for op in ops}
    table = Table(title=family + (f" ({next(iter(backends))})" if len(backends) == 1 else ""),
                  title_justify="left")
    columns: dict[str, Callable[[OpInfo], str]] = {"op": lambda op: op.name}
    if len(backends) > 1:
        columns["backend"] = lambda op: op.backend
    keys, curves = any(op.key_bits for op in ops), any(op.curves for op in ops)
    if keys or curves:
        label = " / ".join(n for n, has in (("key bits", keys), ("curves", curves)) if has)
        columns[label] = lambda op: ", ".join([*map(str, op.key_bits), *op.curves]) or "-"
    if any(op.payload is not None for op in ops):
        columns["payload bytes"] = _payload
    if footprint is not None:
        columns["flash bytes"] = lambda op: _bytes(_sizes(footprint, op)["flash_bytes"])
        columns["RAM bytes"] = lambda op: _bytes(_sizes(footprint, op)["ram_bytes"])
    rows = [[cell(op) for cell in columns.values()] for op in ops]
    cells = [max(len(row[k]) for row in rows) for k in range(len(columns))]
    natural = sum(max(w, len(label)) + 3 for w, label in zip(cells, columns, strict=True)) + 1
    for widest, label in zip(cells, columns, strict=True):
        if label in ("flash bytes", "RAM bytes"):  # too wide: the heading wraps, not a row
            table.add_column(label, justify="right",
                             max_width=max(widest, 5) if natural > width else None)
        else:  # an op's cells wrap only where the terminal is narrower than they are
            table.add_column(label, no_wrap=label == "op", min_width=widest)
    for row in rows:
        table.add_row(*row)
    return table


def _payload(op: OpInfo) -> str:
    """``16..4096 ×16``: the payload sizes ``op`` takes, bytes (``-``: none)."""
    if op.payload is None:
        return "-"
    low, high, multiple = op.payload
    return f"{low}..{high}" + (f" ×{multiple}" if multiple > 1 else "")


def _batch(value: str) -> int | None:
    if value == "auto":
        return None
    try:
        n = int(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r}: give N (an integer >= 1) or 'auto'",
                                 param_hint="'--batch'") from None
    if n < 1:
        raise typer.BadParameter(f"{n}: N must be >= 1", param_hint="'--batch'")
    return _in_protocol_range("batch", n, "--batch")


def _in_protocol_range(field: str, value: int | None, option: str) -> int | None:
    """``value`` if the firmware protocol takes it for ``field``, else a usage error naming
    ``option`` (checked before any bench opens, where the DUT would refuse it)."""
    from energyrig.rig.dut import PROTOCOL_RANGES
    low, high = PROTOCOL_RANGES[field]
    if value is not None and not low <= value <= high:
        raise typer.BadParameter(f"{value}: the firmware takes {low} .. {high} "
                                 "(firmware/PROTOCOL.md)", param_hint=f"'{option}'")
    return value


_FIXTURE_HELP = "Bench definition (TOML); default: $ENERGYRIG_FIXTURE or fixtures/sim.toml."

_RUN_HELP = (
    "Measure the time and energy of one operation on the bench.\n\n"
    "The firmware prepares the op (keys, buffers, its known-answer self-test) outside any "
    "window; then, R times, it runs the op once outside the window (warm-up), idles for the "
    "baseline span and runs a batch of N ops between the trigger edges while the instrument "
    "records. Energy per op is the window's "
    "integral of v·i divided by N; net energy subtracts the idle baseline measured just "
    "before the window. --batch auto picks N from probe runs timed by the firmware so a window "
    "holds enough samples (fixture: measure.min_window_samples, default 2000) and the edge "
    "error bound stays under measure.max_edge_error (0.1 %).\n\n"
    "On the simulated bench (the default fixture) the rig starts the host firmware and an "
    "emulated PPK2 and also reports the emulator's true energy.\n\n"
    "The instrument's calibration (rig calibrate) is applied to every record: by default each "
    "quantity's newest valid value; a missing or expired one is warned about and the windows "
    "are flagged uncalibrated.\n\n"
    "Examples:\n\n"
    "  rig run --op aes-cbc-encrypt --key-bits 128 --payload-bytes 1024\n\n"
    "  rig run --op ecdsa-sign --curve p256 --payload-bytes 32 --reps 20 --json\n\n"
    "  rig run --op rsa-keygen --key-bits 2048 --batch 1 --reps 3 -f fixtures/nrf52840dk-ppk2.toml\n\n"
    f"Flags: {', '.join(ENERGY_FLAGS + PIPELINE_FLAGS + SIM_FLAGS + CALIBRATION_FLAGS)}. "
    "Exit code 1 when the measurement failed "
    "(self-test, DUT timeout), 2 for a bad fixture or bench."
)


def register(app: typer.Typer) -> None:
    @app.command(help=_RUN_HELP)
    def run(
        op: str = typer.Option(..., "--op", help="Op name from `rig ops` (e.g. aes-cbc-encrypt)."),
        key_bits: Optional[int] = typer.Option(None, "--key-bits", help="Key size, bits."),
        payload_bytes: Optional[int] = typer.Option(None, "--payload-bytes",
                                                    help="Payload size, bytes."),
        curve: Optional[str] = typer.Option(None, "--curve", help="Curve (p256, x25519, ...)."),
        backend: str = typer.Option("software", "--backend", help="software or hardware."),
        batch: str = typer.Option("auto", "--batch", help="Ops per window: N or auto."),
        reps: Optional[int] = typer.Option(None, "--reps", min=1,
                                           help="Windows to measure (default: the fixture's)."),
        min_samples: Optional[int] = typer.Option(
            None, "--min-samples", min=1,
            help="With --batch auto: samples a window must hold (default: the fixture's "
                 "measure.min_window_samples, 2000)."),
        seed: Optional[int] = typer.Option(None, "--seed",
                                           help="Key/payload seed of the firmware "
                                                "(0 .. 2^32-1)."),
        fixture: Optional[Path] = typer.Option(None, "--fixture", "-f", help=_FIXTURE_HELP),
        calibration: str = typer.Option("latest", "--calibration", help=CALIBRATION_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
        keep_captures: str = typer.Option(
            "none", "--keep-captures", metavar="none|flagged|all",
            help="Keep the samples of each flagged window (or of all) as "
                 "DIR/<point>/wNNNN.csv (DIR: --captures-dir), for `rig analyze --plot`; "
                 "the same point measured again replaces them."),
        captures_dir: Path = typer.Option(
            Path("captures"), "--captures-dir", file_okay=False,
            help="Where --keep-captures writes."),
    ) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        from energyrig.cli.progress import LinedProgress
        from energyrig.cli.terminal import err_console, quiet
        from energyrig.fixtures import load_fixture
        from energyrig.rig.bench import (
            open_bench,  # instruments and emulators: only here
        )
        from energyrig.rig.pipeline import KEEP_CAPTURES, measure_point, reps_done, reps_left

        batch_n = _batch(batch)
        _in_protocol_range("seed", seed, "--seed")
        if keep_captures not in KEEP_CAPTURES:
            raise typer.BadParameter(f"{keep_captures!r}: give one of {', '.join(KEEP_CAPTURES)}",
                                     param_hint="--keep-captures")
        fx = load_fixture(fixture)
        try:  # the point's words go to the DUT: checked before any bench opens
            point = Point(op=op, board=fx.dut.board, backend=backend, key_bits=key_bits,
                          payload_bytes=payload_bytes, curve=curve)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        from energyrig.rig.opscache import firmware_catalogue
        problem = catalogue_problem(firmware_catalogue(fixture).ops, point)
        if problem is not None:  # found before the bench opens, named by its option
            raise typer.BadParameter(problem[1], param_hint=problem[0])
        err = err_console()
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn())
        with LinedProgress(*columns, console=err, transient=True,
                           disable=quiet() or not err.is_terminal) as bar:
            task = bar.add_task(op, total=None, now="opening the bench", last="", note="")
            with open_bench(fx, calibration) as bench:
                assert bench.calibrated is not None
                if not bench.calibrated.complete:
                    err.print(f"[yellow]warning: {bench.calibrated.problem()}[/]")
                point = replace(point, board=bench.board)
                total = reps or fx.measure.reps

                batches: list[int] = []  # of the windows shown: a change restarts them

                def progress(stage: str, done: int, last: Readout | None) -> None:
                    if last is None:
                        bar.update(task, now="prep and probe", completed=0, total=total)
                        return
                    if batches and batches[-1] != last.batch_n:
                        bar.update(task, note=f"batch {batches[-1]} -> {last.batch_n}, "
                                              "windows restart")
                    batches[:] = [last.batch_n]
                    bar.update(task, now="windows", last=f"last: {last.text()}",
                               completed=done, total=total)

                result = measure_point(bench, point, until=reps_done(total), batch_n=batch_n,
                                       seed=seed, min_samples=min_samples,
                                       on_progress=progress,
                                       keep=keep_captures,  # type: ignore[arg-type]
                                       group=reps_left(total))
        if result.captures:
            from energyrig.results.store.layout import capture_dir_name
            from energyrig.results.store.write import write_captures

            where = captures_dir / capture_dir_name(result.point.key)
            try:
                write_captures(where, result.captures)
                err.print(f"kept the samples of {len(result.captures)} windows in {where}")
            except OSError as exc:
                err.print(f"[yellow]warning: the samples were not kept in {where}: "
                          f"{exc.strerror or exc}")
        _report(result, as_json, getattr(fx.instrument, "supply_v", None))

    @app.command(help="List the firmware's catalogue of ops (from its `ops` reply). Only the "
                      "DUT is opened (on the simulated bench: the host build, no emulator); "
                      "the catalogue of a DUT the rig starts is kept until the fixture or the "
                      "program changes (--refresh asks again). With a footprint (--footprint, "
                      "or the fixture's dut.footprint), also each op's flash and RAM: what it "
                      "adds to the firmware built without any op (make firmware-footprint; "
                      "firmware/README.md).")
    def ops(
        fixture: Optional[Path] = typer.Option(None, "--fixture", "-f", help=_FIXTURE_HELP),
        footprint: Optional[Path] = typer.Option(
            None, "--footprint", help="footprint.json of the DUT's firmware (default: the "
                                      "fixture's dut.footprint, if any)."),
        as_json: bool = typer.Option(False, "--json", help="Print the catalogue as JSON."),
        refresh: bool = typer.Option(False, "--refresh",
                                     help="Ask the DUT even if its catalogue is kept."),
    ) -> None:
        from energyrig.rig.opscache import firmware_catalogue
        found = firmware_catalogue(fixture, refresh=refresh)
        path = footprint or found.footprint
        if path is not None:
            from energyrig.results.footprint import read_footprint
        sizes = read_footprint(path) if path is not None else None
        if as_json:
            typer.echo(json.dumps([_op_record(o, sizes) for o in found.ops], indent=1))
        else:
            from energyrig.cli.terminal import out_console
            console = out_console()
            console.print(ops_tables(found.hello, found.ops, sizes, console.width))


def catalogue_problem(ops: list[OpInfo], point: Point) -> tuple[str, str] | None:
    """The option and what is wrong with it when the firmware's catalogue ``ops`` cannot
    run ``point`` (an unknown op, with the nearest names; a key size, curve or payload the
    op does not take, or needs), else None."""
    from energyrig.rig.plan import nearest_hint, payload_problem
    info = next((o for o in ops if o.name == point.op and o.backend == point.backend), None)
    if info is None:
        backends = [o.backend for o in ops if o.name == point.op]
        if backends:
            return "--backend", (f"{point.op} has no {point.backend} backend in the firmware "
                                 f"(it has: {', '.join(backends)})")
        return "--op", (f"{point.op!r} is not in the firmware's catalogue"
                        f"{nearest_hint(point.op, (o.name for o in ops))}")
    for option, given, allowed in (("--key-bits", point.key_bits, info.key_bits),
                                   ("--curve", point.curve, info.curves)):
        levels = ", ".join(map(str, allowed))
        if given is None and allowed:
            return option, f"{info.name} needs one (allowed: {levels})"
        if given is not None and not allowed:
            return option, f"{info.name} takes none"
        if given is not None and given not in allowed:
            return option, f"{given} is not allowed for {info.name} (allowed: {levels})"
    if info.payload is None:
        return (("--payload-bytes", f"{info.name} takes no payload")
                if point.payload_bytes is not None else None)
    low, high, _ = info.payload
    if point.payload_bytes is None:
        return "--payload-bytes", f"{info.name} needs a payload size ({low}..{high} bytes)"
    problem = payload_problem(info, point.payload_bytes)
    return None if problem is None else ("--payload-bytes", problem)


def _op_record(op: OpInfo, footprint: Footprint | None) -> dict[str, Any]:
    """An op of ``rig ops --json``: its catalogue entry, and with a footprint its
    ``flash_bytes`` and ``ram_bytes`` (null where the footprint has none)."""
    return vars(op) if footprint is None else {**vars(op), **_sizes(footprint, op)}


def _report(result: PointResult, as_json: bool, supply_v: float | None) -> None:
    """Print the figures of ``result`` with its current and charges at the fixture's
    ``supply_v`` (V; ``None``: an instrument that does not set it, no current or charge)."""
    fig = result.figures()
    fig.update(supply_v=supply_v, mean_current_a=at_supply(fig["mean_power_w"], supply_v),
               charge_per_op_c=at_supply(fig["energy_per_op_j"], supply_v),
               net_charge_per_op_c=at_supply(fig["net_energy_per_op_j"], supply_v))
    fig.update({k: finite_or_none(fig[k])
                for k in ("mean_current_a", "charge_per_op_c", "net_charge_per_op_c")})
    if as_json:
        typer.echo(json.dumps(fig, indent=1))
    else:
        from energyrig.cli.terminal import out_console
        console = out_console()
        if result.windows:
            console.print(result_table(fig))
        if not result.ok:
            console.print(f"[red]measurement failed: {result.reason}")
    if not result.ok:
        sys.exit(1)
