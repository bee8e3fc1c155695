"""PPK2 calibration metadata: parse the text the device sends, and write it back.

On the ``GET_META_DATA`` command (0x19) a PPK2 answers with ASCII lines ``KEY: VALUE``
ending with a line ``END``::

    Calibrated: 0
    R0: 1003.3506
    ...
    GS0: 0.0000   GI0: 1.0000   O0: 112.9420        (one line each, per range 0..4)
    VDD: 3000
    HW: 9173
    mode: 2
    S0: 0.000000048   I0: -0.000000104   UG0: 1.00  (per range 0..4)
    IA: 56
    SN: 3941466112                                  (the emulator's serial; a PPK2 sends none)
    END

Per range ``r`` the conversion of a raw ADC code uses ``R`` (shunt, ohm), ``GS``/``GI``
(quadratic and linear gain), ``O`` (ADC offset, codes), ``S``/``I`` (supply-voltage slope
and intercept, A) and ``UG`` (user gain); see :mod:`energyrig.instruments.ppk2.decode`.

The text arrives over a serial port in pieces. :class:`MetadataAccumulator` collects the
pieces until ``END`` and parses the whole text; the ``ppk2-api`` package keeps only the read
that contains ``END`` and so silently drops every key sent before it (with the usual split,
the range-0 offset ``O0`` and everything above it fall back to defaults).

Parsing follows ``ppk2-api``'s ``_parse_metadata`` value for value, so the same text gives
the same conversion, with two deliberate differences, both logged as warnings:

* a value the firmware printed as ``nan``/``-nan`` (uncalibrated EEPROM cells) keeps the
  default instead of turning every sample of that range into NaN;
* a line that is not ``KEY: VALUE`` raises :class:`~energyrig.errors.InstrumentError`
  instead of being ignored.

Like ``ppk2-api`` (and Nordic's own app), a shunt value ``R`` of exactly 0 keeps the default.
"""
from __future__ import annotations

import hashlib
import logging
import math
from dataclasses import dataclass, field

from energyrig.errors import InstrumentError
from energyrig.instruments.base import StatedCalibration

log = logging.getLogger(__name__)

N_RANGES = 5
"""Number of current ranges of a PPK2 (0 = lowest current, 4 = highest)."""

END_MARKER = "END"

# Per-range keys in the order the firmware prints them, with the number of decimals it uses.
# Calibrated/VDD/HW/mode/IA sit between them exactly where the device puts them.
_LAYOUT: tuple[tuple[str, int], ...] = (
    ("Calibrated", -1), ("R", 4), ("GS", 4), ("GI", 4), ("O", 4),
    ("VDD", -1), ("HW", -1), ("mode", -1),
    ("S", 9), ("I", 9), ("UG", 2), ("IA", -1), ("SN", -1),
)
#: How far a gain measured against references may be from 1 on a PPK2 whose metadata says it
#: was calibrated (its shunts and gains fitted per unit: what is left is their drift with
#: temperature and age and the factory's reference, about 1 %), as a fraction: beyond
#: :data:`CALIBRATED_GAIN_WARN` (twice that) the two disagree; beyond
#: :data:`CALIBRATED_GAIN_REFUSE` it is no drift but a wrong reference or a broken unit.
#: docs/calibration.md gives the reasoning.
CALIBRATED_GAIN_WARN = 0.02
CALIBRATED_GAIN_REFUSE = 0.05
#: The same for a PPK2 not calibrated: its conversion uses nominal shunts, whose units
#: differ by a few % (the emulated unit's range-2 shunt is 2.5 % off nominal).
UNCALIBRATED_GAIN_WARN = 0.05
UNCALIBRATED_GAIN_REFUSE = 0.2

_PER_RANGE = {key: decimals for key, decimals in _LAYOUT if decimals >= 0}
_SCALARS = {"Calibrated": "calibrated", "VDD": "vdd_mv", "HW": "hw", "mode": "mode", "IA": "ia",
            "SN": "serial"}

_DEFAULTS: dict[str, tuple[float, ...]] = {
    "R": (1031.64, 101.65, 10.15, 0.94, 0.043),
    "GS": (1.0,) * N_RANGES,
    "GI": (1.0,) * N_RANGES,
    "O": (0.0,) * N_RANGES,
    "S": (0.0,) * N_RANGES,
    "I": (0.0,) * N_RANGES,
    "UG": (1.0,) * N_RANGES,
}


def _default(key: str) -> tuple[float, ...]:
    return field(default=_DEFAULTS[key])


@dataclass(frozen=True)
class Ppk2Calibration:
    """Calibration of one PPK2, as stored in its EEPROM and sent in its metadata.

    Every per-range attribute is a tuple of five floats, index = current range 0..4.
    Defaults are the ones ``ppk2-api`` and Nordic's app use for keys the device omits.

    Attributes
    ----------
    r:
        Shunt resistance per range, ohm.
    gs, gi:
        Quadratic (1/A) and linear (dimensionless) gain terms.
    o:
        ADC offset, in ADC codes x4 (the scale of ``adc * 4``).
    s:
        Supply-voltage slope, A/V.
    i:
        Intercept, A.
    ug:
        User gain (set from the desktop app), dimensionless.
    calibrated, vdd_mv, hw, mode, ia:
        The device's ``Calibrated`` flag, ``VDD`` (mV, the supply it had at power-up),
        ``HW`` (hardware id), ``mode`` (1 ampere meter, 2 source meter) and ``IA``, each
        ``None`` when the text did not contain it.
    serial:
        ``SN``, a serial number: the emulator sends one; a PPK2's stock firmware does not
        (its serial is the USB descriptor's), ``None``.
    """

    r: tuple[float, ...] = _default("R")
    gs: tuple[float, ...] = _default("GS")
    gi: tuple[float, ...] = _default("GI")
    o: tuple[float, ...] = _default("O")
    s: tuple[float, ...] = _default("S")
    i: tuple[float, ...] = _default("I")
    ug: tuple[float, ...] = _default("UG")
    calibrated: bool | None = None
    vdd_mv: int | None = None
    hw: int | None = None
    mode: int | None = None
    ia: int | None = None
    serial: int | None = None

    def __post_init__(self) -> None:
        for key in _PER_RANGE:
            values = getattr(self, key.lower())
            if len(values) != N_RANGES:
                raise ValueError(f"{key} needs {N_RANGES} values (one per range), got {len(values)}")
            object.__setattr__(self, key.lower(), tuple(float(v) for v in values))

    def to_ppk2_api_modifiers(self) -> dict[str, object]:
        """Return the calibration as ``ppk2_api.PPK2_API.modifiers`` (for side-by-side checks)."""
        mods: dict[str, object] = {
            key: {str(r): getattr(self, key.lower())[r] for r in range(N_RANGES)}
            for key in _PER_RANGE
        }
        mods["Calibrated"] = None if self.calibrated is None else str(int(self.calibrated))
        mods["HW"] = None if self.hw is None else str(self.hw)
        mods["IA"] = None if self.ia is None else str(self.ia)
        return mods


def stated_calibration(cal: Ppk2Calibration) -> StatedCalibration:
    """What ``cal`` lets a gain measured against references be: within
    :data:`CALIBRATED_GAIN_WARN` (or the uncalibrated bound) of 1, plus the largest user
    gain's distance from 1 (``UG``, set by hand, scales the readings on purpose).

    Its identity names the hardware id, the flag and a digest of the conversion values
    (shunts, gains, offsets, user gains: not the supply or mode, which change with the
    settings), so a record shows which stored calibration its gain was measured through.
    """
    values = (*(getattr(cal, key.lower()) for key in _PER_RANGE), cal.calibrated, cal.hw)
    digest = hashlib.sha256(repr(values).encode()).hexdigest()[:12]
    user = max(abs(g - 1.0) for g in cal.ug)
    state = "calibrated" if cal.calibrated else "not calibrated"
    warn, refuse = ((CALIBRATED_GAIN_WARN, CALIBRATED_GAIN_REFUSE) if cal.calibrated
                    else (UNCALIBRATED_GAIN_WARN, UNCALIBRATED_GAIN_REFUSE))
    basis = (f"the PPK2's metadata says it is {state}"
             + (f", with a user gain up to {user:.2%} off 1" if user else ""))
    return StatedCalibration(identity=f"PPK2 metadata HW {cal.hw}, {state}, sha256 {digest}",
                             calibrated=bool(cal.calibrated), gain_warn=warn + user,
                             gain_refuse=refuse + user, basis=basis)


def _parse_value(source: str, line: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InstrumentError(f"{source}: PPK2 metadata line {line!r}: {text!r} is not a number") from None


def parse_metadata(text: str, source: str = "PPK2 metadata") -> Ppk2Calibration:
    """Parse the complete metadata text (through ``END``) into a :class:`Ppk2Calibration`.

    Parameters
    ----------
    text:
        The text as the device sent it; ``\\r\\n`` or ``\\n`` line ends; anything after
        ``END`` is ignored.
    source:
        Named in error messages (the port or file the text came from).

    Raises
    ------
    InstrumentError
        If ``END`` is missing, a line is not ``KEY: VALUE`` or a value is not a number.
    """
    head, sep, _ = text.partition(END_MARKER)
    if not sep:
        raise InstrumentError(f"{source}: PPK2 metadata ends without an {END_MARKER} line "
                              "(the device was interrupted, or this is not a PPK2)")
    per_range = {key: list(_DEFAULTS[key]) for key in _PER_RANGE}
    scalars: dict[str, object] = {}
    for raw_line in head.splitlines():
        line = raw_line.strip()
        if not line:
            continue
        key, colon, value_text = line.partition(": ")
        if not colon:
            raise InstrumentError(f"{source}: PPK2 metadata line {line!r} is not 'KEY: VALUE'")
        name, index = key.rstrip("0123456789"), key[len(key.rstrip("0123456789")):]
        known_range = name in per_range and index != "" and int(index) < N_RANGES
        if key not in _SCALARS and not known_range:
            log.info("%s: ignoring unknown PPK2 metadata key %s", source, key)
            continue
        value = _parse_value(source, line, value_text)
        if key in _SCALARS:
            if not math.isnan(value):
                scalars[_SCALARS[key]] = bool(value) if key == "Calibrated" else int(value)
            continue
        if math.isnan(value):
            log.warning("%s: %s is %s (uncalibrated?); keeping the default %g",
                        source, key, value_text, per_range[name][int(index)])
            continue
        if name == "R" and value == 0:
            log.warning("%s: %s is 0; keeping the default %g (as ppk2-api does)",
                        source, key, per_range[name][int(index)])
            continue
        per_range[name][int(index)] = value
    return Ppk2Calibration(**{k.lower(): tuple(v) for k, v in per_range.items()}, **scalars)  # type: ignore[arg-type]


def _format_float(value: float, decimals: int) -> str:
    """The device's fixed-decimal form when it is exact, else the shortest exact form."""
    fixed = f"{value:.{decimals}f}"
    return fixed if float(fixed) == value else repr(value)


def format_metadata(cal: Ppk2Calibration) -> str:
    """Write the metadata text a PPK2 would send for this calibration (ends with ``END\\n``).

    Lines, order and decimals follow the firmware; a value with more precision than the
    firmware prints is written exactly, so ``parse_metadata(format_metadata(c)) == c``.
    Scalars that are ``None`` are left out.
    """
    lines: list[str] = []
    for key, decimals in _LAYOUT:
        if decimals >= 0:
            values = getattr(cal, key.lower())
            lines += [f"{key}{r}: {_format_float(values[r], decimals)}" for r in range(N_RANGES)]
            continue
        value = getattr(cal, _SCALARS[key])
        if value is not None:
            lines.append(f"{key}: {int(value)}")
    lines.append(END_MARKER)
    return "\n".join(lines) + "\n"


class MetadataAccumulator:
    """Collect metadata text that arrives in pieces, until ``END``.

    Feed every read from the port to :meth:`feed`; once it returns ``True``, :attr:`text`
    holds the metadata through the ``END`` line and :attr:`rest` the bytes that followed it
    (the first measurement words, if sampling had already started).

    Examples
    --------
    >>> acc = MetadataAccumulator()
    >>> acc.feed(b"R0: 1003.3506\\nO0: 11"), acc.feed(b"2.9420\\nEND\\n")
    (False, True)
    >>> acc.calibration().o[0]
    112.942
    """

    def __init__(self, source: str = "PPK2 metadata", max_bytes: int = 64 * 1024) -> None:
        self.source = source
        self.max_bytes = max_bytes
        self._buf = bytearray()
        self._end: int | None = None

    def feed(self, data: bytes) -> bool:
        """Append one read; return ``True`` once the ``END`` line is complete."""
        if self._end is not None:
            raise InstrumentError(f"{self.source}: metadata is already complete")
        start = max(0, len(self._buf) - len(END_MARKER))
        self._buf += data
        at = self._buf.find(END_MARKER.encode(), start)
        if at < 0:
            if len(self._buf) > self.max_bytes:
                raise InstrumentError(f"{self.source}: no {END_MARKER} after {len(self._buf)} bytes "
                                      "of metadata; is this a PPK2 with its stock firmware?")
            return False
        newline = self._buf.find(b"\n", at)
        if newline < 0:
            return False  # wait for the rest of the END line
        self._end = newline + 1
        return True

    @property
    def done(self) -> bool:
        return self._end is not None

    @property
    def text(self) -> str:
        """The metadata text through the ``END`` line, exactly as received."""
        if self._end is None:
            raise InstrumentError(f"{self.source}: metadata is not complete yet (no {END_MARKER})")
        try:
            return self._buf[: self._end].decode("ascii")
        except UnicodeDecodeError as exc:
            raise InstrumentError(f"{self.source}: metadata is not ASCII text at byte {exc.start}") from None

    @property
    def rest(self) -> bytes:
        """Bytes received after the ``END`` line."""
        return bytes(self._buf[self._end:]) if self._end is not None else b""

    def calibration(self) -> Ppk2Calibration:
        """Parse the completed text."""
        return parse_metadata(self.text, self.source)


__all__ = ["N_RANGES", "Ppk2Calibration", "parse_metadata", "format_metadata",
           "MetadataAccumulator", "stated_calibration"]
