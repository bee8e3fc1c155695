"""An oscilloscope as an :class:`~energyrig.instruments.base.Acquisition` (a single-shot recorder).

Three layers:

* **transport**: a PyVISA session (:mod:`energyrig.instruments.visa`, by default through
  the pure-Python ``pyvisa-py`` backend), on the resource string the fixture gives;
* **protocol**: the family's :class:`~energyrig.instruments.scope.dialects.Dialect` row and
  the pure functions of :mod:`energyrig.instruments.scope.protocol`;
* **processing**: :func:`~energyrig.instruments.scope.processing.to_chunk`, numpy over whole
  downloaded waveforms.

Per measurement::

    with Scope(ScopeConfig(resource="TCPIP::192.168.1.50::INSTR")) as scope:
        scope.arm(pre_s=0.02, window_s=0.004, post_s=0.005)   # setup, :SINGle, wait armed
        ...                                                    # the DUT runs its batch
        capture = scope.collect(timeout_s=5.0)                 # wait, download, scale

``arm`` sets the channels, the timebase and memory depth so that ``pre + margin·window +
post`` fits, a rising-edge single-shot trigger on the trigger channel, and waits until the
scope reports it is armed and has had ``pre_s`` to fill its pre-trigger memory. ``collect``
polls the trigger status until the acquisition is complete, downloads each channel as IEEE
488.2 definite-length binary blocks (``query_binary_values``, in parts where the family
limits a read) with the preamble's scaling, and returns one chunk: current = shunt volts /
R, supply = supply − shunt volts (or the constant supply), trigger = trigger volts past the
level with 10 % hysteresis (:mod:`energyrig.instruments.threshold`, as the file readers).
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.errors import InstrumentError, RecordTooShort
from energyrig.instruments.base import (
    AcquisitionBase,
    ArmRequest,
    InstrumentInfo,
    Limits,
    RecordedCapture,
    Resolution,
)
from energyrig.instruments.progress import ProgressBound
from energyrig.instruments.scope import protocol
from energyrig.instruments.scope.config import ScopeConfig
from energyrig.instruments.scope.dialects import DIALECTS, Dialect, Scaling, State, dialect_for_idn
from energyrig.instruments.scope.flags import LOW_SAMPLE_RATE
from energyrig.instruments.scope.processing import to_chunk
from energyrig.instruments.scope.protocol import RecordPlan, Vertical
from energyrig.instruments.visa import VisaSession, open_session

log = logging.getLogger(__name__)

#: Interval between trigger status polls, s.
POLL_S = 0.01

class StateTimeout(Exception):
    """:func:`wait_for_state` gave up; ``last`` is the status the scope answered last."""

    def __init__(self, last: State) -> None:
        super().__init__(last)
        self.last = last


def wait_for_state(status: Callable[[], State], wanted: State, bound_s: float, *,
                   work: Callable[[], float] | None = None,
                   clock: Callable[[], float] = time.monotonic,
                   sleep: Callable[[float], None] = time.sleep) -> float:
    """Poll ``status`` every :data:`POLL_S` until it answers ``wanted``; the ``clock`` time
    (s) of that answer.

    The bound ``bound_s`` (s) counts from the last sign of progress
    (:class:`~energyrig.instruments.progress.ProgressBound`): the first poll, each answer not
    seen before in this wait, and, while the scope is ``"triggered"`` (completing its record
    by itself), the CPU time ``work`` says the instrument's process spent (an emulator on
    this host; ``None`` on hardware). A single acquisition only moves forward (armed →
    triggered → done), so a scope still on its way is waited for however slowly the host
    runs, while one that stays in a state is reported: a scope that never triggers
    ``bound_s`` after the wait began, one that never completes ``bound_s`` after its last
    work.

    Raises
    ------
    StateTimeout
        ``bound_s`` passed with no progress (carrying the last state).
    """
    seen: set[State] = set()
    bound = ProgressBound(bound_s, work=work, clock=clock)
    while True:
        last = status()
        if last == wanted:
            return clock()
        if last not in seen:
            seen.add(last)
            bound.advance()
        elif bound.expired(working=last == "triggered"):
            raise StateTimeout(last)
        sleep(POLL_S)


class Scope(AcquisitionBase):
    """An oscilloscope on a VISA resource, measuring by the shunt method.

    Parameters
    ----------
    config:
        Dialect, channel mapping, shunt and scales (the fixture's ``[instrument]`` table,
        :class:`~energyrig.instruments.scope.config.ScopeConfig`).
    resource:
        VISA resource to open; ``None``: ``config.resource``.

    Raises
    ------
    InstrumentError
        Neither names a resource.
    """

    def __init__(self, config: ScopeConfig, resource: str | None = None) -> None:
        address = resource or config.resource
        if address is None:
            raise InstrumentError("scope: the fixture names no resource (instrument.resource, "
                                  "e.g. 'TCPIP::192.168.1.50::INSTR')")
        self.config = config
        self.resource = address
        self.dialect: Dialect | None = DIALECTS.get(config.dialect)
        self.idn = ""
        self._session: VisaSession | None = None
        self._verticals: tuple[Vertical, ...] = ()
        self._plan: RecordPlan | None = None
        self._pre_s = self._window_s = 0.0

    @property
    def source(self) -> str:
        return f"scope:{self.resource}"

    # -- transport -------------------------------------------------------------------------
    def _visa(self) -> VisaSession:
        if self._session is None:
            raise InstrumentError(f"{self.source}: not started (use `with Scope(...)`)")
        return self._session

    def write(self, command: str) -> None:
        self._visa().write(command)

    def query(self, command: str) -> str:
        return self._visa().query(command)

    def query_block(self, command: str, datatype: str) -> npt.NDArray[np.generic]:
        """A binary block reply as a numpy array (IEEE 488.2 definite length)."""
        return self._visa().query_block(command, datatype)

    def _check_errors(self, after: str) -> None:
        assert self.dialect is not None
        reply = self.query(self.dialect.error_query)
        code = reply.split(",", 1)[0].strip()
        try:
            failed = int(float(code)) != 0
        except ValueError:
            failed = True
        if failed:
            raise InstrumentError(f"{self.source}: the scope refused a command {after}: "
                                  f"{reply} (is the dialect {self.dialect.name!r} right?)")

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Open the session, identify the scope, set acquisition mode and unused channels off.

        Raises
        ------
        InstrumentError
            The scope does not open or answer, answers as another family than the fixture's
            ``dialect``, or refuses the setup.
        """
        if self._session is not None:
            return
        self._session = open_session(self.resource, self.config.visa_library,
                                     self.config.timeout_s, source=self.source,
                                     product="scope")
        try:
            self.idn = self.query("*IDN?")
            found = dialect_for_idn(self.idn)
            if self.dialect is None:
                if found is None:
                    raise InstrumentError(f"{self.source}: no dialect for {self.idn!r}; set "
                                          f"dialect to one of {', '.join(DIALECTS)}")
                self.dialect = found
            elif not self.dialect.matches(self.idn):
                raise InstrumentError(f"{self.source}: answers {self.idn!r}, not a "
                                      f"{self.dialect.families} (fixture dialect "
                                      f"{self.dialect.name!r})")
            self.write("*CLS")
            for command in protocol.setup_commands(self.dialect, self.config):
                self.write(command)
            self._verticals = protocol.verticals(self.dialect, self.config)
            self._check_errors("during setup")
        except BaseException:
            self.stop()
            raise
        log.info("scope %s: %s (%s)", self.resource, self.idn, self.dialect.name)

    def stop(self) -> None:
        """Stop the acquisition and close the session. Safe to call twice."""
        session, self._session = self._session, None
        self._plan = None
        if session is not None:
            session.close(None if self.dialect is None else self.dialect.stop)

    # -- measurement -----------------------------------------------------------------------
    @property
    def n_channels(self) -> int:
        return len(self.config.roles())

    def limits(self) -> Limits:
        """The set sample rate, the longest record the memory holds at it (with the
        ``window_margin`` the record reserves), no stream lag (a recorder).

        Raises
        ------
        InstrumentError
            ``dialect = "auto"`` before :meth:`start` (the memory is the family's).
        """
        dialect = self._require_dialect()
        rate = self.config.sample_rate_hz
        resolution = None if not self._verticals else Resolution(
            ((math.inf, protocol.current_step_a(dialect, self.config, self._verticals)),),
            f"{dialect.name}: the shunt channel's V/div x {dialect.v_divs} divisions over its "
            f"{dialect.code_range[1] - dialect.code_range[0]} codes")
        return Limits(sample_rate_hz=rate,
                      max_record_s=protocol.max_record_s(dialect, self.n_channels, rate),
                      stream_lag_s=0.0, window_margin=self.config.window_margin,
                      resolution=resolution)

    def _require_dialect(self) -> Dialect:
        if self.dialect is None:
            raise InstrumentError(f"{self.source}: dialect 'auto' is known only after start()")
        return self.dialect

    def _status(self) -> State:
        dialect = self._require_dialect()
        reply = self.query(dialect.status_query)
        try:
            return dialect.status(reply)
        except ValueError as exc:
            raise InstrumentError(f"{self.source}: {dialect.status_query} answered {reply!r}") \
                from exc

    def _wait(self, wanted: State, bound_s: float, what: str) -> float:
        """:func:`wait_for_state` on this scope's status; the time it answered ``wanted``."""
        try:
            return wait_for_state(self._status, wanted, bound_s, work=self.work)
        except StateTimeout as exc:
            raise InstrumentError(f"{self.source}: {what} (status {exc.last!r})") from None

    def arm(self, pre_s: float, window_s: float, post_s: float, windows: int = 1) -> None:
        """Set up one record holding ``pre + margin·window + post`` and arm a single trigger
        (one window per record: no dialect here offers segmented memory; ``windows`` > 1 is
        refused).

        Returns once the scope reports armed and ``pre_s`` has passed since (its pre-trigger
        memory is full), so the DUT may run.
        """
        req = ArmRequest(pre_s, window_s, post_s, windows).one_window(self.source)
        dialect = self._require_dialect()
        plan = protocol.plan_record(dialect, self.n_channels, self.config.sample_rate_hz,
                                    req.pre_s, req.window_s, req.post_s,
                                    self.config.window_margin)
        commands = protocol.arm_commands(dialect, self.config, plan, self._verticals)
        for command in commands[:-1]:
            self.write(command)
        self._check_errors("while arming")
        self.write(commands[-1])
        # The scope armed at some moment before it answered so: its pre-trigger memory is
        # full pre_s after the answer. Counted from the command instead, a scope (or an
        # emulator on a loaded host) slow to arm ignores the DUT's edge and never triggers.
        armed_at = self._wait("armed", self.config.arm_timeout_s,
                              f"not armed {self.config.arm_timeout_s:g} s after {commands[-1]}")
        self._plan = plan
        self._pre_s, self._window_s = req.pre_s, req.window_s
        fill = armed_at + req.pre_s - time.monotonic()
        if fill > 0:
            time.sleep(fill)

    def collect(self, timeout_s: float) -> RecordedCapture:
        """Wait for the single acquisition, download and scale it.

        Call after the DUT replied (the trigger has fallen): the rest of the record lasts at
        most its planned length, and the wait ``timeout_s`` beyond that, counted from the
        call and again from each change of the scope's status (armed → triggered → done:
        :func:`wait_for_state`), so a scope that is still acquiring is waited for and one
        that is stuck is reported.

        Raises
        ------
        RecordTooShort
            The trigger was still high at the end of the record (the batch outlasted it).
        InstrumentError
            No trigger (trigger probe or level wrong, DUT did not run), the record did not
            complete, or the download failed.
        """
        if self._plan is None:
            raise InstrumentError(f"{self.source}: collect() without arm()")
        plan, self._plan = self._plan, None
        try:
            self._wait("done", plan.total_s + timeout_s,
                       f"acquisition not complete {timeout_s:g} s after the record's end, "
                       f"counted from its last change of status (no trigger on "
                       f"CH{self.config.trigger}? check the trigger probe and level "
                       f"{self.config.level_v:g} V)")
        except InstrumentError:
            self.write(self._require_dialect().stop)
            raise
        capture = self._download()
        if capture.logic is not None and capture.logic[-1]:
            after = plan.total_s - self._pre_s
            raise RecordTooShort(
                f"{self.source}: the trigger was still high at the end of the record, "
                f"{after:.3g} s after the rising edge: the batch outlasted the "
                f"{self._window_s:.3g} s expected (x{self.config.window_margin:g} margin); "
                "raise window_margin for ops whose time varies (key generation)")
        flags: tuple[str, ...] = ()
        if plan.rate_hz < self.config.sample_rate_hz * 0.9999:
            flags = (LOW_SAMPLE_RATE,)
        return RecordedCapture(self.source, (capture,), trigger_bit=0, flags=flags)

    def read_channel(self, channel: int) -> tuple[Scaling, npt.NDArray[np.generic]]:
        """The stopped scope's record of ``channel``: its scaling and raw codes."""
        dialect = self._require_dialect()
        for command in dialect.source:
            self.write(command.format(ch=channel))
        queries = [q.format(ch=channel) for q in dialect.preamble_query]
        if dialect.preamble_binary:
            raw = self.query_block(queries[0], "B")
            preamble: str | bytes = np.asarray(raw, dtype=np.uint8).tobytes()
        else:
            preamble = ";".join(self.query(q) for q in queries)
        try:
            scaling = dialect.preamble(preamble)
        except (ValueError, IndexError) as exc:
            raise InstrumentError(f"{self.source}: CH{channel} preamble {preamble!r:.80} is not "
                                  f"a {dialect.name} preamble ({exc})") from exc
        parts = []
        for commands, count in protocol.read_parts(dialect, scaling.points):
            for command in commands:
                self.write(command)
            block = self.query_block(dialect.data_query.format(ch=channel), dialect.datatype)
            self._drop_trailer(channel)
            if len(block) != count:
                raise InstrumentError(f"{self.source}: CH{channel} sent {len(block)} points "
                                      f"where {count} were due")
            parts.append(block)
        return scaling, np.concatenate(parts) if len(parts) > 1 else parts[0]

    def _drop_trailer(self, channel: int) -> None:
        """Read the bytes the family sends after a block's termination (``data_trailer``)."""
        n = self._require_dialect().data_trailer
        if n:
            extra = self._visa().read_bytes("the block's trailer", n)
            if extra.strip():
                raise InstrumentError(f"{self.source}: CH{channel} block ends in {extra!r} "
                                      "where only line feeds were due")

    def _download(self) -> Chunk:
        dialect = self._require_dialect()
        volts: dict[str, npt.NDArray[np.float64]] = {}
        clipped: npt.NDArray[np.bool_] | None = None
        period = None
        lo, hi = dialect.code_range
        for role, (channel, _) in self.config.roles().items():
            scaling, codes = self.read_channel(channel)
            if period is None:
                period = scaling.x_increment_s
            elif not np.isclose(period, scaling.x_increment_s, rtol=1e-9):
                raise InstrumentError(f"{self.source}: CH{channel} sample interval "
                                      f"{scaling.x_increment_s:g} s differs from {period:g} s")
            volts[role] = scaling.volts(codes)
            if role != "trigger":
                edge = (codes == lo) | (codes == hi)
                clipped = edge if clipped is None else clipped | edge
        lengths = {len(v) for v in volts.values()}
        if len(lengths) != 1 or period is None or not period > 0:
            raise InstrumentError(f"{self.source}: channels of one record differ in length "
                                  f"({sorted(lengths)}) or sample interval ({period})")
        assert clipped is not None
        if clipped.any():
            log.warning("%s: %d samples at the end of the vertical range; raise max_current_a "
                        "or check supply_v", self.source, int(clipped.sum()))
        return to_chunk(self.config, volts, clipped, float(period))

    def describe(self) -> InstrumentInfo:
        """Identity (``*IDN?`` once started) and settings for the run manifest."""
        s = self.config
        details: dict[str, Any] = {
            "dialect": self.dialect.name if self.dialect else s.dialect,
            "channels": {r: c for r, (c, _) in s.roles().items()},
            "shunt_ohms": s.shunt_ohms, "current_scale_a_per_v": s.current_scale_a_per_v,
            "voltage_minus_shunt": s.voltage_minus_shunt, "supply_v": s.supply_v,
            "verticals": [{"channel": v.channel, "scale_v": v.scale_v, "offset_v": v.offset_v,
                           "probe": v.probe} for v in self._verticals],
        }
        if self.dialect is not None:
            details["guide"] = self.dialect.guide
        # IEEE 488.2 *IDN?: manufacturer, model, serial number, firmware.
        idn = [f.strip() for f in self.idn.split(",")]
        return InstrumentInfo(kind="scope", name=self.idn, address=self.resource,
                              sample_rate_hz=s.sample_rate_hz, details=details,
                              serial=idn[2] if len(idn) == 4 else "")
