"""The Makefile's commands as the tests read them (``make -n``: nothing run)."""
from __future__ import annotations

import shlex
import subprocess

from support.paths import ROOT


def pytest_line(target: str) -> list[str]:
    """The words of the pytest command ``make TARGET`` runs (``make -n``: nothing run)."""
    done = subprocess.run(["make", "-n", "-s", target], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    text = done.stdout.replace("\\\n", " ")
    line = next(line for line in text.splitlines() if "-m pytest" in line)
    return shlex.split(line)
