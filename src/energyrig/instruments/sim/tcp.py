"""What the emulators reached over loopback TCP share: :class:`LoopbackEmulator`.

A server socket on ``127.0.0.1:<port>`` (0: any free port), one thread per client that
splits its bytes into requests at :attr:`~LoopbackEmulator.separator` and sends back each
reply with the separator, and one thread that ticks every :attr:`~LoopbackEmulator.tick_s`
under the emulator's lock (taking the trigger wire's edges, acquiring, rendering); a tick may
hand back a job to run without the lock (a deep record's rendering). The trigger wire and
the truth log are opened and closed with the server. The SCPI scope and the Otii server
build on it.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable

import numpy as np

from energyrig.instruments.base import OpenCloseBase
from energyrig.instruments.sim.truth import TruthRecorder
from energyrig.instruments.sim.wire import NO_EDGES, EdgeArray, TriggerWire

log = logging.getLogger(__name__)

#: What a tick hands back to run without the lock, or ``None``.
Job = Callable[[], None] | None


class LoopbackEmulator(OpenCloseBase):
    """A TCP server on loopback with a ticking acquisition, the wire and the truth log.

    Subclasses set :attr:`name`, :attr:`separator` and :attr:`tick_s`, and implement
    :attr:`address`, :meth:`reply` and :meth:`tick` (and :meth:`greeting` to speak first).

    Parameters
    ----------
    wire:
        Trigger wire socket to bind, or ``None`` (edges only from :meth:`inject_edges`).
    truth:
        Truth log (JSONL) to write, or ``None``.
    port:
        TCP port on 127.0.0.1 (0: any free one).
    """

    #: Names the threads and the log line.
    name = "emulator"
    #: What ends a request and a reply.
    separator = b"\n"
    #: Period of :meth:`tick`, s.
    tick_s = 0.005

    def __init__(self, *, wire: str | os.PathLike[str] | None,
                 truth: str | os.PathLike[str] | None, port: int) -> None:
        self.port = port
        self._wire = TriggerWire(wire) if wire is not None else None
        self._truth = TruthRecorder(truth) if truth is not None else None
        self._injected: list[EdgeArray] = []
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._server: socket.socket | None = None

    @property
    def address(self) -> str:  # pragma: no cover - overridden
        """What the emulator's first stdout line says: where a client reaches it."""
        raise NotImplementedError

    def reply(self, request: bytes) -> bytes | None:  # pragma: no cover - overridden
        """The reply to one request (without the separator), ``None``: none."""
        raise NotImplementedError

    def tick(self) -> Job:  # pragma: no cover - overridden
        """One step of the acquisition, under the lock; a job to run without it, or None."""
        raise NotImplementedError

    def greeting(self) -> bytes | None:
        """What the server sends a client on accept (``None``: nothing)."""
        return None

    # -- lifecycle -------------------------------------------------------------------------
    def open(self) -> str:
        """Listen, bind the wire, start serving; returns :attr:`address`."""
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(4)
        server.settimeout(0.1)
        self._server = server
        self.port = server.getsockname()[1]
        if self._wire is not None:
            self._wire.open()
        self._stop.clear()
        for target, what in ((self._accept, "accept"), (self._tick_loop, "acq")):
            thread = threading.Thread(target=target, name=f"{self.name}-{what}", daemon=True)
            thread.start()
            self._threads.append(thread)
        log.info("%s emulator on %s", self.name, self.address)
        return self.address

    def close(self) -> None:
        """Stop serving, close the wire and the truth log."""
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._wire is not None:
            self._wire.close()
        if self._truth is not None:
            self._truth.close()

    # -- edges -----------------------------------------------------------------------------
    def inject_edges(self, edges: EdgeArray) -> None:
        """Add edges as if they came from the wire."""
        with self._lock:
            self._injected.append(edges)

    def _drain(self) -> EdgeArray:
        """The edges that arrived since the last call, from the wire and injected (in their
        order of arrival)."""
        new = [self._wire.drain()] if self._wire is not None else []
        new += self._injected
        self._injected = []
        new = [e for e in new if len(e)]
        return np.concatenate(new) if new else NO_EDGES

    # -- threads ---------------------------------------------------------------------------
    def _tick_loop(self) -> None:
        while not self._stop.wait(self.tick_s):
            with self._lock:
                job = self.tick()
            if job is not None:
                job()

    def _accept(self) -> None:
        assert self._server is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,),
                                      name=f"{self.name}-client", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.1)
        buf = b""
        with conn:
            greeting = self.greeting()
            try:
                if greeting is not None:
                    conn.sendall(greeting + self.separator)
            except OSError:
                return
            while not self._stop.is_set():
                try:
                    data = conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while self.separator in buf:
                    line, buf = buf.split(self.separator, 1)
                    out = self.reply(line)
                    if out is not None:
                        try:
                            conn.sendall(out + self.separator)
                        except OSError:
                            return
