"""The simulated bench: a bench whose instrument is an emulator and whose DUT is the host build.

Entering it starts, in a temporary directory, the fixture's instrument emulator (its own
process, :mod:`energyrig.instruments.sim.process`) bound to a virtual trigger wire
(``firmware/TRIGGER_WIRE.md``) and writing a ground-truth log, then opens the host build of the
firmware sending its edges on that wire, and the instrument at the emulator's address —
exactly as :class:`~energyrig.rig.bench.Bench` opens hardware.

What it adds to a bench:

- every window is annotated with the emulator's truth (:class:`TruthFollower` follows the
  log; the true window is the one between sending ``run`` and its reply — one clock,
  CLOCK_MONOTONIC, for the rig, the DUT's wire and the emulator); a measured window whose
  start lies off the true edge (``stream_time_shift``) shows that the stream lost samples its
  6-bit counter could not count;
- the emulator's latency counts in the stream lag;
- trigger edges the DUT could not publish flag the point (``trigger_drops``).
"""
from __future__ import annotations

import logging
import tempfile
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from energyrig.domain import Window
from energyrig.instruments.family import Limits
from energyrig.instruments.registry import family
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.process import EmulatorProcess
from energyrig.instruments.sim.truth import TruthFollower
from energyrig.rig.bench import Bench

log = logging.getLogger(__name__)

# Flags the simulated bench adds.
TRUTH_LATE = "truth_late"           # an edge reached the emulator late
NO_TRUTH = "no_truth"               # no truth window matches this window
TRIGGER_DROPS = "trigger_drops"     # the DUT could not publish trigger edges
TIME_SHIFT = "stream_time_shift"    # the window is off its true edges (uncounted loss)
SIM_FLAGS = (TRUTH_LATE, NO_TRUTH, TRIGGER_DROPS, TIME_SHIFT)

#: A window further than this many samples from its true edge is flagged ``stream_time_shift``.
MAX_SHIFT_SAMPLES = 3


class SimBench(Bench):
    """The bench of a fixture with ``[sim]`` (see the module docstring)."""

    truth: TruthFollower | None = None
    workdir: Path | None = None
    _trigger_drops = 0

    def _open(self, stack: ExitStack) -> None:
        fx = self.fixture
        assert fx.sim is not None
        kind = family(fx.instrument.kind)
        assert kind.emulator is not None  # the fixture loader refuses a kind without one
        self.workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rig-")))
        wire, truth = self.workdir / "trigger.wire", self.workdir / "truth.jsonl"
        emulator = stack.enter_context(EmulatorProcess(
            PowerModel.from_dict(fx.sim.power.model_dump()), wire=wire, truth=truth,
            module=kind.emulator,
            extra_args=["--latency-s", str(fx.sim.latency_s), "--seed", str(fx.sim.seed),
                        *kind.emulator_args(fx.instrument)]))
        self.truth = TruthFollower(truth)
        self._connect(stack, address=emulator.port, trigger_wire=wire)
        self._trigger_drops = int(self.hello.get("trigger_drops", 0))

    @property
    def limits(self) -> Limits:
        """The instrument's limits, its stream lag plus the emulator's latency."""
        limits = super().limits
        assert self.fixture.sim is not None
        return replace(limits, stream_lag_s=limits.stream_lag_s + self.fixture.sim.latency_s)

    def annotate(self, row: Window, sent_ns: int, replied_ns: int) -> Window:
        """The window with the emulator's true energy, or flagged ``no_truth``."""
        assert self.truth is not None
        truth = self.truth.match(sent_ns, replied_ns)
        if truth is None:
            return replace(row, flags=(*row.flags, NO_TRUTH))
        flags = [TRUTH_LATE] if truth.late else []
        shift = self.truth.offset_s(truth, row.start_s)
        if abs(shift) > MAX_SHIFT_SAMPLES * self.limits.period_s:
            log.warning("the window starts %.6f s off its true edge: the stream lost samples "
                        "its counter could not count", shift)
            flags.append(TIME_SHIFT)
        return replace(row, true_energy_j=truth.energy_j, true_net_energy_j=truth.net_energy_j,
                       flags=(*row.flags, *flags))

    def point_flags(self) -> list[str]:
        """``trigger_drops`` when the DUT dropped wire edges since the last point."""
        drops = int(self.dut.hello().get("trigger_drops", 0))
        new, self._trigger_drops = drops - self._trigger_drops, drops
        if new <= 0:
            return []
        log.warning("the DUT could not publish %d trigger edges on its wire", new)
        return [TRIGGER_DROPS]
