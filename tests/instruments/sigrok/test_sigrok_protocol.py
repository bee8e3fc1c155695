"""sigrok-cli command building and reply parsing, by the exact argv and text."""
from __future__ import annotations

from pathlib import Path

import pytest

from pydantic import ValidationError

from energyrig.errors import ConfigError
from energyrig.instruments.sigrok.config import SigrokConfig
from energyrig.instruments.sigrok.protocol import (
    ScannedDevice,
    capture_argv,
    check_reader_channels,
    driver_spec,
    parse_scan,
    samples_for,
    scan_argv,
)


def test_capture_argv_full() -> None:
    cfg = SigrokConfig(driver="hantek-6xxx", conn="1.6", driver_options={"probe_factor": "10"},
                       channels=("CH1", "CH2"), samplerate_hz=1e6, config={"coupling": "DC"},
                       sigrok_cli="/usr/bin/sigrok-cli")
    assert capture_argv(cfg, Path("/tmp/x/capture-0001.sr"), 250_000) == [
        "/usr/bin/sigrok-cli", "--driver", "hantek-6xxx:conn=1.6:probe_factor=10",
        "--config", "samplerate=1000000:coupling=DC", "--channels", "CH1,CH2",
        "--samples", "250000", "--output-format", "srzip",
        "--output-file", "/tmp/x/capture-0001.sr"]


def test_capture_argv_minimal() -> None:
    assert capture_argv(SigrokConfig(driver="demo"), Path("c.sr"), 10) == [
        "sigrok-cli", "--driver", "demo", "--samples", "10", "--output-format", "srzip",
        "--output-file", "c.sr"]


def test_driver_spec_conn_first() -> None:
    cfg = SigrokConfig(driver="fx2lafw", conn="3.12", driver_options={"x": "1"})
    assert driver_spec(cfg) == "fx2lafw:conn=3.12:x=1"


@pytest.mark.parametrize(("options", "field"), [
    (dict(config={"a": "b:c"}), "config"),
    (dict(driver_options={"k:v": "1"}), "driver_options"),
    (dict(conn="usb:1.6"), "conn"),
    (dict(samplerate_hz=1.5), "samplerate_hz"),
    (dict(samplerate_hz=-1e6), "samplerate_hz"),
])
def test_unrepresentable_options_are_refused_by_the_config(options: dict[str, object],
                                                           field: str) -> None:
    """What sigrok-cli's ``:``-separated options cannot carry is a fixture error at load."""
    with pytest.raises(ValidationError) as info:
        SigrokConfig(driver="demo", **options)  # type: ignore[arg-type]
    assert info.value.errors()[0]["loc"] == (field,)


@pytest.mark.parametrize(("total", "rate", "samples"), [
    (0.5, 100_000, 50_000),
    (0.1 + 0.2, 10, 3),          # 3.0000000000000004 samples: float noise, not a 4th sample
    (1.5e-6, 1_000_000, 2),      # rounds up: the window is never cut short
    (0.0, 1_000_000, 1),
])
def test_samples_for(total: float, rate: float, samples: int) -> None:
    assert samples_for(total, rate) == samples


@pytest.mark.parametrize("total", [-0.1, float("inf"), float("nan")])
def test_samples_for_rejects_impossible_durations(total: float) -> None:
    with pytest.raises(ConfigError, match="finite time"):
        samples_for(total, 1e6)


def test_scan_argv() -> None:
    assert scan_argv() == ["sigrok-cli", "--scan"]
    assert scan_argv("sc", "demo:analog_channels=1") == ["sc", "--driver", "demo:analog_channels=1",
                                                         "--scan"]


def test_parse_scan() -> None:
    text = (
        "The following devices were found:\n"
        "demo - Demo device with 13 channels: D0 D1 D2 D3 D4 D5 D6 D7 A0 A1 A2 A3 A4\n"
        "fx2lafw:conn=1.6 - Saleae Logic with 8 channels: D0 D1 D2 D3 D4 D5 D6 D7\n"
        "hantek-6xxx:conn=3.9 - Hantek 6022BE with 2 channels: CH1 CH2\n"
        "\n")
    assert parse_scan(text) == [
        ScannedDevice("demo", None, "Demo device",
                      ("D0", "D1", "D2", "D3", "D4", "D5", "D6", "D7", "A0", "A1", "A2", "A3", "A4")),
        ScannedDevice("fx2lafw", "1.6", "Saleae Logic", tuple(f"D{i}" for i in range(8))),
        ScannedDevice("hantek-6xxx", "3.9", "Hantek 6022BE", ("CH1", "CH2")),
    ]
    assert parse_scan(text)[1].spec == "fx2lafw:conn=1.6"
    assert parse_scan("") == []


SCANNED = ("D0", "D1", "A0", "A1")


@pytest.mark.parametrize(("channels", "reader", "field"), [
    ((), dict(trigger="D0", current="A0", voltage="A1"), None),
    (("D0", "A0"), dict(trigger="D0", current="A0", voltage=3.3), None),
    (("D0", "A0"), dict(trigger="D0", current="A0", voltage="A1"), "voltage"),
    ((), dict(trigger="D7", current="A0", voltage=3.3), "trigger"),
    ((), dict(current="CH1", voltage=3.3), "current"),
])
def test_check_reader_channels(channels: tuple[str, ...], reader: dict[str, object],
                               field: str | None) -> None:
    cfg = SigrokConfig(driver="demo", channels=channels, **reader)  # type: ignore[arg-type]
    if field is None:
        check_reader_channels(cfg, SCANNED)
        return
    with pytest.raises(ConfigError) as info:
        check_reader_channels(cfg, SCANNED)
    assert info.value.field == field and "is not captured" in str(info.value)
