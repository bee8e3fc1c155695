"""Windows and their statistics for one capture file: the library side of ``rig analyze``.

>>> from energyrig.rig.analysis import analyze_file
>>> result = analyze_file("tests/data/synthetic-capture.csv", batch_n=1000)
>>> result.frame()          # one row per window, SI units (pandas)
>>> result.summary()        # count, mean, median, std, 95 % CI per figure
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pandas as pd

from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture
from energyrig.results.stats import describe_finite
from energyrig.rig.energy import (Glitch, UnpairedEdge, Window, WindowFinder, WindowSettings,
                                  find_windows, per_op)

log = logging.getLogger(__name__)

# The window fields of ``rig analyze --json``, in order.
JSON_FIELDS = ("start_s", "end_s", "duration_s", "samples", "energy_j", "baseline_w",
               "net_energy_j", "mean_power_w", "edge_error_j", "flags")
# Figures summarised over the windows (name -> value of a window).
FIGURES: dict[str, Callable[[Window], float]] = {
    "energy_j": lambda w: w.energy_j,
    "net_energy_j": lambda w: w.net_energy_j,
    "duration_s": lambda w: w.duration_s,
    "mean_power_w": lambda w: w.mean_power_w,
}
PER_OP_FIGURES = ("energy_j", "net_energy_j", "duration_s")


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class Analysis:
    """The windows of one capture and what the finder saw besides them."""

    source: str
    windows: tuple[Window, ...]
    glitches: tuple[Glitch, ...]
    unpaired: tuple[UnpairedEdge, ...]
    batch_n: int | None = None

    def frame(self) -> pd.DataFrame:
        """One row per window (SI units; flags joined by ``,`` as in ``windows.parquet``)."""
        rows = [{**w.as_dict(), "flags": ",".join(w.flags)} for w in self.windows]
        return pd.DataFrame(rows, columns=[*JSON_FIELDS, "lost_samples"])

    def summary(self) -> dict[str, object]:
        """Count, flagged count, and describe() of each figure (NaN values left out);
        with ``batch_n``, the same per operation under ``per_op``."""
        out: dict[str, object] = {
            "source": self.source,
            "count": len(self.windows),
            "flagged": sum(1 for w in self.windows if w.flags),
            "glitches": len(self.glitches),
            "unpaired_edges": [asdict(e) for e in self.unpaired],
        }
        out.update({name: _describe([get(w) for w in self.windows])
                    for name, get in FIGURES.items()})
        if self.batch_n is not None:
            ops = [per_op(w, self.batch_n) for w in self.windows]
            out["batch_n"] = self.batch_n
            out["per_op"] = {name: _describe([getattr(op, name) for op in ops])
                             for name in PER_OP_FIGURES}
        return out

    def as_json(self) -> dict[str, object]:
        """``{"windows": [...], "summary": {...}}`` with NaN as null."""
        windows = [{k: (_finite(v) if isinstance(v, float) else v)
                    for k, v in w.as_dict().items() if k in JSON_FIELDS}
                   for w in self.windows]
        return {"windows": windows, "summary": self.summary()}


def _describe(values: list[float]) -> dict[str, float | int | None] | None:
    d = describe_finite(values)
    if d is None:
        return None
    return {k: (_finite(v) if isinstance(v, float) else v) for k, v in asdict(d).items()}


def analyze_file(path: str | Path, options: CaptureOptions | None = None,
                 settings: WindowSettings | None = None, batch_n: int | None = None) -> Analysis:
    """Open a capture file, find its windows and integrate them.

    The trigger is chosen by channel name in ``options``; a reader that moves it to a
    particular logic bit says so in ``capture.trigger_bit``, which then overrides
    ``settings.trigger_bit``.
    """
    capture = open_capture(path, options)
    settings = settings or WindowSettings()
    settings = replace(settings, trigger_bit=getattr(capture, "trigger_bit", settings.trigger_bit))
    finder = WindowFinder(settings, source=capture.source)
    windows = tuple(find_windows(capture, finder=finder))
    log.info("%s: %d windows", capture.source, len(windows))
    return Analysis(capture.source, windows, tuple(finder.glitches), tuple(finder.unpaired),
                    batch_n)
