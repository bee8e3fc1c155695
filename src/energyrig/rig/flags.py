"""The point pipeline's flags (:mod:`energyrig.rig.pipeline`'s checks of a window), and the
one registry of every layer's flags.

:data:`FLAGS` collects the flags each layer declares (:mod:`energyrig.flags` for the
bottom's, each instrument family's record for its driver's (``Family.flags``, from the
instrument registry), :mod:`energyrig.instruments.sim.flags` for the simulated bench's, this
module for the pipeline's) by name, each explained by its note; it is built here, the lowest
layer that can import every declarer, and read by whatever names flags to a person: the
report's legend (handed to :func:`energyrig.results.report.write_report`) and the CLI's help.
It is built on first use: the family records load pydantic, which the CLI's start avoids (the
rest of this module is standard library only).
"""
from __future__ import annotations

from functools import cache
from typing import Any

from energyrig.flags import BENCH_FLAGS, ENERGY_FLAGS, INTEGRITY_FLAGS, Flag, registry
from energyrig.instruments.sim.flags import SIM_FLAGS

EDGE_ERROR = Flag(
    # the edge error bound exceeds measure.max_edge_error
    "edge_error_over_bound",
    "the bound of the edge error exceeds the fixture's measure.max_edge_error of the "
    "window's energy: the window is short for the sample rate",
    "run more ops per window (batch) or record at a higher rate")
DURATION_MISMATCH = Flag(
    # the window's length disagrees with the firmware's
    "duration_mismatch",
    "the window's length disagrees with the firmware's own timing of the batch",
    "check the trigger wiring (a slow or loaded line) and the instrument's clock")
EXTRA_WINDOWS = Flag(
    # the record held more than one window
    "extra_windows",
    "the record held more than one trigger window; the first was taken",
    "check that only the DUT drives the trigger line and that it does not chatter")
PIPELINE_FLAGS = (EDGE_ERROR, DURATION_MISMATCH, EXTRA_WINDOWS)

FLAGS: dict[str, Flag]
"""Every flag of every layer, by name, in the order the report's legend lists them (built on
first use, :func:`_all_flags`)."""


@cache
def _all_flags() -> dict[str, Flag]:
    from energyrig.instruments.registry import FAMILIES  # pydantic: not at the CLI's start

    return registry(ENERGY_FLAGS, PIPELINE_FLAGS, INTEGRITY_FLAGS,
                    *(family.flags for family in FAMILIES.values()), SIM_FLAGS, BENCH_FLAGS)


def __getattr__(name: str) -> Any:
    if name == "FLAGS":
        return _all_flags()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
