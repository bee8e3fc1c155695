"""Oscilloscope command sets ("dialects"): one table row per family, no model branches.

Each :class:`Dialect` row holds everything that differs between families: the SCPI command
templates of each step of a measurement, the acquisition limits used to plan a record
(screen divisions, sample rates, settable memory depths, points per waveform read), the
waveform data type and how the preamble turns codes into volts. The driver
(:mod:`energyrig.instruments.scope.driver`) and the planner
(:mod:`energyrig.instruments.scope.protocol`) only read rows.

Templates are :meth:`str.format` strings with these fields: ``{ch}`` (channel number),
``{scale}`` (V/div or s/div), ``{offset}`` (V), ``{probe}`` (attenuation, 10 for 10×),
``{gain}`` (its inverse), ``{position}`` (s, time of the screen centre after the trigger),
``{delay}`` (s, ``-position``: time of the trigger after the screen centre), ``{trigger_pct}``
(where the trigger sits in the record, % from its start), ``{depth}`` (points),
``{depth_si}`` (the same as ``14M``, ``700K``), ``{level}`` (V), ``{first1}``/``{last1}``
(1-based first and last point of a read), ``{first0}`` (0-based first point), ``{count}``
(points). The preamble and data queries may name the channel as ``{ch}``.

Every command was checked against the vendor's programming guide named in the row's
``guide``, section by section as listed there. Adding a family is adding a row.
"""
from __future__ import annotations

import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

#: What a status query says about the single acquisition.
State = Literal["stopped", "armed", "triggered", "running", "done"]


@dataclass(frozen=True, slots=True)
class Scaling:
    """Codes to volts and sample index to time, from a waveform preamble.

    ``volts = (code - zero_code) * volts_per_code + offset_v``;
    ``t = x_origin_s + k * x_increment_s`` (0 s at the trigger).
    """

    points: int
    x_increment_s: float
    x_origin_s: float
    volts_per_code: float
    zero_code: float
    offset_v: float = 0.0

    def volts(self, codes: npt.NDArray[np.generic]) -> npt.NDArray[np.float64]:
        """Whole waveform from codes to volts (numpy, one pass)."""
        return (codes.astype(np.float64) - self.zero_code) * self.volts_per_code + self.offset_v


def _ascii_fields(text: str, n: int = 10) -> list[float]:
    fields = [float(f) for f in text.strip().split(",")[:n]]
    if len(fields) != n:
        raise ValueError(f"expected {n} comma-separated preamble fields, got {len(fields)}")
    return fields


def rigol_preamble(reply: str | bytes) -> Scaling:
    """``<format>,<type>,<points>,<count>,<xinc>,<xorigin>,<xref>,<yinc>,<yorigin>,<yref>``;
    volts = (code − yorigin − yref) × yinc (Rigol DS1000Z guide, :WAVeform:PREamble? and
    :WAVeform:DATA?)."""
    f = _ascii_fields(str(reply))
    return Scaling(points=int(f[2]), x_increment_s=f[4], x_origin_s=f[5] - f[6] * f[4],
                   volts_per_code=f[7], zero_code=f[8] + f[9])


def keysight_preamble(reply: str | bytes) -> Scaling:
    """The same ten fields; volts = (code − yref) × yinc + yorigin (InfiniiVision
    Programmer's Guide, :WAVeform:PREamble, the figure of Y origin/increment/reference)."""
    f = _ascii_fields(str(reply))
    return Scaling(points=int(f[2]), x_increment_s=f[4], x_origin_s=f[5] - f[6] * f[4],
                   volts_per_code=f[7], zero_code=f[9], offset_v=f[8])


#: Fields of Siglent's binary WAVEDESC (346 bytes, little-endian) the scaling needs:
#: (name, byte offset, struct format).
WAVEDESC_FIELDS = (("points", 116, "<i"), ("vdiv", 156, "<f"), ("voffset", 160, "<f"),
                   ("code_per_div", 164, "<f"), ("interval", 176, "<f"), ("delay", 180, "<d"),
                   ("probe", 328, "<f"))
WAVEDESC_BYTES = 346


def siglent_preamble(reply: str | bytes) -> Scaling:
    """Siglent's WAVEDESC block: volts = code × vdiv / code_per_div − voffset (both scaled by
    the probe factor), the first point at ``HORIZ_OFFSET`` (byte 180) from the trigger (SDS
    Series Programming Guide EN11D, :WAVeform:PREamble? and the "Read waveform data" example)."""
    raw = bytes(reply) if not isinstance(reply, str) else reply.encode("latin-1")
    if len(raw) < WAVEDESC_BYTES:
        raise ValueError(f"WAVEDESC is {WAVEDESC_BYTES} bytes, got {len(raw)}")
    d = {name: struct.unpack_from(fmt, raw, off)[0] for name, off, fmt in WAVEDESC_FIELDS}
    probe = d["probe"] or 1.0
    if not d["code_per_div"] > 0:
        raise ValueError(f"WAVEDESC code_per_div is {d['code_per_div']}")
    return Scaling(points=int(d["points"]), x_increment_s=float(d["interval"]),
                   x_origin_s=float(d["delay"]),
                   volts_per_code=d["vdiv"] * probe / d["code_per_div"], zero_code=0.0,
                   offset_v=-d["voffset"] * probe)


def tektronix_preamble(reply: str | bytes) -> Scaling:
    """``NR_Pt;YMUlt;YOFf;YZEro;XINcr;XZEro`` (the compound query of the row, headers off);
    value = (code − YOFf) × YMUlt + YZEro, XZEro the time of the first point after the
    trigger (MSO/DPO4000 Programmer Manual, WFMOutpre and WFMInpre:YMUlt)."""
    f = [float(x) for x in str(reply).strip().split(";")]
    if len(f) != 6:
        raise ValueError(f"expected 6 ';'-separated preamble fields, got {len(f)}")
    return Scaling(points=int(f[0]), x_increment_s=f[4], x_origin_s=f[5],
                   volts_per_code=f[1], zero_code=f[2], offset_v=f[3])


#: A number with an optional SI prefix and unit: ``2.00E-02V``, ``1.00GSa/s``, ``70Kpts``.
_NUMBER = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([GMkKmunp]?)")
_SI = {"": 1.0, "G": 1e9, "M": 1e6, "k": 1e3, "K": 1e3, "m": 1e-3, "u": 1e-6, "n": 1e-9,
       "p": 1e-12}


def number(reply: str) -> float:
    """The value of a reply such as ``2.00E-02V``, ``5.00E+08Sa/s`` or ``14Mpts`` (a
    leading command header, ``SARA 1.00GSa/s``, is skipped)."""
    text = reply.strip()
    match = _NUMBER.match(text) or _NUMBER.match(text.split(maxsplit=1)[-1])
    if match is None:
        raise ValueError(f"no number in {reply!r}")
    return float(match.group(1)) * _SI[match.group(2)]


def siglent_legacy_preamble(grid: int, code_per_div: float) -> Callable[[str | bytes], Scaling]:
    """Scaling from the replies ``VDIV;OFST;TDIV;TRDL;SARA;SANU`` (the row's queries, joined
    by ``;``) of Siglent's older command set: volts = code × vdiv / ``code_per_div`` − offset
    with signed codes, the first point at −(tdiv × ``grid`` / 2) − trdl from the trigger and
    one every 1/SARA (Digital Oscilloscope Series Programming Guide PG01-E02D, WAVEFORM? "How
    to use the data recovery waveform"; libsigrok ``src/hardware/siglent-sds``)."""
    def parse(reply: str | bytes) -> Scaling:
        fields = [number(f) for f in str(reply).split(";")]
        if len(fields) != 6:
            raise ValueError(f"expected 6 ';'-separated values, got {len(fields)}")
        vdiv, offset, tdiv, trdl, rate, points = fields
        if not (rate > 0 and points >= 1):
            raise ValueError(f"sample rate {rate:g} Sa/s, {points:g} points")
        return Scaling(points=int(points), x_increment_s=1.0 / rate,
                       x_origin_s=-tdiv * grid / 2 - trdl, volts_per_code=vdiv / code_per_div,
                       zero_code=0.0, offset_v=-offset)
    return parse


def word_status(table: Mapping[str, State]) -> Callable[[str], State]:
    """Status from a word reply (``WAIT``, ``Stop``, ``SAST Trig'd``...), via ``table``
    (case-insensitive; a leading command header is skipped)."""
    lowered = {k.lower(): v for k, v in table.items()}

    def parse(reply: str) -> State:
        words = reply.strip().strip('"').split()
        word = words[-1].lower() if words else ""
        if word not in lowered:
            raise ValueError(f"unknown trigger status {reply.strip()!r}")
        return lowered[word]
    return parse


def run_bit_status(reply: str) -> State:
    """Keysight ``:OPERegister:CONDition?``: bit 3 (Run, 8) is set while the single
    acquisition is armed or in progress and clears when it completes."""
    return "armed" if int(float(reply)) & 8 else "done"


def steps_125(low: float, high: float) -> tuple[float, ...]:
    """The 1-2-5 sequence from ``low`` to ``high`` inclusive."""
    out = []
    decade = 10.0 ** np.floor(np.log10(low))
    while decade <= high * 1.0001:
        for m in (1.0, 2.0, 5.0):
            v = float(f"{m * decade:.6g}")
            if low * 0.9999 <= v <= high * 1.0001:
                out.append(v)
        decade *= 10.0
    return tuple(out)


@dataclass(frozen=True)
class Dialect:
    """One oscilloscope family (see the module docstring for the templates' fields).

    Attributes
    ----------
    name:
        The fixture's ``dialect`` value.
    families:
        Models the row covers, for ``--help`` and errors.
    guide:
        Programming guide and sections each command follows.
    idn:
        Regular expression matched against ``*IDN?`` (auto-detection and the check that the
        instrument is the family the fixture says).
    channels:
        Analog channels.
    h_divs, v_divs:
        Horizontal and vertical screen divisions.
    timebase_s:
        (min, max) horizontal scale, s/div (1-2-5 steps).
    vscale_v:
        (min, max) vertical scale at probe 1×, V/div (1-2-5 steps).
    offset_limits:
        ``(up to V/div, max |offset| V)`` rows, ascending; empty: not limited here.
    max_rate_hz:
        Highest sample rate by number of enabled channels (key: up to this many).
    depths:
        Settable memory depths by number of enabled channels, or ``None`` when the scope
        sets the depth itself (then ``auto_points`` bounds the record).
    auto_points:
        Record length by number of enabled channels when ``depths`` is ``None``.
    read_points:
        Most points one waveform data query returns (longer records are read in parts).
    datatype:
        PyVISA/struct type of one sample code (``"B"`` unsigned, ``"b"`` signed byte).
    data_trailer:
        Bytes the scope sends after a data block's line feed (Siglent's older set ends a block
        with ``0A 0A``: 1); read and dropped so the next reply starts clean.
    code_range:
        Lowest and highest code (samples there are clipped: ``saturated``).
    offset_is_centre:
        ``:OFFSet`` is the voltage at the screen centre (Keysight); otherwise it is added to
        the signal, so the centre is at ``-offset`` (Rigol, Siglent).
    """

    name: str
    families: str
    guide: str
    idn: str
    channels: int
    h_divs: int
    v_divs: int
    timebase_s: tuple[float, float]
    vscale_v: tuple[float, float]
    offset_limits: tuple[tuple[float, float], ...]
    max_rate_hz: Mapping[int, float]
    depths: Mapping[int, tuple[int, ...]] | None
    auto_points: Mapping[int, int]
    read_points: int | None
    datatype: str
    code_range: tuple[int, int]
    offset_is_centre: bool
    # -- commands ------------------------------------------------------------------------
    setup: tuple[str, ...]
    channel_on: tuple[str, ...]
    channel_off: tuple[str, ...]
    timebase: tuple[str, ...]
    depth: str | None
    trigger: tuple[str, ...]
    single: str
    stop: str
    status_query: str
    status: Callable[[str], State]
    rate_query: str
    source: tuple[str, ...]
    read_part: tuple[str, ...]
    preamble_query: tuple[str, ...]
    preamble_binary: bool
    preamble: Callable[[str | bytes], Scaling]
    data_query: str
    data_trailer: int
    error_query: str = ":SYSTem:ERRor?"

    def matches(self, idn: str) -> bool:
        return re.search(self.idn, idn, re.IGNORECASE) is not None

    def _by_channels(self, table: Mapping[int, object], n: int) -> object:
        for key in sorted(table):
            if n <= key:
                return table[key]
        raise ValueError(f"{self.name}: {n} channels, the scope has {self.channels}")

    def rate_limit(self, n_channels: int) -> float:
        """Highest sample rate with ``n_channels`` enabled, Sa/s."""
        return float(self._by_channels(self.max_rate_hz, n_channels))  # type: ignore[arg-type]

    def depth_choices(self, n_channels: int) -> tuple[int, ...]:
        """Settable depths with ``n_channels`` enabled (one automatic depth if not settable)."""
        if self.depths is None:
            return (int(self._by_channels(self.auto_points, n_channels)),)  # type: ignore[arg-type]
        return self._by_channels(self.depths, n_channels)  # type: ignore[return-value]

    def max_offset_v(self, scale_v: float) -> float:
        """Largest |offset| allowed at vertical scale ``scale_v`` (probe 1×), V."""
        for upto, limit in self.offset_limits:
            if scale_v <= upto:
                return limit
        return float("inf")


_RIGOL_STATUS = word_status({"WAIT": "armed", "TD": "triggered", "RUN": "running",
                             "AUTO": "running", "STOP": "done"})

RIGOL_DS1000Z = Dialect(
    name="rigol-ds1000z",
    families="Rigol DS1000Z / MSO1000Z (DS1054Z, DS1074Z, DS1104Z, MSO1104Z)",
    guide=("RIGOL MSO1000Z/DS1000Z Programming Guide (2015): :CHANnel<n>:DISPlay/:SCALe/"
           ":OFFSet (offset range by scale)/:COUPling/:PROBe; :TIMebase[:MAIN]:SCALe and "
           ":OFFSet; :ACQuire:TYPE, :ACQuire:MDEPth (depths per channel count), :ACQuire:SRATe?; "
           ":TRIGger:MODE EDGE, :TRIGger:EDGe:SOURce/:SLOPe/:LEVel, :TRIGger:SWEep SINGle, "
           ":TRIGger:STATus? (TD|WAIT|RUN|AUTO|STOP); :SINGle, :STOP; :WAVeform:SOURce/:MODE RAW/"
           ":FORMat BYTE/:STARt/:STOP/:PREamble?/:DATA? (RAW reads at most 250000 BYTE points "
           "each, scope stopped); :SYSTem:ERRor?"),
    idn=r"RIGOL.*,\s*(DS1\d{3}Z|MSO1\d{3}Z)",
    channels=4, h_divs=12, v_divs=8,
    timebase_s=(5e-9, 50.0), vscale_v=(1e-3, 10.0),
    offset_limits=((0.499, 2.0), (10.0, 100.0)),
    max_rate_hz={1: 1e9, 2: 500e6, 4: 250e6},
    depths={1: (12_000, 120_000, 1_200_000, 12_000_000, 24_000_000),
            2: (6_000, 60_000, 600_000, 6_000_000, 12_000_000),
            4: (3_000, 30_000, 300_000, 3_000_000, 6_000_000)},
    auto_points={},
    read_points=250_000, datatype="B", code_range=(0, 255), offset_is_centre=False,
    setup=(":STOP", ":ACQuire:TYPE NORMal", ":TRIGger:MODE EDGE", ":WAVeform:MODE RAW",
           ":WAVeform:FORMat BYTE"),
    channel_on=(":CHANnel{ch}:DISPlay ON", ":CHANnel{ch}:COUPling DC",
                ":CHANnel{ch}:PROBe {probe:g}", ":CHANnel{ch}:SCALe {scale:g}",
                ":CHANnel{ch}:OFFSet {offset:g}"),
    channel_off=(":CHANnel{ch}:DISPlay OFF",),
    timebase=(":TIMebase:MAIN:SCALe {scale:g}", ":TIMebase:MAIN:OFFSet {position:g}"),
    depth=":ACQuire:MDEPth {depth:d}",
    trigger=(":TRIGger:EDGe:SOURce CHANnel{ch}", ":TRIGger:EDGe:SLOPe POSitive",
             ":TRIGger:EDGe:LEVel {level:g}", ":TRIGger:SWEep SINGle"),
    single=":SINGle", stop=":STOP",
    status_query=":TRIGger:STATus?", status=_RIGOL_STATUS,
    rate_query=":ACQuire:SRATe?",
    source=(":WAVeform:SOURce CHANnel{ch}",),
    read_part=(":WAVeform:STARt {first1:d}", ":WAVeform:STOP {last1:d}"),
    preamble_query=(":WAVeform:PREamble?",), preamble_binary=False,
    preamble=rigol_preamble, data_query=":WAVeform:DATA?", data_trailer=0,
)

RIGOL_MSO5000 = Dialect(
    name="rigol-mso5000",
    families="Rigol MSO5000 (MSO5072, MSO5104, MSO5204, MSO5354)",
    guide=("RIGOL MSO5000 Series Programming Guide (2019): the same subsystems as the DS1000Z "
           "row (:CHANnel<n>, :TIMebase[:MAIN]:SCALe/:OFFSet, :ACQuire:MDEPth, :TRIGger:EDGE, "
           ":TRIGger:STATus?, :SINGle, :WAVeform:MODE RAW/:FORMat BYTE/:STARt/:STOP/:PREamble?/"
           ":DATA?); 10 horizontal divisions; MDEPth 1k..100M; 250000 BYTE points per read"),
    idn=r"RIGOL.*,\s*MSO5\d{3}",
    channels=4, h_divs=10, v_divs=8,
    timebase_s=(1e-9, 1000.0), vscale_v=(500e-6, 10.0),
    offset_limits=(),
    max_rate_hz={1: 8e9, 2: 4e9, 4: 2e9},
    depths={1: (1_000, 10_000, 100_000, 1_000_000, 10_000_000, 25_000_000, 50_000_000,
                100_000_000, 200_000_000),
            2: (1_000, 10_000, 100_000, 1_000_000, 10_000_000, 25_000_000, 50_000_000,
                100_000_000),
            4: (1_000, 10_000, 100_000, 1_000_000, 10_000_000, 25_000_000, 50_000_000)},
    auto_points={},
    read_points=250_000, datatype="B", code_range=(0, 255), offset_is_centre=False,
    setup=RIGOL_DS1000Z.setup,
    channel_on=RIGOL_DS1000Z.channel_on, channel_off=RIGOL_DS1000Z.channel_off,
    timebase=RIGOL_DS1000Z.timebase, depth=RIGOL_DS1000Z.depth,
    trigger=RIGOL_DS1000Z.trigger, single=":SINGle", stop=":STOP",
    status_query=":TRIGger:STATus?", status=_RIGOL_STATUS,
    rate_query=":ACQuire:SRATe?", source=RIGOL_DS1000Z.source,
    read_part=RIGOL_DS1000Z.read_part,
    preamble_query=(":WAVeform:PREamble?",), preamble_binary=False,
    preamble=rigol_preamble, data_query=":WAVeform:DATA?", data_trailer=0,
)

#: Siglent models on the older command set (``C1:VDIV``, ``C1:WF? DAT2``): SDS1000X-E/X-U
#: (SDS1202X-E, SDS1104X-E, SDS1104X-U), SDS1000X/X+ (SDS1102X, SDS1202X+), SDS2000X and
#: SDS2000X-E (SDS2304X, SDS2102X-E). The model field ends there: "SDS2104X Plus",
#: "SDS1104X HD" and SDS5000X/SDS6000 models are on the newer set. Both Siglent rows' ``idn``
#: use it, so each model string matches exactly one row.
_SIGLENT_LEGACY_MODEL = r"SDS[12]\d{3}X(?:-E|-U|\+)?\s*(?:,|$)"

_SIGLENT_STATUS = word_status({"Arm": "stopped", "Ready": "armed", "Trig'd": "triggered",
                               "Auto": "running", "Roll": "running", "Stop": "done"})

SIGLENT_SDS = Dialect(
    name="siglent-sds",
    families="Siglent SDS2000X Plus / SDS2000X HD / SDS1000X HD / SDS800X HD / SDS5000X / "
             "SDS6000 (the newer command set)",
    guide=("SIGLENT SDS Series Programming Guide EN11D (Feb 2023): :CHANnel<n>:SWITch/:SCALe/"
           ":OFFSet/:COUPling/:PROBe VALue; :TIMebase:SCALe/:DELay; :ACQuire:MDEPth, "
           ":ACQuire:SRATe?; :TRIGger:TYPE EDGE, :TRIGger:EDGE:SOURce/:SLOPe/:LEVel, "
           ":TRIGger:MODE SINGle/STOP, :TRIGger:STATus? (Arm|Ready|Auto|Trig'd|Stop|Roll); "
           ":WAVeform:SOURce/:WIDTh BYTE/:STARt/:POINt/:PREamble? (346-byte WAVEDESC)/:DATA? "
           "(signed codes); 'Read waveform data' example for the scaling"),
    idn=rf"SIGLENT[^,]*,\s*(?!{_SIGLENT_LEGACY_MODEL})SDS\d",
    channels=4, h_divs=10, v_divs=8,
    timebase_s=(1e-9, 1000.0), vscale_v=(500e-6, 10.0),
    offset_limits=(),
    max_rate_hz={1: 2e9, 4: 1e9},
    depths={1: (20_000, 200_000, 2_000_000, 20_000_000, 200_000_000),
            4: (10_000, 100_000, 1_000_000, 10_000_000, 100_000_000)},
    auto_points={},
    read_points=5_000_000, datatype="b", code_range=(-128, 127), offset_is_centre=False,
    setup=(":TRIGger:STOP", ":TRIGger:TYPE EDGE", ":WAVeform:WIDTh BYTE"),
    channel_on=(":CHANnel{ch}:SWITch ON", ":CHANnel{ch}:COUPling DC",
                ":CHANnel{ch}:PROBe VALue,{probe:g}", ":CHANnel{ch}:SCALe {scale:g}",
                ":CHANnel{ch}:OFFSet {offset:g}"),
    channel_off=(":CHANnel{ch}:SWITch OFF",),
    timebase=(":TIMebase:SCALe {scale:g}", ":TIMebase:DELay {position:g}"),
    depth=":ACQuire:MDEPth {depth:d}",
    trigger=(":TRIGger:EDGE:SOURce C{ch}", ":TRIGger:EDGE:SLOPe RISing",
             ":TRIGger:EDGE:LEVel {level:g}"),
    single=":TRIGger:MODE SINGle", stop=":TRIGger:STOP",
    status_query=":TRIGger:STATus?",
    status=_SIGLENT_STATUS,
    rate_query=":ACQuire:SRATe?",
    source=(":WAVeform:SOURce C{ch}",),
    read_part=(":WAVeform:STARt {first0:d}", ":WAVeform:POINt {count:d}"),
    preamble_query=(":WAVeform:PREamble?",), preamble_binary=True,
    preamble=siglent_preamble, data_query=":WAVeform:DATA?", data_trailer=0,
)

SIGLENT_SDS1000XE = Dialect(
    name="siglent-sds1000xe",
    families="Siglent SDS1000X-E / SDS1000X-U (SDS1202X-E, SDS1104X-E, SDS1204X-E) and the "
             "same older command set of SDS1000X/X+, SDS2000X, SDS2000X-E (depths and rates "
             "here are the SDS1000X-E's)",
    guide=("SIGLENT Digital Oscilloscope Series Programming Guide PG01-E02D (SDS1000X-E/"
           "SDS2000X/SDS2000X-E): COMM_HEADER (CHDR OFF), STOP, TRACE (C<n>:TRA), COUPLING "
           "(C<n>:CPL D1M), ATTENUATION (C<n>:ATTN), VOLT_DIV (C<n>:VDIV), OFFSET (C<n>:OFST; "
           "ranges by V/div from the SDS1000X-E datasheet), TIME_DIV (TDIV; 14 divisions), "
           "TRIG_DELAY (TRDL), MEMORY_SIZE (MSIZ 7K..14M), TRIG_SELECT (TRSE EDGE,SR,C<n>,HT,"
           "OFF), TRIG_SLOPE (C<n>:TRSL POS), TRIG_LEVEL (C<n>:TRLV), TRIG_MODE (TRMD SINGLE), "
           "ARM_ACQUISITION (ARM), SAMPLE_STATUS (SAST?), SAMPLE_RATE (SARA?), SAMPLE_NUM "
           "(SANU? C<n>), WAVEFORM_SETUP (WFSU SP,0,NP,0,FP,0), WAVEFORM (C<n>:WF? DAT2: "
           "'DAT2,#9...' block ending 0A 0A; 'How to use the data recovery waveform': volts "
           "= code x vdiv/25 - offset, signed codes, t0 = -(tdiv x 14/2) - trdl), CMR? "
           "(command error register); as libsigrok src/hardware/siglent-sds (ESERIES: CHDR OFF, "
           "ARM, C<n>:WF?, code/25 x vdiv - offset over int8, 14 divisions, SANU?) and "
           "winterbloom's SDS1104X-E driver (DAT2 header and 0A 0A footer, TRDL sign)"),
    idn=rf"SIGLENT[^,]*,\s*{_SIGLENT_LEGACY_MODEL}",
    channels=4, h_divs=14, v_divs=8,
    timebase_s=(1e-9, 100.0), vscale_v=(500e-6, 10.0),
    offset_limits=((0.1, 2.0), (1.0, 20.0), (10.0, 200.0)),
    max_rate_hz={1: 1e9, 4: 500e6},
    depths={1: (14_000, 140_000, 1_400_000, 14_000_000),
            4: (7_000, 70_000, 700_000, 7_000_000)},
    auto_points={},
    read_points=None, datatype="b", code_range=(-128, 127), offset_is_centre=False,
    setup=("CHDR OFF", "STOP", "WFSU SP,0,NP,0,FP,0"),
    channel_on=("C{ch}:TRA ON", "C{ch}:CPL D1M", "C{ch}:ATTN {probe:g}",
                "C{ch}:VDIV {scale:g}V", "C{ch}:OFST {offset:g}V"),
    channel_off=("C{ch}:TRA OFF",),
    timebase=("TDIV {scale:g}S", "TRDL {delay:g}S"),
    depth="MSIZ {depth_si}",
    trigger=("TRSE EDGE,SR,C{ch},HT,OFF", "C{ch}:TRSL POS", "C{ch}:TRLV {level:g}V",
             "TRMD SINGLE"),
    single="ARM", stop="STOP",
    status_query="SAST?", status=_SIGLENT_STATUS,
    rate_query="SARA?",
    source=(),
    read_part=(),
    preamble_query=("C{ch}:VDIV?", "C{ch}:OFST?", "TDIV?", "TRDL?", "SARA?", "SANU? C{ch}"),
    preamble_binary=False, preamble=siglent_legacy_preamble(grid=14, code_per_div=25.0),
    data_query="C{ch}:WF? DAT2", data_trailer=1, error_query="CMR?",
)

KEYSIGHT_X = Dialect(
    name="keysight-x",
    families="Keysight InfiniiVision X-series (DSOX/MSOX 1000X, 2000X, 3000X/T, 4000X)",
    guide=("Keysight InfiniiVision 3000 X-Series Programmer's Guide: :CHANnel<n>:DISPlay/"
           ":SCALe/:OFFSet/:COUPling/:PROBe; :TIMebase:MODE MAIN, :REFerence CENTer, :SCALe, "
           ":POSition; :ACQuire:TYPE NORMal, :ACQuire:SRATe? (memory depth is set by the scope); "
           ":TRIGger:MODE EDGE, :TRIGger:EDGE:SOURce/:SLOPe/:LEVel, :TRIGger:SWEep NORMal; "
           ":SINGle, :STOP; :OPERegister:CONDition? (bit 3 Run, 'Remote Acquisition "
           "Synchronization'); :WAVeform:SOURce/:FORMat BYTE/:UNSigned/:POINts:MODE RAW/:POINts "
           "MAXimum/:PREamble?/:DATA?; :SYSTem:ERRor?"),
    idn=r"(KEYSIGHT|AGILENT).*,\s*[DM]SO-?X\s*\d",
    channels=4, h_divs=10, v_divs=8,
    timebase_s=(2e-9, 50.0), vscale_v=(1e-3, 5.0),
    offset_limits=(),
    max_rate_hz={2: 5e9, 4: 2.5e9},
    depths=None,
    auto_points={2: 4_000_000, 4: 2_000_000},
    read_points=None, datatype="B", code_range=(0, 255), offset_is_centre=True,
    setup=(":STOP", ":ACQuire:TYPE NORMal", ":TIMebase:MODE MAIN", ":TIMebase:REFerence CENTer",
           ":TRIGger:MODE EDGE", ":TRIGger:SWEep NORMal", ":WAVeform:FORMat BYTE",
           ":WAVeform:UNSigned 1", ":WAVeform:POINts:MODE RAW"),
    channel_on=(":CHANnel{ch}:DISPlay 1", ":CHANnel{ch}:COUPling DC",
                ":CHANnel{ch}:PROBe {probe:g}", ":CHANnel{ch}:SCALe {scale:g}",
                ":CHANnel{ch}:OFFSet {offset:g}"),
    channel_off=(":CHANnel{ch}:DISPlay 0",),
    timebase=(":TIMebase:SCALe {scale:g}", ":TIMebase:POSition {position:g}"),
    depth=None,
    trigger=(":TRIGger:EDGE:SOURce CHANnel{ch}", ":TRIGger:EDGE:SLOPe POSitive",
             ":TRIGger:EDGE:LEVel {level:g}"),
    single=":SINGle", stop=":STOP",
    status_query=":OPERegister:CONDition?", status=run_bit_status,
    rate_query=":ACQuire:SRATe?",
    source=(":WAVeform:SOURce CHANnel{ch}", ":WAVeform:POINts MAXimum"),
    read_part=(),
    preamble_query=(":WAVeform:PREamble?",), preamble_binary=False,
    preamble=keysight_preamble, data_query=":WAVeform:DATA?", data_trailer=0,
)

TEKTRONIX_4000 = Dialect(
    name="tektronix-4000",
    families="Tektronix MSO/DPO4000(B) (MSO4104B, DPO4054...)",
    guide=("Tektronix MSO4000 and DPO4000 Series Programmer Manual 071-2133: HEADer OFF; "
           "SELect:CH<x>, CH<x>:COUPling/:PRObe:GAIN/:SCAle/:OFFSet (subtracted: the value at "
           "the centre)/:POSition; HORizontal:SCAle/:POSition (trigger, % of the record)/"
           ":RECOrdlength/:SAMPLERate?; ACQuire:MODe SAMple/:STOPAfter SEQuence/:STATE RUN|STOP; "
           "TRIGger:A:TYPe EDGe/:EDGe:SOUrce/:EDGe:SLOpe RISe/:LEVel:CH<x>/:MODe NORMal, "
           "TRIGger:STATE? (ARMED|READY|TRIGGER|SAVE|AUTO); DATa:SOUrce/:ENCdg RIBinary/:STARt/"
           ":STOP, WFMOutpre:BYT_Nr 1, WFMOutpre:NR_Pt?/YMUlt?/YOFf?/YZEro?/XINcr?/XZEro?, "
           "CURVe?; *ESR? (command/execution error bits)"),
    idn=r"TEKTRONIX,\s*[MD][SP]O4\d{3}",
    channels=4, h_divs=10, v_divs=8,
    timebase_s=(1e-9, 1000.0), vscale_v=(1e-3, 10.0),
    offset_limits=(),
    max_rate_hz={4: 2.5e9},
    depths={4: (1_000, 10_000, 100_000, 1_000_000, 5_000_000, 10_000_000, 20_000_000)},
    auto_points={},
    read_points=None, datatype="b", code_range=(-128, 127), offset_is_centre=True,
    setup=("HEADer OFF", "ACQuire:STATE STOP", "ACQuire:MODe SAMple",
           "ACQuire:STOPAfter SEQuence", "TRIGger:A:TYPe EDGe", "TRIGger:A:MODe NORMal",
           "DATa:ENCdg RIBinary", "WFMOutpre:BYT_Nr 1"),
    channel_on=("SELect:CH{ch} ON", "CH{ch}:COUPling DC", "CH{ch}:PRObe:GAIN {gain:g}",
                "CH{ch}:SCAle {scale:g}", "CH{ch}:POSition 0", "CH{ch}:OFFSet {offset:g}"),
    channel_off=("SELect:CH{ch} OFF",),
    timebase=("HORizontal:SCAle {scale:g}", "HORizontal:POSition {trigger_pct:g}"),
    depth="HORizontal:RECOrdlength {depth:d}",
    trigger=("TRIGger:A:EDGe:SOUrce CH{ch}", "TRIGger:A:EDGe:SLOpe RISe",
             "TRIGger:A:LEVel:CH{ch} {level:g}"),
    single="ACQuire:STATE RUN", stop="ACQuire:STATE STOP",
    status_query="TRIGger:STATE?",
    status=word_status({"ARMED": "stopped", "READY": "armed", "TRIGGER": "triggered",
                        "SAVE": "done", "AUTO": "running"}),
    rate_query="HORizontal:SAMPLERate?",
    source=("DATa:SOUrce CH{ch}", "DATa:STARt 1", "DATa:STOP 20000000"),
    read_part=(),
    preamble_query=("WFMOutpre:NR_Pt?;YMUlt?;YOFf?;YZEro?;XINcr?;XZEro?",),
    preamble_binary=False, preamble=tektronix_preamble,
    data_query="CURVe?", data_trailer=0, error_query="*ESR?",
)

DIALECTS: Mapping[str, Dialect] = {d.name: d for d in (RIGOL_DS1000Z, RIGOL_MSO5000,
                                                         SIGLENT_SDS, SIGLENT_SDS1000XE,
                                                         KEYSIGHT_X,
                                                         TEKTRONIX_4000)}


def dialect_for_idn(idn: str) -> Dialect | None:
    """The row whose ``idn`` pattern matches an ``*IDN?`` reply, if any."""
    return next((d for d in DIALECTS.values() if d.matches(idn)), None)
