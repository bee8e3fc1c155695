"""Benchmark: the wall time of one plan swept over 1, 2 and 3 places of a lab, side by side,
on the emulated Cortex-M4 board and on the host DUT, in one run.

Per DUT, one simulated lab (:class:`energyrig.rig.labsim.SimLab`: a labgrid coordinator and
three exporters on loopback, each a DUT and an emulated PPK2 shared through ser2net; the DUT
``fixtures/sim-m4.toml``'s emulated board, then ``fixtures/sim.toml``'s host DUT) serves the
three sweeps in turn, so each runs on the same benches with the same plan and seed:
``rig sweep PLAN -f FIXTURE --lab ... --places bench-a``, then ``bench-a,bench-b``, then
all three.

For each it reports the sweep's wall time (from the run's manifest: the first point's start
to the run's end, not the lab's start), the speed-up against one place, how many points each
place measured, the windows flagged, and how far the 2- and 3-place runs' mean power, time
per op and energy per op lie from the 1-place run's, configuration by configuration, and how
long the lab took to start. The benches are the same power model, so the power must agree;
the host DUT's ops run on this machine's cores, so with three benches on two cores they take
longer, and the energy per op with them, while the emulated board's op lasts its cycles at
its clock whatever the load (a real lab's boards have their own CPUs).

Run: ``.venv/bin/python benchmarks/lab_speedup.py [--plan plans/quick.toml]
[--fixture F ...] [--json]`` (needs ``make firmware-host firmware-qemu``).
The host's cores bound the speed-up: every simulated bench (its emulator streaming 400 kB/s,
ser2net, its DUT) and every lane run on this one machine.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pandas as pd

from energyrig.fixtures import load_fixture
from energyrig.rig.labsim import SimLab
from energyrig.results.store.layout import POINTS, WINDOWS
from energyrig.rig.plan import load_plan
from energyrig.rig.sweep.lab import Lab
from energyrig.rig.sweep.run import start_sweep

ROOT = Path(__file__).resolve().parents[1]
#: The labs compared, one after the other: their bench's fixture.
FIXTURES = (ROOT / "fixtures" / "sim-m4.toml", ROOT / "fixtures" / "sim.toml")
#: The figures compared with the 1-place run's: the host DUT's ops run on this machine's
#: cores, so their time (and with it the energy per op) grows when benches share the cores,
#: while the power of a configuration is the power model's whatever the load, and the
#: emulated board's time its cycles at its clock.
DIFFERENCES = {"power": "mean_power_w_mean", "time_per_op": "time_per_op_s_mean",
               "energy_per_op": "energy_per_op_j_mean"}


def sweep(plan_path: Path, fixture: Path, lab: SimLab, places: int,
          out: Path) -> dict[str, object]:
    start = time.monotonic()
    outcome = start_sweep(load_plan(plan_path), out, fixture=load_fixture(fixture),
                          lab=Lab(lab.coordinator, tuple(lab.places[:places]), None))
    total_s = time.monotonic() - start
    manifest = json.loads((out / "manifest.json").read_text())
    wall_s = (datetime.fromisoformat(manifest["ended_at"])
              - datetime.fromisoformat(manifest["started_at"])).total_seconds()
    points = pd.read_parquet(out / POINTS)
    windows = pd.read_parquet(out / WINDOWS)
    measured = points[points["status"] != "skipped"]
    flags = windows["flag_list"].map(",".join)  # schema 2: a list per window (docs/results.md)
    flagged = flags.ne("").sum()
    return {"places": places, "wall_s": round(wall_s, 1), "with_survey_s": round(total_s, 1),
            "points": int(len(measured)), "failed": int(outcome.failed),
            "per_place": measured["place"].value_counts().sort_index().to_dict(),
            "windows": int(len(windows)), "flagged_windows": int(flagged),
            "flags": flags.loc[lambda f: f != ""].value_counts()
            .to_dict(), "_points": measured}


def agreement(base: pd.DataFrame, other: pd.DataFrame, column: str) -> float:
    """The median over configurations of the |relative difference| of a configuration's
    median ``column``."""
    key = ["op", "key_bits", "payload_bytes", "curve"]
    a = base.groupby(key, dropna=False)[column].median()
    b = other.groupby(key, dropna=False)[column].median()
    return float(((b - a) / a).abs().median())


def lab_runs(plan: Path, fixture: Path, tmp: Path) -> list[dict[str, object]]:
    """The plan swept on 1, 2 and 3 places of one lab of ``fixture``'s bench."""
    rows = []
    start = time.monotonic()
    with SimLab(3, fixture) as lab:
        start_s = round(time.monotonic() - start, 1)
        for n in (1, 2, 3):
            rows.append({"fixture": fixture.name, "lab_start_s": start_s,
                         **sweep(plan, fixture, lab, n, tmp / f"{fixture.stem}-run-{n}")})
    base = rows[0]
    for row in rows:
        row["speedup"] = round(float(base["wall_s"]) / float(row["wall_s"]), 2)
        for name, column in DIFFERENCES.items():
            row[f"{name}_diff_vs_1"] = agreement(base["_points"], row["_points"], column)
    for row in rows:
        del row["_points"]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plan", type=Path, default=ROOT / "plans" / "quick.toml")
    parser.add_argument("--fixture", type=Path, action="append",
                        help="a lab's bench (repeat; default: sim-m4.toml, then sim.toml)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [row for fixture in args.fixture or FIXTURES
                for row in lab_runs(args.plan, fixture, Path(tmp))]
    if args.json:
        print(json.dumps({"plan": str(args.plan), "cpus": os.cpu_count(),
                          "load_before": load_before, "load_after": os.getloadavg(),
                          "runs": rows}, indent=2))
        return
    print(f"plan {args.plan}, {os.cpu_count()} CPUs, load {load_before[0]:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after")
    print("| bench | lab start | places | wall time | speed-up | points per place | "
          "windows flagged | vs 1 place: power | time/op | energy/op |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        per = ", ".join(f"{k} {v}" for k, v in r["per_place"].items())  # type: ignore[union-attr]
        print(f"| {r['fixture']} | {r['lab_start_s']} s | {r['places']} | {r['wall_s']} s | "
              f"{r['speedup']}× | {per} | "
              f"{r['flagged_windows']} of {r['windows']} | "
              + " | ".join(f"{r[f'{n}_diff_vs_1'] * 100:.2f} %" for n in DIFFERENCES) + " |")
    print("(vs 1 place: the median over configurations of the |relative difference| of "
          "their median figure)")


if __name__ == "__main__":
    main()
