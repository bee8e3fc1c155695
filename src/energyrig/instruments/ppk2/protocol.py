"""The PPK2 serial protocol: command bytes, their arguments, and the power modes.

Shared by the driver (:mod:`energyrig.instruments.ppk2.driver`) and the emulator
(:mod:`energyrig.instruments.ppk2.emulator`). Command codes come from the ``ppk2-api`` package
(which took them from Nordic's ``pc-nrfconnect-ppk``); this module adds what that package
does not have: how many argument bytes each command takes, so a device (or a byte-level
test) can split a command stream, and the encoding of the regulator setting. The layout of
the 4-byte measurement word lives with its decoder in :mod:`energyrig.instruments.ppk2.decode`.

Words stream at 100 kS/s after ``AVERAGE_START`` until ``AVERAGE_STOP``.
"""
from __future__ import annotations

import enum

from ppk2_api.ppk2_api import PPK2_Command

from energyrig.instruments.ppk2.decode import SAMPLE_RATE_HZ

SAMPLE_PERIOD_NS = round(1e9 / SAMPLE_RATE_HZ)
VDD_MIN_MV = 800
VDD_MAX_MV = 5000

class Command(enum.IntEnum):
    """PPK2 command bytes (values from ``ppk2_api.PPK2_Command``)."""

    NO_OP = PPK2_Command.NO_OP
    AVERAGE_START = PPK2_Command.AVERAGE_START
    AVERAGE_STOP = PPK2_Command.AVERAGE_STOP
    DEVICE_RUNNING_SET = PPK2_Command.DEVICE_RUNNING_SET
    REGULATOR_SET = PPK2_Command.REGULATOR_SET
    SET_POWER_MODE = PPK2_Command.SET_POWER_MODE
    SPIKE_FILTERING_ON = PPK2_Command.SPIKE_FILTERING_ON
    SPIKE_FILTERING_OFF = PPK2_Command.SPIKE_FILTERING_OFF
    GET_META_DATA = PPK2_Command.GET_META_DATA
    RESET = PPK2_Command.RESET
    SET_USER_GAINS = PPK2_Command.SET_USER_GAINS


#: Argument bytes that follow each command byte.
COMMAND_ARGS: dict[Command, int] = {
    Command.NO_OP: 0,
    Command.AVERAGE_START: 0,
    Command.AVERAGE_STOP: 0,
    Command.DEVICE_RUNNING_SET: 1,   # 1 = DUT power on, 0 = off
    Command.REGULATOR_SET: 2,        # supply in mV, big-endian
    Command.SET_POWER_MODE: 1,       # POWER_MODE_*
    Command.SPIKE_FILTERING_ON: 0,
    Command.SPIKE_FILTERING_OFF: 0,
    Command.GET_META_DATA: 0,
    Command.RESET: 0,
    Command.SET_USER_GAINS: 5,       # range, float32 little-endian
}

POWER_MODE_AMPERE = 1
POWER_MODE_SOURCE = 2


def regulator_set(mv: int) -> bytes:
    """``REGULATOR_SET`` for a supply of ``mv`` millivolts (800..5000)."""
    if not VDD_MIN_MV <= mv <= VDD_MAX_MV:
        raise ValueError(f"PPK2 supply must be {VDD_MIN_MV}..{VDD_MAX_MV} mV, got {mv} mV")
    return bytes((Command.REGULATOR_SET, mv >> 8, mv & 0xFF))


def regulator_mv(args: bytes) -> int:
    """Supply in mV from the two argument bytes of ``REGULATOR_SET``."""
    return (args[0] << 8) | args[1]
