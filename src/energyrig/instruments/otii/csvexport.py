"""Reader of Otii's CSV export: one file per channel, read together as one capture.

Otii 3 exports each channel to its own file named after the channel and its device
(``Main current - Ace.csv``), with the header ``"Timestamp","Value"`` and one row per sample:
the time in seconds (``%.6f``) and the value in SI units (``%.9g``) — the layout ``otiio``
0.1.1 (github.com/andyshinn/otiio, ``export.py``, ``CSV_HEADER``) writes and states to be
byte-identical to Otii's for stored channels.

Given any one of a recording's files, the reader takes from the same folder and device the
current (``Main current``, or ``--current LABEL``), the voltage (``Main voltage``, ``--voltage
LABEL`` or a constant) and the trigger (``--trigger LABEL``, required: an analog channel such
as ``ADC voltage`` with ``--trigger-level``, or a channel of 0/1 values). The files must
hold the same time stamps row by row, on a uniform grid (within a quarter period); a file
that does not (another selection, another rate, a channel exported as transitions) is refused
naming it. The files are read ``chunk_samples`` rows at a time, in step. The UART log's
marks (``--uart-start``/``--uart-stop``) are read from the saved project only: no public source
states how Otii exports a log channel.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from energyrig.capture import Chunk
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.csvfile import ENCODING, GRID_TOLERANCE, LOGIC_LEVEL, MAX_CHUNK_ROWS
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.otii.family import is_otii_csv
from energyrig.instruments.threshold import AnalogTrigger, Schmitt

log = logging.getLogger(__name__)

CURRENT, VOLTAGE = "Main current", "Main voltage"


class OtiiCsvCapture:
    """A recording exported by Otii as CSV files, as a :class:`~energyrig.capture.Capture`.

    Raises
    ------
    CaptureError
        A file name not ``LABEL - DEVICE.csv``, files not on one time base.
    ChannelError
        A channel's file is missing (naming the files there), or no trigger was named.
    """

    trigger_bit = 0

    def __init__(self, path: str | Path, options: CaptureOptions | None = None) -> None:
        self.path = Path(path)
        self.source = str(path)
        self.options = options = options or CaptureOptions()
        label, sep, self.device = self.path.stem.rpartition(" - ")
        if not sep or not label:
            raise CaptureError(self.source, "an Otii CSV export is named 'CHANNEL - DEVICE.csv' "
                                            "(e.g. 'Main current - Ace.csv'); rename it so")
        if options.uart_start is not None:
            raise ChannelError(self.source, "trigger: the UART log is read from the saved "
                                            "project, not from a CSV export (no public source "
                                            "states how Otii exports a log): analyse the "
                                            "project's .otii3 with --uart-start/--uart-stop")
        self.current = self._file(options.current or CURRENT, "current")
        voltage = options.voltage
        self.voltage_constant_v = voltage if isinstance(voltage, float) else None
        self.voltage = (None if self.voltage_constant_v is not None
                        else self._file(str(voltage or VOLTAGE), "voltage"))
        if options.trigger is None:
            raise ChannelError(self.source, "trigger: name the channel that carries it, e.g. "
                                            "--trigger 'ADC voltage' --trigger-level 1.65 "
                                            f"(channels exported beside it: {self._labels()})")
        self.trigger = self._file(options.trigger, "trigger")
        self._analog = (AnalogTrigger(options.trigger_level_v, options.trigger_hysteresis_v)
                        if options.trigger_level_v is not None else None)
        self._amperes_per_unit = options.amperes_per_volt(self.source)

    def _labels(self) -> str:
        """The channels of this device exported in the file's folder, by label."""
        suffix = f" - {self.device}.csv"
        return ", ".join(sorted(p.name[:-len(suffix)]
                                for p in self.path.parent.glob(f"*{suffix}"))) or "none"

    def _file(self, label: str, role: str) -> Path:
        path = self.path.with_name(f"{label} - {self.device}.csv")
        if not path.is_file():
            have = sorted(p.name for p in self.path.parent.glob(f"* - {self.device}.csv"))
            raise ChannelError(self.source, f"{role}: no file '{path.name}' beside it "
                                            f"(there: {', '.join(have) or 'none'})")
        with path.open("rb") as f:
            if not is_otii_csv(f.read(64)):
                raise CaptureError(str(path), 'not an Otii CSV export: its first line is not '
                                              '"Timestamp","Value"')
        return path

    def _reader(self, path: Path) -> Iterator[pd.DataFrame]:
        rows = min(self.options.chunk_samples, MAX_CHUNK_ROWS)
        return iter(pd.read_csv(path, encoding=ENCODING, dtype="float64", chunksize=rows,
                                engine="c"))

    def chunks(self) -> Iterator[Chunk]:
        """Yield the recording in chunks, the files read in step."""
        paths = [p for p in (self.current, self.voltage, self.trigger) if p is not None]
        readers = [self._reader(p) for p in paths]
        schmitt = Schmitt(self._analog) if self._analog is not None else None
        grid: tuple[float, float] | None = None
        start = 0
        try:
            for frames in zip(*readers, strict=True):
                t = frames[0]["Timestamp"].to_numpy()
                for path, frame in zip(paths[1:], frames[1:], strict=True):
                    if not np.array_equal(frame["Timestamp"].to_numpy(), t):
                        raise CaptureError(str(path), f"not on the time base of {paths[0].name} "
                                                      f"near row {start + 2}: export every "
                                                      "channel of one recording together")
                grid = grid or _grid(t, self.source)
                expected = grid[0] + (start + np.arange(len(t))) * grid[1]
                if np.any(np.abs(t - expected) > GRID_TOLERANCE * grid[1]):
                    raise CaptureError(self.source, f"time stamps off the {grid[1]:g} s grid "
                                                    f"near row {start + 2} (lost samples?)")
                values = [f["Value"].to_numpy() for f in frames]
                yield Chunk(start, grid[1], values[0] * self._amperes_per_unit,
                            values[1] if self.voltage is not None
                            else float(self.voltage_constant_v),  # type: ignore[arg-type]
                            logic=self._logic(values[-1], schmitt, start))
                start += len(t)
        except ValueError as exc:  # strict zip: a file ended first; or a cell not a number
            raise CaptureError(self.source, f"the channels' files differ near row "
                                            f"{start + 2}: {exc}") from exc

    def _logic(self, values: npt.NDArray[np.float64], schmitt: Schmitt | None,
               row0: int) -> npt.NDArray[np.uint8]:
        if schmitt is not None:
            return schmitt(values)
        if not np.all((values == 0) | (values == 1)):
            raise ChannelError(self.source, f"trigger: values other than 0 and 1 near row "
                                            f"{row0 + 2}: give --trigger-level for an analog "
                                            "channel")
        return (values >= LOGIC_LEVEL).astype(np.uint8)


def _grid(t: npt.NDArray[np.float64], source: str) -> tuple[float, float]:
    """``(first time, period)`` of the first chunk's time stamps, s."""
    if len(t) < 2 or not t[-1] > t[0]:
        raise CaptureError(source, "fewer than two samples, or time stamps that do not rise")
    return float(t[0]), float(np.median(np.diff(t)))


def open_otii_csv(path: str | Path, options: CaptureOptions | None = None) -> OtiiCsvCapture:
    """Open an Otii CSV export (see :class:`OtiiCsvCapture`); a reader of
    :func:`energyrig.instruments.files.file_kinds`."""
    return OtiiCsvCapture(path, options)
