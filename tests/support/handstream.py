"""A stream whose samples a test hands in (:class:`HandStream`): what the streaming base
decides from them, with no instrument, no thread and, on a fake clock, no wait."""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from energyrig.capture import Chunk
from energyrig.instruments.base import Limits
from energyrig.instruments.streaming import StreamAcquisition

RATE_HZ = 100e3


class HandStream(StreamAcquisition):
    """A stream at :data:`RATE_HZ` whose samples the test hands in (the trigger on bit 0),
    on the host clock ``clock`` (s), stated ``lag_s`` (s) behind real time."""

    product = "hand stream"

    def __init__(self, clock: Callable[[], float] = time.monotonic, lag_s: float = 0.0) -> None:
        super().__init__(RATE_HZ, history_s=1.0, buffer_s=10.0, clock=clock)
        self.received = 0
        self.lag_s = lag_s

    def limits(self) -> Limits:
        """A stream at :data:`RATE_HZ`, ``lag_s`` behind real time."""
        return Limits(sample_rate_hz=RATE_HZ, max_record_s=None, stream_lag_s=self.lag_s)

    @property
    def source(self) -> str:
        return "hand:stream"

    def feed(self, samples: int, high: tuple[int, int] | None = None) -> None:
        """The next ``samples`` samples, the trigger high over ``high`` (absolute)."""
        logic = np.zeros(samples, dtype=np.uint8)
        if high is not None:
            index = np.arange(self.received, self.received + samples)
            logic[(index >= high[0]) & (index < high[1])] = 1
        self._store(Chunk(self.received, 1 / RATE_HZ, np.full(samples, 1e-3), 3.0, logic))
        self.received += samples

    def record(self, timeout_s: float = 1.0) -> tuple[Chunk, ...]:
        """``collect()``'s wait for the window on bit 0 (``timeout_s``, s)."""
        return self._collect_window(timeout_s, 0, 1 / RATE_HZ, "D0")
