"""`rig run` and `rig ops` on the simulated bench (the default fixture)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import rig_streams
from support.paths import ROOT
from typer.testing import CliRunner

from energyrig.cli.app import app

SIM = str(ROOT / "fixtures" / "sim.toml")
REQUIRED = ("op", "params", "batch_n", "reps", "time_per_op_s", "time_per_op_ci95_s",
            "energy_per_op_j", "energy_per_op_ci95_j", "net_energy_per_op_j", "baseline_w",
            "cycles_per_op", "flags", "true_energy_per_op_j", "true_net_energy_per_op_j")


def rig(*args: str) -> subprocess.CompletedProcess[str]:
    """The entry point itself (exit codes 1 and 2 are part of the interface)."""
    return subprocess.run([sys.executable, "-c", "from energyrig.cli.app import main; main()",
                           *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_run_json_has_every_figure_and_agrees_with_the_truth() -> None:
    result = CliRunner().invoke(app, ["run", "--op", "aes-cbc-encrypt", "--key-bits", "128",
                                      "--payload-bytes", "64", "--reps", "3", "--fixture", SIM,
                                      "--min-samples", "5000", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert all(key in doc for key in REQUIRED)
    assert doc["op"] == "aes-cbc-encrypt" and doc["reps"] == 3 and doc["status"] == "ok"
    assert doc["params"] == {"key_bits": 128, "payload_bytes": 64, "curve": None,
                             "backend": "software"}
    low, high = doc["energy_per_op_ci95_j"]
    assert low <= doc["energy_per_op_j"] <= high
    assert abs(doc["net_energy_per_op_j"] / doc["true_net_energy_per_op_j"] - 1) < 5e-3
    assert doc["samples_per_window"] >= 5000 and isinstance(doc["flags"], list)
    assert doc["cycles_per_op"] > 0 and 0 < doc["baseline_w"] < doc["mean_power_w"]
    # current and charge at the fixture's supply voltage (fixtures/sim.toml: 3 V)
    assert doc["supply_v"] == 3.0
    assert doc["mean_current_a"] == doc["mean_power_w"] / 3.0
    assert doc["net_charge_per_op_c"] == doc["net_energy_per_op_j"] / 3.0
    assert doc["charge_per_op_c"] == doc["energy_per_op_j"] / 3.0


@pytest.mark.slow
def test_run_prints_a_table_with_readable_units(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", "--op", "sha256", "--payload-bytes", "32",
                                      "--reps", "2", "--fixture", SIM, "--keep-captures", "all",
                                      "--captures-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    kept = sorted(p.name for p in tmp_path.glob("*/*.csv"))
    assert kept == ["w0000.csv", "w0001.csv"]
    for text in ("time per op", "energy per op (net of idle)", "nWh", "95 % CI",
                 "mean current", "charge per op (net)", "Ah)",
                 "cycles per op (firmware)", "net error vs truth", "flags"):
        assert text in result.stdout
    assert "nJ" in result.stdout or "µJ" in result.stdout


@pytest.mark.slow
def test_ops_lists_the_catalogue() -> None:
    result = CliRunner().invoke(app, ["ops", "--fixture", SIM])
    assert result.exit_code == 0, result.output
    for name in ("aes-ecb-encrypt", "sha3-256", "ecdsa-sign", "rsa-keygen"):
        assert name in result.stdout
    doc = json.loads(CliRunner().invoke(app, ["ops", "--fixture", SIM, "--json"]).stdout)
    assert {"name": "ecdh-shared", "family": "public-key", "backend": "software",
            "key_bits": [], "curves": ["p256", "x25519"], "payload": None} in doc


@pytest.mark.slow
def test_a_failed_measurement_exits_1_and_a_bad_fixture_2(
        sim_fixture: Callable[..., Path]) -> None:
    # A stream too corrupt to trust fails the point after the bench has measured it.
    corrupt = sim_fixture(to="corrupt.toml", **{"sim.power.corrupt_rate": 0.01})
    failed = rig("run", "--op", "sha256", "--payload-bytes", "64", "--reps", "2",
                 "--fixture", str(corrupt), "--json")
    assert failed.returncode == 1
    doc = json.loads(failed.stdout)
    assert doc["status"] == "failed" and "integrity checks" in doc["reason"]
    bad = sim_fixture(to="bad.toml", **{"instrument.supply_v": 9.0})
    out = rig("run", "--op", "sha256", "--fixture", str(bad))
    assert out.returncode == 2
    assert f"{bad}: instrument.supply_v: must be between 0.8 and 5.0 V" in out.stderr
    assert rig("run", "--op", "sha256", "--batch", "many").returncode == 2


@pytest.mark.parametrize("args, option, problem", [
    (["--op", "sha265", "--payload-bytes", "64"], "--op",
     "'sha265' is not in the firmware's catalogue; did you mean sha256"),
    (["--op", "sha256"], "--payload-bytes", "sha256 needs a payload size (1..1048576 bytes)"),
    (["--op", "ecdsa-sign", "--curve", "x25519", "--payload-bytes", "32"], "--curve",
     "x25519 is not allowed for ecdsa-sign (allowed: p256, p384, secp256k1)"),
    (["--op", "aes-cbc-encrypt", "--payload-bytes", "16"], "--key-bits",
     "aes-cbc-encrypt needs one (allowed: 128, 192, 256)"),
    (["--op", "aes-cbc-encrypt", "--key-bits", "100", "--payload-bytes", "16"], "--key-bits",
     "100 is not allowed for aes-cbc-encrypt"),
    (["--op", "rsa-keygen", "--key-bits", "2048", "--payload-bytes", "32"], "--payload-bytes",
     "rsa-keygen takes no payload"),
    (["--op", "sha256", "--payload-bytes", "64", "--backend", "hardware"], "--backend",
     "sha256 has no hardware backend in the firmware"),
])
@pytest.mark.slow
def test_run_checks_the_point_against_the_catalogue_before_the_bench_opens(
        args: list[str], option: str, problem: str) -> None:
    out = rig("run", *args, "--fixture", SIM)
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()  # one line: no warning, no DUT path
    assert f"Invalid value for {option}: {problem}" in line and "/dev/" not in line


def test_ops_keeps_the_catalogue_of_a_program_until_a_file_it_came_from_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        sim_fixture: Callable[..., Path]) -> None:
    from energyrig.rig.opscache import CACHE_ENV, firmware_catalogue
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    program = tmp_path / "dut"
    shutil.copy2(ROOT / "build" / "host" / "energyrig-dut", program)
    fixture = sim_fixture(to="sim.toml", **{"dut.command": [str(program)]})
    first = firmware_catalogue(fixture)
    assert first.source == "dut" and "sha256" in {o.name for o in first.ops}
    again = firmware_catalogue(fixture)
    assert again.source == "cache"
    assert (again.hello, again.ops) == (first.hello, first.ops)
    assert firmware_catalogue(fixture, refresh=True).source == "dut"
    program.write_bytes(program.read_bytes() + b"\0")  # rebuilt: another size
    assert firmware_catalogue(fixture).source == "dut"
    assert firmware_catalogue(fixture).source == "cache"
    fixture.write_text(fixture.read_text() + "\n")     # edited
    assert firmware_catalogue(fixture).source == "dut"
    # An unreadable entry is a miss, not an error.
    for entry in (tmp_path / "cache" / "ops").iterdir():
        entry.write_text("{not json")
    assert firmware_catalogue(fixture).source == "dut"
    # The CLI shows the same catalogue from the cache.
    result = CliRunner().invoke(app, ["ops", "--fixture", str(fixture), "--json"])
    assert result.exit_code == 0, result.output
    assert [o["name"] for o in json.loads(result.stdout)] == [o.name for o in first.ops]


def test_a_wrong_keep_captures_is_a_usage_error_before_any_bench(tmp_path: Path) -> None:
    for args in (["run", "--op", "sha256", "--payload-bytes", "32"],
                 ["sweep", str(ROOT / "plans" / "quick.toml"), "--out", str(tmp_path / "r")]):
        result = CliRunner().invoke(app, [*args, "--keep-captures", "some"])
        assert result.exit_code == 2 and "none, flagged, all" in result.output
    assert not (tmp_path / "r").exists()
    result = CliRunner().invoke(app, ["sweep", "--resume", str(tmp_path / "r"),
                                      "--keep-captures", "all"])
    assert result.exit_code == 2 and "keeps the policy the run began with" in result.output


def test_rig_run_again_in_one_process_builds_its_command_once(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import typer.main

    from energyrig.cli import app as app_module

    built = []
    get_command = typer.main.get_command
    monkeypatch.setattr(typer.main, "get_command", lambda a: built.append(a) or get_command(a))
    app_module._command.cache_clear()
    try:
        for _ in range(2):
            assert rig_streams(monkeypatch, capsys, "ops", "--help")[0] == 0
            assert rig_streams(monkeypatch, capsys, "no-such-command")[0] == 2
    finally:
        app_module._command.cache_clear()  # the next test's command is Typer's own again
    assert built == [app]
