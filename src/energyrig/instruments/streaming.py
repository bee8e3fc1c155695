"""The base of streaming acquisitions (PPK2, Joulescope): :class:`StreamAcquisition`.

A streaming instrument samples from ``start()`` on; its transport (a reader thread, a driver's
callbacks) hands decoded chunks to :meth:`StreamAcquisition._store`, which keeps them in a
:class:`~energyrig.instruments.streambuffer.StreamBuffer` (``history_s`` while not armed,
``buffer_s`` while armed). The base owns what every stream does with them the same way:

* :meth:`~StreamAcquisition._mark`: ``arm()``'s wait for ``pre_s`` of samples and its mark
  ``pre_s`` before the newest one (never before the fall of the window collected last);
* :meth:`~StreamAcquisition._collect_window`: ``collect()``'s wait for the first trigger
  window after the mark (or the first ``windows`` of them) plus ``post_s``, with
  :class:`~energyrig.instruments.triggerscan.TriggerScan`, until the stream holds the
  device's sample at the DUT's reply (:class:`Arrivals`: which sample that is, from when the
  samples arrived);
* :meth:`~StreamAcquisition.wait_received`: a wait for a given sample;
* :meth:`~StreamAcquisition.start_after`: where the next record may start at the earliest
  (past windows the host made without recording them), with no wait.

Every wait is bounded by the stream's progress, never by the call
(:class:`~energyrig.instruments.progress.ProgressBound`, restarted by each new sample): a
loaded host reads a stream late and in bursts, and only a stream that stops is an error.

A family implements ``start``/``stop`` (its transport), ``limits``/``describe``, its
``arm``/``collect`` checks around the two steps above, and :attr:`StreamAcquisition.source`.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from energyrig.capture import Chunk
from energyrig.errors import InstrumentError
from energyrig.instruments.base import AcquisitionBase, ArmRequest
from energyrig.instruments.progress import ProgressBound
from energyrig.instruments.streambuffer import StreamBuffer
from energyrig.instruments.triggerscan import TriggerScan, cut_at

log = logging.getLogger(__name__)

#: Most trigger windows a stream's record holds (``Limits.max_windows``): the firmware's
#: most per ``run`` request (firmware/PROTOCOL.md, ``windows``).
STREAM_MAX_WINDOWS = 64
#: How much later than its stated lag (``Limits.stream_lag_s``) a stream's sample may reach
#: the host when read at once, s: the transport's jitter, and what a device clock slower
#: than the host's drifts by between reads on time (:class:`Arrivals`).
ARRIVAL_MARGIN_S = 0.1


class Arrivals:
    """Which sample a stream takes at a host time, from when its samples arrived.

    A sample reaches the host at least the transport's lag after it was taken, and a loaded
    host reads it later still; the lowest lag seen (``floor``: host time at the nominal rate,
    less the samples received) is the one read on time. The device's sample at host time
    ``t`` is then at most the transport's lag past :meth:`index_at`: an upper bound however
    late the host reads, which is what a collect needs to know that a window made before
    ``t`` can no longer arrive. The floor rises by ``drift`` (relative) between reads, to
    follow a device clock slower than the host's (as the PPK2's
    :class:`~energyrig.instruments.ppk2.clock.StreamClock`, which weighs losses on it too).

    Parameters
    ----------
    rate_hz:
        The stream's nominal sample rate, Hz.
    drift:
        How fast the floor may rise, relative (s per s; a crystal is good to 50 ppm).
    """

    def __init__(self, rate_hz: float, drift: float = 1e-4) -> None:
        self.rate_hz = rate_hz
        self.drift = drift
        self._t0: float | None = None
        self._t_last = 0.0
        self._floor = 0.0

    def arrived(self, t_s: float, end_index: int) -> None:
        """The samples before absolute ``end_index`` have arrived by host time ``t_s``."""
        if self._t0 is None:
            self._t0 = self._t_last = t_s
            self._floor = -float(end_index)
            return
        lag = (t_s - self._t0) * self.rate_hz - end_index
        rise = self.drift * self.rate_hz * (t_s - self._t_last)
        self._floor = min(self._floor + rise, lag)
        self._t_last = t_s

    def index_at(self, t_s: float) -> int | None:
        """The absolute index the device's sample at host time ``t_s`` reaches, less the
        lag of the read on time (``None`` before any sample arrived)."""
        if self._t0 is None:
            return None
        return round((t_s - self._t0) * self.rate_hz - self._floor)


class StreamAcquisition(AcquisitionBase):
    """A streaming :class:`~energyrig.instruments.base.Acquisition`'s buffer, marks and waits.

    Parameters
    ----------
    rate_hz:
        The stream's sample rate, Hz.
    history_s, buffer_s:
        Samples kept while not armed (what ``pre_s`` reaches back to) and while armed, s.
    clock:
        Monotonic clock of the bounds on the stream, s (tests pass a fake one).

    Attributes
    ----------
    product:
        What the instrument is called in the error of a stream that stopped (``"PPK2"``).
    """

    product = "instrument"

    def __init__(self, rate_hz: float, history_s: float, buffer_s: float, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._rate_hz = rate_hz
        self._history_s = history_s
        self._buffer_s = buffer_s
        self._now = clock
        self._buffer = StreamBuffer()
        self._cond = threading.Condition()
        self._arm: ArmRequest | None = None
        self._arm_index = self._scan_from = self._last_fall = self._not_before = 0
        self._arrivals = Arrivals(rate_hz)

    @property
    def source(self) -> str:  # pragma: no cover - overridden
        """The instrument as error messages name it (``"ppk2:/dev/ttyACM0"``)."""
        raise NotImplementedError

    # -- what the transport hands in ------------------------------------------------------
    def _store(self, chunk: Chunk) -> None:
        """Keep ``chunk`` (the transport's thread): ``history_s`` of samples while not armed,
        up to ``buffer_s`` while armed (an overflow then fails the collect)."""
        history = round(self._history_s * self._rate_hz)
        capacity = round(self._buffer_s * self._rate_hz)
        with self._cond:
            self._arrivals.arrived(self._now(), chunk.end_index)
            discarded = self._buffer.push(chunk, history,
                                          None if self._arm is None else capacity)
            if discarded:
                log.error("%s: buffer full (%g s) while armed; %d samples discarded",
                          self.source, self._buffer_s, discarded)
            self._cond.notify_all()

    def _new_stream(self) -> None:
        """Forget the stream before this one (a family's ``start``: its indices start
        again): the samples kept, the window collected last, where records start, when
        samples arrived."""
        self._buffer.clear()
        self._last_fall = self._not_before = 0
        self._arrivals = Arrivals(self._rate_hz)

    # -- hooks of a family ----------------------------------------------------------------
    def _check_alive(self) -> None:
        """Raise :class:`~energyrig.errors.InstrumentError` when the stream cannot deliver
        any more (called with the lock held); the base knows of no such state."""

    def _suspect_from(self) -> int | None:
        """The absolute index from which the stream's timing is in doubt (a lag not yet
        resolved), else ``None``; a record reaching past it is waited on for
        :meth:`_settle_s` (called with the lock held)."""
        return None

    def _settle_s(self) -> float:
        """How long a collect waits for a doubtful lag to resolve, s."""
        return 0.0

    def _window_stalled(self, scan: TriggerScan, bound_s: float, trigger: str,
                        newest: int) -> InstrumentError:
        """The error of a collect whose stream sent no sample for ``bound_s`` (s) while the
        window on ``trigger`` was incomplete."""
        return self._stopped(bound_s, f"the trigger window ({scan.seen} on {trigger})", newest)

    # -- the stream's positions (call with the lock held) ---------------------------------
    def _newest(self) -> int:
        """The absolute index after the newest sample received."""
        chunks = self._buffer.chunks
        return chunks[-1].end_index if chunks else 0

    def _oldest(self) -> int:
        """The absolute index of the oldest sample kept."""
        chunks = self._buffer.chunks
        return chunks[0].start_index if chunks else self._newest()

    # -- waits -----------------------------------------------------------------------------
    def _stopped(self, bound_s: float, what: str, newest: int) -> InstrumentError:
        """The error of a stream that sent no sample for ``bound_s`` (s) while waited on for
        ``what``, received up to absolute index ``newest``."""
        return InstrumentError(f"{self.source}: the stream stopped: no sample for "
                               f"{bound_s:.1f} s while waiting for {what} (received up to "
                               f"sample {newest}); is the {self.product} still streaming?")

    def _progress(self, newest: int, stalled: ProgressBound) -> int:
        """The absolute index after the newest sample received now, ``stalled`` restarted
        when it moved past ``newest`` (call with the lock held)."""
        now = self._newest()
        if now > newest:
            stalled.advance()
        return now

    def _wait_stream(self, ready: Callable[[], bool], bound_s: float, what: str) -> None:
        """Wait until ``ready()`` (called with the lock held), the bound ``bound_s`` (s)
        restarted by each new sample received."""
        self._check_alive()
        stalled = ProgressBound(bound_s, clock=self._now)
        newest = self._newest()
        while True:
            self._check_alive()
            if ready():
                return
            newest = self._progress(newest, stalled)
            if stalled.expired():
                raise self._stopped(bound_s, what, newest)
            self._cond.wait(0.05)

    def wait_received(self, index: int, bound_s: float) -> None:
        """Wait until the stream's samples before absolute ``index`` have been received.

        The bound ``bound_s`` (s) counts from the newest sample received
        (:class:`~energyrig.instruments.progress.ProgressBound`): a stream still arriving is
        waited for however late this host reads it.

        Raises
        ------
        InstrumentError
            No sample came for ``bound_s``, or the stream failed.
        """
        with self._cond:
            self._wait_stream(lambda: self._newest() >= index, bound_s, f"sample {index}")

    def start_after(self, index: int) -> None:
        """Let the next record start at absolute sample ``index`` at the earliest, and its
        trigger window be looked for from there: a window before it (one the host made
        without recording it, whose samples may not have arrived yet) is neither taken for
        the record's window nor kept in the record. It waits for nothing: the collect waits
        for the stream as ever."""
        with self._cond:
            self._not_before = max(self._not_before, index)

    # -- arm and collect -------------------------------------------------------------------
    def _mark(self, request: ArmRequest, start_s: float) -> None:
        """``arm()`` after the family's checks: wait until the stream holds ``pre_s`` of
        samples (the bound ``pre_s`` + ``start_s``, s, restarted by each new sample: right
        after ``start()`` it may not yet), then mark the stream ``pre_s`` before the newest
        sample, but not before the fall of the window collected last nor before
        :meth:`start_after`'s sample."""
        pre = round(request.pre_s * self._rate_hz)
        with self._cond:
            self._wait_stream(lambda: self._newest() - self._oldest() >= pre,
                              request.pre_s + start_s, f"{request.pre_s} s of samples")
            chunks = self._buffer.chunks
            newest = self._newest()
            # Never reach back into the window collected last, nor before start_after's.
            self._arm_index = max(newest - pre, self._last_fall, self._not_before)
            # The last sample received was taken before arm() returned, so before the DUT
            # ran: the window is the first rise after it (an earlier window inside pre_s is
            # not mistaken for it), and after start_after's sample (a stream lagging behind
            # windows the host made unrecorded).
            self._scan_from = max(newest - 1 if chunks else newest, self._not_before)
            self._arm = request
            self._buffer.overflow = 0

    def _arm_stream(self, pre_s: float, window_s: float, post_s: float, start_s: float,
                    windows: int = 1) -> None:
        """``arm()`` of a stream for ``windows`` trigger windows: refuse a record the armed
        buffer (``buffer_s``) cannot hold or a ``pre_s`` beyond the history kept
        (``history_s``), each naming the setting to raise, then :meth:`_mark` (``start_s``,
        s: its bound on a stream just started)."""
        request = ArmRequest(pre_s, window_s, post_s, windows)
        if request.total_s > self._buffer_s:
            raise InstrumentError(f"{self.source}: a {request.total_s:.1f} s record does not "
                                  f"fit the {self._buffer_s} s buffer; raise buffer_s")
        if pre_s > self._history_s:
            raise InstrumentError(f"{self.source}: pre_s {pre_s} s exceeds the history kept "
                                  f"({self._history_s} s); raise history_s")
        self._mark(request, start_s)

    def _window_deadlines(self, newest: int, timeout_s: float
                          ) -> tuple[tuple[int, str], tuple[int, str]]:
        """The absolute sample by which the armed record must be complete, and how an error
        says it (call with the lock held), before the window and once it is under way:
        ``timeout_s`` (s) of stream past ``newest``; before the window sooner, ``post_s``
        past the device's sample now, with the stated ``stream_lag_s`` and
        :data:`ARRIVAL_MARGIN_S` (the DUT replied: a window it made ended before). A window
        under way at that bound (:attr:`~energyrig.instruments.triggerscan.TriggerScan.under_way`:
        risen since the arm and still high, or the record's last window fallen and its
        ``post_s`` not all there) means the stream is later than the bound took it to be (a
        host late by the same from its first read looks on time): the rest of the record is
        on the way, and the wait goes on within ``timeout_s``."""
        by_timeout = (newest + round(timeout_s * self._rate_hz),
                      f"within {timeout_s:.3g} s of arming")
        now = self._arrivals.index_at(self._now())
        assert self._arm is not None
        past_s = self.limits().stream_lag_s + ARRIVAL_MARGIN_S + self._arm.post_s
        by_reply = None if now is None else now + round(past_s * self._rate_hz)
        if by_reply is None or by_reply >= by_timeout[0]:
            return by_timeout, by_timeout
        return (by_reply, f"within {past_s:.3g} s of stream past the DUT's reply"), by_timeout

    def _collect_window(self, timeout_s: float, trigger_bit: int, min_pulse_s: float,
                        trigger: str) -> tuple[Chunk, ...]:
        """``collect()``'s wait: the chunks from the mark to ``post_s`` after the first
        trigger window after it (the last of the ``windows`` armed for; on logic bit
        ``trigger_bit``, named ``trigger`` in errors; pulses shorter than ``min_pulse_s``, s,
        ignored). Disarms.

        ``timeout_s`` (s) counts twice, from the stream's progress, never from the call (a
        loaded host reads the stream late, in bursts): the record must complete within
        ``timeout_s`` of *stream* past the newest sample received at the call (the device's
        own time: a stream that runs on without the window is a timeout, however slowly it
        arrives), and the stream must not stall for ``timeout_s`` of host time
        (:class:`~energyrig.instruments.progress.ProgressBound`, restarted by each new
        sample). A record reaching past :meth:`_suspect_from` is waited on for
        :meth:`_settle_s` more.

        Called after the DUT replied, so after every window it made: the stream that holds
        ``post_s`` past the device's sample at the call holds the window, or there is none
        (an empty window shorter than a sample). That ends the wait sooner than
        ``timeout_s``, whose margin is for a host that reads the stream late
        (:meth:`_window_deadlines`).

        Raises
        ------
        InstrumentError
            Not armed, the buffer overflowed, the stream stopped, failed or ran on without a
            window (:class:`~energyrig.errors.NoTriggerWindow` when the trigger never rose).
        """
        if self._arm is None:
            raise InstrumentError(f"{self.source}: collect() without arm()")
        post = round(self._arm.post_s * self._rate_hz)
        scan = TriggerScan(trigger_bit, round(min_pulse_s * self._rate_hz),
                           start=self._scan_from, post=post, windows=self._arm.windows)
        stalled = ProgressBound(timeout_s, clock=self._now)
        settle_deadline = self._now() + self._settle_s()
        try:
            with self._cond:
                newest = self._newest()
                before, under_way = self._window_deadlines(newest, timeout_s)
                while True:
                    self._check_alive()
                    self._buffer.check_overflow(self.source, self._buffer_s)
                    scan.feed(self._buffer)
                    newest = self._progress(newest, stalled)
                    if scan.complete:
                        assert scan.end is not None
                        suspect = self._suspect_from()
                        if suspect is None or suspect >= scan.end:
                            break
                        if self._now() > settle_deadline:
                            break  # the family flags it: the lag never settled
                    else:
                        settle_deadline = self._now() + self._settle_s()
                        deadline, within = under_way if scan.under_way else before
                        if newest >= deadline and not scan.settle_for_fewer():
                            raise scan.timeout(self.source, trigger, within)
                        if stalled.expired():
                            raise self._window_stalled(scan, timeout_s, trigger, newest)
                    self._cond.wait(0.1)
                chunks = self._buffer.since(self._arm_index)
        finally:
            self._arm = None
        assert scan.fall is not None and scan.end is not None
        self._last_fall = scan.fall
        return cut_at(chunks, scan.end)
