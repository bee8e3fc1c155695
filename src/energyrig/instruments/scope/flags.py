"""The oscilloscope family's flag (raised by :class:`energyrig.instruments.scope.driver.Scope`).
Standard library only (:mod:`energyrig.flags`), so the registry loads no VISA."""
from __future__ import annotations

from energyrig.flags import Flag

LOW_SAMPLE_RATE = Flag(
    # the record's samples were taken below the asked-for sample rate (window too long)
    "low_sample_rate",
    "the scope recorded the window below the fixture's sample_rate_hz, its record being "
    "too short for the window at that rate; the figures stay valid, the edges coarser",
    "a smaller batch (the plan's batch, or batch auto, which keeps to the record), or a "
    "scope with a deeper memory")
SCOPE_FLAGS = (LOW_SAMPLE_RATE,)
