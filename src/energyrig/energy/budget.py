"""Uncertainty budgets of one window and of a point's per-op figures, in the way of the GUM
(JCGM 100:2008).

Each component is a standard uncertainty (k = 1) with its type — A: from statistics of
samples or windows; B: from what is known of the method, the instrument and the calibration —
and its source. They are uncorrelated and combine in quadrature; the expanded uncertainty is
``k = 2`` times the combined one (about 95 % for a normal distribution).

**One window** (:func:`window_budget`, from the sample statistics of its record,
:class:`WindowStats`), the net energy ``E − b·D`` of ``n`` samples of period ``T``:

- **edge quantisation** (B): each edge lies somewhere in the sample period around it, which
  the window's estimate splits in the middle, so each edge is off by up to ``T/2``,
  rectangular (GUM 4.3.7), and moves the net energy by that times the power step at the edge
  (the larger of the samples on either side, less the baseline): ``T / √12`` per edge;
- **baseline noise** (A): the baseline is the mean of ``m`` idle samples of standard
  deviation ``s``: ``s / √m``, times the window's duration;
- **sample noise** (A): the window's ``n`` samples carry the same noise as the idle ones, plus
  the quantisation noise of a coarser range (``(Δ_w² − Δ_b²) / 12``): ``T · √n · σ``;
- **ADC resolution** (B): noise of σ dithers a quantiser of step Δ, so a mean of samples keeps
  only the first Fourier term of its staircase, of amplitude ``Δ/π · exp(−2π²σ²/Δ²)``
  (Widrow and Kollár, *Quantization Noise*, 2008, ch. 4), over an unknown phase (rms ``/√2``),
  in the window's range and in the baseline's; it is all of ``Δ / (π √2)`` without noise;
- **gain calibration** (B): the net energy times the gain's relative standard uncertainty
  from the calibration record (which replaces the instrument's stated gain accuracy);
- **skew calibration** (B): a skew error δ moves the window against the current by δ: the
  power just inside the rising edge enters, the power just after the falling edge leaves;
- **window overhead** (B): the overhead energy taken out of every window (``rig calibrate
  overhead``) with its standard uncertainty from the record;
- **offset calibration** (B): the baseline carries the same offset, which cancels in the net
  energy, unless the window and its baseline are measured in current ranges whose offsets
  were calibrated apart (a PPK2): then each range's offset error moves the net energy by
  its u times the window's time in that range (less the duration in the baseline's range),
  times V; ranges sharing one value share its error;
- **supply voltage** (B): the energy is ∫V·I with V as the rig knows it (a PPK2's set VOUT,
  a fixture's supply, a scope's measured channel), off by up to the fixture's
  ``[calibration] supply_tolerance`` (rectangular: tol / √3, relative); a current gain
  calibrated against reference resistors at that same voltage takes the voltage's error in
  once more (the gain is fitted against V / R), so its sensitivity is 2 then, 1 without
  (GUM 5.1.3); unknown when the fixture states no tolerance.

The gain and the offset of an instrument with current ranges may be calibrated per range
(the record's ``ranges``): the net energy is then split by range (:class:`WindowStats`
``range_energy_j``, ``range_time_s``) and each part takes its range's u; the parts of
different ranges are independent (separate fits) and combine in quadrature, those of ranges
with no value of their own take the record's one value, so they add up first.

**A point** (:func:`energy_budget`), per op: **repeatability** (A), the standard deviation of
the windows' net energies over √n (GUM 4.2.3), which holds every effect that changes from
window to window (edge quantisation, baseline and sample noise); and the windows' effects that
are the same in every window (:data:`SYSTEMATIC`), their mean per op.

A quantity the calibration lacks, or an instrument that does not state its resolution, gives
a component of unknown size (NaN), and so does the combined figure: no uncertainty is stated
then.

Time: a window's edges are each within ± half a sample, rectangular, so ``T / √6`` for its
duration; a point's time per op has repeatability (A), that edge timing (B) over √n, and the
window overhead's time (B: its standard uncertainty over N; every window has the same
overhead taken out, so it does not shrink with √n).
SI units: J, s, W, A.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from energyrig.domain import Window
from energyrig.energy.stats import WindowStats

#: The coverage factor of the expanded uncertainty.
K = 2.0
#: The window components that are the same in every window of a point (the rest change from
#: window to window and are in the point's repeatability).
SYSTEMATIC = ("ADC resolution", "gain calibration", "skew calibration", "window overhead",
              "offset calibration", "supply voltage")

#: Why each component of a point's budget is of unknown size (its u NaN): what is written in
#: place of a U (k=2) that is not stated.
UNKNOWN_BECAUSE: dict[str, str] = {
    "repeatability": "fewer than two windows",
    "ADC resolution": "the instrument states no resolution",
    "gain calibration": "not calibrated", "skew calibration": "not calibrated",
    "window overhead": "not calibrated", "offset calibration": "not calibrated",
    "supply voltage": "the fixture states no supply tolerance",
}


def unstated_because(unknown: Iterable[str]) -> str:
    """Why a point's U is not stated, from the names of its budget's components of unknown
    size: each one's reason (:data:`UNKNOWN_BECAUSE`) once, in their order, joined by ``; ``;
    ``"not calibrated"`` when none is named (a run written before the budget existed)."""
    reasons = dict.fromkeys(UNKNOWN_BECAUSE.get(name, f"{name} unknown") for name in unknown)
    return "; ".join(reasons) or "not calibrated"


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


@dataclass(frozen=True)
class Supply:
    """What is known of the supply voltage the energy is computed with.

    Attributes
    ----------
    tolerance:
        Half-width of its relative error, rectangular (0.01: ± 1 %); NaN: not stated.
    source:
        Where the figure comes from (the fixture's field and what it rests on).
    """

    tolerance: float
    source: str

    @classmethod
    def stated(cls, tolerance: float | None, where: str) -> Supply:
        """The supply a fixture states (``[calibration] supply_tolerance`` of ``where``), or
        :data:`UNSTATED_SUPPLY` without one."""
        if tolerance is None:
            return UNSTATED_SUPPLY
        return cls(tolerance, f"supply within ± {tolerance:.3g} ([calibration] "
                              f"supply_tolerance of {where})")


#: A bench whose fixture states no supply tolerance.
UNSTATED_SUPPLY = Supply(math.nan, "supply tolerance not stated ([calibration] "
                                   "supply_tolerance): unknown")


def _by_range(entry: Mapping[str, Any], amounts: Sequence[float], ranged: bool,
              relative: bool) -> float:
    """Standard uncertainty of ``Σ amounts[r] · δ_r``, δ_r the error of range ``r``'s value
    of the calibrated quantity ``entry`` (``value``, ``u``, ``ranges``: its own per range):
    ranges with their own value are independent, the others share the one value's error.
    ``relative``: δ is u / value (a gain), else u (an offset); ``ranged``: ``amounts`` are
    per range (else one amount, the one value's)."""
    own = entry.get("ranges") or {} if ranged else {}
    shared, parts = 0.0, []
    for r, amount in enumerate(amounts):
        rv = own.get(str(r))
        if rv is None:
            shared += amount
        else:
            parts.append(amount * (rv["u"] / rv["value"] if relative else rv["u"]))
    one = entry["u"] / entry["value"] if relative else entry["u"]
    return math.hypot(shared * one, *parts)


def _dither_residual(step_a: float, sigma_a: float) -> float:
    """rms of the bias a quantiser of ``step_a`` leaves in a mean of samples dithered by
    Gaussian noise of ``sigma_a`` (the module docstring), A."""
    return step_a / (math.pi * math.sqrt(2)) * math.exp(-2 * math.pi ** 2 * sigma_a ** 2
                                                        / step_a ** 2)


def window_budget(s: WindowStats, calibration: Mapping[str, Any] | None,
                  supply: Supply = UNSTATED_SUPPLY) -> list[Component]:
    """The budget of one window's net energy, J (the module docstring).

    ``calibration`` is the bench's calibration record (``Bench.calibration``: ``values`` with
    each quantity's ``value``, ``u`` and per range ``ranges``, ``id``), ``None`` without one;
    ``supply`` what the fixture states of the supply voltage.
    """
    T, v = s.period_s, s.supply_v
    sigma_a = s.baseline_std_w / v
    extra_var = max(0.0, s.step_window_a ** 2 - s.step_baseline_a ** 2) / 12 * v ** 2
    sample_sigma_w = math.sqrt(s.baseline_std_w ** 2 + (extra_var if math.isfinite(extra_var)
                                                         else 0.0))
    adc_a = math.hypot(_dither_residual(s.step_window_a, sigma_a),
                       _dither_residual(s.step_baseline_a, sigma_a))
    values = (calibration or {}).get("values") or {}
    record = (calibration or {}).get("id") or "no calibration"
    gain, skew, overhead = values.get("gain"), values.get("skew_s"), values.get("overhead_j")
    offset = values.get("offset_a")
    ranged = bool(s.range_energy_j)
    energies = s.range_energy_j if ranged else (s.net_energy_j,)
    times = s.range_time_s if ranged else (0.0,)
    per_range = ranged and any((values.get(q) or {}).get("ranges") for q in ("gain", "offset_a"))
    sensitivity = 2 if gain else 1
    return [
        Component("edge quantisation", "B",
                  T / math.sqrt(12) * math.hypot(s.edge_rise_w, s.edge_fall_w),
                  "each edge within half a sample, rectangular: T / sqrt(12) times the power "
                  "step at it (GUM 4.3.7)"),
        Component("baseline noise", "A",
                  s.duration_s * s.baseline_std_w / math.sqrt(s.baseline_samples)
                  if s.baseline_samples else math.nan,  # no baseline: no net energy either
                  f"standard deviation of {s.baseline_samples} idle samples / sqrt(m), times "
                  "the duration"),
        Component("sample noise", "A", T * math.sqrt(s.samples) * sample_sigma_w,
                  "the idle samples' noise (and a coarser range's quantisation) over the "
                  f"window's {s.samples} samples"),
        Component("ADC resolution", "B", v * s.duration_s * adc_a,
                  "the bias a dithered quantiser leaves in a mean (Widrow and Kollar 2008)"
                  if math.isfinite(adc_a) else "the instrument does not state its resolution"),
        Component("gain calibration", "B",
                  _by_range(gain, energies, ranged, relative=True) if gain else math.nan,
                  (f"u of the gain in {record}" + (", per current range, on the net energy "
                                                   "in each" if per_range else ""))
                  if gain else "gain not calibrated: unknown"),
        Component("skew calibration", "B",
                  skew["u"] * abs(s.skew_step_w) if skew else math.nan,
                  f"u of the skew in {record} times the power step it moves" if skew
                  else "skew not calibrated: unknown"),
        Component("window overhead", "B", overhead["u"] if overhead else math.nan,
                  f"u of the window overhead in {record}" if overhead
                  else "window overhead not calibrated: unknown"),
        Component("offset calibration", "B",
                  v * _by_range(offset, times, ranged, relative=False) if offset
                  else 0.0 if not ranged else math.nan,
                  (f"u of each range's offset in {record} times the window's time in it, "
                   "less the duration in the baseline's range" if per_range else
                   "one offset in window and baseline: cancels in the net energy")
                  if offset or not ranged else "offset not calibrated per range: unknown"),
        Component("supply voltage", "B",
                  sensitivity * abs(s.net_energy_j) * supply.tolerance / math.sqrt(3),
                  f"{supply.source}, rectangular: tol / sqrt(3)"
                  + (", twice: the gain was calibrated at that voltage" if gain else "")),
    ]


def energy_budget(windows: Sequence[Window], batch_n: int) -> list[Component]:
    """The budget of the net energy per op of ``windows`` (each of ``batch_n`` ops), J:
    repeatability and the :data:`SYSTEMATIC` components of the windows' budgets (each
    window's ``uncertainty``; unknown where a window has none)."""
    rows = [w for w in windows if math.isfinite(w.net_energy_j)]
    if not rows:
        return []
    n = len(rows)
    _, std_net = _mean_std([w.net_energy_j / batch_n for w in rows])
    out = [Component("repeatability", "A", std_net / math.sqrt(n),
                     f"standard deviation of {n} windows' net energy / sqrt(n) (GUM 4.2.3)")]
    for name in SYSTEMATIC:
        u = [dict(w.uncertainty).get(name, math.nan) / batch_n for w in rows]
        out.append(Component(name, "B", math.fsum(u) / n,
                             f"mean of the windows' {name} (the same in every window)"))
    return out


def edge_timing_u(period_s: float) -> float:
    """Standard uncertainty of a window's duration from its two edges, each within half a
    sample (rectangular): ``T / √6``, s."""
    return period_s / math.sqrt(6)


def time_budget(windows: Sequence[Window], batch_n: int,
                calibration: Mapping[str, Any] | None = None) -> list[Component]:
    """The budget of the time per op of ``windows``, s (``calibration`` as for
    :func:`window_budget`: its window overhead)."""
    rows = [w for w in windows if w.samples > 0]
    if not rows:
        return []
    n = len(rows)
    _, std = _mean_std([w.duration_s / batch_n for w in rows])
    period = math.fsum(w.duration_s / w.samples for w in rows) / n
    values = (calibration or {}).get("values") or {}
    record = (calibration or {}).get("id") or "no calibration"
    overhead = values.get("overhead_s")
    return [Component("repeatability", "A", std / math.sqrt(n),
                      f"standard deviation of {n} windows' time / sqrt(n)"),
            Component("edge timing", "B", edge_timing_u(period) / batch_n / math.sqrt(n),
                      "each edge within half a sample, rectangular: T / sqrt(6) per window, "
                      "over sqrt(n) windows"),
            Component("window overhead", "B", overhead["u"] / batch_n if overhead else math.nan,
                      f"u of the window overhead in {record} / N" if overhead
                      else "window overhead not calibrated: unknown")]
