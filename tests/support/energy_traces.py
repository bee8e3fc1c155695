"""Synthetic traces with known true energy for the energy and reader tests.

A trace is sampled from continuous-time signals: the trigger is high on ``[rise, fall)`` for
each edge pair (edges fall anywhere between samples), current and voltage are functions of
time. The true energy of a window is computed in closed form by the caller.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.instruments.csvfile import gaps_from_indices

Signal = Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]


@dataclass
class Trace:
    """Sampled arrays of a synthetic capture (absolute index = array index)."""

    period_s: float
    current_a: npt.NDArray[np.float64]
    voltage_v: npt.NDArray[np.float64] | float
    logic: npt.NDArray[np.uint8]
    saturated: npt.NDArray[np.bool_] | None = None

    def chunks(self, size: int, drop: Sequence[int] = ()) -> Iterator[Chunk]:
        """Chunks of ``size`` received samples; samples at indices ``drop`` are lost."""
        n = len(self.current_a)
        keep = np.ones(n, dtype=bool)
        keep[list(drop)] = False
        kept = np.flatnonzero(keep)
        expected = 0  # absolute index the next received sample would have without a gap
        for lo in range(0, len(kept), size):
            idx = kept[lo:lo + size]
            gaps = gaps_from_indices(idx, expected)
            volt = self.voltage_v if np.isscalar(self.voltage_v) else self.voltage_v[idx]
            sat = None if self.saturated is None else self.saturated[idx]
            yield Chunk(expected, self.period_s, self.current_a[idx], volt, self.logic[idx],
                        sat, gaps)
            expected = int(idx[-1]) + 1


def sample(period_s: float, n: int, edges: Sequence[tuple[float, float]], current: Signal,
           voltage: Signal | float, trigger_bit: int = 0, active_high: bool = True) -> Trace:
    """Sample ``n`` points at ``t_k = k·period_s``; trigger high on each ``[rise, fall)``."""
    t = np.arange(n) * period_s
    high = np.zeros(n, dtype=bool)
    for rise, fall in edges:
        high |= (t >= rise) & (t < fall)
    level = high if active_high else ~high
    logic = (level.astype(np.uint8) << trigger_bit).astype(np.uint8)
    volt = float(voltage) if isinstance(voltage, (int, float)) else voltage(t)
    return Trace(period_s, current(t), volt, logic)


def inside(edges: Sequence[tuple[float, float]], active: Signal, idle: float) -> Signal:
    """Current ``active(t)`` inside the windows, ``idle`` outside (steps at the edges)."""
    def current(t: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        out = np.full_like(t, idle)
        for rise, fall in edges:
            m = (t >= rise) & (t < fall)
            out[m] = active(t[m])
        return out
    return current
