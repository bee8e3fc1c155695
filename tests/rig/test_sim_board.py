"""The simulated board looks like a board: on the simulated bench (host firmware, trigger
wire, emulated PPK2), ops of two families draw their own family's current, so they differ
in mean power, not only in time."""
from __future__ import annotations


import pytest
from support.paths import SIM

from energyrig.domain import Point
from energyrig.fixtures import load_fixture
from energyrig.instruments.sim.power import PowerModel
from energyrig.rig.bench import open_bench
from energyrig.rig.pipeline import measure_point, reps_done

pytestmark = pytest.mark.slow  # starts a bench (tests/README.md)



def test_two_families_draw_their_own_mean_power() -> None:
    fixture = load_fixture(SIM)
    assert fixture.sim is not None
    model = PowerModel.from_dict(fixture.sim.power.model_dump())
    ops = {"hash": Point(op="sha256", board="host", payload_bytes=256),
           "symmetric": Point(op="aes-ctr-encrypt", board="host", key_bits=128,
                              payload_bytes=256)}
    mean_w: dict[str, float] = {}
    with open_bench(fixture) as bench:
        for family, point in ops.items():
            result = measure_point(bench, point, until=reps_done(3))
            assert result.ok, result.reason
            assert result.point.family == family
            power = [w.mean_power_w for w in result.windows]
            mean_w[family] = sum(power) / len(power)
            # The family's current (the edge spike adds ~0.3 % to a 2 000-sample window).
            expected_w = model.supply_v * model.families[family].active_a
            assert power == pytest.approx([expected_w] * len(power), rel=0.01)
            for w in result.windows:
                assert w.true_energy_j is not None
                assert w.energy_j == pytest.approx(w.true_energy_j, rel=2e-3)
    ratio = model.families["hash"].active_a / model.families["symmetric"].active_a
    assert ratio > 1.05
    assert mean_w["hash"] / mean_w["symmetric"] == pytest.approx(ratio, rel=0.005)
