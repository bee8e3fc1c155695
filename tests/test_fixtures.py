"""Fixture loading: the default fixture, and errors that name the file and the field."""
from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest
from support.paths import ROOT

from energyrig.errors import ConfigError
from energyrig.fixtures import load_fixture
from energyrig.fixtures.loader import resolve_command
from energyrig.fixtures.paths import FIXTURE_ENV, default_fixture_path
from energyrig.instruments.ppk2.config import Ppk2Config
from energyrig.instruments.registry import family
from energyrig.instruments.ppk2.driver import Ppk2
from energyrig.instruments.sigrok.device import SigrokDevice

SIM = ROOT / "fixtures" / "sim.toml"

GOOD = """
[dut]
link = "stdio"
command = ["bin/dut"]
[instrument]
kind = "ppk2"
port = "/dev/ttyACM0"
"""


def write(tmp_path: Path, text: str, name: str = "x.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_default_fixture_is_the_simulated_bench() -> None:
    fx = load_fixture(SIM)
    assert fx.simulated and fx.dut.link == "pty"
    assert isinstance(fx.instrument, Ppk2Config) and fx.instrument.supply_v == 3.0
    program = Path(resolve_command(fx)[0])
    assert program == ROOT / "build" / "host" / "energyrig-dut"
    assert fx.sim is not None and fx.sim.power.profile == "nrf52840"
    assert fx.measure.min_window_samples == 2000 and fx.measure.max_edge_error == 1e-3


def test_default_path_honours_the_environment(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv(FIXTURE_ENV, str(tmp_path / "mine.toml"))
    assert default_fixture_path() == tmp_path / "mine.toml"
    monkeypatch.delenv(FIXTURE_ENV)
    monkeypatch.chdir(tmp_path)
    assert default_fixture_path() == SIM


def test_relative_commands_resolve_against_the_fixture(tmp_path: Path) -> None:
    fx = load_fixture(write(tmp_path, GOOD))
    assert resolve_command(fx) == (str(tmp_path / "bin" / "dut"),)
    assert not fx.simulated


@pytest.mark.parametrize(("replace", "field", "problem"), [
    ('port = "/dev/ttyACM0"', "instrument.supply_v", "must be between 0.8 and 5.0 V"),
    ('kind = "ppk2"', "instrument.kind", "unknown kind 'scopey' (known: joulescope, ppk2, scope, sigrok)"),
    ('link = "stdio"', "dut.link", "input should be 'serial', 'pty' or 'stdio'"),
    ('command = ["bin/dut"]', "dut.comand", "unknown field (misspelt?)"),
    ('command = ["bin/dut"]', "dut", "link = 'stdio' needs command"),
])
def test_errors_name_the_file_and_the_field(tmp_path: Path, replace: str, field: str,
                                            problem: str) -> None:
    new = {"instrument.supply_v": 'port = "/dev/ttyACM0"\nsupply_v = 7.5',
           "instrument.kind": 'kind = "scopey"',
           "dut.link": 'link = "usb"',
           "dut.comand": 'comand = ["bin/dut"]',
           "dut": ""}[field]
    path = write(tmp_path, GOOD.replace(replace, new))
    with pytest.raises(ConfigError) as info:
        load_fixture(path)
    assert info.value.path == str(path) and info.value.field == field
    assert problem in str(info.value)
    assert str(info.value).startswith(f"{path}: {field}: ")


def test_bad_toml_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"x\.toml: not valid TOML \(.*line 2"):
        load_fixture(write(tmp_path, "[dut]\nlink = \n"))
    with pytest.raises(ConfigError, match="nope.toml: no such fixture file"):
        load_fixture(tmp_path / "nope.toml")


def test_cross_field_rules(tmp_path: Path) -> None:
    serial = GOOD.replace('link = "stdio"\ncommand = ["bin/dut"]', 'link = "serial"')
    with pytest.raises(ConfigError, match="dut: link = 'serial' needs port"):
        load_fixture(write(tmp_path, serial))
    short = GOOD + "[measure]\npre_s = 0.005\n"
    with pytest.raises(ConfigError, match=r"measure.pre_s \(0.005 s\) must hold"):
        load_fixture(write(tmp_path, short))
    sim_sigrok = (GOOD.replace('kind = "ppk2"\nport = "/dev/ttyACM0"', 'kind = "sigrok"\n'
                               'driver = "demo"') + "[sim]\n")
    with pytest.raises(ConfigError, match="instrument.kind: the simulated bench .* no 'sigrok'"):
        load_fixture(write(tmp_path, sim_sigrok))
    fault = GOOD + "[sim.power]\ndrop_rate = 1.5\n"
    with pytest.raises(ConfigError, match="sim.power.drop_rate: input should be less than 1"):
        load_fixture(write(tmp_path, fault))


def test_every_kind_builds_its_instrument_without_branches(tmp_path: Path) -> None:
    ppk2 = load_fixture(write(tmp_path, GOOD))
    device = family("ppk2").open(ppk2.instrument, None)
    assert isinstance(device, Ppk2) and device.port == "/dev/ttyACM0"
    assert family("ppk2").open(ppk2.instrument, "/dev/pts/9").port == "/dev/pts/9"  # the pty
    sigrok = load_fixture(write(tmp_path, GOOD.replace(
        'kind = "ppk2"\nport = "/dev/ttyACM0"',
        'kind = "sigrok"\ndriver = "demo"\nsamplerate_hz = 100000\ntrigger = "D0"'), "s.toml"))
    device = family("sigrok").open(sigrok.instrument, None)
    assert isinstance(device, SigrokDevice)
    assert device.config.driver == "demo" and device.reader.trigger == "D0"


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures").glob("*.toml")), ids=lambda p: p.name)
def test_every_bundled_fixture_loads(path: Path) -> None:
    fx = load_fixture(path)
    assert family(fx.instrument.kind).emulator is not None or not fx.simulated


def test_the_hantek_fixture_thresholds_its_analog_trigger() -> None:
    fx = load_fixture(ROOT / "fixtures" / "nucleo-hantek6022-sigrok.toml")
    device = family(fx.instrument.kind).open(fx.instrument, None)
    assert isinstance(device, SigrokDevice)
    reader = device.reader
    assert (reader.trigger, reader.trigger_level_v, reader.trigger_hysteresis_v) == ("CH2", 1.65, 0.2)
    assert device.describe().details["trigger_level_v"] == 1.65


@pytest.mark.parametrize(("keys", "field", "problem"), [
    ('trigger_level_v = 1.65', "instrument", "trigger_level_v/trigger_hysteresis_v need trigger"),
    ('trigger = "A1"\ntrigger_level_v = 1.65\ntrigger_hysteresis_v = -0.1',
     "instrument.trigger_hysteresis_v", "greater than or equal to 0"),
    ('trigger = "A1"\ntrigger_level_v = nan', "instrument.trigger_level_v", "finite number"),
])
def test_sigrok_trigger_level_errors_name_the_field(tmp_path: Path, keys: str, field: str,
                                                    problem: str) -> None:
    path = write(tmp_path, GOOD.replace('kind = "ppk2"\nport = "/dev/ttyACM0"',
                                        f'kind = "sigrok"\ndriver = "demo"\n{keys}'))
    with pytest.raises(ConfigError) as info:
        load_fixture(path)
    assert info.value.field == field and problem in str(info.value)


@pytest.mark.parametrize(("fault", "value"), [("drop_rate", 1e-4), ("corrupt_rate", 1e-4),
                                              ("disconnect_after_s", 5.0)])
def test_a_fault_the_scope_emulator_does_not_emulate_is_refused(
        sim_fixture: Callable[..., Path], fault: str, value: float) -> None:
    path = sim_fixture(base="sim-scope.toml", to="scope.toml", **{f"sim.power.{fault}": value})
    with pytest.raises(ConfigError) as info:
        load_fixture(path)
    assert info.value.field == f"sim.power.{fault}"
    assert "the scope emulator does not emulate this fault" in str(info.value)


@pytest.mark.parametrize(("value", "field", "problem"), [
    (math.nan, "sim.power.offset_a", "finite number"),
    (math.inf, "sim.power.idle_a", "finite number"),
    (-3, "sim.power.supply_v", "greater than 0"),
    (math.nan, "sim.power.gain_error", "finite number"),
])
def test_non_finite_and_out_of_range_model_numbers_are_refused(
        sim_fixture: Callable[..., Path], value: float, field: str, problem: str) -> None:
    path = sim_fixture(to="sim.toml", **{field: value})
    with pytest.raises(ConfigError) as info:
        load_fixture(path)
    assert info.value.field == field and problem in str(info.value)
