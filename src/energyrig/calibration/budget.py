"""The uncertainty budget of a point's per-op figures, in the way of the GUM (JCGM 100:2008).

Each component is a standard uncertainty (k = 1) of the figure per op, with its type — A:
from the statistics of the point's windows; B: from what is known of the method and the
calibration — and its source. They are uncorrelated and combine in quadrature; the expanded
uncertainty is ``k = 2`` times the combined one (about 95 % for a normal distribution).

Net energy per op:

- **repeatability** (A): the standard deviation of the windows' net energies per op over
  √n (GUM 4.2.3);
- **edge quantisation** (B): each window's energy may be off by up to its edge error bound
  (one sample of power at each edge, :mod:`energyrig.rig.energy`), a rectangular
  distribution: bound / √3 (GUM 4.3.7), over √n windows whose edges fall at independent
  phases of the sample clock;
- **gain calibration** (B): the gain's standard uncertainty from its record, relative, times
  the net energy;
- **skew calibration** (B): a skew error δ moves the window against the current by δ, which
  changes its net energy by δ times (window power − baseline); the skew's standard
  uncertainty times that;
- **window overhead** (B): the overhead energy's standard uncertainty from its record, over
  N (every window has the same overhead taken out, so it does not shrink with √n);
- the offset cancels in the net energy (the baseline carries it), so it has no component.

A quantity the calibration lacks gives a component of unknown size (NaN), and so does the
combined figure: no uncertainty is stated for an uncalibrated measurement.

Time per op: repeatability (A), the edge timing (B: each edge within ± half a sample,
a rectangular distribution, so T / √6 for the two edges of a window, over √n) and the window
overhead (B: its time's standard uncertainty over N).
SI units: J, s.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from energyrig.domain import Window

#: The coverage factor of the expanded uncertainty.
K = 2.0


@dataclass(frozen=True)
class Component:
    """One line of a budget: a standard uncertainty per op (J or s) and where it comes from."""

    name: str
    type: Literal["A", "B"]
    u: float
    source: str

    def as_dict(self, unit: str) -> dict[str, Any]:
        return {"component": self.name, "type": self.type,
                f"u_{unit}": self.u if math.isfinite(self.u) else None, "source": self.source}


def combined(components: Sequence[Component]) -> float:
    """The combined standard uncertainty (root sum of squares; NaN if any is unknown)."""
    return math.sqrt(math.fsum(c.u ** 2 for c in components))


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = math.fsum(values) / n
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else math.nan
    return mean, std


def energy_budget(windows: Sequence[Window], batch_n: int,
                  calibration: Mapping[str, Any] | None) -> list[Component]:
    """The budget of the net energy per op of ``windows`` (each of ``batch_n`` ops), J.

    ``calibration`` is the bench's calibration record (``Bench.calibration``: ``values`` with
    each quantity's ``value`` and ``u``, ``id``), ``None`` without one.
    """
    rows = [w for w in windows if math.isfinite(w.net_energy_j)]
    if not rows:
        return []
    n = len(rows)
    mean_net, std_net = _mean_std([w.net_energy_j / batch_n for w in rows])
    edge = math.sqrt(math.fsum((w.edge_error_j / batch_n) ** 2 for w in rows) / n)
    out = [Component("repeatability", "A", std_net / math.sqrt(n),
                     f"standard deviation of {n} windows' net energy / sqrt(n) (GUM 4.2.3)"),
           Component("edge quantisation", "B", edge / math.sqrt(3) / math.sqrt(n),
                     "one sample of power at each edge, rectangular: bound / sqrt(3) "
                     "(GUM 4.3.7), over sqrt(n) windows")]
    values = (calibration or {}).get("values") or {}
    record = (calibration or {}).get("id") or "no calibration"
    gain = values.get("gain")
    out.append(Component(
        "gain calibration", "B",
        abs(mean_net) * gain["u"] / gain["value"] if gain else math.nan,
        f"u of the gain in {record}" if gain else "gain not calibrated: unknown"))
    skew = values.get("skew_s")
    step_w = math.fsum(w.energy_j / w.duration_s - w.baseline_w for w in rows) / n
    out.append(Component(
        "skew calibration", "B",
        skew["u"] * abs(step_w) / batch_n if skew else math.nan,
        f"u of the skew in {record} times (window power - baseline)" if skew
        else "skew not calibrated: unknown"))
    out.append(_overhead(values.get("overhead_j"), batch_n, record))
    return out


def _overhead(value: Mapping[str, Any] | None, batch_n: int, record: str) -> Component:
    """The window overhead's component: its standard uncertainty over N."""
    return Component("window overhead", "B", value["u"] / batch_n if value else math.nan,
                     f"u of the window overhead in {record} / N" if value
                     else "window overhead not calibrated: unknown")


def time_budget(windows: Sequence[Window], batch_n: int,
                calibration: Mapping[str, Any] | None = None) -> list[Component]:
    """The budget of the time per op of ``windows``, s."""
    rows = [w for w in windows if w.samples > 0]
    if not rows:
        return []
    n = len(rows)
    _, std = _mean_std([w.duration_s / batch_n for w in rows])
    period = math.fsum(w.duration_s / w.samples for w in rows) / n
    return [Component("repeatability", "A", std / math.sqrt(n),
                      f"standard deviation of {n} windows' time / sqrt(n)"),
            Component("edge timing", "B", period / math.sqrt(6) / batch_n / math.sqrt(n),
                      "each edge within half a sample, rectangular: T / sqrt(6) per window, "
                      "over sqrt(n) windows"),
            _overhead(((calibration or {}).get("values") or {}).get("overhead_s"), batch_n,
                      (calibration or {}).get("id") or "no calibration")]
