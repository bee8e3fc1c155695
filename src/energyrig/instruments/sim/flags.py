"""The simulated bench's flags: what the comparison of a window with the emulator's truth
(:mod:`energyrig.instruments.sim.truth`) and the DUT's virtual trigger wire
(:mod:`energyrig.instruments.sim.wire`) can show; :class:`energyrig.rig.bench.SimBench`
raises them. Standard library only (:mod:`energyrig.flags`)."""
from __future__ import annotations

from energyrig.flags import Flag

TRUTH_LATE = Flag(
    # an edge reached the emulator late
    "truth_late",
    "simulated bench: a trigger edge reached the emulator late",
    "a less loaded host; the figures stay valid, the comparison with the truth less so")
NO_TRUTH = Flag(
    # no truth window matches this window
    "no_truth",
    "simulated bench: no true window matches this window, so it has no true energy",
    "a less loaded host; rerun the point")
TRIGGER_DROPS = Flag(
    # the DUT could not publish trigger edges
    "trigger_drops",
    "simulated bench: the DUT could not publish some trigger edges",
    "a less loaded host; rerun the point")
TIME_SHIFT = Flag(
    # the window is off its true edges (an uncounted loss the host's clock missed: sim only)
    "stream_time_shift",
    "simulated bench: the window lies off its true edges (a loss the host's clock "
    "missed)",
    "a less loaded host; rerun the point")
SIM_FLAGS = (TRUTH_LATE, NO_TRUTH, TRIGGER_DROPS, TIME_SHIFT)
