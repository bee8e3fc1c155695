"""The records every routine takes: ``mark`` windows of a known length (or the window of
any firmware request), recorded as the pipeline records its windows
(:func:`~energyrig.energy.record.record_window`), and what the routines read of whole records
(the arrays, the current range, the steady current). SI units."""
from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from energyrig.calibration.routines.bench import CalibrationBench
from energyrig.energy.record import WindowRequest, record_window
from energyrig.errors import CalibrationError, NoTriggerWindow, RecordTooShort
from energyrig.units import format_si

if TYPE_CHECKING:
    from energyrig.instruments.base import RecordedCapture

log = logging.getLogger(__name__)

F64 = npt.NDArray[np.float64]

#: A current that follows the trigger by more than this many standard errors (and
#: :data:`FOLLOW_MIN_A`) shows a board still connected.
FOLLOW_SIGMAS = 8.0
FOLLOW_MIN_A = 1e-6
#: Times one mark (or empty) window that outlasted its record is taken again, and how much
#: longer its record is each time.
RECORD_RETRIES = 3
RECORD_GROWTH = 4.0


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
    return [record_request(bench, line, mark_s, idle_after_s=idle_after_s, mark=True)
            for _ in range(count)]


def record_request(bench: CalibrationBench, line: str, window_s: float, wait_s: float = 5.0,
                   *, idle_after_s: float | None = None, mark: bool = False) -> RecordedCapture:
    """One record of the trigger window the firmware request ``line`` makes (of about
    ``window_s``) after the idle span the baseline needs, and the fixture's ``post_s`` after
    it (or ``idle_after_s`` of the firmware's idle); ``wait_s``: how long after the window's
    margin the instrument may take to deliver it. Each is recorded as the pipeline records
    its windows (:func:`~energyrig.energy.record.record_window`).

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
            return record_window(bench, _request(bench, line, window_s, wait_s,
                                                 idle_after_s)).record
        except RecordTooShort as exc:
            window_s = max(window_s, min(RECORD_GROWTH * window_s, longest or math.inf))
            log.warning("%s; taking the record again, for a window of %s", exc,
                        format_si(window_s, "s"))
        except NoTriggerWindow as exc:
            if not mark:
                raise
            log.warning("%s; a mark window lasts many samples: taking the record again", exc)
    return record_window(bench, _request(bench, line, window_s, wait_s, idle_after_s)).record


def _request(bench: CalibrationBench, line: str, window_s: float, wait_s: float,
             idle_after_s: float | None) -> WindowRequest:
    """The window ``line`` makes: the firmware idles the baseline span first (and
    ``idle_after_s`` after, s)."""
    fx = bench.fixture
    m, w = fx.measure, fx.windows
    post_s = m.post_s if idle_after_s is None else idle_after_s

    def run() -> None:
        bench.dut.idle(w.guard_s + w.baseline_s)
        bench.dut.request(line, fx.dut.timeout_s + 10 * window_s)
        if idle_after_s is not None:
            bench.dut.idle(idle_after_s)

    return WindowRequest(pre_s=m.pre_s, window_s=window_s, post_s=post_s, run=run,
                         collect_timeout_s=post_s + wait_s + 10 * window_s)


def arrays(record: RecordedCapture) -> tuple[F64, F64, npt.NDArray[np.bool_], float]:
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


def range_of(records: Sequence[RecordedCapture]) -> int | None:
    """The current range most of the records' samples were measured in (``None``: the
    instrument has one range)."""
    chunks = [c for r in records for c in r.chunk_list]
    if not chunks or any(c.current_range is None for c in chunks):
        return None
    counts = np.bincount(np.concatenate([c.current_range for c in chunks  # type: ignore[misc]
                                         ]).astype(np.intp))
    return int(np.argmax(counts))


def steady(records: list[RecordedCapture], what: str) -> tuple[float, float, float, int]:
    """Mean current over every sample, its standard uncertainty, the rms residual and the
    sample count; refused when the current follows the trigger (the board is still on the
    input)."""
    means, residuals, counts = [], [], []
    follow = []
    for record in records:
        current, _, high, _ = arrays(record)
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
