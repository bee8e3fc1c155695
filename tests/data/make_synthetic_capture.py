"""Write tests/data/synthetic-capture.csv and its true energies (synthetic-capture.truth.json).

The capture imitates a PPK2 recording of a board running batches of 1000 operations:
100 kS/s, a regulated 3.0 V supply recorded as a column, 2 mA idle, and inside each trigger
window 12 mA plus a 1 kHz ripple of 1.5 mA. Trigger edges fall between samples. The true
gross energy of each window is the closed-form integral of v·i between its true edges; the
true net energy subtracts the idle power over the true duration.

Run from the repository root: ``.venv/bin/python tests/data/make_synthetic_capture.py``.
The output is deterministic (seeded), so the committed files can be regenerated exactly.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
PERIOD_S = 1e-5
VOLTS = 3.0
IDLE_A = 2e-3
ACTIVE_A = 12e-3
RIPPLE_A = 1.5e-3
RIPPLE_HZ = 1000.0
WINDOWS = 8
BATCH_N = 1000
SEED = 20261121


def true_window(rise: float, fall: float) -> dict[str, float]:
    """Closed-form energy of the active current between the true edges, J."""
    w = 2 * math.pi * RIPPLE_HZ
    charge = ACTIVE_A * (fall - rise) - RIPPLE_A / w * (math.cos(w * fall) - math.cos(w * rise))
    gross = VOLTS * charge
    return {"rise_s": rise, "fall_s": fall, "duration_s": fall - rise, "energy_j": gross,
            "net_energy_j": gross - VOLTS * IDLE_A * (fall - rise)}


def main() -> None:
    rng = np.random.default_rng(SEED)
    edges = []
    t = 0.0150 + rng.uniform(0, PERIOD_S)
    for _ in range(WINDOWS):
        duration = rng.uniform(2.0e-3, 4.0e-3)
        edges.append((t, t + duration))
        t += duration + rng.uniform(13e-3, 16e-3)
    n = int(math.ceil(t / PERIOD_S))
    time = np.arange(n) * PERIOD_S
    high = np.zeros(n, dtype=bool)
    for rise, fall in edges:
        high |= (time >= rise) & (time < fall)
    current = np.where(high, ACTIVE_A + RIPPLE_A * np.sin(2 * math.pi * RIPPLE_HZ * time), IDLE_A)
    table = np.column_stack([time, current, np.full(n, VOLTS), high.astype(float)])
    np.savetxt(HERE / "synthetic-capture.csv", table, fmt=["%.5f", "%.9e", "%.3f", "%d"],
               delimiter=",", header="time_s,current_a,voltage_v,trigger", comments="")
    truth = {"period_s": PERIOD_S, "batch_n": BATCH_N, "idle_w": VOLTS * IDLE_A,
             "windows": [true_window(r, f) for r, f in edges]}
    (HERE / "synthetic-capture.truth.json").write_text(json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    main()
