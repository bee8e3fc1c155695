"""The options every capture-file reader takes: :class:`CaptureOptions`.

Apart from :mod:`energyrig.instruments.files` (which picks the reader) so that the readers,
generic and of each family, import it without importing the table that names them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.threshold import AnalogTrigger

#: Samples per chunk a capture file's reader yields: 2^18, whose float64 arrays (2 MB) stay
#: in the CPU's cache through a chunk's passes (conversion, checks, the kernel): `rig
#: analyze` 19-24 % less CPU than with 2^20 on a JLS, a synthetic and a real sigrok .sr
#: (docs/performance.md), and a lower peak RSS.
DEFAULT_CHUNK_SAMPLES = 1 << 18
#: Units a CSV time column may be in: name -> seconds per unit.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
#: Units a CSV current column may be in: name -> amperes per unit.
CURRENT_UNITS = {"A": 1.0, "mA": 1e-3, "uA": 1e-6, "µA": 1e-6, "nA": 1e-9}
#: Logic inputs of a PPK2 (and of the Power Profiler app's files).
LOGIC_CHANNELS = tuple(f"D{k}" for k in range(8))
#: How a Power Profiler file lays out its digital channels (``--digital-layout``; ``None``:
#: told from the file, docs/formats.md): a CSV export's text D0 first (the app since v3.1.3)
#: or D7 first (v3.0.0 to v3.1.2, and the ``Bits`` column of its 2020 development builds);
#: a session's 16-bit word as the app's bit pairs, or as a plain D0..D7 bit mask
#: (third-party writers such as ppk2-python's ``save_ppk2``).
DIGITAL_LAYOUTS = ("d0-first", "d7-first", "pairs", "mask")


def unit_factor(unit: str, units: dict[str, float], option: str) -> float:
    """SI value of one ``unit`` from the table ``units`` (:data:`TIME_UNITS`,
    :data:`CURRENT_UNITS`).

    Raises
    ------
    ValueError
        Naming ``option`` and the units known.
    """
    if unit not in units:
        raise ValueError(f"{option} must be one of {', '.join(units)}, got {unit!r}")
    return units[unit]


@dataclass(frozen=True)
class CaptureOptions:
    """How the channels of a capture file become trigger, current and voltage.

    Every reader takes the same options; each uses those that apply to its format and
    ignores the rest. ``None`` means the format's default.

    Attributes
    ----------
    trigger:
        Channel carrying the trigger: a CSV column (default ``trigger``), a logic channel
        name such as ``"D0"`` (sigrok, PPK2), or an analog channel such as ``"A1"`` (sigrok)
        thresholded at ``trigger_level_v``.
    trigger_level_v:
        Threshold of an analog trigger, V (:mod:`energyrig.instruments.threshold`). Required
        for an analog trigger (there is no automatic level on a stream); 1.65 V suits 3.3 V
        logic. A CSV trigger column holding only 0 and 1 needs none.
    trigger_hysteresis_v:
        Width of the band around the level in which the trigger keeps its state, V;
        ``None``: 10 % of the level.
    current:
        Channel carrying the current: a CSV column (default ``current_a``) or an analog
        channel such as ``"A0"``. Its values are multiplied by :meth:`amperes_per_volt`.
    shunt_ohms:
        The current channel is the voltage across this shunt, Ω: current = value / R.
    current_scale_a_per_v:
        Alternative to ``shunt_ohms``: current = value × scale (A/V).
    voltage:
        Supply voltage: a channel name (CSV default ``voltage_v``), or a constant in volts for
        a regulated supply.
    trigger_bit:
        The trigger column packs several digital channels: the trigger is this bit of it
        (0 = least significant; for the Power Profiler app's ``D0-D7`` column, channel Dn).
        For a logic channel such as ``D3`` it overrides the channel's number.
    time:
        CSV time column (default ``time_s``).
    time_unit:
        Unit of the time column: one of :data:`TIME_UNITS` (default ``s``).
    current_unit:
        Unit of the current column: one of :data:`CURRENT_UNITS` (default ``A``).
    chunk_samples:
        Samples per chunk the reader yields (bounds memory; default
        :data:`DEFAULT_CHUNK_SAMPLES`).
    digital_layout:
        Layout of a Power Profiler file's digital channels, one of :data:`DIGITAL_LAYOUTS`
        (default: told from the file).
    digital:
        A second file holding the trigger, for a recording exported as two files (Saleae
        Logic 2's ``digital.csv`` beside its ``analog.csv``).
    uart_start, uart_stop:
        The window is marked in a UART log (an Otii project's ``rx``): high from a line
        starting with ``uart_start`` to the first line after it starting with ``uart_stop``.
        Both or neither.
    keep_float32:
        A reader of float32 samples (JLS, sigrok session) hands them as read instead of
        converting them to float64 (:attr:`~energyrig.capture.Chunk.current_a`): for a
        consumer that gives the chunks to the energy kernel alone, which reads float32 and
        sums in double (`rig analyze`'s window scan without a correction). A current that
        must be scaled, or a supply computed from two channels, is still float64.
    """

    trigger: str | None = None
    trigger_level_v: float | None = None
    trigger_hysteresis_v: float | None = None
    current: str | None = None
    shunt_ohms: float | None = None
    current_scale_a_per_v: float | None = None
    voltage: str | float | None = None
    trigger_bit: int | None = None
    time: str | None = None
    time_unit: str | None = None
    current_unit: str | None = None
    chunk_samples: int = DEFAULT_CHUNK_SAMPLES
    digital_layout: str | None = None
    digital: Path | None = None
    uart_start: str | None = None
    uart_stop: str | None = None
    keep_float32: bool = False

    def __post_init__(self) -> None:
        """A constant supply voltage must be finite and positive: NaN or a negative voltage
        would turn into NaN or negative energies with nothing flagged. (The other options are
        checked where a reader uses them, naming the file.)

        Raises
        ------
        ValueError
            Naming the option and the value given.
        """
        v = self.voltage
        if isinstance(v, float) and not (math.isfinite(v) and v > 0):
            raise ValueError(f"voltage must be a finite number > 0 V, got {v}")
        if self.trigger_bit is not None and not 0 <= self.trigger_bit <= 15:
            raise ValueError(f"trigger bit must be 0..15, got {self.trigger_bit}")
        if self.time_unit is not None:
            unit_factor(self.time_unit, TIME_UNITS, "time unit")
        if self.current_unit is not None:
            unit_factor(self.current_unit, CURRENT_UNITS, "current unit")
        if self.digital_layout is not None and self.digital_layout not in DIGITAL_LAYOUTS:
            raise ValueError(f"digital layout must be one of {', '.join(DIGITAL_LAYOUTS)}, "
                             f"got {self.digital_layout!r}")
        if (self.uart_start is None) != (self.uart_stop is None):
            raise ValueError("give both --uart-start and --uart-stop: the texts that open and "
                             "close a window in the UART log")
        if self.uart_start is not None and not (self.uart_start.strip()
                                                and str(self.uart_stop).strip()):
            raise ValueError("--uart-start and --uart-stop must hold text other than spaces")

    def logic_channel(self, source: str | Path) -> int:
        """The logic input carrying the trigger, 0..7: ``trigger_bit``, else the number of
        ``trigger`` (``D0``..``D7``), else D0.

        Raises
        ------
        ChannelError
            ``trigger`` is not one of D0..D7, or the bit is above 7.
        """
        if self.trigger_bit is not None:
            if self.trigger_bit > 7:
                raise ChannelError(source, f"no logic channel D{self.trigger_bit}: "
                                           "the channels are D0..D7")
            return self.trigger_bit
        name = (self.trigger or "D0").upper()
        if name not in LOGIC_CHANNELS:
            raise ChannelError(source, f"no logic channel {self.trigger!r}: the channels are "
                                       "D0..D7")
        return int(name[1])

    def layout_for(self, source: str | Path, layouts: tuple[str, ...], what: str) -> str | None:
        """``digital_layout`` when it is one of ``layouts``, those of a ``what`` file
        (``None``: not given, the reader tells it from the file).

        Raises
        ------
        CaptureError
            A layout of another kind of file.
        """
        if self.digital_layout is None or self.digital_layout in layouts:
            return self.digital_layout
        raise CaptureError(source, f"--digital-layout {self.digital_layout} does not apply to a "
                                   f"{what}: its layouts are {', '.join(layouts)}")

    def amperes_per_volt(self, source: str | Path) -> float:
        """Factor turning the current channel's values into amperes (1 if neither is given)."""
        if self.shunt_ohms is not None and self.current_scale_a_per_v is not None:
            raise CaptureError(source, "give either a shunt resistance or a current scale, not both")
        if self.shunt_ohms is not None:
            if not (math.isfinite(self.shunt_ohms) and self.shunt_ohms > 0):
                raise CaptureError(source, f"shunt resistance must be > 0 ohm, got {self.shunt_ohms}")
            return 1.0 / self.shunt_ohms
        if self.current_scale_a_per_v is not None:
            if not (math.isfinite(self.current_scale_a_per_v) and self.current_scale_a_per_v):
                raise CaptureError(source, "current scale must be a finite number other than 0 "
                                           f"A/V, got {self.current_scale_a_per_v}")
            return float(self.current_scale_a_per_v)
        return 1.0

    def analog_trigger(self, source: str | Path, channel: str,
                       default_level_v: float | None = None) -> AnalogTrigger:
        """Level and hysteresis for thresholding the analog trigger ``channel``.

        ``default_level_v`` is the format's level when none is given (``None``: a level is
        required).

        Raises
        ------
        CaptureError
            No level given and no default, or a level or hysteresis out of range.
        """
        level = self.trigger_level_v if self.trigger_level_v is not None else default_level_v
        if level is None:
            raise CaptureError(source, f"trigger {channel!r} is an analog channel: give its "
                                       "threshold with --trigger-level VOLTS (trigger_level_v "
                                       "in a fixture; e.g. 1.65 for 3.3 V logic)")
        try:
            return AnalogTrigger(level, self.trigger_hysteresis_v)
        except ValueError as exc:
            raise CaptureError(source, f"trigger {channel!r}: {exc}") from exc
