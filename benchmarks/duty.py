"""Benchmark: the bench's duty and points per hour on the quick plan, one window per request
(today's way) against groups of windows (``run windows=R``), in one run (issue 24 part 3).

The emulated Cortex-M4 bench (``fixtures/sim-m4.toml``) is calibrated once (``rig calibrate
all --yes``, into a calibration directory of its own, so no stored record is touched); then
the plan is swept twice on it (more with the options below), each sweep in a fresh
process, one after the other: with the fixture's ``measure.max_group`` set to 1 (every
window its own request, arm and record, as before groups) and as the fixture has it
(groups: the adaptive rule asks for the windows the CI still needs, one request and one
PPK2 record for them). Per way it reports

- the sweep's wall time (the run's manifest: its start to its end), s, and the points per
  hour it makes;
- the **duty**: the windows' total length (``windows.parquet`` ``duration_s``) over that
  wall time, the share of it spent measuring an op; and the duty of the points whose
  windows are at least 20 ms long (``duty_20ms``: their windows over their own wall time);
- the median wall time of a point, s: from its ``point_started`` (``rig sweep --json``) to
  the next point's, the last point's to its ``point_stored`` (a point stored while the next
  one is measured takes the bench until the next one starts, not until it is stored): a
  point whose batch grew under load (a window cut short by a stream loss) weighs on the
  sweep's wall time, not on this median;
- the points that met the plan's ``ci_target`` and those flagged ``ci_target_not_met``, the
  median and worst 95 % CI half-width of the energy per op, the windows flagged;
- the load average before and after, and the CPU time of the sweep's processes, s.

``--before SRC`` sweeps today's way with the code of another tree's ``src`` (the code before
a change: ``git archive main src | tar -x -C /tmp/before``, its compiled kernels copied in),
and that code's grouped way too (``before_grouped``), in the same run: three sweeps, one
after the other, so the load hits each alike.

``--min-windows R`` (default 16; 0: not) sweeps the plan both ways once more with every point
asking for at least R windows (a temporary copy of the plan with ``[adaptive] min_windows =
R`` and ``max_windows`` at least R; this tree's code): the duty where points need many
windows, against the quick plan's, whose points meet their CI target in 3. ``--fixture-before FILE`` also sweeps
the grouped way on FILE (the fixture before a change of it, calibrated on its own), in the
same run: ``fixture_before``. With ``--min-windows``, ``--before`` and ``--fixture-before``
each sweep the many-window plan grouped too (``before_grouped_minR``, ``fixture_before_minR``).

``--json`` prints one object: ``duty`` holds the fractions (``today``, ``grouped``, and
``*_20ms``), ``wall_ratio`` the grouped sweep's wall time over today's, and flat keys for
docs/performance.md's markers (``duty_today``, ``duty_grouped``, ``duty_grouped_20ms``,
``wall_ratio``, ``points_per_hour_grouped``); with ``--min-windows`` ``duty`` also holds
``today_many`` and ``grouped_many``, with the flat keys ``duty_today_many``,
``duty_grouped_many``, ``wall_ratio_many`` and ``many_windows`` (R).

Run: ``.venv/bin/python benchmarks/duty.py [--plan plans/quick.toml] [--min-windows R]
[--before SRC] [--fixture-before FILE] [--json]``
(needs ``make firmware-host firmware-qemu``), with this tree's ``src`` first on ``PYTHONPATH``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from m4_vs_host import SWEEP_DONE, run_figures  # this folder: the script's own

from energyrig.calibration.store import CALIBRATION_DIR_ENV
from energyrig.results.store.layout import WINDOWS
from energyrig.rig.plan import load_plan

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "sim-m4.toml"
#: The windows whose points count in ``duty_20ms``, s.
LONG_WINDOW_S = 20e-3
#: ``--min-windows``' default: one full group (the fixture's ``measure.max_group``).
MANY_WINDOWS = 16


def env(calibration_dir: Path, src: Path = ROOT / "src") -> dict[str, str]:
    return {**os.environ, CALIBRATION_DIR_ENV: str(calibration_dir),
            "PYTHONPATH": str(src)}


def variant(max_group: int | None, tmp: Path, fixture: Path = FIXTURE,
            name: str = "sim-m4") -> Path:
    """``fixture`` (``fixtures/sim-m4.toml``) with ``measure.max_group`` set (``None``: as
    it is), written into ``tmp`` as ``name-…`` with its relative paths made absolute."""
    text = fixture.read_text()
    text = text.replace('"../firmware/', f'"{ROOT}/firmware/')
    if max_group is not None:
        text = _set_key(text, "measure", "max_group", max_group)
    path = tmp / f"{name}-{max_group or 'as-is'}.toml"
    path.write_text(text)
    return path


def _set_key(text: str, table: str, key: str, value: int) -> str:
    """TOML ``text`` with the integer ``key`` set to ``value``: where it is, or as the first
    line after ``[table]``'s header (a comment may follow the header)."""
    text, n = re.subn(rf"(?m)^{key}\s*=\s*\d+", f"{key} = {value}", text)
    if n:
        return text
    return re.sub(rf"(?m)^(\[{table}\][^\n]*\n)", rf"\g<1>{key} = {value}\n", text, count=1)


def many_windows_plan(plan: Path, windows: int, tmp: Path) -> Path:
    """``plan`` with every point asking for at least ``windows`` windows (``[adaptive]
    min_windows``, ``max_windows`` raised to it where lower), written into ``tmp`` with its
    relative paths made absolute."""
    adaptive = load_plan(plan).adaptive
    text = plan.read_text().replace('"../', f'"{plan.resolve().parent}/../')
    for key, value in (("min_windows", windows),
                       ("max_windows", max(windows, adaptive.max_windows))):
        text = _set_key(text, "adaptive", key, value)
    path = tmp / f"{plan.stem}-min{windows}.toml"
    path.write_text(text)
    if load_plan(path).adaptive.min_windows != windows:
        raise SystemExit(f"{plan}: could not set [adaptive] min_windows = {windows}")
    return path


def calibrate(fixture: Path, calibration_dir: Path) -> None:
    """``rig calibrate all --yes -f fixture`` into ``calibration_dir``, as ``make run``."""
    if subprocess.run([sys.executable, "-m", "energyrig.cli.app", "calibrate", "all",
                       "--yes", "-f", str(fixture)], env=env(calibration_dir),
                      stdout=subprocess.DEVNULL, check=False).returncode != 0:
        raise SystemExit(f"rig calibrate all failed on {fixture}")


def sweep(name: str, fixture: Path, plan: Path, tmp: Path, calibration_dir: Path,
          src: Path = ROOT / "src") -> dict[str, object]:
    """Sweep ``plan`` on ``fixture`` with the code of ``src``; its figures."""
    out = tmp / f"run-{name}"
    load_before = os.getloadavg()[0]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started: dict[str, float] = {}
    point_wall: dict[str, float] = {}
    last: list[str] = []  # the point started last
    with subprocess.Popen([sys.executable, "-m", "energyrig.cli.app", "sweep", str(plan),
                           "-f", str(fixture), "--out", str(out), "--json"],
                          env=env(calibration_dir, src), stdout=subprocess.PIPE,
                          text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            now = time.monotonic()
            event = json.loads(line)
            key = (event.get("point") or {}).get("key")
            if event["event"] == "point_started":
                if last:
                    point_wall[last[0]] = now - started[last[0]]
                started[key], last[:] = now, [key]
            elif event["event"] == "point_stored" and last == [key]:
                point_wall[key] = now - started[key]
    if proc.returncode not in SWEEP_DONE:
        raise SystemExit(f"rig sweep failed on {fixture} (exit {proc.returncode})")
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = run_figures(out)
    windows = pd.read_parquet(out / WINDOWS)
    per_point = windows.groupby("point_key")["duration_s"].agg(["sum", "median"])
    long = per_point[(per_point["median"] >= LONG_WINDOW_S)
                     & per_point.index.isin(list(point_wall))]
    long_wall = sum(point_wall[k] for k in long.index)
    return {"way": name, **figures,
            "duty_20ms": round(float(long["sum"].sum()) / long_wall, 3) if long_wall else None,
            "points_20ms": int(len(long)),
            "point_wall_median_s": round(statistics.median(point_wall.values()), 3),
            "points_per_hour": round(int(figures["points"]) / float(figures["wall_s"]) * 3600),
            "cpu_s": round(cpu_after.ru_utime + cpu_after.ru_stime
                           - cpu_before.ru_utime - cpu_before.ru_stime, 1),
            "load_before": round(load_before, 1), "load_after": round(os.getloadavg()[0], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plan", type=Path, default=ROOT / "plans" / "quick.toml")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the calibration and the runs in DIR (new or empty)")
    parser.add_argument("--before", type=Path, metavar="SRC",
                        help="sweep today's way (and its grouped way) with the code of SRC")
    parser.add_argument("--min-windows", type=int, default=MANY_WINDOWS, metavar="R",
                        help="sweep both ways again with points of at least R windows "
                             f"(default {MANY_WINDOWS}; 0: not)")
    parser.add_argument("--fixture-before", type=Path, metavar="FILE",
                        help="sweep the grouped way on FILE too (the fixture before a change)")
    args = parser.parse_args()
    target = load_plan(args.plan).adaptive.ci_target
    with tempfile.TemporaryDirectory() as name:
        tmp = args.keep or Path(name)
        tmp.mkdir(parents=True, exist_ok=True)
        calibration_dir = tmp / "calibration"
        today, grouped = variant(1, tmp), variant(None, tmp)
        calibrate(grouped, calibration_dir)
        if args.fixture_before:
            old_fixture = variant(None, tmp, args.fixture_before, "before")
            calibrate(old_fixture, tmp / "calibration-before")
        before = args.before or ROOT / "src"
        rows = [sweep("today", today, args.plan, tmp, calibration_dir, before)]
        if args.before:
            rows.append(sweep("before_grouped", grouped, args.plan, tmp, calibration_dir,
                              before))
        if args.fixture_before:
            rows.append(sweep("fixture_before", old_fixture, args.plan, tmp,
                              tmp / "calibration-before"))
        rows.append(sweep("grouped", grouped, args.plan, tmp, calibration_dir))
        if args.min_windows:
            plan = many_windows_plan(args.plan, args.min_windows, tmp)
            many_rows = [sweep(f"today_min{args.min_windows}", today, plan, tmp,
                               calibration_dir)]
            if args.before:
                many_rows.append(sweep(f"before_grouped_min{args.min_windows}", grouped, plan,
                                       tmp, calibration_dir, args.before))
            if args.fixture_before:
                many_rows.append(sweep(f"fixture_before_min{args.min_windows}", old_fixture,
                                       plan, tmp, tmp / "calibration-before"))
            many_rows.append(sweep(f"grouped_min{args.min_windows}", grouped, plan, tmp,
                                   calibration_dir))
    one, many = rows[0], next(r for r in rows if r["way"] == "grouped")
    summary = {"duty": {"today": one["duty"], "grouped": many["duty"],
                        "today_20ms": one["duty_20ms"], "grouped_20ms": many["duty_20ms"]},
               "duty_today": one["duty"], "duty_grouped": many["duty"],
               "duty_grouped_20ms": many["duty_20ms"],
               "wall_ratio": round(float(many["wall_s"]) / float(one["wall_s"]), 2),
               "point_wall_ratio": round(float(many["point_wall_median_s"])
                                         / float(one["point_wall_median_s"]), 2),
               "points_per_hour_today": one["points_per_hour"],
               "points_per_hour_grouped": many["points_per_hour"],
               "ci_target": target, "ways": rows}
    if args.before:  # the new code's grouped sweep against the code before's
        summary["wall_ratio_before_grouped"] = round(float(many["wall_s"])
                                                     / float(rows[1]["wall_s"]), 2)
    if args.min_windows:  # points of many windows, both ways
        one_r, many_r = many_rows[0], many_rows[-1]
        summary["duty"].update(today_many=one_r["duty"], grouped_many=many_r["duty"])
        summary.update(duty_today_many=one_r["duty"], duty_grouped_many=many_r["duty"],
                       wall_ratio_many=round(float(many_r["wall_s"]) / float(one_r["wall_s"]),
                                             2),
                       many_windows=args.min_windows)
        rows += many_rows
    if args.json:
        print(json.dumps(summary))
        return
    print(f"plan {args.plan.name} on {FIXTURE.name}, ci_target {target:.1%}")
    print(f"{'way':14} {'wall':>7} {'duty':>6} {'>=20ms':>6} {'pts/h':>6} {'met':>4} "
          f"{'not met':>7} {'CI median':>9} {'CI worst':>8} {'err med':>7} {'err max':>7} "
          f"{'U k=2':>6} {'cpu':>6} {'load':>9}  flagged")
    for r in rows:
        d20 = f"{r['duty_20ms']:6.1%}" if r["duty_20ms"] is not None else f"{'-':>6}"
        print(f"{r['way']:14} {r['wall_s']:6.1f}s {r['duty']:6.1%} {d20} "
              f"{r['points_per_hour']:6} {r['ci_target_met']:4} {r['ci_target_not_met']:7} "
              f"{r['ci_halfwidth_median']:9.3%} {r['ci_halfwidth_worst']:8.3%} "
              f"{r['truth_error_median']:7.3%} {r['truth_error_worst']:7.3%} "
              f"{r['u_k2_median']:6.2%} "
              f"{r['cpu_s']:5.1f}s {r['load_before']:4.1f}-{r['load_after']:<4.1f}  "
              f"{r['flagged_windows']} of {r['windows']} {r['flags']}")
    print(f"wall time, grouped / today: {summary['wall_ratio']:.2f}x; median point "
          f"{many['point_wall_median_s']:.3f} s / {one['point_wall_median_s']:.3f} s = "
          f"{summary['point_wall_ratio']:.2f}x")
    if args.min_windows:
        print(f"points of >= {args.min_windows} windows: grouped / today wall time "
              f"{summary['wall_ratio_many']:.2f}x")
    if args.before:
        print(f"wall time, grouped / before_grouped: {summary['wall_ratio_before_grouped']:.2f}x")


if __name__ == "__main__":
    main()
