"""``rig calibrate zero``: the offset of the current channel with its input open (module
docstring of :mod:`energyrig.calibration.routines`)."""
from __future__ import annotations

import logging

import numpy as np

from energyrig.calibration.routines.bench import CalibrationBench, Connect
from energyrig.calibration.routines.marks import arrays, range_of, record_marks, steady
from energyrig.calibration.store import Measured, RangeValue
from energyrig.errors import CalibrationError

log = logging.getLogger(__name__)


def zero(bench: CalibrationBench, connect: Connect, *, windows: int = 5,
         mark_s: float = 20e-3) -> Measured:
    """The offset of the current channel with its input open, A."""
    connect("open")
    try:
        records = record_marks(bench, windows, mark_s)
    finally:
        connect("dut")
    mean, u, rms, n = steady(records, "zero")
    current = np.concatenate([arrays(r)[0] for r in records])
    if np.mean(current == current.min()) > 0.5:
        raise CalibrationError(
            f"zero: most readings sit at {current.min():.4g} A, the bottom of the range: the "
            "offset is below what the instrument can show. Name two references "
            "([calibration] reference_ohms) and run `rig calibrate gain`: the offset is the "
            "intercept of their line. Nothing stored")
    log.info("zero: offset %.4g A ± %.2g A (rms %.3g A, %d samples)", mean, u, rms, n)
    r = range_of(records)
    return Measured(value=mean, u=u, method="zero", reference="input open", residual_rms=rms,
                    n=n, ranges={} if r is None else {r: RangeValue(value=mean, u=u)})
