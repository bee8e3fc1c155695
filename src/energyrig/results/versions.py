"""Every version a run's figures depend on, for its manifest (``versions``) and for
``rig --version --verbose``; and which of them differ between a run and the rig reading it.

What is recorded:

- ``python``: the Python distributions that can change a figure (:data:`FIGURE_PACKAGES`;
  labgrid's in a lab run), ``None`` for one not installed;
- ``kernels``: the build id of each compiled kernel the package holds, ``sha256:`` of its
  shared object (a rebuild with another compiler or flags is another id);
- ``programs``: the external programs the run uses (sigrok-cli, ser2net, qemu), each with
  the version it prints and the Debian package it came from;
- ``debian``: the Debian packages of the parts the rig runs beside Python (sigrok-cli,
  ser2net, mbedTLS, qemu) installed on this host, ``name → version``.

The firmware's build and toolchain are its ``hello`` reply, recorded in the manifest's
``firmware``.

A run, a report and a lab's coordinator record versions again and again; each answer is
remembered while what it reads is unchanged (:func:`_remembered`): a program's version and
package until its file or the Debian package database is replaced (:func:`_stamp`), a
kernel's id until its shared object is, the Python distributions' versions until a
directory of ``sys.path`` changes (an install, upgrade or removal there adds or removes a
metadata directory), the git revision for the process.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

import energyrig

#: The statistics libraries: a change of their version can move a point's figures.
STATISTICS = ("numpy", "pandas", "scipy", "statsmodels")
#: Every distribution whose version can change a figure: the statistics, the tables' format
#: and each instrument family's driver.
FIGURE_PACKAGES = (*STATISTICS, "pyarrow", "pyvisa", "pyvisa-py", "ppk2-api", "pyjls",
                   "pyjoulescope_driver")
#: Recorded in a lab run only.
LAB_PACKAGES = ("labgrid",)
#: The external programs a run may use (``rig --version --verbose`` shows them all).
PROGRAMS = ("sigrok-cli", "ser2net", "qemu-system-arm")
#: The flag that makes each external program print its version (``--version`` otherwise).
VERSION_FLAGS = {"ser2net": "-v"}
#: Debian packages (dpkg-query patterns) of the parts the rig runs beside Python.
DEBIAN_PACKAGES = ("sigrok-cli", "ser2net", "libmbed*", "qemu-system*")
#: Rewritten by dpkg at every install, upgrade and removal.
DPKG_STATUS = Path("/var/lib/dpkg/status")
_TIMEOUT_S = 10.0

_T = TypeVar("_T")
_answers: dict[Hashable, Any] = {}


def _remembered(key: Hashable, ask: Callable[[], _T | None]) -> _T | None:
    """``ask()``, remembered under ``key`` once it has answered (not None): a failed ask, a
    timeout on a loaded host say, is asked again the next time."""
    if key not in _answers:
        answer = ask()
        if answer is None:
            return None
        _answers[key] = answer
    return _answers[key]


def _stamp(path: str | Path) -> tuple[int, int, int] | None:
    """What changes when ``path`` is replaced or rewritten: its inode, size and modification
    time (ns); None when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _run(argv: list[str], *, check: bool = True, cwd: Path | None = None) -> str | None:
    """A command's standard output, or None when it cannot run (or, with ``check``,
    fails)."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT_S,
                             check=check, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout


def git_revision() -> str | None:
    """The git revision of the source tree energyrig runs from, or None outside git; asked
    once per process (a later checkout does not change the code the process runs)."""
    out = _remembered("git", lambda: _run(["git", "rev-parse", "HEAD"],
                                          cwd=Path(energyrig.__file__).parent))
    return (out or "").strip() or None


def software() -> dict[str, Any]:
    """The rig itself: its version, git revision and Python (the manifest's ``software``)."""
    return {"energyrig": energyrig.__version__, "git_revision": git_revision(),
            "python": platform.python_version()}


def python_versions(*, lab: bool = False) -> dict[str, str | None]:
    """Version of each distribution of :data:`FIGURE_PACKAGES` (and labgrid's with
    ``lab``), None for one not installed."""
    names = (*FIGURE_PACKAGES, *(LAB_PACKAGES if lab else ()))
    paths = tuple((p, _stamp(p)) for p in sys.path if p)
    return dict(_remembered(("python", names, paths), lambda: {
        name: _installed_version(name) for name in names}) or {})


def _installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``, None when it is not installed."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def kernel_builds() -> dict[str, str]:
    """Module name → ``sha256:<hex>`` of each compiled kernel of the package."""
    root = Path(energyrig.__file__).parent
    builds = {}
    for suffix in EXTENSION_SUFFIXES[:1]:  # the one this Python loads first
        for path in sorted(root.rglob(f"_*{suffix}")):
            module = ".".join(("energyrig", *path.relative_to(root).parent.parts,
                               path.name[:-len(suffix)]))
            builds[module] = _remembered(("kernel", path, _stamp(path)), lambda p=path: (
                "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest()))
    return builds


def program_version(program: str) -> dict[str, str | None]:
    """Where ``program`` (a name on PATH or a path) is, the first line of its version and
    its Debian package (``name=version``), each None when unknown."""
    path = shutil.which(program)
    if path is None:
        return {"path": None, "version": None, "debian": None}
    resolved = str(Path(path).resolve())
    printed = _remembered(("version", path, _stamp(resolved)), lambda: _run(
        [path, VERSION_FLAGS.get(Path(path).name, "--version")]))
    owner = _remembered(("owner", resolved, _stamp(DPKG_STATUS)),
                        lambda: _run(["dpkg-query", "-S", resolved]))
    package = owner.split(":", 1)[0] if owner else None
    debian = debian_packages([package]) if package else {}
    lines = (printed or "").strip().splitlines()
    return {"path": path, "version": lines[0] if lines else None,
            "debian": next((f"{k}={v}" for k, v in debian.items()), None)}


def debian_packages(patterns: Iterable[str] = DEBIAN_PACKAGES) -> dict[str, str]:
    """Installed Debian packages matching ``patterns``, name → version (none off Debian)."""
    patterns = tuple(patterns)
    out = _remembered(("debian", patterns, _stamp(DPKG_STATUS)), lambda: _run(
        ["dpkg-query", "-W", "-f", "${db:Status-Abbrev}\t${Package}\t${Version}\n",
         *patterns], check=False)) if patterns else None  # exit 1: one matched none
    found = {}
    for line in (out or "").splitlines():
        status, name, ver = (line.split("\t") + ["", ""])[:3]
        if status.startswith("ii") and ver:
            found[name] = ver
    return found


def collect(programs: Iterable[str] = (), *, lab: bool = False) -> dict[str, Any]:
    """The manifest's ``versions``: Python distributions, kernels, the ``programs`` the run
    uses and this host's Debian packages (module docstring)."""
    return {"python": python_versions(lab=lab), "kernels": kernel_builds(),
            "programs": {Path(p).name: program_version(p) for p in dict.fromkeys(programs)},
            "debian": debian_packages()}


def figure_changes(run: Mapping[str, Any]) -> list[str]:
    """What differs between the rig reading a run and the one that made it, of what can
    change its figures (the statistics libraries, the rig's version, revision and kernels),
    as ``name recorded → now``; empty when nothing does, or when the run predates
    ``versions``."""
    recorded = run.get("versions")
    if not isinstance(recorded, Mapping):
        return []
    was_sw, now_sw = run.get("software") or {}, software()
    was_py, now_py = recorded.get("python") or {}, python_versions()
    kernels = kernel_builds()
    pairs = [("energyrig", was_sw.get("energyrig"), now_sw["energyrig"]),
             ("git revision", was_sw.get("git_revision"), now_sw["git_revision"]),
             *((name, was_py.get(name), now_py.get(name)) for name in STATISTICS),
             *((name, build, kernels.get(name))
               for name, build in (recorded.get("kernels") or {}).items())]
    return [f"{name} {_short(was)} → {_short(now)}" for name, was, now in pairs if was != now]


def _short(value: Any) -> str:
    """A version as a line shows it: a hash cut to 12 characters."""
    text = str(value)
    if text.startswith("sha256:"):
        return text[7:19]
    return text[:12] if len(text) == 40 and all(c in "0123456789abcdef" for c in text) else text
