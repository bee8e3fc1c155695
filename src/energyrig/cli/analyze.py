"""``rig analyze CAPTURE``: trigger windows and their energy in a recorded capture.

A thin layer over :func:`energyrig.rig.analysis.analyze_file`; units are converted to µJ,
ms and mW only here.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from energyrig.domain import ENERGY_FLAGS, WindowSettings
from energyrig.units import in_unit

if TYPE_CHECKING:
    from rich.table import Table

    from energyrig.rig.analysis import Analysis

_DEFAULTS = WindowSettings()
# Display units at the CLI edge: figure -> (SI prefix, unit) of its column.
_UNITS = {
    "energy_j": ("µ", "J"),
    "net_energy_j": ("µ", "J"),
    "duration_s": ("m", "s"),
    "mean_power_w": ("m", "W"),
    "baseline_w": ("m", "W"),
    "edge_error_j": ("µ", "J"),
}
_PER_OP_UNITS = {**_UNITS, "duration_s": ("µ", "s")}


def _fmt(value: float, figure: str, digits: int = 4, units: dict = _UNITS) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{in_unit(value, units[figure][0]):.{digits}g}"


def _windows_table(result: Analysis) -> Table:
    from rich.table import Table
    table = Table(title=f"Trigger windows in {result.source}")
    table.add_column("#", justify="right")
    table.add_column("start s", justify="right", no_wrap=True)
    for label in ("ms", "n", "energy µJ", "±edge µJ", "baseline mW", "net µJ",
                  "power mW"):
        table.add_column(label, justify="right")
    table.add_column("flags")
    for k, w in enumerate(result.windows, 1):
        table.add_row(str(k), f"{w.start_s:.6f}", _fmt(w.duration_s, "duration_s"),
                      str(w.samples), _fmt(w.energy_j, "energy_j"),
                      _fmt(w.edge_error_j, "edge_error_j", 2), _fmt(w.baseline_w, "baseline_w"),
                      _fmt(w.net_energy_j, "net_energy_j"),
                      _fmt(w.mean_power_w, "mean_power_w"),
                      ", ".join(w.flags), style="yellow" if w.flags else None)
    return table


def _summary_table(result: Analysis) -> Table:
    from rich.table import Table
    summary = result.summary()
    table = Table(title=f"Summary of {summary['count']} windows ({summary['flagged']} flagged)")
    for label in ("figure", "n", "mean", "median", "std", "95 % CI"):
        table.add_column(label, justify="left" if label == "figure" else "right")
    rows = [(name, summary[name]) for name in ("energy_j", "net_energy_j", "duration_s",
                                               "mean_power_w")]
    per_op = summary.get("per_op")
    if isinstance(per_op, dict):
        rows += [(name, stats) for name, stats in per_op.items()]
    for k, (name, stats) in enumerate(rows):
        units = _PER_OP_UNITS if k >= 4 else _UNITS
        op = "/op" if k >= 4 else ""
        label = f"{name.rsplit('_', 1)[0].replace('_', ' ')}{op} ({''.join(units[name])})"
        if not isinstance(stats, dict):
            table.add_row(label, "0", "-", "-", "-", "-")
            continue
        cells = [_fmt(stats[key] if stats[key] is not None else math.nan, name, units=units)
                 for key in ("mean", "median", "std", "ci_low", "ci_high")]
        table.add_row(label, str(stats["n"]), *cells[:3], f"{cells[3]} … {cells[4]}")
    return table


_HELP = (
    "Find the trigger windows in a capture and report their energy.\n\n"
    "Each window is a span where the trigger is high. Its energy is the trapezoidal integral "
    "of v·i; the baseline is the mean idle power in a span of --baseline seconds ending --guard "
    "seconds before the rising edge (after the falling edge if the capture has no room "
    "before); net = energy - baseline × duration. ±edge bounds the error of the edge "
    "positions (one sample at each edge). With --batch N, per-op figures divide by N.\n\n"
    f"Flags: {', '.join(ENERGY_FLAGS)}. Exit code 2 when the file or a channel is wrong."
)


def register(app: typer.Typer) -> None:
    @app.command(help=_HELP)
    def analyze(
        capture: Path = typer.Argument(..., metavar="CAPTURE", help="Capture file: .csv (or any kind the rig reads)."),
        batch: Optional[int] = typer.Option(
            None, "--batch", "-n", min=1,
            help="Operations the firmware ran inside each window: adds per-op figures."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
        trigger: Optional[str] = typer.Option(
            None, help="Trigger channel: CSV column (default 'trigger'), logic channel (D0), or "
                       "analog channel (A1) with --trigger-level."),
        trigger_level: Optional[float] = typer.Option(
            None, metavar="VOLTS",
            help="Threshold of an analog trigger (sigrok analog channel, CSV column of volts), "
                 "e.g. 1.65 for 3.3 V logic. Required for one: there is no automatic level."),
        trigger_hysteresis: Optional[float] = typer.Option(
            None, metavar="VOLTS", min=0.0,
            help="Band around --trigger-level in which the trigger keeps its state, so noise "
                 "cannot make it chatter. Default: 10 % of the level."),
        current: Optional[str] = typer.Option(
            None, help="Current channel: CSV column (default 'current_a') or analog channel (A0)."),
        voltage: Optional[str] = typer.Option(
            None, help="Supply voltage: a channel (CSV default 'voltage_v', or A1) or constant VOLTS."),
        shunt_ohms: Optional[float] = typer.Option(
            None, help="The current channel is volts across this shunt: I = V / R (ohm)."),
        current_scale: Optional[float] = typer.Option(
            None, help="The current channel is volts to scale: I = V × A_PER_V."),
        min_pulse: float = typer.Option(
            _DEFAULTS.min_pulse_s, help="Shorter trigger pulses (and dips) are glitches (s)."),
        guard: float = typer.Option(
            _DEFAULTS.guard_s, help="Gap between the baseline span and the edge (s)."),
        baseline: float = typer.Option(
            _DEFAULTS.baseline_s, help="Length of the idle span whose mean power is the baseline (s)."),
        min_samples: int = typer.Option(
            _DEFAULTS.min_samples, help="Windows with fewer samples are flagged too_few_samples."),
        active_low: bool = typer.Option(False, help="The trigger is low during a batch."),
        calibration: Optional[str] = typer.Option(
            None, "--calibration",
            help="Calibration to apply, as `rig run` does: 'latest' (the store's, for the one "
                 "instrument its records are of; without a firmware build the window "
                 "overhead is not taken out), 'none', or a record's path. Default: the "
                 "samples as the file holds them."),
        fixture: Optional[Path] = typer.Option(
            None, "--fixture", "-f", help="Bench whose calibration store 'latest' reads "
                                          "(default: $ENERGYRIG_FIXTURE or fixtures/sim.toml)."),
    ) -> None:
        # the readers and the analysis (pandas): only here
        from rich.console import Console
        from energyrig.instruments.fileopts import CaptureOptions
        from energyrig.instruments.files import parse_voltage
        from energyrig.rig.analysis import analyze_file

        try:
            options = CaptureOptions(trigger=trigger, trigger_level_v=trigger_level,
                                     trigger_hysteresis_v=trigger_hysteresis,
                                     current=current, voltage=parse_voltage(voltage),
                                     shunt_ohms=shunt_ohms, current_scale_a_per_v=current_scale)
            settings = WindowSettings(active_high=not active_low, min_pulse_s=min_pulse,
                                      guard_s=guard, baseline_s=baseline, min_samples=min_samples)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        console = Console(stderr=True)
        correction = None
        if calibration is not None:
            from energyrig.calibration.correction import CurrentCorrection
            from energyrig.calibration.store import select_for_capture
            from energyrig.fixtures import load_fixture

            cal = select_for_capture(calibration, load_fixture(fixture))
            if not cal.complete:
                console.print(f"[yellow]warning: {cal.problem()}[/]")
            correction = CurrentCorrection.of(cal)
        with console.status(f"analysing {capture}", spinner="dots"):
            result = analyze_file(capture, options, settings, batch, correction)
        if as_json:
            typer.echo(json.dumps(result.as_json(), indent=1))
            return
        out = Console()
        out.print(_windows_table(result))
        out.print(_summary_table(result))
        for edge in result.unpaired:
            out.print(f"[yellow]unpaired {edge.kind} edge at {edge.time_s:.6f} s "
                      f"(capture {'began' if edge.kind == 'fall' else 'ended'} with the trigger high)")
        if result.glitches:
            out.print(f"[yellow]{len(result.glitches)} trigger glitches shorter than {min_pulse} s")
