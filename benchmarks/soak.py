"""Benchmark: an unattended sweep's long run on the simulated bench, as issue 11 asks.

For ``--minutes N`` the real host firmware runs a cycle of ops (those of
``benchmarks/accuracy.py`` but RSA key generation) on the simulated PPK2 bench, and every
point is stored through the results store exactly as ``rig sweep`` stores it (one atomic
part per point, a merge into a new segment every 256 points). Reported:

- the rig's resident memory (RSS) once a minute: flat means the store and the pipeline do
  not accumulate (the first minutes and the first merge, which brings pyarrow's dataset
  reader in, warm it up; the figure compared is the last minute against the first after
  both, or against the middle of a run too short for them);
- each merge's time against the number of points already stored: it must not grow;
- samples lost (the emulated PPK2's count, and windows flagged ``dropped_samples`` or
  ``stream_time_shift``), edges that reached the emulator late (``truth_late``);
- windows more than 0.5 % off the truth and whether any of them was stored unflagged (none
  may be: issue 11).

    .venv/bin/python benchmarks/soak.py --minutes 60          # the figure of docs/performance.md
    .venv/bin/python benchmarks/soak.py --minutes 2 --json
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import CASES  # noqa: E402  (a sibling benchmark's cases)

from energyrig.flags import UNCALIBRATED  # noqa: E402
from energyrig.fixtures import load_fixture  # noqa: E402
from energyrig.results.store.write import RunWriter  # noqa: E402
from energyrig.rig.bench import open_bench  # noqa: E402
from energyrig.rig.pipeline import measure_point, reps_done  # noqa: E402

#: A window this far off the truth must carry a flag (issue 11).
OFF = 0.005
WARM_UP_S = 300.0


def soak(minutes: float, log: Console) -> dict[str, Any]:
    """Measure and store the cycle of ops for ``minutes``; the figures above."""
    cycle = [c for c in CASES if c.op != "rsa-keygen"]
    counts = dict.fromkeys(("dropped_samples", "stream_time_shift", "truth_late", "no_truth"), 0)
    rss: list[tuple[float, float]] = []
    merges: list[tuple[int, float]] = []
    windows = failed = off = off_unflagged = 0
    errors: list[float] = []
    t0 = time.monotonic()
    first_merge_s = 0.0
    t_end = t0 + minutes * 60
    with tempfile.TemporaryDirectory() as tmp, \
            RunWriter.create(Path(tmp) / "run") as writer, \
            open_bench(load_fixture()) as bench:
        n = 0
        while time.monotonic() < t_end:
            case = cycle[n % len(cycle)]
            result = measure_point(bench, replace(case.point(bench.board), rep=n),
                                   until=reps_done(5), min_samples=case.min_samples)
            t_write = time.monotonic()
            writer.write_point(result.point, list(result.windows), batch_n=result.batch_n,
                               status="ok" if result.ok else "failed", reason=result.reason)
            n += 1
            if n % writer.consolidate_every == 0:
                merges.append((n, time.monotonic() - t_write))
                first_merge_s = first_merge_s or time.monotonic() - t0
            failed += not result.ok
            windows += len(result.windows)
            for flag in counts:
                counts[flag] += sum(flag in w.flags for w in result.windows)
            for w in (w for w in result.windows if w.true_net_energy_j):
                errors.append(e := w.net_energy_j / w.true_net_energy_j - 1.0)
                if abs(e) > OFF:  # the bench is not calibrated: that flag says nothing here
                    off += 1
                    off_unflagged += not set(w.flags) - {UNCALIBRATED}
            now = time.monotonic() - t0
            if not rss or now - rss[-1][0] >= 60:
                rss.append((now, psutil.Process().memory_info().rss / 2**20))
                log.print(f"{now / 60:5.1f} min  {n} points  {windows} windows  "
                          f"RSS {rss[-1][1]:.0f} MB  merges {len(merges)}  flagged {counts}")
        rss.append((time.monotonic() - t0, psutil.Process().memory_info().rss / 2**20))
        samples_lost = bench.instrument.describe().to_dict().get("samples_lost")
    # Warm: past the first merge (pyarrow's reader arrives with it) and the first minutes.
    warm_s = max(WARM_UP_S, first_merge_s)
    after_warm_up = [m for t, m in rss if t >= warm_s] or [m for t, m in rss
                                                           if t >= rss[-1][0] / 2]
    err = np.abs(np.array(errors))
    return {
        "minutes": minutes, "points": n, "failed_points": failed, "windows": windows,
        "rss_mb": [[round(t / 60, 2), round(m, 1)] for t, m in rss],
        "rss_growth_after_warm_up": after_warm_up[-1] / after_warm_up[0] - 1,
        "merges": [[k, round(s, 3)] for k, s in merges],
        "samples_lost": samples_lost,
        **{f"windows_flagged_{flag}": c for flag, c in counts.items()},
        "windows_off_0_5_pct": off, "windows_off_unflagged": off_unflagged,
        "median_abs_rel_error": float(np.median(err)) if len(err) else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    log = Console(stderr=True)
    out = soak(args.minutes, log)
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:>28}: {value}")
    return 0 if out["windows_off_unflagged"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
