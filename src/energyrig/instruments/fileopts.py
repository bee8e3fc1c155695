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
