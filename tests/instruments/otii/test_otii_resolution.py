"""Every Otii figure states its uncertainty where Qoitech states the device's resolution: the
driver's limits carry the step per range of the device type the server names
(energyrig.instruments.otii.spec), the emulated Arc quantises to it, and a run on a simulated
Arc bench states U (k=2) with its ADC resolution component known."""
from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from energyrig.cli.app import app
from energyrig.instruments.otii.config import OtiiConfig
from energyrig.instruments.otii.driver import Otii
from energyrig.instruments.otii.emulator import OtiiEmulator
from energyrig.instruments.otii.spec import RESOLUTION
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.wire import edge_records

MODEL = PowerModel(supply_v=3.0, idle_a=1e-3, active_a=5e-3, noise_a=0.3e-6)


def test_the_limits_carry_the_step_of_the_device_the_server_names() -> None:
    with OtiiEmulator(MODEL, device_type="Arc", latency_s=0.01) as emulator:
        with Otii(OtiiConfig(server=emulator.address, sample_rate_hz=4000)) as otii:
            resolution = otii.limits().resolution
    assert resolution == RESOLUTION["Arc"]
    assert resolution is not None
    # the Arc ranges itself: the step the budget takes follows the current
    assert [resolution.step_a(i) for i in (1e-6, 19e-3, 0.1, 3.0)] == [5e-9, 5e-9, 82e-6,
                                                                       1.5e-3]


def test_an_ace_states_no_step_rather_than_a_guessed_one() -> None:
    with OtiiEmulator(MODEL, latency_s=0.01) as emulator:
        with Otii(OtiiConfig(server=emulator.address, sample_rate_hz=4000)) as otii:
            assert otii.describe().name.startswith("Otii Ace")
            assert otii.limits().resolution is None


def test_the_emulated_arc_reads_in_steps_of_its_range() -> None:
    """Its main current, mA with 0.3 uA of noise, lands on the 5 nA grid of its low range
    (the step the budget is told)."""
    with OtiiEmulator(MODEL, device_type="Arc", latency_s=0.01) as emulator:
        with Otii(OtiiConfig(server=emulator.address, sample_rate_hz=4000)) as otii:
            otii.arm(pre_s=0.02, window_s=0.03, post_s=0.005)
            rise = time.monotonic_ns() + 5_000_000
            emulator.inject_edges(edge_records([rise, rise + 30_000_000], [1, 0]))
            (chunk,) = otii.collect(timeout_s=5.0).chunk_list
    current = np.asarray(chunk.current_a)
    assert len(np.unique(current)) > 10  # the noise is there, not rounded away
    assert np.allclose(current / 5e-9, np.rint(current / 5e-9), rtol=0, atol=1e-6)


@pytest.mark.slow
def test_a_run_on_a_simulated_arc_states_its_uncertainty(
        sim_fixture: Callable[..., Path]) -> None:
    """`rig calibrate all --yes`, then `rig run`, on the default simulated Otii bench, an Arc:
    U (k=2) is a number and the ADC resolution component is known."""
    fixture = sim_fixture(base="sim-otii.toml")
    runner = CliRunner()
    calibrated = runner.invoke(app, ["calibrate", "all", "--yes", "-f", str(fixture)])
    assert calibrated.exit_code == 0, calibrated.output
    result = runner.invoke(app, ["run", "--fixture", str(fixture), "--op", "aes-cbc-encrypt",
                                 "--key-bits", "128", "--payload-bytes", "1024", "--reps",
                                 "4", "--json"])
    assert result.exit_code == 0, result.output
    fig = json.loads(result.stdout)
    assert fig["status"] == "ok"
    budget = {c["component"]: c["u_j"] for c in fig["uncertainty_budget"]}
    assert budget["ADC resolution"] is not None and math.isfinite(budget["ADC resolution"])
    assert all(u is not None and math.isfinite(u) for u in budget.values()), budget
    u = fig["net_energy_per_op_u_j"]
    assert u is not None and 0 < u < fig["net_energy_per_op_j"]
