"""Benchmark: raw PPK2 bytes -> decoded chunks -> trigger windows and their energy.

Runs, in one process:

1. a long PPK2 stream (100 kS/s, ``--hours`` of it, generated on the fly and never stored)
   through :class:`~energyrig.instruments.ppk2.decode.Ppk2Decoder` and
   :class:`~energyrig.energy.windows.WindowFinder`, recording throughput and the peak RSS;
2. side by side on the same first ``--reference-samples`` bytes: the same pipeline, and the
   ``ppk2-api`` package's ``PPK2_API.get_samples`` (the reference the issue names).

Throughput is samples per second of CPU time of this single-threaded process (the machine
is shared: CPU time is what one core spends; wall-clock figures are printed beside it).

    .venv/bin/python benchmarks/decode.py                 # 15 minutes of stream
    .venv/bin/python benchmarks/decode.py --hours 8       # the eight-hour stream
    .venv/bin/python benchmarks/decode.py --json          # one JSON object on stdout
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from energyrig.instruments.ppk2.decode import SAMPLE_RATE_HZ, Ppk2Decoder, encode_words
from energyrig.instruments.ppk2.metadata import parse_metadata
from energyrig.energy.windows import WindowFinder, WindowSettings

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))  # tests/support: test support, not installed
from support.ppk2_reference import reference_api  # noqa: E402

METADATA_TEXT = (TESTS / "data" / "ppk2-metadata.txt").read_text()
VDD_MV = 3300
BLOCK = 1 << 20           # samples per read (10.5 s of stream); a multiple of 64 and of PERIOD
PERIOD = 1 << 12          # trigger period, samples (41 ms)
HIGH = 1500               # trigger-high samples per period (15 ms batch of operations)
PHASE = 700               # the stream starts 700 samples into a window: windows cross blocks
TEMPLATES = 4             # distinct noise blocks, cycled pseudo-randomly


@dataclass
class Stream:
    """A synthetic PPK2 stream: idle ~6 µA, 8 mA operations under trigger D0, noise.

    ``blocks(n)`` yields the raw bytes block by block; content repeats every BLOCK samples
    in trigger phase and counter, so blocks chain seamlessly.
    """

    templates: list[bytes]
    window_energy_j: float  # mean energy of the whole windows inside the decoded templates

    @classmethod
    def build(cls, seed: int = 1) -> Stream:
        rng = np.random.default_rng(seed)
        cal = parse_metadata(METADATA_TEXT)
        piece = 1 << 16  # encode in pieces: the templates, not their temporaries, stay in memory
        templates, energies = [], []
        for _ in range(TEMPLATES):
            words = np.empty(BLOCK, dtype=np.uint32)
            for at in range(0, BLOCK, piece):
                k = np.arange(at, at + piece)
                trigger = ((k + PHASE) % PERIOD) < HIGH
                amps = np.where(trigger, 8e-3, 6e-6) * (1 + 0.05 * rng.standard_normal(piece))
                amps += trigger * 2e-3 * np.sin(2 * np.pi * k / 97)  # CPU activity ripple
                words[at:at + piece] = encode_words(np.abs(amps), cal, VDD_MV, logic=trigger.astype(np.uint8),
                                                    counter_start=at)
            templates.append(words.tobytes())
            chunk = Ppk2Decoder(cal, VDD_MV).feed(words)
            high = chunk.logic.astype(bool)
            # every whole window inside the block: T * sum(v * i) over its samples
            whole = high[PERIOD - PHASE: PERIOD - PHASE + (BLOCK // PERIOD - 1) * PERIOD]
            energies.append(float(chunk.current_a[PERIOD - PHASE:][: whole.size][whole].sum())
                            / (BLOCK // PERIOD - 1))
            del words, chunk
        return cls(templates, float(np.mean(energies)) * VDD_MV / 1000 / SAMPLE_RATE_HZ)

    def blocks(self, n_samples: int, seed: int = 2) -> Iterator[bytes]:
        order = np.random.default_rng(seed)
        whole, rest = divmod(n_samples, BLOCK)
        for _ in range(whole):
            yield self.templates[order.integers(TEMPLATES)]
        if rest:
            yield self.templates[order.integers(TEMPLATES)][: 4 * rest]


@dataclass
class Run:
    samples: int
    cpu_s: float
    wall_s: float
    windows: int
    energy_j: float

    @property
    def samples_per_s(self) -> float:
        return self.samples / self.cpu_s

    @property
    def wall_samples_per_s(self) -> float:
        return self.samples / self.wall_s


def pipeline(blocks: Iterator[bytes], *, spike_filter: bool = False,
             progress: Callable[[int], None] | None = None) -> Run:
    """Decode, find windows, integrate; keep only running totals (bounded memory)."""
    cal = parse_metadata(METADATA_TEXT)
    decoder = Ppk2Decoder(cal, VDD_MV, spike_filter=spike_filter)
    finder = WindowFinder(WindowSettings(trigger_bit=0), source="benchmark")
    samples = windows = 0
    energy = 0.0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for block in blocks:
        chunk = decoder.feed(block)
        for w in finder.feed(chunk):
            windows += 1
            energy += w.energy_j
        samples += len(chunk)
        if progress:
            progress(len(chunk))
    for w in finder.finish():
        windows += 1
        energy += w.energy_j
    return Run(samples, time.process_time() - cpu0, time.perf_counter() - wall0, windows, energy)


def decode_only(blocks: Iterator[bytes], *, spike_filter: bool = False) -> Run:
    """The decoder alone (no windows), for the kernel's own figure."""
    decoder = Ppk2Decoder(parse_metadata(METADATA_TEXT), VDD_MV, spike_filter=spike_filter)
    samples = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for block in blocks:
        samples += len(decoder.feed(block))
    return Run(samples, time.process_time() - cpu0, time.perf_counter() - wall0, 0, 0.0)


def ppk2_api_run(raw: bytes, read_bytes: int) -> tuple[Run, bool]:
    """``PPK2_API.get_samples`` over the same bytes, in reads of ``read_bytes``; also whether
    its values (µA) equal the decoder's with the spike filter on, sample for sample."""
    with reference_api(METADATA_TEXT, VDD_MV) as api:
        values: list[float] = []
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for at in range(0, len(raw), read_bytes):
            values += api.get_samples(raw[at:at + read_bytes])[0]
        run = Run(len(values), time.process_time() - cpu0, time.perf_counter() - wall0, 0, 0.0)
    ours = Ppk2Decoder(parse_metadata(METADATA_TEXT), VDD_MV, spike_filter=True).feed(raw)
    return run, bool(np.array_equal(ours.current_a * 10**6, np.array(values)))


def best_of(repeats: int, make: Callable[[], Run]) -> Run:
    return min((make() for _ in range(repeats)), key=lambda r: r.cpu_s)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hours", type=float, default=0.25,
                    help="length of the long stream in hours of 100 kS/s (default 0.25; 8 = 2.88e9 samples)")
    ap.add_argument("--reference-samples", type=int, default=400_000,
                    help="samples given to both ppk2-api and the pipeline side by side (default 400000)")
    ap.add_argument("--repeats", type=int, default=5,
                    help="repetitions of the side-by-side pipeline run; the fastest counts (default 5)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    args = ap.parse_args(argv)

    stream = Stream.build()
    n_long = int(round(args.hours * 3600 * SAMPLE_RATE_HZ))
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                  TextColumn("{task.completed:.3g}/{task.total:.3g} samples"), TimeRemainingColumn(),
                  transient=True) as bar:
        task = bar.add_task(f"{args.hours:g} h stream", total=n_long)
        long = pipeline(stream.blocks(n_long), progress=lambda n: bar.advance(task, n))
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    decode = best_of(args.repeats, lambda: decode_only(stream.blocks(32 * BLOCK)))
    decode_filtered = best_of(args.repeats, lambda: decode_only(stream.blocks(32 * BLOCK), spike_filter=True))

    raw = b"".join(stream.blocks(args.reference_samples))
    ours = best_of(args.repeats, lambda: pipeline(iter([raw])))
    ours_filtered = best_of(args.repeats, lambda: pipeline(iter([raw]), spike_filter=True))
    ref, equal = ppk2_api_run(raw, read_bytes=4 * 10_000)  # 0.1 s of stream per read, as a poll loop does

    expected_windows = (n_long - (PERIOD - PHASE)) // PERIOD + (1 if (n_long - (PERIOD - PHASE)) % PERIOD >= HIGH else 0)
    result = {
        "samples_per_s": long.samples_per_s,
        "ppk2_api_samples_per_s": ref.samples_per_s,
        "ratio": ours.samples_per_s / ref.samples_per_s,
        "peak_rss_mb": peak_rss_mb,
        "stream_samples": long.samples,
        "stream_hours": long.samples / SAMPLE_RATE_HZ / 3600,
        "stream_cpu_s": long.cpu_s,
        "stream_wall_samples_per_s": long.wall_samples_per_s,
        "windows": long.windows,
        "windows_expected": expected_windows,
        "mean_window_energy_j": long.energy_j / max(long.windows, 1),
        "template_window_energy_j": stream.window_energy_j,
        "decode_samples_per_s": decode.samples_per_s,
        "decode_spike_filter_samples_per_s": decode_filtered.samples_per_s,
        "same_bytes_samples": ours.samples,
        "same_bytes_samples_per_s": ours.samples_per_s,
        "same_bytes_spike_filter_samples_per_s": ours_filtered.samples_per_s,
        "ratio_spike_filter": ours_filtered.samples_per_s / ref.samples_per_s,
        "ppk2_api_values_equal": equal,
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    ok = long.windows == expected_windows and equal
    if args.json:
        print(json.dumps(result))
        return 0 if ok else 1
    print(f"stream            {long.samples:.4g} samples ({result['stream_hours']:.3g} h at 100 kS/s), "
          f"{long.windows} windows (expected {expected_windows}), "
          f"mean energy {result['mean_window_energy_j'] * 1e6:.4f} µJ "
          f"(template {stream.window_energy_j * 1e6:.4f} µJ)")
    print(f"pipeline          {long.samples_per_s / 1e6:8.1f} MS/s  (CPU time; wall {long.wall_samples_per_s / 1e6:.1f} MS/s)")
    print(f"peak RSS          {peak_rss_mb:8.1f} MB")
    print(f"decode alone      {decode.samples_per_s / 1e6:8.1f} MS/s  (blocks of {BLOCK} samples; "
          f"spike filter on: {decode_filtered.samples_per_s / 1e6:.1f} MS/s)")
    print(f"same bytes        {ours.samples} samples:")
    print(f"  energyrig       {ours.samples_per_s / 1e6:8.1f} MS/s  (spike filter on: {ours_filtered.samples_per_s / 1e6:.1f} MS/s)")
    print(f"  ppk2-api        {ref.samples_per_s / 1e6:8.3f} MS/s  (get_samples; its values "
          f"{'equal' if equal else 'DIFFER FROM'} ours with the spike filter on)")
    print(f"  ratio           {result['ratio']:8.0f} x  (spike filter on: {result['ratio_spike_filter']:.0f} x)")
    print(f"load average      {' '.join(f'{x:.2f}' for x in result['load_average'])} on {result['cpus']} CPUs")
    if not ok:
        print("CHECK FAILED: window count differs from the stream's, or ppk2-api's values from ours",
              file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
