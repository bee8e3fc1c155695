"""What a sweep holds while it runs: each board's plan and the counts of its outcome."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from energyrig.fixtures.schema import Fixture
from energyrig.results.footprint import Footprint
from energyrig.rig.plan import Expansion

#: Why a lab sweep ended with points left unmeasured (:class:`SweepOutcome`'s ``stopped``).
NO_PLACE_LEFT = "no place left that can take the points left"


@dataclass
class SweepOutcome:
    """Counts of one execution of a sweep (a start or a resume)."""

    run_dir: Path
    total: int
    measured: int = 0
    failed: int = 0
    skipped: int = 0
    already_done: int = 0
    failed_before: int = 0
    target_not_met: int = 0
    #: Points of a lab run handed to another place after theirs died mid-point.
    handed_over: int = 0
    stopped: str = ""

    @property
    def remaining(self) -> int:
        """Points still to measure (resume the run for them)."""
        return self.total - self.already_done - self.measured - self.failed

    @property
    def complete(self) -> bool:
        return self.remaining == 0

    @property
    def all_ok(self) -> bool:
        """Complete, and no point of the run stored as failed (now or before)."""
        return self.complete and self.failed == 0 and self.failed_before == 0


@dataclass(frozen=True)
class BoardPlan:
    """One fixture of a sweep: its board's points and identity, read when the sweep starts."""

    fixture: Fixture
    expansion: Expansion
    hello: dict[str, Any]
    calibration: Mapping[str, Any] | None
    footprint: Footprint | None = None
    #: The instrument's ADC steps (its limits' resolution, for the uncertainty budget), as
    #: the manifest records them: ``rig reanalyze`` takes the budget again with them.
    resolution: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.expansion.target.board
