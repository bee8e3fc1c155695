"""The segment index of a run (``segments.json``, :mod:`energyrig.results.store`) and the
files of each table: its segments, and the parts not yet folded into one."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from energyrig.bounded import read_bytes
from energyrig.results.store.layout import INDEX, PARTS, POINTS, TABLES, WINDOWS, RunError

# --- the segment index ----------------------------------------------------------------------

SEGMENT = re.compile(r"seg-(\d{6})\.parquet")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def empty_index() -> dict[str, Any]:
    return {"format": 1, **{name: [] for name in TABLES}, "pending": {}}


def sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def index_bytes(run_dir: Path) -> bytes | None:
    """The raw ``segments.json``, or None for a run from before segment indexes."""
    try:
        return read_bytes(run_dir / INDEX, "segment index")
    except FileNotFoundError:
        return None


def parse_index(run_dir: Path, raw: bytes) -> dict[str, Any]:
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
                    and SEGMENT.fullmatch(e["file"]) and type(e.get("rows")) is int
                    and isinstance(e.get("sha256"), str) and _SHA256.fullmatch(e["sha256"])):
                raise bad(f"{name}[{i}]", "needs file (seg-NNNNNN.parquet), rows and sha256")
    pending = index.get("pending")
    if not isinstance(pending, dict) or not all(
            k in TABLES and isinstance(v, str) and SEGMENT.fullmatch(v)
            for k, v in pending.items()):
        raise bad("pending", "a table name → segment file object expected")
    return index


def read_index(run_dir: Path) -> dict[str, Any] | None:
    raw = index_bytes(run_dir)
    return None if raw is None else parse_index(run_dir, raw)


def check_segments(run_dir: Path, index: dict[str, Any] | None) -> dict[str, list[Path]]:
    """The segment files to read of each table, checked against ``index``: a segment it
    lists that is missing or whose SHA-256 differs, or a segment it does not list (but
    the one a merge under way is writing: ``pending``), is a :class:`RunError` naming it.
    Without an index (a run from before them), every segment as it is."""
    if index is None:
        return {name: segment_files(run_dir / name) for name in TABLES}
    files = {}
    for name in TABLES:
        listed = {e["file"]: e for e in index[name]}
        present = {p.name: p for p in segment_files(run_dir / name)}
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
            if sha256(path) != entry["sha256"]:
                raise RunError(run_dir, f"{name}/{file} is not what was stored (its SHA-256 "
                                        f"differs from {INDEX}: damaged or altered); "
                                        "restore it from a copy of the run")
        files[name] = [run_dir / name / file for file in listed]
    return files


def segment_files(table: Path) -> list[Path]:
    """The files of a top-level table: its segments, or the single file of an older run."""
    if table.is_dir():
        return sorted(table.glob("seg-*.parquet"))
    return [table] if table.exists() else []


def stored_parts(run_dir: Path) -> list[Path]:
    parts = run_dir / PARTS
    return sorted(p for p in parts.iterdir() if not p.name.startswith(".")) \
        if parts.is_dir() else []


def check_parts(run_dir: Path) -> None:
    """A :class:`RunError` naming an entry of ``parts/`` that is not a stored point (a
    directory holding both its tables): a folder or file put there by hand."""
    for part in stored_parts(run_dir):
        if not all((part / name).is_file() for name in TABLES):
            raise RunError(run_dir, f"{PARTS}/{part.name}: not a point this rig stored (a "
                                    f"point is a folder holding {WINDOWS} and {POINTS}); move "
                                    "it out of the run")


def segment_name(number: int) -> str:
    return f"seg-{number:06d}.parquet"
