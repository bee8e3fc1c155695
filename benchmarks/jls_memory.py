"""Benchmark: the peak resident memory of ``rig analyze --json`` on a ~1 GB Joulescope JLS.

Issue 13: the readers stream in bounded memory, a 1 GB JLS under 300 MB RSS. The file is
written with pyjls's own ``Writer`` (:func:`write_jls`: current and voltage as float32, GPI 0
as the trigger, one source as a JS220 recording holds them) to a temporary directory; ``rig
analyze FILE --json`` then runs in a subprocess and its peak RSS is taken from ``wait4``.
The number of windows found is checked against the number written.

    .venv/bin/python benchmarks/jls_memory.py [--gb 1.0] [--json] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from pyjls import DataType, SignalType, Writer

BIN = Path(sys.executable).parent
RATE = 1_000_000
BLOCK = 1_000_000          # samples per write: one period pattern of 1 s
PULSES_PER_BLOCK = 20      # a 10 ms pulse every 50 ms
BYTES_PER_SAMPLE = 4 + 4 + 1 / 8  # current f32, voltage f32, gpi u1 (before summaries)
LIMIT_MB = 300.0


def write_jls(path: Path, gigabytes: float) -> int:
    """Write a JLS v2 file of about ``gigabytes`` GB (10**9 B) of samples at 1 MHz: 1 mA idle,
    10 mA during a 10 ms GPI 0 pulse every 50 ms, 3.3 V; return the number of pulses."""
    blocks = max(1, round(gigabytes * 1e9 / BYTES_PER_SAMPLE / BLOCK))
    t = np.arange(BLOCK) % (BLOCK // PULSES_PER_BLOCK)
    high = (t >= 20_000) & (t < 30_000)
    current = np.where(high, 0.010, 0.001).astype(np.float32)
    volts = np.full(BLOCK, 3.3, dtype=np.float32)
    bits = np.packbits(high.astype(np.uint8), bitorder="little")
    with Writer(str(path)) as w:
        w.source_def(source_id=1, name="JS220-000001", vendor="Jetperch", model="JS220",
                     version="", serial_number="000001")
        for sid, name, dtype, units in ((1, "current", DataType.F32, "A"),
                                        (2, "voltage", DataType.F32, "V"),
                                        (3, "gpi[0]", DataType.U1, "")):
            w.signal_def(signal_id=sid, source_id=1, signal_type=SignalType.FSR,
                         data_type=dtype, sample_rate=RATE, name=name, units=units)
        for k in range(blocks):
            w.fsr_f32(1, k * BLOCK, current)
            w.fsr_f32(2, k * BLOCK, volts)
            w.fsr(3, k * BLOCK, bits)
    return blocks * PULSES_PER_BLOCK


def analyze_rss(path: Path) -> tuple[float, float, int]:
    """Wall time (s), peak RSS (MB) and the number of windows of ``rig analyze PATH --json``."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([str(BIN / "rig"), "analyze", str(path), "--json"], stdout=out,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"rig analyze failed: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        out.seek(0)
        windows = len(json.load(out)["windows"])
    return elapsed, usage.ru_maxrss / 1024, windows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0, help="size of the samples, GB")
    parser.add_argument("--keep", type=Path, help="write the file here and keep it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / "memory.jls"
        t0 = time.perf_counter()
        pulses = write_jls(path, args.gb)
        write_s = time.perf_counter() - t0
        elapsed, rss_mb, windows = analyze_rss(path)
        result = {"file_bytes": path.stat().st_size, "write_s": write_s, "analyze_s": elapsed,
                  "peak_rss_mb": rss_mb, "windows": windows, "pulses_written": pulses,
                  "under_limit": rss_mb < LIMIT_MB}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"JLS file           {result['file_bytes'] / 1e9:8.2f} GB "
              f"(written in {write_s:.0f} s)")
        print(f"rig analyze --json {elapsed:8.1f} s, peak RSS {rss_mb:.0f} MB "
              f"(limit {LIMIT_MB:.0f} MB), {windows} windows of {pulses} pulses")
    return 0 if result["under_limit"] and windows == pulses else 1


if __name__ == "__main__":
    raise SystemExit(main())
