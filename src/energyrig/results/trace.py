"""A window's trace: the current around one trigger window with its edges, its guard and its
baseline span marked, as the Power Profiler app shows a selection.

::

    trace = window_trace(record.chunks(), window, settings, title="sha256 64 B, window 3")
    plot_trace(trace, "window-3.png")   # and window-3.json beside it: what the plot shows

:func:`~energyrig.energy.cut.cut` keeps the samples a trace needs (the window, its guard
and baseline span and :data:`~energyrig.energy.cut.MARGIN_S` either side); ``rig
run``/``rig sweep --keep-captures`` store them, ``rig analyze --plot`` and the report draw
them here. The JSON beside each PNG carries the marked
times in SI units, so what a plot shows can be checked without reading pixels (as the
report's figures do). matplotlib (Agg) is imported only inside :func:`plot_trace`.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.domain import Window, WindowSettings
from energyrig.energy.cut import MARGIN_S, cut
from energyrig.flags import BASELINE_AFTER

@dataclass(frozen=True)
class Trace:
    """The samples around one window and what to mark on them (SI units; times in the
    capture's time base).

    Attributes
    ----------
    time_s, current_a:
        The samples, s and A.
    start_s, end_s:
        The window's estimated edges, s.
    guard_s, baseline_s:
        ``(from, to)`` of the guard and of the baseline span the energy math took, s.
    baseline_w:
        The window's baseline power, W (NaN without one).
    flags:
        The window's flags.
    title:
        What the window is (the plot's title).
    """

    time_s: npt.NDArray[np.float64]
    current_a: npt.NDArray[np.float64]
    start_s: float
    end_s: float
    guard_s: tuple[float, float]
    baseline_s: tuple[float, float]
    baseline_w: float
    flags: tuple[str, ...]
    title: str

    def data(self) -> dict[str, Any]:
        """The JSON written beside the PNG: the marked times, the flags and the samples' span
        and count (not the samples)."""
        return {"title": self.title, "start_s": self.start_s, "end_s": self.end_s,
                "guard_s": list(self.guard_s), "baseline_s": list(self.baseline_s),
                "flags": list(self.flags), "samples": int(self.time_s.size),
                "time_s": [float(self.time_s[0]), float(self.time_s[-1])]
                if self.time_s.size else []}


def window_trace(chunks: Iterable[Chunk], window: Window, settings: WindowSettings, *,
                 title: str = "", margin_s: float = MARGIN_S) -> Trace:
    """The trace of ``window`` from the capture it was found in (or the samples
    :func:`~energyrig.energy.cut.cut` kept of it) and the settings it was found with.

    Raises
    ------
    ValueError
        The chunks hold no sample near the window.
    """
    parts = cut(chunks, window, settings, margin_s)
    if not parts:
        raise ValueError(f"no samples near the window at {window.start_s:.6f} s")
    T = parts[0].period_s
    *_, base_lo, base_hi = settings.spans(window, T)
    baseline = ((base_lo - 0.5) * T, (base_hi - 0.5) * T)
    guard = ((window.end_s, baseline[0]) if BASELINE_AFTER in window.flags
             else (baseline[1], window.start_s))
    return Trace(time_s=np.concatenate([p.indices() * T for p in parts]),
                 current_a=np.concatenate([p.current_a for p in parts]),
                 start_s=window.start_s, end_s=window.end_s, guard_s=guard,
                 baseline_s=baseline, baseline_w=window.baseline_w, flags=window.flags,
                 title=title)


def plot_trace(trace: Trace, path: str | Path) -> Path:
    """Draw ``trace`` (current in mA against time from the rising edge in ms) into the PNG
    ``path`` and write :meth:`Trace.data` beside it (``path`` with ``.json``). Returns
    ``path``.

    Raises
    ------
    OSError
        A file cannot be written.
    """
    from matplotlib.figure import Figure  # only to draw (Agg: no display)

    path = Path(path)
    t0 = trace.start_s
    fig = Figure(figsize=(8, 3.2))
    ax = fig.add_subplot()
    ax.plot((trace.time_s - t0) * 1e3, trace.current_a * 1e3, lw=0.7, color="#1f5fa8",
            label="current")
    ax.axvspan(*((np.array(trace.baseline_s) - t0) * 1e3), color="#2ca02c", alpha=0.18,
               label="baseline span")
    ax.axvspan(*((np.array(trace.guard_s) - t0) * 1e3), color="#999999", alpha=0.18,
               hatch="//", label="guard")
    for x, name in ((trace.start_s, "rising edge"), (trace.end_s, "falling edge")):
        ax.axvline((x - t0) * 1e3, color="#d62728", lw=1.0,
                   ls="-" if name == "rising edge" else "--", label=name)
    ax.set_xlabel("time from the rising edge (ms)")
    ax.set_ylabel("current (mA)")
    flags = f" [{', '.join(trace.flags)}]" if trace.flags else ""
    ax.set_title(f"{trace.title}{flags}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    path.with_suffix(".json").write_text(json.dumps(trace.data(), indent=1), encoding="utf-8")
    return path
