"""An emulated Nordic PPK2 on a pty, speaking the real serial protocol.

:class:`Ppk2Emulator` opens a pseudo-terminal and behaves, on the byte level, like a PPK2
with its stock firmware as ``ppk2-api`` and Nordic's desktop app see it:

* ``GET_META_DATA`` answers the calibration text (:func:`~energyrig.instruments.ppk2.metadata.format_metadata`
  of :data:`DEFAULT_CALIBRATION`, realistic non-trivial constants) ending in ``END``;
* ``REGULATOR_SET``, ``SET_POWER_MODE`` (ampere/source meter), ``DEVICE_RUNNING_SET`` (DUT
  power), ``SET_USER_GAINS``, the spike-filter switches and ``RESET`` change its state;
* ``AVERAGE_START`` .. ``AVERAGE_STOP`` stream 4-byte words at 100 kS/s in real time.

Sample ``k`` of a stream is taken at ``t0 + k * 10 µs`` of CLOCK_MONOTONIC (``t0`` = the
moment ``AVERAGE_START`` arrived). Samples are sent in blocks every ``block_s``, lagging real
time by ``latency_s`` so every trigger edge from the DUT has arrived before the samples around
it are rendered (edges arriving later are counted as ``late_edges`` and logged). Each sample's
current comes from the :class:`~energyrig.instruments.sim.power.PowerModel` and the edges of
the :class:`~energyrig.instruments.sim.wire.TriggerWire`; the emulator picks the range the way
the hardware's auto-ranging does and inverts the calibration to get the ADC code
(:func:`~energyrig.instruments.ppk2.decode.encode_words`), so decoding with the metadata
recovers the model current to within ADC quantisation. Logic bit D0 is the trigger level.
The true energy of every window goes to the truth log (:mod:`energyrig.instruments.sim.truth`).

Like the real device, the emulator never blocks on a slow host: words wait in a bounded
transmit buffer (``tx_buffer_s``) and a block that does not fit is dropped, which the host
sees as a counter gap. Faults of the model (drops, corrupted bytes, disconnect, a loss of
``loss_s`` at once) are applied to the byte stream here, the offset per range
and gain error per range (``range_offset_a``, ``range_gain_error``: :func:`range_faults`) by
the range each sample is measured in; offset, gain and skew in the
model's ``measured_current``.

Run it in its own process so the rig, the DUT and the emulator use separate cores::

    python -m energyrig.cli.emulate energyrig.instruments.ppk2.emulator --wire /tmp/er.wire --truth truth.jsonl

prints the pty path on its first stdout line and runs until SIGTERM/SIGINT or until its
parent process dies; :class:`~energyrig.instruments.sim.process.EmulatorProcess` does
exactly that from Python.
"""
from __future__ import annotations

import logging
import os
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from energyrig.instruments.ppk2.decode import SAMPLE_RATE_HZ, WORD_BYTES, auto_range, encode_words
from energyrig.instruments.ppk2.metadata import N_RANGES, Ppk2Calibration, format_metadata
from energyrig.instruments.ppk2.protocol import (
    COMMAND_ARGS,
    POWER_MODE_AMPERE,
    POWER_MODE_SOURCE,
    SAMPLE_PERIOD_NS,
    Command,
    regulator_mv,
)
from energyrig.instruments.sim.power import (
    PowerModel,
    logic_level,
    measured_current,
    range_faults,
)
from energyrig.instruments.sim.process import parse_emulator_args, serve_until_stopped
from energyrig.instruments.sim.pty import PtyEmulator, pty_emulator_parser
from energyrig.instruments.sim.wire import NO_EDGES, EdgeArray

log = logging.getLogger(__name__)

#: Calibration of the emulated unit: values of the size a factory-calibrated PPK2 reports,
#: with a non-zero quadratic term, offsets and supply terms so a decoder that ignores any of
#: them is visibly wrong.
DEFAULT_CALIBRATION = Ppk2Calibration(
    r=(1003.3506, 101.5865, 10.3992, 0.9958, 0.0413),
    gs=(0.0, 1.85, 0.21, 0.017, 0.0),
    gi=(1.0006, 0.9981, 1.0023, 0.9967, 1.0012),
    o=(112.942, 75.0932, 66.228, 58.17, 53.41),
    s=(4.8e-08, -1.3e-07, 2.1e-07, -5.5e-07, 1.2e-06),
    i=(-1.04e-07, 3.1e-07, -8.2e-07, 2.4e-06, -1.1e-05),
    ug=(1.0,) * N_RANGES,
    calibrated=True, vdd_mv=3000, hw=9173, mode=POWER_MODE_SOURCE, ia=56,
)

#: The emulated unit's serial number is this plus its seed (``[sim] seed``), so benches of
#: different seeds are different instruments to the calibration store.
SERIAL_BASE = 0xEA000000


@dataclass
class EmulatorStats:
    """What the emulator did, for logs and tests."""

    samples: int = 0
    overflow_samples: int = 0
    fault_dropped: int = 0
    corrupted_bytes: int = 0
    late_edges: int = 0
    unknown_bytes: int = 0
    commands: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "commands"}


class Ppk2Emulator(PtyEmulator):
    """A PPK2 on a pty, driven by a power model and the virtual trigger wire.

    Parameters
    ----------
    model:
        The board's current and the instrument faults.
    wire:
        Path of the trigger wire socket to bind, or ``None`` (no DUT edges: logic stays low
        unless edges are given to :meth:`inject_edges`).
    truth:
        Path of the truth log (JSONL) to write, or ``None``.
    calibration:
        Calibration the unit reports and encodes with.
    latency_s:
        How far the stream lags real time, s.
    block_s:
        Interval between transmitted blocks, s.
    tx_buffer_s:
        Transmit buffer, in seconds of samples; a block that does not fit is dropped.
    metadata_split_s:
        If > 0, the metadata is sent in two halves this many seconds apart (as a loaded USB
        link delivers it), which ``ppk2-api`` mishandles.
    seed:
        Seed of the noise and fault random generator, and of the serial number the metadata
        reports (:data:`SERIAL_BASE` + seed).
    """

    def __init__(self, model: PowerModel, *, wire: str | os.PathLike[str] | None = None,
                 truth: str | os.PathLike[str] | None = None,
                 calibration: Ppk2Calibration = DEFAULT_CALIBRATION, latency_s: float = 0.05,
                 block_s: float = 0.005, tx_buffer_s: float = 0.5,
                 metadata_split_s: float = 0.0, seed: int = 0,
                 load_switch: str | os.PathLike[str] | None = None) -> None:
        super().__init__(model, wire=wire, truth=truth, latency_s=latency_s, block_s=block_s,
                         seed=seed, load_switch=load_switch)
        self.calibration = calibration
        self.tx_limit = int(tx_buffer_s * SAMPLE_RATE_HZ) * WORD_BYTES
        self.metadata_split_s = metadata_split_s
        self.serial = SERIAL_BASE + seed
        self.stats = EmulatorStats()
        self._reset_state()

    # -- device state ----------------------------------------------------------------------
    def _reset_state(self) -> None:
        self.vdd_mv = self.calibration.vdd_mv or 3000
        self.power_mode = POWER_MODE_AMPERE
        self.dut_powered = False
        self.user_gains = list(self.calibration.ug)
        self.streaming = False
        self._rx = bytearray()
        self._tx = bytearray()
        self._scheduled: list[tuple[float, bytes]] = []
        self._t0_ns = 0
        self._next_k = 0
        self._edges: EdgeArray = NO_EDGES
        self._rendered_ns = 0

    @property
    def supply_v(self) -> float:
        """Supply of the DUT: the regulator in source mode, the model's otherwise, V."""
        return self.vdd_mv / 1000.0 if self.power_mode == POWER_MODE_SOURCE else self.model.supply_v

    @property
    def _powered(self) -> bool:
        return self.dut_powered or self.power_mode == POWER_MODE_AMPERE

    def _report(self) -> None:
        st = self.stats
        troubled = st.overflow_samples or st.late_edges or st.unknown_bytes
        log.log(logging.WARNING if troubled else logging.INFO, "PPK2 emulator stats: %s",
                st.as_dict())

    # -- serving ---------------------------------------------------------------------------
    def _received(self, data: bytes) -> None:
        self._rx += data
        while self._rx:
            byte = self._rx[0]
            try:
                cmd = Command(byte)
            except ValueError:
                self.stats.unknown_bytes += 1
                log.warning("PPK2 emulator: unknown command byte 0x%02x ignored", byte)
                del self._rx[0]
                continue
            n_args = COMMAND_ARGS[cmd]
            if len(self._rx) < 1 + n_args:
                return  # wait for the rest of the command
            args = bytes(self._rx[1:1 + n_args])
            del self._rx[:1 + n_args]
            self._execute(cmd, args)

    def _execute(self, cmd: Command, args: bytes) -> None:
        self.stats.commands.append(cmd.name)
        log.debug("PPK2 emulator: %s %s", cmd.name, args.hex())
        if cmd is Command.GET_META_DATA:
            self._send_metadata()
        elif cmd is Command.REGULATOR_SET:
            self.vdd_mv = regulator_mv(args)
        elif cmd is Command.SET_POWER_MODE:
            self.power_mode = args[0]
        elif cmd is Command.DEVICE_RUNNING_SET:
            self.dut_powered = bool(args[0])
        elif cmd is Command.SET_USER_GAINS:
            self.user_gains[args[0] % N_RANGES] = struct.unpack("<f", args[1:5])[0]
        elif cmd is Command.AVERAGE_START:
            self._start_stream()
        elif cmd is Command.AVERAGE_STOP:
            self.streaming = False
        elif cmd is Command.RESET:
            self._reset_state()

    def _send_metadata(self) -> None:
        cal = self.calibration
        reported = Ppk2Calibration(r=cal.r, gs=cal.gs, gi=cal.gi, o=cal.o, s=cal.s, i=cal.i,
                                   ug=tuple(self.user_gains), calibrated=cal.calibrated,
                                   vdd_mv=self.vdd_mv, hw=cal.hw, mode=self.power_mode,
                                   ia=cal.ia, serial=self.serial)
        text = format_metadata(reported).encode("ascii")
        if self.metadata_split_s > 0:
            half = len(text) // 2
            self._tx += text[:half]
            self._scheduled.append((time.monotonic() + self.metadata_split_s, text[half:]))
        else:
            self._tx += text

    def _start_stream(self) -> None:
        self.streaming = True
        self._t0_ns = time.monotonic_ns()
        self._next_k = 0
        self._rendered_ns = self._t0_ns - SAMPLE_PERIOD_NS
        if self._truth is not None:
            self._truth.stream_started(self._t0_ns, SAMPLE_PERIOD_NS, self.supply_v, self.model)

    def _tick(self) -> None:
        _, late = self._take_edges(self.streaming, self.supply_v, self._powered)
        self.stats.late_edges += late
        now_mono = time.monotonic()
        due = [data for at, data in self._scheduled if at <= now_mono]
        if due:
            self._scheduled = [(at, data) for at, data in self._scheduled if at > now_mono]
            for data in due:
                self._tx += data
        if self.streaming:
            disconnect = self.model.disconnect_after_s
            if disconnect is not None and time.monotonic_ns() - self._t0_ns > disconnect * 1e9:
                log.warning("PPK2 emulator: disconnecting %s (fault injection)", self.port)
                self._close_pty()
                return
            self._render()
        self._transmit()

    def _render(self) -> None:
        # The block's end is fixed before the load switch is read: a sample taken after a
        # switch returned sees it (energyrig.instruments.sim.switch).
        end_k = (time.monotonic_ns() - self.latency_ns - self._t0_ns) // SAMPLE_PERIOD_NS
        n = int(end_k - self._next_k)
        if n <= 0:
            return
        t_ns = self._t0_ns + (self._next_k + np.arange(n, dtype=np.int64)) * SAMPLE_PERIOD_NS
        current = measured_current(self.model, t_ns, self._edges, self._rng,
                                   self.switch.load(), self.supply_v)
        if not self._powered:
            current = np.zeros_like(current) + self.model.offset_a
        if self.model.range_offset_a or self.model.range_gain_error:
            current = range_faults(self.model, current,
                                   auto_range(current, self.calibration, self.vdd_mv))
        words = encode_words(current, self.calibration, self.vdd_mv,
                             logic=logic_level(t_ns, self._edges, self.model.overhead_s),
                             counter_start=self._next_k)
        self._next_k += n
        self._rendered_ns = int(t_ns[-1])
        self.stats.samples += n
        self._trim_edges()
        loss_at = self.model.loss_at_s
        if loss_at is not None or self.model.drop_rate:  # fault injection: samples lost
            keep = np.ones(n, dtype=np.bool_)
            if loss_at is not None:  # the samples of the loss's span, in stream time
                at_s = (t_ns - self._t0_ns) / 1e9
                keep &= (at_s < loss_at) | (at_s >= loss_at + self.model.loss_s)
            if self.model.drop_rate:
                keep &= self._rng.random(n) >= self.model.drop_rate
            self.stats.fault_dropped += n - int(keep.sum())
            words = words[keep]
        data = words.tobytes()
        if self.model.corrupt_rate:
            data = self._corrupt(data)
        if len(self._tx) + len(data) > self.tx_limit:
            self.stats.overflow_samples += n
            log.warning("PPK2 emulator: host is not reading; %d samples dropped", n)
            return
        self._tx += data

    def _corrupt(self, data: bytes) -> bytes:
        buf = np.frombuffer(data, dtype=np.uint8).copy()
        hits = self._rng.random(buf.shape[0]) < self.model.corrupt_rate
        buf[hits] = self._rng.integers(0, 256, int(hits.sum()), dtype=np.uint8)
        self.stats.corrupted_bytes += int(hits.sum())
        return buf.tobytes()

def main(argv: list[str], announce: Callable[[str], None]) -> int:
    """Serve as the command line ``argv`` says, ``announce`` the pty path, until SIGTERM,
    SIGINT or the parent's death (the program: ``python -m energyrig.cli.emulate``)."""
    parser = pty_emulator_parser(
        "energyrig.instruments.ppk2.emulator",
        "Emulated PPK2 on a pty, driven by a power model and the virtual trigger wire. "
        "Prints the pty path on the first line of stdout.")
    parser.add_argument("--metadata-split-s", type=float, default=0.0,
                        help="send the metadata in two halves this far apart")
    args, model = parse_emulator_args(parser, argv)
    with Ppk2Emulator(model, wire=args.wire, truth=args.truth, latency_s=args.latency_s,
                      block_s=args.block_s, tx_buffer_s=args.tx_buffer_s,
                      metadata_split_s=args.metadata_split_s, seed=args.seed,
                      load_switch=args.load_switch) as emu:
        serve_until_stopped(emu.port, announce)
    return 0


__all__ = ["DEFAULT_CALIBRATION", "SERIAL_BASE", "EmulatorStats", "Ppk2Emulator", "main"]

