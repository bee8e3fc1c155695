"""Benchmark: the quick plan on the emulated Cortex-M4 bench against the host DUT's, one run.

Issue 22: "A benchmark states the bench duty and the wall time of the quick plan on the
emulated board against the host DUT, in one run". For each fixture (``fixtures/sim-m4.toml``,
the emulated board; ``fixtures/sim.toml``, the host DUT) it does what ``make run`` does:
``rig calibrate all --yes -f F`` (into a calibration directory of its own, so no stored
record is touched), then ``rig sweep PLAN -f F``, each in a fresh process, one bench after
the other. Per bench it reports

- the sweep's wall time (the run's manifest: its start to its end), s;
- the bench duty: the windows' total length (``windows.parquet`` ``duration_s``) over that
  wall time, the share of it the instrument spent measuring an op;
- the 95 % CI half-width of each measured point's energy per op (the plan's metric), as a
  share of its mean: median and worst over the points;
- the points that met the plan's ``ci_target``, and the ``ci_target_not_met`` ones;
- the net energy per op's error against the simulated bench's truth (median and worst of
  the points' absolute errors) and its expanded uncertainty U (k = 2), median, as shares of
  the value;
- the windows flagged, and their flags (each flagged window is kept, and counted);
- the calibration's wall time, s, and the load average before and after.

Run: ``.venv/bin/python benchmarks/m4_vs_host.py [--plan plans/quick.toml] [--json]``
(needs ``make firmware-host firmware-qemu``). The rig is run as ``python -m
energyrig.cli.app`` with this tree's ``src`` first on ``PYTHONPATH``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pandas as pd

from energyrig.calibration.store import CALIBRATION_DIR_ENV
from energyrig.flags import CI_TARGET_NOT_MET
from energyrig.results.store.layout import POINTS, WINDOWS
from energyrig.rig.plan import load_plan

ROOT = Path(__file__).resolve().parents[1]
#: The benches compared: name -> fixture.
BENCHES = {"m4": ROOT / "fixtures" / "sim-m4.toml", "host": ROOT / "fixtures" / "sim.toml"}
#: Exit codes of a sweep that completed (3: with failed points, stored as failed).
SWEEP_DONE = (0, 3)


def rig(args: list[str], calibration_dir: Path) -> int:
    """Run ``rig ARGS`` in a fresh process with its own calibration store; its exit code."""
    env = {**os.environ, CALIBRATION_DIR_ENV: str(calibration_dir),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                       os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "energyrig.cli.app", *args], env=env,
                          stdout=subprocess.DEVNULL, check=False).returncode


def run_figures(out: Path) -> dict[str, object]:
    """The figures of the sweep run in ``out``: its wall time (the manifest's start to its
    end), s; the duty (the windows' total length over it); its windows, points, failed and
    flagged ones; the points that met the plan's CI target and the median and worst 95 %
    CI half-width of the energy per op; the net energy per op's error against the truth
    (median and worst, absolute) and its U (k = 2), median, as shares of the value."""
    manifest = json.loads((out / "manifest.json").read_text())
    wall_s = (datetime.fromisoformat(manifest["ended_at"])
              - datetime.fromisoformat(manifest["started_at"])).total_seconds()
    points = pd.read_parquet(out / POINTS)
    windows = pd.read_parquet(out / WINDOWS)
    flags = windows["flag_list"].map(",".join)  # schema 2: a list per window (docs/results.md)
    measured = points[points["status"] != "skipped"]
    half = ((measured["energy_per_op_j_ci_high"] - measured["energy_per_op_j_ci_low"]) / 2
            / measured["energy_per_op_j_mean"])
    not_met = measured["flag_list"].map(lambda f: CI_TARGET_NOT_MET in f)
    # The simulated bench knows each window's true energy: the net energy per op against it,
    # and the expanded uncertainty U (k = 2) of it, as shares of the value.
    net = measured["net_energy_per_op_j_mean"]
    error = (net / measured["true_net_energy_per_op_j_mean"] - 1).abs()
    expanded = 2 * measured["net_energy_per_op_u_j"] / net.abs()
    return {"wall_s": round(wall_s, 1),
            "duty": round(float(windows["duration_s"].sum()) / wall_s, 3),
            "windows": int(len(windows)), "points": int(len(measured)),
            "flagged_windows": int(flags.ne("").sum()),
            "flags": flags[flags.ne("")].value_counts().to_dict(),
            "failed": int((measured["status"] == "failed").sum()),
            "ci_target_met": int((~not_met).sum()), "ci_target_not_met": int(not_met.sum()),
            "ci_halfwidth_median": round(float(half.median()), 5),
            "ci_halfwidth_worst": round(float(half.max()), 5),
            "truth_error_median": round(float(error.median()), 6),
            "truth_error_worst": round(float(error.max()), 6),
            "u_k2_median": round(float(expanded.median()), 5)}


def bench(name: str, fixture: Path, plan: Path, tmp: Path) -> dict[str, object]:
    """Calibrate ``fixture`` and sweep ``plan`` on it, as ``make run`` does; the figures."""
    calibration_dir, out = tmp / f"calibration-{name}", tmp / f"run-{name}"
    load_before = os.getloadavg()[0]
    start = time.monotonic()
    if rig(["calibrate", "all", "--yes", "-f", str(fixture)], calibration_dir) != 0:
        raise SystemExit(f"rig calibrate all failed on {fixture}")
    calibrate_s = time.monotonic() - start
    code = rig(["sweep", str(plan), "-f", str(fixture), "--out", str(out)], calibration_dir)
    if code not in SWEEP_DONE:
        raise SystemExit(f"rig sweep failed on {fixture} (exit {code})")
    return {"bench": name, "fixture": fixture.name, **run_figures(out),
            "calibrate_s": round(calibrate_s, 1), "load_before": round(load_before, 1),
            "load_after": round(os.getloadavg()[0], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plan", type=Path, default=ROOT / "plans" / "quick.toml")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    target = load_plan(args.plan).adaptive.ci_target
    with tempfile.TemporaryDirectory() as tmp:
        rows = [bench(name, fixture, args.plan, Path(tmp)) for name, fixture in BENCHES.items()]
    m4, host = rows
    summary = {"m4_wall_s": m4["wall_s"], "host_wall_s": host["wall_s"],
               "m4_duty": m4["duty"], "host_duty": host["duty"],
               "m4_over_host_wall": round(float(m4["wall_s"]) / float(host["wall_s"]), 2),
               "ci_target": target, "benches": rows}
    if args.json:
        print(json.dumps(summary))
        return
    print(f"plan {args.plan.name}, ci_target {target:.1%} (energy per op, 95 % CI half-width)")
    print(f"{'bench':6} {'wall':>8} {'duty':>6} {'points':>6} {'met':>4} {'not met':>7} "
          f"{'CI median':>9} {'CI worst':>8} {'calibrate':>9} {'load':>9}  flagged windows")
    for r in rows:
        print(f"{r['bench']:6} {r['wall_s']:7.1f}s {r['duty']:6.1%} {r['points']:6} "
              f"{r['ci_target_met']:4} {r['ci_target_not_met']:7} "
              f"{r['ci_halfwidth_median']:9.3%} {r['ci_halfwidth_worst']:8.3%} "
              f"{r['calibrate_s']:8.1f}s {r['load_before']:4.1f}-{r['load_after']:<4.1f}  "
              f"{r['flagged_windows']} of {r['windows']} {r['flags']}")
    print(f"wall time, emulated board / host DUT: {summary['m4_over_host_wall']:.2f}x")


if __name__ == "__main__":
    main()
