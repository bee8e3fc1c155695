"""The measurement of one point: the one pipeline ``rig run`` and ``rig sweep`` share.

::

    with open_bench(load_fixture("fixtures/sim.toml")) as bench:
        result = measure_point(bench, Point(op="sha256", board=bench.board, payload_bytes=64),
                               until=reps_done(10))
        print(result.figures()["net_energy_per_op_j"])

Stages of a point (:func:`measure_point`):

1. **prepare** (:meth:`Measurement.prepare`): ``prep`` the op on the firmware outside any
   window (keys, buffers, its known-answer self-test), then settle the batch size N — given
   (one unrecorded batch warms up and times the window), or ``auto`` from probe runs timed by
   the firmware so a window holds at least ``measure.min_window_samples`` samples and its
   edge error bound stays under ``measure.max_edge_error`` of its energy, within what the
   instrument can record (:class:`~energyrig.instruments.base.Limits`), checked on a
   recorded window (grown as in 3 when short) that is the point's first (or a group of
   them, once the bench knows its edges: :attr:`PipelineBench.edge_samples`); no record
   starts before the probes ended (:meth:`PipelineBench.records_after`).
2. per window (:meth:`Measurement.window`): **arm** the instrument → **run**: the firmware
   runs the op once outside the window (warm-up), idles for the baseline span
   (``settle_ms``, so the idle power just before the rising edge holds none of the warm-up)
   and runs the batch inside one trigger window → **collect** the record → **correct** it
   (:data:`Correction`: the bench's calibration,
   :class:`energyrig.calibration.correction.Correction`, or the identity) → **find** its
   window, integrate it and take its uncertainty budget (:mod:`energyrig.energy`: the
   window's record through :func:`~energyrig.energy.record.record_window`, its energy by
   :func:`~energyrig.energy.windows.find_windows`, its figures by
   :func:`~energyrig.energy.figures.window_figures`) → **check**
   it against its limits and the firmware's own time → **annotate** (the simulated bench
   adds the truth) → a :class:`~energyrig.domain.Window` row.
3. **batch size changes**, owned here once: with ``auto``, a window that comes out short (the
   op ran faster than probed; not one whose stream failed its integrity checks, short of the
   samples it lost) grows N; a batch that outlasted a recorder's record
   (:class:`~energyrig.errors.RecordTooShort`: a loaded host, an op whose time varies) is
   timed anew from the firmware's reply, N shrinks if the record cannot hold it, and the
   window is measured again. When N changes, the point's windows start over. Both count
   against :data:`MAX_RESTARTS` per point.

:func:`measure_point` takes windows until its ``until`` rule says enough (``rig run``: R
windows; ``rig sweep``: the plan's adaptive CI rule) or ``stop`` is set (Ctrl-C between
windows). A window whose stream failed its own integrity checks (corrupt samples, a loss the
counter could not count, a baseline at the instrument's floor: flags a real instrument
raises; or a window whose length cannot be its batch's, ``window_cut``:
:func:`~energyrig.domain.integrity_problems`) is kept, flagged, but left out of the
point's estimate (:attr:`PointResult.estimate`), and the rule measures a replacement; a
point where more than :data:`~energyrig.domain.MAX_FLAGGED_FRACTION` of the windows were
left out ends ``failed`` (:func:`integrity_failure`). Failures of the DUT or the instrument
end the point as ``failed`` with the reason,
keeping the windows measured before; they do not raise. Presentation stays with the caller,
behind ``on_progress``. SI units throughout.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from energyrig.calibration.routines.bench import CalibrationBench
from energyrig.capture import Chunk
from energyrig.domain import (MAX_FLAGGED_FRACTION, Point, Window, WindowSettings, estimate,
                              excluded, finite_or_none, integrity_problems, window_problems,
                              windows_frame)
from energyrig.energy.budget import K, Supply, combined, energy_budget, time_budget
from energyrig.energy.cut import cut
from energyrig.energy.figures import window_figures
from energyrig.energy.record import WindowRequest, record_window
from energyrig.energy.windows import find_windows, longest, stream_flags
from energyrig.errors import (CaptureError, DutError, InstrumentError, NoTriggerWindow,
                              RecordTooShort)
from energyrig.flags import DROPPED_SAMPLES, STREAM_LOSS, WINDOW_CUT, WINDOW_LOST
from energyrig.results.stats import summarise_per_op
from energyrig.rig import groups
from energyrig.rig.dut import DutRefused, RunReply, whole_ms
from energyrig.rig.flags import DURATION_MISMATCH, EDGE_ERROR, EXTRA_WINDOWS
from energyrig.units import format_si

if TYPE_CHECKING:
    from energyrig.instruments.base import Limits, RecordedCapture
    from energyrig.rig.dut import Dut, OpInfo

log = logging.getLogger(__name__)

#: Errors that fail one point (recorded with the reason) rather than the caller.
POINT_ERRORS: tuple[type[Exception], ...] = (DutError, InstrumentError, CaptureError)
#: Probe runs grow until one batch lasts this long, s (long enough to time it well).
PROBE_MIN_S = 2e-3
#: Extra samples over the minimum ``auto`` aims for (timing jitter of the batch).
AUTO_MARGIN = 1.5
#: A window's edge error bound in samples of its mean power, before any window was measured
#: on the bench, and the least ``auto`` assumes: one sample at each edge (a step; an op
#: heavier at its edges needs more, and the bench learns it: :attr:`PipelineBench.edge_samples`).
EDGE_SAMPLES = 2.0
#: Times per point a window may be measured again: grown (short) or re-armed (outlasted).
MAX_RESTARTS = 3
#: Seconds to wait for a record after the DUT replied, beyond post_s and stream latency.
COLLECT_SLACK_S = 5.0
#: Longest a group of windows (``run windows=R``) may last, first rise to last fall, s: a
#: group is one request, and a stop request waits for it.
MAX_GROUP_S = 10.0

#: Which windows' samples a point keeps (:attr:`PointResult.captures`): none, the flagged
#: ones, or all.
KeepCaptures = Literal["none", "flagged", "all"]
KEEP_CAPTURES: tuple[KeepCaptures, ...] = ("none", "flagged", "all")

#: The correction stage: a record in, the corrected record out (offset, gain, skew, ...).
Correction = Callable[["RecordedCapture"], "RecordedCapture"]


def no_correction(record: RecordedCapture) -> RecordedCapture:
    """The correction stage with no calibration: the record as the instrument gave it."""
    return record


class PipelineBench(CalibrationBench, Protocol):
    """What the pipeline needs of an open bench (:class:`energyrig.rig.bench.Bench`): what a
    calibration routine needs (fixture, hello, DUT, instrument), and more."""

    correction: Correction
    #: The calibration applied to its records (id and values), ``None`` without one.
    calibration: Mapping[str, Any] | None
    #: The edge error bound of the bench's last windows, in samples of a window's mean
    #: power (``None`` before any): what ``auto`` sizes the next point's windows by, so its
    #: sizing windows are not short by their edges (the edge activity is the board's and
    #: the trigger's, much the same from op to op).
    edge_samples: float | None

    @property
    def board(self) -> str: ...

    @property
    def dut(self) -> Dut: ...

    @property
    def limits(self) -> Limits: ...

    def ops(self) -> Sequence[OpInfo]: ...

    def annotate(self, row: Window, sent_ns: int, replied_ns: int) -> Window:
        """Add what the bench knows of the window beyond the record (the truth)."""
        ...

    def annotate_group(self, rows: Sequence[Window], sent_ns: int,
                       replied_ns: int) -> list[Window]:
        """:meth:`annotate` for the windows of one group (one request), in time order."""
        ...

    def point_flags(self) -> list[str]:
        """Flags of the point as a whole, asked once its windows are measured."""
        ...

    def after_reply(self) -> None:
        """Called once each recorded request replied, before its record is collected: what
        the bench asks of the DUT for :meth:`point_flags` it asks here, where the wait for
        the instrument's stream hides the round trip."""
        ...

    def records_after(self, t_ns: int) -> None:
        """Let no record start before host time ``t_ns`` (CLOCK_MONOTONIC, ns): the
        windows of the unrecorded runs that ended before it are not the next record's,
        however late the instrument's stream brings them."""
        ...


class PreparedPoint(Protocol):
    """A point prepared on a bench, measured one window at a time (:class:`Measurement`)."""

    @property
    def point(self) -> Point: ...

    @property
    def batch_n(self) -> int:
        """Ops per window. It may change after a window (grown for a short window, shrunk
        for an outlasted record): windows measured before belong to the old batch and are
        dropped."""
        ...

    @property
    def prep(self) -> Mapping[str, Any]: ...

    def first_windows(self) -> Sequence[tuple[Window, tuple[Chunk, ...]]]:
        """Windows measured in settling the batch size, of :attr:`batch_n`, with the samples
        kept around each: the point's first windows (asked once, before any other; a
        :class:`GroupedPoint` is asked for a count of them)."""
        ...

    @property
    def kept(self) -> tuple[Chunk, ...]:
        """The samples around the last window (:func:`energyrig.energy.cut.cut`), the
        trigger on D0."""
        ...

    def window(self) -> Window: ...


@runtime_checkable
class GroupedPoint(Protocol):
    """A prepared point that measures several windows per request and record
    (:meth:`Measurement.windows`)."""

    @property
    def max_group(self) -> int:
        """Most windows one request may open now."""
        ...

    def windows(self, count: int) -> list[tuple[Window, tuple[Chunk, ...]]]: ...

    def first_windows(self, count: int = 1) -> Sequence[tuple[Window, tuple[Chunk, ...]]]:
        """:meth:`PreparedPoint.first_windows`, ``count`` of them in one request."""
        ...


class PointBench(Protocol):
    """Anything :func:`measure_point` can measure on: a bench that prepares points (the
    real :class:`~energyrig.rig.bench.Bench`, or a scripted one in tests)."""

    @property
    def board(self) -> str: ...

    @property
    def hello(self) -> Mapping[str, Any]: ...

    def ops(self) -> Sequence[OpInfo]: ...

    def prepare(self, point: Point, *, batch_n: int | None = None, seed: int | None = None,
                min_samples: int | None = None) -> PreparedPoint: ...

    def point_flags(self) -> list[str]: ...


# -- one point, window by window ------------------------------------------------------------

@dataclass
class Measurement:
    """A point prepared on a bench (:meth:`prepare`), measured window by window.

    Attributes
    ----------
    batch_n:
        Ops per window. With ``auto`` :meth:`window` may grow it.
    per_op_s:
        The latest firmware time per op, s (sizes the next window's arm and timeout).
    prep:
        The firmware's ``prep`` reply.
    """

    bench: PipelineBench
    point: Point
    batch_n: int
    per_op_s: float
    prep: dict[str, Any]
    auto: bool
    min_samples: int | None = None
    restarts: int = 0
    kept: tuple[Chunk, ...] = ()

    @classmethod
    def prepare(cls, bench: PipelineBench, point: Point, *, batch_n: int | None = None,
                seed: int | None = None, min_samples: int | None = None) -> Measurement:
        """Prep the op on the firmware and settle the batch size.

        ``batch_n`` ``None`` picks it (``auto``); ``min_samples`` overrides the fixture's
        ``measure.min_window_samples`` for ``auto``; ``seed`` seeds the firmware's key and
        payload generator (its default when ``None``).

        Raises
        ------
        DutError, InstrumentError
            Self-test failed (:class:`~energyrig.rig.dut.DutRefused` with ``selftest``),
            the DUT did not answer, the instrument failed.
        """
        fx = bench.fixture
        m = fx.measure
        if point.family is None:
            family = {o.name: o.family for o in bench.ops()}.get(point.op)
            point = replace(point, family=family)
        prep = bench.dut.prep(point.op, key_bits=point.key_bits,
                              payload_bytes=point.payload_bytes, curve=point.curve, seed=seed,
                              backend=point.backend, timeout_s=m.probe_timeout_s)
        measurement = cls(bench, point, 1, math.nan, prep, auto=batch_n is None,
                          min_samples=min_samples)
        if batch_n is None:
            measurement._auto_batch()
        else:  # one unrecorded batch: warms up, and times the window to arm for
            measurement.batch_n = batch_n
            reply = bench.dut.run(batch_n, fx.dut.timeout_s + m.probe_timeout_s * (batch_n + 1))
            measurement.per_op_s = reply.elapsed_s / batch_n
        # The probes' windows are not the point's: the next record starts after them.
        bench.records_after(time.monotonic_ns())
        return measurement

    def first_windows(self, count: int = 1) -> tuple[tuple[Window, tuple[Chunk, ...]], ...]:
        """With ``auto``, settle the batch size on ``count`` recorded windows (one request,
        :meth:`windows`), not on an unrecorded batch: only a record shows whether a window's
        edges need more samples (its edge error bound) than the probes' timing gives. If
        they hold enough they are returned, the point's first windows; if one is short the
        batch grows (:attr:`batch_n`) and none is returned. Without ``auto``: none."""
        if not self.auto:
            return ()
        if self.bench.edge_samples is None:
            count = 1  # the bench's edges are not known yet: a short window costs one
        sized = self.batch_n
        measured = self.windows(count, remeasure=False)
        return tuple(measured) if self.batch_n == sized else ()

    # -- batch size --------------------------------------------------------------------------
    def _target_samples(self) -> float:
        """Samples a window should hold: ``min_samples`` (default ``min_window_samples``),
        and ``edge_samples / max_edge_error`` (the edge error bound, in samples of the
        window's mean power, of the bench's last windows: :attr:`PipelineBench.edge_samples`,
        :data:`EDGE_SAMPLES` before any)."""
        m = self.bench.fixture.measure
        edges = self.bench.edge_samples or EDGE_SAMPLES
        return float(max(self.min_samples or m.min_window_samples, edges / m.max_edge_error))

    def _learn_edges(self, rows: Sequence[Window]) -> None:
        """Keep the largest edge error bound of ``rows`` (in samples of each window's mean
        power, at least :data:`EDGE_SAMPLES`) as the bench's :attr:`~PipelineBench.edge_samples`;
        windows that failed the stream's integrity checks or hold no energy say nothing."""
        seen = [r.edge_error_j * r.samples / abs(r.energy_j) for r in rows
                if not integrity_problems(r.flags) and r.samples > 0
                and math.isfinite(r.energy_j) and r.energy_j != 0.0]
        if seen:
            self.bench.edge_samples = max(EDGE_SAMPLES, *seen)

    def _short_by(self, row: Window) -> float:
        """How many times more samples the window needed (<= 1: enough)."""
        m = self.bench.fixture.measure
        by_samples = self._target_samples() / max(1, row.samples)
        by_edges = row.edge_error_j / (m.max_edge_error * abs(row.energy_j) or math.inf)
        return max(by_samples, by_edges)

    def _batch_cap(self, per_op_s: float) -> int:
        """Largest batch a window may hold: ``measure.max_batch``, and for a recorder whose
        memory bounds the record (:meth:`Limits.max_window_s`) the batch that fits in it."""
        m = self.bench.fixture.measure
        window_s = self.bench.limits.max_window_s(m.pre_s, m.post_s)
        if window_s is None:
            return m.max_batch
        fits = math.floor(window_s / max(per_op_s, 1e-12))
        return max(1, min(m.max_batch, fits))

    def _auto_batch(self) -> None:
        """Batch size from probe runs.

        Probe batches grow until one lasts :data:`PROBE_MIN_S` (or N is reached); then N is
        chosen so a window holds the target samples with :data:`AUTO_MARGIN`;
        :meth:`first_windows` checks it on a recorded window.
        """
        fx = self.bench.fixture
        m, dut = fx.measure, self.bench.dut
        target_s = AUTO_MARGIN * self._target_samples() * self.bench.limits.period_s
        n = 1
        timeout = fx.dut.timeout_s + 2 * m.probe_timeout_s  # the warm-up run and one op
        while True:
            reply = dut.run(n, timeout)
            per_op = max(reply.elapsed_s, 1e-9) / n
            if reply.elapsed_s >= min(PROBE_MIN_S, target_s) or n >= m.max_batch:
                break
            n = min(m.max_batch, max(n + 1, math.ceil(PROBE_MIN_S / per_op)))
            timeout = fx.dut.timeout_s + 10 * per_op * (n + 1)
        batch = min(self._batch_cap(per_op), max(1, math.ceil(target_s / per_op)))
        log.info("auto batch: %.3g s per op -> N = %d (%.0f samples per window)", per_op, batch,
                 batch * per_op / self.bench.limits.period_s)
        self.batch_n, self.per_op_s = batch, per_op

    # -- one window ------------------------------------------------------------------------
    def window(self, *, remeasure: bool = True) -> Window:
        """Measure one window.

        With ``auto``, a short window grows :attr:`batch_n` and is measured again (with
        ``remeasure`` false it is returned, :attr:`batch_n` grown); a batch that
        outlasted the record is measured again with the firmware's new time (and a smaller
        :attr:`batch_n` when the record cannot hold it). At most :data:`MAX_RESTARTS` times
        per point; after that a short window is returned flagged ``edge_error_over_bound``
        and an outlasted record raises. A window whose stream failed its integrity checks
        is returned with its flags (:func:`measure_point` leaves it out of the estimate).
        """
        while True:
            try:
                row, elapsed_s = self._measure_window()
            except RecordTooShort:
                if self.restarts >= MAX_RESTARTS:
                    raise
                self.restarts += 1
                continue  # _measure_window re-timed the batch
            self.per_op_s = elapsed_s / self.batch_n
            self._learn_edges([row])
            short = self._short_by(row)
            # A window whose stream failed its integrity checks is short of samples it lost,
            # not of the op's length: left out and replaced, never grown for (grown, the
            # batch followed the host's load, not the op).
            if not (self.auto and short > 1.0 and self.restarts < MAX_RESTARTS) \
                    or integrity_problems(row.flags):
                return row
            grown = min(self._batch_cap(self.per_op_s),
                        math.ceil(self.batch_n * short * AUTO_MARGIN))
            if grown <= self.batch_n:
                return row  # the instrument's memory holds no longer window (a scope)
            self.restarts += 1
            log.info("%s: window of %d samples is short; batch %d -> %d", self.point.label,
                     row.samples, self.batch_n, grown)
            self.batch_n = grown
            if not remeasure:
                return row

    def _retime(self, elapsed_s: float) -> None:
        """The batch took ``elapsed_s`` (the firmware's time), longer than its record held:
        arm for that from now on, with a batch the record can hold."""
        self.per_op_s = elapsed_s / self.batch_n
        fits = self._batch_cap(self.per_op_s)
        log.warning("%s: the batch of %d took %.3g s, longer than its record; measuring the "
                    "window again%s", self.point.label, self.batch_n, elapsed_s,
                    f" with a batch of {fits}" if fits < self.batch_n else "")
        self.batch_n = min(self.batch_n, fits)

    def _measure_window(self) -> tuple[Window, float]:
        """arm → run (warm-up, idle, window) → collect → correct → find → check → annotate:
        the row and the firmware's time of the batch, s."""
        bench = self.bench
        fx = bench.fixture
        m, w = fx.measure, fx.windows
        expected_s = self.per_op_s * self.batch_n
        replies: list[RunReply] = []

        def run() -> None:
            # The firmware runs the op once (warm-up), idles the baseline span, then the batch.
            replies.append(bench.dut.run(  # ops vary (key generation)
                self.batch_n, fx.dut.timeout_s + 10 * (expected_s + self.per_op_s),
                settle_s=w.guard_s + w.baseline_s))

        try:
            recording = record_window(bench, WindowRequest(
                pre_s=m.pre_s, window_s=expected_s, post_s=m.post_s, run=run,
                collect_timeout_s=m.post_s + bench.limits.stream_lag_s + COLLECT_SLACK_S,
                after_run=bench.after_reply))
            row = self._find(bench.correction(recording.record))
        except RecordTooShort:
            if replies:
                self._retime(replies[0].elapsed_s)
            raise
        except InstrumentError as exc:  # NoTriggerWindow, or a record without a window
            shorter = self._shorter_than_a_sample(replies[0].elapsed_s) if replies else None
            raise shorter or exc
        reply = replies[0]
        row = replace(row, cycles=reply.cycles,
                      flags=(*row.flags, *self._check(row, reply.elapsed_s)))
        row = bench.annotate(row, recording.sent_ns, recording.replied_ns)
        return replace(row, flags=tuple(sorted(set(row.flags)))), reply.elapsed_s

    def _shorter_than_a_sample(self, elapsed_s: float) -> NoTriggerWindow | None:
        """The error of a window no sample caught because the batch, timed ``elapsed_s`` by
        the firmware, lasted less than one sample period, saying which batch would span the
        samples a window needs; ``None`` when it lasted longer (the trigger is not wired)."""
        period_s = self.bench.limits.period_s
        if elapsed_s >= period_s:
            return None
        per_op = max(elapsed_s, 1e-9) / self.batch_n
        target = self._target_samples()
        batch = min(self._batch_cap(per_op),
                    math.ceil(target * period_s / per_op * (1 - 1e-12)))  # float noise
        return NoTriggerWindow(
            f"{self.point.label}: the trigger window was shorter than one sample: the batch "
            f"of {self.batch_n} ops took {format_si(elapsed_s, 's')} by the firmware's clock, "
            f"the instrument samples every {format_si(period_s, 's')}, so no sample saw the "
            f"trigger high; a batch of {batch} spans the {target:.0f} samples a window needs "
            f"(--batch {batch}, or --batch auto to pick it)")

    def _find(self, record: RecordedCapture) -> Window:
        """The record's trigger window (the longest, if it holds several), with the
        record's own flags, the corrections applied to it (the window overhead taken out)
        and its uncertainty (:func:`~energyrig.energy.figures.window_figures`)."""
        settings = self._settings(record)
        found = list(find_windows(record, settings))
        if not found:
            raise _no_window(record)
        flags = list(record.flags)
        if len(found) > 1:
            flags.append(EXTRA_WINDOWS)
        if record.lost:  # also in the baseline span: the driver has logged it
            flags.append(DROPPED_SAMPLES)
        window = longest(found)
        self.kept = self._cut(record, window, settings)
        return self._figures(record, window, flags, settings, self.kept)

    def _settings(self, record: RecordedCapture) -> WindowSettings:
        w = self.bench.fixture.windows
        return WindowSettings(trigger_bit=record.trigger_bit, min_pulse_s=w.min_pulse_s,
                              guard_s=w.guard_s, baseline_s=w.baseline_s,
                              min_samples=w.min_samples)

    @staticmethod
    def _cut(record: RecordedCapture, window: Window,
             settings: WindowSettings) -> tuple[Chunk, ...]:
        """The samples around ``window`` a capture keeps, its trigger on D0."""
        return tuple(replace(c, logic=None if c.logic is None
                             else (c.logic >> record.trigger_bit) & 1)
                     for c in cut(record.chunk_list, window, settings))

    def _figures(self, record: RecordedCapture, window: Window, flags: Sequence[str],
                 settings: WindowSettings, kept: Sequence[Chunk]) -> Window:
        """``window`` of ``record`` with ``flags``, the stream's flags of it, the record's
        corrections and its uncertainty, read from ``kept`` (:meth:`_cut`: the window, its
        guard and baseline span and a margin, every sample those figures read): a group's
        window is not read over its whole record, so processing a group of R windows is
        linear in R, not quadratic."""
        flags = [*flags, *stream_flags(kept, window, settings)]
        fx = self.bench.fixture
        return window_figures(
            kept, replace(window, flags=(*window.flags, *flags),
                                       corrections=record.corrections),
            settings, resolution=self.bench.limits.resolution,
            calibration=self.bench.calibration,
            supply=Supply.stated(fx.calibration.supply_tolerance, fx.path.name))

    # -- a group of windows ------------------------------------------------------------------
    def _settle_s(self) -> float:
        """The idle before each window, as the firmware idles it (whole ms), s."""
        w = self.bench.fixture.windows
        return whole_ms(w.guard_s + w.baseline_s) / 1000

    @property
    def max_group(self) -> int:
        """Most windows one request may open now: the fixture's ``measure.max_group``, the
        windows the instrument's record holds (``Limits.max_windows``: one for a recorder),
        and a group lasting at most :data:`MAX_GROUP_S`."""
        step_s = self.per_op_s * self.batch_n + self._settle_s()
        fits = math.floor(MAX_GROUP_S / step_s) if math.isfinite(step_s) else 1
        return max(1, min(self.bench.fixture.measure.max_group,
                          self.bench.limits.max_windows, fits))

    def windows(self, count: int, *,
                remeasure: bool = True) -> list[tuple[Window, tuple[Chunk, ...]]]:
        """Measure ``count`` windows (at most :attr:`max_group`) in one request and one
        record: each window with its own baseline (the settle idle before it), its own
        flags (those of the stretch of the record it answers for) and its own check
        against the firmware's time of it; a window the record lacks is a row flagged
        ``window_lost`` (left out of the estimate), not the group. With ``auto``, a short
        window grows :attr:`batch_n` and the group is measured again, as :meth:`window`
        (with ``remeasure`` false the group is returned, :attr:`batch_n` grown).
        Each row comes with the samples kept around it. ``count`` 1 is :meth:`window`."""
        if count <= 1:
            row = self.window(remeasure=remeasure)
            return [(row, self.kept)]
        while True:
            rows = self._measure_group(count)
            timed = [r.duration_s for r, _ in rows if not integrity_problems(r.flags)]
            if timed:
                self.per_op_s = float(sum(timed) / len(timed)) / self.batch_n
            self._learn_edges([r for r, _ in rows])
            short = max((self._short_by(r) for r, _ in rows
                         if not integrity_problems(r.flags)), default=0.0)
            if not (self.auto and short > 1.0 and self.restarts < MAX_RESTARTS):
                return rows
            grown = min(self._batch_cap(self.per_op_s),
                        math.ceil(self.batch_n * short * AUTO_MARGIN))
            if grown <= self.batch_n:
                return rows
            self.restarts += 1
            log.info("%s: a window of the group is short; batch %d -> %d", self.point.label,
                     self.batch_n, grown)
            self.batch_n = grown
            if not remeasure:
                return rows

    def _measure_group(self, count: int) -> list[tuple[Window, tuple[Chunk, ...]]]:
        """arm for ``count`` windows → run them in one request → collect one record →
        correct → cut it into its windows → check each → annotate."""
        bench = self.bench
        fx = bench.fixture
        m, w = fx.measure, fx.windows
        expected_s = self.per_op_s * self.batch_n
        settle_s = self._settle_s()
        replies: list[RunReply] = []

        def run() -> None:
            replies.extend(bench.dut.run_windows(
                self.batch_n, count, fx.dut.timeout_s + 10 * (count * expected_s + self.per_op_s),
                settle_s=w.guard_s + w.baseline_s))

        recording = record_window(bench, WindowRequest(
            pre_s=m.pre_s, window_s=count * expected_s + (count - 1) * settle_s,
            post_s=m.post_s, run=run, windows=count,
            collect_timeout_s=m.post_s + bench.limits.stream_lag_s + COLLECT_SLACK_S,
            after_run=bench.after_reply))
        record = bench.correction(recording.record)
        rows = self._cut_group(record, replies)
        found = [i for i, (row, _) in enumerate(rows) if WINDOW_LOST not in row.flags]
        annotated = bench.annotate_group([rows[i][0] for i in found], recording.sent_ns,
                                         recording.replied_ns)
        for i, row in zip(found, annotated, strict=True):
            rows[i] = (row, rows[i][1])
        return [(replace(row, flags=tuple(sorted(set(row.flags)))), kept) for row, kept in rows]

    def _cut_group(self, record: RecordedCapture,
                   replies: Sequence[RunReply]) -> list[tuple[Window, tuple[Chunk, ...]]]:
        """One row per window the firmware opened (``replies``), in order: the window found
        for it with the flags of its stretch of the record, or a ``window_lost`` row."""
        settings = self._settings(record)
        found = list(find_windows(record, settings))
        if not found:
            raise _no_window(record)
        elapsed = [r.elapsed_s for r in replies]
        idle_s = self._settle_s()
        rises = groups.offsets(elapsed, idle_s)
        owner = groups.assign([f.start_s for f in found], rises)
        mine: dict[int, list[Window]] = {}
        for j, window in zip(owner, found, strict=True):
            mine.setdefault(j, []).append(window)
        present = sorted(mine)
        chosen = [longest(mine[j]) for j in present]
        chunks = record.chunk_list
        where = dict(zip(present, groups.stretches(
            [(x.start_s, x.end_s) for x in chosen], chunks[0].start_index,
            chunks[-1].end_index, chunks[0].period_s), strict=True))
        losses = groups.loss_positions(chunks)
        # a stream_loss the record can place goes to the windows whose stretch meets it
        whole = [f for f in record.flags if not (f == STREAM_LOSS and record.loss_spans)]
        anchor_s = found[0].start_s - rises[owner[0]]
        rows: list[tuple[Window, tuple[Chunk, ...]]] = []
        for j, reply in enumerate(replies):
            if j not in mine:
                start_s = anchor_s + rises[j]
                log.warning("%s: window %d of a group of %d is not in the record",
                            self.point.label, j + 1, len(replies),
                            extra={"repeats": f"windows flagged {WINDOW_LOST}"})
                rows.append((Window(start_s=start_s, end_s=start_s + reply.elapsed_s,
                                    samples=0, energy_j=math.nan, baseline_w=math.nan,
                                    flags=(WINDOW_LOST,), cycles=reply.cycles), ()))
                continue
            window = longest(mine[j])
            first, end = where[j]
            flags = list(whole)
            if groups.meets(record.loss_spans, first, end):
                flags.append(STREAM_LOSS)
            if len(mine[j]) > 1:
                flags.append(EXTRA_WINDOWS)
            if ((losses >= first) & (losses < end)).any():
                flags.append(DROPPED_SAMPLES)
            kept = self._cut(record, window, settings)
            row = self._figures(record, window, flags, settings, kept)
            row = replace(row, cycles=reply.cycles, flags=(
                *row.flags, *self._check(row, reply.elapsed_s, idle_s)))
            rows.append((row, kept))
        return rows

    def _check(self, win: Window, elapsed_s: float, idle_s: float | None = None) -> list[str]:
        """Flags of the checks of a window against its limits and the firmware's time; in a
        group, ``idle_s`` is the idle between its windows, s (a window longer than its batch
        by more runs into another)."""
        m = self.bench.fixture.measure
        flags = []
        if win.edge_error_j > m.max_edge_error * abs(win.energy_j):
            flags.append(EDGE_ERROR)
        # A board toggles a GPIO in nanoseconds; the host DUT's wire send and scheduling add up
        # to a few hundred µs, so only a gross disagreement (a wrong window) is flagged.
        tolerance_s = 5 * self.bench.limits.period_s + m.duration_tolerance * elapsed_s
        if abs(win.duration_s - elapsed_s) > tolerance_s:
            log.warning("%s: window of %.6f s but the firmware timed %.6f s",
                        self.point.label, win.duration_s, elapsed_s,
                        extra={"repeats": f"windows flagged {DURATION_MISMATCH}"})
            flags.append(DURATION_MISMATCH)
            # samples of it are missing, or it holds another window too: not its batch
            if win.duration_s < elapsed_s or (
                    idle_s is not None and win.duration_s > elapsed_s + idle_s + tolerance_s):
                flags.append(WINDOW_CUT)
        return flags


def _no_window(record: RecordedCapture) -> InstrumentError:
    """The error of a record that holds no trigger window."""
    return InstrumentError(f"{record.source}: the record holds no complete trigger "
                           "window (is the trigger wired to the instrument?)")


def point_uncertainty(windows: Sequence[Window], batch_n: int,
                      calibration: Mapping[str, Any] | None) -> dict[str, Any]:
    """A point's expanded uncertainties (k = 2) of the net energy per op (J) and the time
    per op (s), ``None`` where unknown, and the net energy's budget
    (:meth:`PointResult.uncertainty`)."""
    energy = energy_budget(windows, batch_n)
    timing = time_budget(windows, batch_n, calibration)
    return {"net_energy_per_op_u_j": finite_or_none(K * combined(energy)) if energy else None,
            "time_per_op_u_s": finite_or_none(K * combined(timing)) if timing else None,
            "uncertainty_budget": [c.as_dict("j") for c in energy]}


# -- the point ----------------------------------------------------------------------------

PointStatus = Literal["ok", "failed", "interrupted"]


@dataclass(frozen=True)
class PointResult:
    """One measured point: its windows and how it went.

    Attributes
    ----------
    point:
        The factors (``family`` from the catalogue once prepared).
    status, reason:
        ``"ok"``; ``"failed"`` with the reason (self-test failed, DUT timeout, ...);
        ``"interrupted"`` by a stop request (nothing to store).
    batch_n:
        Operations per window.
    windows:
        The windows measured (also those before a failure, and those left out of the
        estimate); ``cycles`` is the firmware's count for the batch, ``true_*`` the
        emulator's truth on the simulated bench.
    flags:
        Union of the windows' flags and of point-level ones (``trigger_drops``).
    prep:
        The firmware's ``prep`` reply (empty if prep failed).
    cycle_hz:
        Frequency of the firmware's cycle counter, Hz.
    calibration:
        The bench's calibration record (``Bench.calibration``), for the time budget's window
        overhead.
    captures:
        The samples kept of some windows (``keep`` of :func:`measure_point`): window index
        → the chunks around it (:func:`energyrig.energy.cut.cut`, the trigger on D0),
        as corrected for the energy math.
    """

    point: Point
    status: PointStatus
    reason: str
    batch_n: int
    windows: tuple[Window, ...] = ()
    flags: tuple[str, ...] = ()
    prep: Mapping[str, Any] = field(default_factory=dict)
    cycle_hz: int = 0
    calibration: Mapping[str, Any] | None = None
    captures: Mapping[int, tuple[Chunk, ...]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def estimate(self) -> tuple[Window, ...]:
        """The windows the point's figures rest on: those that passed the stream's integrity
        checks (:func:`~energyrig.domain.estimate`)."""
        return estimate(self.windows)

    @property
    def excluded(self) -> tuple[int, str]:
        """How many windows were left out of the estimate, and why
        (:func:`~energyrig.domain.excluded`: each integrity flag's count)."""
        return excluded(w.flags for w in self.windows)

    def uncertainty(self) -> dict[str, Any]:
        """The expanded uncertainties (k = 2) of the net energy per op (J) and the time per op
        (s) of the :attr:`estimate`, ``None`` where unknown (a quantity not calibrated, one
        window), and the net energy's budget (:mod:`energyrig.energy.budget`)."""
        return point_uncertainty(self.estimate, self.batch_n, self.calibration)

    def figures(self) -> dict[str, Any]:
        """The result as one JSON-ready object (``rig run --json``): per-op figures are
        means over the windows of the :attr:`estimate`
        (:func:`~energyrig.results.stats.summarise_per_op`), ``*_ci95_*`` the Student-t 95 %
        interval of the mean, ``*_u_*`` the expanded uncertainty (k = 2) of
        :meth:`uncertainty`; ``reps`` counts the windows of the estimate,
        ``windows_excluded`` those left out and ``excluded_reason`` why; ``windows`` lists
        them all."""
        p = self.point
        frame = windows_frame(self.estimate, self.batch_n)
        stats = summarise_per_op(frame)
        n_excluded, why = self.excluded
        out: dict[str, Any] = {
            "op": p.op, "status": self.status, "reason": self.reason or None,
            "params": {"key_bits": p.key_bits, "payload_bytes": p.payload_bytes,
                       "curve": p.curve, "backend": p.backend},
            "board": p.board, "family": p.family, "batch_n": self.batch_n,
            "reps": len(frame), "windows_excluded": n_excluded,
            "excluded_reason": why or None,
            "samples_per_window": finite_or_none(float(frame["samples"].median())),
        }
        for key in ("time_per_op_s", "energy_per_op_j", "net_energy_per_op_j"):
            low, high = stats[f"{key}_ci_low"], stats[f"{key}_ci_high"]
            out[key] = finite_or_none(stats[f"{key}_mean"])
            out[key.replace("_per_op", "_per_op_ci95")] = \
                [low, high] if math.isfinite(low) else None
        energy, duration = frame["energy_j"].sum(), frame["duration_s"].sum()
        out.update(self.uncertainty())
        out["mean_power_w"] = float(energy / duration) if len(frame) else None
        out["baseline_w"] = finite_or_none(float(frame["baseline_w"].median()))
        out["cycles_per_op"] = finite_or_none(stats["cycles_per_op_mean"])
        out["cycle_hz"] = self.cycle_hz
        for key in ("true_energy_per_op_j", "true_net_energy_per_op_j"):
            if math.isfinite(stats[f"{key}_mean"]):
                out[key] = stats[f"{key}_mean"]
        out["flags"] = list(self.flags)
        out["windows"] = [{"start_s": w.start_s, "end_s": w.end_s, "samples": w.samples,
                           "energy_j": finite_or_none(w.energy_j),  # None: window_lost
                           "baseline_w": finite_or_none(w.baseline_w),
                           "edge_error_j": w.edge_error_j, "cycles": w.cycles,
                           "true_energy_j": w.true_energy_j,
                           "true_net_energy_j": w.true_net_energy_j, "flags": list(w.flags),
                           "corrections": dict(w.corrections), "overhead_s": w.overhead_s,
                           "net_energy_u_j": finite_or_none(w.net_energy_u_j),
                           "duration_u_s": finite_or_none(w.duration_u_s),
                           "uncertainty": {name: finite_or_none(u)
                                           for name, u in w.uncertainty}}
                          for w in self.windows]
        return out


@dataclass(frozen=True)
class Readout:
    """What a progress display shows of the last window (SI units; ``batch_n``: the ops in
    it, which changes when the batch-size rule starts the point's windows over)."""

    net_energy_per_op_j: float
    mean_current_a: float
    flags: tuple[str, ...]
    batch_n: int

    @classmethod
    def of(cls, window: Window, batch_n: int, kept: Sequence[Chunk]) -> Readout:
        """The readout of ``window`` of ``batch_n`` ops; the mean current is that of the
        samples inside it among ``kept`` (:attr:`PreparedPoint.kept`; NaN without them)."""
        total = count = 0.0
        for chunk in kept:
            index = chunk.indices()
            first, last = window.sample_range(chunk.period_s)
            inside = (index >= first) & (index <= last)
            total += float(chunk.current_a[inside].sum())
            count += int(inside.sum())
        return cls(window.net_energy_j / batch_n, total / count if count else math.nan,
                   window_problems(window.flags), batch_n)

    def text(self) -> str:
        """``10.9 nJ/op, 3.61 mA, glitch`` (``clean`` without a flag of its samples)."""
        return (f"{format_si(self.net_energy_per_op_j, 'J')}/op, "
                f"{format_si(self.mean_current_a, 'A')}, {', '.join(self.flags) or 'clean'}")


Until = Callable[[Sequence[Window]], bool]
#: How many windows to ask for next, given those measured (a sweep's adaptive rule:
#: :func:`energyrig.rig.sweep.stopping.next_group`); 1: one window per request.
Group = Callable[[Sequence[Window]], int]
#: ``on_progress(stage, windows_done, readout of the last window or None)``.
Progress = Callable[[str, int, "Readout | None"], None]


def replacements_cap(wanted: int) -> int:
    """The most windows a point measures for ``wanted`` in its estimate: past it, more than
    :data:`~energyrig.domain.MAX_FLAGGED_FRACTION` of them were left out, and the point
    fails (:func:`integrity_failure`)."""
    return math.ceil(wanted / (1 - MAX_FLAGGED_FRACTION))


def reps_done(reps: int) -> Until:
    """The rule of ``rig run``: ``reps`` windows in the estimate (a window left out of it
    is replaced), at most :func:`replacements_cap` windows in all."""
    cap = replacements_cap(reps)
    return lambda windows: len(estimate(windows)) >= reps or len(windows) >= cap


def reps_left(reps: int) -> Group:
    """The group of ``rig run``: the windows :func:`reps_done` still needs."""
    return lambda windows: max(1, reps - len(estimate(windows)))


def measure_point(bench: PointBench, point: Point, *, until: Until,
                  batch_n: int | None = None, seed: int | None = None,
                  min_samples: int | None = None, stop: Callable[[], bool] = lambda: False,
                  on_progress: Progress | None = None,
                  keep: KeepCaptures = "none", group: Group | None = None) -> PointResult:
    """Measure one point: prepare, then windows until ``until(windows)`` (module docstring).

    Parameters
    ----------
    bench:
        An open bench (:func:`energyrig.rig.bench.open_bench`).
    point:
        The op and its parameters (``board`` as the bench's).
    until:
        Enough windows? (:func:`reps_done`, or a sweep's adaptive rule.) It is given every
        window measured; those left out of the estimate
        (:func:`~energyrig.domain.estimate`) it must replace, within a cap.
    batch_n, seed, min_samples:
        As :meth:`Measurement.prepare`.
    stop:
        Checked between windows; true ends the point as ``"interrupted"``.
    on_progress:
        ``on_progress(stage, windows_done, readout)`` with stage ``"prepare"`` (readout
        None) or ``"window"`` (the :class:`Readout` of the window just measured).
    keep:
        Whose samples the result keeps (:attr:`PointResult.captures`): no window's, the
        flagged windows' (:func:`~energyrig.domain.window_problems`), or all.
    group:
        How many windows to ask for next (:data:`Group`); a prepared point that measures
        groups (:class:`GroupedPoint`) opens that many per request, up to its
        ``max_group``. ``None``: one window per request.

    Returns
    -------
    PointResult
        ``"failed"`` with the reason when the DUT or the instrument failed.
    """
    progress = on_progress or (lambda stage, done, last: None)
    cycle_hz = int(bench.hello.get("cycle_hz", 0))
    windows: list[Window] = []
    captures: dict[int, tuple[Chunk, ...]] = {}
    prepared: PreparedPoint | None = None

    def take(measured: Sequence[tuple[Window, tuple[Chunk, ...]]], n: int) -> None:
        for row, kept in measured:
            if keep == "all" or (keep == "flagged" and window_problems(row.flags)):
                captures[len(windows)] = kept
            windows.append(row)
            progress("window", len(windows), Readout.of(row, n, kept))

    try:
        progress("prepare", 0, None)
        prepared = bench.prepare(point, batch_n=batch_n, seed=seed, min_samples=min_samples)
        cycle_hz = int(bench.hello.get("cycle_hz", 0))  # the point's clock, set by prepare
        # may grow the batch; a point measuring groups sizes it on its first group
        first = (prepared.first_windows(max(1, min(group(windows), prepared.max_group)))
                 if group is not None and isinstance(prepared, GroupedPoint)
                 else prepared.first_windows())
        n = prepared.batch_n
        take(first, n)
        while not until(windows):
            if stop():
                return PointResult(prepared.point, "interrupted", "stop requested", n,
                                   tuple(windows), prep=prepared.prep, cycle_hz=cycle_hz,
                                   calibration=bench.calibration)
            count = 1
            if group is not None and isinstance(prepared, GroupedPoint):
                count = max(1, min(group(windows), prepared.max_group))
            measured = (prepared.windows(count) if count > 1
                        else [(prepared.window(), prepared.kept)])
            if prepared.batch_n != n:  # the batch changed: the windows before are of the old one
                windows.clear()
                captures.clear()
                n = prepared.batch_n
            take(measured, n)
        extra = bench.point_flags()
    except POINT_ERRORS as exc:
        # Ctrl-C in a terminal also reaches the DUT and emulator processes: an error after a
        # stop request is the stop's doing, not the point's.
        status: PointStatus = "interrupted" if stop() else "failed"
        reason = str(exc)
        if isinstance(exc, DutRefused) and exc.reply.get("selftest") == "fail":
            reason = "self-test failed"
        # the result carries the reason and its caller shows it (`rig sweep` a line per
        # failed point): logged at INFO, or each failure showed twice
        log.info("point %s %s: %s", point.label, status, reason)
        if prepared is None:
            return PointResult(point, status, reason, batch_n or 1, cycle_hz=cycle_hz,
                               calibration=bench.calibration)
        return PointResult(prepared.point, status, reason, prepared.batch_n, tuple(windows),
                           _flags(windows), prepared.prep, cycle_hz, bench.calibration,
                           captures)
    reason = integrity_failure(windows)
    if reason:
        log.info("point %s failed: %s", point.label, reason)
    return PointResult(prepared.point, "failed" if reason else "ok", reason, prepared.batch_n,
                       tuple(windows), _flags(windows, extra), prepared.prep, cycle_hz,
                       bench.calibration, captures)


def integrity_failure(windows: Sequence[Window]) -> str:
    """Why a point's windows cannot be trusted: more than :data:`MAX_FLAGGED_FRACTION` of
    them were left out of its estimate, carrying a flag of the stream's integrity
    (:func:`~energyrig.domain.excluded`, flags a real instrument raises too); ``""`` when
    they can."""
    n_excluded, counts = excluded(w.flags for w in windows)
    if not windows or n_excluded <= MAX_FLAGGED_FRACTION * len(windows):
        return ""
    return (f"{n_excluded} of {len(windows)} windows failed the stream's integrity checks "
            f"({counts}): the instrument's stream is corrupt or lossy")


def _flags(windows: Sequence[Window], extra: Sequence[str] = ()) -> tuple[str, ...]:
    return tuple(sorted({f for w in windows for f in w.flags} | set(extra)))
