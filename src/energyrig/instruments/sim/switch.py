"""The simulated bench's load switch: what the emulated instrument's current input sees.

A real operator rewires the bench for a calibration routine (opens the input, puts a
reference resistor in place of the board); on the simulated bench the rig writes the
switch's state to a small JSON file and the emulator reads it before rendering each block::

    {"load": "reference", "ohms": 1000.0}

``"dut"`` (the board, the default), ``"open"`` (no current) or ``"reference"`` (a resistor
across the supply: supply / ohms). :func:`set_load` writes it atomically; :class:`LoadSwitch`
rereads it only when the file changed. Units: ohm, A, V.

When the switch acts: an emulator checks the file before rendering each block, after fixing
the block's end, so every sample taken after :func:`set_load` returned (the CLOCK_MONOTONIC
time it returns) sees the new load; samples taken while it was writing may see either. A
streaming emulator renders its samples ``latency_s`` after they were taken, and the host
receives them later still: the simulated bench waits until the stream holds the samples of
the moment the switch returned (:meth:`energyrig.rig.bench.SimBench.connect`), not a fixed
time.
"""
from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

LoadKind = Literal["dut", "open", "reference"]


@dataclass(frozen=True, slots=True)
class Load:
    """What the current input is connected to.

    Attributes
    ----------
    kind:
        ``"dut"``, ``"open"`` or ``"reference"``.
    ohms:
        The reference resistor, ohm (``"reference"`` only).
    """

    kind: LoadKind = "dut"
    ohms: float = math.inf

    def __post_init__(self) -> None:
        if self.kind not in ("dut", "open", "reference"):
            raise ValueError(f"Load: unknown kind {self.kind!r}")
        if self.kind == "reference" and not (self.ohms > 0 and math.isfinite(self.ohms)):
            raise ValueError(f"Load: a reference needs a finite resistance > 0, got {self.ohms}")


BOARD = Load()


def set_load(path: Path, load: Load) -> int:
    """Switch the emulator reading ``path`` to ``load``; the CLOCK_MONOTONIC time (ns) from
    which every sample sees it (module docs)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"load": load.kind, "ohms": load.ohms if load.kind ==
                               "reference" else None}), encoding="utf-8")
    os.replace(tmp, path)
    return time.monotonic_ns()


class LoadSwitch:
    """The switch as the emulator reads it (the board while ``path`` is absent or ``None``)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._load = BOARD

    def load(self) -> Load:
        """The load now (rereads the file when it changed)."""
        if self.path is None:
            return BOARD
        try:
            st = self.path.stat()
            stamp = (st.st_ino, st.st_mtime_ns)  # set_load replaces the file: a new inode
        except FileNotFoundError:
            return BOARD
        if stamp != self._stamp:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self._load = Load(data["load"], data["ohms"] or math.inf)
            self._stamp = stamp
            log.info("load switched to %s", self._load)
        return self._load
