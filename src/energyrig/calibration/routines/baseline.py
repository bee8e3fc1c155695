"""``rig calibrate baseline``: the board's idle stability (drift, noise), the shortest
baseline span that gives the baseline to a stated :class:`Precision`, and the guard after a
falling edge; advice for the fixture's ``[windows]`` (:func:`fixture_lines`), no correction
(module docstring of :mod:`energyrig.calibration.routines`). The four estimators are
functions of their own (:func:`idle_drift`, :func:`idle_noise`, :func:`allan_span`,
:func:`settle_guard`), which :func:`idle_stability` combines."""
from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt

from energyrig.calibration.routines.bench import CalibrationBench, Connect
from energyrig.calibration.routines.marks import F64, arrays, record_marks
from energyrig.calibration.store import Measured, Quantity
from energyrig.errors import CalibrationError
from energyrig.units import format_si

if TYPE_CHECKING:
    from energyrig.fixtures.schema import Fixture

log = logging.getLogger(__name__)

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
    return _allan_deviation(_cumulative(segments), spans)


def _cumulative(segments: Sequence[F64]) -> list[F64]:
    """Each segment's running sum from 0 (:func:`_allan_deviation`'s input), A."""
    return [np.concatenate([[0.0], np.cumsum(seg, dtype=np.float64)]) for seg in segments]


def _allan_deviation(sums_of: Sequence[F64], spans: npt.NDArray[np.int64]) -> F64:
    """:func:`allan_deviation` of the segments whose running sums are ``sums_of``."""
    sums = np.zeros(len(spans))
    counts = np.zeros(len(spans))
    for cum in sums_of:
        for k, m in enumerate(spans):
            if cum.size - 1 < 2 * m:
                continue
            means = (cum[m:] - cum[:-m]) / m
            diff = means[m:] - means[:-m]
            sums[k] += float(np.dot(diff, diff))
            counts[k] += diff.size
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(0.5 * sums / counts)


def _settle_samples(after: F64, idle_a: F64, band_a: float, run: int) -> int | None:
    """Samples after a falling edge until the current stays within ``band_a`` of ``idle_a``
    for ``run`` samples (``None``: it does not, in ``after``)."""
    outside = np.abs(after - idle_a) > band_a
    cum = np.concatenate([[0], np.cumsum(outside)])
    quiet = np.flatnonzero(cum[run:] - cum[:-run] == 0)
    return int(quiet[0]) if len(quiet) else None


def idle_line(seg: F64, period_s: float) -> tuple[float, float]:
    """The line of one idle span sampled every ``period_s`` (s), robust to a periodic load:
    its slope (A/s) from the medians of its first and last thirds, its level (A, at its
    first sample) a median."""
    third = seg.size // 3
    slope = float(np.median(seg[-third:]) - np.median(seg[:third])) / (2 * third * period_s)
    t = np.arange(seg.size) * period_s
    return slope, float(np.median(seg - slope * t))


def idle_drift(idle: Sequence[F64], period_s: float, noise_a: float) -> tuple[float, float]:
    """The drift of the idle spans (:func:`idle_line`'s slope, their mean, A/s) and its
    standard uncertainty: the spread over the spans, at least what white noise of
    ``noise_a`` (A) leaves in the slope of each (a median of n samples: 1.2533 sigma /
    sqrt(n), two of them over the lever), over sqrt(spans); medians of a coarse ADC's
    readings can agree exactly."""
    slopes = [idle_line(seg, period_s)[0] for seg in idle]
    third = idle[-1].size // 3
    lever_s = 2 * third * period_s
    spread = float(np.std(slopes, ddof=1)) if len(slopes) > 1 else 0.0
    u_drift = max(spread, 1.2533 * noise_a * math.sqrt(2 / third) / lever_s) / math.sqrt(
        len(slopes))
    return float(np.mean(slopes)), u_drift


def idle_noise(idle: Sequence[F64]) -> tuple[float, int]:
    """The white noise of the idle spans (A rms) and the differences it rests on: the rms
    of the samples' differences / sqrt 2, blind to a drift (their median) and to a load's
    steps (beyond 6 robust sigmas, at least one quantisation step: a coarse ADC's
    differences are whole steps, which a median deviation alone misjudges)."""
    d = np.concatenate([np.diff(seg) for seg in idle])
    d = d - np.median(d)
    step_d = np.abs(d)
    scale = max(1.4826 * float(np.median(step_d)), float(np.min(step_d[step_d > 0],
                                                                  initial=np.inf)))
    kept = d[step_d <= 6 * scale] if math.isfinite(scale) else d
    return float(np.sqrt(np.mean(np.square(kept)) / 2)), int(kept.size)


class AllanSpan(NamedTuple):
    """The spans tried (samples), the Allan deviation at each (A) and the index of the
    shortest that reaches the precision (``None``: none does)."""

    spans: npt.NDArray[np.int64]
    deviation: F64
    shortest: int | None


def allan_span(idle: Sequence[F64], precision_a: float) -> AllanSpan:
    """The shortest baseline span whose standard error stays within ``precision_a`` (A):
    the Allan deviation of the idle spans' mean (:func:`allan_deviation`) over spans of
    :data:`MIN_BASELINE_SAMPLES` samples to a quarter of the shortest idle span,
    :data:`SPANS_PER_OCTAVE` per doubling; the shortest from which on the deviation stays
    within ``precision_a`` up to twice that span (so a periodic load's lucky null, a span of
    a whole number of its periods, does not count).

    The deviation is computed from the shortest span up only as far as that decision needs
    (twice the span found): each span costs a pass over every idle sample, and a steady
    idle is decided on its first few spans. The spans beyond are NaN in ``deviation``.
    """
    shortest = min(s.size for s in idle)
    octaves = math.log2(shortest / 4 / MIN_BASELINE_SAMPLES)
    steps_up = np.arange(0, max(0.0, octaves) * SPANS_PER_OCTAVE + 1) / SPANS_PER_OCTAVE
    spans = np.unique(np.round(MIN_BASELINE_SAMPLES * 2.0 ** steps_up)).astype(np.int64)
    deviation = np.full(len(spans), np.nan)
    sums_of = _cumulative(idle)
    done = 0
    for k in range(len(spans)):
        upto = int(np.searchsorted(spans, 2 * spans[k] * (1 + 1e-9), side="right"))
        if upto > done:
            deviation[done:upto] = _allan_deviation(sums_of, spans[done:upto])
            done = upto
        if (deviation[k:upto] <= precision_a).all():
            return AllanSpan(spans, deviation, k)
    return AllanSpan(spans, deviation, None)


def settle_guard(settles: Sequence[tuple[F64, F64]], noise_a: float, period_s: float
                 ) -> tuple[float, float, float, int]:
    """The guard: :data:`GUARD_MARGIN` times the median time (s), after the windows'
    falling edges, until the current stays within :data:`SETTLE_SIGMAS` noise sigmas
    (``noise_a``, A) of idle for :data:`SETTLED_FOR_S`; each of ``settles`` is the current
    after one falling edge and the idle line under it (A). Returns the guard (s), its
    standard uncertainty (s), the median settling time (s) and how many edges settled.

    Raises
    ------
    CalibrationError
        The current settles after no more than half of the edges.
    """
    run = max(10, round(SETTLED_FOR_S / period_s))
    found = [_settle_samples(after, level, SETTLE_SIGMAS * noise_a, run)
             for after, level in settles]
    settled = np.array([f for f in found if f is not None], dtype=np.float64) * period_s
    if len(settled) * 2 <= len(found):
        raise CalibrationError(
            f"baseline: the current does not settle within {SETTLE_SIGMAS:g} noise sigmas "
            f"({SETTLE_SIGMAS * noise_a:.3g} A) of idle after {len(found) - len(settled)} of "
            f"{len(found)} windows' falling edges. Nothing stored")
    median_settle = float(np.median(settled))
    guard = max(GUARD_MARGIN * median_settle, 2 * period_s)
    u_guard = GUARD_MARGIN * math.hypot(
        float(np.std(settled, ddof=1)) / math.sqrt(len(settled)) if len(settled) > 1 else 0.0,
        period_s / math.sqrt(12))
    return guard, u_guard, median_settle, len(settled)


def idle_stability(records: Sequence[tuple[F64, npt.NDArray[np.bool_]]], period_s: float,
                   precision: Precision = DEFAULT_PRECISION) -> dict[Quantity, Measured]:
    """Idle stability from records of a trigger window (the board's current above idle)
    followed by an idle span: each record's current (A) and trigger level, sampled every
    ``period_s`` (s).

    The idle span is every sample from :data:`SETTLE_SEARCH_S` after the window's falling
    edge on; the trigger must stay low there. Of it, four estimators: the drift
    (:func:`idle_drift`), the white noise (:func:`idle_noise`), the shortest baseline span
    whose standard error stays within ``precision`` (:func:`allan_span`), and the guard
    from the time the current takes to settle after the falling edges
    (:func:`settle_guard`).

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
    idle, steps, settles = [], [], []
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
        # The idle's line, carried back over the settling span.
        slope, level = idle_line(seg, period_s)
        idle.append(seg)
        steps.append(float(np.median(current[rises[0]:falls[0]])) - level)
        settles.append((after[:skip], level + slope * np.arange(-skip, 0) * period_s))
    noise, n_noise = idle_noise(idle)
    step = float(np.median(steps))
    if not step > SETTLE_SIGMAS * noise:
        raise CalibrationError(f"baseline: the current rises {step:.3g} A in the mark window, "
                               f"within the noise ({noise:.3g} A rms): is the board connected? "
                               "Nothing stored")
    precision_a = precision.of(step)
    spans, deviation, k = allan_span(idle, precision_a)
    drift, u_drift = idle_drift(idle, period_s, noise)
    if k is None:
        raise CalibrationError(
            f"baseline: no idle span up to {spans[-1] * period_s:.3g} s gives the baseline to "
            f"{precision_a:.3g} A ({precision}): its standard error is at least "
            f"{np.nanmin(deviation):.3g} A (drift {drift:.3g} A/s, noise {noise:.3g} A rms); "
            "the idle current is not steady enough. Nothing stored")
    guard, u_guard, median_settle, n_settled = settle_guard(settles, noise, period_s)
    span_s = float(spans[k] * period_s)
    u_span = span_s * (1 - 2 ** (-1 / SPANS_PER_OCTAVE)) / math.sqrt(12)
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
            value=guard, u=u_guard, method="baseline", n=n_settled,
            reference=f"{GUARD_MARGIN:g} x {format_si(median_settle, 's')} to settle within "
                      f"{SETTLE_SIGMAS:g} sigma after a falling edge"),
        "idle_drift_a_per_s": Measured(value=drift, u=u_drift, method="baseline",
                                       n=len(idle), reference="medians of each idle's thirds"),
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
    found = [arrays(r) for r in taken]
    return idle_stability([(c, h) for c, _, h, _ in found], found[0][3], precision)


def fixture_lines(values: Mapping[Quantity, Measured], fixture: Fixture) -> str:
    """The fixture lines the baseline's advice gives: ``[windows] guard_s`` and
    ``baseline_s``, rounded up to two digits, and ``[measure] pre_s`` when it must grow to
    hold both."""
    guard, span = advised_windows(values)
    lines = ["[windows]", f"guard_s = {guard:.2g}", f"baseline_s = {span:.2g}"]
    if fixture.measure.pre_s < guard + span:
        pre = _two_digits_up(1.2 * (guard + span))
        lines += ["[measure]", (f"pre_s = {pre:.2g}    # it must hold guard_s + baseline_s "
                                f"(was {fixture.measure.pre_s:g})")]
    return "\n".join(lines)


def advised_windows(values: Mapping[Quantity, Measured]) -> tuple[float, float]:
    """The ``[windows] guard_s`` and ``baseline_s`` (s) the baseline's advice gives: its
    measured values rounded up to two significant digits (what :func:`fixture_lines`
    prints); a fixture's own may be longer, never shorter."""
    guard, span = (_two_digits_up(values[q].value) for q in ("guard_s", "baseline_s"))
    return guard, span


def _two_digits_up(x: float) -> float:
    """``x`` rounded up to two significant digits."""
    scale = 10.0 ** (math.floor(math.log10(x)) - 1)
    return math.ceil(x / scale - 1e-9) * scale
