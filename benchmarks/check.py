"""Check mode: run the benchmarks again and say which headline figure regressed.

docs/performance.md records each headline figure beside its table with a marker::

    <!-- bench:decode.decode_samples_per_s=3.3e8 -->
    <!-- bench:decode.peak_rss_mb=84 lower -->

``decode`` is the benchmark (``benchmarks/decode.py``), ``decode_samples_per_s`` a key of
the object its ``--json`` prints, the number the figure recorded, in the unit of that key.
Higher is better unless the marker ends in ``lower``. A benchmark joins by printing its
figure under a key in ``--json`` and adding its marker to the page.

This script runs each benchmark named by a marker once (``--json``, its defaults), compares
every figure with the recorded one, prints one line per figure and exits 1 if any got
worse by more than ``--tolerance`` (20 %). Run it by hand on a machine as quiet as the one
the figures were recorded on (the page states its load); it is not a test and CI does not
run it: figures taken under another load differ by more than the tolerance.

    .venv/bin/python benchmarks/check.py                    # every benchmark with a marker
    .venv/bin/python benchmarks/check.py decode --runs 3    # one benchmark, best of 3 runs
    .venv/bin/python benchmarks/check.py --results decode=out.json   # compare a saved --json
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "performance.md"
TOLERANCE = 0.20
"""A figure that got worse than the recorded one by more than this fraction regressed."""

MARKER = re.compile(r"<!--\s*bench:(?P<bench>[A-Za-z0-9_]+)\.(?P<key>[A-Za-z0-9_]+)"
                    r"\s*=\s*(?P<value>[-+0-9.eE]+)(?P<lower>\s+lower)?\s*-->")


@dataclass(frozen=True)
class Figure:
    """A headline figure as docs/performance.md records it."""

    bench: str
    key: str
    recorded: float
    lower_is_better: bool

    @property
    def name(self) -> str:
        return f"{self.bench}.{self.key}"


@dataclass(frozen=True)
class Verdict:
    figure: Figure
    now: float | None  # None: the benchmark's --json has no such key

    @property
    def change(self) -> float:
        """Relative change from the recorded figure, positive when it got better."""
        if self.now is None:
            return float("-inf")
        sign = -1 if self.figure.lower_is_better else 1
        return sign * (self.now - self.figure.recorded) / self.figure.recorded

    def regressed(self, tolerance: float) -> bool:
        return self.change < -tolerance


def read_figures(text: str) -> list[Figure]:
    """Every marker of the page, in order; a name marked twice is an error."""
    figures = [Figure(m["bench"], m["key"], float(m["value"]), bool(m["lower"]))
               for m in MARKER.finditer(text)]
    names = [f.name for f in figures]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"figures marked more than once: {', '.join(twice)}")
    return figures


def run_benchmark(bench: str) -> dict[str, float]:
    """``benchmarks/<bench>.py --json``, with this interpreter; its JSON object."""
    script = Path(__file__).with_name(f"{bench}.py")
    if not script.is_file():
        raise FileNotFoundError(f"{PAGE.name} marks figures of {bench!r}, but {script} does not exist")
    done = subprocess.run([sys.executable, str(script), "--json"], capture_output=True, text=True,
                          check=False)
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"{script.name} --json printed nothing (exit {done.returncode}): "
                           f"{done.stderr.strip()[-500:]}")
    return json.loads(lines[-1])


def best(figure: Figure, runs: list[dict[str, float]]) -> float | None:
    values = [float(r[figure.key]) for r in runs if figure.key in r]
    if not values:
        return None
    return min(values) if figure.lower_is_better else max(values)


def compare(figures: list[Figure], results: dict[str, list[dict[str, float]]]) -> list[Verdict]:
    """Each figure against the best of its benchmark's runs in ``results`` (name -> runs)."""
    return [Verdict(f, best(f, results[f.bench])) for f in figures if f.bench in results]


def report(verdicts: list[Verdict], tolerance: float) -> list[str]:
    lines = []
    for v in verdicts:
        if v.now is None:
            lines.append(f"MISSING  {v.figure.name}: its benchmark's --json has no {v.figure.key!r}")
            continue
        state = "FELL" if v.regressed(tolerance) else "ok"
        lines.append(f"{state:8} {v.figure.name}: {v.now:.4g} now, {v.figure.recorded:.4g} recorded "
                     f"({v.change:+.0%}{', lower is better' if v.figure.lower_is_better else ''})")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("benches", nargs="*", help="benchmarks to check (default: every one the page marks)")
    ap.add_argument("--runs", type=int, default=1, help="runs of each benchmark; the best counts (default 1)")
    ap.add_argument("--tolerance", type=float, default=TOLERANCE,
                    help=f"fraction a figure may get worse before it counts as fallen (default {TOLERANCE})")
    ap.add_argument("--page", type=Path, default=PAGE, help="the page with the markers")
    ap.add_argument("--results", action="append", default=[], metavar="BENCH=FILE",
                    help="compare this saved --json output of BENCH instead of running it")
    args = ap.parse_args(argv)

    try:
        figures = read_figures(args.page.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"check: error: {args.page}: {e}", file=sys.stderr)
        return 2
    benches = args.benches or sorted({f.bench for f in figures})
    unknown = sorted(set(benches) - {f.bench for f in figures})
    if unknown:
        print(f"check: error: {args.page}: no figure marked for {', '.join(unknown)}", file=sys.stderr)
        return 2
    saved = dict(item.split("=", 1) for item in args.results)
    results = {}
    for bench in benches:
        if bench in saved:
            results[bench] = [json.loads(Path(saved[bench]).read_text().strip().splitlines()[-1])]
        else:
            results[bench] = [run_benchmark(bench) for _ in range(args.runs)]
    for bench, runs in results.items():
        loads = [r["load_average"][0] for r in runs if "load_average" in r]
        if loads:
            print(f"{bench}: {len(runs)} run(s), load average {', '.join(f'{x:.1f}' for x in loads)}")
    verdicts = compare([f for f in figures if f.bench in benches], results)
    print("\n".join(report(verdicts, args.tolerance)))
    fallen = [v.figure.name for v in verdicts if v.regressed(args.tolerance)]
    if fallen:
        print(f"{len(fallen)} of {len(verdicts)} figures fell by more than {args.tolerance:.0%} "
              f"against {args.page.name}: {', '.join(fallen)}")
    return 1 if fallen else 0


if __name__ == "__main__":
    sys.exit(main())
