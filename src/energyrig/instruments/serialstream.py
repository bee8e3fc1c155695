"""A stream read from a serial port by a thread of its own: what the PPK2 and the STM32 Power
Shield drivers share (their protocols differ; the reading does not).

The driver opens ``_ser`` (a :class:`~energyrig.instruments.serialurl.Transport`), sets
``_stop_reader`` and starts ``_reader`` on :meth:`SerialStream._read_loop`; it implements
:meth:`SerialStream._feed`, which decodes the bytes read and stores the chunks. A failed read
ends the stream: it is logged, the waiting ``collect`` wakes, and every later call says why.
The driver's ``stop`` sends what ends the acquisition through :meth:`SerialStream._send_stop`,
which skips it on a link known lost and does not raise on one lost before the reader saw it.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import serial

from energyrig.errors import InstrumentError
from energyrig.instruments.serialurl import Transport
from energyrig.instruments.streaming import StreamAcquisition

log = logging.getLogger(__name__)

READ_BYTES = 16384
"""Most bytes one read takes from the port."""


class SerialStream(StreamAcquisition):
    """:class:`StreamAcquisition` fed by a reader thread from a serial port."""

    _ser: Transport | None = None
    _reader: threading.Thread | None = None
    _error: BaseException | None = None
    _stop_reader: threading.Event

    def _feed(self, data: bytes) -> None:  # pragma: no cover - overridden
        """Decode ``data`` (bytes read from the port, possibly none) and store its chunks."""
        raise NotImplementedError

    def _read(self) -> bytes:
        """What the port has, up to :data:`READ_BYTES` (none after its read timeout)."""
        assert self._ser is not None
        try:
            return self._ser.read(READ_BYTES)
        except (serial.SerialException, OSError) as exc:
            raise InstrumentError(f"{self.source}: read failed ({exc}); is the "
                                  f"{self.product} still connected?") from exc

    def _read_loop(self) -> None:
        """The reader thread: :meth:`_feed` what is read until stopped or a read fails."""
        while not self._stop_reader.is_set():
            try:
                data = self._read()
            except InstrumentError as exc:
                log.error("%s", exc)
                with self._cond:
                    self._error = exc
                    self._cond.notify_all()
                return
            self._feed(data)

    def _send_stop(self, send: Callable[[], object]) -> None:
        """Call ``send`` (what a stop tells the instrument) unless the link is known lost.

        A link lost before the reader read the loss (a bench host killed: which comes first
        is a race) makes ``send`` fail. That is logged and kept as the stream's error, so the
        stop's later sends are skipped as they are when the reader saw it first, and it is
        not raised: the stop still closes the port, and an error already in flight (the one
        that ends the session) is not replaced by this one.
        """
        if self._error is not None:
            return
        try:
            send()
        except InstrumentError as exc:
            log.warning("%s not stopped: %s", self.source, exc)
            with self._cond:
                self._error = exc
                self._cond.notify_all()

    def _check_alive(self) -> None:
        if self._reader is None:
            raise InstrumentError(f"{self.source}: not streaming; call start() first")
        if self._error is not None:
            raise InstrumentError(f"{self.source}: stream failed: {self._error}")
