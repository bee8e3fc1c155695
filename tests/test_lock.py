"""The locked installs (requirements/lock.txt, scripts/install-deps.sh): the environment the
tests run in holds exactly the locked set, and the lock is the one pyproject.toml asks for."""
from __future__ import annotations

import importlib.util
import sys
import tomllib

import pytest
from support.paths import ROOT
from packaging.requirements import Requirement

LOCK = ROOT / "requirements" / "lock.txt"


def _lockcheck():
    spec = importlib.util.spec_from_file_location("lockcheck", ROOT / "scripts" / "lockcheck.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lockcheck = _lockcheck()


def test_the_installed_set_is_the_lock():
    """`make test` installs only locked versions (scripts/install-deps.sh): every locked
    distribution at its version, nothing else but the project itself. On a mismatch the venv
    was installed otherwise (by hand, or before the lock): `rm .venv/.energyrig-installed &&
    make deps` syncs it."""
    assert lockcheck.differences(LOCK) == [], f"{sys.prefix} is not the locked set"


def test_a_version_other_than_the_locked_one_is_named(tmp_path):
    installed = lockcheck.installed()
    lock = tmp_path / "lock.txt"
    lock.write_text("".join(f"{name}=={version} \\\n    --hash=sha256:{'0' * 64}\n"
                            for name, version in installed.items()
                            if name not in lockcheck.OWN | {"numpy", "pytest"})
                    + "numpy==0.0.1 \\\n    --hash=sha256:" + "1" * 64 + "\n")
    assert lockcheck.differences(lock) == [
        f"numpy: locked 0.0.1, installed {installed['numpy']}",
        f"pytest: installed {installed['pytest']}, not locked"]


def test_every_locked_file_has_its_hash():
    text = LOCK.read_text(encoding="utf-8")
    entries = lockcheck.entries(LOCK)
    assert len(entries) == text.count("==")  # every pin was read
    assert all("--hash=sha256:" in entry for entry in entries.values())


def _requirements() -> list[Requirement]:
    """What pyproject.toml and requirements/tools.in ask for (the project's own extras
    resolved to their contents)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"], *(r for extra in project["optional-dependencies"]
                                          .values() for r in extra)]
    wanted += [line for line in (ROOT / "requirements" / "tools.in").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    return [r for r in map(Requirement, wanted) if r.name != project["name"]]


@pytest.mark.parametrize("requirement", _requirements(), ids=str)
def test_the_lock_satisfies_pyproject(requirement):
    """A range changed in pyproject.toml without a new lock (scripts/refresh-lock.sh) fails
    here rather than on a fresh machine."""
    locked = lockcheck.locked(LOCK)
    name = lockcheck.normalise(requirement.name)
    assert name in locked, f"{requirement.name} is not locked"
    assert requirement.specifier.contains(locked[name], prereleases=True), \
        f"{requirement.name}=={locked[name]} is outside {requirement.specifier}"
