"""The results store: a run is a directory that pandas and DuckDB read directly.

Layout of ``RUN_DIR``::

    manifest.json        plan, fixture, firmware hello, software, versions (every version a
                         figure depends on: results/versions.py), calibration, host, times, seed
    windows.parquet/     one row per trigger window, with its point's factors (segments)
    points.parquet/      one row per point: status, counts, mean/median/std/95 % CI per op
    segments.json        the segment index: every segment of the two tables, its rows and SHA-256
    parts/<id>/          one finished point not yet consolidated (windows.parquet, point.parquet)
    captures/<id>/       the samples kept of some of a point's windows (``--keep-captures``):
                         window-0003.csv is window 3 of windows.parquet, in the rig's CSV
                         layout (``rig analyze`` reads it), window-0003.npz the same
                         samples exactly (``rig reanalyze`` reads them); the policy is the
                         manifest's ``keep_captures``
    reanalysis/          what ``rig reanalyze`` wrote: its figures beside the stored ones
    .lock                held by the one writer of the run

``windows.parquet`` and ``points.parquet`` are directories of segments
(``seg-000001.parquet``, ...), a Parquet dataset that ``pandas.read_parquet`` reads whole in
one call. (Runs written before segments hold single files there; they are read as they are
and become directories when resumed.)

``segments.json`` lists every segment with its row count and SHA-256, rewritten atomically
with each merge: :func:`load` and :meth:`RunWriter.resume` check the segments against it
and refuse, naming the file, a segment that is missing, altered or not listed, so a lost
segment never passes unseen. A merge first records its new segments as ``pending`` (they
duplicate parts that are still there), renames them into place, then lists them; readers
skip a pending segment and the next writer removes one a crash left. A run written before
segment indexes is read unverified (with a warning) and indexed when resumed.

Writing is atomic per point: :meth:`RunWriter.write_point` writes both tables of a point
into a temporary directory, syncs them and renames the directory into ``parts/`` (one
``rename``, atomic on POSIX). A crash leaves either the whole point or nothing. The point's
key (its factors without ``batch_n``) names the directory, so a point that is already stored
is never written twice: :meth:`RunWriter.done` tells a resuming sweep what to skip.
Every ``consolidate_every`` points, and at :meth:`RunWriter.close`, the parts are folded
into one new segment of each table; nothing already folded is read or rewritten, so a merge
costs the same at point 256 as at point 25 600 and the writer's memory stays flat. Readers
(:func:`load`) take the segments plus any parts, dropping duplicates by key, so a run is
readable while a sweep is writing it and after a crash at any instant (a crash between a
new segment and the removal of its parts leaves duplicates of the newest segment only,
which the next writer removes).

All quantities are SI (s, J, W); per-op columns are the window's figure divided by
``batch_n``.

Flagged windows: the statistics of a point in ``points.parquet`` are taken over the windows
of its estimate (:func:`energyrig.results.stats.summarise_per_op`, as ``rig run`` and the report
take them): every window but those that failed an integrity check
(:func:`energyrig.domain.in_estimate`: corrupt samples, an uncounted loss, a baseline at the
floor), which ``windows_excluded`` counts and ``excluded_reason`` names (each flag's
count). Other flagged windows stay in. Nothing is dropped unseen: ``n_flagged`` counts the
windows with any flag and ``flags`` lists them, the report shows them, and each window, the
left-out ones too, keeps its own flags in ``windows.parquet`` so an analysis can exclude any
of them. Values that are not finite (a window flagged ``no_baseline`` has no net energy) are
left out of that column's statistics only.
"""
from __future__ import annotations

import errno
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import platform
import re
import shutil
import socket
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
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

from energyrig.bounded import read_bytes
from energyrig.capture import Chunk, save_chunks, write_csv
from energyrig.domain import (
    FACTORS,
    PER_OP,
    STATUSES,
    Point,
    Status,
    Window,
    excluded,
    join_flags,
    key_id,
    windows_frame,
)
from energyrig.errors import DiskFullError, EnergyrigError
from energyrig.results import versions
from energyrig.results.stats import AVERAGED, STAT_SUFFIXES, SUMMARISED, summarise_per_op

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
WINDOWS = "windows.parquet"
POINTS = "points.parquet"
PARTS = "parts"
CAPTURES = "captures"
LOCK = ".lock"
INDEX = "segments.json"
#: The two tables, each a directory of segments.
TABLES = (WINDOWS, POINTS)
#: What the rig writes in a run directory: its tables, parts, lock and atomic-write
#: leftovers, and what ``rig report`` (and its ``.report-*`` temporary directories) and a
#: footprint add. Anything else is the operator's.
RUN_ENTRIES = frozenset({MANIFEST, INDEX, WINDOWS, POINTS, PARTS, CAPTURES, LOCK, "report",
                         "footprint", "reanalysis", f".{MANIFEST}.tmp", f".{INDEX}.tmp",
                         f".{WINDOWS}.legacy", f".{POINTS}.legacy"})


def foreign_entries(run_dir: Path) -> list[str]:
    """Names in ``run_dir`` the rig did not write (none when it does not exist)."""
    if not run_dir.is_dir():
        return []
    return sorted(p.name for p in run_dir.iterdir()
                  if p.name not in RUN_ENTRIES and not p.name.startswith(".report-"))


#: Files the rig writes below a run's top level (paths relative to it): the parts and their
#: temporary names, kept samples, footprints, the temporary names of segments, what
#: ``rig report`` writes (it replaces ``report/`` whole on each report) and what ``rig
#: reanalyze`` writes. Segments are the ones ``segments.json`` names.
_RUN_FILES = re.compile(r"""
    parts/[^/]+/(windows|points)\.parquet | parts/[^/]+/\.(windows|points)\.parquet\.tmp
  | captures/[^/]+/window-\d{4}\.(csv|npz) | footprint/[^/]+\.json | (report|\.report-[^/]+)/.+
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
    index = _read_index(run_dir)
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
            elif table in TABLES and "/" not in file and _SEGMENT.fullmatch(file):
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


def check_new_run_dir(path: Path) -> None:
    """A :class:`RunError` unless a new run can be written at ``path``: a run is written
    only into a new or empty directory, never among files it did not write."""
    if (path / MANIFEST).exists():
        raise RunError(path, "already holds a run; resume it, choose another --out or give "
                             "--overwrite")
    if path.exists() and not path.is_dir():
        raise RunError(path, "is a file, not a directory; choose another --out")
    if foreign := foreign_entries(path):
        raise RunError(path, f"holds files that are not a run ({listed(foreign)}); a run is "
                             "written only into a new or empty directory")


def capture_path(run_dir: str | Path, point_key: str, window: int, attempt: int = 1) -> Path:
    """Where the kept samples of window ``window`` (as numbered in ``windows.parquet``) of
    a point's ``attempt`` are (the file exists only if they were kept)."""
    name = key_id(point_key) + (f"-{attempt}" if attempt > 1 else "")
    return Path(run_dir) / CAPTURES / name / f"window-{window:04d}.csv"


def write_captures(directory: Path, captures: Mapping[int, Sequence[Chunk]]) -> None:
    """Write kept samples, window index → chunks, as ``directory/window-NNNN.csv``
    (:func:`~energyrig.capture.write_csv`, for ``rig analyze`` and the report) and, exactly
    as the energy math had them, ``window-NNNN.npz`` (:func:`~energyrig.capture.save_chunks`,
    for ``rig reanalyze``): into a temporary directory beside it, renamed into place over
    what ``directory`` held (one point's captures, never merged with an earlier try's). On
    an error (OSError: a full disk) nothing is left behind."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=directory.parent))
    try:
        for window, chunks in sorted(captures.items()):
            write_csv(chunks, tmp / f"window-{window:04d}.csv")
            save_chunks(chunks, tmp / f"window-{window:04d}.npz")
        shutil.rmtree(directory, ignore_errors=True)
        os.rename(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def listed(names: Sequence[str]) -> str:
    """``a, b, c and 4 more``: a few names for a one-line message."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

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
    pa.field("attempt", pa.int64()),
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
    pa.field("overhead_s", pa.float64()),
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
    pa.field("windows_excluded", pa.int64()),
    pa.field("excluded_reason", pa.string()),
    *(pa.field(f"{col}_{stat}", pa.float64()) for col in SUMMARISED for stat in STAT_SUFFIXES),
    *(pa.field(f"{col}_mean", pa.float64()) for col in AVERAGED),
    pa.field("net_energy_per_op_u_j", pa.float64()),
    pa.field("time_per_op_u_s", pa.float64()),
    pa.field("uncertainty_budget", pa.string()),
    pa.field("flags", pa.string()),
    pa.field("place", pa.string()),
    pa.field("host", pa.string()),
    pa.field("written_at", pa.timestamp("us", tz="UTC")),
])
#: Where a point ran, in a lab run (:mod:`energyrig.rig.lanes`): the labgrid place and its
#: bench host; null in a run on one local bench.
WHERE = ("place", "host")


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


# --- the segment index ----------------------------------------------------------------------

_SEGMENT = re.compile(r"seg-(\d{6})\.parquet")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _empty_index() -> dict[str, Any]:
    return {"format": 1, **{name: [] for name in TABLES}, "pending": {}}


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _index_bytes(run_dir: Path) -> bytes | None:
    """The raw ``segments.json``, or None for a run from before segment indexes."""
    try:
        return read_bytes(run_dir / INDEX, "segment index")
    except FileNotFoundError:
        return None


def _parse_index(run_dir: Path, raw: bytes) -> dict[str, Any]:
    """``segments.json`` checked field by field, or :class:`RunError` naming the field."""
    def bad(where: str, problem: str) -> RunError:
        return RunError(run_dir, f"{INDEX}: {where}: {problem}; restore the file from a "
                                 "copy of the run")
    try:
        index = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise bad("(file)", f"not valid JSON ({exc})") from None
    if not isinstance(index, dict) or index.get("format") != 1:
        raise bad("format", "a JSON object with \"format\": 1 expected")
    for name in TABLES:
        entries = index.get(name)
        if not isinstance(entries, list):
            raise bad(name, "a list of segments expected")
        for i, e in enumerate(entries):
            if not (isinstance(e, dict) and isinstance(e.get("file"), str)
                    and _SEGMENT.fullmatch(e["file"]) and type(e.get("rows")) is int
                    and isinstance(e.get("sha256"), str) and _SHA256.fullmatch(e["sha256"])):
                raise bad(f"{name}[{i}]", "needs file (seg-NNNNNN.parquet), rows and sha256")
    pending = index.get("pending")
    if not isinstance(pending, dict) or not all(
            k in TABLES and isinstance(v, str) and _SEGMENT.fullmatch(v)
            for k, v in pending.items()):
        raise bad("pending", "a table name → segment file object expected")
    return index


def _read_index(run_dir: Path) -> dict[str, Any] | None:
    raw = _index_bytes(run_dir)
    return None if raw is None else _parse_index(run_dir, raw)


def _check_segments(run_dir: Path, index: dict[str, Any] | None) -> dict[str, list[Path]]:
    """The segment files to read of each table, checked against ``index``: a segment it
    lists that is missing or whose SHA-256 differs, or a segment it does not list (but
    the one a merge under way is writing: ``pending``), is a :class:`RunError` naming it.
    Without an index (a run from before them), every segment as it is."""
    if index is None:
        return {name: _segments(run_dir / name) for name in TABLES}
    files = {}
    for name in TABLES:
        listed = {e["file"]: e for e in index[name]}
        present = {p.name: p for p in _segments(run_dir / name)}
        if extra := sorted(set(present) - set(listed) - {index["pending"].get(name)}):
            raise RunError(run_dir, f"{present[extra[0]].relative_to(run_dir)}: not in the "
                                    f"run's {INDEX}, so not a segment this run wrote; move it "
                                    "out of the run")
        for file, entry in listed.items():
            path = run_dir / name / file
            if file not in present:
                raise RunError(run_dir, f"{name}/{file} is missing ({entry['rows']} rows the "
                                        f"run holds, listed in {INDEX}); restore it from a "
                                        "copy of the run")
            if _sha256(path) != entry["sha256"]:
                raise RunError(run_dir, f"{name}/{file} is not what was stored (its SHA-256 "
                                        f"differs from {INDEX}: damaged or altered); "
                                        "restore it from a copy of the run")
        files[name] = [run_dir / name / file for file in listed]
    return files



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
               uncertainty: Mapping[str, Any] | None = None,
               flags: Sequence[str] = ()) -> pd.DataFrame:
    """The one-row points table of a point from its windows (and its uncertainty: the
    expanded figures and the budget, written as JSON; ``flags`` of the point itself beside
    its windows'); the statistics over the windows of its estimate, and how many were left
    out and why (:func:`~energyrig.domain.excluded`)."""
    n_excluded, why = excluded(win["flags"])
    row: dict[str, Any] = {"status": status, "reason": reason or None,
                           "n_windows": len(win),
                           "n_flagged": int((win["flags"] != "").sum()) if len(win) else 0,
                           "windows_excluded": n_excluded, "excluded_reason": why or None,
                           "flags": join_flags([*",".join(win["flags"]).split(","), *flags]),
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


def _read(run_dir: Path, paths: list[Path], schema: pa.Schema,
          columns: list[str] | None = None) -> pd.DataFrame:
    """Parquet files as one DataFrame in the store's schema (columns a file lacks: null),
    only ``columns`` of it if given.

    Raises FileNotFoundError when a file vanished (a part consolidated meanwhile), and
    :class:`RunError` naming the file that is not Parquet (damaged, truncated)."""
    try:
        table = ds.dataset([str(p) for p in paths], format="parquet",
                           schema=schema).to_table(columns=columns)
    except (FileNotFoundError, NotADirectoryError):
        raise
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(run_dir, paths, exc) from None
    return table.to_pandas(types_mapper=_NULLABLE.get)


def _unreadable(run_dir: Path, paths: list[Path], exc: Exception) -> RunError:
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


def _segments(table: Path) -> list[Path]:
    """The files of a top-level table: its segments, or the single file of an older run."""
    if table.is_dir():
        return sorted(table.glob("seg-*.parquet"))
    return [table] if table.exists() else []


def _part_dirs(run_dir: Path) -> list[Path]:
    parts = run_dir / PARTS
    return sorted(p for p in parts.iterdir() if not p.name.startswith(".")) \
        if parts.is_dir() else []


def _check_parts(run_dir: Path) -> None:
    """A :class:`RunError` naming an entry of ``parts/`` that is not a stored point (a
    directory holding both its tables): a folder or file put there by hand."""
    for part in _part_dirs(run_dir):
        if not all((part / name).is_file() for name in TABLES):
            raise RunError(run_dir, f"{PARTS}/{part.name}: not a point this rig stored (a "
                                    f"point is a folder holding {WINDOWS} and {POINTS}); move "
                                    "it out of the run")


def _segment_name(number: int) -> str:
    return f"seg-{number:06d}.parquet"


def _stored(run_dir: Path, paths: list[Path]) -> pd.DataFrame:
    """``point_key``, ``attempt`` and ``status`` of some points tables (only those columns
    are read; ``attempt`` 1 where a run from before retries has none)."""
    columns = ["point_key", "attempt", "status"]
    if not paths:
        return pd.DataFrame({name: [] for name in columns})
    return _read(run_dir, paths, POINT_SCHEMA, columns).fillna({"attempt": 1})


def _identities(stored: pd.DataFrame) -> set[tuple[str, int]]:
    return set(zip(stored["point_key"], stored["attempt"].astype(int), strict=True))


def _collect(run_dir: Path, all_attempts: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Top-level tables plus every part, without duplicates: of a point measured again
    (``rig sweep --resume --retry-failed``) only its newest attempt, unless ``all_attempts``.

    The segments are checked against ``segments.json`` (:func:`_check_segments`). The
    files are listed before anything is read; if one vanishes while being read, or the
    index changes meanwhile, a writer merged parts into a segment and the read starts over.
    """
    for _ in range(_RETRIES):
        raw = _index_bytes(run_dir)
        part_dirs = _part_dirs(run_dir)
        try:
            segments = _check_segments(run_dir, None if raw is None
                                       else _parse_index(run_dir, raw))
            tables = [_read(run_dir, [*segments[name], *(p / name for p in part_dirs)], schema)
                      for name, schema in ((WINDOWS, WINDOW_SCHEMA), (POINTS, POINT_SCHEMA))]
        except (FileNotFoundError, NotADirectoryError):
            continue
        except RunError:
            if _index_bytes(run_dir) != raw:
                continue  # what was checked was a merge under way
            raise
        if _index_bytes(run_dir) == raw:
            break
    else:
        _check_parts(run_dir)  # a folder put in parts/ by hand, never a point
        raise RunError(run_dir, f"its parts kept changing over {_RETRIES} reads")
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
        ``.windows`` and ``.points`` as pandas DataFrames, ``.manifest`` as a dict.

    Raises
    ------
    RunError
        Naming the file: no or a malformed manifest; a segment missing, altered or not
        listed in ``segments.json``; a table that is not Parquet; something in ``parts/``
        that is not a stored point. A run without ``segments.json`` (from before segment
        indexes) is read unverified, with a warning.
    """
    path = Path(run_dir)
    manifest = read_manifest(path)
    if not (path / INDEX).exists():
        log.warning("%s: no %s (a run from before segment indexes): its segments are read "
                    "unverified; resuming the run indexes them", path, INDEX)
    windows, points = _collect(path, all_attempts)
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
    _failed: dict[str, int] = field(default_factory=dict, repr=False)
    _attempt: dict[str, int] = field(default_factory=dict, repr=False)
    _parts: int = field(default=0, repr=False)
    _index: dict[str, Any] = field(default_factory=_empty_index, repr=False)

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
            host: :class:`energyrig.rig.sweep.Lab`), so a resume goes back to it.
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
        writer = cls(path=path, manifest=manifest, consolidate_every=consolidate_every)
        writer._lock()
        try:
            segments = writer._finish_interrupted_merge()
            stored = (_stored(path, [*segments, *(p / POINTS for p in _part_dirs(path))])
                      .sort_values("attempt", kind="stable")
                      .drop_duplicates("point_key", keep="last"))
        except BaseException:
            writer._unlock()
            raise
        writer._done = set(stored["point_key"])
        failed = stored[stored["status"] == "failed"]
        writer._failed = dict(zip(failed["point_key"], failed["attempt"].astype(int),
                                  strict=True))
        writer._parts = len(_part_dirs(path))
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
        checked against the index first (:func:`_check_segments`), and ``parts/``
        (:func:`_check_parts`). Returns the segments of ``points.parquet``."""
        with _storing(self.path, "cannot resume the run"):
            for name in TABLES:
                table = self.path / name
                legacy = self.path / f".{name}.legacy"
                if table.is_file():
                    os.replace(table, legacy)
                if legacy.exists():
                    table.mkdir(exist_ok=True)
                    os.replace(legacy, table / _segment_name(0))
                    _fsync_dir(table)
            index = _read_index(self.path)
            if index is None:
                index = self._index_segments()
            elif index["pending"]:
                for name, file in index["pending"].items():
                    (self.path / name / file).unlink(missing_ok=True)
                index["pending"] = {}
                _write_json(index, self.path / INDEX)
        self._index = index
        segments = _check_segments(self.path, index)
        _check_parts(self.path)
        folded = _identities(_stored(self.path, segments[POINTS][-1:]))
        for part in _part_dirs(self.path):
            if _identities(_stored(self.path, [part / POINTS])) <= folded:
                shutil.rmtree(part)
        return segments[POINTS]

    def _index_segments(self) -> dict[str, Any]:
        """Write the index of a run from before segment indexes: its segments as they are."""
        index = _empty_index()
        for name in TABLES:
            for path in _segments(self.path / name):
                try:
                    rows = pq.read_metadata(path).num_rows
                except (pa.ArrowException, OSError) as exc:
                    raise _unreadable(self.path, [path], exc) from None
                index[name].append({"file": path.name, "rows": rows, "sha256": _sha256(path)})
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
        win = _windows_frame(point, batch_n, windows).assign(attempt=attempt)
        pts = _summarise(point, batch_n, win, status, reason, uncertainty, flags).assign(
            attempt=attempt, **{k: (where or {}).get(k) for k in WHERE})
        if captures:
            self._write_captures(point, attempt, captures)
        parts = self.path / PARTS
        with _storing(self.path, f"cannot store point {point.label}"):
            parts.mkdir(exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=parts))
            try:
                _write_parquet(_to_table(win, WINDOW_SCHEMA), tmp / WINDOWS)
                _write_parquet(_to_table(pts, POINT_SCHEMA), tmp / POINTS)
                _fsync_dir(tmp)
                os.rename(tmp, parts / (point.part_id + (f"-{attempt}" if attempt > 1 else "")))
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            _fsync_dir(parts)
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
            write_captures(capture_path(self.path, point.key, 0, attempt).parent, captures)
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

        Only the parts are read, so the cost does not grow with the run. The new segments
        are recorded as ``pending`` in ``segments.json``, renamed into place (windows
        first, points last), listed in ``segments.json`` with their rows and SHA-256, and
        only then are the parts removed: a crash before the listing leaves pending segments
        that readers skip and the next writer removes, a crash after it duplicates that
        every reader drops and the next writer removes (:meth:`_finish_interrupted_merge`).
        """
        part_dirs = _part_dirs(self.path)
        if not part_dirs and self._index[POINTS]:
            return
        file = _segment_name(1 + max((int(_SEGMENT.fullmatch(e["file"])[1])  # type: ignore[index]
                                      for e in self._index[POINTS]), default=0))
        with _storing(self.path, f"cannot merge {len(part_dirs)} stored points into {file}"):
            _write_json({**self._index, "pending": {name: file for name in TABLES}},
                        self.path / INDEX)
            index = {**self._index, "pending": {}}
            for name, schema in ((WINDOWS, WINDOW_SCHEMA), (POINTS, POINT_SCHEMA)):
                table = (_read(self.path, [p / name for p in part_dirs], schema) if part_dirs
                         else schema.empty_table().to_pandas(types_mapper=_NULLABLE.get))
                (self.path / name).mkdir(exist_ok=True)
                _write_parquet(_to_table(table, schema), self.path / name / file)
                _fsync_dir(self.path / name)
                index[name] = [*index[name], {"file": file, "rows": len(table),
                                              "sha256": _sha256(self.path / name / file)}]
            _write_json(index, self.path / INDEX)
            self._index = index
            for part in part_dirs:
                shutil.rmtree(part)
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
