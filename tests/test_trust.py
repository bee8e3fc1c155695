"""The trust model (docs/security.md): a plan, a run directory or an unpacked archive is data.

A program is planted at every path the rig could be tricked into running — relative to a
symlink, as ``sigrok_cli`` or ``visa_library``, through an edited manifest, from the working
directory — and writes a marker file if it ever runs; each test asserts the marker is absent,
and that the legit path (the trusted fixture's own program) still runs. The rig is run as
the operator runs it: ``rig`` in a working directory of its own.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.paths import ROOT
from support.fixtures import write_fixture

from energyrig.errors import ConfigError
from energyrig.fixtures import load_fixture
from energyrig.fixtures.loader import check_trusted, named_programs, resolve_command
from energyrig.fixtures.paths import (FIXTURE_DIRS_ENV, FIXTURE_ENV, default_fixture_path,
                                      trusted_fixture_dirs)
from energyrig.results import RunError, load
from energyrig.rig.sweep.run import resume_sweep, start_sweep
from energyrig.rig.sweep.stopping import StopRequest
from support.bad_input import GOOD_PLAN
from support.sweep import HASHES, ScriptedBench, factory, make_plan

SIM = ROOT / "fixtures" / "sim.toml"
DUT = ROOT / "build" / "host" / "energyrig-dut"


def one_point_plan(fixture: str | None) -> str:
    """A one-point plan naming ``fixture`` (``None``: none, the default fixture)."""
    text = GOOD_PLAN.format(fixture=fixture)
    return text if fixture is not None else text.replace('fixture = "None"\n', "")


def plant(path: Path, marker: Path) -> Path:
    """An executable at ``path`` that appends its command line to ``marker`` and fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{marker}'\nexit 1\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def rig(cwd: Path, *argv: str, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    """``rig ARGV`` run in ``cwd`` as the console script runs it (the working directory not
    on ``sys.path``), a separate process of this tree's code."""
    environ = {k: v for k, v in os.environ.items() if k != FIXTURE_ENV}
    environ["PYTHONPATH"] = str(ROOT / "src")
    environ.update(env or {})
    return subprocess.run([sys.executable, "-P", "-m", "energyrig.cli.app", *argv], cwd=cwd,
                          env=environ, capture_output=True, text=True, timeout=600)


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "planted-program-ran"


@pytest.fixture
def trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A trusted fixture directory (``$ENERGYRIG_FIXTURE_DIRS``) holding ``bench.toml``, the
    simulated bench whose ``dut.command`` is relative (``../build/host/energyrig-dut``, the
    real host DUT beside it)."""
    home = tmp_path / "lab"
    (home / "fixtures").mkdir(parents=True)
    (home / "build" / "host").mkdir(parents=True)
    (home / "build" / "host" / "energyrig-dut").symlink_to(DUT)
    shutil.copy(SIM, home / "fixtures" / "bench.toml")
    monkeypatch.setenv(FIXTURE_DIRS_ENV, str(home / "fixtures"))
    return home / "fixtures" / "bench.toml"


@pytest.fixture
def inbox(tmp_path: Path, trusted: Path, marker: Path) -> Path:
    """A folder received from someone else: ``bench.toml``, a symlink to the trusted
    fixture, and a program planted where the fixture's relative command would point if it
    were resolved against the symlink's folder (``inbox/../build/host/energyrig-dut``)."""
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "bench.toml").symlink_to(trusted)
    plant(tmp_path / "build" / "host" / "energyrig-dut", marker)
    return folder


def sigrok_fixture(folder: Path, program: Path) -> Path:
    """A fixture without a DUT command whose sigrok instrument names ``program``."""
    path = folder / "sigrok.toml"
    path.write_text(textwrap.dedent(f"""\
        [dut]
        link = "serial"
        port = "/dev/null"
        [instrument]
        kind = "sigrok"
        driver = "demo"
        sigrok_cli = "{program}"
        """), encoding="utf-8")
    return path


# --- relative paths resolve against the file that was trusted --------------------------------

@pytest.mark.slow
def test_a_plan_naming_a_symlink_runs_the_trusted_files_program_only(
        inbox: Path, trusted: Path, marker: Path) -> None:
    (inbox / "plan.toml").write_text(one_point_plan("bench.toml"))
    done = rig(inbox, "sweep", "plan.toml", "--dry-run", "--probe")
    assert not marker.exists(), marker.read_text()
    assert done.returncode == 0, done.stderr            # the trusted DUT ran the probe
    fx = load_fixture(inbox / "bench.toml")
    assert fx.file == trusted.resolve() and fx.path == inbox / "bench.toml"
    assert resolve_command(fx) == (str(DUT.resolve()),)   # the trusted link to it


@pytest.mark.slow
def test_a_manifest_naming_a_symlink_runs_the_trusted_files_program_only(
        tmp_path: Path, inbox: Path, trusted: Path, marker: Path) -> None:
    (inbox / "plan.toml").write_text(one_point_plan(None))
    done = rig(inbox, "sweep", "plan.toml", "--fixture", str(trusted), "--out", "run",
               "--allow-uncalibrated")
    assert done.returncode == 0, done.stderr
    manifest = inbox / "run" / "manifest.json"
    record = json.loads(manifest.read_text())
    assert record["fixture"]["path"] == str(trusted.resolve())
    record["fixture"]["path"] = str(inbox / "bench.toml")    # same bytes: the hash matches
    manifest.write_text(json.dumps(record))
    done = rig(inbox, "sweep", "--resume", "run", "--allow-uncalibrated")
    assert not marker.exists(), marker.read_text()
    assert done.returncode == 0, done.stderr            # resumed on the trusted DUT


def test_a_fixture_cannot_say_which_file_it_came_from(tmp_path: Path, inbox: Path,
                                                     trusted: Path) -> None:
    """``source`` (the resolved file the trust check judges) is the loader's, not a key a
    fixture may set to pass for a trusted file."""
    forged = inbox / "forged.toml"
    forged.write_text(f'source = "{trusted}"\n' + trusted.read_text())
    with pytest.raises(ConfigError, match="forged.toml: source: unknown field"):
        load_fixture(forged)


# --- every field that names a program ---------------------------------------------------------

@pytest.mark.slow
def test_a_plan_cannot_make_the_rig_run_a_sigrok_cli_it_names(
        tmp_path: Path, inbox: Path, marker: Path) -> None:
    sigrok_fixture(inbox, plant(inbox / "bin" / "sigrok-cli", marker))
    (inbox / "plan.toml").write_text(one_point_plan("sigrok.toml"))
    for argv in (["--dry-run"], ["--dry-run", "--probe"], ["--out", "run"]):
        done = rig(inbox, "sweep", "plan.toml", *argv)
        assert not marker.exists(), marker.read_text()
        assert done.returncode == 2, done.stderr
        assert ("plan.toml: fixture: sigrok.toml runs a program (instrument.sigrok_cli) and "
                "is not in a trusted fixture directory") in done.stderr


@pytest.mark.slow
def test_a_run_directory_cannot_make_the_rig_run_a_sigrok_cli_it_names(
        tmp_path: Path, inbox: Path, marker: Path, trusted: Path) -> None:
    """The manifest of a run made on the trusted bench, edited to name an untrusted sigrok
    fixture (with its hash, so only the trust rule stands in the way)."""
    plan = make_plan(inbox, HASHES)
    start_sweep(plan, inbox / "run", fixture=load_fixture(trusted),
                bench_factory=factory(ScriptedBench()))
    fixture = sigrok_fixture(inbox, plant(inbox / "bin" / "sigrok-cli", marker))
    manifest = inbox / "run" / "manifest.json"
    record = json.loads(manifest.read_text())
    record["fixture"].update(path=str(fixture), sha256=hashlib.sha256(fixture.read_bytes()).hexdigest())
    manifest.write_text(json.dumps(record))
    done = rig(inbox, "sweep", "--resume", "run")
    assert not marker.exists(), marker.read_text()
    assert done.returncode == 2, done.stderr
    assert "manifest.json: fixture.path: " in done.stderr and "instrument.sigrok_cli" in done.stderr


@pytest.mark.parametrize(("table", "fields"), [
    ('kind = "sigrok"\ndriver = "demo"\nsigrok_cli = "/opt/x/sigrok-cli"',
     ["instrument.sigrok_cli"]),
    ('kind = "sigrok"\ndriver = "demo"\nsigrok_cli = "my-sigrok-cli"', ["instrument.sigrok_cli"]),
    ('kind = "scope"\nresource = "TCPIP::h::INSTR"\nvisa_library = "/tmp/x/libvisa.so"',
     ["instrument.visa_library"]),
    ('kind = "scope"\nresource = "TCPIP::h::INSTR"\nvisa_library = "@sim"',
     ["instrument.visa_library"]),
    # the defaults are the operator's (sigrok-cli on PATH, pyvisa-py): no program named
    ('kind = "sigrok"\ndriver = "demo"', []),
    ('kind = "scope"\nresource = "TCPIP::h::INSTR"', []),
    ('kind = "ppk2"\nport = "/dev/ttyACM0"', []),
])
def test_every_field_that_names_a_program_falls_under_the_trust_rule(
        tmp_path: Path, table: str, fields: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FIXTURE_DIRS_ENV, raising=False)
    path = tmp_path / "x.toml"
    path.write_text(f'[dut]\nlink = "serial"\nport = "/dev/null"\n[instrument]\n{table}\n')
    fx = load_fixture(path)
    assert named_programs(fx) == fields
    if fields:
        with pytest.raises(ConfigError, match=rf"plan.toml: fixture: .*x.toml runs a program "
                                              rf"\({fields[0]}\)"):
            check_trusted(fx, Path("plan.toml"), "fixture")
        monkeypatch.setenv(FIXTURE_DIRS_ENV, str(tmp_path))   # trusted: fine
    check_trusted(fx, Path("plan.toml"), "fixture")


# --- the working directory --------------------------------------------------------------------

@pytest.mark.slow
def test_the_working_directorys_fixtures_are_data(tmp_path: Path, marker: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An unpacked archive with a ``fixtures/`` folder of its own and an ``energyrig/``
    package: neither its ``fixtures/sim.toml`` becomes the default fixture, nor may its plan
    run its fixtures' programs, nor is its package imported by the emulator the rig starts
    there; the source tree's default bench still runs."""
    monkeypatch.delenv(FIXTURE_DIRS_ENV, raising=False)
    archive = tmp_path / "archive"
    plant(archive / "evil", marker)
    for package in ("energyrig", "energyrig/instruments", "energyrig/instruments/ppk2"):
        (archive / package).mkdir(parents=True)
        (archive / package / "__init__.py").write_text(
            f"open({str(marker)!r}, 'a').write('imported {package}')\n")
    (archive / "energyrig/instruments/ppk2/emulator.py").write_text("")
    (archive / "fixtures").mkdir(parents=True)
    for name in ("sim.toml", "bench.toml"):
        write_fixture(archive / "fixtures" / name, **{"dut.command": ["../evil"]})
    (archive / "plan.toml").write_text(one_point_plan("fixtures/bench.toml"))
    (archive / "mine.toml").write_text(one_point_plan(None))
    monkeypatch.chdir(archive)
    assert trusted_fixture_dirs() == [ROOT / "fixtures"]
    assert default_fixture_path() == SIM
    env = {FIXTURE_DIRS_ENV: ""}
    done = rig(archive, "sweep", "plan.toml", "--dry-run", "--probe", env=env)
    assert done.returncode == 2 and "plan.toml: fixture: " in done.stderr, done.stderr
    assert "runs a program (dut.command) and is not in a trusted" in done.stderr
    done = rig(archive, "sweep", "mine.toml", "--dry-run", "--probe", env=env)
    assert done.returncode == 0, done.stderr           # the source tree's default bench
    done = rig(archive, "ops", "--refresh", env=env)
    assert done.returncode == 0 and "sha256" in done.stdout, done.stderr
    done = rig(archive, "run", "--op", "sha256", "--payload-bytes", "16", env=env)
    assert done.returncode == 0, done.stderr           # the installed package's emulator
    assert not marker.exists(), marker.read_text()
    # Named by the operator, the archive's fixture is theirs to run.
    done = rig(archive, "ops", "--refresh", "--fixture", "fixtures/sim.toml", env=env)
    assert done.returncode != 0 and marker.exists()


def test_a_relative_trusted_directory_is_refused(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``ENERGYRIG_FIXTURE_DIRS=fixtures`` would trust whatever folder ``rig`` is started in."""
    monkeypatch.setenv(FIXTURE_DIRS_ENV, f"{tmp_path}{os.pathsep}fixtures")
    with pytest.raises(ConfigError, match=f"{FIXTURE_DIRS_ENV}: .*'fixtures' is relative"):
        trusted_fixture_dirs()


# --- integrity fields of a run's manifest -----------------------------------------------------

def test_a_manifest_without_the_fixtures_hash_is_not_resumed(
        tmp_path: Path, trusted: Path) -> None:
    """Half a run measured, the fixture's gain then changed and ``fixture.sha256`` deleted:
    the resume refuses (it would store points measured at two gains as ok), and the way out
    it names works."""
    plan = make_plan(tmp_path, HASHES)
    stop = StopRequest()
    first = ScriptedBench(stop=stop, stop_after=12)
    outcome = start_sweep(plan, tmp_path / "run", fixture=load_fixture(trusted),
                          bench_factory=factory(first), stop=stop)
    assert not outcome.complete
    measured = len(load(tmp_path / "run").points)
    write_fixture(trusted, **{"dut.command": ["../build/host/energyrig-dut"],
                              "sim.power.gain_error": 0.05})
    manifest = tmp_path / "run" / "manifest.json"
    record = json.loads(manifest.read_text())
    del record["fixture"]["sha256"]
    manifest.write_text(json.dumps(record))
    unopened = ScriptedBench()
    with pytest.raises(RunError, match="no fixture.sha256, so whether the fixture changed "
                                       "since the run began cannot be checked; resume with "
                                       "--fixture FILE"):
        resume_sweep(tmp_path / "run", bench_factory=factory(unopened))
    assert unopened.opened == 0 and len(load(tmp_path / "run").points) == measured
    # The operator names the fixture: measured on it as it is now.
    outcome = resume_sweep(tmp_path / "run", fixture=load_fixture(trusted),
                           bench_factory=factory(ScriptedBench()))
    assert outcome.complete


def test_a_changed_fixture_can_be_resumed_on_by_naming_it(tmp_path: Path, trusted: Path) -> None:
    """The refusal's way out ("resume with --fixture FILE") is open."""
    plan = make_plan(tmp_path, HASHES)
    stop = StopRequest()
    start_sweep(plan, tmp_path / "run", fixture=load_fixture(trusted),
                bench_factory=factory(ScriptedBench(stop=stop, stop_after=12)),
                stop=stop)
    trusted.write_text(trusted.read_text() + "\n# edited\n")
    with pytest.raises(RunError, match="changed since the run began"):
        resume_sweep(tmp_path / "run", bench_factory=factory(ScriptedBench()))
    outcome = resume_sweep(tmp_path / "run", fixture=load_fixture(trusted),
                           bench_factory=factory(ScriptedBench()))
    assert outcome.complete
