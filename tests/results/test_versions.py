"""What a run records of the programs and libraries it used (energyrig.results.versions):
the external programs a sweep runs, each with its version and Debian package, and which
recorded versions can change a run's figures."""
from __future__ import annotations

from support.paths import ROOT

import json
import os
import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path

from energyrig.fixtures import load_fixture
from energyrig.results import versions
from energyrig.rig.sweep.run import _programs
from energyrig.rig.sweep.state import BoardPlan



def _board(fixture: str) -> BoardPlan:
    return BoardPlan(load_fixture(ROOT / "fixtures" / fixture), None, {}, None)  # type: ignore[arg-type]


def test_a_sweep_records_the_programs_it_runs() -> None:
    assert _programs([_board("sim.toml")], lab=False) == []
    assert _programs([_board("nucleo-hantek6022-sigrok.toml")], lab=False) == ["sigrok-cli"]
    assert _programs([_board("sim.toml")], lab=True) == ["ser2net"]  # labgrid's exporter's


def test_a_program_is_recorded_with_its_version_and_debian_package() -> None:
    recorded = versions.collect(["sigrok-cli"])["programs"]["sigrok-cli"]
    printed = subprocess.run(["sigrok-cli", "--version"], capture_output=True, text=True)
    assert recorded["version"] == printed.stdout.splitlines()[0]
    assert recorded["path"] == shutil.which("sigrok-cli")
    if shutil.which("dpkg-query"):
        deb = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "sigrok-cli"],
                             capture_output=True, text=True).stdout
        assert recorded["debian"] == f"sigrok-cli={deb}"


def test_a_program_not_installed_is_recorded_as_such() -> None:
    assert versions.program_version("no-such-program-energyrig") == {
        "path": None, "version": None, "debian": None}


def test_a_program_is_asked_its_version_again_only_once_replaced(tmp_path: Path,
                                                                monkeypatch) -> None:
    program = tmp_path / "prog"

    def install(printed: str) -> None:  # as dpkg does: a new file renamed over the old
        new = tmp_path / "prog.new"
        new.write_text(f"#!/bin/sh\necho '{printed}'\n")
        new.chmod(0o755)
        os.replace(new, program)

    asked: list[str] = []
    run = versions._run
    monkeypatch.setattr(versions, "_run",
                        lambda argv, **kw: asked.append(argv[0]) or run(argv, **kw))
    install("prog 1.0")
    assert versions.program_version(str(program))["version"] == "prog 1.0"
    assert asked.count(str(program)) == 1
    assert versions.program_version(str(program))["version"] == "prog 1.0"
    assert asked.count(str(program)) == 1
    install("prog 2.0.1")
    assert versions.program_version(str(program))["version"] == "prog 2.0.1"
    assert asked.count(str(program)) == 2


def test_python_versions_are_read_again_only_once_a_path_directory_changes(
        tmp_path: Path, monkeypatch) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    read: list[str] = []
    monkeypatch.setattr(versions, "version", lambda name: read.append(name) or "1.0")
    first = versions.python_versions()
    assert first == dict.fromkeys(versions.FIGURE_PACKAGES, "1.0")
    assert read == list(versions.FIGURE_PACKAGES)
    first["numpy"] = "changed by its caller"  # a copy: what is remembered stays
    assert versions.python_versions()["numpy"] == "1.0"
    assert len(read) == len(versions.FIGURE_PACKAGES)
    (site / "pyvisa-9.0.dist-info").mkdir()  # an install: another entry in the directory
    os.utime(site, ns=(0, 1))  # its mtime moved, whatever the clock's resolution
    monkeypatch.setattr(versions, "version", lambda name: read.append(name) or "9.0")
    assert versions.python_versions()["pyvisa"] == "9.0"
    assert len(read) == 2 * len(versions.FIGURE_PACKAGES)


def test_a_second_run_of_the_process_starts_no_child_to_record_its_versions(
        tmp_path: Path, monkeypatch) -> None:
    from energyrig.results import RunWriter
    from energyrig.results.store.read import read_manifest

    RunWriter.create(tmp_path / "one").close()
    asked: list[list[str]] = []
    monkeypatch.setattr(versions, "_run", lambda argv, **kw: asked.append(argv))
    RunWriter.create(tmp_path / "two").close()
    assert asked == []
    one, two = (read_manifest(tmp_path / run) for run in ("one", "two"))
    assert (one["software"], one["versions"]) == (two["software"], two["versions"])
    if shutil.which("dpkg-query"):
        assert two["versions"]["debian"]  # remembered, not lost


def test_only_what_can_change_figures_is_a_change() -> None:
    now = {"software": versions.software(),
           "versions": {"python": versions.python_versions(), "kernels": versions.kernel_builds()}}
    assert versions.figure_changes(now) == []
    assert versions.figure_changes({"software": now["software"]}) == []  # an older run
    then = {**now, "versions": {**now["versions"], "python": {
        **now["versions"]["python"], "pyvisa": "0.1", "scipy": "0.2"}}}
    assert versions.figure_changes(then) == [f"scipy 0.2 → {version('scipy')}"]
    kernel = next(iter(now["versions"]["kernels"]))
    then["versions"]["kernels"] = {**now["versions"]["kernels"], kernel: "sha256:" + "0" * 64}
    assert versions.figure_changes(then)[-1].startswith(f"{kernel} 000000000000 → ")


def test_a_resume_with_other_versions_says_so(tmp_path: Path) -> None:
    from energyrig.results import RunWriter
    from energyrig.results.store.read import read_manifest

    RunWriter.create(tmp_path / "run").close()
    assert "resumed_with" not in read_manifest(tmp_path / "run")
    RunWriter.resume(tmp_path / "run").close()  # same versions: nothing to say
    assert "resumed_with" not in read_manifest(tmp_path / "run")
    manifest = read_manifest(tmp_path / "run")
    manifest["versions"]["python"]["statsmodels"] = "0.1"
    (tmp_path / "run" / "manifest.json").write_text(json.dumps(manifest))
    RunWriter.resume(tmp_path / "run").close()
    (resumed,) = read_manifest(tmp_path / "run")["resumed_with"]
    assert resumed["changes"] == [f"statsmodels 0.1 → {version('statsmodels')}"]
