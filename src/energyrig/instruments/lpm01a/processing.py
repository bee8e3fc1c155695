"""The STM32 Power Shield's data stream: decoding it into chunks (numpy over whole blocks),
and encoding it (for the emulator and known-answer tests).

Two formats (``format``; UM2243 and the board's ``help``, as MLPerf Tiny's runner carries it):

``bin_hexa``
    2 bytes a sample, big-endian: the high 4 bits are a negative power of 16, the low 12 a
    mantissa: ``52A0`` is 0x2A0 × 16^-5 A = 640.9 µA. A byte ``F0`` where a sample would
    start opens a metadata message (Zephyr's ``scripts/pm/stm32l562e_dk/PowerShield.py``
    reads them so): ``F0 F3`` a timestamp (4 bytes of ms since the acquisition started,
    big-endian, 1 byte of transmit-buffer load in %, ``FF FF``), ``F0 F4 FF FF`` the end of
    the acquisition (its text summary follows), ``F0 F5`` an overcurrent, ``F0 F1`` / ``F0 F2``
    an error / information text. That those two texts and the overcurrent end with ``FF FF``
    as the others do is this module's reading, not a documented fact (docs/lpm01a.md).
``ascii_dec``
    A text line a sample: ``6409-07`` is 6409 × 10^-7 A = 640.9 µA (4 digits, the signed
    power of ten); ``TimeStamp: 001s 000ms, buff 00%`` lines as the timestamps.

Either way, an event on D7 (``eventsrc d7 ...``) comes in the stream where it happened, as
the text ``event <n> ris`` or ``event <n> fal`` (MLPerf Tiny's runner reads ``event <n> ris``
lines and counts the samples before each: the EnergyRunner's window marks); in ``bin_hexa``
as an information message. :class:`StreamDecoder` turns the events into the level of D7,
bit 7 of each sample's logic byte: the trigger the rig finds its windows on.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.instruments.lpm01a.protocol import COMPLETED, strip_prompt

log = logging.getLogger(__name__)

#: The logic bit of D7, the input that carries the window (``Chunk.logic`` bit k = Dk).
D7_BIT = 7
#: The top of the dynamic range at 100 kHz, A (UM2243: 100 nA .. 50 mA dynamic).
FULL_SCALE_A = 50e-3
#: A metadata message starts with this byte where a sample would.
META = 0xF0
TIMESTAMP, END, OVERCURRENT, ERROR_TEXT, INFO_TEXT = 0xF3, 0xF4, 0xF5, 0xF1, 0xF2
_TAIL = b"\xff\xff"
#: The largest power of 16 a sample word may carry (15 would start with ``F``: metadata).
MAX_EXPONENT = 14
_EVENT = re.compile(r"event (\d+) (ris|fal)")
_ASCII_SAMPLE = re.compile(rb"(\d{4})([+-]\d{2})")
_ASCII_STAMP = re.compile(r"TimeStamp: (\d+)s (\d+)ms, buff (\d+)%")


def decode_words(raw: bytes | npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    """Current of ``bin_hexa`` sample words (big-endian pairs), A: mantissa × 16^-exponent."""
    words = np.frombuffer(raw, dtype=">u2").astype(np.int64)
    return (words & 0x0FFF) * np.exp2(-4.0 * (words >> 12))


def encode_words(current_a: npt.NDArray[np.float64]) -> bytes:
    """``bin_hexa`` words of ``current_a`` (clipped to 0..:data:`FULL_SCALE_A`): the largest
    exponent whose mantissa fits 12 bits, the mantissa rounded (what :func:`decode_words`
    inverts to within half a step)."""
    i = np.clip(np.asarray(current_a, dtype=np.float64), 0.0, FULL_SCALE_A)
    with np.errstate(divide="ignore"):
        # 16^e · i <= 4095.5  <=>  e <= log16(4095.5 / i)
        exp = np.floor(np.log2(4095.5 / np.maximum(i, 1e-300)) / 4.0)
    exp = np.clip(exp, 0, MAX_EXPONENT).astype(np.int64)
    mantissa = np.minimum(np.rint(i * np.exp2(4.0 * exp)), 4095).astype(np.int64)
    return ((exp << 12) | mantissa).astype(">u2").tobytes()


def resolution_ranges(fmt: str) -> tuple[tuple[float, float], ...]:
    """``(highest current, A; its step, A)`` of each power the stream's numbers take, ascending
    (what :class:`~energyrig.instruments.base.Resolution` takes): in ``bin_hexa`` a 12-bit
    mantissa × 16^-e holds up to 4095 × 16^-e in steps of 16^-e (:func:`encode_words` takes
    the largest e that fits); in ``ascii_dec`` 4 digits × 10^p, up to 9999 × 10^p in steps of
    10^p."""
    if fmt == "bin_hexa":
        return tuple((4095 * 16.0 ** -e, 16.0 ** -e) for e in range(MAX_EXPONENT, 3, -1))
    return tuple((9999 * 10.0 ** p, 10.0 ** p) for p in range(-13, -4))


def decode_ascii(text: bytes) -> npt.NDArray[np.float64]:
    """Current of ``ascii_dec`` samples (``6409-07``), A."""
    return np.array([int(m) * 10.0 ** int(p) for m, p in _ASCII_SAMPLE.findall(text)],
                    dtype=np.float64)


def encode_ascii(current_a: npt.NDArray[np.float64]) -> bytes:
    """``ascii_dec`` lines of ``current_a`` (4 significant digits, clipped at 0)."""
    lines = []
    for i in np.clip(np.asarray(current_a, dtype=np.float64), 0.0, FULL_SCALE_A):
        if i <= 0:
            lines.append(b"0000+00\r\n")
            continue
        power = int(np.floor(np.log10(i))) - 3
        mantissa = int(round(i / 10.0 ** power))
        if mantissa > 9999:
            mantissa, power = mantissa // 10, power + 1
        lines.append(b"%04d%+03d\r\n" % (mantissa, power))
    return b"".join(lines)


def timestamp_message(ms: int, load_pct: int, fmt: str) -> bytes:
    """A timestamp of ``ms`` since the acquisition started, the transmit buffer ``load_pct``
    full, in ``fmt``."""
    if fmt == "bin_hexa":
        return bytes((META, TIMESTAMP)) + ms.to_bytes(4, "big") + bytes((load_pct,)) + _TAIL
    return f"TimeStamp: {ms // 1000:03d}s {ms % 1000:03d}ms, buff {load_pct:02d}%\r\n".encode()


def text_message(text: str, fmt: str, kind: int = INFO_TEXT) -> bytes:
    """``text`` inside the stream in ``fmt`` (an information or error message)."""
    if fmt == "bin_hexa":
        return bytes((META, kind)) + text.encode("ascii") + _TAIL
    return text.encode("ascii") + b"\r\n"


def end_message(fmt: str) -> bytes:
    """The end of an acquisition in ``fmt`` (its text summary follows)."""
    return bytes((META, END)) + _TAIL if fmt == "bin_hexa" else b""


@dataclass
class StreamStats:
    """What a decoder met besides samples."""

    timestamps: int = 0
    events: int = 0
    lost: int = 0
    corrupt: int = 0
    overcurrents: int = 0
    messages: list[str] = field(default_factory=list)


class StreamDecoder:
    """Decodes the stream of one acquisition, block by block, into :class:`Chunk`\\ s.

    Parameters
    ----------
    fmt:
        ``bin_hexa`` or ``ascii_dec``.
    rate_hz:
        The sampling frequency, Hz.
    supply_v:
        The supply the shield gives the board (each chunk's voltage), V.

    A timestamp that says more samples were taken than came (the board's transmit buffer
    overflowed) inserts the missing ones as a gap (``Chunk.gaps``); a sample word with the
    reserved exponent 15 is marked corrupt. After the end of the acquisition the rest of the
    stream is text, kept in :attr:`tail`.
    """

    def __init__(self, fmt: str, rate_hz: float, supply_v: float) -> None:
        if fmt not in ("bin_hexa", "ascii_dec"):
            raise ValueError(f"unknown PowerShield data format {fmt!r}")
        self.fmt = fmt
        self.rate_hz = rate_hz
        self.supply_v = supply_v
        self.next_index = 0
        self.level = 0
        self.ended = False
        self.completed = False
        self.tail = bytearray()
        self.stats = StreamStats()
        self._pending = bytearray()
        self._parts: list[npt.NDArray[np.float64]] = []
        self._marks: list[tuple[int, int]] = []   # (position in the block, D7 level)
        self._gaps: list[tuple[int, int]] = []    # (position in the block, lost)
        self._corrupt: list[npt.NDArray[np.bool_]] = []
        self._count = 0

    def feed(self, data: bytes) -> Chunk | None:
        """Decode ``data`` (any split) into the samples it completes, or ``None``."""
        if self.ended:
            self.tail += data
            return None
        self._pending += data
        if self.fmt == "bin_hexa":
            self._feed_binary()
        else:
            self._feed_ascii()
        return self._chunk()

    # -- bin_hexa --------------------------------------------------------------------------
    def _feed_binary(self) -> None:
        buf = self._pending
        pos = 0
        while not self.ended and len(buf) - pos >= 2:
            arr = np.frombuffer(buf, dtype=np.uint8, count=len(buf) - (len(buf) - pos) % 2)
            heads = arr[pos::2]
            meta = np.flatnonzero(heads == META)
            end = pos + 2 * int(meta[0]) if len(meta) else len(arr)
            if end > pos:
                self._samples(arr[pos:end])
                pos = end
            if not len(meta):
                break
            used = self._metadata(bytes(buf[pos:]))
            if used == 0:
                break  # the rest of the message has not come yet
            pos += used
        rest = bytes(buf[pos:])
        if self.ended:
            self.tail += rest
            rest = b""
        self._pending = bytearray(rest)

    def _samples(self, raw: npt.NDArray[np.uint8]) -> None:
        self._parts.append(decode_words(raw.tobytes()))
        corrupt = raw[0::2] > META  # exponent 15: reserved (F0 opens metadata)
        self._corrupt.append(corrupt)
        self.stats.corrupt += int(corrupt.sum())
        self._count += len(raw) // 2

    def _metadata(self, head: bytes) -> int:
        """Take the message at the start of ``head``; the bytes it used (0: incomplete)."""
        if len(head) < 2:
            return 0
        kind = head[1]
        if kind == TIMESTAMP:
            if len(head) < 9:
                return 0
            self._timestamp(int.from_bytes(head[2:6], "big"))
            return 9
        if kind in (END, OVERCURRENT):
            if len(head) < 4:
                return 0
            if kind == END:
                self.ended = True
            else:
                self.stats.overcurrents += 1
                log.warning("PowerShield: overcurrent reported in the stream")
            return 4
        if kind in (ERROR_TEXT, INFO_TEXT):
            stop = head.find(_TAIL, 2)
            if stop < 0:
                return 0
            self._text(head[2:stop].decode("ascii", errors="replace"))
            return stop + 2
        # Not a message this decoder knows: take the two bytes as a corrupt sample.
        self._samples(np.frombuffer(head[:2], dtype=np.uint8))
        self._corrupt[-1][:] = True
        self.stats.corrupt += 1
        return 2

    # -- ascii_dec -------------------------------------------------------------------------
    def _feed_ascii(self) -> None:
        *lines, rest = bytes(self._pending).split(b"\n")
        self._pending = bytearray(rest)
        values: list[float] = []
        for raw in lines:
            line = raw.strip()
            match = _ASCII_SAMPLE.fullmatch(line)
            if match is not None:
                values.append(int(match[1]) * 10.0 ** int(match[2]))
                continue
            if values:
                self._take(np.array(values))
                values = []
            text = line.decode("ascii", errors="replace")
            stamp = _ASCII_STAMP.fullmatch(text)
            if stamp is not None:
                self._timestamp(int(stamp[1]) * 1000 + int(stamp[2]))
            elif text:
                self._text(text)
        if values:
            self._take(np.array(values))

    def _take(self, current: npt.NDArray[np.float64]) -> None:
        self._parts.append(current)
        self._corrupt.append(np.zeros(len(current), dtype=np.bool_))
        self._count += len(current)

    # -- what both formats carry -----------------------------------------------------------
    def _timestamp(self, ms: int) -> None:
        """A timestamp: the samples before it number ``ms`` × rate (lost ones as a gap)."""
        self.stats.timestamps += 1
        expected = round(ms * self.rate_hz / 1000)
        have = self.next_index + self._count + sum(n for _, n in self._gaps)
        if expected > have:
            lost = expected - have
            self._gaps.append((self._count, lost))
            self.stats.lost += lost
            log.warning("PowerShield: %d samples lost before the timestamp %d ms (the board's "
                        "transmit buffer overflowed?)", lost, ms,
                        extra={"repeats": "PowerShield streams with samples lost"})

    def _text(self, text: str) -> None:
        event = _EVENT.fullmatch(text.strip())
        if event is not None:
            self.stats.events += 1
            self._marks.append((self._count, 1 if event[2] == "ris" else 0))
        elif strip_prompt(text).startswith(COMPLETED):
            self.ended = self.completed = True
        else:
            self.stats.messages.append(text)
            log.info("PowerShield: %s", text)

    def _chunk(self) -> Chunk | None:
        n = self._count
        if n == 0:
            for _, level in self._marks:  # events before any sample of the block
                self.level = level
            self._marks = []
            return None
        current = np.concatenate(self._parts) if len(self._parts) > 1 else self._parts[0]
        corrupt = np.concatenate(self._corrupt) if len(self._corrupt) > 1 else self._corrupt[0]
        level = np.full(n, self.level, dtype=np.uint8)
        for at, value in self._marks:
            level[at:] = value
            self.level = value
        # a gap at the block's end belongs before its next sample: keep it for then
        carried = [(0, k) for at, k in self._gaps if at >= n]
        inside = [(at, k) for at, k in self._gaps if at < n]
        chunk = Chunk(start_index=self.next_index, period_s=1.0 / self.rate_hz,
                      current_a=current, voltage_v=self.supply_v,
                      logic=(level << D7_BIT).astype(np.uint8),
                      saturated=current >= FULL_SCALE_A,
                      corrupt=corrupt if corrupt.any() else None,
                      gaps=np.array(inside, dtype=np.int64).reshape(-1, 2))
        self.next_index += n + sum(k for _, k in inside)
        self._parts, self._corrupt, self._marks, self._gaps = [], [], [], carried
        self._count = 0
        return chunk
