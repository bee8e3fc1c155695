"""The figures of a found window as the point stores it: its uncertainty
(:func:`~energyrig.energy.budget.window_budget` over the record's statistics,
:func:`~energyrig.energy.stats.window_stats`) and the window overhead taken out
(:func:`take_out_overhead`). The pipeline and ``rig reanalyze`` both compute a window's
figures here; ``rig analyze`` takes the overhead out the same way. SI units (J, s, W, A).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from energyrig.capture import Chunk
from energyrig.domain import Window, WindowSettings
from energyrig.energy.budget import K, Supply, combined, edge_timing_u, window_budget
from energyrig.energy.stats import window_stats


class AdcSteps(Protocol):
    """An instrument's ADC steps (:class:`energyrig.instruments.base.Resolution`)."""

    def step_a(self, current_a: float) -> float:
        """The ADC step at ``current_a``, A."""
        ...


def take_out_overhead(window: Window) -> Window:
    """``window`` less the window overhead its ``corrections`` name: ``overhead_s`` out of
    its time, and out of its gross energy ``overhead_j`` (the empty window's energy above
    the idle baseline) plus the baseline over ``overhead_s`` (none without a baseline), so
    the net energy loses ``overhead_j``. The window as it is when there is none."""
    applied = dict(window.corrections)
    overhead_s, overhead_j = applied.get("overhead_s", 0.0), applied.get("overhead_j", 0.0)
    if not (overhead_s or overhead_j):
        return window
    idle_j = window.baseline_w * overhead_s if math.isfinite(window.baseline_w) else 0.0
    return replace(window, energy_j=window.energy_j - overhead_j - idle_j,
                   overhead_s=overhead_s)


def window_figures(chunks: Sequence[Chunk], window: Window, settings: WindowSettings, *,
                   resolution: AdcSteps | None, calibration: Mapping[str, Any] | None,
                   supply: Supply) -> Window:
    """A found ``window`` (with its ``corrections``) as the pipeline stores it: with its
    uncertainty (:func:`~energyrig.energy.budget.window_budget` over ``chunks``, the
    corrected samples it was found in; ``resolution`` the instrument's ADC steps, A) and
    the window overhead its corrections name taken out (:func:`take_out_overhead`)."""
    budget = window_budget(window_stats(chunks, window, settings,
                                        resolution.step_a if resolution else None),
                           calibration, supply)
    overhead = ((calibration or {}).get("values") or {}).get("overhead_s")
    duration_u_s = math.hypot(edge_timing_u(chunks[0].period_s),
                              overhead["u"] if overhead else 0.0)
    return take_out_overhead(replace(
        window, net_energy_u_j=K * combined(budget), duration_u_s=K * duration_u_s,
        uncertainty=tuple((c.name, c.u) for c in budget)))
