"""Finding the first complete trigger window in a stream of chunks: :class:`TriggerScan`.

Shared by the streaming acquisitions (PPK2, Joulescope): each feeds the chunks it received
after ``arm()`` and waits until :attr:`TriggerScan.fall` is known.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from energyrig.capture import Chunk
from energyrig.errors import InstrumentError, NoTriggerWindow
from energyrig.instruments.streambuffer import StreamBuffer, first_at_or_after


def absolute_index(chunk: Chunk, j: int) -> int:
    """Absolute sample index of received sample ``j`` of ``chunk``."""
    gaps = chunk.gaps
    lost = int(gaps[gaps[:, 0] <= j, 1].sum()) if len(gaps) else 0
    return chunk.start_index + j + lost


class TriggerScan:
    """Finds the first complete trigger window after the arm point (or the first
    ``windows`` of them: :attr:`fall` is then the last one's fall), chunk by chunk.

    A level counts once it has lasted ``min_run`` received samples, so a single corrupted
    logic byte neither starts a window nor ends one. One Python step per run of equal
    levels, never per sample. The record is :attr:`complete` once the stream holds ``post``
    samples past the fall (:attr:`end`); :meth:`feed` scans a stream buffer's new samples
    from absolute index ``start`` on.
    """

    def __init__(self, bit: int, min_run: int, start: int = 0, post: int = 0,
                 windows: int = 1) -> None:
        self.mask = np.uint8(1 << bit)
        self.min_run = max(1, min_run)
        self.post = post
        self.windows = windows
        self.falls = 0                    # windows that have fallen so far
        self.last_fall: int | None = None  # absolute index of the latest of them
        self.scanned = start              # absolute index of the next sample to scan
        self.level: bool | None = None    # settled level
        self.run_level: bool | None = None
        self.run_start = 0                # absolute index of the current run's first sample
        self.run_len = 0
        self.rise: int | None = None      # absolute index of the first high sample
        self.fall: int | None = None      # absolute index of the first low sample after it

    def scan(self, chunk: Chunk) -> None:
        if self.fall is not None or chunk.logic is None or not len(chunk):
            return
        high = (chunk.logic & self.mask) != 0
        if self.level is None:
            self.level = bool(high[0])  # the sample before the DUT ran
        change = np.flatnonzero(high[1:] != high[:-1]) + 1
        for start, end in zip(np.concatenate(([0], change)), np.concatenate((change, [len(high)]))):
            level = bool(high[start])
            if level == self.run_level:
                self.run_len += int(end - start)
            else:
                self.run_level, self.run_len = level, int(end - start)
                self.run_start = absolute_index(chunk, int(start))
            if self.run_len >= self.min_run and level != self.level:
                self.level = level
                if level and self.rise is None:
                    self.rise = self.run_start
                elif not level and self.rise is not None:
                    self.falls += 1
                    self.last_fall = self.run_start
                    if self.falls >= self.windows:
                        self.fall = self.run_start
                        return

    def feed(self, buffer: StreamBuffer) -> None:
        """Scan the samples ``buffer`` received since the last call."""
        for chunk in buffer.since(self.scanned):
            self.scan(chunk)
            self.scanned = chunk.end_index

    def settle_for_fewer(self) -> bool:
        """A record armed for several windows whose stream ran on without the rest ends
        ``post`` after the last window that fell (the caller flags the missing ones); True
        when there was one."""
        if self.windows > 1 and self.fall is None and self.last_fall is not None:
            self.fall = self.last_fall
            return True
        return False

    @property
    def end(self) -> int | None:
        """Absolute index just past the record (``post`` samples after the fall), once
        the trigger has fallen."""
        return None if self.fall is None else self.fall + self.post

    @property
    def complete(self) -> bool:
        """The window and ``post`` samples after it have been scanned."""
        return self.end is not None and self.scanned >= self.end

    @property
    def under_way(self) -> bool:
        """A window has begun since the scan started: risen and still high, or the record's
        last window fallen (a trigger high from the scan's first sample on is none)."""
        return self.fall is not None or (self.rise is not None and bool(self.level))

    @property
    def seen(self) -> str:
        """What the scan saw of the window so far, in words."""
        if self.rise is None:
            return "the trigger never rose"
        if self.fall is None and self.windows > 1:
            return f"{self.falls} of the {self.windows} windows fell"
        if self.fall is None:
            return "the trigger rose but did not fall"
        return "the trigger fell but the record's post_s did not arrive"

    def timeout(self, source: str, trigger: str, within: str) -> InstrumentError:
        """The error of a collect that waited in vain for a window on ``trigger`` (a
        channel's name) ``within`` a span (``"within 1 s of arming"``):
        :class:`NoTriggerWindow` when the trigger never rose."""
        error = NoTriggerWindow if self.rise is None else InstrumentError
        return error(f"{source}: no complete trigger window {within} ({self.seen} on "
                     f"{trigger})")


def cut_at(chunks: Sequence[Chunk], end: int) -> tuple[Chunk, ...]:
    """``chunks`` up to (not including) absolute sample index ``end``, empty ones left out."""
    kept = [c for c in chunks if c.start_index < end]
    if kept and kept[-1].end_index > end:
        kept[-1] = kept[-1].sliced(0, first_at_or_after(kept[-1], end))
    return tuple(c for c in kept if len(c))
