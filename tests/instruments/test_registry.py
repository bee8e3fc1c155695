"""The instrument family registry: every family is one consistent record, a fixture of each
kind round-trips through it, and an unknown kind names the known ones."""
from __future__ import annotations

import importlib
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from support.paths import ROOT
from pydantic import TypeAdapter

from energyrig.errors import ConfigError, InstrumentError
from energyrig.fixtures import load_fixture
from energyrig.instruments.base import Acquisition, InstrumentInfo, Limits
from energyrig.instruments.family import Family
from energyrig.instruments.files import CSV, SALEAE, file_kinds
from energyrig.instruments.registry import FAMILIES, InstrumentConfig, family

#: The smallest ``[instrument]`` table of each kind that opens (an address where one is needed).
TABLES = {
    "ppk2": 'kind = "ppk2"\nport = "/dev/ttyACM0"\n',
    "scope": 'kind = "scope"\nresource = "TCPIP::192.0.2.1::INSTR"\n',
    "sigrok": 'kind = "sigrok"\ndriver = "demo"\nsamplerate_hz = 100000\n',
    "joulescope": 'kind = "joulescope"\n',
    "lpm01a": 'kind = "lpm01a"\nport = "/dev/ttyACM0"\n',
    "otii": 'kind = "otii"\nserver = "192.0.2.1:1905"\n',
}
DUT = '[dut]\nlink = "stdio"\ncommand = ["bin/dut"]\n'


def write(tmp_path: Path, instrument: str, extra: str = "") -> Path:
    path = tmp_path / "bench.toml"
    path.write_text(DUT + "[instrument]\n" + instrument + extra)
    return path


def test_the_tables_cover_every_family() -> None:
    assert set(TABLES) == set(FAMILIES)


@pytest.mark.parametrize("kind", list(FAMILIES))
def test_each_family_is_consistent(kind: str) -> None:
    fam = FAMILIES[kind]
    assert isinstance(fam, Family) and fam.kind == kind and family(kind) is fam
    # the config's kind field is the family's own tag, with it as the default
    assert typing.get_args(fam.config.model_fields["kind"].annotation) == (kind,)
    assert fam.config.model_fields["kind"].default == kind
    # the family lives in its own folder, beside its config model
    assert fam.config.__module__ == f"energyrig.instruments.{kind}.config"
    assert fam.open.__module__ == f"energyrig.instruments.{kind}.family"
    assert importlib.import_module(f"energyrig.instruments.{kind}.family").FAMILY is fam
    if fam.emulator is not None:
        emulator = importlib.import_module(fam.emulator)
        assert hasattr(emulator, "main"), f"{fam.emulator} runs as python -m"
        assert all(isinstance(a, str) for a in fam.emulator_args(fam.config.model_validate(
            {"kind": kind, **({"driver": "demo"} if kind == "sigrok" else {})})))
    for file_kind in fam.file_kinds:
        assert file_kind in file_kinds() and file_kind.extensions
        module, _, function = file_kind.reader.partition(":")
        assert module.startswith(f"energyrig.instruments.{kind}.")
        assert callable(getattr(importlib.import_module(module), function))


def test_the_file_table_is_the_families_kinds_and_the_csv_reader_last() -> None:
    # Saleae Logic 2's export: a recording no family drives, read before the generic CSV.
    assert file_kinds() == (*(k for f in FAMILIES.values() for k in f.file_kinds), SALEAE, CSV)
    extensions = [e for k in file_kinds() for e in k.extensions]
    # Shared on purpose, told apart by content: the app's sessions and the rig's old raw
    # streams; the app's CSV export and the generic CSV; Tektronix's and Rigol's waveforms.
    assert sorted({e for e in extensions if extensions.count(e) > 1}) == [".csv", ".ppk2",
                                                                          ".wfm"]


def test_the_union_is_the_families_configs() -> None:
    union = typing.get_args(InstrumentConfig)[0]
    assert set(typing.get_args(union)) == {f.config for f in FAMILIES.values()}


@pytest.mark.parametrize("kind", list(FAMILIES))
def test_a_fixture_of_each_kind_round_trips(tmp_path: Path, kind: str) -> None:
    """TOML -> the family's config model -> JSON (the manifest) -> the same model; opening
    it gives an acquisition of the family, unstarted, that describes itself."""
    fixture = load_fixture(write(tmp_path, TABLES[kind]))
    config = fixture.instrument
    assert type(config) is FAMILIES[kind].config and config.kind == kind
    dumped = fixture.model_dump(mode="json")["instrument"]
    assert TypeAdapter(InstrumentConfig).validate_python(dumped) == config
    instrument = family(kind).open(config, None)
    assert isinstance(instrument, Acquisition)
    info = instrument.describe()
    assert isinstance(info, InstrumentInfo) and info.kind == kind and info.address
    assert info.to_dict()["kind"] == kind


@pytest.mark.parametrize("kind", list(FAMILIES))
def test_an_address_override_reaches_the_instrument(tmp_path: Path, kind: str) -> None:
    config = load_fixture(write(tmp_path, TABLES[kind])).instrument
    assert "emu-1" in family(kind).open(config, "emu-1").describe().address


def test_an_unknown_kind_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_fixture(write(tmp_path, 'kind = "keithley"\n'))
    assert info.value.field == "instrument.kind"
    assert "unknown kind 'keithley' (known: joulescope, lpm01a, otii, ppk2, scope, sigrok)" in str(info.value)
    with pytest.raises(ConfigError) as missing:
        load_fixture(write(tmp_path, 'port = "/dev/ttyACM0"\n'))
    assert missing.value.field == "instrument.kind" and "needs kind" in str(missing.value)
    with pytest.raises(InstrumentError, match="known: ppk2, scope, sigrok, joulescope, lpm01a, otii"):
        family("keithley")


@pytest.mark.parametrize(("table", "field", "problem"), [
    ('kind = "ppk2"\nsupply_v = 7.5\n', "instrument.supply_v", "must be between 0.8 and 5.0 V"),
    ('kind = "scope"\nshunt = 3\n', "instrument", "channels must differ"),
    ('kind = "sigrok"\ndriver = "demo"\nconn = 5\n', "instrument.conn", "valid string"),
    ('kind = "sigrok"\ndriver = "demo"\nconfig = { a = "b:c" }\n', "instrument.config",
     "cannot contain ':'"),
    ('kind = "ppk2"\nprot = "x"\n', "instrument.prot", "unknown field"),
])
def test_errors_inside_a_table_name_the_field_without_the_kind(tmp_path: Path, table: str,
                                                               field: str, problem: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_fixture(write(tmp_path, table))
    assert info.value.field == field and problem in str(info.value)


def test_a_kind_without_an_emulator_is_refused_on_the_simulated_bench(tmp_path: Path) -> None:
    without = [k for k, f in FAMILIES.items() if f.emulator is None]
    assert without == ["sigrok", "joulescope"]
    with pytest.raises(ConfigError, match="instrument.kind: the simulated bench .* no 'sigrok'"):
        load_fixture(write(tmp_path, TABLES["sigrok"], "[sim]\n"))


def test_limits_turn_a_record_into_the_longest_window() -> None:
    scope = Limits(sample_rate_hz=1e8, max_record_s=0.06, stream_lag_s=0.0, window_margin=2.0)
    assert scope.max_window_s(0.02, 0.005) == pytest.approx(0.0175)
    assert scope.max_window_s(0.05, 0.05) == 0.0 and scope.period_s == 1e-8
    assert Limits(1e5, None, 0.05).max_window_s(0.02, 0.005) is None
    with pytest.raises(ValueError, match="sample_rate_hz"):
        Limits(0.0, None, 0.0)


def test_loading_a_fixture_imports_no_instrument_driver() -> None:
    """The config models and family records are cheap: the CLI stays fast."""
    code = ("import sys; from energyrig.fixtures import load_fixture; "
            "load_fixture('fixtures/sim.toml'); "
            "print(sorted(m for m in ('numpy', 'serial', 'pyvisa') if m in sys.modules))")
    root = ROOT
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=root, check=True)
    assert done.stdout.strip() == "[]"
