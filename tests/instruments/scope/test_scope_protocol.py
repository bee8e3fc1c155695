"""Scope protocol without an instrument: record planning, verticals, preambles, read parts."""
from __future__ import annotations

import numpy as np
import pytest

from energyrig.errors import InstrumentError
from energyrig.instruments.scope import protocol
from energyrig.instruments.scope.dialects import (
    DIALECTS,
    KEYSIGHT_X,
    RIGOL_DS1000Z,
    SIGLENT_SDS,
    SIGLENT_SDS1000XE,
    dialect_for_idn,
    number,
    keysight_preamble,
    rigol_preamble,
    steps_125,
)
from energyrig.instruments.base import Limits
from energyrig.instruments.scope.config import ScopeConfig


def longest_window(dialect, rate: float, pre: float, post: float, margin: float) -> float:
    """The longest window the bench lets a 3-channel record hold at ``rate``, s."""
    limits = Limits(rate, protocol.max_record_s(dialect, 3, rate), 0.0, margin)
    longest = limits.max_window_s(pre, post)
    assert longest is not None
    return longest


def test_steps_125() -> None:
    assert steps_125(5e-9, 50e-9) == (5e-9, 1e-8, 2e-8, 5e-8)
    assert steps_125(1e-3, 10.0)[:4] == (1e-3, 2e-3, 5e-3, 1e-2)


@pytest.mark.parametrize("dialect", list(DIALECTS.values()), ids=list(DIALECTS))
@pytest.mark.parametrize("window_s", [1e-5, 3e-3, 0.05, 0.4, 2.0])
def test_plan_holds_the_record_at_the_rate(dialect, window_s: float) -> None:
    pre, post, rate, margin = 0.02, 0.005, 1e6, 1.3
    plan = protocol.plan_record(dialect, 3, rate, pre, window_s, post, margin)
    screen = plan.scale_s * dialect.h_divs
    assert screen >= pre + margin * window_s + post
    assert plan.scale_s in steps_125(*dialect.timebase_s)
    # the next faster timebase would not hold it
    faster = [s for s in steps_125(*dialect.timebase_s) if s < plan.scale_s]
    assert not faster or faster[-1] * dialect.h_divs < pre + margin * window_s + post
    assert plan.position_s == pytest.approx(screen / 2 - pre)
    if dialect.depths is not None:
        assert plan.depth in dialect.depth_choices(3)
        assert plan.rate_hz == pytest.approx(plan.depth / screen)
    longest = longest_window(dialect, rate, pre, post, margin)
    assert (plan.rate_hz >= rate * 0.9999) == (window_s <= longest)


@pytest.mark.parametrize("dialect", list(DIALECTS.values()), ids=list(DIALECTS))
def test_max_window_is_the_edge_of_the_rate(dialect) -> None:
    pre, post, rate = 0.02, 0.005, 2e6
    longest = longest_window(dialect, rate, pre, post, 1.3)
    at = protocol.plan_record(dialect, 3, rate, pre, longest, post, 1.3)
    beyond = protocol.plan_record(dialect, 3, rate, pre, longest * 1.01 + 1e-6, post, 1.3)
    assert at.rate_hz >= rate * 0.9999 > beyond.rate_hz


def test_record_longer_than_the_slowest_timebase() -> None:
    with pytest.raises(InstrumentError, match="slowest timebase"):
        protocol.plan_record(RIGOL_DS1000Z, 3, 1e3, 0.02, 1000.0, 0.0)


def test_vertical_respects_the_ds1000z_offset_limit() -> None:
    # 3.3 V needs an offset of -3.3 V: only allowed from 0.5 V/div on (2 V below)
    v = protocol.vertical(RIGOL_DS1000Z, 1, 3.2, 3.4, probe=1.0)
    assert (v.scale_v, v.offset_v) == (0.5, -3.3)
    # Siglent has no such limit in its row: +-0.1 V fits 90 % of 4 div at 50 mV/div (0.18 V)
    v = protocol.vertical(SIGLENT_SDS, 1, 3.2, 3.4, probe=1.0)
    assert (v.scale_v, v.offset_v) == (0.05, -3.3)
    # Keysight's offset is the centre value
    v = protocol.vertical(KEYSIGHT_X, 1, 3.2, 3.4, probe=1.0)
    assert v.offset_v == 3.3
    # a 10x probe scales the allowed V/div
    assert protocol.vertical(RIGOL_DS1000Z, 2, 0.0, 0.004, probe=10.0).scale_v == 0.01


def test_vertical_too_large() -> None:
    with pytest.raises(InstrumentError, match="cannot show"):
        protocol.vertical(KEYSIGHT_X, 1, 0.0, 100.0, probe=1.0)


def test_rigol_preamble_from_the_guide() -> None:
    # MSO1000Z/DS1000Z Programming Guide, :WAVeform:PREamble? example
    s = rigol_preamble("0,2,6000000,1,1.000000e-09,-3.000000e-03,0,4.132813e-01,0,122")
    assert (s.points, s.x_increment_s, s.x_origin_s) == (6_000_000, 1e-9, -3e-3)
    np.testing.assert_allclose(s.volts(np.array([122, 123], dtype=np.uint8)), [0.0, 0.4132813])


def test_keysight_preamble() -> None:
    s = keysight_preamble("+0,+0,+62500,+1,+1.6E-08,-5.0E-04,+0,+2.5E-03,+1.2E+00,+128")
    np.testing.assert_allclose(s.volts(np.array([128, 0], dtype=np.uint8)), [1.2, 1.2 - 0.32])


def test_preamble_garbage() -> None:
    with pytest.raises(ValueError):
        rigol_preamble("0,2,600")


def test_idn_to_dialect() -> None:
    assert dialect_for_idn("RIGOL TECHNOLOGIES,DS1054Z,DS1ZA1,00.04.04") is RIGOL_DS1000Z
    assert dialect_for_idn("KEYSIGHT TECHNOLOGIES,MSO-X 3054A,MY1,02.50") is KEYSIGHT_X
    assert dialect_for_idn("Siglent Technologies,SDS2354X Plus,SDS2X,1.3.9") is SIGLENT_SDS
    assert dialect_for_idn("TEKTRONIX,DPO4054,C0,CF:91.1CT FV:v2.1") is DIALECTS["tektronix-4000"]
    assert dialect_for_idn("TEKTRONIX,MSO44,C0,CF:91.1CT FV:1.0") is None


# *IDN? replies of Siglent models -> the command set their firmware speaks.
SIGLENT_IDNS = [
    ("Siglent Technologies,SDS1104X-E,SDS1ECDD2R0000,8.2.6.1.37R9", "siglent-sds1000xe"),
    ("Siglent Technologies,SDS1202X-E,SDS1EBAC0L0000,1.3.27", "siglent-sds1000xe"),
    ("Siglent Technologies,SDS1104X-U,SDS1ECDX000000,8.2.6.1.37R9", "siglent-sds1000xe"),
    ("Siglent Technologies,SDS1202X,SDS1XAAQ000000,5.6.1.3.6", "siglent-sds1000xe"),
    ("Siglent Technologies,SDS1102X+,SDS1XCAQ000000,1.1.1.21", "siglent-sds1000xe"),
    ("Siglent Technologies,SDS2304X,SDS2XJBD1R0000,1.2.2.2 R10", "siglent-sds1000xe"),
    ("Siglent Technologies,SDS2102X-E,SDS2EDDD000000,1.1.3.2", "siglent-sds1000xe"),
    ("Siglent Technologies,SDS2104X Plus,SDS2PDDC000000,3.8.12.1.1.3.8", "siglent-sds"),
    ("Siglent Technologies,SDS2354X HD,SDS2HBAX000000,1.2.0.9", "siglent-sds"),
    ("Siglent Technologies,SDS1104X HD,SDS1HBAQ000000,1.1.3.8", "siglent-sds"),
    ("Siglent Technologies,SDS814X HD,SDS08A0000000,1.1.3.3", "siglent-sds"),
    ("Siglent Technologies,SDS5104X,SDS5XAA0000000,0.9.6", "siglent-sds"),
    ("Siglent Technologies,SDS6204 H10 Pro,SDS6PAAX000000,1.4.1.0", "siglent-sds"),
]


@pytest.mark.parametrize(("idn", "name"), SIGLENT_IDNS)
def test_siglent_model_picks_exactly_one_command_set(idn: str, name: str) -> None:
    assert [d.name for d in DIALECTS.values() if d.matches(idn)] == [name]
    assert dialect_for_idn(idn) is DIALECTS[name]


def test_siglent_legacy_preamble_scaling() -> None:
    """volts = code x vdiv/25 - offset on signed codes; t0 = -(tdiv x 14/2) - trdl."""
    s = SIGLENT_SDS1000XE.preamble("2.00E-01V;-3.34E+00V;5.00E-03S;-1.50E-02S;1.00MSa/s;70Kpts")
    assert (s.points, s.x_increment_s) == (70_000, pytest.approx(1e-6))
    assert s.x_origin_s == pytest.approx(-0.02)
    codes = np.array([0xCE, 0x00, 0x7F, 0x80], dtype=np.uint8).view(np.int8)
    np.testing.assert_allclose(s.volts(codes), [-50 * 0.008 + 3.34, 3.34, 127 * 0.008 + 3.34,
                                                -128 * 0.008 + 3.34])
    with pytest.raises(ValueError):
        SIGLENT_SDS1000XE.preamble("2.00E-01;-3.34;5.00E-03;0;1.00E+06")


@pytest.mark.parametrize(("reply", "value"), [("2.00E-02V", 0.02), ("SARA 1.00GSa/s", 1e9),
                                              ("-1.50E-02S", -0.015), ("14Mpts", 14e6),
                                              ("500mV", 0.5), ("7.00E+04", 7e4)])
def test_number_reads_units_and_prefixes(reply: str, value: float) -> None:
    assert number(reply) == pytest.approx(value)


def test_si_points() -> None:
    assert [protocol.si_points(d) for d in (7_000, 140_000, 1_400_000, 14_000_000, 500)] == \
        ["7K", "140K", "1.4M", "14M", "500"]


def test_read_parts_cover_the_record_once() -> None:
    parts = protocol.read_parts(RIGOL_DS1000Z, 600_001)
    assert [c for _, c in parts] == [250_000, 250_000, 100_001]
    assert parts[-1][0] == [":WAVeform:STARt 500001", ":WAVeform:STOP 600001"]
    assert protocol.read_parts(KEYSIGHT_X, 600_001) == [([], 600_001)]


@pytest.mark.parametrize("bad", [dict(supply=2), dict(shunt_ohms=None),
                                 dict(shunt_ohms=1.0, current_scale_a_per_v=0.1),
                                 dict(supply=None), dict(sample_rate_hz=0.0)])
def test_settings_refuse_nonsense(bad: dict) -> None:
    with pytest.raises(ValueError):
        ScopeConfig(resource="TCPIP::x::INSTR", **bad)


def test_current_probe_and_constant_supply() -> None:
    s = ScopeConfig(resource="x", supply=None, voltage_minus_shunt=False, shunt_ohms=None,
                      current_scale_a_per_v=0.1)
    assert s.amperes_per_volt == 0.1 and set(s.roles()) == {"shunt", "trigger"}
