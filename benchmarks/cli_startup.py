"""Benchmark: how fast the `rig` command answers, against `python -c "import typer"`.

Issue 12's goal: `rig --help`, `rig --version` and `rig ops` (on the simulated bench, whose
DUT is a local program: the catalogue is one request away) answer within 3x the time of
importing Typer alone, and load numpy, pandas, scipy and matplotlib only in the commands
that compute with them. Each command runs ``--repeat`` times, alternating with the
reference so that both see the same load; the figure is the median wall time and the
largest resident memory (from ``wait4``), side by side in one run.

    .venv/bin/python benchmarks/cli_startup.py [--repeat 7] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
COMMANDS = {
    'python -c "import typer"': [sys.executable, "-c", "import typer"],
    "rig --help": [str(BIN / "rig"), "--help"],
    "rig --version": [str(BIN / "rig"), "--version"],
    "rig ops": [str(BIN / "rig"), "ops"],
    "rig sweep --help": [str(BIN / "rig"), "sweep", "--help"],
}
HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "pyarrow", "pydantic")


def run_once(argv: list[str]) -> tuple[float, float]:
    """Wall time (s) and peak RSS (MB) of one run of ``argv``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}")
    return elapsed, usage.ru_maxrss / 1024


def heavy_modules(args: list[str]) -> list[str]:
    """The heavy libraries loaded by the rig's CLI for ``rig ARGS`` (in this process)."""
    code = ("import sys\nsys.argv = ['rig', *%r]\nfrom energyrig.cli.app import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(' '.join(m for m in %r if m in sys.modules))" % (args, HEAVY))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split("\n")[-2].split() if out.stdout.strip() else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    rss: dict[str, float] = dict.fromkeys(COMMANDS, 0.0)
    for _ in range(args.repeat):
        for name, argv in COMMANDS.items():
            t, m = run_once(argv)
            times[name].append(t)
            rss[name] = max(rss[name], m)
    ref = statistics.median(times['python -c "import typer"'])
    rows = [{"command": name, "median_s": statistics.median(ts), "ratio": statistics.median(ts) / ref,
             "max_rss_mb": rss[name],
             "heavy_loaded": heavy_modules(argv[1:]) if name.startswith("rig") else []}
            for name, ts in times.items()]
    if args.json:
        print(json.dumps(rows))
    else:
        print(f"{'command':<28} {'median':>8} {'x typer':>8} {'max RSS':>9}  heavy libraries loaded")
        for r in rows:
            print(f"{r['command']:<28} {r['median_s']:>7.3f}s {r['ratio']:>8.2f} "
                  f"{r['max_rss_mb']:>7.1f}MB  {' '.join(r['heavy_loaded']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
