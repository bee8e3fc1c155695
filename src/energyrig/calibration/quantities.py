"""The quantities a calibration record holds, their units and the routines that measure them.

Standard library only, so that ``rig calibrate``'s command names come without the store's
pydantic models (:mod:`energyrig.calibration.store` imports these tables from here).
"""
from __future__ import annotations

import math
from typing import Literal, NamedTuple, get_args

#: The quantities the correction stage applies: offset of the current channel (A), its gain
#: (measured / true, 1), the delay of the current channel behind the trigger channel (s),
#: and the fixed cost of an empty trigger window on the board's firmware build: its time (s)
#: and its energy above the idle baseline (J).
Correction = Literal["offset_a", "gain", "skew_s", "overhead_s", "overhead_j"]
#: What ``rig calibrate baseline`` advises (it corrects nothing): the shortest idle span
#: whose mean gives the baseline to the stated precision (s), the guard after an edge after
#: which the current has settled (s), and the idle current's drift (A/s) and white noise
#: (rms, A).
Advice = Literal["baseline_s", "guard_s", "idle_drift_a_per_s", "idle_noise_a"]
Quantity = Literal[Correction, Advice]
QUANTITIES: tuple[Quantity, ...] = (*get_args(Correction), *get_args(Advice))
#: The quantities a complete calibration has: those the correction stage applies.
CORRECTIONS: tuple[Quantity, ...] = get_args(Correction)
UNITS: dict[Quantity, str] = {"offset_a": "A", "gain": "1", "skew_s": "s", "overhead_s": "s",
                              "overhead_j": "J", "baseline_s": "s", "guard_s": "s",
                              "idle_drift_a_per_s": "A/s", "idle_noise_a": "A"}
#: The routine that measures each quantity (``rig calibrate ROUTINE``).
ROUTINES: dict[Quantity, str] = {"offset_a": "zero", "gain": "gain", "skew_s": "skew",
                                 "overhead_s": "overhead", "overhead_j": "overhead",
                                 "baseline_s": "baseline", "guard_s": "baseline",
                                 "idle_drift_a_per_s": "baseline",
                                 "idle_noise_a": "baseline"}
#: The routines ``rig calibrate all`` runs, in order: the gain needs the offset, the skew
#: neither, the overhead all three (its windows are corrected with them); the baseline
#: last (it advises the fixture's windows, and corrects nothing).
ORDER: tuple[str, ...] = tuple(dict.fromkeys(ROUTINES.values()))
#: The routines that measure a correction, in :data:`ORDER`: all of it but the baseline.
CORRECTING: tuple[str, ...] = tuple(dict.fromkeys(ROUTINES[q] for q in CORRECTIONS))


def short_id(record_id: str) -> str:
    """A record's id as a terminal shows it: its quantities replaced by the routines that
    measured them (``all`` for every routine), e.g. ``20261126T162840Z-ppk2-all`` for
    ``20261126T162840Z-ppk2-baseline_s+gain+guard_s+…+skew_s``. For display only: the
    record, its file name, a run's manifest and ``--json`` keep the full id, which names
    every quantity; an id not of that form is returned as it is."""
    stamp, _, rest = record_id.partition("-")
    kind, _, quantities = rest.rpartition("-")
    names = quantities.split("+")
    if not (stamp and kind and all(q in ROUTINES for q in names)):
        return record_id
    done = {ROUTINES[q] for q in names}  # type: ignore[index]
    routines = "all" if done == set(ORDER) else "+".join(r for r in ORDER if r in done)
    return f"{stamp}-{kind}-{routines}"


#: Quantities of the board and its firmware build rather than of the instrument: they apply
#: only where the record's :func:`build_of` is the bench's.
BUILD_QUANTITIES: tuple[Quantity, ...] = ("overhead_s", "overhead_j", *get_args(Advice))


class Limit(NamedTuple):
    """The plausible values of a quantity, SI: outside ``low .. high`` a value is a wrong
    set-up or a damaged record, not an instrument's error; ``why`` says so in words."""

    low: float
    high: float
    why: str

    def __str__(self) -> str:
        return f"{self.low:g} .. {self.high:g}"


#: A gain further than this from 1 is not an instrument's error but a wrong set-up (an open
#: or wrong reference, a gain 10x off).
MAX_GAIN_ERROR = 0.2
#: The skew routine looks for the current's step this far either side of the trigger edge,
#: s: it cannot measure a larger skew.
SKEW_SEARCH_S = 1e-3
#: No empty window (two trigger edges, two counter reads) lasts this long, s: the firmware
#: was preempted, or the trigger is held by something else.
MAX_OVERHEAD_S = 10e-3
#: The plausible values of each quantity: the routines refuse to store a value outside
#: them, and a record holding one is refused when it is read
#: (:func:`implausible`). A quantity not listed may take any finite value.
LIMITS: dict[Quantity, Limit] = {
    "gain": Limit(1 - MAX_GAIN_ERROR, 1 + MAX_GAIN_ERROR,
                  "a gain further from 1 is a wrong reference or a broken unit"),
    "skew_s": Limit(-SKEW_SEARCH_S, SKEW_SEARCH_S,
                    "the skew routine finds no step further from the trigger edge"),
    "overhead_s": Limit(0.0, MAX_OVERHEAD_S,
                        "an empty window is a time, and none lasts longer"),
    "baseline_s": Limit(0.0, math.inf, "a span of time"),
    "guard_s": Limit(0.0, math.inf, "a span of time"),
    "idle_noise_a": Limit(0.0, math.inf, "an rms current"),
}
#: Routines whose value is the mean of ``n`` readings whose rms spread is the record's
#: ``residual_rms`` (in the value's unit): its standard uncertainty is at least
#: ``residual_rms / sqrt(n)``, and the spread of readings within the quantity's
#: :data:`LIMITS` at most their width.
MEANS: frozenset[str] = frozenset({"zero", "skew"})


def implausible(quantity: Quantity, value: float, u: float, *, method: str = "",
                residual_rms: float | None = None, n: int | None = None
                ) -> tuple[str, str] | None:
    """What is wrong with a value of ``quantity`` and its standard uncertainty ``u`` (SI),
    measured by the routine ``method`` with its fit's ``residual_rms`` over ``n`` readings:
    ``(field, problem)`` with the field (``value``, ``u``, ``residual_rms``) and the value,
    the limit and why; ``None`` when it is plausible.

    The one definition the routines check before storing a record and the store checks
    when it reads one: the value within :data:`LIMITS`; its ``u`` under half their width
    (else the value says nothing of where in them it lies); for a routine of
    :data:`MEANS`, ``u`` at least what its readings' spread leaves in their mean, and that
    spread within the limits' width.
    """
    unit = "" if UNITS[quantity] == "1" else f" {UNITS[quantity]}"
    limit = LIMITS.get(quantity)
    if limit is not None:
        if not limit.low <= value <= limit.high:
            return "value", (f"{value:g}{unit} is outside the plausible {limit}{unit} "
                             f"({limit.why})")
        half = (limit.high - limit.low) / 2
        if u > half:
            return "u", (f"a standard uncertainty of {u:g}{unit} is more than half the "
                         f"plausible {limit}{unit}: the value says nothing")
    if method in MEANS and residual_rms is not None and n:
        floor = residual_rms / math.sqrt(n)
        if u < floor * (1 - 1e-9):
            return "u", (f"{u:g}{unit} is less than the spread of the {n} readings "
                         f"(residual_rms {residual_rms:g}{unit}) leaves in their mean "
                         f"({floor:g}{unit}): the uncertainty does not fit the readings")
        if limit is not None and residual_rms > limit.high - limit.low:
            return "residual_rms", (f"{residual_rms:g}{unit} is a wider spread of readings "
                                    f"than the plausible {limit}{unit} allows")
    return None
