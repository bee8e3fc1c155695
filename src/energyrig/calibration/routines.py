"""Calibration routines: measure offset, gain, skew and the window overhead on an open bench.

Each routine records a few trigger windows made by the firmware's ``mark`` request (a busy
loop of a known length with the trigger high: ``firmware/PROTOCOL.md``), so every instrument
records them as it records an op, and fits what it measures from the whole records with
numpy:

- :func:`zero`: the current input open (on a PPK2 bench: the board's supply disconnected from
  VOUT, the logic port still wired; on a scope bench: the shunt's probe shorted at its tip).
  The offset is the mean current; it must not follow the trigger (a board still connected
  would show its ``mark`` current), nor sit at the bottom of the range (an offset below zero
  that a PPK2 cannot show).
- :func:`gain`: reference resistors of known value and tolerance in place of the board
  (``[calibration] reference_ohms``), at the instrument's supply voltage (the record's). With
  two or more, a weighted line ``i_m = gain · V/R + offset`` through their readings gives
  both; with one, gain = (mean current − offset) / (V / R) with the offset in force. A gain
  far from 1 (an open or wrong load, a gain 10× off) is refused.
- :func:`skew`: the board connected: each ``mark`` window's rising edge is a current step at
  a trigger edge. The step is located in the current (its first sample past half-way) and
  compared with the trigger's first high sample; the edges' phases against the sample clock
  differ, so the mean over windows resolves the skew below one sample. A step that never
  comes, or is lost in the noise, is refused.
- :func:`overhead`: the board connected: the firmware's empty window (``run n=0``), whose
  time and energy above idle every window of ops carries too; its records are corrected
  with the offset, gain and skew known first, since its energy is a few samples' worth.

A routine returns what it measured (:class:`~energyrig.calibration.store.Measured`: value,
standard uncertainty, reference, residual) and refuses nonsense with
:class:`~energyrig.errors.CalibrationError`; :func:`calibrate` runs several in order and
stores one record of their readings. What the
operator must wire is asked through ``connect(load, ohms)``: the simulated bench switches its
emulator, a real bench's CLI prompts. SI units.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from energyrig.calibration.correction import CurrentCorrection
from energyrig.calibration.store import (ORDER, CalibrationStore, Identity, Measured,
                                         Quantity, Record, build_of, calibration_dir,
                                         new_record)
from energyrig.errors import CalibrationError, NoTriggerWindow

if TYPE_CHECKING:
    from energyrig.fixtures.schema import Fixture
    from energyrig.instruments.base import Acquisition, RecordedCapture

log = logging.getLogger(__name__)

F64 = npt.NDArray[np.float64]

#: A gain further than this from 1 is not an instrument's error but a wrong set-up.
MAX_GAIN_ERROR = 0.2
#: A current that follows the trigger by more than this many standard errors (and
#: :data:`FOLLOW_MIN_A`) shows a board still connected.
FOLLOW_SIGMAS = 8.0
FOLLOW_MIN_A = 1e-6
#: A step smaller than this many times the idle noise is not a step.
STEP_SIGMAS = 10.0
#: The skew search spans this far around the trigger edge, s.
SKEW_SEARCH_S = 1e-3


Connect = Callable[..., None]
"""``connect(load, ohms=inf)``: wire the bench's current input to ``load`` (the board,
nothing, the reference resistor of ``ohms``): the simulated bench switches its emulator, a
real bench's CLI asks the operator."""


class Dut(Protocol):
    def request(self, line: str, timeout_s: float | None = None) -> dict[str, Any]: ...

    def idle(self, seconds: float) -> float: ...


class CalibrationBench(Protocol):
    """What a routine needs of an open bench (:class:`energyrig.rig.bench.Bench`)."""

    fixture: Fixture

    @property
    def hello(self) -> Mapping[str, Any]: ...

    @property
    def dut(self) -> Dut: ...

    @property
    def instrument(self) -> Acquisition: ...


def record_marks(bench: CalibrationBench, count: int, mark_s: float) -> list[RecordedCapture]:
    """``count`` records of a ``mark`` window of ``mark_s`` each, with the fixture's margins.

    Raises
    ------
    DutError, InstrumentError
        The firmware or the instrument failed.
    """
    cycle_hz = float(bench.hello.get("cycle_hz") or 0)
    if cycle_hz <= 0:
        raise CalibrationError(f"the firmware reports no cycle_hz ({bench.hello}); a mark "
                               "window cannot be timed")
    line = f"mark cycles={max(1, round(mark_s * cycle_hz))}"
    return [_record(bench, line, mark_s) for _ in range(count)]


def _record(bench: CalibrationBench, line: str, window_s: float,
            wait_s: float = 5.0) -> RecordedCapture:
    """One record of the trigger window the firmware request ``line`` makes (of about
    ``window_s``) after the idle span the baseline needs; ``wait_s``: how long after the
    window's margin the instrument may take to deliver it."""
    fx = bench.fixture
    m, w = fx.measure, fx.windows
    bench.instrument.arm(pre_s=m.pre_s, window_s=window_s, post_s=m.post_s)
    bench.dut.idle(w.guard_s + w.baseline_s)
    bench.dut.request(line, fx.dut.timeout_s + 10 * window_s)
    return bench.instrument.collect(timeout_s=m.post_s + wait_s + 10 * window_s)


def _arrays(record: RecordedCapture) -> tuple[F64, F64, npt.NDArray[np.bool_], float]:
    """Current (A), voltage (V), trigger level and sample period (s) of a whole record."""
    chunks = record.chunk_list
    if not chunks or not record.n_samples:
        raise CalibrationError(f"{record.source}: the record holds no samples")
    current = np.concatenate([c.current_a for c in chunks])
    voltage = np.concatenate([np.broadcast_to(np.asarray(c.voltage_v, dtype=np.float64),
                                              (len(c),)) for c in chunks])
    if any(c.logic is None for c in chunks):
        raise CalibrationError(f"{record.source}: the record has no trigger channel")
    bit = record.trigger_bit
    high = np.concatenate([(c.logic >> bit) & 1 for c in chunks  # type: ignore[operator]
                           ]).astype(bool)
    return current, voltage, high, chunks[0].period_s


def _steady(records: list[RecordedCapture], what: str) -> tuple[float, float, float, int]:
    """Mean current over every sample, its standard uncertainty, the rms residual and the
    sample count; refused when the current follows the trigger (the board is still on the
    input)."""
    means, residuals, counts = [], [], []
    follow = []
    for record in records:
        current, _, high, _ = _arrays(record)
        means.append(float(current.mean()))
        residuals.append(float(current.std()))
        counts.append(current.size)
        if high.any() and (~high).any():
            diff = float(current[high].mean() - current[~high].mean())
            se = float(current.std()) * math.sqrt(1 / high.sum() + 1 / (~high).sum())
            follow.append((diff, se))
    for diff, se in follow:
        if abs(diff) > max(FOLLOW_SIGMAS * se, FOLLOW_MIN_A):
            raise CalibrationError(
                f"{what}: the current follows the firmware's trigger ({diff:+.3g} A while it "
                "is high): the board is still on the instrument's input")
    n = int(sum(counts))
    mean = float(np.average(means, weights=counts))
    rms = float(np.sqrt(np.average(np.square(residuals), weights=counts)))
    spread = float(np.std(means, ddof=1) / math.sqrt(len(means))) if len(means) > 1 else 0.0
    return mean, max(spread, rms / math.sqrt(n)), rms, n


def zero(bench: CalibrationBench, connect: Connect, *, windows: int = 5,
         mark_s: float = 20e-3) -> Measured:
    """The offset of the current channel with its input open, A."""
    connect("open")
    try:
        records = record_marks(bench, windows, mark_s)
    finally:
        connect("dut")
    mean, u, rms, n = _steady(records, "zero")
    current = np.concatenate([_arrays(r)[0] for r in records])
    if np.mean(current == current.min()) > 0.5:
        raise CalibrationError(
            f"zero: most readings sit at {current.min():.4g} A, the bottom of the range: the "
            "offset is below what the instrument can show. Name two references "
            "([calibration] reference_ohms) and run `rig calibrate gain`: the offset is the "
            "intercept of their line. Nothing stored")
    log.info("zero: offset %.4g A ± %.2g A (rms %.3g A, %d samples)", mean, u, rms, n)
    return Measured(value=mean, u=u, method="zero", reference="input open", residual_rms=rms,
                    n=n)


def gain(bench: CalibrationBench, connect: Connect, *, offset: Measured | None = None,
         windows: int = 5, mark_s: float = 20e-3) -> dict[Quantity, Measured]:
    """The gain of the current channel (measured / true) on the fixture's reference
    resistors, and with two or more of them the offset too.

    Each reference R at the record's supply V should read V / R. With two or more the
    readings are fitted by weighted least squares to a line ``i_m = gain · V / R + offset``
    (each point's variance: its mean's, and its resistor's tolerance as a rectangular
    distribution, tol / √3, through the slope); with one, ``offset`` (``zero``'s, or the
    store's) is taken out and its uncertainty combined.

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
    x, u_x, y, u_y, rms, n = [], [], [], [], [], 0
    for ohms in cal.reference_ohms:
        connect("reference", ohms)
        try:
            records = record_marks(bench, windows, mark_s)
        finally:
            connect("dut")
        mean, u_mean, rms_i, n_i = _steady(records, f"gain ({ohms:g} ohm)")
        supply_v = float(np.mean(np.concatenate([_arrays(r)[1] for r in records])))
        x.append(supply_v / ohms)
        u_x.append(supply_v / ohms * cal.reference_tolerance / math.sqrt(3))
        y.append(mean)
        u_y.append(u_mean)
        rms.append(rms_i)
        n += n_i
    refs = ", ".join(f"{o:g}" for o in cal.reference_ohms)
    reference = f"{refs} ohm ± {cal.reference_tolerance * 100:g} % at {supply_v:.4g} V"
    if len(x) >= 2:
        (value, intercept), (u, u_intercept), residual = _line(np.array(x), np.array(u_x),
                                                               np.array(y), np.array(u_y))
    else:
        assert offset is not None
        value = (y[0] - offset.value) / x[0]
        u = value * math.hypot(cal.reference_tolerance / math.sqrt(3),
                               math.hypot(u_y[0], offset.u) / max(abs(y[0] - offset.value),
                                                                  1e-300))
        residual = rms[0]
    if not abs(value - 1.0) <= MAX_GAIN_ERROR:
        readings = ", ".join(f"{yi:.4g} A for {xi:.4g} A" for xi, yi in zip(x, y, strict=True))
        raise CalibrationError(
            f"gain: the instrument reads {readings} on the {reference} references, a gain of "
            f"{value:.3g}: is the reference connected, and is it the resistor the fixture "
            "names? Nothing stored")
    out: dict[Quantity, Measured] = {"gain": Measured(
        value=value, u=u, method="gain", reference=reference, residual_rms=residual, n=n)}
    log.info("gain: %.6f ± %.2g (%s)", value, u, reference)
    if len(x) >= 2:
        out["offset_a"] = Measured(value=intercept, u=u_intercept, method="gain",
                                   reference=f"intercept of the line through {refs} ohm",
                                   residual_rms=residual, n=n)
        log.info("offset (intercept): %.4g A ± %.2g A", intercept, u_intercept)
    return out


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
    offsets, period = [], math.nan
    for record in records:
        current, _, high, period = _arrays(record)
        found = _step_offset(current, high, period)
        if found is not None:
            offsets.append(found)
    if len(offsets) < max(3, windows // 2):
        raise CalibrationError(
            f"skew: no current step within {SKEW_SEARCH_S * 1e3:g} ms of the trigger edge in "
            f"{windows - len(offsets)} of {windows} mark windows (is the board connected and "
            "powered, is the trigger wired?). Nothing stored")
    x = np.asarray(offsets) * period
    value = float(x.mean())
    std = float(x.std(ddof=1))
    # The per-edge estimate is quantised to about a sample; its spread over edges (their
    # phases against the sample clock differ) is the Type A uncertainty of the mean.
    u = math.hypot(std / math.sqrt(len(x)), period / math.sqrt(12 * len(x)))
    log.info("skew: %.4g s ± %.2g s over %d edges", value, u, len(x))
    return Measured(value=value, u=u, method="skew",
                    reference="firmware mark step at the trigger's rising edge",
                    residual_rms=std, n=len(x))


def _prep_any(bench: CalibrationBench) -> None:
    """Prepare the catalogue's first op (``run`` needs one; ``run n=0`` runs none of it)."""
    op = bench.dut.request("ops")["ops"][0]
    args = {"key_bits": (op.get("key_bits") or [None])[0],
            "curve": (op.get("curves") or [None])[0],
            "payload_bytes": (op.get("payload") or {}).get("min")}
    words = [f"{k}={v}" for k, v in args.items() if v is not None]
    bench.dut.request(" ".join(["prep", op["name"], *words]), bench.fixture.dut.timeout_s)


def _empty_window(record: RecordedCapture, guard_s: float, baseline_s: float
                  ) -> tuple[float, float, float]:
    """Time (s), energy above the idle baseline (J) and edge error bound (J: one sample of
    power at each edge) of the one trigger window of ``record``: ``T·Σp`` over its high
    samples, less the mean power of the ``baseline_s`` that ends ``guard_s`` before it, as
    :mod:`energyrig.rig.energy` defines them."""
    current, voltage, high, period = _arrays(record)
    power = current * voltage
    rises = np.flatnonzero(high[1:] & ~high[:-1]) + 1
    if len(rises) != 1 or high[-1]:
        raise CalibrationError(f"overhead: {record.source}: {len(rises)} trigger windows where "
                               "`run n=0` makes one (is something else driving the trigger?). "
                               "Nothing stored")
    k = int(rises[0])
    end = k + int(np.argmin(high[k:]))
    stop = k - round(guard_s / period)
    base = power[max(0, stop - max(1, round(baseline_s / period))):max(0, stop)]
    if not len(base):
        raise CalibrationError(f"overhead: {record.source}: no idle span before the window "
                               "(measure.pre_s too short). Nothing stored")
    duration = (end - k) * period
    edges = period * (max(abs(power[k - 1]), abs(power[k])) + max(abs(power[end - 1]),
                                                                  abs(power[end])))
    return duration, float(power[k:end].sum() * period - base.mean() * duration), edges


def overhead(bench: CalibrationBench, connect: Connect, correction: Callable[
        [RecordedCapture], RecordedCapture], *, windows: int = 40) -> dict[Quantity, Measured]:
    """The fixed cost of an empty trigger window (``run n=0``: the trigger edges and the
    firmware's two counter reads) on this board and firmware build: its time (s) and its
    energy above the idle baseline (J), each the mean over ``windows`` records corrected by
    ``correction`` (the offset, gain and skew known). A window shorter than a sample is
    caught by a sample in proportion to its length, so a record without one counts as 0
    and the mean stays unbiased; a window far longer than the median (the firmware
    preempted: a loaded host) is left out. Its uncertainty is the spread over the records, at least
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
            record = correction(_record(bench, "run n=0", 1e-3, wait_s))
        except NoTriggerWindow:
            times.append(0.0)
            energies.append(0.0)
            continue
        t, e, edge = _empty_window(record, w.guard_s, w.baseline_s)
        times.append(t)
        energies.append(e)
        edges.append(edge)
    # A window the firmware was preempted in (a loaded host) is no fixed cost: beyond the
    # median by more than 3 samples and 5 median deviations, it is left out.
    t, e = np.asarray(times), np.asarray(energies)
    median = float(np.median(t))
    keep = t <= median + max(3 * period, 5 * float(np.median(np.abs(t - median))))
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




def calibrate(bench: CalibrationBench, connect: Connect,
              names: Sequence[str]) -> tuple[Record, Path]:
    """Run the routines ``names`` (of :data:`ORDER`) on ``bench`` and store one record of
    what they measured in the fixture's store.

    With two or more references ``gain`` fits the offset too, and ``all`` skips ``zero``;
    with one it takes out the offset ``zero`` just measured, or else the store's valid one.

    Raises
    ------
    CalibrationError
        A routine refused its measurement, or ``gain`` has no offset to take out; nothing
        is stored.
    """
    fx = bench.fixture
    store = CalibrationStore(calibration_dir(fx))
    identity = Identity.of(bench.instrument.describe())
    stored = store.latest(identity).values
    readings: dict[Quantity, Measured] = {}
    fitted_offset = len(fx.calibration.reference_ohms) >= 2
    for name in (n for n in ORDER if n in names):
        if name == "zero" and not (fitted_offset and "gain" in names):
            readings["offset_a"] = zero(bench, connect)
        elif name == "gain":
            readings.update(gain(bench, connect,
                                 offset=readings.get("offset_a") or stored.get("offset_a")))
        elif name == "skew":
            readings["skew_s"] = skew(bench, connect)
        elif name == "overhead":
            known = {q: (readings.get(q) or stored[q]).value
                     for q in ("offset_a", "gain", "skew_s") if q in readings or q in stored}
            readings.update(overhead(bench, connect, CurrentCorrection(**known)))
    record = new_record(fx, identity, bench.hello, readings)
    return record, store.save(record)
