"""When a stream stops waiting for a window that is not there (issue 24 part 4): the DUT
replied, so any window it made ended before the collect; the stream that holds ``post_s``
past the device's sample at that moment, with the transport's lag and its margin, holds the
window or there is none (``rig calibrate overhead``'s empty windows are mostly shorter than
a sample). It used to wait ``timeout_s`` of stream past the newest sample received: about
a second per empty window, 40 s of a calibration.

The host clock is the test's, so what is asserted is what the stream decided."""
from __future__ import annotations

import numpy as np
import pytest
from support.handstream import RATE_HZ, HandStream

from energyrig.errors import InstrumentError, NoTriggerWindow
from energyrig.instruments.streaming import ARRIVAL_MARGIN_S, Arrivals

LAG_S = 0.05     # the transport's lag: a sample taken at t reaches the host at t + LAG_S


class HostClock:
    """The host's monotonic clock, s: set by the test, and moving ``step`` at each read
    (a wait the stream does not end then ends by its stall bound, which the test tells
    apart)."""

    def __init__(self) -> None:
        self.t = 0.0
        self.step = 0.0

    def __call__(self) -> float:
        self.t += self.step
        return self.t


class LateStream(HandStream):
    """A stream the host reads late: what :meth:`later` holds arrives once a collect waits,
    a burst at each look."""

    def __init__(self, clock: HostClock) -> None:
        super().__init__(clock, lag_s=LAG_S)
        self.clock = clock
        self._late: list[tuple[float, int, tuple[int, int] | None]] = []

    def later(self, at_s: float, until_s: float, high: tuple[int, int] | None = None) -> None:
        """The device's samples up to device time ``until_s``, read at host time ``at_s``
        in one burst, once a collect waits; the host's clock then runs on."""
        self._late.append((at_s, round(until_s * RATE_HZ), high))

    def _check_alive(self) -> None:
        if self._late:
            at_s, until, high = self._late.pop(0)
            self.clock.t = at_s
            self.feed(until - self.received, high)
            self.clock.step = 1.0


def on_time(stream: LateStream, until_s: float, started_s: float = 0.0) -> None:
    """The stream started at host time ``started_s``, read in 10 ms blocks as each arrives,
    up to host time ``until_s``."""
    while stream.received < round((until_s - started_s - LAG_S) * RATE_HZ):
        stream.clock.t = started_s + stream.received / RATE_HZ + 0.01 + LAG_S
        stream.feed(round(0.01 * RATE_HZ))


def armed(until_s: float) -> LateStream:
    """A stream read on time up to host time ``until_s``, then armed (10 ms each side)."""
    stream = LateStream(HostClock())
    on_time(stream, until_s)
    stream._arm_stream(pre_s=0.01, window_s=0.005, post_s=0.01, start_s=1.0)
    return stream


def test_the_device_sample_at_a_host_time_is_bounded_however_late_the_host_reads() -> None:
    arrivals = Arrivals(RATE_HZ)
    rng = np.random.default_rng(1)
    for taken_s in np.arange(0.01, 20.0, 0.01):       # 20 s of 10 ms blocks
        late = 0.0 if taken_s < 1.0 else rng.uniform(0.0, 0.4)  # on time for 1 s, then late
        now = taken_s + LAG_S + late
        arrivals.arrived(now, round(taken_s * RATE_HZ))
        index = arrivals.index_at(now)
        assert index is not None
        device = now * RATE_HZ
        # never past the device's sample, and behind it by the lag of the reads on time and
        # the floor's allowed drift since the last of them at most
        assert device - index >= LAG_S * RATE_HZ - 1
        assert device - index <= (LAG_S + 1e-4 * max(0.0, now - 1.0)) * RATE_HZ + 1


def test_a_stream_read_late_still_holds_a_window_that_ended_before_the_collect() -> None:
    stream = armed(0.15)
    stream.clock.t = 0.2                          # the DUT made its window and replied
    window = (18_000, 18_500)                     # 180 to 185 ms, device time
    stream.later(at_s=0.45, until_s=0.4, high=window)
    chunks = stream.record(timeout_s=5.0)
    logic = np.concatenate([c.logic for c in chunks])
    index = np.concatenate([c.indices() for c in chunks])
    assert index[logic == 1][0] == window[0] and index[logic == 1][-1] == window[1] - 1


def test_no_window_ends_the_wait_at_the_device_sample_of_the_reply_not_at_the_timeout() -> None:
    stream = armed(0.15)
    stream.clock.t = 0.2                          # the DUT replied: a window too short
    stream.later(at_s=0.45, until_s=0.4)          # past its sample, lag, margin and post_s
    assert 0.4 >= 0.2 + 0.01 + ARRIVAL_MARGIN_S
    # the 5 s of stream the timeout allows would be waited for until the stream stalled
    with pytest.raises(NoTriggerWindow, match="never rose"):
        stream.record(timeout_s=5.0)


def test_a_stream_short_of_the_reply_s_sample_waits_on() -> None:
    stream = armed(0.15)
    stream.clock.t = 0.2
    stream.later(at_s=0.3, until_s=0.25)          # short of the reply's sample + margins
    with pytest.raises(InstrumentError, match="stream stopped") as caught:
        stream.record(timeout_s=5.0)
    assert not isinstance(caught.value, NoTriggerWindow)


def test_a_window_under_way_at_the_reply_s_bound_is_waited_for_to_its_end() -> None:
    """A host late by the same from its first read looks on time, so the reply's bound falls
    short: the stream holds the window's rise there, its fall and ``post_s`` come later. A
    window under way says the stream is late, and the collect waits for the record's end
    within ``timeout_s`` (it used to report a window that rose but did not fall)."""
    stream = armed(0.15)
    stream.clock.t = 0.2                          # the DUT replied
    window = (30_000, 45_000)                     # 300 to 450 ms, device time
    # the bound: the device's sample at the reply, then the lag, the margin and post_s
    bound = round((0.2 - LAG_S) * RATE_HZ) + round((LAG_S + ARRIVAL_MARGIN_S + 0.01) * RATE_HZ)
    assert window[0] < bound < window[1]
    stream.later(at_s=0.45, until_s=0.4, high=window)    # past the bound, the trigger high
    stream.later(at_s=0.51, until_s=0.455, high=window)  # its fall, half of post_s
    stream.later(at_s=0.65, until_s=0.6, high=window)    # the rest
    chunks = stream.record(timeout_s=5.0)
    logic = np.concatenate([c.logic for c in chunks])
    index = np.concatenate([c.indices() for c in chunks])
    assert index[logic == 1][0] == window[0] and index[logic == 1][-1] == window[1] - 1
    assert index[-1] == window[1] + round(0.01 * RATE_HZ) - 1


def test_a_trigger_high_from_before_the_arm_ends_the_wait_at_the_reply_s_bound() -> None:
    """A trigger already high when the record was armed (stuck, or wired to something else)
    is no window of the record's: it does not hold the wait past the reply's bound."""
    stream = LateStream(HostClock())
    on_time(stream, 0.14)
    stream.clock.t = 0.15
    stream.feed(round(0.01 * RATE_HZ), high=(stream.received, 10**9))  # high from here on
    stream._arm_stream(pre_s=0.01, window_s=0.005, post_s=0.01, start_s=1.0)
    stream.clock.t = 0.2                          # the DUT replied
    stream.later(at_s=0.45, until_s=0.4, high=(0, 10**9))  # past the bound, still high
    with pytest.raises(NoTriggerWindow, match="within 0.16 s of stream past the DUT's reply"
                                              r" \(the trigger never rose"):
        stream.record(timeout_s=5.0)


def test_a_stream_started_again_is_timed_from_its_new_samples() -> None:
    stream = LateStream(HostClock())
    on_time(stream, 5.0)
    stream._new_stream()                          # stopped, then started at 60 s
    stream.received = 0
    on_time(stream, 60.5, started_s=60.0)
    index = stream._arrivals.index_at(stream.clock.t)
    assert index is not None and abs(index - stream.received) <= 1
