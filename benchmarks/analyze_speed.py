"""Benchmark: `rig analyze --json` against the readers it stands on, in one run.

Issue 24 (part 2)'s goals: `rig analyze --json` at >= 100 M samples/s of CPU end to end on a
synthetic 3-channel sigrok `.sr` and on a Joulescope JLS (the decompression or the reader is
then the limit), >= 50 M samples/s on a real capture with ~31 k windows, peak RSS <= 150 MB
whatever the size and the window count, and <= 0.3 s of CPU before reading anything.
The children run with their bytecode cached (``PYTHONPYCACHEPREFIX`` in the run's temporary
directory, one warm-up run first), as an installed rig does: without it each run compiles
the rig's ~60 modules again (~0.2 s).

Each figure is one child process (its own user + system CPU time and peak RSS, from GNU
time: :func:`reader_memory.measured`), so the load of the machine inflates wall time more
than CPU time (it inflates that too: 2 cores shared by a dozen processes). For each capture:

* ``rig analyze --json``: the whole command, JSON written to a file (its window count is
  checked against the file's);
* ``rig reader alone``: the rig's reader for that file (``open_capture(...).chunks()``, float32
  kept as `rig analyze`'s window scan asks), every chunk read and dropped: what `rig
  analyze` cannot beat;
* ``numpy``: plain numpy on the same data, as fast as the format allows: the ``.sr``'s zip
  members inflated with ``zipfile`` (the JLS's blocks read with pyjls) and the energy of the
  trigger-high samples summed over whole arrays, rising edges counted;
* ``pyjls alone`` (JLS): pyjls's ``Reader.fsr`` of the three signals, 2^20 samples at a time,
  as the rig's reader asks for them;
* ``sigrok-cli -O analog`` (``.sr``, with ``--sigrok-cli``): sigrok's own reader printing the
  analog samples as text, to /dev/null (slow: text).

Captures: ``sr`` (``--samples`` samples at 1 MS/s: a trigger, a shunt voltage, the supply;
2 ms windows every 10 ms; the current and supply carry quantised noise, so the zip
members inflate as a real capture's do), ``jls`` (``--samples`` samples, written by
:func:`reader_memory.write_jls`), ``real`` (``--real FILE``: a capture of your own, with
``--real-options``; the sigrok-dumps ``ad5258_read_once_write_continuously_triangle_0to255.sr``
is the one of issue 24) and ``fixed``: `rig analyze --json` on a 21 000-sample ``.sr`` (two
windows, so the summary's interval is computed too; the least of 3 runs): the CPU a run spends before and around the reading, its
fixed cost.

``--before SRC`` runs `rig analyze --json` on another tree's code as well (``main``'s src
copied, with its compiled kernels), alternating with this one, ``--repeat`` times each, the
least CPU kept: the before and after of a change under the same load.

    .venv/bin/python benchmarks/analyze_speed.py [--samples 5000000] [--kinds sr,jls,fixed]
        [--real FILE [--real-options '--trigger SDA ...']] [--sigrok-cli]
        [--before SRC] [--repeat N] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reader_memory import (  # noqa: E402  (the writers of the memory benchmark)
    SR_OPTIONS,
    measured,
    write_jls,
    write_sr_blocks,
)

#: `rig` as its console script runs it (``energyrig.cli.app:main``), by this python: the
#: installed script's first line names the python of the venv that installed it.
RIG = [sys.executable, "-c", "import sys; from energyrig.cli.app import main; "
       "sys.argv[0] = 'rig'; sys.exit(main())"]
SRC = Path(__file__).resolve().parents[1] / "src"
GOALS = {"sr": 100e6, "jls": 100e6, "real": 50e6}  # samples per CPU second
GOAL_RSS_MB, GOAL_FIXED_S = 150, 0.3
RATE = 1_000_000                 # .sr samples per second
BLOCK = 1_000_000                # samples per zip member (100 whole periods)
PERIOD, HIGH = 10_000, 2_000     # a window every 10 ms, 2 ms high
AD5258_OPTIONS = "--trigger SDA --current Voltage --shunt-ohms 1 --voltage 3.3"


def write_sr(path: Path, samples: int) -> tuple[int, int]:
    """A libsigrok 0.5 session of ``samples`` samples at 1 MS/s (whole blocks of
    :data:`BLOCK`, or one shorter block): logic ``TRIG``, analog ``SHUNT`` (volts across
    1 ohm: 1 mA idle, 20 mA in a window) and ``SUPPLY`` (3.3 V), float32 with the noise of
    a 12-bit ADC. Returns the samples and the windows written."""
    n = min(samples, BLOCK)
    blocks = max(1, samples // BLOCK) if samples >= BLOCK else 1
    rng = np.random.default_rng(24)
    phase = np.arange(n) % PERIOD
    high = (phase >= PERIOD - HIGH - 1000) & (phase < PERIOD - 1000)
    lsb = 3.3 / 4096
    shunt = np.where(high, 0.020, 0.001) + np.round(rng.normal(0, 2, n)) * lsb / 100
    supply = 3.3 + np.round(rng.normal(0, 1, n)) * lsb
    write_sr_blocks(path, high, shunt, supply, blocks, "1 MHz")
    return n * blocks, blocks * int(np.count_nonzero(np.diff(high.astype(np.int8)) == 1))


#: The children's environment: this tree's code, its bytecode cached (under a directory of
#: the run, as an installed rig has it) even where PYTHONDONTWRITEBYTECODE is set.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPATH"] = str(SRC)


#: ``--before SRC``: the same children on another tree's code (``main``'s src copied).
BEFORE_ENV: dict[str, str] | None = None


def child(argv: list[str], stdout: Path | None = None,
          env: dict[str, str] | None = None) -> dict[str, float]:
    """:func:`reader_memory.measured` of ``argv`` in this tree's environment (or ``env``)."""
    return measured(argv, stdout, env or ENV)


def rig_runs(argv: list[str], stdout: Path | None = None, repeat: int = 1
             ) -> dict[str, dict[str, float]]:
    """``rig analyze --json`` figures of this tree, the least CPU of ``repeat`` runs, and with
    ``--before`` of the other tree, the two alternating (so the load hits both alike)."""
    trees = {"rig analyze --json": ENV}
    if BEFORE_ENV is not None:
        trees["rig analyze --json (before)"] = BEFORE_ENV
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(repeat):
        for name, env in trees.items():
            runs[name].append(child(argv, stdout if name == "rig analyze --json" else None, env))
    return {name: min(figs, key=lambda fig: fig["cpu_s"]) for name, figs in runs.items()}


READER = """
import sys
from energyrig.cli.app import main  # the CLI's imports, as rig analyze pays them
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture, parse_voltage
args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
volts = args.get("--voltage")
options = CaptureOptions(trigger=args.get("--trigger"), current=args.get("--current"),
                         shunt_ohms=float(args["--shunt-ohms"]) if "--shunt-ohms" in args
                         else None, voltage=parse_voltage(volts) if volts else None,
                         keep_float32=True)  # as rig analyze's window scan reads
n = sum(len(c) for c in open_capture(sys.argv[1], options).chunks())
print(n)
"""

NUMPY_SR = """
import sys, zipfile, numpy as np
z = zipfile.ZipFile(sys.argv[1])
names = sorted((n for n in z.namelist() if n.startswith("logic-1-")),
               key=lambda n: int(n.rsplit("-", 1)[1]))
energy, rises, last = 0.0, 0, 0
for name in names:
    k = name.rsplit("-", 1)[1]
    trig = np.frombuffer(z.read(name), dtype=np.uint8) & 1
    i = np.frombuffer(z.read(f"analog-1-9-{k}"), dtype="<f4").astype(np.float64)
    v = np.frombuffer(z.read(f"analog-1-10-{k}"), dtype="<f4").astype(np.float64)
    energy += float((v * i)[trig == 1].sum()) * 1e-6
    rises += int(np.count_nonzero(np.diff(trig, prepend=last).astype(np.int8) == 1))
    last = trig[-1]
print(rises, energy)
"""

PYJLS = """
import sys, numpy as np, pyjls
integrate = sys.argv[2] == "numpy"
with pyjls.Reader(sys.argv[1]) as r:
    sig = {s.name: s for s in r.signals.values()}
    n = r.signals[sig["current"].signal_id].length
    energy, rises, last = 0.0, 0, 0
    for start in range(0, n, 1 << 20):
        k = min(1 << 20, n - start)
        i = r.fsr(sig["current"].signal_id, start, k)
        v = r.fsr(sig["voltage"].signal_id, start, k)
        bits = r.fsr(sig["gpi[0]"].signal_id, start, k)
        if integrate:
            trig = np.unpackbits(np.asarray(bits, dtype=np.uint8), bitorder="little")[:k]
            p = i.astype(np.float64) * v
            energy += float(p[trig == 1].sum()) * 1e-5
            rises += int(np.count_nonzero(np.diff(trig, prepend=last).astype(np.int8) == 1))
            last = trig[-1]
print(rises, energy)
"""


def measure(name: str, path: Path, samples: int, options: list[str], windows: int | None,
            tmp: Path, sigrok_cli: bool, repeat: int) -> dict[str, object]:
    """The figures of one capture: each program's CPU, wall, peak RSS and samples/s."""
    out = tmp / "out.json"
    runs = rig_runs([*RIG, "analyze", str(path), "--json", *options], out, repeat)
    summary = json.loads(out.read_text())["summary"]
    if windows is not None and summary["count"] != windows:
        raise SystemExit(f"{name}: rig analyze found {summary['count']} windows, the file "
                         f"holds {windows}")
    runs["rig reader alone"] = child([sys.executable, "-c", READER, str(path), *options])
    if path.suffix == ".jls":
        runs["pyjls alone"] = child([sys.executable, "-c", PYJLS, str(path), "read"])
        runs["pyjls + numpy"] = child([sys.executable, "-c", PYJLS, str(path), "numpy"])
    elif name == "sr":
        runs["zipfile + numpy"] = child([sys.executable, "-c", NUMPY_SR, str(path)])
    if sigrok_cli and path.suffix == ".sr" and shutil.which("sigrok-cli"):
        runs["sigrok-cli -O analog"] = child(["sigrok-cli", "-i", str(path), "-O", "analog"])
    for fig in runs.values():
        fig["msamples_per_cpu_s"] = samples / fig["cpu_s"] / 1e6
    return {"samples": samples, "windows": summary["count"], "runs": runs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5_000_000,
                        help="samples of the synthetic .sr and JLS (issue 24: 100000000)")
    parser.add_argument("--kinds", default="sr,jls,fixed",
                        help="comma-separated: sr, jls, fixed (real: with --real)")
    parser.add_argument("--real", type=Path, help="a real capture to analyse as well")
    parser.add_argument("--real-options", default=AD5258_OPTIONS,
                        help="rig analyze options of --real (default: the ad5258 capture's)")
    parser.add_argument("--sigrok-cli", action="store_true",
                        help="also time sigrok-cli -O analog on the .sr files (slow)")
    parser.add_argument("--before", type=Path, metavar="SRC",
                        help="also run rig analyze on this src tree (main's, copied), "
                             "alternating with this one's")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each rig analyze, the least CPU kept (fixed cost: 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    global BEFORE_ENV
    if args.before is not None:
        BEFORE_ENV = {**ENV, "PYTHONPATH": str(args.before.resolve())}
    kinds = args.kinds.split(",") + (["real"] if args.real else [])
    result: dict[str, object] = {"load_average": os.getloadavg(), "cpus": os.cpu_count(),
                                 "captures": {}}
    captures: dict[str, dict[str, object]] = result["captures"]  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="analyze-speed-") as tmpdir:
        tmp = Path(tmpdir)
        ENV["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        write_sr(tmp / "tiny.sr", 1000 + 2 * PERIOD)
        tiny = [*RIG, "analyze", str(tmp / "tiny.sr"), "--json", *SR_OPTIONS]
        child(tiny)  # bytecode compiled once, before any figure
        if BEFORE_ENV is not None:
            child(tiny, env=BEFORE_ENV)
        child([sys.executable, "-c", READER, str(tmp / "tiny.sr"), *SR_OPTIONS])
        if "sr" in kinds:
            n, windows = write_sr(tmp / "synthetic.sr", args.samples)
            captures["sr"] = measure("sr", tmp / "synthetic.sr", n, SR_OPTIONS, windows, tmp,
                                     args.sigrok_cli, args.repeat)
        if "jls" in kinds:
            n, options = write_jls(tmp / "capture.jls", round(args.samples * (8 + 1 / 8)))
            captures["jls"] = measure("jls", tmp / "capture.jls", n, options, None, tmp, False,
                                      args.repeat)
        if "real" in kinds:
            n = int(subprocess.run([sys.executable, "-c", READER, str(args.real),
                                    *shlex.split(args.real_options)], capture_output=True,
                                   text=True, check=True, env=ENV).stdout)
            captures["real"] = measure("real", args.real, n, shlex.split(args.real_options),
                                       None, tmp, args.sigrok_cli, args.repeat)
        if "fixed" in kinds:
            fixed = rig_runs(tiny, repeat=max(3, args.repeat))
            result["fixed_cost"] = fixed["rig analyze --json"]
            if BEFORE_ENV is not None:
                result["fixed_cost_before"] = fixed["rig analyze --json (before)"]
    result["load_average_after"] = os.getloadavg()
    goals = {name: (cap["runs"]["rig analyze --json"]["msamples_per_cpu_s"] * 1e6 >= GOALS[name]
                    and cap["runs"]["rig analyze --json"]["peak_rss_mb"] <= GOAL_RSS_MB)
             for name, cap in captures.items()}
    if "fixed_cost" in result:
        goals["fixed"] = result["fixed_cost"]["cpu_s"] <= GOAL_FIXED_S  # type: ignore[index]
    result["goals_met"] = goals
    for name, cap in captures.items():  # the headline figures (bench: markers) at the top
        rig = cap["runs"]["rig analyze --json"]
        result[f"{name}_msamples_per_cpu_s"] = rig["msamples_per_cpu_s"]
        result[f"{name}_peak_rss_mb"] = rig["peak_rss_mb"]
    if "fixed_cost" in result:
        result["fixed_cpu_s"] = result["fixed_cost"]["cpu_s"]  # type: ignore[index]
    if args.json:
        print(json.dumps(result))  # one line: benchmarks/check.py reads the last
        return 0
    print(f"load average {result['load_average']} -> {result['load_average_after']}")
    for name, cap in captures.items():
        print(f"\n{name}: {cap['samples']:,} samples, {cap['windows']:,} windows")
        print(f"  {'program':28} {'CPU s':>8} {'wall s':>8} {'M samples/CPU s':>16} {'peak RSS MB':>12}")
        for prog, fig in cap["runs"].items():
            print(f"  {prog:28} {fig['cpu_s']:8.2f} {fig['wall_s']:8.2f} "
                  f"{fig['msamples_per_cpu_s']:16.1f} {fig['peak_rss_mb']:12.0f}")
    if "fixed_cost" in result:
        fig = result["fixed_cost"]
        print(f"\nfixed cost (2 windows, 21 000 samples): {fig['cpu_s']:.2f} s CPU, "  # type: ignore[index]
              f"{fig['peak_rss_mb']:.0f} MB")  # type: ignore[index]
        if "fixed_cost_before" in result:
            fig = result["fixed_cost_before"]
            print(f"  before: {fig['cpu_s']:.2f} s CPU, {fig['peak_rss_mb']:.0f} MB")  # type: ignore[index]
    print(f"\ngoals met: {goals}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
