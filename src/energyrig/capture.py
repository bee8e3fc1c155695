"""The one thing every instrument yields: a capture, delivered as a stream of chunks.

A :class:`Chunk` is a block of consecutive samples at a fixed sample period. A
:class:`Capture` is anything that yields chunks in time order; the energy math
(:mod:`energyrig.energy.windows`) consumes them one at a time, so a capture of any length runs
in bounded memory. This module knows nothing of instruments or of energy.

Units are SI: seconds, amperes, volts.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from energyrig.errors import CaptureError

NO_GAPS: npt.NDArray[np.int64] = np.zeros((0, 2), dtype=np.int64)
NO_GAPS.flags.writeable = False


@dataclass(frozen=True, slots=True)
class Chunk:
    """A block of consecutive samples.

    Attributes
    ----------
    start_index:
        Absolute index of the first sample in the capture's time base. Lost samples count:
        if an instrument reports that 5 samples were lost, the indices after the gap jump by 5.
    period_s:
        Sample period in seconds (the same for every chunk of a capture).
    current_a:
        Current in amperes, float64, one value per sample (float32 as the file holds it
        when its reader was asked so: ``CaptureOptions.keep_float32``).
    voltage_v:
        Supply voltage in volts: a float64 array of the same length (float32 likewise), or
        a single float for a regulated supply.
    logic:
        Logic bits D0..D7 of each sample as uint8 (bit k = channel Dk), or ``None`` when the
        capture has no logic channel.
    saturated:
        Boolean mask of samples at the end of the instrument's range, or ``None`` if the
        instrument cannot tell.
    current_range:
        The instrument's current range of each sample as uint8 (a PPK2: 0..4, 0 the most
        sensitive), or ``None`` for an instrument with one range.
    at_floor:
        Boolean mask of samples at the bottom of the instrument's lowest range (a PPK2: ADC
        code 0 in range 0, where a current below zero reads), or ``None``.
    corrupt:
        Boolean mask of samples the stream itself shows are corrupt (a word no healthy
        instrument sends), or ``None`` if the instrument cannot tell.
    gaps:
        int64 array of shape (k, 2): rows ``(position, lost)`` meaning ``lost`` samples were
        lost immediately before the sample at ``position`` in this chunk (0 <= position < n).
        ``gaps[:, 1].sum()`` samples are missing from the chunk; the absolute index of sample
        ``j`` is ``start_index + j + lost samples at positions <= j``.
    bounds:
        ``{"current_a": (min, max), "voltage_v": (min, max)}`` of this chunk's arrays as a
        reader found them while reading (a JLS's float32 signals, before their conversion:
        :func:`plausible_chunks` then need not pass over them again), either key or the
        whole ``None`` when not known. Whoever makes a chunk with other values (a
        correction) leaves it out.
    """

    start_index: int
    period_s: float
    current_a: npt.NDArray[np.float64]
    voltage_v: npt.NDArray[np.float64] | float
    logic: npt.NDArray[np.uint8] | None = None
    saturated: npt.NDArray[np.bool_] | None = None
    gaps: npt.NDArray[np.int64] = field(default_factory=lambda: NO_GAPS)
    current_range: npt.NDArray[np.uint8] | None = None
    at_floor: npt.NDArray[np.bool_] | None = None
    corrupt: npt.NDArray[np.bool_] | None = None
    bounds: dict[str, tuple[float, float]] | None = None

    def __len__(self) -> int:
        return int(self.current_a.shape[0])

    def sliced(self, lo: int, hi: int) -> Chunk:
        """Received samples ``lo:hi`` (0 <= lo <= hi <= len) as a chunk with the correct
        start index and gaps."""
        gaps = self.gaps
        lost_before = int(gaps[gaps[:, 0] < lo, 1].sum()) if len(gaps) else 0
        keep = gaps[(gaps[:, 0] >= lo) & (gaps[:, 0] < hi)] if len(gaps) else gaps
        if len(keep):
            keep = keep.copy()
            keep[:, 0] -= lo

        def part(a: npt.NDArray[Any] | None) -> npt.NDArray[Any] | None:
            return None if a is None else a[lo:hi]

        volt = self.voltage_v if np.isscalar(self.voltage_v) else self.voltage_v[lo:hi]  # type: ignore[index]
        return Chunk(start_index=self.start_index + lo + lost_before, period_s=self.period_s,
                     current_a=self.current_a[lo:hi], voltage_v=volt, logic=part(self.logic),
                     saturated=part(self.saturated), gaps=keep,
                     current_range=part(self.current_range), at_floor=part(self.at_floor),
                     corrupt=part(self.corrupt))

    def indices(self) -> npt.NDArray[np.int64]:
        """Absolute index of every received sample (lost samples counted)."""
        index = self.start_index + np.arange(len(self), dtype=np.int64)
        if len(self.gaps):
            lost = np.zeros(len(self), dtype=np.int64)
            np.add.at(lost, self.gaps[:, 0], self.gaps[:, 1])
            index += np.cumsum(lost)
        return index

    @property
    def lost(self) -> int:
        """Number of samples lost inside this chunk."""
        return int(self.gaps[:, 1].sum()) if len(self.gaps) else 0

    @property
    def end_index(self) -> int:
        """Absolute index one past the last sample of this chunk."""
        return self.start_index + len(self) + self.lost


def widened(values: npt.NDArray[np.floating], keep: bool = False
            ) -> tuple[npt.NDArray[np.floating], tuple[float, float] | None]:
    """``values`` (float32, as a file holds them) as float64, converted once (as they are
    with ``keep``: ``CaptureOptions.keep_float32``), and their ``(min, max)`` from one min
    and one max over the narrower samples (exact: every float32 is a float64), ``None``
    when one of them is NaN or infinite: a chunk's :attr:`Chunk.bounds`, so
    :func:`plausible_chunks` need not pass over the array again, and the reader's test for
    lost (NaN) samples."""
    if not values.size:
        return values.astype(np.float64), (0.0, 0.0)
    lo, hi = float(values.min()), float(values.max())
    bounds = (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None
    return (values if keep else values.astype(np.float64, copy=False)), bounds


def scaled_bounds(bounds: tuple[float, float] | None, factor: float
                  ) -> tuple[float, float] | None:
    """The ``(min, max)`` of values multiplied by ``factor``: each end multiplied (rounding
    is monotone, so exactly the min and max of the products), swapped for a negative one."""
    if bounds is None:
        return None
    lo, hi = bounds[0] * factor, bounds[1] * factor
    return (lo, hi) if lo <= hi else (hi, lo)


@dataclass(frozen=True)
class Plausible:
    """The physically plausible range of a quantity a capture holds, SI units: a value
    outside it (or NaN) is a reading gone wrong, a wrong channel or unit, never a board's."""

    what: str
    low: float
    high: float
    unit: str
    hint: str

    def first_outside(self, values: npt.ArrayLike,
                      bounds: tuple[float, float] | None = None) -> int | None:
        """Position of the first value outside ``[low, high]`` (NaN is outside), or
        ``None``; two passes (min, max) over the array, none when its ``bounds`` (min, max)
        are known, a third only when one is out (the array is not converted: float32 is
        compared as its float64 values)."""
        a = np.asarray(values).reshape(-1)
        if not a.size:
            return None
        lo, hi = bounds if bounds is not None else (a.min(), a.max())
        if self.low <= lo and hi <= self.high:
            return None
        low, high = np.float64(self.low), np.float64(self.high)  # compared in float64
        return int(np.flatnonzero(~((a >= low) & (a <= high)))[0])

    def problem(self, value: float) -> str:
        """What is wrong with ``value`` and what to check, for an error message."""
        return (f"{self.what} {value:.6g} {self.unit} is not plausible (allowed "
                f"{self.low:g} to {self.high:g} {self.unit}): {self.hint}")


#: The one table of plausibility limits every capture file's samples are held to
#: (:func:`plausible_chunks`; the CSV reader holds its time column to ``time_s``), stated in
#: docs/formats.md. Wide on purpose: they catch a wrong channel, unit or header field, not
#: a board's unusual supply.
LIMITS = {
    "current_a": Plausible("current", -1e3, 1e3, "A",
                           "check the current channel and its unit or scale (--current, "
                           "--current-unit, --shunt-ohms, --current-scale)"),
    "voltage_v": Plausible("supply voltage", -1e3, 1e3, "V",
                           "check the voltage channel or constant (--voltage)"),
    "period_s": Plausible("sample period", 1e-12, 1e3, "s",
                          "the file's sample rate is wrong (1 mHz to 1 THz is plausible)"),
    "time_s": Plausible("time stamp", -1e10, 1e10, "s",
                        "check the time column and its unit (--time-column, --time-unit)"),
}
#: A capture's supply voltage must exceed this somewhere, V: v·i of a supply at 0 V is no
#: energy but a wrong voltage channel (or constant).
MIN_SUPPLY_V = 0.1


def plausible_chunks(chunks: Iterable[Chunk], source: str) -> Iterator[Chunk]:
    """Pass ``chunks`` through, holding their sample period, current and voltage to
    :data:`LIMITS`, and the supply to exceed :data:`MIN_SUPPLY_V` somewhere in the capture.

    Raises
    ------
    CaptureError
        Naming the quantity, its value, the sample's time and what to check.
    """
    supply = -np.inf
    for chunk in chunks:
        if LIMITS["period_s"].first_outside(chunk.period_s) is not None:
            raise CaptureError(source, LIMITS["period_s"].problem(chunk.period_s))
        if not len(chunk):
            yield chunk
            continue
        known = chunk.bounds or {}
        for name in ("current_a", "voltage_v"):
            values = getattr(chunk, name)
            bounds = known.get(name) or (float(np.min(values)), float(np.max(values)))
            k = LIMITS[name].first_outside(values, bounds)
            if k is not None:
                at = int(chunk.indices()[k]) if np.ndim(values) else chunk.start_index
                raise CaptureError(source, f"at {at * chunk.period_s:.9g} s (sample {at}): "
                                           f"{LIMITS[name].problem(np.ravel(values)[k])}")
        supply = max(supply, bounds[1])  # the voltage's largest
        yield chunk
    if supply != -np.inf and supply < MIN_SUPPLY_V:
        raise CaptureError(source, f"the supply voltage never exceeds {MIN_SUPPLY_V:g} V "
                                   f"(at most {supply:.6g} V): v·i would be no energy; "
                                   f"{LIMITS['voltage_v'].hint}")


@runtime_checkable
class Capture(Protocol):
    """A source of chunks in time order.

    ``source`` describes where the samples come from (a path, an instrument resource) and is
    used in error messages. Iterating ``chunks()`` twice is not required to work: a live
    stream can be consumed once.
    """

    source: str

    def chunks(self) -> Iterator[Chunk]:
        """Yield the capture's chunks in time order."""
        ...


#: Columns of the rig's own CSV layout, in order: what :func:`write_csv` writes and
#: :mod:`energyrig.instruments.csvfile` reads (``rig analyze``).
CSV_COLUMNS = ("time_s", "current_a", "voltage_v", "trigger")


def write_csv(chunks: Iterable[Chunk], path: str | Path, trigger_bit: int = 0) -> int:
    """Write chunks in the rig's CSV layout (:data:`CSV_COLUMNS`): ``time_s`` is the absolute
    sample index × period, s (lost samples are a jump in it, which the reader turns back into
    gaps), the current in A, the voltage in V and logic bit ``trigger_bit`` as 0/1 (0 for
    chunks without logic). The masks (saturated, corrupt, ...) are not kept.

    Returns
    -------
    int
        Samples written.

    Raises
    ------
    OSError
        The file cannot be written (a full disk); it may be left partly written.
    """
    written = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(CSV_COLUMNS) + "\n")
        for chunk in chunks:
            n = len(chunk)
            if not n:
                continue
            logic = (np.zeros(n, dtype=np.uint8) if chunk.logic is None
                     else (chunk.logic >> trigger_bit) & 1)
            rows = np.column_stack((chunk.indices() * chunk.period_s, chunk.current_a,
                                    np.broadcast_to(np.asarray(chunk.voltage_v, float), (n,)),
                                    logic))
            np.savetxt(fh, rows, fmt=("%.15g", "%.9g", "%.6g", "%d"), delimiter=",")
            written += n
    return written


#: The fields of a :class:`Chunk` that :func:`save_chunks` keeps (all of them).
_CHUNK_FIELDS = ("start_index", "period_s", "current_a", "voltage_v", "logic", "saturated",
                 "gaps", "current_range", "at_floor", "corrupt")


def save_chunks(chunks: Iterable[Chunk], path: str | Path) -> None:
    """Write chunks exactly as they are (every field, every bit: numpy's ``.npz``), for a
    reader that must compute the same figures again (``rig reanalyze``); :func:`load_chunks`
    reads them back.

    Raises
    ------
    OSError
        The file cannot be written.
    """
    arrays: dict[str, npt.NDArray[Any]] = {}
    for i, chunk in enumerate(chunks):
        for name in _CHUNK_FIELDS:
            value = getattr(chunk, name)
            if value is not None:
                arrays[f"{i}.{name}"] = np.asarray(value)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def load_chunks(path: str | Path) -> list[Chunk]:
    """The chunks :func:`save_chunks` wrote, equal to them field by field.

    Raises
    ------
    OSError
        The file cannot be read.
    ValueError
        It is not such a file.
    """
    with np.load(path, allow_pickle=False) as data:
        fields: dict[int, dict[str, Any]] = {}
        for key in data.files:
            index, _, name = key.partition(".")
            if not index.isdigit() or name not in _CHUNK_FIELDS:
                raise ValueError(f"{path}: {key!r} is not a field of a saved chunk")
            fields.setdefault(int(index), {})[name] = data[key]
    chunks = []
    for i in sorted(fields):
        f = fields[i]
        if not {"start_index", "period_s", "current_a", "voltage_v"} <= f.keys():
            raise ValueError(f"{path}: chunk {i} lacks a required field")
        for name in ("start_index", "period_s", "voltage_v"):
            if f[name].ndim == 0:
                f[name] = f[name].item()
        chunks.append(Chunk(**f))
    return chunks
