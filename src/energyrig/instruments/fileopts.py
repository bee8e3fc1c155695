"""The options every capture-file reader takes: :class:`CaptureOptions`.

Apart from :mod:`energyrig.instruments.files` (which picks the reader) so that the readers,
generic and of each family, import it without importing the table that names them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from energyrig.errors import CaptureError
from energyrig.instruments.threshold import AnalogTrigger

DEFAULT_CHUNK_SAMPLES = 1 << 20


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
    chunk_samples:
        Samples per chunk the reader yields (bounds memory; default 2**20).
    """

    trigger: str | None = None
    trigger_level_v: float | None = None
    trigger_hysteresis_v: float | None = None
    current: str | None = None
    shunt_ohms: float | None = None
    current_scale_a_per_v: float | None = None
    voltage: str | float | None = None
    chunk_samples: int = DEFAULT_CHUNK_SAMPLES

    def __post_init__(self) -> None:
        """Every number finite and in range: a NaN or negative voltage would otherwise turn
        into NaN or negative energies with nothing flagged.

        Raises
        ------
        ValueError
            Naming the attribute, its allowed range and the value given.
        """
        positive = {"shunt_ohms": ("ohm", self.shunt_ohms),
                    "voltage": ("V", self.voltage if isinstance(self.voltage, float) else None)}
        for name, (unit, value) in positive.items():
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0 {unit}, got {value}")
        for name, value in (("trigger_level_v", self.trigger_level_v),
                            ("current_scale_a_per_v", self.current_scale_a_per_v)):
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value}")
        if self.trigger_hysteresis_v is not None and not (
                math.isfinite(self.trigger_hysteresis_v) and self.trigger_hysteresis_v >= 0):
            raise ValueError("trigger_hysteresis_v must be a finite number >= 0 V, "
                             f"got {self.trigger_hysteresis_v}")
        if self.chunk_samples < 1:
            raise ValueError(f"chunk_samples must be >= 1, got {self.chunk_samples}")

    def amperes_per_volt(self, source: str | Path) -> float:
        """Factor turning the current channel's values into amperes (1 if neither is given)."""
        if self.shunt_ohms is not None and self.current_scale_a_per_v is not None:
            raise CaptureError(source, "give either a shunt resistance or a current scale, not both")
        if self.shunt_ohms is not None:
            if not self.shunt_ohms > 0:
                raise CaptureError(source, f"shunt resistance must be > 0 ohm, got {self.shunt_ohms}")
            return 1.0 / self.shunt_ohms
        if self.current_scale_a_per_v is not None:
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
