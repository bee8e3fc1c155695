"""Scope exports written as each scope writes them (docs/formats.md cites each layout), in
blocks, for the tests and benchmarks/reader_memory.py; and the energies a numpy computation
finds in the samples written.

The signal: 100 kS/s; channel 1 the volts across a 1 Ω shunt (idle 10 µA, a ramp of 2 mA
and up in each window), channel 2 the trigger GPIO (0 / 3.3 V), channel 3 the supply (3.0 V
less a 10 Ω drop). A window every 0.2 s, samples [5000, 7000) of each 20000.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import TextIO

import numpy as np
import pytest
from typer.testing import CliRunner

from energyrig.cli.app import app

RATE = 100_000
DT = 1.0 / RATE
PERIOD = 20_000
HIGH = (5_000, 7_000)
START_S = -0.01  # time of sample 0 (before the scope's trigger)
LEVEL_V = 1.65


def profile(start: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Channels 1..3 of samples ``start .. start + n`` (volts, in steps of 1 µV)."""
    k = np.arange(start, start + n)
    phase = k % PERIOD
    high = (phase >= HIGH[0]) & (phase < HIGH[1])
    shunt = np.where(high, 2e-3 + (phase - HIGH[0]) * 1e-6, 10e-6)
    trigger = np.where(high, 3.3, 0.0)
    supply = 3.0 - 10 * shunt
    return shunt, trigger, supply


def analyze(path: Path, *args: str) -> dict:
    """`rig analyze PATH --json ARGS`, which must succeed: its JSON."""
    result = CliRunner().invoke(app, ["analyze", str(path), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def check_windows(doc: dict, truth: list[float]) -> None:
    """The three windows of the profile, unflagged, each of its samples, each energy the
    truth's to 1e-9."""
    windows = doc["windows"]
    assert len(windows) == len(truth) == 3
    for got, true in zip(windows, truth, strict=True):
        assert got["flags"] == [] and got["samples"] == HIGH[1] - HIGH[0]
        assert got["energy_j"] == pytest.approx(true, rel=1e-9)


def true_energies(current: np.ndarray, voltage: np.ndarray | float, high: np.ndarray,
                  dt: float = DT) -> list[float]:
    """Energy of each high span of ``high``: dt × the sum of v·i over its samples, J."""
    edges = np.flatnonzero(np.diff(high.astype(np.int8)))
    starts, ends = edges[::2] + 1, edges[1::2] + 1
    power = current * voltage
    return [float(power[a:b].sum()) * dt for a, b in zip(starts, ends, strict=True)]


def _rows(out: TextIO, n: int, block: int, row: str, time: str) -> None:
    """Rows of channels 1..3 in ``row`` format (``{t}`` the time cell of format ``time``
    applied to the sample number k and t = START_S + k·DT)."""
    for a in range(0, n, block):
        m = min(block, n - a)
        ch = profile(a, m)
        k = np.arange(a, a + m)
        cells = zip(k, START_S + k * DT, *ch, strict=True)
        out.write("".join(row.format(time.format(k=kk, t=t), c1, c2, c3)
                          for kk, t, c1, c2, c3 in cells))


def write_rigol_csv(path: Path, n: int, block: int = 100_000) -> None:
    """A Rigol DS1000Z export (RigolWFM's wfm/DS1054Z-A.csv): the sample number in X, Start
    and Increment on the units row, 3 significant digits, a comma ending every line."""
    with path.open("w", newline="") as out:
        out.write(f"X,CH1,CH2,CH3,Start,Increment,\n"
                  f"Sequence,Volt,Volt,Volt,{START_S:e},{DT:e}\n")
        _rows(out, n, block, "{},{:.6e},{:.2e},{:.6e},\n", "{k}")


def write_keysight_csv(path: Path, n: int, block: int = 100_000) -> None:
    """A Keysight InfiniiVision export: ``x-axis,1,2,3`` / ``second,Volt,Volt,Volt``."""
    with path.open("w", newline="") as out:
        out.write("x-axis,1,2,3\nsecond,Volt,Volt,Volt\n")
        _rows(out, n, block, "{},{:+.6E},{:+.6E},{:+.6E}\n", "{t:+.9E}")


def write_tektronix_csv(path: Path, n: int, block: int = 100_000) -> None:
    """A Tektronix MDO/MSO export: the metadata rows, a blank line, ``TIME,CH1,CH2,CH3``."""
    with path.open("w", newline="") as out:
        out.write(f"Model,MDO3014\nFirmware Version,1.26\n\nWaveform Type,ANALOG\n"
                  f"Point Format,Y\nHorizontal Units,s\nHorizontal Scale,0.02\n"
                  f"Sample Interval,{DT}\nRecord Length,{n:e}\nGating,0.0% to 100.0%\n"
                  f"Probe Attenuation,1\nVertical Units,V,V,V\nLabel,\nTIME,CH1,CH2,CH3\n")
        _rows(out, n, block, "{},{:.7g},{:.7g},{:.7g}\n", "{t:.9e}")


def write_siglent_csv(path: Path, n: int, block: int = 100_000) -> None:
    """A Siglent SDS1000X-E export of channel 1: the metadata rows, ``Second,Volt``."""
    with path.open("w", newline="") as out:
        out.write(f"Record Length,Analog:{n}\nSample Interval,{DT:E}\nVertical Units,V\n"
                  f"Horizontal Units,s\nSource,CH1\nSecond,Volt\n")
        for a in range(0, n, block):
            m = min(block, n - a)
            k = np.arange(a, a + m)
            shunt = profile(a, m)[0]
            out.write("".join(f"{t:+.9E},{v:+.6E}\n"
                              for t, v in zip(START_S + k * DT, shunt, strict=True)))


# --- binary files --------------------------------------------------------------------------

def _bin_waveform_header(label: str, wtype: int, n: int, size: int = 140) -> bytes:
    """A ``.bin`` waveform header (RigolWFM ksy/agilent_agxx_bin.ksy, rigol_mso5000_bin.ksy)."""
    head = struct.pack("<5If3d2I16s16s24s16s", size, wtype, 1, n, 1, n * DT, START_S, DT,
                       START_S, 2, 1, b"26 NOV 2026", b"12:00:00", b"MSO-X 3024A:MY1",
                       label.encode())
    return head + struct.pack("<dI", 0.0, 0) + bytes(size - 140)


def write_bin(path: Path, n: int, cookie: bytes = b"AG", version: bytes = b"10",
              logic_bit: int | None = None, block: int = 1 << 20) -> None:
    """A ``.bin`` of channels 1..3 as float32 volts; with ``logic_bit`` the trigger is a
    digital pod (a logic waveform of one byte per point, the trigger on that bit, bit 0
    toggling) instead of analog channel 2."""
    wide = version == b"03"
    channels = ["1", "2", "3"] if logic_bit is None else ["1", "3", "D0-7"]
    with path.open("wb") as out:
        total = 0  # the file size field is not checked by the reader
        out.write(cookie + version + (struct.pack("<QI", total, len(channels)) if wide
                                      else struct.pack("<II", total, len(channels))))
        for label in channels:
            logic = label.startswith("D")
            per = 1 if logic else 4
            out.write(_bin_waveform_header(label, 6 if logic else 1, n))
            out.write(struct.pack("<IHHQ" if wide else "<IHHI", 16 if wide else 12,
                                  6 if logic else 1, per, n * per))
            for a in range(0, n, block):
                ch1, ch2, ch3 = profile(a, min(block, n - a))
                if logic:
                    k = np.arange(a, a + len(ch1))
                    bits = (((ch2 > LEVEL_V).astype(np.uint8) << logic_bit)
                            | (k % 2).astype(np.uint8))
                    out.write(bits.astype(np.uint8).tobytes())
                else:
                    out.write({"1": ch1, "2": ch2, "3": ch3}[label].astype("<f4").tobytes())


ISF_YMULT, ISF_YOFF, ISF_YZERO = 1e-6, 12.0, 5e-6


def isf_raw(start: int, n: int) -> np.ndarray:
    """Channel 1 as the int16 codes an .isf stores: (v − YZERO) / YMULT + YOFF."""
    return np.rint((profile(start, n)[0] - ISF_YZERO) / ISF_YMULT + ISF_YOFF).astype(np.int16)


def write_isf(path: Path, n: int, block: int = 1 << 20, order: str = "LSB") -> None:
    """A Tektronix .isf of channel 1, int16 codes (RigolWFM ksy/tektronix_internal_isf.ksy,
    the TDS3000 programmer manual's :WFMPRE)."""
    length = str(2 * n)
    head = (f':WFMPRE:BYT_NR 2;BIT_NR 16;ENCDG BIN;BN_FMT RI;BYT_OR {order};'
            f'WFID "Ch1, DC coupling, 1.0mV/div, 20ms/div, {n} points, Sample mode";'
            f'NR_PT {n};PT_FMT Y;XUNIT "s";XINCR {DT:.4E};XZERO {START_S:.4E};PT_OFF 0;'
            f'YUNIT "V";YMULT {ISF_YMULT:.4E};YOFF {ISF_YOFF:.4E};YZERO {ISF_YZERO:.4E};'
            f':CURVE #{len(length)}{length}')
    dtype = "<i2" if order == "LSB" else ">i2"
    with path.open("wb") as out:
        out.write(head.encode())
        for a in range(0, n, block):
            out.write(isf_raw(a, min(block, n - a)).astype(dtype).tobytes())
        out.write(b"\n")



TEK_WFM_CHARGE = 16  # points of pre- and post-charge around the user's samples


def write_tek_wfm(path: Path, n: int, version: bytes = b":WFM#003", order: str = "<",
                  block: int = 1 << 20) -> None:
    """A Tektronix .wfm of channel 1, int16 codes (the ISF's, volts = raw × YMULT + YZERO −
    YOFF × YMULT), with pre- and post-charge points (Tektronix "Reference Waveform File
    Format" 001-1378-03, as RigolWFM's ksy/tektronix_wfm_002_le_wfm.ksy lays it out; the
    version ":WFM#003" at offset 2 as Tektronix's sample reader tekwfm2 checks it)."""
    exp_at, imp_at, curve_at = {b":WFM#001": (166, 478, 790), b":WFM#002": (168, 480, 792),
                                b":WFM#003": (168, 488, 808)}[version]
    head = bytearray(838)
    head[0:2] = b"\x0f\x0f" if order == "<" else b"\xf0\xf0"
    head[2:10] = version
    charge = 2 * TEK_WFM_CHARGE
    struct.pack_into(order + "Bi", head, 15, 2, len(head))
    head[40:43] = b"CH1"
    struct.pack_into(order + "2d", head, exp_at, ISF_YMULT, ISF_YZERO - ISF_YOFF * ISF_YMULT)
    struct.pack_into(order + "2i", head, exp_at + 72, 0, 0)  # int16 samples
    struct.pack_into(order + "2dI", head, imp_at, DT, START_S - TEK_WFM_CHARGE * DT,
                     n + 2 * TEK_WFM_CHARGE)
    struct.pack_into(order + "5I", head, curve_at + 10, 0, charge, charge + 2 * n,
                     2 * charge + 2 * n, 2 * charge + 2 * n)
    dtype = order + "i2"
    with path.open("wb") as out:
        out.write(bytes(head))
        out.write(np.full(TEK_WFM_CHARGE, 32767, dtype=dtype).tobytes())
        for a in range(0, n, block):
            out.write(isf_raw(a, min(block, n - a)).astype(dtype).tobytes())
        out.write(np.full(TEK_WFM_CHARGE, 32767, dtype=dtype).tobytes())
