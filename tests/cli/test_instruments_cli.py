"""``rig instruments`` and ``rig instruments check`` against real sigrok-cli and the emulators."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import RigCli
from support.paths import ROOT
from typer.testing import CliRunner

from energyrig.cli.app import app
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.ppk2.emulator import Ppk2Emulator
from energyrig.instruments.scope.emulator import ScopeEmulator

runner = CliRunner()

REAL_DUT = """
[dut]
board = "nrf52840dk_nrf52840"
link = "pty"
command = ["{dut}"]
"""


def fixture(tmp_path: Path, instrument: str) -> Path:
    path = tmp_path / "bench.toml"
    path.write_text(REAL_DUT.format(dut=ROOT / "build/host/energyrig-dut")
                    + "\n[instrument]\n" + instrument)
    return path


def test_list_finds_the_sigrok_demo_device() -> None:
    result = runner.invoke(app, ["instruments", "--source", "sigrok", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["found"]
    demo = [f for f in found if f["kind"] == "sigrok" and f["address"] == "demo"]
    assert demo and 'driver = "demo"' in demo[0]["fixture"]


def test_list_table_and_unknown_source() -> None:
    result = runner.invoke(app, ["instruments", "-s", "ppk2", "-s", "scope"])
    assert result.exit_code == 0, result.output
    assert "instruments found" in result.output or "no instruments found" in result.output
    bad = runner.invoke(app, ["instruments", "-s", "gpib"])
    assert bad.exit_code == 2 and "unknown source 'gpib'" in bad.output


def test_check_ppk2_answers(tmp_path: Path) -> None:
    with Ppk2Emulator(PowerModel()) as emu:
        path = fixture(tmp_path, f'kind = "ppk2"\nport = "{emu.port}"\n')
        result = runner.invoke(app, ["instruments", "check", "--fixture", str(path), "--json"])
    assert result.exit_code == 0, result.output
    (check,) = json.loads(result.output)
    assert check["part"] == "instrument" and check["ok"] and emu.port in check["target"]
    assert check["detail"] == f"PPK2 (HW 9173) at {emu.port}"  # the emulator's calibration


def test_check_scope_answers_and_a_dead_one_does_not(tmp_path: Path) -> None:
    model = PowerModel(supply_v=3.3, idle_a=0.02, active_a=0.045)
    with ScopeEmulator(model, dialect="keysight-x") as emu:
        path = fixture(tmp_path, f'kind = "scope"\nresource = "{emu.resource}"\n'
                                 'dialect = "auto"\nmax_current_a = 0.08\n')
        result = runner.invoke(app, ["instruments", "check", "--fixture", str(path), "--json"])
        dead = emu.resource
    assert result.exit_code == 0, result.output
    (check,) = json.loads(result.output)
    assert check["ok"] and "DSOX3034T" in check["detail"]
    assert check["detail"].endswith(f" at {emu.resource}")
    path.write_text(path.read_text().replace(emu.resource, dead))
    result = runner.invoke(app, ["instruments", "check", "--fixture", str(path), "--json"])
    assert result.exit_code == 1
    (check,) = json.loads(result.output)
    assert not check["ok"] and "cannot reach the scope" in check["detail"]
    table = runner.invoke(app, ["instruments", "check", "--fixture", str(path)])
    assert table.exit_code == 1 and "NO" in table.output


def test_check_scope_of_another_family_says_so(tmp_path: Path) -> None:
    with ScopeEmulator(PowerModel(supply_v=3.3), dialect="keysight-x") as emu:
        path = fixture(tmp_path, f'kind = "scope"\nresource = "{emu.resource}"\n'
                                 'dialect = "rigol-ds1000z"\n')
        result = runner.invoke(app, ["instruments", "check", "--fixture", str(path), "--json"])
    assert result.exit_code == 1
    (check,) = json.loads(result.output)
    assert not check["ok"] and "not a Rigol DS1000Z" in check["detail"]


@pytest.mark.slow
def test_check_simulated_scope_bench_opens() -> None:
    result = runner.invoke(app, ["instruments", "check", "--fixture",
                                 str(ROOT / "fixtures/sim-scope.toml"), "--json"])
    assert result.exit_code == 0, result.output
    (check,) = json.loads(result.output)
    assert check["part"] == "bench" and check["ok"] and "DS1104Z" in check["detail"]
    assert "::SOCKET" in check["detail"]  # the emulator's address


@pytest.mark.slow
def test_check_simulated_ppk2_bench_names_the_instrument_and_its_pty() -> None:
    result = runner.invoke(app, ["instruments", "check", "--fixture",
                                 str(ROOT / "fixtures/sim.toml"), "--json"])
    assert result.exit_code == 0, result.output
    (check,) = json.loads(result.output)
    assert check["ok"] and "instrument PPK2 (HW 9173) at /dev/pts/" in check["detail"]


def test_check_sigrok_names_the_model_and_the_driver(tmp_path: Path) -> None:
    path = fixture(tmp_path, 'kind = "sigrok"\ndriver = "demo"\nsamplerate_hz = 100000\n')
    result = runner.invoke(app, ["instruments", "check", "--fixture", str(path), "--json"])
    assert result.exit_code == 0, result.output
    (check,) = json.loads(result.output)
    assert check["target"] == "sigrok demo" and check["detail"] == "Demo device at demo"


@pytest.mark.parametrize("name", ["sim-scope", "nrf52840dk-ppk2", "esp32-rigol-ds1054z",
                                  "nucleo-hantek6022-sigrok"])
def test_example_fixtures_load(name: str) -> None:
    from energyrig.fixtures import load_fixture
    from energyrig.instruments.registry import family

    fx = load_fixture(ROOT / "fixtures" / f"{name}.toml")
    assert fx.name == name and isinstance(fx.instrument, family(fx.instrument.kind).config)


def test_malformed_fixture_exits_2_naming_the_field(tmp_path: Path, rig_cli: RigCli) -> None:
    path = fixture(tmp_path, 'kind = "scope"\nresource = "TCPIP::x::INSTR"\nsupply = 2\n')
    done = rig_cli("instruments", "check", "--fixture", str(path))
    assert done.returncode == 2
    assert "bench.toml: instrument" in done.stderr and "channels must differ" in done.stderr


def test_a_visa_resource_is_identified_with_its_dialect() -> None:
    from energyrig.instruments.scope.family import identify

    with ScopeEmulator(PowerModel(supply_v=3.3), dialect="keysight-x") as emu:
        found = identify(emu.resource, "@py", 2.0)
    assert "DSOX3034T" in found.description and 'dialect = "keysight-x"' in found.fixture
    silent = identify(emu.resource, "@py", 1.0)          # closed now
    assert silent.description.startswith("does not answer *IDN?")
