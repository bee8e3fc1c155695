"""Benchmark: does the simulated PPK2 bench keep up in real time?

Runs the three processes of the simulated bench on this machine — the PPK2 emulator
(``python -m energyrig.cli.emulate energyrig.instruments.ppk2.emulator``), the host firmware
(``build/host/energyrig-dut`` with ``--trigger-wire``) and the rig side
(:class:`~energyrig.instruments.ppk2.driver.Ppk2` plus :func:`~energyrig.energy.windows.find_windows`, this process) — for ``--seconds``, measuring
one ``run n=N`` window after another, and reports:

* samples lost anywhere (counter gaps seen by the driver, emulator transmit overflows),
* trigger edges that reached the emulator too late (truth windows marked ``late``),
* CPU use of each process,
* the net energy error of every window against the emulator's truth log.

    make firmware-host
    .venv/bin/python benchmarks/ppk2_realtime.py --seconds 600      # the ten-minute run
    .venv/bin/python benchmarks/ppk2_realtime.py --seconds 30 --json
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from energyrig.instruments.ppk2.driver import Ppk2
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.process import EmulatorProcess
from energyrig.instruments.sim.truth import read_truth
from energyrig.energy.windows import find_windows

DUT = Path(__file__).resolve().parents[1] / "build" / "host" / "energyrig-dut"


def run(seconds: float, op: str, batch_n: int, show_progress: bool) -> dict[str, object]:
    model = PowerModel(noise_a=0.3e-6)
    windows = []
    lost = 0
    with tempfile.TemporaryDirectory(prefix="ppk2-realtime-") as tmp:
        wire, truth = Path(tmp) / "wire", Path(tmp) / "truth.jsonl"
        with EmulatorProcess(model, wire=wire, truth=truth) as emu, Ppk2(emu.port) as ppk:
            dut = subprocess.Popen([str(DUT), "--stdio", "--trigger-wire", str(wire)],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert dut.stdin is not None and dut.stdout is not None

            def request(line: str) -> dict[str, object]:
                dut.stdin.write(line + "\n")
                dut.stdin.flush()
                reply = json.loads(dut.stdout.readline())
                if not reply.get("ok"):
                    raise SystemExit(f"DUT refused {line!r}: {reply}")
                return reply

            request(f"prep {op} seed=1")
            procs = {"emulator": psutil.Process(emu.pid), "dut": psutil.Process(dut.pid),
                     "rig": psutil.Process()}
            cpu0 = {k: p.cpu_times() for k, p in procs.items()}
            wall0 = time.monotonic()
            with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                          TimeRemainingColumn(), disable=not show_progress) as progress:
                task = progress.add_task("windows", total=seconds)
                while (elapsed := time.monotonic() - wall0) < seconds:
                    ppk.arm(pre_s=0.02, window_s=0.01, post_s=0.01)
                    request(f"run n={batch_n}")
                    record = ppk.collect(timeout_s=10)
                    lost += record.lost
                    windows += list(find_windows(record))
                    time.sleep(0.02)  # idle between windows: the next one's baseline
                    progress.update(task, completed=elapsed)
            wall = time.monotonic() - wall0
            cpu = {k: sum(p.cpu_times()[:2]) - sum(cpu0[k][:2]) for k, p in procs.items()}
            drops = request("hello")["trigger_drops"]
            dut.stdin.close()
            dut.wait()
        (stream,), truths = read_truth(truth)
    errors, late, unmatched, flagged = [], 0, 0, 0
    for window in windows:
        true = stream.match(truths, window.start_s)
        if true is None:
            unmatched += 1
            continue
        late += true.late
        flagged += bool(window.flags)
        errors.append(window.net_energy_j / true.net_energy_j - 1)
    err = np.abs(np.asarray(errors))
    return {
        "seconds": round(wall, 1), "op": op, "batch_n": batch_n, "windows": len(windows),
        "lost_samples": lost, "trigger_drops": drops, "late_windows": late,
        "unmatched_windows": unmatched, "flagged_windows": flagged,
        "cpu_percent": {k: round(100 * v / wall, 1) for k, v in cpu.items()},
        "median_abs_rel_error": float(np.median(err)), "p95_abs_rel_error":
        float(np.percentile(err, 95)), "max_abs_rel_error": float(err.max()),
        "median_window_s": float(np.median([w.duration_s for w in windows])),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0, help="how long to run (default 60)")
    ap.add_argument("--op", default="sha256 payload_bytes=1024",
                    help="op and parameters to prep (default: %(default)s)")
    ap.add_argument("--batch", type=int, default=5000, help="ops per window (default 5000)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if not DUT.exists():
        ap.error(f"{DUT} is missing; run `make firmware-host` first")
    result = run(args.seconds, args.op, args.batch, show_progress=not args.json)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>22}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
