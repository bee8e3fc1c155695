"""Issue 23 item 6: energy and time cells in one unit prefix per column, with the GUM's
digits (the uncertainty to two significant digits, the value to the same decimal place)."""
from __future__ import annotations

import math

import pytest

from energyrig.units import column_prefix, format_gum, gum_decimals


@pytest.mark.parametrize("value, u, text", [
    (1234.5678, 0.0123, "1234.568 ± 0.012"),
    (1234.5678, 0.0996, "1234.57 ± 0.10"),      # u rounds up to a third digit: one fewer
    (1234.5678, 0.95, "1234.57 ± 0.95"),
    (1234.5678, 0.996, "1234.6 ± 1.0"),
    (1234.5678, 12.0, "1235 ± 12"),
    (123456.7, 1234.0, "123500 ± 1200"),        # to the hundreds
    (0.5, 0.5, "0.50 ± 0.50"),
    (-3.14159, 0.0271, "-3.142 ± 0.027"),
    (0.0, 0.0123, "0.000 ± 0.012"),
])
def test_the_uncertainty_has_two_digits_and_the_value_its_decimal_place(
        value: float, u: float, text: str) -> None:
    assert format_gum(value, u) == text


def test_the_value_and_its_uncertainty_take_the_columns_prefix() -> None:
    assert format_gum(1.2345e-6, 2.3e-9, unit="J", prefix="µ") == "1.2345 ± 0.0023 µJ"
    assert format_gum(1.2345e-6, 2.3e-9, prefix="n") == "1234.5 ± 2.3"
    # a value without an uncertainty: three significant digits, never -0
    assert format_gum(2.01e-10, None, prefix="n") == "0.201"
    assert format_gum(2.01e-10, math.nan, unit="J", prefix="p") == "201 pJ"
    assert format_gum(-0.0, None) == "0" and format_gum(None) == "–"
    assert format_gum(1493.2, None, digits=2) == "1500"  # to two significant digits


def test_gum_decimals() -> None:
    assert gum_decimals(0.0123) == 3 and gum_decimals(0.0996) == 2
    assert gum_decimals(1.0) == 1 and gum_decimals(99.6) == -1 and gum_decimals(1234) == -2


def test_a_column_gets_the_one_prefix_that_keeps_its_smallest_value_at_1_or_more() -> None:
    assert column_prefix([1.2e-6, 3.4e-9, 5.6e-8]) == "n"
    assert column_prefix([1.2e-6, 9.9e-6]) == "µ"
    assert column_prefix([1e-6]) == "µ"                     # exactly 1 µJ: 1, not 1000 n
    assert column_prefix([2.5, 0.0, math.nan, None]) == ""  # zeros and gaps choose nothing
    assert column_prefix([math.nan]) == "" and column_prefix([3e-19]) == "f"
