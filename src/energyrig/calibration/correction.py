"""The correction stage of the point pipeline, built from a calibration.

An instrument reports the current ``i_m(t) = gain · i(t − skew) + offset`` (plus noise): its
zero is off by ``offset_a``, its scale by ``gain`` (measured / true), and its current channel
lags the trigger channel by ``skew_s``. :class:`CurrentCorrection` undoes the three on a record,
chunk by chunk, with numpy over whole arrays::

    i(t) = (i_m(t + skew) − offset) / gain

An instrument with current ranges (a PPK2) has an offset and a gain per range
(``range_offset_a``, ``range_gain``): each sample is corrected with those of the range it was
measured in (``Chunk.current_range``, by numpy indexing), before the shift, since the range
belongs to the sample as measured.

The shift reads each chunk's current ``skew_s`` later by linear interpolation between
samples, taking the few samples it needs from the neighbouring chunks (the first and last
samples of the record are held beyond its ends). Positions count received samples, so
across a gap of lost samples the shift is off by the samples lost (they are flagged anyway).

The corrected record carries the values applied (``corrections``, which each window
records) and, when the calibration is incomplete or absent, the flag ``uncalibrated``. The
values include the window overhead of the board's firmware build (``overhead_s``,
``overhead_j``), which is not in the samples: the pipeline takes it out of each window it
finds (:func:`energyrig.energy.figures.take_out_overhead`). A capture read from a file is corrected
as it streams (:meth:`CurrentCorrection.chunks`), in bounded memory.
SI units: A, s, J.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from energyrig.calibration.store import Calibration, Measured
from energyrig.capture import Chunk
from energyrig.flags import UNCALIBRATED
from energyrig.instruments.base import RecordedCapture

log = logging.getLogger(__name__)

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class CurrentCorrection:
    """Offset, gain and skew taken out of a record (a :data:`energyrig.rig.pipeline.Correction`).

    Attributes
    ----------
    offset_a:
        Offset of the current channel, A (subtracted).
    gain:
        Gain of the current channel, measured / true (divided out; > 0).
    skew_s:
        Delay of the current channel behind the trigger channel, s (negative: it leads).
    overhead_s, overhead_j:
        The fixed time (s) and energy above the idle baseline (J) of an empty trigger window
        on the board's firmware build, taken out of each window.
    range_offset_a, range_gain:
        Offset (A) and gain of each current range 0, 1, ..., for the samples measured in it
        (empty: ``offset_a`` and ``gain`` for every range; a range beyond the table takes
        them too).
    flags:
        Added to every record (``uncalibrated`` when the calibration is incomplete).
    """

    offset_a: float = 0.0
    gain: float = 1.0
    skew_s: float = 0.0
    overhead_s: float = 0.0
    overhead_j: float = 0.0
    range_offset_a: tuple[float, ...] = ()
    range_gain: tuple[float, ...] = ()
    flags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (self.gain > 0 and all(g > 0 for g in self.range_gain) and all(map(
                math.isfinite, (self.gain, self.offset_a, self.skew_s, self.overhead_s,
                                self.overhead_j, *self.range_offset_a, *self.range_gain)))):
            raise ValueError("CurrentCorrection: need a finite gain > 0, offset, skew and "
                             f"overhead, got {self}")

    @classmethod
    def of(cls, calibration: Calibration) -> CurrentCorrection:
        """The correction of a calibration: the quantities it has (the identity for the
        others), flagged ``uncalibrated`` unless it is complete."""
        return cls.from_values(calibration.values,
                               flags=() if calibration.complete else (UNCALIBRATED,))

    @classmethod
    def from_values(cls, v: Mapping[str, Measured], flags: tuple[str, ...] = ()
                    ) -> CurrentCorrection:
        """The correction of the quantities ``v`` holds (the identity for the others), each
        range's offset and gain where they are given per range."""
        given: dict[str, Any] = {q: v[q].value for q in ("offset_a", "gain", "skew_s",
                                                         "overhead_s", "overhead_j") if q in v}
        n = 1 + max((r for q in ("offset_a", "gain") if q in v for r in v[q].ranges),
                    default=-1)
        if n:
            given.update({f"range_{q}": v[q].table(n) for q in ("offset_a", "gain") if q in v})
        return cls(**given, flags=flags)

    @property
    def applied(self) -> tuple[tuple[str, float], ...]:
        """The values applied, as each window records them."""
        per_range = tuple((f"{name}[{r}]", x) for name, table in (
            ("offset_a", self.range_offset_a), ("gain", self.range_gain))
            for r, x in enumerate(table))
        return (("offset_a", self.offset_a), ("gain", self.gain), ("skew_s", self.skew_s),
                ("overhead_s", self.overhead_s), ("overhead_j", self.overhead_j), *per_range)

    def __call__(self, record: RecordedCapture) -> RecordedCapture:
        """``record`` with offset, gain and skew taken out of its current."""
        return replace(record, chunk_list=tuple(self.chunks(record.chunk_list)),
                       flags=(*record.flags, *self.flags), corrections=self.applied)

    def chunks(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        """Consecutive chunks of one capture with offset, gain and skew taken out, as they
        come: each is yielded once the chunks after it hold the samples its shift reads
        (a few: the skew's), so a long capture is corrected in bounded memory."""
        held: list[Chunk] = []
        done = 0  # chunks of `held` already yielded
        margin = 0
        for chunk in chunks:
            if not held:
                margin = math.ceil(abs(self.skew_s) / chunk.period_s) + 1
            held.append(self._linear(chunk))
            while done < len(held) and sum(len(c) for c in held[done + 1:]) >= margin:
                yield self._corrected(held, done)
                done += 1
            while done > 1 and sum(len(c) for c in held[1:done]) >= margin:
                held.pop(0)
                done -= 1
        for k in range(done, len(held)):
            yield self._corrected(held, k)

    def _linear(self, chunk: Chunk) -> Chunk:
        """``chunk`` with the offset and gain of each sample's range taken out."""
        offset: float | F64 = self.offset_a
        gain: float | F64 = self.gain
        ranges = chunk.current_range
        if ranges is not None and len(chunk):
            offset = _per_sample(self.range_offset_a, self.offset_a, ranges)
            gain = _per_sample(self.range_gain, self.gain, ranges)
        return replace(chunk, current_a=(chunk.current_a - offset) / gain, bounds=None)

    def _corrected(self, context: Sequence[Chunk], k: int) -> Chunk:
        """Chunk ``k`` of the consecutive ``context`` (offset and gain taken out) shifted."""
        chunk = context[k]
        if self.skew_s and len(chunk):
            return replace(chunk, current_a=shifted(context, k, self.skew_s / chunk.period_s),
                           bounds=None)
        return chunk


def _per_sample(table: tuple[float, ...], default: float, ranges: npt.NDArray[np.uint8]
                ) -> float | F64:
    """Each sample's value of ``table`` by its range (``default`` beyond it, or without a
    table)."""
    if not table:
        return default
    full = np.full(max(len(table), int(ranges.max()) + 1), default)
    full[:len(table)] = table
    return full[ranges]


def shifted(chunks: Sequence[Chunk], k: int, shift: float) -> F64:
    """Chunk ``k``'s current read ``shift`` samples later: ``out[j] = i(j + shift)``, by
    linear interpolation over the received samples of the whole sequence (beyond its ends,
    its first and last samples).

    Parameters
    ----------
    chunks:
        Consecutive chunks of one record.
    k:
        The chunk to shift.
    shift:
        Samples (fractional; negative reads earlier ones).
    """
    chunk = chunks[k]
    if not len(chunk):
        return chunk.current_a
    lengths = np.array([len(c) for c in chunks], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)))
    total = int(starts[-1])
    margin = math.ceil(abs(shift)) + 1
    lo = max(0, int(starts[k]) - margin)
    hi = min(total, int(starts[k + 1]) + margin)
    first = int(np.searchsorted(starts, lo, side="right")) - 1
    last = int(np.searchsorted(starts, hi, side="left"))
    context = np.concatenate([c.current_a for c in chunks[first:last]])
    context = context[lo - int(starts[first]):hi - int(starts[first])]
    positions = np.arange(starts[k], starts[k + 1], dtype=np.float64) + shift
    return np.interp(positions, np.arange(lo, hi, dtype=np.float64), context)
