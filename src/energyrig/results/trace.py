"""A window's trace: the current around one trigger window with its edges, its guard and its
baseline span marked, as the Power Profiler app shows a selection.

::

    trace = window_trace(record.chunks(), window, settings, title="sha256 64 B, window 3")
    plot_trace(trace, "w03.png")   # and w03.json beside it: what the plot shows
    plot_trace(trace, "w03.png", figures=analysis.row(2))   # with the window's numbers

The plot puts the window in the middle of its own panel; a baseline span longer than half
of that panel gets a panel of its own beside it (a broken time axis), so the idle span
never takes most of the axis. Below the current: the supply voltage (when the recording
has it per sample) and the trigger's logic channel as a step trace. With ``figures`` (a
row of :meth:`energyrig.rig.analysis.Analysis.row`) the numbers the Power Profiler app
shows for a selection (Δt, mean and max current, charge, energy, net energy, baseline)
are printed beside the plot and written, as they are, in the JSON under ``window``.

:func:`~energyrig.energy.cut.cut` keeps the samples a trace needs (the window, its guard
and baseline span and :data:`~energyrig.energy.cut.MARGIN_S` either side); ``rig
run``/``rig sweep --keep-captures`` store them, ``rig analyze --plot`` and the report draw
them here. The JSON beside each PNG carries the marked
times in SI units, so what a plot shows can be checked without reading pixels (as the
report's figures do). matplotlib (Agg) is imported only inside :func:`plot_trace`.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.domain import Window, WindowSettings
from energyrig.energy.cut import MARGIN_S, cut
from energyrig.flags import BASELINE_AFTER
from energyrig.units import SI_PREFIXES, format_si

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
    voltage_v:
        The supply voltage at each sample, V (None: the recording has a constant).
    trigger:
        The level (0/1) of the trigger's logic channel at each sample (None: no logic).
    trigger_name:
        The trigger's channel, ``D0`` ... ``D7``.
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
    voltage_v: npt.NDArray[np.float64] | None = None
    trigger: npt.NDArray[np.uint8] | None = None
    trigger_name: str = "D0"

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
    voltage = (None if all(np.isscalar(p.voltage_v) for p in parts) else np.concatenate(
        [np.broadcast_to(np.asarray(p.voltage_v, dtype=np.float64), (len(p),)) for p in parts]))
    trigger = (None if any(p.logic is None for p in parts) else np.concatenate(
        [(p.logic >> settings.trigger_bit) & 1 for p in parts]))  # type: ignore[operator]
    return Trace(time_s=np.concatenate([p.indices() * T for p in parts]),
                 current_a=np.concatenate([p.current_a for p in parts]),
                 start_s=window.start_s, end_s=window.end_s, guard_s=guard,
                 baseline_s=baseline, baseline_w=window.baseline_w, flags=window.flags,
                 title=title, voltage_v=voltage, trigger=trigger,
                 trigger_name=f"D{settings.trigger_bit}")


#: The numbers printed beside a trace with ``figures``: (label, row column, unit).
NUMBERS = (("Δt", "duration_s", "s"), ("mean current", "mean_current_a", "A"),
           ("max current", "max_current_a", "A"), ("charge", "charge_c", "C"),
           ("energy", "energy_j", "J"), ("net energy", "net_energy_j", "J"),
           ("baseline", "baseline_w", "W"), ("baseline current", "baseline_a", "A"))


def numbers_text(figures: Mapping[str, float | int | str]) -> str:
    """The numbers of a window's row as the plot prints them, one per line (SI prefixes,
    4 significant digits; per op too when the row has them)."""
    lines = [f"{label}: {format_si(float(figures[col]), unit, 4)}"
             for label, col, unit in NUMBERS if col in figures]
    if "energy_per_op_j" in figures:
        lines += ["per op:", *(f"  {label}: {format_si(float(figures[col]), unit, 4)}"
                               for label, col, unit in (
                                   ("time", "time_per_op_s", "s"),
                                   ("energy", "energy_per_op_j", "J"),
                                   ("net energy", "net_energy_per_op_j", "J"),
                                   ("charge", "charge_per_op_c", "C")))]
    return "\n".join(lines)


def _scale(values: npt.NDArray[np.float64], unit: str) -> tuple[float, str]:
    """The factor and prefixed unit that put ``values``' largest magnitude in [1, 1000)."""
    top = float(np.nanmax(np.abs(values), initial=0.0)) if values.size else 0.0
    exponent, prefix = next(((e, p) for e, p in SI_PREFIXES if top >= 10.0 ** e),
                            SI_PREFIXES[-1]) if top > 0 else (0, "")
    return 10.0 ** -exponent, f"{prefix}{unit}"


def _panels(trace: Trace) -> list[tuple[float, float]]:
    """The time spans (s) of the plot's panels, in time order: the window centred in its
    own, with a quarter of its duration (at least 5 % of the baseline span) either side;
    the baseline span in a panel of its own (half as wide as the window's: a third of the
    axis) when it is longer than half the window's panel, else one panel holding both."""
    duration = trace.end_s - trace.start_s
    base_lo, base_hi = trace.baseline_s
    pad = max(0.25 * duration, 0.05 * (base_hi - base_lo))
    window = (trace.start_s - pad, trace.end_s + pad)
    if base_hi - base_lo <= (window[1] - window[0]) / 2:
        return [(min(window[0], base_lo - pad), max(window[1], base_hi + pad))]
    margin = 0.1 * (base_hi - base_lo)
    if base_hi <= trace.start_s:
        return [(base_lo - margin, min(base_hi + margin, window[0])), window]
    return [window, (max(base_lo - margin, window[1]), base_hi + margin)]


def _mark(ax: Any, trace: Trace) -> None:
    """Shade the baseline span, the guard and the window and draw the two edges on ``ax``
    (ms from the rising edge), labelled for the legend."""
    t0 = trace.start_s
    ax.axvspan(*((np.array(trace.baseline_s) - t0) * 1e3), color="#2ca02c", alpha=0.18,
               label="baseline span")
    ax.axvspan(*((np.array(trace.guard_s) - t0) * 1e3), color="#999999", alpha=0.18,
               hatch="//", label="guard")
    ax.axvspan(0.0, (trace.end_s - t0) * 1e3, color="#d62728", alpha=0.06, label="window")
    for x, edge in ((trace.start_s, "rising edge"), (trace.end_s, "falling edge")):
        ax.axvline((x - t0) * 1e3, color="#d62728", lw=1.0,
                   ls="-" if edge == "rising edge" else "--", label=edge)
    ax.grid(alpha=0.3)


def _break(ax: Any, side: str) -> None:
    """The break of a broken time axis on ``side`` (``left``/``right``) of ``ax``: no spine,
    two slanted marks."""
    ax.spines[side].set_visible(False)
    ax.plot([1 if side == "right" else 0] * 2, [0, 1], transform=ax.transAxes,
            marker=[(-1, -1.5), (1, 1.5)], markersize=8, linestyle="none", color="k",
            mec="k", mew=1, clip_on=False)


def plot_trace(trace: Trace, path: str | Path,
               figures: Mapping[str, float | int | str] | None = None) -> Path:
    """Draw ``trace`` (current, and voltage and trigger when it has them, against time from
    the rising edge; see the module docstring) into the PNG ``path`` and write
    :meth:`Trace.data` beside it (``path`` with ``.json``), with the panels drawn
    (``panels``: each one's ``time_s`` span and ``share`` of the width), the ``lanes`` under
    each other, and ``figures`` as they are under ``window`` (NaN as null). Returns ``path``.

    Raises
    ------
    OSError
        A file cannot be written.
    """
    from matplotlib.figure import Figure  # only to draw (Agg: no display)

    path = Path(path)
    t0 = trace.start_s
    spans = _panels(trace)
    lanes = [("current", trace.current_a, "A", 3.0)]
    if trace.voltage_v is not None:
        lanes.append(("voltage", trace.voltage_v, "V", 1.2))
    if trace.trigger is not None:
        lanes.append((f"trigger {trace.trigger_name}", trace.trigger.astype(np.float64), "",
                      0.7))
    fig = Figure(figsize=(9.5 if figures else 8, 1.2 + 0.9 * sum(h for *_, h in lanes)))
    grid = fig.add_gridspec(len(lanes), len(spans), height_ratios=[h for *_, h in lanes],
                            width_ratios=[2 if lo <= t0 <= hi else 1 for lo, hi in spans],
                            hspace=0.08, wspace=0.06)
    ms = (trace.time_s - t0) * 1e3
    axes = [[fig.add_subplot(grid[r, c]) for c in range(len(spans))] for r in range(len(lanes))]
    for r, (name, values, unit, _) in enumerate(lanes):
        factor, label = _scale(values, unit) if unit else (1.0, "")
        for c, (lo, hi) in enumerate(spans):
            ax = axes[r][c]
            if unit:
                ax.plot(ms, values * factor, lw=0.7, color="#1f5fa8" if r == 0 else "#8c564b")
            else:
                ax.step(ms, values, where="mid", lw=0.9, color="#555555")
                ax.set_ylim(-0.2, 1.2)
                ax.set_yticks([0, 1])
            _mark(ax, trace)
            ax.set_xlim((lo - t0) * 1e3, (hi - t0) * 1e3)
            ax.set_ylabel((f"{name} ({label})" if unit else name) if c == 0 else "", fontsize=8)
            ax.tick_params(labelleft=c == 0, labelbottom=r == len(lanes) - 1)
            if len(spans) > 1:
                _break(ax, "right" if c == 0 else "left")
        for c in range(1, len(spans)):
            axes[r][c].sharey(axes[r][0])
    fig.supxlabel("time from the rising edge (ms)", fontsize=9)
    flags = f" [{', '.join(trace.flags)}]" if trace.flags else ""
    fig.suptitle(f"{trace.title}{flags}", fontsize=9)
    handles, names = axes[0][0].get_legend_handles_labels()
    legend_ax = axes[0][-1]
    legend_ax.legend(handles, names, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    if figures is not None:
        axes[-1][-1].text(1.02, 0.0, numbers_text(figures), transform=axes[-1][-1].transAxes,
                          fontsize=7.5, family="monospace", va="bottom", ha="left")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    data = trace.data()
    ratios = grid.get_width_ratios()
    data["panels"] = [{"time_s": [lo, hi], "share": ratio / sum(ratios)}
                      for (lo, hi), ratio in zip(spans, ratios)]
    data["lanes"] = [name for name, *_ in lanes]
    if figures is not None:
        data["window"] = {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                          for k, v in figures.items()}
    path.with_suffix(".json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path
