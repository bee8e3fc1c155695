"""``rig analyze CAPTURE``: trigger windows and their energy in a recorded capture.

A thin layer over :func:`energyrig.rig.analysis.analyze_file` (``--json`` alone: over
:class:`~energyrig.rig.analysis.WindowScan`, each window written as it comes); units are
converted to µJ, ms and mW only here.
"""
from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Optional, TextIO

import typer

from energyrig.domain import WindowSettings
from energyrig.flags import CALIBRATION_FLAGS, ENERGY_FLAGS, INTEGRITY_FLAGS
from energyrig.units import in_unit

if TYPE_CHECKING:
    from rich.table import Table

    from energyrig.domain import Window
    from energyrig.rig.analysis import Analysis

#: The flags `rig analyze` gives a window.
ANALYZE_FLAGS = (*ENERGY_FLAGS, *INTEGRITY_FLAGS, *CALIBRATION_FLAGS)
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


#: Windows a table shows without --all: the flagged ones and those furthest from the median.
SHOWN = 20


def shown_windows(result: Analysis, show_all: bool) -> list[int]:
    """Indexes of the windows to list: all of them, or at most :data:`SHOWN` of
    :func:`worst_windows`, in time order."""
    if show_all or len(result.windows) <= SHOWN:
        return list(range(len(result.windows)))
    return sorted(worst_windows(result)[:SHOWN])


def worst_windows(result: Analysis) -> list[int]:
    """Indexes of all windows, the flagged ones first and then those whose net energy lies
    furthest from the median (the ones a person wants to see first)."""
    windows = result.windows
    nets = [w.net_energy_j for w in windows if math.isfinite(w.net_energy_j)]
    median = sorted(nets)[len(nets) // 2] if nets else 0.0

    def badness(k: int) -> tuple[bool, float]:
        net = windows[k].net_energy_j
        return (bool(windows[k].flags), abs(net - median) if math.isfinite(net) else math.inf)

    return sorted(range(len(windows)), key=badness, reverse=True)


def ci_digits(low: float, high: float, figure: str, units: dict) -> int:
    """Significant digits (at least 4) that tell a CI's two ends apart."""
    for digits in range(4, 10):
        if _fmt(low, figure, digits, units) != _fmt(high, figure, digits, units):
            return digits
    return 4


def _windows_table(result: Analysis, rows: list[int]) -> Table:
    from rich import box
    from rich.table import Table
    hidden = len(result.windows) - len(rows)
    title = f"Trigger windows in {result.source}"
    if hidden:
        title += (f": {len(rows)} of {len(result.windows)}, the flagged ones and those "
                  "furthest from the median (--all lists every one, --csv writes them)")
    # Columns one space apart, no side rules: 80 columns hold every column and flag name.
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=0, show_edge=False)
    table.add_column("#", justify="right")
    table.add_column("start s", justify="right", no_wrap=True)
    for label in ("ms", "n", "energy µJ", "±edge µJ", "baseline mW", "net µJ",
                  "power mW"):  # headings wrap between words, never cut inside one
        table.add_column(label, justify="right", min_width=max(map(len, label.split())))
    table.add_column("flags", width=max(map(len, ANALYZE_FLAGS)))  # one per line
    for k in rows:
        w = result.windows[k]
        table.add_row(str(k + 1), f"{w.start_s:.6f}", _fmt(w.duration_s, "duration_s"),
                      str(w.samples), _fmt(w.energy_j, "energy_j"),
                      _fmt(w.edge_error_j, "edge_error_j", 2), _fmt(w.baseline_w, "baseline_w"),
                      _fmt(w.net_energy_j, "net_energy_j"),
                      _fmt(w.mean_power_w, "mean_power_w"),
                      "\n".join(w.flags), style="yellow" if w.flags else None)
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
        values = [stats[key] if stats[key] is not None else math.nan
                  for key in ("mean", "median", "std", "ci_low", "ci_high")]
        digits = ci_digits(values[3], values[4], name, units)
        cells = [_fmt(v, name, digits, units) for v in values]
        table.add_row(label, str(stats["n"]), *cells[:3], f"{cells[3]} … {cells[4]}")
    return table


def _plot_numbers(values: list[str], result: Analysis) -> list[int]:
    """The window numbers (1-based) ``--plot`` names: numbers (also as ``1,3,5``), or
    ``worst``."""
    count = len(result.windows)
    numbers = []
    for value in (v.strip() for text in values for v in text.split(",")):
        if value == "worst" and count:
            numbers.append(worst_windows(result)[0] + 1)
        elif value.isdigit() and 1 <= int(value) <= count:
            numbers.append(int(value))
        else:
            raise typer.BadParameter(f"{value!r} is not a window: give 1..{count} or 'worst'",
                                     param_hint="--plot")
    return list(dict.fromkeys(numbers))


#: JSON's words for the floats a window may hold that are not finite (written as null;
#: -Infinity before Infinity).
_NOT_FINITE = ("-Infinity", "Infinity", "NaN")


def _json_windows_writer() -> Callable[[list[Window]], str]:
    """A function giving windows of ``--json``: the bytes ``json.dumps(..., indent=1)``
    writes for each one's :func:`~energyrig.rig.analysis.json_window` inside the
    ``windows`` list, NaN as null, joined by ``,\\n``; the numbers of all of them through
    the C encoder in one call (``json.dumps`` with an indent encodes in Python, 5x slower)."""
    from operator import attrgetter

    from energyrig.rig.analysis import JSON_FIELDS  # numpy: not at the CLI's start

    numbers = [k for k in JSON_FIELDS if k != "flags"]
    template = ("  {\n" + "".join(f'   "{k}": %s,\n' for k in numbers)
                + '   "flags": %s\n  }')
    get = attrgetter(*numbers)

    written: dict[tuple[str, ...], str] = {}  # windows share a few sets of flags

    def flags(w: Window) -> str:
        text = written.get(w.flags)
        if text is None:
            text = written[w.flags] = ("[\n" + ",\n".join(f"    {json.dumps(f)}"
                                                            for f in w.flags) + "\n   ]"
                                       if w.flags else "[]")
        return text

    def text(ws: list[Window]) -> str:
        numbers = json.dumps([get(w) for w in ws])
        for word in _NOT_FINITE:  # the only letters in the numbers
            numbers = numbers.replace(word, "null")
        return ",\n".join(template % (*row.split(", "), flags(w)) for row, w in
                           zip(numbers[2:-2].split("], ["), ws, strict=True))

    return text


#: Windows ``--json`` encodes at a time (:func:`write_json`).
JSON_BATCH = 256


def write_json(out: TextIO, windows: Iterable[Window], summary: Callable[[], dict]) -> None:
    """``{"windows": [...], "summary": {...}}`` to ``out``, the windows written as they come
    from ``windows``, :data:`JSON_BATCH` at a time (none held longer), then ``summary()``:
    the bytes of ``json.dumps(..., indent=1)`` of the whole."""
    text = _json_windows_writer()
    out.write('{\n "windows": [')
    sep, batch = "\n", []
    for w in windows:
        batch.append(w)
        if len(batch) == JSON_BATCH:
            out.write(sep + text(batch))
            sep, batch = ",\n", []
    if batch:
        out.write(sep + text(batch))
        sep = ",\n"
    out.write(("\n ]" if sep == ",\n" else "]") + ',\n "summary": '
              + json.dumps(summary(), indent=1).replace("\n", "\n ") + "\n}\n")


#: How --csv prints a float: its :data:`~energyrig.rig.analysis.ROW_DIGITS` significant
#: digits, as typed (``0.018935``).
CSV_FLOATS = "%.9g"


def plot_name(capture: Path, number: int, count: int) -> str:
    """The file ``--plot`` draws window ``number`` of ``count`` into: ``CAPTURE-wNN.png``,
    the number padded to the digits of ``count`` (at least 2), so the files sort as the
    windows do; a run's kept samples (``captures/<point>/w0003.csv``) by their point too:
    ``<point>-w0003-w01.png``."""
    from energyrig.results.store.layout import CAPTURES  # pyarrow: not at the CLI's start

    stem = (f"{capture.parent.name}-{capture.stem}" if capture.parent.parent.name == CAPTURES
            else capture.stem)
    return f"{stem}-w{number:0{max(2, len(str(count)))}d}.png"


#: What to check when most windows carry a flag, by flag.
_FLAG_HINTS = {
    "no_baseline": "no idle span of --baseline s ends --guard s before the edges: shorten "
                   "--baseline/--guard, or record more idle time around each batch",
    "too_few_samples": "the windows are shorter than --min-samples samples: run more ops per "
                       "window (--batch) or record at a higher rate",
    "glitch": "the trigger chatters: raise --min-pulse, or set --trigger-hysteresis on an "
              "analog trigger",
    "saturated": "the current is at the end of the instrument's range: a larger range or "
                 "shunt",
    "dropped_samples": "the instrument lost samples: a slower rate or a shorter capture",
}


def mostly_flagged_hint(result: Analysis) -> str | None:
    """A hint when more than half the windows are flagged or have a negative net energy
    (the wrong channel, most often), naming the likely cause and the option to change."""
    windows = result.windows
    if not windows:
        return None
    flagged = [w for w in windows if w.flags]
    negative = sum(1 for w in windows if math.isfinite(w.net_energy_j) and w.net_energy_j < 0)
    flat = sum(1 for w in windows
               if math.isfinite(w.net_energy_j) and abs(w.net_energy_j) < 1e-3 * abs(w.energy_j))
    if negative > len(windows) / 2:
        return (f"{negative} of {len(windows)} windows have a negative net energy: is "
                "--current the current channel (and --trigger the trigger)? A current "
                "measured the wrong way round reads negative.")
    if flat > len(windows) / 2:
        return (f"in {flat} of {len(windows)} windows the power does not change with the "
                "trigger (net energy under 0.1 % of the energy): is --current the current "
                "channel, not the supply voltage or the trigger?")
    if len(flagged) <= len(windows) / 2:
        return None
    counts: dict[str, int] = {}
    for w in flagged:
        for flag in w.flags:
            counts[flag] = counts.get(flag, 0) + 1
    top = max(counts, key=counts.__getitem__)
    return (f"{len(flagged)} of {len(windows)} windows are flagged, most {top}: "
            f"{_FLAG_HINTS.get(top, 'see docs/analyze.md')}.")


_HELP = (
    "Find the trigger windows in a capture and report their energy.\n\n"
    "Each window is a span where the trigger is high. Its energy is the trapezoidal integral "
    "of v·i; the baseline is the mean idle power in a span of --baseline seconds ending --guard "
    "seconds before the rising edge (after the falling edge if the capture has no room "
    "before); net = energy - baseline × duration. ±edge bounds the error of the edge "
    "positions (one sample at each edge). With --batch N, per-op figures divide by N.\n\n"
    f"Flags: {', '.join(ANALYZE_FLAGS)}. Exit code 2 when the file or a channel is "
    "wrong, a quantity is implausible or the capture holds no window (the error says why); "
    "--csv and --plot never replace the capture, nor an existing file without --force.\n\n"
    "Examples:\n\n\b\n"
    "  rig analyze tests/data/synthetic-capture.csv --batch 10\n"
    "  rig analyze session.sr --trigger D0 --current A0 --shunt-ohms 1 --voltage 3.3\n"
    "  rig analyze bench.ppk2raw --batch 1000 --csv windows.csv --calibration latest\n"
    "  rig analyze profiler-session.ppk2 --trigger D3 --voltage 3.0\n"
    "  rig analyze saleae/analog.csv --digital saleae/digital.csv --trigger 'Channel 2' "
    "--current 'Channel 0' --shunt-ohms 1 --voltage 3.3\n"
    "  rig analyze bench.otii3 --uart-start 'BENCH START' --uart-stop 'BENCH STOP'\n"
    "  rig analyze otii.csv --time-column 'Time (s)' --current-column 'Main current (A)' "
    "--voltage 3.3 --trigger-column GPI --trigger-bit 1"
)


def register(app: typer.Typer) -> None:
    @app.command(help=_HELP)
    def analyze(
        capture: Path = typer.Argument(
            ..., metavar="CAPTURE",
            help="Capture file: CSV, sigrok .sr, PPK2 raw stream, Power Profiler export or "
                 "session, Saleae Logic 2 analog export (or its folder) (recognised by "
                 "content; docs/formats.md)."),
        batch: Optional[int] = typer.Option(
            None, "--batch", "-n", min=1,
            help="Operations the firmware ran inside each window: adds per-op figures."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
        csv: Optional[Path] = typer.Option(
            None, "--csv", dir_okay=False,
            help="Also write one row per window to this CSV file: window number, Δt, "
                 "energy, net energy, baseline, charge, mean and max current (and per op "
                 "with --batch); SI units named in the header (_s, _j, _w, _c, _a), 9 "
                 "significant digits."),
        show_all: bool = typer.Option(
            False, "--all", help=f"List every window (default: at most {SHOWN}, the flagged "
                                 "ones and those furthest from the median)."),
        trigger: Optional[str] = typer.Option(
            None, "--trigger", "--trigger-column",
            help="Trigger channel: CSV column (default 'trigger'), logic channel (D0..D7: "
                 "PPK2, Power Profiler files, sigrok), or analog channel (A1) with "
                 "--trigger-level."),
        trigger_bit: Optional[int] = typer.Option(
            None, "--trigger-bit", min=0, max=15, metavar="BIT",
            help="The trigger column packs digital channels in a whole number: the trigger "
                 "is this bit (0 = lowest). For a PPK2 or Power Profiler file: channel D<BIT>."),
        digital_layout: Optional[str] = typer.Option(
            None, "--digital-layout", metavar="LAYOUT",
            help="How a Power Profiler file holds its digital channels (default: told from "
                 "the file): a CSV export's text d0-first (the app since v3.1.3) or d7-first "
                 "(v3.0.0 to v3.1.2); a .ppk2 session's word as the app's bit pairs (pairs) "
                 "or a plain D0..D7 bit mask (mask: ppk2-python's save_ppk2)."),
        digital: Optional[Path] = typer.Option(
            None, "--digital", dir_okay=False, metavar="FILE",
            help="Saleae Logic 2 export: the digital CSV holding the trigger, read with the "
                 "analog CSV given as CAPTURE (default: digital.csv beside it; CAPTURE may "
                 "also be the export's folder)."),
        uart_start: Optional[str] = typer.Option(
            None, "--uart-start", metavar="TEXT",
            help="Otii project (.otii3): the trigger is the UART log (rx): a window opens at "
                 "a line starting with TEXT (the firmware prints it as the batch starts). "
                 "With --uart-stop."),
        uart_stop: Optional[str] = typer.Option(
            None, "--uart-stop", metavar="TEXT",
            help="Otii project: a window closes at the first line of the UART log after "
                 "its start that starts with TEXT. With --uart-start."),
        trigger_level: Optional[float] = typer.Option(
            None, metavar="VOLTS",
            help="Threshold of an analog trigger (sigrok analog channel, CSV column of volts), "
                 "e.g. 1.65 for 3.3 V logic. Required for one: there is no automatic level."),
        trigger_hysteresis: Optional[float] = typer.Option(
            None, metavar="VOLTS", min=0.0,
            help="Band around --trigger-level in which the trigger keeps its state, so noise "
                 "cannot make it chatter. Default: 10 % of the level."),
        current: Optional[str] = typer.Option(
            None, "--current", "--current-column",
            help="Current channel: CSV column (default 'current_a') or analog channel (A0)."),
        current_unit: Optional[str] = typer.Option(
            None, "--current-unit", metavar="UNIT",
            help="Unit of the CSV current column: A (default), mA, uA, nA."),
        voltage: Optional[str] = typer.Option(
            None, "--voltage", "--voltage-column",
            help="Supply voltage: a channel (CSV default 'voltage_v', or A1) or constant VOLTS."),
        time_column: Optional[str] = typer.Option(
            None, "--time-column", help="CSV time column (default 'time_s')."),
        time_unit: Optional[str] = typer.Option(
            None, "--time-unit", metavar="UNIT",
            help="Unit of the CSV time column: s (default), ms, us, ns."),
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
        plot: Optional[list[str]] = typer.Option(
            None, "--plot", metavar="N[,N...]|worst",
            help="Draw window N (as numbered in the table; 'worst': the first the table "
                 "lists as worst) as a PNG: current (and voltage) against time with the "
                 "window centred, its edges, guard and baseline span marked, the trigger "
                 "below, and its numbers (Δt, mean and max current, charge, energy, net "
                 "energy, baseline) beside it; the JSON beside the PNG holds the window's "
                 "--csv row. Repeatable."),
        plot_dir: Path = typer.Option(
            Path("."), "--plot-dir", file_okay=False,
            help="Directory of the --plot files: CAPTURE's name-wNN.png (and .json)."),
        calibration: Optional[str] = typer.Option(
            None, "--calibration",
            help="Calibration to apply, as `rig run` does: 'latest' (the store's, for the one "
                 "instrument its records are of; without a firmware build the window "
                 "overhead is not taken out), 'none', or a record's path. Default: the "
                 "samples as the file holds them."),
        fixture: Optional[Path] = typer.Option(
            None, "--fixture", "-f", help="Bench whose calibration store 'latest' reads "
                                          "(default: $ENERGYRIG_FIXTURE or fixtures/sim.toml)."),
        force: bool = typer.Option(
            False, "--force", help="Replace the --csv and --plot files if they exist (never "
                                   "the capture itself)."),
    ) -> None:
        # the readers and the analysis (pandas): only here; rich only where it draws
        from energyrig.cli.terminal import err_console
        from energyrig.instruments.fileopts import CaptureOptions
        from energyrig.instruments.files import parse_voltage
        from energyrig.results.outputs import check_outputs, check_stdout, writing
        from energyrig.rig.analysis import Tally, WindowScan, analyze_file

        inputs = [capture] if digital is None else [capture, digital]
        if csv is not None:
            check_outputs([(csv, "--csv")], inputs, force=force)
        if as_json:
            check_stdout(inputs, "--json")

        try:
            options = CaptureOptions(trigger=trigger, trigger_level_v=trigger_level,
                                     trigger_hysteresis_v=trigger_hysteresis,
                                     current=current, voltage=parse_voltage(voltage),
                                     shunt_ohms=shunt_ohms, current_scale_a_per_v=current_scale,
                                     trigger_bit=trigger_bit, time=time_column,
                                     time_unit=time_unit, current_unit=current_unit,
                                     digital_layout=digital_layout, digital=digital,
                                     uart_start=uart_start, uart_stop=uart_stop)
            settings = WindowSettings(active_high=not active_low, min_pulse_s=min_pulse,
                                      guard_s=guard, baseline_s=baseline, min_samples=min_samples)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
        correction = None
        if calibration is not None:
            from energyrig.calibration.correction import CurrentCorrection
            from energyrig.calibration.store import select_for_capture
            from energyrig.fixtures import load_fixture

            cal = select_for_capture(calibration, load_fixture(fixture))
            if not cal.complete:
                err_console().print(f"[yellow]warning: {cal.problem()}[/]")
            correction = CurrentCorrection.of(cal)
        if as_json and csv is None and not plot:  # each window out as it comes: none held
            scan = WindowScan(capture, options, settings, correction)
            tally = Tally()

            def counted(windows: Iterable[Window]) -> Iterable[Window]:
                for w in windows:
                    tally.add(w)
                    yield w

            write_json(sys.stdout, counted(scan), lambda: tally.summary(
                scan.source, scan.glitches, scan.unpaired, batch))
            return
        console = err_console()
        with console.status(f"analysing {capture}", spinner="dots"):
            # the largest currents only for the rows that show them (one more pass)
            result = analyze_file(capture, options, settings, batch, correction,
                                  max_current=csv is not None or bool(plot))
        numbers = _plot_numbers(plot or [], result)
        pngs = {n: plot_dir / plot_name(capture, n, len(result.windows)) for n in numbers}
        check_outputs([(path, "--plot") for png in pngs.values()
                       for path in (png, png.with_suffix(".json"))], inputs, force=force)
        if csv is not None:
            from energyrig.results.store.schema import flat  # pandas, pyarrow: --csv only

            with writing(csv):
                flat(result.frame()).to_csv(csv, index=False, float_format=CSV_FLOATS)
        for number, png in pngs.items():
            from energyrig.results.trace import plot_trace
            from energyrig.rig.analysis import trace_file

            title = f"{capture.name}, window {number}"
            trace = trace_file(capture, result.windows[number - 1], options, settings,
                               correction, title)
            with writing(png):
                plot_dir.mkdir(parents=True, exist_ok=True)
                plot_trace(trace, png, figures=result.row(number - 1))
            console.print(f"window {number}: {png}")
        if as_json:
            write_json(sys.stdout, result.windows, result.summary)
            return
        from rich.console import Console

        out = Console()
        out.print(_windows_table(result, shown_windows(result, show_all)))
        out.print(_summary_table(result))
        if hint := mostly_flagged_hint(result):
            out.print(f"[yellow]{hint}[/]")
        for edge in result.unpaired:
            out.print(f"[yellow]unpaired {edge.kind} edge at {edge.time_s:.6f} s "
                      f"(capture {'began' if edge.kind == 'fall' else 'ended'} with the trigger high)")
        if result.glitches:
            out.print(f"[yellow]{len(result.glitches)} trigger glitches shorter than {min_pulse} s")
