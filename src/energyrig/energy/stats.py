"""The statistics of one window's record that its uncertainty budget needs
(:func:`energyrig.energy.budget.window_budget`): the noise of its baseline span, the power
steps at its edges, its supply and ADC steps, its energy split by current range. numpy over
the whole record; SI units (J, s, W, A, V).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.domain import Window, WindowSettings


@dataclass(frozen=True)
class WindowStats:
    """What a window's budget needs of its record (:func:`window_stats`).

    Attributes
    ----------
    period_s:
        Sample period T, s.
    samples:
        Samples in the window, n.
    net_energy_j:
        The window's net energy, J.
    duration_s:
        The window's duration D, s.
    baseline_std_w, baseline_samples:
        Standard deviation s (W) of the ``m`` idle samples the baseline is the mean of.
    edge_rise_w, edge_fall_w:
        Power step at each edge: the larger of the samples on either side, less the
        baseline, W.
    skew_step_w:
        Power just inside the rising edge less power just after the falling edge, W.
    supply_v:
        Mean supply voltage in the window, V.
    step_window_a, step_baseline_a:
        ADC step of the current in the window's range and the baseline's, A (NaN: unknown).
    range_energy_j:
        The net energy split by current range 0, 1, ...: the window's energy in the samples
        of each range, less the baseline's energy over the duration in the baseline's
        range, J (they sum to the net energy); empty: the instrument has one range.
    range_time_s:
        The window's time in the samples of each range, less the duration in the baseline's
        range, s (they sum to about 0); empty: one range.
    """

    period_s: float
    samples: int
    net_energy_j: float
    duration_s: float
    baseline_std_w: float
    baseline_samples: int
    edge_rise_w: float
    edge_fall_w: float
    skew_step_w: float
    supply_v: float
    step_window_a: float
    step_baseline_a: float
    range_energy_j: tuple[float, ...] = ()
    range_time_s: tuple[float, ...] = ()



def window_stats(chunks: Sequence[Chunk], window: Window, settings: WindowSettings,
                 step_a: Callable[[float], float] | None) -> WindowStats:
    """What the window's uncertainty budget needs of the record it was found in
    (:class:`WindowStats`), with numpy over the whole record.

    The baseline span is the one the energy math took (before the window, or after it when
    flagged ``baseline_after``); the edge steps are the samples on either side of each edge
    less the baseline; ``step_a(current_a)`` gives the instrument's ADC step at a current, A
    (:meth:`energyrig.instruments.base.Resolution.step_a`), taken at the window's and the
    baseline's mean current (NaN without it).
    """
    T = chunks[0].period_s
    current = np.concatenate([c.current_a for c in chunks])
    voltage = np.concatenate([np.broadcast_to(np.asarray(c.voltage_v, dtype=np.float64),
                                              (len(c),)) for c in chunks])
    index = np.concatenate([c.indices() for c in chunks])
    power = current * voltage
    a, b, lo, hi = settings.spans(window, T)
    span = slice(*np.searchsorted(index, (lo, hi)))
    inside = slice(*np.searchsorted(index, (a, b + 1)))
    idle_p, idle_i = power[span], current[span]
    first, last = inside.start, inside.stop - 1
    edge = power[[max(first - 1, 0), first, last, min(last + 1, len(power) - 1)]] \
        - window.baseline_w

    def step(i: npt.NDArray[np.float64]) -> float:
        return math.nan if step_a is None or not i.size else step_a(float(i.mean()))

    range_energy, range_time = _by_range(chunks, inside, span, power, T, window)
    return WindowStats(
        period_s=T, samples=window.samples, net_energy_j=window.net_energy_j,
        duration_s=window.duration_s,
        baseline_std_w=float(idle_p.std(ddof=1)) if idle_p.size > 1 else math.nan,
        baseline_samples=int(idle_p.size),
        edge_rise_w=float(np.abs(edge[:2]).max()), edge_fall_w=float(np.abs(edge[2:]).max()),
        skew_step_w=float(edge[1] - edge[3]),
        supply_v=float(voltage[inside].mean()),
        step_window_a=step(current[inside]), step_baseline_a=step(idle_i),
        range_energy_j=range_energy, range_time_s=range_time)


def _by_range(chunks: Sequence[Chunk], inside: slice, span: slice,
              power: npt.NDArray[np.float64], period_s: float, window: Window
              ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The window's net energy (J) and its time less its duration (s) split by the current
    range of its samples, the baseline's share taken from the range most of its samples are
    in (:class:`WindowStats`); empty for an instrument with one
    range."""
    if any(c.current_range is None for c in chunks):
        return (), ()
    ranges = np.concatenate([c.current_range for c in chunks]).astype(np.intp)  # type: ignore[misc]
    idle = ranges[span] if ranges[span].size else ranges[inside]
    base = int(np.argmax(np.bincount(idle))) if idle.size else 0
    n = max(int(ranges.max(initial=0)), base) + 1
    energy = np.bincount(ranges[inside], weights=power[inside], minlength=n) * period_s
    time = np.bincount(ranges[inside], minlength=n) * period_s
    energy[base] -= window.baseline_w * window.duration_s
    time[base] -= window.duration_s
    return tuple(map(float, energy)), tuple(map(float, time))
