"""Where a test finds the repository and its data, whatever folder of tests/ it sits in."""
from __future__ import annotations

from pathlib import Path

#: The repository's root (src/, fixtures/, firmware/, tests/ are below it).
ROOT = Path(__file__).resolve().parents[2]
#: tests/data: the captures and device texts the tests read.
DATA = ROOT / "tests" / "data"
#: The simulated bench's fixture.
SIM = ROOT / "fixtures" / "sim.toml"
