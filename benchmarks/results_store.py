"""Benchmark: the results store on an overnight-sized run.

Writes N points of W windows each through RunWriter (one atomic, fsynced part per point),
loads the run while it is in progress (every point still a part), closes it (consolidation)
and loads it again. The first and the last merge (every 256 points the parts are folded
into a new segment) are timed, with the resident memory after each: both should not grow
with the run. Reference: the same windows table written by pandas in one
``to_parquet`` call and read back by ``read_parquet`` (no atomicity, no resume).
``write_cpu_ms_per_point`` and ``close_cpu_s`` are the process's CPU time (user + system),
the other times wall-clock.

``--before SRC`` runs the same benchmark with the code of another tree's ``src`` too (the
code before a change: ``git archive main src | tar -x -C /tmp/before``, its compiled kernels
copied in), each in its own process, alternating ``--runs`` times (before, now, before,
now, ...) so that the machine's load hits both alike; ``--json`` then prints
``{"before": [...], "now": [...]}``, one object per run.

    .venv/bin/python benchmarks/results_store.py [--points 1000] [--windows 20] [--json]
    .venv/bin/python benchmarks/results_store.py --before /tmp/before/src --runs 2
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

from energyrig.domain import Point, Window
from energyrig.results import RunWriter, load


def _windows(rng: np.random.Generator, n: int) -> list[Window]:
    return [Window(start_s=float(i), end_s=i + 0.02, samples=2000,
                   energy_j=float(1e-4 * (1 + 0.01 * rng.standard_normal())),
                   baseline_w=3e-3, cycles=1_280_000) for i in range(n)]


def run(n_points: int, n_windows: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        writer = RunWriter.create(run_dir)
        merges: list[tuple[int, float, float]] = []  # (points stored, merge s, RSS MB after)
        t0, cpu0 = time.perf_counter(), time.process_time()
        for i in range(n_points):
            point = Point(op="aes-ecb-encrypt", board="b", key_bits=128, payload_bytes=16 * i)
            t_point = time.perf_counter()
            writer.write_point(point, _windows(rng, n_windows), batch_n=1000)
            if (i + 1) % writer.consolidate_every == 0:  # this write folded the parts in
                merges.append((i + 1, time.perf_counter() - t_point, psutil.Process().memory_info().rss / 2**20))
        t_write, cpu_write = time.perf_counter() - t0, time.process_time() - cpu0
        t0 = time.perf_counter()
        in_progress = load(run_dir)
        t_load_parts = time.perf_counter() - t0
        t0, cpu0 = time.perf_counter(), time.process_time()
        writer.close()
        t_close, cpu_close = time.perf_counter() - t0, time.process_time() - cpu0
        t0 = time.perf_counter()
        done = load(run_dir)
        t_load = time.perf_counter() - t0
        assert len(in_progress.windows) == len(done.windows) == n_points * n_windows

        ref_path = Path(tmp) / "ref.parquet"
        t0 = time.perf_counter()
        done.windows.to_parquet(ref_path)
        t_ref_write = time.perf_counter() - t0
        t0 = time.perf_counter()
        pd.read_parquet(ref_path)
        t_ref_read = time.perf_counter() - t0
    return {
        "points": n_points, "windows_per_point": n_windows,
        "write_ms_per_point": 1e3 * t_write / n_points,
        "write_cpu_ms_per_point": 1e3 * cpu_write / n_points,
        "load_in_progress_s": t_load_parts, "close_s": t_close, "close_cpu_s": cpu_close,
        "load_closed_s": t_load,
        "reference_bulk_write_s": t_ref_write, "reference_read_s": t_ref_read,
        "first_merge_s": merges[0][1] if merges else math.nan,
        "last_merge_s": merges[-1][1] if merges else math.nan,
        "rss_first_merge_mb": merges[0][2] if merges else math.nan,
        "rss_last_merge_mb": merges[-1][2] if merges else math.nan,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def side_by_side(before: Path, n_points: int, n_windows: int, runs: int
                 ) -> dict[str, list[dict[str, float]]]:
    """This benchmark with the code of ``before`` and with this tree's, each run in its own
    process, alternating ``runs`` times."""
    out: dict[str, list[dict[str, float]]] = {"before": [], "now": []}
    for _ in range(runs):
        for way, src in (("before", before), ("now", Path(__file__).resolve().parents[1] / "src")):
            env = {**os.environ, "PYTHONPATH": str(src)}
            line = subprocess.run([sys.executable, __file__, "--points", str(n_points),
                                   "--windows", str(n_windows), "--json"], env=env, check=True,
                                  capture_output=True, text=True).stdout
            out[way].append({**json.loads(line), "load": round(os.getloadavg()[0], 1)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--windows", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--before", type=Path, metavar="SRC",
                        help="run it with the code of SRC too, alternating, each in a process")
    parser.add_argument("--runs", type=int, default=1, help="with --before: runs of each")
    args = parser.parse_args()
    if args.before:
        both = side_by_side(args.before, args.points, args.windows, args.runs)
        if args.json:
            print(json.dumps(both))
            return
        keys = [k for k in both["now"][0] if k not in ("points", "windows_per_point")]
        print(f"{args.points} points x {args.windows} windows; load after each run: "
              + ", ".join(f"{way} {r['load']}" for i in range(args.runs)
                          for way, r in (("before", both["before"][i]), ("now", both["now"][i]))))
        for key in keys:
            print(f"{key:>24}: before " + " / ".join(f"{r[key]:.4g}" for r in both["before"])
                  + "   now " + " / ".join(f"{r[key]:.4g}" for r in both["now"]))
        return
    result = run(args.points, args.windows)
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:>24}: {value:.4g}" if isinstance(value, float) else f"{key:>24}: {value}")


if __name__ == "__main__":
    main()
