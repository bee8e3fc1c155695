"""Reader of sigrok session files (``.sr``), streamed as :class:`~energyrig.capture.Chunk`.

The format, as libsigrok 0.5 writes it (``src/output/srzip.c``) and reads it back
(``src/session_file.c``, ``src/session_driver.c``), is a zip archive holding:

``version``
    ``"2"`` (version 1 files have the same layout without analog data).
``metadata``
    A GLib key file. Section ``[device 1]`` has ``samplerate`` (``"1 MHz"``, ``"200 kHz"``),
    ``capturefile`` (``logic-1``, present only when logic channels were saved),
    ``total probes`` (number of logic channels of the device, enabled or not), ``probeN``
    (name of the logic channel at bit N-1 of each sample), ``unitsize`` (bytes per logic
    sample), ``total analog`` and ``analogK`` (name of the analog channel stored in the
    members ``analog-1-K-*``; K counts on from ``total probes``).
``logic-1-1``, ``logic-1-2``, ...
    Logic samples, ``unitsize`` bytes each, little-endian, bit N-1 = channel ``probeN``.
    A file with a single unchunked ``logic-1`` member is valid too.
``analog-1-K-1``, ``analog-1-K-2``, ...
    Samples of analog channel K as float32 little-endian, in volts.

Chunk numbers count up from 1 without gaps (libsigrok stops at the first missing number;
this reader refuses a file with a gap rather than silently dropping the rest). Logic and
analog members are chunked independently (the demo driver writes 4096-sample logic members
and 1020-sample analog members), so the reader keeps one buffer per stream and emits chunks
of the samples all streams have in common. Memory stays bounded by a few blocks per stream
whatever the length of the capture.

Channel mapping onto :class:`~energyrig.capture.Chunk`:

- ``logic`` bit 0 carries the trigger channel (``trigger``, default: the lowest enabled logic
  channel); other logic channels are not delivered. ``logic`` is ``None`` when the file has
  no logic channel and no trigger was asked for. An analog trigger channel (a scope without
  logic inputs) is thresholded with hysteresis at ``trigger_level_v``, which it requires
  (:mod:`energyrig.instruments.threshold`; the state carries across chunks).
- ``current_a`` = the ``current`` analog channel (default: the first one) divided by
  ``shunt_ohms``, or multiplied by ``current_scale_a_per_v`` (default 1 A/V: the channel
  already holds amperes, e.g. a current probe set to 1 A/V).
- ``voltage_v`` = the ``voltage`` analog channel, or a constant in volts. With
  ``voltage_minus_shunt`` the shunt voltage is subtracted (probe on the supply side of the
  shunt, as in the published two-probe method).
"""
from __future__ import annotations

import configparser
import logging
import math
import re
import zipfile
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk, scaled_bounds, widened
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.threshold import AnalogTrigger, Schmitt

log = logging.getLogger(__name__)

SUPPORTED_VERSION = 2
DEVICE_SECTION = "device 1"
_SI_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}
_RATE_RE = re.compile(r"^\s*(?P<value>[0-9]*\.?[0-9]+)\s*(?:(?P<prefix>[kMG]?)Hz)?\s*$")
_CHUNK_RE = re.compile(r"^(?P<base>.+)-(?P<num>[0-9]+)$")


@dataclass(frozen=True)
class SrOptions(CaptureOptions):
    """:class:`~energyrig.instruments.fileopts.CaptureOptions` plus what only this reader does.

    For a session file: ``trigger`` names a logic channel (default: the lowest enabled one)
    or an analog channel with ``trigger_level_v``,
    ``current`` an analog channel (default: the first one), ``voltage`` an analog channel or a
    constant in volts (a string that is not a channel name but parses as a number is one).

    Attributes
    ----------
    voltage_minus_shunt:
        Subtract the ``current`` channel's voltage from the supply channel (the supply probe
        sits before the shunt, as in the published two-probe method).
    """

    voltage_minus_shunt: bool = False


@dataclass(frozen=True, slots=True)
class SrMetadata:
    """What a session file's ``metadata`` and member list say about the capture.

    Attributes
    ----------
    samplerate_hz:
        Sample rate in hertz.
    unitsize:
        Bytes per logic sample (0 for a file without logic data).
    logic_bits:
        Enabled logic channel name -> bit index within a logic sample.
    analog_members:
        Analog channel name -> member base name (``analog-1-K``).
    logic_members:
        Logic members in chunk order.
    analog_chunks:
        Analog channel name -> its members in chunk order.
    """

    version: int
    samplerate_hz: float
    unitsize: int
    logic_bits: dict[str, int]
    analog_members: dict[str, str]
    logic_members: tuple[zipfile.ZipInfo, ...]
    analog_chunks: dict[str, tuple[zipfile.ZipInfo, ...]]

    @property
    def logic_samples(self) -> int:
        """Number of logic samples in the file (what ``sigrok-cli --show`` reports)."""
        if not self.unitsize:
            return 0
        return sum(info.file_size for info in self.logic_members) // self.unitsize

    def analog_samples(self, name: str) -> int:
        """Number of samples of analog channel ``name``."""
        return sum(info.file_size for info in self.analog_chunks[name]) // 4

    def describe_channels(self) -> str:
        """``logic: D0, D1; analog: A0`` for error messages."""
        logic = ", ".join(self.logic_bits) or "none"
        analog = ", ".join(self.analog_members) or "none"
        return f"logic: {logic}; analog: {analog}"


def parse_samplerate(text: str) -> float:
    """Parse libsigrok's samplerate string (``"1 MHz"``, ``"200 kHz"``, ``"5000"``) in Hz.

    Raises
    ------
    ValueError
        If ``text`` is not a sample rate.
    """
    match = _RATE_RE.match(text)
    if match is None:
        raise ValueError(f"not a sample rate: {text!r}")
    return float(match["value"]) * _SI_PREFIX[match["prefix"] or ""]


#: What a damaged zip archive raises while it is read: a bad directory or CRC, a truncated
#: or undecodable member, an offset past its end, a compression method zipfile lacks.
ZIP_ERRORS = (zipfile.BadZipFile, EOFError, KeyError, OSError, zlib.error, NotImplementedError)


def _member_chain(names: set[str], base: str, source: str) -> list[str]:
    """Members holding the data of ``base`` in order: ``base`` alone or ``base-1..base-n``."""
    if base in names and f"{base}-1" not in names:
        return [base]
    numbers = sorted(int(m["num"]) for name in names
                     if (m := _CHUNK_RE.match(name)) is not None and m["base"] == base)
    if numbers and numbers != list(range(1, len(numbers) + 1)):
        missing = next(n for n in range(1, numbers[-1] + 1) if n not in set(numbers))
        raise CaptureError(source, f"corrupt session file: chunk '{base}-{missing}' is missing "
                                   f"but '{base}-{numbers[-1]}' exists")
    return [f"{base}-{n}" for n in numbers]


def _int_key(section: configparser.SectionProxy, key: str, source: str, default: int) -> int:
    try:
        return int(section.get(key, str(default)))
    except ValueError as exc:
        raise CaptureError(source, f"metadata: '{key}' is not an integer: "
                                   f"{section.get(key)!r}") from exc


def read_metadata(archive: zipfile.ZipFile, source: str) -> SrMetadata:
    """Read and check ``version`` and ``metadata`` of an open session file.

    Raises
    ------
    CaptureError
        If the archive is not a sigrok session file or its metadata is inconsistent.
    """
    names = set(archive.namelist())
    for member in ("version", "metadata"):
        if member not in names:
            raise CaptureError(source, f"not a sigrok session file: no '{member}' member in the zip")
    version_text = archive.read("version").decode("ascii", "replace").strip()
    if not version_text.isdigit() or not 1 <= int(version_text) <= SUPPORTED_VERSION:
        raise CaptureError(source, f"unsupported sigrok session file version {version_text!r} "
                                   f"(this reader knows 1..{SUPPORTED_VERSION})")
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep key case
    try:
        parser.read_string(archive.read("metadata").decode("utf-8"))
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise CaptureError(source, f"unreadable metadata: {exc}") from exc
    if not parser.has_section(DEVICE_SECTION):
        raise CaptureError(source, f"metadata has no [{DEVICE_SECTION}] section")
    device = parser[DEVICE_SECTION]
    try:
        samplerate = parse_samplerate(device.get("samplerate", ""))
    except ValueError as exc:
        raise CaptureError(source, f"metadata: bad or missing samplerate "
                                   f"{device.get('samplerate')!r}") from exc
    if samplerate <= 0:
        raise CaptureError(source, "metadata: samplerate is 0; the time base is unknown")

    unitsize = _int_key(device, "unitsize", source, 0)
    logic_bits: dict[str, int] = {}
    analog_members: dict[str, str] = {}
    for key, value in device.items():
        if key.startswith("probe") and key[5:].isdigit():
            logic_bits[value] = int(key[5:]) - 1
        elif key.startswith("analog") and key[6:].isdigit():
            analog_members[value] = f"analog-1-{int(key[6:])}"
    logic_bits = dict(sorted(logic_bits.items(), key=lambda kv: kv[1]))

    capturefile = device.get("capturefile")
    logic_members: list[str] = []
    if capturefile is not None:
        if unitsize <= 0:
            raise CaptureError(source, "metadata: logic data without a valid 'unitsize'")
        if logic_bits and max(logic_bits.values()) >= 8 * unitsize:
            raise CaptureError(source, f"metadata: probe{max(logic_bits.values()) + 1} does not "
                                       f"fit in a logic sample of unitsize {unitsize}")
        logic_members = _member_chain(names, capturefile, source)
    analog_chunks = {name: tuple(archive.getinfo(m) for m in _member_chain(names, base, source))
                     for name, base in analog_members.items()}
    meta = SrMetadata(version=int(version_text), samplerate_hz=samplerate,
                      unitsize=unitsize if capturefile is not None else 0,
                      logic_bits=logic_bits if capturefile is not None else {},
                      analog_members=analog_members,
                      logic_members=tuple(archive.getinfo(m) for m in logic_members),
                      analog_chunks=analog_chunks)
    sized = [(info, unitsize, f"{unitsize}-byte logic") for info in meta.logic_members]
    sized += [(info, 4, "float32") for chunks in analog_chunks.values() for info in chunks]
    for info, itemsize, what in sized:
        if info.file_size % itemsize:
            raise CaptureError(source, f"corrupt session file: '{info.filename}' holds "
                                       f"{info.file_size} bytes, not whole {what} samples")
    return meta


def _member_blocks(archive: zipfile.ZipFile, members: tuple[zipfile.ZipInfo, ...],
                   block_bytes: int) -> Iterator[bytes]:
    """Bytes of ``members`` in order, at most ``block_bytes`` at a time."""
    for info in members:
        with archive.open(info) as stream:
            while block := stream.read(block_bytes):
                yield block


class _Stream:
    """One decoded sample stream with a small buffer, so streams chunked differently align."""

    def __init__(self, blocks: Iterator[bytes], itemsize: int,
                 decode: Callable[[bytes], npt.NDArray[np.generic]]) -> None:
        self._blocks = blocks
        self._itemsize = itemsize
        self._decode = decode
        self._pending: deque[npt.NDArray[np.generic]] = deque()
        self._carry = b""
        self.buffered = 0

    def fill(self, want: int) -> int:
        """Read until ``want`` samples are buffered or the stream ends; return the count."""
        while self.buffered < want:
            block = next(self._blocks, None)
            if block is None:
                break
            data = self._carry + block
            whole = len(data) - len(data) % self._itemsize
            self._carry = data[whole:]
            if whole:
                samples = self._decode(data[:whole])
                self._pending.append(samples)
                self.buffered += len(samples)
        return self.buffered

    def take(self, n: int) -> npt.NDArray[np.generic]:
        """Remove and return the next ``n`` buffered samples as one array."""
        parts = []
        need = n
        while need:
            head = self._pending[0]
            if len(head) <= need:
                parts.append(self._pending.popleft())
                need -= len(head)
            else:
                parts.append(head[:need])
                self._pending[0] = head[need:]
                need = 0
        self.buffered -= n
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _decode_analog(data: bytes) -> npt.NDArray[np.float32]:
    """The float32 samples of an analog member's bytes, not copied (widened to float64 once
    a chunk is cut: :func:`~energyrig.capture.widened`)."""
    return np.frombuffer(data, dtype="<f4")


def _logic_decoder(unitsize: int, bit: int) -> Callable[[bytes], npt.NDArray[np.uint8]]:
    """Decoder of raw logic samples into 0/1 of one channel (as bit 0)."""
    byte, shift = divmod(bit, 8)

    def decode(data: bytes) -> npt.NDArray[np.uint8]:
        column = np.frombuffer(data, dtype=np.uint8).reshape(-1, unitsize)[:, byte]
        return (column >> shift) & 1

    return decode


class SrCapture:
    """A sigrok session file as a :class:`~energyrig.capture.Capture`.

    Opening checks the file and resolves the channel options (errors surface here, not in
    the middle of a run); :meth:`chunks` streams the samples and may be called repeatedly.

    Parameters
    ----------
    path:
        The ``.sr`` file.
    options:
        Channel mapping and scaling; see :class:`SrOptions`.

    Raises
    ------
    CaptureError
        The file is missing, not a session file, or corrupt.
    ChannelError
        A named channel does not exist, or there is no analog channel for the current.
        An analog trigger without ``trigger_level_v``, or a level for a logic trigger,
        raises :class:`CaptureError`.
    """

    trigger_bit = 0  # the trigger channel (logic, or analog thresholded) arrives on bit 0

    def __init__(self, path: str | Path, options: CaptureOptions | None = None) -> None:
        self.path = Path(path)
        self.source = str(path)
        self.options = options or SrOptions()
        self._minus_shunt = isinstance(self.options, SrOptions) and self.options.voltage_minus_shunt
        try:
            with zipfile.ZipFile(self.path) as archive:
                self.metadata = read_metadata(archive, self.source)
        except FileNotFoundError as exc:
            raise CaptureError(self.source, "no such file") from exc
        except ZIP_ERRORS as exc:
            raise CaptureError(self.source, f"not a sigrok session file: {exc}") from exc
        self._amperes_per_volt = self.options.amperes_per_volt(self.source)
        if self.options.chunk_samples < 1:
            raise CaptureError(self.source, f"chunk_samples must be >= 1, got {self.options.chunk_samples}")
        self.trigger_channel = self._resolve_trigger()
        self.current_channel = self._resolve_analog(self.options.current, "current")
        self.voltage_channel, self.voltage_constant_v = self._resolve_voltage()
        if self._minus_shunt and self.voltage_channel is None:
            raise ChannelError(self.source, "voltage_minus_shunt needs a supply voltage channel")
        lengths = self._stream_lengths()
        self.samples = min(lengths.values())
        if len(set(lengths.values())) > 1:
            log.warning("%s: channels hold different sample counts (%s); reading the first %d",
                        self.source, ", ".join(f"{k}={v}" for k, v in lengths.items()), self.samples)

    @property
    def period_s(self) -> float:
        """Sample period in seconds."""
        return 1.0 / self.metadata.samplerate_hz

    def _resolve_trigger(self) -> str | None:
        """The trigger channel; sets :attr:`trigger_threshold` when it is analog."""
        bits = self.metadata.logic_bits
        name = self.options.trigger
        self.trigger_threshold: AnalogTrigger | None = None
        if name in self.metadata.analog_members:
            self.trigger_threshold = self.options.analog_trigger(self.source, name)
            log.info("%s: trigger %s thresholded at %s", self.source, name,
                     self.trigger_threshold.describe())
            return name
        if self.options.trigger_level_v is not None:
            raise CaptureError(self.source, "a trigger level applies to an analog trigger "
                                            "channel; name one with --trigger "
                                            f"({self.metadata.describe_channels()})")
        if self.options.trigger_bit is not None:
            raise CaptureError(self.source, "--trigger-bit applies to a packed CSV column or a "
                                            "PPK2 file; name the sigrok trigger channel with "
                                            f"--trigger ({self.metadata.describe_channels()})")
        if name is None:
            return next(iter(bits), None)
        if name not in bits:
            raise ChannelError(self.source, f"no logic channel {name!r} for the trigger "
                                            f"({self.metadata.describe_channels()})")
        return name

    def _resolve_analog(self, name: str | None, role: str) -> str:
        analog = self.metadata.analog_members
        if name is None:
            if not analog:
                raise ChannelError(self.source, f"no analog channel for the {role} "
                                                f"({self.metadata.describe_channels()})")
            return next(iter(analog))
        if name not in analog:
            raise ChannelError(self.source, f"no analog channel {name!r} for the {role} "
                                            f"({self.metadata.describe_channels()})")
        return name

    def _resolve_voltage(self) -> tuple[str | None, float | None]:
        voltage = self.options.voltage
        if voltage is None:
            raise ChannelError(self.source, "no supply voltage given: name its analog channel "
                                            "or a constant in volts (e.g. --voltage 3.3) "
                                            f"({self.metadata.describe_channels()})")
        if isinstance(voltage, str) and voltage in self.metadata.analog_members:
            return voltage, None
        try:
            volts = float(voltage)
        except ValueError:
            raise ChannelError(self.source, f"no analog channel {voltage!r} for the voltage "
                                            f"({self.metadata.describe_channels()})") from None
        if not math.isfinite(volts):
            raise ChannelError(self.source, f"supply voltage must be finite, got {voltage!r}")
        return None, volts

    def _stream_lengths(self) -> dict[str, int]:
        lengths = {self.current_channel: self.metadata.analog_samples(self.current_channel)}
        if self.voltage_channel is not None:
            lengths[self.voltage_channel] = self.metadata.analog_samples(self.voltage_channel)
        if self.trigger_threshold is not None:
            lengths[self.trigger_channel] = self.metadata.analog_samples(self.trigger_channel)
        elif self.trigger_channel is not None:
            lengths[self.trigger_channel] = self.metadata.logic_samples
        return lengths

    def chunks(self) -> Iterator[Chunk]:
        """Yield the capture in chunks of ``options.chunk_samples`` samples (the last shorter).

        Raises
        ------
        CaptureError
            A member is corrupt (bad CRC, truncated) or the file changed since opening.
        """
        block = self.options.chunk_samples
        try:
            with zipfile.ZipFile(self.path) as archive:
                yield from self._chunks(archive, block)
        except ZIP_ERRORS as exc:
            raise CaptureError(self.source, f"corrupt session file while reading: {exc}") from exc

    def _chunks(self, archive: zipfile.ZipFile, block: int) -> Iterator[Chunk]:
        meta = self.metadata
        current = self._analog_stream(archive, self.current_channel, block)
        voltage = (self._analog_stream(archive, self.voltage_channel, block)
                   if self.voltage_channel is not None else None)
        logic = None
        schmitt = None
        if self.trigger_threshold is not None:
            logic = self._analog_stream(archive, self.trigger_channel, block)  # type: ignore[arg-type]
            schmitt = Schmitt(self.trigger_threshold)
        elif self.trigger_channel is not None:
            logic = _Stream(_member_blocks(archive, meta.logic_members, block * meta.unitsize),
                            meta.unitsize,
                            _logic_decoder(meta.unitsize, meta.logic_bits[self.trigger_channel]))
        streams = [s for s in (current, voltage, logic) if s is not None]
        start = 0
        while start < self.samples:
            want = min(block, self.samples - start)
            n = min(min(s.fill(want) for s in streams), want)
            if n == 0:
                raise CaptureError(self.source, f"session file ended after {start} of "
                                                f"{self.samples} samples")
            # as read (float32) for the kernel alone, unless a scale must be applied first
            keep = self.options.keep_float32
            shunt_v, shunt_bounds = widened(current.take(n),
                                            keep and self._amperes_per_volt == 1.0)
            supply: npt.NDArray[np.floating] | float
            supply_bounds = None
            if voltage is not None:
                supply, supply_bounds = widened(voltage.take(n), keep and not self._minus_shunt)
                if self._minus_shunt:
                    supply, supply_bounds = supply - shunt_v, None
            else:
                supply = float(self.voltage_constant_v)  # type: ignore[arg-type]
            bits = logic.take(n) if logic is not None else None
            if schmitt is not None:  # its thresholds compared in float64, as always
                bits = schmitt(bits.astype(np.float64))  # type: ignore[union-attr]
            current_a = (shunt_v if self._amperes_per_volt == 1.0  # 1 ohm: no pass
                         else shunt_v * self._amperes_per_volt)
            bounds = {name: b for name, b in (
                ("current_a", scaled_bounds(shunt_bounds, self._amperes_per_volt)),
                ("voltage_v", supply_bounds)) if b is not None}
            yield Chunk(start_index=start, period_s=self.period_s,
                        current_a=current_a, voltage_v=supply,
                        logic=bits, bounds=bounds or None)  # type: ignore[arg-type]
            start += n

    def _analog_stream(self, archive: zipfile.ZipFile, name: str, block: int) -> _Stream:
        return _Stream(_member_blocks(archive, self.metadata.analog_chunks[name], block * 4),
                       4, _decode_analog)


def open_sr(path: str | Path, options: CaptureOptions | None = None) -> SrCapture:
    """Open a sigrok session file as a capture (see :class:`SrCapture`); a reader of
    :func:`energyrig.instruments.files.file_kinds`."""
    return SrCapture(path, options)
