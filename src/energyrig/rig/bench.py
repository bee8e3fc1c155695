"""The bench: a fixture's DUT and instrument, opened together.

::

    with open_bench(load_fixture("fixtures/sim.toml")) as bench:
        print(bench.board, bench.hello["firmware"], [op.name for op in bench.ops()])
        result = measure_point(bench, point, until=reps_done(10))   # energyrig.rig.pipeline

:func:`open_bench` gives a :class:`Bench` for a fixture that names real hardware, and a
:class:`SimBench` for a fixture with ``[sim]`` (it starts the
emulator and the host DUT first, then opens them like hardware). Either way the DUT is
reached through :func:`energyrig.rig.dut.open_dut` and the instrument through its family
(:func:`energyrig.instruments.registry.family`); the bench never branches on either.

A bench only holds hardware: the measurement of a point is :mod:`energyrig.rig.pipeline`,
which asks the bench for its DUT, its instrument, the instrument's
:class:`~energyrig.instruments.base.Limits`, its correction stage and the annotations only
it can make (the simulated bench's truth).
"""
from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import numpy as np
import psutil

from energyrig.calibration.correction import CurrentCorrection
from energyrig.calibration.store import Calibration, Identity, build_of, select
from energyrig.domain import Point, Window
from energyrig.errors import DutError
from energyrig.fixtures.schema import Fixture
from energyrig.instruments.base import Acquisition, AcquisitionBase, Limits
from energyrig.instruments.progress import cpu_time_s
from energyrig.instruments.registry import family
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.flags import NO_TRUTH, TIME_SHIFT, TRIGGER_DROPS, TRUTH_LATE
from energyrig.instruments.sim.process import EmulatorProcess
from energyrig.instruments.sim.switch import Load, LoadKind, set_load
from energyrig.instruments.sim.truth import TruthFollower, TruthWindow
from energyrig.instruments.streaming import StreamAcquisition
from energyrig.lab.place import held_place
from energyrig.opfamilies import firmware_mismatch
from energyrig.rig.dut import Dut, OpInfo, open_dut
from energyrig.rig.pipeline import Correction, Measurement, no_correction

log = logging.getLogger(__name__)

#: The protocol version of the firmware this rig speaks (``firmware/PROTOCOL.md``).
PROTOCOL = 1


class Bench:
    """A fixture's DUT and instrument, opened together (a context manager).

    Parameters
    ----------
    fixture:
        The bench definition (:func:`energyrig.fixtures.load_fixture`).
    calibration:
        ``"latest"`` (the newest valid values of the store, :mod:`energyrig.calibration.store`),
        ``"none"`` (measure uncalibrated, flagged so) or a record's path: selected when the
        instrument has opened (its identity is needed). ``None``: no correction stage at all
        (the records as the instrument gives them, unflagged: tests and library use).

    Attributes
    ----------
    hello:
        The firmware's ``hello`` reply (empty until the bench is open); its ``cpu_hz`` and
        ``cycle_hz`` follow the clock :meth:`set_clock` set.
    correction:
        The pipeline's correction stage for this bench's records (the identity without a
        calibration).
    calibrated:
        The calibration selected (``None`` until open, or without ``calibration``).
    calibration:
        Its record for the run manifest (ids, values, what is missing), or ``None``.
    edge_samples:
        The edge error bound of the last windows measured on the bench, in samples of a
        window's mean power (``None`` before any): ``auto`` sizes the next point's windows
        by it (:attr:`energyrig.rig.pipeline.PipelineBench.edge_samples`).
    """

    def __init__(self, fixture: Fixture, calibration: str | None = None) -> None:
        self.fixture = fixture
        self.hello: dict[str, Any] = {}
        self.correction: Correction = no_correction
        self.calibration_choice = calibration
        self.calibrated: Calibration | None = None
        self.calibration: dict[str, Any] | None = None
        self.edge_samples: float | None = None
        self._stack: ExitStack | None = None
        self._dut: Dut | None = None
        self._instrument: Acquisition | None = None
        self._limits: Limits | None = None
        self._catalogue: list[OpInfo] | None = None

    @property
    def board(self) -> str:
        """The board name the firmware reports (the fixture's before the bench opens)."""
        return str(self.hello.get("board") or self.fixture.dut.board)

    @property
    def dut(self) -> Dut:
        if self._dut is None:
            raise RuntimeError("use the bench inside `with open_bench(fixture) as bench:`")
        return self._dut

    @property
    def instrument(self) -> Acquisition:
        if self._instrument is None:
            raise RuntimeError("use the bench inside `with open_bench(fixture) as bench:`")
        return self._instrument

    @property
    def limits(self) -> Limits:
        """What the instrument can record (sample rate, longest record, stream lag)."""
        if self._limits is None:
            self._limits = self.instrument.limits()
        return self._limits

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
        self._connect(stack)

    def _connect(self, stack: ExitStack, *, address: str | None = None,
                 trigger_wire: Path | None = None) -> None:
        """Open the DUT (checking its protocol) and the instrument.

        ``address`` replaces the fixture's instrument address (an emulator's pty or VISA
        resource); ``trigger_wire`` is the virtual trigger wire a host DUT sends its edges on.
        """
        fx = self.fixture
        self._dut = stack.enter_context(open_dut(fx, trigger_wire=trigger_wire))
        self.hello = self._dut.hello()
        if self.hello.get("protocol") != PROTOCOL:
            raise DutError(f"DUT {self._dut.transport.name} speaks protocol "
                           f"{self.hello.get('protocol')!r}; this rig speaks protocol "
                           f"{PROTOCOL}")
        instrument = family(fx.instrument.kind).open(fx.instrument, address)
        self._instrument = stack.enter_context(instrument)
        if self.calibration_choice is not None:
            self._calibrate(self.calibration_choice)
        log.info("bench %s open: firmware %s on %s", fx.name, self.hello.get("firmware"),
                 self.board)

    def _calibrate(self, choice: str) -> None:
        """Select the calibration ``choice`` names for the open instrument and make it the
        correction stage (:class:`ConfigError` for a corrupt, foreign or expired record)."""
        cal = select(choice, self.fixture, Identity.of(self.instrument.describe()),
                     build=build_of(self.hello))
        self.calibrated, self.calibration = cal, cal.manifest()
        self.correction = CurrentCorrection.of(cal)
        if cal.complete:
            log.info("calibration %s applied", cal.id)
        else:
            log.info("%s", cal.problem())

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None
        self._dut = self._instrument = self._limits = None

    # -- what the pipeline asks ----------------------------------------------------------------
    def ops(self) -> list[OpInfo]:
        """The firmware's catalogue (asked once)."""
        if self._catalogue is None:
            self._catalogue = self.dut.ops()
        return self._catalogue

    def prepare(self, point: Point, *, batch_n: int | None = None, seed: int | None = None,
                min_samples: int | None = None) -> Measurement:
        """Prepare ``point`` on this bench (:meth:`energyrig.rig.pipeline.Measurement.prepare`),
        the board first set to the point's clock (:meth:`set_clock`) when it names one."""
        if point.cpu_hz is not None:
            self.set_clock(point.cpu_hz)
        return Measurement.prepare(self, point, batch_n=batch_n, seed=seed,
                                   min_samples=min_samples)

    def set_clock(self, hz: int) -> None:
        """Run the board at ``hz`` (Hz) from now on; nothing when it already does. :attr:`hello`
        then states the clock in force (``cpu_hz``, ``cycle_hz``: the firmware's reply).

        Raises
        ------
        DutError
            The firmware refused (a level it does not offer; -ENOTSUP: it cannot set its clock).
        """
        if int(self.hello.get("cpu_hz") or 0) == hz:
            return
        reply = self.dut.clock(hz)
        self.hello["cpu_hz"], self.hello["cycle_hz"] = int(reply["cpu_hz"]), int(reply["cycle_hz"])
        log.info("bench %s: clock %d Hz", self.fixture.name, hz)

    def connect(self, load: LoadKind, ohms: float = math.inf) -> str | None:
        """Wire the bench for a calibration routine (:mod:`energyrig.calibration.routines`;
        ``ohms``: the reference resistor): a real bench cannot rewire itself, so this returns
        the operator's instruction."""
        return WIRING[load].format(ohms=ohms)

    def annotate(self, row: Window, sent_ns: int, replied_ns: int) -> Window:
        """A real bench knows nothing of a window beyond its record."""
        return row

    def annotate_group(self, rows: Sequence[Window], sent_ns: int,
                       replied_ns: int) -> list[Window]:
        """Nor of the windows of a group."""
        return list(rows)

    def point_flags(self) -> list[str]:
        """A real bench adds no point-level flags."""
        return []

    def after_reply(self) -> None:
        """Nothing: a real bench asks the DUT nothing for its point flags."""

    def records_after(self, t_ns: int) -> None:
        """Wait the instrument's stream lag (``Limits.stream_lag_s``): a real instrument's
        samples are not mapped to the host's clock (a PPK2's USB transfer delay is not known
        to the sample), so the next record, armed ``pre_s`` before the newest sample
        received, starts after ``t_ns`` only once the stream has passed it; a recorder
        records nothing between its records, and waits as a stream does."""
        time.sleep(self.limits.stream_lag_s)


#: What a calibration routine asks the operator to wire, for each load.
WIRING: dict[str, str] = {
    "open": "Open the instrument's current input: disconnect the board's supply from it (a "
            "PPK2: unplug VOUT/VIN; a shunt: short the probe at its tip), keep the board "
            "powered from elsewhere and the trigger wired",
    "reference": "Connect the {ohms:g} ohm reference resistor across the supply in place of "
                 "the board (keep the board powered from elsewhere and the trigger wired)",
    "dut": "Connect the board to the instrument as for a measurement",
}

#: How long the stream may stall while :meth:`SimBench.connect` waits for it, beyond its lag, s.
SWITCH_SLACK_S = 5.0

#: A window further than this many samples from its true edge is flagged ``stream_time_shift``.
MAX_SHIFT_SAMPLES = 3
#: How far a window of a group may start from its true rise to be paired with it, s (the
#: windows of a group lie a settle idle, over 10 ms, apart).
GROUP_TRUTH_TOLERANCE_S = 2e-3


def _workdir(stack: ExitStack) -> Path:
    """A temporary directory for the simulated bench's wire, truth log and load switch,
    removed when ``stack`` closes. Its name carries the rig's pid, so the directories of a
    rig that was killed (SIGKILL leaves no chance to clean up) are removed by the next one."""
    tmp = Path(tempfile.gettempdir())
    for old in tmp.glob("rig-*-*"):
        pid = old.name.split("-")[1]
        if pid.isdigit() and old.is_dir() and not psutil.pid_exists(int(pid)):
            log.info("removing %s, left by a rig that is gone", old)
            shutil.rmtree(old, ignore_errors=True)
    path = Path(tempfile.mkdtemp(prefix=f"rig-{os.getpid()}-"))
    stack.callback(shutil.rmtree, path, ignore_errors=True)
    return path


class SimBench(Bench):
    """The bench of a fixture with ``[sim]``: a bench whose instrument is an emulator and
    whose DUT is the host build.

    Entering it starts, in a temporary directory, the fixture's instrument emulator (its own
    process, :mod:`energyrig.instruments.sim.process`) bound to a virtual trigger wire
    (``firmware/TRIGGER_WIRE.md``) and writing a ground-truth log, then opens the host build
    of the firmware sending its edges on that wire, and the instrument at the emulator's
    address — exactly as :class:`Bench` opens hardware.

    What it adds to a bench:

    - every window is annotated with the emulator's truth (:class:`TruthFollower` follows the
      log; the true window is the one between sending ``run`` and its reply — one clock,
      CLOCK_MONOTONIC, for the rig, the DUT's wire and the emulator); a measured window whose
      start lies off the true edge (``stream_time_shift``) shows that the stream lost samples
      its 6-bit counter could not count;
    - the emulator's latency counts in the stream lag;
    - trigger edges the DUT could not publish flag the point (``trigger_drops``);
    - the DUT's op families (``hello``'s ``families``, whose places are the wire's ids)
      must be the rows of :mod:`energyrig.opfamilies`, the emulator's table, else
      :class:`DutError`;
    - its reference resistors are off their nominal values within the fixture's tolerance
      (:meth:`actual_ohms`), as real ones are.
    """

    truth: TruthFollower | None = None
    workdir: Path | None = None
    load_switch: Path | None = None
    _trigger_drops = 0  # the DUT's count at the last hello
    _new_drops = 0  # counted since the last point_flags
    _counted_at = -1  # the DUT's request count right after that hello

    def _open(self, stack: ExitStack) -> None:
        fx = self.fixture
        assert fx.sim is not None
        kind = family(fx.instrument.kind)
        assert kind.emulator is not None  # the fixture loader refuses a kind without one
        self.workdir = _workdir(stack)
        wire, truth = self.workdir / "trigger.wire", self.workdir / "truth.jsonl"
        self.load_switch = self.workdir / "load.json"
        emulator = stack.enter_context(EmulatorProcess(
            PowerModel.from_dict(fx.sim.power.model_dump()), wire=wire, truth=truth,
            module=kind.emulator,
            extra_args=["--latency-s", str(fx.sim.latency_s), "--seed", str(fx.sim.seed),
                        "--load-switch", str(self.load_switch),
                        *kind.emulator_args(fx.instrument)]))
        self.truth = TruthFollower(truth)
        self._connect(stack, address=emulator.port, trigger_wire=wire)
        mismatch = firmware_mismatch(self.hello.get("families", ()))
        if mismatch:
            raise DutError(f"DUT {self.dut.transport.name}: its op families are not the rig's "
                           f"({mismatch}): the trigger wire would name the wrong family; "
                           "rebuild the host firmware (make firmware-host) or give the "
                           "family its row in src/energyrig/opfamilies.toml")
        if isinstance(self.instrument, AcquisitionBase) and emulator.pid is not None:
            # The emulator's CPU time is its sign of life: a wait on it counts from its last
            # work, not from this host's speed (energyrig.instruments.progress).
            self.instrument.work = partial(cpu_time_s, [emulator.pid])
        self._trigger_drops = int(self.hello.get("trigger_drops", 0))

    @property
    def limits(self) -> Limits:
        """The instrument's limits, its stream lag plus the emulator's latency."""
        limits = super().limits
        assert self.fixture.sim is not None
        return replace(limits, stream_lag_s=limits.stream_lag_s + self.fixture.sim.latency_s)

    def connect(self, load: LoadKind, ohms: float = math.inf) -> None:
        """Switch the emulator's input to ``load`` (:mod:`energyrig.instruments.sim.switch`;
        ``ohms``: the reference resistor, whose actual value is :meth:`actual_ohms`), and
        wait until a streaming instrument received ``[measure] pre_s`` of samples taken
        after the switch (the bound, ``stream_lag_s`` + :data:`SWITCH_SLACK_S`, counts from
        the newest sample received: a stream still arriving is waited for)."""
        assert self.load_switch is not None and self.truth is not None  # set when opened
        switched_ns = set_load(self.load_switch, Load(load, self.actual_ohms(ohms)
                                                      if load == "reference" else ohms))
        if not isinstance(self.instrument, StreamAcquisition):
            # A record-limited emulator renders a record whole once it ends, with one load;
            # the pause before the next arm is kept as it was (a scope's calibration after
            # a switch without it measured a wrong skew once in three runs at load 8).
            time.sleep(self.limits.stream_lag_s)
            return
        # A streaming record starts pre_s before the newest sample received at its arm:
        # wait until the stream holds pre_s past the switch (in the stream's own time,
        # however late this host reads it), so no record mixes the loads. The stream's time
        # base is in the truth log once its first sample came (the emulator writes it before
        # it sends one); a switch right after the bench opened may come before that.
        bound_s = self.limits.stream_lag_s + SWITCH_SLACK_S
        self.instrument.wait_received(1, bound_s)
        self.truth.read()
        stream = self.truth.stream
        assert stream is not None  # written before the first sample
        after = switched_ns + round(self.fixture.measure.pre_s * 1e9)
        self.instrument.wait_received(math.ceil(stream.sample_index(after)), bound_s)

    def records_after(self, t_ns: int) -> None:
        """Without a wait on a streaming instrument: the emulator stamps its samples on the
        host's clock (sample ``k`` at the truth log's ``t0_ns + k * period_ns``), so the
        sample taken at ``t_ns`` is known exactly, however late the stream brings it, and
        the next record starts there (:meth:`StreamAcquisition.start_after`). A recorder,
        or a stream whose time base is not logged yet, waits as :meth:`Bench.records_after`."""
        assert self.truth is not None
        self.truth.read()
        stream = self.truth.stream
        if not isinstance(self.instrument, StreamAcquisition) or stream is None:
            super().records_after(t_ns)
            return
        self.instrument.start_after(math.ceil(stream.sample_index(t_ns)))

    def actual_ohms(self, nominal_ohms: float) -> float:
        """The actual value of the bench's reference resistor of ``nominal_ohms``: off its
        nominal value within the fixture's ``reference_tolerance`` as a real resistor is,
        uniformly (the rectangular distribution the gain routine assumes), by a draw fixed
        by the ``[sim] seed`` and the nominal value, Ω. The calibration's u(gain) then
        stands for an error the simulated bench really has."""
        fx = self.fixture
        assert fx.sim is not None
        rng = np.random.default_rng((fx.sim.seed, round(nominal_ohms * 1000)))
        tolerance = fx.calibration.reference_tolerance
        return nominal_ohms * (1.0 + float(rng.uniform(-tolerance, tolerance)))

    def annotate(self, row: Window, sent_ns: int, replied_ns: int) -> Window:
        """The window with the emulator's true energy, or flagged ``no_truth``."""
        assert self.truth is not None
        return self._with_truth(row, self.truth.match(sent_ns, replied_ns))

    def annotate_group(self, rows: Sequence[Window], sent_ns: int,
                       replied_ns: int) -> list[Window]:
        """The windows of one group, each with its true window: in order when the request's
        span holds as many true windows as ``rows`` (so a window the stream shifted is
        flagged ``stream_time_shift``, as a lone one), else the one whose rise lies nearest
        its start (within :data:`GROUP_TRUTH_TOLERANCE_S`); or flagged ``no_truth``."""
        assert self.truth is not None
        truths = self.truth.match_all(sent_ns, replied_ns)
        stream = self.truth.stream
        if len(truths) == len(rows):
            return [self._with_truth(row, truth) for row, truth in zip(rows, truths, strict=True)]
        if stream is None or not truths:
            return [self._with_truth(row, None) for row in rows]
        return [self._with_truth(row, stream.match(truths, row.start_s,
                                                   GROUP_TRUTH_TOLERANCE_S))
                for row in rows]

    def _with_truth(self, row: Window, truth: TruthWindow | None) -> Window:
        """``row`` with ``truth``'s energies, or flagged ``no_truth`` without one."""
        assert self.truth is not None
        if truth is None:
            return replace(row, flags=(*row.flags, NO_TRUTH))
        flags = [TRUTH_LATE] if truth.late else []
        shift = self.truth.offset_s(truth, row.start_s)
        if abs(shift) > MAX_SHIFT_SAMPLES * self.limits.period_s:
            log.warning("the window starts %.6f s off its true edge: the stream lost samples "
                        "its counter could not count", shift,
                        extra={"repeats": f"windows flagged {TIME_SHIFT}"})
            flags.append(TIME_SHIFT)
        return replace(row, true_energy_j=truth.energy_j, true_net_energy_j=truth.net_energy_j,
                       flags=(*row.flags, *flags))

    def after_reply(self) -> None:
        """Count the DUT's trigger drops now (its ``hello``), while the record waits for the
        stream: a point's last request is followed by this, so :meth:`point_flags` then
        needs no round trip of its own."""
        self._count_drops()

    def _count_drops(self) -> None:
        drops = int(self.dut.hello().get("trigger_drops", 0))
        self._new_drops += drops - self._trigger_drops
        self._trigger_drops, self._counted_at = drops, self.dut.requests

    def point_flags(self) -> list[str]:
        """``trigger_drops`` when the DUT dropped wire edges since the last point: counted
        by a ``hello`` unless the DUT was asked nothing since the last count
        (:meth:`after_reply`), which then holds every edge it sent."""
        if self.dut.requests != self._counted_at:
            self._count_drops()
        new, self._new_drops = self._new_drops, 0
        if new <= 0:
            return []
        log.warning("the DUT could not publish %d trigger edges on its wire", new)
        return [TRIGGER_DROPS]


class PlaceBench(Bench):
    """The bench of a fixture that names a place (``[lab]``): opening it acquires the place
    and reaches the DUT and the instrument through it; closing it releases the place."""

    def __init__(self, fixture: Fixture, calibration: str | None = None) -> None:
        super().__init__(fixture, calibration)
        self.lab_fixture = fixture

    def _open(self, stack: ExitStack) -> None:
        self.fixture = stack.enter_context(held_place(self.lab_fixture))
        self._connect(stack)


def open_bench(fixture: Fixture, calibration: str | None = None) -> Bench:
    """The bench of ``fixture``: a :class:`PlaceBench` when it names a
    labgrid place (``[lab]``), a :class:`SimBench` when it has ``[sim]``, else a
    :class:`Bench` (use it in ``with``); ``calibration`` as :class:`Bench`'s."""
    if fixture.lab is not None:
        return PlaceBench(fixture, calibration)
    cls = SimBench if fixture.sim is not None else Bench
    return cls(fixture, calibration)
