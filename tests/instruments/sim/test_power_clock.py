"""The power model's current follows the CPU clock (issue 22 item 5): static + dynamic
(+ a quadratic share), so the energy of a fixed number of cycles has its minimum where the
model says, and the truth log carries the clock it drew each window at."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from energyrig.instruments.sim.power import (
    PowerModel,
    best_clock_hz,
    clock_scale,
    model_current,
    window_charge,
)
from energyrig.instruments.sim.truth import TruthRecorder, read_truth
from energyrig.instruments.sim.wire import edge_records
from energyrig.opfamilies import NAMES

HASH = NAMES.index("hash") + 1
NRF = PowerModel.from_dict({"profile": "nrf52840"})
CYCLES = 200_000  # a batch's cycles: its time is CYCLES / clock


def _energy_of_cycles(model: PowerModel, hz: float, family: int = HASH) -> float:
    """The truth's energy of CYCLES cycles at ``hz``, J."""
    total_c, _ = window_charge(model, 0, round(CYCLES / hz * 1e9), False, family, hz)
    return model.supply_v * total_c


def test_the_current_is_static_plus_dynamic_at_each_clock() -> None:
    hash_a = NRF.families["hash"].active_a
    for hz in (16e6, 32e6, 64e6):
        r = hz / NRF.clock_hz
        expected = NRF.static_a + (hash_a - NRF.static_a) * ((1 - NRF.quadratic) * r
                                                             + NRF.quadratic * r * r)
        edges = edge_records([0], [1], family=HASH, clock_hz=int(hz))
        # past the rising edge's spike
        got = model_current(NRF, np.array([100_000], dtype=np.int64), edges)
        assert got[0] == pytest.approx(expected, rel=1e-12)
    # at the profile's own clock, or with no clock stated, the family's figure itself
    assert float(clock_scale(NRF, 0)) == 1.0 == float(clock_scale(NRF, NRF.clock_hz))


def test_energy_of_fixed_cycles_has_its_minimum_where_the_model_says() -> None:
    levels = np.array([16e6, 24e6, 32e6, 40e6, 48e6, 56e6, 64e6])
    energy = np.array([_energy_of_cycles(NRF, hz) for hz in levels])
    best = best_clock_hz(NRF, HASH)
    assert 16e6 < best < 64e6  # the profile puts it inside the emulated board's range
    assert levels[np.argmin(energy)] == levels[np.argmin(abs(levels - best))]
    # closed form: V n (static / f + k1 + k2 f) (+ the rising edge's spike)
    d = NRF.families["hash"].active_a - NRF.static_a
    k1, k2 = (1 - NRF.quadratic) * d / NRF.clock_hz, NRF.quadratic * d / NRF.clock_hz**2
    spike = NRF.edge_spike_a * NRF.edge_spike_s
    for hz, e in zip(levels, energy):
        model = NRF.supply_v * (CYCLES * (NRF.static_a / hz + k1 + k2 * hz) + spike)
        assert e == pytest.approx(model, rel=1e-6)  # the fall rounded to a ns


def test_bursts_are_the_same_cycles_at_every_clock() -> None:
    pk = NAMES.index("public-key") + 1
    fc = NRF.families["public-key"]
    assert fc.burst_duty > 0
    # a window of whole burst periods at each clock: the bursts' energy per cycle is the
    # dynamic part's, so the energy of the cycles follows the same closed form
    flat = PowerModel(active_a=fc.active_a, clock_hz=64e6, static_a=1e-3, quadratic=0.0,
                      families={"public-key": fc})
    per_cycle = [_energy_of_cycles(flat, hz, pk) / CYCLES - flat.supply_v * 1e-3 / hz
                 for hz in (16e6, 64e6)]
    assert per_cycle[0] == pytest.approx(per_cycle[1], rel=2e-3)


def test_a_flat_model_has_no_minimum_inside() -> None:
    flat = PowerModel(static_a=1e-3, active_a=3e-3)
    assert best_clock_hz(flat) == math.inf  # static only: the faster the cheaper
    assert best_clock_hz(PowerModel()) == 0.0


def test_static_over_a_window_current_is_refused() -> None:
    with pytest.raises(ValueError, match="static_a"):
        PowerModel(active_a=1e-3, static_a=2e-3)
    with pytest.raises(ValueError, match="quadratic"):
        PowerModel(quadratic=1.5)


def test_the_truth_log_carries_the_clock(tmp_path: Path) -> None:
    path = tmp_path / "truth.jsonl"
    recorder = TruthRecorder(path)
    t_fall = round(CYCLES / 16e6 * 1e9)
    recorder.feed(edge_records([1_000, 1_000 + t_fall], [1, 0], family=[HASH, 0],
                               clock_hz=16_000_000), NRF, NRF.supply_v, True)
    recorder.close()
    (window,) = read_truth(path)[1]
    assert window.clock_hz == 16_000_000
    assert window.energy_j == pytest.approx(_energy_of_cycles(NRF, 16e6), rel=1e-12)
