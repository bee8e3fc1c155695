"""The chunks a streaming acquisition keeps between ``arm()`` and ``collect()``:
:class:`StreamBuffer`.

Shared by the streaming acquisitions (PPK2, Joulescope). While not armed it keeps about
``history`` samples (what ``arm(pre_s=...)`` can reach back); while armed up to ``capacity``,
and the older chunks it must drop then are counted in :attr:`StreamBuffer.overflow` (the
armed window lost them). Not thread-safe: the acquisition holds its lock around every call.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from energyrig.capture import Chunk
from energyrig.errors import InstrumentError


def first_at_or_after(chunk: Chunk, index: int) -> int:
    """Received position of the first sample of ``chunk`` at or after absolute ``index``."""
    return int(np.searchsorted(chunk.indices(), index, side="left"))


class StreamBuffer:
    """Received chunks in time order, trimmed by :meth:`push`."""

    def __init__(self) -> None:
        self.chunks: deque[Chunk] = deque()
        self.buffered = 0
        self.overflow = 0

    def clear(self) -> None:
        self.chunks.clear()
        self.buffered = 0

    def push(self, chunk: Chunk, history: float, capacity: float | None) -> int:
        """Append ``chunk``; drop the oldest chunks beyond ``history`` samples (``capacity``
        ``None``: not armed) or beyond ``capacity`` (armed). Returns the samples dropped
        while armed (also added to :attr:`overflow`)."""
        self.chunks.append(chunk)
        self.buffered += len(chunk)
        lost = 0
        while len(self.chunks) > 1:
            oldest = self.chunks[0]
            if capacity is None:
                if self.buffered - len(oldest) < history:
                    break
            elif self.buffered <= capacity:
                break
            else:
                lost += len(oldest)
            self.chunks.popleft()
            self.buffered -= len(oldest)
        self.overflow += lost
        return lost

    def check_overflow(self, source: str, buffer_s: float) -> None:
        """Raise when the armed window lost samples to a full buffer of ``buffer_s``."""
        if self.overflow:
            raise InstrumentError(f"{source}: {self.overflow} samples of the armed window were "
                                  f"discarded because the buffer ({buffer_s} s) was full; "
                                  "raise buffer_s or shorten the batch")

    def since(self, index: int) -> list[Chunk]:
        """Buffered samples from absolute ``index`` on (the first chunk sliced), the newest
        chunks looked at first."""
        new: list[Chunk] = []
        for chunk in reversed(self.chunks):
            if chunk.end_index <= index:
                break
            new.append(chunk)
        new.reverse()
        if new and new[0].start_index < index:
            new[0] = new[0].sliced(first_at_or_after(new[0], index), len(new[0]))
        return new
