"""A sweep's dry run: the points a plan would measure on each board, and how long it would
take (``rig sweep PLAN --dry-run``); no instrument is opened."""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from energyrig.domain import Point
from energyrig.errors import DutError
from energyrig.fixtures.schema import Fixture
from energyrig.rig.dut import open_dut
from energyrig.rig.plan import Expansion, Plan, Skipped, Target, expand
from energyrig.rig.sweep.boards import distinct_boards

log = logging.getLogger(__name__)

# A window's wall time beyond its recorded span and margins: the idle and run requests and
# replies, moving the samples; measured on the simulated bench (plans/quick.toml).
WINDOW_OVERHEAD_S = 0.1
# Preparing a point without timings: prep (self-test, keys) and the batch probe.
POINT_OVERHEAD_S = 0.3
# Sample rate assumed for the auto batch's window length (a PPK2), samples/s.
ASSUMED_RATE_HZ = 100e3


@dataclass(frozen=True)
class OpTiming:
    """One configuration timed by the firmware: its prep (self-test, keys) and one op, s."""

    prep_s: float
    op_s: float


@dataclass(frozen=True)
class DryRun:
    """The points a plan would measure, per board, and a duration estimate (s)."""

    plan: Plan
    expansions: tuple[Expansion, ...]
    min_s: float
    max_s: float
    timed: bool = False

    @property
    def points(self) -> tuple[Point, ...]:
        return tuple(p for e in self.expansions for p in e.points)

    @property
    def skipped(self) -> tuple[Skipped, ...]:
        return tuple(s for e in self.expansions for s in e.skipped)


def point_wall_s(fixture: Fixture, windows: int, timing: OpTiming | None) -> float:
    """Wall time of one point of ``windows`` windows on ``fixture``, s.

    A window of the auto batch holds ``measure.min_window_samples`` (at
    :data:`ASSUMED_RATE_HZ`) or one op, whichever is longer, plus its margins, the stream
    latency and the exchange; a point adds its prep and batch probe (``timing`` from
    :func:`time_ops`, else :data:`POINT_OVERHEAD_S`).
    """
    m = fixture.measure
    latency = fixture.emulator_latency_s
    span = m.min_window_samples / ASSUMED_RATE_HZ
    overhead = POINT_OVERHEAD_S
    if timing is not None:
        span = max(span, timing.op_s)
        overhead = timing.prep_s + 2 * timing.op_s + latency
    window = m.pre_s + span + m.post_s + latency + WINDOW_OVERHEAD_S
    return overhead + windows * window


def read_target(fixture: Fixture) -> Target:
    """The board's catalogue and clocks from the DUT alone (no instrument is opened)."""
    with open_dut(fixture) as dut:
        hello = dut.hello()
        return Target.from_dut(hello, dut.ops(), board=hello.get("board") or fixture.dut.board)


def time_ops(fixture: Fixture, points: Sequence[Point]) -> dict[str, OpTiming]:
    """Prep and one op of each configuration of ``points``, timed by the firmware on the
    fixture's DUT (no instrument). Keyed by the point key without ``rep``; a configuration
    the DUT refuses is left out (the sweep will record it as failed)."""
    timings: dict[str, OpTiming] = {}
    m = fixture.measure
    with open_dut(fixture) as dut:
        for point in points:
            config = point.config_key
            if config in timings:
                continue
            try:
                prep = dut.prep(point.op, key_bits=point.key_bits,
                                payload_bytes=point.payload_bytes, curve=point.curve,
                                backend=point.backend, timeout_s=m.probe_timeout_s)
                run = dut.run(1, fixture.dut.timeout_s + 2 * m.probe_timeout_s)  # warm-up + 1
            except DutError as exc:
                log.warning("%s: %s", config, exc)
                continue
            timings[config] = OpTiming(int(prep.get("prep_ns", 0)) * 1e-9, run.elapsed_s)
    return timings


def dry_run(plan: Plan, fixtures: Sequence[Fixture],
            read: Callable[[Fixture], Target] = read_target,
            timer: Callable[[Fixture, Sequence[Point]], Mapping[str, OpTiming]] | None = None
            ) -> DryRun:
    """Expand ``plan`` on each fixture's board and estimate the duration between the adaptive
    rule's minimum and maximum windows.

    Without ``timer`` (e.g. :func:`time_ops`) every op is taken to fit a window; with it,
    ops slower than that (RSA key generation) count at their measured time.
    """
    plan = plan.with_seed()
    expansions = tuple(expand(plan, read(fx)) for fx in fixtures)
    distinct_boards(plan, [e.target.board for e in expansions])
    bounds = [0.0, 0.0]
    for fx, e in zip(fixtures, expansions, strict=True):
        timings = timer(fx, e.points) if timer is not None else {}
        for k, windows in enumerate((plan.adaptive.min_windows, plan.adaptive.max_windows)):
            bounds[k] += sum(point_wall_s(fx, windows, timings.get(p.config_key))
                             for p in e.points)
            bounds[k] += max(0, len(e.points) - 1) * plan.cooldown_s
    return DryRun(plan, expansions, bounds[0], bounds[1], timed=timer is not None)
