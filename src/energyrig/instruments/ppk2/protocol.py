"""The PPK2 serial protocol: command bytes and the layout of the 4-byte measurement word.

Shared by the driver (:mod:`energyrig.instruments.ppk2.driver`) and the emulator
(:mod:`energyrig.instruments.sim.ppk2`). Command codes come from the ``ppk2-api`` package
(which took them from Nordic's ``pc-nrfconnect-ppk``); this module adds what that package
does not have: how many argument bytes each command takes, the sample counter field, and
vectorised word packing.

A measurement word is a little-endian uint32::

    bits  0..13  ADC code (the current is computed from ADC * 4)
    bits 14..16  current range 0..4
    bit  17      unused (0)
    bits 18..23  6-bit sample counter, +1 per sample (a jump means lost samples)
    bits 24..31  logic inputs D0..D7

Words stream at 100 kS/s after ``AVERAGE_START`` until ``AVERAGE_STOP``.
"""
from __future__ import annotations

import enum

import numpy as np
import numpy.typing as npt
from ppk2_api.ppk2_api import PPK2_Command

SAMPLE_RATE_HZ = 100_000
SAMPLE_PERIOD_NS = 1_000_000_000 // SAMPLE_RATE_HZ
WORD_BYTES = 4
ADC_BITS = 14
ADC_MAX = (1 << ADC_BITS) - 1
RANGE_SHIFT = 14
COUNTER_SHIFT = 18
COUNTER_MODULO = 64
LOGIC_SHIFT = 24
#: Volts per unit of ``ADC * 4`` (Nordic's ``adcMult``).
ADC_MULT_V = 1.8 / 163840
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


def pack_words(adc: npt.NDArray[np.integer], rng: npt.NDArray[np.integer], counter0: int,
               logic: npt.NDArray[np.integer]) -> npt.NDArray[np.uint32]:
    """Pack per-sample fields into measurement words (whole arrays, no per-sample loop).

    Parameters
    ----------
    adc:
        ADC codes, 0..16383.
    rng:
        Current ranges, 0..4.
    counter0:
        Counter of the first sample; the others follow +1 modulo 64.
    logic:
        Logic bits D0..D7 per sample.
    """
    counter = (counter0 + np.arange(len(adc), dtype=np.uint32)) % COUNTER_MODULO
    return (np.asarray(adc, dtype=np.uint32) & ADC_MAX
            | np.asarray(rng, dtype=np.uint32) << RANGE_SHIFT
            | counter << COUNTER_SHIFT
            | np.asarray(logic, dtype=np.uint32) << LOGIC_SHIFT).astype("<u4")
