"""Benchmark: peak memory of `rig analyze --json` on a ~1 GB capture of each kind it reads.

Issue 13's goal: the readers stream, so a 1 GB capture is analysed in under 300 MB of
resident memory. For each kind in :data:`KINDS` (one generator function each; add a row for
a new reader) a capture of about ``--size-mb`` MB is written to a temporary directory, then
`rig analyze --json` runs on it in a subprocess; its peak RSS comes from GNU time (the
kernel's ``ru_maxrss`` of that child alone: ``wait4`` on a child of this process counted
this process's own pages, shared until the exec, in the child's peak), with its wall time
and the window count, which is checked against the number the generator wrote.

The files hold a 100 kS/s capture: idle 10 µA, a 20 ms window of 2.5 mA every 200 ms on the
trigger. The Power Profiler CSV export and session are laid out as the app writes them
(``tests/support/ppk_app.py``; the export's first rows are compared with that reference
writer before the run); the session is 1 GB of ``session.raw`` before compression; the
Joulescope JLS is written with pyjls's own ``Writer``; the Otii 3 project as
``tests/support/otii3.py`` lays it out; the sigrok session (``sr``, issue 24)
holds the trigger, the current as volts across 1 ohm and the supply, 9 bytes a sample
before compression, as libsigrok's srzip output lays them out. The app's older export
(``Bits``, D7 first), a ppk2-python session (a bit mask) and a Saleae Logic 2 export
(1 GB of ``analog.csv``, its ``digital.csv`` beside it) follow the layouts their tests
cite.

    .venv/bin/python benchmarks/reader_memory.py [--size-mb 1024] [--kinds csv,ppk-csv,...]
        [--json]
"""
from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))  # tests/support: test support, not installed
from support.jls import write_js220
from support.otii3 import write_otii3 as write_otii3_layout
from support.ppk_app import (
    convert_bits16,
    js_number,
    js_to_fixed,
    write_csv_export,
    write_session,
)
from support.rigol_wfm import (
    write_ds1000b,
    write_ds1000c,
    write_ds1000z,
    write_ds2000,
    write_rigol_wfm,
)
from support.scope_files import (
    LEVEL_V,
    PERIOD,
    write_bin,
    write_isf,
    write_rigol_csv,
    write_tek_wfm,
)

RIG = Path(sys.executable).parent / "rig"
GOAL_MB = 300
RATE = 100_000            # samples per second
MS = RATE // 1000         # samples per millisecond
PERIOD_MS = 200           # a window every 200 ms ...
HIGH_MS = (50, 70)        # ... high from 50 to 70 ms into the period
IDLE_UA, ACTIVE_UA = 10.0, 2500.0
SUPPLY_V = 3.0
TRIGGER_BIT = 2


def _high(ms: int) -> bool:
    return HIGH_MS[0] <= ms % PERIOD_MS < HIGH_MS[1]


def _windows(samples: int) -> int:
    """Whole windows in a capture of ``samples`` samples."""
    periods, rest = divmod(samples // MS, PERIOD_MS)
    return periods + (rest >= HIGH_MS[1] + 1)


def _write_rows(path: Path, header: str, tails: Callable[[bool], list[str]],
                prefix: Callable[[int], str], size: int, samples: int | None = None) -> int:
    """Rows of one millisecond at a time: ``prefix(ms)`` joined with the 100 row tails of a
    high or low millisecond (one C-level join each), until the file holds ``size`` bytes
    (or, given, ``samples`` rows, a multiple of 100 000). Returns the samples written."""
    cache = {state: ["", *tails(state)] for state in (False, True)}
    ms = 0
    with path.open("w", newline="") as out:
        out.write(header)
        while (ms * MS < samples) if samples is not None else (out.tell() < size):
            out.write("".join(prefix(q).join(cache[_high(q)])
                              for q in range(ms, ms + 1000)))
            ms += 1000
    return ms * MS


def write_generic_csv(path: Path, size: int) -> tuple[int, list[str]]:
    """Another program's CSV: time in µs, current in mA, the supply in V, the trigger packed
    in a number (bit 2; bits 0 and 4 busy)."""
    def tails(high: bool) -> list[str]:
        current = f"{(ACTIVE_UA if high else IDLE_UA) / 1000:.6f}"
        gpio = [16 | (r % 2) | (int(high) << TRIGGER_BIT) for r in range(MS)]
        return [f"{10 * r:03d},{current},{SUPPLY_V:.3f},{gpio[r]}\n" for r in range(MS)]

    n = _write_rows(path, "time_us,current_ma,supply_v,gpio\n", tails, str, size)
    return n, ["--time-column", "time_us", "--time-unit", "us", "--current-column",
               "current_ma", "--current-unit", "mA", "--voltage-column", "supply_v",
               "--trigger-column", "gpio", "--trigger-bit", str(TRIGGER_BIT)]


def _app_bits(high: bool) -> str:
    b8 = np.array([(int(high) << TRIGGER_BIT) | 1])
    b16 = int(convert_bits16(b8)[0])
    return "".join("-01X"[(b16 >> (2 * i)) & 3] for i in range(8))


def write_ppk_csv(path: Path, size: int) -> tuple[int, list[str]]:
    """The Power Profiler app's export (timestamp, current, D0-D7), as the app writes it:
    the time stamp of sample 100·q + r is ``js_number(q + r / 100)``, i.e. ``q`` followed by
    the fraction's digits (none for r = 0)."""
    def tails(high: bool) -> list[str]:
        current = js_to_fixed(float(np.float32(ACTIVE_UA if high else IDLE_UA)), 3)
        return [js_number(r / 100)[1:] + f",{current},{_app_bits(high)}\n" for r in range(MS)]

    n = _write_rows(path, "Timestamp(ms),Current(uA),D0-D7\n", tails, str, size)
    _check_against_reference(path)
    return n, ["--voltage", str(SUPPLY_V), "--trigger", f"D{TRIGGER_BIT}"]


def _check_against_reference(path: Path, samples: int = 3 * PERIOD_MS * MS) -> None:
    """The fast writer's first rows equal those of the reference writer."""
    current, bits = _samples(0, samples)
    out = io.StringIO()
    write_csv_export(out, [(current, bits)], RATE, (True, True, True, False))
    want = out.getvalue().encode()
    with path.open("rb") as f:
        if f.read(len(want)) != want:
            raise SystemExit(f"{path}: the fast writer differs from tests/support/ppk_app.py")


def _samples(start: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Samples ``start`` .. ``start + n`` as the app stores them: current (µA) and bits."""
    ms = (np.arange(start, start + n) // MS) % PERIOD_MS
    high = (ms >= HIGH_MS[0]) & (ms < HIGH_MS[1])
    current = np.where(high, ACTIVE_UA, IDLE_UA).astype(np.float32)
    return current, convert_bits16((high.astype(np.uint8) << TRIGGER_BIT) | 1)


def write_ppk_csv_v3(path: Path, size: int) -> tuple[int, list[str]]:
    """The export of the app's development builds of 2020 (``Bits``: the logic byte as
    binary text, D7 first; tests/instruments/test_ppk_v3_csv.py has the source)."""
    def tails(high: bool) -> list[str]:
        current = js_to_fixed(float(np.float32(ACTIVE_UA if high else IDLE_UA)), 3)
        bits = format((int(high) << TRIGGER_BIT) | 1, "08b")
        return [js_number(r / 100)[1:] + f",{current},{bits}\n" for r in range(MS)]

    n = _write_rows(path, "Timestamp(ms),Current(uA),Bits\n", tails, str, size)
    return n, ["--voltage", str(SUPPLY_V), "--trigger", f"D{TRIGGER_BIT}"]


def write_ppk_session(path: Path, size: int, mask: bool = False) -> tuple[int, list[str]]:
    """A Power Profiler session whose session.raw is ``size`` bytes (6 per sample); with
    ``mask`` the digital word is ppk2-python's D0..D7 bit mask, little-endian."""
    block = PERIOD_MS * MS * 10  # 2 s: whole periods, so the blocks repeat
    n = size // 6 // block * block
    template = _samples(0, block)
    if mask:  # the mask's little-endian bytes, as the big-endian word the writer stores
        high = ((np.arange(block) // MS) % PERIOD_MS >= HIGH_MS[0]) & (
            (np.arange(block) // MS) % PERIOD_MS < HIGH_MS[1])
        word = ((high.astype(np.uint16) << TRIGGER_BIT) | 1) << 8
        template = (template[0], word.astype(np.uint16))

    def blocks() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for _ in range(n // block):
            yield template

    write_session(path, blocks(), float(RATE))
    return n, ["--voltage", str(SUPPLY_V), "--trigger", f"D{TRIGGER_BIT}"]


def write_jls(path: Path, size: int) -> tuple[int, list[str]]:
    """A Joulescope JLS v2 file written with pyjls's own ``Writer``, as a JS220 recording
    holds its signals: current and voltage as float32, GPI 0 (the trigger) as u1, about
    ``size`` bytes of samples (8 1/8 per sample before pyjls's summaries)."""
    block = PERIOD_MS * MS * 10  # 2 s: whole periods, so the blocks repeat
    ms = (np.arange(block) // MS) % PERIOD_MS
    high = (ms >= HIGH_MS[0]) & (ms < HIGH_MS[1])
    n = write_js220(path, RATE, np.where(high, ACTIVE_UA, IDLE_UA) * 1e-6,
                    np.full(block, SUPPLY_V), high,
                    max(1, round(size / (8 + 1 / 8) / block)))
    return n, []


_SCOPE_ARGS = ["--current", "CH1", "--trigger", "CH2", "--trigger-level", str(LEVEL_V)]


def write_scope_csv(path: Path, size: int) -> tuple[int, list[str]]:
    """A Rigol DS1000Z CSV export (tests/support/scope_files.py; its first rows are compared
    with that writer's): the rows after the sample number repeat every period."""
    reference = path.with_suffix(".ref")
    write_rigol_csv(reference, 2 * PERIOD)
    lines = reference.read_text().splitlines(keepends=True)
    reference.unlink()
    tails = [line.split(",", 1)[1] for line in lines[2:2 + PERIOD]]
    n = 0
    with path.open("w", newline="") as out:
        out.write("".join(lines[:2]))
        while out.tell() < size:
            out.write("".join(map("{},{}".format, range(n, n + PERIOD), tails)))
            n += PERIOD
    with path.open() as f:
        if [f.readline() for _ in lines] != lines:
            raise SystemExit(f"{path}: the fast writer differs from tests/support/scope_files.py")
    return n, [*_SCOPE_ARGS, "--voltage", "CH3"]


def write_scope_bin(path: Path, size: int) -> tuple[int, list[str]]:
    """A Keysight .bin (AG10) of three float32 channels: 12 bytes per sample."""
    n = size // 12 // PERIOD * PERIOD
    write_bin(path, n)
    return n, [*_SCOPE_ARGS, "--voltage", "CH3"]


def write_scope_isf(path: Path, size: int) -> tuple[int, list[str]]:
    """A Tektronix .isf of one int16 channel, the trigger on itself (the shunt above 1 mV);
    at most 10^9 − 1 bytes of samples, the most the 9-digit length of its block can state."""
    n = min(size, 10**9 - 1) // 2 // PERIOD * PERIOD
    write_isf(path, n)
    return n, ["--trigger", "CH1", "--trigger-level", "0.001", "--voltage", str(SUPPLY_V)]


def write_scope_wfm(path: Path, size: int) -> tuple[int, list[str]]:
    """A Tektronix .wfm (WFM#003) of one int16 channel, the trigger on itself."""
    n = size // 2 // PERIOD * PERIOD
    write_tek_wfm(path, n)
    return n, ["--trigger", "CH1", "--trigger-level", "0.001", "--voltage", str(SUPPLY_V)]


def write_scope_rigol_wfm(path: Path, size: int) -> tuple[int, list[str]]:
    """A Rigol DS1000E .wfm of two uint8 channels (the shunt, the trigger): 2 bytes per
    sample."""
    n = size // 2 // PERIOD * PERIOD
    write_rigol_wfm(path, n)
    return n, [*_SCOPE_ARGS, "--voltage", str(SUPPLY_V)]


def write_scope_rigol_ds2000(path: Path, size: int) -> tuple[int, list[str]]:
    """A Rigol DS2000 .wfm of one interwoven uint8 channel (even and odd samples in two
    halves), the trigger on itself."""
    n = size // PERIOD * PERIOD
    write_ds2000(path, n, interwoven=True)
    return n, ["--trigger", "CH1", "--trigger-level", "0.001", "--voltage", str(SUPPLY_V)]


def write_scope_rigol_two(write: Callable[..., None]) -> Callable[[Path, int],
                                                                   tuple[int, list[str]]]:
    """A generator of a Rigol .wfm of two uint8 channels (the shunt, the trigger; 2 bytes
    per sample) written by ``write(path, n)`` (tests/support/rigol_wfm.py: DS1000Z, DS6000,
    DS1000B, DS1000C)."""
    def generate(path: Path, size: int) -> tuple[int, list[str]]:
        n = size // 2 // PERIOD * PERIOD
        write(path, n)
        return n, [*_SCOPE_ARGS, "--voltage", str(SUPPLY_V)]
    return generate


def write_saleae(path: Path, size: int) -> tuple[int, list[str]]:
    """Saleae Logic 2's export: ``analog.csv`` of ``size`` bytes (Time [s], the volts across
    a 1 Ω shunt, the supply; one row per sample) and ``digital.csv`` beside it (a row per
    edge of the trigger, 5 µs after the sample it follows; tests/instruments/test_saleae.py
    has the layout's source)."""
    def tails(high: bool) -> list[str]:
        volts = f"{(ACTIVE_UA if high else IDLE_UA) * 1e-6:.9f}"
        return [f"{r:02d}0000,{volts},{SUPPLY_V:.9f}\n" for r in range(MS)]

    n = _write_rows(path, "Time [s],Channel 0,Channel 1\n", tails,
                    lambda q: f"{q // 1000}.{q % 1000:03d}", size)
    with (path.parent / "digital.csv").open("w") as out:
        out.write("Time [s],Channel 0\n0.000000000,0\n")
        for start in range(0, n // MS, PERIOD_MS):
            for ms, level in ((start + HIGH_MS[0], 1), (start + HIGH_MS[1], 0)):
                out.write(f"{ms / 1000 - 5e-6:.9f},{level}\n")
        out.write(f"{n / RATE:.9f},X\n")
    return n, ["--current", "Channel 0", "--shunt-ohms", "1", "--voltage", "Channel 1"]


def write_otii3(path: Path, size: int) -> tuple[int, list[str]]:
    """An Otii 3 project (``tests/support/otii3.py``: the layout otiio 0.1.1 reads) in
    ``path``'s folder: mc, mv and the trigger on the ADC voltage av, float32 each (12 bytes
    per sample), written 2 s at a time."""
    block = PERIOD_MS * MS * 10  # 2 s: whole periods, so the blocks repeat
    n = max(1, round(size / 12 / block)) * block
    ms = (np.arange(block) // MS) % PERIOD_MS
    high = (ms >= HIGH_MS[0]) & (ms < HIGH_MS[1])
    blocks = {"mc": np.where(high, ACTIVE_UA, IDLE_UA) * 1e-6,
              "mv": np.full(block, SUPPLY_V), "av": np.where(high, SUPPLY_V, 0.0)}
    write_otii3_layout(path.parent, {name: itertools.repeat(b, n // block)
                                     for name, b in blocks.items()}, RATE)
    return n, ["--trigger", "av", "--trigger-level", str(SUPPLY_V / 2)]


def write_otii_csv(path: Path, size: int) -> tuple[int, list[str]]:
    """Otii's CSV export (one file per channel, ``"Timestamp","Value"``, ``%.6f`` s and
    ``%.9g`` values, as otiio 0.1.1's ``export.py`` states Otii writes it): ``path`` is the
    main current's file, its voltage and the trigger on the ADC voltage beside it, about
    ``size`` bytes in all."""
    def values(label: str) -> Callable[[bool], list[str]]:
        value = {"Main current": lambda high: (ACTIVE_UA if high else IDLE_UA) * 1e-6,
                 "Main voltage": lambda high: SUPPLY_V,
                 "ADC voltage": lambda high: SUPPLY_V if high else 0.0}[label]
        return lambda high: [f"{r:02d}0,{float(np.float32(value(high))):.9g}\n"
                             for r in range(MS)]

    path.parent.mkdir()
    n: int | None = None  # the current's file sets the rows; the others hold as many
    for label in ("Main current", "Main voltage", "ADC voltage"):
        n = _write_rows(path.with_name(f"{label} - Ace.csv"), '"Timestamp","Value"\n',
                        values(label), lambda q: f"{q // 1000}.{q % 1000:03d}", size // 2, n)
    assert n is not None
    return n, ["--trigger", "ADC voltage", "--trigger-level", str(SUPPLY_V / 2)]


#: `rig analyze` options of the sessions :func:`write_sr_blocks` writes.
SR_OPTIONS = ["--trigger", "TRIG", "--current", "SHUNT", "--shunt-ohms", "1",
              "--voltage", "SUPPLY"]


def _deflated(raw: bytes) -> tuple[bytes, int, int]:
    """Raw deflate data of ``raw`` (as zip members hold it), its CRC-32 and size."""
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    return co.compress(raw) + co.flush(), zlib.crc32(raw), len(raw)


def write_sr_blocks(path: Path, high: np.ndarray, shunt_v: np.ndarray, supply_v: np.ndarray,
                    blocks: int, samplerate: str) -> None:
    """A libsigrok 0.5 session (srzip, as ``src/output/srzip.c`` lays it out) of ``blocks``
    repeats of one block: logic ``TRIG`` (D0) from ``high``, analog ``SHUNT`` and ``SUPPLY``
    (float32 volts), one zip member per block and channel. The block is deflated once and
    its bytes written ``blocks`` times (no zip64: keep the file under 4 GB)."""
    members = [("version", _deflated(b"2")), ("metadata", _deflated(
        ("[global]\nsigrok version=0.5.2\n\n[device 1]\ncapturefile=logic-1\n"
         f"total probes=8\nsamplerate={samplerate}\ntotal analog=2\nprobe1=TRIG\n"
         "analog9=SHUNT\nanalog10=SUPPLY\nunitsize=1\n").encode()))]
    logic, a9, a10 = (_deflated(a.tobytes()) for a in (
        high.astype(np.uint8), shunt_v.astype("<f4"), supply_v.astype("<f4")))
    for k in range(1, blocks + 1):
        members += [(f"logic-1-{k}", logic), (f"analog-1-9-{k}", a9),
                    (f"analog-1-10-{k}", a10)]
    central, offset = [], 0
    with path.open("wb") as out:
        for name, (data, crc, size) in members:
            nb = name.encode()
            head = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data),
                               size, len(nb), 0)
            out.write(head + nb + data)
            central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0,
                                       0x21, crc, len(data), size, len(nb), 0, 0, 0, 0, 0,
                                       offset) + nb)
            offset += len(head) + len(nb) + len(data)
        cd = b"".join(central)
        out.write(cd + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central),
                                   len(central), len(cd), offset, 0))


def write_sr(path: Path, size: int) -> tuple[int, list[str]]:
    """A sigrok session of about ``size`` bytes of samples (9 per sample: the logic byte
    and two float32 channels) before compression: the trigger, the current as volts across
    1 ohm, the supply."""
    block = PERIOD_MS * MS * 10  # 2 s: whole periods, so the blocks repeat
    current, _ = _samples(0, block)
    ms = (np.arange(block) // MS) % PERIOD_MS
    high = (ms >= HIGH_MS[0]) & (ms < HIGH_MS[1])
    blocks = max(1, size // 9 // block)
    write_sr_blocks(path, high, current * 1e-6, np.full(block, SUPPLY_V), blocks, "100 kHz")
    return blocks * block, SR_OPTIONS


@dataclass(frozen=True)
class Kind:
    """One row of the benchmark: a name, a file name and the generator writing the capture
    (``write(path, size_bytes)`` -> (samples written, `rig analyze` options))."""

    name: str
    file: str
    write: Callable[[Path, int], tuple[int, list[str]]]


KINDS = (
    Kind("csv", "generic.csv", write_generic_csv),
    Kind("ppk-csv", "export.csv", write_ppk_csv),
    Kind("ppk-csv-v3", "export-v3.csv", write_ppk_csv_v3),
    Kind("ppk2-session", "session.ppk2", write_ppk_session),
    Kind("ppk2-mask", "ppk2-python.ppk2",
         lambda path, size: write_ppk_session(path, size, mask=True)),
    Kind("saleae", "analog.csv", write_saleae),
    Kind("jls", "capture.jls", write_jls),
    Kind("scope-csv", "rigol.csv", write_scope_csv),
    Kind("scope-bin", "keysight.bin", write_scope_bin),
    Kind("scope-isf", "tek.isf", write_scope_isf),
    Kind("scope-wfm", "tek.wfm", write_scope_wfm),
    Kind("rigol-wfm", "DS1102E.wfm", write_scope_rigol_wfm),
    Kind("rigol-ds2000", "DS2072A.wfm", write_scope_rigol_ds2000),
    Kind("rigol-ds1000z", "DS1104Z.wfm", write_scope_rigol_two(write_ds1000z)),
    Kind("rigol-ds6000", "DS6104.wfm", write_scope_rigol_two(
        lambda path, n: write_ds2000(path, n, serial=b"DS6104000000001"))),
    Kind("rigol-ds1000b", "DS1204B.wfm", write_scope_rigol_two(write_ds1000b)),
    Kind("rigol-ds1000c", "DS1042C.wfm", write_scope_rigol_two(write_ds1000c)),
    Kind("otii3", "otii3/bench.otii3", write_otii3),
    Kind("otii-csv", "otii-csv/Main current - Ace.csv", write_otii_csv),
    Kind("sr", "session.sr", write_sr),
)


def measured(argv: list[str], stdout: Path | None = None,
             env: dict[str, str] | None = None) -> dict[str, float]:
    """CPU time (user + system, s), wall time (s) and peak RSS (MB) of ``argv``, run under
    GNU time: ``wait4`` on a child of this process would count this process's pages in the
    child's peak (Linux keeps the peak across the exec), time's child starts from its
    small image. Exits with the child's stderr if it fails."""
    with tempfile.TemporaryDirectory(prefix="measured-") as tmp:
        figures, err = Path(tmp) / "time", Path(tmp) / "err"
        t0 = time.perf_counter()
        with open(stdout or os.devnull, "wb") as out, err.open("wb") as errors:
            done = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", str(figures),
                                   *argv], stdout=out, stderr=errors, env=env)
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {err.read_text()[-2000:]}")
        user, system, kb = figures.read_text().split()[-3:]
    return {"cpu_s": float(user) + float(system), "wall_s": wall, "peak_rss_mb": int(kb) / 1024}


def measure(kind: Kind, tmp: Path, size: int) -> dict[str, float | int | str]:
    path = tmp / kind.file
    t0 = time.perf_counter()
    samples, options = kind.write(path, size)
    t_write = time.perf_counter() - t0
    out_path = tmp / "out.json"
    fig = measured([str(RIG), "analyze", str(path), "--json", *options], out_path)
    doc = json.loads(out_path.read_text())
    windows = len(doc["windows"])
    if windows != _windows(samples):
        raise SystemExit(f"{kind.name}: {windows} windows, the file has {_windows(samples)}")
    flagged = sum(1 for w in doc["windows"] if w["flags"])
    if path.parent != tmp:  # a project: its folder counts, and goes
        file_mb = sum(f.stat().st_size for f in path.parent.rglob("*") if f.is_file()) / 2**20
        shutil.rmtree(path.parent)
    else:
        file_mb = path.stat().st_size / 2**20
        path.unlink()
    return {"kind": kind.name, "file_mb": round(file_mb, 1), "samples": samples,
            "windows": windows, "flagged": flagged, "write_s": round(t_write, 1),
            "analyze_s": round(fig["wall_s"], 1), "peak_rss_mb": round(fig["peak_rss_mb"], 1),
            "goal_mb": GOAL_MB, "ok": fig["peak_rss_mb"] < GOAL_MB,
            "command": " ".join(["rig", "analyze", kind.file, "--json", *options])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=1024.0)
    parser.add_argument("--kinds", default=",".join(k.name for k in KINDS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    wanted = args.kinds.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            if kind.name in wanted:
                rows.append(measure(kind, Path(tmp), int(args.size_mb * 2**20)))
                if not args.json:
                    print(rows[-1], flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"\n{'kind':14} {'file MB':>8} {'samples':>12} {'windows':>8} {'write s':>8} "
          f"{'analyze s':>10} {'peak RSS MB':>12}  < {GOAL_MB} MB")
    for r in rows:
        print(f"{r['kind']:14} {r['file_mb']:>8} {r['samples']:>12} {r['windows']:>8} "
              f"{r['write_s']:>8} {r['analyze_s']:>10} {r['peak_rss_mb']:>12}  "
              f"{'yes' if r['ok'] else 'NO'}")


if __name__ == "__main__":
    main()
