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
- :func:`baseline`: the board connected: seconds of the firmware's idle after a ``mark``
  window. Their drift and noise, the Allan deviation of their mean over spans, and from it
  the shortest baseline span whose standard error is within a stated :class:`Precision`;
  the guard from the time the current takes to settle after the window's falling edge. It
  corrects nothing: it advises the fixture's ``[windows]`` (:func:`fixture_lines`).

The gain is checked against the instrument's own stored calibration (a PPK2's metadata,
:func:`check_stated_gain`).

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
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from energyrig.calibration.correction import CurrentCorrection
from energyrig.calibration.quantities import (MAX_GAIN_ERROR, ORDER, ROUTINES,
                                              SKEW_SEARCH_S)
from energyrig.calibration.store import (
    CalibrationStore,
    Identity,
    Measured,
    Quantity,
    RangeValue,
    Record,
    build_of,
    calibration_dir,
    new_record,
)
from energyrig.errors import CalibrationError, NoTriggerWindow, RecordTooShort
from energyrig.units import format_si

if TYPE_CHECKING:
    from energyrig.fixtures.schema import Fixture
    from energyrig.instruments.base import Acquisition, RecordedCapture, StatedCalibration

log = logging.getLogger(__name__)

F64 = npt.NDArray[np.float64]

#: A current that follows the trigger by more than this many standard errors (and
#: :data:`FOLLOW_MIN_A`) shows a board still connected.
FOLLOW_SIGMAS = 8.0
FOLLOW_MIN_A = 1e-6
#: A step smaller than this many times the idle noise is not a step.
STEP_SIGMAS = 10.0
#: Times one mark (or empty) window that outlasted its record is taken again, and how much
#: longer its record is each time.
RECORD_RETRIES = 3
RECORD_GROWTH = 4.0


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


def record_marks(bench: CalibrationBench, count: int, mark_s: float, *,
                 idle_after_s: float | None = None) -> list[RecordedCapture]:
    """``count`` records of a ``mark`` window of ``mark_s`` each, with the fixture's margins
    (or, with ``idle_after_s``, that long of the firmware's idle after it instead of the
    fixture's ``post_s``, s).

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
    return [_record(bench, line, mark_s, idle_after_s=idle_after_s, mark=True)
            for _ in range(count)]


def _record(bench: CalibrationBench, line: str, window_s: float, wait_s: float = 5.0, *,
            idle_after_s: float | None = None, mark: bool = False) -> RecordedCapture:
    """One record of the trigger window the firmware request ``line`` makes (of about
    ``window_s``) after the idle span the baseline needs, and the fixture's ``post_s`` after
    it (or ``idle_after_s`` of the firmware's idle); ``wait_s``: how long after the window's
    margin the instrument may take to deliver it.

    A window that outlasted its record (the firmware preempted inside it: the host DUT on a
    loaded machine) is taken again, up to :data:`RECORD_RETRIES` times, as the point
    pipeline measures such a window again, each time in a record :data:`RECORD_GROWTH` times
    longer (within the longest the instrument holds at its rate): what matters of a mark
    window is its edges and its level, not how long it lasted. A ``mark`` window lasts many
    samples, so a record without it lost it (a stream the loaded host did not read in time
    drops samples): it is taken again as often.

    Raises
    ------
    RecordTooShort
        The window outlasted its record every time.
    NoTriggerWindow
        No record held the window (with ``mark``: every time; the trigger is not wired).
    """
    m = bench.fixture.measure
    post_s = m.post_s if idle_after_s is None else idle_after_s
    longest = bench.instrument.limits().max_window_s(m.pre_s, post_s)
    for _ in range(RECORD_RETRIES):
        try:
            return _record_once(bench, line, window_s, wait_s, idle_after_s)
        except RecordTooShort as exc:
            window_s = max(window_s, min(RECORD_GROWTH * window_s, longest or math.inf))
            log.warning("%s; taking the record again, for a window of %s", exc,
                        format_si(window_s, "s"))
        except NoTriggerWindow as exc:
            if not mark:
                raise
            log.warning("%s; a mark window lasts many samples: taking the record again", exc)
    return _record_once(bench, line, window_s, wait_s, idle_after_s)


def _record_once(bench: CalibrationBench, line: str, window_s: float, wait_s: float,
                 idle_after_s: float | None) -> RecordedCapture:
    fx = bench.fixture
    m, w = fx.measure, fx.windows
    post_s = m.post_s if idle_after_s is None else idle_after_s
    bench.instrument.arm(pre_s=m.pre_s, window_s=window_s, post_s=post_s)
    bench.dut.idle(w.guard_s + w.baseline_s)
    bench.dut.request(line, fx.dut.timeout_s + 10 * window_s)
    if idle_after_s is not None:
        bench.dut.idle(idle_after_s)
    return bench.instrument.collect(timeout_s=post_s + wait_s + 10 * window_s)


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


def _range_of(records: Sequence[RecordedCapture]) -> int | None:
    """The current range most of the records' samples were measured in (``None``: the
    instrument has one range)."""
    chunks = [c for r in records for c in r.chunk_list]
    if not chunks or any(c.current_range is None for c in chunks):
        return None
    counts = np.bincount(np.concatenate([c.current_range for c in chunks  # type: ignore[misc]
                                         ]).astype(np.intp))
    return int(np.argmax(counts))


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
    r = _range_of(records)
    return Measured(value=mean, u=u, method="zero", reference="input open", residual_rms=rms,
                    n=n, ranges={} if r is None else {r: RangeValue(value=mean, u=u)})


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
        mean, u_mean, rms_i, n_i = _steady(records, f"gain ({ohms:g} ohm)")
        ranges.append(_range_of(records))
        supply_v = float(np.mean(np.concatenate([_arrays(r)[1] for r in records])))
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
        current, _, high, period = _arrays(record)
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

#: ``rig calibrate baseline``'s default precision: the baseline's standard error at most this
#: fraction of the board's current above idle in a window (so the baseline moves a window's
#: net energy by at most that fraction).
BASELINE_PRECISION = 0.005
#: Idle recorded after each of the routine's mark windows, s, and how many such records.
BASELINE_SPAN_S = 2.0
BASELINE_RECORDS = 3
#: After each mark window's falling edge, the current has this long to settle, s; the idle
#: span starts after it.
SETTLE_SEARCH_S = 20e-3
#: The current has settled once it stays within this many noise sigmas of idle for
#: :data:`SETTLED_FOR_S` (at least 10 samples).
SETTLE_SIGMAS = 5.0
SETTLED_FOR_S = 0.5e-3
#: The guard advised: this many times the settling time measured.
GUARD_MARGIN = 2.0
#: No baseline span shorter than this many samples is advised (an outlier would move it).
MIN_BASELINE_SAMPLES = 100
#: Spans tried per doubling; the longest is a quarter of an idle record.
SPANS_PER_OCTAVE = 4


class Precision(NamedTuple):
    """How precisely the baseline must be known: a fraction of the board's current above
    idle (``relative``), or a current (``absolute_a``, A); the other is ``None``."""

    relative: float | None = BASELINE_PRECISION
    absolute_a: float | None = None

    @classmethod
    def parse(cls, text: str) -> Precision:
        """``"0.5%"`` (of the current above idle) or a current: ``"2e-6"``, ``"2uA"``,
        ``"2 µA"``, ``"0.01 mA"``.

        Raises
        ------
        ValueError
            Anything else, or a figure not above 0.
        """
        t = text.strip().replace(" ", "")
        relative = t.endswith("%")
        number, scale = (t[:-1], 0.01) if relative else (t.removesuffix("A"), 1.0)
        if not relative and number[-1:] in _SI_PREFIXES:
            number, scale = number[:-1], _SI_PREFIXES[number[-1]]
        try:
            value = float(number) * scale
        except ValueError:
            raise ValueError(f"{text!r}: give a percentage of the current above idle "
                             "(0.5%) or a current (2uA)") from None
        if not value > 0:
            raise ValueError(f"{text!r}: the precision must be above 0")
        return cls(value, None) if relative else cls(None, value)

    def of(self, step_a: float) -> float:
        """The precision in A, for a board ``step_a`` (A) above idle in a window."""
        return self.absolute_a if self.absolute_a is not None else self.relative * step_a  # type: ignore[operator]

    def __str__(self) -> str:
        if self.absolute_a is not None:
            return f"{self.absolute_a:.3g} A"
        return f"{self.relative * 100:g} % of the current above idle"  # type: ignore[operator]


_SI_PREFIXES = {"m": 1e-3, "u": 1e-6, "µ": 1e-6, "n": 1e-9}
#: :data:`BASELINE_PRECISION` of the current above idle.
DEFAULT_PRECISION = Precision()


def allan_deviation(segments: Sequence[F64], spans: npt.NDArray[np.int64]) -> F64:
    """The overlapping Allan deviation of the mean of ``m`` samples, for each ``m`` of
    ``spans``, pooled over ``segments`` (each a contiguous run of samples), A.

    For white noise of rms sigma it is sigma / sqrt(m), the standard error of a baseline of
    ``m`` samples; a drift makes it grow with ``m``, a periodic load keeps it high until
    ``m`` spans several of its periods. It is the spread between the means of two adjacent
    spans: what a baseline ending just before a window differs by from the idle under it.
    A span no segment holds twice gives NaN.
    """
    sums = np.zeros(len(spans))
    counts = np.zeros(len(spans))
    for seg in segments:
        cum = np.concatenate([[0.0], np.cumsum(seg, dtype=np.float64)])
        for k, m in enumerate(spans):
            if seg.size < 2 * m:
                continue
            means = (cum[m:] - cum[:-m]) / m
            diff = means[m:] - means[:-m]
            sums[k] += float(np.dot(diff, diff))
            counts[k] += diff.size
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(0.5 * sums / counts)


def shortest_span(spans: F64, deviation: F64, precision_a: float) -> int | None:
    """The index of the shortest span from which on the deviation stays within
    ``precision_a`` up to twice that span (so a periodic load's lucky null, a span of a
    whole number of its periods, does not count), or ``None``."""
    ok = deviation <= precision_a
    for k in range(len(spans)):
        upto = spans <= 2 * spans[k] * (1 + 1e-9)
        if ok[k:][upto[k:]].all():
            return k
    return None


def _settle_samples(after: F64, idle_a: F64, band_a: float, run: int) -> int | None:
    """Samples after a falling edge until the current stays within ``band_a`` of ``idle_a``
    for ``run`` samples (``None``: it does not, in ``after``)."""
    outside = np.abs(after - idle_a) > band_a
    cum = np.concatenate([[0], np.cumsum(outside)])
    quiet = np.flatnonzero(cum[run:] - cum[:-run] == 0)
    return int(quiet[0]) if len(quiet) else None


def idle_stability(records: Sequence[tuple[F64, npt.NDArray[np.bool_]]], period_s: float,
                   precision: Precision = DEFAULT_PRECISION) -> dict[Quantity, Measured]:
    """Idle stability from records of a trigger window (the board's current above idle)
    followed by an idle span: each record's current (A) and trigger level, sampled every
    ``period_s`` (s).

    The idle span is every sample from :data:`SETTLE_SEARCH_S` after the window's falling
    edge on; the trigger must stay low there. Of it: the drift (per record, the slope
    between the medians of its first and last thirds, A/s), the white noise (the rms of the
    samples' differences / sqrt 2, steps left out, A), the Allan deviation of the mean over
    spans of :data:`MIN_BASELINE_SAMPLES` samples to a quarter of the span
    (:func:`allan_deviation`), and from it the shortest baseline span whose
    standard error stays within ``precision`` (:func:`shortest_span`). The guard is
    :data:`GUARD_MARGIN` times the median time, after the window's falling edges, until the
    current stays within :data:`SETTLE_SIGMAS` noise sigmas of idle.

    Returns
    -------
    dict
        ``baseline_s``, ``guard_s``, ``idle_drift_a_per_s``, ``idle_noise_a``.

    Raises
    ------
    CalibrationError
        No idle span (the trigger high throughout: the board is busy), no window, a window
        no higher than idle, a current that does not settle after it, or no span that
        reaches the precision (a drift or a load too large).
    """
    skip = round(SETTLE_SEARCH_S / period_s)
    idle, slopes, diffs, steps, settles = [], [], [], [], []
    for current, high in records:
        rises = np.flatnonzero(high[1:] & ~high[:-1]) + 1
        if high.all() or not len(rises):
            raise CalibrationError(
                "baseline: the trigger is " + ("high throughout the record: the board is busy"
                                               if high.all() else "never high: the mark "
                                               "window did not come (is the trigger wired?)")
                + ". Nothing stored")
        falls = np.flatnonzero(high[rises[0]:-1] & ~high[rises[0] + 1:]) + rises[0] + 1
        if not len(falls) or high[falls[0]:].any():
            raise CalibrationError(
                "baseline: the trigger is high again after the mark window (or stays high): "
                "the board is busy, no idle span (the firmware runs windows, or something "
                "else drives the trigger). Nothing stored")
        after = current[falls[0]:]
        seg = after[skip:]
        if seg.size < 4 * MIN_BASELINE_SAMPLES:
            raise CalibrationError(f"baseline: {seg.size * period_s:.3g} s of idle recorded "
                                   "after the mark window: too short a span. Nothing stored")
        # The idle's line, robust to a periodic load: its slope from the medians of the first
        # and last thirds, its level a median; carried back over the settling span.
        third = seg.size // 3
        lever_s = 2 * third * period_s
        slope = float(np.median(seg[-third:]) - np.median(seg[:third])) / lever_s
        t = np.arange(seg.size) * period_s
        level = float(np.median(seg - slope * t))
        idle.append(seg)
        slopes.append(slope)
        diffs.append(np.diff(seg))
        steps.append(float(np.median(current[rises[0]:falls[0]])) - level)
        settles.append((after[:skip], level + slope * np.arange(-skip, 0) * period_s))
    # White noise from the samples' differences, blind to a drift (their median) and to a
    # load's steps (beyond 6 robust sigmas, at least one quantisation step: a coarse ADC's
    # differences are whole steps, which a median deviation alone misjudges).
    d = np.concatenate(diffs)
    d = d - np.median(d)
    step_d = np.abs(d)
    scale = max(1.4826 * float(np.median(step_d)), float(np.min(step_d[step_d > 0],
                                                                  initial=np.inf)))
    kept = d[step_d <= 6 * scale] if math.isfinite(scale) else d
    noise = float(np.sqrt(np.mean(np.square(kept)) / 2))
    n_noise = kept.size
    step = float(np.median(steps))
    if not step > SETTLE_SIGMAS * noise:
        raise CalibrationError(f"baseline: the current rises {step:.3g} A in the mark window, "
                               f"within the noise ({noise:.3g} A rms): is the board connected? "
                               "Nothing stored")
    precision_a = precision.of(step)
    shortest = min(s.size for s in idle)
    octaves = math.log2(shortest / 4 / MIN_BASELINE_SAMPLES)
    steps_up = np.arange(0, max(0.0, octaves) * SPANS_PER_OCTAVE + 1) / SPANS_PER_OCTAVE
    spans = np.unique(np.round(MIN_BASELINE_SAMPLES * 2.0 ** steps_up)).astype(np.int64)
    deviation = allan_deviation(idle, spans)
    k = shortest_span(spans.astype(np.float64), deviation, precision_a)
    drift = float(np.mean(slopes))
    # The spread over the records, at least what white noise leaves in the slope of each
    # (a median of n samples: 1.2533 sigma / sqrt(n), two of them over the lever): medians
    # of a coarse ADC's readings can agree exactly.
    spread = float(np.std(slopes, ddof=1)) if len(slopes) > 1 else 0.0
    u_drift = max(spread, 1.2533 * noise * math.sqrt(2 / third) / lever_s) / math.sqrt(
        len(slopes))
    if k is None:
        raise CalibrationError(
            f"baseline: no idle span up to {spans[-1] * period_s:.3g} s gives the baseline to "
            f"{precision_a:.3g} A ({precision}): its standard error is at least "
            f"{np.nanmin(deviation):.3g} A (drift {drift:.3g} A/s, noise {noise:.3g} A rms); "
            "the idle current is not steady enough. Nothing stored")
    run = max(10, round(SETTLED_FOR_S / period_s))
    found = [_settle_samples(after, level, SETTLE_SIGMAS * noise, run)
             for after, level in settles]
    settled = np.array([f for f in found if f is not None], dtype=np.float64) * period_s
    if len(settled) * 2 <= len(found):
        raise CalibrationError(
            f"baseline: the current does not settle within {SETTLE_SIGMAS:g} noise sigmas "
            f"({SETTLE_SIGMAS * noise:.3g} A) of idle after {len(found) - len(settled)} of "
            f"{len(found)} windows' falling edges. Nothing stored")
    span_s = float(spans[k] * period_s)
    u_span = span_s * (1 - 2 ** (-1 / SPANS_PER_OCTAVE)) / math.sqrt(12)
    median_settle = float(np.median(settled))
    guard = max(GUARD_MARGIN * median_settle, 2 * period_s)
    u_guard = GUARD_MARGIN * math.hypot(
        float(np.std(settled, ddof=1)) / math.sqrt(len(settled)) if len(settled) > 1 else 0.0,
        period_s / math.sqrt(12))
    n_idle = int(sum(s.size for s in idle))
    log.info("baseline: span %.4g s (standard error %.3g A <= %.3g A), guard %.3g s, drift "
             "%.3g A/s, noise %.3g A rms", span_s, deviation[k], precision_a, guard, drift,
             noise)
    return {
        "baseline_s": Measured(
            value=span_s, u=u_span, method="baseline", n=n_idle,
            reference=f"standard error {format_si(float(deviation[k]), 'A')} <= "
                      f"{format_si(precision_a, 'A')} ({precision}, {format_si(step, 'A')})"),
        "guard_s": Measured(
            value=guard, u=u_guard, method="baseline", n=len(settled),
            reference=f"{GUARD_MARGIN:g} x {format_si(median_settle, 's')} to settle within "
                      f"{SETTLE_SIGMAS:g} sigma after a falling edge"),
        "idle_drift_a_per_s": Measured(value=drift, u=u_drift, method="baseline",
                                       n=len(slopes), reference="medians of each idle's thirds"),
        "idle_noise_a": Measured(value=noise, u=noise / math.sqrt(n_noise),
                                 method="baseline", n=n_noise,
                                 reference="rms of the idle's differences / sqrt 2"),
    }


def baseline(bench: CalibrationBench, connect: Connect, precision: Precision = DEFAULT_PRECISION, *,
             span_s: float = BASELINE_SPAN_S, records: int = BASELINE_RECORDS,
             mark_s: float = 20e-3) -> dict[Quantity, Measured]:
    """The board's idle stability on the bench as it measures: ``records`` records of a
    ``mark`` window of ``mark_s`` (the current above idle, and a falling edge to settle
    after), each followed by the firmware's idle for ``span_s`` (at most what the
    instrument's record holds) beyond :data:`SETTLE_SEARCH_S`, analysed by
    :func:`idle_stability`.

    Raises
    ------
    CalibrationError
        See :func:`idle_stability`.
    """
    connect("dut")
    limits = bench.instrument.limits()
    if limits.max_record_s is not None:
        span_s = min(span_s, limits.max_record_s - limits.window_margin * mark_s
                     - bench.fixture.measure.pre_s)
    taken = record_marks(bench, records, mark_s, idle_after_s=SETTLE_SEARCH_S + span_s)
    arrays = [_arrays(r) for r in taken]
    return idle_stability([(c, h) for c, _, h, _ in arrays], arrays[0][3], precision)


def fixture_lines(values: Mapping[Quantity, Measured], fixture: Fixture) -> str:
    """The fixture lines the baseline's advice gives: ``[windows] guard_s`` and
    ``baseline_s``, rounded up to two digits, and ``[measure] pre_s`` when it must grow to
    hold both."""
    guard, span = (_two_digits_up(values[q].value) for q in ("guard_s", "baseline_s"))
    lines = ["[windows]", f"guard_s = {guard:.2g}", f"baseline_s = {span:.2g}"]
    if fixture.measure.pre_s < guard + span:
        pre = _two_digits_up(1.2 * (guard + span))
        lines += ["[measure]", (f"pre_s = {pre:.2g}    # it must hold guard_s + baseline_s "
                                f"(was {fixture.measure.pre_s:g})")]
    return "\n".join(lines)


def _two_digits_up(x: float) -> float:
    """``x`` rounded up to two significant digits."""
    scale = 10.0 ** (math.floor(math.log10(x)) - 1)
    return math.ceil(x / scale - 1e-9) * scale


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


def calibrate(bench: CalibrationBench, connect: Connect, names: Sequence[str],
              precision: Precision = DEFAULT_PRECISION) -> tuple[Record, Path]:
    """Run the routines ``names`` (of :data:`ORDER`) on ``bench`` and store one record of
    what they measured in the fixture's store.

    With two or more references ``gain`` fits the offset too, and ``all`` skips ``zero``;
    with one it takes out the offset ``zero`` just measured, or else the store's valid one.
    The gain is checked against the instrument's own calibration (:func:`check_stated_gain`),
    whose identity the record keeps; a disagreement is a note of the record. ``baseline``
    advises the spans for ``precision``.

    Raises
    ------
    CalibrationError
        A routine refused its measurement, ``gain`` has no offset to take out, or a value
        is implausible (:meth:`~energyrig.calibration.store.Measured.implausible`, the
        check the store makes when it reads a record); nothing is stored.
    """
    fx = bench.fixture
    store = CalibrationStore(calibration_dir(fx))
    info = bench.instrument.describe()
    identity = Identity.of(info)
    stored = store.latest(identity).values
    readings: dict[Quantity, Measured] = {}
    notes: list[str] = []
    fitted_offset = len(fx.calibration.reference_ohms) >= 2
    for name in (n for n in ORDER if n in names):
        if name == "zero" and not (fitted_offset and "gain" in names):
            readings["offset_a"] = zero(bench, connect)
        elif name == "gain":
            readings.update(gain(bench, connect,
                                 offset=readings.get("offset_a") or stored.get("offset_a")))
            note = check_stated_gain(readings["gain"], info.stated)
            if note:
                log.warning("%s", note)
                notes.append(note)
        elif name == "skew":
            readings["skew_s"] = skew(bench, connect)
        elif name == "overhead":
            known = {q: readings.get(q) or stored[q]
                     for q in ("offset_a", "gain", "skew_s") if q in readings or q in stored}
            readings.update(overhead(bench, connect, CurrentCorrection.from_values(known)))
        elif name == "baseline":
            readings.update(baseline(bench, connect, precision))
    for q, reading in readings.items():
        found = reading.implausible(q)
        if found is not None:
            raise CalibrationError(f"{ROUTINES[q]}: {q} {found[0]}: {found[1]}. Nothing stored")
    own = info.stated.identity if info.stated is not None and "gain" in readings else None
    record = new_record(fx, identity, bench.hello, readings, notes=tuple(notes),
                        instrument_calibration=own)
    return record, store.save(record)
