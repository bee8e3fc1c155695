"""``rig calibrate skew``: the delay of the current channel behind the trigger channel, from
the current step at each ``mark`` window's rising edge (module docstring of
:mod:`energyrig.calibration.routines`)."""
from __future__ import annotations

import logging
import math

import numpy as np
import numpy.typing as npt

from energyrig.calibration.quantities import SKEW_SEARCH_S
from energyrig.calibration.routines.bench import CalibrationBench, Connect
from energyrig.calibration.routines.marks import F64, arrays, record_marks
from energyrig.calibration.store import Measured
from energyrig.errors import CalibrationError

log = logging.getLogger(__name__)

#: A step smaller than this many times the idle noise is not a step.
STEP_SIGMAS = 10.0


def _step_offset(current: F64, high: npt.NDArray[np.bool_], period_s: float
                 ) -> float | None:
    """Where the current steps up after the trigger's first rise, in samples from the
    trigger edge (the first sample past half-way, against the first sample high; no
    interpolation, which an edge's transient would bias), or ``None`` when it does not."""
    rises = np.flatnonzero(high[1:] & ~high[:-1]) + 1
    if not len(rises):
        return None
    k = int(rises[0])
    span = max(2, round(SKEW_SEARCH_S / period_s))
    settle = max(1, round(0.2e-3 / period_s))
    before = current[max(0, k - 2 * span - settle):max(0, k - span - settle)]
    after = current[k + span + settle:k + 2 * span + settle]
    if len(before) < 2 or len(after) < 2:
        return None
    idle, active = float(np.median(before)), float(np.median(after))
    noise = float(np.std(before))
    if not active - idle > STEP_SIGMAS * max(noise, 1e-12):
        return None
    mid = (idle + active) / 2
    search = current[k - span:k + span]
    above = np.flatnonzero(search >= mid)
    if not len(above) or above[0] == 0:
        return None
    return float(k - span + int(above[0]) - k)


def skew(bench: CalibrationBench, connect: Connect, *, windows: int = 20,
         mark_s: float = 5e-3) -> Measured:
    """The delay of the current channel behind the trigger channel, s (negative: it leads)."""
    connect("dut")
    records = record_marks(bench, windows, mark_s)
    offsets, periods = [], []
    for record in records:
        current, _, high, period = arrays(record)
        found = _step_offset(current, high, period)
        if found is not None:  # in s at its record's own rate (one taken again, longer, may
            offsets.append(found * period)  # sample slower)
            periods.append(period)
    if len(offsets) < max(3, windows // 2):
        raise CalibrationError(
            f"skew: no current step within {SKEW_SEARCH_S * 1e3:g} ms of the trigger edge in "
            f"{windows - len(offsets)} of {windows} mark windows (is the board connected and "
            "powered, is the trigger wired?). Nothing stored")
    x = np.asarray(offsets)
    value = float(x.mean())
    std = float(x.std(ddof=1))
    # The per-edge estimate is quantised to about a sample; its spread over edges (their
    # phases against the sample clock differ) is the Type A uncertainty of the mean.
    u = math.hypot(std / math.sqrt(len(x)), max(periods) / math.sqrt(12 * len(x)))
    log.info("skew: %.4g s ± %.2g s over %d edges", value, u, len(x))
    return Measured(value=value, u=u, method="skew",
                    reference="firmware mark step at the trigger's rising edge",
                    residual_rms=std, n=len(x))
