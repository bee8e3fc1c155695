"""Saleae Logic 2's raw-data CSV export: current (and voltage) from ``analog.csv``, the
trigger from ``digital.csv``, aligned by their time stamps.

The two files come from one capture and share its time base (``Time [s]``, s from the
capture's start), at different rates: ``analog.csv`` has one row per analog sample (after
the export's downsampling), ``digital.csv`` one row per change of any digital channel
(:mod:`energyrig.instruments.saleaeformat`, docs/formats.md). The analog file is read by
:class:`~energyrig.instruments.csvfile.CsvCapture`, the digital channel by
:class:`DigitalTrack`, both in chunks: the level of the trigger at an analog sample is that
of the digital file's last row at or before the sample's time stamp.

Analog channels hold volts: the current is one of them with ``--shunt-ohms`` or
``--current-scale``; the supply a channel or a constant (``--voltage``).
"""
from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from energyrig.capture import Chunk
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.csvfile import ENCODING, MAX_CHUNK_ROWS, CsvCapture
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.saleaeformat import (
    ANALOG_NAME,
    DIGITAL_NAME,
    TIME,
    TRIGGER_TIME,
    is_digital,
)

_UNKNOWN = -1  # the state of an X cell, or before the digital file's first row
_STATES = {"0": 0, "1": 1, "X": _UNKNOWN}
_HEAD_BYTES = 4096


def _names(path: Path) -> list[str]:
    """The header of ``path``, its names stripped.

    Raises
    ------
    CaptureError
        The file cannot be read.
    """
    try:
        with path.open(newline="", encoding=ENCODING) as f:
            return [name.strip() for name in next(csv.reader(f), [])]
    except (OSError, UnicodeDecodeError) as exc:
        raise CaptureError(path, f"cannot read: {exc}") from exc


class DigitalTrack:
    """One channel of a Logic 2 digital export as a level at any time, read in chunks.

    Parameters
    ----------
    path:
        The digital export (``digital.csv``).
    channel:
        Its column holding the trigger; ``None``: the one channel of a one-channel export.
    chunk_rows:
        Rows read at a time.

    Raises
    ------
    CaptureError
        Not a Logic 2 digital export.
    ChannelError
        No such channel, or none named and the export has several.
    """

    def __init__(self, path: Path, channel: str | None, chunk_rows: int = MAX_CHUNK_ROWS
                 ) -> None:
        self.path = path
        self.chunk_rows = chunk_rows
        try:
            with path.open("rb") as f:
                head = f.read(_HEAD_BYTES)
        except OSError as exc:
            raise CaptureError(path, f"cannot read the digital export: "
                                     f"{exc.strerror or exc}") from exc
        if not is_digital(head):
            raise CaptureError(path, "not a Saleae Logic 2 digital export: expected the header "
                                     f"'{TIME},<channel>,...' and rows of 0, 1 or X per "
                                     "channel (Export Raw Data, CSV, without ISO 8601 times)")
        names = _names(path)
        self.columns = names[1:]
        if channel is None and len(self.columns) == 1:
            channel = self.columns[0]
        if channel not in self.columns:
            what = f"no digital channel {channel!r}" if channel else "several digital channels"
            raise ChannelError(path, f"{what}: name the trigger with --trigger; the digital "
                                     f"export's channels are {', '.join(self.columns)}")
        self.name = channel
        self._rows: Iterator[pd.DataFrame] | None = None
        self._times = np.empty(0)
        self._states = np.empty(0, dtype=np.int8)
        self._line = 2  # file line of the next row read
        self._done = False

    def levels(self, t: npt.NDArray[np.float64]
               ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_] | None]:
        """The channel's level at the increasing times ``t``, s, and the samples where it is
        unknown (an X, or before the export's first row: read as low)."""
        while not self._done and (not len(self._times) or self._times[-1] <= t[-1]):
            self._read()
        at = np.searchsorted(self._times, t, side="right") - 1
        states = np.where(at >= 0, self._states[np.maximum(at, 0)], _UNKNOWN)
        last = max(int(at[-1]), 0)  # the row in force at t[-1] stays for the next call
        self._times, self._states = self._times[last:], self._states[last:]
        unknown = states == _UNKNOWN
        return (states == 1).astype(np.float64), (unknown if unknown.any() else None)

    def _read(self) -> None:
        """Append the next chunk of rows (times checked increasing, cells 0, 1 or X)."""
        try:
            if self._rows is None:
                wanted = (TIME, self.name)
                self._rows = pd.read_csv(self.path, usecols=lambda c: c.strip() in wanted,
                                         dtype=str, chunksize=self.chunk_rows, engine="c",
                                         encoding=ENCODING, keep_default_na=False)
            frame = next(self._rows)
        except StopIteration:
            self._done = True
            return
        except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
            raise CaptureError(self.path, f"malformed CSV after line {self._line}: "
                                          f"{str(exc).strip()}") from exc
        frame.columns = [c.strip() for c in frame.columns]
        times = pd.to_numeric(frame[TIME], errors="coerce").to_numpy(dtype=np.float64)
        cells = frame[self.name].str.strip()
        states = cells.map(_STATES)
        previous = self._times[-1] if len(self._times) else -np.inf
        steps = np.diff(times, prepend=previous)
        bad = np.flatnonzero(~np.isfinite(times) | ~(steps > 0) | states.isna().to_numpy())
        if len(bad):
            i = int(bad[0])
            what = (f"{TIME} = {frame[TIME].iloc[i]!r} is not a time after the row before"
                    if not (np.isfinite(times[i]) and steps[i] > 0)
                    else f"channel '{self.name}' has {cells.iloc[i]!r}, not 0, 1 or X")
            raise CaptureError(self.path, f"line {self._line + i}: {what}")
        self._line += len(frame)
        self._times = np.concatenate([self._times, times])
        self._states = np.concatenate([self._states, states.to_numpy(dtype=np.int8)])


class SaleaeCapture:
    """A Logic 2 export, analog and digital, as a :class:`~energyrig.capture.Capture`.

    Parameters
    ----------
    analog:
        The analog export: its samples, on a regular grid.
    digital:
        The digital export: the trigger.
    options:
        ``current`` (default: the one analog channel), ``shunt_ohms`` or
        ``current_scale_a_per_v`` (required: the channels hold volts), ``voltage`` (a
        channel or a constant), ``trigger`` (a digital channel; default: the one there is).

    Raises
    ------
    CaptureError, ChannelError
        A file that is not the export expected, a channel it lacks, no current scale.
    """

    trigger_bit = 0  # the trigger arrives on logic bit D0

    def __init__(self, analog: Path, digital: Path, options: CaptureOptions) -> None:
        self.source = str(analog)
        if options.shunt_ohms is None and options.current_scale_a_per_v is None:
            raise CaptureError(analog, "a Saleae analog channel records volts: give the shunt "
                                       "the current is measured across (--shunt-ohms OHMS) or "
                                       "the probe's scale (--current-scale A_PER_V)")
        channels = [name for name in _names(analog) if name not in (TIME, TRIGGER_TIME)]
        current = options.current
        if current is None:
            if len(channels) != 1:
                raise ChannelError(analog, "name the current channel with --current; the "
                                           f"analog channels are {', '.join(channels)}")
            current = channels[0]
        self.track = DigitalTrack(digital, options.trigger,
                                  min(options.chunk_samples, MAX_CHUNK_ROWS))
        self.trigger_column = self.track.name
        self.columns = self.track.columns
        self._analog = CsvCapture(analog, replace(options, time=TIME, time_unit="s",
                                                  current=current, current_unit="A"),
                                  trigger_track=self.track)

    def chunks(self) -> Iterator[Chunk]:
        """The analog file's samples with the digital file's trigger, in chunks."""
        return self._analog.chunks()


def open_saleae(path: Path, options: CaptureOptions) -> SaleaeCapture:
    """Reader of the analog export: the digital export is ``options.digital``, else
    ``digital.csv`` beside it; ``path`` may be the export's folder (its ``analog.csv``).
    The digital export given alone is refused, naming the call that reads it.

    Raises
    ------
    CaptureError
        No digital export found, either file not what it should be, or the digital export
        given as the capture.
    """
    if path.is_dir():
        folder, path = path, path / ANALOG_NAME
        if not path.is_file():
            raise CaptureError(folder, f"a folder, not a capture file: expected a Saleae Logic 2 "
                                       f"export folder holding {ANALOG_NAME} and {DIGITAL_NAME}")
    with path.open("rb") as f:
        if is_digital(f.read(_HEAD_BYTES)):
            raise CaptureError(path, "a Saleae Logic 2 digital export holds the trigger but no "
                                     f"current: give the analog export with it: rig analyze "
                                     f"{path.with_name(ANALOG_NAME)} --digital {path} (or the "
                                     "export's folder)")
    digital = options.digital or path.with_name(DIGITAL_NAME)
    if not digital.is_file():
        raise CaptureError(path, f"a Saleae Logic 2 analog export holds no trigger: give the "
                                 f"digital export of the same capture with --digital FILE "
                                 f"(Logic 2 writes it as {DIGITAL_NAME} beside {ANALOG_NAME}; "
                                 f"not found: {digital})")
    return SaleaeCapture(path, digital, options)

