"""STM32 Power Shield (X-NUCLEO-LPM01A) driver: a streaming
:class:`~energyrig.instruments.base.Acquisition`.

Layers: the transport is a pyserial port at 3686400 baud (or anything with
``read``/``write``/``close``); the protocol is :mod:`.protocol` (text commands, ``ack`` /
``error`` replies); processing is :class:`~.processing.StreamDecoder`.

:meth:`Lpm01a.start` takes the board (``htc``), checks it (``status``), sets it up as
MLPerf Tiny's energy runner does but for the current stream (``volt``, ``freq``,
``acqtime 0``: no time limit, ``output current``, ``format``, ``trigsrc sw``: start on the
command, ``eventsrc d7 both``: mark the window's edges), switches the supply on (``pwr on``)
and starts the acquisition; a reader thread decodes the stream into the buffer the
:class:`~energyrig.instruments.streaming.StreamAcquisition` keeps. D7's events are the
window: the rig's trigger output on D7, marked in the stream where each edge came.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import serial

from energyrig.errors import InstrumentError
from energyrig.instruments.base import ArmRequest, InstrumentInfo, Limits, RecordedCapture, Resolution
from energyrig.instruments.lpm01a.config import Lpm01aConfig
from energyrig.instruments.lpm01a.processing import D7_BIT, StreamDecoder, resolution_ranges
from energyrig.instruments.lpm01a.protocol import (
    BAUD_RATE,
    COMPLETED,
    Reply,
    error_detail,
    format_millis,
    format_rate,
    parse_reply,
)
from energyrig.instruments.serialurl import Transport, drain, open_serial
from energyrig.instruments.serialstream import SerialStream

log = logging.getLogger(__name__)

_READ_TIMEOUT_S = 0.02
_DETAIL_WAIT_S = 1.0
_STREAM_START_S = 2.0
_END_WAIT_S = 2.0
#: How far behind real time the stream's samples reach the host (USB, decoding), s.
TRANSFER_LAG_S = 0.05


class Lpm01a(SerialStream):
    """An STM32 Power Shield on a serial port, as a streaming acquisition.

    Parameters
    ----------
    port:
        Serial port or pyserial URL (:func:`~energyrig.instruments.serialurl.open_serial`).
    config:
        The fixture's ``[instrument]`` table (its ``port`` is not used, ``port`` is).
    transport:
        An already open transport instead of opening ``port`` (tests).
    clock:
        Monotonic clock of the bounds on the stream, s.
    """

    product = "STM32 Power Shield"

    def __init__(self, port: str | None, config: Lpm01aConfig, *,
                 transport: Transport | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if port is None and transport is None:
            raise InstrumentError("lpm01a: no port; name the Power Shield's serial port "
                                  "(e.g. port = \"/dev/ttyACM0\") in the fixture's [instrument]")
        self.config = config
        super().__init__(config.sample_rate_hz, config.history_s, config.buffer_s, clock=clock)
        self.port = port or "<transport>"
        self.version = ""
        self.board_id = ""
        self._ser: Transport | None = transport
        self._rx = bytearray()
        self._decoder: StreamDecoder | None = None
        self._reader: threading.Thread | None = None
        self._stop_reader = threading.Event()
        self._error: BaseException | None = None

    @property
    def source(self) -> str:
        return f"lpm01a:{self.port}"

    # -- commands --------------------------------------------------------------------------
    def _write(self, text: str) -> None:
        if self._ser is None:
            raise InstrumentError(f"{self.source}: not started")
        log.debug("%s: > %s", self.source, text)
        try:
            self._ser.write(text.encode("ascii") + b"\n")
        except (serial.SerialException, OSError) as exc:
            raise InstrumentError(f"{self.source}: write failed ({exc}); is the Power Shield "
                                  "still connected?") from exc

    def _line(self, deadline: float) -> str | None:
        """The next text line (without its end), or ``None`` at ``deadline`` (monotonic)."""
        while b"\n" not in self._rx:
            if time.monotonic() > deadline:
                return None
            self._rx += self._read()
        line, _, rest = bytes(self._rx).partition(b"\n")
        self._rx = bytearray(rest)
        return line.decode("ascii", errors="replace").strip()

    def command(self, text: str) -> str:
        """Send ``text``, wait for its reply; the value after ``ack <text>``.

        Raises
        ------
        InstrumentError
            The board answered ``error`` (the message has its detail) or nothing within
            ``reply_timeout_s``.
        """
        if self._reader is not None:
            raise InstrumentError(f"{self.source}: '{text}' while streaming; the board takes "
                                  "its settings between stop and start")
        self._write(text)
        deadline = time.monotonic() + self.config.reply_timeout_s
        reply: Reply | None = None
        while reply is None:
            line = self._line(deadline)
            if line is None:
                raise InstrumentError(f"{self.source}: no reply to '{text}' within "
                                      f"{self.config.reply_timeout_s} s; is this an STM32 "
                                      "Power Shield at 3686400 baud?")
            reply = parse_reply(line, text)
            if reply is None and line:
                log.debug("%s: < %s", self.source, line)
        if reply.ok:
            return reply.value
        detail = None
        end = time.monotonic() + _DETAIL_WAIT_S
        while detail is None:
            line = self._line(end)
            if line is None:
                break
            detail = error_detail(line)
        raise InstrumentError(f"{self.source}: the Power Shield refused '{text}': "
                              f"{detail or 'no detail given'}")

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Take the board, set it up, switch the supply on and stream into the buffer."""
        if self._reader is not None:
            return
        c = self.config
        if self._ser is None:
            try:
                self._ser = open_serial(self.port, BAUD_RATE, _READ_TIMEOUT_S)
            except (serial.SerialException, OSError) as exc:
                raise InstrumentError(f"{self.source}: cannot open the port ({exc})") from exc
        try:
            self._set_up()
        except BaseException:
            self._ser.close()
            self._ser = None
            raise
        self._reader = threading.Thread(target=self._read_loop,
                                        name=f"lpm01a-reader {self.port}", daemon=True)
        self._reader.start()
        log.info("%s: streaming %s at %d Hz, %.3f V", self.source, c.format, c.sample_rate_hz,
                 c.supply_v)

    def _set_up(self) -> None:
        """Take the board, check it, set it up and start the acquisition."""
        c = self.config
        self._rx.clear()
        self._write("stop")  # a stream left running by an earlier host
        drain(self._read, f"{self.source}: the device keeps sending after 'stop'; is this an "
                          "STM32 Power Shield?")
        self.command("htc")
        status = self.command("status")
        if status != "ok":
            raise InstrumentError(f"{self.source}: the Power Shield's status is {status!r}, "
                                  "not ok; run its autotest or power it again")
        self.version = self.command("version")
        self.board_id = self.command("powershield")
        self.command(f"volt {format_millis(c.supply_v)}")
        self.command(f"freq {format_rate(c.sample_rate_hz)}")
        self.command("acqtime 0")
        self.command("output current")
        self.command(f"format {c.format}")
        self.command("trigsrc sw")
        self.command("eventsrc d7 both")
        if c.dut_power:
            self.command("pwr on")
        self._decoder = StreamDecoder(c.format, c.sample_rate_hz, c.supply_v)
        self._new_stream()
        self._error = None
        self._stop_reader.clear()
        self.command("start")
        first, self._rx = bytes(self._rx), bytearray()
        self._feed(first)

    def stop(self) -> None:
        """Stop the acquisition, wait for its end, switch the supply off, release the board."""
        if self._ser is None:
            return
        try:
            if self._reader is not None:
                self._send_stop(lambda: self._write("stop"))  # not acknowledged: the stream ends
                self._stop_reader.set()
                self._reader.join()
                self._reader = None
                self._send_stop(self._finish)
            self._send_stop(self._release)
        finally:
            self._ser.close()
            self._ser = None

    def _release(self) -> None:
        """Switch the supply off if :meth:`start` switched it on; hand the board back."""
        if self.config.dut_power:
            self.command("pwr off")
        self.command("hrc")

    def _finish(self) -> None:
        """Read the stream to its end and its ``Acquisition completed`` line."""
        assert self._decoder is not None
        deadline = time.monotonic() + _END_WAIT_S
        while not self._decoder.ended and time.monotonic() < deadline:
            self._feed(self._read())
        self._rx = bytearray(self._decoder.tail)
        while not self._decoder.completed:
            line = self._line(deadline)
            if line is None:
                log.warning("%s: the acquisition did not end within %.0f s of stop",
                            self.source, _END_WAIT_S)
                return
            if COMPLETED in line:
                return

    # -- reader thread ---------------------------------------------------------------------
    def _feed(self, data: bytes) -> None:
        assert self._decoder is not None
        if data:
            chunk = self._decoder.feed(data)
            if chunk is not None:
                self._store(chunk)

    # -- acquisition -----------------------------------------------------------------------
    def arm(self, pre_s: float, window_s: float, post_s: float, windows: int = 1) -> None:
        """Mark the stream ``pre_s`` before the newest sample received (not before the fall
        of the window collected last). One window per record (``Limits.max_windows`` 1: the
        record does not yet carry where its losses lie, which cutting a group needs)."""
        ArmRequest(pre_s, window_s, post_s, windows).one_window(self.source)
        self._arm_stream(pre_s, window_s, post_s, _STREAM_START_S)

    def collect(self, timeout_s: float) -> RecordedCapture:
        """Wait for D7 to rise and fall (its events), plus ``post_s``; return the record."""
        kept = self._collect_window(timeout_s, D7_BIT, self.config.min_pulse_s, "D7")
        record = RecordedCapture(self.source, kept, trigger_bit=D7_BIT)
        if record.lost:
            log.warning("%s: %d samples lost inside the record", self.source, record.lost,
                        extra={"repeats": "PowerShield records with samples lost inside"})
        return record

    def limits(self) -> Limits:
        """The sampling frequency, a stream, :data:`TRANSFER_LAG_S` behind real time; the step
        of the stream's numbers at each current."""
        return Limits(sample_rate_hz=self.config.sample_rate_hz, max_record_s=None,
                      stream_lag_s=TRANSFER_LAG_S, resolution=Resolution(
                          resolution_ranges(self.config.format),
                          f"the step of the {self.config.format} number at each current"))

    def describe(self) -> InstrumentInfo:
        """Identity and settings for the run manifest."""
        d = self._decoder
        return InstrumentInfo(
            kind="lpm01a", name=f"STM32 Power Shield (FW {self.version or '?'})",
            address=self.port, sample_rate_hz=self.config.sample_rate_hz, serial=self.board_id,
            details={"supply_v": self.config.supply_v, "format": self.config.format,
                     "version": self.version, "trigger": "D7 events",
                     "samples_lost": 0 if d is None else d.stats.lost,
                     "corrupt_samples": 0 if d is None else d.stats.corrupt})
