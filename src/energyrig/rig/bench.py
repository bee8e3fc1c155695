"""The bench: a fixture's DUT and instrument, and the measurement of one point.

::

    with Bench(load_fixture("fixtures/sim.toml")) as bench:
        result = bench.measure(Point(op="sha256", board=bench.board, payload_bytes=1024))
        print(result.figures()["net_energy_per_op_j"])

On the simulated bench (a fixture with ``[sim]``) entering the bench starts, in a temporary
directory, the PPK2 emulator (its own process) bound to a virtual trigger wire, and the host
build of the firmware sending its edges on that wire; the instrument then talks to the
emulator's pty like to a PPK2 on USB, and every window is matched with the emulator's
ground-truth log: the true window is the one between sending ``run`` and its reply (one
clock, CLOCK_MONOTONIC, for the rig, the DUT's wire and the emulator). A measured window
whose start lies off the true edge (``stream_time_shift``) shows that the stream lost
samples its 6-bit counter could not count.

:meth:`Bench.measure` of a point:

1. ``prep`` the op outside any window (keys, buffers, the firmware's self-test);
2. pick the batch size N: given (then one unrecorded batch warms up and times the window),
   or ``auto`` from probe runs timed by the firmware (``elapsed_ns``) so a window holds at
   least ``measure.min_window_samples`` samples and its edge error bound is under
   ``measure.max_edge_error`` of its energy; if a window still comes out short (the op ran
   faster than probed, as on a loaded machine) N grows and the windows start over;
3. R times: arm the instrument, ``idle`` the firmware for the baseline span (trigger low, its
   idle state: the idle baseline just before the rising edge), ``run n=N``, collect the
   record, find its window and integrate it (:mod:`energyrig.rig.energy`).

The instrument is used only through :class:`~energyrig.instruments.base.Acquisition`
(arm/collect), so a single-shot recorder fits as well as a stream. Failures of the DUT or the
instrument end the point with ``status="failed"`` and the reason, keeping the windows
measured before; they do not raise.

Results are :class:`PointResult` holding :class:`energyrig.results.store.Window` rows, so a
sweep writes them with ``writer.write_point(r.point, r.windows, batch_n=r.batch_n,
status=r.status, reason=r.reason)``. SI units throughout.
"""
from __future__ import annotations

import json
import logging
import math
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import numpy as np

from energyrig.errors import CaptureError, DutError, InstrumentError
from energyrig.fixtures.loader import resolve_command
from energyrig.fixtures.schema import Fixture
from energyrig.instruments.base import Acquisition, RecordedCapture
from energyrig.instruments.registry import family
from energyrig.results.stats import Summary, describe_finite
from energyrig.results.store import Point, Status
from energyrig.results.store import Window as WindowRow
from energyrig.rig.dut import Dut, DutProcess, DutRefused, OpInfo, SerialTransport
from energyrig.rig.energy import DROPPED_SAMPLES, Window, WindowSettings, find_windows

log = logging.getLogger(__name__)

# Flags the bench adds to those of rig.energy.
EDGE_ERROR = "edge_error_over_bound"      # the edge error bound exceeds measure.max_edge_error
DURATION_MISMATCH = "duration_mismatch"   # the window's length disagrees with the firmware's
EXTRA_WINDOWS = "extra_windows"           # the record held more than one window
TRUTH_LATE = "truth_late"                 # sim: an edge reached the emulator late
NO_TRUTH = "no_truth"                     # sim: no truth window matches this window
TRIGGER_DROPS = "trigger_drops"           # sim: the DUT could not publish trigger edges
TIME_SHIFT = "stream_time_shift"          # sim: the window is off its true edges (uncounted loss)
BENCH_FLAGS = (EDGE_ERROR, DURATION_MISMATCH, EXTRA_WINDOWS, TRUTH_LATE, NO_TRUTH,
               TRIGGER_DROPS, TIME_SHIFT)

#: Probe runs grow until one batch lasts this long, s (long enough to time it well).
_PROBE_MIN_S = 2e-3
#: Extra samples over the minimum ``auto`` aims for (timing jitter of the batch).
_AUTO_MARGIN = 1.5
#: Times ``auto`` may grow the batch when windows come out short (the op sped up).
_MAX_RESTARTS = 3
#: A window further than this many samples from its true edge is flagged ``stream_time_shift``.
_MAX_SHIFT_SAMPLES = 3
#: Seconds to wait for a record after the DUT replied, beyond post_s and stream latency.
_COLLECT_SLACK_S = 5.0

Progress = Callable[[str, int, int], None]


def _noop_progress(what: str, done: int, total: int) -> None:
    return None


@dataclass(frozen=True)
class PointResult:
    """One measured point: its windows (rows of the results store) and how it went.

    Attributes
    ----------
    point:
        The factors.
    status, reason:
        ``"ok"``, or ``"failed"`` with the reason (self-test failed, DUT timeout, ...).
    batch_n:
        Operations per window.
    windows:
        The windows measured (also those before a failure), as store rows; ``cycles`` is the
        firmware's count for the batch, ``true_*`` the emulator's truth on the simulated bench.
    flags:
        Union of the windows' flags and of point-level ones (``trigger_drops``).
    prep:
        The firmware's ``prep`` reply (empty if prep failed).
    cycle_hz:
        Frequency of the firmware's cycle counter, Hz.
    """

    point: Point
    status: Status
    reason: str
    batch_n: int
    windows: tuple[WindowRow, ...] = ()
    flags: tuple[str, ...] = ()
    prep: dict[str, Any] = field(default_factory=dict)
    cycle_hz: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def summary(self, column: str) -> Summary | None:
        """Per-op statistics of a window column (``"energy_j"``, ``"duration_s"``,
        ``"net_energy_j"``, ``"cycles"``, ``"true_energy_j"``, ``"true_net_energy_j"``),
        or ``None`` without finite values."""
        values = [getattr(w, column) for w in self.windows]
        return describe_finite(np.array([math.nan if v is None else v for v in values],
                                        dtype=np.float64) / self.batch_n)

    @property
    def baseline_w(self) -> float:
        """Median idle power of the windows' baselines, W (NaN without windows)."""
        b = [w.baseline_w for w in self.windows if math.isfinite(w.baseline_w)]
        return float(np.median(b)) if b else math.nan

    def figures(self) -> dict[str, Any]:
        """The result as one JSON-ready object (``rig run --json``): per-op figures are
        means over the windows, ``*_ci95_*`` the Student-t 95 % interval of the mean."""
        p = self.point
        out: dict[str, Any] = {
            "op": p.op, "status": self.status, "reason": self.reason or None,
            "params": {"key_bits": p.key_bits, "payload_bytes": p.payload_bytes,
                       "curve": p.curve, "backend": p.backend},
            "board": p.board, "family": p.family, "batch_n": self.batch_n,
            "reps": len(self.windows), "samples_per_window": _median(
                [w.samples for w in self.windows]),
        }
        for key, column in (("time_per_op_s", "duration_s"), ("energy_per_op_j", "energy_j"),
                            ("net_energy_per_op_j", "net_energy_j")):
            s = self.summary(column)
            out[key] = None if s is None else s.mean
            out[key.replace("_per_op", "_per_op_ci95")] = (
                None if s is None or not math.isfinite(s.ci_low) else [s.ci_low, s.ci_high])
        durations = [w.duration_s for w in self.windows]
        energies = [w.energy_j for w in self.windows]
        out["mean_power_w"] = (sum(energies) / sum(durations)) if durations else None
        out["baseline_w"] = _finite(self.baseline_w)
        cycles = self.summary("cycles")
        out["cycles_per_op"] = None if cycles is None else cycles.mean
        out["cycle_hz"] = self.cycle_hz
        for key, column in (("true_energy_per_op_j", "true_energy_j"),
                            ("true_net_energy_per_op_j", "true_net_energy_j")):
            s = self.summary(column)
            if s is not None:
                out[key] = s.mean
        out["flags"] = list(self.flags)
        out["windows"] = [{"start_s": w.start_s, "end_s": w.end_s, "samples": w.samples,
                           "energy_j": w.energy_j, "baseline_w": _finite(w.baseline_w),
                           "edge_error_j": w.edge_error_j, "cycles": w.cycles,
                           "true_energy_j": w.true_energy_j,
                           "true_net_energy_j": w.true_net_energy_j, "flags": list(w.flags)}
                          for w in self.windows]
        return out


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _median(values: list[int]) -> float | None:
    return float(np.median(values)) if values else None


class TruthLog:
    """Follows the emulator's ground-truth log (JSONL, see
    :mod:`energyrig.instruments.sim.truth`) as it grows, and matches windows to it by time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._partial = ""
        self.t0_ns: int | None = None
        self.period_ns = 0
        self.windows: list[dict[str, Any]] = []

    def _read(self) -> None:
        if not self.path.exists():
            return
        with self.path.open(encoding="utf-8") as fh:
            fh.seek(self._offset)
            text = fh.read()
            self._offset = fh.tell()
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in filter(None, lines):
            obj = json.loads(line)
            if obj["kind"] == "stream":  # a stream, or one record of a recorder
                self.t0_ns, self.period_ns = int(obj["t0_ns"]), int(obj["period_ns"])
            elif obj["kind"] == "window":
                self.windows.append(obj)

    def match(self, sent_ns: int, replied_ns: int) -> dict[str, Any] | None:
        """The truth window of the batch whose ``run`` request was sent at ``sent_ns`` and
        answered at ``replied_ns`` (CLOCK_MONOTONIC, the clock of the trigger wire): the
        window inside that span, ``None`` if there is none (or several)."""
        self._read()
        inside = [w for w in self.windows
                  if sent_ns <= w["t_rise_ns"] and w["t_fall_ns"] <= replied_ns]
        self.windows = [w for w in self.windows if w["t_fall_ns"] > replied_ns]  # done with
        return inside[0] if len(inside) == 1 else None

    def offset_s(self, truth: dict[str, Any], start_s: float) -> float:
        """How far the measured window's start (capture time base: sample 0 of the stream
        at 0 s) lies from the true rising edge, s. More than a few samples means the stream
        lost samples its counter could not count."""
        assert self.t0_ns is not None
        return start_s - (truth["t_rise_ns"] - self.t0_ns) * 1e-9


class Bench:
    """A fixture's DUT and instrument, opened together (a context manager).

    Parameters
    ----------
    fixture:
        The bench definition (:func:`energyrig.fixtures.load_fixture`).
    """

    def __init__(self, fixture: Fixture) -> None:
        self.fixture = fixture
        self._family = family(fixture.instrument.kind)
        self._stack: ExitStack | None = None
        self.dut: Dut | None = None
        self.instrument: Acquisition | None = None
        self.hello: dict[str, Any] = {}
        self.truth: TruthLog | None = None
        self.workdir: Path | None = None
        self._catalogue: dict[str, OpInfo] | None = None
        self._period: float | None = None
        self._trigger_drops = 0

    @property
    def board(self) -> str:
        """The board name the firmware reports (the fixture's before the bench opens)."""
        return str(self.hello.get("board") or self.fixture.dut.board)

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> Self:
        stack = ExitStack()
        try:
            self._open(stack)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def _open(self, stack: ExitStack) -> None:
        from energyrig.instruments.sim.power import PowerModel
        from energyrig.instruments.sim.process import EmulatorProcess

        fx = self.fixture
        port: str | None = None
        wire: Path | None = None
        if fx.sim is not None:
            self.workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rig-")))
            wire, truth = self.workdir / "trigger.wire", self.workdir / "truth.jsonl"
            model = PowerModel.from_dict(fx.sim.power.model_dump())
            assert self._family.emulator is not None  # the loader checked it
            emu = stack.enter_context(EmulatorProcess(
                model, wire=wire, truth=truth, module=self._family.emulator,
                extra_args=["--latency-s", str(fx.sim.latency_s), "--seed", str(fx.sim.seed),
                            *self._family.emulator_args(fx.instrument)]))
            port = emu.port
            self.truth = TruthLog(truth)
        if fx.dut.link == "serial":
            assert fx.dut.port is not None
            transport = SerialTransport(fx.dut.port, fx.dut.baudrate)
            stack.callback(transport.close)
            self.dut = Dut(transport, fx.dut.timeout_s)
        else:
            proc = stack.enter_context(DutProcess(resolve_command(fx), fx.dut.link,
                                                  trigger_wire=wire, board=fx.dut.board,
                                                  timeout_s=fx.dut.timeout_s))
            assert proc.dut is not None
            self.dut = proc.dut
        self.hello = self.dut.hello()
        self._trigger_drops = int(self.hello.get("trigger_drops", 0))
        if self.hello.get("protocol") != 1:
            raise DutError(f"DUT {self.dut.transport.name} speaks protocol "
                           f"{self.hello.get('protocol')!r}; this rig speaks protocol 1")
        self.instrument = self._family.open(fx.instrument, port)
        stack.enter_context(self.instrument)
        log.info("bench %s open: firmware %s on %s", fx.name, self.hello.get("firmware"),
                 self.board)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None
        self.dut = None
        self.instrument = None

    def _require(self) -> tuple[Dut, Acquisition]:
        if self.dut is None or self.instrument is None:
            raise RuntimeError("use the bench inside `with Bench(fixture) as bench:`")
        return self.dut, self.instrument

    def describe(self) -> dict[str, Any]:
        """Fixture, firmware and instrument identity for a run manifest."""
        _, instrument = self._require()
        return {"fixture": self.fixture.model_dump(mode="json"), "firmware": self.hello,
                "instrument": instrument.describe().to_dict()}

    def ops(self) -> list[OpInfo]:
        """The firmware's catalogue."""
        dut, _ = self._require()
        ops = dut.ops()
        self._catalogue = {o.name: o for o in ops}
        return ops

    # -- measurement -----------------------------------------------------------------------
    def prepare(self, point: Point, *, batch_n: int | None = None, seed: int | None = None,
                min_samples: int | None = None) -> PreparedPoint:
        """Prep the op on the firmware and settle the batch size; windows come from
        :meth:`PreparedPoint.window` one at a time (a sweep's adaptive rule, Ctrl-C between
        windows). :meth:`measure` is this plus R windows. ``min_samples`` overrides the
        fixture's ``measure.min_window_samples`` for ``auto``.

        Raises
        ------
        DutError, InstrumentError
            Self-test failed (:class:`~energyrig.rig.dut.DutRefused` with ``selftest``),
            the DUT did not answer, the instrument failed.
        """
        dut, _ = self._require()
        m = self.fixture.measure
        if point.family is None:
            catalogue = self._catalogue or {o.name: o for o in self.ops()}
            if point.op in catalogue:
                point = replace(point, family=catalogue[point.op].family)
        prep = dut.prep(point.op, key_bits=point.key_bits, payload_bytes=point.payload_bytes,
                        curve=point.curve, seed=seed, backend=point.backend,
                        timeout_s=m.probe_timeout_s)
        if batch_n is None:
            n, per_op_s = self._auto_batch(dut, min_samples)
        else:  # one unrecorded batch: warms up, and times the window to arm for
            n = batch_n
            per_op_s = dut.run(n, self.fixture.dut.timeout_s + m.probe_timeout_s * n).elapsed_s / n
        # Let the stream pass the probe windows, or the first armed window could be one of
        # them (a stream reaches the host this late).
        time.sleep(self._stream_lag_s())
        return PreparedPoint(self, point, n, per_op_s, prep, auto=batch_n is None,
                             min_samples=min_samples)

    def measure(self, point: Point, *, batch_n: int | None = None, reps: int | None = None,
                seed: int | None = None, min_samples: int | None = None,
                progress: Progress | None = None) -> PointResult:
        """Measure one point: prep, batch size, R windows (see the module docstring).

        Parameters
        ----------
        point:
            The op and its parameters (``board`` as :attr:`board`).
        batch_n:
            Ops per window; ``None`` picks it (``auto``).
        reps:
            Windows to measure; ``None``: the fixture's ``measure.reps``.
        seed:
            Seed of the firmware's key and payload generator (its default when ``None``).
        min_samples:
            Samples a window must hold with ``auto``; ``None``: the fixture's
            ``measure.min_window_samples``.
        progress:
            ``progress(what, done, total)`` after each step.

        Returns
        -------
        PointResult
            ``status="failed"`` with the reason when the DUT or the instrument failed.
        """
        dut, _ = self._require()
        reps = reps or self.fixture.measure.reps
        progress = progress or _noop_progress
        windows: list[WindowRow] = []
        prepared: PreparedPoint | None = None
        try:
            progress("prep and probe", 0, reps)
            prepared = self.prepare(point, batch_n=batch_n, seed=seed, min_samples=min_samples)
            while len(windows) < reps:
                n = prepared.batch_n
                row = prepared.window()
                if prepared.batch_n != n:
                    windows.clear()  # measured with the smaller batch
                windows.append(row)
                progress("windows", len(windows), reps)
            drops = int(dut.hello().get("trigger_drops", 0))
        except (DutError, InstrumentError, CaptureError) as exc:
            reason = str(exc)
            if isinstance(exc, DutRefused) and exc.reply.get("selftest") == "fail":
                reason = "self-test failed"
            if prepared is None:
                return self._result(point, reason, batch_n or 1, windows, {})
            return self._result(prepared.point, reason, prepared.batch_n, windows,
                                prepared.prep)
        extra = [TRIGGER_DROPS] if drops > self._trigger_drops else []
        if extra:
            log.warning("the DUT could not publish %d trigger edges on its wire",
                        drops - self._trigger_drops)
        self._trigger_drops = drops
        return self._result(prepared.point, "", prepared.batch_n, windows, prepared.prep, extra)

    def _result(self, point: Point, reason: str, n: int, windows: list[WindowRow],
                prep: dict[str, Any], extra: list[str] | None = None) -> PointResult:
        """The point's result: ``"failed"`` when there is a reason."""
        if reason:
            log.warning("point %s failed: %s", point.key, reason)
        flags = sorted({f for w in windows for f in w.flags} | set(extra or ()))
        return PointResult(point, "failed" if reason else "ok", reason, n, tuple(windows),
                           tuple(flags), prep, int(self.hello.get("cycle_hz", 0)))

    def _target_samples(self, min_samples: int | None = None) -> float:
        """Samples a window should hold: ``min_samples`` (default ``min_window_samples``),
        and ``2 / max_edge_error`` (the edge error bound is about one sample of power at each
        edge)."""
        m = self.fixture.measure
        return float(max(min_samples or m.min_window_samples, 2.0 / m.max_edge_error))

    def _short_by(self, row: WindowRow, min_samples: int | None = None) -> float:
        """How many times more samples the window needed (<= 1: enough)."""
        m = self.fixture.measure
        by_samples = self._target_samples(min_samples) / max(1, row.samples)
        by_edges = row.edge_error_j / (m.max_edge_error * abs(row.energy_j) or math.inf)
        return max(by_samples, by_edges)

    def _auto_batch(self, dut: Dut, min_samples: int | None = None) -> tuple[int, float]:
        """Batch size from probe runs: ``(N, seconds per op)``.

        Probe batches grow until one lasts :data:`_PROBE_MIN_S` (or N is reached); then N is
        chosen so a window holds ``min_window_samples`` and ``2 / max_edge_error`` samples
        (the edge error bound is one sample of power at each edge), with a margin, and
        checked by one unrecorded batch of that size when it is short.
        """
        m = self.fixture.measure
        period_s = self._period_s()
        target_s = _AUTO_MARGIN * self._target_samples(min_samples) * period_s
        n = 1
        timeout = self.fixture.dut.timeout_s + m.probe_timeout_s
        while True:
            reply = dut.run(n, timeout)
            per_op = max(reply.elapsed_s, 1e-9) / n
            if reply.elapsed_s >= min(_PROBE_MIN_S, target_s) or n >= m.max_batch:
                break
            n = min(m.max_batch, max(n + 1, math.ceil(_PROBE_MIN_S / per_op)))
            timeout = self.fixture.dut.timeout_s + 10 * per_op * n
        batch = min(self._batch_cap(per_op), max(1, math.ceil(target_s / per_op)))
        if batch > n and batch * per_op < _PROBE_MIN_S * 1000:
            # One unrecorded batch of the chosen size (caches and clocks as in the windows)
            # times the op again: a short probe can misjudge it by a factor of two.
            reply = dut.run(batch, self.fixture.dut.timeout_s + 10 * per_op * batch)
            per_op = max(reply.elapsed_s, 1e-9) / batch
            batch = min(self._batch_cap(per_op), max(1, math.ceil(target_s / per_op)))
        log.info("auto batch: %.3g s per op -> N = %d (%.0f samples per window)", per_op, batch,
                 batch * per_op / period_s)
        return batch, per_op

    def _batch_cap(self, per_op_s: float) -> int:
        """Largest batch a window may hold: ``measure.max_batch``, and for a recorder whose
        memory bounds the window at its sample rate (a scope) the batch that fits in it."""
        m = self.fixture.measure
        _, instrument = self._require()
        limit = instrument.limits().max_window_s(m.pre_s, m.post_s)
        if limit is None:
            return m.max_batch
        fits = math.floor(limit / max(per_op_s, 1e-12))
        return max(1, min(m.max_batch, fits))

    def _stream_lag_s(self) -> float:
        """How far behind real time the instrument's samples reach the host, s (bounded)."""
        sim = self.fixture.sim
        _, instrument = self._require()
        return (sim.latency_s if sim is not None else 0.0) + instrument.limits().stream_lag_s

    def _period_s(self) -> float:
        """Sample period of the instrument, s (from its ``limits()``)."""
        if self._period is None:
            _, instrument = self._require()
            self._period = instrument.limits().period_s
        return self._period

    def _window(self, dut: Dut, n: int, expected_s: float | None) -> tuple[WindowRow, float]:
        """One batch of ``n`` inside a recorded window; the store row and the firmware's time.

        ``expected_s`` (the window's length, s) sizes the arm and the timeout; ``None`` times
        it first with an unrecorded batch.
        """
        _, instrument = self._require()
        fx = self.fixture
        m, w = fx.measure, fx.windows
        if expected_s is None:
            expected_s = dut.run(n, fx.dut.timeout_s + m.probe_timeout_s * n).elapsed_s
            time.sleep(self._stream_lag_s())
        idle_s = w.guard_s + w.baseline_s
        instrument.arm(pre_s=m.pre_s, window_s=expected_s, post_s=m.post_s)
        dut.idle(idle_s)
        sent_ns = time.monotonic_ns()
        reply = dut.run(n, fx.dut.timeout_s + 10 * expected_s)  # ops vary (key generation)
        replied_ns = time.monotonic_ns()
        latency = fx.sim.latency_s if fx.sim is not None else 0.0
        record = instrument.collect(timeout_s=m.post_s + latency + _COLLECT_SLACK_S)
        window, flags = self._find(record)
        flags += self._check(window, reply.elapsed_s)
        true_e = true_net = None
        if self.truth is not None:
            truth = self.truth.match(sent_ns, replied_ns)
            if truth is None:
                flags.append(NO_TRUTH)
            else:
                true_e, true_net = truth["energy_j"], truth["net_energy_j"]
                if truth.get("late"):
                    flags.append(TRUTH_LATE)
                shift = self.truth.offset_s(truth, window.start_s)
                if abs(shift) > _MAX_SHIFT_SAMPLES * self._period_s():
                    log.warning("the window starts %.6f s off its true edge: the stream lost "
                                "samples its counter could not count", shift)
                    flags.append(TIME_SHIFT)
        row = WindowRow(start_s=window.start_s, end_s=window.end_s, samples=window.samples,
                        energy_j=window.energy_j, baseline_w=window.baseline_w,
                        edge_error_j=window.edge_error_j, flags=tuple(sorted(set(flags))),
                        cycles=reply.cycles, true_energy_j=true_e, true_net_energy_j=true_net)
        return row, reply.elapsed_s

    def _find(self, record: RecordedCapture) -> tuple[Window, list[str]]:
        w = self.fixture.windows
        settings = WindowSettings(trigger_bit=record.trigger_bit, min_pulse_s=w.min_pulse_s,
                                  guard_s=w.guard_s, baseline_s=w.baseline_s,
                                  min_samples=w.min_samples)
        found = list(find_windows(record, settings))
        if not found:
            raise InstrumentError(f"{record.source}: the record holds no complete trigger "
                                  "window (is the trigger wired to the instrument?)")
        flags = list(record.flags)
        if len(found) > 1:
            flags.append(EXTRA_WINDOWS)
        if record.lost:  # also in the baseline span: the driver has logged it
            flags.append(DROPPED_SAMPLES)
        return max(found, key=lambda x: x.duration_s), flags

    def _check(self, win: Window, elapsed_s: float) -> list[str]:
        """Flags of the bench's own checks of a window against its limits and the firmware."""
        m = self.fixture.measure
        flags = []
        if win.edge_error_j > m.max_edge_error * abs(win.energy_j):
            flags.append(EDGE_ERROR)
        # A board toggles a GPIO in nanoseconds; the host DUT's wire send and scheduling add up
        # to a few hundred µs, so only a gross disagreement (a wrong window) is flagged.
        tolerance_s = 5 * self._period_s() + m.duration_tolerance * elapsed_s
        if abs(win.duration_s - elapsed_s) > tolerance_s:
            log.warning("window of %.6f s but the firmware timed %.6f s", win.duration_s,
                        elapsed_s)
            flags.append(DURATION_MISMATCH)
        return flags


@dataclass
class PreparedPoint:
    """A point prepared on the firmware (:meth:`Bench.prepare`), measured window by window.

    Attributes
    ----------
    batch_n:
        Ops per window. With ``auto`` :meth:`window` may grow it: windows returned before
        belong to a smaller batch and must not be mixed with the later ones.
    per_op_s:
        The latest firmware time per op, s (sizes the next window's arm and timeout).
    prep:
        The firmware's ``prep`` reply.
    """

    bench: Bench
    point: Point
    batch_n: int
    per_op_s: float
    prep: dict[str, Any]
    auto: bool
    min_samples: int | None = None
    restarts: int = 0

    def window(self) -> WindowRow:
        """Measure one window (a store row).

        With ``auto``, a short window (the op ran faster than probed, as on a loaded machine)
        grows :attr:`batch_n` and is measured again, at most :data:`_MAX_RESTARTS` times per
        point; after that a short window is returned flagged ``edge_error_over_bound``.
        """
        bench = self.bench
        dut, _ = bench._require()
        while True:
            row, elapsed_s = bench._window(dut, self.batch_n, self.per_op_s * self.batch_n)
            self.per_op_s = elapsed_s / self.batch_n
            short = bench._short_by(row, self.min_samples)
            if not (self.auto and short > 1.0 and self.restarts < _MAX_RESTARTS):
                break
            grown = min(bench._batch_cap(self.per_op_s),
                        math.ceil(self.batch_n * short * _AUTO_MARGIN))
            if grown <= self.batch_n:
                break  # the instrument's memory holds no longer window (a scope)
            self.restarts += 1
            log.info("window of %d samples is short; batch %d -> %d", row.samples,
                     self.batch_n, grown)
            self.batch_n = grown
        return row
