"""Writing a run (:mod:`energyrig.results.store`): :class:`RunWriter`, the one writer of a
run directory (atomic per point, parts folded into segments), the kept samples of a point's
windows, and removing a run (only the files it wrote)."""
from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import json
import logging
import os
import platform
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from energyrig.capture import Chunk, save_chunks, write_csv
from energyrig.domain import (
    DERIVED_FROM,
    FACTORS,
    STATUSES,
    WINDOW_FIELDS,
    Point,
    Status,
    Window,
    check_window_columns,
    derived_columns,
    excluded,
    flag_list,
)
from energyrig.errors import DiskFullError, EnergyrigError
from energyrig.results import versions
from energyrig.results.stats import summarise_per_op
from energyrig.results.store.layout import (
    CAPTURES,
    INDEX,
    LOCK,
    MANIFEST,
    PARTS,
    POINT_SCHEMA,
    POINTS,
    RUN_ENTRIES,
    TABLES,
    WHERE,
    WINDOW_SCHEMA,
    WINDOWS,
    RunError,
    capture_dir_name,
    capture_name,
    check_new_run_dir,
    foreign_entries,
    listed,
)
from energyrig.results.store.read import (
    identities,
    read_manifest,
    read_table,
    schema_version,
    stored_points,
    unreadable,
)
from energyrig.results.store.schema import (
    FLAG_LIST,
    SCHEMA_VERSION,
    V1,
    budget_struct,
    corrections_struct,
    python_values,
    uncertainty_struct,
)
from energyrig.results.store.segments import (
    SEGMENT,
    check_parts,
    check_segments,
    empty_index,
    read_index,
    segment_files,
    segment_name,
    sha256,
    stored_parts,
)

log = logging.getLogger(__name__)

#: Files the rig writes below a run's top level (paths relative to it): the parts and their
#: temporary names, kept samples, footprints, the temporary names of segments, what
#: ``rig report`` writes (it replaces ``report/`` whole on each report) and what ``rig
#: reanalyze`` writes. Segments are the ones ``segments.json`` names.
_RUN_FILES = re.compile(r"""
    parts/[^/]+/(windows|points)\.parquet | parts/[^/]+/\.(windows|points)\.parquet\.tmp
  | captures/[^/]+/(w|window-)\d{4}\.(csv|npz) | footprint/[^/]+\.json | (report|\.report-[^/]+)/.+
  | reanalysis/(figures\.csv|summary\.json)
  | (windows|points)\.parquet/\.seg-\d{6}\.parquet\.tmp""", re.VERBOSE)


def _hold(run_dir: Path) -> int:
    """Take the lock of the one writer of ``run_dir``: its file descriptor, or
    :class:`RunError` while a sweep holds it."""
    fd = os.open(run_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RunError(run_dir, "another sweep is writing this run") from None
    return fd


def _run_files(run_dir: Path) -> tuple[list[Path], list[str]]:
    """The files in ``run_dir`` its run wrote (its records name: the segments of its
    ``segments.json``, or every ``seg-NNNNNN.parquet`` of a run from before it), and the
    paths, relative to it, of every other file and top-level entry."""
    index = read_index(run_dir)
    segments = None if index is None else {
        f"{name}/{file}" for name in TABLES
        for file in [*(e["file"] for e in index[name]), index["pending"].get(name)] if file}
    ours, others = [], foreign_entries(run_dir)
    for folder, dirs, files in os.walk(run_dir):
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            path = Path(folder, name)
            rel = path.relative_to(run_dir).as_posix()
            table, _, file = rel.partition("/")
            if "/" not in rel:
                mine = rel in RUN_ENTRIES or rel.startswith(".report-")
            elif table in TABLES and "/" not in file and SEGMENT.fullmatch(file):
                mine = segments is None or rel in segments
            else:
                mine = _RUN_FILES.fullmatch(rel) is not None
            if mine:
                ours.append(path)
            elif table not in others:
                others.append(rel)
    return ours, others


def delete_run(run_dir: Path) -> None:
    """Delete the run in ``run_dir``: only the files it wrote (:func:`_run_files`), then
    the folders they leave empty. Refused (:class:`RunError`), deleting nothing, while a
    sweep is writing it or when it holds any other file (named)."""
    fd = _hold(run_dir)
    try:
        ours, others = _run_files(run_dir)
        if others:
            raise RunError(run_dir, f"holds a run and files it did not write "
                                    f"({listed(sorted(others))}); not removed")
        with _storing(run_dir, "cannot remove the run"):
            for path in ours:
                path.unlink()
            for folder, _, _ in os.walk(run_dir, topdown=False):
                os.rmdir(folder)
    finally:
        os.close(fd)


def _drop_part(part: Path) -> None:
    """Remove a point's part whose rows a segment holds: renamed out of ``parts/`` first
    (one atomic step), then deleted, so a crash halfway through the deletion leaves a
    ``.tmp-`` leftover the next writer removes, never a part missing one of its tables."""
    gone = part.with_name(f".tmp-{part.name}")
    os.rename(part, gone)
    shutil.rmtree(gone)


def write_captures(directory: Path, captures: Mapping[int, Sequence[Chunk]]) -> None:
    """Write kept samples, window index → chunks, as ``directory/wNNNN.csv``
    (:func:`capture_name`; :func:`~energyrig.capture.write_csv`, for ``rig analyze`` and the
    report) and, exactly as the energy math had them, ``wNNNN.npz``
    (:func:`~energyrig.capture.save_chunks`,
    for ``rig reanalyze``): into a temporary directory beside it, renamed into place over
    what ``directory`` held (one point's captures, never merged with an earlier try's). On
    an error (OSError: a full disk) nothing is left behind."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=directory.parent))
    try:
        for window, chunks in sorted(captures.items()):
            write_csv(chunks, tmp / capture_name(window))
            save_chunks(chunks, (tmp / capture_name(window)).with_suffix(".npz"))
        shutil.rmtree(directory, ignore_errors=True)
        os.rename(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _now() -> datetime:
    return datetime.now(UTC)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_parquet(table: pa.Table, path: Path) -> None:
    """Write a table to ``path`` through a temporary name and an atomic rename (on failure,
    a disk full say, nothing is left behind)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        pq.write_table(table, tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_json(data: Mapping[str, Any], path: Path) -> None:
    """Write JSON to ``path`` through a temporary name and an atomic rename (on failure
    nothing is left behind)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, default=str)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _storing(run_dir: Path, what: str) -> Iterator[None]:
    """Turn the OSError of a write in ``run_dir`` into one line: :class:`DiskFullError`
    for a full disk or quota (exit 75, resumable), :class:`RunError` else."""
    try:
        yield
    except OSError as exc:
        cause = f"{what} ({exc.filename + ': ' if exc.filename else ''}{exc.strerror or exc})"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFullError(f"{run_dir}: disk full; free space and --resume: {cause}; "
                                "every point stored before is intact") from None
        raise RunError(run_dir, f"{cause}; the points stored before are intact: resume the "
                                "run when this is fixed") from None


def _windows_of(windows: Sequence[Window] | pd.DataFrame) -> Sequence[Window]:
    """``windows`` as :class:`Window` objects: a DataFrame's rows with its missing values
    None and the fields it lacks at their defaults (its flags as ``flags`` or
    ``flag_list``; at least the columns :func:`~energyrig.domain.windows_frame` needs)."""
    if not isinstance(windows, pd.DataFrame):
        return windows
    check_window_columns(windows)
    frame = windows.rename(columns={FLAG_LIST: "flags"})
    frame = frame[[n for n in WINDOW_FIELDS if n in frame.columns]].astype(object)
    return [Window(**row) for row in frame.where(frame.notna(), None).to_dict("records")]


def _window_columns(point: Point, batch_n: int, attempt: int,
                    windows: Sequence[Window] | pd.DataFrame) -> dict[str, Any]:
    """The windows of one point as the columns of :data:`WINDOW_SCHEMA`: the values of
    :func:`~energyrig.domain.windows_frame`'s rows (NaN where a float is missing; a missing
    ``edge_error_j`` or ``overhead_s`` 0), built from the windows' fields directly."""
    rows = _windows_of(windows)

    def field(name: str) -> list[Any]:
        return [getattr(w, name) for w in rows]

    floats = {name: np.array(field(name), dtype=np.float64)  # None: NaN
              for name in (*DERIVED_FROM, "edge_error_j", "net_energy_u_j", "duration_u_s")}
    for name in ("edge_error_j", "overhead_s"):
        floats[name][np.isnan(floats[name])] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):  # a window of no time: inf, NaN
        derived = derived_columns(floats, batch_n)
    return {**_factor_columns(point, batch_n, attempt, len(rows)),
            "window": np.arange(len(rows), dtype=np.int64), **floats, **derived,
            "samples": field("samples"), "cycles": field("cycles"),
            FLAG_LIST: [flag_list(None if isinstance(f, float) else f) for f in field("flags")],
            "corrections": [corrections_struct(_pairs(c)) for c in field("corrections")],
            "uncertainty": [uncertainty_struct(_pairs(u)) for u in field("uncertainty")]}


def _pairs(value: Any) -> Any:
    """A window's ``corrections`` or ``uncertainty`` as given (pairs or a mapping), None
    where it holds none."""
    return value if isinstance(value, (tuple, list, dict)) else None


def _factor_columns(point: Point, batch_n: int, attempt: int, rows: int) -> dict[str, list[Any]]:
    """The point's key, factors, ``batch_n`` and ``attempt`` as columns of ``rows`` rows."""
    values = {"point_key": point.key, **{name: getattr(point, name) for name in FACTORS},
              "batch_n": batch_n, "attempt": attempt}
    return {name: [value] * rows for name, value in values.items()}


def _summary_columns(point: Point, batch_n: int, attempt: int, win: Mapping[str, Any],
                     status: Status, reason: str,
                     uncertainty: Mapping[str, Any] | None = None,
                     flags: Sequence[str] = (),
                     where: Mapping[str, str] | None = None) -> dict[str, list[Any]]:
    """The one-row points table of a point from its windows' columns
    (:func:`_window_columns`; and its uncertainty: the expanded figures and the budget, a
    struct of its components; ``flags`` of the point itself beside its windows'; ``where``
    it ran), as the columns of :data:`POINT_SCHEMA`: the statistics over the windows of its
    estimate, and how many were left out and why (:func:`~energyrig.domain.excluded`)."""
    lists = win[FLAG_LIST]  # each window's flags
    n_excluded, why = excluded(lists)
    row: dict[str, Any] = {"status": status, "reason": reason or None,
                           "n_windows": len(lists),
                           "n_flagged": sum(1 for f in lists if f),
                           "windows_excluded": n_excluded, "excluded_reason": why or None,
                           FLAG_LIST: flag_list([*(f for w in lists for f in w),
                                                 *flags]),
                           "written_at": _now(),
                           **{k: (where or {}).get(k) for k in WHERE}}
    row.update(summarise_per_op(win))
    if uncertainty is not None:
        row.update(net_energy_per_op_u_j=uncertainty["net_energy_per_op_u_j"],
                   time_per_op_u_s=uncertainty["time_per_op_u_s"],
                   uncertainty_budget=budget_struct(uncertainty["uncertainty_budget"]))
    return {**{name: [value] for name, value in row.items()},
            **_factor_columns(point, batch_n, attempt, 1)}


def _table(columns: Mapping[str, Any], rows: int, schema: pa.Schema) -> pa.Table:
    """``columns`` (name → values: a list or array of ``rows``) as a table of ``schema``,
    in its order and types, a column it does not give null, NaN and None null (as
    ``pyarrow.Table.from_pandas`` stores them); the schema's ``pandas`` metadata
    (:func:`_pandas_metadata`)."""
    return pa.Table.from_arrays(
        [pa.array(columns[f.name], f.type, from_pandas=True) if f.name in columns
         else pa.nulls(rows, f.type) for f in schema],
        schema=schema.with_metadata(_pandas_metadata(schema)))


@functools.cache
def _pandas_metadata(schema: pa.Schema) -> dict[bytes, bytes]:
    """The ``pandas`` metadata every file of ``schema`` carries, the same whatever its rows:
    that ``pyarrow`` gives the table as :func:`~.read.load` reads it (``Int64`` integers,
    lists and dicts) when every column holds a value, so ``pandas.read_parquet`` of a part
    or a segment gives the dtypes of a consolidated run."""
    row = pa.table([pa.array([_value_of(f.type)], f.type) for f in schema], schema=schema)
    return pa.Table.from_pandas(python_values(row), schema=schema,
                                preserve_index=False).schema.metadata


def _value_of(kind: pa.DataType) -> Any:
    """A value of the Arrow type ``kind`` (of the store's: lists, structs, strings, numbers,
    times)."""
    if pa.types.is_list(kind):
        return [_value_of(kind.value_type)]
    if pa.types.is_struct(kind):
        return {f.name: _value_of(f.type) for f in kind}
    if pa.types.is_timestamp(kind):
        return _now()
    return "" if pa.types.is_string(kind) else 0


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
    _failed: dict[str, int] = field(default_factory=dict, repr=False)
    _attempt: dict[str, int] = field(default_factory=dict, repr=False)
    _parts: int = field(default=0, repr=False)
    _index: dict[str, Any] = field(default_factory=empty_index, repr=False)
    #: The tables of each part this writer stored and no merge has folded yet, by the part's
    #: folder name: a merge folds them without reading their files back (:meth:`consolidate`).
    _written: dict[str, dict[str, pa.Table]] = field(default_factory=dict, repr=False)

    @classmethod
    def create(cls, run_dir: str | Path, *, plan: Mapping[str, Any] | None = None,
               fixture: Mapping[str, Any] | None = None,
               firmware: Mapping[str, Any] | None = None,
               calibration: Mapping[str, Any] | None = None,
               instrument: Mapping[str, Any] | None = None,
               seed: int | None = None, consolidate_every: int = 256,
               keep_captures: str = "none", lab: Mapping[str, Any] | None = None,
               programs: Sequence[str] = ()) -> Self:
        """Start a new run in ``run_dir`` (created; must not hold a run already).

        Parameters
        ----------
        plan, fixture:
            The sweep plan and bench definition as dicts (as parsed from their TOML).
        firmware:
            The firmware's ``hello`` reply.
        calibration:
            The calibration in use (its id and figures).
        instrument:
            What the uncertainty budget knew of the instrument (its ADC steps:
            ``resolution``), so ``rig reanalyze`` takes the same budget again.
        seed:
            Seed of the randomised order.
        consolidate_every:
            Parts kept before they are folded into the top-level tables.
        keep_captures:
            Whose samples the sweep keeps (``none``, ``flagged``, ``all``), recorded so a
            resume keeps the same.
        lab:
            The lab of a lab run (its coordinator and places, each with its board and
            host: :class:`energyrig.rig.sweep.lab.Lab`), so a resume goes back to it.
        programs:
            The external programs the run uses (sigrok-cli, ser2net, qemu: names on PATH
            or paths), whose versions the manifest's ``versions`` records with the Python
            distributions and kernels (:func:`energyrig.results.versions.collect`).
        """
        path = Path(run_dir)
        check_new_run_dir(path)
        path.mkdir(parents=True, exist_ok=True)
        manifest = {
            "format": 1,
            "schema_version": SCHEMA_VERSION,
            "plan": dict(plan or {}),
            "fixture": dict(fixture or {}),
            "firmware": dict(firmware or {}),
            "calibration": dict(calibration) if calibration is not None else None,
            "instrument": dict(instrument) if instrument is not None else None,
            "software": versions.software(),
            "versions": versions.collect(programs, lab=lab is not None),
            "host": {"hostname": socket.gethostname(), "platform": platform.platform()},
            "seed": seed,
            "keep_captures": keep_captures,
            "lab": dict(lab) if lab is not None else None,
            "started_at": _now().isoformat(),
            "resumed_at": [],
            "ended_at": None,
        }
        writer = cls(path=path, manifest=manifest, consolidate_every=consolidate_every)
        writer._lock()
        with _storing(path, "cannot start the run"):
            _write_json(writer._index, path / INDEX)  # before the manifest: a run has one
            _write_json(manifest, path / MANIFEST)
        return writer

    @classmethod
    def resume(cls, run_dir: str | Path, *, consolidate_every: int = 256) -> Self:
        """Continue a run after a crash, Ctrl-C or a finished sweep (to add points).

        Finishes what a crash interrupted and checks the run as :func:`load` does (a
        :class:`RunError` names a missing, altered or stray segment before anything is
        written); a run from before segment indexes gets its ``segments.json``."""
        path = Path(run_dir)
        manifest = read_manifest(path)
        if schema_version(path, manifest) == V1:
            raise RunError(path, "written with results schema version 1 (flags and "
                                 "corrections as text, before typed columns): load(), rig "
                                 "report and rig reanalyze read it, but points of version "
                                 f"{SCHEMA_VERSION} cannot be added to it; measure the "
                                 "points it lacks in a new run (rig sweep --out NEW)")
        writer = cls(path=path, manifest=manifest, consolidate_every=consolidate_every)
        writer._lock()
        try:
            segments = writer._finish_interrupted_merge()
            stored = (stored_points(path, [*segments, *(p / POINTS for p in stored_parts(path))])
                      .sort_values("attempt", kind="stable")
                      .drop_duplicates("point_key", keep="last"))
        except BaseException:
            writer._unlock()
            raise
        writer._done = set(stored["point_key"])
        failed = stored[stored["status"] == "failed"]
        writer._failed = dict(zip(failed["point_key"], failed["attempt"].astype(int),
                                  strict=True))
        writer._parts = len(stored_parts(path))
        manifest["resumed_at"] = [*manifest.get("resumed_at", []), _now().isoformat()]
        if changes := versions.figure_changes(manifest):  # the points from now on: with these
            manifest["resumed_with"] = [*manifest.get("resumed_with", []),
                                        {"at": manifest["resumed_at"][-1], "changes": changes}]
        manifest["ended_at"] = None
        with _storing(path, "cannot resume the run"):
            _write_json(manifest, path / MANIFEST)
        log.info("resuming %s: %d points stored", path, len(writer._done))
        return writer

    def _lock(self) -> None:
        self._lock_fd = _hold(self.path)
        # Leftovers of a write interrupted before its rename are not part of the run.
        for tmp in (*(self.path / PARTS).glob(".tmp-*"), *(self.path / CAPTURES).glob(".tmp-*")):
            shutil.rmtree(tmp)
        for name in TABLES:
            for tmp in (self.path / name).glob(".seg-*.tmp") if (self.path / name).is_dir() else ():
                tmp.unlink()

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _finish_interrupted_merge(self) -> list[Path]:
        """Make the tables segment directories (a run from before segments) and index them
        (a run from before segment indexes), remove the segments of a merge a crash
        interrupted (``pending``: their rows are still in parts) and the parts a crash
        left behind after they were folded into the newest segment. Every segment is
        checked against the index first (:func:`check_segments`), and ``parts/``
        (:func:`check_parts`). Returns the segments of ``points.parquet``."""
        with _storing(self.path, "cannot resume the run"):
            for name in TABLES:
                table = self.path / name
                legacy = self.path / f".{name}.legacy"
                if table.is_file():
                    os.replace(table, legacy)
                if legacy.exists():
                    table.mkdir(exist_ok=True)
                    os.replace(legacy, table / segment_name(0))
                    _fsync_dir(table)
            index = read_index(self.path)
            if index is None:
                index = self._index_segments()
            elif index["pending"]:
                for name, file in index["pending"].items():
                    (self.path / name / file).unlink(missing_ok=True)
                index["pending"] = {}
                _write_json(index, self.path / INDEX)
        self._index = index
        segments = check_segments(self.path, index)
        check_parts(self.path)
        folded = identities(stored_points(self.path, segments[POINTS][-1:]))
        for part in stored_parts(self.path):
            if identities(stored_points(self.path, [part / POINTS])) <= folded:
                _drop_part(part)
        return segments[POINTS]

    def _index_segments(self) -> dict[str, Any]:
        """Write the index of a run from before segment indexes: its segments as they are."""
        index = empty_index()
        for name in TABLES:
            for path in segment_files(self.path / name):
                try:
                    rows = pq.read_metadata(path).num_rows
                except (pa.ArrowException, OSError) as exc:
                    raise unreadable(self.path, [path], exc) from None
                index[name].append({"file": path.name, "rows": rows, "sha256": sha256(path)})
        _write_json(index, self.path / INDEX)
        log.warning("%s: indexed the %d segments of a run from before segment indexes, as "
                    "they are", self.path, len(index[POINTS]))
        return index

    def done(self) -> frozenset[str]:
        """Keys (:attr:`Point.key`) of the points already stored, whatever their status."""
        return frozenset(self._done)

    def failed(self) -> frozenset[str]:
        """Keys of the points stored as failed before this writer opened the run and not
        being retried."""
        return frozenset(self._failed)

    def retry_failed(self) -> frozenset[str]:
        """Let the points stored as failed be written again, as their next attempt (the
        failed attempt stays in the run: ``load(run, all_attempts=True)``). Returns their
        keys."""
        for key, attempt in self._failed.items():
            self._done.discard(key)
            self._attempt[key] = attempt + 1
        keys = frozenset(self._failed)
        self._failed = {}
        return keys

    def write_point(self, point: Point, windows: Sequence[Window] | pd.DataFrame, *,
                    batch_n: int, status: Status = "ok", reason: str = "",
                    uncertainty: Mapping[str, Any] | None = None,
                    flags: Sequence[str] = (),
                    captures: Mapping[int, Sequence[Chunk]] | None = None,
                    where: Mapping[str, str] | None = None) -> bool:
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
        flags:
            Flags of the point itself (``trigger_drops``, ``ci_target_not_met``), listed in
            the points table with its windows' flags.
        captures:
            Samples kept of some windows, window index → chunks (trigger on D0), written
            to ``captures/`` (:func:`capture_path`) before the point; a disk too full for
            them loses them, not the point (a warning says so).
        where:
            The ``place`` and ``host`` it was measured on (:data:`WHERE`), in a lab run.

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
        attempt = self._attempt.get(point.key, 1)
        win = _window_columns(point, batch_n, attempt, windows)
        rows = len(win["window"])
        pts = _summary_columns(point, batch_n, attempt, win, status, reason, uncertainty,
                               flags, where)
        if captures:
            self._write_captures(point, attempt, captures)
        parts = self.path / PARTS
        with _storing(self.path, f"cannot store point {point.label}"):
            parts.mkdir(exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=parts))
            part = point.part_id + (f"-{attempt}" if attempt > 1 else "")
            tables = {WINDOWS: _table(win, rows, WINDOW_SCHEMA),
                      POINTS: _table(pts, 1, POINT_SCHEMA)}
            try:
                for name, table in tables.items():
                    _write_parquet(table, tmp / name)
                _fsync_dir(tmp)
                os.rename(tmp, parts / part)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            _fsync_dir(parts)
        self._written[part] = tables
        self._done.add(point.key)
        self._parts += 1
        if self._parts >= self.consolidate_every:
            self.consolidate()
        return True

    def _write_captures(self, point: Point, attempt: int,
                        captures: Mapping[int, Sequence[Chunk]]) -> None:
        """Write a point's kept samples into a temporary directory renamed into place,
        replacing those an earlier unfinished try of the same attempt left (a crash before
        its point was stored): a point's captures are never duplicated."""
        try:
            write_captures(self.path / CAPTURES / capture_dir_name(point.key, attempt),
                           captures)
        except OSError as exc:
            log.warning("%s: the samples of point %s were not kept: %s (%s); its results "
                        "are stored", self.path, point.label, exc.strerror or exc,
                        exc.filename)

    def write_failed(self, point: Point, reason: str, *, batch_n: int = 1,
                     windows: Sequence[Window] | pd.DataFrame = (),
                     captures: Mapping[int, Sequence[Chunk]] | None = None,
                     where: Mapping[str, str] | None = None) -> bool:
        """Store a point that failed (self-test failure, DUT not answering) with the reason."""
        return self.write_point(point, windows, batch_n=batch_n, status="failed", reason=reason,
                                captures=captures, where=where)

    def write_skipped(self, point: Point, reason: str) -> bool:
        """Store a combination the op cannot take, with the reason, so it is listed."""
        return self.write_point(point, (), batch_n=1, status="skipped", reason=reason)

    def consolidate(self) -> None:
        """Fold the parts into one new segment of ``windows.parquet`` and ``points.parquet``.

        Only the parts are folded, so the cost does not grow with the run; the parts this
        writer stored are folded from the tables it wrote to their files (the same rows,
        not read back), those an earlier writer left are read. The new segments
        are recorded as ``pending`` in ``segments.json``, renamed into place (windows
        first, points last), listed in ``segments.json`` with their rows and SHA-256, and
        only then are the parts removed: a crash before the listing leaves pending segments
        that readers skip and the next writer removes, a crash after it duplicates that
        every reader drops and the next writer removes (:meth:`_finish_interrupted_merge`).
        """
        part_dirs = stored_parts(self.path)
        if not part_dirs and self._index[POINTS]:
            return
        file = segment_name(1 + max((int(SEGMENT.fullmatch(e["file"])[1])  # type: ignore[index]
                                      for e in self._index[POINTS]), default=0))
        with _storing(self.path, f"cannot merge {len(part_dirs)} stored points into {file}"):
            _write_json({**self._index, "pending": {name: file for name in TABLES}},
                        self.path / INDEX)
            index = {**self._index, "pending": {}}
            written = [self._written.get(p.name) for p in part_dirs]
            for name, schema in ((WINDOWS, WINDOW_SCHEMA), (POINTS, POINT_SCHEMA)):
                if not part_dirs:
                    table = schema.empty_table()
                elif all(written):  # the rows of the parts' files, as this writer wrote them
                    table = pa.concat_tables([w[name] for w in written])  # type: ignore[index]
                else:  # parts an earlier writer left (a resume): read
                    table = read_table(self.path, [p / name for p in part_dirs], schema)
                (self.path / name).mkdir(exist_ok=True)
                _write_parquet(table.replace_schema_metadata(_pandas_metadata(schema)),
                               self.path / name / file)
                _fsync_dir(self.path / name)
                index[name] = [*index[name], {"file": file, "rows": len(table),
                                              "sha256": sha256(self.path / name / file)}]
            _write_json(index, self.path / INDEX)
            self._index = index
            for part in part_dirs:
                _drop_part(part)
                self._written.pop(part.name, None)
            if (self.path / PARTS).is_dir() and not any((self.path / PARTS).iterdir()):
                (self.path / PARTS).rmdir()
        self._parts = 0

    def close(self, *, finished: bool = True) -> None:
        """Consolidate, record the end time (when ``finished``) and release the run."""
        if self._lock_fd is None:
            return
        try:
            self.consolidate()
            if finished:
                self.manifest["ended_at"] = _now().isoformat()
                with _storing(self.path, "cannot record the end of the run"):
                    _write_json(self.manifest, self.path / MANIFEST)
        finally:
            self._unlock()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # An interrupted sweep (Ctrl-C, an error) keeps its points but stays "in progress".
        if exc_type is None:
            self.close()
            return
        try:  # the error that ended the sweep is the one to report, not a second one here
            self.close(finished=False)
        except (OSError, EnergyrigError) as close_error:
            log.warning("%s: the run could not be closed cleanly (%s); its parts are kept "
                        "and read as they are", self.path, close_error)
