"""The Otii driver (through Qoitech's client) against the emulated Otii server: one recording
per window, the window found where the wire put it and its energy the truth's, and each
failure one InstrumentError naming what to do."""
from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from energyrig.energy.windows import WindowSettings, find_windows
from energyrig.errors import ConfigError, InstrumentError, NoTriggerWindow
from energyrig.fixtures import load_fixture
from energyrig.instruments.otii.config import OtiiConfig
from energyrig.instruments.otii.driver import Otii
from energyrig.instruments.otii.emulator import OtiiEmulator
from energyrig.instruments.registry import FAMILIES
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.truth import read_truth
from energyrig.instruments.sim.wire import edge_records
from support.fixtures import write_fixture

MODEL = PowerModel(supply_v=3.0, idle_a=1e-3, active_a=5e-3, noise_a=0.0)


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[OtiiEmulator]:
    with OtiiEmulator(MODEL, latency_s=0.01, truth=tmp_path / "truth.jsonl") as emu:
        yield emu


def _pulse(emulator: OtiiEmulator, after_s: float, width_s: float) -> tuple[int, int]:
    """Send a trigger pulse ``after_s`` from now, ``width_s`` long; its edges, ns."""
    rise = time.monotonic_ns() + round(after_s * 1e9)
    fall = rise + round(width_s * 1e9)
    emulator.inject_edges(edge_records([rise, fall], [1, 0]))
    return rise, fall


def test_a_window_is_recorded_whole_with_the_truths_energy(
        emulator: OtiiEmulator, tmp_path: Path) -> None:
    config = OtiiConfig(server=emulator.address, supply_v=3.0, sample_rate_hz=50_000)
    with Otii(config) as otii:
        assert otii.describe().name == "Otii Ace Ace"
        assert emulator.main_v == 3.0 and emulator.main_on
        assert {"mc", "mv", "i1"} <= emulator.enabled
        otii.arm(pre_s=0.02, window_s=0.03, post_s=0.005)
        # 0.1 s ahead: the emulator renders 10 ms behind now, so a rise 5 ms ahead came late
        # to it when this host stalled 15 ms between reading the clock and sending the edges
        # (3 stalls in 10^4 at load 15, none over 55 ms in 2 x 10^4).
        _pulse(emulator, 0.1, 0.030)
        capture = otii.collect(timeout_s=5.0)
        assert not emulator.recordings  # deleted once downloaded
    (stream,), (truth,) = read_truth(tmp_path / "truth.jsonl")
    (window,) = find_windows(capture, WindowSettings(trigger_bit=0, guard_s=1e-3,
                                                     baseline_s=10e-3))
    # numpy on the same samples: the high ones, v * i summed over them
    (chunk,) = capture.chunk_list
    t_ns = stream.t0_ns + np.arange(len(chunk)) * stream.period_ns
    high = (t_ns >= truth.t_rise_ns) & (t_ns < truth.t_fall_ns)
    np.testing.assert_array_equal(chunk.logic, high.astype(np.uint8))
    expected_j = float(np.sum(chunk.voltage_v[high] * chunk.current_a[high])) * chunk.period_s
    assert window.energy_j == pytest.approx(expected_j, rel=1e-9)
    assert window.energy_j == pytest.approx(truth.energy_j, abs=window.edge_error_j)
    assert len(chunk) * chunk.period_s >= truth.t_fall_ns * 1e-9 - stream.t0_ns * 1e-9 + 0.005


def test_a_window_between_two_samples_is_no_trigger_window(emulator: OtiiEmulator) -> None:
    """An empty window (``run n=0``) shorter than a sample: the GPI's transitions show it, no
    sample does; the collect says so at once (calibrate overhead counts it as 0)."""
    with Otii(OtiiConfig(server=emulator.address, sample_rate_hz=1000)) as otii:
        otii.arm(pre_s=0.005, window_s=0.0, post_s=0.001)
        t0_ns = emulator.recordings[max(emulator.recordings)].t0_ns
        k = (time.monotonic_ns() - t0_ns) // 1_000_000 + 20   # 20 ms ahead, on the 1 ms grid
        rise = t0_ns + k * 1_000_000 + 300_000                # 0.3 ms past a sample
        emulator.inject_edges(edge_records([rise, rise + 1000], [1, 0]))  # 1 us wide
        with pytest.raises(NoTriggerWindow, match="no sample caught"):
            otii.collect(timeout_s=5.0)


def test_a_trigger_that_never_rises_ends_the_wait(emulator: OtiiEmulator) -> None:
    with Otii(OtiiConfig(server=emulator.address, trigger_gpi=2)) as otii:
        otii.arm(pre_s=0.01, window_s=0.01, post_s=0.001)
        with pytest.raises(NoTriggerWindow, match="GPI2 of the expansion port"):
            otii.collect(timeout_s=0.2)


def test_a_device_by_another_name_is_refused_with_those_attached(
        emulator: OtiiEmulator) -> None:
    with pytest.raises(InstrumentError, match=r"no device named 'Arc 7' \(attached: Ace 'Ace'\)"):
        Otii(OtiiConfig(server=emulator.address, device="Arc 7")).start()
    assert not emulator.licence_reserved  # returned on the way out


def test_a_rate_the_device_lacks_is_the_servers_refusal(emulator: OtiiEmulator) -> None:
    with pytest.raises(InstrumentError, match="refused: Invalid key value"):
        Otii(OtiiConfig(server=emulator.address, sample_rate_hz=3000)).start()


def test_no_server_is_one_error() -> None:
    with socket.socket() as closed:  # bound, not listening: the connection is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        with pytest.raises(InstrumentError, match=f"otii 127.0.0.1:{port}: connecting"):
            Otii(OtiiConfig(server=f"127.0.0.1:{port}", connect_timeout_s=0)).start()


def test_the_fixtures_server_must_be_host_and_port(tmp_path: Path) -> None:
    path = write_fixture(tmp_path / "bad.toml", "sim-otii.toml",
                         **{"instrument.server": "127.0.0.1:otii"})
    with pytest.raises(ConfigError, match=r"instrument.server.*host:port"):
        load_fixture(path)


def test_the_family_is_registered_with_its_emulator() -> None:
    family = FAMILIES["otii"]
    assert family.emulator == "energyrig.instruments.otii.emulator"
    assert family.address_field == "server"
