"""Nordic Power Profiler Kit II (PPK2) driver: the :class:`~energyrig.instruments.base.Acquisition`
of a streaming instrument.

Layers: the transport is a pyserial port (or anything with ``read``/``write``/``close``);
the protocol is :mod:`energyrig.instruments.ppk2.protocol` (commands) and
:mod:`energyrig.instruments.ppk2.metadata` (calibration text); processing is the vectorised
:class:`~energyrig.instruments.ppk2.decode.Ppk2Decoder`.

What it does better than the ``ppk2-api`` package (whose command constants and device
discovery it uses):

* the calibration metadata is read until ``END`` however many reads it takes (``ppk2-api``
  keeps only the read that contains ``END`` and silently loses the keys before it, among
  them the range-0 offset);
* a background thread reads the port continuously into the decoder; decoded chunks go to a
  bounded buffer that never drops data silently: outside an armed window only the last
  ``history_s`` are kept (by design, for ``pre_s``), inside one an overflow sets a flag and
  :meth:`Ppk2.collect` raises :class:`~energyrig.errors.InstrumentError` (``ppk2-api``'s
  ``PPK2_MP`` quietly discards its oldest data);
* the 6-bit sample counter is checked; lost samples arrive as ``Chunk.gaps`` and advance
  the sample index, so windows that lost samples are flagged downstream;
* a loss the counter cannot count (64 samples or more, e.g. a second lost while the host
  was stalled) is found against the host's clock (:class:`~energyrig.instruments.ppk2.clock.StreamClock`):
  the stream is re-synchronised, so later records are on time, and the records it falls in
  are flagged ``stream_loss`` (:meth:`Ppk2.collect` waits for a suspect lag to resolve);
* a port that disappears mid-stream is an error on the next call, not a hang.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

import serial
from ppk2_api.ppk2_api import PPK2_API

from energyrig.capture import Chunk
from energyrig.errors import InstrumentError
from energyrig.flags import STREAM_LOSS
from energyrig.instruments.base import (
    InstrumentInfo,
    Limits,
    RecordedCapture,
    Resolution,
)
from energyrig.instruments.ppk2.clock import StreamClock, StreamLoss
from energyrig.instruments.ppk2.config import Ppk2Config
from energyrig.instruments.ppk2.decode import SAMPLE_RATE_HZ, Ppk2Decoder, range_steps
from energyrig.instruments.ppk2.metadata import (
    MetadataAccumulator,
    Ppk2Calibration,
    stated_calibration,
)
from energyrig.instruments.ppk2.ports import usb_serial
from energyrig.instruments.ppk2.protocol import (
    POWER_MODE_AMPERE,
    POWER_MODE_SOURCE,
    Command,
    regulator_set,
)
from energyrig.instruments.serialurl import Transport, drain, open_serial
from energyrig.instruments.serialstream import SerialStream
from energyrig.instruments.streaming import STREAM_MAX_WINDOWS

log = logging.getLogger(__name__)

_READ_TIMEOUT_S = 0.02
_STREAM_START_S = 2.0
#: How far behind real time the stream's samples reach the host (USB, decoding), s.
TRANSFER_LAG_S = 0.05


def discover() -> str:
    """The port of the one PPK2 attached (``ppk2_api`` discovery).

    Raises
    ------
    InstrumentError
        None or several found.
    """
    ports = PPK2_API.list_devices()
    if len(ports) == 1:
        return str(ports[0])
    if not ports:
        raise InstrumentError("no PPK2 found on USB; plug it in, or name its port "
                              "(e.g. /dev/ttyACM0) in the fixture")
    raise InstrumentError(f"several PPK2s found ({', '.join(map(str, ports))}); name the port "
                          "to use in the fixture")


class Ppk2(SerialStream):
    """A PPK2 on a serial port, as a streaming :class:`~energyrig.instruments.base.Acquisition`.

    Parameters
    ----------
    port:
        Serial port (``/dev/ttyACM0``, a pty of the emulator, a pyserial URL such as
        ``rfc2217://host:port``: :func:`~energyrig.instruments.serialurl.open_serial`);
        ``None`` finds the one PPK2 attached.
    config:
        Mode, supply and buffer sizes (the fixture's ``[instrument]`` table; its ``port`` is
        not used, ``port`` is).
    transport:
        An already open transport to use instead of opening ``port`` with pyserial (tests).
    clock:
        Monotonic clock of the bounds on the stream (:meth:`arm`, :meth:`collect`,
        :meth:`wait_received`), s (tests pass a fake one).
    """

    product = "PPK2"

    def __init__(self, port: str | None = None, config: Ppk2Config | None = None, *,
                 transport: Transport | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config or Ppk2Config()
        super().__init__(SAMPLE_RATE_HZ, self.config.history_s, self.config.buffer_s,
                         clock=clock)
        self.port = port or ("<transport>" if transport is not None else discover())
        self.calibration: Ppk2Calibration | None = None
        self.metadata_text = ""
        self._usb_serial: str | None = None
        self._ser: Transport | None = transport
        self._decoder: Ppk2Decoder | None = None
        self._clock = StreamClock(SAMPLE_RATE_HZ)
        self._losses: deque[StreamLoss] = deque(maxlen=64)
        self._reader: threading.Thread | None = None
        self._stop_reader = threading.Event()
        self._error: BaseException | None = None
        self.period_s = 1.0 / SAMPLE_RATE_HZ

    @property
    def source(self) -> str:
        return f"ppk2:{self.port}"

    # -- commands --------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        if self._ser is None:
            raise InstrumentError(f"{self.source}: not started")
        try:
            self._ser.write(data)
        except (serial.SerialException, OSError) as exc:
            raise InstrumentError(f"{self.source}: write failed ({exc}); is the PPK2 still "
                                  "connected?") from exc

    def _command(self, cmd: Command, *args: int) -> None:
        log.debug("%s: %s %s", self.source, cmd.name, args)
        self._write(bytes((cmd, *args)))

    def set_dut_power(self, on: bool) -> None:
        """Switch the DUT power output on or off."""
        self._command(Command.DEVICE_RUNNING_SET, 1 if on else 0)

    def read_metadata(self) -> Ppk2Calibration:
        """Ask for the calibration and read it until ``END``, however it is split."""
        self._command(Command.GET_META_DATA)
        acc = MetadataAccumulator(self.source)
        deadline = time.monotonic() + self.config.metadata_timeout_s
        while not acc.feed(self._read()):
            if time.monotonic() > deadline:
                raise InstrumentError(f"{self.source}: no complete calibration metadata within "
                                      f"{self.config.metadata_timeout_s} s; is this a PPK2?")
        if acc.rest:
            log.warning("%s: %d bytes after the metadata discarded", self.source, len(acc.rest))
        self.metadata_text = acc.text
        return acc.calibration()

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Open the port, read the calibration, configure mode, supply and DUT power, and
        start streaming into the buffer."""
        if self._reader is not None:
            return
        s = self.config
        if self._ser is None:
            try:
                self._ser = open_serial(self.port, 115200, _READ_TIMEOUT_S)
            except (serial.SerialException, OSError) as exc:
                raise InstrumentError(f"{self.source}: cannot open the port ({exc})") from exc
        self._command(Command.AVERAGE_STOP)
        drain(self._read, f"{self.source}: the device keeps sending after AVERAGE_STOP; is "
                          "this a PPK2?")
        self.calibration = self.read_metadata()
        self._command(Command.SET_POWER_MODE,
                      POWER_MODE_SOURCE if s.mode == "source" else POWER_MODE_AMPERE)
        self._write(regulator_set(s.supply_mv))
        if s.dut_power:
            self.set_dut_power(True)
        self._decoder = Ppk2Decoder(self.calibration, s.supply_mv)
        self._clock = StreamClock(SAMPLE_RATE_HZ)
        self._losses.clear()
        self._new_stream()
        self._error = None
        self._stop_reader.clear()
        self._command(Command.AVERAGE_START)
        self._reader = threading.Thread(target=self._read_loop, name=f"ppk2-reader {self.port}",
                                        daemon=True)
        self._reader.start()
        log.info("%s: streaming (%s meter, %.3f V)", self.source, s.mode, s.supply_v)

    def stop(self) -> None:
        """Stop streaming, switch DUT power off if :meth:`start` switched it on, close."""
        if self._ser is None:
            return
        try:
            if self._reader is not None:
                self._stop_reader.set()
                self._reader.join()
                self._reader = None
            self._send_stop(self._stop_commands)
        finally:
            self._ser.close()
            self._ser = None

    def _stop_commands(self) -> None:
        """End the measurement; switch the DUT's supply off if :meth:`start` switched it on."""
        self._command(Command.AVERAGE_STOP)
        if self.config.dut_power:
            self.set_dut_power(False)

    # -- reader thread ---------------------------------------------------------------------
    def _feed(self, data: bytes) -> None:
        """Decode ``data``; a loss the counter cannot count is found against the host's
        clock, added to the decoder's count and stored with the chunk."""
        assert self._decoder is not None
        if not data:
            return
        chunk = self._decoder.feed(data)
        if chunk is not None:
            loss = self._clock.update(time.monotonic(), self._decoder.next_index)
            if loss is not None:
                log.warning("%s: %d samples (%.3f s) lost that the counter could not count "
                            "(fewer samples than the host's clock says were taken); the "
                            "stream is re-synchronised", self.source, loss.samples,
                            loss.samples / SAMPLE_RATE_HZ,
                            extra={"repeats": "losses of the PPK2 stream its counter "
                                              "could not count"})
                self._decoder.add_loss(loss.samples)
            self._store(chunk, loss)

    def _store(self, chunk: Chunk, loss: StreamLoss | None = None) -> None:
        """Keep ``chunk`` and the loss found with it, in one step under the lock."""
        with self._cond:
            if loss is not None:
                self._losses.append(loss)
            super()._store(chunk)

    # -- acquisition -----------------------------------------------------------------------
    def arm(self, pre_s: float, window_s: float, post_s: float, windows: int = 1) -> None:
        """Mark the stream ``pre_s`` before the newest received sample (but not before the
        fall of the window collected last); the record holds ``windows`` trigger windows.

        Waits until the stream holds ``pre_s`` of samples, so the first window after
        :meth:`start` has its lead-in too (an error when no sample came for ``pre_s`` + 2 s).
        """
        self._arm_stream(pre_s, window_s, post_s, _STREAM_START_S, windows)

    def collect(self, timeout_s: float) -> RecordedCapture:
        """Wait for the trigger to rise and fall, plus ``post_s``; return the record.

        The window is the first low-to-high transition after the newest sample received at
        :meth:`arm` (if the trigger was high then, a fall comes first).

        ``timeout_s`` (s) counts from the stream's progress, never from the call
        (:meth:`~energyrig.instruments.streaming.StreamAcquisition._collect_window`): a
        stream that runs on without the window is a timeout, a PPK2 that stopped streaming
        is reported. A record reaching into a lag the host's clock found is waited on until
        the lag resolves, and flagged ``stream_loss`` when it reaches into a loss.
        """
        kept = self._collect_window(timeout_s, self.config.trigger_bit,
                                    self.config.min_pulse_s, f"D{self.config.trigger_bit}")
        spans = self._loss_spans(kept)
        record = RecordedCapture(self.source, kept, trigger_bit=self.config.trigger_bit,
                                 flags=(STREAM_LOSS,) if spans else (), loss_spans=spans)
        if record.lost:
            log.warning("%s: %d samples lost inside the record", self.source, record.lost,
                        extra={"repeats": "PPK2 records with samples lost inside"})
        return record

    def _suspect_from(self) -> int | None:
        """Where a lag the host's clock found is still in doubt (the stream clock's)."""
        return self._clock.suspect_from

    def _settle_s(self) -> float:
        """How long a lag may take to resolve, s (the stream clock's)."""
        return self._clock.settle_s

    def _newest(self) -> int:
        """The absolute index after the newest sample received (call with the lock held;
        before any, the decoder's next)."""
        chunks = self._buffer.chunks
        if chunks:
            return chunks[-1].end_index
        assert self._decoder is not None
        return self._decoder.next_index

    def _loss_spans(self, chunks: tuple[Chunk, ...]) -> tuple[tuple[int, int], ...]:
        """The spans of a loss found against the host's clock, or of a lag still suspect,
        that ``chunks`` reach into (``stream_loss``), ``[first, end)`` absolute indices
        clipped to them."""
        if not chunks:
            return ()
        lo, hi = chunks[0].start_index, chunks[-1].end_index
        with self._cond:
            spans = [(x.first_index, x.end_index) for x in self._losses]
            suspect = self._clock.suspect_from
        if suspect is not None:
            spans.append((suspect, hi))  # collect() waited for it as long as it could
        return tuple((max(a, lo), min(b, hi)) for a, b in spans if a < hi and b > lo)

    def limits(self) -> Limits:
        """100 kS/s, a stream (no record limit), :data:`TRANSFER_LAG_S` behind real time; the
        resolution of each range from the unit's calibration (once started)."""
        cal = self.calibration
        resolution = None if cal is None else Resolution(
            range_steps(cal, self.config.supply_mv),
            "one ADC code per range, from the unit's calibration metadata (R, GS, GI, UG)")
        return Limits(sample_rate_hz=SAMPLE_RATE_HZ, max_record_s=None,
                      stream_lag_s=TRANSFER_LAG_S, resolution=resolution,
                      max_windows=STREAM_MAX_WINDOWS)

    def _serial(self) -> str:
        """The metadata's serial number (the emulator's), else the USB descriptor's."""
        if self.calibration is not None and self.calibration.serial is not None:
            return str(self.calibration.serial)
        if self._usb_serial is None:
            self._usb_serial = usb_serial(self.port)
        return self._usb_serial

    def describe(self) -> InstrumentInfo:
        """Instrument identity, settings and calibration for the run manifest."""
        cal = self.calibration
        hw = None if cal is None else cal.hw
        return InstrumentInfo(
            kind="ppk2", name="PPK2" if hw is None else f"PPK2 (HW {hw})", address=self.port,
            sample_rate_hz=SAMPLE_RATE_HZ, serial=self._serial(),
            stated=None if cal is None else stated_calibration(cal),
            details={
                "mode": self.config.mode,
                "supply_v": self.config.supply_v,
                "trigger_bit": self.config.trigger_bit,
                "hw": hw,
                "calibration": None if cal is None else {
                    k: list(getattr(cal, k)) for k in ("r", "gs", "gi", "o", "s", "i", "ug")},
                "samples_lost": 0 if self._decoder is None else self._decoder.samples_lost,
            })
