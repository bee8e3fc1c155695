"""The report's traces: the current of each window worth a look, drawn from the samples a
sweep kept (``rig sweep --keep-captures``).

For every point: its flagged windows and its windows of least and most net energy, when
their samples were kept (:func:`energyrig.results.store.layout.capture_path`), each drawn by
:func:`energyrig.results.trace.plot_trace` into ``traces/<point>/wNNNN.png`` beside the page
(the folder and window named as the kept samples are,
:func:`~energyrig.results.store.layout.capture_dir_name`; PNG and its JSON), and listed with
links in a section of their own (:func:`traces_html`).
"""
from __future__ import annotations

import html
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from energyrig.capture import CSV_COLUMNS, Chunk
from energyrig.domain import Window, WindowSettings, window_problems
from energyrig.results.report.tables import by_factor
from energyrig.results.store.layout import capture_dir_name, capture_name, capture_path
from energyrig.results.store.read import Run
from energyrig.results.store.schema import FLAG_LIST
from energyrig.results.trace import plot_trace, window_trace

log = logging.getLogger(__name__)

TRACES = "traces"


@dataclass(frozen=True)
class TraceLink:
    """One drawn trace: the point's label, the window (as numbered in ``windows.parquet``),
    why it is shown, and the PNG's path relative to the page."""

    point: str
    window: int
    why: str
    png: str


def _settings(manifest: Mapping[str, Any], board: object) -> WindowSettings:
    """The window settings of the fixture the point's board was measured on."""
    recorded = manifest.get("fixture") or {}
    fixtures = recorded.get("fixtures", [recorded])
    match = [f for f in fixtures if (f.get("dut") or {}).get("board") == board]
    windows = (match or fixtures or [{}])[0].get("windows") or {}
    return WindowSettings(**{k: windows[k] for k in ("min_pulse_s", "guard_s", "baseline_s",
                                                     "min_samples") if k in windows})


def _chunk(path: Path) -> Chunk:
    """The kept samples of one window (the rig's CSV layout, time = index × period) as one
    chunk in the record's time base, lost samples as gaps."""
    time_s, current, voltage, trigger = CSV_COLUMNS
    frame = pd.read_csv(path)
    t = frame[time_s].to_numpy(dtype=np.float64)
    period = float(np.median(np.diff(t)))
    period = float((t[-1] - t[0]) / round((t[-1] - t[0]) / period))
    index = np.rint(t / period).astype(np.int64)
    jump = np.diff(index) - 1
    at = np.flatnonzero(jump) + 1
    gaps = np.stack([at, jump[at - 1]], axis=1).astype(np.int64) if len(at) \
        else np.zeros((0, 2), dtype=np.int64)
    return Chunk(int(index[0]), period, frame[current].to_numpy(dtype=np.float64),
                 frame[voltage].to_numpy(dtype=np.float64),
                 frame[trigger].to_numpy(dtype=np.uint8), gaps=gaps)


def _label(row: Any) -> str:
    parts = [str(row.op)]
    for value, unit in ((row.key_bits, " b"), (row.payload_bytes, " B"), (row.curve, "")):
        if not pd.isna(value):
            parts.append(f"{value}{unit}")
    return " ".join(parts) + f" #{row.rep}"


def _chosen(windows: pd.DataFrame) -> dict[int, str]:
    """Row positions of one point's windows to draw → why: flagged (a problem of its own
    samples, :func:`~energyrig.domain.window_problems`), least and most net energy."""
    why: dict[int, list[str]] = {}
    for k, flags in enumerate(windows[FLAG_LIST]):
        if problems := window_problems(flags):
            why.setdefault(k, []).append(f"flagged {', '.join(problems)}")
    net = windows["net_energy_j"].to_numpy(dtype=np.float64, na_value=math.nan)
    if np.isfinite(net).sum() > 1:
        why.setdefault(int(np.nanargmin(net)), []).append("least net energy")
        why.setdefault(int(np.nanargmax(net)), []).append("most net energy")
    return {k: "; ".join(v) for k, v in sorted(why.items())}


def draw_traces(run: Run, out_dir: Path) -> list[TraceLink]:
    """Draw the traces of ``run`` whose samples were kept into ``out_dir/traces/``; none
    when the sweep kept no samples; in the order of the points' factors
    (:func:`~energyrig.results.report.tables.by_factor`). A kept file that cannot be read is
    skipped with a warning (the report goes on)."""
    if run.windows.empty or not (run.path / "captures").is_dir():
        return []
    links = []
    windows = by_factor(run.windows)
    for (_, attempt), group in windows.groupby(["point_key", "attempt"], sort=False):
        for k, why in _chosen(group).items():
            row = group.iloc[k]
            path = capture_path(run.path, row.point_key, int(row.window), int(attempt))
            if not path.exists():
                continue
            window = Window(start_s=float(row.start_s), end_s=float(row.end_s),
                            samples=int(row.samples), energy_j=float(row.energy_j),
                            baseline_w=float(row.baseline_w),
                            flags=tuple(row.flag_list))
            label = _label(row)
            png = (f"{TRACES}/{capture_dir_name(row.point_key, int(attempt))}/"
                   f"{Path(capture_name(int(row.window))).stem}.png")
            try:
                trace = window_trace([_chunk(path)], window,
                                     _settings(run.manifest, row.board),
                                     title=f"{label}, window {int(row.window)}")
            except (OSError, ValueError, KeyError, pd.errors.ParserError) as exc:
                log.warning("%s: not drawn: %s", path, exc)
                continue
            (out_dir / png).parent.mkdir(parents=True, exist_ok=True)
            plot_trace(trace, out_dir / png)
            links.append(TraceLink(label, int(row.window), why, png))
    return links


def traces_html(links: list[TraceLink]) -> str:
    """The page's section of traces (empty without any)."""
    if not links:
        return ""
    rows = "".join(f"<tr><td>{html.escape(t.point)}</td><td>{t.window}</td>"
                   f"<td>{html.escape(t.why)}</td><td><a href='{html.escape(t.png)}'>"
                   "trace</a></td></tr>" for t in links)
    return ("<h2 id='traces'>Traces</h2><p>The current of each window flagged for its "
            "samples and of each point's windows of least and most net energy whose samples "
            "the sweep kept "
            "(--keep-captures), with the trigger edges, the guard and the baseline span "
            "marked.</p><div class='scroll'><table><tr><th>point</th><th>window</th><th>why</th>"
            f"<th>trace</th></tr>{rows}</table></div>")
