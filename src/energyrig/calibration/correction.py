"""The correction stage of the point pipeline, built from a calibration.

An instrument reports the current ``i_m(t) = gain · i(t − skew) + offset`` (plus noise): its
zero is off by ``offset_a``, its scale by ``gain`` (measured / true), and its current channel
lags the trigger channel by ``skew_s``. :class:`CurrentCorrection` undoes the three on a record,
chunk by chunk, with numpy over whole arrays::

    i(t) = (i_m(t + skew) − offset) / gain

The shift reads each chunk's current ``skew_s`` later by linear interpolation between
samples, taking the few samples it needs from the neighbouring chunks (the first and last
samples of the record are held beyond its ends). Positions count received samples, so
across a gap of lost samples the shift is off by the samples lost (they are flagged anyway).

The corrected record carries the values applied (``corrections``, which each window
records) and, when the calibration is incomplete or absent, the flag ``uncalibrated``.
SI units: A, s.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from energyrig.calibration.store import Calibration
from energyrig.capture import Chunk
from energyrig.domain import UNCALIBRATED
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
    flags:
        Added to every record (``uncalibrated`` when the calibration is incomplete).
    """

    offset_a: float = 0.0
    gain: float = 1.0
    skew_s: float = 0.0
    flags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (self.gain > 0 and math.isfinite(self.gain) and math.isfinite(self.offset_a)
                and math.isfinite(self.skew_s)):
            raise ValueError("CurrentCorrection: need a finite gain > 0, offset and skew, "
                             f"got {self}")

    @classmethod
    def of(cls, calibration: Calibration) -> CurrentCorrection:
        """The correction of a calibration: the quantities it has (the identity for the
        others), flagged ``uncalibrated`` unless it is complete."""
        v = calibration.values
        return cls(offset_a=v["offset_a"].value if "offset_a" in v else 0.0,
                   gain=v["gain"].value if "gain" in v else 1.0,
                   skew_s=v["skew_s"].value if "skew_s" in v else 0.0,
                   flags=() if calibration.complete else (UNCALIBRATED,))

    @property
    def applied(self) -> tuple[tuple[str, float], ...]:
        """The values applied, as each window records them."""
        return (("offset_a", self.offset_a), ("gain", self.gain), ("skew_s", self.skew_s))

    def __call__(self, record: RecordedCapture) -> RecordedCapture:
        """``record`` with offset, gain and skew taken out of its current."""
        chunks = record.chunk_list
        currents: Sequence[F64] = [c.current_a for c in chunks]
        if self.skew_s and chunks:
            currents = shift_current(chunks, self.skew_s / chunks[0].period_s)
        out = tuple(replace(c, current_a=(i - self.offset_a) / self.gain)
                    for c, i in zip(chunks, currents, strict=True))
        return replace(record, chunk_list=out, flags=(*record.flags, *self.flags),
                       corrections=self.applied)


def shift_current(chunks: Sequence[Chunk], shift: float) -> list[F64]:
    """Each chunk's current read ``shift`` samples later: ``out[j] = i(j + shift)``, by
    linear interpolation over the received samples of the whole sequence (beyond its ends,
    its first and last samples).

    Parameters
    ----------
    chunks:
        Consecutive chunks of one record.
    shift:
        Samples (fractional; negative reads earlier ones).
    """
    lengths = np.array([len(c) for c in chunks], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)))
    total = int(starts[-1])
    margin = math.ceil(abs(shift)) + 1
    out: list[F64] = []
    for k, chunk in enumerate(chunks):
        if not len(chunk):
            out.append(chunk.current_a)
            continue
        lo = max(0, int(starts[k]) - margin)
        hi = min(total, int(starts[k + 1]) + margin)
        first = int(np.searchsorted(starts, lo, side="right")) - 1
        last = int(np.searchsorted(starts, hi, side="left"))
        context = np.concatenate([c.current_a for c in chunks[first:last]])
        context = context[lo - int(starts[first]):hi - int(starts[first])]
        positions = np.arange(starts[k], starts[k + 1], dtype=np.float64) + shift
        out.append(np.interp(positions, np.arange(lo, hi, dtype=np.float64), context))
    return out
