"""Benchmark: where a point's wall time goes, phase by phase, on the quick plan (issue 24
part 3: what a point spends outside its windows).

The emulated Cortex-M4 bench (``fixtures/sim-m4.toml``) is opened once in this process and
the plan's points are measured as ``rig sweep`` measures them (``measure_one``'s rule: the
plan's adaptive ``enough_windows`` and ``next_group``; no calibration: it changes what is
integrated, not the time), each stage's calls timed on the host's monotonic clock:

- ``prep``: the firmware's ``prep`` (keys, buffers, its self-test);
- ``probe_runs``: the unrecorded runs (``auto``'s probe batches);
- ``records_after``: what the bench does after them so the next record does not take
  their windows (``Bench.records_after``: a real bench sleeps ``Limits.stream_lag_s``; the
  simulated one marks the stream's sample at the probes' end, without a wait);
- ``requests``: the recorded requests' round trips (``run`` / ``run windows=R``: the warm-up
  op, each window's settle idle and its batch, the reply);
- ``collect``: the wait for the record after the reply (the stream's lag past the last fall,
  ``post_s``);
- ``processing``: cutting a record into windows, their figures and checks;
- ``arm``: arming the instrument (a stream: marking where the record starts);
- ``annotate``: the simulated bench's truth of each window (``Bench.annotate_group``);
- ``point_flags``: the bench's flags of the point (the simulated bench asks the DUT's
  ``hello`` for trigger drops: a round trip after each recorded request's reply,
  ``Bench.after_reply``, while the record waits for the stream; ``point_flags`` itself
  then asks nothing);
- ``other``: the rest of ``measure_point`` (correction, the rule, progress).

It prints, per phase, its total and its share of the points' wall time, with the windows'
own length (the duty) and the requests' count; ``--json`` prints one object (``phases_s``,
``wall_s``, ``windows_s``, ``duty``, ``points``, ``requests``, ``discarded_windows``: windows
recorded that no point kept, its batch grown after them; ``load``).

Run: ``.venv/bin/python benchmarks/point_time.py [--plan plans/quick.toml] [--json]`` (needs
``make firmware-qemu``), with this tree's ``src`` first on ``PYTHONPATH``.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import energyrig.rig.pipeline as pipeline
from energyrig.fixtures import load_fixture
from energyrig.results.stats import describe_finite
from energyrig.rig.bench import open_bench
from energyrig.rig.plan import Target, expand, load_plan
from energyrig.rig.sweep.stopping import enough_windows, next_group

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "sim-m4.toml"


class Phases:
    """Host time spent in each phase, s, and the calls of each."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, obj: Any, name: str, phase: str | Callable[..., str]) -> None:
        """Time ``obj.name``'s calls as ``phase`` (or ``phase(*args)``'s name)."""
        inner = getattr(obj, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                label = phase if isinstance(phase, str) else phase(*args, **kwargs)
                self.seconds[label] += time.perf_counter() - started
                self.calls[label] += 1

        setattr(obj, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plan", type=Path, default=ROOT / "plans" / "quick.toml")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    plan = load_plan(args.plan)
    phases = Phases()
    wall = windows_s = 0.0
    points = kept = 0
    # scipy's import (the CI's t quantile, once a process: ~1.8 s here) is not a point's
    describe_finite([1.0, 2.0, 3.0])
    load_before = os.getloadavg()[0]
    with open_bench(load_fixture(FIXTURE)) as bench:
        target = Target.from_dut(bench.hello, bench.ops(), bench.board)
        dut = bench.dut
        phases.wrap(dut, "prep", "prep")
        # a recorded run carries the settle idle before its window; a probe runs without
        phases.wrap(dut, "run", lambda n, timeout_s, settle_s=0.0:
                    "requests" if settle_s else "probe_runs")
        phases.wrap(dut, "run_windows", "requests")
        phases.wrap(bench.instrument, "collect", "collect")
        phases.wrap(bench, "records_after", "records_after")
        phases.wrap(bench.instrument, "arm", "arm")
        phases.wrap(bench, "annotate", "annotate")
        phases.wrap(bench, "annotate_group", "annotate")
        phases.wrap(bench, "point_flags", "point_flags")
        phases.wrap(bench, "after_reply", "point_flags")
        for method in ("_find", "_cut_group"):
            phases.wrap(pipeline.Measurement, method, "processing")
        opened = [0]  # windows the recorded requests opened
        run, run_windows = dut.run, dut.run_windows

        def one(n: int, timeout_s: float, settle_s: float = 0.0) -> Any:
            opened[0] += 1 if settle_s else 0
            return run(n, timeout_s, settle_s)

        def many(n: int, windows: int, timeout_s: float, settle_s: float = 0.0) -> Any:
            opened[0] += windows
            return run_windows(n, windows, timeout_s, settle_s)

        dut.run, dut.run_windows = one, many  # type: ignore[method-assign]
        for point in expand(plan, target).points:
            started = time.perf_counter()
            result = pipeline.measure_point(
                bench, point, until=lambda w: enough_windows(w, plan),
                group=lambda w: next_group(w, plan))
            wall += time.perf_counter() - started
            points += 1
            windows_s += sum(w.duration_s for w in result.windows)
            kept += len(result.windows)
    timed = sum(phases.seconds.values())
    out = {"phases_s": {k: round(v, 3) for k, v in
                        sorted(phases.seconds.items(), key=lambda kv: -kv[1])},
           "calls": dict(phases.calls), "other_s": round(wall - timed, 3),
           "wall_s": round(wall, 3), "windows_s": round(windows_s, 3),
           "duty": round(windows_s / wall, 3), "points": points,
           "requests": phases.calls["requests"], "discarded_windows": opened[0] - kept,
           "load": [round(load_before, 1), round(os.getloadavg()[0], 1)]}
    if args.json:
        print(json.dumps(out))
        return
    print(f"{points} points of {args.plan.name} on {FIXTURE.name}: wall {wall:.2f} s "
          f"({wall / points * 1000:.0f} ms a point), windows {windows_s:.2f} s, duty "
          f"{windows_s / wall:.1%}; {out['requests']} recorded requests, "
          f"{out['discarded_windows']} windows measured and dropped (batch grown); "
          f"load {out['load']}")
    for name, seconds in [*out["phases_s"].items(), ("other", out["other_s"])]:
        calls = phases.calls.get(name, 0)
        print(f"  {name:17} {seconds:7.2f} s {seconds / wall:6.1%}  "
              f"{seconds / points * 1000:6.1f} ms a point  ({calls} calls)")


if __name__ == "__main__":
    main()
