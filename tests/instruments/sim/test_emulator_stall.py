"""The pty emulators' transmit buffer (energyrig.instruments.sim.pty.PtyEmulator._queue_block):
a loss is the host's doing, never the emulator's.

A loaded machine deschedules an emulator's process; its next tick then renders the whole
delay's samples in one block. A real device does not stall: it loses samples only when the
host leaves its buffer unread. So an emulator whose tick came late loses nothing when the
host has read everything, however large the catch-up block; a host that does not read still
loses samples, stalled emulator or not. The stall is injected through the emulator's clock
(the stream's time jumps ahead as a descheduled process finds it), never by loading the
machine; every wait is counted in samples the emulator made, not in this host's time.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import serial

from energyrig.instruments.lpm01a.emulator import Lpm01aEmulator
from energyrig.instruments.lpm01a.processing import StreamDecoder
from energyrig.instruments.ppk2.decode import WORD_BYTES
from energyrig.instruments.ppk2.emulator import Ppk2Emulator
from energyrig.instruments.ppk2.protocol import Command
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.pty import PtyEmulator

MODEL = PowerModel(idle_a=1e-3)
#: More than the kernel's pty holds of what a host has not read (15 KiB on Linux 6), bytes.
PTY_HOLDS = 64 * 1024


class StallableClock:
    """CLOCK_MONOTONIC in ns, moved ahead by :meth:`stall`: to the emulator, a stall of its
    process (its next tick renders the stall's samples at once)."""

    def __init__(self) -> None:
        self.offset_ns = 0

    def __call__(self) -> int:
        return time.monotonic_ns() + self.offset_ns

    def stall(self, seconds: float) -> None:
        self.offset_ns += round(seconds * 1e9)


@dataclass(frozen=True)
class Family:
    """How a test drives one family's emulator: made with a transmit buffer of ``bytes``, its
    stream started at ``rate_hz`` and stopped, the samples the host's bytes hold, and the
    emulator's counts of samples made and dropped."""

    make: Callable[[int], PtyEmulator]
    rate_hz: int
    start: bytes
    stop: bytes
    received: Callable[[bytes], int]
    made: Callable[[PtyEmulator], int]
    dropped: Callable[[PtyEmulator], int]
    streaming: Callable[[PtyEmulator], bool]
    word_bytes: int

    def buffer_bytes(self, seconds: float) -> int:
        """A transmit buffer of ``seconds`` of the stream, bytes."""
        return round(seconds * self.rate_hz) * self.word_bytes


def _ppk2_samples(raw: bytes) -> int:
    return len(raw) // WORD_BYTES


def _lpm01a_samples(raw: bytes) -> int:
    """The samples the board sent after ``start`` (those its timestamps say it lost are the
    chunk's gaps, not samples)."""
    _, ack, stream = raw.partition(b"ack start\r\n")
    assert ack, "the board did not acknowledge start"
    decoder = StreamDecoder("bin_hexa", 100_000, 3.3)
    chunk = decoder.feed(stream)
    assert decoder.ended, "the stream did not end with its tag"
    return 0 if chunk is None else len(chunk.current_a)


PPK2 = Family(make=lambda size: Ppk2Emulator(MODEL, tx_buffer_bytes=size), rate_hz=100_000,
              start=bytes((Command.AVERAGE_START,)), stop=bytes((Command.AVERAGE_STOP,)),
              received=_ppk2_samples,
              made=lambda emu: emu.stats.samples,  # type: ignore[attr-defined]
              dropped=lambda emu: emu.stats.overflow_samples,  # type: ignore[attr-defined]
              streaming=lambda emu: emu.streaming,  # type: ignore[attr-defined]
              word_bytes=WORD_BYTES)
LPM01A = Family(make=lambda size: Lpm01aEmulator(MODEL, tx_buffer_bytes=size), rate_hz=100_000,
                start=b"htc\nfreq 100k\nformat bin_hexa\nacqtime 0\nstart\n", stop=b"stop\n",
                received=_lpm01a_samples,
                made=lambda emu: emu._next_k,  # type: ignore[attr-defined]
                dropped=lambda emu: emu.dropped_samples,  # type: ignore[attr-defined]
                streaming=lambda emu: emu.acquiring,  # type: ignore[attr-defined]
                word_bytes=2)
FAMILIES = pytest.mark.parametrize("family", [PPK2, LPM01A], ids=["ppk2", "lpm01a"])


@contextmanager
def streaming(family: Family, buffer_s: float) -> Iterator[tuple[PtyEmulator, StallableClock,
                                                                 serial.Serial]]:
    """The family's emulator with a transmit buffer of ``buffer_s`` of its stream
    (:meth:`Family.buffer_bytes`), its stallable clock, and a host's port on which the stream
    was started."""
    clock = StallableClock()
    with family.make(family.buffer_bytes(buffer_s)) as emu:
        emu.clock = clock
        with serial.Serial(emu.port, timeout=0.02) as port:
            port.write(family.start)
            yield emu, clock, port


def read_until(port: serial.Serial, done: Callable[[], bool], raw: bytearray) -> None:
    """Read everything the port brings into ``raw`` until ``done()``."""
    while not done():
        raw += port.read(65536)


def stop_and_drain(family: Family, emu: PtyEmulator, port: serial.Serial,
                   raw: bytearray) -> None:
    """Stop the stream and read what is left of it: until the emulator has stopped, has
    nothing left to send and the port brings nothing more."""
    port.write(family.stop)
    while True:
        chunk = port.read(65536)
        raw += chunk
        if not chunk and not family.streaming(emu) and not emu._tx:  # type: ignore[attr-defined]
            return


@FAMILIES
def test_a_stalled_emulator_loses_nothing_when_the_host_has_read_everything(
        family: Family) -> None:
    # A stall of 1.5 buffers: its catch-up block alone is more than the buffer holds (and
    # within twice the buffer, what the emulator forgives itself). The buffer is long (4 s of
    # stream), so only a host that stops reading for seconds could lose a sample.
    buffer_s, stall_s = 4.0, 6.0
    raw = bytearray()
    with streaming(family, buffer_s) as (emu, clock, port):
        read_until(port, lambda: family.made(emu) >= family.rate_hz // 10
                   and not emu._tx, raw)  # type: ignore[attr-defined]  # all handed over
        clock.stall(stall_s)
        after = family.rate_hz * (stall_s + 0.1)
        read_until(port, lambda: family.made(emu) >= after, raw)
        stop_and_drain(family, emu, port, raw)
    assert family.dropped(emu) == 0
    assert family.received(bytes(raw)) == family.made(emu) > after


@FAMILIES
@pytest.mark.parametrize("stall_s", [0.0, 1.0], ids=["on_time", "stalled"])
def test_a_host_that_does_not_read_loses_samples(family: Family, stall_s: float) -> None:
    buffer_s = 0.1
    # What the host can get without reading: the buffer and what the pty holds, in samples.
    held = (family.buffer_bytes(buffer_s) + PTY_HOLDS) // family.word_bytes
    with streaming(family, buffer_s) as (emu, clock, port):
        while family.made(emu) < 2 * held:  # the host does not read
            time.sleep(0.01)
        clock.stall(stall_s)
        made = family.made(emu)
        while family.made(emu) <= made + family.rate_hz * stall_s:  # the catch-up came
            time.sleep(0.01)
        raw = bytearray()
        stop_and_drain(family, emu, port, raw)
    assert family.dropped(emu) >= family.made(emu) - held
    assert family.received(bytes(raw)) + family.dropped(emu) == family.made(emu)


@FAMILIES
def test_a_host_that_reads_slower_than_the_stream_loses_samples_not_the_emulators_memory(
        family: Family) -> None:
    # The host reads half of what the emulator made, however fast this machine runs: the
    # buffer fills and blocks are dropped; what waits for it stays within twice the buffer, what
    # the emulator forgives itself.
    buffer_s = 0.1
    held = 2 * family.buffer_bytes(buffer_s)
    raw = bytearray()
    with streaming(family, buffer_s) as (emu, _, port):
        while family.made(emu) < family.rate_hz:  # a second of stream
            want = family.made(emu) * family.word_bytes // 2 - len(raw)
            if want > 0:
                raw += port.read(min(want, 65536))
            else:
                time.sleep(0.005)
        waiting = len(emu._tx)  # type: ignore[attr-defined]
        stop_and_drain(family, emu, port, raw)
    assert waiting <= held
    assert family.dropped(emu) > 0
    assert family.received(bytes(raw)) + family.dropped(emu) == family.made(emu)
