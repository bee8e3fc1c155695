"""A trigger read on an analog channel: a threshold with hysteresis (a Schmitt trigger).

Instruments without logic inputs (a two-channel USB scope such as the Hantek 6022BE, a CSV
exported from a bench scope) record the trigger GPIO as volts. :class:`Schmitt` turns those
volts into the 0/1 trigger bit that every reader delivers as logic bit 0 of a
:class:`~energyrig.capture.Chunk`, so the energy engine never sees the difference.

The hysteresis band is centred on the level: the line goes high where the signal reaches
``level + hysteresis/2`` and low where it falls below ``level − hysteresis/2``; inside the
band it keeps its last state, so noise around the level cannot make it chatter. The state
is carried from one chunk to the next, so the band holds across chunk boundaries. Before the
first sample outside the band the state is that sample's side of the level.

There is no automatic level (half of the observed range needs the whole capture, which a
stream does not have): the level is given, e.g. 1.65 V for 3.3 V logic, and the hysteresis
defaults to :data:`DEFAULT_HYSTERESIS_FRACTION` of it.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

#: Default hysteresis band, as a fraction of ``|level|`` (0.165 V for a 1.65 V level).
DEFAULT_HYSTERESIS_FRACTION = 0.1


@dataclass(frozen=True, slots=True)
class AnalogTrigger:
    """Where an analog trigger line switches, in the channel's unit (volts).

    Attributes
    ----------
    level_v:
        Threshold, V (1.65 V suits 3.3 V logic).
    hysteresis_v:
        Width of the band around the level in which the state holds, V; ``None``:
        :data:`DEFAULT_HYSTERESIS_FRACTION` × ``|level_v|``. 0 turns hysteresis off
        (high is ``value >= level_v``).

    Raises
    ------
    ValueError
        The level is not finite or the hysteresis is negative or not finite.
    """

    level_v: float
    hysteresis_v: float | None = None

    def __post_init__(self) -> None:
        if not math.isfinite(self.level_v):
            raise ValueError(f"trigger level must be a finite number of volts, got {self.level_v}")
        if self.hysteresis_v is not None and not (math.isfinite(self.hysteresis_v)
                                                  and self.hysteresis_v >= 0):
            raise ValueError(f"trigger hysteresis must be a finite number >= 0 V, "
                             f"got {self.hysteresis_v}")

    @property
    def band_v(self) -> float:
        """The hysteresis in use, V (the default applied)."""
        if self.hysteresis_v is None:
            return DEFAULT_HYSTERESIS_FRACTION * abs(self.level_v)
        return self.hysteresis_v

    @property
    def rise_v(self) -> float:
        """A low line goes high at a value >= this, V."""
        return self.level_v + self.band_v / 2

    @property
    def fall_v(self) -> float:
        """A high line goes low at a value < this, V."""
        return self.level_v - self.band_v / 2

    def describe(self) -> str:
        """``1.65 V ± 0.0825 V`` for messages and logs."""
        return f"{self.level_v:g} V ± {self.band_v / 2:g} V"


class Schmitt:
    """Stateful thresholder of one analog stream: call it on consecutive blocks.

    Vectorised: each sample outside the band decides the state; a running maximum of the
    deciding indices forward-fills the last decision over the samples inside the band.

    Parameters
    ----------
    trigger:
        Level and hysteresis.
    """

    def __init__(self, trigger: AnalogTrigger) -> None:
        self.trigger = trigger
        self.state: bool | None = None  # None until the first sample

    def __call__(self, values: npt.NDArray[np.floating]) -> npt.NDArray[np.uint8]:
        """The trigger bit (0/1) of each of ``values`` (volts), continuing the last block."""
        values = np.asarray(values)
        if not len(values):
            return np.zeros(0, dtype=np.uint8)
        if self.state is None:
            self.state = bool(values[0] >= self.trigger.level_v)
        high = values >= self.trigger.rise_v
        decided = high | (values < self.trigger.fall_v)
        last = np.maximum.accumulate(np.where(decided, np.arange(len(values)), -1))
        bits = np.where(last >= 0, high[np.maximum(last, 0)], self.state).astype(np.uint8)
        self.state = bool(bits[-1])
        return bits
