"""Rigol ``.wfm`` files written as the layouts state (RigolWFM 1.6.0's ksy: DS1000E/D
``ksy/rigol_1000e_wfm.ksy``, after Rigol's "DS1000E/D WFM structure instruction"; DS2000,
DS4000, DS6000, DS1000Z, DS1000B, DS1000C), in blocks, for the tests and
benchmarks/reader_memory.py; and their volts as RigolWFM's ``channel.py`` computes them, in
numpy.

The signal is :func:`support.scope_files.profile`'s: CH1 the shunt's volts (µV/div scale
1000, offset −100 steps of 40 µV), CH2 the trigger GPIO (1 V/div, no offset).
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
from support.scope_files import DT, profile

#: Per channel: scale (µV/div, probe 1X) and shift (steps of scale/25).
CHANNELS = ((1_000, -100), (1_000_000, 0))
ZERO = 125  # the raw code of 0 V before the shift
TIME_OFFSET_PS = 2_000_000_000  # the trigger 2 ms into the record's middle
#: The logic analyser header (bytes 120..141) of every DS1000E capture in RigolWFM's tests,
#: and of its DS1000D capture DS1102D-A.wfm (the pod off; bit 0 of byte 120 sets it on).
DS1000E_LA = bytes.fromhex("00000000000102030405060700010203040506070707")
DS1000D_LA = bytes.fromhex("000f00e0000102030405060707070707070707070707")


def poke(offset: int, value: bytes) -> Callable[[Path], None]:
    """A spoiler of a written file: ``value`` over its bytes from ``offset``."""
    def spoil(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[offset:offset + len(value)] = value
        path.write_bytes(bytes(data))
    return spoil


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
           ch2: bool = True, ds1000d: bool = False) -> bytearray:
    """The 276-byte header of a record of ``n`` points per channel (its memory depth): a
    DS1000E's logic analyser header, or a DS1000D's (``ds1000d``; ``logic_pod``: its pod
    on)."""
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
    head[120:142] = DS1000D_LA if ds1000d or logic_pod else DS1000E_LA
    head[120] |= 1 if logic_pod else 0
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
        if head[120] & 1:
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
                 inverted: bool = False, peak: bool = False,
                 serial: bytes = b"DS2A0000000001") -> None:
    """A DS2000 ``.wfm`` (RigolWFM ``ksy/rigol_2000_wfm.ksy``) of ``n`` points: CH1 and CH2,
    or CH1 alone ``interwoven`` (its even samples where CH1's bytes go, its odd ones where
    CH2's); CH1 ``inverted`` (the invert byte of the older layout, enabled byte 1). With a
    ``serial`` ``DS6...`` it is a DS6000's (``ksy/rigol_6000_wfm.ksy``: the same fields at
    the same offsets, the channel mask at 64)."""
    head = bytearray(DS2000_DATA)
    head[0:4] = b"\xa5\xa5\x38\x00"
    head[4:4 + len(serial)] = serial
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


#: DS1000Z: per channel volts/div and offset (V): CH1 the shunt, CH2 the trigger GPIO, CH3
#: the supply, CH4 the trigger again.
DS1000Z_CHANNELS = ((1e-3, -1e-3), (1.0, 0.0), (0.5, -3.0), (1.0, 0.0))
DS1000Z_DATA = 1024 + 64  # the horizontal block at 1024, 64 bytes long, then the samples
#: The interval a DS1000Z file states: its rate is a 32-bit float in GHz.
DS1000Z_DT = 1.0 / (float(np.float32(1e-9 / DT)) * 1e9)
SP3 = "00.04.04.SP3"


def ds1000z_lanes(enabled: tuple[int, ...]) -> tuple[int, dict[int, int]]:
    """The stride of a DS1000Z record with channels ``enabled`` (0..3) and each channel's
    byte in a group (RigolWFM channel.py ``_channel_bytes``)."""
    stride = 4 if len(enabled) == 3 else len(enabled)
    if stride == 2:
        return 2, {enabled[0]: 1, enabled[1]: 0}
    return stride, {k: (3 - k if stride == 4 else 0) for k in enabled}


def ds1000z_bias(k: int, firmware: str, channels: int) -> float:
    """RigolWFM's ``vertical_bias`` of channel ``k``: one division, but 1/5 division below a
    negative offset and none at a zero one on 00.04.04.SP3's two-channel records."""
    per_div, shift = (float(np.float32(x)) for x in DS1000Z_CHANNELS[k])
    if firmware == SP3 and channels == 2:
        return per_div / 5.0 if shift < 0 else 0.0
    return per_div


def ds1000z_raw(k: int, start: int, n: int, bias: float) -> np.ndarray:
    """Channel ``k``'s codes: 127 + (volts + offset − bias) / (volts/div / 20)."""
    volts = (*profile(start, n), profile(start, n)[1])[k]
    per_div, shift = (float(np.float32(x)) for x in DS1000Z_CHANNELS[k])
    return np.clip(np.rint(127 + (volts + shift - bias) / (per_div / 20.0)), 0,
                   255).astype(np.uint8)


def ds1000z_volts(codes: np.ndarray, k: int, bias: float) -> np.ndarray:
    """RigolWFM's volts: −volts/div / 20 × (127 − raw) − (offset − bias)."""
    per_div, shift = (float(np.float32(x)) for x in DS1000Z_CHANNELS[k])
    return -per_div / 20.0 * (127.0 - codes.astype(np.float64)) - (shift - bias)


def write_ds1000z(path: Path, n: int, block: int = 1 << 20, *,
                  enabled: tuple[int, ...] = (0, 1), firmware: str = "00.04.04.SP4",
                  peak: bool = False, logic: bool = False) -> None:
    """A DS1000Z ``.wfm`` (RigolWFM ``ksy/rigol_1000z_wfm.ksy``) of ``n`` points of the
    channels ``enabled`` (0..3), interleaved; ``logic``: one analog channel in byte 1 of
    each four, bytes 0 and 2 an MSO's logic lanes (RigolWFM ``rigol_1000z_logic.py``)."""
    stride, lanes = (4, {enabled[0]: 1}) if logic else ds1000z_lanes(enabled)
    head = bytearray(DS1000Z_DATA)
    head[0:4] = b"\x01\xff\xff\xff"
    head[8:15] = b"DS1104Z"
    head[28:28 + len(firmware)] = firmware.encode()
    head[48:50] = b"\x01\x00"
    struct.pack_into("<Qq", head, 64, 1_000_000, TIME_OFFSET_PS)
    head[84:86] = b"\xd8\x00"
    head[88] = sum(1 << k for k in enabled)
    head[112] = 1 if peak else 0
    struct.pack_into("<If", head, 116, n * stride, 1e-9 / DT)
    for k, (per_div, shift) in enumerate(DS1000Z_CHANNELS):
        at = 124 + 28 * k
        head[at] = 1 if k in enabled else 0
        head[at + 4] = 6  # probe x1
        struct.pack_into("<ff", head, at + 8, per_div, shift)
    struct.pack_into("<II", head, 256, 64, 1024)
    with path.open("wb") as out:
        out.write(bytes(head))
        for a in range(0, n, block):
            count = min(block, n - a)
            group = np.zeros((count, stride), dtype=np.uint8)
            for k, lane in lanes.items():
                group[:, lane] = ds1000z_raw(k, a, count,
                                             ds1000z_bias(k, firmware, len(enabled)))
            if logic:
                group[:, 0] = group[:, 2] = profile(a, count)[1] > 1.0
            out.write(group.tobytes())


#: DS1000B: per channel scale (µV/div, with a 10X probe: 100 µV/div × 10 = 1 mV/div) and
#: shift (steps of scale/25); RigolWFM adds 1.12 divisions to the offset.
DS1000B_CHANNELS = ((100, -100), (100_000, 0))
DS1000B_PROBE = 10.0


def ds1000b_step(k: int) -> tuple[float, float]:
    """Channel ``k``'s volts/div (probe included) and volts per code (volts/div / 25)."""
    per_div = 1.0e-6 * DS1000B_CHANNELS[k][0] * float(np.float32(DS1000B_PROBE))
    return per_div, per_div / 25.0


def ds1000b_raw(k: int, start: int, n: int) -> np.ndarray:
    """Channel ``k``'s codes: 127 − (volts + shift × step + 1.12 × volts/div) / step."""
    per_div, step = ds1000b_step(k)
    volts = profile(start, n)[k]
    offset = DS1000B_CHANNELS[k][1] * step + 1.12 * per_div
    return np.clip(np.rint(127 - (volts + offset) / step), 0, 255).astype(np.uint8)


def ds1000b_volts(codes: np.ndarray, k: int) -> np.ndarray:
    """RigolWFM's volts: step × (127 − raw) − (shift × step + 1.12 × volts/div)."""
    per_div, step = ds1000b_step(k)
    return step * (127.0 - codes.astype(np.float64)) - (DS1000B_CHANNELS[k][1] * step
                                                        + 1.12 * per_div)


def write_ds1000b(path: Path, n: int, block: int = 1 << 20) -> None:
    """A DS1000B ``.wfm`` (RigolWFM ``ksy/rigol_1000b_wfm.ksy``) of ``n`` points of CH1 and
    CH2 (10X probes), their bytes at 420 and 420 + n."""
    head = bytearray(420)
    head[0:4] = b"\xa5\xa5\xa4\x01"
    head[4:11] = b"DS1204B"
    struct.pack_into("<I", head, 60, n)
    for k, (scale_uv, shift) in enumerate(DS1000B_CHANNELS):
        at = 68 + 24 * k
        struct.pack_into("<ih", head, at, scale_uv, shift)  # as displayed
        struct.pack_into("<f", head, at + 8, DS1000B_PROBE)
        head[at + 14] = 1
        struct.pack_into("<ih", head, at + 16, scale_uv, shift)  # as measured
    struct.pack_into("<qf", head, 172, TIME_OFFSET_PS, 1.0 / DT)
    with path.open("wb") as out:
        out.write(bytes(head))
        for k in range(2):
            for a in range(0, n, block):
                out.write(ds1000b_raw(k, a, min(block, n - a)).tobytes())


def write_ds1000c(path: Path, n: int, block: int = 1 << 20, *, first: int = 0xA1) -> None:
    """A DS1000C ``.wfm`` (RigolWFM ``ksy/rigol_1000c_wfm.ksy``) of ``n`` points of CH1 and
    CH2 (the DS1000E's channels and codes); ``first`` byte ``0xA5``: 16 bytes of padding
    before the samples (told from a DS1000E/D's file by its size)."""
    head = bytearray(256 + (16 if first == 0xA5 else 0))
    head[0:4] = bytes((first, 0xA5, 0, 0))
    struct.pack_into("<I", head, 28, n)
    for k, (scale_uv, shift) in enumerate(CHANNELS):
        at = 36 + 24 * k
        struct.pack_into("<ih", head, at, scale_uv, shift)
        struct.pack_into("<f", head, at + 8, 1.0)
        head[at + 13] = 1
        struct.pack_into("<ih", head, at + 16, scale_uv, shift)
    struct.pack_into("<qf", head, 92, TIME_OFFSET_PS, 1.0 / DT)
    with path.open("wb") as out:
        out.write(bytes(head))
        for k in range(2):
            for a in range(0, n, block):
                out.write(raw(k, a, min(block, n - a)).tobytes())
