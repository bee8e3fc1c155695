"""Reading a run (:mod:`energyrig.results.store`): its manifest and its two tables, from
the segments the index lists plus the parts not yet folded, while a sweep writes it or after
it crashed; :func:`load`, :func:`load_many` and :func:`query` (DuckDB)."""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from energyrig.bounded import read_bytes
from energyrig.results.store.layout import (INDEX, MANIFEST, POINT_SCHEMA, POINTS, WINDOW_SCHEMA,
                                            WINDOWS, RunError)
from energyrig.results.store.schema import (SCHEMA_VERSION, V1, python_values, upgrade,
                                            v1_schema)
from energyrig.results.store.segments import (check_parts, check_segments, index_bytes,
                                              parse_index, stored_parts)

log = logging.getLogger(__name__)

_RETRIES = 5


def read_frame(run_dir: Path, paths: list[Path], schema: pa.Schema,
               columns: list[str] | None = None) -> pd.DataFrame:
    """Parquet files as one DataFrame in the store's schema (columns a file lacks: null),
    only ``columns`` of it if given; lists and structs as Python lists and dicts
    (:func:`read_table`'s table, :func:`~.schema.python_values`)."""
    return python_values(read_table(run_dir, paths, schema, columns))


def read_table(run_dir: Path, paths: list[Path], schema: pa.Schema,
               columns: list[str] | None = None) -> pa.Table:
    """Parquet files as one Arrow table in the store's schema (columns a file lacks: null),
    only ``columns`` of it if given.

    Raises FileNotFoundError when a file vanished (a part consolidated meanwhile), and
    :class:`RunError` naming the file that is not Parquet (damaged, truncated)."""
    try:
        return ds.dataset([str(p) for p in paths], format="parquet",
                          schema=schema).to_table(columns=columns)
    except (FileNotFoundError, NotADirectoryError):
        raise
    except (pa.ArrowException, OSError) as exc:
        raise unreadable(run_dir, paths, exc) from None


def unreadable(run_dir: Path, paths: list[Path], exc: Exception) -> RunError:
    """The error of a table that could not be read, naming the first of ``paths`` whose
    Parquet footer does not parse (pyarrow's own message may not name it)."""
    for path in paths:
        try:
            pq.read_metadata(path)
        except (pa.ArrowException, OSError) as bad:
            exc = bad
            break
    else:
        path = paths[0]
    where = path.relative_to(run_dir) if path.is_relative_to(run_dir) else path
    return RunError(run_dir, f"{where}: not a readable Parquet table ({exc}); restore it from "
                             "a copy of the run, or move it out of the run to read the rest")


def stored_points(run_dir: Path, paths: list[Path]) -> pd.DataFrame:
    """``point_key``, ``attempt`` and ``status`` of some points tables (only those columns
    are read; ``attempt`` 1 where a run from before retries has none)."""
    columns = ["point_key", "attempt", "status"]
    if not paths:
        return pd.DataFrame({name: [] for name in columns})
    return read_frame(run_dir, paths, POINT_SCHEMA, columns).fillna({"attempt": 1})


def identities(stored: pd.DataFrame) -> set[tuple[str, int]]:
    return set(zip(stored["point_key"], stored["attempt"].astype(int), strict=True))


def _collect(run_dir: Path, all_attempts: bool = False, version: int = SCHEMA_VERSION
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Top-level tables plus every part, without duplicates: of a point measured again
    (``rig sweep --resume --retry-failed``) only its newest attempt, unless ``all_attempts``;
    a run of schema ``version`` 1 read as such and upgraded to version 2
    (:func:`~.schema.upgrade`).

    The segments are checked against ``segments.json`` (:func:`check_segments`). The
    files are listed before anything is read; if one vanishes while being read, or the
    index changes meanwhile, a writer merged parts into a segment and the read starts over.
    """
    for _ in range(_RETRIES):
        raw = index_bytes(run_dir)
        part_dirs = stored_parts(run_dir)
        try:
            segments = check_segments(run_dir, None if raw is None
                                       else parse_index(run_dir, raw))
            tables = [read_frame(run_dir, [*segments[name], *(p / name for p in part_dirs)],
                                 v1_schema(schema) if version == V1 else schema)
                      for name, schema in ((WINDOWS, WINDOW_SCHEMA), (POINTS, POINT_SCHEMA))]
        except (FileNotFoundError, NotADirectoryError):
            continue
        except RunError:
            if index_bytes(run_dir) != raw:
                continue  # what was checked was a merge under way
            raise
        if index_bytes(run_dir) == raw:
            break
    else:
        check_parts(run_dir)  # a folder put in parts/ by hand, never a point
        raise RunError(run_dir, f"its parts kept changing over {_RETRIES} reads")
    if version == V1:
        tables = [upgrade(t) for t in tables]
    win, pts = (t.fillna({"attempt": 1}) for t in tables)
    pts = pts.drop_duplicates(["point_key", "attempt"], keep="last")
    if not all_attempts:  # the newest attempt of each point and its windows
        pts = pts.sort_values("attempt", kind="stable").drop_duplicates("point_key",
                                                                         keep="last")
    pts = pts.sort_values("written_at", kind="stable", ignore_index=True)
    order = pd.Series(np.arange(len(pts)),
                      index=pd.MultiIndex.from_frame(pts[["point_key", "attempt"]]))
    win = win.drop_duplicates(["point_key", "attempt", "window"], keep="last")
    win = (win.assign(_order=order.reindex(pd.MultiIndex.from_frame(
                  win[["point_key", "attempt"]])).to_numpy())
           .dropna(subset="_order")
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
    """The manifest of a run directory, or :class:`RunError` naming what is wrong (a
    :class:`~energyrig.errors.ConfigError` naming the file when it is not a regular file or
    is over its size limit, :mod:`energyrig.bounded`)."""
    path = Path(run_dir) / MANIFEST
    try:
        manifest = json.loads(read_bytes(path, "run manifest").decode("utf-8"))
    except FileNotFoundError:
        raise RunError(run_dir, f"no {MANIFEST}: not a run directory") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise RunError(run_dir, f"{MANIFEST} is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise RunError(run_dir, f"{MANIFEST}: not a run manifest (a JSON object expected, "
                                f"found {type(manifest).__name__})")
    if manifest.get("format") != 1 or not isinstance(manifest.get("plan"), dict):
        raise RunError(run_dir, f"{MANIFEST}: not a run manifest of this rig (needs "
                                f"\"format\": 1 and a \"plan\" object)")
    return manifest


def schema_version(run_dir: str | Path, manifest: dict[str, Any]) -> int:
    """The results schema version of a run (its manifest's ``schema_version``; 1 for a run
    written before it was recorded), or :class:`RunError` for one this reader does not know
    (a newer rig wrote it)."""
    version = manifest.get("schema_version", V1)
    if type(version) is not int or not V1 <= version <= SCHEMA_VERSION:
        raise RunError(run_dir, f"{MANIFEST}: schema_version {version!r}: this energyrig "
                                f"reads results schema versions {V1} to {SCHEMA_VERSION}; "
                                "read the run with the newer energyrig that wrote it")
    return version


def load(run_dir: str | Path, *, all_attempts: bool = False) -> Run:
    """Load a run directory, finished or still being written.

    Parameters
    ----------
    run_dir:
        Directory made by :class:`RunWriter`.
    all_attempts:
        Every attempt of a point measured again after it failed (``attempt`` 1, 2, ...);
        by default only the newest one, so each point is one row.

    Returns
    -------
    Run
        ``.windows`` and ``.points`` as pandas DataFrames in the schema of version
        :data:`~.schema.SCHEMA_VERSION` (docs/results.md: ``flag_list`` a list per row, the
        budgets and corrections dicts; a run of version 1 converted on load),
        ``.manifest`` as a dict.

    Raises
    ------
    RunError
        Naming the file: no or a malformed manifest; a ``schema_version`` newer than
        this reader knows; a segment missing, altered or not
        listed in ``segments.json``; a table that is not Parquet; something in ``parts/``
        that is not a stored point. A run without ``segments.json`` (from before segment
        indexes) is read unverified, with a warning once it has been read.
    """
    path = Path(run_dir)
    manifest = read_manifest(path)
    windows, points = _collect(path, all_attempts, schema_version(path, manifest))
    if not (path / INDEX).exists():  # said once read: a table that cannot be read is the error
        log.warning("%s: no %s (a run from before segment indexes): its segments were read "
                    "unverified; resuming the run indexes them", path, INDEX)
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
