"""Benchmark: the window finder and integrator alone (energyrig.energy.windows.WindowFinder).

Feeds chunks of 2**20 samples shaped like the PPK2 decoder's output (float64 current, uint8
logic, constant voltage; optionally a float64 voltage array) with a window every 20 000
samples, rotating over enough distinct chunks (>= 64 MB) that the data comes from memory,
not from the cache. Reports samples per second of CPU time on one core.

    .venv/bin/python benchmarks/windows.py [--chunks 400] [--json]
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from energyrig.capture import Chunk
from energyrig.energy.windows import WindowFinder, WindowSettings

CHUNK = 1 << 20
DISTINCT = 8
PERIOD_S = 1e-5


def make_chunks(voltage_array: bool) -> list[tuple[np.ndarray, np.ndarray | float, np.ndarray]]:
    rng = np.random.default_rng(1)
    out = []
    for _ in range(DISTINCT):
        current = rng.uniform(1e-3, 2e-2, CHUNK)
        logic = np.zeros(CHUNK, dtype=np.uint8)
        for start in range(5000, CHUNK, 20_000):
            logic[start:start + 8000] = 1
        voltage = rng.uniform(2.9, 3.1, CHUNK) if voltage_array else 3.0
        out.append((current, voltage, logic))
    return out


def run(n_chunks: int, voltage_array: bool) -> dict[str, float]:
    data = make_chunks(voltage_array)
    finder = WindowFinder(WindowSettings(guard_s=1e-3, baseline_s=5e-3))
    windows = 0
    cpu0 = time.process_time()
    for k in range(n_chunks):
        current, voltage, logic = data[k % DISTINCT]
        windows += len(finder.feed(Chunk(k * CHUNK, PERIOD_S, current, voltage, logic)))
    windows += len(finder.finish())
    cpu = time.process_time() - cpu0
    return {"samples_per_s": n_chunks * CHUNK / cpu, "windows": windows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=400, help="chunks of 2**20 samples")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    result = {"constant_voltage": run(args.chunks, False), "voltage_array": run(args.chunks, True)}
    if args.json:
        print(json.dumps(result))
        return
    for name, r in result.items():
        print(f"{name:17s} {r['samples_per_s'] / 1e6:8.1f} MS/s  ({r['windows']} windows)")


if __name__ == "__main__":
    main()
