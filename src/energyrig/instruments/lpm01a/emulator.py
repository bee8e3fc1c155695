"""An emulated STM32 Power Shield (X-NUCLEO-LPM01A) on a pty, speaking its serial protocol.

:class:`Lpm01aEmulator` answers the board's text commands (:mod:`.protocol`: ``htc``,
``status``, ``volt``, ``freq``, ``acqtime``, ``format``, ``trigsrc``, ``eventsrc``, ``pwr``,
``start``, ``stop``... with ``ack`` or ``error`` and its detail) and, between ``start`` and
``stop`` (or the end of ``acqtime``), streams the current in real time in the format set
(:mod:`.processing`): sample ``k`` is taken at ``t0 + k / freq`` of CLOCK_MONOTONIC, sent
``latency_s`` late in blocks every ``block_s``, with a timestamp every second and an event
where each edge of D7 came (``eventsrc d7 ris|fal|both``). Its current comes from the
:class:`~energyrig.instruments.sim.power.PowerModel` and the edges of the
:class:`~energyrig.instruments.sim.wire.TriggerWire` (the DUT's trigger output wired to D7),
at the supply ``volt`` set while ``pwr`` is on; the true energy of every window goes to the
truth log. ``trigsrc d7`` starts the acquisition at D7's next rising edge.

Like the board, it never blocks on a slow host: a block that does not fit its transmit
buffer (``tx_buffer_s``) is dropped, which the next timestamp shows. Faults of the model
applied: offset, gain, noise and skew (``measured_current``).

Run it in its own process (the rig's simulated bench does)::

    python -m energyrig.cli.emulate energyrig.instruments.lpm01a.emulator --wire W --truth T

prints the pty path on its first stdout line and serves until SIGTERM/SIGINT or its parent's
death.
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

import numpy as np

from energyrig.instruments.lpm01a.config import ASCII_MAX_RATE_HZ, SAMPLE_RATES_HZ
from energyrig.instruments.lpm01a.processing import (
    encode_ascii,
    encode_words,
    end_message,
    text_message,
    timestamp_message,
)
from energyrig.instruments.lpm01a.protocol import (
    COMPLETED,
    EOL,
    PROMPT,
    ack_line,
    error_lines,
    parse_value,
)
from energyrig.instruments.sim.power import PowerModel, logic_level, measured_current
from energyrig.instruments.sim.process import parse_emulator_args, serve_until_stopped
from energyrig.instruments.sim.pty import PtyEmulator, pty_emulator_parser
from energyrig.instruments.sim.wire import NO_EDGES, EdgeArray

log = logging.getLogger(__name__)

#: The emulated board's unique id is this plus its seed (``[sim] seed``): benches of other
#: seeds are other instruments to the calibration store.
BOARD_ID_BASE = 0x4C504D000000
#: The firmware version the emulated board reports.
VERSION = "1.0.5"
_EDGES = {"ris": (1,), "fal": (0,), "both": (0, 1)}


class CommandError(Exception):
    """A command the board refuses; the message is its ``Error detail``."""


class Lpm01aEmulator(PtyEmulator):
    """A Power Shield on a pty, driven by a power model and the virtual trigger wire.

    Parameters
    ----------
    model:
        The board's current and the instrument's faults.
    wire:
        Path of the trigger wire socket to bind (the DUT's trigger output on D7), or ``None``.
    truth:
        Path of the truth log (JSONL) to write, or ``None``.
    latency_s:
        How far the stream lags real time, s.
    block_s:
        Interval between transmitted blocks, s.
    tx_buffer_s:
        Transmit buffer, in seconds of 100 kHz ``bin_hexa`` samples; a block that does not fit
        is dropped.
    seed:
        Seed of the noise, and of the board id (:data:`BOARD_ID_BASE` + seed).
    load_switch:
        The load switch's file (:mod:`energyrig.instruments.sim.switch`), or ``None``.
    """

    label = "Power Shield emulator"

    def __init__(self, model: PowerModel, *, wire: str | os.PathLike[str] | None = None,
                 truth: str | os.PathLike[str] | None = None, latency_s: float = 0.05,
                 block_s: float = 0.005, tx_buffer_s: float = 0.5, seed: int = 0,
                 load_switch: str | os.PathLike[str] | None = None) -> None:
        super().__init__(model, wire=wire, truth=truth, latency_s=latency_s, block_s=block_s,
                         seed=seed, load_switch=load_switch)
        self.tx_limit = int(tx_buffer_s * 100_000) * 2
        self.board_id = f"{BOARD_ID_BASE + seed:012X}"
        self.commands: list[str] = []
        self.dropped_samples = 0
        self._reset()

    # -- the board's settings --------------------------------------------------------------
    def _reset(self) -> None:
        """The settings at power-up (the board's ``help``: each command's default)."""
        self.controlled = False
        self.volt_mv = 3300
        self.rate_hz = 100
        self.acqtime_s = 10.0
        self.fmt = "ascii_dec"
        self.output = "current"
        self.trigsrc = "sw"
        self.eventsrc: str | None = None
        self.pwr = "auto"
        self.powered = False
        self.acquiring = False
        self.waiting_d7 = False
        self._rx = bytearray()
        self._tx = bytearray()
        self._edges: EdgeArray = NO_EDGES
        self._t0_ns = self._next_k = self._events = 0
        self._level = 0
        self._rendered_ns = 0

    @property
    def supply_v(self) -> float:
        """The supply the board gives its target, V (0 while off)."""
        return self.volt_mv / 1000.0

    @property
    def period_ns(self) -> int:
        return 1_000_000_000 // self.rate_hz

    def _report(self) -> None:
        log.log(logging.WARNING if self.dropped_samples else logging.INFO,
                "Power Shield emulator: %d commands, %d samples dropped (host not reading)",
                len(self.commands), self.dropped_samples)

    # -- serving ---------------------------------------------------------------------------
    def _received(self, data: bytes) -> None:
        self._rx += data
        while b"\n" in self._rx:
            raw, _, rest = bytes(self._rx).partition(b"\n")
            self._rx = bytearray(rest)
            line = raw.decode("ascii", errors="replace").strip()
            if line:
                self._tx += self.execute(line)

    def _tick(self) -> None:
        edges, _ = self._take_edges(self.acquiring, self.supply_v, self.powered)
        if self.waiting_d7:
            rises = edges["t_ns"][edges["level"] != 0]
            if len(rises):
                self._open_stream(int(rises.min()))
        if self.acquiring:
            self._render()
        self._transmit()

    # -- commands --------------------------------------------------------------------------
    def execute(self, line: str) -> bytes:
        """The board's answer to the command ``line`` (and what it does)."""
        self.commands.append(line)
        name, *args = line.split()
        if name == "stop":
            return self._end() if self.acquiring or self.waiting_d7 else b""
        try:
            handler = _COMMANDS[name]
        except KeyError:
            return error_lines(line, f"command '{name}' unknown; send 'help'")
        try:
            if name not in _ANY_TIME and not self.controlled:
                raise CommandError("host has not taken control; send 'htc' first")
            if (self.acquiring or self.waiting_d7) and name not in _DURING:
                raise CommandError("acquisition in progress; send 'stop' first")
            value = handler(self, args)
        except CommandError as exc:
            return error_lines(line, str(exc))
        except (ValueError, IndexError):
            return error_lines(line, f"invalid argument '{' '.join(args)}'")
        reply = ack_line(line, value or "")
        if name == "start":
            reply += self._begin()
        return reply

    def _choice(self, args: list[str], allowed: tuple[str, ...]) -> str:
        if len(args) != 1 or args[0] not in allowed:
            raise CommandError(f"argument must be one of {', '.join(allowed)}")
        return args[0]

    def _htc(self, args: list[str]) -> None:
        self.controlled = True

    def _hrc(self, args: list[str]) -> None:
        self.controlled = False

    def _volt(self, args: list[str]) -> str | None:
        if args == ["get"]:
            return f"{self.volt_mv:04d}-03"
        volts = parse_value(args[0])
        if not 1.8 <= volts <= 3.3 + 1e-9:
            raise CommandError("voltage out of range [1800m; 3300m]")
        self.volt_mv = round(volts * 1000)
        return None

    def _freq(self, args: list[str]) -> None:
        rate = round(parse_value(args[0]))
        if rate not in SAMPLE_RATES_HZ:
            raise CommandError("frequency not in list {100k, 50k, 20k, 10k, 5k, 2k, 1k, 500, "
                               "200, 100, 50, 20, 10, 5, 2, 1}")
        self.rate_hz = rate

    def _acqtime(self, args: list[str]) -> None:
        seconds = 0.0 if args[0] == "inf" else parse_value(args[0])
        if seconds and not 100e-6 <= seconds <= 100:
            raise CommandError("acquisition time out of range [100u; 100] (0 or inf: "
                               "no limit)")
        self.acqtime_s = seconds

    def _format(self, args: list[str]) -> None:
        self.fmt = self._choice(args, ("ascii_dec", "bin_hexa"))

    def _output(self, args: list[str]) -> None:
        if self._choice(args, ("current", "energy")) == "energy":
            raise CommandError("output energy is not emulated; use output current")
        self.output = args[0]

    def _trigsrc(self, args: list[str]) -> None:
        self.trigsrc = self._choice(args, ("sw", "d7"))

    def _eventsrc(self, args: list[str]) -> None:
        if len(args) != 2 or args[0] != "d7" or args[1] not in _EDGES:
            raise CommandError("arguments must be d7 and one of ris, fal, both")
        self.eventsrc = args[1]

    def _pwr(self, args: list[str]) -> str | None:
        if args[0] == "get":
            return "on" if self.powered else "off"
        self.pwr = self._choice(args[:1], ("auto", "on", "off"))
        if self.pwr != "auto":
            self.powered = self.pwr == "on"
        return None

    def _status(self, args: list[str]) -> str:
        return "ok"

    def _version(self, args: list[str]) -> str:
        return VERSION

    def _powershield(self, args: list[str]) -> str:
        return self.board_id

    def _temp(self, args: list[str]) -> str:
        unit = self._choice(args or ["degc"], ("degc", "degf"))
        return "25.0" if unit == "degc" else "77.0"

    def _accept(self, args: list[str]) -> None:
        """A setting the emulator takes and has no use for (``lcd``, ``trigdelay``...)."""

    def _start(self, args: list[str]) -> None:
        if self.fmt == "ascii_dec" and self.rate_hz > ASCII_MAX_RATE_HZ and not self.acqtime_s:
            raise CommandError(f"format ascii_dec limited to {ASCII_MAX_RATE_HZ // 1000}k "
                               "without an acquisition time; use bin_hexa")

    # -- the acquisition -------------------------------------------------------------------
    def _begin(self) -> bytes:
        """After ``start``'s ack: stream now, or at D7's next rising edge (``trigsrc d7``)."""
        if self.pwr == "auto":
            self.powered = True
        if self.trigsrc == "d7":
            self.waiting_d7 = True
            return b""
        self._open_stream(time.monotonic_ns())
        return b""

    def _open_stream(self, t0_ns: int) -> None:
        self.waiting_d7 = False
        self.acquiring = True
        self._t0_ns = t0_ns
        self._next_k = self._events = 0
        self._level = int(logic_level(np.array([t0_ns - 1]), self._edges,
                                      self.model.overhead_s)[0])
        self._rendered_ns = t0_ns - self.period_ns
        if self._truth is not None:
            self._truth.stream_started(t0_ns, self.period_ns, self.supply_v, self.model)

    def _end(self) -> bytes:
        """End the acquisition: its end tag and the text after it."""
        was = self.acquiring
        self.acquiring = self.waiting_d7 = False
        tail = end_message(self.fmt) if was else b""
        return tail + EOL + f"{PROMPT}{COMPLETED}".encode("ascii") + EOL

    def _render(self) -> None:
        now_ns = time.monotonic_ns() - self.latency_ns
        end_k = (now_ns - self._t0_ns) // self.period_ns
        limit = round(self.acqtime_s * self.rate_hz) if self.acqtime_s else None
        if limit is not None:
            end_k = min(end_k, limit)
        n = int(end_k - self._next_k)
        if n > 0:
            self._tx_block(n)
        if limit is not None and self._next_k >= limit:
            self._tx += self._end()

    def _tx_block(self, n: int) -> None:
        """Render samples ``next_k`` .. ``next_k + n`` with their timestamps and events."""
        k = self._next_k + np.arange(n, dtype=np.int64)
        t_ns = self._t0_ns + k * self.period_ns
        current = (measured_current(self.model, t_ns, self._edges, self._rng, self.switch.load(),
                                    self.supply_v) if self.powered else np.zeros(n))
        level = logic_level(t_ns, self._edges, self.model.overhead_s).astype(np.int64)
        previous = np.concatenate([[self._level], level[:-1]])
        marks: list[tuple[int, bytes]] = []
        if self.eventsrc is not None:
            for at in np.flatnonzero((level != previous) & np.isin(level,
                                                                    _EDGES[self.eventsrc])):
                self._events += 1
                edge = "ris" if level[at] else "fal"
                marks.append((int(at), text_message(f"event {self._events} {edge}", self.fmt)))
        load = min(99, 100 * len(self._tx) // max(self.tx_limit, 1))
        for at in np.flatnonzero(k % self.rate_hz == 0):  # a timestamp each second
            ms = int(k[at]) * 1000 // self.rate_hz
            marks.append((int(at), timestamp_message(ms, load, self.fmt)))
        marks.sort(key=lambda m: m[0])
        encode = encode_words if self.fmt == "bin_hexa" else encode_ascii
        parts, done = [], 0
        for at, message in marks:
            parts += [encode(current[done:at]), message]
            done = at
        parts.append(encode(current[done:]))
        self._level = int(level[-1])
        self._next_k += n
        self._rendered_ns = int(t_ns[-1])
        self._trim_edges()
        data = b"".join(parts)
        if len(self._tx) + len(data) > self.tx_limit:
            self.dropped_samples += n
            log.warning("Power Shield emulator: host is not reading; %d samples dropped", n)
            return
        self._tx += data


_COMMANDS: dict[str, Callable[[Lpm01aEmulator, list[str]], str | None]] = {
    "htc": Lpm01aEmulator._htc, "hrc": Lpm01aEmulator._hrc,
    "status": Lpm01aEmulator._status, "version": Lpm01aEmulator._version,
    "powershield": Lpm01aEmulator._powershield, "volt": Lpm01aEmulator._volt,
    "freq": Lpm01aEmulator._freq, "acqtime": Lpm01aEmulator._acqtime,
    "format": Lpm01aEmulator._format, "output": Lpm01aEmulator._output,
    "trigsrc": Lpm01aEmulator._trigsrc, "eventsrc": Lpm01aEmulator._eventsrc,
    "pwr": Lpm01aEmulator._pwr, "temp": Lpm01aEmulator._temp, "start": Lpm01aEmulator._start,
    **{name: Lpm01aEmulator._accept for name in (
        "help", "echo", "lcd", "trigdelay", "currthres", "pwrend", "acqmode", "funcmode",
        "range", "targrst", "autotest", "calib", "psrst")},
}
#: Commands the board takes before ``htc``.
_ANY_TIME = frozenset({"htc", "hrc", "help", "echo", "powershield", "version", "status"})
#: Commands the board takes while acquiring.
_DURING = frozenset({"pwr", "targrst", "status", "temp", "lcd"})


def main(argv: list[str], announce: Callable[[str], None]) -> int:
    """Serve as the command line ``argv`` says, ``announce`` the pty path, until SIGTERM,
    SIGINT or the parent's death (``python -m energyrig.cli.emulate``)."""
    parser = pty_emulator_parser(
        "energyrig.instruments.lpm01a.emulator",
        "Emulated STM32 Power Shield (X-NUCLEO-LPM01A) on a pty, driven by a power model and "
        "the virtual trigger wire on D7. Prints the pty path on the first line of stdout.")
    args, model = parse_emulator_args(parser, argv)
    with Lpm01aEmulator(model, wire=args.wire, truth=args.truth, latency_s=args.latency_s,
                        block_s=args.block_s, tx_buffer_s=args.tx_buffer_s, seed=args.seed,
                        load_switch=args.load_switch) as emu:
        serve_until_stopped(emu.port, announce)
    return 0


__all__ = ["BOARD_ID_BASE", "VERSION", "Lpm01aEmulator", "main"]
