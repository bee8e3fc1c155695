"""Rigol DS1000E/D ``.wfm`` files written as the layout states (RigolWFM 1.6.0,
``ksy/rigol_1000e_wfm.ksy``, after Rigol's "DS1000E/D WFM structure instruction"), in blocks,
for the tests and benchmarks/reader_memory.py; and their volts as RigolWFM's ``channel.py``
computes them, in numpy.

The signal is :func:`support.scope_files.profile`'s: CH1 the shunt's volts (µV/div scale
1000, offset −100 steps of 40 µV), CH2 the trigger GPIO (1 V/div, no offset).
"""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from support.scope_files import DT, profile

#: Per channel: scale (µV/div, probe 1X) and shift (steps of scale/25).
CHANNELS = ((1_000, -100), (1_000_000, 0))
ZERO = 125  # the raw code of 0 V before the shift
TIME_OFFSET_PS = 2_000_000_000  # the trigger 2 ms into the record's middle


def step_v(k: int, probe: float = 1.0) -> float:
    """Volts of one raw code of channel ``k`` (0, 1): scale × 1e-6 × probe / 25."""
    return CHANNELS[k][0] * 1e-6 * probe / 25.0


def raw(k: int, start: int, n: int) -> np.ndarray:
    """Channel ``k``'s codes of samples ``start .. start + n``: 125 − shift − volts / step."""
    volts = profile(start, n)[k]
    return np.clip(np.rint(ZERO - CHANNELS[k][1] - volts / step_v(k)), 0, 255).astype(np.uint8)


def volts(codes: np.ndarray, k: int, probe: float = 1.0) -> np.ndarray:
    """RigolWFM's volts of channel ``k``'s codes: (125 − raw) × step − shift × step."""
    step = step_v(k, probe)
    return (ZERO - codes.astype(np.float64)) * step - CHANNELS[k][1] * step


def header(n: int, *, probe: float = 1.0, logic_pod: bool = False, roll_stop: int = 0,
           ch2: bool = True) -> bytearray:
    """The 276-byte header of a record of ``n`` points per channel (its memory depth)."""
    head = bytearray(276)
    head[0:4] = b"\xa5\xa5\x00\x00"
    struct.pack_into("<I", head, 20, roll_stop)
    struct.pack_into("<I", head, 28, n)
    for k, (scale_uv, shift) in enumerate(CHANNELS):
        at = 34 + 24 * k
        struct.pack_into("<ih", head, at + 2, scale_uv, shift)  # as displayed
        struct.pack_into("<f", head, at + 10, probe)
        head[at + 15] = 1 if k == 0 or ch2 else 0
        struct.pack_into("<ih", head, at + 18, scale_uv, shift)  # as measured
    struct.pack_into("<f", head, 84 + 16, 1.0 / DT)
    struct.pack_into("<q", head, 84 + 28, TIME_OFFSET_PS)
    head[120] = 1 if logic_pod else 0
    struct.pack_into("<I", head, 232, n if ch2 else 0)
    return head


def write_rigol_wfm(path: Path, n: int, block: int = 1 << 20, **options: object) -> None:
    """A DS1000E/D ``.wfm`` of ``n`` points per channel: the header (``options`` as for
    :func:`header`), CH1's bytes, CH2's; a logic pod's ``n`` words after them if it has one."""
    head = header(n, **options)  # type: ignore[arg-type]
    with path.open("wb") as out:
        out.write(bytes(head))
        for k in range(2 if head[34 + 24 + 15] else 1):
            for a in range(0, n, block):
                out.write(raw(k, a, min(block, n - a)).tobytes())
        if head[120]:
            out.write(np.zeros(n, dtype="<u2").tobytes())


#: DS2000: per channel volts/div and offset (V): CH1 the shunt, CH2 the trigger GPIO.
DS2000_CHANNELS = ((1e-3, -3e-3), (1.0, 0.0))
DS2000_ZERO = 127
DS2000_DATA = 1024  # where the first channel's bytes start (a real file's setup block is here)
DS2000_Z_PT = 10  # bytes before each channel's first sample


def ds2000_scale(k: int, inverted: bool = False, codes_per_div: float = 25.0) -> float:
    """Volts of one raw code of channel ``k`` (0, 1): ±volts/div (32-bit float's) / 25 (a
    DS2000) or 32 (a DS4000)."""
    per_div = float(np.float32(DS2000_CHANNELS[k][0]))
    return (-per_div if inverted else per_div) / codes_per_div


def ds2000_raw(k: int, start: int, n: int, inverted: bool = False,
               codes_per_div: float = 25.0) -> np.ndarray:
    """Channel ``k``'s codes: 127 + (volts + offset) / scale."""
    volts = profile(start, n)[k]
    offset = float(np.float32(DS2000_CHANNELS[k][1]))
    scale = ds2000_scale(k, inverted, codes_per_div)
    return np.clip(np.rint(DS2000_ZERO + (volts + offset) / scale), 0, 255).astype(np.uint8)


def ds2000_volts(codes: np.ndarray, k: int, inverted: bool = False,
                 codes_per_div: float = 25.0) -> np.ndarray:
    """RigolWFM's volts of channel ``k``'s codes: scale × (raw − 127) − offset."""
    offset = float(np.float32(DS2000_CHANNELS[k][1]))
    scale = ds2000_scale(k, inverted, codes_per_div)
    return scale * (codes.astype(np.float64) - DS2000_ZERO) - offset


def _ds_channel_headers(head: bytearray, at: int, inverted: bool, ch2: bool) -> None:
    """The DS2000/DS4000 channel headers (28 bytes each from ``at``): CH1 (``inverted``:
    the invert byte set, the enabled byte 1) and CH2 (enabled when ``ch2``)."""
    for k, (per_div, offset) in enumerate(DS2000_CHANNELS):
        head[at + 28 * k] = 1 if k == 0 or ch2 else 0
        head[at + 28 * k + 4] = 6  # probe ratio x1
        struct.pack_into("<ffBB", head, at + 28 * k + 8, per_div, offset,
                         int(inverted and k == 0), 2)


def write_ds2000(path: Path, n: int, block: int = 1 << 20, *, interwoven: bool = False,
                 inverted: bool = False, peak: bool = False) -> None:
    """A DS2000 ``.wfm`` (RigolWFM ``ksy/rigol_2000_wfm.ksy``) of ``n`` points: CH1 and CH2,
    or CH1 alone ``interwoven`` (its even samples where CH1's bytes go, its odd ones where
    CH2's); CH1 ``inverted`` (the invert byte of the older layout, enabled byte 1)."""
    head = bytearray(DS2000_DATA)
    head[0:4] = b"\xa5\xa5\x38\x00"
    head[4:18] = b"DS2A0000000001"
    head[24:38] = b"00.03.06.00.00"
    head[64], head[65] = (0x01, 0x01) if interwoven else (0x03, 0x00)
    per_channel = DS2000_Z_PT + (n // 2 if interwoven else n)
    struct.pack_into("<4I", head, 68, DS2000_DATA, DS2000_DATA + per_channel, 0, 0)
    struct.pack_into("<H", head, 84, 2 if peak else 0)
    struct.pack_into("<f", head, 96, 1.0 / DT)
    struct.pack_into("<q", head, 112, TIME_OFFSET_PS)
    _ds_channel_headers(head, 120, inverted, not interwoven)
    struct.pack_into("<III", head, 244, n, DS2000_Z_PT, n)
    with path.open("wb") as out:
        out.write(bytes(head))
        for k in range(2):
            out.write(b"\x55" * DS2000_Z_PT)
            for a in range(0, n, block):
                count = min(block, n - a)
                if interwoven:
                    out.write(ds2000_raw(0, a, count, inverted)[k::2].tobytes())
                else:
                    out.write(ds2000_raw(k, a, count, inverted and k == 0).tobytes())


def write_ds4000(path: Path, n: int, block: int = 1 << 20, *, inverted: bool = False) -> None:
    """A DS4000 ``.wfm`` (RigolWFM ``ksy/rigol_4000_wfm.ksy``) of ``n`` points of CH1 and
    CH2, 32 codes per division (a ``DS4A`` serial), CH1 ``inverted``."""
    head = bytearray(DS2000_DATA)
    head[0:4] = b"\xa5\xa5\x38\x00"
    head[4:18] = b"DS4A0000000001"
    head[24:38] = b"00.02.03.02.00"
    head[64] = 0x03
    struct.pack_into("<4I", head, 68, DS2000_DATA, DS2000_DATA + n, 0, 0)
    struct.pack_into("<f", head, 100, 1.0 / DT)
    _ds_channel_headers(head, 124, inverted, True)
    struct.pack_into("<I", head, 268, n)
    struct.pack_into("<q", head, 568, TIME_OFFSET_PS)
    with path.open("wb") as out:
        out.write(bytes(head))
        for k in range(2):
            for a in range(0, n, block):
                out.write(ds2000_raw(k, a, min(block, n - a), inverted and k == 0, 32.0)
                          .tobytes())
