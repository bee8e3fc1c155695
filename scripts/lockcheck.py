"""The locked set (requirements/lock.txt) against the Python distributions installed.

Used by scripts/install-deps.sh (with the venv's Python) and by tests/test_lock.py:

    python scripts/lockcheck.py requirements/lock.txt               differences; exit 1 if any
    python scripts/lockcheck.py requirements/lock.txt --extraneous  names installed, not locked
    python scripts/lockcheck.py requirements/lock.txt --entry NAME  NAME's locked requirement
                                                                    with its hashes

Names are compared normalised (PEP 503: ``PyVISA-py`` is ``pyvisa-py``). The project itself
(``energyrig``, installed editable from the tree) is the one distribution outside the lock.
"""
from __future__ import annotations

import argparse
import re
import sys
from importlib.metadata import distributions
from pathlib import Path

#: Installed from the work tree, not from the lock.
OWN = frozenset({"energyrig"})
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def normalise(name: str) -> str:
    """A distribution's name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def entries(lock: Path) -> dict[str, str]:
    """Each locked requirement, name → its text (``name==version \\`` and hash lines)."""
    found: dict[str, str] = {}
    name = None
    for line in lock.read_text(encoding="utf-8").splitlines():
        if m := _PIN.match(line):
            name = normalise(m.group(1))
            found[name] = line
        elif name is not None and line.startswith("    --hash="):
            found[name] += "\n" + line
        else:
            name = None
    return found


def locked(lock: Path) -> dict[str, str]:
    """Name → version of every distribution in the lock."""
    return {name: _PIN.match(text).group(2)  # type: ignore[union-attr]
            for name, text in entries(lock).items()}


def installed() -> dict[str, str]:
    """Name → version of every distribution the running Python sees."""
    return {normalise(d.metadata["Name"]): d.version for d in distributions()}


def differences(lock: Path) -> list[str]:
    """One line per distribution whose installed version is not the locked one (missing,
    another version, or installed without being locked); none when they are equal."""
    want, have = locked(lock), installed()
    lines = [f"{name}: locked {version}, installed {have.get(name, 'none')}"
             for name, version in sorted(want.items()) if have.get(name) != version]
    lines += [f"{name}: installed {have[name]}, not locked"
              for name in sorted(set(have) - set(want) - OWN)]
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="The locked set against what is installed.")
    parser.add_argument("lock", type=Path)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--extraneous", action="store_true",
                      help="print the names installed but not locked")
    mode.add_argument("--entry", metavar="NAME", help="print NAME's locked requirement")
    args = parser.parse_args(argv)
    if args.extraneous:
        print("\n".join(sorted(set(installed()) - set(locked(args.lock)) - OWN)))
        return 0
    if args.entry:
        print(entries(args.lock)[normalise(args.entry)])
        return 0
    diff = differences(args.lock)
    for line in diff:
        print(f"{args.lock}: {line}", file=sys.stderr)
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
