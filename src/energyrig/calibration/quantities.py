"""The quantities a calibration record holds, their units and the routines that measure them.

Standard library only, so that ``rig calibrate``'s command names come without the store's
pydantic models (:mod:`energyrig.calibration.store` imports these tables from here).
"""
from __future__ import annotations

from typing import Literal, get_args

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
#: Quantities of the board and its firmware build rather than of the instrument: they apply
#: only where the record's :func:`build_of` is the bench's.
BUILD_QUANTITIES: tuple[Quantity, ...] = ("overhead_s", "overhead_j", *get_args(Advice))
