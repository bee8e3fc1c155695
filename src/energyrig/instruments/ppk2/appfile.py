"""The nRF Connect Power Profiler app's files: its CSV export and its saved sessions (``.ppk2``).

Both layouts are read as the app writes them (NordicSemiconductor/pc-nrfconnect-ppk,
docs/formats.md names the files and the commit):

- the **CSV export** (``exportChartAction.ts``) is read by the generic CSV reader
  (:class:`~energyrig.instruments.csvfile.CsvCapture`) with the app's column names and
  units: ``Timestamp(ms)``, ``Current(uA)``, and the digital channels as text, packed in
  ``D0-D7`` or one column each;
- a **saved session** (``saveFileHandler.ts``) is a zip of ``session.raw``,
  ``metadata.json`` and ``minimap.raw``; :class:`PpkSessionCapture` streams ``session.raw``
  out of the zip in chunks, never holding it whole.

Neither file records the supply voltage: the app measures current only, so the energy needs
``--voltage VOLTS``. The trigger is any digital channel, D0..D7 (``--trigger D3`` or
``--trigger-bit 3``; default D0).
"""
from __future__ import annotations

import codecs
import json
import logging
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.csvfile import CsvCapture, gaps_from_indices
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.ppk2.appformat import (
    CSV_CURRENT,
    CSV_LAYOUTS,
    CSV_PACKED,
    CSV_PACKED_D7_FIRST,
    CSV_TIME,
    FORMAT_VERSION,
    SESSION_LAYOUTS,
    SESSION_METADATA,
    SESSION_RAW,
)

log = logging.getLogger(__name__)

#: One sample of session.raw: current in µA (float32, little-endian), then the 8 digital
#: channels as bit pairs (uint16, big-endian: ``DataView.setUint16`` without a flag).
FRAME = np.dtype([("current_ua", "<f4"), ("bits", ">u2")])
#: Bit-pair state of a channel (``bitConversion.ts``): 1 always low, 2 always high,
#: 3 both within an averaged sample (read as high), 0 none (read as low, marked corrupt).
_NO_STATE = 0
_LOW = 1
_AMPERES_PER_UA = 1e-6
#: ``metadata.createdBy`` of trembel/x_to_ppk2_converter's tools (csv2ppk2-converter.py,
#: dlog2ppk2-converter.py, website/lib/file-processor.tsx): they write every sample's
#: digital word as 0xAAAA, "no digital data" (all eight channels high).
CONVERTERS = frozenset(("csv2ppk2-converter.py", "dlog2ppk2-converter.py", "PPK2 Web Converter"))
_NO_DIGITAL = 0xAAAA


def _supply(options: CaptureOptions, source: str, what: str) -> float:
    """The constant supply voltage the user gave (the app records none), V."""
    if isinstance(options.voltage, float):
        return options.voltage
    if options.voltage is not None:
        raise ChannelError(source, f"no channel {options.voltage!r}: a Power Profiler {what} "
                                   "has no voltage channel; give the supply in volts "
                                   "(e.g. --voltage 3.3)")
    raise CaptureError(source, f"a Power Profiler {what} records current only: give the "
                               "supply voltage with --voltage VOLTS (e.g. --voltage 3.3)")


def open_app_csv(path: Path, options: CaptureOptions) -> CsvCapture:
    """The app's CSV export as a :class:`~energyrig.instruments.csvfile.CsvCapture`.

    The trigger is channel ``options.logic_channel`` (D0..D7), from the packed ``D0-D7``
    column (``Bits`` or ``LAP0-LAP7`` in the app's builds of April 2020) or else its own
    ``Dn`` column; the column names and units are the app's unless the options name others.
    The text is read D0 first, as the app writes it since v3.1.3, except under the older
    builds' headers (D7 first); ``options.digital_layout`` (``d7-first``) says so for an
    export of v3.0.0 to v3.1.2, whose header is the same as today's.

    Raises
    ------
    CaptureError
        No supply voltage given.
    ChannelError
        The export holds no digital channels, or not the one asked for.
    """
    source = str(path)
    voltage = _supply(options, source, "CSV export")
    bit = options.logic_channel(source)
    with path.open("rb") as f:
        names = f.readline().removeprefix(codecs.BOM_UTF8).decode(
            "ascii", errors="replace").strip().split(",")
    d7_first = [name for name in CSV_PACKED_D7_FIRST if name in names]
    layout = (options.layout_for(source, CSV_LAYOUTS, "Power Profiler CSV export")
              or ("d7-first" if d7_first and CSV_PACKED not in names else "d0-first"))
    position = 7 - bit if layout == "d7-first" else bit  # of channel D<bit> in the text
    if CSV_PACKED in names or d7_first:
        column, char = (CSV_PACKED if CSV_PACKED in names else d7_first[0]), position
    elif f"D{position}" in names:
        column, char = f"D{position}", 0
    else:
        raise ChannelError(source, f"no digital channel D{bit} in the export (columns: "
                                   f"{', '.join(names)}): export again with the digital "
                                   "channels ticked")
    mapped = replace(options, time=options.time or CSV_TIME, time_unit=options.time_unit or "ms",
                     current=options.current or CSV_CURRENT,
                     current_unit=options.current_unit or "uA", voltage=voltage,
                     trigger=column, trigger_bit=char)
    return CsvCapture(path, mapped, digital_text=True)


class PpkSessionCapture:
    """A saved session (``.ppk2``) as a :class:`~energyrig.capture.Capture`.

    ``session.raw`` is decompressed as it is read, ``chunk_samples`` samples at a time.
    Samples the app stored as NaN (no measurement) become gaps, as its CSV export leaves
    them out. The logic channels D0..D7 become :attr:`Chunk.logic`; samples whose trigger
    channel has no state are marked corrupt.

    The digital word is read in ``layout``: ``"pairs"``, the app's (a pair of bits per
    channel, uint16 big-endian), or ``"mask"``, one bit per channel D0..D7 in a uint16
    little-endian, as m-mcgowan/ppk2-python's ``save_ppk2`` writes it (``struct`` ``"<fH"``,
    ``Sample.logic``). ``None`` tells it from the first chunk: a word whose low byte, as the
    app stores it, is 0 in every sample (the channels D0..D3 all without a state, which the
    app never writes: ``convertBits16`` gives each channel 1 or 2) is a bit mask.

    Parameters
    ----------
    path:
        The ``.ppk2`` file.
    voltage_v:
        Supply voltage, V (the app records none).
    trigger_bit:
        Logic channel of the trigger, 0..7.
    chunk_samples:
        Samples per chunk (memory: about 40 bytes per sample of one chunk).
    layout:
        ``"pairs"``, ``"mask"`` or ``None`` (told from the file).

    Raises
    ------
    CaptureError
        Not a zip, a member missing, or metadata.json without a sample rate; (from
        :meth:`chunks`) a converter's file that holds no digital channels.
    """

    def __init__(self, path: str | Path, voltage_v: float, trigger_bit: int = 0,
                 chunk_samples: int = 1 << 20, layout: str | None = None) -> None:
        self.path = Path(path)
        self.source = str(path)
        self.voltage_v = voltage_v
        self.trigger_bit = trigger_bit
        self.chunk_samples = chunk_samples
        self.layout = layout
        try:
            with zipfile.ZipFile(self.path) as zf:
                names = set(zf.namelist())
                for member in (SESSION_METADATA, SESSION_RAW):
                    if member not in names:
                        raise CaptureError(self.source, f"not a Power Profiler session: no "
                                                        f"{member} in the zip")
                metadata = json.loads(zf.read(SESSION_METADATA))
                self.raw_bytes = zf.getinfo(SESSION_RAW).file_size
        except (OSError, EOFError, zipfile.BadZipFile, zlib.error, ValueError) as exc:
            raise CaptureError(self.source, f"cannot read the Power Profiler session: {exc}"
                               ) from exc
        self.sample_rate_hz = self._rate(metadata)
        inner = metadata.get("metadata") if isinstance(metadata, dict) else None
        self.created_by = inner.get("createdBy") if isinstance(inner, dict) else None
        if self.raw_bytes % FRAME.itemsize:
            log.warning("%s: %s ends inside a sample (%d bytes); the last is left out",
                        self.source, SESSION_RAW, self.raw_bytes)

    def _rate(self, metadata: object) -> float:
        version = metadata.get("formatVersion") if isinstance(metadata, dict) else None
        inner = metadata.get("metadata") if isinstance(metadata, dict) else None
        rate = inner.get("samplesPerSecond") if isinstance(inner, dict) else None
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not rate > 0:
            raise CaptureError(self.source, f"{SESSION_METADATA}: no metadata.samplesPerSecond "
                                            f"> 0 (found {rate!r})")
        if version != FORMAT_VERSION:
            log.warning("%s: session formatVersion %r; this reader follows version %d",
                        self.source, version, FORMAT_VERSION)
        return float(rate)

    def _tell_layout(self, bits: npt.NDArray[np.uint16]) -> str:
        """The layout of the digital words of the first chunk (big-endian as read).

        Raises
        ------
        CaptureError
            The file is a converter's without digital channels.
        """
        if self.created_by in CONVERTERS and (bits == _NO_DIGITAL).all():
            raise CaptureError(self.source, f"written by {self.created_by} "
                               f"({SESSION_METADATA} createdBy), which stores no digital "
                               "channels (every sample 0xAAAA): this file holds no trigger; "
                               "analyze the recording it was converted from instead")
        if ((bits & 0xFF) == 0).all():
            log.info("%s: digital channels as a D0..D7 bit mask (not the app's bit pairs)",
                     self.source)
            return "mask"
        return "pairs"

    def _logic(self, bits: npt.NDArray[np.uint16]
               ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
        """:attr:`Chunk.logic` of the digital words (big-endian as read) in ``self.layout``,
        and the samples whose trigger channel has no state (a bit mask: a word above 255)."""
        if self.layout == "mask":
            word = bits.byteswap()  # the little-endian value
            return (word & 0xFF).astype(np.uint8), word > 0xFF
        pairs = [(bits >> (2 * k)) & 3 for k in range(8)]  # one array per channel
        logic = np.zeros(len(bits), dtype=np.uint8)
        for k, state in enumerate(pairs):
            logic |= ((state > _LOW).astype(np.uint8) << k)
        return logic, pairs[self.trigger_bit] == _NO_STATE

    def chunks(self) -> Iterator[Chunk]:
        """Yield the samples in chunks of ``chunk_samples``."""
        period = 1.0 / self.sample_rate_hz
        block = self.chunk_samples * FRAME.itemsize
        first = 0  # absolute index of the next sample in the file
        expected = 0  # index the next received sample would have if none were left out
        try:
            with zipfile.ZipFile(self.path) as zf, zf.open(SESSION_RAW) as raw:
                while data := raw.read(block):
                    n = len(data) // FRAME.itemsize
                    if not n:
                        break
                    frames = np.frombuffer(data, FRAME, count=n)
                    current = frames["current_ua"].astype(np.float64)
                    keep = np.flatnonzero(np.isfinite(current))
                    first += n
                    if not len(keep):
                        continue
                    indices = keep + (first - n)
                    bits = frames["bits"][keep]
                    if self.layout is None:
                        self.layout = self._tell_layout(bits)
                    logic, corrupt = self._logic(bits)
                    yield Chunk(expected, period, current[keep] * _AMPERES_PER_UA, self.voltage_v,
                                logic, gaps=gaps_from_indices(indices, expected),
                                corrupt=corrupt if corrupt.any() else None)
                    expected = int(indices[-1]) + 1
        except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise CaptureError(self.source, f"{SESSION_RAW} is damaged after sample "
                               f"{expected}: {exc}") from exc
        if not expected:
            raise CaptureError(self.source, f"no samples in {SESSION_RAW}")


def open_app_session(path: Path, options: CaptureOptions) -> PpkSessionCapture:
    """Reader of :func:`energyrig.instruments.files.file_kinds` for the app's sessions.

    Raises
    ------
    CaptureError
        No supply voltage given, or the file is not a session.
    ChannelError
        A current or voltage channel named (a session has one of each fixed), or a trigger
        that is not D0..D7.
    """
    source = str(path)
    if options.current is not None:
        raise ChannelError(source, f"no channel {options.current!r}: a Power Profiler session "
                                   "has one current channel; leave --current out")
    voltage = _supply(options, source, "session")
    return PpkSessionCapture(path, voltage, options.logic_channel(source),
                             options.chunk_samples,
                             options.layout_for(source, SESSION_LAYOUTS,
                                                "Power Profiler session"))
