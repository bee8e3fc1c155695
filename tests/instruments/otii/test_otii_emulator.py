"""The emulated Otii TCP server, driven by Qoitech's own client (otii-tcp-client) over real
TCP: what the client sends is answered as the client expects (its return values, its
exceptions), and a recording's samples and GPI transitions are the power model's and the
wire's, checked against the truth log's time base with numpy."""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from otii_tcp_client import otii_client
from otii_tcp_client.arc import Arc
from otii_tcp_client.otii import Otii
from otii_tcp_client.otii_exception import Otii_Exception

from energyrig.instruments.otii.emulator import OtiiEmulator
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.truth import read_truth
from energyrig.instruments.sim.wire import edge_records

#: A flat board: 1 mA idle, 5 mA in a window, no spikes, no noise.
MODEL = PowerModel(supply_v=3.0, idle_a=1e-3, active_a=5e-3, noise_a=0.0)


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[OtiiEmulator]:
    with OtiiEmulator(MODEL, latency_s=0.01, truth=tmp_path / "truth.jsonl") as emu:
        yield emu


@pytest.fixture
def otii(emulator: OtiiEmulator) -> Iterator[Otii]:
    host, port = emulator.address.split(":")
    client = otii_client.OtiiClient()
    yield client.connect(host=host, port=int(port))
    client.disconnect()


def _device(otii: Otii) -> Arc:
    (device,) = otii.get_devices()
    return device


def test_the_client_connects_reserves_a_licence_and_finds_the_ace(
        emulator: OtiiEmulator, otii: Otii) -> None:
    device = _device(otii)
    assert (device.type, device.name) == ("Ace", "Ace")
    assert otii.has_license("Automation")  # the client's AUTO licensing reserved it
    device.set_main_voltage(3.3)
    device.set_max_current(0.2)
    device.set_channel_samplerate("mc", 4000)
    assert device.get_main_voltage() == 3.3
    assert device.get_max_current() == 0.2
    assert device.get_channel_samplerate("mc") == 4000
    assert emulator.commands[:3] == ["otii_is_logged_in", "otii_get_licenses",
                                     "otii_reserve_license"]


def test_refusals_come_as_the_clients_exceptions(otii: Otii) -> None:
    device = _device(otii)
    with pytest.raises(Otii_Exception) as rate:
        device.set_channel_samplerate("mc", 3000)  # not a rate of the Ace
    assert rate.value.type == "Invalid key value"
    with pytest.raises(Otii_Exception) as voltage:
        device.set_main_voltage(9.0)
    assert voltage.value.type == "Invalid key value"
    gone = Arc({"device_id": "Arc-none", "name": "x", "type": "Arc"}, otii.connection)
    with pytest.raises(Otii_Exception) as missing:
        gone.set_main(True)
    assert missing.value.type == "Device not connected" and "Arc-none" in missing.value.message
    reply = otii.connection.send_and_receive({"type": "request", "cmd": "arc_fly"})
    assert reply["type"] == "error" and reply["errorcode"] == "Invalid command"


def test_a_recording_holds_the_models_current_and_the_wires_window(
        emulator: OtiiEmulator, otii: Otii, tmp_path: Path) -> None:
    device = _device(otii)
    device.set_main_voltage(3.0)
    for channel in ("mc", "mv", "i1"):
        device.enable_channel(channel, True)
    device.set_channel_samplerate("mc", 50_000)
    device.set_channel_samplerate("mv", 50_000)
    device.set_main(True)
    project = otii.create_project()
    project.start_recording()
    recording = project.get_last_recording()
    assert recording is not None and recording.is_running()
    now = time.monotonic_ns()
    # 0.1 s ahead of now, the emulator's samples 10 ms behind it: a stall of this host
    # between the clock and the edges' injection does not make the rise late (30 ms did:
    # 1.5 such stalls in 10^4 at load 15, none over 55 ms in 2 x 10^4).
    rise, fall = now + 100_000_000, now + 112_345_678
    emulator.inject_edges(edge_records([rise, fall], [1, 0]))
    while recording.get_channel_data_count(device.id, "mc") * 20e-6 < (fall - now) * 1e-9 + 0.05:
        time.sleep(0.01)
    project.stop_recording()
    n = recording.get_channel_data_count(device.id, "mc")
    mc = recording.get_channel_data(device.id, "mc", 0, n)  # the client asks 40000 at a time
    mv = recording.get_channel_data(device.id, "mv", 0, n)
    gpi = recording.get_channel_data(device.id, "i1", 0,
                                     recording.get_channel_data_count(device.id, "i1"))
    (stream,), windows = read_truth(tmp_path / "truth.jsonl")
    assert (mc["data_type"], mc["timestamp"], mc["interval"]) == ("analog", 0.0, 20e-6)
    assert len(mc["values"]) == len(mv["values"]) == n > 50_000 * 0.06
    t_ns = stream.t0_ns + np.arange(n) * stream.period_ns
    high = (t_ns >= rise) & (t_ns < fall)
    np.testing.assert_array_equal(np.asarray(mc["values"]), np.where(high, 5e-3, 1e-3))
    assert set(mv["values"]) == {3.0}
    assert gpi["data_type"] == "digital"
    assert [v["value"] for v in gpi["values"]] == [False, True, False]
    np.testing.assert_allclose([v["timestamp"] for v in gpi["values"]],
                               [0.0, (rise - stream.t0_ns) * 1e-9, (fall - stream.t0_ns) * 1e-9],
                               rtol=0, atol=1e-12)
    assert len(windows) == 1 and windows[0].energy_j == pytest.approx(
        3.0 * 5e-3 * (fall - rise) * 1e-9, rel=1e-12)
    recording.delete()
    assert project.get_last_recording() is None
