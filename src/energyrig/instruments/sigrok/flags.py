"""The sigrok family's flag (raised by :class:`energyrig.instruments.sigrok.device.SigrokDevice`).
Standard library only (:mod:`energyrig.flags`), so the registry starts no sigrok-cli."""
from __future__ import annotations

from energyrig.flags import Flag

SHORT_CAPTURE = Flag(
    # the device sent fewer samples than the capture was armed for
    "short_capture",
    "the sigrok device delivered fewer samples than the capture was armed for; the window "
    "was found in what it sent",
    "check the device's connection and that the host keeps up with its sample rate (a "
    "lower rate, the device on its own USB port)")
SIGROK_FLAGS = (SHORT_CAPTURE,)
