"""Windows and their statistics for one capture file: the library side of ``rig analyze``.

>>> from energyrig.rig.analysis import analyze_file
>>> result = analyze_file("tests/data/synthetic-capture.csv", batch_n=1000)
>>> result.frame()          # one row per window, SI units (pandas): what --csv writes
>>> result.row(2)           # window 3's row: what --plot 3 writes beside its PNG
>>> result.summary()        # count, mean, median, std, 95 % CI per figure

:class:`WindowScan` is the same pass one window at a time, for a caller that writes each
window out as it comes (``rig analyze --json``): memory bounded whatever the count.
"""
from __future__ import annotations

import logging
import math
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from energyrig.capture import Capture, Chunk, plausible_chunks
from energyrig.domain import Window, WindowSettings, finite_or_none, net_energy
from energyrig.energy.figures import take_out_overhead
from energyrig.energy.windows import (Glitch, UnpairedEdge, WindowCurrent, WindowFinder,
                                      find_windows, windows_max_current, windows_stream_flags)
from energyrig.errors import CaptureError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture
from energyrig.results.stats import describe_finite
from energyrig.units import significant

if TYPE_CHECKING:  # pandas only for a table of the rows (--csv), calibration and traces
    import pandas as pd  # where asked for: not on the path of --json

    from energyrig.calibration.correction import CurrentCorrection
    from energyrig.results.trace import Trace

log = logging.getLogger(__name__)

# The window fields of ``rig analyze --json``, in order (the flags as ``flag_list`` in the
# table of :meth:`Analysis.frame`, as in ``windows.parquet``).
JSON_FIELDS = ("start_s", "end_s", "duration_s", "samples", "energy_j", "baseline_w",
               "net_energy_j", "mean_power_w", "edge_error_j", "flags")
# Figures summarised over the windows, and per op (name in the JSON -> per-op column).
FIGURES = ("energy_j", "net_energy_j", "duration_s", "mean_power_w")
PER_OP_FIGURES = {"energy_j": "energy_per_op_j", "net_energy_j": "net_energy_per_op_j",
                  "duration_s": "time_per_op_s"}
#: The columns of a window's row (:meth:`Analysis.row`, ``--csv``, ``--plot``'s JSON), SI
#: units named by their suffix; with ``batch_n`` followed by :data:`PER_OP_COLUMNS`.
ROW_COLUMNS = ("window", "start_s", "end_s", "duration_s", "samples", "energy_j",
               "net_energy_j", "baseline_w", "mean_power_w", "edge_error_j", "charge_c",
               "mean_current_a", "max_current_a", "baseline_a", "lost_samples", "flag_list")
#: The per-op columns of a row with ``batch_n``: the window's figure / ``batch_n``.
PER_OP_COLUMNS = {**{col: name for name, col in PER_OP_FIGURES.items()},
                  "charge_per_op_c": "charge_c"}
#: Significant digits of a row's floats: what a float64 sum of samples carries, and short
#: enough to print as typed (``0.018935``, not ``0.018934999999999997``).
ROW_DIGITS = 9


@dataclass(frozen=True)
class Analysis:
    """The windows of one capture and what the finder saw besides them."""

    source: str
    windows: tuple[Window, ...]
    glitches: tuple[Glitch, ...]
    unpaired: tuple[UnpairedEdge, ...]
    batch_n: int | None = None
    #: The current of each window (:class:`~energyrig.energy.windows.WindowCurrent`); empty:
    #: not computed (NaN in the rows).
    currents: tuple[WindowCurrent, ...] = ()

    def row(self, k: int) -> dict[str, float | int | str]:
        """The figures of window ``k`` (0-based; ``window`` numbers it from 1), the numbers
        the Power Profiler app shows for a selection: Δt (``duration_s``), energy, net
        energy, baseline, charge, mean and max current, and per op with ``batch_n``
        (:data:`ROW_COLUMNS`, :data:`PER_OP_COLUMNS`). SI units; floats rounded to
        :data:`ROW_DIGITS` significant digits (NaN: unknown); ``flag_list`` a list, as in
        ``windows.parquet``. ``charge_c`` and ``mean_current_a`` are of the window between
        its edges (``charge_c / (end_s − start_s)``): a calibrated window overhead is taken
        out of time and energy only. --csv writes these rows, --plot the same beside its PNG.
        """
        w = self.windows[k]
        cur = self.currents[k] if self.currents else WindowCurrent(math.nan, math.nan)
        row: dict[str, float | int | str] = {
            "window": k + 1, "start_s": w.start_s, "end_s": w.end_s,
            "duration_s": w.duration_s, "samples": w.samples, "energy_j": w.energy_j,
            "net_energy_j": w.net_energy_j, "baseline_w": w.baseline_w,
            "mean_power_w": w.mean_power_w, "edge_error_j": w.edge_error_j,
            "charge_c": cur.charge_c, "mean_current_a": cur.charge_c / (w.end_s - w.start_s),
            "max_current_a": cur.max_current_a, "baseline_a": cur.baseline_a,
            "lost_samples": w.lost_samples, "flag_list": list(w.flags)}
        if self.batch_n is not None:
            row.update({col: float(row[name]) / self.batch_n
                        for col, name in PER_OP_COLUMNS.items()})
        return {name: significant(value, ROW_DIGITS) if isinstance(value, float) else value
                for name, value in row.items()}

    def frame(self) -> pd.DataFrame:
        """One :meth:`row` per window, in time order (what ``--csv`` writes)."""
        import pandas as pd

        columns = [*ROW_COLUMNS, *(PER_OP_COLUMNS if self.batch_n is not None else ())]
        return pd.DataFrame([self.row(k) for k in range(len(self.windows))], columns=columns)

    def summary(self) -> dict[str, object]:
        """Count, flagged count, and describe() of each figure (NaN values left out);
        with ``batch_n``, the same per operation under ``per_op``."""
        tally = Tally()
        for w in self.windows:
            tally.add(w)
        return tally.summary(self.source, self.glitches, self.unpaired, self.batch_n)

    def as_json(self) -> dict[str, object]:
        """``{"windows": [...], "summary": {...}}`` with NaN as null."""
        return {"windows": [json_window(w) for w in self.windows], "summary": self.summary()}


def json_window(w: Window) -> dict[str, object]:
    """One window of ``rig analyze --json``: :data:`JSON_FIELDS`, NaN as null."""
    return {k: _json_value(getattr(w, k)) for k in JSON_FIELDS}


class Tally:
    """The figures of windows seen one at a time, for their summary: 8 bytes per figure and
    window (no :class:`Window` kept), so a million windows take 32 MB."""

    def __init__(self) -> None:
        self.count = self.flagged = 0
        self._figures = {name: array("d") for name in FIGURES}

    def add(self, w: Window) -> None:
        """Note one window's :data:`FIGURES` (its duration once, the net energy by
        :func:`~energyrig.domain.net_energy`: the one formula of each)."""
        self.count += 1
        self.flagged += bool(w.flags)
        duration, energy = w.duration_s, w.energy_j
        figures = self._figures
        figures["energy_j"].append(energy)
        figures["net_energy_j"].append(net_energy(energy, w.baseline_w, duration))
        figures["duration_s"].append(duration)
        figures["mean_power_w"].append(energy / duration if duration else math.nan)

    def summary(self, source: str, glitches: Iterable[Glitch] = (),
                unpaired: Iterable[UnpairedEdge] = (), batch_n: int | None = None
                ) -> dict[str, object]:
        """Count, flagged count, and describe() of each figure (NaN values left out);
        with ``batch_n``, the same per operation under ``per_op``."""
        out: dict[str, object] = {
            "source": source,
            "count": self.count,
            "flagged": self.flagged,
            "glitches": len(list(glitches)),
            "unpaired_edges": [asdict(e) for e in unpaired],
        }
        values = {name: np.frombuffer(a, dtype=np.float64) for name, a in self._figures.items()}
        out.update({name: _describe(values[name]) for name in FIGURES})
        if batch_n is not None:
            out["batch_n"] = batch_n
            out["per_op"] = {name: _describe(values[name] / batch_n) for name in PER_OP_FIGURES}
        return out


def _json_value(value: object) -> object:
    """A window field for JSON: NaN as null, flags as a list."""
    if isinstance(value, tuple):
        return list(value)
    return finite_or_none(value) if isinstance(value, float) else value


def _describe(values: np.ndarray) -> dict[str, float | int | None] | None:
    d = describe_finite(values)
    if d is None:
        return None
    return {k: (finite_or_none(v) if isinstance(v, float) else v) for k, v in asdict(d).items()}


class _Watch:
    """Passes chunks through, noting whether any holds a corrupt sample or one at the
    instrument's floor (``seen``), and which logic bits were ever high (``high``) and ever
    low (``low``): a bit in both has edges."""

    def __init__(self) -> None:
        self.seen = False
        self.high = self.low = 0

    def __call__(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        for chunk in chunks:
            if not self.seen:
                self.seen = any(m is not None and bool(m.any())
                                for m in (chunk.corrupt, chunk.at_floor))
            if chunk.logic is not None and len(chunk):
                self.high |= int(np.bitwise_or.reduce(chunk.logic))
                # a bit low somewhere is one not high everywhere: no inverted copy
                self.low |= ~int(np.bitwise_and.reduce(chunk.logic)) & 0xFF
            yield chunk


def no_window_reason(trigger: str, bit: int, settings: WindowSettings, watch: _Watch,
                     finder: WindowFinder, columns: list[str] | None = None) -> str:
    """Why a capture gave no window: what its trigger did (never rose, never fell, high
    throughout, only glitches), and the logic channels that do have edges (a CSV's
    ``columns`` instead: it delivers its trigger column alone)."""
    on, off = ("high", "low") if settings.active_high else ("low", "high")
    active = watch.high if settings.active_high else watch.low
    rises = [e for e in finder.unpaired if e.kind == "rise"]
    falls = [e for e in finder.unpaired if e.kind == "fall"]
    if finder.glitches:
        n = len(finder.glitches)
        why = (f"the trigger {trigger} went {on} {n} time{'s' * (n != 1)}, each pulse "
               f"shorter than --min-pulse {settings.min_pulse_s:g} s (glitches): lower "
               "--min-pulse")
    elif falls and rises:
        why = (f"the trigger {trigger} was {on} when the capture began, went {off} at "
               f"{falls[0].time_s:.6f} s and {on} again at {rises[0].time_s:.6f} s until the "
               "end: the capture holds no whole window")
    elif rises:
        why = (f"the trigger {trigger} went {on} at {rises[0].time_s:.6f} s and never went "
               f"{off} again (the capture ended inside a window): record longer")
    elif falls:
        why = (f"the trigger {trigger} was {on} when the capture began, went {off} at "
               f"{falls[0].time_s:.6f} s and never went {on} again")
    elif active >> bit & 1:
        why = f"the trigger {trigger} is {on} throughout the capture (never went {off})"
    else:
        why = f"the trigger {trigger} never went {on} (it is {off} throughout the capture)"
    edges = [k for k in range(8) if k != bit and (watch.high & watch.low) >> k & 1]
    if columns is not None:
        why += f"; is --trigger the trigger column? the columns are {', '.join(columns)}"
    elif edges:
        why += (f"; the logic channels with edges are {', '.join(f'D{k}' for k in edges)}: "
                f"is one of them the trigger (--trigger D{edges[0]})?")
    elif not (watch.high & watch.low) >> bit & 1:
        why += "; no logic channel of the capture has edges: is the trigger recorded (--trigger)?"
    return f"no trigger window: {why}"


def file_chunks(path: str | Path, options: CaptureOptions | None = None
                ) -> tuple[Capture, Iterator[Chunk]]:
    """Open a capture file and stream its chunks held to the plausibility limits, the one
    table every reader's samples pass (:func:`~energyrig.capture.plausible_chunks`), with a
    read error naming the file."""
    capture = open_capture(path, options)

    def chunks() -> Iterator[Chunk]:
        try:
            yield from plausible_chunks(capture.chunks(), capture.source)
        except OSError as exc:
            raise CaptureError(exc.filename or capture.source,
                               f"cannot read: {exc.strerror or exc}") from None

    return capture, chunks()


class WindowScan:
    """One pass over a capture file, its windows yielded as the finder completes them.

    Iterating opens the file, finds the windows (``correction`` applied to the samples as
    they stream and its window overhead to each window, as the point pipeline does; each
    window records it in ``corrections`` and carries its flags) and yields each one once its
    flags are known. A window's stream-integrity flags (corrupt samples, a baseline at the
    instrument's floor) need the masks of the chunks around it: the windows found before the
    stream showed any such sample have none and go out at once; those after it are held and
    go out at the end, with their flags from one more pass over the file (in bounded
    memory). After the iteration :attr:`glitches`, :attr:`unpaired` and, with ``charge``,
    :attr:`currents` (a :class:`WindowCurrent` per window, its maximum not computed) hold
    what the finder saw.

    Raises
    ------
    CaptureError
        (while iterating) The file or a channel is wrong, a quantity is implausible, or the
        capture holds no window (:func:`no_window_reason` says why).
    """

    def __init__(self, path: str | Path, options: CaptureOptions | None = None,
                 settings: WindowSettings | None = None,
                 correction: CurrentCorrection | None = None, charge: bool = False) -> None:
        self.path, self.options, self.correction = path, options, correction
        self._settings, self._charge = settings or WindowSettings(), charge
        self.source = str(path)
        self.glitches: tuple[Glitch, ...] = ()
        self.unpaired: tuple[UnpairedEdge, ...] = ()
        self.currents: tuple[WindowCurrent, ...] = ()

    def __iter__(self) -> Iterator[Window]:
        # without a correction the samples go to the energy kernel alone: float32 as read
        options = self.options if self.correction is not None else replace(
            self.options or CaptureOptions(), keep_float32=True)
        capture, stream = file_chunks(self.path, options)
        self.source = capture.source
        settings = replace(self._settings,
                           trigger_bit=getattr(capture, "trigger_bit", self._settings.trigger_bit))
        finder = WindowFinder(settings, source=capture.source, charge=self._charge)
        watch = _Watch()
        chunks = watch(stream)
        correction = self.correction
        found = find_windows(chunks if correction is None else correction.chunks(chunks),
                             finder=finder)
        held: list[Window] = []
        count = 0
        for w in found:
            count += 1
            if correction is not None:
                w = take_out_overhead(replace(w, flags=(*w.flags, *correction.flags),
                                              corrections=correction.applied))
            if watch.seen:  # its integrity flags come from the masks: at the end
                held.append(w)
            else:
                yield w
        self.glitches, self.unpaired = tuple(finder.glitches), tuple(finder.unpaired)
        self.currents = tuple(finder.currents)
        if not count:
            column = getattr(capture, "trigger_column", None)
            options = self.options
            trigger = (f"column '{column}'" if column else options and options.trigger
                       or f"D{settings.trigger_bit}")
            raise CaptureError(capture.source, no_window_reason(
                trigger, settings.trigger_bit, settings, watch, finder,
                getattr(capture, "columns", None)))
        if held:
            flags = windows_stream_flags(file_chunks(self.path, options)[1], held, settings)
            yield from (replace(w, flags=(*w.flags, *f)) if f else w
                        for w, f in zip(held, flags, strict=True))
        log.info("%s: %d windows", capture.source, count)


def analyze_file(path: str | Path, options: CaptureOptions | None = None,
                 settings: WindowSettings | None = None, batch_n: int | None = None,
                 correction: CurrentCorrection | None = None, max_current: bool = True
                 ) -> Analysis:
    """Open a capture file, find its windows and integrate them: :class:`WindowScan`'s
    windows, all held.

    The trigger is chosen by channel name in ``options``; a reader that moves it to a
    particular logic bit says so in ``capture.trigger_bit``, which then overrides
    ``settings.trigger_bit``. Each window's charge and baseline current come with the
    integration; its largest current takes one more pass over the file, left out (NaN) with
    ``max_current`` False.

    Raises
    ------
    CaptureError
        The file or a channel is wrong, a quantity is implausible, or the capture holds no
        window (:func:`no_window_reason` says why).
    """
    scan = WindowScan(path, options, settings, correction, charge=True)
    windows = tuple(scan)
    currents = scan.currents
    if max_current:  # once more for each window's largest current (of its energy's samples)
        again = file_chunks(path, options)[1]
        tops = windows_max_current(again if correction is None else correction.chunks(again),
                                   windows)
        currents = tuple(replace(c, max_current_a=float(top))
                         for c, top in zip(currents, tops, strict=True))
    return Analysis(scan.source, windows, scan.glitches, scan.unpaired, batch_n, currents)


def trace_file(path: str | Path, window: Window, options: CaptureOptions | None = None,
               settings: WindowSettings | None = None,
               correction: CurrentCorrection | None = None, title: str = "") -> Trace:
    """The trace of one window of :func:`analyze_file`'s result (opened again and read up to
    the window, with the same ``correction``), for
    :func:`~energyrig.results.trace.plot_trace`."""
    from energyrig.results.trace import window_trace

    chunks = file_chunks(path, options)[1]
    chunks = chunks if correction is None else correction.chunks(chunks)
    return window_trace(chunks, window, settings or WindowSettings(), title=title)
