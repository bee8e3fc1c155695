"""Streaming reader for captures stored as CSV with a header row.

Columns (names and units configurable through
:class:`~energyrig.instruments.fileopts.CaptureOptions`, so a spreadsheet, an Otii export or
the Power Profiler app's export is read as it is; docs/formats.md):

``time_s``
    Sample time in seconds (``time_unit``: ms, µs, ns); required. The sample period is
    estimated from the first chunk and every time stamp must sit on that grid (within a
    quarter period). A jump of ``k`` periods means ``k − 1`` samples were lost: they become
    :attr:`Chunk.gaps` and the windows around them are flagged ``dropped_samples``.
``current_a``
    Current in amperes (``current_unit``: mA, µA, nA; or the voltage across a shunt with
    ``shunt_ohms``/``current_scale``).
``voltage_v``
    Supply voltage in volts; instead of a column, a constant voltage may be given.
``trigger``
    The trigger: 0/1 values, or volts of the trigger GPIO recorded on an analog channel,
    thresholded with hysteresis (:mod:`energyrig.instruments.threshold`) at
    ``trigger_level_v`` (``--trigger-level``). A column holding only 0 and 1 needs no level
    (0.5 is used); any other value without a level is an error naming its line, as the
    sigrok reader refuses an analog trigger channel without a level. With ``trigger_bit``
    the column packs digital channels in an integer and the trigger is that bit of it. The
    Power Profiler app writes its channels as text instead, one character per channel
    (``0``, ``1``, ``X`` high and low within one averaged sample, read as high, ``-`` no
    state, read as low and marked corrupt): :class:`CsvCapture` with ``digital_text``.
    The trigger becomes logic bit D0.

The file is read in chunks of ``chunk_samples`` rows (at most :data:`MAX_CHUNK_ROWS`) by
pandas' C parser, so memory stays bounded for files of any length.
"""
from __future__ import annotations

import csv
import itertools
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
import pandas as pd

from energyrig.capture import CSV_COLUMNS, LIMITS, NO_GAPS, Chunk
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CURRENT_UNITS, TIME_UNITS, CaptureOptions
from energyrig.instruments.threshold import Schmitt

log = logging.getLogger(__name__)

TIME, CURRENT, VOLTAGE, TRIGGER = CSV_COLUMNS  # the layout energyrig.capture.write_csv writes
LOGIC_LEVEL = 0.5  # level of a 0/1 trigger column
#: Characters of a digital channel in the Power Profiler app's export -> (level, corrupt).
_DIGITAL_TEXT = {ord("0"): (0, False), ord("1"): (1, False), ord("X"): (1, False),
                 ord("-"): (0, True)}
GRID_TOLERANCE = 0.25  # of a period
_FAR = float(1 << 62)  # sample indices beyond this (a stamp 10^22 periods away) are refused
#: UTF-8, with or without the byte-order mark a spreadsheet (Excel's "CSV UTF-8") writes first.
ENCODING = "utf-8-sig"
#: Most rows per chunk: a row parsed by pandas costs several times a binary sample (a text
#: column, such as the Power Profiler app's digital channels, one Python string per row),
#: so a CSV is read in smaller chunks than ``chunk_samples``' default
#: (benchmarks/reader_memory.py: peak RSS of `rig analyze` on 1 GB).
MAX_CHUNK_ROWS = 1 << 18


@dataclass(frozen=True)
class CsvLayout:
    """Where the header and the samples sit in a CSV, and what its time column holds.

    The rig's own layout (and the generic mapping) is the default: the header on line 1, the
    samples from line 2, time in ``time_unit``. An oscilloscope's export
    (:mod:`energyrig.instruments.scope.csvexport`) has metadata rows before the header, a
    units row under it, or time as a sample number.

    Attributes
    ----------
    header_line:
        Lines before the header row (0: it is the first line).
    units_row:
        A row of units follows the header and is skipped.
    time_offset_s:
        Time of the time column's value 0, s (``t = time_offset_s + value * time_scale_s``).
    time_scale_s:
        Seconds per unit of the time column; ``None``: ``time_unit`` of the options.
    rename:
        Header names read as other names (Keysight's channel ``1`` as ``CH1``: a number
        would be a constant voltage in ``--voltage``).
    """

    header_line: int = 0
    units_row: bool = False
    time_offset_s: float = 0.0
    time_scale_s: float | None = None
    rename: tuple[tuple[str, str], ...] = ()

    def column(self, header: str) -> str:
        """The name a header cell is read by (stripped of spaces, then renamed)."""
        name = header.strip()
        return dict(self.rename).get(name, name)

    def skipped_lines(self) -> list[int]:
        """The lines (from 0) pandas skips: those before the header, and the units row."""
        return [*range(self.header_line), *([self.header_line + 1] if self.units_row else [])]

    @property
    def first_data_line(self) -> int:
        """Line number (from 1) of the first sample."""
        return self.header_line + 2 + self.units_row


class TriggerTrack(Protocol):
    """A trigger recorded apart from the samples (:class:`CsvCapture`'s ``trigger_track``)."""

    name: str  # what messages call it

    def levels(self, t: npt.NDArray[np.float64]
               ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_] | None]:
        """The trigger's level (0 or 1) at the increasing times ``t`` (s; each call later
        than the last), and the samples at which it is unknown (``None``: none)."""
        ...


def gaps_from_indices(indices: npt.NDArray[np.int64], expected: int
                      ) -> npt.NDArray[np.int64]:
    """:attr:`Chunk.gaps` rows for samples at absolute ``indices``.

    ``expected`` is the index the first sample would have if nothing were lost (the previous
    chunk's ``end_index``, 0 for the first chunk); the chunk's ``start_index`` is ``expected``.
    """
    prev = np.concatenate(([expected - 1], indices[:-1]))
    jump = indices - prev - 1
    pos = np.flatnonzero(jump)
    if not len(pos):
        return NO_GAPS
    return np.stack([pos, jump[pos]], axis=1).astype(np.int64)


class CsvCapture:
    """A CSV capture file; opening checks the header, :meth:`chunks` streams the samples.

    Parameters
    ----------
    path:
        The CSV file.
    options:
        Column names and units, constant voltage, current scaling, chunk size.
    digital_text:
        The trigger column holds digital channels as text, one character per channel, as
        the Power Profiler app writes them: the trigger is character ``options.trigger_bit``
        (default 0).
    layout:
        Where the header and samples are and how time is given (default: the rig's layout).
    trigger_track:
        The trigger is in another file (a Saleae Logic 2 digital export): its level at each
        sample's time stamp, from ``trigger_track.levels(t)``; the file needs no trigger
        column.
    """

    trigger_bit = 0  # the trigger column arrives on logic bit D0

    def __init__(self, path: str | Path, options: CaptureOptions | None = None, *,
                 digital_text: bool = False, layout: CsvLayout | None = None,
                 trigger_track: TriggerTrack | None = None) -> None:
        self.path = Path(path)
        self.source = str(path)
        self.options = options or CaptureOptions()
        self.digital_text = digital_text
        self.trigger_track = trigger_track
        self._scale = (self.options.amperes_per_volt(self.source)
                       * CURRENT_UNITS[self.options.current_unit or "A"])
        self.layout = layout or CsvLayout()
        self._seconds = (self.layout.time_scale_s if self.layout.time_scale_s is not None
                         else TIME_UNITS[self.options.time_unit or "s"])
        self.time_column = self.options.time or TIME
        try:
            with self.path.open(newline="", encoding=ENCODING) as f:
                lines = itertools.islice(f, self.layout.header_line, None)
                header = next(csv.reader(lines), [])
        except (OSError, UnicodeDecodeError) as exc:
            raise CaptureError(self.source, f"cannot read the CSV header: {exc}") from exc
        self.columns = [self.layout.column(name) for name in header]
        self._raw_names = dict(zip(self.columns, header, strict=True))
        voltage = self.options.voltage
        self.voltage_column = VOLTAGE if voltage is None else voltage
        self.voltage_const: float | None = None
        if isinstance(self.voltage_column, float):
            self.voltage_const, self.voltage_column = self.voltage_column, None
        self.trigger_column = (trigger_track.name if trigger_track is not None
                               else self._column(self.options.trigger or TRIGGER, "trigger"))
        self.trigger_threshold = self.options.analog_trigger(self.source, self.trigger_column,
                                                             LOGIC_LEVEL)
        self.current_column = self._column(self.options.current or CURRENT, "current")
        if self.voltage_column is not None:
            self._column(self.voltage_column, "voltage",
                         hint="; or give a constant supply with --voltage VOLTS")
        self._column(self.time_column, "time", hint="; name it with --time-column")

    def _column(self, name: str, role: str, hint: str = "") -> str:
        if name not in self.columns:
            raise ChannelError(self.source, f"no {role} column '{name}'; the columns are "
                                            f"{', '.join(self.columns) or '(none)'}{hint}")
        return name

    def chunks(self) -> Iterator[Chunk]:
        """Yield the samples in chunks of ``options.chunk_samples`` rows (at most
        :data:`MAX_CHUNK_ROWS`)."""
        numeric = [self.time_column, self.current_column]
        if self.voltage_column is not None:
            numeric.append(self.voltage_column)
        wanted = numeric if self.trigger_track is not None else [*numeric, self.trigger_column]
        text = {self._raw_names[self.trigger_column]: str} if self.digital_text else None
        grid: tuple[float, float] | None = None  # (t0, period)
        expected = 0
        row0 = 0
        schmitt = Schmitt(self.trigger_threshold)
        try:  # the parser decodes ahead when it opens: its errors are the read's
            reader = pd.read_csv(self.path, usecols=lambda c: self.layout.column(c) in wanted,
                                 chunksize=min(self.options.chunk_samples, MAX_CHUNK_ROWS),
                                 engine="c", skipinitialspace=True, dtype=text,
                                 encoding=ENCODING, skiprows=self.layout.skipped_lines())
            for frame in reader:
                if frame.empty:
                    continue
                frame.columns = [self.layout.column(c) for c in frame.columns]
                cols = {name: self._numeric(frame[name], name, row0) for name in numeric}
                t = self.layout.time_offset_s + cols[self.time_column] * self._seconds
                if (k := LIMITS["time_s"].first_outside(t)) is not None:
                    raise CaptureError(self.source, f"line {self._line(row0 + k)}: column "
                                                    f"'{self.time_column}': "
                                                    f"{LIMITS['time_s'].problem(t[k])}")
                if grid is None:
                    grid = self._grid(t, row0)
                indices = self._indices(t, grid, row0, expected)
                voltage = (self.voltage_const if self.voltage_column is None
                           else cols[self.voltage_column])
                trigger, corrupt = (self.trigger_track.levels(t) if self.trigger_track
                                    else self._trigger(frame[self.trigger_column], row0))
                yield Chunk(expected, grid[1], cols[self.current_column] * self._scale,
                            voltage, schmitt(trigger), None, gaps_from_indices(indices, expected),
                            corrupt=corrupt)
                expected = int(indices[-1]) + 1
                row0 += len(frame)
        except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
            raise CaptureError(self.source, f"malformed CSV after line "
                                            f"{self._line(row0) - 1}: "
                                            f"{str(exc).strip()}") from exc
        if grid is None:
            raise CaptureError(self.source, "no samples after the header")

    def _line(self, row: int) -> int:
        """Line number (from 1) of sample row ``row`` (from 0)."""
        return self.layout.first_data_line + row

    def _time_value(self, t: float) -> float:
        """The time column's value for time ``t`` s (as the file writes it)."""
        return (t - self.layout.time_offset_s) / self._seconds

    def _numeric(self, column: pd.Series, name: str, row0: int) -> npt.NDArray[np.float64]:
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            i = int(bad[0])
            raise CaptureError(self.source, f"line {self._line(row0 + i)}: column '{name}' has "
                                            f"'{column.iloc[i]}', not a finite number")
        return values

    def _trigger(self, column: pd.Series, row0: int
                 ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_] | None]:
        """The trigger column's values as levels for the Schmitt trigger, and the samples
        whose digital state is unknown (``None``: all known)."""
        bit = self.options.trigger_bit
        if self.digital_text:
            return self._digital_text(column, bit or 0, row0)
        values = self._numeric(column, self.trigger_column, row0)
        if bit is not None:
            ints = values.astype(np.int64)
            bad = np.flatnonzero((ints != values) | (ints < 0))
            if len(bad):
                i = int(bad[0])
                raise CaptureError(self.source, f"line {self._line(row0 + i)}: trigger column "
                                                f"'{self.trigger_column}' has "
                                                f"'{column.iloc[i]}', not a whole number >= 0 "
                                                "of packed channel bits")
            return ((ints >> bit) & 1).astype(np.float64), None
        if self.options.trigger_level_v is None:
            self._check_logic(values, row0)
        return values, None

    def _digital_text(self, column: pd.Series, bit: int, row0: int
                      ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_] | None]:
        """Character ``bit`` of each value (``01X-``, :data:`_DIGITAL_TEXT`), vectorised:
        the values as fixed-width bytes, one row each."""
        try:
            raw = column.to_numpy(dtype=f"S{bit + 2}")
        except UnicodeEncodeError:
            raw = np.zeros(len(column), dtype=f"S{bit + 2}")  # reported below, by line
        chars = raw.view(np.uint8).reshape(len(raw), bit + 2)[:, bit]
        level = np.zeros(len(chars))
        unknown = np.zeros(len(chars), dtype=bool)
        seen = np.zeros(len(chars), dtype=bool)
        for code, (value, corrupt) in _DIGITAL_TEXT.items():
            match = chars == code
            level[match] = value
            unknown |= match & corrupt
            seen |= match
        bad = np.flatnonzero(~seen)
        if len(bad):
            i = int(bad[0])
            raise CaptureError(self.source, f"line {self._line(row0 + i)}: digital column "
                                            f"'{self.trigger_column}' has {column.iloc[i]!r}: "
                                            f"no channel {bit} of the form 0, 1, X or -")
        return level, (unknown if unknown.any() else None)

    def _check_logic(self, trigger: npt.NDArray[np.float64], row0: int) -> None:
        """Without a level, the trigger column must be 0/1 (an analog one needs a level)."""
        bad = np.flatnonzero((trigger != 0) & (trigger != 1))
        if len(bad):
            i = int(bad[0])
            raise CaptureError(self.source, f"line {self._line(row0 + i)}: trigger column "
                                            f"'{self.trigger_column}' has {float(trigger[i])!r}, "
                                            "not 0 or 1: for an analog trigger give its threshold "
                                            "with --trigger-level VOLTS (e.g. 1.65 for 3.3 V logic)")

    def _grid(self, t: npt.NDArray[np.float64], row0: int) -> tuple[float, float]:
        """(t0, period) from the first chunk: the median step, then refined over the whole
        chunk once every stamp is known to sit on the grid, so long files do not drift."""
        if len(t) < 2:
            raise CaptureError(self.source, "need at least two samples to know the sample period")
        period = float(np.median(np.diff(t)))
        if not period > 0:
            raise CaptureError(self.source, f"column '{self.time_column}' does not increase")
        last = int(self._indices(t, (float(t[0]), period), row0, 0)[-1])
        if last > 0:
            period = float((t[-1] - t[0]) / last)
        log.info("%s: sample period %.9g s", self.source, period)
        return float(t[0]), period

    def _indices(self, t: npt.NDArray[np.float64], grid: tuple[float, float], row0: int,
                 expected: int) -> npt.NDArray[np.int64]:
        t0, period = grid
        pos = (t - t0) / period
        # Held inside int64 (a stamp that far off the grid is refused below as off it).
        indices = np.rint(np.clip(pos, -_FAR, _FAR)).astype(np.int64)
        off = np.abs(pos - indices) > GRID_TOLERANCE
        back = np.diff(indices, prepend=expected - 1) < 1
        bad = np.flatnonzero(off | back)
        if len(bad):
            i = int(bad[0])
            why = f"is off the {period:.6g} s sample grid" if off[i] else "goes back or repeats"
            raise CaptureError(self.source, f"line {self._line(row0 + i)}: {self.time_column} = "
                                            f"{self._time_value(float(t[i]))!r} {why}")
        return indices


def open_csv(path: Path, options: CaptureOptions) -> CsvCapture:
    """Reader entry of :func:`energyrig.instruments.files.file_kinds`."""
    return CsvCapture(path, options)
