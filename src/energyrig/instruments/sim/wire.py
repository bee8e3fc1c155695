"""The virtual trigger wire of the simulated bench (``firmware/TRIGGER_WIRE.md``).

The host build of the firmware sends one 16-byte datagram per trigger edge to a UNIX
datagram socket (the emulated Cortex-M4's bridge a 20-byte one, with the board's clock); :class:`TriggerWire` binds that socket and collects the edges in a
background thread for an emulated instrument, which :meth:`TriggerWire.drain`\\ s them
(reading whatever is still waiting in the socket itself).

Lost edges (a gap in ``seq``), malformed datagrams and edges whose time goes backwards are
counted and logged; :attr:`TriggerWire.healthy` is ``False`` once any happened.
"""
from __future__ import annotations

import logging
import os
import select
import socket
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt

from energyrig.errors import InstrumentError
from energyrig.instruments.base import OpenCloseBase
from energyrig.opfamilies import NAMES

log = logging.getLogger(__name__)

#: One edge record, exactly as on the wire (20 bytes, little-endian): ``clock_hz`` is the
#: CPU clock in force at the edge, Hz, 0 when the DUT does not say. A DUT may send the first
#: :data:`SHORT_RECORD_BYTES` alone (the host build does): its ``clock_hz`` is then 0.
EDGE_DTYPE = np.dtype([("t_ns", "<u8"), ("level", "u1"), ("accel", "u1"),
                       ("family", "<u2"), ("seq", "<u4"), ("clock_hz", "<u4")])
assert EDGE_DTYPE.itemsize == 20

#: Bytes of a record without its clock (the host build's record).
SHORT_RECORD_BYTES = 16


def family_name(family: int) -> str:
    """The op family of wire id ``family`` (the record's ``family``): the firmware's
    ``er_families`` in order from 1, as :data:`energyrig.opfamilies.NAMES` holds them;
    ``""`` for 0 (no op: a ``mark`` window) and for an id the table lacks."""
    return NAMES[family - 1] if 1 <= family <= len(NAMES) else ""


EdgeArray = npt.NDArray[np.void]
NO_EDGES: EdgeArray = np.zeros(0, dtype=EDGE_DTYPE)


def edge_records(t_ns: npt.ArrayLike, level: npt.ArrayLike, accel: npt.ArrayLike = 0,
                 seq0: int = 0, family: npt.ArrayLike = 0,
                 clock_hz: npt.ArrayLike = 0) -> EdgeArray:
    """Build edge records (e.g. to send on a wire in a test, or to feed a power model).

    Parameters
    ----------
    t_ns:
        CLOCK_MONOTONIC times of the edges, ns.
    level:
        1 for rising, 0 for falling.
    accel:
        1 where the op in the window uses a hardware accelerator.
    seq0:
        ``seq`` of the first record; the others follow +1 each.
    family:
        Wire id of the op family in the window (:func:`family_name`), on rising edges.
    clock_hz:
        The CPU clock in force, Hz (0: not stated).
    """
    t = np.atleast_1d(np.asarray(t_ns, dtype=np.uint64))
    out = np.zeros(t.shape[0], dtype=EDGE_DTYPE)
    out["t_ns"] = t
    out["level"] = level
    out["accel"] = accel
    out["family"] = family
    out["clock_hz"] = clock_hz
    out["seq"] = seq0 + np.arange(t.shape[0], dtype=np.uint32)
    return out


def send_edges(path: str | os.PathLike[str], edges: EdgeArray) -> None:
    """Send each record as one datagram to the wire at ``path`` (as the DUT does)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        for record in edges:
            sock.sendto(record.tobytes(), os.fspath(path))


class TriggerWire(OpenCloseBase):
    """Listener on the virtual trigger wire.

    Parameters
    ----------
    path:
        Filesystem path of the UNIX datagram socket to bind (a stale socket file there is
        replaced; any other file is an error).

    Use as a context manager; edges arrive in a daemon thread from :meth:`open` on.
    """

    _RECV_TIMEOUT_S = 0.05

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lost_edges = 0
        self.malformed = 0
        self.out_of_order = 0
        self.restarts = 0
        self.received = 0
        self._pending: list[EdgeArray] = []
        self._lock = threading.Lock()
        self._recv_lock = threading.Lock()
        self._buf = bytearray(64)
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._next_seq: int | None = None
        self._last_t_ns = 0

    # -- lifecycle -------------------------------------------------------------------------
    def open(self) -> None:
        """Bind the socket and start collecting edges."""
        if self.path.exists() or self.path.is_symlink():
            if not self.path.is_socket():
                raise InstrumentError(f"trigger wire {self.path}: exists and is not a socket; "
                                      "choose another --wire path")
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            sock.bind(os.fspath(self.path))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        except OSError as exc:
            sock.close()
            raise InstrumentError(f"trigger wire {self.path}: cannot bind ({exc})") from exc
        sock.setblocking(False)
        self._sock = sock
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="trigger-wire", daemon=True)
        self._thread.start()
        log.info("trigger wire listening on %s", self.path)

    def close(self) -> None:
        """Stop the listener and remove the socket file."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._sock is not None:
            with self._recv_lock:
                self._sock.close()
                self._sock = None
            self.path.unlink(missing_ok=True)

    # -- consumer side ---------------------------------------------------------------------
    def drain(self) -> EdgeArray:
        """Return the edges received since the previous call, in arrival order.

        Datagrams already waiting in the socket are read first, in the caller's thread: a
        consumer that was descheduled together with the listener still sees every edge sent
        before it called.
        """
        self._pull()
        with self._lock:
            pending, self._pending = self._pending, []
        if not pending:
            return NO_EDGES
        return np.concatenate(pending)

    @property
    def healthy(self) -> bool:
        """``False`` once an edge was lost, malformed or out of order."""
        return not (self.lost_edges or self.malformed or self.out_of_order)

    def stats(self) -> dict[str, int]:
        """Counters for logs and the truth log."""
        return {"received": self.received, "lost_edges": self.lost_edges,
                "malformed": self.malformed, "out_of_order": self.out_of_order,
                "restarts": self.restarts}

    # -- listener thread -------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            sock = self._sock
            if sock is None:
                return
            try:
                select.select([sock], [], [], self._RECV_TIMEOUT_S)
                self._pull()
            except OSError as exc:
                log.error("trigger wire %s: receive failed (%s); listener stops", self.path, exc)
                return

    def _pull(self) -> None:
        """Read every datagram waiting in the socket (never blocks)."""
        with self._recv_lock:
            if self._sock is None:
                return
            while True:
                try:
                    n = self._sock.recv_into(self._buf)
                except BlockingIOError:
                    return
                if n not in (SHORT_RECORD_BYTES, EDGE_DTYPE.itemsize):
                    self.malformed += 1
                    log.warning("trigger wire %s: dropped a %d-byte datagram (records are 16 "
                                "or 20 bytes)", self.path, n)
                    continue
                data = bytes(self._buf[:n]).ljust(EDGE_DTYPE.itemsize, b"\0")
                record = np.frombuffer(data, dtype=EDGE_DTYPE)
                self._check(record[0])
                with self._lock:
                    self._pending.append(record)
                self.received += 1

    def _check(self, rec: np.void) -> None:
        seq = int(rec["seq"])
        t_ns = int(rec["t_ns"])
        if self._next_seq is not None and seq != self._next_seq:
            if seq == 0:
                self.restarts += 1
                log.warning("trigger wire %s: seq restarted at 0 (DUT restarted)", self.path)
            else:
                lost = (seq - self._next_seq) & 0xFFFFFFFF
                self.lost_edges += lost
                log.error("trigger wire %s: %d edge(s) lost before seq %d", self.path, lost, seq)
        if t_ns < self._last_t_ns:
            self.out_of_order += 1
            log.error("trigger wire %s: edge seq %d goes back in time by %d ns", self.path, seq,
                      self._last_t_ns - t_ns)
        self._next_seq = (seq + 1) & 0xFFFFFFFF
        self._last_t_ns = max(self._last_t_ns, t_ns)
