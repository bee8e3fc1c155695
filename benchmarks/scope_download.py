"""Benchmark: one oscilloscope record, from the trigger to a Chunk, through pyvisa-py.

The emulated scope runs in its own process (as on the simulated bench); the rig's
:class:`~energyrig.instruments.scope.driver.Scope` arms it, a trigger window is sent on the
virtual wire, and ``collect`` waits, downloads three channels as IEEE 488.2 binary blocks
(``query_binary_values(..., container=numpy.ndarray)``; the Rigol dialect in 250 000-point
parts as its guide requires) and scales them with numpy. Reported per memory depth: the time
from the record's completion to the capture (the emulator's rendering of the record
included), the transfer rate, and the peak RSS of the rig's process before the reference
runs.

Beside it, the reference most scope scripts use: the same block read into PyVISA's default
``list`` container and scaled by a per-sample Python expression, timed on the same bytes.

    .venv/bin/python benchmarks/scope_download.py                 # Rigol, 3 depths
    .venv/bin/python benchmarks/scope_download.py --dialect keysight-x
"""
from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from energyrig.instruments.scope.driver import Scope
from energyrig.instruments.scope.config import ScopeConfig
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.process import EmulatorProcess
from energyrig.instruments.sim.wire import edge_records, send_edges

MODEL = PowerModel(supply_v=3.3, idle_a=0.02, active_a=0.045, noise_a=0.5e-3)
#: (sample rate asked for, window) -> a record of about this many points per channel on
#: the DS1000Z (3 channels: 3000 .. 6 M points).
CASES = ((1e6, 0.003), (1e7, 0.003), (1e8, 0.003))


def reference_scaling(codes: bytes, yinc: float, zero: float) -> list[float]:
    """What many scripts do: a list of ints, then one Python expression per sample."""
    return [(c - zero) * yinc for c in list(codes)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dialect", default="rigol-ds1000z",
                        choices=("rigol-ds1000z", "keysight-x"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table = Table(title=f"scope record download ({args.dialect}, 3 channels, pyvisa-py "
                        "SOCKET on loopback, emulator in its own process)")
    for col in ("points/channel", "rate", "download+scale s", "MB/s", "numpy scale ms",
                "list+loop scale ms", "speed-up", "peak RSS MB"):
        table.add_column(col, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        wire = Path(tmp) / "wire"
        seq = 0
        with EmulatorProcess(MODEL, wire=wire, module="energyrig.instruments.scope.emulator",
                             extra_args=["--dialect", args.dialect]) as emu:
            for rate, window in CASES:
                settings = ScopeConfig(resource=emu.port, dialect=args.dialect, supply_v=3.3,
                                       max_current_a=0.08, sample_rate_hz=rate,
                                       timeout_s=60.0)
                times = []
                with Scope(settings) as scope:
                    for k in range(args.repeat):
                        scope.arm(pre_s=0.02, window_s=window, post_s=0.005)
                        rise = time.monotonic_ns() + 5_000_000
                        send_edges(wire, edge_records([rise, rise + int(window * 1e9)],
                                                      [1, 0], seq0=seq))
                        seq += 2
                        # the record ends total_s after its start, pre_s before the rise;
                        # the emulator completes it latency_s (0.05 s) after that
                        end = rise * 1e-9 - 0.02 + scope._plan.total_s + 0.05
                        capture = scope.collect(timeout_s=60.0)
                        times.append(time.monotonic() - max(end, 0.0))
                    scaling, codes = scope.read_channel(settings.shunt)
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                chunk = capture.chunk_list[0]
                n = len(chunk)
                raw = codes.tobytes()
                t0 = time.perf_counter()
                scaling.volts(codes)
                t_np = time.perf_counter() - t0
                t0 = time.perf_counter()
                reference_scaling(raw, scaling.volts_per_code, scaling.zero_code)
                t_ref = time.perf_counter() - t0
                best = min(times)
                table.add_row(f"{n:,}", f"{1 / chunk.period_s:.3g}", f"{best:.3f}",
                              f"{3 * n / best / 1e6:.1f}", f"{t_np * 1e3:.2f}",
                              f"{t_ref * 1e3:.1f}", f"{t_ref / t_np:.0f}x", f"{rss:.0f}")
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
