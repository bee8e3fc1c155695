"""Every Otii figure states its uncertainty where Qoitech states the device's resolution: the
driver's limits carry the step per range of the device type the server names
(energyrig.instruments.otii.spec) and the emulated Arc quantises to it. That a run on the
simulated Arc bench states U (k=2) with its ADC resolution component known is held by
tests/instruments/otii/test_otii_bench.py, on the run it calibrates."""
from __future__ import annotations

import time

import numpy as np

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
