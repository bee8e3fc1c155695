"""An emulated SCPI oscilloscope on a loopback TCP port (a VISA ``SOCKET`` resource).

:class:`ScopeEmulator` listens on ``127.0.0.1:<port>`` and answers SCPI, one command per
line, as a Rigol DS1000Z (``rigol-ds1000z``), a Keysight InfiniiVision X-series
(``keysight-x``) or a Siglent SDS1000X-E on its older command set (``siglent-sds1000xe``)
does: the commands of their rows in :data:`energyrig.instruments.scope.dialects.DIALECTS`
(long and short forms, any case), their preambles (the Siglent's per-channel ``VDIV?``,
``OFST?``... replies), their status replies and their IEEE 488.2 binary blocks (the
Siglent's ``DAT2,#9...`` block of signed codes ending ``0A 0A``). Unknown headers and illegal
values go to the error queue (``:SYSTem:ERRor?``; the Siglent's ``CMR?``) as on the real
scopes.

The bench it emulates is the published shunt method with a common ground: a 1 Ω
(``shunt_ohms``) shunt in the board's ground return, between the board's GND and the bench
supply's negative terminal (the scope's ground); CH1 on the supply's positive terminal, CH2
on the board's GND (the shunt's voltage), CH3 on the trigger GPIO. The board's current comes
from the same :class:`~energyrig.instruments.sim.power.PowerModel` and virtual
:class:`~energyrig.instruments.sim.wire.TriggerWire` as the PPK2 emulator; the bench supply
regulates the board's rail through sense leads, so the board sees ``supply_v`` and CH1 reads
``supply_v + i·R`` (then ``CH1 − CH2`` is the board's supply exactly and the truth log's
``supply_v · ∫i`` is the energy the board drew).

An acquisition is what a real scope does: ``:SINGle`` arms; the scope needs its pre-trigger
time of samples before it accepts a trigger; the first rising edge of the trigger channel
after that (the wire's edge times, CLOCK_MONOTONIC) triggers; the record (memory depth at the
rate the timebase gives, ``depth / (divisions × s/div)``, limited by the family's top rate) is
complete once its last sample time has passed plus ``latency_s`` (so late wire edges still
count) and the wire's level up to then is known (the last edge received falls or lies after
the record's end: a window's fall is waited for however late a loaded host sends it). Then every displayed channel is rendered: model current at each sample time, the
channel's signal, white ADC noise of ``adc_noise_lsb`` codes rms and 8-bit quantisation at the
channel's V/div and offset, clipped to the code range. Each record writes a ``stream`` line
to the truth log (``t0_ns`` = its first sample, ``period_ns`` = its sample interval) before
the windows inside it, so the bench matches a window to its truth as with the PPK2.

Run it in its own process::

    python -m energyrig.cli.emulate energyrig.instruments.scope.emulator --wire /tmp/er.wire --truth truth.jsonl

prints the VISA resource (``TCPIP::127.0.0.1::<port>::SOCKET``) on its first stdout line and
serves until SIGTERM/SIGINT.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from energyrig.instruments.scope.dialects import DIALECTS, Dialect, number, steps_125
from energyrig.instruments.sim.power import PowerModel, logic_level, measured_current
from energyrig.instruments.sim.switch import LoadSwitch
from energyrig.instruments.sim.process import (
    emulator_parser,
    parse_emulator_args,
    serve_until_stopped,
)
from energyrig.instruments.sim.tcp import LoopbackEmulator
from energyrig.instruments.sim.wire import NO_EDGES, EdgeArray

log = logging.getLogger(__name__)

Reply = str | bytes | None


@dataclass
class Channel:
    """Vertical state of one channel (volts at the probe tip)."""

    display: bool = False
    scale_v: float = 1.0
    offset_v: float = 0.0
    probe: float = 1.0


@dataclass(frozen=True)
class Encoding:
    """How a family turns volts into codes and describes them in its preamble."""

    codes_per_div: float
    block_digits: int
    #: (volts_per_code, zero_code_before_offset, yorigin, yref) for a channel
    scaling: Callable[[Channel, float], tuple[float, float, float, float]]
    preamble: Callable[[int, float, float, float, float, float], str]
    #: Bytes before the IEEE block and after it (before the line feed every reply ends with).
    block_prefix: bytes = b""
    block_suffix: bytes = b""


def _rigol_scaling(ch: Channel, per_div: float) -> tuple[float, float, float, float]:
    yinc = ch.scale_v / per_div
    yorigin = float(round(ch.offset_v / yinc))
    return yinc, yorigin + 127.0, yorigin, 127.0


def _keysight_scaling(ch: Channel, per_div: float) -> tuple[float, float, float, float]:
    yinc = ch.scale_v / per_div
    return yinc, 128.0 - ch.offset_v / yinc, ch.offset_v, 128.0


def _siglent_legacy_scaling(ch: Channel, per_div: float) -> tuple[float, float, float, float]:
    """volts = code × vdiv / 25 − offset (signed codes, 0 at the screen centre)."""
    yinc = ch.scale_v / per_div
    return yinc, ch.offset_v / yinc, 0.0, 0.0


def _no_preamble(points: int, xinc: float, xorigin: float, yinc: float, yorigin: float,
                 yref: float) -> str:
    raise ValueError("this family has no preamble query")


def _rigol_preamble(points: int, xinc: float, xorigin: float, yinc: float, yorigin: float,
                    yref: float) -> str:
    return f"0,2,{points},1,{xinc:.6e},{xorigin:.6e},0,{yinc:.6e},{int(yorigin)},{int(yref)}"


def _keysight_preamble(points: int, xinc: float, xorigin: float, yinc: float, yorigin: float,
                       yref: float) -> str:
    return (f"+0,+0,+{points},+1,{xinc:+.9E},{xorigin:+.9E},+0,{yinc:+.9E},{yorigin:+.9E},"
            f"+{int(yref)}")


@dataclass
class State:
    """Everything a command can set or query."""

    channels: dict[int, Channel] = field(default_factory=dict)
    timebase_s: float = 1e-3
    position_s: float = 0.0
    depth: int | None = None
    trigger_ch: int = 1
    trigger_level_v: float = 0.0
    trigger_slope: str = "POS"
    acq: str = "stopped"          # stopped | running | armed | triggered | done
    wav_source: int = 1
    wav_start: int = 1
    wav_stop: int = 1
    wav_format: str = "BYTE"
    errors: list[str] = field(default_factory=list)


class ScopeEmulator(LoopbackEmulator):
    """A SCPI oscilloscope on loopback TCP, driven by a power model and the trigger wire.

    Parameters
    ----------
    model:
        The board's current and the measurement noise (``noise_a``).
    dialect:
        ``"rigol-ds1000z"``, ``"keysight-x"`` or ``"siglent-sds1000xe"``.
    wire:
        Trigger wire socket to bind, or ``None`` (edges only from :meth:`inject_edges`).
    truth:
        Truth log (JSONL) to write, or ``None``.
    shunt_ohms:
        The shunt between supply and board, Ω.
    adc_noise_lsb:
        White noise of the scope's front end and ADC, codes rms.
    latency_s:
        How long after a record's last sample the acquisition completes at the earliest
        (later while the trigger window's fall has not arrived), s.
    port:
        TCP port on 127.0.0.1 (0: any free one).
    seed:
        Seed of the noise.
    """

    SUPPLY_CH, SHUNT_CH, TRIGGER_CH = 1, 2, 3
    name = "scope"
    tick_s = 0.002

    def __init__(self, model: PowerModel, *, dialect: str = "rigol-ds1000z",
                 wire: str | os.PathLike[str] | None = None,
                 truth: str | os.PathLike[str] | None = None, shunt_ohms: float = 1.0,
                 adc_noise_lsb: float = 0.5, latency_s: float = 0.05, port: int = 0,
                 seed: int = 0, load_switch: str | os.PathLike[str] | None = None) -> None:
        if dialect not in EMULATED:
            raise ValueError(f"scope emulator speaks {', '.join(EMULATED)}, not {dialect!r}")
        self.model = model
        self.switch = LoadSwitch(None if load_switch is None else Path(load_switch))
        self.dialect: Dialect = DIALECTS[dialect]
        self.encoding = EMULATED[dialect]
        self.shunt_ohms = shunt_ohms
        self.adc_noise_lsb = adc_noise_lsb
        self.latency_ns = int(latency_s * 1e9)
        super().__init__(wire=wire, truth=truth, port=port)
        self.commands: list[str] = []
        self._rng = np.random.default_rng(seed)
        self._edges: EdgeArray = NO_EDGES
        self._handlers = _compile(self.dialect.name)
        self._arming = 0               # arms so far: a render finished late knows its own
        self._reset()

    # -- state -----------------------------------------------------------------------------
    def _reset(self) -> None:
        self.state = State(channels={n: Channel(display=n == 1)
                                     for n in range(1, self.dialect.channels + 1)})
        self._record: dict[int, npt.NDArray[np.integer]] = {}
        self._record_x: tuple[float, float] = (0.0, 0.0)   # (x increment, x origin)
        self._armed_ns = 0
        self._t0_ns = 0
        self._t_end_ns = 0
        self._rendered_end_ns = 0

    @property
    def resource(self) -> str:
        """The VISA resource string of this emulator."""
        return f"TCPIP::127.0.0.1::{self.port}::SOCKET"

    def _n_on(self) -> int:
        return max(1, sum(c.display for c in self.state.channels.values()))

    def _screen_s(self) -> float:
        return self.state.timebase_s * self.dialect.h_divs

    def sample_rate(self) -> tuple[float, int]:
        """(rate Sa/s, points) of a record with the current settings."""
        screen = self._screen_s()
        max_rate = self.dialect.rate_limit(self._n_on())
        if self.dialect.depths is not None:
            depth = self.state.depth or self.dialect.depth_choices(self._n_on())[0]
            rate = min(max_rate, depth / screen)
        else:
            points = self.dialect.depth_choices(self._n_on())[0]
            limit = min(max_rate, points / screen)
            rate = max(r for r in steps_125(1.0, max_rate) if r <= limit * 1.0001)
        return rate, int(round(rate * screen))

    @property
    def address(self) -> str:
        """The VISA resource string (the emulator's first stdout line)."""
        return self.resource

    def reply(self, request: bytes) -> bytes | None:
        """The reply to one program message, ASCII."""
        out = self.execute(request.decode("ascii", "replace").strip())
        if out is None:
            return None
        return out if isinstance(out, bytes) else out.encode("ascii")

    # -- commands --------------------------------------------------------------------------
    def execute(self, line: str) -> Reply:
        """Run one program message (commands separated by ``;``); the last query's reply."""
        reply: Reply = None
        for command in filter(None, (c.strip() for c in line.split(";"))):
            self.commands.append(command)
            header, _, arg = command.partition(" ")
            with self._lock:
                for pattern, handler in self._handlers:
                    m = pattern.fullmatch(header)
                    if m is not None:
                        try:
                            out = handler(self, [int(g) for g in m.groups() if g], arg.strip())
                        except (ValueError, KeyError, IndexError) as exc:
                            self._error(-224, f"Illegal parameter value; {command}: {exc}")
                            out = None
                        reply = out if out is not None else reply
                        break
                else:
                    self._error(-113, f"Undefined header; {command}")
        return reply

    def _error(self, code: int, text: str) -> None:
        log.warning("scope emulator: %d %s", code, text)
        self.state.errors.append(f'{code},"{text}"')

    # -- acquisition -----------------------------------------------------------------------
    def arm(self) -> None:
        self._arming += 1
        self._record = {}
        self.state.acq = "armed"
        self._armed_ns = time.monotonic_ns()

    def _pre_ns(self) -> int:
        return int(round((self._screen_s() / 2 - self.state.position_s) * 1e9))

    def tick(self) -> Callable[[], None] | None:
        """Take the wire's edges, trigger, and when the record is complete its render job."""
        edges = self._drain()
        if len(edges):
            merged = np.concatenate([self._edges, edges])
            self._edges = merged[np.argsort(merged["t_ns"], kind="stable")]
        if self.state.acq == "armed" and len(edges):
            self._trigger(edges)
        if self._truth is not None and len(edges):
            t = edges["t_ns"].astype(np.int64)
            late = (t <= self._rendered_end_ns) & (t >= self._t0_ns)
            self._truth.feed(edges, self.model, self.model.supply_v, True, late)
        complete_ns = self._t_end_ns + self.latency_ns
        if (self.state.acq == "triggered" and time.monotonic_ns() >= complete_ns
                and self._wire_known()):
            return self._render_job()
        return None

    def _wire_known(self) -> bool:
        """Whether the trigger's level up to the record's end is known: the last edge
        received falls, or lies at or after the end. The DUT sends each edge as it makes it,
        so a window still high has its fall on the way; on a loaded host that can take
        longer than ``latency_s``, and a record rendered before it would show the window
        outlasting it."""
        last = self._edges[-1]
        return bool(last["level"] == 0 or int(last["t_ns"]) >= self._t_end_ns)

    def _trigger(self, edges: EdgeArray) -> None:
        """Trigger on the first rising edge after the pre-trigger memory filled."""
        if (self.state.trigger_ch != self.TRIGGER_CH
                or not 0.0 < self.state.trigger_level_v < self.model.supply_v):
            return  # only CH3 carries the GPIO, swinging 0 .. supply_v
        pre_ns = self._pre_ns()
        t = edges["t_ns"].astype(np.int64)
        ok = (edges["level"] == 1) & (t >= self._armed_ns + pre_ns)
        if not ok.any():
            return
        t_rise = int(t[np.argmax(ok)])
        rate, points = self.sample_rate()
        self._t0_ns = t_rise - pre_ns
        self._t_end_ns = self._t0_ns + int(points / rate * 1e9)
        self._record_x = (1.0 / rate, -pre_ns * 1e-9)
        self.state.acq = "triggered"
        if self._truth is not None:
            self._truth.stream_started(self._t0_ns, int(round(1e9 / rate)), self.model.supply_v,
                                       self.model)

    def _render_job(self) -> Callable[[], None]:
        """Take, under the lock, what the record needs; the job returned renders it without
        the lock (so commands, the status query among them, are answered while a deep record
        takes seconds of a loaded host's CPU) and then completes the acquisition, unless it
        was stopped or armed anew meanwhile."""
        rate, points = self.sample_rate()
        t_ns = self._t0_ns + np.rint(np.arange(points) * (1e9 / rate)).astype(np.int64)
        edges, load, arming = self._edges, self.switch.load(), self._arming
        channels = {n: replace(ch) for n, ch in self.state.channels.items() if ch.display}

        def job() -> None:
            current = measured_current(self.model, t_ns, edges, self._rng, load)
            signals = {self.SUPPLY_CH: self.model.supply_v + current * self.shunt_ohms,
                       self.SHUNT_CH: current * self.shunt_ohms,
                       self.TRIGGER_CH: logic_level(t_ns, edges, self.model.overhead_s)
                       * self.model.supply_v}
            lo, hi = self.dialect.code_range
            record = {}
            for n, ch in channels.items():
                yinc, zero, _, _ = self.encoding.scaling(ch, self.encoding.codes_per_div)
                volts = signals.get(n, np.zeros(points))
                codes = volts / yinc + zero + self._rng.normal(0.0, self.adc_noise_lsb, points)
                record[n] = np.clip(np.rint(codes), lo, hi).astype(self.dialect.datatype)
            keep = max(0, int(np.searchsorted(edges["t_ns"].astype(np.int64), t_ns[-1])) - 1)
            with self._lock:
                self._rendered_end_ns = int(t_ns[-1])
                self._edges = self._edges[keep:]
                if self._arming == arming and self.state.acq == "triggered":
                    self._record = record
                    self.state.acq = "done"
        return job

    # -- waveform replies ------------------------------------------------------------------
    def block(self, data: bytes) -> bytes:
        enc = self.encoding
        digits = enc.block_digits
        return (enc.block_prefix + b"#" + str(digits).encode() + f"{len(data):0{digits}d}".encode()
                + data + enc.block_suffix)

    def preamble(self) -> str:
        n = self.state.wav_source
        codes = self._record.get(n)
        if codes is None:
            raise ValueError(f"no record of CH{n}")
        yinc, _, yorigin, yref = self.encoding.scaling(self.state.channels[n],
                                                       self.encoding.codes_per_div)
        xinc, xorigin = self._record_x
        return self.encoding.preamble(len(codes), xinc, xorigin, yinc, yorigin, yref)

    def data(self) -> bytes:
        if self.state.acq not in ("done", "stopped"):
            raise ValueError("waveform memory is read with the scope stopped")
        codes = self._record.get(self.state.wav_source)
        if codes is None:
            raise ValueError(f"no record of CH{self.state.wav_source}")
        limit = self.dialect.read_points
        if limit is None:
            return self.block(codes.tobytes())
        first, last = self.state.wav_start, min(self.state.wav_stop, len(codes))
        if not 1 <= first <= last or last - first + 1 > limit:
            raise ValueError(f"points {first}..{last} (at most {limit} per read)")
        return self.block(codes[first - 1:last].tobytes())


# -- the command tables ---------------------------------------------------------------------
Handler = Callable[[ScopeEmulator, list[int], str], Reply]


def _node(text: str) -> str:
    """``CHANnel<n>`` -> a regex accepting ``CHAN1``/``channel1`` (short or long form)."""
    suffix = text.endswith("<n>")
    word = text[:-3] if suffix else text
    short = "".join(c for c in word if c.isupper() or c.isdigit() or c == "*")
    forms = sorted({re.escape(short), re.escape(word.upper())}, key=len, reverse=True)
    return "(?:" + "|".join(forms) + ")" + (r"(\d+)" if suffix else "")


def _pattern(notation: str) -> re.Pattern[str]:
    query = notation.endswith("?")
    body = notation.rstrip("?")
    lead = body.startswith(":")
    nodes = [n for n in body.split(":") if n]
    regex = (":?" if lead or not body.startswith("*") else "") + ":".join(_node(n) for n in nodes)
    return re.compile(regex + (r"\?" if query else ""), re.IGNORECASE)


def _ch(arg: str) -> int:
    m = re.fullmatch(r"(?:CHAN(?:NEL)?|C)(\d)", arg.strip(), re.IGNORECASE)
    if m is None:
        raise ValueError(f"not a channel: {arg!r}")
    return int(m.group(1))


def _onoff(arg: str) -> bool:
    word = arg.strip().upper()
    if word not in ("ON", "OFF", "1", "0"):
        raise ValueError(f"not ON/OFF: {arg!r}")
    return word in ("ON", "1")


def _set_chan(attr: str, parse: Callable[[str], object]) -> Handler:
    def handler(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
        setattr(emu.state.channels[n[0]], attr, parse(arg))
        return None
    return handler


def _get_chan(attr: str) -> Handler:
    def handler(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
        value = getattr(emu.state.channels[n[0]], attr)
        return str(int(value)) if isinstance(value, bool) else f"{value:.6e}"
    return handler


def _set(attr: str, parse: Callable[[str], object]) -> Handler:
    def handler(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
        setattr(emu.state, attr, parse(arg))
        return None
    return handler


def _get(attr: str) -> Handler:
    def handler(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
        return f"{getattr(emu.state, attr):.6e}"
    return handler


def _accept(choices: tuple[str, ...]) -> Handler:
    """A setting the emulator accepts only with the value(s) the rig uses."""
    allowed = {c.upper() for c in choices}

    def handler(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
        if arg.strip().upper() not in allowed:
            raise ValueError(f"{arg!r} not emulated (only {', '.join(choices)})")
        return None
    return handler


def _depth(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    depth = int(number(arg))                  # 300000, or as Siglent writes it: 70K, 1.4M
    allowed = emu.dialect.depth_choices(emu._n_on())
    if depth not in allowed:
        raise ValueError(f"depth {depth} not in {allowed} with {emu._n_on()} channels on")
    emu.state.depth = depth
    return None


def _single(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    emu.arm()
    return None


def _stop(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    if emu.state.acq != "done":
        emu.state.acq = "stopped"
    return None


def _run(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    emu.state.acq = "running"
    return None


def _rigol_status(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    return {"stopped": "STOP", "done": "STOP", "running": "RUN", "armed": "WAIT",
            "triggered": "TD"}[emu.state.acq]


def _siglent_status(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    return {"stopped": "Stop", "done": "Stop", "running": "Auto", "armed": "Ready",
            "triggered": "Trig'd"}[emu.state.acq]


def _siglent_cmr(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    """CMR?: 0, or 1 (unrecognised command) / 3 (illegal value) for the oldest error."""
    if not emu.state.errors:
        return "0"
    return "1" if emu.state.errors.pop(0).startswith("-113") else "3"


def _siglent_trigger_select(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    """TRSE EDGE,SR,C<n>,HT,OFF: an edge trigger on C<n> without holdoff."""
    kind, sr, source, *hold = (a.strip().upper() for a in arg.split(","))
    if (kind, sr, hold) != ("EDGE", "SR", ["HT", "OFF"]):
        raise ValueError(f"{arg!r} not emulated (only EDGE,SR,C<n>,HT,OFF)")
    emu.state.trigger_ch = _ch(source)
    return None


def _siglent_waveform(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    """C<n>:WF? DAT2 (the WFSU setup the rig sends: every point from the first)."""
    if arg.strip().upper() != "DAT2":
        raise ValueError(f"WF? {arg!r} not emulated (only DAT2)")
    emu.state.wav_source = n[0]
    return emu.data()


def _siglent_points(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    record = emu._record.get(_ch(arg))
    return f"{len(record) if record is not None else emu.sample_rate()[1]:.6e}"


def _oper_condition(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    return "+8" if emu.state.acq in ("armed", "triggered", "running") else "+0"


def _error_query(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    if emu.state.errors:
        return emu.state.errors.pop(0)
    return '0,"No error"' if emu.dialect.name.startswith("rigol") else '+0,"No error"'


def _idn(text: str) -> Handler:
    return lambda emu, n, arg: text


def _rst(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    emu._reset()
    return None


def _cls(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    emu.state.errors.clear()
    return None


def _srate(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    return f"{emu.sample_rate()[0]:.6e}"


def _wav_points(emu: ScopeEmulator, n: list[int], arg: str) -> Reply:
    if arg.strip().upper() not in ("MAX", "MAXIMUM"):
        int(arg)
    return None


_COMMON: tuple[tuple[str, Handler], ...] = (
    ("*RST", _rst), ("*CLS", _cls), ("*OPC?", lambda emu, n, arg: "1"),
    (":SYSTem:ERRor?", _error_query), (":SYSTem:ERRor:NEXT?", _error_query),
    (":STOP", _stop), (":RUN", _run), (":SINGle", _single),
    (":CHANnel<n>:DISPlay", _set_chan("display", _onoff)),
    (":CHANnel<n>:DISPlay?", _get_chan("display")),
    (":CHANnel<n>:SCALe", _set_chan("scale_v", float)),
    (":CHANnel<n>:SCALe?", _get_chan("scale_v")),
    (":CHANnel<n>:OFFSet", _set_chan("offset_v", float)),
    (":CHANnel<n>:OFFSet?", _get_chan("offset_v")),
    (":CHANnel<n>:PROBe", _set_chan("probe", float)),
    (":CHANnel<n>:COUPling", _accept(("DC",))),
    (":ACQuire:TYPE", _accept(("NORM", "NORMAL"))),
    (":ACQuire:SRATe?", _srate),
    (":TRIGger:MODE", _accept(("EDGE",))),
    (":WAVeform:SOURce", _set("wav_source", _ch)),
    (":WAVeform:FORMat", _accept(("BYTE",))),
    (":WAVeform:PREamble?", lambda emu, n, arg: emu.preamble()),
    (":WAVeform:DATA?", lambda emu, n, arg: emu.data()),
)

#: Headers of each emulated family (their rows' commands, as in the dialect table's guides).
_TABLES: dict[str, tuple[tuple[str, Handler], ...]] = {
    "rigol-ds1000z": (
        ("*IDN?", _idn("RIGOL TECHNOLOGIES,DS1104Z,DS1ZA000000000,00.04.04.SP4")),
        (":TIMebase:MAIN:SCALe", _set("timebase_s", float)),
        (":TIMebase:SCALe", _set("timebase_s", float)),
        (":TIMebase:MAIN:SCALe?", _get("timebase_s")),
        (":TIMebase:MAIN:OFFSet", _set("position_s", float)),
        (":TIMebase:OFFSet", _set("position_s", float)),
        (":TIMebase:MAIN:OFFSet?", _get("position_s")),
        (":ACQuire:MDEPth", _depth),
        (":TRIGger:EDGe:SOURce", _set("trigger_ch", _ch)),
        (":TRIGger:EDGe:SLOPe", _accept(("POS", "POSITIVE"))),
        (":TRIGger:EDGe:LEVel", _set("trigger_level_v", float)),
        (":TRIGger:SWEep", _accept(("SING", "SINGLE"))),
        (":TRIGger:STATus?", _rigol_status),
        (":WAVeform:MODE", _accept(("RAW",))),
        (":WAVeform:STARt", _set("wav_start", int)),
        (":WAVeform:STOP", _set("wav_stop", int)),
    ),
    "keysight-x": (
        ("*IDN?", _idn("KEYSIGHT TECHNOLOGIES,DSOX3034T,MY00000000,07.50.2021102830")),
        (":TIMebase:MODE", _accept(("MAIN",))),
        (":TIMebase:REFerence", _accept(("CENT", "CENTER"))),
        (":TIMebase:SCALe", _set("timebase_s", float)),
        (":TIMebase:SCALe?", _get("timebase_s")),
        (":TIMebase:POSition", _set("position_s", float)),
        (":TIMebase:POSition?", _get("position_s")),
        (":TRIGger:EDGE:SOURce", _set("trigger_ch", _ch)),
        (":TRIGger:EDGE:SLOPe", _accept(("POS", "POSITIVE"))),
        (":TRIGger:EDGE:LEVel", _set("trigger_level_v", float)),
        (":TRIGger:SWEep", _accept(("NORM", "NORMAL"))),
        (":OPERegister:CONDition?", _oper_condition),
        (":WAVeform:UNSigned", _accept(("1", "ON"))),
        (":WAVeform:POINts:MODE", _accept(("RAW",))),
        (":WAVeform:POINts", _wav_points),
    ),
    "siglent-sds1000xe": (
        ("*IDN?", _idn("Siglent Technologies,SDS1104X-E,SDS1ECDD2R0000,8.2.6.1.37R9")),
        ("CHDR", _accept(("OFF",))),
        ("WFSU", _accept(("SP,0,NP,0,FP,0",))),
        ("CMR?", _siglent_cmr),
        ("ARM", _single),
        ("C<n>:TRA", _set_chan("display", _onoff)),
        ("C<n>:CPL", _accept(("D1M",))),
        ("C<n>:ATTN", _set_chan("probe", float)),
        ("C<n>:VDIV", _set_chan("scale_v", number)),
        ("C<n>:VDIV?", _get_chan("scale_v")),
        ("C<n>:OFST", _set_chan("offset_v", number)),
        ("C<n>:OFST?", _get_chan("offset_v")),
        ("TDIV", _set("timebase_s", number)),
        ("TDIV?", _get("timebase_s")),
        ("TRDL", _set("position_s", lambda arg: -number(arg))),
        ("TRDL?", lambda emu, n, arg: f"{-emu.state.position_s:.6e}"),
        ("MSIZ", _depth),
        ("TRSE", _siglent_trigger_select),
        ("C<n>:TRSL", _accept(("POS",))),
        ("C<n>:TRLV", _set("trigger_level_v", number)),
        ("TRMD", _accept(("SINGLE",))),
        ("SAST?", _siglent_status),
        ("SARA?", _srate),
        ("SANU?", _siglent_points),
        ("C<n>:WF?", _siglent_waveform),
    ),
}

EMULATED: dict[str, Encoding] = {
    "rigol-ds1000z": Encoding(codes_per_div=25.0, block_digits=9, scaling=_rigol_scaling,
                              preamble=_rigol_preamble),
    "keysight-x": Encoding(codes_per_div=32.0, block_digits=8, scaling=_keysight_scaling,
                           preamble=_keysight_preamble),
    "siglent-sds1000xe": Encoding(codes_per_div=25.0, block_digits=9,
                                  scaling=_siglent_legacy_scaling, preamble=_no_preamble,
                                  block_prefix=b"DAT2,", block_suffix=b"\n"),
}


def _compile(dialect: str) -> list[tuple[re.Pattern[str], Handler]]:
    return [(_pattern(notation), handler) for notation, handler in _COMMON + _TABLES[dialect]]


def main(argv: list[str], announce: Callable[[str], None]) -> int:
    """Serve as the command line ``argv`` says, ``announce`` the VISA resource, until SIGTERM
    or SIGINT (or the parent is gone; the program: ``python -m energyrig.cli.emulate``)."""
    parser = emulator_parser(
        "energyrig.instruments.scope.emulator",
        "Emulated SCPI oscilloscope on loopback TCP (shunt method: CH1 supply, CH2 shunt, "
        "CH3 trigger), driven by a power model and the virtual trigger wire. Prints the VISA "
        "resource on the first stdout line.")
    parser.add_argument("--dialect", choices=sorted(EMULATED), default="rigol-ds1000z")
    parser.add_argument("--shunt-ohms", type=float, default=1.0, help="shunt, ohm")
    parser.add_argument("--adc-noise-lsb", type=float, default=0.5,
                        help="front-end noise, codes rms (default: %(default)s)")
    parser.add_argument("--latency-s", type=float, default=0.05,
                        help="an acquisition completes this long after its last sample "
                             "(default: %(default)s)")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free one)")
    args, model = parse_emulator_args(parser, argv)
    with ScopeEmulator(model, dialect=args.dialect, wire=args.wire, truth=args.truth,
                       shunt_ohms=args.shunt_ohms, adc_noise_lsb=args.adc_noise_lsb,
                       latency_s=args.latency_s, port=args.port, seed=args.seed,
                       load_switch=args.load_switch) as emu:
        serve_until_stopped(emu.resource, announce)
    return 0

