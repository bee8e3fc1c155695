"""Losses a PPK2's 6-bit counter cannot count, found against the host's clock.

The counter tells a loss only modulo 64: a device whose buffer overflowed while the host did
not read (a loaded host, a USB hiccup) may drop a second of samples and show a jump of a few
counts. The samples received so far are counted against the host's elapsed time at the
nominal rate instead: the host's lag behind the stream (samples it should have, less the
samples it has, counted losses included) stays within the transport's jitter of its lowest
value, and a loss raises it for good, while a late read raises it only until the backlog
arrives. :class:`StreamClock` follows that lag read by read; a lag more than ``jitter_s``
above its floor at every read for ``confirm_s`` is a loss of that many samples (a multiple
of 64, since the counter counted the rest: rounded down), and the caller re-synchronises its
index by it (:meth:`~energyrig.instruments.ppk2.decode.Ppk2Decoder.add_loss`). The lowest lag
of a span is known to a few tens of samples on a loaded host, so for ``refine_s`` after a
loss the lag's lowest excess is followed, and a remaining 64 or more is a second, smaller
loss: the records after it are then on time to the sample. The records from the loss to the
end of its refinement are off by it and are flagged ``stream_loss``.

The floor may rise by ``drift`` (relative) to follow a device clock slower than the host's
(a crystal is good to about 50 ppm). Pure arithmetic per read, no I/O: the driver calls it
from its reader thread with ``time.monotonic()``. SI units (s, Hz); indices in samples.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: The counter's modulus: a loss it saw is counted modulo this.
COUNTER_MODULUS = 64


@dataclass(frozen=True)
class StreamLoss:
    """A loss found against the host's clock.

    Attributes
    ----------
    samples:
        Samples lost beyond what the counter counted.
    first_index, end_index:
        The samples received between the last read on time and the confirmation (absolute
        indices as received, before the re-synchronisation): the loss lies before or among
        them, so their indices are off by ``samples``.
    """

    samples: int
    first_index: int
    end_index: int


class StreamClock:
    """The host's lag behind a stream, read by read (module docs).

    Parameters
    ----------
    rate_hz:
        The stream's nominal sample rate, Hz.
    jitter_s:
        The transport's jitter: a lag this far above the floor is suspect, s.
    confirm_s:
        How long the lag must stay suspect to be a loss, s.
    refine_s:
        How long the lag is followed after a loss to find what its first estimate missed, s.
    drift:
        How fast the floor may rise, relative (s per s).
    """

    def __init__(self, rate_hz: float, *, jitter_s: float = 0.05, confirm_s: float = 1.0,
                 refine_s: float = 2.0, drift: float = 1e-4) -> None:
        if not (rate_hz > 0 and jitter_s > 0 and confirm_s > 0 and refine_s > 0
                and drift >= 0):
            raise ValueError("StreamClock needs rate_hz, jitter_s, confirm_s, refine_s > 0 "
                             "and drift >= 0")
        self.rate_hz = rate_hz
        self.jitter = jitter_s * rate_hz
        self.confirm_s = confirm_s
        self.refine_s = refine_s
        self.drift = drift
        self._refine_until: float | None = None
        self._t0: float | None = None
        self._t_last = 0.0
        self._floor = 0.0
        self._on_time_index = 0
        self._since: float | None = None
        self._least = 0.0

    @property
    def settle_s(self) -> float:
        """The longest a suspect lag takes to be settled (confirmed and refined), s."""
        return self.confirm_s + self.refine_s

    @property
    def suspect_from(self) -> int | None:
        """Absolute index after which a loss may lie, not settled yet (a lag suspect, or a
        loss still being refined)."""
        return None if self._since is None and self._refine_until is None else self._on_time_index

    def update(self, t_s: float, end_index: int) -> StreamLoss | None:
        """The stream's samples before ``end_index`` (absolute, counted losses included) have
        arrived by host time ``t_s``; a loss when one is confirmed now."""
        if self._t0 is None:
            self._t0, self._t_last = t_s, t_s
            self._floor = -float(end_index)
            self._on_time_index = end_index
            return None
        lag = (t_s - self._t0) * self.rate_hz - end_index
        # The floor follows a slow device clock, but holds while a loss is weighed (the
        # drift of a few seconds would bias the loss's estimate by tens of samples).
        settled = self._since is None and self._refine_until is None
        rise = self.drift * self.rate_hz * (t_s - self._t_last) if settled else 0.0
        self._floor = min(self._floor + rise, lag)
        self._t_last = t_s
        excess = lag - self._floor
        if self._refine_until is not None:
            return self._refine(t_s, end_index, excess)
        if excess <= self.jitter:
            if self._since is not None:
                log.debug("stream clock: a late read, not a loss (lag back to %.0f samples)",
                          excess)
            self._since = None
            self._on_time_index = end_index
            return None
        if self._since is None:
            self._since, self._least = t_s, excess
        self._least = min(self._least, excess)
        if t_s - self._since < self.confirm_s:
            return None
        samples = int(self._least // COUNTER_MODULUS) * COUNTER_MODULUS
        self._since = None
        self._refine_until, self._least = t_s + self.refine_s, math.inf
        return StreamLoss(samples, self._on_time_index, end_index)

    def _refine(self, t_s: float, end_index: int, excess: float) -> StreamLoss | None:
        """After a loss: the lowest excess until the refinement ends; what remains of the
        loss then (whole multiples of 64)."""
        self._least = min(self._least, excess)
        if t_s < self._refine_until:  # type: ignore[operator]
            return None
        self._refine_until = None
        first, self._on_time_index = self._on_time_index, end_index
        samples = round(self._least / COUNTER_MODULUS) * COUNTER_MODULUS
        if samples <= 0:
            return None
        log.debug("stream clock: %d samples more of the last loss", samples)
        return StreamLoss(samples, first, end_index)


__all__ = ["COUNTER_MODULUS", "StreamClock", "StreamLoss"]
