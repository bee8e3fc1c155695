"""Raw PPK2 stream files (``.ppk2raw``): the device's bytes, recorded as they came.

Before the rig read the Power Profiler app's saved sessions (also ``.ppk2``, a zip) these
files were named ``.ppk2``; such files are still read, recognised by their content.

Layout (the full definition is in ``docs/formats.md``)::

    <metadata text exactly as the device sent it, through the line "END\\n">
    energyrig-ppk2-raw 1 vdd_mv=3300 sample_rate_hz=100000\\n
    <4-byte little-endian sample words until the end of the file>

:class:`Ppk2StreamWriter` records a stream (the emulator and the live driver use it);
:class:`Ppk2RawCapture` reads one back as a :class:`~energyrig.capture.Capture` in bounded
memory, decoding with :class:`~energyrig.instruments.ppk2.decode.Ppk2Decoder`.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from energyrig.capture import LIMITS, Chunk
from energyrig.errors import CaptureError, ChannelError, InstrumentError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.ppk2.decode import (MAX_VDD_MV, SAMPLE_RATE_HZ, WORD_BYTES,
                                               decode_stream)
from energyrig.instruments.ppk2.metadata import (
    END_MARKER,
    MetadataAccumulator,
    Ppk2Calibration,
    format_metadata,
    parse_metadata,
)

log = logging.getLogger(__name__)

MAGIC = "energyrig-ppk2-raw"
VERSION = 1
#: The extension of raw stream files (``.ppk2`` before: the Power Profiler app's sessions
#: carry that one; old files are still read, by content).
SUFFIX = ".ppk2raw"
_HEAD_LIMIT = 4096  # metadata + header line must fit in the first 4 KiB (a PPK2 sends ~600 B)
_BLOCK_SAMPLES = 1 << 20


@dataclass(frozen=True)
class Ppk2StreamHeader:
    """Everything in a raw stream file before the sample words.

    Attributes
    ----------
    metadata_text:
        The device's metadata, through the ``END`` line.
    calibration:
        That metadata, parsed.
    vdd_mv:
        Supply voltage, mV (source-meter output, or the external supply in ampere mode).
    sample_rate_hz:
        Samples per second.
    data_offset:
        Byte offset of the first sample word.
    """

    metadata_text: str
    calibration: Ppk2Calibration
    vdd_mv: float
    sample_rate_hz: float
    data_offset: int


def header_line(vdd_mv: float, sample_rate_hz: float = SAMPLE_RATE_HZ) -> bytes:
    """The header line that follows the metadata (ends with ``\\n``)."""
    return f"{MAGIC} {VERSION} vdd_mv={vdd_mv:g} sample_rate_hz={sample_rate_hz:g}\n".encode("ascii")


def _parse_header_line(line: str, source: str) -> tuple[float, float]:
    parts = line.split(" ")
    if len(parts) < 2 or parts[0] != MAGIC:
        raise CaptureError(source, f"not a raw PPK2 stream: expected a '{MAGIC} 1 ...' line after "
                                   f"the metadata, found {line[:60]!r}")
    if parts[1] != str(VERSION):
        raise CaptureError(source, f"raw PPK2 stream version {parts[1]!r}; this rig reads version {VERSION}")
    fields: dict[str, float] = {}
    for item in parts[2:]:
        key, _, value = item.partition("=")
        try:
            fields[key] = float(value)
        except ValueError:
            raise CaptureError(source, f"header field {item!r} is not KEY=NUMBER") from None
    for key in ("vdd_mv", "sample_rate_hz"):
        if key not in fields:
            raise CaptureError(source, f"header line lacks {key}=")
        if not fields[key] > 0:
            raise CaptureError(source, f"header field {key}={fields[key]:g} must be positive")
    period = LIMITS["period_s"]
    if period.first_outside(1 / fields["sample_rate_hz"]) is not None:
        raise CaptureError(source, f"header field sample_rate_hz={fields['sample_rate_hz']:g}: "
                                   f"{period.problem(1 / fields['sample_rate_hz'])}")
    return fields["vdd_mv"], fields["sample_rate_hz"]


def read_header(fh: BinaryIO, source: str) -> Ppk2StreamHeader:
    """Read the metadata and header line from the start of ``fh``; leave it at the first word."""
    head = fh.read(_HEAD_LIMIT)
    acc = MetadataAccumulator(source, max_bytes=_HEAD_LIMIT)
    try:
        complete = acc.feed(head)
    except InstrumentError:
        complete = False
    if not complete:
        raise CaptureError(source, f"not a raw PPK2 stream: no '{END_MARKER}' line ending the "
                                   f"device metadata in the first {_HEAD_LIMIT // 1024} KiB")
    try:
        text = acc.text
        calibration = parse_metadata(text, source)
    except InstrumentError as exc:
        raise CaptureError(source, str(exc).removeprefix(f"{source}: ")) from None
    rest = acc.rest
    newline = rest.find(b"\n")
    if newline < 0:
        raise CaptureError(source, "not a raw PPK2 stream: the header line after the metadata is missing")
    line = rest[:newline].decode("ascii", errors="replace")
    vdd_mv, rate = _parse_header_line(line, source)
    offset = len(head) - len(rest) + newline + 1
    fh.seek(offset)
    return Ppk2StreamHeader(text, calibration, vdd_mv, rate, offset)


class Ppk2StreamWriter:
    """Record a raw PPK2 stream to a file (name it with :data:`SUFFIX`).

    Parameters
    ----------
    path:
        File to create (overwritten).
    metadata:
        The metadata text as the device sent it (preferred: it is stored byte for byte), or
        a calibration to write in the device's format.
    vdd_mv, sample_rate_hz:
        Supply voltage (mV) and sample rate of the stream.

    Examples
    --------
    >>> with Ppk2StreamWriter(path, metadata_text, vdd_mv=3300) as rec:  # doctest: +SKIP
    ...     for block in port_reads:
    ...         rec.write(block)
    """

    def __init__(self, path: str | Path, metadata: str | Ppk2Calibration, vdd_mv: float,
                 sample_rate_hz: float = SAMPLE_RATE_HZ) -> None:
        text = format_metadata(metadata) if isinstance(metadata, Ppk2Calibration) else metadata
        acc = MetadataAccumulator(str(path))
        if not acc.feed(text.encode("ascii")) or acc.rest:
            raise InstrumentError(f"{path}: the metadata must end with its '{END_MARKER}' line")
        acc.calibration()  # refuse to record what could not be read back
        head = text.encode("ascii") + header_line(vdd_mv, sample_rate_hz)
        if len(head) > _HEAD_LIMIT:
            raise InstrumentError(f"{path}: metadata of {len(text)} bytes; a raw stream file allows "
                                  f"{_HEAD_LIMIT} bytes before the samples")
        self.path = Path(path)
        self._fh: BinaryIO = open(self.path, "wb")  # noqa: SIM115 (closed by close/__exit__)
        self._fh.write(head)
        self.bytes_written = 0
        """Sample bytes written so far."""

    def write(self, raw: bytes | bytearray | memoryview) -> None:
        """Append raw bytes of the stream exactly as read from the device."""
        self.bytes_written += self._fh.write(raw)

    def close(self) -> None:
        if self.bytes_written % WORD_BYTES:
            log.warning("%s: stream ends inside a word (%d bytes)", self.path, self.bytes_written)
        self._fh.close()

    def __enter__(self) -> Ppk2StreamWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class Ppk2RawCapture:
    """A raw stream file as a :class:`~energyrig.capture.Capture`.

    Parameters
    ----------
    path:
        The file.
    spike_filter:
        Apply ``ppk2-api``'s display filter (off by default; see
        :mod:`energyrig.instruments.ppk2.decode`).
    vdd_mv:
        Override the supply voltage recorded in the header, mV.
    block_samples:
        Samples per chunk; memory use is about 40 bytes per sample of one chunk (the raw
        block, and two chunks' arrays: each is given once the next is decoded, its last
        sample checked against it; 39 MiB at 2^20 samples, tracemalloc).

    Raises
    ------
    CaptureError
        If the file is missing or not a raw PPK2 stream (checked on construction).
    """

    def __init__(self, path: str | Path, *, spike_filter: bool = False, vdd_mv: float | None = None,
                 block_samples: int = _BLOCK_SAMPLES) -> None:
        self.source = str(path)
        self.path = Path(path)
        self.spike_filter = spike_filter
        self.trigger_bit = 0
        """Logic input carrying the trigger (0 = D0); ``rig analyze`` reads it."""
        self.block_samples = block_samples
        try:
            with open(self.path, "rb") as fh:
                self.header = read_header(fh, self.source)
        except OSError as exc:
            raise CaptureError(self.source, f"cannot read the file: {exc.strerror}") from None
        self.calibration = self.header.calibration
        self.vdd_mv = self.header.vdd_mv if vdd_mv is None else vdd_mv
        if not 0 < self.vdd_mv <= MAX_VDD_MV:
            field = "header field vdd_mv" if vdd_mv is None else "the supply given (--voltage)"
            raise CaptureError(self.source, f"{field}: {self.vdd_mv:g} mV is not a PPK2's "
                                            f"supply (above 0, at most {MAX_VDD_MV} mV)")

    def chunks(self) -> Iterator[Chunk]:
        yield from decode_stream(self._blocks(), self.calibration, self.vdd_mv,
                                 spike_filter=self.spike_filter,
                                 sample_rate_hz=self.header.sample_rate_hz, source=self.source)

    def _blocks(self) -> Iterator[memoryview]:
        view = memoryview(bytearray(self.block_samples * WORD_BYTES))
        with open(self.path, "rb") as fh:
            fh.seek(self.header.data_offset)
            while n := fh.readinto(view):
                yield view[:n]


def open_ppk2(path: str | Path, **options: object) -> Ppk2RawCapture:
    """Open a raw stream file (options as for :class:`Ppk2RawCapture`)."""
    return Ppk2RawCapture(path, **options)  # type: ignore[arg-type]


def is_ppk2_raw(head: bytes) -> bool:
    """Whether the first bytes of a file are a raw PPK2 stream (metadata, then the header line)."""
    return f"{END_MARKER}\n{MAGIC} ".encode("ascii") in head or \
        f"{END_MARKER}\r\n{MAGIC} ".encode("ascii") in head


def open_ppk2_capture(path: Path, options: CaptureOptions) -> Ppk2RawCapture:
    """The reader of :func:`energyrig.instruments.files.file_kinds` for raw stream files.

    ``options.trigger`` names the logic input (``D0``..``D7``, default ``D0``; or
    ``options.trigger_bit``) and becomes the capture's ``trigger_bit``; ``options.voltage`` as a number (V) overrides the recorded
    supply voltage. The PPK2 has one current channel and no voltage channel, so naming one
    is an error; a shunt or current scale does not apply.
    """
    source = str(path)
    bit = options.logic_channel(source)
    if options.current is not None:
        raise ChannelError(source, f"no channel {options.current!r}: a PPK2 stream has one current "
                                   "channel; leave --current out")
    if isinstance(options.voltage, str):
        raise ChannelError(source, f"no channel {options.voltage!r}: a PPK2 stream has no voltage "
                                   "channel; give the supply in volts (e.g. --voltage 3.3)")
    vdd_mv = None if options.voltage is None else float(options.voltage) * 1000
    capture = Ppk2RawCapture(path, vdd_mv=vdd_mv, block_samples=options.chunk_samples)
    capture.trigger_bit = bit
    return capture
