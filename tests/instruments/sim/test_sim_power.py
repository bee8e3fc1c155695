"""The power model: piecewise current from edges, periodic loads, exact window charge, faults."""
from __future__ import annotations

import numpy as np
import pytest

from energyrig.instruments.sim.power import (
    PROFILES,
    FamilyCurrent,
    PeriodicLoad,
    PowerModel,
    logic_level,
    measured_current,
    model_current,
    window_charge,
)
from energyrig.instruments.sim.wire import NO_EDGES, edge_records

MODEL = PowerModel(supply_v=3.0, idle_a=3e-6, active_a=3.3e-3, accel_a=2.2e-3)
HASH, PUBLIC_KEY = 2, 3  # wire ids (firmware/TRIGGER_WIRE.md)
#: A board with a family current, bursts and edge spikes, in round figures.
BOARD = PowerModel(idle_a=1e-5, active_a=4e-3, accel_a=2e-3, edge_spike_a=5e-3, edge_spike_s=20e-6,
                   families={"hash": FamilyCurrent(6e-3),
                             "public-key": FamilyCurrent(5e-3, burst_a=3e-3, burst_period_s=100e-6,
                                                         burst_duty=0.25)})


def dense_charge(model: PowerModel, edges: np.ndarray, t0_ns: int, t1_ns: int) -> float:
    """Left Riemann sum of the model's current on a 1 ns grid over [t0, t1), C."""
    return float(model_current(model, np.arange(t0_ns, t1_ns), edges).sum()) * 1e-9


def test_levels_follow_the_edges() -> None:
    edges = edge_records([1000, 2000, 3000, 4000], [1, 0, 1, 0], accel=[0, 0, 1, 1])
    t = np.array([0, 999, 1000, 1999, 2000, 3500, 4000, 5000])
    expected = [3e-6, 3e-6, 3.3e-3, 3.3e-3, 3e-6, 5.5e-3, 3e-6, 3e-6]
    np.testing.assert_allclose(model_current(MODEL, t, edges), expected, rtol=1e-12)
    assert logic_level(t, edges).tolist() == [0, 0, 1, 1, 0, 1, 0, 0]
    np.testing.assert_allclose(model_current(MODEL, t, NO_EDGES), 3e-6)


def test_periodic_load_charge_is_exact() -> None:
    load = PeriodicLoad(amplitude_a=0.02, period_s=1e-3, duty=0.25, phase_s=0.1e-3)
    # Whole periods: amplitude * duty * length.
    assert load.charge(0.1e-3, 10.1e-3) == pytest.approx(0.02 * 0.25 * 10e-3, rel=1e-12)
    # Any interval: against a fine midpoint sum.
    t0, t1 = 0.37e-3, 4.81e-3
    dt = 1e-9
    t = np.arange(t0 + dt / 2, t1, dt)
    assert load.charge(t0, t1) == pytest.approx(load.current(t).sum() * dt, rel=1e-5)


def test_window_charge_against_a_dense_integral() -> None:
    model = PowerModel(idle_a=1e-5, active_a=4e-3, accel_a=2e-3,
                       loads=(PeriodicLoad(0.05, 2e-4, 0.1, 3e-5),))
    t_rise, t_fall = 1_000_123, 1_731_777  # ns
    edges = edge_records([t_rise, t_fall], [1, 0], accel=1)
    t = np.arange(t_rise, t_fall, 1)  # 1 ns grid, left sums
    dense = model_current(model, t, edges).sum() * 1e-9
    total, idle = window_charge(model, t_rise, t_fall, accel=True)
    # The 1 ns grid misplaces each of the ~8 pulse edges by under 1 ns.
    assert total == pytest.approx(dense, abs=8 * 0.05 * 1e-9)
    assert total - idle == pytest.approx(6e-3 * (t_fall - t_rise) * 1e-9 - 1e-5 * (t_fall - t_rise) * 1e-9,
                                         rel=1e-9)


def test_family_current_and_edge_spikes_known_answer() -> None:
    # A 1 ms hash window: 6 mA throughout, + 5 mA for the first 20 µs (the rising edge's
    # spike); the falling edge's spike lies after the window, on the idle current.
    t_rise, t_fall = 2_000_000, 3_000_000
    edges = edge_records([t_rise, t_fall], [1, 0], family=[HASH, 0])
    t = np.array([t_rise - 1, t_rise, t_rise + 19_999, t_rise + 20_000, t_fall - 1, t_fall,
                  t_fall + 19_999, t_fall + 20_000])
    np.testing.assert_allclose(model_current(BOARD, t, edges),
                               [1e-5, 11e-3, 11e-3, 6e-3, 6e-3, 5.01e-3, 5.01e-3, 1e-5], rtol=1e-12)
    total, idle = window_charge(BOARD, t_rise, t_fall, accel=False, family=HASH)
    assert total == pytest.approx(6e-3 * 1e-3 + 5e-3 * 20e-6, rel=1e-12)
    assert idle == pytest.approx(1e-5 * 1e-3, rel=1e-12)
    assert total == pytest.approx(dense_charge(BOARD, edges, t_rise, t_fall), rel=1e-9)
    # A window shorter than the spike holds the spike only while it lasts.
    short, _ = window_charge(BOARD, 0, 5_000, accel=True, family=HASH)
    assert short == pytest.approx((6e-3 + 2e-3 + 5e-3) * 5e-6, rel=1e-12)


def test_burst_train_known_answer() -> None:
    # 1.03 ms of public-key: 5 mA, + 3 mA bursts of 25 µs every 100 µs from the rise on:
    # 10 whole bursts and the 11th, which starts at 1 ms, for 25 of its 30 µs.
    t_rise, t_fall = 7_000_000, 8_030_000
    edges = edge_records([t_rise, t_fall], [1, 0], family=[PUBLIC_KEY, 0])
    total, idle = window_charge(BOARD, t_rise, t_fall, accel=False, family=PUBLIC_KEY)
    bursts = 3e-3 * 11 * 25e-6
    assert total == pytest.approx(5e-3 * 1.03e-3 + bursts + 5e-3 * 20e-6, rel=1e-12)
    assert total - idle == pytest.approx(total - 1e-5 * 1.03e-3, rel=1e-12)
    # The grid puts each of the 22 burst edges and 2 spike edges within 1 ns.
    assert total == pytest.approx(dense_charge(BOARD, edges, t_rise, t_fall), abs=24 * 8e-3 * 1e-9)
    i = model_current(BOARD, t_rise + np.array([30_000, 112_000, 180_000]), edges)
    np.testing.assert_allclose(i, [5e-3, 8e-3, 5e-3], rtol=1e-12)


def test_a_family_without_an_entry_draws_active_a() -> None:
    for family in (0, 1, 99):  # a mark window, symmetric (no entry), an id the table lacks
        edges = edge_records([0, 1_000_000], [1, 0], family=[family, 0])
        assert model_current(BOARD, np.array([500_000]), edges)[0] == pytest.approx(4e-3)
        assert BOARD.family_current(family) == FamilyCurrent(4e-3)
        assert window_charge(BOARD, 0, 1_000_000, False, family)[0] == pytest.approx(4e-6 + 1e-7)


def test_profiles_are_defaults_a_fixture_overrides() -> None:
    nrf = PowerModel.from_dict({"profile": "nrf52840", "idle_a": None,
                                "families": {"hash": {"active_a": 4e-3}}})
    assert nrf.idle_a == PROFILES["nrf52840"]["idle_a"] and nrf.edge_spike_a > 0
    assert nrf.families["hash"] == FamilyCurrent(4e-3)
    assert nrf.families["public-key"].burst_duty > 0  # the profile's, kept
    assert PowerModel.from_dict(nrf.as_dict()) == nrf
    assert PowerModel.from_dict({}) == PowerModel()  # no profile: flat
    for board in PROFILES:  # each board's figures are a valid model
        model = PowerModel.from_dict({"profile": board})
        assert model.supply_v > 0 and set(model.families) <= {"symmetric", "hash", "public-key"}
    with pytest.raises(ValueError, match="unknown profile 'stm32'"):
        PowerModel.from_dict({"profile": "stm32"})
    with pytest.raises(ValueError, match="unknown family rsa"):
        PowerModel(families={"rsa": FamilyCurrent(1e-3)})
    with pytest.raises(ValueError, match="burst_duty"):
        FamilyCurrent(1e-3, burst_duty=2.0)


def test_faults_shape_the_measured_current() -> None:
    edges = edge_records([1_000_000], [1])
    t = np.arange(0, 2_000_000, 10_000)
    rng = np.random.default_rng(1)
    faulty = PowerModel(idle_a=1e-3, active_a=2e-3, accel_a=0.0, offset_a=5e-6, gain_error=0.01,
                        skew_s=50e-6)
    got = measured_current(faulty, t, edges, rng)
    truth = model_current(faulty, t - 50_000, edges)
    np.testing.assert_allclose(got, truth * 1.01 + 5e-6, rtol=1e-12)
    assert got[100] == pytest.approx(1e-3 * 1.01 + 5e-6)  # the step shows 5 samples late
    assert got[105] == pytest.approx(2e-3 * 1.01 + 5e-6)
    noisy = PowerModel(idle_a=1e-3, noise_a=2e-6)
    spread = measured_current(noisy, np.arange(200_000) * 10_000, NO_EDGES, rng) - 1e-3
    assert spread.std() == pytest.approx(2e-6, rel=0.02)
    assert faulty.faulty and not MODEL.faulty


def test_bad_parameters_are_rejected() -> None:
    with pytest.raises(ValueError, match="drop_rate"):
        PowerModel(drop_rate=1.5)
    with pytest.raises(ValueError, match="idle_a"):
        PowerModel(idle_a=-1.0)
    with pytest.raises(ValueError, match="period_s"):
        PeriodicLoad(1e-3, 0.0, 0.5)


def test_model_round_trips_through_a_dict() -> None:
    model = PowerModel(noise_a=1e-6, loads=(PeriodicLoad(0.1, 0.5, 0.01),))
    assert PowerModel.from_dict(model.as_dict()) == model
