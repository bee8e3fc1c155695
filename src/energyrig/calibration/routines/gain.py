"""``rig calibrate gain``: the gain of the current channel on the fixture's reference
resistors (and the offset, with two or more), checked against the instrument's own
calibration (:func:`check_stated_gain`; module docstring of
:mod:`energyrig.calibration.routines`)."""
from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import numpy as np

from energyrig.calibration.quantities import MAX_GAIN_ERROR
from energyrig.calibration.routines.bench import CalibrationBench, Connect
from energyrig.calibration.routines.marks import F64, arrays, range_of, record_marks, steady
from energyrig.calibration.store import Measured, Quantity, RangeValue
from energyrig.errors import CalibrationError

if TYPE_CHECKING:
    from energyrig.instruments.base import StatedCalibration

log = logging.getLogger(__name__)


def gain(bench: CalibrationBench, connect: Connect, *, offset: Measured | None = None,
         windows: int = 5, mark_s: float = 20e-3) -> dict[Quantity, Measured]:
    """The gain of the current channel (measured / true) on the fixture's reference
    resistors, and with two or more of them the offset too.

    Each reference R at the record's supply V should read V / R. With two or more the
    readings are fitted by weighted least squares to a line ``i_m = gain · V / R + offset``
    (each point's variance: its mean's, and its resistor's tolerance as a rectangular
    distribution, tol / √3, through the slope); with one, ``offset`` (``zero``'s, or the
    store's) is taken out and its uncertainty combined.

    An instrument with current ranges (a PPK2) gets a gain per range its references' currents
    land in (each reference's range: the one most of its samples were measured in), by the
    same rules within the range: two or more references in a range give its gain and offset
    by a line, one its gain with the offset of the line through all references (with one
    reference in all, ``offset``'s value in its range, else ``offset``); the line through all
    references stays the value of the ranges no reference reaches.

    Returns
    -------
    dict
        ``{"gain": ...}``, and ``"offset_a"`` from the fit with two or more references.

    Raises
    ------
    CalibrationError
        No reference in the fixture, one without an offset, the current following the
        trigger, or a gain more than :data:`MAX_GAIN_ERROR` from 1 (an open reference, a
        wrong resistor, a gain 10× off).
    """
    cal = bench.fixture.calibration
    if not cal.reference_ohms:
        raise CalibrationError(f"{bench.fixture.path}: calibration.reference_ohms: the "
                               "fixture names no reference resistor for the gain")
    if len(cal.reference_ohms) < 2 and offset is None:
        raise CalibrationError("gain: one reference needs a valid offset to take out; run "
                               "`rig calibrate zero` first (or `all`), or name two references")
    x, u_x, y, u_y, rms, n, ranges = [], [], [], [], [], 0, []
    for ohms in cal.reference_ohms:
        connect("reference", ohms)
        try:
            records = record_marks(bench, windows, mark_s)
        finally:
            connect("dut")
        mean, u_mean, rms_i, n_i = steady(records, f"gain ({ohms:g} ohm)")
        ranges.append(range_of(records))
        supply_v = float(np.mean(np.concatenate([arrays(r)[1] for r in records])))
        x.append(supply_v / ohms)
        u_x.append(supply_v / ohms * cal.reference_tolerance / math.sqrt(3))
        y.append(mean)
        u_y.append(u_mean)
        rms.append(rms_i)
        n += n_i
    refs = ", ".join(f"{o:g}" for o in cal.reference_ohms)
    reference = f"{refs} ohm ± {cal.reference_tolerance * 100:g} % at {supply_v:.4g} V"
    xs, u_xs, ys, u_ys = map(np.array, (x, u_x, y, u_y))
    fitted: RangeValue | None = None
    if len(x) >= 2:
        (value, intercept), (u, u_intercept), residual = _line(xs, u_xs, ys, u_ys)
        fitted = RangeValue(value=intercept, u=u_intercept)
    else:
        assert offset is not None
        value, u = _one_point(y[0], u_y[0], x[0], RangeValue(value=offset.value, u=offset.u),
                              cal.reference_tolerance)
        residual = rms[0]
    range_gain: dict[int, RangeValue] = {}
    range_offset: dict[int, RangeValue] = {}
    for r in sorted({r for r in ranges if r is not None}):
        at = np.flatnonzero(np.array([ri == r for ri in ranges]))
        if len(at) >= 2:
            (g, b), (u_g, u_b), _ = _line(xs[at], u_xs[at], ys[at], u_ys[at])
            range_gain[r], range_offset[r] = RangeValue(value=g, u=u_g), RangeValue(value=b,
                                                                                   u=u_b)
        else:
            i = int(at[0])
            known = fitted or offset.of_range(r)  # type: ignore[union-attr]
            g, u_g = _one_point(y[i], u_y[i], x[i], known, cal.reference_tolerance)
            range_gain[r] = RangeValue(value=g, u=u_g)
    for g, where in [(value, ""), *((rv.value, f" in range {r}") for r, rv in
                                     range_gain.items())]:
        if not abs(g - 1.0) <= MAX_GAIN_ERROR:
            readings = ", ".join(f"{yi:.4g} A for {xi:.4g} A" for xi, yi in zip(x, y,
                                                                               strict=True))
            raise CalibrationError(
                f"gain: the instrument reads {readings} on the {reference} references, a gain "
                f"of {g:.3g}{where}: is the reference connected, and is it the resistor the "
                "fixture names? Nothing stored")
    out: dict[Quantity, Measured] = {"gain": Measured(
        value=value, u=u, method="gain", reference=reference, residual_rms=residual, n=n,
        ranges=range_gain)}
    log.info("gain: %.6f ± %.2g (%s)%s", value, u, reference, "".join(
        f"; range {r}: {rv.value:.6f} ± {rv.u:.2g}" for r, rv in range_gain.items()))
    if fitted is not None:
        out["offset_a"] = Measured(value=fitted.value, u=fitted.u, method="gain",
                                   reference=f"intercept of the line through {refs} ohm",
                                   residual_rms=residual, n=n, ranges=range_offset)
        log.info("offset (intercept): %.4g A ± %.2g A", fitted.value, fitted.u)
    return out


def _one_point(mean: float, u_mean: float, x: float, offset: RangeValue, tolerance: float
               ) -> tuple[float, float]:
    """The gain from one reference's mean reading (A) for ``x`` = V / R (A) with ``offset``
    taken out, and its standard uncertainty: the reading's, the offset's and the resistor's
    ``tolerance`` (rectangular, / √3) combined."""
    value = (mean - offset.value) / x
    return value, abs(value) * math.hypot(tolerance / math.sqrt(3), math.hypot(
        u_mean, offset.u) / max(abs(mean - offset.value), 1e-300))


def _line(x: F64, u_x: F64, y: F64, u_y: F64
          ) -> tuple[tuple[float, float], tuple[float, float], float]:
    """Weighted least-squares line ``y = a·x + b``: (a, b), their standard uncertainties,
    and the rms residual. The x uncertainties count through a slope of 1 (a gain)."""
    var = np.square(u_y) + np.square(u_x) + 1e-300
    design = np.column_stack([x, np.ones_like(x)])
    weights = 1.0 / var
    cov = np.linalg.inv(design.T @ (design * weights[:, None]))
    a, b = cov @ (design.T @ (weights * y))
    residual = float(np.sqrt(np.mean(np.square(y - (a * x + b)))))
    return (float(a), float(b)), (float(math.sqrt(cov[0, 0])), float(math.sqrt(cov[1, 1]))), \
        residual


def check_stated_gain(measured: Measured, stated: StatedCalibration | None) -> str | None:
    """Check a measured gain against what the instrument's own calibration allows
    (:class:`~energyrig.instruments.base.StatedCalibration`): a warning when it is
    further from 1 than ``gain_warn`` by more than twice its uncertainty, else ``None``;
    a gain per range is checked range by range (the furthest decides).

    Raises
    ------
    CalibrationError
        It is further than ``gain_refuse``: a wrong reference or a broken unit.
    """
    if stated is None:
        return None
    candidates = [(RangeValue(value=measured.value, u=measured.u), ""),
                  *((rv, f" in range {r}") for r, rv in measured.ranges.items())]
    worst, where = max(candidates, key=lambda c: abs(c[0].value - 1.0) - 2 * c[0].u)
    off = abs(worst.value - 1.0) - 2 * worst.u
    said = (f"{worst.value:.4f} ± {worst.u:.2g}{where}, but {stated.basis} "
            f"({stated.identity})")
    if off > stated.gain_refuse:
        raise CalibrationError(
            f"gain: measured {said}, which allows {stated.gain_refuse:.0%} at most: a wrong "
            "reference (its value, its wiring) or a broken unit. Nothing stored")
    if off > stated.gain_warn:
        return (f"gain: measured {said}, which allows {stated.gain_warn:.0%}: check the "
                "reference, or have the unit recalibrated")
    return None
