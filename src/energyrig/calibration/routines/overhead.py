"""``rig calibrate overhead``: the time and energy of the firmware's empty trigger window
(``run n=0``), each window's energy as the pipeline's (:mod:`energyrig.energy.windows`;
module docstring of :mod:`energyrig.calibration.routines`)."""
from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from energyrig.calibration.routines.bench import CalibrationBench, Connect
from energyrig.calibration.routines.marks import record_request
from energyrig.calibration.store import Measured, Quantity, build_of
from energyrig.domain import Window, WindowSettings
from energyrig.energy.windows import WindowFinder, find_windows
from energyrig.errors import CalibrationError, NoTriggerWindow
from energyrig.flags import NO_BASELINE

if TYPE_CHECKING:
    from energyrig.instruments.base import RecordedCapture

log = logging.getLogger(__name__)


def _prep_any(bench: CalibrationBench) -> None:
    """Prepare the catalogue's first op (``run`` needs one; ``run n=0`` runs none of it)."""
    op = bench.dut.request("ops")["ops"][0]
    args = {"key_bits": (op.get("key_bits") or [None])[0],
            "curve": (op.get("curves") or [None])[0],
            "payload_bytes": (op.get("payload") or {}).get("min")}
    words = [f"{k}={v}" for k, v in args.items() if v is not None]
    bench.dut.request(" ".join(["prep", op["name"], *words]), bench.fixture.dut.timeout_s)


def _one_window(record: RecordedCapture, guard_s: float, baseline_s: float) -> Window:
    """The one trigger window of ``record`` as the energy math finds it
    (:func:`~energyrig.energy.windows.find_windows`: its time, its energy above the idle
    baseline of the ``baseline_s`` that ends ``guard_s`` before it, its edge error bound),
    every pulse a window (an empty window is shorter than any glitch filter).

    Raises
    ------
    CalibrationError
        Not one window in the record, or no idle span beside it.
    """
    finder = WindowFinder(WindowSettings(trigger_bit=record.trigger_bit, guard_s=guard_s,
                                         baseline_s=baseline_s), source=record.source)
    found = list(find_windows(record, finder=finder))
    rises = len(found) + sum(edge.kind == "rise" for edge in finder.unpaired)
    if len(found) != 1 or rises != 1:
        raise CalibrationError(f"overhead: {record.source}: {rises} trigger windows where "
                               "`run n=0` makes one (is something else driving the trigger?). "
                               "Nothing stored")
    if NO_BASELINE in found[0].flags:
        raise CalibrationError(f"overhead: {record.source}: no idle span before the window "
                               "(measure.pre_s too short). Nothing stored")
    return found[0]


def untouched(times_s: np.ndarray, period_s: float) -> np.ndarray:
    """Which empty windows (their times, s) hold the fixed cost alone. A window something
    else ran in (the firmware preempted: a loaded host) is only ever longer, and a load
    that preempts most windows moves their median, so the reference is the lower quartile:
    kept, the windows within 3 samples (``period_s``) or 12 deviations of it, the
    deviations those of the windows up to the median (on a steady jitter that keeps 99.5 %
    of the windows, the mean moved by under 0.07 of its standard error). Sound while at
    least a quarter of the windows are untouched."""
    low = float(np.quantile(times_s, 0.25))
    lower = times_s[times_s <= np.median(times_s)]
    spread = float(np.median(np.abs(lower - low)))
    return times_s <= low + max(3 * period_s, 12 * spread)


def overhead(bench: CalibrationBench, connect: Connect, correction: Callable[
        [RecordedCapture], RecordedCapture], *, windows: int = 40) -> dict[Quantity, Measured]:
    """The fixed cost of an empty trigger window (``run n=0``: the trigger edges and the
    firmware's two counter reads) on this board and firmware build: its time (s) and its
    energy above the idle baseline (J), each the mean over ``windows`` records corrected by
    ``correction`` (the offset, gain and skew known). A window shorter than a sample is
    caught by a sample in proportion to its length, so a record without one counts as 0
    and the mean stays unbiased; a window longer than the shortest cluster (the firmware
    preempted: a loaded host) is left out (:func:`untouched`). Its uncertainty is the spread over the records, at least
    the quantisation T / sqrt(12 n) (and the edge bound / sqrt(3 n) for the energy).

    Raises
    ------
    CalibrationError
        A record holds more than one window, or the empty window draws clearly less than
        idle (an unsteady baseline).
    """
    connect("dut")
    _prep_any(bench)
    w = bench.fixture.windows
    limits = bench.instrument.limits()
    wait_s, period = limits.stream_lag_s + 1.0, limits.period_s
    times, energies, edges = [], [], []
    for _ in range(windows):
        try:
            record = correction(record_request(bench, "run n=0", 1e-3, wait_s))
        except NoTriggerWindow:
            times.append(0.0)
            energies.append(0.0)
            continue
        window = _one_window(record, w.guard_s, w.baseline_s)
        times.append(window.duration_s)
        energies.append(window.net_energy_j)
        edges.append(window.edge_error_j)
    t, e = np.asarray(times), np.asarray(energies)
    keep = untouched(t, period)
    t, e, n = t[keep], e[keep], int(keep.sum())
    u_s = math.hypot(float(np.std(t, ddof=1)) / math.sqrt(n), period / math.sqrt(12 * n))
    edge = float(np.mean(edges)) if edges else 0.0
    u_j = math.hypot(float(np.std(e, ddof=1)) / math.sqrt(n), edge / math.sqrt(3 * n))
    value_s, value_j = float(t.mean()), float(e.mean())
    if value_j < -4 * u_j:
        raise CalibrationError(
            f"overhead: the empty window draws {value_j:.3g} J ± {u_j:.2g} J less than idle: "
            "the idle current is not steady (run `rig calibrate baseline`). Nothing stored")
    reference = f"run n=0 on {build_of(bench.hello)}"
    log.info("overhead: %.4g s ± %.2g s, %.4g J ± %.2g J (%d windows seen, %d of %d kept)",
             value_s, u_s, value_j, u_j, len(edges), n, len(times))
    return {"overhead_s": Measured(value=value_s, u=u_s, method="overhead", reference=reference,
                                   n=n),
            "overhead_j": Measured(value=value_j, u=u_j, method="overhead", reference=reference,
                                   n=n)}
