"""SI values as text (energyrig.units): the report's and the CLI's styles."""
from __future__ import annotations

import subprocess
import sys

import pytest

from energyrig.units import (
    J_PER_NWH,
    format_charge,
    format_duration,
    format_nwh,
    format_si,
    format_wh,
    in_unit,
    superscript,
)


@pytest.mark.parametrize("value, unit, text", [
    (1.23e-5, "J", "12.3 µJ"), (2.5, "J", "2.5 J"), (0.000999, "s", "999 µs"),
    (0.0009996, "s", "1 ms"), (4.2e-10, "J", "420 pJ"), (1500.0, "W", "1.5 kW"),
    (0.0, "J", "0 J"), (float("nan"), "J", "–"), (-3e-3, "J", "-3 mJ"), (None, "J", "–"),
    (64e6, "Hz", "64 MHz"), (240e6, "Hz", "240 MHz"), (3e-16, "J", "0.3 fJ"),
])
def test_format_si_as_the_report_shows_it(value: float | None, unit: str, text: str) -> None:
    assert format_si(value, unit) == text


@pytest.mark.parametrize("value, unit, text", [
    (3.1834e-6, "J", "3.183 µJ"), (0.0123456, "s", "12.35 ms"), (0.0009996, "s", "999.6 µs"),
    (0.00099996, "s", "1 ms"), (None, "W", "-"), (float("inf"), "W", "-"),
    (64e6, "Hz", "64 MHz"),
])
def test_format_si_as_the_terminal_shows_it(value: float | None, unit: str, text: str) -> None:
    assert format_si(value, unit, digits=4, missing="-") == text


def test_in_unit_scales_exactly_as_a_power_of_ten() -> None:
    assert in_unit(0.0123, "m") == 0.0123 * 1e3
    assert in_unit(3.1834e-6, "µ") == 3.1834e-6 * 1e6
    assert in_unit(2.0, "") == 2.0


def test_format_charge_in_coulombs_and_ampere_hours() -> None:
    assert format_charge(1.2e-6) == "1.2 µC (333 pAh)"
    assert format_charge(3.6, sep="\n") == "3.6 C\n(1 mAh)"
    assert format_charge(float("nan")) == "–"


def test_format_wh_keeps_the_mantissa_between_1_and_1000() -> None:
    assert format_wh(J_PER_NWH) == "1 nWh"
    assert format_wh(1.42e-4 * J_PER_NWH) == "142 fWh"
    assert format_wh(-2.5e-3 * J_PER_NWH) == "-2.5 pWh"
    assert format_wh(None) == "–"


def test_format_nwh() -> None:
    assert format_nwh(J_PER_NWH) == "1 nWh"
    assert format_nwh(1.8) == "500,000 nWh"
    assert format_nwh(float("nan")) == "–"
    assert format_nwh(2.88e-10) == "8·10⁻⁵ nWh"
    assert format_nwh(2.877e-10) == "7.99·10⁻⁵ nWh"
    assert format_nwh(4.4444e-6, digits=4) == "1.235 nWh"
    assert format_nwh(1.1059e-9, digits=4, power_below=1e-4) == "0.0003072 nWh"  # rig run
    assert format_nwh(1.08e-10, digits=4, power_below=1e-4) == "3·10⁻⁵ nWh"
    assert format_nwh(0.0) == "0 nWh"


def test_format_duration() -> None:
    assert format_duration(12.4) == "12 s"
    assert format_duration(250) == "4 min 10 s"
    assert format_duration(3 * 3600 + 5 * 60 + 20) == "3 h 05 min"
    assert format_duration(float("inf")) == "unknown"


def test_superscript() -> None:
    assert superscript(-5) == "⁻⁵" and superscript(12) == "¹²"


def test_units_import_only_the_standard_library() -> None:
    code = ("import sys, energyrig.units; "
            "print(sorted(m for m in ('numpy', 'pandas', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
