"""``rig reanalyze RUN``: every window's and point's figures computed again, with the code
and libraries of today, from the samples a run kept (``rig sweep --keep-captures all``), and
set beside the figures the run stored.

A window is recomputed from ``captures/<point>/wNNNN.npz``, the corrected samples
around it exactly as the energy math had them (:func:`energyrig.capture.save_chunks`), with
the functions the point pipeline uses (:func:`~energyrig.energy.windows.find_windows`, its
longest window, :func:`~energyrig.energy.figures.window_figures`) and what the manifest
recorded of the bench: the fixture's window settings and supply tolerance, the calibration's
window overhead and the instrument's ADC steps. A point whose windows were all recomputed
gets its summary (:func:`~energyrig.results.stats.summarise_per_op`) and uncertainty
(:func:`~energyrig.rig.pipeline.point_uncertainty`) again.

The comparison is a long table, one row per figure: ``reanalysis/figures.csv`` (``table``
window or point, the point's key, attempt and window, ``figure``, ``stored``,
``recomputed``, ``rel_diff``), with ``reanalysis/summary.json`` beside it (the verdict, the
largest differences, the versions now and when the run was made). A figure *moved* when its
relative difference exceeds the tolerance (1e-12 by default): the test that a change of the
energy math or the statistics moved no published number, or which and by how much.
"""
from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from energyrig.capture import load_chunks
from energyrig.domain import PER_OP, Window, WindowSettings, estimate, windows_frame
from energyrig.energy.budget import Supply
from energyrig.energy.figures import window_figures
from energyrig.energy.windows import find_windows, longest
from energyrig.flags import BASELINE_CLIPPED, CORRUPT, ENERGY_FLAGS
from energyrig.instruments.base import Resolution
from energyrig.results import versions
from energyrig.results.stats import STAT_SUFFIXES, SUMMARISED, summarise_per_op
from energyrig.results.store.layout import RunError, capture_path
from energyrig.results.store.schema import FLAG_LIST
from energyrig.results.store.read import load
from energyrig.rig.pipeline import point_uncertainty

log = logging.getLogger(__name__)

#: Where the comparison is written in the run directory.
REANALYSIS = "reanalysis"
#: Largest relative difference of a figure that has not moved (unchanged code: none).
TOLERANCE = 1e-12
#: The figures of a window that come from its samples (the others — cycles, the truth —
#: come from the DUT and the emulator and are carried over).
WINDOW_FIGURES = ("start_s", "end_s", "duration_s", "samples", "energy_j", "baseline_w",
                  "net_energy_j", "mean_power_w", "edge_error_j", "overhead_s",
                  "net_energy_u_j", "duration_u_s",
                  *(per_op for per_op, source in PER_OP.items()
                    if source in ("duration_s", "energy_j", "net_energy_j")))
#: The figures of a point that come from its windows' samples.
POINT_FIGURES = (*(f"{col}_{stat}" for col in SUMMARISED for stat in STAT_SUFFIXES),
                 "mean_power_w_mean", "net_energy_per_op_u_j", "time_per_op_u_s")
#: Carried from the stored window into the recomputed one (not from samples).
_CARRIED = ("cycles", "true_energy_j", "true_net_energy_j")
#: The flags a window's kept samples raise again: the energy math's and the decoder's masks
#: (``corrupt``, ``at_floor``) are kept with them. Every other flag a window was stored with
#: (a stream loss its counter could not count, a group's lost window, the bench's and the
#: calibration's) is a fact of the acquisition the samples cannot show, and is carried: a
#: window the run left out of its point's estimate stays out of it.
_RAISED_FROM_SAMPLES = frozenset((*ENERGY_FLAGS, CORRUPT, BASELINE_CLIPPED))


@dataclass(frozen=True)
class Reanalysis:
    """What :func:`reanalyze` found.

    Attributes
    ----------
    figures:
        One row per figure compared (the columns of ``reanalysis/figures.csv``).
    windows, points:
        Windows and points recomputed.
    windows_without_samples, points_incomplete:
        Windows with no exact samples kept, points with such a window (not recomputed).
    tolerance:
        The relative difference beyond which a figure moved.
    changes:
        :func:`energyrig.results.versions.figure_changes` of the run.
    path:
        The directory written (``RUN/reanalysis``).
    """

    figures: pd.DataFrame
    windows: int
    points: int
    windows_without_samples: int
    points_incomplete: int
    tolerance: float
    changes: list[str]
    path: Path

    @property
    def moved(self) -> pd.DataFrame:
        """The rows of the figures that moved beyond the tolerance."""
        return self.figures[~(self.figures["rel_diff"] <= self.tolerance)]

    def verdict(self) -> str:
        """One line: how many figures were compared and which moved most."""
        moved = self.moved
        head = (f"{len(self.figures)} figures of {self.windows} windows and {self.points} "
                f"points recomputed")
        if self.windows_without_samples:
            head += (f" ({self.windows_without_samples} windows without kept samples, "
                     f"{self.points_incomplete} points not recomputed)")
        if moved.empty:
            return f"{head}: none moved beyond {self.tolerance:g} relative"
        worst = moved.sort_values("rel_diff", ascending=False, na_position="first")
        names = ", ".join(f"{f} ({r:.3g})" for f, r in worst.groupby("figure", sort=False)
                          ["rel_diff"].first().items())
        return f"{head}: {len(moved)} moved beyond {self.tolerance:g} relative: {names}"


def rel_diff(stored: float, recomputed: float) -> float:
    """``|recomputed − stored| / |stored|``: 0 when both are equal (NaN alike, both
    unknown), infinite when only one is known or the stored one is 0 and the other not."""
    a, b = float(stored), float(recomputed)
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)) or a == 0.0:
        return math.inf
    return abs(b - a) / abs(a)


def _for_board(record: Any, board: str) -> Any:
    """A manifest entry as it is for one board, or its ``boards`` entry for ``board``."""
    if isinstance(record, Mapping) and isinstance(record.get("boards"), Mapping):
        return record["boards"].get(board)
    return record


def _fixture(manifest: Mapping[str, Any], board: str) -> Mapping[str, Any]:
    recorded = manifest.get("fixture") or {}
    entries = recorded.get("fixtures", [recorded])
    for entry in entries:
        if len(entries) == 1 or (entry.get("dut") or {}).get("board") == board:
            return entry
    return entries[0]


@dataclass(frozen=True)
class _Bench:
    """What the manifest recorded of one board's bench, as the energy math takes it."""

    settings: WindowSettings
    resolution: Resolution | None
    calibration: Mapping[str, Any] | None
    supply: Supply

    @classmethod
    def of(cls, run_dir: Path, manifest: Mapping[str, Any], board: str) -> _Bench:
        fixture = _fixture(manifest, board)
        windows = fixture.get("windows")
        if not isinstance(windows, Mapping):
            raise RunError(run_dir, f"its manifest records no window settings for board "
                                    f"{board} (fixture.windows); it cannot be reanalysed")
        settings = WindowSettings(**{k: windows[k] for k in
                                     ("min_pulse_s", "guard_s", "baseline_s", "min_samples")})
        resolution = (_for_board(manifest.get("instrument"), board) or {}).get("resolution")
        tolerance = (fixture.get("calibration") or {}).get("supply_tolerance", 0.0)
        return cls(settings=settings,
                   resolution=None if resolution is None else Resolution(
                       tuple((float(a), float(b)) for a, b in resolution["ranges"]),
                       resolution["source"]),
                   calibration=_for_board(manifest.get("calibration"), board),
                   supply=Supply.stated(tolerance, Path(fixture.get("path", "")).name))

    def overhead(self) -> tuple[tuple[str, float], ...]:
        """The window overhead the correction stage took out (exact, from the calibration's
        values, as :attr:`~energyrig.calibration.correction.CurrentCorrection.applied`)."""
        if self.calibration is None:
            return ()
        values = self.calibration.get("values") or {}
        return tuple((q, float(values[q]["value"]) if q in values else 0.0)
                     for q in ("overhead_s", "overhead_j"))


def recompute_window(path: Path, stored: Mapping[str, Any], bench: _Bench) -> Window:
    """The window of the exact samples at ``path`` with its figures computed as the point
    pipeline does; ``stored``'s cycles and truth carried over, and its flags the samples
    cannot raise again (:data:`_RAISED_FROM_SAMPLES`).

    Raises
    ------
    ValueError
        The samples hold no trigger window (or are not a saved capture).
    """
    chunks = load_chunks(path)
    found = list(find_windows(chunks, bench.settings))
    if not found:
        raise ValueError(f"{path}: no trigger window in the kept samples")
    window = replace(longest(found), corrections=bench.overhead(),
                     **{k: _carried(stored.get(k)) for k in _CARRIED})
    listed = stored.get(FLAG_LIST)  # the stored window's flag list
    acquired = [] if listed is None else [
        str(f) for f in listed if f not in _RAISED_FROM_SAMPLES]
    window = replace(window, flags=(*window.flags,
                                    *(f for f in acquired if f not in window.flags)))
    return window_figures(chunks, window, bench.settings, resolution=bench.resolution,
                          calibration=bench.calibration, supply=bench.supply)


def _carried(value: Any) -> Any:
    return None if value is None or value is pd.NA or (isinstance(value, float) and
                                                       math.isnan(value)) else value


def _rows(table: str, key: str, attempt: int, window: int | None,
          stored: Mapping[str, Any], recomputed: Mapping[str, Any],
          figures: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for name in figures:
        old, new = _number(stored.get(name)), _number(recomputed.get(name))
        rows.append({"table": table, "point_key": key, "attempt": attempt, "window": window,
                     "figure": name, "stored": old, "recomputed": new,
                     "rel_diff": rel_diff(old, new)})
    return rows


def _number(value: Any) -> float:
    return math.nan if value is None or value is pd.NA else float(value)


def reanalyze(run_dir: str | Path, *, tolerance: float = TOLERANCE) -> Reanalysis:
    """Recompute a run's figures from its kept samples and write the comparison into
    ``run_dir/reanalysis`` (module docstring).

    Raises
    ------
    RunError
        Not a run, or a run that kept no exact samples (not swept with ``--keep-captures``
        by a rig that writes them).
    """
    run = load(run_dir)
    rows: list[dict[str, Any]] = []
    benches: dict[str, _Bench] = {}
    n_windows = n_points = missing = incomplete = 0
    for point in run.points.itertuples(index=False):
        key, attempt = point.point_key, int(point.attempt)
        batch_n = int(point.batch_n)
        stored = run.windows[(run.windows["point_key"] == key)
                             & (run.windows["attempt"] == attempt)]
        if stored.empty:
            continue
        bench = benches.get(point.board) or benches.setdefault(
            point.board, _Bench.of(run.path, run.manifest, point.board))
        recomputed: list[Window] = []
        for row in stored.to_dict("records"):
            path = capture_path(run.path, key, int(row["window"]), attempt).with_suffix(".npz")
            if not path.is_file():
                missing += 1
                continue
            try:
                window = recompute_window(path, row, bench)
            except (OSError, ValueError) as exc:
                log.warning("%s", exc)
                new: Mapping[str, Any] = {}
            else:
                recomputed.append(window)
                new = windows_frame([window], batch_n).iloc[0].to_dict()
            rows += _rows("window", key, attempt, int(row["window"]), row, new, WINDOW_FIGURES)
            n_windows += 1
        if len(recomputed) < len(stored):  # a point is recomputed from all its windows only
            incomplete += 1
            continue
        summary: dict[str, Any] = dict(summarise_per_op(windows_frame(recomputed, batch_n)))
        if point.status == "ok":
            summary.update(point_uncertainty(estimate(recomputed), batch_n, bench.calibration))
        figures = [f for f in POINT_FIGURES if f in summary]
        rows += _rows("point", key, attempt, None, point._asdict(), summary, figures)
        n_points += 1
    if not n_windows:
        raise RunError(run.path, "no window's exact samples were kept "
                                 "(captures/<point>/wNNNN.npz): sweep with "
                                 "--keep-captures all to reanalyse a run")
    result = Reanalysis(figures=pd.DataFrame(rows), windows=n_windows, points=n_points,
                        windows_without_samples=missing, points_incomplete=incomplete,
                        tolerance=tolerance, changes=versions.figure_changes(run.manifest),
                        path=run.path / REANALYSIS)
    _write(result, run.manifest)
    return result


def _write(result: Reanalysis, manifest: Mapping[str, Any]) -> None:
    """``figures.csv`` and ``summary.json`` into ``result.path`` (replaced)."""
    result.path.mkdir(exist_ok=True)
    result.figures.to_csv(result.path / "figures.csv", index=False, float_format="%.17g")
    moved = result.moved
    summary = {
        "verdict": result.verdict(), "tolerance": result.tolerance,
        "figures": len(result.figures), "moved": len(moved),
        "windows": result.windows, "points": result.points,
        "windows_without_samples": result.windows_without_samples,
        "points_incomplete": result.points_incomplete,
        "largest_rel_diff": {str(f): float(r) for f, r in
                             result.figures.groupby("figure")["rel_diff"].max().items()},
        "version_changes": result.changes,
        "versions": {"now": {"software": versions.software(), **versions.collect()},
                     "run": {"software": manifest.get("software"),
                             **(manifest.get("versions") or {})}},
    }
    (result.path / "summary.json").write_text(
        json.dumps(summary, indent=2, default=_json) + "\n", encoding="utf-8")


def _json(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
