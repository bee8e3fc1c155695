"""`rig lab sim` as a child process of a test."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def rig_lab_sim(places: Sequence[str], fixture: Path | None = None, tmpdir: Path | None = None
                ) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``rig lab sim --places N [--fixture FIXTURE]`` serving ``places`` (checked on its second
    line), with its coordinator's address (its first line); killed on the way out if still
    running. ``tmpdir``: the TMPDIR its folder goes in (default: this process's)."""
    env = None if tmpdir is None else {**os.environ, "TMPDIR": str(tmpdir)}
    rig = subprocess.Popen([sys.executable, "-m", "energyrig.cli.app", "lab", "sim",
                            "--places", str(len(places)),
                            *(["--fixture", str(fixture)] if fixture is not None else [])],
                           stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert rig.stdout is not None
        coordinator = rig.stdout.readline().split()[-1]
        assert rig.stdout.readline().strip() == f"places {','.join(places)}"
        yield rig, coordinator
    finally:
        if rig.poll() is None:
            rig.kill()
        rig.wait()
