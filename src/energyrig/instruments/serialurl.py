"""Open a serial port by device path or pyserial URL, with an rfc2217 client fast enough for
a PPK2's stream.

:func:`open_serial` is how the DUT link and the PPK2 driver open their port: a device path
(``/dev/ttyACM0``, a pty) or a URL pyserial knows (``socket://host:port``,
``rfc2217://host:port``: a port shared over the network by ``ser2net``, e.g. a labgrid
place's, :mod:`energyrig.lab.place`).

pyserial's rfc2217 client parses the Telnet stream one byte at a time and queues every byte
on its own, which caps a stream at about 50-100 kB/s on this machine; a PPK2 sends
400 kB/s (100 kS/s, 4 B a sample). :class:`Rfc2217Serial` keeps pyserial's negotiation and
replaces only its receive loop: the data between Telnet commands is queued in whole chunks.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import serial
from serial import rfc2217

from energyrig.errors import InstrumentError

class Transport(Protocol):
    """The part of ``serial.Serial`` a serial instrument's driver uses (a byte-level fake in
    tests)."""

    def read(self, size: int = 1) -> bytes: ...

    def write(self, data: bytes) -> int | None: ...

    def close(self) -> None: ...


def drain(read: Callable[[], bytes], refusal: str, quiet_s: float = 0.1,
          limit_s: float = 2.0) -> None:
    """Read with ``read`` and discard until the port has been quiet for ``quiet_s`` (a stream
    an earlier host left on), s.

    Raises
    ------
    InstrumentError
        It still sends after ``limit_s`` (s); the message is ``refusal``.
    """
    deadline = time.monotonic() + limit_s
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < quiet_s:
        if read():
            quiet_since = time.monotonic()
        if time.monotonic() > deadline:
            raise InstrumentError(refusal)


#: Bytes asked of the socket per receive.
_RECV_BYTES = 65536


class Rfc2217Serial(rfc2217.Serial):  # type: ignore[misc]
    """pyserial's RFC 2217 client with a chunked receive loop (same URL, same options).

    ``read`` returns at least the bytes asked for when they have arrived, and possibly more
    (up to one received chunk); ``in_waiting`` counts queued chunks, not bytes (> 0 exactly
    when data is waiting).
    """

    def _telnet_read_loop(self) -> None:
        mode, suboption, command = rfc2217.M_NORMAL, None, b""
        iac = rfc2217.IAC
        while self.is_open:
            try:
                data = self._socket.recv(_RECV_BYTES)
            except TimeoutError:  # wake up now and then to see whether the port is closed
                continue
            except OSError:
                data = b""
            if not data:  # the connection is lost
                self._read_buffer.put(None)
                return
            out = bytearray()
            i = 0
            while i < len(data):
                if mode == rfc2217.M_NORMAL:
                    j = data.find(iac, i)
                    end = len(data) if j < 0 else j
                    (out if suboption is None else suboption).extend(data[i:end])
                    if j >= 0:
                        mode = rfc2217.M_IAC_SEEN
                    i = end + 1
                    continue
                byte = data[i:i + 1]
                i += 1
                if mode == rfc2217.M_NEGOTIATE:
                    self._telnet_negotiate_option(command, byte)
                    mode = rfc2217.M_NORMAL
                elif byte == iac:  # a doubled IAC is a data byte 0xff
                    (out if suboption is None else suboption).extend(iac)
                    mode = rfc2217.M_NORMAL
                elif byte == rfc2217.SB:
                    suboption, mode = bytearray(), rfc2217.M_NORMAL
                elif byte == rfc2217.SE:
                    self._telnet_process_subnegotiation(bytes(suboption or b""))
                    suboption, mode = None, rfc2217.M_NORMAL
                elif byte in (rfc2217.DO, rfc2217.DONT, rfc2217.WILL, rfc2217.WONT):
                    command, mode = byte, rfc2217.M_NEGOTIATE
                else:
                    self._telnet_process_command(byte)
                    mode = rfc2217.M_NORMAL
            if out:
                self._read_buffer.put(bytes(out))


def open_serial(port: str, baudrate: int, timeout: float | None) -> serial.SerialBase:
    """Open ``port`` (a device path or a pyserial URL; ``rfc2217://``: :class:`Rfc2217Serial`)
    with ``timeout`` s per read (``0``: never wait).

    Raises
    ------
    serial.SerialException, OSError
        The port cannot be opened.
    """
    if port.startswith("rfc2217://"):
        return Rfc2217Serial(port, baudrate=baudrate, timeout=timeout)
    return serial.serial_for_url(port, baudrate=baudrate, timeout=timeout)

