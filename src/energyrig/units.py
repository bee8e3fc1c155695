"""SI values as text for people: the one place the rig converts units.

Inside the rig every quantity is SI (A, V, W, s, J, Hz); the CLI and the report turn them
into text here and nowhere else:

- :func:`format_si`: a value with an SI prefix (``1.23e-5, "J"`` → ``12.3 µJ``);
- :func:`in_unit`: a value in a prefixed unit, for columns of one unit (``0.0123`` s in ms);
- :func:`column_prefix` and :func:`format_gum`: a column's one prefix, and a value with its
  uncertainty to the GUM's digits (``1234.568 ± 0.012``);
- :func:`format_nwh`: an energy in nanowatt-hours, the unit of the Arduino/ESP32 studies;
- :func:`format_wh`: an energy in watt-hours with an SI prefix (``fWh`` ... ``nWh`` ...);
- :func:`format_charge`: a charge in coulombs and ampere-hours (``1.2 µC (333 pAh)``);
- :func:`format_duration`: a duration in hours, minutes and seconds (``3 h 05 min``);
- :func:`superscript`: an exponent as superscript digits (``-5`` → ``⁻⁵``).

Only the standard library is imported: ``rig`` imports this module when it starts.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

#: Joules in one nanowatt-hour (1e-9 W × 3600 s).
J_PER_NWH = 3.6e-6
#: Shown for a missing value (None, NaN, ±inf) unless the caller says otherwise.
MISSING = "–"
#: (power of ten, prefix) from the largest to the smallest.
SI_PREFIXES: tuple[tuple[int, str], ...] = (
    (9, "G"), (6, "M"), (3, "k"), (0, ""), (-3, "m"), (-6, "µ"), (-9, "n"), (-12, "p"),
    (-15, "f"))
_EXPONENT = {prefix: exponent for exponent, prefix in SI_PREFIXES}
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _missing(value: float | None) -> bool:
    return value is None or not math.isfinite(value)


def superscript(exponent: int) -> str:
    """``-5`` → ``⁻⁵``: an integer exponent written after ``10``."""
    return str(exponent).translate(_SUPERSCRIPT)


def format_si(value: float | None, unit: str, digits: int = 3, missing: str = MISSING) -> str:
    """A value with the SI prefix that keeps its mantissa in [1, 1000).

    Parameters
    ----------
    value:
        The value in the SI unit ``unit`` (J, s, W, Hz, ...).
    unit:
        The unit's symbol, written after the prefix.
    digits:
        Significant digits. A value that rounds up to the next prefix takes it
        (``0.0009996 s`` with three digits is ``1 ms``, not ``1e+03 µs``).
    missing:
        The text for None, NaN or an infinite value.

    Examples
    --------
    ``format_si(1.23e-5, "J")`` → ``"12.3 µJ"``; ``format_si(64e6, "Hz")`` → ``"64 MHz"``;
    ``format_si(0.0, "J")`` → ``"0 J"``.
    """
    if _missing(value):
        return missing
    assert value is not None
    if value == 0:
        return f"0 {unit}"
    rounds_up = 1.0 - 5.0 * 10.0 ** -(digits + 1)
    exponent, prefix = next(((e, p) for e, p in SI_PREFIXES
                             if abs(value) >= 10.0 ** e * rounds_up), SI_PREFIXES[-1])
    return f"{value / 10.0 ** exponent:.{digits}g} {prefix}{unit}"


def significant(value: float, digits: int) -> float:
    """``value`` rounded to ``digits`` significant digits, so that it prints as it would be
    typed: ``significant(0.018934999999999997, 9)`` → ``0.018935`` (NaN and ±inf as
    they are)."""
    return float(f"{value:.{digits}g}") if math.isfinite(value) else value


def column_prefix(values: Iterable[float | None]) -> str:
    """The one SI prefix of a column of values (of one unit): the largest that keeps every
    non-zero finite magnitude at 1 or more (no ``0.000201 µJ`` beside ``12 µJ``; large ones
    take more digits instead), ``""`` when there is none; :data:`SI_PREFIXES`' smallest
    below that."""
    magnitudes = [abs(v) for v in values if not _missing(v) and v]
    if not magnitudes:
        return ""
    smallest = min(magnitudes)
    return next((p for e, p in SI_PREFIXES if smallest >= 10.0 ** e * (1 - 1e-12)),
                SI_PREFIXES[-1][1])


def gum_decimals(u: float) -> int:
    """The decimal places that show an uncertainty ``u`` (> 0) to two significant digits
    after rounding (``0.0123`` → 3; ``0.0996`` → 2, as it rounds to ``0.10``; ``1234`` →
    -2, hundreds)."""
    places = 1 - math.floor(math.log10(abs(u)))
    return places - 1 if abs(round(u, places)) >= 10.0 ** (2 - places) else places


def _fixed(value: float, places: int) -> str:
    """``value`` rounded to ``places`` decimal places (negative: to tens, hundreds ...)."""
    return f"{round(value, places) + 0.0:.{max(places, 0)}f}"  # + 0.0: never -0.00


def format_gum(value: float | None, u: float | None = None, *, unit: str = "",
               prefix: str = "", digits: int = 3, missing: str = MISSING,
               with_u: bool = True) -> str:
    """A value and its uncertainty as the GUM writes them (JCGM 100, 7.2.6): the
    uncertainty to two significant digits, the value to the same decimal place, both in
    the unit ``prefix`` + ``unit`` (one prefix for a whole column: :func:`column_prefix`).

    Parameters
    ----------
    value:
        The value, in the SI unit ``unit``.
    u:
        Its uncertainty (same unit); None, NaN or 0: the value alone, to ``digits``
        significant digits.
    unit:
        Written after the numbers with ``prefix`` (nothing when empty: a table's heading
        says it).
    prefix:
        An SI prefix of :data:`SI_PREFIXES` (``"µ"``, ``"n"``, ``""`` ...).
    digits:
        Significant digits of a value without an uncertainty.
    missing:
        The text for a missing value.
    with_u:
        Write ``± u``; else the value alone, to the decimal place ``u`` gives it (where a
        column beside states the interval).

    Examples
    --------
    ``format_gum(1234.5678, 0.0123)`` → ``"1234.568 ± 0.012"``;
    ``format_gum(1.2345e-6, 2.3e-9, unit="J", prefix="µ")`` → ``"1.2345 ± 0.0023 µJ"``.
    """
    if _missing(value):
        return missing
    assert value is not None
    scale = 10.0 ** -_EXPONENT[prefix]
    v = value * scale + 0.0  # + 0.0 turns -0.0 into 0.0
    suffix = f" {prefix}{unit}" if unit else ""
    if _missing(u) or not u:
        places = digits - 1 - math.floor(math.log10(abs(v))) if v else 0
        return f"{_fixed(v, places)}{suffix}"
    assert u is not None
    places = gum_decimals(u * scale)
    spread = f" ± {_fixed(abs(u) * scale, places)}" if with_u else ""
    return f"{_fixed(v, places)}{spread}{suffix}"


def in_unit(value: float, prefix: str) -> float:
    """An SI value in the unit with an SI ``prefix``: ``in_unit(0.0123, "m")`` → ``12.3``
    (s → ms, W → mW); ``prefix`` is one of :data:`SI_PREFIXES` (``"µ"``, ``"m"``, ...)."""
    return value * 10.0 ** -_EXPONENT[prefix]


def format_nwh(energy_j: float | None, digits: int = 3, missing: str = MISSING,
               power_below: float = 1e-3) -> str:
    """An energy in nWh: ``digits`` significant digits, thousands grouped from 1000 nWh on,
    a power of ten below ``power_below`` nWh.

    Parameters
    ----------
    energy_j:
        Energy, J.
    digits:
        Significant digits below 1000 nWh.
    missing:
        The text for None, NaN or an infinite value.
    power_below:
        Smaller magnitudes (nWh) are written as a mantissa times a power of ten.

    Examples
    --------
    ``3.6e-6`` → ``"1 nWh"``; ``1.8`` → ``"500,000 nWh"``; ``2.88e-10`` → ``"8·10⁻⁵ nWh"``;
    with ``digits=4, power_below=1e-4``, ``1.1059e-9`` → ``"0.0003072 nWh"``.
    """
    if _missing(energy_j):
        return missing
    assert energy_j is not None
    nwh = energy_j / J_PER_NWH
    if abs(nwh) >= 1000:
        return f"{nwh:,.0f} nWh"
    if nwh == 0 or abs(nwh) >= power_below:
        return f"{nwh:.{digits}g} nWh"
    exponent = math.floor(math.log10(abs(nwh)))
    return f"{nwh / 10.0 ** exponent:.{digits}g}·10{superscript(exponent)} nWh"


def format_wh(energy_j: float | None, digits: int = 3, missing: str = MISSING) -> str:
    """An energy, J, in watt-hours with the SI prefix that keeps the mantissa in [1, 1000):
    ``3.6e-6`` → ``"1 nWh"``, ``5.1e-13`` → ``"142 fWh"`` (never ``1.42·10⁻⁴ nWh``)."""
    return format_si(None if _missing(energy_j) else energy_j / 3600.0, "Wh", digits,
                     missing)


def format_charge(charge_c: float | None, digits: int = 3, missing: str = MISSING,
                  sep: str = " ") -> str:
    """A charge, C, in coulombs and in ampere-hours (the unit of a battery's capacity), each
    with an SI prefix, joined by ``sep``: ``1.2e-6`` → ``"1.2 µC (333 pAh)"``."""
    if _missing(charge_c):
        return missing
    assert charge_c is not None
    return (f"{format_si(charge_c, 'C', digits)}{sep}"
            f"({format_si(charge_c / 3600.0, 'Ah', digits)})")


def format_duration(seconds: float) -> str:
    """A duration, s, rounded to the second: ``3 h 05 min``, ``4 min 10 s``, ``12 s``;
    ``unknown`` when it is not finite."""
    if not math.isfinite(seconds):
        return "unknown"
    s = round(seconds)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h} h {m:02d} min"
    return f"{m} min {sec:02d} s" if m else f"{sec} s"
