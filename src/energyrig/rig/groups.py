"""Windows in groups (``run n=N windows=R``): one request to the firmware opens R trigger
windows, each after its own settle idle, and a streaming instrument records them in one
record (docs/sweep.md, "Windows in groups"). What the point pipeline
(:meth:`energyrig.rig.pipeline.Measurement.windows`) needs to cut such a record apart, as
plain functions of numbers: which firmware window each window found belongs to
(:func:`assign`), the stretch of the record each window answers for (:func:`stretches`:
its flags of the stream come from there) and where the stream lost samples
(:func:`loss_positions`). SI units; sample positions are absolute indices.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk


def offsets(elapsed_s: Sequence[float], settle_s: float) -> list[float]:
    """Where each window of a group rises, s after the first one's rise: the windows before
    it (the firmware's time of each, ``elapsed_s``) and a settle idle (``settle_s``) before
    each."""
    out = [0.0]
    for e in elapsed_s[:-1]:
        out.append(out[-1] + e + settle_s)
    return out


def assign(starts_s: Sequence[float], offsets_s: Sequence[float]) -> list[int]:
    """For each window found (its start, s, in time order), the index of the firmware's
    window it is: as many found as opened pair in order; otherwise each found window
    takes the window whose rise (``offsets_s``, from :func:`offsets`) lies nearest, the
    first found window anchored where the found windows fit the offsets best (a window
    lost first shifts the anchor). Several found windows may name the same window (a
    trigger that chattered): the caller keeps the longest and flags it."""
    if len(starts_s) == len(offsets_s):
        return list(range(len(starts_s)))
    rel = np.asarray(starts_s, dtype=np.float64) - starts_s[0]
    off = np.asarray(offsets_s, dtype=np.float64)
    best: tuple[float, list[int]] | None = None
    for anchor in range(len(off)):
        dist = np.abs(rel[:, None] - (off[None, :] - off[anchor]))
        cost = float(dist.min(axis=1).sum())
        if best is None or cost < best[0]:
            best = (cost, [int(j) for j in dist.argmin(axis=1)])
    assert best is not None
    return best[1]


def stretches(bounds_s: Sequence[tuple[float, float]], first: int, end: int,
              period_s: float) -> list[tuple[int, int]]:
    """The record ``[first, end)`` (absolute indices) cut into one stretch per window
    (``bounds_s``: each window's start and end, s, in time order), at the middle of the idle
    between two windows: every sample of the record belongs to one window's stretch, so a
    loss anywhere in it flags one window, and a record of one window is one stretch."""
    cuts = [round((a_end + b_start) / 2 / period_s)
            for (_, a_end), (b_start, _) in zip(bounds_s[:-1], bounds_s[1:], strict=True)]
    edges = [first, *cuts, end]
    return list(zip(edges[:-1], edges[1:], strict=True))


def loss_positions(chunks: Sequence[Chunk]) -> npt.NDArray[np.int64]:
    """The absolute index of the last sample of each loss the chunks' ``gaps`` count (the
    counter counted them: ``dropped_samples``)."""
    out = [c.start_index + c.gaps[:, 0] + np.cumsum(c.gaps[:, 1]) - 1
           for c in chunks if len(c.gaps)]
    return np.concatenate(out).astype(np.int64) if out else np.zeros(0, dtype=np.int64)


def meets(spans: Sequence[tuple[int, int]], first: int, end: int) -> bool:
    """Whether any ``[a, b)`` of ``spans`` meets ``[first, end)``."""
    return any(a < end and b > first for a, b in spans)
