"""Flags: the names of the problems a window or a point carries, each with its note.

A :class:`Flag` is the text a window's ``flags`` hold (and the tables store) together with
what it says and what the operator can do about it. Each flag is declared once, by the lowest
layer that raises it or applies a rule to it, so that every layer that raises or reads it can
import it:

- here, at the bottom: the flags of a window's own samples, which the energy math raises
  (and the bottom's :class:`~energyrig.domain.WindowSettings` reads: ``baseline_after``); the
  stream's integrity flags, which the instruments and the energy math raise and the estimate
  rule (:func:`energyrig.domain.in_estimate`, read by the store and the report) applies; and
  the flags about the bench or the point, which :func:`energyrig.domain.window_problems`
  tells apart from a window's own;
- the simulated bench's in :mod:`energyrig.instruments.sim.flags`;
- the point pipeline's checks in :mod:`energyrig.rig.flags`, which also collects every
  layer's flags into the one registry :data:`energyrig.rig.flags.FLAGS` (:func:`registry`):
  the report's legend and the CLI's help read it there.

Standard library only, like :mod:`energyrig.errors`: the CLI names flags without numpy.
"""
from __future__ import annotations

from collections.abc import Iterable


class Flag(str):
    """A flag's name, the text a window carries, with its note.

    It is a ``str``: it is raised, compared, joined and stored as its name; ``meaning`` says
    what it says of a window or a point, ``action`` what the operator can do about it.
    """

    meaning: str
    action: str

    def __new__(cls, name: str, meaning: str, action: str) -> Flag:
        if not (name and meaning and action):
            raise ValueError(f"flag {name!r} needs a name, a meaning and an action")
        flag = super().__new__(cls, name)
        flag.meaning, flag.action = meaning, action
        return flag

    def __getnewargs__(self) -> tuple[str, str, str]:  # type: ignore[override]
        return str(self), self.meaning, self.action


def registry(*groups: Iterable[Flag]) -> dict[str, Flag]:
    """The flags of ``groups``, by name, in their order.

    Raises
    ------
    ValueError
        Naming a flag declared twice (by two layers, or twice by one).
    """
    out: dict[str, Flag] = {}
    for flag in (f for group in groups for f in group):
        if flag in out:
            raise ValueError(f"the flag {flag!r} is declared twice")
        out[str(flag)] = flag
    return out


# -- a window's own samples, seen by the energy math (energyrig.rig.energy) --------------------
TOO_FEW_SAMPLES = Flag(
    "too_few_samples",
    "the window holds fewer samples than the fixture's windows.min_samples: one sample "
    "at each edge weighs too much",
    "run more ops per window (the plan's batch) or record at a higher rate")
DROPPED_SAMPLES = Flag(
    "dropped_samples",
    "the instrument lost samples its counter counted; the energy bridges them on the "
    "right time base and the window stays in the estimate",
    "if many windows carry it: a lower sample rate, or the instrument on its own USB "
    "port")
SATURATED = Flag(
    "saturated",
    "the current reached the end of the instrument's range: the energy reads low",
    "a larger range or a smaller shunt")
GLITCH = Flag(
    "glitch",
    "the trigger line chattered (a pulse shorter than windows.min_pulse_s, or edges "
    "that do not pair)",
    "check the trigger wire and its ground; raise the fixture's windows.min_pulse_s")
NO_BASELINE = Flag(
    "no_baseline",
    "no idle span of windows.baseline_s before or after the window: no net energy",
    "shorten the fixture's windows.baseline_s or windows.guard_s, or leave more idle "
    "time around each batch (the fixture's measure.pre_s, post_s)")
BASELINE_AFTER = Flag(
    "baseline_after",
    "the idle baseline was taken after the window, there being no room before it",
    "none needed; to take it before, raise the fixture's measure.pre_s")
ENERGY_FLAGS = (TOO_FEW_SAMPLES, DROPPED_SAMPLES, SATURATED, GLITCH, NO_BASELINE, BASELINE_AFTER)

# -- the stream's own integrity ------------------------------------------------------------------
# Seen by the instrument's decoder and its clock: a real instrument raises them exactly as an
# emulated one (energyrig.rig.energy.stream_flags, the PPK2 driver). A window carrying one
# stays in windows.parquet, flagged, but out of its point's estimate and statistics
# (domain.in_estimate, excluded); a point whose windows mostly carry one is stored as failed
# (the pipeline). Not among them: dropped_samples (a loss the counter counted, bridged by the
# energy math on the right time base), and the flags of a window's own signal (saturated,
# glitch, ...), which its samples show truly.
CORRUPT = Flag(
    # the window or its baseline holds words no healthy instrument sends (a PPK2: bit 17,
    # range > 4, a counter that skips and returns, one-sample logic, range or ADC excursions)
    "corrupt_samples",
    "the window or its baseline holds words no healthy instrument sends; the window is "
    "left out of its point's estimate",
    "check the instrument's USB cable, port and hub; if it repeats, update or replace "
    "the instrument")
STREAM_LOSS = Flag(
    # the record falls where the stream lost samples its counter could not count (fewer
    # samples than the host's clock says the instrument took)
    "stream_loss",
    "the stream lost samples its counter could not count; the window is left out of "
    "its point's estimate",
    "a lower sample rate, the instrument on its own USB port, a less loaded host")
BASELINE_CLIPPED = Flag(
    # most of the baseline span reads the instrument's floor (a PPK2: ADC 0 in range 0; a
    # negative offset larger than the idle current)
    "baseline_clipped",
    "most of the baseline reads the instrument's floor (an offset larger than the idle "
    "current); the window is left out of its point's estimate",
    "calibrate the offset (rig calibrate zero) or use a more sensitive range")
WINDOW_LOST = Flag(
    # a window of a group (run windows=R): the firmware opened it, the record holds no
    # trigger window where it lies (the group's other windows are kept)
    "window_lost",
    "the firmware ran this window of its group but the record holds no trigger window for "
    "it; the window is left out of its point's estimate",
    "check the trigger wiring and the instrument's stream (a lossy USB link), or measure "
    "one window per request (the fixture's measure.max_group = 1)")
WINDOW_CUT = Flag(
    # raised by the pipeline: the window's length cannot be its batch's (beyond the fixture's
    # measure.duration_tolerance): shorter than the firmware's own time of it (samples of it
    # are missing from the record: a loss no counter or clock flagged there, or a trigger line
    # that fell early), or, in a group, longer than that and the idle after it (a loss that
    # swallowed the idle merged it with another window of the group)
    "window_cut",
    "the window's length cannot be its batch's: shorter than the firmware's own time of "
    "it (the record lacks samples of it) or, in a group, longer than that and the idle "
    "between windows (merged with another); the window is left out of its point's estimate",
    "check the trigger wiring and the instrument's stream (a lossy USB link), a less "
    "loaded host")
INTEGRITY_FLAGS = (CORRUPT, STREAM_LOSS, BASELINE_CLIPPED, WINDOW_LOST, WINDOW_CUT)

# -- the bench or the point, not one window's samples ------------------------------------------
# A window carrying only these is not a suspicious one (domain.window_problems: its trace is
# not kept for ``--keep-captures flagged``).
UNCALIBRATED = Flag(
    # raised by the correction stage (energyrig.calibration.correction)
    "uncalibrated",
    "no complete, valid calibration was applied: no gain, offset or skew correction and "
    "no uncertainty from them",
    "run rig calibrate all on this instrument, then measure again")
CI_TARGET_NOT_MET = Flag(
    # raised by rig sweep: a point stopped at max_windows before its CI reached ci_target
    "ci_target_not_met",
    "the point stopped at the plan's max_windows before its 95 % CI reached the plan's "
    "ci_target",
    "raise adaptive.max_windows or ci_target in the plan, or quieten the bench (its "
    "spread is in the CI columns)")
CALIBRATION_FLAGS = (UNCALIBRATED,)
BENCH_FLAGS = (*CALIBRATION_FLAGS, CI_TARGET_NOT_MET)
