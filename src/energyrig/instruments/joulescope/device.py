"""A Joulescope (JS220, JS110) through ``pyjoulescope_driver``, as a streaming
:class:`~energyrig.instruments.base.Acquisition` (the contract the PPK2 keeps).

Transport: the driver object (:class:`Driver`, the subset of ``pyjoulescope_driver.Driver``
used: ``device_paths``, ``open``, ``publish``, ``subscribe``, ``unsubscribe``, ``close``,
``finalize``); its stream callbacks arrive on the driver's thread. Protocol:
:mod:`.protocol`. Processing: :class:`~.processing.StreamAligner` joins current, voltage
and the trigger input into chunks; keeping them (``history_s``; ``buffer_s`` while armed)
and ``arm``/``collect``'s mark, wait and cut are the streaming base's, as for the PPK2
(:class:`~energyrig.instruments.streaming.StreamAcquisition`).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from energyrig.errors import InstrumentError
from energyrig.instruments.base import ArmRequest, InstrumentInfo, Limits, RecordedCapture
from energyrig.instruments.joulescope import protocol
from energyrig.instruments.joulescope.config import JoulescopeConfig
from energyrig.instruments.joulescope.processing import StreamAligner
from energyrig.instruments.streaming import STREAM_MAX_WINDOWS, StreamAcquisition
from energyrig.instruments.triggerscan import TriggerScan

log = logging.getLogger(__name__)

#: How long after start() the stream may take to deliver its first samples, s.
STREAM_START_S = 2.0
#: How far the driver's stream runs behind real time, s (its default buffering).
STREAM_LAG_S = 0.1
_TIMEOUT_S = 1.0


class Driver(Protocol):
    """The part of ``pyjoulescope_driver.Driver`` used (topics relative to a device path are
    joined to it here)."""

    def device_paths(self) -> list[str]: ...
    def open(self, device_prefix: str, mode: str | None = None,
             timeout: float | None = None) -> None: ...
    def publish(self, topic: str, value: object, timeout: float | None = None) -> None: ...
    def subscribe(self, topic: str, flags: Any, fn: Callable[[str, Any], None],
                  timeout: float | None = None) -> None: ...
    def unsubscribe(self, topic: str, fn: Callable[[str, Any], None],
                    timeout: float | None = None) -> None: ...
    def close(self, device_prefix: str, timeout: float | None = None) -> None: ...
    def finalize(self, timeout: float | None = None) -> None: ...


def official_driver() -> Driver:
    """A ``pyjoulescope_driver.Driver``."""
    from pyjoulescope_driver import Driver as JsDriver

    driver: Driver = JsDriver()
    return driver


class Joulescope(StreamAcquisition):
    """A Joulescope as a streaming acquisition.

    Parameters
    ----------
    config:
        The fixture's ``[instrument]`` table.
    device:
        The driver's device path (``u/js220/001234``), overriding the config's; ``None``
        with none configured: the one attached.
    driver:
        Makes the driver object (tests pass a fake); default :func:`official_driver`.
    """

    product = "Joulescope"

    def __init__(self, config: JoulescopeConfig, device: str | None = None,
                 driver: Callable[[], Driver] = official_driver) -> None:
        super().__init__(config.sample_rate_hz, config.history_s, config.buffer_s)
        self.config = config
        self.device = device or config.device
        self._make_driver = driver
        self._driver: Driver | None = None
        self._path: str | None = None
        self.period_s = 1.0 / config.sample_rate_hz
        self._aligner = StreamAligner(self.period_s)
        self._topics: dict[str, int] = {}

    @property
    def source(self) -> str:
        return f"joulescope:{self._path or self.device or '?'}"

    # -- transport -------------------------------------------------------------------------
    def start(self) -> None:
        """Open the device, apply the fixture's settings, subscribe and enable the signals."""
        if self._driver is not None:
            return
        driver = self._make_driver()
        try:
            paths = list(driver.device_paths())
            if not paths:
                raise InstrumentError("joulescope: no Joulescope attached (pyjoulescope_driver "
                                      "found none on USB)")
            if self.device is None and len(paths) > 1:
                raise InstrumentError(f"joulescope: {len(paths)} Joulescopes attached "
                                      f"({', '.join(paths)}); choose one with device = PATH in "
                                      "the fixture's instrument table")
            path = self.device or paths[0]
            if path not in paths:
                raise InstrumentError(f"joulescope: device {path!r} is not attached (attached: "
                                      f"{', '.join(paths) or 'none'})")
            driver.open(path, "defaults", timeout=_TIMEOUT_S)
            for topic, value in protocol.setup(self.config, path):
                driver.publish(f"{path}/{topic}", value, timeout=_TIMEOUT_S)
            self._topics = {f"{path}/{s}/!data": k
                            for k, s in enumerate(protocol.signals(self.config))}
            for topic in self._topics:
                driver.subscribe(topic, ["pub"], self._on_data, timeout=_TIMEOUT_S)
            for signal in protocol.signals(self.config):
                driver.publish(f"{path}/{signal}/ctrl", 1, timeout=_TIMEOUT_S)
        except (OSError, RuntimeError, TimeoutError, ValueError) as exc:
            driver.finalize()
            raise InstrumentError(f"joulescope: the driver refused: {exc}") from exc
        except InstrumentError:
            driver.finalize()
            raise
        self._driver, self._path = driver, path

    def stop(self) -> None:
        """Disable the signals, close the device and the driver. Safe to call twice."""
        driver, path = self._driver, self._path
        if driver is None or path is None:
            return
        self._driver = None
        try:
            for topic in self._topics:
                driver.unsubscribe(topic, self._on_data, timeout=_TIMEOUT_S)
            for signal in protocol.signals(self.config):
                driver.publish(f"{path}/{signal}/ctrl", 0, timeout=_TIMEOUT_S)
            driver.close(path, timeout=_TIMEOUT_S)
        finally:
            driver.finalize()

    def _on_data(self, topic: str, value: Mapping[str, Any]) -> None:
        """A stream message (driver thread)."""
        which = self._topics.get(topic)
        if which is None:
            return
        chunk = self._aligner.feed(which, protocol.index_of(value),
                                   protocol.samples(value, bits=which == 2))
        if chunk is not None:
            self._store(chunk)

    # -- acquisition -----------------------------------------------------------------------
    def arm(self, pre_s: float, window_s: float, post_s: float, windows: int = 1) -> None:
        """Mark the stream ``pre_s`` before the newest sample (not before the last window's
        fall), for a record of ``windows`` trigger windows; waits for that many samples (an error when none came for ``pre_s`` +
        :data:`STREAM_START_S`)."""
        request = ArmRequest(pre_s, window_s, post_s, windows)
        if self._driver is None:
            raise InstrumentError(f"{self.source}: not streaming; call start() first")
        if request.total_s > self.config.buffer_s or pre_s > self.config.history_s:
            raise InstrumentError(f"{self.source}: a {request.total_s:.1f} s record with "
                                  f"{pre_s} s before does not fit history_s "
                                  f"{self.config.history_s} / buffer_s {self.config.buffer_s}")
        self._mark(request, STREAM_START_S)

    def collect(self, timeout_s: float) -> RecordedCapture:
        """Wait for the trigger input to rise and fall, plus ``post_s``; return the record
        (``timeout_s``, s, counted from the stream's progress:
        :meth:`~energyrig.instruments.streaming.StreamAcquisition._collect_window`)."""
        return RecordedCapture(self.source, self._collect_window(
            timeout_s, 0, self.config.min_pulse_s, f"GPI {self.config.trigger_gpi}"),
            trigger_bit=0)

    def _window_stalled(self, scan: TriggerScan, bound_s: float, trigger: str,
                        newest: int) -> InstrumentError:
        """A stream that stalled before the window is the window's timeout, as the
        Joulescope always reported it (:class:`~energyrig.errors.NoTriggerWindow` when the
        trigger never rose)."""
        return scan.timeout(self.source, trigger, f"within {bound_s} s of arming")

    def limits(self) -> Limits:
        """The configured output rate; a stream :data:`STREAM_LAG_S` behind real time."""
        return Limits(sample_rate_hz=float(self.config.sample_rate_hz), max_record_s=None,
                      stream_lag_s=STREAM_LAG_S, max_windows=STREAM_MAX_WINDOWS)

    def describe(self) -> InstrumentInfo:
        """Device path, model and serial (from the path) and the fixture's settings."""
        path = self._path or self.device or "joulescope (the one attached)"
        parts = path.split("/")
        model = parts[1].upper() if len(parts) == 3 else "Joulescope"
        return InstrumentInfo(
            kind="joulescope", name=model, address=path,
            sample_rate_hz=float(self.config.sample_rate_hz),
            serial=parts[2] if len(parts) == 3 else "",
            details={"current_range": self.config.current_range,
                     "trigger_gpi": self.config.trigger_gpi})

