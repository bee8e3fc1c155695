"""SigrokDevice against sigrok-cli's own demo driver (real libsigrok, no hardware)."""
from __future__ import annotations

import subprocess
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from energyrig.errors import ConfigError, InstrumentError
from energyrig.instruments.base import Acquisition, InstrumentInfo, Limits
from energyrig.instruments.sigrok.device import SigrokDevice, list_devices
from energyrig.instruments.sigrok.config import SigrokConfig
from energyrig.energy.windows import find_windows
from support.sigrok_cli import ANALOG_PRINT_TOLERANCE_V, sigrok_analog, sigrok_bits, sigrok_show

RATE = 100_000
DEMO = SigrokConfig(driver="demo", channels=("D0", "D1", "A0", "A1"), samplerate_hz=RATE,
                    trigger="D0", current="A0", shunt_ohms=10.0, voltage="A1")


def sigrok_processes(directory: Path) -> list[str]:
    """Command lines of running sigrok-cli processes that write into ``directory``."""
    done = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines()
            if line.startswith("sigrok-cli --driver demo") and str(directory) in line]


def test_list_devices_finds_the_demo_driver() -> None:
    devices = list_devices(driver="demo:logic_channels=4:analog_channels=2")
    assert [(d.driver, d.channels) for d in devices] == [("demo", ("D0", "D1", "D2", "D3", "A0", "A1"))]


def test_capture_spanning_many_chunks_reads_back_as_sigrok_cli_reads_it() -> None:
    with SigrokDevice(DEMO) as device:
        assert isinstance(device, Acquisition)
        device.arm(pre_s=0.05, window_s=0.4, post_s=0.05)
        capture = device.collect(timeout_s=30)
        path = device.last_file
        assert path is not None and capture.flags == () and capture.trigger_bit == 0
        assert capture.n_samples == 50_000 == sigrok_show(path)["logic_samples"]
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
        assert sum(n.startswith("logic-1-") for n in names) >= 10
        assert sum(n.startswith("analog-1-9-") for n in names) >= 40
        chunks = list(capture.chunks())
        shunt_v = np.concatenate([c.current_a for c in chunks]) * DEMO.shunt_ohms
        supply_v = np.concatenate([c.voltage_v for c in chunks])
        trigger = np.concatenate([c.logic for c in chunks])
        printed = sigrok_analog(path)
        assert np.max(np.abs(shunt_v - printed["A0"])) <= ANALOG_PRINT_TOLERANCE_V
        assert np.max(np.abs(supply_v - printed["A1"])) <= ANALOG_PRINT_TOLERANCE_V
        np.testing.assert_array_equal(trigger, sigrok_bits(path, "D0"))
        assert chunks[0].period_s == pytest.approx(1 / RATE)
    assert not path.exists()  # the private directory went with stop()


def test_window_energies_equal_those_from_what_sigrok_cli_prints() -> None:
    """Device -> reader -> energy code, against windows and v*i rebuilt from sigrok-cli's text."""
    with SigrokDevice(DEMO) as device:
        record = device.acquire(0.1)
        path = device.last_file
        assert path is not None
        windows = list(find_windows(record))
        trigger = sigrok_bits(path, "D0").astype(np.int8)
        printed = sigrok_analog(path)
    power_w = printed["A1"] * printed["A0"] / DEMO.shunt_ohms
    edges = np.diff(trigger)
    rises, falls = np.flatnonzero(edges == 1) + 1, np.flatnonzero(edges == -1) + 1
    falls = falls[falls > rises[0]][: len(rises)]
    rises = rises[: len(falls)]  # complete high runs only
    reference_j = np.array([power_w[a:b].sum() / RATE for a, b in zip(rises, falls)])
    # 2 printed decimals: |dp| <= 0.005 V * 1 A + 10 V * 0.0005 A per sample
    tolerance_j = (falls - rises) * 0.01 / RATE
    assert len(windows) == len(reference_j) > 100
    energies = np.array([w.energy_j for w in windows])
    assert np.all(np.abs(energies - reference_j) <= tolerance_j)
    assert [w.samples for w in windows] == list(falls - rises)
    assert np.ptp(energies) > 0  # windows of different energy: the comparison can fail


def test_an_analog_trigger_channel_is_thresholded_as_the_fixture_says() -> None:
    """A device without logic inputs: the demo's A0 (a ±10 V square wave, its default
    pattern) is the trigger at 0 V ± 1 V; windows are its high half-periods."""
    config = SigrokConfig(driver="demo", channels=("A0", "A1"), samplerate_hz=RATE,
                          trigger="A0", trigger_level_v=0.0, trigger_hysteresis_v=2.0,
                          current="A1", shunt_ohms=10.0, voltage=3.3)
    with SigrokDevice(config) as device:
        record = device.acquire(0.05)
        path = device.last_file
        assert path is not None
        trigger = np.concatenate([c.logic for c in record.chunks()])
        high = (sigrok_analog(path)["A0"] > 0).astype(np.uint8)
        assert device.describe().details["trigger_level_v"] == 0.0
    np.testing.assert_array_equal(trigger, high)
    windows = list(find_windows(record))
    assert len(windows) >= len(high) // 10 - 1 and {w.samples for w in windows} == {5}


def test_arm_returns_once_samples_flow_and_capture_runs_in_real_time(tmp_path: Path) -> None:
    with SigrokDevice(DEMO, keep_dir=tmp_path) as device:
        t0 = time.monotonic()
        device.arm(pre_s=0.0, window_s=1.0, post_s=0.0)
        # arm() returned on the first packets, with the capture still running (on a busy
        # machine that may be late, but never after sigrok-cli took its whole second).
        assert (tmp_path / "capture-0001.sr").exists()
        assert device._process is not None and device._process.poll() is None
        device.collect(timeout_s=30)
        total = time.monotonic() - t0
    assert total > 0.9  # the demo device samples in real time


def test_repeated_captures_and_kept_files(tmp_path: Path) -> None:
    with SigrokDevice(DEMO, keep_dir=tmp_path) as device:
        first = device.acquire(0.01)
        second = device.acquire(0.02)
    assert (first.n_samples, second.n_samples) == (1_000, 2_000)
    assert [p.name for p in sorted(tmp_path.glob("*.sr"))] == ["capture-0001.sr", "capture-0002.sr"]
    with SigrokDevice(DEMO, keep_dir=tmp_path) as device:
        device.acquire(0.01)
        assert device.last_file == tmp_path / "capture-0003.sr"  # earlier runs kept intact


def test_sigrok_cli_failure_carries_its_stderr() -> None:
    bad = SigrokConfig(driver="demo", channels=("D0", "X9"), samplerate_hz=RATE, trigger="D0",
                       voltage=3.3)
    with SigrokDevice(bad) as device, pytest.raises(InstrumentError, match="unknown channel 'X9'"):
        device.arm(0.0, 0.01, 0.0)
        device.collect(timeout_s=10)


def test_start_refuses_a_mapping_to_channels_not_captured() -> None:
    cfg = DEMO.model_copy(update={"channels": ("D0", "A0")})
    with pytest.raises(ConfigError, match="voltage: channel 'A1' is not captured"):
        SigrokDevice(cfg).start()


def test_unknown_driver_and_missing_binary() -> None:
    with pytest.raises(InstrumentError, match="Driver nosuch not found"):
        SigrokDevice(SigrokConfig(driver="nosuch")).start()
    with pytest.raises(InstrumentError, match="not found: install the Debian package sigrok-cli"):
        SigrokDevice(SigrokConfig(driver="demo", sigrok_cli="/nonexistent/sigrok-cli")).start()


def test_collect_timeout_kills_the_capture_and_the_device_stays_usable(tmp_path: Path) -> None:
    with SigrokDevice(DEMO, keep_dir=tmp_path) as device:
        device.arm(0.0, 30.0, 0.0)
        assert len(sigrok_processes(tmp_path)) == 1
        with pytest.raises(InstrumentError, match="did not finish within 0.2 s"):
            device.collect(timeout_s=0.2)
        assert sigrok_processes(tmp_path) == []
        assert device.acquire(0.01).n_samples == 1_000


def test_stop_ends_a_running_capture(tmp_path: Path) -> None:
    device = SigrokDevice(DEMO, keep_dir=tmp_path)
    device.start()
    try:
        device.arm(0.0, 30.0, 0.0)
        assert len(sigrok_processes(tmp_path)) == 1
    finally:
        device.stop()
    assert sigrok_processes(tmp_path) == []


def test_misuse_is_reported() -> None:
    device = SigrokDevice(DEMO)
    with pytest.raises(InstrumentError, match="before start"):
        device.arm(0.0, 0.01, 0.0)
    with device:
        with pytest.raises(InstrumentError, match="without arm"):
            device.collect(timeout_s=1)
        device.arm(0.0, 0.5, 0.0)
        with pytest.raises(InstrumentError, match="already running"):
            device.arm(0.0, 0.5, 0.0)
    with SigrokDevice(SigrokConfig(driver="demo")) as device:
        with pytest.raises(InstrumentError, match="no samplerate_hz"):
            device.arm(0.0, 0.01, 0.0)
    with SigrokDevice(DEMO) as device, pytest.raises(ValueError, match="pre_s must be >= 0"):
        device.arm(-0.1, 0.01, 0.0)


def test_describe_and_limits() -> None:
    """The scanned model and the ``--driver`` spec name it; a recorder of the set rate."""
    with SigrokDevice(DEMO) as device:
        info = device.describe()
        limits = device.limits()
    assert info == InstrumentInfo("sigrok", "Demo device", "demo", RATE, info.details)
    assert info.details["shunt_ohms"] == 10.0 and info.details["channels"] == ["D0", "D1", "A0", "A1"]
    assert info.to_dict()["sample_rate_hz"] == RATE and info.to_dict()["name"] == "Demo device"
    assert limits == Limits(sample_rate_hz=RATE, max_record_s=None, stream_lag_s=0.0)


def test_without_a_sample_rate_limits_refuse_and_describe_says_none() -> None:
    device = SigrokDevice(SigrokConfig(driver="demo"))
    with pytest.raises(InstrumentError, match="no samplerate_hz configured"):
        device.limits()
    assert device.describe().to_dict()["sample_rate_hz"] is None
