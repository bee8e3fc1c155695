"""Joulescope samples into :class:`~energyrig.capture.Chunk`: shared by the JLS reader and the
live back-end, plus the aligner that joins the driver's per-signal stream messages.

The Joulescope marks a sample it lost as NaN (in a JLS file and in its stream); such a sample
is flagged ``corrupt`` and counts as 0 A.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk, widened


def to_chunk(start: int, period_s: float, current: npt.NDArray[np.floating],
             supply: npt.NDArray[np.floating] | float, bits: npt.NDArray[np.uint8],
             power: bool = False, keep_float32: bool = False) -> Chunk:
    """A chunk of ``current`` (A; W with ``power``: then I = P / V), ``supply`` (V) and the
    trigger ``bits`` (0/1, on bit 0), NaN samples flagged ``corrupt``. The arrays are not
    modified.

    The signals come as the instrument gives them (float32): each is converted to float64
    once (kept as it is with ``keep_float32``, for the energy kernel alone; a power is
    divided in float64 all the same), after one min and one max over its float32 samples,
    which tell whether it holds a NaN or an infinity (the mask is then built) and are the
    chunk's ``bounds`` (exact: float32 to float64 is), so the plausibility check need not
    pass over it again."""
    bounds: dict[str, tuple[float, float]] = {}
    arrays: dict[str, npt.NDArray[np.floating] | float] = {"current_a": current,
                                                           "voltage_v": supply}
    bad = None
    for name, values in arrays.items():
        if isinstance(values, np.ndarray):
            arrays[name], known = widened(values, keep_float32 and not power)
            if known is not None:
                bounds[name] = known
            else:
                mask = ~np.isfinite(values)
                bad = mask if bad is None else bad | mask
    current, supply = arrays["current_a"], arrays["voltage_v"]  # type: ignore[assignment]
    if bad is not None:
        bounds.clear()  # the NaN become 0: the other signal's bounds too may change
        current = np.where(bad, 0.0, current)
        if isinstance(supply, np.ndarray):
            supply = np.where(bad, 0.0, supply)
    if power:
        bounds.pop("current_a", None)
        with np.errstate(divide="ignore", invalid="ignore"):
            current = np.where(supply != 0, current / supply, 0.0)
    return Chunk(start_index=start, period_s=period_s, current_a=current,  # type: ignore[arg-type]
                 voltage_v=supply, logic=bits.astype(np.uint8, copy=False), corrupt=bad,
                 bounds=bounds or None)


class StreamAligner:
    """Joins current, voltage and trigger messages into chunks of the samples all three hold.

    Each signal streams from its own first sample; chunks start where all have begun, sample
    0 being that first common sample. A message that starts before the end of what a signal
    holds replaces the overlap (a u1 message's last byte is padded); one that starts after it
    leaves a hole, filled as lost (NaN, trigger low).
    """

    def __init__(self, period_s: float) -> None:
        self.period_s = period_s
        self._base: list[int | None] = [None, None, None]
        self._held: list[npt.NDArray[np.generic]] = [np.zeros(0)] * 3
        self._origin: int | None = None

    def feed(self, which: int, start: int, data: npt.NDArray[np.generic]) -> Chunk | None:
        """Add ``data`` of signal ``which`` (0 current, 1 voltage, 2 trigger) from output
        sample ``start``; return the chunk now complete, if any."""
        base, held = self._base[which], self._held[which]
        if base is None:
            base, held = start, data[:0]
        end = base + len(held)
        if start < end:
            held = held[:max(0, start - base)]
            data = data[max(0, base - start):]
        elif start > end:
            fill = np.full(start - end, np.nan if which < 2 else 0, dtype=data.dtype)
            held = np.concatenate([held, fill])
        self._base[which], self._held[which] = base, np.concatenate([held, data])
        return self._emit()

    def _emit(self) -> Chunk | None:
        if any(b is None for b in self._base):
            return None
        bases: list[int] = self._base  # type: ignore[assignment]
        lo = max(bases)
        hi = min(b + len(h) for b, h in zip(bases, self._held))
        if self._origin is None:
            self._origin = lo
        if hi <= lo:
            return None
        parts = [h[lo - b:hi - b] for b, h in zip(bases, self._held)]
        self._held = [h[hi - b:] for b, h in zip(bases, self._held)]
        self._base = [hi, hi, hi]
        return to_chunk(lo - self._origin, self.period_s, parts[0], parts[1], parts[2])
