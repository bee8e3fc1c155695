"""An emulated Otii application's TCP server with one Otii Ace (or Arc) attached, on loopback.

:class:`OtiiEmulator` listens on ``127.0.0.1:<port>`` and speaks the server side of Otii's TCP
scripting interface as Qoitech's client, PyPI ``otii-tcp-client`` 1.0.13
(``otii_connection.py``, ``otii.py``, ``arc.py``, ``project.py``, ``recording.py``), expects
it: JSON objects, one per ``\\r\\n``-terminated line; an ``information`` message
(``"info": "connected"``) on accept; each request ``{"type": "request", "cmd", "trans_id",
"data"}`` answered ``{"type": "response", "cmd", "trans_id", "data"}`` or, on a fault,
``{"type": "error", "cmd", "trans_id", "errorcode", "data"}`` with the error codes
``otii_exception.py`` knows (``Invalid command``, ``Missing key in request``, ``Invalid key
value``, ``Device not connected``, ``Command failure``). The commands: the login and licences
(the application is logged in; one Automation licence to reserve), ``otii_get_devices``,
projects (``otii_create_project``, ``otii_get_active_project``, ``project_start_recording``,
``project_stop_recording``, ``project_get_last_recording``, ``project_close``), the device's
settings (``arc_set_main_voltage``, ``arc_set_max_current``, ``arc_enable_channel``,
``arc_set_channel_samplerate``, ``arc_set_main`` and their getters) and the recording's data
(``recording_get_channel_data_count``, ``recording_get_channel_data``: ``analog`` blocks of
``mc``/``mv`` with ``timestamp`` and ``interval``, ``digital`` transitions of ``i1``/``i2``;
``recording_get_channel_info``, ``recording_is_running``, ``recording_delete``).

The bench it emulates: the Ace's main output supplies the board at the set voltage (its 4-wire
sense keeps the board's rail there: ``mv`` reads it exactly), measures the board's current
(``mc``) from the :class:`~energyrig.instruments.sim.power.PowerModel` and the virtual
:class:`~energyrig.instruments.sim.wire.TriggerWire` with the model's faults and noise, and
its GPI1 and GPI2 both see the trigger GPIO (the rig reads the one its fixture names). While
the main output is off the board draws nothing. A recording samples from its start at the
channel's rate: the samples up to ``latency_s`` before now exist (rendered as time passes,
with the load switch's load at the time), as do the GPI's transitions up to then. Each
recording writes a ``stream`` line to the truth log (``t0_ns`` = its sample 0, ``period_ns``)
before the windows inside it.

Run it in its own process::

    python -m energyrig.cli.emulate energyrig.instruments.otii.emulator --wire /tmp/er.wire --truth truth.jsonl

prints ``127.0.0.1:<port>`` on its first stdout line and serves until SIGTERM/SIGINT.
"""
from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.instruments.otii.spec import RESOLUTION
from energyrig.instruments.sim.power import PowerModel, logic_level, measured_current
from energyrig.instruments.sim.process import (
    emulator_parser,
    parse_emulator_args,
    serve_until_stopped,
)
from energyrig.instruments.sim.switch import LoadSwitch
from energyrig.instruments.sim.tcp import LoopbackEmulator
from energyrig.instruments.sim.wire import NO_EDGES, EdgeArray

log = logging.getLogger(__name__)

#: Sample rates of the main channels each emulated device type accepts, Sa/s.
RATES: dict[str, tuple[int, ...]] = {"Arc": (1000, 4000), "Ace": (1000, 4000, 50_000)}
#: Channels a recording holds samples of (analog) or transitions of (digital).
ANALOG, DIGITAL = ("mc", "mv"), ("i1", "i2")
#: The message the server sends on accept (``otii_connection.connect_to_server``).
CONNECTED = {"type": "information", "info": "connected",
             "data": {"otii_version": "3.5.5", "protocol_version": "0.1",
                      "server": "otii-server"}}


class RequestError(Exception):
    """A request the server refuses: its ``errorcode`` and ``data``."""

    def __init__(self, code: str, **data: Any) -> None:
        super().__init__(code)
        self.code = code
        self.data = data


@dataclass
class Recording:
    """One recording: its sample clock and what it rendered so far.

    ``t0_ns`` is sample 0's CLOCK_MONOTONIC time, ``period_ns`` the main channels' period;
    ``current``/``voltage`` the rendered blocks; ``edges`` the wire's edges from the one
    before the start on.
    """

    id: int
    t0_ns: int
    period_ns: int
    powered: bool
    edges: EdgeArray
    current: list[npt.NDArray[np.float64]] = field(default_factory=list)
    rendered: int = 0
    end_ns: int | None = None

    def rendered_end_ns(self) -> int:
        """Time of the last rendered sample (before the first: ``t0 - period``), ns."""
        return self.t0_ns + (self.rendered - 1) * self.period_ns


class OtiiEmulator(LoopbackEmulator):
    """The Otii TCP server with one device, driven by a power model and the trigger wire.

    Parameters
    ----------
    model:
        The board's current and the measurement noise (``noise_a``).
    device_type:
        ``"Ace"`` or ``"Arc"`` (:data:`RATES`).
    wire, truth, load_switch:
        Trigger wire socket to bind, truth log to write, load switch file (each ``None``:
        none).
    latency_s:
        How far behind now the newest sample of a recording lies, s.
    port:
        TCP port on 127.0.0.1 (0: any free one).
    seed:
        Seed of the noise.
    """

    name = "otii"
    separator = b"\r\n"

    def __init__(self, model: PowerModel, *, device_type: str = "Ace",
                 wire: str | os.PathLike[str] | None = None,
                 truth: str | os.PathLike[str] | None = None, latency_s: float = 0.05,
                 port: int = 0, seed: int = 0,
                 load_switch: str | os.PathLike[str] | None = None) -> None:
        if device_type not in RATES:
            raise ValueError(f"otii emulator plays {', '.join(RATES)}, not {device_type!r}")
        self.model = model
        self.device_type = device_type
        self.device_id = f"{device_type}00000000000000000000000000000001"
        self.device_name = device_type
        self.latency_ns = int(latency_s * 1e9)
        super().__init__(wire=wire, truth=truth, port=port)
        self.switch = LoadSwitch(None if load_switch is None else Path(load_switch))
        self.commands: list[str] = []
        self.main_v = 0.0
        self.max_current_a = 0.5
        self.main_on = False
        self.rate = {"mc": RATES[device_type][0], "mv": RATES[device_type][0]}
        self.enabled: set[str] = set()
        self.licence_reserved = False
        self.project: int | None = None
        self.recordings: dict[int, Recording] = {}
        self._next_id = 1
        self._rng = np.random.default_rng(seed)
        self._last_edge: EdgeArray = NO_EDGES
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            name[len("_cmd_"):]: getattr(self, name) for name in dir(self)
            if name.startswith("_cmd_")}

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``: the fixture's ``server``."""
        return f"127.0.0.1:{self.port}"

    def greeting(self) -> bytes:
        """The ``information`` message a client waits for on connecting."""
        return _line(CONNECTED)

    def reply(self, request: bytes) -> bytes:
        """The reply to one request line, JSON."""
        return _line(self.execute(request))

    def execute(self, line: bytes) -> dict[str, Any]:
        """The reply to one request line."""
        try:
            request = json.loads(line)
        except ValueError as exc:
            return {"type": "error", "cmd": "", "trans_id": "", "errorcode":
                    "Not able to parse request", "data": {"parse_error": str(exc),
                                                          "data": line.decode(errors="replace")}}
        cmd, trans_id = str(request.get("cmd", "")), request.get("trans_id", "")
        self.commands.append(cmd)
        handler = self._handlers.get(cmd)
        try:
            if handler is None:
                raise RequestError("Invalid command")
            with self._lock:
                data = handler(request.get("data") or {})
        except RequestError as exc:
            log.warning("otii emulator: %s: %s %s", cmd, exc.code, exc.data)
            return {"type": "error", "cmd": cmd, "trans_id": trans_id, "errorcode": exc.code,
                    "data": exc.data}
        return {"type": "response", "cmd": cmd, "trans_id": trans_id, "data": data}

    # -- the recording clock ---------------------------------------------------------------
    def tick(self) -> None:
        """Take the wire's edges into the truth and the running recording; render the
        samples up to ``latency_s`` before now."""
        edges = self._drain()
        edges = edges[np.argsort(edges["t_ns"], kind="stable")]
        running = self._running()
        if len(edges):
            self._last_edge = edges[-1:]
            late = np.zeros(len(edges), dtype=np.bool_)
            if running is not None:
                late = edges["t_ns"].astype(np.int64) <= running.rendered_end_ns()
                running.edges = np.concatenate([running.edges, edges])
            if self._truth is not None:
                self._truth.feed(edges, self.model, self.main_v, self.main_on, late)
        if running is not None:
            self._render(running, time.monotonic_ns() - self.latency_ns)

    def _running(self) -> Recording | None:
        return next((r for r in self.recordings.values() if r.end_ns is None), None)

    def _render(self, rec: Recording, until_ns: int) -> None:
        """Render ``rec``'s samples taken up to ``until_ns`` (and its end)."""
        if rec.end_ns is not None:
            until_ns = min(until_ns, rec.end_ns)
        n = (until_ns - rec.t0_ns) // rec.period_ns + 1
        if n <= rec.rendered:
            return
        t_ns = rec.t0_ns + np.arange(rec.rendered, n, dtype=np.int64) * rec.period_ns
        if rec.powered:
            current = measured_current(self.model, t_ns, rec.edges, self._rng,
                                       self.switch.load(), self.main_v)
        else:
            current = self._rng.normal(0.0, self.model.noise_a, len(t_ns))
        rec.current.append(_quantised(current, self.device_type))
        rec.rendered = int(n)

    # -- commands: session and licences ---------------------------------------------------
    def _cmd_otii_is_logged_in(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"logged_in": True}

    def _cmd_otii_login(self, data: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _cmd_otii_logout(self, data: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _cmd_otii_get_licenses(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"licenses": [{"id": 1, "type": "Automation", "available": True,
                              "reserved_to": "rig" if self.licence_reserved else "",
                              "hostname": "localhost" if self.licence_reserved else ""}]}

    def _cmd_otii_reserve_license(self, data: dict[str, Any]) -> dict[str, Any]:
        if _key(data, "license_id") != 1:
            raise RequestError("License could not be reserved")
        self.licence_reserved = True
        return {}

    def _cmd_otii_return_license(self, data: dict[str, Any]) -> dict[str, Any]:
        self.licence_reserved = False
        return {}

    def _cmd_otii_has_license(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"has_license": self.licence_reserved
                and _key(data, "license_type") == "Automation"}

    def _cmd_otii_get_devices(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"devices": [{"device_id": self.device_id, "name": self.device_name,
                             "type": self.device_type}]}

    # -- commands: the device --------------------------------------------------------------
    def _device(self, data: dict[str, Any]) -> None:
        if _key(data, "device_id") != self.device_id:
            raise RequestError("Device not connected", device_id=str(data["device_id"]))
        if self._licensed_only and not self.licence_reserved:
            raise RequestError("No license")

    #: Whether device commands need the Automation licence reserved (as Otii 3 does).
    _licensed_only = True

    def _cmd_arc_set_main_voltage(self, data: dict[str, Any]) -> dict[str, Any]:
        self._device(data)
        self.main_v = _number(data, "value", 0.5, 5.0)
        return {}

    def _cmd_arc_get_main_voltage(self, data: dict[str, Any]) -> dict[str, Any]:
        self._device(data)
        return {"value": self.main_v}

    def _cmd_arc_set_max_current(self, data: dict[str, Any]) -> dict[str, Any]:
        self._device(data)
        self.max_current_a = _number(data, "value", 0.001, 5.0)
        return {}

    def _cmd_arc_get_max_current(self, data: dict[str, Any]) -> dict[str, Any]:
        self._device(data)
        return {"value": self.max_current_a}

    def _cmd_arc_set_main(self, data: dict[str, Any]) -> dict[str, Any]:
        self._device(data)
        self.main_on = bool(_key(data, "enable"))
        return {}

    def _cmd_arc_get_main(self, data: dict[str, Any]) -> dict[str, Any]:
        self._device(data)
        return {"value": self.main_on}

    def _cmd_arc_enable_channel(self, data: dict[str, Any]) -> dict[str, Any]:
        self._device(data)
        channel = _channel(data, ANALOG + DIGITAL)
        if _key(data, "enable"):
            self.enabled.add(channel)
        else:
            self.enabled.discard(channel)
        return {}

    def _cmd_arc_set_channel_samplerate(self, data: dict[str, Any]) -> dict[str, Any]:
        self._device(data)
        channel = _channel(data, ANALOG)
        value = _key(data, "value")
        if value not in RATES[self.device_type]:
            raise RequestError("Invalid key value", key="value", value=value)
        self.rate[channel] = int(value)
        return {}

    def _cmd_arc_get_channel_samplerate(self, data: dict[str, Any]) -> dict[str, Any]:
        self._device(data)
        return {"value": self.rate[_channel(data, ANALOG)]}

    # -- commands: projects and recordings -------------------------------------------------
    def _cmd_otii_create_project(self, data: dict[str, Any]) -> dict[str, Any]:
        self.project = 1
        self.recordings.clear()
        return {"project_id": self.project}

    def _cmd_otii_get_active_project(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"project_id": -1 if self.project is None else self.project}

    def _project(self, data: dict[str, Any]) -> None:
        if self.project is None or _key(data, "project_id") != self.project:
            raise RequestError("Project does not exist")

    def _cmd_project_close(self, data: dict[str, Any]) -> dict[str, Any]:
        self._project(data)
        self.project = None
        self.recordings.clear()
        return {}

    def _cmd_project_start_recording(self, data: dict[str, Any]) -> dict[str, Any]:
        self._project(data)
        if self._running() is not None:
            raise RequestError("Command failure", message="a recording is running")
        if self.rate["mc"] != self.rate["mv"]:
            raise RequestError("Command failure", message="mc and mv must share a rate here")
        period_ns = round(1e9 / self.rate["mc"])
        rec = Recording(self._next_id, time.monotonic_ns(), period_ns, self.main_on,
                        self._last_edge)
        self._next_id += 1
        self.recordings[rec.id] = rec
        if self._truth is not None:
            self._truth.stream_started(rec.t0_ns, period_ns, self.main_v, self.model)
        return {}

    def _cmd_project_stop_recording(self, data: dict[str, Any]) -> dict[str, Any]:
        self._project(data)
        rec = self._running()
        if rec is not None:
            rec.end_ns = time.monotonic_ns() - self.latency_ns
            self._render(rec, rec.end_ns)
        return {}

    def _cmd_project_get_last_recording(self, data: dict[str, Any]) -> dict[str, Any]:
        self._project(data)
        if not self.recordings:
            return {"recording_id": -1}
        rec = self.recordings[max(self.recordings)]
        return {"recording_id": rec.id, "name": f"Recording {rec.id}"}

    def _recording(self, data: dict[str, Any]) -> Recording:
        rec = self.recordings.get(_key(data, "recording_id"))
        if rec is None:
            raise RequestError("Invalid key value", key="recording_id",
                               value=data["recording_id"])
        return rec

    def _recorded(self, data: dict[str, Any]) -> tuple[Recording, str]:
        rec = self._recording(data)
        self._device(data)
        channel = _channel(data, ANALOG + DIGITAL)
        if channel not in self.enabled:
            raise RequestError("Command failure", message=f"channel {channel} not recorded")
        return rec, channel

    def _cmd_recording_is_running(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"running": self._recording(data).end_ns is None}

    def _cmd_recording_delete(self, data: dict[str, Any]) -> dict[str, Any]:
        rec = self._recording(data)
        if rec.end_ns is None:
            raise RequestError("Command failure", message="the recording is running")
        del self.recordings[rec.id]
        return {}

    def _cmd_recording_get_channel_info(self, data: dict[str, Any]) -> dict[str, Any]:
        rec, channel = self._recorded(data)
        end = max(rec.rendered - 1, 0) * rec.period_ns * 1e-9
        rate = self.rate[channel] if channel in ANALOG else 0
        return {"offset": 0.0, "from": 0.0, "to": end, "sample_rate": rate}

    def _cmd_recording_get_channel_data_count(self, data: dict[str, Any]) -> dict[str, Any]:
        rec, channel = self._recorded(data)
        count = rec.rendered if channel in ANALOG else len(self._transitions(rec))
        return {"count": count}

    def _cmd_recording_get_channel_data(self, data: dict[str, Any]) -> dict[str, Any]:
        rec, channel = self._recorded(data)
        index, count = int(_key(data, "index")), int(_key(data, "count"))
        if channel in DIGITAL:
            return {"data_type": "digital", "values": [
                {"timestamp": t, "value": bool(v)}
                for t, v in self._transitions(rec)[index:index + count]]}
        if not 0 <= index <= rec.rendered or count < 0:
            raise RequestError("Invalid key value", key="index", value=index)
        rec.current = [np.concatenate([np.empty(0), *rec.current])]
        values = (rec.current[0][index:index + count] if channel == "mc"
                  else np.full(min(count, rec.rendered - index),
                               self.main_v if rec.powered else 0.0))
        return {"data_type": "analog", "timestamp": index * rec.period_ns * 1e-9,
                "interval": rec.period_ns * 1e-9, "values": values.tolist()}

    def _transitions(self, rec: Recording) -> list[tuple[float, int]]:
        """The GPI's level at the start and each change up to the last rendered sample:
        ``(s since the start, level)``; the input sees the trigger held high the model's
        ``overhead_s`` after each fall, as the board's current does."""
        end_ns = rec.rendered_end_ns()
        times = np.concatenate([[rec.t0_ns], rec.edges["t_ns"].astype(np.int64),
                                rec.edges["t_ns"].astype(np.int64)
                                + round(self.model.overhead_s * 1e9)])
        times = np.unique(times[(times >= rec.t0_ns) & (times <= end_ns)])
        if not len(times):
            return []
        level = logic_level(times, rec.edges, self.model.overhead_s).astype(np.int64)
        change = np.concatenate([[True], np.diff(level) != 0])
        return [(float(t), int(v)) for t, v in
                zip((times[change] - rec.t0_ns) * 1e-9, level[change])]


def _quantised(current_a: npt.NDArray[np.float64], device_type: str) -> npt.NDArray[np.float64]:
    """``current_a`` (A) rounded to the step of the range that holds each sample, as the
    device type's :data:`~energyrig.instruments.otii.spec.RESOLUTION` states it (unchanged
    for a type without one)."""
    resolution = RESOLUTION.get(device_type)
    if resolution is None:
        return current_a
    bounds = np.array([upto for upto, _ in resolution.ranges])
    steps = np.array([step for _, step in resolution.ranges])
    step = steps[np.minimum(np.searchsorted(bounds, np.abs(current_a)), len(steps) - 1)]
    return np.rint(current_a / step) * step


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode("utf-8")


def _key(data: dict[str, Any], key: str) -> Any:
    if key not in data:
        raise RequestError("Missing key in request", key=key)
    return data[key]


def _number(data: dict[str, Any], key: str, lo: float, hi: float) -> float:
    value = _key(data, key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
        raise RequestError("Invalid key value", key=key, value=value)
    return float(value)


def _channel(data: dict[str, Any], allowed: tuple[str, ...]) -> str:
    channel = _key(data, "channel")
    if channel not in allowed:
        raise RequestError("Invalid key value", key="channel", value=channel)
    return str(channel)


def main(argv: list[str], announce: Callable[[str], None]) -> int:
    """Serve as the command line ``argv`` says, ``announce`` the server's ``host:port``,
    until SIGTERM or SIGINT (the program: ``python -m energyrig.cli.emulate``)."""
    parser = emulator_parser(
        "energyrig.instruments.otii.emulator",
        "Emulated Otii application TCP server with one Otii Ace or Arc supplying the board "
        "(main output, current mc, voltage mv, the trigger on GPI1 and GPI2), driven by a "
        "power model and the virtual trigger wire. Prints host:port on the first stdout line.")
    parser.add_argument("--device-type", choices=sorted(RATES), default="Ace")
    parser.add_argument("--latency-s", type=float, default=0.05,
                        help="a sample exists this long after it was taken "
                             "(default: %(default)s)")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free one)")
    args, model = parse_emulator_args(parser, argv)
    with OtiiEmulator(model, device_type=args.device_type, wire=args.wire, truth=args.truth,
                      latency_s=args.latency_s, port=args.port, seed=args.seed,
                      load_switch=args.load_switch) as emu:
        serve_until_stopped(emu.address, announce)
    return 0
