"""An Otii Arc or Ace as an :class:`~energyrig.instruments.base.Acquisition`, through Qoitech's
client (PyPI ``otii-tcp-client``) and the Otii application's TCP server.

:meth:`Otii.start` connects (the client logs in and reserves an Automation licence when the
fixture's ``licensing`` is ``auto``), picks the device, sets the main output to the fixture's
``supply_v`` and current limit, enables the main current (``mc``), main voltage (``mv``) and
the trigger's digital input (``i1``/``i2``) at ``sample_rate_hz``, switches the main output on
and opens a project. Each window is one recording: :meth:`Otii.arm` starts it and waits until
it holds ``pre_s`` of samples; :meth:`Otii.collect` polls the input's transitions until the
first rise after the arm has fallen and the current holds ``post_s`` past the fall, stops the
recording, downloads ``mc`` and ``mv`` and deletes the recording (the application keeps
nothing between windows). Sample 0 of a capture is the recording's first; the input's
transitions become logic bit 0 of each sample.

Units are SI: A, V, s (the client's are too).
"""
from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.errors import InstrumentError, NoTriggerWindow
from energyrig.instruments.base import (
    AcquisitionBase,
    ArmRequest,
    InstrumentInfo,
    Limits,
    RecordedCapture,
)
from energyrig.instruments.otii.config import OtiiConfig, split_server
from energyrig.instruments.otii.marks import levels_at
from energyrig.instruments.otii.spec import RESOLUTION
from energyrig.instruments.progress import ProgressBound

if TYPE_CHECKING:
    from otii_tcp_client.arc import Arc
    from otii_tcp_client.otii_client import OtiiClient
    from otii_tcp_client.project import Project
    from otii_tcp_client.recording import Recording

log = logging.getLogger(__name__)

#: How often a wait asks the server how far its recording got, s.
POLL_S = 0.02
#: Longest time without progress before a recording holds ``pre_s`` of samples, s.
ARM_BOUND_S = 10.0
#: The device types the client drives as an Arc (``otii.Otii.get_devices``' default filter).
DEVICE_TYPES = ("Arc", "Ace")


@contextlib.contextmanager
def _errors(where: str) -> Iterator[None]:
    """The client's failures as one :class:`InstrumentError` naming ``where``."""
    from otii_tcp_client.otii_connection import DisconnectedException
    from otii_tcp_client.otii_exception import Otii_Exception

    try:
        yield
    except Otii_Exception as exc:
        raise InstrumentError(f"{where}: the Otii server refused: {exc.type}: "
                              f"{exc.message}") from exc
    except DisconnectedException as exc:
        raise InstrumentError(f"{where}: the Otii server closed the connection") from exc
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise InstrumentError(f"{where}: {type(exc).__name__}: {exc}") from exc


def _connect(config: OtiiConfig, server: str) -> OtiiClient:
    from otii_tcp_client import otii_client

    host, port = split_server(server)
    client = otii_client.OtiiClient()
    try:
        with _errors(f"otii {server}: connecting"):
            client.connect(host=host, port=port,
                           try_for_seconds=math.ceil(config.connect_timeout_s),
                           licensing=otii_client.LicensingMode(config.licensing))
    except otii_client.OtiiClientException as exc:
        raise InstrumentError(f"otii {server}: {exc} (an Automation licence: log in to Otii "
                              "or give OTII_USERNAME/OTII_PASSWORD)") from exc
    return client


def list_devices(config: OtiiConfig) -> list[tuple[str, str]]:
    """``(type, name)`` of each Arc and Ace the server at ``config.server`` lists."""
    assert config.server is not None
    client = _connect(config, config.server)
    try:
        assert client.otii is not None
        with _errors(f"otii {config.server}: listing devices"):
            return [(d.type, d.name) for d in client.otii.get_devices(timeout=1)]
    finally:
        client.disconnect()


class Otii(AcquisitionBase):
    """An Otii Arc or Ace on the Otii application's TCP server at ``server``.

    Parameters
    ----------
    config:
        The fixture's table.
    server:
        ``host:port`` overriding the table's (the emulator's), ``None``: the table's.
    """

    def __init__(self, config: OtiiConfig, server: str | None = None) -> None:
        self.config = config
        address = server if server is not None else config.server
        if address is None:
            raise InstrumentError("otii: no server (give [instrument] server = \"host:port\")")
        self.server = address
        self._client: OtiiClient | None = None
        self._device: Arc | None = None
        self._project: Project | None = None
        self._recording: Recording | None = None
        self._request: ArmRequest | None = None
        self._armed_s = 0.0

    @property
    def _where(self) -> str:
        return f"otii {self.server}"

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Connect, set up the device's main output and channels, open a project."""
        if self._client is not None:
            return
        cfg = self.config
        self._client = _connect(cfg, self.server)
        otii = self._client.otii
        assert otii is not None
        try:
            with _errors(f"{self._where}: setting up"):
                self._device = device = self._pick(otii.get_devices(
                    timeout=math.ceil(cfg.connect_timeout_s)))
                device.set_main_voltage(cfg.supply_v)
                device.set_max_current(cfg.max_current_a)
                for channel in ("mc", "mv", cfg.gpi_channel):
                    device.enable_channel(channel, True)
                for channel in ("mc", "mv"):
                    device.set_channel_samplerate(channel, cfg.sample_rate_hz)
                device.set_main(True)
                self._project = otii.create_project()
        except BaseException:
            self.stop()
            raise
        log.info("%s: %s %s at %g V, %d Sa/s", self._where, device.type, device.name,
                 cfg.supply_v, cfg.sample_rate_hz)

    def _pick(self, devices: list[Arc]) -> Arc:
        """The fixture's device (by name), or the only Arc or Ace."""
        found = [d for d in devices if d.type in DEVICE_TYPES]
        named = [d for d in found if self.config.device in (None, d.name)]
        if len(named) == 1:
            return named[0]
        listed = ", ".join(f"{d.type} {d.name!r}" for d in found) or "none"
        what = (f"no device named {self.config.device!r}" if self.config.device is not None
                else "more than one device" if named else "no Arc or Ace")
        raise InstrumentError(f"{self._where}: {what} (attached: {listed}); "
                              "give [instrument] device = \"<name as Otii lists it>\"")

    def stop(self) -> None:
        """Stop a recording still running, return the licence, disconnect. Safe twice."""
        client, self._client = self._client, None
        if client is None:
            return
        with contextlib.suppress(InstrumentError), _errors(f"{self._where}: stopping"):
            if self._recording is not None and self._project is not None:
                self._project.stop_recording()
                self._recording.delete()
        self._recording = self._project = self._device = None
        with contextlib.suppress(InstrumentError), _errors(f"{self._where}: disconnecting"):
            client.disconnect()

    # -- one window ------------------------------------------------------------------------
    def _channel_count(self, channel: str) -> int:
        assert self._recording is not None and self._device is not None
        return int(self._recording.get_channel_data_count(self._device.id, channel))

    def _samples_after_poll(self, got: int, bound: ProgressBound) -> int:
        """The recording's samples after one poll interval; more than ``got`` is progress."""
        time.sleep(POLL_S)
        count = self._channel_count("mc")
        if count > got:
            bound.advance()
        return count

    def arm(self, pre_s: float, window_s: float, post_s: float) -> None:
        """Start a recording and wait until it holds ``pre_s`` of samples."""
        request = ArmRequest(pre_s, window_s, post_s)
        project = self._project
        if project is None:
            raise InstrumentError(f"{self._where}: arm() before start()")
        rate = self.config.sample_rate_hz
        with _errors(f"{self._where}: starting a recording"):
            if self._recording is not None:
                project.stop_recording()
                self._recording.delete()
                self._recording = None
            project.start_recording()
            self._recording = project.get_last_recording()
            if self._recording is None:
                raise InstrumentError(f"{self._where}: the server started no recording")
            need = math.ceil(pre_s * rate) + 1
            bound = ProgressBound(ARM_BOUND_S, work=self.work)
            got = self._channel_count("mc")
            while got < need:
                if bound.expired():
                    raise InstrumentError(f"{self._where}: the recording holds {got} samples "
                                          f"after {ARM_BOUND_S:g} s without progress; "
                                          f"{need} wanted before the window")
                got = self._samples_after_poll(got, bound)
        self._request = request
        self._armed_s = got / rate

    def collect(self, timeout_s: float) -> RecordedCapture:
        """The recording from its start to ``post_s`` past the fall of the first rise after
        :meth:`arm` (``timeout_s``: longest wait without progress, s)."""
        request, rec, device, project = (self._request, self._recording, self._device,
                                          self._project)
        if request is None or rec is None or device is None or project is None:
            raise InstrumentError(f"{self._where}: collect() without arm()")
        self._request = None
        cfg = self.config
        gpi, rate = cfg.gpi_channel, cfg.sample_rate_hz
        where = f"{self._where}: waiting for the window on GPI{cfg.trigger_gpi}"
        stalled = ProgressBound(timeout_s, work=self.work)
        seen, state, fall = 0, "it did not rise", None
        with _errors(where):
            got = self._channel_count("mc")
            deadline = got + math.ceil(timeout_s * rate)
            while fall is None or got < math.ceil((fall + request.post_s) * rate) + 1:
                count = self._channel_count(gpi)
                if count > seen:
                    transitions = rec.get_channel_data(device.id, gpi, 0, count)["values"]
                    seen = count
                    state, fall = _window(transitions, self._armed_s, 1.0 / rate)
                    if state == "missed":
                        raise NoTriggerWindow(
                            f"{where}: it rose and fell between two samples at "
                            f"{rate} Sa/s: no sample caught the window")
                got = self._samples_after_poll(got, stalled)
                if fall is None and (got >= deadline or stalled.expired()):
                    error = NoTriggerWindow if state == "it did not rise" else InstrumentError
                    raise error(f"{where}: no whole window within {timeout_s:g} s of "
                                f"recording ({state}): is the trigger GPIO wired to "
                                f"GPI{cfg.trigger_gpi} of the expansion port?")
                if stalled.expired():
                    raise InstrumentError(f"{where}: the recording stopped growing for "
                                          f"{timeout_s:g} s")
        with _errors(f"{self._where}: downloading the recording"):
            project.stop_recording()
            n = self._channel_count("mc")
            mc = rec.get_channel_data(device.id, "mc", 0, n)
            mv = rec.get_channel_data(device.id, "mv", 0, n)
            transitions = rec.get_channel_data(device.id, gpi, 0, self._channel_count(gpi))
            rec.delete()
        self._recording = None
        return RecordedCapture(source=f"otii:{self.server}",
                               chunk_list=(self._chunk(mc, mv, transitions["values"]),))

    def _chunk(self, mc: dict[str, Any], mv: dict[str, Any],
               transitions: list[dict[str, Any]]) -> Chunk:
        """The downloaded channels as one chunk (logic bit 0: the trigger input)."""
        current = np.asarray(mc["values"], dtype=np.float64)
        voltage = np.asarray(mv["values"], dtype=np.float64)
        if len(voltage) != len(current) or not mc["interval"] > 0:
            raise InstrumentError(f"{self._where}: mc holds {len(current)} samples, mv "
                                  f"{len(voltage)}, interval {mc['interval']!r} s: the main "
                                  "channels must share one sample clock")
        t_s = float(mc["timestamp"]) + np.arange(len(current)) * float(mc["interval"])
        return Chunk(0, float(mc["interval"]), current, voltage,
                     logic=_levels(t_s, transitions))

    # -- what the bench asks ---------------------------------------------------------------
    def limits(self) -> Limits:
        """A recording holds as long as the application's memory: no record limit; the main
        current's step per range of the device type the server names (:data:`RESOLUTION`;
        none before :meth:`start` or for a type without a published one)."""
        device = self._device
        return Limits(sample_rate_hz=float(self.config.sample_rate_hz), max_record_s=None,
                      stream_lag_s=0.0,
                      resolution=None if device is None else RESOLUTION.get(device.type))

    def describe(self) -> InstrumentInfo:
        """The device Otii drives and the fixture's settings."""
        device = self._device
        cfg = self.config
        name = f"Otii {device.type} {device.name}" if device is not None else "Otii"
        return InstrumentInfo(
            kind="otii", name=name, address=self.server,
            sample_rate_hz=float(cfg.sample_rate_hz),
            details={"supply_v": cfg.supply_v, "max_current_a": cfg.max_current_a,
                     "trigger_gpi": cfg.trigger_gpi},
            serial=device.id if device is not None else "")


def _window(transitions: list[dict[str, Any]], after_s: float,
            period_s: float) -> tuple[str, float | None]:
    """What the input's transitions show of the first window rising at or after ``after_s``
    (s) as samples ``k * period_s`` see it: ``("it did not rise", None)``, ``("it rose but
    has not fallen", None)``, ``("missed", None)`` (it fell before any sample caught it
    high) or ``("whole", fall time in s)``."""
    times = [float(t["timestamp"]) for t in transitions]
    rise = next((k for k, t in enumerate(transitions)
                 if t["value"] and times[k] >= after_s), None)
    if rise is None:
        return "it did not rise", None
    fall = next((k for k in range(rise + 1, len(transitions))
                 if not transitions[k]["value"]), None)
    if fall is None:
        return "it rose but has not fallen", None
    first = math.ceil(times[rise] / period_s)
    if first * period_s < times[rise]:
        first += 1
    if not first * period_s < times[fall]:
        return "missed", None
    return "whole", times[fall]


def _levels(t_s: npt.NDArray[np.float64],
            transitions: list[dict[str, Any]]) -> npt.NDArray[np.uint8]:
    """The input's level (0/1) at each time ``t_s`` from its transitions (low before the
    first)."""
    times = np.array([float(t["timestamp"]) for t in transitions], dtype=np.float64)
    return levels_at(t_s, times, np.array([bool(t["value"]) for t in transitions],
                                          dtype=np.uint8))
