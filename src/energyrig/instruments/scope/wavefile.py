"""Binary waveform files a scope saves: Keysight/Agilent and Rigol ``.bin``, Tektronix ``.isf``
and ``.wfm``, Rigol ``.wfm`` (DS1000B/C/D/E/Z, DS2000, DS4000, DS6000).

Each file is read as a set of :class:`Trace` (one per waveform: where its samples start in
the file, their type, and the scale and offset the file states), then streamed by
:class:`WaveformCapture`: ``chunk_samples`` samples of each channel used are read from their
place in the file at a time (``seek`` + ``numpy.fromfile``), so memory stays bounded whatever
the file's length. The layouts, with their sources, are in docs/formats.md ("Oscilloscope
waveform files"):

``.bin`` (Keysight/Agilent ``AG``, Rigol ``RG``)
    A file header (cookie, 2-digit version, file size, number of waveforms), then per
    waveform a header (its own size first; points, x increment, x origin, label at fixed
    offsets) and its buffers, each with a data header (its size, buffer type, bytes per
    point, buffer size). Analog buffers are float32 volts; logic buffers one byte per point.
``.wfm`` (Tektronix WFM#001, WFM#002, WFM#003)
    A byte-order mark (``0x0F0F`` little-endian), the version (``:WFM#003``), the curve
    buffer's offset,
    then at fixed offsets explicit dimension 1 (volts = raw × scale + offset, the sample
    format), implicit dimension 1 (the interval and the time of the buffer's first point)
    and the curve object (where the user's samples start and end in the buffer). One channel.
``.wfm`` (Rigol DS1000E/D, magic ``A5 A5 00 00``)
    A 276-byte header (RigolWFM's ``ksy/rigol_1000e_wfm.ksy``, after Rigol's "DS1000E/D WFM
    structure instruction"): the memory depth, per channel (2) its probe, enabled flag, volts
    scale (µV/div) and offset (in scale/25 steps), the sample rate and the trigger's time
    offset (ps); then channel 1's bytes, channel 2's (each ``depth`` long; in roll mode the
    last ``roll_stop + 2`` are not samples). volts = (125 − raw) × s − shift × s, s = scale ×
    1e-6 × probe / 25 (the probe already in a DS1000D's scale, the MSO model, told by its
    logic analyser settings at 120..123); sample k at offset − depth/2 × interval + k ×
    interval.
``.wfm`` (Rigol DS2000, magic ``A5 A5 38 00`` and a serial not ``DS4``/``DS6``)
    RigolWFM's ``ksy/rigol_2000_wfm.ksy``: the channels' byte offsets (4 × u32 at 68), the
    sample rate, time offset (ps), per channel (28 bytes from 120) volts/div and offset, the
    points (``wfm_len``) and ``z_pt_offset`` (bytes before each channel's first sample).
    volts = ±volts/div / 25 × (raw − 127) − offset; an "interwoven" record (one channel in
    two channels' memory) has its even samples at channel 1's offset, the odd at channel 2's.
``.wfm`` (Rigol DS4000, the same magic and a serial ``DS4``/``MSO4``)
    RigolWFM's ``ksy/rigol_4000_wfm.ksy`` (reverse-engineered): the DS2000's channel headers
    at 124, the channels' byte offsets at 68, 32 codes per division. docs/formats.md has the
    offsets.
``.wfm`` (Rigol DS6000, the same magic and a serial ``DS6``/``MSO6``)
    The DS2000's fields at the same offsets (RigolWFM's ``ksy/rigol_6000_wfm.ksy``); a
    channel is present when its bit of the mask at 64 is set.
``.wfm`` (Rigol DS1000Z, magic ``01 FF FF FF``)
    RigolWFM's ``ksy/rigol_1000z_wfm.ksy``: the firmware string, a channel mask, per
    channel volts/div and offset; the enabled channels' bytes interleaved (stride 1, 2 or
    4). volts = volts/div / 20 × (raw − 127) − offset + bias, the bias one division but on
    firmware 00.04.04.SP3's two-channel records 1/5 division (negative offset) or none.
``.wfm`` (Rigol DS1000B ``A5 A5 A4 01``, DS1000C ``A1 A5 00 00``)
    RigolWFM's ``ksy/rigol_1000b_wfm.ksy`` and ``ksy/rigol_1000c_wfm.ksy``: DS1000E-like
    channel headers; a DS1000C file with the DS1000E's magic is told by its size.
``.isf`` (Tektronix)
    The ASCII preamble ``:WFMPRE:BYT_NR 2;...;YZERO 0.0E+0;:CURVE #<n><len>`` then the
    samples as integers: volts = (raw − YOFF) × YMULT + YZERO, sample k at XZERO + XINCR·(k −
    PT_OFF). One channel per file.

Channel mapping as for a sigrok session: ``current`` (default the first analog channel) in
volts × ``amperes_per_volt``; ``voltage`` a channel or a constant (required); ``trigger`` a
channel (required): an analog one thresholded at ``trigger_level_v`` with hysteresis, a logic
one (a ``.bin`` digital pod) at bit ``trigger_bit`` (default 0).
"""
from __future__ import annotations

import logging
import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from energyrig.capture import Chunk
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.scope.filekinds import RIGOL_WFM_MAGICS
from energyrig.instruments.threshold import AnalogTrigger, Schmitt

log = logging.getLogger(__name__)

#: ``.bin`` cookie -> (maker, known versions).
BIN_VERSIONS = {b"AG": ("Keysight/Agilent", (b"01", b"03", b"10")),
                b"RG": ("Rigol", (b"01", b"03"))}
#: Waveform header fields read, little-endian, at offset 0 (the header's size comes first).
_WFM_HEADER = struct.Struct("<5I f 3d 2I 16s 16s 24s 16s")
_WAVEFORM_TYPES = {0: "unknown", 1: "normal", 2: "peak detect", 3: "average", 6: "logic"}
#: Buffer types: 1 float32 volts (normal), 5/6 one byte of logic per point.
_ANALOG_BUFFER, _LOGIC_BUFFERS = 1, (5, 6)


@dataclass(frozen=True)
class Trace:
    """One channel's samples in the file: ``volts = (raw - raw_offset) * scale + zero``.

    Attributes
    ----------
    name:
        The channel as the file labels it (``"CH1"``; a label ``"1"`` is read as ``"CH1"``).
    offset:
        Byte offset of sample 0 in the file.
    dtype:
        Type of one raw sample (with its byte order).
    samples:
        Samples of the trace.
    period_s:
        Sample interval, s.
    origin_s:
        Time of sample 0, s (relative to the scope's trigger).
    logic:
        One byte of logic channels per sample (a digital pod), not volts.
    odd_offset:
        Byte offset of sample 1 when the samples are split in two interleaved halves (a
        Rigol DS2000 "interwoven" record: even samples from ``offset``, odd ones from
        here); ``-1`` when they are in one run.
    stride:
        Raw samples from one of this trace's samples to the next (a Rigol DS1000Z keeps
        its channels' samples interleaved: 2 or 4; 1 when they are in one run).
    """

    name: str
    offset: int
    dtype: np.dtype
    samples: int
    period_s: float
    origin_s: float
    logic: bool = False
    scale: float = 1.0
    raw_offset: float = 0.0
    zero: float = 0.0
    odd_offset: int = -1
    stride: int = 1

    @property
    def end(self) -> int:
        """Byte just after the last sample (of the later half when interleaved)."""
        if self.odd_offset < 0:
            return self.offset + ((self.samples - 1) * self.stride + 1) * self.dtype.itemsize
        half = (self.samples + 1) // 2 * self.dtype.itemsize
        return max(self.offset, self.odd_offset) + half

    def _run(self, f: BinaryIO, at: int, start: int, n: int, source: str
             ) -> npt.NDArray[np.generic]:
        f.seek(at + start * self.stride * self.dtype.itemsize)
        raw = np.fromfile(f, dtype=self.dtype, count=(n - 1) * self.stride + 1 if n else 0)
        raw = raw[::self.stride]
        if len(raw) != n:
            raise CaptureError(source, f"channel {self.name}: the file ended before sample "
                                       f"{start + n} of {self.samples} (changed since it was "
                                       "opened?)")
        return raw

    def read(self, f: BinaryIO, start: int, n: int, source: str) -> npt.NDArray[np.generic]:
        """Samples ``start .. start + n`` (raw for logic, volts otherwise)."""
        if self.odd_offset < 0:
            raw = self._run(f, self.offset, start, n, source)
        else:  # sample k is sample k // 2 of the even (k even) or the odd half
            raw = np.empty(n, dtype=self.dtype)
            first = start % 2
            raw[first::2] = self._run(f, self.offset, (start + 1) // 2, len(raw[first::2]),
                                      source)
            raw[1 - first::2] = self._run(f, self.odd_offset, start // 2,
                                          len(raw[1 - first::2]), source)
        if self.logic:
            return raw
        return (raw.astype(np.float64) - self.raw_offset) * self.scale + self.zero


def read_bin(path: Path, source: str) -> tuple[str, list[Trace]]:
    """The traces of a Keysight/Agilent or Rigol ``.bin`` file (headers only are read).

    Raises
    ------
    CaptureError
        Not such a file, an unknown version, a waveform or buffer of a kind not read, or a
        file shorter than its headers say.
    """
    size = path.stat().st_size
    traces: list[Trace] = []
    with path.open("rb") as f:
        head = f.read(12)
        cookie, version = head[:2], head[2:4]
        if len(head) < 12 or cookie not in BIN_VERSIONS:
            raise CaptureError(source, "not a Keysight/Agilent or Rigol .bin waveform file "
                                       "(no 'AG' or 'RG' cookie)")
        maker, versions = BIN_VERSIONS[cookie]
        if version not in versions:
            raise CaptureError(source, f"{maker} .bin version "
                                       f"{version.decode('ascii', 'replace')!r} "
                                       "is not one the rig reads (it reads "
                                       f"{', '.join(v.decode() for v in versions)})")
        wide = version == b"03"  # 64-bit file and buffer sizes
        if wide:
            head += f.read(4)
        (count,) = struct.unpack_from("<I", head, 12 if wide else 8)
        pos = f.tell()
        for k in range(count):
            trace, pos = _bin_waveform(f, pos, k, wide, size, maker, source)
            traces.append(trace)
    return f"{maker} .bin", traces


def _bin_waveform(f: BinaryIO, pos: int, k: int, wide: bool, size: int, maker: str,
                  source: str) -> tuple[Trace, int]:
    """Waveform ``k`` (from 0) whose header starts at byte ``pos``: its analog or logic
    trace (one buffer), and where the next waveform starts."""
    f.seek(pos)
    raw = f.read(_WFM_HEADER.size)
    if len(raw) < _WFM_HEADER.size:
        raise CaptureError(source, f"{maker} .bin: the file ends inside waveform {k + 1}'s "
                                   "header")
    (header_size, wtype, buffers, points, _count, _range, _display, increment, origin,
     _xu, _yu, _date, _time, _frame, label) = _WFM_HEADER.unpack(raw)
    name = label.split(b"\0", 1)[0].decode("ascii", "replace").strip() or f"W{k + 1}"
    if name.isdigit():  # Keysight labels channel n "n": a number in --voltage is a constant
        name = f"CH{name}"
    if wtype not in (1, 3, 6) or buffers != 1:
        kind = _WAVEFORM_TYPES.get(wtype, f"type {wtype}")
        raise CaptureError(source, f"{maker} .bin: waveform {k + 1} ({name}) is a {kind} "
                                   f"record with {buffers} buffers; the rig reads normal, "
                                   "average and logic records (save in Normal acquisition)")
    if not (math.isfinite(increment) and increment > 0):
        raise CaptureError(source, f"{maker} .bin: waveform {k + 1} ({name}): x increment "
                                   f"{increment!r} s is not > 0")
    f.seek(pos + header_size)
    data_format = "<IHHQ" if wide else "<IHHI"
    dh = f.read(struct.calcsize(data_format))
    if len(dh) < struct.calcsize(data_format):
        raise CaptureError(source, f"{maker} .bin: the file ends inside waveform {k + 1}'s "
                                   "data header")
    dh_size, btype, per_point, nbytes = struct.unpack(data_format, dh)
    logic = btype in _LOGIC_BUFFERS
    if not (btype == _ANALOG_BUFFER and per_point == 4) and not (logic and per_point == 1):
        raise CaptureError(source, f"{maker} .bin: waveform {k + 1} ({name}): buffer type "
                                   f"{btype} of {per_point} bytes per point is not read "
                                   "(float32 volts or one byte of logic per point are)")
    if nbytes != points * per_point or not points:
        raise CaptureError(source, f"{maker} .bin: waveform {k + 1} ({name}): its buffer of "
                                   f"{nbytes} bytes is not its {points} points of {per_point} "
                                   "bytes")
    offset = pos + header_size + dh_size
    trace = Trace(name, offset, np.dtype("<f4") if not logic else np.dtype("u1"),
                  points, float(increment), float(origin), logic)
    if trace.end > size:
        raise CaptureError(source, f"{maker} .bin: waveform {k + 1} ({name}) needs bytes up to "
                                   f"{trace.end}, the file has {size} (truncated?)")
    return trace, offset + nbytes


_ISF_KEYS = {  # long form -> the short form newer firmware writes
    "BYT_NR": "BYT_N", "BN_FMT": "BN_F", "BYT_OR": "BYT_O", "ENCDG": "ENC", "NR_PT": "NR_P",
    "PT_FMT": "PT_F", "XINCR": "XIN", "XZERO": "XZE", "PT_OFF": "PT_O", "YMULT": "YMU",
    "YOFF": "YOF", "YZERO": "YZE", "WFID": "WFI"}
_ISF_HEAD = 4096
_ISF_ITEM = re.compile(r'\s*:?(?:[A-Z]+:)*([A-Z_]+)\s+("[^"]*"|[^;]*)')


def read_isf(path: Path, source: str) -> tuple[str, list[Trace]]:
    """The one trace of a Tektronix ``.isf`` file (the preamble is read, not the samples).

    Raises
    ------
    CaptureError
        No ``#`` block within the first 4 KiB, a field missing, or an encoding not read.
    """
    with path.open("rb") as f:
        head = f.read(_ISF_HEAD)
    size = path.stat().st_size
    hash_at = head.find(b"#")
    if hash_at < 0 or hash_at + 2 > len(head) or not head[hash_at + 1:hash_at + 2].isdigit():
        raise CaptureError(source, "Tektronix .isf: no '#<n><length>' curve block in the "
                                   "first 4 KiB")
    digits = int(head[hash_at + 1:hash_at + 2])
    length_text = head[hash_at + 2:hash_at + 2 + digits]
    fields: dict[str, str] = {}
    for item in head[:hash_at].decode("ascii", "replace").split(";"):
        match = _ISF_ITEM.match(item.upper())
        if match:
            key = match.group(1)
            fields[_ISF_KEYS.get(key, key)] = match.group(2).strip().strip('"')
    fmt = _isf_dtype(fields, source)
    if fields.get("PT_F", "Y") != "Y":
        raise CaptureError(source, f"Tektronix .isf: point format {fields['PT_F']!r}: the rig "
                                   "reads Y (one value per point; ENV is min/max pairs)")
    try:
        values = {key: float(fields[key]) for key in ("XIN", "XZE", "YMU", "YOF", "YZE")}
        points = int(fields["NR_P"])
        pt_off = float(fields.get("PT_O", "0"))
        nbytes = int(length_text)
    except KeyError as exc:
        raise CaptureError(source, f"Tektronix .isf: the preamble has no {exc.args[0]} "
                                   "field") from None
    except ValueError as exc:
        raise CaptureError(source, f"Tektronix .isf: a preamble field is not a number: "
                                   f"{exc}") from None
    if nbytes != points * fmt.itemsize or not points:
        raise CaptureError(source, f"Tektronix .isf: the curve block of {nbytes} bytes is not "
                                   f"NR_PT {points} × BYT_NR {fmt.itemsize}")
    name = fields.get("WFI", "CH1").split(",", 1)[0].strip().upper() or "CH1"
    trace = Trace(name, hash_at + 2 + digits, fmt, points,
                  values["XIN"], values["XZE"] - pt_off * values["XIN"], False,
                  values["YMU"], values["YOF"], values["YZE"])
    if not (math.isfinite(trace.period_s) and trace.period_s > 0):
        raise CaptureError(source, f"Tektronix .isf: XINCR {trace.period_s!r} s is not > 0")
    if trace.end > size:
        raise CaptureError(source, f"Tektronix .isf: {points} points need bytes up to "
                                   f"{trace.end}, the file has {size} (truncated?)")
    return "Tektronix .isf", [trace]


def _isf_dtype(fields: dict[str, str], source: str) -> np.dtype:
    if fields.get("ENC", "BIN") not in ("BIN", "BINARY"):
        raise CaptureError(source, f"Tektronix .isf: encoding {fields['ENC']!r}: the rig reads "
                                   "BIN")
    width, kind = fields.get("BYT_N", "?"), fields.get("BN_F", "RI")
    order = fields.get("BYT_O", "MSB")
    if width not in ("1", "2") or kind not in ("RI", "RP") or order not in ("MSB", "LSB"):
        raise CaptureError(source, f"Tektronix .isf: BYT_NR {width}, BN_FMT {kind}, BYT_OR "
                                   f"{order}: the rig reads 1 or 2 byte RI/RP integers, MSB or LSB")
    return np.dtype(("<" if order == "LSB" else ">") + ("i" if kind == "RI" else "u") + width)


#: Tektronix WFM: version -> byte offsets of explicit dimension 1, implicit dimension 1 and
#: the curve object (WFM#002 adds a 2-byte summary frame type to WFM#001; WFM#003's point
#: densities are 8 bytes, WFM#002's 4).
TEK_WFM_VERSIONS = {b":WFM#001": (166, 478, 790), b":WFM#002": (168, 480, 792),
                    b":WFM#003": (168, 488, 808)}
#: Tektronix WFM explicit formats -> numpy type code (with the file's byte order). The 8-bit
#: codes are left out: RigolWFM reads 7 as uint8 and 8 as int8, Tektronix's sample reader
#: (tekwfm2) 7 as int8.
_TEK_FORMATS = {0: "i2", 1: "i4", 2: "u4", 3: "u8", 4: "f4", 5: "f8"}
_TEK_HEAD = 838  # through the curve object of a WFM#003


def read_tek_wfm(path: Path, source: str) -> tuple[str, list[Trace]]:
    """The one trace of a Tektronix ``.wfm`` (WFM#001 to WFM#003; headers only are read).

    Raises
    ------
    CaptureError
        Another version, a FastFrame set, a storage or format not read, or a file shorter
        than its curve.
    """
    with path.open("rb") as f:
        head = f.read(_TEK_HEAD)
    size = path.stat().st_size
    order = {b"\x0f\x0f": "<", b"\xf0\xf0": ">"}.get(head[:2])
    version = head[2:10]
    if order is None or not version.startswith(b":WFM#") or len(head) < 120:
        raise CaptureError(source, "not a Tektronix .wfm (no byte-order mark and ':WFM#')")
    if version not in TEK_WFM_VERSIONS:
        raise CaptureError(source, f"Tektronix .wfm version {version.decode('ascii', 'replace')!r} "
                                   "is not one the rig reads (it reads :WFM#001 to :WFM#003)")
    exp_at, imp_at, curve_at = TEK_WFM_VERSIONS[version]
    if len(head) < curve_at + 30:
        raise CaptureError(source, "Tektronix .wfm: the file ends inside its header")
    (per_point,) = struct.unpack_from("B", head, 15)
    (curve_offset,) = struct.unpack_from(order + "i", head, 16)
    (frames_minus_1,) = struct.unpack_from(order + "I", head, 72)
    label = head[40:72].split(b"\0", 1)[0].decode("ascii", "replace").strip()
    y_scale, y_offset = struct.unpack_from(order + "2d", head, exp_at)
    fmt, storage = struct.unpack_from(order + "2i", head, exp_at + 72)
    x_scale, x_offset = struct.unpack_from(order + "2d", head, imp_at)
    data_start, post_start = struct.unpack_from(order + "2I", head, curve_at + 14)
    if frames_minus_1 or storage != 0:
        raise CaptureError(source, f"Tektronix .wfm: a FastFrame set ({frames_minus_1 + 1} "
                                   f"frames) or storage type {storage}: the rig reads one "
                                   "frame of samples (storage 0)")
    if fmt not in _TEK_FORMATS or np.dtype(_TEK_FORMATS[fmt]).itemsize != per_point:
        raise CaptureError(source, f"Tektronix .wfm: curve format {fmt} with {per_point} "
                                   "bytes per point is not read")
    dtype = np.dtype(order + _TEK_FORMATS[fmt])
    first = data_start // per_point
    trace = Trace(label or "CH1", curve_offset + data_start, dtype,
                  (post_start - data_start) // per_point, x_scale, x_offset + first * x_scale,
                  False, y_scale, 0.0, y_offset)
    if not (math.isfinite(x_scale) and x_scale > 0) or trace.samples <= 0:
        raise CaptureError(source, f"Tektronix .wfm: sample interval {x_scale!r} s and "
                                   f"{trace.samples} samples: nothing to read")
    if trace.end > size:
        raise CaptureError(source, f"Tektronix .wfm: the curve needs bytes up to {trace.end}, "
                                   f"the file has {size} (truncated?)")
    return "Tektronix .wfm", [trace]


#: Rigol ``.wfm``: the header bytes read (a DS1000E/D's whole header: its samples start there).
_RIGOL_HEAD = 576  # through a DS4000's time header; a DS1000E/D's samples start at 276
_DS1000E_DATA = 276
#: Rigol DS1000E/D ``.wfm``: the header's fields read (little-endian, at their offsets); a
#: channel header (24 bytes from 34) from its probe on.
_DS1000E_FIELDS = {"roll_stop": (20, "I"), "depth": (28, "I"),
                   "trigger_mode": (142, "B"), "rate_hz": (100, "f"), "offset_ps": (112, "q"),
                   "depth2": (232, "I")}
_DS1000E_CHANNEL = struct.Struct("<f x ? 2x i h")
_DS1000E_ZERO = 125  # the raw code of 0 V before the offset (RigolWFM channel.py, DS1000C/D/E)
_DS1000E_ALT = 4  # trigger mode "alternate": each channel on its own time base
#: The logic analyser header's first 4 bytes (120: the pod's enabled bit, 121: active
#: channel, 122: channel mask, u16): 0 in every DS1000E file of RigolWFM's captures (12
#: files, DS1000E, DS1052E, DS1102E), a DS1000E having no logic analyser to set them; set
#: in its DS1000D capture DS1102D-A (the pod off: active channel 15, mask 0xE000).
_DS1000E_LA = slice(120, 124)
#: Rigol DS2000 ``.wfm`` (RigolWFM ``ksy/rigol_2000_wfm.ksy``): header fields; a channel
#: header (28 bytes from 120): enabled, 7 probe bytes, volts/div and offset (f32, V), then
#: the invert and unit bytes.
_DS2000_FIELDS = {"acquisition": (84, "H"), "rate_hz": (96, "f"), "offset_ps": (112, "q"),
                  "storage_depth": (244, "I"), "z_pt": (248, "I"), "wfm_len": (252, "I")}
_DS2000_4000_CHANNEL = struct.Struct("<B 7x f f B B")
_DS2000_ZERO = 127  # the raw code of 0 V before the offset (RigolWFM channel.py: DS2000, DS4000,
#                     DS6000, DS1000B, DS1000Z)
_DS2000_PEAK = 2
#: Rigol DS4000 ``.wfm`` (RigolWFM ``ksy/rigol_4000_wfm.ksy``, reverse-engineered from its
#: captures): header fields; channel headers as the DS2000's, 28 bytes from 124; 32 codes
#: per division (25 when the serial's third character is ``2``, as RigolWFM has it).
_DS4000_FIELDS = {"rate_hz": (100, "f"), "depth": (268, "I"), "offset_ps": (568, "q")}
_DS4000_HEAD = 576
#: The DS2A firmware whose time offset RigolWFM reads as 0 (the trigger centred).
_DS2000_CENTRED_FIRMWARE = b"00.03.00.01.03"
#: Rigol DS1000Z ``.wfm`` (RigolWFM ``ksy/rigol_1000z_wfm.ksy``, after Rigol's "DS1000Z
#: Waveform Storage Structure"): the file header's block (``01 00`` at 48) and the waveform
#: header's structure size (``D8 00`` at 84) and sample mode (0 at 114) the layout states
#: (RigolWFM refuses other values); header fields; a channel
#: header (28 bytes from 124): enabled, coupling, bandwidth, probe type and ratio, 3 unused,
#: volts/div and offset (f32, V, with the probe), inverted.
_DS1000Z_BLOCK, _DS1000Z_STRUCTURE, _DS1000Z_SAMPLE_MODE_AT = b"\x01\x00", 0xD8, 114
_DS1000Z_FIELDS = {"offset_ps": (72, "q"), "structure": (84, "H"), "mask": (88, "B"),
                   "acquisition": (112, "B"), "depth": (116, "I"), "rate_ghz": (120, "f"),
                   "horizontal_size": (256, "I"), "horizontal_offset": (260, "I")}
_DS1000Z_CHANNEL = struct.Struct("<B 7x f f B")
_DS1000Z_PEAK = 1
#: The DS1000Z firmware whose two-channel records RigolWFM reads with another vertical
#: bias (``vertical_bias`` in its ksy): +1/5 div on a negative offset, none otherwise.
_DS1000Z_SP3_FIRMWARE = b"00.04.04.SP3"
#: Rigol DS1000B ``.wfm`` (RigolWFM ``ksy/rigol_1000b_wfm.ksy``): header fields; a channel
#: header (24 bytes from 68): probe (f32 at +8), enabled (+14), inverted (+15), scale
#: (s32 at +16, µV/div) and shift (s16 at +20, steps of scale/25); the samples from 420,
#: channel k's at 420 + k × points.
_DS1000B_FIELDS = {"points": (60, "I"), "offset_ps": (172, "q"), "rate_hz": (180, "f")}
_DS1000B_CHANNEL = struct.Struct("<8x f 2x B B i h")
_DS1000B_DATA = 420
#: RigolWFM channel.py's fit for the DS1000B: 1.12 divisions added to the stated offset.
_DS1000B_BIAS_DIV = 1.12
#: Rigol DS1000C ``.wfm`` (RigolWFM ``ksy/rigol_1000c_wfm.ksy``): the DS1000E's header two
#: bytes earlier (a channel header at 36 + 24 × k: probe at +8, enabled +13, inverted +14,
#: scale +16, shift +20); the samples from 256 (272 when the first byte is A5), the
#: enabled channels' one after the other.
_DS1000C_FIELDS = {"points": (28, "I"), "offset_ps": (92, "q"), "rate_hz": (100, "f"),
                   "trigger_mode": (142, "B")}
_DS1000C_CHANNEL = struct.Struct("<8x f x B B x i h")
_DS1000C_DATA, _DS1000C_PAD = 256, 16
#: Bytes of header each layout needs (the DS4000's, the longest, otherwise).
_RIGOL_HEADS = {"DS1000E/D": _DS1000E_DATA, "DS1000C": _DS1000C_DATA, "DS1000B": 200,
                "DS1000Z": 264, "DS2000": 256, "DS6000": 256}


def read_rigol_wfm(path: Path, source: str) -> tuple[str, list[Trace]]:
    """The enabled channels of a Rigol ``.wfm`` (DS1000B/C/D/E/Z, DS2000, DS4000, DS6000;
    headers only, and for a one-channel DS1000Z the bytes that tell a logic record).

    Raises
    ------
    CaptureError
        Not a Rigol ``.wfm``, a record the rig does not read (alternate trigger, peak
        detect, a DS1000Z analog + logic record), a probe factor the file leaves ambiguous,
        a header not in the layout, or a file shorter than its header says.
    """
    with path.open("rb") as f:
        head = f.read(_RIGOL_HEAD)
    size = path.stat().st_size
    model = _rigol_model(head, size)
    if model is None:
        raise CaptureError(source, "not a Rigol .wfm (no Rigol magic in its first 4 bytes)")
    reader = {"DS1000E/D": _ds1000e, "DS1000C": _ds1000c, "DS1000B": _ds1000b,
              "DS1000Z": _ds1000z, "DS2000": _ds2000, "DS4000": _ds4000,
              "DS6000": _ds6000}[model]
    if len(head) < _RIGOL_HEADS.get(model, _DS4000_HEAD):
        raise CaptureError(source, f"Rigol {model} .wfm: the file ends inside its header")
    kind = f"Rigol {model} .wfm"
    traces = reader(head, kind, source)
    if not traces:
        raise CaptureError(source, f"{kind}: no channel was enabled when it was saved")
    for t in traces:
        if t.samples <= 0 or t.end > size:
            raise CaptureError(source, f"{kind}: {t.name}'s {t.samples} points need bytes up "
                                       f"to {t.end}, the file has {size} (truncated?)")
    if model == "DS1000Z" and len(traces) == 1 and _ds1000z_logic(path, traces[0]):
        raise CaptureError(source, f"{kind}: an analog + logic record (an MSO's digital "
                                   "channels interleaved with the analog one): its layout is "
                                   "only guessed from captures, the rig does not read it; "
                                   "save with the logic analyser off, or as CSV")
    return kind, traces


def _rigol_model(head: bytes, size: int) -> str | None:
    """The Rigol model family that wrote a ``.wfm``, told as RigolWFM 1.6.0's ``wfm.py``
    (``_detect_model_from_header``) tells it: the magic; for ``A5 A5 38 00`` the serial at
    4; for ``A5 A5 00 00`` the file's size (a DS1000C's samples start at 256 or 272, a
    DS1000E/D's at 276); None if no Rigol magic."""
    model = RIGOL_WFM_MAGICS.get(head[:4])
    if model == "DS2000/DS4000/DS6000":
        serial = head[4:24].split(b"\0", 1)[0]
        return ("DS4000" if serial.startswith((b"DS4", b"MSO4")) else
                "DS6000" if serial.startswith((b"DS6", b"MSO6")) else "DS2000")
    if model == "DS1000E/D" and len(head) >= _DS1000E_DATA:
        (points,) = struct.unpack_from("<I", head, 28)
        enabled = bool(head[49]) + bool(head[73])
        if points and enabled and size in (_DS1000C_DATA + enabled * points,
                                           _DS1000C_DATA + _DS1000C_PAD + enabled * points):
            return "DS1000C"
    return model


def _fields(head: bytes, layout: dict[str, tuple[int, str]]) -> dict[str, int | float]:
    """The little-endian fields ``name: (offset, struct code)`` of ``head``."""
    return {name: struct.unpack_from("<" + fmt, head, at)[0]
            for name, (at, fmt) in layout.items()}


def _period(rate_hz: float, kind: str, source: str) -> float:
    """Seconds per point of a stated sample rate.

    Raises
    ------
    CaptureError
        The rate is not > 0 (or not finite).
    """
    if not (math.isfinite(rate_hz) and rate_hz > 0):
        raise CaptureError(source, f"{kind}: sample rate {rate_hz!r} Hz is not > 0")
    return 1.0 / rate_hz


def _peak_detect(kind: str, source: str) -> CaptureError:
    """The refusal of a peak detect record (min/max pairs, not samples)."""
    return CaptureError(source, f"{kind}: a peak detect record: the rig reads normal, "
                                "average and high resolution ones (save in Normal)")


def _alternate_trigger(kind: str, source: str) -> CaptureError:
    """The refusal of a record on an alternate trigger (each channel on its own time base)."""
    return CaptureError(source, f"{kind}: alternate trigger (each channel on its own time "
                                "base): the rig reads channels on one time base (save with "
                                "an edge trigger)")


def _ds1000e(head: bytes, kind: str, source: str) -> list[Trace]:
    """CH1 and CH2 of a DS1000E/D header (the layout in the module's docstring)."""
    h = _fields(head, _DS1000E_FIELDS)
    if h["trigger_mode"] == _DS1000E_ALT:
        raise _alternate_trigger(kind, source)
    period = _period(h["rate_hz"], kind, source)
    skip = int(h["roll_stop"]) + 2 if h["roll_stop"] else 0
    ds1000d = any(head[_DS1000E_LA])  # a logic analyser's settings: only a DS1000D has one
    traces: list[Trace] = []
    offset = _DS1000E_DATA
    for k in range(2):
        probe, enabled, scale_uv, shift = _DS1000E_CHANNEL.unpack_from(head, 34 + 24 * k + 10)
        if not enabled:
            continue
        depth = int(h["depth"] if k == 0 or h["depth2"] == 0 else h["depth2"])
        if probe != 1 and not ds1000d:
            raise CaptureError(source, f"{kind}: CH{k + 1} has a {probe:g}X probe, which a "
                                       "DS1000E leaves out of the stated scale and a DS1000D "
                                       "includes, and the file does not say which wrote it "
                                       "(no logic analyser setting in it, as in a DS1000E's "
                                       "or an untouched DS1000D's); save with the probe at "
                                       "1X")
        step = scale_uv * 1e-6 * (1.0 if ds1000d else probe) / 25.0
        traces.append(Trace(f"CH{k + 1}", offset, np.dtype("u1"), depth - skip, period,
                            h["offset_ps"] * 1e-12 - depth * period / 2, False, -step,
                            _DS1000E_ZERO, -shift * step))
        offset += depth
    return traces


def _ds2000(head: bytes, kind: str, source: str) -> list[Trace]:
    """CH1..CH4 of a DS2000 header (the layout in the module's docstring)."""
    h = _fields(head, _DS2000_FIELDS)
    if h["acquisition"] == _DS2000_PEAK:
        raise _peak_detect(kind, source)
    offsets = struct.unpack_from("<4I", head, 68)
    interwoven = bool(head[65] & 1)
    period = _period(h["rate_hz"], kind, source)
    time_ps = h["offset_ps"]
    firmware = head[24:44].split(b"\0", 1)[0]
    if head[4:8] == b"DS2A" and firmware == _DS2000_CENTRED_FIRMWARE:
        time_ps = 0  # as RigolWFM channel.py: this firmware's offset is not the record's
    origin = time_ps * 1e-12 + (h["z_pt"] - h["storage_depth"] / 2) * period
    traces: list[Trace] = []
    for k in range(4):
        enabled, per_div, volt_offset, invert_field, unit_field = (
            _DS2000_4000_CHANNEL.unpack_from(head, 120 + 28 * k))
        if not (enabled and offsets[k]):
            continue
        # RigolWFM's compatibility shim: the invert flag is the first of the two bytes when
        # the enabled byte is 1 (older firmware), the second otherwise (DS2072A captures).
        inverted = (invert_field if enabled == 1 else unit_field) == 1
        scale = (-per_div if inverted else per_div) / 25.0
        if interwoven:
            if not (offsets[0] and offsets[1]):
                raise CaptureError(source, f"{kind}: an interwoven record without both halves "
                                           "(channel 1 and 2 offsets)")
            trace = Trace(f"CH{k + 1}", offsets[0] + h["z_pt"], np.dtype("u1"),
                          2 * (h["wfm_len"] // 2), period, origin, False, scale,
                          _DS2000_ZERO, -volt_offset, offsets[1] + h["z_pt"])
        else:
            trace = Trace(f"CH{k + 1}", offsets[k] + h["z_pt"], np.dtype("u1"),
                          int(h["wfm_len"]), period, origin, False, scale, _DS2000_ZERO,
                          -volt_offset)
        traces.append(trace)
    return traces


def _ds4000(head: bytes, kind: str, source: str) -> list[Trace]:
    """CH1..CH4 of a DS4000 header (the layout in docs/formats.md)."""
    h = _fields(head, _DS4000_FIELDS)
    period = _period(h["rate_hz"], kind, source)
    positions = struct.unpack_from("<4I", head, 68)
    codes_per_div = 25.0 if head[6:7] == b"2" else 32.0
    depth = int(h["depth"])
    traces: list[Trace] = []
    for k in range(4):
        enabled, per_div, volt_offset, invert_field, _unit = (
            _DS2000_4000_CHANNEL.unpack_from(head, 124 + 28 * k))
        if not (enabled and head[64] >> k & 1):
            continue
        scale = (-per_div if invert_field else per_div) / codes_per_div
        traces.append(Trace(f"CH{k + 1}", positions[k], np.dtype("u1"), depth, period,
                            h["offset_ps"] * 1e-12 - depth * period / 2, False, scale,
                            _DS2000_ZERO, -volt_offset))
    return traces


def _ds6000(head: bytes, kind: str, source: str) -> list[Trace]:
    """CH1..CH4 of a DS6000 header: the DS2000's fields at the DS2000's offsets (RigolWFM
    ``ksy/rigol_6000_wfm.ksy``, after Rigol's "WFM save format: FFalcon/Goshawk"); a channel
    is present when its bit of the mask at 64 is set and its offset is not 0, and inverted
    when the byte after its offset (f32) is not 0 (RigolWFM channel.py ``ds6000``)."""
    h = _fields(head, _DS2000_FIELDS)
    if h["acquisition"] == _DS2000_PEAK:
        raise _peak_detect(kind, source)
    offsets = struct.unpack_from("<4I", head, 68)
    period = _period(h["rate_hz"], kind, source)
    origin = (h["offset_ps"] * 1e-12 + h["z_pt"] * period) - h["storage_depth"] * period / 2
    traces: list[Trace] = []
    for k in range(4):
        _enabled, per_div, volt_offset, inverted, _unit = (
            _DS2000_4000_CHANNEL.unpack_from(head, 120 + 28 * k))
        if not (head[64] >> k & 1 and offsets[k]):
            continue
        traces.append(Trace(f"CH{k + 1}", offsets[k] + h["z_pt"], np.dtype("u1"),
                            int(h["wfm_len"]), period, origin, False,
                            (-per_div if inverted else per_div) / 25.0, _DS2000_ZERO,
                            -volt_offset))
    return traces


def _ds1000z(head: bytes, kind: str, source: str) -> list[Trace]:
    """CH1..CH4 of a DS1000Z header (RigolWFM ``ksy/rigol_1000z_wfm.ksy`` and channel.py
    ``ds1000z``; the offsets in docs/formats.md). The enabled channels' samples are
    interleaved after the horizontal block: one channel alone, two alternating (the first
    enabled one in the odd bytes), three or four in groups of four (CH4 CH3 CH2 CH1)."""
    h = _fields(head, _DS1000Z_FIELDS)
    if (head[48:50] != _DS1000Z_BLOCK or h["structure"] != _DS1000Z_STRUCTURE
            or head[_DS1000Z_SAMPLE_MODE_AT]):
        raise CaptureError(source, f"{kind}: header block {head[48:50].hex()}, structure size "
                                   f"{h['structure']:#x} and sample mode "
                                   f"{head[_DS1000Z_SAMPLE_MODE_AT]} are not the layout the rig "
                                   "reads (block 0100, size 0xd8, sample mode 0): another "
                                   "firmware's file?")
    if h["acquisition"] == _DS1000Z_PEAK:
        raise _peak_detect(kind, source)
    period = _period(h["rate_ghz"] * 1e9, kind, source)
    enabled = [k for k in range(4) if h["mask"] >> k & 1]
    stride = 4 if len(enabled) == 3 else max(len(enabled), 1)
    points = int(h["depth"]) // stride
    data = int(h["horizontal_offset"]) + int(h["horizontal_size"])
    firmware = head[28:48].split(b"\0", 1)[0]
    sp3_pair = firmware == _DS1000Z_SP3_FIRMWARE and len(enabled) == 2
    traces: list[Trace] = []
    for k in enabled:
        _on, per_div, shift, inverted = _DS1000Z_CHANNEL.unpack_from(head, 124 + 28 * k)
        per_div = -per_div if inverted else per_div
        # RigolWFM's vertical_bias: one division, but on 00.04.04.SP3's two-channel
        # records 1/5 division below a negative offset and none at a zero one.
        bias = (per_div / 5.0 if shift < 0 else 0.0) if sp3_pair else per_div
        if stride == 2:  # RigolWFM _channel_bytes: odd bytes unless an earlier slot is on
            lane = 0 if any(head[124 + 28 * i] for i in range(k)) else 1
        else:
            lane = 3 - k if stride == 4 else 0
        traces.append(Trace(f"CH{k + 1}", data + lane, np.dtype("u1"), points, period,
                            h["offset_ps"] * 1e-12 - points * period / 2, False,
                            per_div / 20.0, _DS2000_ZERO, -(shift - bias), stride=stride))
    return traces


def _ds1000z_logic(path: Path, trace: Trace, block: int = 1 << 20) -> bool:
    """Whether a one-channel DS1000Z record is an MSO's analog + logic record, as RigolWFM
    ``rigol_1000z_logic.split_raw_payload`` tells one: its bytes in fours, the first and
    third of each four taking at most 8 values, each 0 or one bit set. Read in blocks,
    stopping at the first byte that is not such a value (an analog record's first)."""
    if trace.samples % 4:
        return False
    seen: tuple[set[int], set[int]] = (set(), set())
    with path.open("rb") as f:
        f.seek(trace.offset)
        for start in range(0, trace.samples, block):
            raw = np.fromfile(f, dtype=np.uint8, count=min(block, trace.samples - start))
            for lane, values in zip((0, 2), seen):
                values.update(np.unique(raw[lane::4]).tolist())
                if len(values) > 8 or any(v & (v - 1) for v in values):
                    return False
    return True


def _ds1000b(head: bytes, kind: str, source: str) -> list[Trace]:
    """CH1..CH4 of a DS1000B header (RigolWFM ``ksy/rigol_1000b_wfm.ksy``, reverse-engineered
    from its captures, and channel.py ``ds1000b``): volts = s × (127 − raw) − shift × s −
    1.12 × 25 s, s = ±scale × 1e-6 × probe / 25; sample k at time offset − points/2 ×
    interval + k × interval."""
    h = _fields(head, _DS1000B_FIELDS)
    period = _period(h["rate_hz"], kind, source)
    points = int(h["points"])
    traces: list[Trace] = []
    for k in range(4):
        probe, enabled, inverted, scale_uv, shift = _DS1000B_CHANNEL.unpack_from(
            head, 68 + 24 * k)
        if not enabled:
            continue
        per_div = (-1.0e-6 if inverted else 1.0e-6) * scale_uv * probe
        step = per_div / 25.0
        traces.append(Trace(f"CH{k + 1}", _DS1000B_DATA + k * points, np.dtype("u1"), points,
                            period, h["offset_ps"] * 1e-12 - points * period / 2, False,
                            -step, _DS2000_ZERO,
                            -(shift * step + _DS1000B_BIAS_DIV * per_div)))
    return traces


def _ds1000c(head: bytes, kind: str, source: str) -> list[Trace]:
    """CH1 and CH2 of a DS1000C header (RigolWFM ``ksy/rigol_1000c_wfm.ksy`` and channel.py
    ``ds1000c``): volts = s × (125 − raw) − shift × s, s = ±scale × 1e-6 × probe / 25."""
    h = _fields(head, _DS1000C_FIELDS)
    if h["trigger_mode"] == _DS1000E_ALT:
        raise _alternate_trigger(kind, source)
    period = _period(h["rate_hz"], kind, source)
    points = int(h["points"])
    offset = _DS1000C_DATA + (_DS1000C_PAD if head[0] == 0xA5 else 0)
    traces: list[Trace] = []
    for k in range(2):
        probe, enabled, inverted, scale_uv, shift = _DS1000C_CHANNEL.unpack_from(
            head, 36 + 24 * k)
        if not enabled:
            continue
        step = (-1.0e-6 if inverted else 1.0e-6) * scale_uv * probe / 25.0
        traces.append(Trace(f"CH{k + 1}", offset, np.dtype("u1"), points, period,
                            h["offset_ps"] * 1e-12 - points * period / 2, False, -step,
                            _DS1000E_ZERO, -(shift * step)))
        offset += points
    return traces


class WaveformCapture:
    """A scope's waveform file as a capture (:mod:`energyrig.capture`), streamed.

    Parameters
    ----------
    path:
        The file.
    kind:
        What it is, for messages (``"Rigol .bin"``).
    traces:
        Its channels (:func:`read_bin`, :func:`read_isf`).
    options:
        Which channel is the current, the voltage and the trigger.
    """

    trigger_bit = 0  # the trigger (analog thresholded, or the chosen logic bit) is bit 0

    def __init__(self, path: Path, kind: str, traces: list[Trace],
                 options: CaptureOptions) -> None:
        self.path = path
        self.source = str(path)
        self.kind = kind
        self.options = options
        self.traces = {t.name: t for t in traces}
        if len(self.traces) != len(traces):
            raise CaptureError(self.source, f"{kind}: two waveforms have the same label "
                                            f"({', '.join(t.name for t in traces)})")
        if options.chunk_samples < 1:
            raise CaptureError(self.source, "chunk_samples must be >= 1, got "
                                            f"{options.chunk_samples}")
        self._amperes_per_volt = options.amperes_per_volt(self.source)
        analog = [t.name for t in traces if not t.logic]
        if not analog:
            raise ChannelError(self.source, f"{kind}: no analog channel for the current "
                                            f"({self.describe()})")
        self.current = self._trace(options.current or analog[0], "current", logic=False)
        self.voltage, self.voltage_const = self._voltage()
        self.trigger, self.threshold = self._trigger()
        used = [t for t in (self.current, self.voltage, self.trigger) if t is not None]
        self._check_aligned(used)
        self.samples = min(t.samples for t in used)
        self.period_s = self.current.period_s

    def describe(self) -> str:
        """The channels, for messages."""
        return "the channels are " + ", ".join(
            f"{t.name}{' (logic)' if t.logic else ''}" for t in self.traces.values())

    def _trace(self, name: str, role: str, *, logic: bool | None) -> Trace:
        trace = self.traces.get(name)
        if trace is None or (logic is not None and trace.logic != logic):
            kind = "" if logic is None else ("logic " if logic else "analog ")
            raise ChannelError(self.source, f"no {kind}channel {name!r} for the {role} "
                                            f"({self.describe()})")
        return trace

    def _voltage(self) -> tuple[Trace | None, float]:
        voltage = self.options.voltage
        if voltage is None:
            raise ChannelError(self.source, f"{self.kind}: give the supply voltage, a channel "
                                            "(--voltage CH2) or a constant (--voltage 3.3) "
                                            f"({self.describe()})")
        if isinstance(voltage, float):
            return None, voltage
        return self._trace(voltage, "voltage", logic=False), math.nan

    def _trigger(self) -> tuple[Trace, AnalogTrigger | None]:
        name = self.options.trigger
        if name is None:
            raise ChannelError(self.source, f"{self.kind}: name the trigger channel with "
                                            "--trigger, an analog one with --trigger-level "
                                            f"VOLTS ({self.describe()})")
        trace = self._trace(name, "trigger", logic=None)
        bit = self.options.trigger_bit
        if trace.logic:
            if self.options.trigger_level_v is not None:
                raise CaptureError(self.source, f"trigger {name!r} is a logic channel: "
                                                "--trigger-level applies to an analog one")
            if bit is not None and bit > 7:
                raise ChannelError(self.source, f"trigger {name!r} holds 8 logic channels: "
                                                f"--trigger-bit must be 0..7, got {bit}")
            return trace, None
        if bit is not None:
            raise CaptureError(self.source, f"trigger {name!r} is an analog channel: "
                                            "--trigger-bit applies to a logic one")
        return trace, self.options.analog_trigger(self.source, name)

    def _check_aligned(self, used: list[Trace]) -> None:
        first = used[0]
        for t in used[1:]:
            if not (math.isclose(t.period_s, first.period_s, rel_tol=1e-9)
                    and math.isclose(t.origin_s, first.origin_s, rel_tol=0,
                                     abs_tol=first.period_s / 4)):
                raise CaptureError(self.source, f"{self.kind}: channels {first.name} and "
                                                f"{t.name} are sampled differently "
                                                f"({first.period_s:g} s from {first.origin_s:g} s, "
                                                f"{t.period_s:g} s from {t.origin_s:g} s): the rig "
                                                "reads channels on one time base")

    def chunks(self) -> Iterator[Chunk]:
        """Yield the capture ``options.chunk_samples`` samples at a time.

        Raises
        ------
        CaptureError
            The file is shorter than when it was opened.
        """
        block = self.options.chunk_samples
        schmitt = Schmitt(self.threshold) if self.threshold is not None else None
        bit = self.options.trigger_bit or 0
        with self.path.open("rb") as f:
            for start in range(0, self.samples, block):
                n = min(block, self.samples - start)
                read: dict[str, npt.NDArray[np.generic]] = {}  # a channel used twice, once
                for trace in (self.current, self.voltage, self.trigger):
                    if trace is not None and trace.name not in read:
                        read[trace.name] = trace.read(f, start, n, self.source)
                current = read[self.current.name] * self._amperes_per_volt
                supply: npt.NDArray[np.float64] | float = (
                    self.voltage_const if self.voltage is None else read[self.voltage.name])
                trig = read[self.trigger.name]
                logic = (schmitt(trig) if schmitt is not None
                         else ((trig >> bit) & 1).astype(np.uint8))
                yield Chunk(start, self.period_s, current, supply, logic)


def open_bin(path: Path, options: CaptureOptions) -> WaveformCapture:
    """Reader of :func:`energyrig.instruments.files.file_kinds` for ``.bin`` files."""
    return WaveformCapture(path, *read_bin(path, str(path)), options)


def open_isf(path: Path, options: CaptureOptions) -> WaveformCapture:
    """Reader of :func:`energyrig.instruments.files.file_kinds` for Tektronix ``.isf``."""
    return WaveformCapture(path, *read_isf(path, str(path)), options)


def open_tek_wfm(path: Path, options: CaptureOptions) -> WaveformCapture:
    """Reader of :func:`energyrig.instruments.files.file_kinds` for Tektronix ``.wfm``."""
    return WaveformCapture(path, *read_tek_wfm(path, str(path)), options)


def open_rigol_wfm(path: Path, options: CaptureOptions) -> WaveformCapture:
    """Reader of :func:`energyrig.instruments.files.file_kinds` for Rigol ``.wfm``."""
    return WaveformCapture(path, *read_rigol_wfm(path, str(path)), options)
