"""The results store: a run is a directory that pandas and DuckDB read directly.

Layout of ``RUN_DIR``::

    manifest.json        plan, fixture, firmware hello, software, calibration, host, times, seed
    windows.parquet      one row per trigger window, with its point's factors
    points.parquet       one row per point: status, counts, mean/median/std/95 % CI per op
    parts/<id>/          one finished point not yet consolidated (windows.parquet, point.parquet)
    .lock                held by the one writer of the run

Writing is atomic per point: :meth:`RunWriter.write_point` writes both tables of a point
into a temporary directory, syncs them and renames the directory into ``parts/`` (one
``rename``, atomic on POSIX). A crash leaves either the whole point or nothing. The point's
key (its factors without ``batch_n``) names the directory, so a point that is already stored
is never written twice: :meth:`RunWriter.done` tells a resuming sweep what to skip.
:meth:`RunWriter.close` folds the parts into the two top-level tables. Readers
(:func:`load`) take the top-level tables plus any parts, dropping duplicates by key, so a run
is readable while a sweep is writing it and after a crash at any instant.

All quantities are SI (s, J, W); per-op columns are the window's figure divided by
``batch_n``.

Flagged windows: the statistics of a point in ``points.parquet`` are taken over all its
windows, flagged ones included (as ``rig run`` does), so that a sweep and ``rig run`` give
the same figures for the same windows. Nothing is dropped unseen: ``n_flagged`` counts the
windows with any flag and ``flags`` lists them, the report shows them, and each window keeps
its own flags in ``windows.parquet`` so an analysis can exclude any of them. Values that are
not finite (a window flagged ``no_baseline`` has no net energy) are left out of that
column's statistics only.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import platform
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from energyrig import __version__
from energyrig.errors import EnergyrigError
from energyrig.domain import (AVERAGED, FACTORS, PER_OP, STAT_SUFFIXES, SUMMARISED, STATUSES,
                              Point, Status, Window, join_flags, summarise_per_op, windows_frame)

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
WINDOWS = "windows.parquet"
POINTS = "points.parquet"
PARTS = "parts"
LOCK = ".lock"

class RunError(EnergyrigError):
    """A run directory is missing, malformed, or already being written."""

    def __init__(self, run_dir: str | Path, problem: str) -> None:
        self.run_dir = str(run_dir)
        super().__init__(f"{self.run_dir}: {problem}")


_FACTOR_FIELDS: list[pa.Field] = [
    pa.field("point_key", pa.string(), nullable=False),
    pa.field("family", pa.string()),
    pa.field("op", pa.string(), nullable=False),
    pa.field("key_bits", pa.int64()),
    pa.field("payload_bytes", pa.int64()),
    pa.field("curve", pa.string()),
    pa.field("backend", pa.string()),
    pa.field("board", pa.string()),
    pa.field("cpu_hz", pa.int64()),
    pa.field("rep", pa.int64()),
    pa.field("batch_n", pa.int64()),
]
WINDOW_SCHEMA = pa.schema([
    *_FACTOR_FIELDS,
    pa.field("window", pa.int64()),
    pa.field("start_s", pa.float64()),
    pa.field("end_s", pa.float64()),
    pa.field("duration_s", pa.float64()),
    pa.field("samples", pa.int64()),
    pa.field("energy_j", pa.float64()),
    pa.field("baseline_w", pa.float64()),
    pa.field("net_energy_j", pa.float64()),
    pa.field("mean_power_w", pa.float64()),
    pa.field("edge_error_j", pa.float64()),
    pa.field("flags", pa.string()),
    pa.field("corrections", pa.string()),
    pa.field("net_energy_u_j", pa.float64()),
    pa.field("duration_u_s", pa.float64()),
    pa.field("uncertainty", pa.string()),
    pa.field("cycles", pa.int64()),
    pa.field("true_energy_j", pa.float64()),
    pa.field("true_net_energy_j", pa.float64()),
    *(pa.field(name, pa.float64()) for name in PER_OP),
])
POINT_SCHEMA = pa.schema([
    *_FACTOR_FIELDS,
    pa.field("status", pa.string(), nullable=False),
    pa.field("reason", pa.string()),
    pa.field("n_windows", pa.int64()),
    pa.field("n_flagged", pa.int64()),
    *(pa.field(f"{col}_{stat}", pa.float64()) for col in SUMMARISED for stat in STAT_SUFFIXES),
    *(pa.field(f"{col}_mean", pa.float64()) for col in AVERAGED),
    pa.field("net_energy_per_op_u_j", pa.float64()),
    pa.field("time_per_op_u_s", pa.float64()),
    pa.field("uncertainty_budget", pa.string()),
    pa.field("flags", pa.string()),
    pa.field("written_at", pa.timestamp("us", tz="UTC")),
])


def _now() -> datetime:
    return datetime.now(UTC)


def _git_revision() -> str | None:
    """The git revision of the source tree energyrig runs from, or None outside git."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_parquet(table: pa.Table, path: Path) -> None:
    """Write a table to ``path`` through a temporary name and an atomic rename."""
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _write_json(data: Mapping[str, Any], path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, default=str)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _windows_frame(point: Point, batch_n: int, windows: Sequence[Window] | pd.DataFrame
                   ) -> pd.DataFrame:
    """The windows of one point as rows of :data:`WINDOW_SCHEMA`."""
    df = windows_frame(windows, batch_n)
    df["window"] = np.arange(len(df), dtype=np.int64)
    _set_factors(df, point, batch_n)
    return df


def _set_factors(df: pd.DataFrame, point: Point, batch_n: int) -> None:
    df["point_key"] = point.key
    for name in FACTORS:
        df[name] = getattr(point, name)
    df["batch_n"] = batch_n


def _summarise(point: Point, batch_n: int, win: pd.DataFrame, status: Status, reason: str,
               uncertainty: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The one-row points table of a point from its windows (and its uncertainty: the
    expanded figures and the budget, written as JSON)."""
    row: dict[str, Any] = {"status": status, "reason": reason or None,
                           "n_windows": len(win),
                           "n_flagged": int((win["flags"] != "").sum()) if len(win) else 0,
                           "flags": join_flags(",".join(win["flags"])) if len(win) else "",
                           "written_at": _now()}
    row.update(summarise_per_op(win))
    if uncertainty is not None:
        row.update(net_energy_per_op_u_j=uncertainty["net_energy_per_op_u_j"],
                   time_per_op_u_s=uncertainty["time_per_op_u_s"],
                   uncertainty_budget=json.dumps(uncertainty["uncertainty_budget"]))
    df = pd.DataFrame([row])
    _set_factors(df, point, batch_n)
    return df


def _to_table(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pandas(df.reindex(columns=schema.names), schema=schema,
                                preserve_index=False)


# Integer factors are absent for ops that do not take them: keep them integers with <NA>.
_NULLABLE = {pa.int64(): pd.Int64Dtype()}
_RETRIES = 5


def _read(run_dir: Path, paths: list[Path], schema: pa.Schema) -> pd.DataFrame:
    """Parquet files as one DataFrame in the store's schema (columns a file lacks: null).

    Raises FileNotFoundError when a file vanished (a part consolidated meanwhile)."""
    try:
        table = ds.dataset([str(p) for p in paths], format="parquet", schema=schema).to_table()
    except pa.ArrowInvalid as exc:
        raise RunError(run_dir, f"unreadable table ({exc}); move the file named away to "
                                "read the rest") from None
    return table.to_pandas(types_mapper=_NULLABLE.get)


def _collect(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Top-level tables plus every part, without duplicates.

    The parts are listed before anything is read; if one vanishes while being read, a
    writer consolidated it into the top-level tables meanwhile and the read starts over.
    """
    for _ in range(_RETRIES):
        parts = run_dir / PARTS
        part_dirs = sorted(p for p in parts.iterdir() if not p.name.startswith(".")) \
            if parts.is_dir() else []
        try:
            tables = [_read(run_dir, [*([run_dir / name] if (run_dir / name).exists() else []),
                                      *(p / name for p in part_dirs)], schema)
                      for name, schema in ((WINDOWS, WINDOW_SCHEMA), (POINTS, POINT_SCHEMA))]
        except FileNotFoundError:
            continue
        break
    else:
        raise RunError(run_dir, f"its parts kept changing over {_RETRIES} reads")
    win, pts = tables
    pts = (pts.drop_duplicates(["point_key"], keep="last")
           .sort_values("written_at", kind="stable", ignore_index=True))
    order = pd.Series(np.arange(len(pts)), index=pts["point_key"])
    win = (win.drop_duplicates(["point_key", "window"], keep="last")
           .assign(_order=lambda w: w["point_key"].map(order))
           .sort_values(["_order", "window"], kind="stable", ignore_index=True)
           .drop(columns="_order"))
    return win, pts


@dataclass(frozen=True)
class Run:
    """A run as loaded by :func:`load`: the two tables and the manifest.

    Attributes
    ----------
    path:
        The run directory.
    manifest:
        The parsed ``manifest.json``.
    windows:
        One row per window (see :data:`WINDOW_SCHEMA`).
    points:
        One row per point (see :data:`POINT_SCHEMA`).
    """

    path: Path
    manifest: dict[str, Any]
    windows: pd.DataFrame
    points: pd.DataFrame

    @property
    def in_progress(self) -> bool:
        """True while the run has no end time (a sweep is writing it, or it was interrupted)."""
        return self.manifest.get("ended_at") is None

    @property
    def name(self) -> str:
        """The run directory's name."""
        return self.path.name


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    """The manifest of a run directory, or :class:`RunError` naming what is wrong."""
    path = Path(run_dir) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(run_dir, f"no {MANIFEST}: not a run directory") from None
    except json.JSONDecodeError as exc:
        raise RunError(run_dir, f"{MANIFEST} is not valid JSON ({exc})") from None


def load(run_dir: str | Path) -> Run:
    """Load a run directory, finished or still being written.

    Parameters
    ----------
    run_dir:
        Directory made by :class:`RunWriter`.

    Returns
    -------
    Run
        ``.windows`` and ``.points`` as pandas DataFrames, ``.manifest`` as a dict.
    """
    path = Path(run_dir)
    manifest = read_manifest(path)
    windows, points = _collect(path)
    return Run(path=path, manifest=manifest, windows=windows, points=points)


def load_many(run_dirs: Iterable[str | Path]) -> Run:
    """Several runs as one: the tables concatenated with a ``run`` column (directory name).

    The manifest of the result maps each run's name to its manifest.
    """
    runs = [load(d) for d in run_dirs]
    if not runs:
        raise ValueError("load_many needs at least one run directory")

    def tagged(frames: list[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
        return pd.concat([f.assign(run=name) for name, f in frames], ignore_index=True)

    return Run(path=Path(os.path.commonpath([r.path.resolve() for r in runs])),
               manifest={r.name: r.manifest for r in runs},
               windows=tagged([(r.name, r.windows) for r in runs]),
               points=tagged([(r.name, r.points) for r in runs]))


def query(sql: str, run_dirs: Iterable[str | Path]) -> pd.DataFrame:
    """Run DuckDB SQL over several runs; the tables are named ``windows`` and ``points``.

    Example: ``query("SELECT run, op, avg(net_energy_per_op_j) FROM windows GROUP BY ALL",
    ["runs/a", "runs/b"])``.
    """
    import duckdb

    run = load_many(run_dirs)
    with duckdb.connect() as con:
        con.register("windows", run.windows)
        con.register("points", run.points)
        return con.execute(sql).df()


@dataclass
class RunWriter:
    """The one writer of a run directory. Use as a context manager.

    Make a new run with :meth:`create`, continue one with :meth:`resume`. A sweep asks
    :meth:`done` which point keys are stored, measures the others and hands each finished
    point to :meth:`write_point`, :meth:`write_failed` or :meth:`write_skipped`.

    Every ``consolidate_every`` parts are folded into the top-level tables (a pause of about
    a second between two points) so that readers never open more than that many files.
    """

    path: Path
    manifest: dict[str, Any]
    consolidate_every: int = 256
    _lock_fd: int | None = field(default=None, repr=False)
    _done: set[str] = field(default_factory=set, repr=False)
    _parts: int = field(default=0, repr=False)

    @classmethod
    def create(cls, run_dir: str | Path, *, plan: Mapping[str, Any] | None = None,
               fixture: Mapping[str, Any] | None = None,
               firmware: Mapping[str, Any] | None = None,
               calibration: Mapping[str, Any] | None = None,
               seed: int | None = None, consolidate_every: int = 256) -> Self:
        """Start a new run in ``run_dir`` (created; must not hold a run already).

        Parameters
        ----------
        plan, fixture:
            The sweep plan and bench definition as dicts (as parsed from their TOML).
        firmware:
            The firmware's ``hello`` reply.
        calibration:
            The calibration in use (its id and figures).
        seed:
            Seed of the randomised order.
        consolidate_every:
            Parts kept before they are folded into the top-level tables.
        """
        path = Path(run_dir)
        if (path / MANIFEST).exists():
            raise RunError(path, "already holds a run; resume it or choose another --out")
        path.mkdir(parents=True, exist_ok=True)
        manifest = {
            "format": 1,
            "plan": dict(plan or {}),
            "fixture": dict(fixture or {}),
            "firmware": dict(firmware or {}),
            "calibration": dict(calibration) if calibration is not None else None,
            "software": {"energyrig": __version__, "git_revision": _git_revision(),
                         "python": platform.python_version()},
            "host": {"hostname": socket.gethostname(), "platform": platform.platform()},
            "seed": seed,
            "started_at": _now().isoformat(),
            "resumed_at": [],
            "ended_at": None,
        }
        writer = cls(path=path, manifest=manifest, consolidate_every=consolidate_every)
        writer._lock()
        _write_json(manifest, path / MANIFEST)
        return writer

    @classmethod
    def resume(cls, run_dir: str | Path, *, consolidate_every: int = 256) -> Self:
        """Continue a run after a crash, Ctrl-C or a finished sweep (to add points)."""
        path = Path(run_dir)
        manifest = read_manifest(path)
        writer = cls(path=path, manifest=manifest, consolidate_every=consolidate_every)
        writer._lock()
        _, points = _collect(path)
        writer._done = set(points["point_key"])
        parts = path / PARTS
        writer._parts = sum(1 for _ in parts.iterdir()) if parts.is_dir() else 0
        manifest["resumed_at"] = [*manifest.get("resumed_at", []), _now().isoformat()]
        manifest["ended_at"] = None
        _write_json(manifest, path / MANIFEST)
        log.info("resuming %s: %d points stored", path, len(writer._done))
        return writer

    def _lock(self) -> None:
        fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunError(self.path, "another sweep is writing this run") from None
        self._lock_fd = fd
        # Leftovers of a write interrupted before its rename are not part of the run.
        for tmp in (self.path / PARTS).glob(".tmp-*"):
            shutil.rmtree(tmp)

    def done(self) -> frozenset[str]:
        """Keys (:attr:`Point.key`) of the points already stored, whatever their status."""
        return frozenset(self._done)

    def write_point(self, point: Point, windows: Sequence[Window] | pd.DataFrame, *,
                    batch_n: int, status: Status = "ok", reason: str = "",
                    uncertainty: Mapping[str, Any] | None = None) -> bool:
        """Store one finished point and its windows, atomically.

        Parameters
        ----------
        point:
            The point's factors.
        windows:
            Its windows, as :class:`Window` objects or a DataFrame with their fields.
        batch_n:
            Operations per window; per-op figures are window figures divided by it.
        status, reason:
            ``"ok"``, or ``"failed"`` with the reason (windows measured before the failure
            may be given and are kept).
        uncertainty:
            The point's expanded uncertainties and budget
            (:meth:`energyrig.rig.pipeline.PointResult.uncertainty`), if known.

        Returns
        -------
        bool
            False, writing nothing, when the point is already stored (resume is idempotent).
        """
        if self._lock_fd is None:
            raise RunError(self.path, "the writer is closed")
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {status!r}")
        if batch_n < 1:
            raise ValueError(f"batch_n must be at least 1, not {batch_n}")
        if point.key in self._done:
            log.info("point %s already stored; not written again", point.key)
            return False
        win = _windows_frame(point, batch_n, windows)
        pts = _summarise(point, batch_n, win, status, reason, uncertainty)
        parts = self.path / PARTS
        parts.mkdir(exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=parts))
        _write_parquet(_to_table(win, WINDOW_SCHEMA), tmp / WINDOWS)
        _write_parquet(_to_table(pts, POINT_SCHEMA), tmp / POINTS)
        _fsync_dir(tmp)
        os.rename(tmp, parts / point.part_id)
        _fsync_dir(parts)
        self._done.add(point.key)
        self._parts += 1
        if self._parts >= self.consolidate_every:
            self.consolidate()
        return True

    def write_failed(self, point: Point, reason: str, *, batch_n: int = 1,
                     windows: Sequence[Window] | pd.DataFrame = ()) -> bool:
        """Store a point that failed (self-test failure, DUT not answering) with the reason."""
        return self.write_point(point, windows, batch_n=batch_n, status="failed", reason=reason)

    def write_skipped(self, point: Point, reason: str) -> bool:
        """Store a combination the op cannot take, with the reason, so it is listed."""
        return self.write_point(point, (), batch_n=1, status="skipped", reason=reason)

    def consolidate(self) -> None:
        """Fold the parts into ``windows.parquet`` and ``points.parquet``.

        The top-level tables are replaced atomically before the parts are removed; a crash
        in between leaves duplicates that every reader drops.
        """
        parts = self.path / PARTS
        if not parts.is_dir() or not any(parts.iterdir()):
            if not (self.path / POINTS).exists():
                _write_parquet(WINDOW_SCHEMA.empty_table(), self.path / WINDOWS)
                _write_parquet(POINT_SCHEMA.empty_table(), self.path / POINTS)
            return
        windows, points = _collect(self.path)
        _write_parquet(_to_table(windows, WINDOW_SCHEMA), self.path / WINDOWS)
        _write_parquet(_to_table(points, POINT_SCHEMA), self.path / POINTS)
        _fsync_dir(self.path)
        shutil.rmtree(parts)
        self._parts = 0

    def close(self, *, finished: bool = True) -> None:
        """Consolidate, record the end time (when ``finished``) and release the run."""
        if self._lock_fd is None:
            return
        try:
            self.consolidate()
            if finished:
                self.manifest["ended_at"] = _now().isoformat()
                _write_json(self.manifest, self.path / MANIFEST)
        finally:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # An interrupted sweep (Ctrl-C, an error) keeps its points but stays "in progress".
        self.close(finished=exc_type is None)
