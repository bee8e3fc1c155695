"""The power model: piecewise current from edges, periodic loads, exact window charge, faults."""
from __future__ import annotations

import numpy as np
import pytest

from energyrig.instruments.sim.power import (
    PeriodicLoad,
    PowerModel,
    logic_level,
    measured_current,
    model_current,
    window_charge,
)
from energyrig.instruments.sim.wire import NO_EDGES, edge_records

MODEL = PowerModel(supply_v=3.0, idle_a=3e-6, active_a=3.3e-3, accel_a=2.2e-3)


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
