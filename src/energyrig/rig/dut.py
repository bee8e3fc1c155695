"""The DUT link: the firmware protocol (``firmware/PROTOCOL.md``) over a byte transport.

Layers:

* **transport** — bytes in and out with a deadline: :class:`SerialTransport` (pyserial: a
  board's UART or any pty) and :class:`ProcessTransport` (the pipes of a child process, e.g.
  ``energyrig-dut --stdio``);
* **protocol** — :class:`Dut`: one request line out, one JSON reply line in, per-request
  timeouts; ``"ok": false`` becomes :class:`~energyrig.errors.DutError` carrying the
  firmware's message; a DUT that does not answer in time is a ``DutError`` naming the request;
* **process** — :class:`DutProcess` starts the host build with ``--pty`` or ``--stdio`` (and
  ``--trigger-wire``) and stops it;
* **opening** — :func:`open_dut`, the one way the rig reaches a fixture's DUT (``rig run``,
  ``rig sweep``, ``rig ops``, ``rig instruments check``).

Times are seconds on the host side; the firmware reports nanoseconds (``elapsed_ns``).
"""
from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import select
import subprocess
import termios
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self

import serial

from energyrig.errors import DutError
from energyrig.instruments.serialurl import open_serial
from energyrig.instruments.sim.process import terminate

if TYPE_CHECKING:
    from energyrig.fixtures.schema import Fixture

log = logging.getLogger(__name__)

_LINE_MAX = 1 << 20  # a long catalogue still arrives as one line

#: The ranges the firmware protocol takes for the numbers the rig sends (inclusive;
#: firmware/PROTOCOL.md): ``prep``'s ``key_bits``, ``payload_bytes`` and ``seed``, and
#: ``run``'s batch ``n`` (the rig never sends a batch of 0 ops but for the overhead window).
PROTOCOL_RANGES: dict[str, tuple[int, int]] = {
    "key_bits": (1, 2**16 - 1),
    "payload_bytes": (1, 2**32 - 1),
    "seed": (0, 2**32 - 1),
    "batch": (1, 10**9),
}


class DutTransport(Protocol):
    """Bytes to and from the DUT."""

    name: str

    def write(self, data: bytes) -> None: ...

    def read_some(self, timeout_s: float) -> bytes:
        """Whatever arrived within ``timeout_s`` (possibly nothing)."""
        ...

    def close(self) -> None: ...


#: What a serial port or pty raises when the link breaks: pyserial's own error, the OS's,
#: and termios.error (not an OSError) from tcdrain/ioctl on a pty whose DUT just died.
_LINK_ERRORS = (serial.SerialException, OSError, termios.error)


#: Poll interval of a serial port without a file descriptor to select on, s.
_POLL_S = 0.002


def _fileno(ser: serial.SerialBase) -> int | None:
    """The descriptor ``select`` can wait on (a device, a pty, a ``socket://`` URL), or
    ``None`` (an ``rfc2217://`` URL)."""
    try:
        return int(ser.fileno())
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None


class SerialTransport:
    """A serial port or pty through pyserial: a device path (``/dev/ttyACM0``) or a pyserial
    URL (``rfc2217://host:port``, ``socket://host:port``: a port shared over the network, e.g.
    a labgrid place's :mod:`energyrig.lab`)."""

    def __init__(self, port: str, baudrate: int = 115200) -> None:
        self.name = port
        try:
            self._ser = open_serial(port, baudrate, timeout=0)
        except _LINK_ERRORS as exc:
            raise DutError(f"DUT on {port}: cannot open the port ({exc})") from exc
        self._fd = _fileno(self._ser)

    def write(self, data: bytes) -> None:
        try:
            self._ser.write(data)
            self._ser.flush()
        except _LINK_ERRORS as exc:
            raise DutError(f"DUT on {self.name}: write failed ({exc})") from exc

    def read_some(self, timeout_s: float) -> bytes:
        try:
            if self._fd is None:
                return self._poll(timeout_s)
            ready, _, _ = select.select([self._fd], [], [], max(0.0, timeout_s))
            return self._ser.read(self._ser.in_waiting or 1) if ready else b""
        except _LINK_ERRORS as exc:
            raise DutError(f"DUT on {self.name}: read failed ({exc})") from exc

    def _poll(self, timeout_s: float) -> bytes:
        """Read a port without a file descriptor (rfc2217: a reader thread fills a queue;
        reading at least a byte makes pyserial check the connection is still there)."""
        deadline = time.monotonic() + timeout_s
        while not (data := self._ser.read(max(1, self._ser.in_waiting))):
            if time.monotonic() >= deadline:
                return b""
            time.sleep(_POLL_S)
        return data

    def close(self) -> None:
        try:
            self._ser.close()
        except _LINK_ERRORS as exc:  # the DUT died first: nothing is left to close cleanly
            log.info("DUT on %s: closing the port: %s", self.name, exc)


class ProcessTransport:
    """The standard input and output of a running child process."""

    def __init__(self, proc: subprocess.Popen[bytes], name: str) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.name = name
        self._proc = proc
        self._out = proc.stdout.fileno()

    def write(self, data: bytes) -> None:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise DutError(f"DUT {self.name}: it exited (code {self._proc.poll()})") from exc

    def read_some(self, timeout_s: float) -> bytes:
        ready, _, _ = select.select([self._out], [], [], max(0.0, timeout_s))
        if not ready:
            return b""
        data = os.read(self._out, 65536)
        if not data:
            raise DutError(f"DUT {self.name}: it closed its output "
                           f"(exit code {self._proc.poll()})")
        return data

    def close(self) -> None:
        """Nothing: the process (and its pipes) belong to :class:`DutProcess`."""


class DutRefused(DutError):
    """The firmware answered ``"ok": false``; :attr:`reply` is its whole reply."""

    def __init__(self, message: str, reply: dict[str, Any]) -> None:
        super().__init__(message)
        self.reply = reply


@dataclass(frozen=True)
class OpInfo:
    """One entry of the firmware's catalogue (the ``ops`` reply).

    ``payload`` is ``(min, max, multiple)`` in bytes, or ``None`` when the op takes none.
    """

    name: str
    family: str
    backend: str
    key_bits: tuple[int, ...] = ()
    curves: tuple[str, ...] = ()
    payload: tuple[int, int, int] | None = None

    @classmethod
    def from_reply(cls, obj: dict[str, Any]) -> OpInfo:
        p = obj.get("payload")
        return cls(name=obj["name"], family=obj.get("family", ""),
                   backend=obj.get("backend", "software"),
                   key_bits=tuple(obj.get("key_bits", ())), curves=tuple(obj.get("curves", ())),
                   payload=None if p is None else (p["min"], p["max"], p["multiple"]))


@dataclass(frozen=True)
class RunReply:
    """The reply to ``run n=N``: the batch as the firmware timed it."""

    n: int
    cycles: int
    elapsed_ns: int
    stack_bytes: int
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def elapsed_s(self) -> float:
        return self.elapsed_ns * 1e-9


class Dut:
    """The firmware protocol over a transport.

    Parameters
    ----------
    transport:
        Where the bytes go.
    timeout_s:
        Longest wait for a reply to a request that does not run a batch, s.
    """

    def __init__(self, transport: DutTransport, timeout_s: float = 5.0) -> None:
        self.transport = transport
        self.timeout_s = timeout_s
        self._buf = bytearray()
        # Requests that timed out: each still gets exactly one reply line (PROTOCOL.md), which
        # must be skipped before the reply to the next request.
        self._unanswered = 0
        # Before the first reply a board may print text of its own at reset (the ESP32's ROM
        # bootloader does, whatever the firmware configures); such lines are not replies.
        self._replied = False
        #: Requests sent so far (a count): what the DUT was asked since an earlier moment.
        self.requests = 0

    def _line(self, line: str, timeout: float, deadline: float) -> bytes:
        """The next reply line, or DutError naming the request ``line`` at the deadline."""
        while (end := self._buf.find(b"\n")) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or len(self._buf) > _LINE_MAX:
                self._unanswered += 1
                raise DutError(f"DUT {self.transport.name} did not answer {line!r} within "
                               f"{timeout:g} s; is it hung or not running the energyrig "
                               "firmware?")
            self._buf += self.transport.read_some(min(remaining, 0.5))
        raw = bytes(self._buf[:end]).strip()
        del self._buf[:end + 1]
        return raw

    def request(self, line: str, timeout_s: float | None = None) -> dict[str, Any]:
        """Send one request line; return the JSON reply.

        Raises
        ------
        DutError
            No complete reply within the timeout (naming the request), a reply that is not
            JSON, or ``"ok": false`` (with the firmware's error).
        """
        if not line.isascii() or not line.isprintable():
            raise DutError(f"DUT {self.transport.name}: {line!r} is not one line of printable "
                           "ASCII (firmware/PROTOCOL.md): not sent")
        timeout = self.timeout_s if timeout_s is None else timeout_s
        log.debug("DUT %s <- %s", self.transport.name, line)
        self.requests += 1
        self.transport.write(line.encode("ascii") + b"\n")
        deadline = time.monotonic() + timeout
        while True:
            raw = self._line(line, timeout, deadline)
            if not self._replied and not raw.startswith(b"{"):
                log.info("DUT %s: boot text before the first reply skipped: %r",
                         self.transport.name, raw[:120])
                continue
            self._replied = True
            if not self._unanswered:
                break
            self._unanswered -= 1
            log.warning("DUT %s: late reply to an earlier request skipped: %r",
                        self.transport.name, raw[:120])
        try:
            reply = json.loads(raw)
            if not isinstance(reply, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            raise DutError(f"DUT {self.transport.name}: reply to {line!r} is not a JSON object: "
                           f"{raw[:120]!r}") from exc
        log.debug("DUT %s -> %s", self.transport.name, raw[:200])
        if reply.get("ok") is not True:
            raise DutRefused(f"DUT {self.transport.name}: {line!r} failed: "
                             f"{reply.get('error', 'no error message')}", reply)
        return reply

    # -- requests --------------------------------------------------------------------------
    def hello(self) -> dict[str, Any]:
        """Firmware identity (``protocol``, ``firmware``, ``board``, ``cycle_hz``, ...)."""
        return self.request("hello")

    def ops(self) -> list[OpInfo]:
        """The firmware's catalogue."""
        return [OpInfo.from_reply(o) for o in self.request("ops")["ops"]]

    def prep(self, op: str, *, key_bits: int | None = None, payload_bytes: int | None = None,
             curve: str | None = None, seed: int | None = None, backend: str | None = None,
             timeout_s: float | None = None) -> dict[str, Any]:
        """Prepare ``op`` (keys, buffers, self-test) outside any window."""
        args = {"key_bits": key_bits, "payload_bytes": payload_bytes, "curve": curve,
                "seed": seed, "backend": backend}
        words = [f"{k}={v}" for k, v in args.items() if v is not None]
        return self.request(" ".join(["prep", op, *words]), timeout_s)

    def run(self, n: int, timeout_s: float, settle_s: float = 0.0) -> RunReply:
        """Run ``n`` ops of the prepared op inside one trigger window.

        The firmware first runs the op once outside the window (warm-up), then idles
        ``settle_s`` (rounded up to whole ms; the baseline span before the rising edge), then
        opens the window. ``timeout_s`` is the wait for the reply beyond ``settle_s``.
        """
        reply = self.request(*self._run_request(f"run n={n}", timeout_s, settle_s, 1))
        return RunReply(n=int(reply["n"]), cycles=int(reply["cycles"]),
                        elapsed_ns=int(reply["elapsed_ns"]),
                        stack_bytes=int(reply.get("stack_bytes", 0)), raw=reply)

    def run_windows(self, n: int, windows: int, timeout_s: float,
                    settle_s: float = 0.0) -> list[RunReply]:
        """Run ``windows`` trigger windows of ``n`` ops each in one request
        (``run n=N windows=R``): one warm-up run, then per window ``settle_s`` of idle
        (rounded up to whole ms; that window's baseline span) and the window. ``timeout_s``
        is the wait for the reply beyond the settles. One :class:`RunReply` per window,
        as the firmware timed it.
        """
        reply = self.request(*self._run_request(f"run n={n} windows={windows}", timeout_s,
                                                settle_s, windows))
        return [RunReply(n=int(reply["n"]), cycles=int(c), elapsed_ns=int(t),
                         stack_bytes=int(reply.get("stack_bytes", 0)), raw=reply)
                for c, t in zip(reply["cycles"], reply["elapsed_ns"], strict=True)]

    @staticmethod
    def _run_request(request: str, timeout_s: float, settle_s: float,
                     windows: int) -> tuple[str, float]:
        """``request`` with its ``settle_ms`` and the wait for its reply, s."""
        if settle_s > 0:
            ms = whole_ms(settle_s)
            request += f" settle_ms={ms}"
            timeout_s += windows * ms / 1000
        return request, timeout_s

    def clock(self, hz: int) -> dict[str, Any]:
        """Run the CPU at ``hz`` (Hz, one of ``hello``'s ``cpu_hz_levels``) from now on; the
        reply states the clock in force (``cpu_hz``) and the cycle counter's rate
        (``cycle_hz``). A port that cannot set its clock refuses (``DutRefused``, -ENOTSUP)."""
        return self.request(f"clock hz={hz}")

    def idle(self, seconds: float) -> float:
        """Stay idle (trigger low) for ``seconds`` (rounded up to whole ms); returns the
        time the firmware spent, s."""
        ms = whole_ms(seconds)
        return self.request(f"idle ms={ms}", self.timeout_s + ms / 1000)["idle_ns"] * 1e-9


def whole_ms(seconds: float) -> int:
    """``seconds`` rounded up to whole milliseconds, 1 .. 60000 (the firmware's range)."""
    return max(1, min(60000, math.ceil(seconds * 1000)))


class DutProcess:
    """The host build of the firmware as a child process, with its protocol link.

    Parameters
    ----------
    command:
        The program and its arguments (``build/host/energyrig-dut``).
    link:
        ``"pty"``: start with ``--pty`` and talk over the printed pty with pyserial (the way a
        board is reached); ``"stdio"``: start with ``--stdio`` and talk over the pipes.
    trigger_wire:
        Path of the trigger wire socket (``--trigger-wire``), or ``None``.
    timeout_s:
        Request timeout of the link (and start-up timeout).
    connect:
        ``False``: start the process and learn its pty (:attr:`port`) without opening it, for
        another program to serve (``ser2net`` in :mod:`energyrig.rig.labsim`); ``"pty"`` only.

    ``with DutProcess(...) as proc:`` gives :attr:`dut`; leaving stops the process.
    """

    def __init__(self, command: tuple[str, ...] | list[str], link: str = "pty", *,
                 trigger_wire: str | os.PathLike[str] | None = None, board: str | None = None,
                 timeout_s: float = 5.0, connect: bool = True) -> None:
        if link not in ("pty", "stdio"):
            raise ValueError(f"DutProcess link must be 'pty' or 'stdio', not {link!r}")
        self.argv = [*command, f"--{link}"]
        if trigger_wire is not None:
            self.argv += ["--trigger-wire", os.fspath(trigger_wire)]
        if board:
            self.argv += ["--board", board]
        if not connect and link != "pty":
            raise ValueError("DutProcess connect=False needs link 'pty'")
        self.link = link
        self.timeout_s = timeout_s
        self.connect = connect
        self.port = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._transport: DutTransport | None = None
        self.dut: Dut | None = None

    def __enter__(self) -> Self:
        try:
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          bufsize=0)
        except OSError as exc:
            raise DutError(f"cannot start the DUT {' '.join(self.argv)} ({exc}); build it with "
                           "`make firmware-host`") from exc
        try:
            if self.link == "pty":
                self.port = self._read_pty_path()
                if not self.connect:
                    return self
                self._transport = SerialTransport(self.port)
            else:
                self._transport = ProcessTransport(self._proc, f"pid {self._proc.pid}")
        except DutError:
            self._stop()
            raise
        self.dut = Dut(self._transport, self.timeout_s)
        return self

    def _read_pty_path(self) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        out = self._proc.stdout.fileno()
        line = b""
        deadline = time.monotonic() + self.timeout_s
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([out], [], [], max(0.0, deadline - time.monotonic()))
            data = os.read(out, 256) if ready else b""
            if not data:
                raise DutError(f"the DUT {' '.join(self.argv)} printed no pty path within "
                               f"{self.timeout_s:g} s (exit code {self._proc.poll()})")
            line += data
        return line.decode().strip()

    def _stop(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if self._proc is None:
            return
        terminate(self._proc, f"the DUT {self.argv[0]}", timeout_s=5.0)
        self._proc = None
        self.dut = None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop()


@contextlib.contextmanager
def open_dut(fixture: Fixture, *, trigger_wire: str | os.PathLike[str] | None = None
             ) -> Iterator[Dut]:
    """The fixture's DUT, open for requests (``with open_dut(fx) as dut:``).

    ``link = "serial"`` opens the board's port; ``"pty"``/``"stdio"`` start the fixture's
    ``command`` (the host build) and stop it on the way out; a fixture naming a labgrid place
    (``[lab]``) holds the place meanwhile and opens its ``dut`` port. ``trigger_wire`` is the
    virtual trigger wire a started host DUT sends its edges on (the simulated bench), else
    none.
    """
    from energyrig.fixtures.loader import resolve_command

    if fixture.lab is not None:
        from energyrig.lab.place import held_place

        with held_place(fixture) as placed, open_dut(placed, trigger_wire=trigger_wire) as dut:
            yield dut
        return
    cfg = fixture.dut
    if cfg.link == "serial":
        assert cfg.port is not None  # the fixture schema requires it
        transport = SerialTransport(cfg.port, cfg.baudrate)
        try:
            yield Dut(transport, cfg.timeout_s)
        finally:
            transport.close()
        return
    with DutProcess(resolve_command(fixture), cfg.link, trigger_wire=trigger_wire,
                    board=cfg.board, timeout_s=cfg.timeout_s) as proc:
        assert proc.dut is not None
        yield proc.dut
