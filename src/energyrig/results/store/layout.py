"""What a run directory holds (:mod:`energyrig.results.store`): the names of its entries,
the schemas of its two tables (their typed columns: :mod:`.schema`), where the kept samples of a window go, and the error that
names a run directory."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from energyrig.domain import PER_OP, key_id
from energyrig.errors import EnergyrigError
from energyrig.results.stats import AVERAGED, STAT_SUFFIXES, SUMMARISED
from energyrig.results.store.schema import (BUDGET_TYPE, CORRECTIONS_TYPE, FLAG_LIST,
                                            FLAG_LIST_TYPE, UNCERTAINTY_TYPE)

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


def capture_dir_name(point_key: str, attempt: int = 1) -> str:
    """The folder of a point's kept samples, named by the point: its op and the factors it
    has (``128b``, a curve, ``64B``, a backend other than software, the board, ``64MHz``),
    ``r<rep>``, then 8 hex digits of its key's hash so that no two points share a folder,
    and ``-a<attempt>`` after the first attempt: ``sha256-64B-nrf52840dk-r0-1f0c2b3a``."""
    f = dict(part.partition("=")[::2] for part in point_key.split("|"))
    parts = [f.get("op", "")]
    for name, unit in (("key_bits", "b"), ("curve", ""), ("payload_bytes", "B")):
        if f.get(name):
            parts.append(f"{f[name]}{unit}")
    if f.get("backend") not in ("", None, "software"):
        parts.append(f["backend"])
    if f.get("board"):
        parts.append(f["board"].replace("/", "_"))
    if f.get("cpu_hz"):
        parts.append(f"{int(f['cpu_hz']) / 1e6:g}MHz")
    parts += [f"r{f.get('rep') or 0}", key_id(point_key)[:8]]
    return "-".join(parts) + (f"-a{attempt}" if attempt > 1 else "")


def capture_name(window: int) -> str:
    """The kept samples' file of window ``window`` in its point's folder: ``w0003.csv``
    (the exact samples: the same name with ``.npz``)."""
    return f"w{window:04d}.csv"


def capture_path(run_dir: str | Path, point_key: str, window: int, attempt: int = 1) -> Path:
    """Where the kept samples of window ``window`` (as numbered in ``windows.parquet``) of
    a point's ``attempt`` are (the file exists only if they were kept):
    ``captures/<capture_dir_name>/w0003.csv``; in a run written before the folders were
    named by point, the file of then (``captures/<key hash>[-attempt]/window-0003.csv``)
    when only it exists."""
    path = Path(run_dir) / CAPTURES / capture_dir_name(point_key, attempt) / capture_name(window)
    old = (Path(run_dir) / CAPTURES / (key_id(point_key) + (f"-{attempt}" if attempt > 1 else ""))
           / f"window-{window:04d}.csv")
    return old if not path.exists() and old.exists() else path


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
    pa.field(FLAG_LIST, FLAG_LIST_TYPE),
    pa.field("corrections", CORRECTIONS_TYPE),
    pa.field("overhead_s", pa.float64()),
    pa.field("net_energy_u_j", pa.float64()),
    pa.field("duration_u_s", pa.float64()),
    pa.field("uncertainty", UNCERTAINTY_TYPE),
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
    pa.field("uncertainty_budget", BUDGET_TYPE),
    pa.field(FLAG_LIST, FLAG_LIST_TYPE),
    pa.field("place", pa.string()),
    pa.field("host", pa.string()),
    pa.field("written_at", pa.timestamp("us", tz="UTC")),
])
#: Where a point ran, in a lab run (:mod:`energyrig.rig.lanes`): the labgrid place and its
#: bench host; null in a run on one local bench.
WHERE = ("place", "host")
