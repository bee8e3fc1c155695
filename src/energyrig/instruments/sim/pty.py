"""What an emulator on a pty shares (the PPK2's, the STM32 Power Shield's): :class:`PtyEmulator`.

It owns the pseudo-terminal a client opens as the instrument's serial port, the serving
thread (what the host writes is handed to :meth:`PtyEmulator._received`, what waits in
``_tx`` is written when the pty takes it, and :meth:`PtyEmulator._tick` runs every
``block_s``), the trigger wire and the edges injected by tests, merged in time order and fed
to the truth log (:meth:`PtyEmulator._take_edges`), and the forgetting of edges no later
sample needs; :func:`pty_emulator_parser` is their command line. A family's emulator adds its
protocol and its rendering of samples.
"""
from __future__ import annotations

import argparse
import errno
import logging
import os
import select
import threading
import time
import tty
from pathlib import Path

import numpy as np

from energyrig.instruments.base import OpenCloseBase
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.process import emulator_parser
from energyrig.instruments.sim.switch import LoadSwitch
from energyrig.instruments.sim.truth import TruthRecorder
from energyrig.instruments.sim.wire import NO_EDGES, EdgeArray, TriggerWire

log = logging.getLogger(__name__)


def pty_emulator_parser(module: str, description: str) -> argparse.ArgumentParser:
    """The command line every emulator takes (:func:`~energyrig.instruments.sim.process.emulator_parser`)
    and the options of a :class:`PtyEmulator`'s stream: ``--latency-s``, ``--block-s``,
    ``--tx-buffer-s``."""
    parser = emulator_parser(module, description)
    parser.add_argument("--latency-s", type=float, default=0.05,
                        help="how far the stream lags real time (default: %(default)s)")
    parser.add_argument("--block-s", type=float, default=0.005,
                        help="interval between sent blocks (default: %(default)s)")
    parser.add_argument("--tx-buffer-s", type=float, default=0.5,
                        help="transmit buffer in seconds of samples (default: %(default)s)")
    return parser


class PtyEmulator(OpenCloseBase):
    """An instrument on a pty, driven by a power model and the virtual trigger wire.

    Parameters
    ----------
    model:
        The board's current and the instrument's faults.
    wire:
        Path of the trigger wire socket to bind, or ``None`` (edges only from
        :meth:`inject_edges`).
    truth:
        Path of the truth log (JSONL) to write, or ``None``.
    latency_s:
        How far the stream lags real time, s.
    block_s:
        Interval between ticks (rendered and transmitted blocks), s.
    seed:
        Seed of the noise and fault random generator.
    load_switch:
        The load switch's file (:mod:`energyrig.instruments.sim.switch`), or ``None``.

    Attributes
    ----------
    label:
        What the instrument is called in the thread's name and the log (``"PPK2 emulator"``).
    """

    label = "emulator"

    def __init__(self, model: PowerModel, *, wire: str | os.PathLike[str] | None,
                 truth: str | os.PathLike[str] | None, latency_s: float, block_s: float,
                 seed: int, load_switch: str | os.PathLike[str] | None) -> None:
        self.model = model
        self.switch = LoadSwitch(None if load_switch is None else Path(load_switch))
        self.latency_ns = int(latency_s * 1e9)
        self.block_s = block_s
        self._wire = TriggerWire(wire) if wire is not None else None
        self._truth = TruthRecorder(truth) if truth is not None else None
        self._rng = np.random.default_rng(seed)
        self._injected: list[EdgeArray] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._master = self._slave = -1
        self.port = ""
        self._tx = bytearray()
        self._edges: EdgeArray = NO_EDGES
        self._rendered_ns = 0

    # -- what a family adds ----------------------------------------------------------------
    def _received(self, data: bytes) -> None:  # pragma: no cover - overridden
        """Take the bytes the host wrote."""
        raise NotImplementedError

    def _tick(self) -> None:  # pragma: no cover - overridden
        """Every ``block_s``: take the edges, render what is due, queue it in ``_tx``."""
        raise NotImplementedError

    def _report(self) -> None:
        """Log what the emulator did, once closed."""

    # -- lifecycle -------------------------------------------------------------------------
    def open(self) -> str:
        """Open the pty, bind the wire and start serving; returns the port path."""
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.port = os.ttyname(self._slave)
        if self._wire is not None:
            self._wire.open()
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name=self.label, daemon=True)
        self._thread.start()
        log.info("%s on %s", self.label, self.port)
        return self.port

    def close(self) -> None:
        """Stop serving, close the pty and the wire, finish the truth log."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._close_pty()
        if self._wire is not None:
            self._wire.close()
        if self._truth is not None:
            self._truth.close()
        self._report()

    def _close_pty(self) -> None:
        """Close the pty (a client then sees the port gone)."""
        for fd in (self._master, self._slave):
            if fd >= 0:
                os.close(fd)
        self._master = self._slave = -1

    def inject_edges(self, edges: EdgeArray) -> None:
        """Add edges as if they came from the wire (for a wire-less emulator)."""
        with self._lock:
            self._injected.append(edges)

    # -- serving loop ----------------------------------------------------------------------
    def _serve(self) -> None:
        next_tick = time.monotonic()
        while not self._stop.is_set():
            timeout = max(0.0, next_tick - time.monotonic())
            wlist = [self._master] if self._tx else []
            readable, writable, _ = select.select([self._master], wlist, [], timeout)
            if readable:
                self._receive()
            if writable:
                self._transmit()
            now = time.monotonic()
            if now >= next_tick:
                next_tick = max(next_tick + self.block_s, now)
                self._tick()
                if self._master < 0:
                    return  # disconnected by fault injection

    def _receive(self) -> None:
        try:
            data = os.read(self._master, 4096)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EIO):  # EIO: no client has the port open
                return
            raise
        self._received(data)

    def _transmit(self) -> None:
        if not self._tx or self._master < 0:
            return
        try:
            sent = os.write(self._master, self._tx)
        except BlockingIOError:
            return
        del self._tx[:sent]

    # -- edges -----------------------------------------------------------------------------
    def _take_edges(self, streaming: bool, supply_v: float, powered: bool
                    ) -> tuple[EdgeArray, int]:
        """Merge the wire's new edges and the injected ones in time order and log their
        windows' truth (at ``supply_v``, V, the board ``powered`` or not); the new edges and
        how many of them came after their samples were sent (while ``streaming``)."""
        new = [self._wire.drain()] if self._wire is not None else []
        with self._lock:
            new, self._injected = new + self._injected, []
        new = [e for e in new if len(e)]
        if not new:
            return NO_EDGES, 0
        edges = np.concatenate(new)
        late = (edges["t_ns"].astype(np.int64) <= self._rendered_ns) & streaming
        if late.any():
            log.warning("%s: %d trigger edge(s) arrived after their samples were sent "
                        "(latency %.0f ms too short for this load)", self.label,
                        int(late.sum()), self.latency_ns / 1e6)
        if self._truth is not None:
            self._truth.feed(edges, self.model, supply_v, powered, late)
        merged = np.concatenate([self._edges, edges])
        self._edges = merged[np.argsort(merged["t_ns"], kind="stable")]
        return edges, int(late.sum())

    def _trim_edges(self) -> None:
        """Forget edges that no future sample needs (keep the one that sets the state): a
        sample reaches back by the model's skew and its overhead."""
        if not len(self._edges):
            return
        horizon = self._rendered_ns - max(0, int(self.model.skew_s * 1e9)) - int(
            self.model.overhead_s * 1e9)
        first = int(np.searchsorted(self._edges["t_ns"].astype(np.int64), horizon,
                                    side="right")) - 1
        if first > 0:
            self._edges = self._edges[first:]
