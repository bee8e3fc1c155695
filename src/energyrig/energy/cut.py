"""The cut of a trace: the samples around one window that a point keeps
(``--keep-captures``) and a trace draws (:mod:`energyrig.results.trace`): the window, its
guard and baseline span, and :data:`MARGIN_S` either side, in absolute sample indices.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from energyrig.capture import Chunk
from energyrig.domain import Window, WindowSettings

#: Samples kept and drawn beyond the window and its baseline span on either side, s.
MARGIN_S = 1e-3


def _span(window: Window, settings: WindowSettings, period_s: float,
          margin_s: float) -> tuple[int, int]:
    """``[lo, hi)``: absolute sample indices of the window, guard and baseline span and
    ``margin_s`` either side."""
    first, last, base_lo, base_hi = settings.spans(window, period_s)
    margin = round(margin_s / period_s)
    return min(first, base_lo) - margin, max(last + 1, base_hi) + margin


def cut(chunks: Iterable[Chunk], window: Window, settings: WindowSettings,
        margin_s: float = MARGIN_S) -> list[Chunk]:
    """The parts of ``chunks`` a trace of ``window`` needs (see the module docstring), with
    their absolute indices and gaps; chunks outside are skipped unread."""
    out: list[Chunk] = []
    span: tuple[int, int] | None = None
    for chunk in chunks:
        lo, hi = span = span or _span(window, settings, chunk.period_s, margin_s)
        if chunk.end_index <= lo or chunk.start_index >= hi or not len(chunk):
            continue
        index = chunk.indices()
        part = chunk.sliced(*(int(k) for k in np.searchsorted(index, (lo, hi))))
        if len(part):
            out.append(part)
    return out
